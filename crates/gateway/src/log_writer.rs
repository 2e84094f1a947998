//! How access log lines reach the file: each worker thread collects its lines in a batch of
//! its own, handed to one writer thread when it reaches [`BATCH_BYTES`] or [`BATCH_AGE`] after
//! its first line, and written there with one `write` of whole lines.
//!
//! Why: a line sent on its own to a writer task on another thread woke that thread for every
//! request, and the task's `tokio::fs` write woke a thread of the blocking pool: at 4
//! connections a logged request cost 91 us of CPU where an unlogged one cost 54, with 3.95
//! context switches against 1.9 (docs/BENCHMARKS.md, "A thread per core"). A batch costs those
//! wake-ups once per batch. The writer being a thread of its own keeps the rule the log had: a
//! slow disk never holds a request; a batch the writer cannot take is dropped and its lines
//! counted. Whole lines per `write`, by one writer, so lines of different workers never mix.

use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::metrics::Metrics;

/// A batch is handed over once it holds this much.
pub(crate) const BATCH_BYTES: usize = 64 << 10;
/// A batch is handed over at the latest this long after its first line.
pub(crate) const BATCH_AGE: Duration = Duration::from_millis(50);
/// Batches waiting for the writer before new ones are dropped (64 MiB at most).
const BACKLOG: usize = 1024;

/// What the writer thread is given.
enum Job {
    Lines(String),
    /// Answered once everything before it is written.
    Sync(tokio::sync::oneshot::Sender<()>),
}

/// The writer thread's end of the channel; cheap to clone.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: SyncSender<Job>,
}

impl Writer {
    /// Starts the writer thread over `out`; it ends when every `Writer` is gone.
    pub(crate) fn start(out: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let (jobs, rx) = sync_channel(BACKLOG);
        std::thread::Builder::new()
            .name("gateway-log".into())
            .spawn(move || write(rx, out))?;
        Ok(Self { jobs })
    }

    /// Waits until everything handed over so far is written (at shutdown).
    pub(crate) async fn sync(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.jobs.send(Job::Sync(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

fn write(jobs: Receiver<Job>, mut out: Box<dyn Write + Send>) {
    for job in jobs {
        match job {
            // A log that cannot be written must not stop the gateway: keep draining.
            Job::Lines(text) => {
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            }
            Job::Sync(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// One worker's lines not yet handed to the writer.
#[derive(Default)]
struct Pending {
    text: String,
    lines: u64,
    /// A hand-over is scheduled for [`BATCH_AGE`] from the batch's first line.
    due: bool,
}

/// One worker thread's batch (each worker's proxy has its own).
pub(crate) struct Batch {
    writer: Writer,
    pending: Mutex<Pending>,
    metrics: Arc<Metrics>,
}

impl Batch {
    pub(crate) fn new(writer: Writer, metrics: Arc<Metrics>) -> Self {
        Self {
            writer,
            pending: Mutex::new(Pending::default()),
            metrics,
        }
    }

    /// An empty batch for another worker, to the same writer.
    pub(crate) fn sibling(&self) -> Self {
        Self::new(self.writer.clone(), Arc::clone(&self.metrics))
    }

    pub(crate) fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Adds `line` and a newline, written straight into the batch; hands the batch over when
    /// full, or schedules its hand-over on the current runtime (the worker's) when it is the
    /// batch's first line.
    pub(crate) fn push(self: &Arc<Self>, line: &impl std::fmt::Display) {
        use std::fmt::Write as _;
        let mut p = self.lock();
        let _ = writeln!(p.text, "{line}");
        p.lines += 1;
        if p.text.len() >= BATCH_BYTES {
            let full = std::mem::take(&mut *p);
            drop(p);
            self.hand_over(full);
        } else if !p.due {
            p.due = true;
            drop(p);
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    let this = Arc::clone(self);
                    drop(runtime.spawn(async move {
                        tokio::time::sleep(BATCH_AGE).await;
                        this.flush();
                    }));
                }
                // A request finished outside a runtime (its task dropped as a worker stopped).
                Err(_) => self.flush(),
            }
        }
    }

    /// Hands over what is pending now.
    pub(crate) fn flush(&self) {
        let pending = std::mem::take(&mut *self.lock());
        if pending.lines > 0 {
            self.hand_over(pending);
        }
    }

    /// Hands `pending` to the writer, or counts its lines dropped when the writer is behind.
    fn hand_over(&self, pending: Pending) {
        if self.writer.jobs.try_send(Job::Lines(pending.text)).is_err() {
            self.metrics.log_dropped.inc_by(pending.lines);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        match self.pending.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_writer() -> (tempfile::NamedTempFile, Writer) {
        let file = tempfile::NamedTempFile::new().unwrap();
        let out = std::fs::OpenOptions::new()
            .append(true)
            .open(file.path())
            .unwrap();
        (file, Writer::start(Box::new(out)).unwrap())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lines_of_several_batches_arrive_whole_and_sync_waits_for_them() {
        let (file, writer) = file_writer();
        let metrics = Arc::new(Metrics::new());
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let batch = Arc::new(Batch::new(writer.clone(), Arc::clone(&metrics)));
                tokio::spawn(async move {
                    for i in 0..3000 {
                        // Long enough lines that batches fill and go by size, not only by age.
                        batch.push(&format!(
                            "{{\"worker\":{w},\"line\":{i},\"pad\":\"{}\"}}",
                            "x".repeat(40)
                        ));
                        if i % 500 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                    batch
                })
            })
            .collect();
        for w in workers {
            w.await.unwrap().flush();
        }
        writer.sync().await;
        let text = std::fs::read_to_string(file.path()).unwrap();
        let mut seen = std::collections::HashSet::new();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a whole line");
            assert!(
                seen.insert((v["worker"].as_u64(), v["line"].as_u64())),
                "{line} twice"
            );
        }
        assert_eq!(seen.len(), 4 * 3000);
        assert_eq!(metrics.log_dropped.get(), 0);
    }

    #[tokio::test]
    async fn a_batch_goes_to_the_writer_within_its_age() {
        let (file, writer) = file_writer();
        let batch = Arc::new(Batch::new(writer.clone(), Arc::new(Metrics::new())));
        batch.push(&"{\"one\":1}");
        tokio::time::sleep(BATCH_AGE * 4).await;
        writer.sync().await;
        assert_eq!(
            std::fs::read_to_string(file.path()).unwrap(),
            "{\"one\":1}\n"
        );
    }
}
