//! The index-set steps of a sharded build (`pocketdex.spark`): create a set, then adopt the
//! shards built from its schema as its segments.

use crate::builder::{core_builder, lang, params, IdfSource};
use crate::errors::with_context;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;

/// create_set(path, *, lang="en", expected_docs=1_000_000, wait=False) -> bytes
///
/// Creates an index set at `path` (a str or os.PathLike: a new or empty directory) whose
/// documents get the codes the language's idf table and a collection of `expected_docs` give
/// them; returns its schema's bytes, from which shards are built
/// (`IndexBuilder.like(schema, segment=True)`). While another writer creates a set there,
/// raises BusyError, or with `wait=True` waits for it (and then raises ValueError: the
/// directory is a set already).
#[pyfunction]
#[pyo3(signature = (path, *, lang = "en", expected_docs = 1_000_000, wait = false))]
pub fn create_set(
    py: Python<'_>,
    path: PathBuf,
    lang: &str,
    expected_docs: u64,
    wait: bool,
) -> PyResult<Py<PyBytes>> {
    let schema = core_builder(
        self::lang(lang)?,
        params(Some(expected_docs), None, None)?,
        IdfSource::Language,
    )?;
    let label = format!("creating the index set {}", path.display());
    py.detach(|| {
        pocketdex::SetWriter::create_or_wait(&path, schema, wait)?.ok_or_else(|| {
            pocketdex::Error::Invalid(format!(
                "{} is an index set already; open it to change it",
                path.display()
            ))
        })
    })
    .map_err(|e| with_context(&label, e))?;
    let bytes = std::fs::read(path.join(pocketdex::SCHEMA))
        .map_err(|e| with_context(&label, pocketdex::Error::io(&path, e)))?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

/// adopt_segments(path, files, *, wait=False) -> int
///
/// Adds shard files (built from the set's schema, with set sections) to the set at `path` as
/// segments, in the order given, in one step; returns the set's live documents after. Paths are
/// str or os.PathLike; `files` is a list of them, or one.
#[pyfunction]
#[pyo3(signature = (path, files, *, wait = false))]
pub fn adopt_segments(
    py: Python<'_>,
    path: PathBuf,
    files: &Bound<'_, PyAny>,
    wait: bool,
) -> PyResult<u64> {
    // A list of paths; one path (a str would otherwise be refused as "not a sequence") is
    // taken as a list of one.
    let files: Vec<PathBuf> = match files.extract::<Vec<PathBuf>>() {
        Ok(v) => v,
        Err(_) => vec![files.extract::<PathBuf>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "files must be a list of paths of index files (built with IndexBuilder.like(set, segment=True))",
            )
        })?],
    };
    let label = path.display().to_string();
    // The set's lock is waited for on this thread (a signal interrupts it), the files checked
    // on the pool.
    py.detach(|| {
        let mut writer = pocketdex::SetWriter::open(&path, wait)?;
        crate::par(|| writer.adopt(&files))
    })
    .map(|c| c.live_docs)
    .map_err(|e| with_context(&label, e))
}
