//! `slipstream presign`: keys in, URLs out, in order, streamed in batches so memory stays
//! bounded whatever the input size. Each batch is signed on every core.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Write};
use std::time::SystemTime;

use slipstream_client::{resolve, Env, Overrides, Resolved};
use slipstream_s3::S3Uri;
use slipstream_sign::batch::{thread_count, zip_chunks};
use slipstream_sign::{check_expiry, PresignOptions, Presigner, SigningTime, Template};

use crate::args::PresignArgs;
use crate::Failure;

/// Lines per batch: large enough to keep both cores busy, small enough (a few MB) to bound memory.
const BATCH: usize = 32 * 1024;

pub fn run(a: &PresignArgs) -> Result<(), Failure> {
    if a.connection.no_sign_request {
        return Err(Failure::usage(
            "a presigned URL carries a signature: --no-sign-request leaves nothing to sign with \
             (a public object's plain URL needs none)",
        ));
    }
    let resolved =
        resolve(&Env::from_process(), &overrides(a)).map_err(|e| Failure::usage(e.to_string()))?;
    let time = match &a.at {
        Some(t) => SigningTime::parse_amz(t),
        None => SigningTime::from_system_time(SystemTime::now()),
    }
    .map_err(|e| Failure::usage(e.to_string()))?;
    if a.threads == Some(0) {
        return Err(Failure::usage("--threads must be at least 1"));
    }
    if a.post {
        return crate::presign_post::run(a, &resolved, time);
    }
    let credentials = crate::credentials_now(&resolved)?;
    // `--region-set` (or AWS_SIGV4A_SIGNING_REGION_SET, or the profile's) signs with SigV4A;
    // `--sigv4a` alone, for the region.
    let region_set = resolved
        .region_set
        .clone()
        .or_else(|| a.sigv4a.then(|| resolved.region.clone()));
    let mut signer = BatchSigner {
        credentials,
        resolved,
        time,
        opts: options(a)?,
        bucket: a.bucket.clone(),
        bucket_ids: HashMap::new(),
        templates: Vec::new(),
        threads: a.threads,
        buffers: Vec::new(),
        region_set,
    };

    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let from_stdin = a.keys.is_empty() || (a.keys.len() == 1 && a.keys[0] == "-");
    if from_stdin {
        let stdin = std::io::stdin();
        let mut input = std::io::BufReader::with_capacity(1 << 20, stdin.lock());
        let mut lines = Lines::default();
        let mut first_line = 1;
        loop {
            let more = lines
                .fill(&mut input, BATCH)
                .map_err(|e| Failure::input(format!("cannot read standard input: {e}")))?;
            if lines.len() == 0 {
                break;
            }
            let (text, bad_line) = lines.texts(first_line);
            signer.sign_batch(&text, first_line, &mut out)?;
            if let Some(f) = bad_line {
                out.flush().map_err(|e| Failure::from_write(&e))?;
                return Err(f);
            }
            first_line += lines.len();
            if !more {
                break;
            }
        }
    } else {
        signer.sign_batch(
            &a.keys.iter().map(String::as_str).collect::<Vec<_>>(),
            1,
            &mut out,
        )?;
    }
    out.flush().map_err(|e| Failure::from_write(&e))
}

fn overrides(a: &PresignArgs) -> Overrides {
    a.connection.overrides()
}

/// The query parameters in the order botocore's GetObject serializes them, then `--param`s.
fn options(a: &PresignArgs) -> Result<PresignOptions, Failure> {
    check_expiry(a.expires_in).map_err(|e| Failure::usage(e.to_string()))?;
    let mut query: Vec<(String, String)> = [
        ("response-cache-control", &a.response_cache_control),
        (
            "response-content-disposition",
            &a.response_content_disposition,
        ),
        ("response-content-encoding", &a.response_content_encoding),
        ("response-content-language", &a.response_content_language),
        ("response-content-type", &a.response_content_type),
        ("response-expires", &a.response_expires),
        ("versionId", &a.version_id),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_owned(), v.clone())))
    .collect();
    for p in &a.params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("--param {p:?} must be NAME=VALUE")))?;
        if k.is_empty() {
            return Err(Failure::usage(format!("--param {p:?} has an empty name")));
        }
        query.push((k.to_owned(), v.to_owned()));
    }
    let headers = a
        .content_type
        .iter()
        .map(|c| ("content-type".to_owned(), c.clone()))
        .collect();
    Ok(PresignOptions {
        method: a.method.to_ascii_uppercase(),
        expires_in: a.expires_in,
        query,
        headers,
    })
}

/// Signs batches of key lines, keeping one template per bucket seen.
struct BatchSigner {
    resolved: Resolved,
    time: SigningTime,
    opts: PresignOptions,
    bucket: Option<String>,
    bucket_ids: HashMap<String, usize>,
    templates: Vec<Template>,
    threads: Option<usize>,
    buffers: Vec<String>,
    /// The SigV4A region set; `None` signs with SigV4.
    region_set: Option<String>,
    /// Fetched once from the resolved source.
    credentials: slipstream_sign::Credentials,
}

impl BatchSigner {
    /// The index of `bucket`'s template, built on first use.
    fn template(&mut self, bucket: &str) -> Result<usize, Failure> {
        if let Some(&id) = self.bucket_ids.get(bucket) {
            return Ok(id);
        }
        let r = &self.resolved;
        let base = r
            .url_base(bucket)
            .map_err(|e| Failure::usage(e.to_string()))?;
        let credentials = self.credentials.clone();
        let presigner = match &self.region_set {
            Some(set) => Presigner::new_v4a(base, set, credentials),
            None => Presigner::new(base, &r.region, credentials),
        }
        .map_err(|e| Failure::usage(e.to_string()))?;
        let template = presigner
            .template(&self.opts, self.time)
            .map_err(|e| Failure::usage(e.to_string()))?;
        self.templates.push(template);
        self.bucket_ids
            .insert(bucket.to_owned(), self.templates.len() - 1);
        Ok(self.templates.len() - 1)
    }

    /// Line `n` as (line number, template index, key).
    fn item<'a>(
        &mut self,
        line: &'a str,
        n: usize,
        default: Option<usize>,
    ) -> Result<(usize, usize, Cow<'a, str>), Failure> {
        if line.starts_with("s3://") {
            let u = S3Uri::parse(line).map_err(|e| Failure::input(format!("line {n}: {e}")))?;
            Ok((n, self.template(&u.bucket)?, Cow::Owned(u.key)))
        } else {
            let id = default.ok_or_else(|| {
                Failure::usage(format!(
                    "line {n}: {line:?} is not s3://bucket/key and no --bucket was given"
                ))
            })?;
            Ok((n, id, Cow::Borrowed(line)))
        }
    }

    /// Signs `lines` (numbered from `first`) and writes one URL per line.
    fn sign_batch(
        &mut self,
        lines: &[&str],
        first: usize,
        out: &mut impl Write,
    ) -> Result<(), Failure> {
        let default = match self.bucket.clone() {
            Some(b) => Some(self.template(&b)?),
            None => None,
        };
        let mut items: Vec<(usize, usize, Cow<'_, str>)> = Vec::with_capacity(lines.len());
        let mut bad_line = None;
        for (i, line) in lines.iter().enumerate() {
            match self.item(line, first + i, default) {
                Ok(item) => items.push(item),
                Err(f) => {
                    bad_line = Some(f);
                    break;
                }
            }
        }
        let templates = &self.templates;
        // One output buffer per thread, kept across batches: fresh memory would cost a page
        // fault per 4 KiB written (see `Presigner::presign_batch_into`).
        let threads = thread_count(items.len(), self.threads);
        self.buffers.resize_with(threads, String::new);
        // Each chunk returns the first failure, if any: the URLs before a bad line are still
        // written, in order.
        let failures = zip_chunks(&items, &mut self.buffers, |chunk, text| {
            text.clear();
            for (line, id, key) in chunk {
                if let Err(e) = templates[*id].sign_into(key, text) {
                    return Some((*line, e));
                }
                text.push('\n');
            }
            None
        });
        for (text, failure) in self.buffers.iter().zip(failures) {
            out.write_all(text.as_bytes())
                .map_err(|e| Failure::from_write(&e))?;
            if let Some((line, e)) = failure {
                out.flush().map_err(|e| Failure::from_write(&e))?;
                return Err(Failure::input(format!("line {line}: {e}")));
            }
        }
        if let Some(f) = bad_line {
            out.flush().map_err(|e| Failure::from_write(&e))?;
            return Err(f);
        }
        Ok(())
    }
}

/// A batch of raw lines in one buffer (no allocation per line).
#[derive(Default)]
struct Lines {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Lines {
    /// Replaces the batch with up to `max` lines; returns whether input may have more.
    fn fill(&mut self, input: &mut impl BufRead, max: usize) -> std::io::Result<bool> {
        self.data.clear();
        self.ends.clear();
        while self.ends.len() < max {
            let start = self.data.len();
            if input.read_until(b'\n', &mut self.data)? == 0 {
                return Ok(false);
            }
            // Drop the line ending: "\n" or "\r\n".
            if self.data.last() == Some(&b'\n') {
                self.data.pop();
                if self.data.len() > start && self.data.last() == Some(&b'\r') {
                    self.data.pop();
                }
            }
            self.ends.push(self.data.len());
        }
        Ok(true)
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The lines as text up to the first one that is not UTF-8, and that line's error.
    fn texts(&self, first: usize) -> (Vec<&str>, Option<Failure>) {
        let mut texts = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            let bytes = &self.data[start..end];
            start = end;
            match std::str::from_utf8(bytes) {
                Ok(t) => texts.push(t),
                Err(_) => {
                    let shown = String::from_utf8_lossy(bytes);
                    let why = format!(
                        "line {} is not valid UTF-8 ({shown}); S3 keys are UTF-8 text",
                        first + i
                    );
                    return (texts, Some(Failure::input(why)));
                }
            }
        }
        (texts, None)
    }
}
