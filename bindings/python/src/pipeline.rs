//! `presign_many` with every core busy: signing needs no GIL, building Python strings does.
//!
//! Signing costs about twice as much CPU as building the Python strings (which needs the GIL),
//! and reading the keys a fraction of either (docs/BENCHMARKS-HISTORY.md, "The Python package"). Done one
//! after the other, one core would idle; here the keys are cut into chunks that signers claim
//! in order: `threads - 1`
//! worker threads sign, and the calling thread converts each chunk once it is signed, in order,
//! and signs a chunk itself (GIL released) whenever the next one is not ready yet. No core waits
//! while there is work. At most [`WINDOW`] chunks are signed ahead of the conversion, so memory
//! stays bounded however many keys there are; their buffers are reused across calls.

use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString};
use slipstream_sign::{PresignOptions, SigningTime, UrlBatch};

/// Keys per chunk: a chunk's signing (about 4 ms) dwarfs claiming it, and the first chunk's wait
/// is short.
const CHUNK: usize = 8192;
/// Chunks that may be signed ahead of the one being converted.
const WINDOW: usize = 4;

/// What one call needs besides the keys.
pub(crate) struct Job<'a> {
    pub presigner: &'a slipstream_sign::Presigner,
    pub opts: &'a PresignOptions,
    pub time: SigningTime,
    /// Signing threads in all, the calling thread included.
    pub threads: usize,
}

/// A signed chunk, or why it could not be signed.
type Signed = Result<UrlBatch, String>;

/// The chunks' progress, shared by the signers and the converter.
struct Progress {
    /// The next chunk nobody has claimed yet.
    next_claim: usize,
    /// The chunk the converter waits for (all before it are converted).
    converting: usize,
    /// Signed chunks not yet converted, by chunk index.
    done: Vec<Option<Signed>>,
    /// Reusable output buffers.
    free: Vec<UrlBatch>,
    /// Set when the converter gives up: signers stop.
    stop: bool,
}

struct Shared<'a> {
    job: &'a Job<'a>,
    keys: &'a [PyBackedStr],
    chunks: usize,
    state: Mutex<Progress>,
    /// Signalled when a chunk is signed or converted, or on stop.
    changed: Condvar,
}

impl Shared<'_> {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        // A poisoned lock means a signer panicked; its chunk never arrives and the converter
        // reports it, so the data behind the lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims the next chunk if it lies within the window, with a buffer to sign it into.
    fn try_claim(&self, p: &mut Progress) -> Option<(usize, UrlBatch)> {
        let i = p.next_claim;
        if p.stop || i >= self.chunks || i >= p.converting + WINDOW {
            return None;
        }
        p.next_claim += 1;
        Some((i, p.free.pop().unwrap_or_default()))
    }

    /// Signs chunk `i` into `batch` (no lock held) and files the result.
    fn sign(&self, i: usize, mut batch: UrlBatch) {
        let keys = &self.keys[i * CHUNK..((i + 1) * CHUNK).min(self.keys.len())];
        let job = self.job;
        // A panic must not leave the converter waiting for this chunk forever.
        let signed = std::panic::catch_unwind(AssertUnwindSafe(|| {
            job.presigner
                .presign_batch_into(keys, job.opts, job.time, Some(1), &mut batch)
                .map_err(|e| e.to_string())
        }))
        .unwrap_or_else(|_| Err("signing failed unexpectedly (a bug: please report it)".into()))
        .map(|()| batch);
        self.lock().done[i] = Some(signed);
        self.changed.notify_all();
    }

    /// A worker: claims and signs chunks until none are left (or the converter stops).
    fn work(&self) {
        let mut p = self.lock();
        loop {
            if p.stop || p.next_claim >= self.chunks {
                return;
            }
            match self.try_claim(&mut p) {
                Some((i, batch)) => {
                    drop(p);
                    self.sign(i, batch);
                    p = self.lock();
                }
                // The window is full: wait for the converter.
                None => p = self.changed.wait(p).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// What the calling thread should do next.
enum Step {
    Convert(Signed),
    Sign(usize, UrlBatch),
    Wait,
}

/// Presigns `keys` into a Python list, in order. `buffers` are reused output buffers, handed
/// back for the next call.
pub(crate) fn presign_to_list<'py>(
    py: Python<'py>,
    job: &Job<'_>,
    keys: &[PyBackedStr],
    buffers: &mut Vec<UrlBatch>,
) -> PyResult<Bound<'py, PyList>> {
    let chunks = keys.len().div_ceil(CHUNK);
    let shared = Shared {
        job,
        keys,
        chunks,
        state: Mutex::new(Progress {
            next_claim: 0,
            converting: 0,
            done: (0..chunks).map(|_| None).collect(),
            free: std::mem::take(buffers),
            stop: false,
        }),
        changed: Condvar::new(),
    };
    let mut strings: Vec<Bound<'py, PyString>> = Vec::with_capacity(keys.len());
    let outcome = std::thread::scope(|scope| {
        let shared = &shared;
        for _ in 1..job.threads.min(chunks) {
            scope.spawn(move || shared.work());
        }
        let outcome = convert_all(py, shared, &mut strings);
        shared.lock().stop = true;
        shared.changed.notify_all();
        outcome
    });
    *buffers = std::mem::take(&mut shared.lock().free);
    outcome?;
    PyList::new(py, strings)
}

/// The calling thread's loop: convert chunk after chunk in order, signing while it would wait.
fn convert_all<'py>(
    py: Python<'py>,
    shared: &Shared<'_>,
    strings: &mut Vec<Bound<'py, PyString>>,
) -> PyResult<()> {
    for i in 0..shared.chunks {
        loop {
            let step = {
                let mut p = shared.lock();
                match p.done[i].take() {
                    Some(signed) => Step::Convert(signed),
                    None => match shared.try_claim(&mut p) {
                        Some((c, batch)) => Step::Sign(c, batch),
                        None => Step::Wait,
                    },
                }
            };
            match step {
                Step::Convert(signed) => {
                    let batch = signed.map_err(PyValueError::new_err)?;
                    strings.extend(batch.iter().map(|url| PyString::new(py, url)));
                    let mut p = shared.lock();
                    p.free.push(batch);
                    p.converting = i + 1;
                    drop(p);
                    shared.changed.notify_all();
                    break;
                }
                // Sign without the GIL, so other Python threads run meanwhile.
                Step::Sign(c, batch) => py.detach(|| shared.sign(c, batch)),
                Step::Wait => py.detach(|| {
                    let p = shared.lock();
                    if p.done[i].is_none() {
                        drop(shared.changed.wait(p).unwrap_or_else(|e| e.into_inner()));
                    }
                }),
            }
        }
    }
    Ok(())
}
