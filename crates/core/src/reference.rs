//! The reference corpus: the expected share of index terms per prefix in a language, and its
//! partition into the k prefix classes of fuzzy-fingerprinting.
//!
//! A reference table (`reference-corpus/<lang>.tsv`) lists, for every prefix (the first two
//! characters of a term, digits folded to `0`), the share of term occurrences in the language that
//! start with it. [`Classes::new`] packs the prefixes into k classes of near-equal expected share.

use crate::error::{Error, Result};
use crate::hash;
use crate::text::{self, Lang};
use std::collections::HashMap;

/// How many characters of a term make its prefix.
pub const PREFIX_CHARS: usize = 2;

/// The prefix key of a term: its first [`PREFIX_CHARS`] characters, with decimal digits folded to
/// `0` (as wordfreq folds numbers).
pub fn prefix_key(term: &str) -> String {
    term.chars()
        .take(PREFIX_CHARS)
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect()
}

/// A reference distribution: prefix → expected share of term occurrences.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The language (ISO 639-1 code).
    pub lang: String,
    /// `(prefix, share)` sorted by prefix; shares sum to 1.
    pub prefixes: Vec<(String, f64)>,
    /// Free-text provenance lines (source, licence, command), kept as `#` comments in the table.
    pub provenance: Vec<String>,
}

impl Reference {
    /// The built-in reference table of a language, from `reference-corpus/`.
    pub fn builtin(lang: Lang) -> Reference {
        let raw = lang.files().reference;
        Reference::parse(raw).expect("built-in reference table is valid (tested)")
    }

    /// Reads a table written by [`Reference::to_tsv`].
    pub fn parse(raw: &str) -> Result<Reference> {
        let mut lang = None;
        let mut provenance = Vec::new();
        let mut prefixes = Vec::new();
        for (no, line) in raw.lines().enumerate() {
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim();
                if let Some(l) = comment.strip_prefix("lang:") {
                    lang = Some(l.trim().to_string());
                } else if !comment.is_empty() {
                    provenance.push(comment.to_string());
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let bad = || {
                Error::Invalid(format!(
                    "reference table line {}: expected `prefix<TAB>share`",
                    no + 1
                ))
            };
            let (p, share) = line.split_once('\t').ok_or_else(bad)?;
            let share: f64 = share.trim().parse().map_err(|_| bad())?;
            if !(share.is_finite() && share > 0.0) {
                return Err(bad());
            }
            prefixes.push((p.to_string(), share));
        }
        let lang =
            lang.ok_or_else(|| Error::Invalid("reference table has no `# lang:` line".into()))?;
        if prefixes.is_empty() {
            return Err(Error::Invalid("reference table has no prefixes".into()));
        }
        prefixes.sort_by(|a, b| a.0.cmp(&b.0));
        prefixes.dedup_by(|a, b| a.0 == b.0);
        let total: f64 = prefixes.iter().map(|p| p.1).sum();
        for p in &mut prefixes {
            p.1 /= total;
        }
        Ok(Reference {
            lang,
            prefixes,
            provenance,
        })
    }

    /// The table as text: `# lang:` and provenance comments, then `prefix<TAB>share` lines.
    pub fn to_tsv(&self) -> String {
        let mut out = format!(
            "# pocketdex reference distribution\n# lang: {}\n",
            self.lang
        );
        for line in &self.provenance {
            out.push_str(&format!("# {line}\n"));
        }
        for (p, share) in &self.prefixes {
            out.push_str(&format!("{p}\t{share:.6e}\n"));
        }
        out
    }

    /// Builds a reference from a word frequency list (e.g. wordfreq's, read by
    /// `pocketdex_eval::wordfreq::read`): `(word, frequency)` in any order. Stopwords and words
    /// without letters are left out, as the analyzer leaves them out of documents; prefixes whose
    /// share is below `min_share` are dropped (they fall back to a hashed class).
    pub fn from_word_frequencies(
        words: impl IntoIterator<Item = (String, f64)>,
        lang: Lang,
        analyzer: &text::Analyzer,
        min_share: f64,
    ) -> Result<Reference> {
        let mut mass: HashMap<String, f64> = HashMap::new();
        for (word, freq) in words {
            // A list entry may hold several segmentation words ("don't" stays one).
            for w in text::words(&word) {
                if text::is_content_word(&w) && !analyzer.is_stopword(&w) {
                    *mass.entry(prefix_key(&w)).or_default() += freq;
                }
            }
        }
        let total: f64 = mass.values().sum();
        if total <= 0.0 {
            return Err(Error::Invalid(
                "the word list holds no content words of the language".into(),
            ));
        }
        let mut prefixes: Vec<(String, f64)> = mass
            .into_iter()
            .map(|(p, m)| (p, m / total))
            .filter(|(_, s)| *s >= min_share)
            .collect();
        prefixes.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Reference {
            lang: lang.code().to_string(),
            prefixes,
            provenance: Vec::new(),
        })
    }
}

/// A prefix key of at most 8 UTF-8 bytes as one number (zero-padded: a key never holds U+0000,
/// which is no word character, so two keys never pack alike).
fn packed(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..key.len()].copy_from_slice(key);
    u64::from_le_bytes(b)
}

/// The k prefix classes: which class each known prefix belongs to and each class's expected share.
#[derive(Clone, Debug, PartialEq)]
pub struct Classes {
    /// `(prefix, class)`, sorted by prefix.
    table: Vec<(String, u16)>,
    /// The table by [`packed`] prefix key.
    map: HashMap<u64, u16, hash::FastState>,
    /// Expected share of term occurrences per class; sums to 1.
    expected: Vec<f64>,
    /// [`Classes::class_of`] of the terms that start with two ASCII lowercase letters or digits,
    /// and of those that are one, computed once from the rest.
    ascii: AsciiClasses,
}

/// The characters [`AsciiClasses`] covers: ASCII lowercase letters and digits (terms are
/// case-folded), numbered 0–35 by [`symbol`].
const SYMBOLS: usize = 36;

/// The number of an ASCII lowercase letter or digit among [`SYMBOLS`].
#[inline]
fn symbol(b: u8) -> Option<usize> {
    match b {
        b'a'..=b'z' => Some((b - b'a') as usize),
        b'0'..=b'9' => Some(26 + (b - b'0') as usize),
        _ => None,
    }
}

/// The class of each prefix of one or two [`SYMBOLS`]: `s0 · 36 + s1`, then `36² + s0`. Made
/// when the classes are (1,332 entries, tens of microseconds), as an index opens.
#[derive(Clone, PartialEq)]
struct AsciiClasses(Box<[u16]>);

impl std::fmt::Debug for AsciiClasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Derived from the table: nothing to show beside it.
        f.write_str("AsciiClasses(..)")
    }
}

impl Classes {
    /// Packs the reference's prefixes into `k` classes of near-equal expected share: prefixes in
    /// order of falling share (ties by prefix), each into the class with the least share so far
    /// (ties to the lowest class): the LPT rule, deterministic.
    pub fn new(reference: &Reference, k: u16) -> Result<Classes> {
        if k < 2 || k as usize > reference.prefixes.len() {
            return Err(Error::Invalid(format!(
                "number of prefix classes must be between 2 and {} (the reference's prefixes), not {k}",
                reference.prefixes.len()
            )));
        }
        let mut order: Vec<&(String, f64)> = reference.prefixes.iter().collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut expected = vec![0f64; k as usize];
        let mut table = Vec::with_capacity(order.len());
        for (prefix, share) in order {
            let (class, _) = expected
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
                .expect("k >= 2");
            expected[class] += share;
            table.push((prefix.clone(), class as u16));
        }
        table.sort();
        Classes::from_parts(table, expected)
    }

    /// Classes from their stored parts (as read from an index).
    pub fn from_parts(table: Vec<(String, u16)>, expected: Vec<f64>) -> Result<Classes> {
        let k = expected.len();
        if k < 2 || k > u16::MAX as usize {
            return Err(Error::format(format!("{k} prefix classes")));
        }
        if expected.iter().any(|p| !(p.is_finite() && *p > 0.0)) {
            return Err(Error::format("a prefix class has no expected share"));
        }
        if table.iter().any(|(_, c)| *c as usize >= k) {
            return Err(Error::format(
                "a prefix maps to a class that does not exist",
            ));
        }
        // Keys longer than 8 bytes (no two characters are) cannot be looked up: left out.
        let map = table
            .iter()
            .filter(|(p, _)| p.len() <= 8)
            .map(|(p, c)| (packed(p.as_bytes()), *c))
            .collect();
        let mut classes = Classes {
            table,
            map,
            expected,
            ascii: AsciiClasses(Box::default()),
        };
        // In the order `symbol` numbers them: every pair, then every single symbol.
        let symbols = ('a'..='z').chain('0'..='9');
        let pairs = symbols
            .clone()
            .flat_map(|x| symbols.clone().map(move |y| format!("{x}{y}")));
        classes.ascii = AsciiClasses(
            pairs
                .chain(symbols.clone().map(String::from))
                .map(|t| classes.class_of_prefix(&t) as u16)
                .collect(),
        );
        Ok(classes)
    }

    /// The number of classes, k.
    pub fn k(&self) -> usize {
        self.expected.len()
    }

    /// Expected share per class.
    pub fn expected(&self) -> &[f64] {
        &self.expected
    }

    /// `(prefix, class)` sorted by prefix.
    pub fn table(&self) -> &[(String, u16)] {
        &self.table
    }

    /// The class of a term: its prefix's class; for a prefix the reference does not know, the
    /// class of its first character, else `xxh3_64(prefix, PREFIX_SEED) mod k`.
    #[inline]
    pub fn class_of(&self, term: &str) -> usize {
        // Most terms start with two ASCII letters or digits: one load, no key built or hashed.
        match *term.as_bytes() {
            [x, y, ..] => {
                if let (Some(x), Some(y)) = (symbol(x), symbol(y)) {
                    return self.ascii.0[x * SYMBOLS + y] as usize;
                }
            }
            [x] => {
                if let Some(x) = symbol(x) {
                    return self.ascii.0[SYMBOLS * SYMBOLS + x] as usize;
                }
            }
            [] => {}
        }
        self.class_of_prefix(term)
    }

    /// [`Classes::class_of`], from the term's characters.
    fn class_of_prefix(&self, term: &str) -> usize {
        // The prefix key built on the stack: this runs once per distinct term of every document.
        let mut buf = [0u8; 4 * PREFIX_CHARS];
        let mut len = 0;
        let mut first_len = 0;
        for c in term.chars().take(PREFIX_CHARS) {
            let c = if c.is_ascii_digit() { '0' } else { c };
            len += c.encode_utf8(&mut buf[len..]).len();
            if first_len == 0 {
                first_len = len;
            }
        }
        if let Some(&c) = self.map.get(&packed(&buf[..len])) {
            return c as usize;
        }
        if let Some(&c) = self.map.get(&packed(&buf[..first_len])) {
            return c as usize;
        }
        let key = &buf[..len];
        (hash::h64(key, hash::PREFIX_SEED) % self.k() as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII table gives what the characters give, for terms of every kind.
    #[test]
    fn ascii_classes_are_the_prefix_classes() {
        for lang in Lang::ALL {
            let c = Classes::new(&Reference::builtin(lang), 24).unwrap();
            let mut terms: Vec<String> = Vec::new();
            for a in (0u8..128).map(char::from) {
                terms.push(a.to_string());
                for b in ['a', 'z', '0', '7', 'é', 'ß', '_', '\'', 'Q'] {
                    terms.push(format!("{a}{b}"));
                    terms.push(format!("{a}{b}ter"));
                }
            }
            terms.extend(["über", "éa", "ändern", "x", "9th", "42", "a", "ñu"].map(String::from));
            for t in &terms {
                assert_eq!(c.class_of(t), c.class_of_prefix(t), "{t:?}");
            }
            // And the table is not all one class.
            let distinct: std::collections::HashSet<usize> =
                terms.iter().map(|t| c.class_of(t)).collect();
            assert!(distinct.len() > 10);
        }
    }

    #[test]
    fn builtin_references_parse_and_are_normalised() {
        for lang in Lang::ALL {
            let r = Reference::builtin(lang);
            assert_eq!(r.lang, lang.code());
            let total: f64 = r.prefixes.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-9);
            assert!(r.prefixes.len() > 300, "{} prefixes", r.prefixes.len());
            assert_eq!(
                Reference::parse(&r.to_tsv()).unwrap().prefixes.len(),
                r.prefixes.len()
            );
        }
    }

    #[test]
    fn classes_are_balanced_and_deterministic() {
        let r = Reference::builtin(Lang::En);
        let c = Classes::new(&r, 24).unwrap();
        assert_eq!(c, Classes::new(&r, 24).unwrap());
        let (lo, hi) = c
            .expected()
            .iter()
            .fold((1f64, 0f64), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        assert!(hi / lo < 1.2, "classes unbalanced: {lo} .. {hi}");
        // Known prefixes land in their class; unknown ones fall back deterministically.
        assert_eq!(c.class_of("theory"), c.class_of("thermal"));
        assert_eq!(c.class_of("ꙮꙮꙮ"), c.class_of("ꙮꙮ"));
        assert!(c.class_of("ꙮꙮ") < 24);
    }
}
