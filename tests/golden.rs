//! Golden files: an index of each format version committed in `tests/golden/`, opened and
//! queried as a user's old file would be, and the current one rebuilt byte for byte.
//!
//! `create_format_v2` writes the file only when it is missing (then commit it). A change that
//! alters any byte of the format makes `rebuild_matches_golden_v2` fail: bump the format
//! version, add `v3.pdx`, and keep a `test_format_v2…` that says what happens to v2 files.

mod common;

use common::{root, samples};
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};

const GOLDEN_V1: &str = "tests/golden/v1.pdx";
const GOLDEN_V2: &str = "tests/golden/v2.pdx";

/// The golden corpus: every 15th sample article (20 documents), titled by its first line.
fn corpus() -> Vec<(String, String, String)> {
    samples()
        .into_iter()
        .step_by(15)
        .map(|(name, text)| {
            let title = text.lines().next().unwrap_or("").to_string();
            (name, title, text)
        })
        .collect()
}

fn build_v2() -> Vec<u8> {
    let mut b = IndexBuilder::for_lang(Lang::En, Params::default()).unwrap();
    for (name, title, text) in corpus() {
        b.add(&name, Some(&title), &text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    out
}

#[test]
fn create_format_v2() {
    let path = root().join(GOLDEN_V2);
    if !path.exists() {
        std::fs::write(&path, build_v2()).unwrap();
    }
}

/// Version 1 (no IDF section, sketches of unweighted term frequencies) is refused with an
/// error that says to rebuild.
#[test]
fn test_format_v1_is_refused() {
    let bytes = std::fs::read(root().join(GOLDEN_V1)).unwrap();
    let e = Index::open(bytes).err().expect("a v1 file is not read");
    assert!(
        matches!(
            e,
            pocketdex::Error::Version {
                expected: 2,
                got: 1
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("rebuild the index"), "{e}");
}

#[test]
fn test_format_v2() {
    let bytes = match std::fs::read(root().join(GOLDEN_V2)) {
        Ok(b) => b,
        Err(_) => build_v2(), // first run: create_format_v2 writes it concurrently
    };
    let index = Index::open(bytes).unwrap();
    index.verify().unwrap();
    let docs = corpus();
    assert_eq!(index.doc_count() as usize, docs.len());
    for (i, (name, title, text)) in docs.iter().enumerate() {
        assert_eq!(index.name(i as u32).as_deref(), Some(name.as_str()));
        assert_eq!(index.title(i as u32).as_deref(), Some(title.as_str()));
        let r = index.query(text, &QueryOptions::default());
        assert_eq!(r.hits[0].doc, i as u32, "{name}");
        assert_eq!(r.hits[0].score, 1.0);
    }
    // A near copy of a golden document: a sentence dropped.
    let (name, _, text) = &docs[7];
    let cut: String = text.split_inclusive(". ").skip(1).collect();
    let r = index.query(&cut, &QueryOptions::default());
    assert_eq!(index.name(r.hits[0].doc).as_deref(), Some(name.as_str()));
}

#[test]
fn rebuild_matches_golden_v2() {
    let Ok(golden) = std::fs::read(root().join(GOLDEN_V2)) else {
        return; // written by create_format_v2 on this run
    };
    assert!(
        build_v2() == golden,
        "today's build of the golden corpus differs from {GOLDEN_V2}: the format changed; bump VERSION"
    );
}
