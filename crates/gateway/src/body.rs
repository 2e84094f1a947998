//! The bodies the gateway streams through: a request body on its way to the origin
//! ([`Upload`]) and a response body on its way back ([`Relay`]). Both pass frames as they come
//! (memory per request stays at hyper's buffers) and count bytes; neither ever turns an
//! error into a clean end, so a client never sees a cut-off body as complete.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::sync::oneshot;
use tokio::time::Sleep;

use crate::access_log::Record;
use crate::pool::{BoxError, InFlight};

/// How long a request with `Expect: 100-continue` waits for the origin's `100 Continue`
/// before its body is sent anyway (an origin may ignore `Expect`; curl waits 1 s too).
pub(crate) const CONTINUE_WAIT: Duration = Duration::from_secs(1);

/// A request body forwarded upstream, counted. With `Expect: 100-continue` it is held until
/// the origin says `100 Continue` (so the client, whose `100` the edge sends only when the body
/// is first read, sends nothing the origin would refuse), or until [`CONTINUE_WAIT`].
pub(crate) struct Upload {
    /// Sent before `inner`'s bytes (a form head the edge rewrote).
    prefix: Option<Bytes>,
    inner: Incoming,
    gate: Option<Gate>,
    counted: Arc<AtomicU64>,
    /// Told when the body has been read to its end (dropped unsent when it fails): the
    /// origin's response timeout starts then.
    done: Option<oneshot::Sender<()>>,
}

struct Gate {
    open: oneshot::Receiver<bool>,
    deadline: Pin<Box<Sleep>>,
}

/// The other end of an [`Upload`]'s gate: opened by the origin's `100 Continue`, closed for
/// good when the origin answers without one (the body is then abandoned, never half-sent).
#[derive(Clone)]
pub(crate) struct Continue(Arc<Mutex<Option<oneshot::Sender<bool>>>>);

impl Continue {
    fn settle(&self, open: bool) {
        let sender = match self.0.lock() {
            Ok(mut s) => s.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(s) = sender {
            let _ = s.send(open);
        }
    }

    /// The origin said `100 Continue`.
    pub(crate) fn open(&self) {
        self.settle(true);
    }

    /// The origin answered before asking for the body: the body is not sent.
    pub(crate) fn refuse(&self) {
        self.settle(false);
    }
}

impl Upload {
    /// `inner` forwarded as it comes; bytes added to `counted`.
    pub(crate) fn new(inner: Incoming, counted: Arc<AtomicU64>, done: oneshot::Sender<()>) -> Self {
        Self {
            prefix: None,
            inner,
            gate: None,
            counted,
            done: Some(done),
        }
    }

    /// `inner` held until the returned [`Continue`] opens (or [`CONTINUE_WAIT`] passes).
    pub(crate) fn gated(
        inner: Incoming,
        counted: Arc<AtomicU64>,
        done: oneshot::Sender<()>,
    ) -> (Self, Continue) {
        let (tx, rx) = oneshot::channel();
        let gate = Gate {
            open: rx,
            deadline: Box::pin(tokio::time::sleep(CONTINUE_WAIT)),
        };
        (
            Self {
                prefix: None,
                inner,
                gate: Some(gate),
                counted,
                done: Some(done),
            },
            Continue(Arc::new(Mutex::new(Some(tx)))),
        )
    }

    /// `prefix`, then the rest of `inner` as it comes (the bytes of `inner` already read and
    /// counted are the caller's to include in `prefix`).
    pub(crate) fn after(
        prefix: Bytes,
        inner: Incoming,
        counted: Arc<AtomicU64>,
        done: oneshot::Sender<()>,
    ) -> Self {
        let mut upload = Self::new(inner, counted, done);
        upload.prefix = Some(prefix).filter(|p| !p.is_empty());
        upload
    }
}

/// The origin answered without asking for the body.
#[derive(Debug)]
struct NotWanted;

impl std::fmt::Display for NotWanted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the origin answered before asking for the body")
    }
}

impl std::error::Error for NotWanted {}

impl Body for Upload {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Some(gate) = &mut this.gate {
            match Pin::new(&mut gate.open).poll(cx) {
                Poll::Ready(Ok(true)) => this.gate = None,
                Poll::Ready(_) => return Poll::Ready(Some(Err(Box::new(NotWanted)))),
                Poll::Pending => {
                    ready!(gate.deadline.as_mut().poll(cx));
                    this.gate = None;
                }
            }
        }
        if let Some(prefix) = this.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.counted.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(Box::new(e)))),
            None => {
                if let Some(done) = this.done.take() {
                    let _ = done.send(());
                }
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.gate.is_none() && self.prefix.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let extra = self.prefix.as_ref().map_or(0, |p| p.len() as u64);
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + extra);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + extra);
        }
        hint
    }
}

/// A response body on its way to the client: the origin's, or one the gateway wrote. When it
/// ends (or the client goes away) it writes the request's access-log line and releases its
/// place among the requests in flight.
pub(crate) struct Relay {
    inner: Source,
    record: Option<Record>,
    _in_flight: Option<InFlight>,
}

enum Source {
    Origin(Incoming),
    Local(Option<Bytes>),
}

impl Relay {
    /// The origin's response body.
    pub(crate) fn origin(inner: Incoming, record: Record, in_flight: InFlight) -> Self {
        Self {
            inner: Source::Origin(inner),
            record: Some(record),
            _in_flight: Some(in_flight),
        }
    }

    /// A body the gateway wrote (an error document).
    pub(crate) fn local(body: Bytes, record: Record) -> Self {
        Self {
            inner: Source::Local(Some(body)),
            record: Some(record),
            _in_flight: None,
        }
    }

    /// A body without an access-log line (`/metrics`, `/healthz`).
    pub(crate) fn plain(body: Bytes) -> Self {
        Self {
            inner: Source::Local(Some(body)),
            record: None,
            _in_flight: None,
        }
    }

    fn count(&mut self, n: usize) {
        if let Some(r) = &mut self.record {
            r.bytes_out += n as u64;
        }
    }
}

impl Body for Relay {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let next = match &mut this.inner {
            Source::Local(body) => body.take().map(|b| Ok(Frame::data(b))),
            Source::Origin(body) => match ready!(Pin::new(body).poll_frame(cx)) {
                Some(Ok(frame)) => Some(Ok(frame)),
                Some(Err(e)) => {
                    let message = slipstream_client::describe(&e);
                    if let Some(r) = &mut this.record {
                        r.error = Some(format!("origin body: {message}"));
                    }
                    Some(Err(Box::new(e) as BoxError))
                }
                None => None,
            },
        };
        match &next {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let n = data.len();
                    this.count(n);
                }
            }
            None => {
                if let Some(r) = &mut this.record {
                    r.complete = true;
                }
            }
            Some(Err(_)) => {}
        }
        Poll::Ready(next)
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Source::Local(b) => b.is_none(),
            Source::Origin(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Source::Local(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Source::Local(None) => SizeHint::with_exact(0),
            Source::Origin(b) => b.size_hint(),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(mut record) = self.record.take() {
            if self.is_end_stream() {
                record.complete = true;
            }
            record.finish();
        }
    }
}
