//! The extension module `pocketdex._pocketdex`: the core library's builder, reader, fingerprints
//! and classical methods for Python. `python/pocketdex/__init__.py` re-exports what users need;
//! `_pocketdex.pyi` types it.
//!
//! Every call that does real work releases the GIL (`Python::detach`) and runs on rayon's
//! threads; Python objects are read or made only while it is held. No call panics into the
//! interpreter: core errors become the exceptions of the `errors` module. Every class is
//! frozen: an `IndexBuilder` shared by threads keeps its state behind a lock, taken without the
//! GIL, so that their calls take turns.

use pyo3::prelude::*;

mod builder;
mod errors;
mod index;
mod inputs;
mod methods;
mod sets;

/// The module: classes, functions and exceptions (see `pocketdex/__init__.py`).
#[pymodule]
fn _pocketdex(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", pocketdex::FORMAT_VERSION)?;
    errors::register(m)?;
    m.add_class::<builder::IndexBuilder>()?;
    m.add_class::<index::Index>()?;
    m.add_class::<index::Hit>()?;
    m.add_class::<methods::Fingerprinter>()?;
    m.add_class::<methods::Fingerprint>()?;
    m.add_class::<methods::Cluster>()?;
    m.add_class::<methods::Dups>()?;
    m.add_function(wrap_pyfunction!(methods::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(methods::dups, m)?)?;
    m.add_function(wrap_pyfunction!(methods::methods, m)?)?;
    m.add_function(wrap_pyfunction!(sets::create_set, m)?)?;
    m.add_function(wrap_pyfunction!(sets::adopt_segments, m)?)?;
    Ok(())
}
