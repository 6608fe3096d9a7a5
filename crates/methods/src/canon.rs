//! Canonicalization at the six cumulative levels of the content-equivalence paper (Bernstein &
//! Zobel, 2005): whitespace normalized; markup removed; punctuation removed; case folded; stop
//! words removed; words stemmed (Snowball, English or German). Each level applies every measure of
//! the levels before it, on the crate's one text path (`text::plain_text`, UAX #29 words,
//! `text::fold`, the language's stopwords).

use super::CANON_SEED;
use pocketdex::hash;
use pocketdex::text::{self, Analyzer, Lang};
use std::borrow::Cow;

/// A canonicalization level; each one includes all the levels before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// 1. Runs of white space become one space; leading and trailing space is dropped.
    Whitespace,
    /// 2. HTML markup removed (when the text looks like HTML), as the corpus reader does.
    Markup,
    /// 3. Punctuation removed: only UAX #29 words (segments with a letter or digit) remain.
    Punctuation,
    /// 4. Case folded (Unicode lowercase).
    Case,
    /// 5. Stop words of the language removed.
    Stopwords,
    /// 6. Words stemmed with the language's Snowball stemmer.
    Stem,
}

impl Level {
    /// Every level, in order.
    pub const ALL: [Level; 6] = [
        Level::Whitespace,
        Level::Markup,
        Level::Punctuation,
        Level::Case,
        Level::Stopwords,
        Level::Stem,
    ];

    /// The level's number, 1 to 6, as in the paper.
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// One line on what the level does, for help texts.
    pub fn description(self) -> &'static str {
        match self {
            Level::Whitespace => "1. Runs of white space become one space; leading and trailing space is dropped",
            Level::Markup => "2. HTML markup removed (when the text looks like HTML), as the corpus reader does",
            Level::Punctuation => "3. Punctuation removed: only UAX #29 words (segments with a letter or digit) remain",
            Level::Case => "4. Case folded (Unicode lowercase)",
            Level::Stopwords => "5. Stop words of the language removed",
            Level::Stem => "6. Words stemmed with the language's Snowball stemmer",
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Whitespace => "whitespace",
            Level::Markup => "markup",
            Level::Punctuation => "punctuation",
            Level::Case => "case",
            Level::Stopwords => "stopwords",
            Level::Stem => "stem",
        }
    }

    /// What the level does, in the paper's words.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Whitespace => "whitespace normalized",
            Level::Markup => "markup removed",
            Level::Punctuation => "punctuation removed",
            Level::Case => "case folded",
            Level::Stopwords => "stop words removed",
            Level::Stem => "words stemmed",
        }
    }
}

/// Turns documents into canonical text at any [`Level`], for one language.
///
/// # Example
/// ```
/// use pocketdex_methods::canon::{Canonicalizer, Level};
/// use pocketdex::Lang;
/// let c = Canonicalizer::new(Lang::En);
/// let raw = "<p>The  Cats were <b>running</b>!</p>";
/// assert_eq!(c.canonical(raw, Level::Punctuation), "The Cats were running");
/// assert_eq!(c.canonical(raw, Level::Stem), "cat run");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Canonicalizer {
    lang: Lang,
    analyzer: Analyzer,
    stemmer: rust_stemmers::Stemmer,
}

impl std::fmt::Debug for Canonicalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canonicalizer")
            .field("lang", &self.lang)
            .finish_non_exhaustive()
    }
}

impl Canonicalizer {
    /// A canonicalizer with the built-in stopwords and the Snowball stemmer of `lang`.
    pub fn new(lang: Lang) -> Self {
        Self::with_analyzer(lang, Analyzer::for_lang(lang))
    }

    /// A canonicalizer with other stopwords and the Snowball stemmer of `lang`.
    pub fn with_analyzer(lang: Lang, analyzer: Analyzer) -> Self {
        let algorithm = match lang {
            Lang::En => rust_stemmers::Algorithm::English,
            Lang::De => rust_stemmers::Algorithm::German,
            Lang::Fr => rust_stemmers::Algorithm::French,
            Lang::Es => rust_stemmers::Algorithm::Spanish,
            Lang::It => rust_stemmers::Algorithm::Italian,
            Lang::Pt => rust_stemmers::Algorithm::Portuguese,
        };
        Canonicalizer {
            lang,
            analyzer,
            stemmer: rust_stemmers::Stemmer::create(algorithm),
        }
    }

    /// The language.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The stopwords (and the content-word rule) every method uses.
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The Snowball stem of a case-folded word.
    pub fn stem<'a>(&self, word: &'a str) -> Cow<'a, str> {
        self.stemmer.stem(word)
    }

    /// The canonical form of a raw document (which may hold markup) at `level`.
    pub fn canonical(&self, raw: &str, level: Level) -> String {
        if level == Level::Whitespace {
            return normalize_whitespace(raw);
        }
        let plain = text::plain_text(raw, None);
        self.canonical_plain(&plain, level)
    }

    /// The canonical form of text whose markup was already removed (as
    /// [`corpus`](pocketdex::corpus) delivers it): levels 1 and 2 coincide here.
    pub fn canonical_plain(&self, plain: &str, level: Level) -> String {
        match level {
            Level::Whitespace | Level::Markup => normalize_whitespace(plain),
            Level::Punctuation => join(text::segments(plain)),
            Level::Case | Level::Stopwords | Level::Stem => {
                let mut out = String::with_capacity(plain.len());
                for w in text::words(plain) {
                    if level >= Level::Stopwords && self.analyzer.is_stopword(&w) {
                        continue;
                    }
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    if level >= Level::Stem {
                        out.push_str(&self.stemmer.stem(&w));
                    } else {
                        out.push_str(&w);
                    }
                }
                out
            }
        }
    }

    /// The 128-bit hash that stands for a canonical text: xxh3-128 with [`CANON_SEED`].
    ///
    /// The paper uses MD5. Any 128-bit hash gives the same collision odds for accidental input
    /// (about n²/2¹²⁹ for n documents: 10⁻²¹ for a billion), and MD5's cryptographic design buys
    /// nothing here, since MD5 collisions can be crafted anyway. xxh3-128 is about twenty times
    /// faster and is already the crate's pinned hash, with known-answer tests in `hash.rs`.
    pub fn hash(canonical: &str) -> u128 {
        hash::h128(canonical.as_bytes(), CANON_SEED)
    }
}

/// Runs of Unicode white space become one ASCII space; leading and trailing space is dropped.
pub fn normalize_whitespace(text: &str) -> String {
    join(text.split_whitespace())
}

fn join<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for w in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_adds_one_measure() {
        let c = Canonicalizer::new(Lang::En);
        let raw = "  <div>The RUNNERS were\n running,\tfast.</div> ";
        let got: Vec<String> = Level::ALL.iter().map(|&l| c.canonical(raw, l)).collect();
        assert_eq!(
            got,
            [
                "<div>The RUNNERS were running, fast.</div>",
                "The RUNNERS were running, fast.",
                "The RUNNERS were running fast",
                "the runners were running fast",
                "runners running fast",
                "runner run fast",
            ]
        );
        assert_eq!(Level::Stem.number(), 6);
    }

    #[test]
    fn german_stemming() {
        let c = Canonicalizer::new(Lang::De);
        assert_eq!(
            c.canonical("Die Häuser und das Haus", Level::Stem),
            "haus haus"
        );
    }
}
