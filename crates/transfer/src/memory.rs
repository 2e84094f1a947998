//! Downloads into memory: every part received straight into its place in one buffer.
//!
//! Going through the in-order stream path (a window of part buffers, then appended to a
//! growing `Vec`) copied each byte twice more than needed, plus the `Vec`'s regrowth. Here
//! the object's buffer is allocated once at its size and cut into the parts' places
//! (`BytesMut::split_to`: independent owners of one allocation, so each part's task fills its
//! own without locks between parts or `unsafe`), and the places are joined back without a copy
//! (`BytesMut::unsplit` of neighbours). Memory is the object's size, which the caller asked to
//! hold anyway, and nothing else.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use slipstream_client::{ChecksumAlgorithm, ClientError, S3Client};

use crate::download::{check_checksum, first_len, next_chunk, short, start, Source};
use crate::pool::for_each_part;
use crate::{download_ranges, TransferOptions};

/// Downloads `bucket/key` into memory, parts in parallel, checking the whole-object checksum
/// when the object has one.
pub async fn download_to_memory(
    client: Arc<S3Client>,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Bytes, ClientError> {
    let (info, first) = start(&client, bucket, key, first_len(opts.part_size)).await?;
    let size = usize::try_from(info.size).map_err(|_| {
        ClientError::Response(format!("{key}: {} bytes do not fit in memory", info.size))
    })?;
    opts.set_total(info.size);
    let source = Arc::new(Source::new(
        &client,
        bucket,
        key,
        &info.etag,
        first,
        info.size,
        |n| download_ranges(n, opts.part_size, opts.concurrency),
    ));
    let mut whole = BytesMut::zeroed(size);
    let places: Arc<Vec<Mutex<BytesMut>>> = Arc::new(
        source
            .ranges
            .iter()
            .map(|(s, e)| Mutex::new(whole.split_to((e - s) as usize)))
            .collect(),
    );
    let algorithm = info.checksum.as_ref().map(|c| c.algorithm);
    let crcs = {
        let (source, places, progress) = (
            Arc::clone(&source),
            Arc::clone(&places),
            opts.progress.clone(),
        );
        for_each_part(source.ranges.len(), opts.concurrency, move |i| {
            let (source, places, progress) =
                (Arc::clone(&source), Arc::clone(&places), progress.clone());
            async move {
                let crc = source.fill_part(i, &places[i], algorithm).await?;
                if let Some(p) = progress {
                    let (start, end) = source.ranges[i];
                    p.add(end - start);
                }
                Ok(crc)
            }
        })
        .await?
    };
    check_checksum(&info, |alg| {
        let parts = crcs.iter().zip(&source.ranges);
        parts.fold(0, |acc, (crc, (s, e))| alg.combine(acc, *crc, e - s))
    })?;
    // Every task that held a place has ended with `for_each_part`.
    let places = Arc::try_unwrap(places)
        .map_err(|_| ClientError::Response("a part was still being received".into()))?;
    let mut data = BytesMut::new();
    for place in places {
        data.unsplit(place.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
    Ok(data.freeze())
}

/// Copies a GET's body of `want` bytes (those from `start`) into `place`.
pub(crate) async fn fill_body(
    client: &S3Client,
    response: hyper::Response<Incoming>,
    start: u64,
    want: u64,
    place: &Mutex<BytesMut>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<u64, ClientError> {
    let mut body = response.into_body();
    let mut crc = algorithm.map(ChecksumAlgorithm::start);
    let mut got = 0;
    while let Some(chunk) = next_chunk(client, &mut body, &mut got, (start, want)).await? {
        let at = (got - chunk.len() as u64) as usize;
        if let Some(c) = crc.as_mut() {
            c.update(&chunk);
        }
        let mut place = place.lock().unwrap_or_else(|p| p.into_inner());
        let into = place.get_mut(at..at + chunk.len()).ok_or_else(|| {
            ClientError::Response(format!("bytes from {start}: more data than the part holds"))
        })?;
        into.copy_from_slice(&chunk);
    }
    if got != want {
        return Err(short(start, got, want));
    }
    Ok(crc.map_or(0, |c| c.value()))
}
