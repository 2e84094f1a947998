//! A report of every attempt a client makes, for whoever asks (the CLI's `--debug`, as the AWS
//! CLI's): what was sent where, what came back, how long it took, and whether it will be tried
//! again. Only the method and URL are reported, never a header: headers carry the signature, a
//! session token and SSE-C keys, and the client signs in headers, so its URLs hold no secret.

use std::sync::Arc;
use std::time::Duration;

use crate::ClientError;

/// One attempt of one request, as it ended.
#[derive(Debug)]
pub struct Attempt<'a> {
    /// `GET`, `PUT`...
    pub method: &'a str,
    /// Scheme, host, path and query: no header, so no credential.
    pub url: &'a str,
    /// 1 for the first try.
    pub number: u32,
    /// Attempts the client makes at most.
    pub of: u32,
    /// From the request's start to its response's head, or to the failure.
    pub took: Duration,
    /// The HTTP status, or why there was none (or why a 200 was an error).
    pub outcome: Result<u16, &'a ClientError>,
    /// When it will be tried again; `None`: it will not (it succeeded, or gave up).
    pub retry_in: Option<Duration>,
}

/// What a client calls after every attempt ([`crate::ClientOptions::trace`]).
#[derive(Clone)]
pub struct Trace(pub Arc<dyn Fn(&Attempt<'_>) + Send + Sync>);

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Trace(..)")
    }
}

impl std::fmt::Display for Attempt<'_> {
    /// `GET https://host/b/k -> 200 in 3.1 ms (attempt 1 of 5)`, and `; again in 0.08 s` when
    /// it will be tried again.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} -> ", self.method, self.url)?;
        match &self.outcome {
            Ok(status) => write!(f, "{status}")?,
            Err(e) => write!(f, "{e}")?,
        }
        write!(
            f,
            " in {:.1} ms (attempt {} of {})",
            self.took.as_secs_f64() * 1e3,
            self.number,
            self.of
        )?;
        if let Some(wait) = self.retry_in {
            write!(f, "; again in {:.2} s", wait.as_secs_f64())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_reads_as_one_line() {
        let refused = ClientError::Network("connection refused".into());
        let mut a = Attempt {
            method: "PUT",
            url: "http://127.0.0.1:9000/b/k?partNumber=2&uploadId=u",
            number: 1,
            of: 5,
            took: Duration::from_micros(3150),
            outcome: Err(&refused),
            retry_in: Some(Duration::from_millis(84)),
        };
        assert_eq!(
            a.to_string(),
            "PUT http://127.0.0.1:9000/b/k?partNumber=2&uploadId=u -> network error: \
             connection refused in 3.1 ms (attempt 1 of 5); again in 0.08 s"
        );
        a.outcome = Ok(200);
        a.retry_in = None;
        assert!(a.to_string().ends_with("-> 200 in 3.1 ms (attempt 1 of 5)"));
    }
}
