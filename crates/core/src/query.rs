//! Querying: fingerprint the query with the index's own parameters, look up every code and
//! multi-probe variant, and rank the candidates by the similarity their sketches estimate; the
//! hits as every front end reports them ([`HitRecord`]).

use crate::error::{Error, Result};
use crate::fingerprint::sealed::Analysed;
use crate::fingerprint::{Code, Fingerprint, Path, Query};
use crate::index::{Index, Keys};
use crate::set::{IndexSet, SetQueryResult};
use crate::sketch::{estimate_similarity, simhash};
use std::borrow::Cow;

/// How to query.
#[derive(Clone, Debug)]
pub struct QueryOptions {
    /// Keep at most this many hits (default 100: every near copy in all but huge clusters).
    pub top: usize,
    /// Keep hits whose estimated similarity, rounded to four decimals as the front ends print
    /// it ([`rounded`]), is at least this (default 0.5).
    pub threshold: f32,
    /// Lookups per fuzzy band code (the code and its most likely neighbours; at least 1, the
    /// code itself); `None` = the index's default.
    pub probes: Option<u8>,
    /// Lookups per short-path band (documents under the index's short-path size; at least 1,
    /// the code itself); `None` = the index's default.
    pub short_probes: Option<u8>,
    /// High-similarity search: also look up the similar path, which finds documents that say
    /// nearly the same thing in other words (cosine down to about 0.6), not only near copies.
    pub similar: bool,
    /// Lookups per similar band when `similar`; `None` = the index's default.
    pub similar_probes: Option<u8>,
    /// The query's own name, when it may be in the index (a file path or a document id):
    /// among hits of equal score and code groups, a document with this name, or whose name
    /// ends this path at a `/`, comes first. A document queried against an index that holds
    /// it and an identical copy then finds itself first.
    pub self_name: Option<String>,
}

impl QueryOptions {
    /// High-similarity search with its defaults: the similar path looked up, and hits kept
    /// down to an estimated similarity of 0.4 (the estimate's error at cosine 0.6 is about
    /// 0.08, so a threshold of 0.5 would drop about one pair in eight there).
    pub fn similar() -> Self {
        QueryOptions {
            threshold: 0.4,
            similar: true,
            ..QueryOptions::default()
        }
    }
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            top: 100,
            threshold: 0.5,
            probes: None,
            short_probes: None,
            similar: false,
            similar_probes: None,
            self_name: None,
        }
    }
}

/// One indexed document found for a query.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Hit {
    /// Document number.
    pub doc: u32,
    /// Estimated cosine similarity in [0, 1] from the sketches.
    pub score: f32,
    /// How many code groups (scheme × band, or MinHash band) collided.
    pub codes: u16,
    /// The path whose codes found it (fuzzy before short before exact when several did).
    pub path: Path,
}

/// The answer to one query.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    /// Index terms in the query.
    pub terms: u32,
    /// Codes looked up (with probes).
    pub lookups: usize,
    /// Distinct documents the codes found before ranking.
    pub candidates: usize,
    /// Hits, best first: by score, then collided groups, then document number.
    pub hits: Vec<Hit>,
}

/// True when an index name is the query's own name: equal, or a suffix of it at a `/` (or `\`).
fn is_self(query: &str, name: &str) -> bool {
    query == name
        || (query.len() > name.len()
            && query.ends_with(name)
            && matches!(query.as_bytes()[query.len() - name.len() - 1], b'/' | b'\\'))
}

impl<D: AsRef<[u8]>> Index<D> {
    /// Finds the indexed documents that are near copies of `text`, taken as plain text (remove
    /// markup first, as documents are indexed: [`crate::text::plain_text`]).
    ///
    /// # Errors
    /// [`Error::BlockMismatch`] (or, for files of format 5 and 6,
    /// [`Error::ChecksumMismatch`]) when a part of the file the query reads is damaged.
    pub fn query(&self, text: &str, opts: &QueryOptions) -> Result<QueryResult> {
        let fp = self.fingerprinter().fingerprint_query(text);
        self.rank(fp.analysis(), fp.sketch(), opts)
    }

    /// Finds the indexed documents that are near copies of a document fingerprinted by a
    /// fingerprinter with this index's parameters, classes and stopwords: this index's
    /// [`Index::fingerprinter`] (e.g. on other threads), or
    /// [`Fingerprinter::for_lang`](crate::Fingerprinter::for_lang) with the parameters the index
    /// was built with. A fingerprint not weighed with this index's idf table is weighed here.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the fingerprint was made with other parameters, classes or
    /// stopwords, whose codes would never meet this index's; an error when a part of the file
    /// the query reads is damaged, as for [`Index::query`].
    pub fn query_fingerprint(&self, fp: &impl Query, opts: &QueryOptions) -> Result<QueryResult> {
        let fp = fp.analysis();
        let f = self.fingerprinter();
        if !f.made(fp) {
            return Err(Error::Invalid(
                "the fingerprint was made with other parameters, classes or stopwords than this index's; fingerprint it with Index::fingerprinter()".into(),
            ));
        }
        self.rank(fp, &self.sketch_for(fp), opts)
    }

    /// The sketch of a fingerprint made by this index's fingerprinter, weighed with this
    /// index's idf table.
    pub(crate) fn sketch_for(&self, fp: &Fingerprint) -> Vec<u64> {
        let f = self.fingerprinter();
        let idf = f.idf().expect("an open index has its idf table");
        if fp.weighed.as_ref().map(|w| w.idf) == Some(idf.id()) {
            fp.sketch().to_vec()
        } else {
            simhash(&fp.term_hashes, idf, f.params().sketch_words as usize)
        }
    }

    /// The one query path: probes of `fp`, their postings, and the candidates ranked by how
    /// similar their sketches estimate them to `sketch`.
    fn rank(&self, fp: &Fingerprint, sketch: &[u64], opts: &QueryOptions) -> Result<QueryResult> {
        let probes = self.probes(fp, opts);
        let keys = Keys::of(&probes);
        let (candidates, mut hits) =
            self.candidates(&probes, &keys, sketch, opts.threshold, |_| false)?;
        order_hits(&mut hits, opts, |h| h, |h| self.name(h.doc), |h| (0, h.doc))?;
        Ok(QueryResult {
            terms: fp.terms,
            lookups: probes.len(),
            candidates,
            hits,
        })
    }

    /// The codes a query with `opts` looks up: every band's code and its most likely
    /// neighbours (and the similar path's, when asked).
    pub(crate) fn probes(&self, fp: &Fingerprint, opts: &QueryOptions) -> Vec<Code> {
        let f = self.fingerprinter();
        // The code itself is always looked up.
        let budget = opts.probes.unwrap_or(f.params().probes).max(1);
        let similar = opts.similar.then(|| {
            opts.similar_probes
                .unwrap_or(f.params().similar_probes)
                .max(1)
        });
        let short = opts.short_probes.unwrap_or(f.params().short_probes).max(1);
        f.query_probes(fp, self.resolution(), budget, short, similar)
    }

    /// The documents the `probes` find, but those `skip` says to leave out: how many, and those
    /// whose sketches estimate a similarity to `sketch` of at least `threshold`, unordered.
    pub(crate) fn candidates(
        &self,
        probes: &[Code],
        keys: &Keys,
        sketch: &[u64],
        threshold: f32,
        skip: impl Fn(u32) -> bool,
    ) -> Result<(usize, Vec<Hit>)> {
        // Every (candidate, path, group) that collided, then counted per candidate.
        let mut found: Vec<(u32, Path, u16)> = Vec::new();
        self.lookup_keys(keys, |i, postings| {
            let code = &probes[i];
            found.extend(
                postings
                    .filter(|&doc| !skip(doc))
                    .map(|doc| (doc, code.path, code.group)),
            );
        })?;
        found.sort_unstable();
        found.dedup();
        // The candidates' sketches are scattered over the file: ask for all before reading any.
        for run in found.chunk_by(|a, b| a.0 == b.0) {
            self.prefetch_sketch(run[0].0);
        }
        score_collisions(&found, sketch, threshold, |doc| self.sketch_words(doc))
    }
}

/// The hits among `found`, every (document, path, code group) that a query's codes met, sorted
/// and without repeats: per document, its sketch (read by `words`; `None` for no such
/// document) scored against `sketch`, kept at `threshold` or more with the number of groups
/// that collided; and how many documents there were. An index's candidates and a check's
/// earlier new documents ([`crate::Check`]) are scored here alike.
pub(crate) fn score_collisions<I: Iterator<Item = u64>>(
    found: &[(u32, Path, u16)],
    sketch: &[u64],
    threshold: f32,
    mut words: impl FnMut(u32) -> Result<Option<I>>,
) -> Result<(usize, Vec<Hit>)> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut candidates = 0;
    let least = least_printed(threshold);
    for run in found.chunk_by(|a, b| a.0 == b.0) {
        candidates += 1;
        let doc = run[0].0;
        let Some(words) = words(doc)? else {
            continue;
        };
        let score = estimate_similarity(sketch, words);
        if printed(score) >= least {
            hits.push(Hit {
                doc,
                score,
                codes: run.len() as u16,
                path: run[0].1,
            });
        }
    }
    Ok((candidates, hits))
}

/// Orders hits as every query does, and keeps the first `opts.top`: by score, then collided
/// code groups (more first), then the query's own document (`opts.self_name`; names are read
/// only for ties), then `place`, the document's place in the collection (part, number).
/// Fails when a name it reads is damaged.
pub(crate) fn order_hits<'a, T>(
    hits: &mut Vec<T>,
    opts: &QueryOptions,
    hit: impl Fn(&T) -> &Hit,
    name: impl Fn(&T) -> Result<Option<Cow<'a, str>>>,
    place: impl Fn(&T) -> (usize, u32),
) -> Result<()> {
    // The sort's comparator cannot fail: the first failure is kept and returned after it.
    let failed: std::cell::RefCell<Option<Error>> = Default::default();
    let own = |t: &T| {
        opts.self_name.as_deref().is_some_and(|q| match name(t) {
            Ok(n) => n.is_some_and(|n| is_self(q, &n)),
            Err(e) => {
                failed.borrow_mut().get_or_insert(e);
                false
            }
        })
    };
    hits.sort_by(|a, b| {
        let (x, y) = (hit(a), hit(b));
        y.score
            .total_cmp(&x.score)
            .then(y.codes.cmp(&x.codes))
            .then_with(|| own(b).cmp(&own(a)))
            .then_with(|| place(a).cmp(&place(b)))
    });
    hits.truncate(opts.top);
    failed.into_inner().map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::{is_self, least_printed, printed, rounded};

    /// A hit is kept when the score it is printed with (four decimals) reaches the threshold.
    #[test]
    fn a_threshold_keeps_what_prints_at_or_above_it() {
        let kept = |score: f32, threshold: f32| printed(score) >= least_printed(threshold);
        for (score, threshold, keep) in [
            (0.90396, 0.904, true),  // printed 0.904
            (0.90394, 0.904, false), // printed 0.9039
            (0.9043, 0.9043, true),  // 0.9043 as f32 is a little above it
            (0.90425, 0.9043, true),
            (0.9042, 0.9043, false),
            (0.5, 0.5, true),
            (0.49994, 0.5, false),
            (0.49996, 0.5, true),
            (1.0, 1.0, true),
            (0.0, 0.0, true),
            (-0.2, 0.0, false),
            (0.90396, 0.90395, true), // a fifth decimal: printed 0.904 ≥ 0.90395
            (0.90392, 0.90395, false), // printed 0.9039 < 0.90395
        ] {
            assert_eq!(kept(score, threshold), keep, "{score} at {threshold}");
            assert_eq!(
                rounded(score) >= threshold as f64 - 1e-7,
                keep,
                "{score} at {threshold}"
            );
        }
    }

    #[test]
    fn own_names_match_at_path_boundaries() {
        assert!(is_self("Jupiter.txt", "Jupiter.txt"));
        assert!(is_self("samples/wiki-en/Jupiter.txt", "Jupiter.txt"));
        assert!(is_self("samples\\wiki-en\\Jupiter.txt", "Jupiter.txt"));
        assert!(is_self(
            "samples/wiki-en/Jupiter.txt",
            "wiki-en/Jupiter.txt"
        ));
        assert!(!is_self("samples/wiki-en/NotJupiter.txt", "Jupiter.txt"));
        assert!(!is_self("Jupiter.txt", "samples/Jupiter.txt"));
    }
}

/// A score as the front ends print it: four decimals, so that float noise does not differ
/// between them.
pub fn rounded(score: f32) -> f64 {
    printed(score) / 10000.0
}

/// A score in the units it is printed in: ten-thousandths.
fn printed(score: f32) -> f64 {
    (score as f64 * 10000.0).round()
}

/// The least printed score ([`printed`]) that is at least `threshold`: a hit is kept when the
/// score it is printed with reaches the threshold, so that `--threshold 0.904` keeps a hit
/// printed as 0.904. The margin absorbs the f32 of a decimal threshold (0.9043 is stored a
/// little above it).
fn least_printed(threshold: f32) -> f64 {
    (threshold as f64 * 10000.0 - 1e-3).ceil()
}

pub(crate) fn serialize_score<S: serde::Serializer>(
    score: &f32,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(rounded(*score))
}

/// One hit of a query as the front ends report it (`query --json`, the server, Python).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HitRecord {
    /// The document's id (its name in the index).
    pub id: String,
    /// Estimated cosine similarity, rounded to four decimals when serialized.
    #[serde(serialize_with = "serialize_score")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub score: f32,
    /// 1 for the best hit.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub rank: usize,
    /// Code groups that collided.
    pub codes: u16,
    /// The path that found it: `fuzzy`, `short`, `exact` or `similar`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub path: &'static str,
    /// The document's title, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The index holding it (a file's path or a set's directory, as given), when several
    /// were queried together: the same id may be in more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
}

impl<D: AsRef<[u8]>> Index<D> {
    /// The hits of `r` with their ids and titles, best first, as the front ends report them
    /// (one index: no hit names its index).
    ///
    /// # Errors
    /// As [`Index::name`], when the part of the file holding a name or title is damaged.
    pub fn records(&self, r: &QueryResult) -> Result<Vec<HitRecord>> {
        r.hits
            .iter()
            .enumerate()
            .map(|(rank, h)| {
                Ok(HitRecord {
                    id: self.name(h.doc)?.unwrap_or_default().into_owned(),
                    score: h.score,
                    rank: rank + 1,
                    codes: h.codes,
                    path: h.path.name(),
                    title: self.title(h.doc)?.map(|t| t.into_owned()),
                    index: None,
                })
            })
            .collect()
    }
}

impl<D: AsRef<[u8]>> IndexSet<D> {
    /// The hits of `r` with their ids and titles, best first.
    ///
    /// # Errors
    /// As [`IndexSet::name`], when the part of a file holding a name or title is damaged.
    pub fn records(&self, r: &SetQueryResult) -> Result<Vec<HitRecord>> {
        r.hits
            .iter()
            .enumerate()
            .map(|(rank, h)| {
                Ok(HitRecord {
                    id: self
                        .name(h.part, h.hit.doc)?
                        .unwrap_or_default()
                        .into_owned(),
                    score: h.hit.score,
                    rank: rank + 1,
                    codes: h.hit.codes,
                    path: h.hit.path.name(),
                    title: self.title(h.part, h.hit.doc)?.map(|t| t.into_owned()),
                    index: self.source(h.part).map(str::to_owned),
                })
            })
            .collect()
    }
}
