//! Where a download's parts come from, for every kind of download (to a file, a stream, or
//! memory): the object pinned to the ETag its first answer named, the ranges it is cut into,
//! each part's GET retried when its body breaks or stalls, and the checks all three share.
//! What a part's bytes become is the caller's business (`download.rs`, `stream.rs`, `memory.rs`
//! each pass [`Source::read`] their own reader).

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use slipstream_client::{
    ChecksumAlgorithm, ClientError, ObjectInfo, ObjectKey, ObjectKeyBuf, ObjectStream, S3Client,
};
use tokio::io::AsyncWrite;

use crate::range_frames::{write_range, Range};
use crate::{download_ranges, TransferError};

/// The GET sent with the HEAD: its headers are in, its body (the object's first `len` bytes)
/// is read as part 0, alongside the other parts. Waiting for that body before starting the
/// others cost many round trips over a long link: a new connection's slow start takes about
/// seven to bring 1 MiB.
pub(crate) struct First {
    response: ObjectStream,
    len: u64,
}

impl First {
    /// An answer whose first `len` bytes of body are part 0.
    pub(crate) fn new(response: ObjectStream, len: u64) -> Self {
        Self { response, len }
    }
}

/// Where the parts of one download come from: the object pinned to its ETag, its ranges, and
/// the first GET's open response, which is part 0. Shared by the file and stream paths.
pub(crate) struct Source {
    client: Arc<S3Client>,
    bucket: String,
    /// The key, and the version every part reads when the download names one.
    key: ObjectKeyBuf,
    etag: String,
    first: std::sync::Mutex<Option<First>>,
    /// Part `i` is `ranges[i]`: the first GET's bytes, then the rest cut by the caller.
    pub ranges: Vec<(u64, u64)>,
}

impl Source {
    /// The parts of the object `info` describes, pinned to its ETag: `first`'s bytes, then the
    /// rest cut by [`download_ranges`] into `part_size` parts for `concurrency` connections, as
    /// if it were an object of its own.
    pub(crate) fn new(
        client: &Arc<S3Client>,
        bucket: &str,
        key: ObjectKey<'_>,
        info: &ObjectInfo,
        first: Option<First>,
        part_size: u64,
        concurrency: usize,
    ) -> Self {
        let (etag, size) = (&info.etag, info.size);
        let covered = first.as_ref().map_or(0, |f| f.len);
        let ranges = first
            .iter()
            .map(|f| (0, f.len))
            .chain(
                download_ranges(size.saturating_sub(covered), part_size, concurrency)
                    .into_iter()
                    .map(|(s, e)| (s + covered, e + covered)),
            )
            .collect();
        Self {
            client: Arc::clone(client),
            bucket: bucket.to_owned(),
            key: key.to_buf(),
            etag: etag.to_owned(),
            first: std::sync::Mutex::new(first),
            ranges,
        }
    }

    /// The same parts `by` bytes further into the object: the parts of a range that starts
    /// there, cut as if the range were an object of its own.
    pub(crate) fn shifted(mut self, by: u64) -> Self {
        for (start, end) in &mut self.ranges {
            *start += by;
            *end += by;
        }
        self
    }

    /// The client the parts come through.
    pub(crate) fn client(&self) -> &S3Client {
        &self.client
    }

    /// Part 0 written into `out` as its frames arrive (the first answer's body, resumed where
    /// it breaks off, pinned to the ETag), `each` seeing every frame first: a stream download's
    /// first part, which its reader waits on while the window fills behind it.
    pub(crate) async fn write_first<W: AsyncWrite + Unpin>(
        &self,
        out: &mut W,
        each: impl FnMut(&Bytes),
    ) -> Result<u64, TransferError> {
        let opened = self.first.lock().ok().and_then(|mut f| f.take());
        let range = Range {
            names: (&self.bucket, self.key.as_key()),
            span: self.ranges[0],
            opened: opened.map(|f| f.response),
        };
        let mut pin = Some(self.etag.clone());
        let written = write_range(&self.client, range, &mut pin, out, each).await?;
        let (start, end) = self.ranges[0];
        if written != end - start {
            // The object ended before the part: it was replaced by a shorter one.
            return Err(changed(self.key.as_key().key, &self.etag));
        }
        Ok(written)
    }

    /// Part `i`'s body through `take` (given the response, the part's start and length). Part 0
    /// is the first GET's body when there is one; a body that breaks or stalls is fetched again,
    /// pinned to the ETag (the request itself is retried inside the client).
    pub(crate) async fn read<T, Fut>(
        &self,
        i: usize,
        take: impl Fn(ObjectStream, u64, u64) -> Fut,
    ) -> Result<T, TransferError>
    where
        Fut: Future<Output = Result<T, TransferError>>,
    {
        let opened = match i {
            0 => self.first.lock().ok().and_then(|mut f| f.take()),
            _ => None,
        };
        if let Some(first) = opened {
            match take(first.response, self.ranges[0].0, first.len).await {
                Err(e) if e.is_retryable() => {}
                other => return other,
            }
        }
        let (start, end) = self.ranges[i];
        let (client, etag) = (&self.client, &self.etag);
        let key = self.key.as_key();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let got = match client
                .get_object(&self.bucket, key, Some((start, end)), Some(etag))
                .await
            {
                Ok(response) => take(response, start, end - start).await,
                Err(e) => Err(e.into()),
            };
            match got {
                Err(e) if e.is_retryable() && attempt < client.max_attempts() => {
                    tokio::time::sleep(client.backoff(attempt)).await;
                }
                Err(TransferError::Client(ClientError::S3 { status: 412, .. })) => {
                    return Err(changed(key.key, etag))
                }
                other => return other,
            }
        }
    }
}

/// How a download begins: a GET of the first `first_len` bytes, and what is known of the
/// object (size, ETag, the whole-object checksum that only HEAD and whole-object answers
/// carry). By default `HeadObject` goes beside the GET, so a small object costs one round trip
/// instead of two, and a missing one says `NoSuchKey`; both must name the same ETag (else the
/// object changed between them), and the later parts are pinned to it. Where the server has
/// been seen to send the checksum on a ranged answer that covers the whole object
/// ([`S3Client::whole_range_checksums`], learned here from the first small object), a small
/// object takes the GET alone (half the requests for many small objects) and a larger one
/// asks HeadObject after its first answer. An object a listing just said fits in the first range
/// (`listed`) takes one GET without a range, whose answer says all HeadObject would, checksum
/// included, on any server. `None`: the object is empty.
pub(crate) async fn start(
    client: &S3Client,
    bucket: &str,
    key: ObjectKey<'_>,
    first_len: u64,
    listed: Option<u64>,
) -> Result<(ObjectInfo, Option<First>), TransferError> {
    if listed.is_some_and(|size| size <= first_len) {
        // Had the object grown since the listing, this answer is still all of it: one part.
        let (response, seen) = client.get_first(bucket, key, None).await?;
        let len = seen.size;
        return Ok((seen, (len > 0).then_some(First { response, len })));
    }
    if client.whole_range_checksums() {
        return match client.get_first(bucket, key, Some((0, first_len))).await {
            // The whole object came, with its checksum if it has one.
            Ok((response, seen)) if seen.size <= first_len => {
                let len = seen.size;
                Ok((seen, (len > 0).then_some(First { response, len })))
            }
            Ok((response, _)) => {
                let info = client.head_object(bucket, key).await?;
                first(key.key, first_len, info, response)
            }
            // Only an empty object's 416 needs HEAD's word; other errors name their cause.
            Err(e @ ClientError::S3 { status: 416, .. }) => {
                refused(client.head_object(bucket, key).await, e, key.key)
            }
            Err(e) => Err(e.into()),
        };
    }
    let (head, get) = tokio::join!(
        client.head_object(bucket, key),
        client.get_first(bucket, key, Some((0, first_len))),
    );
    let (response, seen) = match get {
        Ok(answer) => answer,
        Err(e) => return refused(head, e, key.key),
    };
    let info = head?;
    if seen.size <= first_len && seen.checksum.is_some() && seen.checksum == info.checksum {
        client.learn_whole_range_checksums();
    }
    first(key.key, first_len, info, response)
}

/// The first answer of a download of `range` (start, end exclusive) of an object: its first
/// `first_len` bytes, whose `Content-Range` says where the object ends (a range that runs past
/// it is cut short, as S3 cuts it). The info describes the range: its length, the object's
/// ETag (the parts are pinned to it), no checksum (no whole-object checksum applies to a range).
/// `if_match`: the ETag an earlier answer gave, so that a download resumed at another offset
/// reads the same object or fails with [`TransferError::Changed`]. A range no longer than
/// `part_size` is asked for whole: one round trip, where a first piece and then the rest in
/// parts cost two (1.67 MB over 100 ms: 235 ms, against boto3's 157 ms in one GET).
pub(crate) async fn start_range(
    client: &S3Client,
    bucket: &str,
    key: ObjectKey<'_>,
    ((start, end), if_match): ((u64, u64), Option<&str>),
    (first_len, part_size): (u64, u64),
) -> Result<(ObjectInfo, First), TransferError> {
    let len = end.saturating_sub(start);
    let first_len = if len <= part_size { len } else { first_len };
    let first_end = end.min(start.saturating_add(first_len.max(1)));
    let first = client
        .get_object(bucket, key, Some((start, first_end)), if_match)
        .await
        .map_err(|e| pinned_error(e, key, if_match))?;
    let total = range_total(&first, key)?;
    if total <= start {
        // S3 refuses such a range (416); an answer that says otherwise is not one.
        return Err(TransferError::BadResponse(format!(
            "{key}: bytes from {start} asked, and the answer says the object has {total}"
        )));
    }
    let (end, first_end) = (end.min(total), first_end.min(total));
    let info = ObjectInfo {
        size: end - start,
        etag: first.etag.clone(),
        last_modified: String::new(),
        checksum: None,
        copied_headers: Vec::new(),
        storage_class: None,
        version_id: None,
        encryption: Vec::new(),
    };
    Ok((info, First::new(first, first_end - start)))
}

/// The first GET was refused: an empty object (no byte 0, so S3 answers 416 to any range,
/// and `head` says the size is 0), else the GET's error, which names the cause (NoSuchKey,
/// AccessDenied; HEAD's has no body).
fn refused(
    head: Result<ObjectInfo, ClientError>,
    get: ClientError,
    key: &str,
) -> Result<(ObjectInfo, Option<First>), TransferError> {
    if !matches!(get, ClientError::S3 { status: 416, .. }) {
        return Err(get.into());
    }
    let info = head?;
    if info.size != 0 {
        return Err(TransferError::BadResponse(format!(
            "{key}: the first range was refused, but the object has {} bytes",
            info.size
        )));
    }
    Ok((info, None))
}

/// The first answer checked against what HeadObject said: the same ETag, and the length asked.
fn first(
    key: &str,
    first_len: u64,
    info: ObjectInfo,
    response: ObjectStream,
) -> Result<(ObjectInfo, Option<First>), TransferError> {
    if info.etag != response.etag {
        return Err(changed(key, &info.etag));
    }
    // `bytes 0-N/TOTAL` for a range; without one the server sent the whole object.
    let len = match response.total_size {
        Some(total) => first_len.min(total),
        None => response
            .content_length
            .ok_or_else(|| TransferError::BadResponse("a GET without a Content-Length".into()))?,
    };
    if len != first_len.min(info.size) {
        return Err(TransferError::BadResponse(format!(
            "{key}: the first GET brings {len} bytes, not {}",
            first_len.min(info.size)
        )));
    }
    // A server that ignores the range on an empty object answers 200 with no body.
    Ok((info, (len > 0).then_some(First { response, len })))
}

/// A ranged GET's error: `Changed` when the answer was 412 to a GET pinned to `if_match` (the
/// object was replaced since that ETag was seen), else the client's.
pub(crate) fn pinned_error(
    e: ClientError,
    key: ObjectKey<'_>,
    if_match: Option<&str>,
) -> TransferError {
    match (e, if_match) {
        (ClientError::S3 { status: 412, .. }, Some(etag)) => changed(key.key, etag),
        (e, _) => e.into(),
    }
}

/// The object's size, from a ranged answer's `Content-Range`; an error if the server ignored
/// the range (it sent all of it, which a range download would take for the range).
pub(crate) fn range_total(answer: &ObjectStream, key: ObjectKey<'_>) -> Result<u64, TransferError> {
    answer.total_size.ok_or_else(|| {
        TransferError::BadResponse(format!(
            "{key}: the answer to a range has no Content-Range (the server sent all of it?)"
        ))
    })
}

fn changed(key: &str, etag: &str) -> TransferError {
    TransferError::Changed {
        key: key.to_owned(),
        etag: etag.to_owned(),
    }
}

/// The first range of a whole object, asked for before its size is known: a whole part, so
/// that an object of up to a part comes in one round trip, as boto3's `get_object` and
/// obstore's `get` bring it (an eighth of a part and then the rest took two: 1.67 MB over 100
/// ms in 245 ms, boto3's 156 ms). File and memory downloads land their parts at their offsets,
/// so a larger part 0 holds nothing back; a stream download writes in order and asks for
/// less (`stream::stream_first_len`).
pub(crate) fn whole_first_len(part_size: u64) -> u64 {
    part_size.max(1)
}

/// Checks the data against the object's whole-object checksum, if it has one (`crc` computes
/// the data's CRC of that algorithm): `Ok(Some(algorithm))` checked, `Ok(None)` nothing to
/// check, an error on a mismatch.
pub(crate) fn check_checksum(
    info: &ObjectInfo,
    crc: impl FnOnce(ChecksumAlgorithm) -> u64,
) -> Result<Option<ChecksumAlgorithm>, TransferError> {
    let Some(expected) = &info.checksum else {
        return Ok(None);
    };
    let alg = expected.algorithm;
    let got = alg.encode(crc(alg));
    if got != expected.value {
        return Err(TransferError::ChecksumMismatch {
            algorithm: alg,
            computed: got,
            expected: expected.value.clone(),
        });
    }
    Ok(Some(alg))
}

/// The next bytes of a part's `body`: `None` at the end; an error if it breaks, stalls, or
/// brings more than `want` bytes in all (`got` counts them).
pub(crate) async fn next_chunk(
    body: &mut ObjectStream,
    got: &mut u64,
    (start, want): (u64, u64),
) -> Result<Option<Bytes>, TransferError> {
    let Some(chunk) = body.chunk().await? else {
        return Ok(None);
    };
    *got += chunk.len() as u64;
    if *got > want {
        return Err(TransferError::BadResponse(format!(
            "bytes {start}-{}: more data than asked for",
            start + want - 1
        )));
    }
    Ok(Some(chunk))
}

/// A body that ended early: the network's doing, so the part is fetched again.
pub(crate) fn short(start: u64, got: u64, want: u64) -> TransferError {
    TransferError::Client(ClientError::Network(format!(
        "bytes {start}-{}: {got} of {want} bytes arrived",
        start + want - 1
    )))
}
