//! The open-files limit, raised for the command.
//!
//! Each object in flight holds a socket, and a download's a file besides: 256 objects between
//! two far services are 512 sockets, and `--objects 1024` is more than the 1,024 open files a
//! Linux login gets by default (the soft limit; the hard limit is usually far higher), which
//! would fail transfers with "Too many open files" halfway. As Go programs do (s5cmd and
//! rclone: Go's runtime raises it at start since 1.19), the command raises its soft limit to
//! the hard one. Only the CLI does: a library (the Python package) leaves its host process's
//! limits alone.

/// Raises the soft limit on open files to the hard limit, if that is finite and higher; a
/// refusal leaves the limit as it was (the transfer then reports what fails).
pub fn raise() {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let limit = getrlimit(Resource::Nofile);
        if let (Some(current), Some(maximum)) = (limit.current, limit.maximum) {
            if current < maximum {
                let _ = setrlimit(
                    Resource::Nofile,
                    Rlimit {
                        current: Some(maximum),
                        maximum: Some(maximum),
                    },
                );
            }
        }
    }
}
