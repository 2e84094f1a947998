//! The progress bar of `cp`: bytes, throughput and ETA on a terminal, and how long nothing has
//! moved once a server goes quiet; nothing when standard error is piped or with
//! `--quiet`/`--json`, so scripts and logs get no control characters.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use slipstream_client::S3Client;
use slipstream_transfer::Progress;

/// A bar redrawn from a [`Progress`] counter by a thread of its own, until dropped.
pub struct Bar {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// The counter to hand to the engine, and the bar (`None` when none should be drawn).
    /// `client` tells when bytes last moved, which a part's progress alone does not show.
    pub fn start(wanted: bool, client: &Arc<S3Client>) -> (Option<Arc<Progress>>, Option<Bar>) {
        if !wanted || !std::io::stderr().is_terminal() {
            return (None, None);
        }
        let progress = Arc::new(Progress::new());
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s, client) = (Arc::clone(&progress), Arc::clone(&stop), Arc::clone(client));
        let thread = std::thread::spawn(move || {
            let bar = ProgressBar::new(0);
            let style = ProgressStyle::with_template(
                "{bytes:>10}/{total_bytes:<10} [{wide_bar}] {binary_bytes_per_sec:>12}  ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style.progress_chars("=> "));
            while !s.load(Ordering::Relaxed) {
                if let Some(total) = p.total() {
                    bar.set_length(total);
                }
                bar.set_position(p.done());
                bar.set_message(stalled(client.activity().idle_for()));
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        (
            Some(progress),
            Some(Bar {
                stop,
                thread: Some(thread),
            }),
        )
    }
}

/// Shown after the ETA once nothing has moved for a while: the ETA alone would go on counting.
fn stalled(idle: Duration) -> String {
    if idle < STALL_SHOWN_AFTER {
        String::new()
    } else {
        format!("(stalled: nothing for {}s)", idle.as_secs())
    }
}

/// Longer than any pause of a healthy transfer (a retry's backoff is at most 10 s, but parts
/// overlap it).
const STALL_SHOWN_AFTER: Duration = Duration::from_secs(5);

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_shows_only_after_a_few_quiet_seconds() {
        assert_eq!(stalled(Duration::from_millis(4900)), "");
        assert_eq!(
            stalled(Duration::from_secs(37)),
            "(stalled: nothing for 37s)"
        );
    }
}
