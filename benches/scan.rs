//! Benchmark of the word scanner (`pocketdex::text::for_each_word`) against the path it
//! replaced, `unicode_words()` with per-character case folding, in bytes/s of text.
//!
//! Group `scan`, two functions per corpus:
//! - `unicode_words`: `unicode_segmentation`'s `unicode_words()`, each word folded into a reused
//!   `String` when it has an upper-case or non-ASCII byte, and tested for a letter — what
//!   `Fingerprinter::count` did per word before the scanner;
//! - `for_each_word`: the same words and letter flags from `for_each_word`.
//!
//! Both add up the words' lengths and letter flags, so that neither can be optimised away.
//!
//! Corpora (the benchmark id ends in the corpus): `samples` (the 300 English Wikipedia leads in
//! `samples/wiki-en/*.txt`), `manpages-de.jsonl` (German man pages, `data/dev/manpages-de.jsonl`,
//! when it has been fetched) and the JSON Lines file (`{"text"}` per line) that
//! `POCKETDEX_BENCH_CORPUS` names, if set.
//!
//! Run from the repository root:
//!
//! ```sh
//! cargo bench --bench scan                 # about 30 seconds
//! cargo bench --bench scan -- --test       # compile and run each benchmark once
//! ```

mod common;

use common::{load_jsonl, load_samples, resolve, root, tag_of};
use criterion::{BenchmarkId, Criterion, Throughput};
use pocketdex::text::{for_each_word, Word};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;
use unicode_segmentation::UnicodeSegmentation;

/// Texts to scan, and the tag their benchmark ids end in.
struct Corpus {
    tag: String,
    docs: Vec<String>,
}

impl Corpus {
    fn bytes(&self) -> u64 {
        self.docs.iter().map(|d| d.len() as u64).sum()
    }
}

/// The texts of `samples/wiki-en/*.txt`, sorted by file name.
fn samples() -> Corpus {
    Corpus {
        tag: "samples".into(),
        docs: load_samples().into_iter().map(|d| d.text).collect(),
    }
}

/// The `text` of every JSON line, or `None` when the file cannot be read.
fn jsonl(path: &Path) -> Option<Corpus> {
    let docs = load_jsonl(path).ok()?;
    Some(Corpus {
        tag: tag_of(path),
        docs: docs.into_iter().map(|d| d.text).collect(),
    })
}

fn corpora() -> Vec<Corpus> {
    let mut all = vec![samples()];
    all.extend(jsonl(&root().join("data/dev/manpages-de.jsonl")));
    if let Ok(path) = std::env::var("POCKETDEX_BENCH_CORPUS") {
        let path = resolve(&path);
        all.push(jsonl(&path).unwrap_or_else(|| panic!("cannot read {}", path.display())));
    }
    for c in &all {
        eprintln!(
            "scan bench: corpus {}: {} documents, {} bytes",
            c.tag,
            c.docs.len(),
            c.bytes()
        );
    }
    all
}

/// Today's path, as `Fingerprinter::count` has it.
fn old_path(text: &str, folded: &mut String) -> (usize, usize) {
    let (mut bytes, mut letters) = (0, 0);
    for word in text.unicode_words() {
        let term: &str = if word
            .bytes()
            .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
        {
            folded.clear();
            folded.extend(word.chars().flat_map(char::to_lowercase));
            folded
        } else {
            word
        };
        bytes += term.len();
        letters += usize::from(term.chars().any(char::is_alphabetic));
    }
    (bytes, letters)
}

fn new_path(text: &str, scratch: &mut String) -> (usize, usize) {
    let (mut bytes, mut letters) = (0, 0);
    for_each_word(text, scratch, |w: Word<'_>| {
        bytes += w.text.len();
        letters += usize::from(w.has_letter);
    });
    (bytes, letters)
}

fn bench_scan(c: &mut Criterion, corpus: &Corpus) {
    let mut scratch = String::new();
    let sum = |path: fn(&str, &mut String) -> (usize, usize), scratch: &mut String| {
        corpus
            .docs
            .iter()
            .map(|d| path(d, scratch))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    assert_eq!(
        sum(old_path, &mut scratch),
        sum(new_path, &mut scratch),
        "both paths must see the same words"
    );
    let mut group = c.benchmark_group("scan");
    group.throughput(Throughput::Bytes(corpus.bytes()));
    for (name, path) in [
        (
            "unicode_words",
            old_path as fn(&str, &mut String) -> (usize, usize),
        ),
        ("for_each_word", new_path),
    ] {
        group.bench_function(BenchmarkId::new(name, &corpus.tag), |b| {
            b.iter(|| {
                for d in &corpus.docs {
                    black_box(path(black_box(d), &mut scratch));
                }
            })
        });
    }
    group.finish();
}

fn main() {
    let corpora = corpora();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    for corpus in &corpora {
        bench_scan(&mut c, corpus);
    }
    c.final_summary();
}
