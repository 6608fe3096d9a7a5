//! `pocketdex.IndexBuilder`: documents in (one at a time or in batches, fingerprinted on every
//! core without the GIL), one index file out, exactly as `pocketdex build` writes it.

use crate::errors::{to_py, with_context};
use crate::inputs::ReadError;
use crate::inputs::{id_of, Column, STEP};
use pocketdex::fingerprint::{Fingerprint, Resolution};
use pocketdex::sketch::Idf;
use pocketdex::{Fingerprinter, Lang, Params};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

/// The language of `code`, or a `ValueError` listing the languages there are.
pub fn lang(code: &str) -> PyResult<Lang> {
    Lang::from_code(code).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown language {code:?}; pocketdex knows {}",
            Lang::ALL
                .iter()
                .map(|l| l.code())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// Collects documents and writes one index file, as `pocketdex build` does.
///
///     IndexBuilder(lang="en", *, expected_docs=None, size_hint=None, idf="collection",
///                  resolution=None, similar_bands=None)
///
/// lang: "en", "de", "fr", "es", "it" or "pt" (stopwords and reference distribution).
/// expected_docs: fix the codes' resolution for a collection that will grow to this size
///     (as `build --expected-docs`); by default it is chosen from the documents written.
/// size_hint: at most this many documents will be added (draws fewer samples; same index).
///     More than that are warned of when written: their index is coarser than `build`'s.
/// idf: where the idf table comes from: "collection" (learned from the first 20,000
///     documents), "language" (the built-in table: a document's codes and scores then do not
///     depend on the rest of the collection, for shards), or the path of an index to copy it
///     from (a str or any os.PathLike; a pathlib.Path is always a path).
/// resolution: (bands, samples, short_rows[, similar_rows]) instead of expected_docs.
/// similar_bands: bands of the similar path (0 leaves out `query(similar=True)`).
///
/// Texts that look like HTML have their markup removed; empty texts are skipped and listed in
/// `skipped`. Fingerprinting runs on every core with the GIL released. Threads may share a
/// builder: their calls take turns, each add_batch adding its documents together, and a write
/// or to_bytes comes before or after an add, which then finds the builder written.
#[pyclass(module = "pocketdex", frozen)]
pub struct IndexBuilder {
    /// One call at a time; another thread's call waits for it. Taken only with the GIL
    /// released (inside `py.detach`): a thread holding the GIL never waits for it, so a call
    /// holding it may take the GIL again (add_batch reads its columns) without a deadlock.
    state: Mutex<State>,
    /// The thread whose call holds `state`: a call from inside that call (an iterator given to
    /// add_batch that adds to the same builder) is refused, where it would wait for itself.
    holder: Mutex<Option<ThreadId>>,
}

/// An `IndexBuilder`'s documents, and how the next ones are fingerprinted.
struct State {
    /// `None` once written.
    inner: Option<pocketdex::IndexBuilder>,
    /// The fingerprinter documents go through on rayon's threads: the builder's weighing one
    /// once it has its idf table, its unweighed one before.
    fingerprinter: Arc<Fingerprinter>,
    weighing: bool,
    skipped: Vec<(String, String)>,
    /// Rows offered so far (by `add` and `add_batch`): a None id is named by its row in them.
    rows: usize,
    /// The `size_hint` given: codes are drawn for at most that many documents.
    size_hint: Option<u64>,
    /// A batch for an index set (`pocketdex.add`): every document needs an id (a "row N" of
    /// one call would be refused by the next), and an error adds nothing, so its message
    /// does not say that the rows before it were added.
    for_set: bool,
}

impl State {
    /// The documents and the hint when more documents were added than `size_hint` said.
    fn over_hint(&self) -> Option<(usize, u64)> {
        let n = self.inner.as_ref()?.len();
        self.size_hint.filter(|&h| n as u64 > h).map(|h| (n, h))
    }
}

/// Warns that a builder holds more documents than its `size_hint`: its codes were drawn for
/// fewer, so the index is coarser than `pocketdex build` makes it (more candidates a query).
fn warn_over_hint(py: Python<'_>, over: Option<(usize, u64)>) -> PyResult<()> {
    let Some((n, hint)) = over else {
        return Ok(());
    };
    crate::warn(py, &format!(
        "{n} documents were added with size_hint={hint}: their codes were drawn for at most {hint}, so this index is coarser than `pocketdex build` makes it for {n} (more candidates per query); build again with a size_hint of at least {n}, or none"
    ))
}

/// The state, held by one call: dropping it lets the next call in.
struct Held<'a> {
    state: MutexGuard<'a, State>,
    holder: &'a Mutex<Option<ThreadId>>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Runs before `state` unlocks: the next holder's mark is never cleared by this one.
        *relock(self.holder) = None;
    }
}

impl std::ops::Deref for Held<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

/// A mutex's contents, also after a panic while it was held (raised as `PanicException`; the
/// next call finds the state that call left).
fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One step of `add_batch`, fingerprinted, to be added in order.
struct Step {
    start: usize,
    ids: Vec<Option<String>>,
    titles: Option<Vec<Option<String>>>,
    fps: Vec<Fingerprinted>,
}

impl State {
    /// Adds a fingerprinted step in order; returns the documents added (empty ones are skipped).
    fn push_step(&mut self, step: Step) -> PyResult<usize> {
        let mut added = 0;
        let titles = step.titles.unwrap_or_default();
        for (i, (id, fp)) in step.ids.into_iter().zip(step.fps).enumerate() {
            let id = id.unwrap_or_else(|| format!("row {}", step.start + i));
            let title = titles.get(i).and_then(|t| t.as_deref());
            if self.push(id, title, fp)?.is_some() {
                added += 1;
            }
        }
        Ok(added)
    }

    fn inner(&mut self) -> PyResult<&mut pocketdex::IndexBuilder> {
        self.inner.as_mut().ok_or_else(written)
    }

    /// The core builder, to write: refused when empty, as `pocketdex build` refuses to write
    /// an index of nothing.
    fn take(&mut self) -> PyResult<pocketdex::IndexBuilder> {
        let inner = self.inner.take().ok_or_else(written)?;
        if inner.is_empty() {
            let why = match self.skipped.len() {
                0 => "no document was added".to_string(),
                n => format!("all {n} documents added were empty"),
            };
            self.inner = Some(inner);
            return Err(PyValueError::new_err(format!(
                "no documents to index: {why}; nothing was written"
            )));
        }
        Ok(inner)
    }

    /// Adds one fingerprinted document (or records why it was skipped).
    fn push(
        &mut self,
        id: String,
        title: Option<&str>,
        fp: Fingerprinted,
    ) -> PyResult<Option<u32>> {
        let fp = match fp {
            Ok(fp) => fp,
            Err(why) => {
                self.skipped.push((id, why.into()));
                return Ok(None);
            }
        };
        let inner = self.inner.as_mut().ok_or_else(written)?;
        let doc = inner
            .add_fingerprint(&id, title, fp)
            .map_err(|e| with_context(&id, e))?;
        if !self.weighing {
            if let Some(f) = inner.weighing_fingerprinter() {
                // Learned from the first documents: later ones are weighed on rayon's threads.
                self.fingerprinter = Arc::new(f.clone());
                self.weighing = true;
            }
        }
        Ok(Some(doc))
    }
}

impl IndexBuilder {
    /// A builder of documents for an index set (`SetWriter::builder`, or `like` its schema),
    /// whose rows all need ids; see `State::for_set`.
    pub(crate) fn for_set(inner: pocketdex::IndexBuilder) -> IndexBuilder {
        let mut b = IndexBuilder::from_core(inner);
        b.state
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .for_set = true;
        b
    }

    /// The core builder (possibly empty) and the rows skipped, as (id, reason); this builder
    /// is spent.
    pub(crate) fn take_parts(
        &self,
        py: Python<'_>,
    ) -> PyResult<(pocketdex::IndexBuilder, Vec<(String, String)>)> {
        self.with_state(py, |state| {
            let inner = state.inner.take().ok_or_else(written)?;
            Ok((inner, std::mem::take(&mut state.skipped)))
        })
    }

    fn from_core(inner: pocketdex::IndexBuilder) -> IndexBuilder {
        let (fingerprinter, weighing) = match inner.weighing_fingerprinter() {
            Some(f) => (Arc::new(f.clone()), true),
            None => (Arc::new(inner.fingerprinter().clone()), false),
        };
        let state = State {
            inner: Some(inner),
            fingerprinter,
            weighing,
            skipped: Vec::new(),
            rows: 0,
            size_hint: None,
            for_set: false,
        };
        IndexBuilder {
            state: Mutex::new(state),
            holder: Mutex::new(None),
        }
    }

    /// The state, for one call, once another thread's call is done with it. Only with the GIL
    /// released: see `state`.
    fn hold(&self) -> PyResult<Held<'_>> {
        let me = std::thread::current().id();
        if *relock(&self.holder) == Some(me) {
            return Err(PyRuntimeError::new_err(
                "this IndexBuilder is in use by a call of this thread that has not returned (an iterator given to add_batch that calls the builder?)",
            ));
        }
        let state = relock(&self.state);
        *relock(&self.holder) = Some(me);
        Ok(Held {
            state,
            holder: &self.holder,
        })
    }

    /// `f` on the state, with the GIL released while it waits for it and while `f` runs.
    fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut State) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        // On this thread: the lock knows its holder by thread, and `f` may take the GIL again.
        py.detach(|| f(&mut *self.hold()?))
    }
}

fn written() -> PyErr {
    PyValueError::new_err("this IndexBuilder was written already; make a new one")
}

/// A document's fingerprint, or why it has none (it is skipped with that reason).
type Fingerprinted = Result<Fingerprint, &'static str>;

/// The fingerprint of a document's text as `pocketdex build` makes it from a JSON Lines record:
/// markup removed when the text looks like HTML; no fingerprint for a null (None, NaN, NA) or
/// a text of only white space, each skipped with its reason as `build` words it. `f` is the
/// builder's, so a weighed fingerprint is weighed as the builder would: its terms are shed
/// here, on the thread that allocated them ([`Fingerprint::shed_terms`]).
fn fingerprint_doc(f: &Fingerprinter, text: Option<&str>) -> Fingerprinted {
    let plain = plain_text(text)?;
    let mut fp = f.fingerprint(&plain);
    fp.shed_terms();
    Ok(fp)
}

/// A row's text as `pocketdex build` reads it (markup removed when it looks like HTML), or why
/// it has none, in `build`'s words: a null (None, NaN, NA), only white space, only markup.
pub(crate) fn plain_text(text: Option<&str>) -> Result<std::borrow::Cow<'_, str>, &'static str> {
    let text = text.ok_or("no text (a null)")?;
    let plain = pocketdex::text::plain_text(text, None);
    if plain.trim().is_empty() {
        return Err(if text.trim().is_empty() {
            "empty"
        } else {
            "no text (empty after removing markup)"
        });
    }
    Ok(plain)
}

/// `resolution=(bands, samples, rows)` or `(bands, samples, rows, similar_rows)`: small
/// non-negative ints (similar_rows may be None), as `build --resolution B,S,R[,Y]` takes them.
pub struct ResolutionArg((u8, u8, u8, Option<u8>));

impl<'py> FromPyObject<'_, 'py> for ResolutionArg {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let bad = || {
            PyTypeError::new_err(format!(
                "resolution must be a tuple (bands, samples, rows) or (bands, samples, rows, similar_rows) of ints from 0 to 255, not {}",
                obj.repr().map_or_else(|_| "that".to_string(), |r| r.to_string())
            ))
        };
        // The fourth may be None: the similar rows that suit the samples.
        let v: Vec<Option<u8>> = obj.extract().map_err(|_| bad())?;
        match v[..] {
            [Some(b), Some(s), Some(r)] => Ok(ResolutionArg((b, s, r, None))),
            [Some(b), Some(s), Some(r), y] => Ok(ResolutionArg((b, s, r, y))),
            _ => Err(bad()),
        }
    }
}

/// The parameters of `IndexBuilder(...)` as the CLI's `build` flags make them.
pub fn params(
    expected_docs: Option<u64>,
    resolution: Option<ResolutionArg>,
    similar_bands: Option<u8>,
) -> PyResult<Params> {
    let mut p = Params::default();
    if let Some(b) = similar_bands {
        p.similar_bands = b;
    }
    if expected_docs.is_some() && resolution.is_some() {
        return Err(PyValueError::new_err(
            "give expected_docs or resolution, not both",
        ));
    }
    if let Some(n) = expected_docs {
        p.resolution = Some(Resolution::for_docs(n));
    }
    if let Some(arg) = resolution {
        let ResolutionArg((b, s, r, y)) = arg;
        let similar = y.unwrap_or_else(|| Resolution::similar_rows_for_samples(s));
        p.resolution = Some(Resolution::new(b, s, r, similar));
    }
    p.validate().map_err(to_py)?;
    Ok(p)
}

/// `idf=`: where a builder's idf table comes from, as `build --idf` names it.
#[derive(Clone)]
pub enum IdfSource {
    /// Learned from the first documents.
    Collection,
    /// The language's built-in table.
    Language,
    /// Copied from this index file.
    Index(PathBuf),
}

impl<'py> FromPyObject<'_, 'py> for IdfSource {
    type Error = PyErr;

    /// A str is a keyword or else a path; any other os.PathLike is a path, even one named
    /// "collection" (a file of that name).
    fn extract(obj: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<PyString>() {
            return Ok(match obj.extract::<String>()?.as_str() {
                "collection" => IdfSource::Collection,
                "language" => IdfSource::Language,
                path => IdfSource::Index(path.into()),
            });
        }
        obj.extract::<PathBuf>().map(IdfSource::Index).map_err(|_| {
            PyTypeError::new_err(format!(
                "idf must be \"collection\", \"language\" or the path of an index file (a str or os.PathLike), not {}",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "that".to_string(), |n| n.to_string())
            ))
        })
    }
}

/// The error for an `idf` path that names no index file (`choices`: what idf may be): a file
/// name that names nothing is a missing file, as Python's own calls say; a bare word
/// ("colection") is more likely a misspelt keyword.
fn no_idf_file(path: &Path, choices: &str) -> PyErr {
    let file_like = path.extension().is_some() || path.components().count() > 1;
    if path.exists() || !file_like {
        PyValueError::new_err(format!(
            "idf must be {choices}; {} is none of them",
            path.display()
        ))
    } else {
        pyo3::exceptions::PyFileNotFoundError::new_err((
            2, // ENOENT
            format!("idf={} does not exist; give {choices}", path.display()),
            path.display().to_string(),
        ))
    }
}

/// What `idf` may be for a builder, in messages.
pub const BUILDER_IDF: &str =
    "\"collection\", \"language\" or an index file or set to copy the table from";

/// A builder weighing with the idf table `idf` names (as `build --idf`); `choices` says what
/// `idf` may be, for a message ([`BUILDER_IDF`], or a set's).
pub fn core_builder(
    lang: Lang,
    params: Params,
    idf: IdfSource,
    choices: &str,
) -> PyResult<pocketdex::IndexBuilder> {
    let builder = pocketdex::IndexBuilder::for_lang(lang, params).map_err(to_py)?;
    Ok(match idf {
        IdfSource::Collection => builder,
        IdfSource::Language => builder.with_idf(Idf::builtin(lang)),
        IdfSource::Index(path) => {
            // A set's table is its schema's.
            let path = pocketdex::index_file_of(&path);
            if !path.is_file() {
                return Err(no_idf_file(&path, choices));
            }
            builder
                .with_idf_of(&crate::index::map_file(&path)?)
                .map_err(|e| with_context(&format!("idf={}", path.display()), e))?
        }
    })
}

#[pymethods]
impl IndexBuilder {
    #[new]
    #[pyo3(signature = (lang = "en", *, expected_docs = None, size_hint = None, idf = IdfSource::Collection, resolution = None, similar_bands = None))]
    // Written out for the default of `idf`, which PyO3 would give as `...`.
    #[pyo3(
        text_signature = "(lang=\"en\", *, expected_docs=None, size_hint=None, idf=\"collection\", resolution=None, similar_bands=None)"
    )]
    fn new(
        lang: &str,
        expected_docs: Option<u64>,
        size_hint: Option<u64>,
        idf: IdfSource,
        resolution: Option<ResolutionArg>,
        similar_bands: Option<u8>,
    ) -> PyResult<IndexBuilder> {
        let lang = self::lang(lang)?;
        let params = params(expected_docs, resolution, similar_bands)?;
        let fixed = params.resolution.is_some();
        let mut builder = core_builder(lang, params, idf, BUILDER_IDF)?;
        if let Some(n) = size_hint {
            if fixed {
                return Err(PyValueError::new_err(
                    "size_hint is for a resolution chosen from the collection's size; expected_docs and resolution fix it already",
                ));
            }
            builder.size_hint(n);
        }
        let mut b = IndexBuilder::from_core(builder);
        b.state.get_mut().expect("new").size_hint = size_hint;
        Ok(b)
    }

    /// like(index, *, segment=False) -> IndexBuilder
    ///
    /// A builder whose documents get exactly the codes and sketches `index` (the path, a str or
    /// os.PathLike, of an index file or of an index set, whose schema it then follows, or an
    /// index file's bytes) gives its documents: its parameters, resolution and idf table. Shards
    /// of one collection built this way answer together as one index. segment=True also writes
    /// the sections a segment of an index set needs (for `pocketdex.spark.build`).
    #[staticmethod]
    #[pyo3(signature = (index, *, segment = false))]
    fn like(index: &Bound<'_, PyAny>, segment: bool) -> PyResult<IndexBuilder> {
        let builder = if let Ok(bytes) = index.cast::<PyBytes>() {
            let index = pocketdex::Index::open(bytes.as_bytes().to_vec())
                .map_err(|e| with_context("the schema's bytes", e))?;
            pocketdex::IndexBuilder::like(&index)
        } else {
            let path: PathBuf = index.extract().map_err(|_| {
                PyTypeError::new_err(
                    "like() takes the path of an index file or set, or an index file's bytes",
                )
            })?;
            // A set: its schema, as `pocketdex build --segment-of SET` takes it.
            let path = if pocketdex::is_set(&path) {
                path.join(pocketdex::SCHEMA)
            } else {
                path
            };
            pocketdex::IndexBuilder::like(&crate::index::map_file(&path)?)
        };
        Ok(IndexBuilder::from_core(if segment {
            builder.with_set_sections()
        } else {
            builder
        }))
    }

    /// add(id, text, title=None) -> int | None
    ///
    /// Adds one document; returns its number, or None when its text is empty (skipped).
    #[pyo3(signature = (id, text, title = None))]
    fn add(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        text: String,
        title: Option<String>,
    ) -> PyResult<Option<u32>> {
        let id = id_of(id).and_then(crate::inputs::printable_id);
        py.detach(|| {
            // Fingerprinted without holding the state: threads adding a document each run in
            // parallel.
            let f = {
                let state = self.hold()?;
                state.inner.as_ref().ok_or_else(written)?;
                Arc::clone(&state.fingerprinter)
            };
            let id = id?;
            // Made before other threads' documents completed the idf table, it keeps its terms,
            // and the core builder weighs it as it adds it.
            let fp = fingerprint_doc(&f, Some(&text));
            let mut state = self.hold()?;
            state.inner()?;
            state.rows += 1;
            state.push(id, title.as_deref(), fp)
        })
    }

    /// add_batch(ids, texts, titles=None) -> int
    ///
    /// Adds many documents, fingerprinted in parallel with the GIL released; returns how many
    /// were added (empty texts are skipped and listed in `skipped`). Each argument is a list
    /// (or any iterable) or a pyarrow Array or ChunkedArray (dictionary-encoded too), read in
    /// place; ids may be ints, a None id becomes "row N" (N counts the rows of every add and
    /// add_batch call, from 0). pandas' missing values (pd.NA, NaN) are None. A value that
    /// cannot be read ends the batch at its row: the rows before it are added, and the error
    /// names the row.
    #[pyo3(signature = (ids, texts, titles = None))]
    pub(crate) fn add_batch(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        texts: &Bound<'_, PyAny>,
        titles: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        // The whole call holds the state, so that a batch's documents are added together and
        // its rows numbered as one run; the GIL is taken again to read the columns.
        let ids = ids.clone().unbind();
        let texts = texts.clone().unbind();
        let titles = titles.map(|t| t.clone().unbind());
        self.with_state(py, |state| {
            Python::attach(|py| {
                let titles = titles.as_ref().map(|t| t.bind(py));
                state.add_batch(py, ids.bind(py), texts.bind(py), titles)
            })
        })
    }

    /// write(path) -> dict
    ///
    /// Writes the index to `path` (a str or os.PathLike) atomically (temporary file, fsync,
    /// rename) and returns what was written, a dict with the keys `docs`, `codes`, `refs`,
    /// `bytes`, `name_bytes`, `paths`, `sections`, `resolution` and `repeated_ids`. The
    /// builder is spent (a path that cannot be written is refused first, and the builder kept).
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<Py<PyAny>> {
        // Warned of before the builder is spent: under `-W error` it is then still there.
        warn_over_hint(py, self.with_state(py, |state| Ok(state.over_hint()))?)?;
        let (repeated, stats) = py.detach(|| -> PyResult<_> {
            let builder = {
                let mut state = self.hold()?;
                state.inner()?;
                // Before the builder is taken: a path that cannot be written leaves it as it was.
                pocketdex::atomic::check_output(&path)
                    .and_then(|()| pocketdex::atomic::check_replaces_only_an_index(&path))
                    .map_err(|e| with_context("", e))?;
                state.take()?
            };
            // Written without holding the state: a call waiting for it finds it written.
            let repeated = crate::par(|| {
                builder
                    .repeated_ids()
                    .map(|(n, first)| (n, first.to_string()))
            });
            let stats = crate::par(|| builder.write_to_path(&path))
                .map_err(|e| with_context(&format!("writing {}", path.display()), e))?;
            Ok((repeated, stats))
        })?;
        // As `pocketdex build` warns: both copies are indexed, and a lookup by id finds one.
        if let Some((n, first)) = &repeated {
            crate::warn(
                py,
                &format!(
                    "{n} document(s) share an id with an earlier one (first: {first:?}); both are indexed"
                ),
            )?;
        }
        let mut stats = serde_json::to_value(&stats).expect("stats serialize");
        stats["repeated_ids"] = repeated.map_or(0, |r| r.0).into();
        json_to_py(py, &stats)
    }

    /// to_bytes() -> bytes
    ///
    /// The index file's bytes (a shard to send elsewhere). The builder is spent.
    #[pyo3(name = "to_bytes")]
    fn finish_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        warn_over_hint(py, self.with_state(py, |state| Ok(state.over_hint()))?)?;
        let out = py.detach(|| -> PyResult<_> {
            let builder = self.hold()?.take()?;
            let mut out = Vec::new();
            crate::par(|| builder.finish(&mut out)).map_err(to_py)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &out).unbind())
    }

    /// The documents skipped, as (id, reason) pairs.
    #[getter]
    fn skipped(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        self.with_state(py, |state| Ok(state.skipped.clone()))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_state(py, |state| Ok(state.inner.as_ref().map_or(0, |b| b.len())))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.with_state(py, |state| Ok(state.inner.as_ref().map(|b| b.len()))) {
            Ok(Some(n)) => format!("<pocketdex.IndexBuilder: {n} documents>"),
            Ok(None) => "<pocketdex.IndexBuilder: written>".into(),
            Err(_) => "<pocketdex.IndexBuilder: in use>".into(),
        }
    }
}

impl State {
    /// `IndexBuilder.add_batch`, the state held.
    fn add_batch(
        &mut self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        texts: &Bound<'_, PyAny>,
        titles: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        self.inner()?;
        let mut ids = Column::new(ids, "ids")?;
        let mut texts = Column::new(texts, "texts")?;
        let mut titles = titles.map(|t| Column::new(t, "titles")).transpose()?;
        let lens = [
            ids.len(),
            texts.len(),
            titles.as_ref().and_then(Column::len),
        ];
        if let (Some(a), Some(b)) = (lens[0], lens[1]) {
            if a != b || lens[2].is_some_and(|c| c != a) {
                return Err(PyValueError::new_err(format!(
                    "ids, texts and titles must be of one length: {a} ids, {b} texts{}",
                    lens[2].map(|c| format!(", {c} titles")).unwrap_or_default()
                )));
            }
        }
        // Rows are numbered across calls, so that None ids of two batches differ.
        let (mut added, mut start) = (0, self.rows);
        // Step i is added in order while step i + 1 is fingerprinted on the other threads, as
        // `pocketdex build` overlaps its sink with its map.
        let mut pending: Option<Step> = None;
        loop {
            let owned = |v: Vec<Option<std::borrow::Cow<'_, str>>>| -> Vec<Option<String>> {
                v.into_iter().map(|v| v.map(|s| s.into_owned())).collect()
            };
            let row = start - self.rows;
            // A value that cannot be read (a float among strings) ends the batch at its row:
            // the rows before it are added, as a generator's would be, and the error names
            // the row; `rows` counts them, so that the next call's "row N" ids go on from there.
            let (id_step, id_error) = ids.take_until_error(row, STEP);
            let mut id_step = owned(id_step);
            // An id no one could print or delete by ends the batch at its row, as a value that
            // cannot be read does.
            let for_set = self.for_set;
            let unprintable = id_step.iter().position(|id| match id.as_deref() {
                Some(id) => !pocketdex::check::is_printable_id(id),
                None => for_set,
            });
            let id_error = match unprintable {
                Some(at) => {
                    let why = match id_step[at].as_deref() {
                        Some(id) => crate::inputs::unprintable(id, !for_set),
                        None => crate::inputs::NONE_ID.to_string(),
                    };
                    id_step.truncate(at);
                    Some(ReadError {
                        err: PyValueError::new_err(format!("row {}: {why}", row + at)),
                        ours: true,
                    })
                }
                None => id_error,
            };
            let (mut title_step, title_error) = match titles.as_mut() {
                Some(t) => {
                    let (v, e) = t.take_until_error(row, STEP);
                    (Some(owned(v)), e)
                }
                None => (None, None),
            };
            let (mut text_step, text_error) = texts.take_until_error(row, STEP);
            let bad = [
                id_error.map(|e| (id_step.len(), e)),
                title_error.map(|e| (title_step.as_ref().map_or(0, Vec::len), e)),
                text_error.map(|e| (text_step.len(), e)),
            ]
            .into_iter()
            .flatten()
            .min_by_key(|(at, _)| *at);
            if let Some((at, e)) = bad {
                // A column that ended before the bad row is the error to report (the length
                // check below), with the rows that all columns have.
                let shortest = [
                    Some(id_step.len()),
                    Some(text_step.len()),
                    title_step.as_ref().map(Vec::len),
                ]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(0);
                if shortest >= at {
                    id_step.truncate(at);
                    text_step.truncate(at);
                    if let Some(t) = title_step.as_mut() {
                        t.truncate(at);
                    }
                    if let Some(prev) = pending.take() {
                        crate::detach(py, || self.push_step(prev))?;
                    }
                    // Counted before pushing: an error there leaves them counted as rows.
                    self.rows = start + at;
                    if at > 0 {
                        let f = Arc::clone(&self.fingerprinter);
                        let fps = crate::detach(py, || {
                            text_step
                                .par_iter()
                                .map(|t| fingerprint_doc(&f, t.as_deref()))
                                .collect()
                        });
                        let step = Step {
                            start,
                            ids: id_step,
                            titles: title_step,
                            fps,
                        };
                        crate::detach(py, || self.push_step(step))?;
                    }
                    return Err(match e {
                        // An index set's batch adds nothing on an error, the rows before it
                        // neither (`pocketdex.add` says so).
                        ReadError { err, ours: true } if self.for_set => err,
                        ReadError { err, ours: true } => PyErr::from_type(
                            err.get_type(py),
                            format!(
                                "{}; the rows before it were added, the others were not",
                                err.value(py)
                            ),
                        ),
                        // The caller's own exception, as it raised it.
                        theirs => theirs.err,
                    });
                }
            }
            let n = id_step.len();
            if n != text_step.len() || title_step.as_ref().is_some_and(|t| t.len() != n) {
                // The rows before stay added, as a generator's would.
                if let Some(prev) = pending.take() {
                    crate::detach(py, || self.push_step(prev))?;
                }
                let row = row + n.min(text_step.len());
                self.rows = start;
                return Err(PyValueError::new_err(format!(
                    "ids, texts and titles must be of one length; they differ after row {row}"
                )));
            }
            if n == 0 {
                break;
            }
            let fingerprint = |f: &Fingerprinter| -> Vec<Fingerprinted> {
                text_step
                    .par_iter()
                    .map(|t| fingerprint_doc(f, t.as_deref()))
                    .collect()
            };
            let fps = match pending.take() {
                // Until the idf table is learned, adding may change the fingerprinter.
                Some(prev) if self.weighing => {
                    let f = Arc::clone(&self.fingerprinter);
                    let (fps, pushed) = crate::detach(py, || {
                        rayon::join(|| fingerprint(&f), || self.push_step(prev))
                    });
                    added += pushed?;
                    fps
                }
                prev => {
                    if let Some(prev) = prev {
                        added += crate::detach(py, || self.push_step(prev))?;
                    }
                    let f = Arc::clone(&self.fingerprinter);
                    crate::detach(py, || fingerprint(&f))
                }
            };
            pending = Some(Step {
                start,
                ids: id_step,
                titles: title_step,
                fps,
            });
            start += n;
        }
        self.rows = start;
        if let Some(prev) = pending.take() {
            added += crate::detach(py, || self.push_step(prev))?;
        }
        Ok(added)
    }
}

/// A JSON value as Python objects (dicts, lists, numbers, strings).
pub fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(v).expect("JSON serializes");
    let loads = py.import("json")?.getattr("loads")?;
    let out = loads.call1((text,))?;
    Ok(out.unbind())
}
