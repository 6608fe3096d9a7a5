//! Retrieval equivalence: documents whose canonical texts have the same 128-bit hash ([`Exact`]).
//! The same grouping by a 128-bit key ([`classes`]) lets every other method compare documents
//! with identical features only once.

use super::canon::Canonicalizer;
use super::compare::Comparison;
use super::{Described, Describer, Docs, Found, Info, Method, Options, Scorer};
use pocketdex::error::Result;

/// Retrieval equivalence: identical canonical text (content-equivalence paper). Every later
/// document with the canonical text of an earlier one is a pair with it (score 1); there is
/// nothing else to compare, so the threshold is not used.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exact;

impl Method for Exact {
    fn info(&self) -> &'static Info {
        &Info {
            name: "exact",
            description:
                "Retrieval equivalence: identical canonical text (content-equivalence paper)",
            default_threshold: 1.0,
            estimates: false,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!(
            "identical canonical text (levels 1–{}: up to {})",
            o.level.number(),
            o.level.describe()
        )
    }

    /// The measure alone: a pair has equal canonical texts, whatever the threshold.
    fn criterion(&self, o: &Options, _threshold: f64) -> String {
        self.measure(o)
    }

    /// The 128-bit hash of the canonical text, which is also the identity.
    fn describer(&self, o: &Options) -> Result<Describer> {
        let canon = Canonicalizer::new(o.lang);
        let level = o.level;
        Ok(Box::new(move |text| {
            let c = canon.canonical_plain(text, level);
            if c.is_empty() {
                return Err(format!(
                    "empty after canonicalization (up to {})",
                    level.describe()
                ));
            }
            let h = Canonicalizer::hash(&c);
            // The identity is all the method needs: no fields.
            Ok(Described::new(&[], h))
        }))
    }

    /// The detector's grouping by identity has found every pair already: the later copies are
    /// the candidates.
    fn find(&self, docs: &Docs<'_>, _: &Options, _: f64) -> Result<Found> {
        Ok(Found {
            candidates: docs.copies() as u64,
            ..Found::default()
        })
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        let docs = *docs;
        Ok(Box::new(move |a, b| {
            let (x, y) = (docs.identity(a)?, docs.identity(b)?);
            (x == y).then_some(1.0)
        }))
    }

    /// Equality at the last level (all six).
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        // At the options' level, as `dups` groups: a document empty there is set aside.
        let at = c.exact.iter().find(|l| l.level == c.level);
        let score = if at.is_some_and(|l| l.equal && !l.empty) {
            1.0
        } else {
            0.0
        };
        (score, score + 1e-9 >= self.default_threshold())
    }
}

/// Documents split by a 128-bit key: the first document of each key stands for the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classes {
    /// The first document of every distinct key, ascending.
    pub reps: Vec<u32>,
    /// (first document, later document) for every later document with the same key, sorted.
    pub copies: Vec<(u32, u32)>,
}

/// Splits the documents that have a key (`None` = set aside) into classes of equal keys. Sorting
/// keys is O(n log n); no pair of documents is compared.
///
/// # Example
/// ```
/// use pocketdex_methods::exact::classes;
/// let c = classes(&[Some(7), Some(9), None, Some(7), Some(7)]);
/// assert_eq!(c.reps, [0, 1]);
/// assert_eq!(c.copies, [(0, 3), (0, 4)]);
/// ```
pub fn classes(keys: &[Option<u128>]) -> Classes {
    let mut order: Vec<(u128, u32)> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.map(|k| (k, i as u32)))
        .collect();
    order.sort_unstable();
    let mut reps = Vec::new();
    let mut copies = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let first = order[i].1;
        reps.push(first);
        let mut j = i + 1;
        while j < order.len() && order[j].0 == order[i].0 {
            copies.push((first, order[j].1));
            j += 1;
        }
        i = j;
    }
    reps.sort_unstable();
    copies.sort_unstable();
    Classes { reps, copies }
}
