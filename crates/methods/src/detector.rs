//! The [`Detector`] that runs any [`Method`]: it sets the method up, keeps each document's
//! [`Features`] in a [`FeatureStore`], compares documents with identical features once, and maps
//! what the method found back to document numbers; plus the types a method reads and returns.

use super::groups::Collected;
use super::shingles::jaccard;
use super::store::{FeatureStore, Record};
use super::{exact, Method, Options, Pair, IDENTITY_SEED};
use pocketdex::error::{Error, Result};
use pocketdex::hash;
use rayon::prelude::*;
use std::fmt;

/// What describes one document for a method set up with its options: the document's features,
/// or why it is set aside. Made by [`Method::describer`].
pub type Describer =
    Box<dyn Fn(&str) -> std::result::Result<Described, String> + Send + Sync + 'static>;

/// The exact score of a pair of documents, or `None` when they cannot be a pair; made by
/// [`Method::scorer`].
pub type Scorer<'a> = Box<dyn Fn(u32, u32) -> Option<f64> + Sync + 'a>;

/// What a method keeps of a document it could describe: its features as a [`Record`] of a few
/// fields of plain values (read back with [`Docs::record`]), and their 128-bit identity, equal
/// for features that score the same against every document.
#[derive(Clone)]
pub struct Described {
    words: Vec<u64>,
    identity: u128,
}

impl Described {
    /// Features of `fields` (each a slice of plain values, as bytes: `bytemuck::cast_slice`)
    /// and their identity.
    pub fn new(fields: &[&[u8]], identity: u128) -> Self {
        Described {
            words: Record::write(fields),
            identity,
        }
    }

    /// The features as a record (what the store will hand back).
    #[cfg(test)]
    pub(crate) fn record(&self) -> Record<'_> {
        Record::of_words(&self.words)
    }

    /// The identity of features that are a sequence of 64-bit words: their 128-bit hash, seeded
    /// with [`IDENTITY_SEED`](crate::IDENTITY_SEED).
    pub fn identity_of(words: impl IntoIterator<Item = u64>) -> u128 {
        let bytes: Vec<u8> = words.into_iter().flat_map(u64::to_le_bytes).collect();
        hash::h128(&bytes, IDENTITY_SEED)
    }
}

/// What a method keeps of one document: its features, or why it is set aside.
#[derive(Clone)]
pub struct Features {
    method: &'static dyn Method,
    kept: std::result::Result<Described, String>,
}

impl Features {
    /// Why the document is set aside, if it is.
    pub fn set_aside(&self) -> Option<&str> {
        self.kept.as_ref().err().map(String::as_str)
    }

    /// The method these features belong to.
    pub fn method(&self) -> &'static dyn Method {
        self.method
    }

    /// The record's words and the identity, or why the document is set aside.
    pub(crate) fn into_kept(self) -> std::result::Result<(Vec<u64>, u128), String> {
        self.kept.map(|d| (d.words, d.identity))
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Features");
        s.field("method", &self.method.name());
        match &self.kept {
            Ok(d) => s.field("identity", &format_args!("{:032x}", d.identity)),
            Err(reason) => s.field("set_aside", reason),
        };
        s.finish()
    }
}

/// The documents of a collection as a method sees them: every document's features, and the
/// ones to compare.
#[derive(Clone, Copy)]
pub struct Docs<'a> {
    store: &'a FeatureStore,
    reps: &'a [u32],
    stands_for: &'a [u32],
    copies: usize,
}

impl<'a> Docs<'a> {
    /// Documents in the collection, set-aside ones and copies included.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// True when the collection has no documents.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// The documents to compare, ascending: in [`Method::find`], the first document of every
    /// distinct identity; in [`Method::scorer`], every document not set aside.
    pub fn reps(&self) -> &'a [u32] {
        self.reps
    }

    /// Later documents with the same identity as one of [`Docs::reps`] (in [`Method::find`]).
    pub fn copies(&self) -> usize {
        self.copies
    }

    /// Per document of [`Docs::reps`], how many documents of the collection it stands for:
    /// itself and its later copies (1 each in [`Method::scorer`]). A method that learns
    /// collection statistics (SpotSigs' document frequencies) counts every copy with this.
    pub fn stands_for(&self) -> &'a [u32] {
        self.stands_for
    }

    /// True when the features were spilled to a temporary file (beyond
    /// [`Options::memory_limit`]): a method reading them at random pays for it in page faults.
    pub fn spilled(&self) -> bool {
        self.store.spilled()
    }

    /// The identity of document `doc`'s features (see [`Described`]); `None` when set aside.
    pub fn identity(&self, doc: u32) -> Option<u128> {
        self.store.identities()[doc as usize]
    }

    /// Document `doc`'s features, as its method wrote them; `None` when it is set aside.
    pub fn record(&self, doc: u32) -> Option<Record<'a>> {
        self.store.record(doc)
    }

    /// The exact Jaccard of two documents' sets, for [`Method::scorer`] (minhash, trials): the
    /// sorted set is field `field` of a record, of `u64`.
    pub fn jaccard_scorer(&self, field: usize) -> Scorer<'a> {
        let store = self.store;
        Box::new(move |a, b| {
            let (x, y) = (store.record(a)?, store.record(b)?);
            Some(jaccard(x.field::<u64>(field), y.field::<u64>(field)))
        })
    }

    /// The features of the documents to compare, in the order of [`Docs::reps`].
    ///
    /// # Errors
    /// When one of them is set aside (a method's `reps` are never).
    pub fn reps_records(&self) -> Result<Vec<Record<'a>>> {
        self.reps
            .iter()
            .map(|&r| {
                self.record(r).ok_or_else(|| {
                    Error::Invalid(format!("document {r} is set aside, not to be compared"))
                })
            })
            .collect()
    }
}

/// What [`Method::find`] found among the documents it compared.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// The pairs at or above the threshold, numbered by position in [`Docs::reps`].
    pub pairs: Vec<Pair>,
    /// Candidate pairs produced before the threshold (and verification).
    pub candidates: u64,
    /// Method-specific diagnostics, one line each.
    pub notes: Vec<String>,
    /// Documents the method could not match after seeing the whole collection (SpotSigs: too
    /// few signatures left by its idf filter), numbered by position in [`Docs::reps`]; their
    /// identical copies are set aside with them.
    pub set_aside: Vec<SetAside>,
    /// Pairs found, when the method collected them in a [`Collected`] ([`Found::collected`]),
    /// which may hold fewer; `None`: `pairs` are all it found.
    pub found: Option<u64>,
}

impl Found {
    /// What a method that kept its pairs in a [`Collected`] found, with its candidates.
    pub fn collected(kept: Collected, candidates: u64) -> Found {
        Found {
            found: Some(kept.found()),
            pairs: kept.into_pairs(),
            candidates,
            ..Found::default()
        }
    }
}

impl From<(Vec<Pair>, u64)> for Found {
    /// What most methods find: the pairs and the candidates, without notes or documents set
    /// aside.
    fn from((pairs, candidates): (Vec<Pair>, u64)) -> Found {
        Found {
            pairs,
            candidates,
            ..Found::default()
        }
    }
}

/// A document a method could not describe, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SetAside {
    /// Document number.
    pub doc: u32,
    /// Why.
    pub reason: String,
}

/// Counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Documents given.
    pub documents: u64,
    /// Documents with distinct features (the ones compared).
    pub distinct: u64,
    /// Later copies of a document with identical features.
    pub copies: u64,
    /// Candidate pairs the method produced before the threshold (and verification).
    pub candidates: u64,
    /// Pairs at or above the threshold, before groups larger than
    /// [`Options::spanning_above`] were reduced to spanning trees.
    pub pairs_found: u64,
    /// Groups listed with a spanning tree of their pairs instead of every pair.
    pub spanned_groups: u64,
}

/// What [`Detector::find`] found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The pairs at or above the threshold, sorted by (a, b); a group of more than
    /// [`Options::spanning_above`] documents keeps a maximum spanning tree of its pairs.
    pub pairs: Vec<Pair>,
    /// Documents set aside.
    pub set_aside: Vec<SetAside>,
    /// Counts.
    pub stats: Stats,
    /// Method-specific diagnostics, one line each (e.g. spex's passes).
    pub notes: Vec<String>,
}

/// One method with its options, ready to describe documents and find pairs.
pub struct Detector {
    method: &'static dyn Method,
    options: Options,
    threshold: f64,
    describe: Describer,
}

impl fmt::Debug for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Detector")
            .field("method", &self.method.name())
            .field("options", &self.options)
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl Detector {
    /// A detector; fails when an option is out of range.
    pub fn new(method: &'static dyn Method, options: Options) -> Result<Self> {
        options.validate()?;
        let threshold = options
            .threshold
            .unwrap_or_else(|| method.default_threshold());
        let describe = method.describer(&options)?;
        Ok(Detector {
            method,
            options,
            threshold,
            describe,
        })
    }

    /// The method.
    pub fn method(&self) -> &'static dyn Method {
        self.method
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The threshold in force.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// What the score measures, with the parameters in force.
    pub fn measure(&self) -> String {
        self.method.measure(&self.options)
    }

    /// What a reported pair satisfies, in words: the measure and the threshold.
    pub fn criterion(&self) -> String {
        self.method.criterion(&self.options, self.threshold)
    }

    /// Describes one document (plain text, markup already removed). Independent per document,
    /// so documents can be prepared in parallel.
    pub fn prepare(&self, text: &str) -> Features {
        Features {
            method: self.method,
            kept: (self.describe)(text),
        }
    }

    /// An empty store for this detector's features, keeping at most
    /// [`Options::memory_limit`] bytes of them in memory.
    pub fn store(&self) -> FeatureStore {
        FeatureStore::new(self.options.memory_limit)
    }

    /// The features in a sealed store of their own.
    fn stored(&self, features: impl IntoIterator<Item = Features>) -> Result<FeatureStore> {
        let mut store = self.store();
        for f in features {
            store.push(f)?;
        }
        store.seal()?;
        Ok(store)
    }

    fn check(&self, store: &FeatureStore) -> Result<()> {
        if store.unsealed() {
            return Err(Error::Invalid(
                "a spilled feature store must be sealed before it is read".into(),
            ));
        }
        match store.method() {
            Some(m) if m != self.method.name() => Err(Error::Invalid(format!(
                "features of method {m} given to a {} detector",
                self.method.name()
            ))),
            _ => Ok(()),
        }
    }

    /// Finds every pair of documents at or above the threshold (see the crate docs for how
    /// each method finds them). Document numbers are positions in `features`. Copies the
    /// features into a [`FeatureStore`]; a large collection pushes them into
    /// [`Detector::store`] as they are made and calls [`Detector::find_in`].
    pub fn find(&self, features: &[Features]) -> Result<Outcome> {
        self.find_in(&self.stored(features.iter().cloned())?)
    }

    /// [`Detector::find`] over a sealed store of this detector's features.
    pub fn find_in(&self, store: &FeatureStore) -> Result<Outcome> {
        self.check(store)?;
        let keys = store.identities();
        let mut set_aside: Vec<SetAside> = store
            .set_aside()
            .iter()
            .map(|(doc, reason)| SetAside {
                doc: *doc,
                reason: reason.clone(),
            })
            .collect();
        let classes = exact::classes(keys);
        let mut stands_for = vec![1u32; classes.reps.len()];
        for &(first, _) in &classes.copies {
            let r = classes
                .reps
                .binary_search(&first)
                .expect("a copy's first is a rep");
            stands_for[r] += 1;
        }
        let docs = Docs {
            store,
            reps: &classes.reps,
            stands_for: &stands_for,
            copies: classes.copies.len(),
        };
        let found = self.method.find(&docs, &self.options, self.threshold)?;
        let mut found_pairs = found.found.unwrap_or(found.pairs.len() as u64);
        let mut pairs: Vec<Pair> = found
            .pairs
            .into_iter()
            .map(|mut p| {
                p.a = classes.reps[p.a as usize];
                p.b = classes.reps[p.b as usize];
                p
            })
            .collect();
        // Set aside after the fact: the reps the method named, and their copies with them.
        let late: std::collections::HashMap<u32, String> = found
            .set_aside
            .into_iter()
            .map(|s| (classes.reps[s.doc as usize], s.reason))
            .collect();
        for &(first, later) in &classes.copies {
            match late.get(&first) {
                Some(reason) => set_aside.push(SetAside {
                    doc: later,
                    reason: reason.clone(),
                }),
                None => {
                    pairs.push(Pair::identical(first, later));
                    found_pairs += 1;
                }
            }
        }
        set_aside.extend(
            late.into_iter()
                .map(|(doc, reason)| SetAside { doc, reason }),
        );
        set_aside.sort_by_key(|s| s.doc);
        pairs.sort_by_key(|p| (p.a, p.b));
        let (pairs, spanned) =
            super::groups::spanning(store.len(), pairs, self.options.spanning_above);
        Ok(Outcome {
            pairs,
            set_aside,
            stats: Stats {
                documents: store.len() as u64,
                distinct: classes.reps.len() as u64,
                copies: classes.copies.len() as u64,
                candidates: found.candidates,
                pairs_found: found_pairs,
                spanned_groups: spanned,
            },
            notes: found.notes,
        })
    }

    /// The exact score of every pair of documents that reaches the threshold, computed directly
    /// for all n² pairs (for tests and small collections): what [`Detector::find`] must agree
    /// with. For simhash, pairs are those within [`Options::max_hamming`] bits (and, when
    /// verifying, with cosine ≥ threshold). Pairs must share something (score > 0).
    pub fn brute_force(&self, features: &[Features]) -> Result<Vec<Pair>> {
        let store = self.stored(features.iter().cloned())?;
        self.check(&store)?;
        let t = self.threshold;
        let live: Vec<u32> = (0..store.len() as u32)
            .filter(|&i| store.identities()[i as usize].is_some())
            .collect();
        let ones = vec![1; live.len()];
        let docs = Docs {
            store: &store,
            reps: &live,
            stands_for: &ones,
            copies: 0,
        };
        let score = self.method.scorer(&docs, &self.options)?;
        let pairs: Vec<Pair> = live
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, &a)| {
                let score = &score;
                live[i + 1..].iter().filter_map(move |&b| {
                    let s = score(a, b)?;
                    (s > 0.0 && s + 1e-9 >= t).then_some(Pair::new(a, b, s))
                })
            })
            .collect();
        Ok(pairs)
    }
}

/// Describes every text in parallel and finds the pairs: [`Detector::new`], [`Detector::prepare`]
/// and [`Detector::find`] in one call.
pub fn find_pairs<S: AsRef<str> + Sync>(
    method: &'static dyn Method,
    texts: &[S],
    options: &Options,
) -> Result<Outcome> {
    let detector = Detector::new(method, options.clone())?;
    let features: Vec<Features> = texts
        .par_iter()
        .map(|t| detector.prepare(t.as_ref()))
        .collect();
    // Moved into the store, not copied as `Detector::find` must.
    detector.find_in(&detector.stored(features)?)
}
