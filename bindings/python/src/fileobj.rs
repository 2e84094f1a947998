//! `Client.download_fileobj` and `Client.upload_fileobj`: an object streamed into or out of a
//! Python file object (an open file, `io.BytesIO`, a socket's `makefile`, a pipe), as boto3's
//! calls of the same names do, with the parts still moving in parallel.
//!
//! Why not a file path: a program that already holds a file object (a gzip stream, a spooled
//! temporary file, standard output) would otherwise write the object to disk first. Memory is
//! bounded by the stream transfers' windows (`download_to_writer`, `upload_from_reader`), not by
//! the object's size.
//!
//! The file object is called from the thread that waits for the transfer, with the GIL taken
//! for each call only: a part is handed to `write` as one `bytes` (one copy, from the part's
//! buffer), and `read` is asked for what the next part still lacks. Parts go on moving on the
//! runtime's threads while Python runs.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use slipstream_client::{ObjectKey, ObjectKeyBuf, S3Client};
use slipstream_transfer::{
    download_to_writer, upload_from_reader, ObjectHeaders, Progress, TransferError, TransferOptions,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::client::Client;
use crate::errors::Raise;

/// A streamed transfer's failure: the file object's own exception, raised as it was (an
/// `OSError` from a full disk, a `TypeError` from a text-mode file), or the transfer's.
pub(crate) enum StreamError {
    FileObject(PyErr),
    Transfer(TransferError),
}

impl StreamError {
    /// The transfer's outcome, unless the file object raised: its exception is the cause (the
    /// transfer then failed only because its stream did).
    fn first(done: Result<u64, TransferError>, raised: Option<PyErr>) -> Result<u64, Self> {
        match raised {
            Some(e) => Err(StreamError::FileObject(e)),
            None => done.map_err(StreamError::Transfer),
        }
    }
}

impl Raise for StreamError {
    fn raise(self) -> PyErr {
        match self {
            StreamError::FileObject(e) => e,
            StreamError::Transfer(e) => e.raise(),
        }
    }
}

impl Client {
    /// `download_fileobj`'s work: `fileobj.write` found now, so a wrong object fails at once.
    pub(crate) fn download_fileobj_work(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
        fileobj: &Bound<'_, PyAny>,
        progress: Option<Arc<Progress>>,
    ) -> PyResult<impl Future<Output = Result<u64, StreamError>> + Send + 'static> {
        let write = method(fileobj, "write", "opened 'wb'")?;
        let (client, opts) = (Arc::clone(&self.inner), self.transfer_options(progress));
        let names = (bucket.to_owned(), key.to_buf());
        Ok(download_into(client, names, write, opts))
    }

    /// `upload_fileobj`'s work, with the call's checksum and headers.
    pub(crate) fn upload_fileobj_work(
        &self,
        fileobj: &Bound<'_, PyAny>,
        (bucket, key): (&str, &str),
        checksum_algorithm: Option<&str>,
        headers: ObjectHeaders,
        progress: Option<Arc<Progress>>,
    ) -> PyResult<impl Future<Output = Result<u64, StreamError>> + Send + 'static> {
        let read = method(fileobj, "read", "opened 'rb'")?;
        let opts = self.upload_options(checksum_algorithm, headers, progress)?;
        let client = Arc::clone(&self.inner);
        Ok(upload_from(
            client,
            read,
            (bucket.to_owned(), key.to_owned()),
            opts,
        ))
    }
}

/// `fileobj.NAME`, or a `TypeError` saying what a file object needs.
fn method(fileobj: &Bound<'_, PyAny>, name: &str, mode: &str) -> PyResult<Method> {
    match fileobj.getattr(name) {
        Ok(m) if m.is_callable() => Ok(Method {
            call: m.unbind(),
            raised: None,
            yielded: false,
        }),
        _ => Err(PyTypeError::new_err(format!(
            "fileobj must be a binary file object with {name}() (a file {mode}, io.BytesIO), not {}",
            type_name(fileobj)
        ))),
    }
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// Streams `bucket/key` into `write` (a file object's bound `write`), in order; the size.
/// The whole-object checksum is compared at the end, after the bytes were written: an error
/// then means what was written is not the object.
async fn download_into(
    client: Arc<S3Client>,
    (bucket, key): (String, ObjectKeyBuf),
    write: Method,
    opts: TransferOptions,
) -> Result<u64, StreamError> {
    let mut out = PyWriter(write);
    let done = download_to_writer(client, &bucket, key.as_key(), &mut out, opts).await;
    StreamError::first(done.map(|d| d.size), out.0.raised)
}

/// Uploads what `read` (a file object's bound `read`) yields until it returns `b""`, to
/// `bucket/key`; the size. An exception from `read` fails the upload (a multipart upload is
/// aborted, as on any failure), so a half-read stream never becomes an object.
async fn upload_from(
    client: Arc<S3Client>,
    read: Method,
    (bucket, key): (String, String),
    opts: TransferOptions,
) -> Result<u64, StreamError> {
    let mut input = PyReader(read);
    let done = upload_from_reader(client, &mut input, &bucket, &key, opts).await;
    StreamError::first(done.map(|u| u.size), input.0.raised)
}

/// The most one `write` call is handed. A whole part (8 MiB) a call made a 1 GiB download into
/// a file slower than boto3's 256 KiB calls, and unsteady (0.5-2.0 s between runs), where the
/// same part in 256 KiB slices wrote in 0.53-0.57 s every time (docs/BENCHMARKS.md, "Python
/// file objects"; why large writes fared worse was not found). The extra calls cost nothing
/// measurable.
const WRITE_CHUNK: usize = 1 << 20;

/// A file object's bound `write` or `read`, and what it raised: the transfer then fails with
/// an I/O error, and this is what the call raises.
struct Method {
    call: Py<PyAny>,
    raised: Option<PyErr>,
    /// Whether the last poll gave control back (see [`Method::turn`]).
    yielded: bool,
}

impl Method {
    /// Whether this poll calls Python: every other one returns `Pending` at once, woken
    /// again. The calls are synchronous, so a transfer whose parts are done by the time the
    /// next call returns would otherwise run from its first call to its last in one poll,
    /// and `Client::wait` would not get control between its steps to run signal handlers and
    /// the `callback=` (a test saw an upload from a slow reader complete before its callback
    /// could stop it).
    fn turn(&mut self, cx: &mut Context<'_>) -> bool {
        self.yielded = !self.yielded;
        if self.yielded {
            cx.waker().wake_by_ref();
        }
        !self.yielded
    }

    /// Keeps `e` to be raised; the error the transfer fails with meanwhile.
    fn failed(&mut self, e: PyErr) -> io::Error {
        self.raised = Some(e);
        io::Error::other("the file object raised")
    }
}

/// A file object's `write` as the writer a streamed download writes each part into.
struct PyWriter(Method);

impl PyWriter {
    /// Hands all of `data` to `write`, at most [`WRITE_CHUNK`] a call: again with the rest when
    /// a raw file wrote part of it (`None` counts as all, as boto3 and `shutil.copyfileobj`
    /// take it).
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        crate::exit::attach(|py| {
            let write = self.0.call.bind(py).clone();
            let mut rest = data;
            while !rest.is_empty() {
                let chunk = &rest[..rest.len().min(WRITE_CHUNK)];
                let wrote = match write.call1((PyBytes::new(py, chunk),)) {
                    Ok(n) => n.extract::<Option<usize>>().ok().flatten(),
                    Err(e) => return Err(self.0.failed(e)),
                };
                let n = match wrote {
                    None => chunk.len(),
                    Some(0) => {
                        let e = PyTypeError::new_err(
                            "the file object's write() wrote nothing: a non-blocking stream?",
                        );
                        return Err(self.0.failed(e));
                    }
                    Some(n) => n.min(chunk.len()),
                };
                rest = &rest[n..];
            }
            Ok(())
        })
        .unwrap_or_else(|| Err(exiting()))
    }
}

impl AsyncWrite for PyWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !this.0.turn(cx) {
            return Poll::Pending;
        }
        Poll::Ready(this.write_all(data).map(|()| data.len()))
    }

    // Flushing and closing stay the caller's, as with boto3: the file object may go on being
    // written after the object (an archive, a multipart MIME body).
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A file object's `read` as the reader a streamed upload cuts into parts.
struct PyReader(Method);

impl PyReader {
    /// Up to `buf.remaining()` bytes from `read`, copied into `buf`; none at the end.
    fn fill(&mut self, buf: &mut ReadBuf<'_>) -> io::Result<()> {
        let want = buf.remaining();
        match crate::exit::attach(|py| answer(self.0.call.bind(py), want)) {
            Some(Ok(data)) => {
                buf.put_slice(&data);
                Ok(())
            }
            Some(Err(e)) => Err(self.0.failed(e)),
            None => Err(exiting()),
        }
    }
}

/// The error of a file object's call that Python's exit kept from running.
fn exiting() -> io::Error {
    io::Error::other("Python is exiting")
}

/// What `read(want)` returned, if it is bytes (or a bytearray) of at most `want`.
fn answer(read: &Bound<'_, PyAny>, want: usize) -> PyResult<PyBackedBytes> {
    let answer = read.call1((want,))?;
    if answer.is_none() {
        return Err(PyTypeError::new_err(
            "the file object's read() returned None: a non-blocking stream with no data",
        ));
    }
    let data = answer.extract::<PyBackedBytes>().map_err(|_| {
        PyTypeError::new_err(format!(
            "the file object's read() returned {}, not bytes: open the file in binary mode ('rb')",
            type_name(&answer)
        ))
    })?;
    if data.len() > want {
        return Err(PyTypeError::new_err(format!(
            "the file object's read({want}) returned {} bytes",
            data.len()
        )));
    }
    Ok(data)
}

impl AsyncRead for PyReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.0.turn(cx) {
            return Poll::Pending;
        }
        Poll::Ready(this.fill(buf))
    }
}
