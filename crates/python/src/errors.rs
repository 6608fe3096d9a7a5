//! pocketdex's errors as Python exceptions, with the messages the command line prints.

use pocketdex::Error;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    pocketdex,
    PocketdexError,
    PyException,
    "Base class of the errors pocketdex raises besides OSError and ValueError."
);
create_exception!(
    pocketdex,
    CorruptIndexError,
    PocketdexError,
    "The file is not a pocketdex index, is of an unsupported version, or is damaged."
);
create_exception!(
    pocketdex,
    SignatureError,
    PocketdexError,
    "A signed index did not verify against the trusted key."
);
create_exception!(
    pocketdex,
    BusyError,
    PocketdexError,
    "Another process holds the index set's writer lock."
);
create_exception!(
    pocketdex,
    DuplicateIdError,
    PocketdexError,
    "A document id that the index set already holds."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PocketdexError", py.get_type::<PocketdexError>())?;
    m.add("CorruptIndexError", py.get_type::<CorruptIndexError>())?;
    m.add("SignatureError", py.get_type::<SignatureError>())?;
    m.add("BusyError", py.get_type::<BusyError>())?;
    m.add("DuplicateIdError", py.get_type::<DuplicateIdError>())?;
    Ok(())
}

/// The exception for a core error, its message prefixed with `context` (a path) as the CLI
/// prefixes it: I/O errors are `OSError`s (`FileNotFoundError`, `PermissionError`), invalid
/// arguments `ValueError`s, a damaged or foreign file `CorruptIndexError`.
pub fn with_context(context: &str, e: Error) -> PyErr {
    // An I/O error names its file already.
    let named = matches!(&e, Error::Io { path: Some(_), .. });
    let message = if context.is_empty() || named {
        e.to_string()
    } else {
        format!("{context}: {e}")
    };
    match &e {
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => PyOSError::new_err(message),
        },
        Error::Invalid(_) => PyValueError::new_err(message),
        Error::Signature(_) => SignatureError::new_err(message),
        Error::Busy { .. } => BusyError::new_err(message),
        Error::DuplicateId { .. } => DuplicateIdError::new_err(message),
        Error::BadMagic
        | Error::Version { .. }
        | Error::Truncated { .. }
        | Error::Format { .. }
        | Error::ChecksumMismatch { .. }
        | Error::BlockMismatch { .. } => CorruptIndexError::new_err(message),
        _ => PocketdexError::new_err(message),
    }
}

/// The exception for a core error without a path to name.
pub fn to_py(e: Error) -> PyErr {
    with_context("", e)
}
