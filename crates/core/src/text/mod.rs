//! Documents to index terms: lossy UTF-8 decoding, binary sniffing, HTML markup removal, Unicode
//! word segmentation, case folding and stopword removal. One word path: the scanner
//! ([`for_each_word`]: UAX #29 words, folded character by character), which [`words`] and
//! [`Analyzer::terms`] collect for the classical methods and the evaluation.

mod html;
mod scan;

pub use html::{looks_like_html, strip_html};
pub use scan::{for_each_word, Word};

use std::collections::HashSet;
use unicode_segmentation::UnicodeSegmentation;

/// A language with built-in stopwords and a reference distribution in `reference-corpus/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// German.
    De,
    /// French.
    Fr,
    /// Spanish.
    Es,
    /// Italian.
    It,
    /// Portuguese.
    Pt,
}

impl Lang {
    /// Every language, in the order front ends list them.
    pub const ALL: [Lang; 6] = [Lang::En, Lang::De, Lang::Fr, Lang::Es, Lang::It, Lang::Pt];

    /// The language's English name, for help texts.
    pub fn description(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::De => "German",
            Lang::Fr => "French",
            Lang::Es => "Spanish",
            Lang::It => "Italian",
            Lang::Pt => "Portuguese",
        }
    }

    /// The ISO 639-1 code, as used in file names and in the index.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
            Lang::Fr => "fr",
            Lang::Es => "es",
            Lang::It => "it",
            Lang::Pt => "pt",
        }
    }

    /// The language of an ISO 639-1 code.
    pub fn from_code(code: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The built-in stopword list (see `reference-corpus/README.md` for its source and licence).
    pub fn stopwords(self) -> Vec<String> {
        parse_word_list(self.files().stopwords)
    }

    /// The language's files in `reference-corpus/`, compiled in: the one place that lists them.
    pub(crate) fn files(self) -> BuiltinFiles {
        macro_rules! files {
            ($code:literal) => {
                BuiltinFiles {
                    stopwords: include_str!(concat!(
                        "../../../../reference-corpus/stopwords/",
                        $code,
                        ".txt"
                    )),
                    reference: include_str!(concat!(
                        "../../../../reference-corpus/",
                        $code,
                        ".tsv"
                    )),
                    idf: include_str!(concat!("../../../../reference-corpus/", $code, "-idf.tsv")),
                }
            };
        }
        match self {
            Lang::En => files!("en"),
            Lang::De => files!("de"),
            Lang::Fr => files!("fr"),
            Lang::Es => files!("es"),
            Lang::It => files!("it"),
            Lang::Pt => files!("pt"),
        }
    }
}

/// A built-in language's tables as text ([`Lang::files`]).
pub(crate) struct BuiltinFiles {
    /// `stopwords/<lang>.txt`.
    pub stopwords: &'static str,
    /// `<lang>.tsv`, the reference distribution ([`crate::reference::Reference::builtin`]).
    pub reference: &'static str,
    /// `<lang>-idf.tsv`, the idf table ([`crate::sketch::Idf::builtin`]).
    pub idf: &'static str,
}

/// One word a line; blank lines and `#` comments are skipped; words are case-folded.
pub fn parse_word_list(raw: &str) -> Vec<String> {
    let mut words: Vec<String> = raw
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(fold)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// Text decoded from raw bytes.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    /// The text, with every invalid UTF-8 sequence replaced by U+FFFD.
    pub text: String,
    /// How many invalid UTF-8 sequences were replaced.
    pub invalid_utf8: usize,
}

/// Decodes bytes as UTF-8, lossily: invalid sequences become U+FFFD and are counted, never an error.
/// A UTF-8 byte order mark is dropped.
pub fn decode(bytes: &[u8]) -> Decoded {
    replace_invalid(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes))
}

/// [`decode`], but a byte order mark is kept (as U+FEFF): for values whose every byte is the
/// caller's, such as a Parquet string's. Valid UTF-8 (nearly every value) is copied as it is.
pub fn decode_keeping_bom(bytes: &[u8]) -> Decoded {
    match std::str::from_utf8(bytes) {
        Ok(text) => Decoded {
            text: text.to_owned(),
            invalid_utf8: 0,
        },
        Err(_) => replace_invalid(bytes),
    }
}

/// The bytes as text, each invalid UTF-8 sequence replaced by U+FFFD and counted. The callers
/// of [`decode`] have found the bytes invalid already; no check for valid ones first.
fn replace_invalid(bytes: &[u8]) -> Decoded {
    let mut text = String::with_capacity(bytes.len());
    let mut invalid_utf8 = 0;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push('\u{fffd}');
            invalid_utf8 += 1;
        }
    }
    Decoded { text, invalid_utf8 }
}

/// Decodes bytes that begin with a UTF-16 byte order mark (`FF FE`, little-endian, as Windows
/// writes "Unicode" text; or `FE FF`), lossily: unpaired surrogates and an odd last byte
/// become U+FFFD and are counted as [`Decoded::invalid_utf8`]. `None` without a mark: UTF-16
/// without one is not told from binary data (its NUL bytes), as `file` and ripgrep do not.
pub fn decode_utf16(bytes: &[u8]) -> Option<Decoded> {
    let (le, rest) = match bytes {
        [0xff, 0xfe, rest @ ..] => (true, rest),
        [0xfe, 0xff, rest @ ..] => (false, rest),
        _ => return None,
    };
    let units = rest.chunks_exact(2).map(|p| {
        let pair = [p[0], p[1]];
        if le {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    let mut text = String::with_capacity(rest.len() / 2);
    let mut invalid_utf8 = usize::from(rest.len() % 2 == 1);
    for c in char::decode_utf16(units) {
        text.push(c.unwrap_or_else(|_| {
            invalid_utf8 += 1;
            '\u{fffd}'
        }));
    }
    if rest.len() % 2 == 1 {
        text.push('\u{fffd}');
    }
    Some(Decoded { text, invalid_utf8 })
}

/// True when the bytes look like a binary file rather than text: a NUL byte, or more than 10% of
/// control characters, in the first 8 KiB.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c))
        .count();
    control * 10 > head.len()
}

/// Case folding of one word: the full Unicode lowercase mapping of every character
/// (`char::to_lowercase`), so that "Straße" and "STRASSE" differ only where lowercase differs.
/// Character by character, as the scanner folds ([`for_each_word`]): no context-dependent
/// final sigma.
pub fn fold(word: &str) -> String {
    if word
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        word.to_owned()
    } else {
        word.chars().flat_map(char::to_lowercase).collect()
    }
}

/// All words of a text in order, as written: Unicode (UAX #29) word segmentation, keeping only
/// segments with a letter or digit.
pub fn segments(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.unicode_words()
}

/// All words of a text in order, case-folded: [`segments`] through [`fold`], by the
/// fingerprint's own scanner ([`for_each_word`]), so that every part of pocketdex sees the
/// same terms.
pub fn words(text: &str) -> impl Iterator<Item = String> {
    let mut out = Vec::with_capacity(text.len() / 6);
    for_each_word(text, &mut String::new(), |w| out.push(w.text.to_owned()));
    out.into_iter()
}

/// Turns text into index terms with one language's stopwords.
#[derive(Clone, Debug)]
pub struct Analyzer {
    stopwords: HashSet<String, crate::hash::FastState>,
    /// Bytes of the longest stopword: a longer word is not looked up.
    longest: usize,
    /// The stopwords' term hashes ([`crate::sketch::term_hash`]): the fingerprinter, which has
    /// a word's term hash already, tests it without hashing the word again (every later stage
    /// identifies a term by this hash anyway).
    stop_hashes: HashSet<u128, crate::hash::FastState>,
    /// One bit per [`STOP_FILTER_BITS`] value of a term hash's top bits, set where a stopword's
    /// falls: most words are ruled out by one load from a 512-byte table before any set probe.
    stop_filter: Box<[u64; STOP_FILTER_BITS / 64]>,
}

/// Size of [`Analyzer::stop_filter`]: about 7% of other words pass it with the 301 English
/// stopwords, 13% with the 576 German ones.
const STOP_FILTER_BITS: usize = 4096;

/// The bit of [`Analyzer::stop_filter`] for a term hash: its top 12 bits (the fingerprinter's
/// word table indexes by the high half's low bits, so the two are independent).
#[inline]
fn stop_filter_bit(h: u128) -> usize {
    (h >> (128 - STOP_FILTER_BITS.trailing_zeros())) as usize
}

impl Analyzer {
    /// An analyzer with the given (case-folded) stopwords.
    pub fn new(stopwords: impl IntoIterator<Item = String>) -> Self {
        let stopwords: HashSet<String, crate::hash::FastState> = stopwords.into_iter().collect();
        let stop_hashes: HashSet<u128, crate::hash::FastState> = stopwords
            .iter()
            .map(|w| crate::sketch::term_hash(w))
            .collect();
        let mut stop_filter = Box::new([0u64; STOP_FILTER_BITS / 64]);
        for &h in &stop_hashes {
            let bit = stop_filter_bit(h);
            stop_filter[bit / 64] |= 1 << (bit % 64);
        }
        Analyzer {
            longest: stopwords.iter().map(String::len).max().unwrap_or(0),
            stopwords,
            stop_hashes,
            stop_filter,
        }
    }

    /// [`Analyzer::is_stopword`] of the word whose term hash ([`crate::sketch::term_hash`]) is
    /// `h` (up to collisions of the 128-bit hash).
    #[inline]
    pub fn is_stopword_hash(&self, h: u128) -> bool {
        let bit = stop_filter_bit(h);
        self.stop_filter[bit / 64] >> (bit % 64) & 1 == 1 && self.stop_hashes.contains(&h)
    }

    /// An analyzer with the built-in stopwords of `lang`.
    pub fn for_lang(lang: Lang) -> Self {
        Self::new(lang.stopwords())
    }

    /// True when `word` (case-folded) is a stopword.
    pub fn is_stopword(&self, word: &str) -> bool {
        word.len() <= self.longest && self.stopwords.contains(word)
    }

    /// The stopwords, sorted.
    pub fn stopwords(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.stopwords.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The content terms of a text in order: words with at least one letter that are not stopwords.
    pub fn terms(&self, text: &str) -> Vec<String> {
        words(text)
            .filter(|w| is_content_word(w) && !self.is_stopword(w))
            .collect()
    }
}

/// A word counts as content when it has a letter: numbers, dates and codes do not.
pub fn is_content_word(word: &str) -> bool {
    word.chars().any(char::is_alphabetic)
}

/// Plain text of a document: markup removed when `html` is true (or, when `None`, when the text
/// looks like HTML).
pub fn plain_text(text: &str, html: Option<bool>) -> std::borrow::Cow<'_, str> {
    if html.unwrap_or_else(|| looks_like_html(text)) {
        std::borrow::Cow::Owned(strip_html(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_decoding_counts_invalid_sequences() {
        let d = decode(b"caf\xc3\xa9 \xff\xfe ok \xc3");
        assert_eq!(d.text, "café \u{fffd}\u{fffd} ok \u{fffd}");
        assert_eq!(d.invalid_utf8, 3);
        assert_eq!(decode("\u{feff}x".as_bytes()).text, "x");
    }

    #[test]
    fn utf16_with_a_byte_order_mark() {
        let text = "Grüße, 𝄞 and Köln\r\n";
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        for bytes in [&le, &be] {
            let d = decode_utf16(bytes).unwrap();
            assert_eq!((d.text.as_str(), d.invalid_utf8), (text, 0));
        }
        // An unpaired surrogate and an odd last byte are replaced and counted.
        let d = decode_utf16(&[0xff, 0xfe, b'a', 0, 0x00, 0xd8, b'b', 0, b'c']).unwrap();
        assert_eq!((d.text.as_str(), d.invalid_utf8), ("a\u{fffd}b\u{fffd}", 2));
        assert!(decode_utf16(b"plain text").is_none());
        assert!(decode_utf16(&[0xff]).is_none());
    }

    #[test]
    fn binary_sniffing() {
        assert!(looks_binary(b"\x7fELF\x02\x01\x01\x00\x00"));
        assert!(!looks_binary("Grüße aus Köln\n\tund mehr\r\n".as_bytes()));
        assert!(looks_binary(&[1u8, 2, 3, 4, 5, 6, 7, 8, 9, b'a']));
    }

    #[test]
    fn terms_fold_case_and_drop_stopwords_and_numbers() {
        let a = Analyzer::new(["the".to_string(), "of".to_string()]);
        let t = a.terms("The Theory of Relativity, 1915 — Einstein's E=mc² (Straße)");
        assert_eq!(
            t,
            ["theory", "relativity", "einstein's", "e", "mc", "straße"]
        );
    }

    #[test]
    fn built_in_stopwords_are_real_lists() {
        let en = Analyzer::for_lang(Lang::En);
        for w in ["the", "and", "of", "is"] {
            assert!(en.is_stopword(w), "{w}");
        }
        assert!(!en.is_stopword("relativity"));
        let de = Analyzer::for_lang(Lang::De);
        for w in ["der", "die", "und", "nicht"] {
            assert!(de.is_stopword(w), "{w}");
        }
    }

    /// The fingerprinter's test by term hash agrees with the test by word, on every stopword
    /// of every language and on every word of real English, German, French and Spanish text.
    #[test]
    fn stopword_test_by_hash_agrees_with_the_word() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/wiki-en");
        let mut texts: Vec<String> = std::fs::read_dir(dir)
            .expect("the shipped samples")
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        texts.push(
            "Die Straße führt nicht über den Fluss, aber sie ist länger als der Weg durch \
             das Tal; er und sie wussten es nicht. ÜBER ALLES, daß, dass, weil, oder"
                .into(),
        );
        let leads = include_str!("../../../../tests/data/wiki-fr-es.jsonl");
        texts.extend(leads.lines().map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().unwrap().to_owned()
        }));
        for lang in Lang::ALL {
            let a = Analyzer::for_lang(lang);
            let stop = a.stopwords();
            assert!(stop.len() > 100);
            for w in &stop {
                assert!(a.is_stopword_hash(crate::sketch::term_hash(w)), "{w}");
            }
            let mut seen = (0, 0);
            for w in texts.iter().flat_map(|t| words(t)) {
                let by_word = a.is_stopword(&w);
                assert_eq!(
                    a.is_stopword_hash(crate::sketch::term_hash(&w)),
                    by_word,
                    "{w}"
                );
                if by_word {
                    seen.0 += 1
                } else {
                    seen.1 += 1
                }
            }
            assert!(seen.0 > 10 && seen.1 > 10_000, "{lang:?}: {seen:?}");
        }
        let none = Analyzer::new(Vec::<String>::new());
        assert!(!none.is_stopword_hash(crate::sketch::term_hash("the")));
    }
}
