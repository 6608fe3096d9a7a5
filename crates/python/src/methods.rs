//! Fingerprints for pipelines that group by code inside an engine, and the classical
//! near-duplicate methods (`pocketdex dups`) over columns of ids and texts.

use crate::builder::{lang, params};
use crate::errors::to_py;
use crate::inputs::{Column, STEP};
use pocketdex::fingerprint::Resolution;
use pocketdex::sketch::Idf;
use pocketdex_methods::groups::{self, group_pairs};
use pocketdex_methods::{Detector, Features, Options};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A document's fingerprint: `codes` (the 64-bit keys it is indexed under, as unsigned ints),
/// `sketch` (its 64-bit simhash words) and `terms` (index terms counted). Documents sharing a
/// code are candidate near copies; `a.similarity(b)` estimates their cosine similarity.
#[pyclass(module = "pocketdex", frozen, get_all, skip_from_py_object)]
#[derive(Clone)]
pub struct Fingerprint {
    codes: Vec<u64>,
    sketch: Vec<u64>,
    terms: u32,
}

impl Fingerprint {
    /// The fingerprint of `text` (markup removed when it looks like HTML) by `f`, with its codes
    /// at `resolution`.
    pub fn of(f: &pocketdex::Fingerprinter, resolution: Resolution, text: &str) -> Fingerprint {
        let plain = pocketdex::text::plain_text(text, None);
        let fp = f.fingerprint(&plain);
        Fingerprint {
            codes: f.codes(&fp, resolution).iter().map(|c| c.key).collect(),
            sketch: fp.sketch().to_vec(),
            terms: fp.terms,
        }
    }
}

#[pymethods]
impl Fingerprint {
    /// A fingerprint from its fields, as pickle remakes one (a fingerprinter makes them).
    #[new]
    fn new(codes: Vec<u64>, sketch: Vec<u64>, terms: u32) -> Fingerprint {
        Fingerprint {
            codes,
            sketch,
            terms,
        }
    }

    /// Pickling (and copy): the class and its fields, so that fingerprints travel between
    /// processes (multiprocessing, Spark's Python workers) as values.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Vec<u64>, Vec<u64>, u32)) {
        let f = slf.get();
        (slf.get_type(), (f.codes.clone(), f.sketch.clone(), f.terms))
    }

    fn __eq__(&self, other: &Fingerprint) -> bool {
        (&self.codes, &self.sketch, self.terms) == (&other.codes, &other.sketch, other.terms)
    }

    /// Equal fingerprints hash alike: a fingerprint may key a dict or join a set.
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        // Within one process only (Python's hash is not kept anywhere): any fixed hasher.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&self.codes, &self.sketch, self.terms).hash(&mut h);
        h.finish()
    }

    /// similarity(other) -> float
    ///
    /// The cosine similarity of the two documents' tf-idf vectors, estimated from the sketches
    /// (what a query's score is).
    fn similarity(&self, other: &Fingerprint) -> PyResult<f64> {
        if self.sketch.len() != other.sketch.len() || self.sketch.is_empty() {
            return Err(PyValueError::new_err(
                "the fingerprints' sketches differ in length: they were made with other parameters",
            ));
        }
        Ok(pocketdex::rounded(pocketdex::sketch::estimate_similarity(
            &self.sketch,
            &other.sketch,
        )))
    }

    fn __repr__(&self) -> String {
        format!(
            "Fingerprint(terms={}, codes=[{} codes], sketch=[{} words])",
            self.terms,
            self.codes.len(),
            self.sketch.len()
        )
    }
}

/// Fingerprinter(lang="en", *, expected_docs=1_000_000)
///
/// Fingerprints with the language's idf table and the resolution of a collection of
/// `expected_docs`: the codes an index set or shards built with the same `lang` and
/// `expected_docs` give. For pipelines that group by code inside an engine.
#[pyclass(module = "pocketdex", frozen)]
pub struct Fingerprinter {
    inner: Arc<pocketdex::Fingerprinter>,
    resolution: Resolution,
}

/// Fingerprinters by (language, expected_docs): making one reads the reference and idf tables.
type Cache = Mutex<HashMap<(String, u64), Arc<pocketdex::Fingerprinter>>>;

fn fingerprinter(lang_code: &str, expected_docs: u64) -> PyResult<Fingerprinter> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let l = lang(lang_code)?;
    let p = params(Some(expected_docs), None, None)?;
    let resolution = p.resolution.expect("expected_docs fixes it");
    let key = (l.code().to_string(), expected_docs);
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let inner = match cache.get(&key) {
        Some(f) => Arc::clone(f),
        None => {
            let f = pocketdex::Fingerprinter::for_lang(l, p)
                .map_err(to_py)?
                .with_idf(Idf::builtin(l));
            let f = Arc::new(f);
            cache.insert(key, Arc::clone(&f));
            f
        }
    };
    Ok(Fingerprinter { inner, resolution })
}

#[pymethods]
impl Fingerprinter {
    #[new]
    #[pyo3(signature = (lang = "en", *, expected_docs = 1_000_000))]
    fn new(lang: &str, expected_docs: u64) -> PyResult<Fingerprinter> {
        fingerprinter(lang, expected_docs)
    }

    /// fingerprint(text) -> Fingerprint
    fn fingerprint(&self, py: Python<'_>, text: &str) -> Fingerprint {
        py.detach(|| Fingerprint::of(&self.inner, self.resolution, text))
    }

    /// fingerprint_batch(texts) -> list[Fingerprint | None]
    ///
    /// Fingerprints in parallel with the GIL released; a None text gives None.
    fn fingerprint_batch(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Option<Fingerprint>>> {
        let mut column = Column::new(texts, "texts")?;
        let mut out = Vec::new();
        loop {
            // Ctrl-C between steps: the GIL is released within each.
            py.check_signals()?;
            let step = column.take(out.len(), STEP)?;
            if step.is_empty() {
                return Ok(out);
            }
            let fps: Vec<Option<Fingerprint>> = crate::detach(py, || {
                step.par_iter()
                    .map(|t| {
                        t.as_deref()
                            .map(|t| Fingerprint::of(&self.inner, self.resolution, t))
                    })
                    .collect()
            });
            out.extend(fps);
        }
    }
}

/// fingerprint(text, *, lang="en", expected_docs=1_000_000) -> Fingerprint
///
/// The fingerprint `Fingerprinter(lang, expected_docs=...)` gives `text`.
#[pyfunction]
#[pyo3(signature = (text, *, lang = "en", expected_docs = 1_000_000))]
pub fn fingerprint(
    py: Python<'_>,
    text: &str,
    lang: &str,
    expected_docs: u64,
) -> PyResult<Fingerprint> {
    Ok(fingerprinter(lang, expected_docs)?.fingerprint(py, text))
}

/// methods() -> list[tuple[str, float, str]]
///
/// The methods `dups` runs: (name, default threshold, description) each.
#[pyfunction]
pub fn methods() -> Vec<(&'static str, f64, &'static str)> {
    pocketdex_methods::ALL
        .iter()
        .map(|m| (m.name(), m.default_threshold(), m.description()))
        .collect()
}

/// One group of near-duplicate documents: `id` (from 1, largest first, as `dups --json`
/// numbers them), `members` (ids, in input
/// order), `rows` (their positions in the input), `representative` (the first member: the one
/// to keep) and `pairs` ((id, id, score) for the pairs found inside it, best first; in a
/// cluster of more than 100 members, a spanning tree of them: the best that join it, as
/// `pocketdex dups` lists them).
#[pyclass(module = "pocketdex", frozen, get_all, eq, skip_from_py_object)]
#[derive(Clone, PartialEq)]
pub struct Cluster {
    id: usize,
    members: Vec<String>,
    rows: Vec<usize>,
    representative: String,
    pairs: Vec<(String, String, f64)>,
}

/// The fields of a [`Cluster`], as `Cluster(...)` takes them (pickling).
type ClusterFields = (
    usize,
    Vec<String>,
    Vec<usize>,
    String,
    Vec<(String, String, f64)>,
);

#[pymethods]
impl Cluster {
    /// A cluster from its fields, as pickle remakes one (`dups` makes them).
    #[new]
    fn new(
        id: usize,
        members: Vec<String>,
        rows: Vec<usize>,
        representative: String,
        pairs: Vec<(String, String, f64)>,
    ) -> Cluster {
        Cluster {
            id,
            members,
            rows,
            representative,
            pairs,
        }
    }

    /// Pickling (and copy): the class and its fields.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, pyo3::types::PyType>, ClusterFields) {
        let c = slf.get();
        (
            slf.get_type(),
            (
                c.id,
                c.members.clone(),
                c.rows.clone(),
                c.representative.clone(),
                c.pairs.clone(),
            ),
        )
    }

    fn __len__(&self) -> usize {
        self.members.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Cluster(id={}, members={:?}, pairs={})",
            self.id,
            self.members,
            self.pairs.len()
        )
    }
}

/// What `dups` found: `clusters` (largest first), `is_duplicate` (per input row: a member of a
/// cluster other than its representative), `keep` (its negation: the deduplicated rows),
/// `set_aside` ((id, reason) for documents the method cannot describe), `method`, `threshold`;
/// `to_arrow()` gives one row per document as `pocketdex dups --output FILE.parquet` writes it.
#[pyclass(module = "pocketdex", frozen)]
pub struct Dups {
    #[pyo3(get)]
    clusters: Vec<Cluster>,
    #[pyo3(get)]
    set_aside: Vec<(String, String)>,
    #[pyo3(get)]
    method: &'static str,
    #[pyo3(get)]
    threshold: f64,
    ids: Vec<String>,
    /// One per input row.
    rows: Vec<groups::Cluster>,
}

#[pymethods]
impl Dups {
    /// Per input row, whether to keep it: not a later member of a cluster (filter a table by it
    /// to keep one document per cluster).
    #[getter]
    fn keep(&self) -> Vec<bool> {
        self.rows.iter().map(|r| !r.is_duplicate).collect()
    }

    /// Per input row, whether it is a cluster member other than the representative.
    #[getter]
    fn is_duplicate(&self) -> Vec<bool> {
        self.rows.iter().map(|r| r.is_duplicate).collect()
    }

    /// to_arrow() -> pyarrow.Table
    ///
    /// One row per input document, the columns of `pocketdex dups --output FILE.parquet`: `id`,
    /// `cluster_id` (from 1: the clusters, largest first, then each document in none),
    /// `cluster_size`, `representative_id`, `is_duplicate` and `score` (the best score of its
    /// pairs; null outside clusters). Needs pyarrow.
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pa = py.import("pyarrow").map_err(|_| {
            pyo3::exceptions::PyImportError::new_err(
                "to_arrow() needs pyarrow: pip install pyarrow",
            )
        })?;
        let rows = &self.rows;
        let columns = pyo3::types::PyDict::new(py);
        columns.set_item("id", &self.ids)?;
        columns.set_item(
            "cluster_id",
            rows.iter().map(|r| r.cluster).collect::<Vec<_>>(),
        )?;
        columns.set_item(
            "cluster_size",
            rows.iter().map(|r| r.size).collect::<Vec<_>>(),
        )?;
        columns.set_item(
            "representative_id",
            rows.iter()
                .map(|r| self.ids[r.representative as usize].as_str())
                .collect::<Vec<_>>(),
        )?;
        columns.set_item(
            "is_duplicate",
            rows.iter().map(|r| r.is_duplicate).collect::<Vec<_>>(),
        )?;
        columns.set_item("score", rows.iter().map(|r| r.score).collect::<Vec<_>>())?;
        // The CLI's Parquet types: Int64 counts, which Spark and pandas read without surprise.
        // Every column but `score` is never null, as in the CLI's file.
        let field = |name: &str, t: &str| -> PyResult<Bound<'py, PyAny>> {
            pa.call_method1("field", (name, pa.call_method0(t)?, name == "score"))
        };
        let schema = pa.call_method1(
            "schema",
            (vec![
                field("id", "string")?,
                field("cluster_id", "int64")?,
                field("cluster_size", "int64")?,
                field("representative_id", "string")?,
                field("is_duplicate", "bool_")?,
                field("score", "float64")?,
            ],),
        )?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("schema", schema)?;
        pa.call_method("table", (columns,), Some(&kwargs))
    }

    fn __len__(&self) -> usize {
        self.clusters.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<pocketdex.Dups {} at {}: {} clusters, {} duplicates of {} rows>",
            self.method,
            self.threshold,
            self.clusters.len(),
            self.rows.iter().filter(|r| r.is_duplicate).count(),
            self.rows.len()
        )
    }
}

/// dups(ids, texts, *, method="minhash", threshold=None, lang="en", verify=True) -> Dups
///
/// The groups of near-duplicate documents with one of the classical methods, as
/// `pocketdex dups` finds them: exact, fuzzy, minhash, trials, spex, spotsigs or simhash
/// (`methods()` lists them with their default thresholds). Every pair scoring at least the
/// threshold is found (never by comparing all pairs) and verified with the exact measure
/// unless verify=False. ids and texts are lists (or iterables) or pyarrow arrays; markup is
/// removed from texts that look like HTML.
#[pyfunction]
#[pyo3(signature = (ids, texts, *, method = "minhash", threshold = None, lang = "en", verify = true))]
pub fn dups(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    method: &str,
    threshold: Option<f64>,
    lang: &str,
    verify: bool,
) -> PyResult<Dups> {
    let m = pocketdex_methods::by_name(method).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown method {method:?}; choose one of {}",
            pocketdex_methods::ALL
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let options = Options {
        lang: self::lang(lang)?,
        threshold,
        verify,
        ..Options::default()
    };
    let detector = Detector::new(m, options).map_err(to_py)?;
    let mut id_column = Column::new(ids, "ids")?;
    let mut text_column = Column::new(texts, "texts")?;
    let mut ids: Vec<String> = Vec::new();
    let mut store = detector.store();
    // The row of each stored document: rows without text are set aside, not stored, so that
    // they do not count in the collection a method weighs terms by (`pocketdex dups` skips
    // them as it reads).
    let mut rows_of: Vec<u32> = Vec::new();
    let mut no_text: Vec<(usize, &'static str)> = Vec::new();
    loop {
        // Ctrl-C between steps of reading: the GIL is released within each.
        py.check_signals()?;
        let id_step = id_column.take(ids.len(), STEP)?;
        let text_step = text_column.take(ids.len(), STEP)?;
        if id_step.len() != text_step.len() {
            return Err(PyValueError::new_err(format!(
                "ids and texts must be of one length; they differ after row {}",
                ids.len() + id_step.len().min(text_step.len())
            )));
        }
        if id_step.is_empty() {
            break;
        }
        let row = ids.len();
        ids.extend(
            id_step
                .into_iter()
                .enumerate()
                .map(|(i, id)| id.map_or_else(|| format!("row {}", row + i), |s| s.into_owned())),
        );
        let prepared: Vec<Result<Features, &'static str>> = crate::detach(py, || {
            text_step
                .par_iter()
                .map(|t| {
                    // Set aside as `IndexBuilder.skipped` and the CLI word it.
                    crate::builder::plain_text(t.as_deref()).map(|p| detector.prepare(&p))
                })
                .collect()
        });
        for (i, f) in prepared.into_iter().enumerate() {
            match f {
                Ok(f) => {
                    store.push(f).map_err(to_py)?;
                    rows_of.push((row + i) as u32);
                }
                Err(why) => no_text.push((row + i, why)),
            }
        }
    }
    store.seal().map_err(to_py)?;
    let outcome = crate::detach(py, || detector.find_in(&store)).map_err(to_py)?;
    // Groups of stored documents, numbered by their rows (in the same order: rows of stored
    // documents ascend).
    let row = |d: u32| rows_of[d as usize];
    let groups: Vec<groups::Group> = group_pairs(store.len(), &outcome.pairs)
        .into_iter()
        .map(|mut g| {
            g.members.iter_mut().for_each(|m| *m = row(*m));
            g.pairs
                .iter_mut()
                .for_each(|p| (p.a, p.b) = (row(p.a), row(p.b)));
            g
        })
        .collect();
    let mut set_aside: Vec<(usize, String)> = outcome
        .set_aside
        .iter()
        .map(|s| (row(s.doc) as usize, s.reason.clone()))
        .chain(no_text.into_iter().map(|(r, why)| (r, why.to_string())))
        .collect();
    set_aside.sort_by_key(|s| s.0);
    let clusters = groups
        .iter()
        .enumerate()
        .map(|(c, g)| {
            let id = |d: u32| ids[d as usize].clone();
            Cluster {
                id: c + 1,
                members: g.members.iter().map(|&d| id(d)).collect(),
                rows: g.members.iter().map(|&d| d as usize).collect(),
                representative: id(g.members[0]),
                pairs: g
                    .pairs
                    .iter()
                    .map(|p| (id(p.a), id(p.b), p.score))
                    .collect(),
            }
        })
        .collect();
    Ok(Dups {
        clusters,
        rows: groups::clusters(ids.len(), &groups),
        set_aside: set_aside
            .into_iter()
            .map(|(r, why)| (ids[r].clone(), why))
            .collect(),
        method: m.name(),
        threshold: detector.threshold(),
        ids,
    })
}
