//! Columns of document ids, texts and titles from Python: any iterable of `str` (ids may be
//! `int`s, any value may be `None`), or pyarrow arrays and chunked arrays, read in place through
//! the Arrow C data interface (`__arrow_c_array__`), without a Python object per value.

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyIterator, PyString, PyTuple};
use std::borrow::Cow;

/// Rows per step when a column is read a chunk at a time: enough to keep every core busy, few
/// enough that a step's texts (copied out of Python objects) stay small.
pub const STEP: usize = 4096;

/// A document id as the builder names documents: a `str`, or an `int` in decimal.
/// The error for a str that is not Unicode text: lone surrogates, as `os.fsdecode` makes of a
/// file name's invalid bytes (rather than "must hold str values, not str").
fn surrogates(what: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{what}: a str holds lone surrogates (from os.fsdecode of invalid bytes?), which are no text; encode and decode it with errors=\"replace\" first"
    ))
}

pub fn id_of(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if obj.is_instance_of::<PyString>() {
        return obj.extract::<String>().map_err(|_| surrogates("an id"));
    }
    // An int of any size, in decimal (Python's own str); a bool is no id (True is not "1").
    // Through its index: an int subclass (IntEnum) may print itself otherwise.
    if obj.is_instance_of::<pyo3::types::PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>() {
        return Ok(obj.call_method0("__index__")?.str()?.to_string());
    }
    let wrong =
        || PyTypeError::new_err(format!("an id is a str or an int, not {}", type_name(obj)));
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(wrong());
    }
    // Other integers (NumPy's) through their index.
    match obj.extract::<String>() {
        Ok(s) => Ok(s),
        Err(_) => Ok(obj.extract::<i128>().map_err(|_| wrong())?.to_string()),
    }
}

/// `id` when a document may be named by it: not blank, no control characters (no output could
/// print it on one line, nor `delete` be given it), as `pocketdex build` and `check` require.
pub fn printable_id(id: String) -> PyResult<String> {
    if pocketdex::check::is_printable_id(&id) {
        Ok(id)
    } else {
        Err(PyValueError::new_err(unprintable(&id, false)))
    }
}

/// Why [`printable_id`] refuses `id` (the message of its `ValueError`); `by_row` where None
/// names a document by its row (`add_batch`).
pub fn unprintable(id: &str, by_row: bool) -> String {
    format!(
        "id {id:?} is blank or holds control characters: give the document an id that prints on one line{}",
        if by_row { " (or None, to name it by its row)" } else { "" }
    )
}

/// Why a row of an index set's batch without an id is refused.
pub const NONE_ID: &str = "the id is None: every document of an index set needs an id of its own";

/// An error reading a column's value.
pub struct ReadError {
    pub err: PyErr,
    /// Raised by pocketdex (a value of a type it cannot read), not by the caller's iterator.
    pub ours: bool,
}

/// One column, read a chunk at a time.
pub struct Column<'py> {
    what: &'static str,
    kind: Kind<'py>,
}

enum Kind<'py> {
    /// Arrow arrays (the chunks of a chunked array), with the row each starts at.
    Arrow {
        chunks: Vec<ArrayRef>,
        starts: Vec<usize>,
        len: usize,
    },
    /// A Python iterable, pulled as needed; its length when it has one.
    Iter {
        it: Bound<'py, PyIterator>,
        len: Option<usize>,
    },
}

impl<'py> Column<'py> {
    /// The column `obj`, named `what` (`ids`, `texts`, `titles`) in messages.
    pub fn new(obj: &Bound<'py, PyAny>, what: &'static str) -> PyResult<Column<'py>> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a list (or an iterable or pyarrow array) of values, not one str"
            )));
        }
        // Iterated, bytes are ints: b"ab" would be the ids "97" and "98".
        if obj.is_instance_of::<pyo3::types::PyBytes>()
            || obj.is_instance_of::<pyo3::types::PyByteArray>()
        {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a list (or an iterable or pyarrow array) of values, not one bytes value"
            )));
        }
        let kind = if obj.hasattr("__arrow_c_array__")? {
            arrow_chunks(vec![import(obj, what)?])
        } else if obj.hasattr("__arrow_c_stream__")? && obj.hasattr("chunks")? {
            // A pyarrow ChunkedArray: each chunk in place.
            let chunks = obj
                .getattr("chunks")?
                .try_iter()?
                .map(|c| import(&c?, what))
                .collect::<PyResult<Vec<_>>>()?;
            arrow_chunks(chunks)
        } else {
            Kind::Iter {
                len: obj.len().ok(),
                it: obj.try_iter().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{what} must be a list, an iterable or a pyarrow array, not {}",
                        type_name(obj)
                    ))
                })?,
            }
        };
        if let Kind::Arrow { chunks, .. } = &kind {
            if let Some(c) = chunks.first() {
                check_type(c.data_type(), what)?;
            }
        }
        Ok(Column { what, kind })
    }

    /// Its length, when it is known before it is read.
    pub fn len(&self) -> Option<usize> {
        match &self.kind {
            Kind::Arrow { len, .. } => Some(*len),
            Kind::Iter { len, .. } => *len,
        }
    }

    /// Up to `n` values from row `start` on (rows are read in order); fewer at the end. An
    /// error names its row.
    pub fn take(&mut self, start: usize, n: usize) -> PyResult<Vec<Option<Cow<'_, str>>>> {
        match self.take_until_error(start, n) {
            (values, None) => Ok(values),
            (_, Some(e)) => Err(e.err),
        }
    }

    /// [`Column::take`], and on an error the values of the rows before the bad one with the
    /// error, so that a caller can keep what came before it. A value pocketdex cannot read is
    /// an error that names its row ([`ReadError::ours`]); one the caller's iterator raised (a
    /// `UnicodeDecodeError` of a file it read) passes through as it was raised.
    pub fn take_until_error(
        &mut self,
        start: usize,
        n: usize,
    ) -> (Vec<Option<Cow<'_, str>>>, Option<ReadError>) {
        let mut out = Vec::with_capacity(n);
        let error = self.read_into(start, n, &mut out).err();
        let error = error.map(|e| match e {
            ReadError { err, ours: true } => ReadError {
                err: Python::attach(|py| {
                    PyErr::from_type(
                        err.get_type(py),
                        format!("row {}: {}", start + out.len(), err.value(py)),
                    )
                }),
                ours: true,
            },
            theirs => theirs,
        });
        (out, error)
    }

    /// Appends to `out` up to `n` values from row `start` on, stopping at the first error.
    fn read_into<'s>(
        &'s mut self,
        start: usize,
        n: usize,
        out: &mut Vec<Option<Cow<'s, str>>>,
    ) -> Result<(), ReadError> {
        let what = self.what;
        let ours = |err| ReadError { err, ours: true };
        match &mut self.kind {
            Kind::Arrow {
                chunks,
                starts,
                len,
            } => {
                let end = (start + n).min(*len);
                let mut row = start;
                while row < end {
                    let c = starts.partition_point(|&s| s <= row) - 1;
                    let (array, first) = (&chunks[c], starts[c]);
                    let stop = end.min(first + array.len());
                    for i in row - first..stop - first {
                        out.push(value(array.as_ref(), i, what).map_err(ours)?);
                    }
                    row = stop;
                }
                Ok(())
            }
            Kind::Iter { it, .. } => {
                for _ in 0..n {
                    match it.next() {
                        Some(item) => {
                            let item = item.map_err(|err| ReadError { err, ours: false })?;
                            out.push(py_value(&item, what).map_err(ours)?.map(Cow::Owned))
                        }
                        None => break,
                    }
                }
                Ok(())
            }
        }
    }
}

fn arrow_chunks<'py>(chunks: Vec<ArrayRef>) -> Kind<'py> {
    let mut starts = Vec::with_capacity(chunks.len());
    let mut len = 0;
    for c in &chunks {
        starts.push(len);
        len += c.len();
    }
    Kind::Arrow {
        chunks,
        starts,
        len,
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// One Python value: a `str`, an `int` (ids), a number or a boolean (titles), or `None`.
fn py_value(item: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<String>> {
    if item.is_none() {
        return Ok(None);
    }
    // A str first: the common case pays no test for a missing value.
    if item.is_instance_of::<PyString>() {
        return item
            .extract::<String>()
            .map(Some)
            .map_err(|_| surrogates(if what == "ids" { "an id" } else { what }));
    }
    if is_missing(item) {
        return Ok(None);
    }
    if what == "ids" {
        return id_of(item).map(Some);
    }
    // A title that is a number or a boolean is its text, as in an Arrow column (and in
    // `pocketdex build`'s JSON Lines and Parquet): `true`, `3`, `2.5`.
    // NumPy's scalars too (`numpy.bool`, its integers through `__index__`; `numpy.float64` is
    // a float).
    if what == "titles" {
        if item.is_instance_of::<pyo3::types::PyBool>()
            || item
                .get_type()
                .name()
                .is_ok_and(|n| n == "bool" || n == "bool_")
        {
            return Ok(Some(item.is_truthy()?.to_string()));
        }
        if item.hasattr("__index__")? {
            return Ok(Some(item.call_method0("__index__")?.str()?.to_string()));
        }
        if let Ok(f) = item.cast::<pyo3::types::PyFloat>() {
            return Ok(Some(f.value().to_string()));
        }
    }
    Err(PyTypeError::new_err(format!(
        "{what} must hold str{} values, not {}",
        match what {
            "ids" => " or int",
            "titles" => ", int, float or bool",
            _ => "",
        },
        type_name(item)
    )))
}

/// pandas' missing values, `pd.NA` and a float NaN (`read_csv`'s empty cells), which mean what
/// None means: a missing id or text.
fn is_missing(item: &Bound<'_, PyAny>) -> bool {
    if let Ok(f) = item.cast::<pyo3::types::PyFloat>() {
        return f.value().is_nan();
    }
    item.get_type().name().is_ok_and(|n| n == "NAType")
}

/// The Arrow types a column may have, as a Parquet file's column in `pocketdex build`: strings
/// or bytes (decoded lossily; an imported string column is typed as bytes, see
/// [`strings_as_bytes`]); ids also integers; titles also numbers and booleans (their text).
fn check_type(t: &DataType, what: &str) -> PyResult<()> {
    // Dictionary-encoded (pandas' categoricals, `read_dictionary`): read as its values.
    if let DataType::Dictionary(_, values) = t {
        return check_type(values, what);
    }
    let ok = matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::Null
    ) || ((what == "ids" || what == "titles") && t.is_integer())
        || (what == "titles"
            && matches!(t, DataType::Float32 | DataType::Float64 | DataType::Boolean));
    if ok {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be an Arrow column of strings or bytes{}, not {t}",
            match what {
                "ids" => ", or integers",
                "titles" => ", numbers or booleans",
                _ => "",
            }
        )))
    }
}

/// Row `i` of an Arrow array of a type [`check_type`] accepts.
fn value<'a>(a: &'a dyn Array, i: usize, what: &str) -> PyResult<Option<Cow<'a, str>>> {
    // An array of the null type has no validity bitmap: every value is null.
    if a.is_null(i) || a.data_type() == &DataType::Null {
        return Ok(None);
    }
    Ok(Some(match a.data_type() {
        DataType::Utf8 => Cow::Borrowed(a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => Cow::Borrowed(a.as_string::<i64>().value(i)),
        DataType::Utf8View => Cow::Borrowed(a.as_string_view().value(i)),
        DataType::Binary => String::from_utf8_lossy(a.as_binary::<i32>().value(i)),
        DataType::LargeBinary => String::from_utf8_lossy(a.as_binary::<i64>().value(i)),
        DataType::BinaryView => String::from_utf8_lossy(a.as_binary_view().value(i)),
        t if t.is_integer() => Cow::Owned(int_at(a, i)?.to_string()),
        // A title's text, as `pocketdex build` writes a Parquet title of these types.
        DataType::Float32 => Cow::Owned(
            a.as_primitive::<arrow_array::types::Float32Type>()
                .value(i)
                .to_string(),
        ),
        DataType::Float64 => Cow::Owned(
            a.as_primitive::<arrow_array::types::Float64Type>()
                .value(i)
                .to_string(),
        ),
        DataType::Boolean => Cow::Owned(a.as_boolean().value(i).to_string()),
        DataType::Dictionary(..) => {
            let d = a.as_any_dictionary();
            let key = usize::try_from(int_at(d.keys(), i)?).map_err(|_| {
                PyValueError::new_err(format!("{what}: a negative dictionary key at row {i}"))
            })?;
            if key >= d.values().len() {
                return Err(PyValueError::new_err(format!(
                    "{what}: dictionary key {key} at row {i} is beyond its {} values",
                    d.values().len()
                )));
            }
            return value(d.values().as_ref(), key, what);
        }
        t => {
            return Err(PyTypeError::new_err(format!(
                "{what}: unsupported Arrow type {t}"
            )))
        }
    }))
}

/// Row `i` of an integer column (ids and titles of every integer type print as decimal
/// numbers).
fn int_at(a: &dyn Array, i: usize) -> PyResult<i128> {
    use arrow_array::types::*;
    macro_rules! at {
        ($($t:ty),*) => {
            $(if let Some(p) = a.as_primitive_opt::<$t>() {
                return Ok(p.value(i) as i128);
            })*
        };
    }
    at!(Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type);
    Err(PyTypeError::new_err("not an integer column"))
}

/// Imports one array through `__arrow_c_array__` (the Arrow PyCapsule interface), taking over
/// the exported buffers (their owner is released when the array is dropped).
fn import(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ArrayRef> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    let schema = pair.get_item(0)?;
    let array = pair.get_item(1)?;
    let schema = schema.cast::<PyCapsule>()?;
    let array = array.cast::<PyCapsule>()?;
    let bad = |_| {
        PyTypeError::new_err(format!(
            "{what}: __arrow_c_array__ did not return Arrow capsules"
        ))
    };
    // The names the PyCapsule interface specifies; a capsule of another name is refused.
    let schema = schema.pointer_checked(Some(c"arrow_schema")).map_err(bad)?;
    let array = array.pointer_checked(Some(c"arrow_array")).map_err(bad)?;
    let invalid = |e: arrow_schema::ArrowError| {
        PyValueError::new_err(format!("{what}: cannot import the Arrow array: {e}"))
    };
    // SAFETY: the capsules hold an ArrowSchema and an ArrowArray (checked by name, as the
    // PyCapsule interface specifies). `from_raw` moves the array out and leaves a released one
    // behind, so the capsule's destructor does not release it twice; the schema is only
    // borrowed while the array is imported.
    let data = unsafe {
        let array = FFI_ArrowArray::from_raw(array.as_ptr() as *mut FFI_ArrowArray);
        let schema = &*(schema.as_ptr() as *const FFI_ArrowSchema);
        from_ffi(array, schema)
    }
    .map_err(invalid)?;
    // `from_ffi` trusts the producer; pyarrow only checks buffer sizes unless asked for more
    // (`Array.from_buffers`, `view`), and offsets out of order would be read out of bounds.
    // Checked once, before any value is read. Strings are checked as bytes: invalid UTF-8
    // (which Spark and other writers store unchecked) is replaced as each value is read, as
    // `pocketdex build` replaces it in a Parquet file, instead of failing the whole column.
    let data = strings_as_bytes(data).map_err(invalid)?;
    data.validate_full().map_err(invalid)?;
    Ok(make_array(data))
}

/// `data` with its strings (dictionary values too) typed as the bytes of the same layout.
fn strings_as_bytes(
    data: arrow_data::ArrayData,
) -> Result<arrow_data::ArrayData, arrow_schema::ArrowError> {
    let t = match data.data_type() {
        DataType::Utf8 => DataType::Binary,
        DataType::LargeUtf8 => DataType::LargeBinary,
        DataType::Utf8View => DataType::BinaryView,
        DataType::Dictionary(k, _) if data.child_data().len() == 1 => {
            let k = k.clone();
            let values = strings_as_bytes(data.child_data()[0].clone())?;
            let t = DataType::Dictionary(k, Box::new(values.data_type().clone()));
            // Validated with the keys by `validate_full`, after.
            // SAFETY: only the values' type changes, to one of the same layout.
            return Ok(unsafe {
                data.into_builder()
                    .data_type(t)
                    .child_data(vec![values])
                    .build_unchecked()
            });
        }
        _ => return Ok(data),
    };
    // SAFETY: a string type becomes the bytes type of the same layout; `validate_full` checks
    // the offsets or views after.
    Ok(unsafe { data.into_builder().data_type(t).build_unchecked() })
}
