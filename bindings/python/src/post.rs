//! `Presigner.presign_post`: Python's fields and conditions in, boto3's `{"url", "fields"}` out.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use slipstream_sign::PolicyValue;

/// A condition as botocore would serialize it: dicts (in their order), lists, tuples, str,
/// int, bool, None. A float is refused: `json.dumps` writes Python's float text, which a
/// policy never needs and S3's sizes are integers.
pub fn policy_value(v: &Bound<'_, PyAny>) -> PyResult<PolicyValue> {
    if v.is_none() {
        return Ok(PolicyValue::Null);
    }
    // Before int: bool is a subclass of int in Python.
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(PolicyValue::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        let n: i64 = v
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{v} does not fit a 64-bit integer")))?;
        return Ok(PolicyValue::Int(n));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(PolicyValue::Str(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Err(PyValueError::new_err(format!(
            "{v} in a POST policy: numbers there are integers (content-length-range)"
        )));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut entries = Vec::with_capacity(d.len());
        for (name, value) in d.iter() {
            let name: String = name
                .extract()
                .map_err(|_| PyTypeError::new_err("POST policy condition names must be str"))?;
            entries.push((name, policy_value(&value)?));
        }
        return Ok(PolicyValue::Map(entries));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items = v
            .try_iter()?
            .map(|i| policy_value(&i?))
            .collect::<PyResult<_>>()?;
        return Ok(PolicyValue::List(items));
    }
    Err(PyTypeError::new_err(format!(
        "a POST policy condition cannot hold {}: use dict, list, str, int, bool or None",
        v.get_type().name()?
    )))
}

/// Form fields from a mapping of str to str.
pub fn fields(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let map = v
        .cast::<PyMapping>()
        .map_err(|_| PyTypeError::new_err("fields must be a mapping of str to str"))?;
    map.items()?
        .iter()
        .map(|item| {
            let (name, value): (String, String) = item
                .extract()
                .map_err(|_| PyTypeError::new_err("fields must be a mapping of str to str"))?;
            Ok((name, value))
        })
        .collect()
}

/// Conditions from a list (or tuple) of conditions.
pub fn conditions(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PolicyValue>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(
            "conditions must be a list of conditions ({\"acl\": \"private\"}, [\"starts-with\", \"$key\", \"up/\"], ...)",
        ));
    }
    v.try_iter()?.map(|c| policy_value(&c?)).collect()
}

/// boto3's answer: `{"url": ..., "fields": {...}}`, fields in the form's order.
pub fn answer<'py>(
    py: Python<'py>,
    form: slipstream_sign::PostForm,
) -> PyResult<Bound<'py, PyDict>> {
    let fields = PyDict::new(py);
    for (name, value) in form.fields {
        fields.set_item(name, value)?;
    }
    let out = PyDict::new(py);
    out.set_item("url", form.url)?;
    out.set_item("fields", fields)?;
    Ok(out)
}
