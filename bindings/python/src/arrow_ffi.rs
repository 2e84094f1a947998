//! Arrow's C data interface and its PyCapsule protocol, both ways, for string columns only:
//! reading keys straight out of another library's buffers (pyarrow, Polars, DuckDB, pandas,
//! nanoarrow) and handing URL buffers to it without a copy.
//!
//! Written here rather than taken from arrow-rs or pyo3-arrow: the project needs three string
//! layouts in and one out, and those crates would add arrow-array, arrow-cast and (for
//! pyo3-arrow) numpy and a newer PyO3 to every build. This is the only module of the package
//! with `unsafe`; each block says what it relies on. The structs and their rules are the
//! specification's: <https://arrow.apache.org/docs/format/CDataInterface.html> and
//! <https://arrow.apache.org/docs/format/CStreamInterface.html>.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use slipstream_sign::column::{KeyColumn, UrlColumn};

/// `struct ArrowSchema`.
#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray`.
#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

/// `struct ArrowArrayStream`.
#[repr(C)]
pub struct FfiStream {
    get_schema: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut FfiStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut FfiStream)>,
    private_data: *mut c_void,
}

// SAFETY (all three): the structs are plain data handed between threads by the specification's
// own rules (a released or moved struct is never touched again); the capsules that carry them
// need `Send`.
unsafe impl Send for FfiSchema {}
unsafe impl Send for FfiArray {}
unsafe impl Send for FfiStream {}

/// The layouts of string keys this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// `u`/`z`: `i32` offsets.
    Small,
    /// `U`/`Z`: `i64` offsets.
    Large,
    /// `vu`/`vz`: 16-byte views, short strings inline, long ones in variadic buffers.
    View,
}

/// A schema this module imported; released when dropped.
struct Schema(FfiSchema);

impl Drop for Schema {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the struct was moved out of its capsule and is released exactly once.
            unsafe { release(&mut self.0) }
        }
    }
}

/// An array this module imported; released when dropped.
pub struct Array(FfiArray);

impl Drop for Array {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: as for `Schema`.
            unsafe { release(&mut self.0) }
        }
    }
}

/// A stream this module imported; released when dropped.
struct Stream(FfiStream);

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: as for `Schema`.
            unsafe { release(&mut self.0) }
        }
    }
}

/// The key column of what the caller passed: its layout, whether it is the one child of a
/// table (struct), and its arrays, read one after another.
pub struct Input {
    layout: Layout,
    in_table: bool,
    source: Source,
}

enum Source {
    One(Option<Array>),
    Stream(Stream),
}

impl Input {
    /// Reads `obj` through `__arrow_c_stream__` (preferred: chunked arrays, tables, query
    /// results) or `__arrow_c_array__`.
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if obj.hasattr("__arrow_c_stream__")? {
            let capsule = obj.call_method0("__arrow_c_stream__")?;
            // SAFETY: the capsule's name says it holds an ArrowArrayStream; taking it marks the
            // capsule's copy released, as the PyCapsule protocol asks of a consumer.
            let mut stream = Stream(unsafe { take(&capsule, c"arrow_array_stream")? });
            let schema = stream.schema()?;
            let (layout, in_table) = key_layout(&schema)?;
            return Ok(Self {
                layout,
                in_table,
                source: Source::Stream(stream),
            });
        }
        if obj.hasattr("__arrow_c_array__")? {
            let pair = obj.call_method0("__arrow_c_array__")?;
            let pair = pair.cast::<PyTuple>().map_err(|_| {
                PyTypeError::new_err("__arrow_c_array__ must return (schema, array) capsules")
            })?;
            // SAFETY: as above, for the schema and the array capsules.
            let schema = Schema(unsafe { take(&pair.get_item(0)?, c"arrow_schema")? });
            let array = Array(unsafe { take(&pair.get_item(1)?, c"arrow_array")? });
            let (layout, in_table) = key_layout(&schema)?;
            return Ok(Self {
                layout,
                in_table,
                source: Source::One(Some(array)),
            });
        }
        Err(PyTypeError::new_err(format!(
            "keys must be an Arrow string column (an object with __arrow_c_stream__ or \
             __arrow_c_array__: pyarrow, Polars, DuckDB, pandas with pyarrow), not {}; \
             for a list of str use presign_many",
            obj.get_type().name()?
        )))
    }

    /// The next array of keys, or `None` after the last. Called with the GIL held: a producer
    /// may run Python (or a query) to make it.
    pub fn next_array(&mut self) -> PyResult<Option<Array>> {
        match &mut self.source {
            Source::One(a) => Ok(a.take()),
            Source::Stream(s) => s.next(),
        }
    }

    /// A view of `array`'s keys for the signer; checks the buffers it will read.
    pub fn keys<'a>(&self, array: &'a Array) -> PyResult<Keys<'a>> {
        let mut a = &array.0;
        let mut offset = 0;
        let mut rows = None;
        if self.in_table {
            if a.null_count != 0 || a.n_children != 1 {
                return Err(PyValueError::new_err(
                    "a table of keys must have one column and no null rows",
                ));
            }
            // The table's rows are the struct's: its length, at its offset into the child
            // (which may be longer, as when a batch is a slice of a bigger one).
            offset = index(a.offset)?;
            rows = Some(index(a.length)?);
            // SAFETY: a struct array with n_children == 1 has one valid child pointer.
            a = unsafe { &**a.children };
        }
        Keys::new(self.layout, a, offset, rows)
    }
}

impl Stream {
    fn schema(&mut self) -> PyResult<Schema> {
        let get = self.0.get_schema.ok_or_else(|| broken("no get_schema"))?;
        let mut out = empty_schema();
        // SAFETY: a live stream's callback, writing into a struct we own.
        let rc = unsafe { get(&mut self.0, &mut out) };
        if rc != 0 {
            return Err(self.error("get_schema", rc));
        }
        Ok(Schema(out))
    }

    fn next(&mut self) -> PyResult<Option<Array>> {
        let get = self.0.get_next.ok_or_else(|| broken("no get_next"))?;
        let mut out = empty_array();
        // SAFETY: as for `schema`.
        let rc = unsafe { get(&mut self.0, &mut out) };
        if rc != 0 {
            return Err(self.error("get_next", rc));
        }
        Ok(out.release.is_some().then_some(Array(out)))
    }

    fn error(&mut self, call: &str, rc: c_int) -> PyErr {
        let message = self
            .0
            .get_last_error
            // SAFETY: the callback returns NULL or a C string valid until the next call.
            .map(|f| unsafe { f(&mut self.0) })
            .filter(|p| !p.is_null())
            // SAFETY: non-null, NUL-terminated by the specification.
            .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .unwrap_or_default();
        PyValueError::new_err(format!(
            "the Arrow stream of keys failed in {call} (error {rc}): {message}"
        ))
    }
}

/// Moves the struct out of a capsule named `name` and marks the capsule's copy released.
///
/// SAFETY: the caller names the struct type `T` that capsules of that name hold.
unsafe fn take<T: Released>(obj: &Bound<'_, PyAny>, name: &CStr) -> PyResult<T> {
    let capsule = obj
        .cast::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err(format!("expected a PyCapsule named {name:?}")))?;
    let p = capsule.pointer_checked(Some(name))?.cast::<T>().as_ptr();
    let value = ptr::read(p);
    (*p).forget_release();
    if !value.is_live() {
        return Err(broken("a released struct"));
    }
    Ok(value)
}

/// What `take` needs of the three structs.
trait Released {
    fn forget_release(&mut self);
    fn is_live(&self) -> bool;
}

macro_rules! released {
    ($($t:ty),*) => {$(
        impl Released for $t {
            fn forget_release(&mut self) {
                self.release = None;
            }
            fn is_live(&self) -> bool {
                self.release.is_some()
            }
        }
    )*};
}
released!(FfiSchema, FfiArray, FfiStream);

fn broken(what: &str) -> PyErr {
    PyValueError::new_err(format!("the Arrow data of the keys is malformed: {what}"))
}

/// The layout of the keys, and whether they are a table's only column.
fn key_layout(schema: &Schema) -> PyResult<(Layout, bool)> {
    let s = &schema.0;
    // SAFETY: a live schema's format is a NUL-terminated string.
    let format = unsafe { CStr::from_ptr(s.format) }.to_bytes();
    if format == b"+s" {
        let names: Vec<String> = (0..usize::try_from(s.n_children).unwrap_or(0))
            // SAFETY: a struct schema has n_children valid child pointers, each with a name
            // that is NULL or a C string.
            .map(|i| unsafe {
                let child = &**s.children.add(i);
                if child.name.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(child.name).to_string_lossy().into_owned()
                }
            })
            .collect();
        if names.len() != 1 {
            return Err(PyValueError::new_err(format!(
                "keys must be one column; got a table of {} columns ({}): select the key column",
                names.len(),
                names.join(", ")
            )));
        }
        // SAFETY: as above.
        let child = Schema(unsafe { ptr::read(*s.children) });
        let layout = key_layout(&child);
        // The child belongs to its parent, which releases it: only borrow it.
        std::mem::forget(child);
        return match layout? {
            (layout, false) => Ok((layout, true)),
            (_, true) => Err(PyTypeError::new_err(
                "keys must be a string column, not a table nested in a table",
            )),
        };
    }
    if !s.dictionary.is_null() {
        return Err(PyTypeError::new_err(
            "keys are dictionary-encoded (categorical): cast them to strings first \
             (pyarrow: .cast(pa.string()); Polars: .cast(pl.String))",
        ));
    }
    match format {
        b"u" | b"z" => Ok((Layout::Small, false)),
        b"U" | b"Z" => Ok((Layout::Large, false)),
        b"vu" | b"vz" => Ok((Layout::View, false)),
        other => Err(PyTypeError::new_err(format!(
            "keys must be Arrow strings (utf8, large_utf8 or utf8_view), not the type with \
             format {:?}",
            String::from_utf8_lossy(other)
        ))),
    }
}

fn index(n: i64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| broken("a negative length or offset"))
}

/// Borrowed views of one imported array's keys, checked once so that reading a row is safe.
pub struct Keys<'a> {
    rows: usize,
    /// The array's offset: row `r` is slot `offset + r` of the buffers.
    offset: usize,
    validity: Option<&'a [u8]>,
    body: Body<'a>,
}

enum Body<'a> {
    Small(&'a [i32], &'a [u8]),
    Large(&'a [i64], &'a [u8]),
    View(&'a [[u8; 16]], Vec<&'a [u8]>),
}

impl<'a> Keys<'a> {
    fn new(
        layout: Layout,
        a: &'a FfiArray,
        parent_offset: usize,
        parent_rows: Option<usize>,
    ) -> PyResult<Self> {
        let rows = match parent_rows {
            Some(rows) if rows > index(a.length)?.saturating_sub(parent_offset) => {
                return Err(broken("a table longer than its column"))
            }
            Some(rows) => rows,
            None => index(a.length)?,
        };
        let offset = index(a.offset)? + parent_offset;
        let slots = offset + rows;
        let buffers = index(a.n_buffers)?;
        // Validity, offsets (or views), data; views also end with a buffer of data sizes.
        if buffers < 3 || a.buffers.is_null() {
            return Err(broken("too few buffers for a string array"));
        }
        // SAFETY: a live array has n_buffers buffer pointers.
        let buffer = |i: usize| unsafe { *a.buffers.add(i) };
        let validity = if a.null_count == 0 || buffer(0).is_null() {
            None
        } else {
            // SAFETY: the validity buffer holds a bit for every slot.
            Some(unsafe { slice::<u8>(buffer(0), slots.div_ceil(8))? })
        };
        let body = match layout {
            Layout::Small => {
                // SAFETY: `slots + 1` offsets, then bytes up to the last offset.
                let offsets = unsafe { slice::<i32>(buffer(1), slots + 1)? };
                let end = checked_offsets(offsets.iter().map(|&o| i64::from(o)))?;
                Body::Small(offsets, unsafe { slice::<u8>(buffer(2), end)? })
            }
            Layout::Large => {
                // SAFETY: as for `Small`.
                let offsets = unsafe { slice::<i64>(buffer(1), slots + 1)? };
                let end = checked_offsets(offsets.iter().copied())?;
                Body::Large(offsets, unsafe { slice::<u8>(buffer(2), end)? })
            }
            Layout::View => {
                // SAFETY: one 16-byte view a slot; the last buffer holds the sizes (i64) of the
                // data buffers between the views and itself.
                let views = unsafe { slice::<[u8; 16]>(buffer(1), slots)? };
                let data = buffers - 3;
                let sizes = unsafe { slice::<i64>(buffer(buffers - 1), data)? };
                let mut parts = Vec::with_capacity(data);
                for (i, &size) in sizes.iter().enumerate() {
                    parts.push(unsafe { slice::<u8>(buffer(2 + i), index(size)?)? });
                }
                Body::View(views, parts)
            }
        };
        let keys = Self {
            rows,
            offset,
            validity,
            body,
        };
        keys.check_views()?;
        Ok(keys)
    }

    fn valid(&self, slot: usize) -> bool {
        self.validity
            .map_or(true, |bits| bits[slot / 8] >> (slot % 8) & 1 == 1)
    }

    /// Every non-null view points inside its buffer (then `key` cannot index out of bounds).
    fn check_views(&self) -> PyResult<()> {
        let Body::View(views, parts) = &self.body else {
            return Ok(());
        };
        for slot in (self.offset..self.offset + self.rows).filter(|&s| self.valid(s)) {
            let v = &views[slot];
            let len = view_i32(v, 0);
            if len < 0 {
                return Err(broken("a string view of negative length"));
            }
            if len > 12 {
                let (buf, start) = (view_i32(v, 8), view_i32(v, 12));
                let ok = usize::try_from(buf)
                    .ok()
                    .and_then(|b| parts.get(b))
                    .is_some_and(|p| {
                        i64::from(start) >= 0 && i64::from(start) + i64::from(len) <= p.len() as i64
                    });
                if !ok {
                    return Err(broken("a string view outside its buffer"));
                }
            }
        }
        Ok(())
    }
}

impl KeyColumn for Keys<'_> {
    fn len(&self) -> usize {
        self.rows
    }

    fn key(&self, row: usize) -> Option<&[u8]> {
        let slot = self.offset + row;
        if !self.valid(slot) {
            return None;
        }
        // Offsets were checked non-decreasing and within the data, views within their
        // buffers: these indexes cannot fail.
        Some(match &self.body {
            Body::Small(o, data) => &data[o[slot] as usize..o[slot + 1] as usize],
            Body::Large(o, data) => &data[o[slot] as usize..o[slot + 1] as usize],
            Body::View(views, parts) => {
                let v = &views[slot];
                let len = view_i32(v, 0) as usize;
                if len <= 12 {
                    &v[4..4 + len]
                } else {
                    let start = view_i32(v, 12) as usize;
                    &parts[view_i32(v, 8) as usize][start..start + len]
                }
            }
        })
    }
}

/// The little-endian `i32` at `at` in a view.
fn view_i32(v: &[u8; 16], at: usize) -> i32 {
    i32::from_le_bytes([v[at], v[at + 1], v[at + 2], v[at + 3]])
}

/// Offsets start at 0 or more and never decrease; returns the last (the data's length).
fn checked_offsets(mut offsets: impl Iterator<Item = i64>) -> PyResult<usize> {
    let mut last = offsets.next().unwrap_or(0);
    if last < 0 {
        return Err(broken("a negative offset"));
    }
    for o in offsets {
        if o < last {
            return Err(broken("offsets that decrease"));
        }
        last = o;
    }
    index(last)
}

/// `len` items of `T` at `p`; a NULL pointer is an empty buffer when `len` is 0.
///
/// SAFETY: the caller knows that `p` points at `len` initialized `T`s that outlive `'a`.
unsafe fn slice<'a, T>(p: *const c_void, len: usize) -> PyResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(broken("a missing buffer"));
    }
    if p.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(broken("a misaligned buffer"));
    }
    Ok(std::slice::from_raw_parts(p.cast::<T>(), len))
}

/// `len` zeroed bytes in memory the kernel is asked to back with huge pages: 300 MB of URLs
/// (a million rows) fault 75,000 times in 4 KiB pages and some 150 times in 2 MiB ones, and
/// faults of one process's threads partly serialize (docs/BENCHMARKS.md, "Arrow").
pub fn zeroed_huge(len: usize) -> Vec<u8> {
    let v = vec![0u8; len];
    const HUGE: usize = 2 << 20;
    let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
    let end = (v.as_ptr() as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: advice only, on whole pages inside the vector's own allocation; it changes
        // how the kernel backs the memory, never its contents. A refusal is harmless.
        unsafe {
            libc::madvise(start as *mut c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    v
}

fn empty_schema() -> FfiSchema {
    FfiSchema {
        format: ptr::null(),
        name: ptr::null(),
        metadata: ptr::null(),
        flags: 0,
        n_children: 0,
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

fn empty_array() -> FfiArray {
    FfiArray {
        length: 0,
        null_count: 0,
        offset: 0,
        n_buffers: 0,
        n_children: 0,
        buffers: ptr::null_mut(),
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

// ---- Export: URL columns out, without a copy of their bytes. ----

/// `large_utf8`, or `utf8` when the consumer asks for it and the bytes fit `i32` offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Small,
    Large,
}

impl Width {
    fn format(self) -> &'static CStr {
        match self {
            Width::Small => c"u",
            Width::Large => c"U",
        }
    }

    /// What a consumer's `requested_schema` capsule asks for: `utf8` if it names that format.
    pub fn requested(schema: Option<&Bound<'_, PyAny>>) -> Width {
        let Some(capsule) = schema.and_then(|s| s.cast::<PyCapsule>().ok()) else {
            return Width::Large;
        };
        let Ok(p) = capsule.pointer_checked(Some(c"arrow_schema")) else {
            return Width::Large;
        };
        // SAFETY: a capsule named arrow_schema holds a live ArrowSchema we only read.
        let s = unsafe { &*p.cast::<FfiSchema>().as_ptr() };
        if s.format.is_null() {
            return Width::Large;
        }
        // SAFETY: a live schema's format is a NUL-terminated string.
        match unsafe { CStr::from_ptr(s.format) }.to_bytes() {
            b"u" => Width::Small,
            _ => Width::Large,
        }
    }

    /// `Small` only when every offset fits.
    fn fitting(self, column: &UrlColumn) -> Width {
        if self == Width::Small && i32::try_from(column.data.len()).is_ok() {
            Width::Small
        } else {
            Width::Large
        }
    }
}

unsafe extern "C" fn release_schema(s: *mut FfiSchema) {
    // Format and name are static strings: nothing to free.
    (*s).release = None;
}

/// A new exported schema for URLs of `width`.
fn url_schema(width: Width) -> FfiSchema {
    const NULLABLE: i64 = 2;
    FfiSchema {
        format: width.format().as_ptr(),
        name: c"".as_ptr(),
        flags: NULLABLE,
        release: Some(release_schema),
        ..empty_schema()
    }
}

/// What an exported array keeps alive: the column (shared with the `UrlArray` and any other
/// export of it), `i32` offsets when exported as `utf8`, and the buffer pointer table.
struct Exported {
    _column: Arc<UrlColumn>,
    _small: Option<Vec<i32>>,
    buffers: [*const c_void; 3],
}

unsafe extern "C" fn release_array(a: *mut FfiArray) {
    // SAFETY: `private_data` is the `Box<Exported>` made by `url_array`, freed once here.
    drop(Box::from_raw((*a).private_data.cast::<Exported>()));
    (*a).release = None;
}

/// An exported array over `column`'s buffers.
fn url_array(column: &Arc<UrlColumn>, width: Width) -> FfiArray {
    let small = (width == Width::Small).then(|| {
        column
            .offsets
            .iter()
            .map(|&o| i32::try_from(o).unwrap_or(i32::MAX))
            .collect::<Vec<i32>>()
    });
    let offsets = match &small {
        Some(o) => o.as_ptr().cast::<c_void>(),
        None => column.offsets.as_ptr().cast(),
    };
    let validity = column
        .validity
        .as_ref()
        .map_or(ptr::null(), |v| v.as_ptr().cast());
    let mut private = Box::new(Exported {
        _column: Arc::clone(column),
        _small: small,
        buffers: [validity, offsets, column.data.as_ptr().cast()],
    });
    let buffers = private.buffers.as_mut_ptr();
    FfiArray {
        length: column.len() as i64,
        null_count: column.null_count as i64,
        n_buffers: 3,
        buffers,
        release: Some(release_array),
        private_data: Box::into_raw(private).cast(),
        ..empty_array()
    }
}

/// `(schema, array)` capsules for `__arrow_c_array__`.
pub fn array_capsules<'py>(
    py: Python<'py>,
    column: &Arc<UrlColumn>,
    width: Width,
) -> PyResult<Bound<'py, PyTuple>> {
    let width = width.fitting(column);
    let schema = capsule(
        py,
        url_schema(width),
        c"arrow_schema",
        release_unused_schema,
    )?;
    let array = capsule(
        py,
        url_array(column, width),
        c"arrow_array",
        release_unused_array,
    )?;
    PyTuple::new(py, [schema, array])
}

/// A stream capsule for `__arrow_c_stream__`, one array per column.
pub fn stream_capsule<'py>(
    py: Python<'py>,
    columns: &[Arc<UrlColumn>],
    width: Width,
) -> PyResult<Bound<'py, PyAny>> {
    let width = columns.iter().fold(width, |w, c| w.fitting(c));
    let private = Box::new(StreamState {
        columns: columns.to_vec(),
        next: 0,
        width,
    });
    let stream = FfiStream {
        get_schema: Some(stream_schema),
        get_next: Some(stream_next),
        get_last_error: Some(stream_error),
        release: Some(release_stream),
        private_data: Box::into_raw(private).cast(),
    };
    capsule(py, stream, c"arrow_array_stream", release_unused_stream)
}

/// A schema capsule for `__arrow_c_schema__`.
pub fn schema_capsule(py: Python<'_>, width: Width) -> PyResult<Bound<'_, PyAny>> {
    capsule(
        py,
        url_schema(width),
        c"arrow_schema",
        release_unused_schema,
    )
}

fn capsule<'py, T: Send + 'static>(
    py: Python<'py>,
    value: T,
    name: &'static CStr,
    release: fn(T),
) -> PyResult<Bound<'py, PyAny>> {
    // A consumer moves the struct out and clears the capsule's `release`; one that never does
    // leaves it to this destructor.
    Ok(
        PyCapsule::new_with_destructor(py, value, Some(name.to_owned()), move |v, _| release(v))?
            .into_any(),
    )
}

fn release_unused_schema(mut s: FfiSchema) {
    if let Some(r) = s.release {
        // SAFETY: never moved out of the capsule, so still ours to release.
        unsafe { r(&mut s) }
    }
}

fn release_unused_array(mut a: FfiArray) {
    if let Some(r) = a.release {
        // SAFETY: as above.
        unsafe { r(&mut a) }
    }
}

fn release_unused_stream(mut s: FfiStream) {
    if let Some(r) = s.release {
        // SAFETY: as above.
        unsafe { r(&mut s) }
    }
}

struct StreamState {
    columns: Vec<Arc<UrlColumn>>,
    next: usize,
    width: Width,
}

unsafe extern "C" fn stream_schema(s: *mut FfiStream, out: *mut FfiSchema) -> c_int {
    // SAFETY: `private_data` is our `StreamState` while the stream is live.
    let state = &*(*s).private_data.cast::<StreamState>();
    out.write(url_schema(state.width));
    0
}

unsafe extern "C" fn stream_next(s: *mut FfiStream, out: *mut FfiArray) -> c_int {
    // SAFETY: as above; a consumer calls a stream from one thread at a time.
    let state = &mut *(*s).private_data.cast::<StreamState>();
    match state.columns.get(state.next) {
        Some(column) => {
            out.write(url_array(column, state.width));
            state.next += 1;
        }
        // The end of the stream: an array whose `release` is NULL.
        None => out.write(empty_array()),
    }
    0
}

unsafe extern "C" fn stream_error(_: *mut FfiStream) -> *const c_char {
    // The stream's calls cannot fail.
    ptr::null()
}

unsafe extern "C" fn release_stream(s: *mut FfiStream) {
    // SAFETY: made by `stream_capsule`, freed once here.
    drop(Box::from_raw((*s).private_data.cast::<StreamState>()));
    (*s).release = None;
}
