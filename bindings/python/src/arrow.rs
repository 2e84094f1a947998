//! `Presigner.presign_arrow`: a column of keys in, a column of URLs out, both as Arrow.
//!
//! The keys are read where their producer left them (arrow_ffi.rs), each array is signed on
//! every core with the GIL released (`slipstream_sign::column`), and the URLs go back as a
//! [`UrlArray`]: an object any Arrow library takes without a copy through the PyCapsule
//! protocol (`pa.array(urls)`, `pl.Series(urls)`, `duckdb`'s `from_arrow`). No Python object
//! is made per URL, which is what bounds `presign_many` (docs/BENCHMARKS.md).

use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use slipstream_sign::column::{sign_column_into, KeyColumn, UrlColumn};
use slipstream_sign::Template;

use crate::arrow_ffi::{array_capsules, schema_capsule, stream_capsule, zeroed_huge, Input, Width};

/// Signs every key of `keys` (an Arrow string column, array or one-column table) with
/// `template`, one output array per input array.
pub fn presign(
    py: Python<'_>,
    template: &Template,
    keys: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<UrlArray> {
    let mut input = Input::from_py(keys)?;
    let mut chunks = Vec::new();
    let mut first_row = 0;
    // Each array is read with the GIL held (its producer may need it), signed without it, and
    // released before the next is read: memory is the input, the output and a URL per thread.
    while let Some(array) = input.next_array()? {
        let keys = input.keys(&array)?;
        let rows = keys.len();
        let column = py
            .detach(|| sign_column_into(template, &keys, threads, zeroed_huge))
            .map_err(|e| {
                PyValueError::new_err(format!("keys[{}]: {}", first_row + e.row, e.error))
            })?;
        chunks.push(Arc::new(column));
        first_row += rows;
    }
    Ok(UrlArray::new(chunks))
}

/// Presigned URLs in Arrow buffers (large_utf8; utf8 when a consumer asks for it), one chunk
/// per array of keys. Hand it to any Arrow library: `pyarrow.array(urls)`,
/// `pyarrow.chunked_array(urls)`, `polars.Series(urls)`; nothing is copied.
#[pyclass(frozen, module = "slipstream")]
pub struct UrlArray {
    chunks: Vec<Arc<UrlColumn>>,
    len: usize,
    null_count: usize,
}

impl UrlArray {
    fn new(chunks: Vec<Arc<UrlColumn>>) -> Self {
        Self {
            len: chunks.iter().map(|c| c.len()).sum(),
            null_count: chunks.iter().map(|c| c.null_count).sum(),
            chunks,
        }
    }

    /// The chunk and row within it of row `i`.
    fn locate(&self, mut i: usize) -> Option<(&UrlColumn, usize)> {
        for c in &self.chunks {
            if i < c.len() {
                return Some((c, i));
            }
            i -= c.len();
        }
        None
    }

    /// All chunks as one column: the one chunk itself, or a copy joining them.
    fn joined(&self) -> Arc<UrlColumn> {
        match self.chunks.as_slice() {
            [one] => Arc::clone(one),
            many => Arc::new(join(many)),
        }
    }
}

#[pymethods]
impl UrlArray {
    /// The PyCapsule protocol's array export; several chunks are joined into one array.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        array_capsules(py, &self.joined(), Width::requested(requested_schema))
    }

    /// The PyCapsule protocol's stream export: one array per chunk, nothing copied.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        stream_capsule(py, &self.chunks, Width::requested(requested_schema))
    }

    /// The PyCapsule protocol's type export: large_utf8.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        schema_capsule(py, Width::Large)
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// The URL of row `index` (negative counts from the end), `None` for a null key.
    fn __getitem__(&self, index: isize) -> PyResult<Option<&str>> {
        let i = if index < 0 {
            self.len.checked_sub(index.unsigned_abs())
        } else {
            Some(index.unsigned_abs()).filter(|&i| i < self.len)
        };
        let (chunk, row) = i
            .and_then(|i| self.locate(i))
            .ok_or_else(|| PyIndexError::new_err("UrlArray index out of range"))?;
        Ok(chunk.url(row))
    }

    /// Rows whose key was null.
    #[getter]
    fn null_count(&self) -> usize {
        self.null_count
    }

    /// One chunk per array of keys read.
    #[getter]
    fn num_chunks(&self) -> usize {
        self.chunks.len()
    }

    /// The URLs as a list of `str` (and `None`): one Python object per URL, as `presign_many`.
    fn to_pylist(&self) -> Vec<Option<&str>> {
        self.chunks
            .iter()
            .flat_map(|c| (0..c.len()).map(move |row| c.url(row)))
            .collect()
    }

    fn __repr__(&self) -> String {
        // Never the URLs: they carry signatures (and session tokens).
        format!(
            "UrlArray(len={}, null_count={}, num_chunks={})",
            self.len,
            self.null_count,
            self.chunks.len()
        )
    }
}

/// The chunks' rows one after another in one column.
fn join(chunks: &[Arc<UrlColumn>]) -> UrlColumn {
    let rows: usize = chunks.iter().map(|c| c.len()).sum();
    let null_count = chunks.iter().map(|c| c.null_count).sum();
    let mut out = UrlColumn {
        data: Vec::with_capacity(chunks.iter().map(|c| c.data.len()).sum()),
        offsets: Vec::with_capacity(rows + 1),
        validity: (null_count > 0).then(|| vec![0u8; rows.div_ceil(8)]),
        null_count,
    };
    out.offsets.push(0);
    let mut row = 0;
    for c in chunks {
        let base = out.data.len() as i64;
        out.offsets.extend(c.offsets[1..].iter().map(|&o| base + o));
        out.data.extend_from_slice(&c.data);
        if let Some(bits) = &mut out.validity {
            for r in 0..c.len() {
                if c.is_valid(r) {
                    bits[(row + r) / 8] |= 1 << ((row + r) % 8);
                }
            }
        }
        row += c.len();
    }
    out
}
