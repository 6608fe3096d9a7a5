//! `pocketdex.Index`: an index file, an index set, or several of them queried as one, mapped
//! read-only; queries one at a time or in parallel batches without the GIL.

use crate::builder::json_to_py;
use crate::errors::{to_py, with_context, SignatureError};
use crate::methods::Fingerprint;
use memmap2::Mmap;
use pocketdex::{HitRecord, IndexSet, QueryOptions};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Maps an index file and runs the cheap checks of `Index::open`; errors name the file.
pub fn map_file(path: &Path) -> PyResult<pocketdex::Index<Mmap>> {
    let label = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|e| with_context(&label, pocketdex::Error::io(path, e)))?;
    // SAFETY: read-only, and the index never trusts its bytes (every read is bounds-checked;
    // verify() checks every checksum). Indexes are replaced by rename, never changed in place.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| with_context(&label, e.into()))?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    pocketdex::Index::open(map).map_err(|e| with_context(&label, e))
}

/// One index file or set, as the CLI's INDEX argument: a directory must be a set.
pub(crate) fn open_one(path: &Path) -> PyResult<(IndexSet<Mmap>, Option<pocketdex::Index<Mmap>>)> {
    let label = path.display().to_string();
    if path.is_dir() {
        if !pocketdex::is_set(path) {
            return Err(PyValueError::new_err(format!(
                "{label} is a directory but not an index set (it has no {}); pass an index file, or an index set (made by pocketdex.add)",
                pocketdex::MANIFEST
            )));
        }
        let set = IndexSet::open(path).map_err(|e| with_context(&label, e))?;
        let schema = map_file(&path.join(pocketdex::SCHEMA))?;
        Ok((set, Some(schema)))
    } else {
        let index = map_file(path)?;
        Ok((IndexSet::from_indexes(vec![(label, index)]), None))
    }
}

/// The key `public_key` gives: a path (str or os.PathLike) of a key file, or a key's text (as
/// the CLI's `--public-key`).
fn trusted_key(arg: &Bound<'_, PyAny>) -> PyResult<pocketdex::signing::PublicKey> {
    let path: PathBuf = arg
        .extract()
        .map_err(|_| PyTypeError::new_err("public_key is a key file's path or a key's text"))?;
    let text = if path.exists() {
        std::fs::read_to_string(&path).map_err(|e| to_py(pocketdex::Error::io(&path, e)))?
    } else {
        let text = path.to_string_lossy().into_owned();
        if !pocketdex::signing::PublicKey::looks_like_text(&text) {
            // Not a key's text, so meant as a file: say it is missing, not malformed.
            return Err(pyo3::exceptions::PyFileNotFoundError::new_err((
                2, // ENOENT
                format!("public_key {text}: no such file; give the signer's public key file (NAME.pub from `pocketdex keygen`) or its text"),
                text.clone(),
            )));
        }
        text
    };
    pocketdex::signing::PublicKey::parse(&text).map_err(|e| with_context("public_key", e))
}

/// One indexed document found by a query: `id`, `score` (estimated cosine similarity, four
/// decimals), `rank` (1 for the best), `codes` (code groups that collided), `path` (fuzzy,
/// short, exact or similar: what found it), `title` (or None) and `index` (the file or set
/// holding it when several were opened together, else None), as `query --json` reports it.
#[pyclass(module = "pocketdex", frozen, get_all, eq, skip_from_py_object)]
#[derive(Clone, PartialEq)]
pub struct Hit {
    id: String,
    score: f64,
    rank: usize,
    codes: u16,
    path: String,
    title: Option<String>,
    index: Option<String>,
}

impl From<HitRecord> for Hit {
    fn from(r: HitRecord) -> Hit {
        Hit {
            id: r.id,
            score: pocketdex::rounded(r.score),
            rank: r.rank,
            codes: r.codes,
            path: r.path.to_string(),
            title: r.title,
            index: r.index,
        }
    }
}

/// The fields of a [`Hit`], as `Hit(...)` takes them (pickling).
type HitFields = (
    String,
    f64,
    usize,
    u16,
    String,
    Option<String>,
    Option<String>,
);

#[pymethods]
impl Hit {
    /// A hit from its fields, as pickle remakes one (a query makes them).
    #[new]
    #[pyo3(signature = (id, score, rank, codes, path, title=None, index=None))]
    fn new(
        id: String,
        score: f64,
        rank: usize,
        codes: u16,
        path: String,
        title: Option<String>,
        index: Option<String>,
    ) -> PyResult<Hit> {
        if !["fuzzy", "short", "exact", "similar"].contains(&path.as_str()) {
            return Err(PyValueError::new_err(format!(
                "path is fuzzy, short, exact or similar, not {path:?}"
            )));
        }
        Ok(Hit {
            id,
            score,
            rank,
            codes,
            path,
            title,
            index,
        })
    }

    /// Pickling (and copy): the class and its fields, so that hits travel between processes
    /// (multiprocessing, Spark) as values.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, pyo3::types::PyType>, HitFields) {
        let h = slf.get();
        (
            slf.get_type(),
            (
                h.id.clone(),
                h.score,
                h.rank,
                h.codes,
                h.path.clone(),
                h.title.clone(),
                h.index.clone(),
            ),
        )
    }

    /// Equal hits hash alike: a hit may key a dict or join a set.
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        // Within one process only (Python's hash is not kept anywhere): any fixed hasher.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // −0.0 == 0.0, so they hash alike.
        let score = if self.score == 0.0 { 0.0 } else { self.score };
        (
            &self.id,
            score.to_bits(),
            self.rank,
            self.codes,
            &self.path,
            &self.title,
            &self.index,
        )
            .hash(&mut h);
        h.finish()
    }

    /// to_dict() -> dict
    ///
    /// The hit as `pocketdex query --json` prints it (without `type` and `query`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("id", &self.id)?;
        d.set_item("score", self.score)?;
        d.set_item("rank", self.rank)?;
        d.set_item("codes", self.codes)?;
        d.set_item("path", &self.path)?;
        if let Some(t) = &self.title {
            d.set_item("title", t)?;
        }
        if let Some(i) = &self.index {
            d.set_item("index", i)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Hit(id={:?}, score={}, rank={}, codes={}, path={:?}{}{})",
            self.id,
            self.score,
            self.rank,
            self.codes,
            self.path,
            self.title
                .as_ref()
                .map(|t| format!(", title={t:?}"))
                .unwrap_or_default(),
            self.index
                .as_ref()
                .map(|i| format!(", index={i:?}"))
                .unwrap_or_default()
        )
    }
}

/// An index opened for queries: `Index(path)` with the path (a str or os.PathLike) of an index
/// file or an index set (a directory made by `pocketdex add`), or a list of them queried as one.
///
/// Files are memory-mapped read-only and checked cheaply on open; every part a query reads is
/// checked as it is read, and `verify()` checks every byte. `len(index)` is the number of live
/// documents; `id in index` tells whether a document is indexed.
///
/// public_key (a key file's path, NAME.pub from `pocketdex keygen`, or its text) refuses,
/// with SignatureError, any file that key did not sign (`pocketdex sign`); index sets are not
/// signed, so they are refused too.
#[pyclass(module = "pocketdex", frozen)]
pub struct Index {
    set: IndexSet<Mmap>,
    /// Per path given: its label, for a set its schema (for `info`), and the path made
    /// absolute, so that `info` reopens it after a change of directory.
    opened: Vec<(String, Option<pocketdex::Index<Mmap>>, PathBuf)>,
    /// Whether the paths were given as a list (`info` then lists them, even one).
    listed: bool,
}

/// Query options from the keyword arguments, checked as the CLI checks its flags.
fn options(top: usize, threshold: Option<f64>, similar: bool) -> PyResult<QueryOptions> {
    let mut o = if similar {
        QueryOptions::similar()
    } else {
        QueryOptions::default()
    };
    if top == 0 {
        return Err(PyValueError::new_err("top must be at least 1"));
    }
    o.top = top;
    if let Some(t) = threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(PyValueError::new_err(format!(
                "threshold must be between 0 and 1, not {t}"
            )));
        }
        o.threshold = t as f32;
    }
    Ok(o)
}

impl Index {
    /// Warns, as `query --similar` does, that an index built without the similar path
    /// (`similar_bands=0`) finds with similar=True only what the default query finds.
    fn warn_if_no_similar_path(&self, py: Python<'_>, similar: bool) -> PyResult<()> {
        if similar
            && self
                .set
                .parts()
                .iter()
                .all(|p| p.index.meta().params.similar_bands == 0)
        {
            crate::warn(
                py,
                "this index has no similar path (built with similar_bands=0): similar=True finds only what the default query finds",
            )?;
        }
        Ok(())
    }

    fn answer(&self, text: &str, opts: &QueryOptions) -> pocketdex::Result<Vec<HitRecord>> {
        let plain = pocketdex::text::plain_text(text, None);
        let r = self.set.query(&plain, opts)?;
        self.set.records(&r)
    }

    /// The fingerprinter of the first part (every part of a set shares it).
    fn fingerprinter(&self) -> PyResult<&pocketdex::Fingerprinter> {
        if let Some((_, Some(schema), _)) = self.opened.first() {
            return Ok(schema.fingerprinter());
        }
        self.set
            .parts()
            .first()
            .map(|p| p.index.fingerprinter())
            .ok_or_else(|| PyValueError::new_err("the index set holds no segment yet"))
    }
}

#[pymethods]
impl Index {
    #[new]
    #[pyo3(signature = (path, *, public_key = None))]
    fn new(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        public_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Index> {
        let trusted = public_key.map(trusted_key).transpose()?;
        let (paths, listed): (Vec<PathBuf>, bool) = if path.is_instance_of::<PyString>() {
            (vec![path.extract()?], false)
        } else if let Ok(p) = path.extract::<PathBuf>() {
            (vec![p], false)
        } else {
            let paths = path.extract::<Vec<PathBuf>>().map_err(|_| {
                PyTypeError::new_err(
                    "Index() takes the path of an index file or set, or a list of them",
                )
            })?;
            (paths, true)
        };
        if paths.is_empty() {
            return Err(PyValueError::new_err("Index() needs at least one path"));
        }
        // The same index twice would rank each of its hits twice.
        if let Some((first, again)) = pocketdex::repeated_path(&paths) {
            return Err(PyValueError::new_err(format!(
                "{} and {} are the same index; give each index once",
                first.display(),
                again.display()
            )));
        }
        let index = crate::detach(py, || {
            let mut all: Option<IndexSet<Mmap>> = None;
            let mut opened = Vec::new();
            for p in &paths {
                let (set, schema) = open_one(p)?;
                let absolute = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                opened.push((p.display().to_string(), schema, absolute));
                all = Some(match all {
                    None => set,
                    Some(a) => a.join(set),
                });
            }
            let set = all.expect("at least one path");
            if let Some(key) = &trusted {
                if let Some(dir) = paths.iter().find(|p| p.is_dir()) {
                    return Err(SignatureError::new_err(format!(
                        "{}: index sets are not signed, so public_key refuses them; export one file with `pocketdex merge {} -o FILE.pdx`, sign it, and open that",
                        dir.display(),
                        dir.display()
                    )));
                }
                for part in set.parts() {
                    part.index
                        .check_signature(key)
                        .map_err(|e| with_context(&part.file, e))?;
                }
            }
            Ok(Index {
                set,
                opened,
                listed,
            })
        })?;
        // As `pocketdex query` notes it: such indexes answer, but not as one index would.
        if !index.set.answers_as_one() {
            crate::warn(
                py,
                "these indexes were built with other settings (lang, idf or expected_docs); each is queried with its own, and their scores come from different idf tables (shards that should answer as one index are built alike)",
            )?;
        }
        Ok(index)
    }

    /// query(text, *, top=100, threshold=None, similar=False) -> list[Hit]
    ///
    /// The indexed near copies of `text`, best first: at most `top`, each scoring at least
    /// `threshold` (default 0.5; 0.4 with similar=True). similar=True also finds documents that
    /// say nearly the same in other words (cosine down to about 0.6). Markup is removed from a
    /// text that looks like HTML.
    #[pyo3(signature = (text, *, top = 100, threshold = None, similar = false))]
    fn query(
        &self,
        py: Python<'_>,
        text: &str,
        top: usize,
        threshold: Option<f64>,
        similar: bool,
    ) -> PyResult<Vec<Hit>> {
        let opts = options(top, threshold, similar)?;
        self.warn_if_no_similar_path(py, similar)?;
        // One document: no parallel work, so on this thread.
        let hits = py.detach(|| self.answer(text, &opts)).map_err(to_py)?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// query_batch(texts, *, top=100, threshold=None, similar=False) -> list[list[Hit]]
    ///
    /// `query` for many texts at once, in parallel with the GIL released: one list of hits per
    /// text, in order. `texts` is a list (or iterable) or a pyarrow array; a None gives [].
    #[pyo3(signature = (texts, *, top = 100, threshold = None, similar = false))]
    fn query_batch(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        top: usize,
        threshold: Option<f64>,
        similar: bool,
    ) -> PyResult<Vec<Vec<Hit>>> {
        let opts = options(top, threshold, similar)?;
        self.warn_if_no_similar_path(py, similar)?;
        let mut column = crate::inputs::Column::new(texts, "texts")?;
        let mut out = Vec::new();
        loop {
            // Ctrl-C between steps: the GIL is released within each.
            py.check_signals()?;
            let step = column.take(out.len(), crate::inputs::STEP)?;
            if step.is_empty() {
                break;
            }
            let answers: Vec<pocketdex::Result<Vec<HitRecord>>> = crate::detach(py, || {
                step.par_iter()
                    .map(|t| match t {
                        Some(t) => self.answer(t, &opts),
                        None => Ok(Vec::new()),
                    })
                    .collect()
            });
            for a in answers {
                out.push(a.map_err(to_py)?.into_iter().map(Hit::from).collect());
            }
        }
        Ok(out)
    }

    /// fingerprint(text) -> Fingerprint
    ///
    /// The fingerprint of `text` with this index's parameters: the codes it would be indexed
    /// under, and its sketch.
    fn fingerprint(&self, py: Python<'_>, text: &str) -> PyResult<Fingerprint> {
        let f = self.fingerprinter()?;
        let resolution = match self.opened.first() {
            Some((_, Some(schema), _)) => schema.resolution(),
            _ => self.set.parts()[0].index.resolution(),
        };
        Ok(py.detach(|| Fingerprint::of(f, resolution, text)))
    }

    /// info() -> dict
    ///
    /// What the paths hold now, as `pocketdex info --json` prints it (a list of paths gives a
    /// dict with `indexes`, one entry per path). Queries, `len()` and `in` answer from the
    /// snapshot of an index set taken when it was opened; `info()` reads the set as it is now,
    /// so after another process changed it, open `Index(path)` again to query what it says.
    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let infos = crate::detach(py, || {
            self.opened
                .iter()
                .map(|(label, _, path)| match open_one(path)? {
                    (set, Some(schema)) => Ok(pocketdex::info::set_info(label, &set, &schema)),
                    (set, None) => pocketdex::info::file_info(label, &set.parts()[0].index)
                        .map_err(|e| with_context(label, e)),
                })
                .collect::<PyResult<Vec<_>>>()
        })?;
        let v = match <[_; 1]>::try_from(infos) {
            Ok([one]) if !self.listed => one,
            Ok(one) => serde_json::json!({ "indexes": one }),
            Err(infos) => serde_json::json!({ "indexes": infos }),
        };
        json_to_py(py, &v)
    }

    /// verify() -> None
    ///
    /// Checks every byte of every part; raises `CorruptIndexError` (or `ValueError`) naming
    /// the first damage found.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        crate::detach(py, || self.set.verify()).map_err(to_py)
    }

    fn __len__(&self) -> usize {
        self.set.live_docs() as usize
    }

    fn __contains__(&self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        // As a dict answers for a key it cannot hold: `None in index` is False.
        let id = match crate::inputs::id_of(id) {
            Ok(id) => id,
            Err(e) if e.is_instance_of::<PyTypeError>(id.py()) => return Ok(false),
            Err(e) => return Err(e),
        };
        Ok(self.set.find(&id).map_err(to_py)?.is_some())
    }

    fn __repr__(&self) -> String {
        format!(
            "<pocketdex.Index {}: {} documents>",
            self.opened
                .iter()
                .map(|(l, _, _)| l.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
            self.set.live_docs()
        )
    }
}
