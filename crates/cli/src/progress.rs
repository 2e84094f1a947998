//! The progress bar of `cp`: bytes, throughput and ETA on a terminal; nothing when standard
//! error is piped or with `--quiet`/`--json`, so scripts and logs get no control characters.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use slipstream_transfer::Progress;

/// A bar redrawn from a [`Progress`] counter by a thread of its own, until dropped.
pub struct Bar {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// The counter to hand to the engine, and the bar (`None` when none should be drawn).
    pub fn start(wanted: bool) -> (Option<Arc<Progress>>, Option<Bar>) {
        if !wanted || !std::io::stderr().is_terminal() {
            return (None, None);
        }
        let progress = Arc::new(Progress::new());
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (Arc::clone(&progress), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let bar = ProgressBar::new(0);
            let style = ProgressStyle::with_template(
                "{bytes:>10}/{total_bytes:<10} [{wide_bar}] {binary_bytes_per_sec:>12}  ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style.progress_chars("=> "));
            while !s.load(Ordering::Relaxed) {
                if let Some(total) = p.total() {
                    bar.set_length(total);
                }
                bar.set_position(p.done());
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

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
