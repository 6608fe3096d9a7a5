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

/// `message` with the core's advice, which names the CLI's options and commands and Rust
/// calls, given as the Python that does the same where there is one.
fn python_advice(mut message: String) -> String {
    // "…; create an index set with `pocketdex add PATH DOC...`": the advice ends the message.
    for create in [
        "; create an index set with `pocketdex add ",
        "; create a set with `pocketdex add ",
    ] {
        if let Some(at) = message.find(create) {
            message.truncate(at);
            message.push_str(
                "; create one with pocketdex.add(path, ids, texts) (or, for shards, pocketdex.create_set(path))",
            );
        }
    }
    message
        .replace("(`--wait`)", "(wait=True)")
        .replace("(`--replace`)", "(replace=True)")
        // The lock is the directory's: a thread of this process that writes holds it too.
        .replace(
            "another pocketdex process is changing",
            "another writer (another process, or another thread of this one) is changing",
        )
        .replace(
            "(`pocketdex build --segment-of SET`, or IndexBuilder::like(schema).with_set_sections())",
            "(IndexBuilder.like(set, segment=True))",
        )
        .replace(
            "(`pocketdex build --segment-of SET`, or IndexBuilder::like)",
            "(IndexBuilder.like(set, segment=True))",
        )
        .replace("leave out --public-key", "leave out public_key")
        // The options of a new set (`NewSetOptions`), as `add` and `check` name them.
        .replace("--lang applies", "lang applies")
        .replace("--expected-docs applies", "expected_docs applies")
        .replace("than --idf ", "than idf=")
        .replace("--idf applies", "idf applies")
        .replace("run the command again", "call again")
        .replace(
            "`pocketdex add SET DOC...`, then `pocketdex merge SET -o FILE.pdx` to ship one file",
            "pocketdex.add(directory, ids, texts), then pocketdex.merge(directory, out=file) to ship one file",
        )
        .replace("(a directory made by `pocketdex add`)", "(a directory made by pocketdex.add)")
        .replace(
            "(documents join a set with `pocketdex add`, pieces built apart with `pocketdex adopt`)",
            "(documents join a set with pocketdex.add, pieces built apart with pocketdex.adopt_segments)",
        )
        .replace(
            "pass a file written by `pocketdex build`",
            "pass a file written by IndexBuilder.write or `pocketdex build`",
        )
        .replace("(`pocketdex delete SET ID`)", "(pocketdex.delete(path, ids))")
        // What mends damage, as Python calls it.
        .replace(
            "run `pocketdex verify` on it",
            "check it with pocketdex.Index(path).verify()",
        )
        .replace("`pocketdex repair SET`", "pocketdex.repair(path)")
}

/// The exception for a core error, its message prefixed with `context` (a path) as the CLI
/// prefixes it: I/O errors are `OSError`s (`FileNotFoundError`, `PermissionError`), invalid
/// arguments `ValueError`s, a damaged or foreign file `CorruptIndexError`.
pub fn with_context(context: &str, e: Error) -> PyErr {
    // A signal (Ctrl-C) interrupted a wait (for a set's lock): Python's KeyboardInterrupt.
    let interrupted = match e.kind() {
        Error::Io { source, .. } => source.kind() == std::io::ErrorKind::Interrupted,
        Error::Path { kind, .. } => *kind == std::io::ErrorKind::Interrupted,
        _ => false,
    };
    if interrupted {
        if let Err(signal) = Python::attach(|py| py.check_signals()) {
            return signal;
        }
    }
    // An I/O error names its file already.
    let named = matches!(&e, Error::Io { path: Some(_), .. } | Error::Path { .. });
    let message = e.to_string();
    // ... and so does a message that begins with the context ("x is not an index set").
    let message = if context.is_empty() || named || message.starts_with(&format!("{context} ")) {
        message
    } else {
        format!("{context}: {e}")
    };
    let message = python_advice(message);
    // A segment's or part's error is of the kind it wraps.
    match e.kind() {
        Error::Io { source, path } => {
            // As Python's own: errno and filename set (`e.errno == errno.ENOENT` works).
            // Python prints "[Errno 2] MESSAGE: 'FILE'": the message without the file's name
            // and Rust's "(os error 2)", which Python's own form gives.
            let args = |m: String| match (source.raw_os_error(), path) {
                (Some(code), Some(p)) => {
                    let file = p.display().to_string();
                    let m = m.strip_prefix(&format!("{file}: ")).unwrap_or(&m);
                    let m = m.replace(&format!(" (os error {code})"), "");
                    PyOSErrorArgs::Full(code, m, file)
                }
                _ => PyOSErrorArgs::Message(m),
            };
            match (source.kind(), args(message)) {
                (std::io::ErrorKind::NotFound, a) => a.raise::<PyFileNotFoundError>(),
                (std::io::ErrorKind::PermissionDenied, a) => a.raise::<PyPermissionError>(),
                (_, a) => a.raise::<PyOSError>(),
            }
        }
        Error::Path {
            path, kind, errno, ..
        } => {
            let a = match errno {
                Some(code) => PyOSErrorArgs::Full(*code, message, path.display().to_string()),
                None => PyOSErrorArgs::Message(message),
            };
            match kind {
                std::io::ErrorKind::NotFound => a.raise::<PyFileNotFoundError>(),
                std::io::ErrorKind::PermissionDenied => a.raise::<PyPermissionError>(),
                _ => a.raise::<PyOSError>(),
            }
        }
        Error::Invalid(_) => PyValueError::new_err(message),
        Error::Signature(_) => SignatureError::new_err(message),
        Error::Busy { .. } => BusyError::new_err(message),
        Error::DuplicateId {
            id, more, others, ..
        } => Python::attach(|py| {
            // What a submission system acts on, without parsing the message: the ids named
            // (the first few the set holds) and how many it holds in all.
            let err = DuplicateIdError::new_err(message);
            let named: Vec<&str> = std::iter::once(id.as_str())
                .chain(others.iter().map(String::as_str))
                .collect();
            let value = err.value(py);
            match value
                .setattr("ids", named)
                .and_then(|()| value.setattr("count", 1 + more))
            {
                Ok(()) => err,
                Err(e) => e,
            }
        }),
        _ if e.is_damage() => CorruptIndexError::new_err(message),
        _ => PocketdexError::new_err(message),
    }
}

/// The arguments of an OSError: (errno, message, filename) when both are known, as Python's
/// own I/O errors have them.
enum PyOSErrorArgs {
    Full(i32, String, String),
    Message(String),
}

impl PyOSErrorArgs {
    fn raise<T: pyo3::PyTypeInfo>(self) -> PyErr {
        match self {
            PyOSErrorArgs::Full(code, m, f) => PyErr::new::<T, _>((code, m, f)),
            PyOSErrorArgs::Message(m) => PyErr::new::<T, _>(m),
        }
    }
}

/// The exception for a core error without a path to name.
pub fn to_py(e: Error) -> PyErr {
    with_context("", e)
}
