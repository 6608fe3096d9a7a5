//! Index sets from Python, as the command line keeps them: `add`, `delete`, `check` (the
//! submission check) and `merge`, and the steps of a sharded build (`pocketdex.spark`): create a
//! set, then adopt the shards built from its schema as its segments.

use crate::builder::{core_builder, json_to_py, lang, params, IdfSource, IndexBuilder};
use crate::errors::with_context;
use crate::inputs::NONE_ID;
use pocketdex::check::Committed;
use pocketdex::{Check, Fingerprint, Lang, SetWriter};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// create_set(path, *, lang="en", expected_docs=1_000_000, idf="language", wait=False) -> bytes
///
/// Creates an index set at `path` (a str or os.PathLike: a new or empty directory) whose
/// documents get the codes an idf table (the language's, or one copied from an index file:
/// `idf=path`) and a collection of `expected_docs` give them; returns its schema's bytes, from which shards are built
/// (`IndexBuilder.like(schema, segment=True)`). While another writer creates a set there,
/// raises BusyError, or with `wait=True` waits for it (and then raises ValueError: the
/// directory is a set already).
#[pyfunction]
#[pyo3(signature = (path, *, lang = "en", expected_docs = 1_000_000, idf = IdfSource::Language, wait = false))]
#[pyo3(
    text_signature = "(path, *, lang=\"en\", expected_docs=1_000_000, idf=\"language\", wait=False)"
)]
pub fn create_set(
    py: Python<'_>,
    path: PathBuf,
    lang: &str,
    expected_docs: u64,
    idf: IdfSource,
    wait: bool,
) -> PyResult<Py<PyBytes>> {
    let schema = set_schema(self::lang(lang)?, expected_docs, idf)?;
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

/// The schema of a new set: codes for `expected_docs` documents, weighed with `idf` (the
/// language's table or an index file's; never learned from whichever documents come first).
fn set_schema(lang: Lang, expected_docs: u64, idf: IdfSource) -> PyResult<pocketdex::IndexBuilder> {
    if matches!(idf, IdfSource::Collection) {
        return Err(PyValueError::new_err(
            "a set cannot learn its idf table from the documents that come first; give idf=\"language\" or the path of an index file whose table to copy",
        ));
    }
    core_builder(
        lang,
        params(Some(expected_docs), None, None)?,
        idf,
        "\"language\" or an index file or set whose table to copy",
    )
}

/// Refuses a file where a set may be created (a missing path is made one): the error a set's
/// writer gives it.
fn refuse_file(path: &Path) -> PyResult<()> {
    match path.is_file() {
        true => Err(with_context("", pocketdex::not_a_set(path))),
        false => Ok(()),
    }
}

/// The error when other writers made and removed the set again while this call waited.
fn raced(path: &Path) -> PyErr {
    PyValueError::new_err(format!(
        "{} was made and removed again by other writers while this call waited; call again",
        path.display()
    ))
}

/// The options for a new set, which an existing one must agree with (a script that always
/// passes them works; other values are refused, not ignored).
struct NewSet {
    lang: Option<Lang>,
    expected_docs: Option<u64>,
    idf: Option<IdfSource>,
}

impl NewSet {
    fn new(
        lang: Option<&str>,
        expected_docs: Option<u64>,
        idf: Option<IdfSource>,
    ) -> PyResult<NewSet> {
        Ok(NewSet {
            lang: lang.map(self::lang).transpose()?,
            expected_docs,
            idf,
        })
    }

    fn any(&self) -> bool {
        self.lang.is_some() || self.expected_docs.is_some() || self.idf.is_some()
    }

    fn agrees_with(&self, path: &Path, schema: &pocketdex::Index<memmap2::Mmap>) -> PyResult<()> {
        let idf = match &self.idf {
            None => None,
            Some(IdfSource::Language) => Some(pocketdex::GivenIdf::Language),
            Some(IdfSource::Collection) => Some(pocketdex::GivenIdf::collection()),
            Some(IdfSource::Index(file)) => Some(pocketdex::GivenIdf::of_index(
                file,
                &crate::index::map_file(file)?,
            )),
        };
        pocketdex::NewSetOptions {
            lang: self.lang,
            expected_docs: self.expected_docs,
            idf,
        }
        .agree_with(path, schema)
        .map_err(|e| with_context("", e))
    }

    /// Creates the set at `path` under its lock, or `None` when another writer made one
    /// there first.
    fn create(&self, py: Python<'_>, path: &Path, wait: bool) -> PyResult<Option<SetWriter>> {
        let schema = set_schema(
            self.lang.unwrap_or(Lang::En),
            self.expected_docs.unwrap_or(1_000_000),
            self.idf.clone().unwrap_or(IdfSource::Language),
        )?;
        py.detach(|| SetWriter::create_or_wait(path, schema, wait))
            .map_err(|e| with_context(&format!("creating the index set {}", path.display()), e))
    }
}

/// The set's schema, read without its lock (documents are fingerprinted with it first).
fn schema_unlocked(path: &Path) -> PyResult<pocketdex::Index<memmap2::Mmap>> {
    crate::index::map_file(&path.join(pocketdex::SCHEMA))
}

/// Takes the lock of the set at `path`, whose schema `schema` was read before the documents
/// were: a set made again meanwhile, of another schema, is refused.
fn open_as_read(
    py: Python<'_>,
    path: &Path,
    schema: &pocketdex::Index<memmap2::Mmap>,
    wait: bool,
) -> PyResult<SetWriter> {
    let label = path.display().to_string();
    py.detach(|| {
        let w = SetWriter::open(path, wait)?;
        w.agrees_with_read(schema)?;
        Ok(w)
    })
    .map_err(|e| with_context(&label, e))
}

/// Warns, when the merge after a change failed, that the change stands (the CLI says so on
/// stderr; the result's `merge_failed` says why).
fn warn_merge_failed(py: Python<'_>, path: &Path, c: &pocketdex::Change) -> PyResult<()> {
    match &c.merge_failed {
        Some(why) => crate::warn(
            py,
            &format!("the change to {p} is committed, but merging segments afterwards failed ({why}); the set is sound, call pocketdex.merge({p:?}) once the cause is fixed", p = path.display()),
        ),
        None => Ok(()),
    }
}

/// What a change did, as a dict (called once the set's lock is let go: warnings may run
/// Python code).
fn change_dict(
    py: Python<'_>,
    path: &Path,
    c: &pocketdex::Change,
    extra: serde_json::Value,
) -> PyResult<Py<PyAny>> {
    warn_merge_failed(py, path, c)?;
    let mut v = serde_json::to_value(c).expect("a change serializes");
    if let (Some(v), serde_json::Value::Object(extra)) = (v.as_object_mut(), extra) {
        v.extend(extra);
    }
    json_to_py(py, &v)
}

/// add(path, ids, texts, titles=None, *, replace=False, lang=None, expected_docs=None,
///     idf=None, wait=False) -> dict
///
/// Adds documents to the index set at `path` (a str or os.PathLike) as one new segment,
/// atomically, as `pocketdex add` does; creates the set when nothing is there (with `lang`,
/// default "en", `expected_docs`, default 1,000,000, and `idf`, "language" or the path of an
/// index whose idf table to copy, default "language", fixed for its life; given for an
/// existing set, they must agree with it). `ids`, `texts` and `titles` are what
/// `IndexBuilder.add_batch` takes, except that every id must be given: ids are unique in a
/// set, and one the set holds raises DuplicateIdError unless `replace=True`, which replaces
/// that document in the same step. Empty texts are skipped and listed in the result's
/// `skipped`. An error adds nothing (and a set the call was creating is not left behind). An
/// existing set's documents are fingerprinted before its lock is taken; while another writer
/// holds it, raises BusyError, or with `wait=True` waits.
///
/// Returns a dict: `added`, `deleted` (the documents replaced), `merged` (segments the merge
/// policy joined), `segments`, `live_docs`, `generation`, `created`, `skipped` (a list of
/// (id, reason)) and, when the merge after the commit failed (a UserWarning says so too; the
/// documents are in), `merge_failed`.
#[pyfunction]
#[pyo3(signature = (path, ids, texts, titles = None, *, replace = false, lang = None, expected_docs = None, idf = None, wait = false))]
#[allow(clippy::too_many_arguments)]
pub fn add(
    py: Python<'_>,
    path: PathBuf,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    titles: Option<&Bound<'_, PyAny>>,
    replace: bool,
    lang: Option<&str>,
    expected_docs: Option<u64>,
    idf: Option<IdfSource>,
    wait: bool,
) -> PyResult<Py<PyAny>> {
    let new = NewSet::new(lang, expected_docs, idf)?;
    refuse_file(&path)?;
    let label = path.display().to_string();
    // Documents into a builder of the set's; an error adds nothing.
    let read = |builder: pocketdex::IndexBuilder| -> PyResult<_> {
        let b = IndexBuilder::for_set(builder);
        b.add_batch(py, ids, texts, titles)?;
        let (builder, skipped) = b.take_parts(py)?;
        if builder.is_empty() {
            return Err(PyValueError::new_err(nothing_to_add(&skipped)));
        }
        Ok((builder, skipped))
    };
    let commit = |writer: &mut SetWriter, builder| {
        py.detach(|| crate::par(|| writer.add(builder, replace)))
            .map_err(|e| with_context(&label, e))
    };
    // Made by another writer while this one waited to create it: then added to as it is.
    for _ in 0..3 {
        let (change, skipped, created) = if pocketdex::is_set(&path) {
            let schema = schema_unlocked(&path)?;
            new.agrees_with(&path, &schema)?;
            let (builder, skipped) =
                read(pocketdex::IndexBuilder::like(&schema).with_set_sections())?;
            let mut writer = open_as_read(py, &path, &schema, wait)?;
            (commit(&mut writer, builder)?, skipped, false)
        } else {
            let Some(mut writer) = new.create(py, &path, wait)? else {
                continue;
            };
            let added = read(writer.builder())
                .and_then(|(builder, skipped)| Ok((commit(&mut writer, builder)?, skipped)));
            match added {
                Ok((change, skipped)) => (change, skipped, true),
                Err(e) => {
                    // Nothing was added: the set this call created goes again. (An error
                    // after the commit says so itself; `discard_unused` leaves a set that
                    // holds documents.)
                    let _ = writer.discard_unused();
                    return Err(e);
                }
            }
        };
        let d = change_dict(
            py,
            &path,
            &change,
            serde_json::json!({ "created": created }),
        )?;
        // (id, reason) tuples, as IndexBuilder.skipped gives them.
        d.bind(py).set_item("skipped", skipped)?;
        return Ok(d);
    }
    Err(raced(&path))
}

/// Why a batch added nothing: every document was skipped, with their reasons.
fn nothing_to_add(skipped: &[(String, String)]) -> String {
    if skipped.is_empty() {
        return "no documents to add".into();
    }
    let shown: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|(id, why)| format!("{id:?}: {why}"))
        .collect();
    format!(
        "no documents to add: all {} were skipped ({}{})",
        skipped.len(),
        shown.join("; "),
        if skipped.len() > 3 { "; …" } else { "" }
    )
}

/// Ids as given: a list (or any iterable) or a pyarrow array of str or int, or one str or int,
/// read as `IndexBuilder.add_batch` reads them.
fn id_list(ids: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    // One id: a str, or an int of any kind (a NumPy integer too), which is not iterable.
    if ids.is_instance_of::<PyString>() || ids.try_iter().is_err() {
        return Ok(vec![crate::inputs::id_of(ids)?]);
    }
    let mut column = crate::inputs::Column::new(ids, "ids")?;
    let mut out = Vec::new();
    loop {
        let step = column.take(out.len(), crate::inputs::STEP)?;
        if step.is_empty() {
            return Ok(out);
        }
        for id in step {
            out.push(
                id.ok_or_else(|| {
                    PyValueError::new_err(format!("row {}: the id is None", out.len()))
                })?
                .into_owned(),
            );
        }
    }
}

/// delete(path, ids, *, wait=False) -> list[bool]
///
/// Deletes the documents with these ids (a list or pyarrow array of str or int, or one) from
/// the index set at `path`, in one atomic step, as `pocketdex delete` does: they never appear
/// in hits again (`merge` drops their bytes). Returns, per id, whether the set held it.
#[pyfunction]
#[pyo3(signature = (path, ids, *, wait = false))]
pub fn delete(
    py: Python<'_>,
    path: PathBuf,
    ids: &Bound<'_, PyAny>,
    wait: bool,
) -> PyResult<Vec<bool>> {
    let ids = id_list(ids)?;
    let label = path.display().to_string();
    py.detach(|| {
        let mut writer = SetWriter::open(&path, wait)?;
        writer.delete(&ids).map(|(found, _)| found)
    })
    .map_err(|e| with_context(&label, e))
}

/// repair(path, *, wait=False) -> dict
///
/// Makes a damaged index set sound again, as `pocketdex repair` does, under the set's lock
/// (while another writer holds it, raises BusyError, or with `wait=True` waits): every segment
/// is checked, every byte, and one that is damaged, missing or not the file the manifest names
/// is dropped, its file moved to the set's `damaged/` directory; a damaged schema is written
/// again from a sound segment. The set then answers as one index of the documents left: add
/// the dropped ones again from their sources. A set with nothing wrong is left as it is.
///
/// Returns what `add` returns of the set after (`segments`, `live_docs`, `generation`, ...),
/// `schema_rewritten`, and `dropped`: per segment dropped, a dict of `file`, `why`,
/// `live_docs` (what the set lost), `ids` (those that could still be read, to add again),
/// `unread` (live documents whose ids could not be read) and `kept_as` (where the file was
/// moved, or None when there was none).
#[pyfunction]
#[pyo3(signature = (path, *, wait = false))]
pub fn repair(py: Python<'_>, path: PathBuf, wait: bool) -> PyResult<Py<PyAny>> {
    let repair = py
        .detach(|| SetWriter::repair(&path, wait))
        .map_err(|e| with_context(&format!("repairing {}", path.display()), e))?;
    let extra = serde_json::json!({
        "schema_rewritten": repair.schema_rewritten,
        "dropped": repair.dropped,
    });
    change_dict(py, &path, &repair.change, extra)
}

/// merge(path, out=None, *, wait=False) -> dict
///
/// Merges every segment of the index set at `path` into one, dropping deleted documents, as
/// `pocketdex merge` does; returns what `add` returns of the set after (`merged`, `segments`,
/// `live_docs`, `generation`; `added` and `deleted` are 0). With `out`, writes the live
/// documents as one plain index file there instead (outside the set; byte for byte what an
/// `IndexBuilder` of the set's parameters writes for them), without the set's lock (so
/// `wait` does not apply), and
/// returns what was written: `docs`, `codes`, `refs`, `bytes`, `name_bytes`, `sections`,
/// `resolution`, and `paths` None (the segments' codes are copied, and do not say which path
/// made them).
#[pyfunction]
#[pyo3(signature = (path, out = None, *, wait = false))]
pub fn merge(
    py: Python<'_>,
    path: PathBuf,
    out: Option<PathBuf>,
    wait: bool,
) -> PyResult<Py<PyAny>> {
    if path.is_file() && pocketdex::is_index_file(&path) {
        return Err(PyValueError::new_err(format!(
            "{} is already one index file: merge takes an index set (a directory); to ship this file, copy it as it is",
            path.display()
        )));
    }
    let label = path.display().to_string();
    match out {
        Some(out) => {
            let stats = py
                .detach(|| crate::par(|| pocketdex::export_set(&path, &out)))
                .map_err(|e| with_context(&format!("writing {}", out.display()), e))?;
            json_to_py(py, &serde_json::to_value(&stats).expect("stats serialize"))
        }
        None => {
            let change = py
                .detach(|| {
                    let mut writer = SetWriter::open(&path, wait)?;
                    crate::par(|| writer.merge_all())
                })
                .map_err(|e| with_context(&label, e))?;
            change_dict(py, &path, &change, serde_json::json!({}))
        }
    }
}

/// A document to check: its id, title, and fingerprint or why it has none.
type Submitted = (String, Option<String>, Result<Fingerprint, String>);

/// A row of `check`: its number, id, title and text.
type Row = (usize, Option<String>, Option<String>, Option<String>);

/// check(path, texts, ids=None, titles=None, *, threshold=0.8, top=10, add=False,
///       replace=False, lang=None, expected_docs=None, idf=None, wait=False) -> list[dict]
///
/// The submission check of `pocketdex check`: each text's near copies among the documents of
/// the index (an index set, or an index file) and the texts before it in this call, at a score
/// of at least `threshold` (a 5% edit scores about 0.95, related articles 0.3–0.6), at most
/// `top` of them. With `add=True` (an index set only; created when missing, with `lang`,
/// `expected_docs` and `idf` as `add` takes them), each text without a near copy is added, all in one locked step; `replace`
/// lets a text take an id the set holds. `texts`, `ids` and `titles` are lists (or iterables)
/// or pyarrow arrays; without ids, texts are named "row N" (from 0), and with `add=True` ids
/// are needed.
///
/// Returns one dict per text, in order, as `check --json` prints it: `doc` (its id), `status`
/// ("new", "near-copy" or "error"), `added`, `hits` (each `id`, `score`, `codes`, `path`) and,
/// for an error, `message`. A text that is an error (None, empty, only markup, an id that is
/// None, given twice or, unless `replace`, held by the set) makes the step add nothing, so
/// that a corrected call adds them all: then every `added` is False (no exception: look for
/// status "error"). Without `add`, a check of a set with ids says what adding would say, of
/// ids too.
#[pyfunction]
#[pyo3(signature = (path, texts, ids = None, titles = None, *, threshold = 0.8, top = 10, add = false, replace = false, lang = None, expected_docs = None, idf = None, wait = false))]
#[allow(clippy::too_many_arguments)]
pub fn check(
    py: Python<'_>,
    path: PathBuf,
    texts: &Bound<'_, PyAny>,
    ids: Option<&Bound<'_, PyAny>>,
    titles: Option<&Bound<'_, PyAny>>,
    threshold: f64,
    top: usize,
    add: bool,
    replace: bool,
    lang: Option<&str>,
    expected_docs: Option<u64>,
    idf: Option<IdfSource>,
    wait: bool,
) -> PyResult<Py<PyAny>> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err(PyValueError::new_err(format!(
            "threshold must be between 0 and 1, not {threshold}"
        )));
    }
    if top == 0 {
        return Err(PyValueError::new_err("top must be at least 1"));
    }
    if add && ids.is_none() {
        return Err(PyValueError::new_err(
            "check(add=True) needs ids: every document of an index set needs an id of its own",
        ));
    }
    let new = NewSet::new(lang, expected_docs, idf)?;
    if !add && new.any() {
        return Err(PyValueError::new_err(
            "lang, expected_docs and idf apply when check(add=True) creates a set; without add the index is only read",
        ));
    }
    if replace && !add && path.is_file() && pocketdex::is_index_file(&path) {
        return Err(PyValueError::new_err(format!(
            "replace applies to an index set (with add=True, or without it to say what add=True, replace=True would do); {} is an index file, which never changes",
            path.display()
        )));
    }
    if add {
        refuse_file(&path)?;
    }
    let label = path.display().to_string();
    // Read before any lock is taken: the caller's iterables may do anything.
    let rows = read_rows(texts, ids, titles)?;
    let threshold = threshold as f32;
    // On a set, a check with ids says what adding would say of each id too.
    let id_checks = add || (path.is_dir() && ids.is_some());
    let make = |set, builder| -> PyResult<Check<'_>> {
        let check = Check::new(set, builder, top, threshold, replace)
            .map_err(|e| with_context(&label, e))?;
        Ok(if id_checks {
            check.with_id_checks()
        } else {
            check
        })
    };
    if !add {
        let (set, _) = py.detach(|| crate::index::open_one(&path))?;
        let mut check = make(&set, None)?;
        let docs = fingerprint_rows(py, check.fingerprinter(), rows, id_checks);
        let verdicts = run(py, &mut check, docs)?;
        return verdicts_to_py(py, &verdicts);
    }
    for _ in 0..3 {
        let (mut writer, docs, created) = if pocketdex::is_set(&path) {
            let schema = schema_unlocked(&path)?;
            new.agrees_with(&path, &schema)?;
            let docs = fingerprint_rows(py, schema.fingerprinter(), rows, true);
            (open_as_read(py, &path, &schema, wait)?, docs, false)
        } else {
            let Some(writer) = new.create(py, &path, wait)? else {
                continue;
            };
            let f = writer.builder().fingerprinter().clone();
            (writer, fingerprint_rows(py, &f, rows, true), true)
        };
        let checked = make(writer.set(), Some(writer.builder())).and_then(|mut check| {
            let verdicts = run(py, &mut check, docs)?;
            Ok((verdicts, check.finish()))
        });
        let committed = checked.and_then(|(verdicts, additions)| {
            let committed = py
                .detach(|| crate::par(|| additions.commit(&mut writer)))
                .map_err(|e| with_context(&label, e))?;
            Ok((verdicts, committed))
        });
        if created && !matches!(committed, Ok((_, Committed::Added(_)))) {
            // Nothing was added: the set this call created goes again.
            let _ = writer.discard_unused();
        } else {
            // Let go before Python code runs (a warning's filters, the answer's dicts).
            drop(writer);
        }
        let (mut verdicts, committed) = committed?;
        match committed {
            Committed::Refused { .. } => {
                for v in &mut verdicts {
                    v.added = false;
                }
            }
            Committed::Added(change) => warn_merge_failed(py, &path, &change)?,
            Committed::Nothing => {}
        }
        return verdicts_to_py(py, &verdicts);
    }
    Err(raced(&path))
}

/// The rows of `check`: texts, with ids ("row N" without them) and titles.
fn read_rows(
    texts: &Bound<'_, PyAny>,
    ids: Option<&Bound<'_, PyAny>>,
    titles: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Row>> {
    use crate::inputs::{Column, STEP};
    let all = |c: Option<&Bound<'_, PyAny>>, what| -> PyResult<Option<Vec<Option<String>>>> {
        let Some(c) = c else { return Ok(None) };
        let mut column = Column::new(c, what)?;
        let mut out = Vec::new();
        loop {
            let step = column.take(out.len(), STEP)?;
            if step.is_empty() {
                return Ok(Some(out));
            }
            out.extend(step.into_iter().map(|v| v.map(|s| s.into_owned())));
        }
    };
    let texts = all(Some(texts), "texts")?.unwrap_or_default();
    let ids = all(ids, "ids")?;
    let titles = all(titles, "titles")?;
    let n = texts.len();
    if ids.as_ref().is_some_and(|v| v.len() != n) || titles.as_ref().is_some_and(|v| v.len() != n) {
        return Err(PyValueError::new_err(format!(
            "texts, ids and titles must be of one length: {n} texts{}{}",
            ids.as_ref()
                .map(|v| format!(", {} ids", v.len()))
                .unwrap_or_default(),
            titles
                .as_ref()
                .map(|v| format!(", {} titles", v.len()))
                .unwrap_or_default()
        )));
    }
    let mut ids = ids.map(Vec::into_iter);
    let mut titles = titles.map(Vec::into_iter);
    Ok(texts
        .into_iter()
        .enumerate()
        .map(|(row, text)| {
            let id = ids.as_mut().and_then(|i| i.next().flatten());
            (
                row,
                id,
                titles.as_mut().and_then(|i| i.next().flatten()),
                text,
            )
        })
        .collect())
}

/// Fingerprints `rows` with `f` in parallel (markup removed, as `IndexBuilder` does). A text
/// without an id is named by its row: an error when it would be added (`add`).
fn fingerprint_rows(
    py: Python<'_>,
    f: &pocketdex::Fingerprinter,
    rows: Vec<Row>,
    add: bool,
) -> Vec<Submitted> {
    crate::detach(py, || {
        rows.into_par_iter()
            .map(|(row, id, title, text)| match id {
                None if add => (format!("row {row}"), title, Err(NONE_ID.to_string())),
                id => {
                    let fp = crate::builder::plain_text(text.as_deref())
                        .map(|t| f.fingerprint(&t))
                        .map_err(str::to_string);
                    (id.unwrap_or_else(|| format!("row {row}")), title, fp)
                }
            })
            .collect()
    })
}

/// Checks the documents in order.
fn run(
    py: Python<'_>,
    check: &mut Check<'_>,
    docs: Vec<Submitted>,
) -> PyResult<Vec<pocketdex::Verdict>> {
    py.detach(|| {
        docs.into_iter()
            .map(|(id, title, fp)| match fp {
                Ok(fp) => check.check(&id, title.as_deref(), fp),
                Err(why) => Ok(check.unchecked(id, why)),
            })
            .collect::<pocketdex::Result<Vec<_>>>()
    })
    .map_err(crate::errors::to_py)
}

fn verdicts_to_py(py: Python<'_>, verdicts: &[pocketdex::Verdict]) -> PyResult<Py<PyAny>> {
    json_to_py(
        py,
        &serde_json::to_value(verdicts).expect("verdicts serialize"),
    )
}
