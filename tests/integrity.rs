//! A damaged index never answers wrongly: every single-byte flip and every truncation of a small
//! real index, and flips of the committed version-6 file (checked whole, without a block tree).
//! `verify` fails on each; `open` and every query either fail or answer exactly as the
//! original file does.

use crate::common;

use common::{root, samples};
use pocketdex::fingerprint::Resolution;
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions, SetWriter};

/// What a query answers, in full: each hit's document, score bits, code groups, path, name and
/// title, and the counts.
type Answer = (usize, usize, Vec<(u32, u32, u16, String, String, String)>);

/// Every answer a reader gives from `bytes`: a query per text (the originals and a near copy of
/// each), and each name found by its id; `Err` at the first failure.
fn answers(index: &Index<Vec<u8>>, texts: &[(String, String)]) -> pocketdex::Result<Vec<Answer>> {
    let mut out = Vec::new();
    let opts = QueryOptions {
        threshold: 0.3,
        ..QueryOptions::default()
    };
    for (name, text) in texts {
        let cut: String = text.split_inclusive(". ").skip(1).collect();
        for q in [text.as_str(), cut.as_str()] {
            let r = index.query(q, &opts)?;
            let mut hits = Vec::new();
            for h in &r.hits {
                hits.push((
                    h.doc,
                    h.score.to_bits(),
                    h.codes,
                    h.path.name().to_string(),
                    index.name(h.doc)?.unwrap_or_default().into_owned(),
                    index.title(h.doc)?.unwrap_or_default().into_owned(),
                ));
            }
            out.push((r.lookups, r.candidates, hits));
        }
        let found = index.find(name)?;
        out.push((found.map_or(usize::MAX, |d| d as usize), 0, Vec::new()));
    }
    Ok(out)
}

/// A small segment (every section of the format, the set sections too) of a few real articles.
fn small_segment() -> (Vec<u8>, Vec<(String, String)>) {
    segment_at(None)
}

/// [`small_segment`] with the codes of a collection of `for_docs` documents (its own size when
/// `None`): at a million, the file has a FILTER (index-format.md §6.10).
fn segment_at(for_docs: Option<u64>) -> (Vec<u8>, Vec<(String, String)>) {
    let docs: Vec<(String, String)> = samples()
        .into_iter()
        .step_by(100)
        .map(|(n, t)| (n, t.chars().take(1500).collect()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let params = Params {
        resolution: Some(Resolution::for_docs(for_docs.unwrap_or(docs.len() as u64))),
        ..Params::default()
    };
    let schema = IndexBuilder::for_lang(Lang::En, params)
        .unwrap()
        .with_idf(Idf::builtin(Lang::En));
    let mut w = SetWriter::create(&dir.path().join("set"), schema).unwrap();
    let mut b = w.builder();
    for (name, text) in &docs {
        let title = text.lines().next().unwrap_or("");
        b.add(name, Some(title), text);
    }
    w.add(b, false).unwrap();
    let file = &w.set().parts()[0].file;
    let bytes = std::fs::read(dir.path().join("set").join(file)).unwrap();
    (bytes, docs)
}

/// Checks one damaged copy: `verify` fails, and whatever answers come back are the original's.
fn check_damaged(bad: Vec<u8>, texts: &[(String, String)], want: &[Answer], what: &str) -> bool {
    let Ok(index) = Index::open(bad) else {
        return false;
    };
    // Queries first: `verify` would mark every block checked.
    let got = answers(&index, texts);
    assert!(index.verify().is_err(), "verify passed {what}");
    match got {
        Ok(got) => {
            assert!(got == want, "a wrong answer {what}");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn every_flip_and_truncation_of_a_small_index_fails_or_answers_as_the_original() {
    every_flip_and_truncation(None);
}

/// The same of a shard whose codes were made for a million documents, so that it has a FILTER:
/// a flip there is refused at `open`, never a missed code.
#[test]
fn every_flip_and_truncation_of_a_shard_with_a_filter_fails_or_answers_as_the_original() {
    every_flip_and_truncation(Some(1_000_000));
}

fn every_flip_and_truncation(for_docs: Option<u64>) {
    let (bytes, texts) = segment_at(for_docs);
    let has_filter = Index::open(bytes.clone())
        .unwrap()
        .sections()
        .iter()
        .any(|s| s.name == "FILTER");
    assert_eq!(has_filter, for_docs.is_some());
    let want = answers(&Index::open(bytes.clone()).unwrap(), &texts).unwrap();
    // The original answers are real ones: each document finds itself first.
    for (i, a) in want.chunks(3).enumerate() {
        assert_eq!(a[0].2[0].0, i as u32);
        assert_eq!(a[2].0, i);
    }
    let (mut answered, mut refused) = (0, 0);
    for at in 0..bytes.len() {
        // One bit (a different one from byte to byte) and every bit.
        for flip in [1u8 << (at % 8), 0xff] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            if check_damaged(bad, &texts, &want, &format!("with byte {at} ^ {flip:#x}")) {
                answered += 1;
            } else {
                refused += 1;
            }
        }
    }
    for len in 0..bytes.len() {
        let e = Index::open(bytes[..len].to_vec()).err();
        assert!(e.is_some(), "a file cut to {len} bytes opened");
    }
    // Most flips are in what every query reads; those in padding or the trailer change nothing
    // a query reads, so the original answers come back.
    eprintln!(
        "{} bytes: {refused} damaged copies refused, {answered} answered as the original",
        bytes.len()
    );
    assert!(refused > answered, "{refused} refused, {answered} answered");
}

/// Version 6 files have no block tree: their large sections are checked whole against the
/// directory the first time a query reads them. Every third byte of the committed file, flipped.
#[test]
fn flips_of_a_version_6_file_fail_or_answer_as_the_original() {
    let bytes = std::fs::read(root().join("tests/golden/v6.pdx")).unwrap();
    let texts: Vec<(String, String)> = samples().into_iter().step_by(15).take(3).collect();
    let want = answers(&Index::open(bytes.clone()).unwrap(), &texts).unwrap();
    let mut refused = 0;
    for at in (0..bytes.len()).step_by(3) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        refused += !check_damaged(bad, &texts, &want, &format!("v6 byte {at}")) as usize;
    }
    assert!(refused > bytes.len() / 3 / 2);
}

/// A damaged block is named in the error: section and block, and what to do.
#[test]
fn a_damaged_block_is_named() {
    let (bytes, texts) = small_segment();
    let index = Index::open(bytes.clone()).unwrap();
    let sketches = index
        .sections()
        .into_iter()
        .find(|s| s.name == "SKETCHES")
        .unwrap();
    let mut bad = bytes;
    bad[sketches.offset as usize + 3] ^= 0x40;
    let index = Index::open(bad).expect("open reads no sketch");
    let e = index
        .query(&texts[0].1, &QueryOptions::default())
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            pocketdex::Error::BlockMismatch {
                section: "SKETCHES",
                block: 0,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        msg.contains("SKETCHES block 0") && msg.contains("pocketdex verify"),
        "{msg}"
    );
}
