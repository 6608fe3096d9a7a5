//! The extension module `pocketdex._pocketdex`: the core library's builder, reader, fingerprints
//! and classical methods for Python. `python/pocketdex/__init__.py` re-exports what users need;
//! `_pocketdex.pyi` types it.
//!
//! Every call that does real work releases the GIL, its parallel parts on this process's
//! rayon threads (`par`); Python objects are read or made only while it is held. No call panics into the
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
    m.add_function(wrap_pyfunction!(sets::add, m)?)?;
    m.add_function(wrap_pyfunction!(sets::delete, m)?)?;
    m.add_function(wrap_pyfunction!(sets::check, m)?)?;
    m.add_function(wrap_pyfunction!(sets::merge, m)?)?;
    m.add_function(wrap_pyfunction!(sets::repair, m)?)?;
    Ok(())
}

/// Runs `f` without the GIL on a thread of this process's pool ([`par`]): for work that takes
/// no lock of this module's objects and calls no Python.
pub(crate) fn detach<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    py.detach(|| par(f))
}

/// Warns the caller with a `UserWarning` (what the CLI notes on stderr).
pub(crate) fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let message = std::ffi::CString::new(message).unwrap_or_default();
    PyErr::warn(
        py,
        &py.get_type::<pyo3::exceptions::PyUserWarning>(),
        &message,
        1,
    )
}

/// Runs `f` on a thread of this process's pool, where its parallel work runs. Not rayon's
/// global pool: a process forked after a parallel call (multiprocessing's default on Linux, a
/// Spark worker daemon) inherits that pool's state but not its threads, and its first parallel
/// call would wait for them for ever. The pool is made again in a process whose id is not its
/// maker's. `f` must not wait for a lock that a call of this module takes on its own thread
/// (a pool thread waiting in a parallel step may run another call's `f`) nor call Python.
pub(crate) fn par<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match pool() {
        Some(pool) => pool.install(f),
        // No thread could be started: rayon's global pool is what is left.
        None => f(),
    }
}

/// This process's thread pool (see [`par`]); `None` when its threads cannot be started. Called
/// with the GIL held, so no thread of this process forks while `POOL` is locked.
fn pool() -> Option<std::sync::Arc<rayon::ThreadPool>> {
    use std::sync::{Arc, Mutex};
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut held = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((maker, pool)) = &*held {
        if *maker == pid {
            return Some(Arc::clone(pool));
        }
    }
    // The parent's pool: its threads are not in this process, so it is let go without the
    // drop that would signal them.
    std::mem::forget(held.take());
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("pocketdex-{i}"))
            .build()
            .ok()?,
    );
    *held = Some((pid, Arc::clone(&pool)));
    Some(pool)
}
