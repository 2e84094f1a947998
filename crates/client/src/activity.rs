//! When bytes last moved, so that waiting can be bounded by silence rather than by the clock.
//!
//! A fixed timeout on a whole request fails a healthy upload on a slow link (8 MiB at 1 Mbit/s
//! takes a minute) and waits far too long on a server that froze. So the client counts time
//! from the last byte that moved instead ([`Activity::until_idle`]): [`Sending`] hands a request body to the connection in
//! slices and notes each slice taken (the connection takes more only as the socket drains), and
//! the transfer engine notes each frame of a response body it reads. The response timeout then
//! runs from the last byte sent, and the engine's stall watchdog (`slipstream-transfer`) ends a
//! transfer after a given time without a byte moving on any of the client's connections.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::payload::{FileSlices, Payload};

/// The most of a body handed to the connection at once: a fraction of hyper's write buffer,
/// so a slice is taken only once the socket has drained the one before.
const SLICE: usize = 256 << 10;

/// When bytes last moved. Cheap to note (one clock read and one atomic store).
#[derive(Debug)]
pub struct Activity {
    epoch: Instant,
    /// Milliseconds from `epoch` to the last byte moved.
    last_ms: AtomicU64,
}

impl Default for Activity {
    fn default() -> Self {
        Self::new()
    }
}

impl Activity {
    /// A clock whose last activity is now.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    /// Bytes moved just now.
    pub fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// When bytes last moved (to the millisecond).
    pub fn last(&self) -> Instant {
        self.epoch + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }

    /// How long no bytes have moved.
    pub fn idle_for(&self) -> Duration {
        self.last().elapsed()
    }

    /// Runs `work` to its end, or gives up (`None`, `work` dropped) once no byte has moved for
    /// `limit`, counted from the later of this call and the last byte.
    pub async fn until_idle<T>(
        &self,
        limit: Duration,
        work: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        let started = Instant::now();
        let quiet_since = || self.last().max(started);
        let mut work = std::pin::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return Some(out),
                () = tokio::time::sleep_until((quiet_since() + limit).into()) => {
                    if quiet_since().elapsed() >= limit {
                        return None;
                    }
                }
            }
        }
    }
}

/// A request body handed out in slices (zero-copy views of bytes in memory, at most 256 KiB;
/// or a file's range read a slice at a time: `payload.rs`), each slice noted on the given
/// clocks as it is taken.
pub(crate) struct Sending {
    source: Source,
    clocks: Vec<Arc<Activity>>,
}

enum Source {
    Memory(Bytes),
    File(FileSlices),
}

impl Sending {
    /// `payload`, noting its progress on `clocks`.
    pub(crate) fn new(payload: Payload, clocks: Vec<Arc<Activity>>) -> Self {
        let source = match payload {
            Payload::Bytes(data) => Source::Memory(data),
            Payload::File(range) => Source::File(FileSlices::new(range)),
        };
        Self { source, clocks }
    }

    fn left(&self) -> u64 {
        match &self.source {
            Source::Memory(data) => data.len() as u64,
            Source::File(slices) => slices.left(),
        }
    }
}

impl From<Bytes> for Sending {
    fn from(data: Bytes) -> Self {
        Self::new(Payload::Bytes(data), Vec::new())
    }
}

impl Body for Sending {
    type Data = Bytes;
    /// A file that could not be read (the request fails and may be retried).
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let slice = match &mut self.source {
            Source::Memory(data) if data.is_empty() => return Poll::Ready(None),
            Source::Memory(data) => {
                let n = data.len().min(SLICE);
                data.split_to(n)
            }
            Source::File(slices) => match ready!(slices.poll_slice(cx)) {
                Some(Ok(slice)) => slice,
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => return Poll::Ready(None),
            },
        };
        for clock in &self.clocks {
            clock.touch();
        }
        Poll::Ready(Some(Ok(Frame::data(slice))))
    }

    fn is_end_stream(&self) -> bool {
        self.left() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_body_comes_in_slices_that_touch_the_clock() {
        let clock = Arc::new(Activity::new());
        std::thread::sleep(Duration::from_millis(20));
        assert!(clock.idle_for() >= Duration::from_millis(20));
        let data = Bytes::from(vec![7u8; SLICE * 2 + 5]);
        let mut body = Sending::new(data.clone().into(), vec![Arc::clone(&clock)]);
        assert_eq!(body.size_hint().exact(), Some(data.len() as u64));
        let mut lens = Vec::new();
        let mut joined = Vec::new();
        while let Some(frame) = body.frame().await {
            let chunk = frame.unwrap().into_data().unwrap();
            lens.push(chunk.len());
            joined.extend_from_slice(&chunk);
        }
        assert_eq!(lens, [SLICE, SLICE, 5]);
        assert_eq!(joined, data);
        assert!(body.is_end_stream());
        assert!(clock.idle_for() < Duration::from_millis(20));
    }

    #[tokio::test]
    async fn until_idle_waits_while_the_clock_moves() {
        let clock = Arc::new(Activity::new());
        let c = Arc::clone(&clock);
        // Work that keeps moving bytes for 1.5 s, longer than the 1 s idle limit: it finishes.
        let busy = async move {
            for _ in 0..75 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                c.touch();
            }
            "done"
        };
        let limit = Duration::from_secs(1);
        assert_eq!(clock.until_idle(limit, busy).await, Some("done"));
        // Work that moves nothing fails once the limit has passed since the last byte.
        let silent = std::future::pending::<()>();
        let started = Instant::now();
        let limit = Duration::from_millis(50);
        assert_eq!(clock.until_idle(limit, silent).await, None);
        assert!(started.elapsed() >= limit);
    }
}
