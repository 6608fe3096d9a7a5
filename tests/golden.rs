//! Golden files: an index of each format version committed in `tests/golden/`, opened and
//! queried as a user's old file would be, and the current one rebuilt byte for byte.
//!
//! `create_format_v14` writes the file only when it is missing, then fails (commit it). A change
//! that alters any byte of the format makes `rebuild_matches_golden_v14` fail: bump the format
//! version, add `v15.pdx`, and keep a test that says what happens to v14 files.

use crate::common;

use common::{root, samples};
use pocketdex::fingerprint::Resolution;
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, IndexSet, Lang, Params, QueryOptions, SetWriter};

const GOLDEN_V1: &str = "tests/golden/v1.pdx";
const GOLDEN_V2: &str = "tests/golden/v2.pdx";
const GOLDEN_V3: &str = "tests/golden/v3.pdx";
const GOLDEN_V4: &str = "tests/golden/v4.pdx";
const GOLDEN_V5: &str = "tests/golden/v5.pdx";
const GOLDEN_V6: &str = "tests/golden/v6.pdx";
const GOLDEN_V7: &str = "tests/golden/v7.pdx";
const GOLDEN_V8: &str = "tests/golden/v8.pdx";
const GOLDEN_V9: &str = "tests/golden/v9.pdx";
const GOLDEN_V10: &str = "tests/golden/v10.pdx";
const GOLDEN_V11: &str = "tests/golden/v11.pdx";
const GOLDEN_V12: &str = "tests/golden/v12.pdx";
const GOLDEN_V13: &str = "tests/golden/v13.pdx";
const GOLDEN_V14: &str = "tests/golden/v14.pdx";

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

/// Version 9's golden file, as version 6's to 8's, is a segment of an index set (every section
/// of the format: the set sections CODES and IDS too, and from version 7 the block tree TREE and
/// SUMS), with the language's idf table and the resolution of a collection of a million
/// documents (two samples per fuzzy band). Its documents are version 6's. Built today, it is a
/// file of today's version with the same sections and a FILTER
/// (`v9_and_today_differ_in_the_filter_alone`).
fn build_v9() -> Vec<u8> {
    let params = Params {
        resolution: Some(Resolution::for_docs(1_000_000)),
        ..Params::default()
    };
    let schema = IndexBuilder::for_lang(Lang::En, params)
        .unwrap()
        .with_idf(Idf::builtin(Lang::En));
    let dir = tempfile::tempdir().unwrap();
    let mut w = SetWriter::create(&dir.path().join("set"), schema).unwrap();
    let mut b = w.builder();
    for (name, title, text) in corpus() {
        b.add(&name, Some(&title), &text);
    }
    w.add(b, false).unwrap();
    let part = &w.set().parts()[0];
    std::fs::read(dir.path().join("set").join(&part.file)).unwrap()
}

/// Version 10's golden file: the same documents and resolution as version 9's, in a file with
/// the set sections (CODES, IDS), but with the idf table `build` learns from them by default
/// (index-format.md §6.8: the language's table as a prior of 5 documents), which version 10
/// changed; a set's segments take the language's table, which it did not.
fn build_v10() -> Vec<u8> {
    build_learned(corpus())
}

/// A segment (set sections too) of `docs` with the idf table `build` learns from them, at the
/// resolution of a million documents: version 10's and 11's golden files.
fn build_learned(docs: Vec<(String, String, String)>) -> Vec<u8> {
    let params = Params {
        resolution: Some(Resolution::for_docs(1_000_000)),
        ..Params::default()
    };
    let mut b = IndexBuilder::for_lang(Lang::En, params)
        .unwrap()
        .with_set_sections();
    for (name, title, text) in docs {
        b.add(&name, Some(&title), &text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    out
}

/// Versions 1 (no IDF section), 2 (fuzzy codes without samples, unweighted MinHash on the
/// short path), 3 (another sketch and sample clock) and 4 (no similar path, so no
/// `query --similar`) are refused with an error that says to rebuild: their codes, sketches
/// or parameters are not those a version 5 to 8 query expects.
#[test]
fn test_format_v1_to_v4_are_refused() {
    for (path, got) in [
        (GOLDEN_V1, 1),
        (GOLDEN_V2, 2),
        (GOLDEN_V3, 3),
        (GOLDEN_V4, 4),
    ] {
        let bytes = std::fs::read(root().join(path)).unwrap();
        let e = Index::open(bytes).err().expect("an old file is not read");
        assert!(
            matches!(e, pocketdex::Error::Version { expected: 14, got: g } if g == got),
            "{e:?}"
        );
        assert!(e.to_string().contains("rebuild the index"), "{e}");
    }
}

/// Version 5 files are read as they were: they differ from version 6 only in how their idf
/// table was made (learned from the collection; the table is in the file) and in having no set
/// sections.
#[test]
fn test_format_v5() {
    let bytes = std::fs::read(root().join(GOLDEN_V5)).expect("tests/golden/v5.pdx is committed");
    let index = Index::open(bytes).unwrap();
    index.verify().unwrap();
    let docs = corpus();
    assert_eq!(index.doc_count() as usize, docs.len());
    for (i, (name, title, text)) in docs.iter().enumerate() {
        assert_eq!(
            index.name(i as u32).unwrap().as_deref(),
            Some(name.as_str())
        );
        assert_eq!(
            index.title(i as u32).unwrap().as_deref(),
            Some(title.as_str())
        );
        let r = index.query(text, &QueryOptions::default()).unwrap();
        assert_eq!(r.hits[0].doc, i as u32, "{name}");
        assert_eq!(r.hits[0].score, 1.0);
    }
    finds_a_near_copy(&index, &docs);
    // The similar path answers as it did when the file was written: every document finds itself
    // through it alone, first.
    let f = index.fingerprinter();
    for (i, (name, _, text)) in docs.iter().enumerate() {
        let fp = f.fingerprint_query(text);
        let probes = f.similar_probes(&fp, index.resolution(), f.params().similar_probes);
        let mut found = Vec::new();
        let keys: Vec<u64> = probes.iter().map(|c| c.key).collect();
        index
            .lookup_many(&keys, |_, postings| found.extend(postings))
            .unwrap();
        assert!(found.contains(&(i as u32)), "{name}");
    }
}

/// A segment of version 6 (no block tree; its large sections are checked whole when first read)
/// or later: opened, verified, every document found by its id and by its text, a near copy found;
/// queried as a set of one file, the same answers.
fn check_segment(path: &str, version: u32) {
    let bytes = std::fs::read(root().join(path)).expect("golden files are committed");
    check_segment_of(bytes, path, version, &corpus());
}

/// [`check_segment`] of a segment of `docs`; returns it.
fn check_segment_of(
    bytes: Vec<u8>,
    path: &str,
    version: u32,
    docs: &[(String, String, String)],
) -> Index<Vec<u8>> {
    let index = Index::open(bytes.clone()).unwrap();
    index.verify().unwrap();
    assert_eq!(index.version(), version);
    assert!(index.is_segment());
    assert_eq!(index.doc_count() as usize, docs.len());
    let set = IndexSet::from_indexes(vec![(path.into(), Index::open(bytes).unwrap())]);
    for (i, (name, title, text)) in docs.iter().enumerate() {
        assert_eq!(index.find(name).unwrap(), Some(i as u32));
        assert_eq!(
            index.title(i as u32).unwrap().as_deref(),
            Some(title.as_str())
        );
        let r = index.query(text, &QueryOptions::default()).unwrap();
        assert_eq!((r.hits[0].doc, r.hits[0].score), (i as u32, 1.0), "{name}");
        let s = set.query(text, &QueryOptions::default()).unwrap();
        assert_eq!(s.hits[0].hit, r.hits[0]);
    }
    assert_eq!(index.find("not a document").unwrap(), None);
    finds_a_near_copy(&index, docs);
    index
}

/// A near copy of a golden document (a sentence dropped; the first two words of a document of
/// one sentence) finds it first.
fn finds_a_near_copy(index: &Index<Vec<u8>>, docs: &[(String, String, String)]) {
    let (name, _, text) = &docs[7];
    let mut cut: String = text.split_inclusive(". ").skip(1).collect();
    if cut.is_empty() {
        cut = text
            .split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ");
    }
    let r = index.query(&cut, &QueryOptions::default()).unwrap();
    assert_eq!(
        index.name(r.hits[0].doc).unwrap().as_deref(),
        Some(name.as_str())
    );
}

#[test]
fn test_format_v6() {
    check_segment(GOLDEN_V6, 6);
}

/// Version 7 files (4 KiB blocks) open and answer as before.
#[test]
fn test_format_v7() {
    check_segment(GOLDEN_V7, 7);
}

/// Version 8 files (4-bit MPHF seeds, levels of 100%) open and answer as before.
#[test]
fn test_format_v8() {
    check_segment(GOLDEN_V8, 8);
}

/// A section's name and bytes.
type Section = (&'static str, Vec<u8>);

/// A golden file opened, and its sections in file order.
fn sections(path: &str) -> (Index<Vec<u8>>, Vec<Section>) {
    sections_of(std::fs::read(root().join(path)).unwrap())
}

/// An index file's bytes opened, and its sections in file order.
fn sections_of(bytes: Vec<u8>) -> (Index<Vec<u8>>, Vec<Section>) {
    let index = Index::open(bytes.clone()).unwrap();
    let sections = index
        .sections()
        .iter()
        .map(|s| {
            (
                s.name,
                bytes[s.offset as usize..(s.offset + s.len) as usize].to_vec(),
            )
        })
        .collect();
    (index, sections)
}

/// Version 7 and 8 files of the same documents differ in their block tree alone: the same bytes
/// in every other section (documents, codes, sketches). Each section of these small files is
/// one block at either size, so TREE differs in its block size only; `integrity`'s
/// `tree_of_several_blocks_follows_the_spec` covers sections of several blocks.
#[test]
fn v7_and_v8_differ_in_the_block_tree_alone() {
    let read = |path: &str| {
        let mut others = Vec::new();
        let mut block_log2 = None;
        for (name, b) in sections(path).1 {
            match name {
                // TREE starts with the block size's log2 (index-format.md §7.1).
                "TREE" => block_log2 = Some(b[0]),
                "SUMS" => {}
                name => others.push((name, b)),
            }
        }
        (others, block_log2)
    };
    let (old, new) = (read(GOLDEN_V7), read(GOLDEN_V8));
    assert!(old.0.len() > 10, "every section of the format is there");
    assert!(old.0 == new.0, "the sections but TREE and SUMS are equal");
    assert_eq!((old.1, new.1), (Some(12), Some(14)));
    let block_size = |path: &str| {
        Index::open(std::fs::read(root().join(path)).unwrap())
            .unwrap()
            .block_size()
    };
    assert_eq!(block_size(GOLDEN_V7), Some(4096));
    assert_eq!(block_size(GOLDEN_V8), Some(16_384));
    assert_eq!(block_size(GOLDEN_V6), None, "version 6 has no block tree");
}

#[test]
fn test_format_v9() {
    check_segment(GOLDEN_V9, 9);
}

/// The groups of each MPHF level and the bits per group seed, from the section's bytes
/// (index-format.md §9: `group_bits`, VByte `L` and `size[0..L]`, 16 bits per group in 64-bit
/// words, `seed_bits`; every value here is below 2^56, so VByte is LEB128).
fn mphf_levels(section: &[u8]) -> (Vec<u64>, u8) {
    let mut at = 1;
    let mut vbyte = || {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = section[at];
            at += 1;
            v |= ((b & 0x7f) as u64) << shift;
            shift += 7;
            if b < 0x80 {
                return v;
            }
        }
    };
    let levels = vbyte();
    let sizes: Vec<u64> = (0..levels).map(|_| vbyte()).collect();
    let groups: u64 = sizes.iter().sum();
    let seed_bits = section[at + (16 * groups).div_ceil(64) as usize * 8];
    (sizes, seed_bits)
}

/// Version 8 and 9 files of the same documents hold the same documents, codes and sketches
/// (META, CLASSES, IDF, SKETCHES, NAMES, TITLES, CODES, IDS byte for byte) and answer alike;
/// version 9's MPHF has 2-bit group seeds where version 8's had 4, and its first level 150% as
/// many bits as codes (a multiple of 64) where version 8's had 100%, so the slots, and with
/// them CHECKS, STARTS and POSTINGS, are in another order.
#[test]
fn v8_and_v9_differ_in_the_mphf_and_slot_order_alone() {
    let read = |path: &str| {
        let (index, all) = sections(path);
        let mut same = Vec::new();
        let mut levels = (Vec::new(), 0);
        for (name, b) in all {
            match name {
                "MPHF" => levels = mphf_levels(&b),
                "CHECKS" | "STARTS" | "POSTINGS" | "TREE" | "SUMS" => {}
                name => same.push((name, b)),
            }
        }
        (same, levels, index)
    };
    let (old, new) = (read(GOLDEN_V8), read(GOLDEN_V9));
    assert!(old.0.len() >= 8, "every section of the format is there");
    assert!(old.0 == new.0, "documents, codes and sketches are equal");
    let slots = old.2.meta().slot_count as u64;
    assert_eq!(new.2.meta().slot_count as u64, slots);
    // Level 0's groups of 16 bits: its bits rounded up to a multiple of 64.
    let groups = |bits: u64| bits.div_ceil(64) * 64 / 16;
    assert_eq!(old.1 .0[0], groups(slots));
    assert_eq!(new.1 .0[0], groups((slots * 150).div_ceil(100)));
    assert_eq!((old.1 .1, new.1 .1), (4, 2));
    answer_alike(&old.2, &new.2);
}

/// Two files answer every golden document, and a near copy of each (its first sentence
/// dropped), with the same hits, with each band's short code alone and with 4 probes (files
/// before version 12 default to the first, later ones to the second).
fn answer_alike(old: &Index<Vec<u8>>, new: &Index<Vec<u8>>) {
    for (name, _, text) in corpus() {
        let cut: String = text.split_inclusive(". ").skip(1).collect();
        for q in [&text, &cut] {
            for short_probes in [Some(1), Some(4)] {
                let opts = QueryOptions {
                    short_probes,
                    ..QueryOptions::default()
                };
                let (a, b) = (old.query(q, &opts).unwrap(), new.query(q, &opts).unwrap());
                assert_eq!(a.hits, b.hits, "{name}");
            }
        }
    }
}

/// Version 9 files of a segment with the language's idf table hold the same bytes in every
/// section as today's: today's build of version 9's golden documents differs from it in the
/// version, the short probes and FILTER alone, and answers alike. (Version 10 changed how a
/// learned table is made, and ids of file names that are not UTF-8; version 11 added the
/// sketch's view of a learned table; that file has none of these.)
#[test]
fn v9_and_today_differ_in_the_filter_alone() {
    differ_in_the_filter_alone(GOLDEN_V9, 9, build_v9());
}

/// The golden file at `path` (of `version`) and `today`'s build of its documents: the same bytes
/// in every section (every section of the format is there) but FILTER, which version 13 adds to
/// a file whose codes were made for a larger collection (these are at a million documents'
/// resolution), and META, which since version 12 ends with the short probes (4; a file before
/// version 12 has 1, what it was queried with); and the same answers. Returns today's.
fn differ_in_the_filter_alone(path: &str, version: u32, today: Vec<u8>) -> Index<Vec<u8>> {
    let golden = std::fs::read(root().join(path)).expect("golden files are committed");
    let (old, mut new) = (sections_of(golden), sections_of(today));
    assert_eq!(
        (old.0.version(), new.0.version()),
        (version, pocketdex::FORMAT_VERSION)
    );
    assert_eq!(
        (
            old.0.meta().params.short_probes,
            new.0.meta().params.short_probes
        ),
        (if version < 12 { 1 } else { 4 }, 4)
    );
    if version < 12 {
        let meta = new
            .1
            .iter_mut()
            .find(|s| s.0 == "META")
            .expect("a META section");
        assert_eq!(meta.1.pop(), Some(4), "META ends with the short probes");
    }
    let filter = new
        .1
        .iter()
        .position(|s| s.0 == "FILTER")
        .expect("today's file has a FILTER");
    let filter = new.1.remove(filter);
    assert_eq!(
        filter.1.len() as u64,
        32 * (10 * new.0.meta().slot_count as u64).div_ceil(256).max(1),
        "10 bits per code (index-format.md §6.10)"
    );
    assert!(old.1.len() > 10, "every section of the format is there");
    assert!(old.1 == new.1, "every other byte is equal");
    answer_alike(&old.0, &new.0);
    new.0
}

#[test]
fn test_format_v10() {
    check_segment(GOLDEN_V10, 10);
}

/// Version 10's golden file, a learned table without sketch-only entries (twenty documents of
/// moderate length leave out terms of nearly one idf), rebuilt today: the same bytes in every
/// section, and the same answers.
#[test]
fn v10_and_today_differ_in_the_filter_alone() {
    let today = differ_in_the_filter_alone(GOLDEN_V10, 10, build_v10());
    let idf = today.fingerprinter().idf().unwrap();
    assert_eq!(idf.len(), idf.sample_terms(), "no sketch-only entries");
}

/// Version 11's golden corpus: thirty long documents, each ten consecutive sample articles,
/// titled by the first line of the first: a few dozen documents of large vocabularies, whose
/// learned idf table has sketch-only entries (§6.8).
fn long_corpus() -> Vec<(String, String, String)> {
    samples()
        .chunks(10)
        .enumerate()
        .map(|(i, articles)| {
            let title = articles[0].1.lines().next().unwrap_or("").to_string();
            let text: Vec<&str> = articles.iter().map(|a| a.1.as_str()).collect();
            (format!("long{i:02}"), title, text.join("\n\n"))
        })
        .collect()
}

/// Version 11's golden file: a segment (set sections too) of the long corpus, with the idf
/// table `build` learns from it, at the resolution of a million documents.
fn build_v11() -> Vec<u8> {
    build_learned(long_corpus())
}

#[test]
fn create_format_v11() {
    let path = root().join(GOLDEN_V11);
    if !path.exists() {
        std::fs::write(&path, build_v11()).unwrap();
        panic!("wrote {GOLDEN_V11}: commit it (a missing golden file must not pass silently)");
    }
}

/// Version 11's golden file opens, verifies and answers: every document finds itself first,
/// alone and through a set, and a copy of one without its first article finds it first; its
/// idf table has sketch-only entries.
#[test]
fn test_format_v11() {
    let bytes = std::fs::read(root().join(GOLDEN_V11)).expect("tests/golden/v11.pdx is committed");
    let docs = long_corpus();
    let index = check_segment_of(bytes, GOLDEN_V11, 11, &docs);
    let idf = index.fingerprinter().idf().unwrap();
    assert!(
        idf.len() > idf.sample_terms(),
        "{} entries, {} of them the samples'",
        idf.len(),
        idf.sample_terms()
    );
    for (i, (name, _, text)) in docs.iter().enumerate() {
        let rest = text.split_once("\n\n").map_or("", |p| p.1);
        let r = index.query(rest, &QueryOptions::default()).unwrap();
        assert_eq!(
            r.hits.first().map(|h| h.doc),
            Some(i as u32),
            "{name} without its first article"
        );
    }
}

/// Version 11's golden file, rebuilt today: version 12's META adds the short probes, version
/// 13 adds FILTER, and no other byte changed.
#[test]
fn v11_and_today_differ_in_the_filter_alone() {
    differ_in_the_filter_alone(GOLDEN_V11, 11, build_v11());
}

/// Version 12's golden corpus: 120 short documents, consecutive runs of 12 to 40 words of the
/// sample articles, which the short path alone indexes.
fn short_corpus() -> Vec<(String, String, String)> {
    let mut docs = Vec::new();
    for (name, text) in samples().into_iter().step_by(5) {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut at = 0;
        while at + 40 <= words.len() && docs.len() < 120 {
            let n = 12 + (at * 7 + name.len()) % 29;
            let title = words[at..at + 3].join(" ");
            docs.push((format!("{name}#{at}"), title, words[at..at + n].join(" ")));
            at += n;
        }
    }
    docs
}

/// Version 12's golden file: a segment of the short corpus with its learned idf table, at the
/// resolution of a million documents (three rows per short band). Version 13's and 14's are builds
/// of the same.
fn build_v12() -> Vec<u8> {
    build_learned(short_corpus())
}

#[test]
fn create_format_v12() {
    let path = root().join(GOLDEN_V12);
    if !path.exists() {
        std::fs::write(&path, build_v12()).unwrap();
        panic!("wrote {GOLDEN_V12}: commit it (a missing golden file must not pass silently)");
    }
}

/// Version 12's golden file opens, verifies and answers: every document finds itself first,
/// alone and through a set; its META holds 4 short probes, with which edited copies (one word
/// in four replaced) find more of their originals than with each band's code alone.
#[test]
fn test_format_v12() {
    let bytes = std::fs::read(root().join(GOLDEN_V12)).expect("tests/golden/v12.pdx is committed");
    let docs = short_corpus();
    assert_eq!(docs.len(), 120);
    let index = check_segment_of(bytes, GOLDEN_V12, 12, &docs);
    assert_eq!(index.meta().params.short_probes, 4);
    assert_eq!(index.resolution().short_rows, 3);
    let found = |short_probes| {
        let mut rng = pocketdex_eval::synth::Rng::new(12);
        docs.iter()
            .enumerate()
            .filter(|(i, (_, _, text))| {
                let mut words: Vec<&str> = text.split_whitespace().collect();
                let donor: Vec<&str> = docs[(i + 7) % docs.len()].2.split_whitespace().collect();
                for _ in 0..words.len() / 4 {
                    let at = rng.below(words.len());
                    words[at] = donor[rng.below(donor.len())];
                }
                let opts = QueryOptions {
                    short_probes,
                    ..QueryOptions::default()
                };
                let r = index.query(&words.join(" "), &opts).unwrap();
                r.hits.iter().any(|h| h.doc == *i as u32)
            })
            .count()
    };
    let (probed, alone) = (found(None), found(Some(1)));
    assert!(
        probed > alone,
        "{probed} originals found with the probes, {alone} without"
    );
}

/// Version 12's golden file, rebuilt today: FILTER added, no other byte changed.
#[test]
fn v12_and_today_differ_in_the_filter_alone() {
    differ_in_the_filter_alone(GOLDEN_V12, 12, build_v12());
}

/// Version 13's golden file opens, verifies and answers as version 12's (`filtered_as_v12`).
#[test]
fn test_format_v13() {
    filtered_as_v12(GOLDEN_V13, 13);
}

/// Version 13's golden file, rebuilt today: the same bytes in every section, FILTER among
/// them; version 14 moved FILTER to a multiple of 64 (index-format.md §6.10), which version 13
/// put at any multiple of 8: here at 32 modulo 64, in the shards of `scripts/set-bench.sh` at
/// 56, where half its 32-byte blocks straddled two cache lines.
#[test]
fn v13_and_v14_differ_in_the_filter_offset_alone() {
    let golden = std::fs::read(root().join(GOLDEN_V13)).unwrap();
    let (old, new) = (sections_of(golden), sections_of(build_v12()));
    assert_eq!((old.0.version(), new.0.version()), (13, 14));
    assert!(old.1 == new.1, "every section holds the same bytes");
    let filter_at = |i: &Index<Vec<u8>>| {
        i.sections()
            .iter()
            .find(|s| s.name == "FILTER")
            .expect("a FILTER")
            .offset
    };
    assert_eq!(filter_at(&old.0) % 64, 32);
    assert_eq!(filter_at(&new.0) % 64, 0);
    answer_alike(&old.0, &new.0);
}

#[test]
fn create_format_v14() {
    let path = root().join(GOLDEN_V14);
    if !path.exists() {
        std::fs::write(&path, build_v12()).unwrap();
        panic!("wrote {GOLDEN_V14}: commit it (a missing golden file must not pass silently)");
    }
}

/// Version 14's golden file opens, verifies and answers as version 12's (`filtered_as_v12`),
/// with its FILTER at a multiple of 64.
#[test]
fn test_format_v14() {
    let index = filtered_as_v12(GOLDEN_V14, 14);
    let sections = index.sections();
    let filter = sections.iter().find(|s| s.name == "FILTER").unwrap();
    assert_eq!(filter.offset % 64, 0);
}

/// The golden file at `path` of `version`, version 12's documents with a FILTER, opens,
/// verifies and answers as version 12's: every document finds itself first, alone and through a
/// set, and so do edited copies; its FILTER lets every one of its codes through (`verify` looks
/// each up) and keeps most codes it does not hold out.
fn filtered_as_v12(path: &str, version: u32) -> Index<Vec<u8>> {
    let bytes = std::fs::read(root().join(path)).expect("golden files are committed");
    let docs = short_corpus();
    let index = check_segment_of(bytes, path, version, &docs);
    assert!(index.sections().iter().any(|s| s.name == "FILTER"));
    let v12 = Index::open(std::fs::read(root().join(GOLDEN_V12)).unwrap()).unwrap();
    answer_alike(&v12, &index);
    // Codes of documents the file does not hold: those of the golden corpus's articles whole.
    let mut absent = 0;
    let mut rejected = 0;
    for (_, _, text) in corpus() {
        let f = index.fingerprinter();
        for code in f.codes(&f.fingerprint(&text), index.resolution()) {
            if v12.lookup(code.key).unwrap().is_none() {
                absent += 1;
                rejected += !index.may_hold(code.key) as usize;
            }
        }
    }
    assert!(absent > 50, "{absent} absent codes");
    assert!(
        rejected * 10 > absent * 9,
        "FILTER rejected {rejected} of {absent} absent codes"
    );
    index
}

#[test]
fn rebuild_matches_golden_v14() {
    let golden = std::fs::read(root().join(GOLDEN_V14)).expect("tests/golden/v14.pdx is committed");
    assert!(
        build_v12() == golden,
        "today's build of the golden corpus differs from {GOLDEN_V14}: the format changed; bump VERSION"
    );
}

/// Fuzzy and similar codes computed from `index-format.md` alone (§8.3 byte strings, §8.4 sample
/// numbers, clocks and cubed weights), at a resolution with two samples per fuzzy band and three
/// rows per similar band, equal the codes the library indexes.
#[test]
fn codes_follow_the_spec() {
    use pocketdex::fingerprint::{neg_ln_unit, Path, Resolution};
    use pocketdex::hash::{derived, h64, CODE_SEED};
    const S: u32 = 65536;
    let res = Resolution::new(4, 2, 3, 3);
    let params = Params {
        resolution: Some(res),
        ..Params::default()
    };
    let docs = corpus();
    let mut b = IndexBuilder::for_lang(Lang::En, params).unwrap();
    for (name, title, text) in &docs {
        b.add(name, Some(title), text);
    }
    let mut bytes = Vec::new();
    b.finish(&mut bytes).unwrap();
    let index = Index::open(bytes).unwrap();
    let f = index.fingerprinter();
    let idf = f.idf().unwrap();
    for (i, (name, _, text)) in docs.iter().enumerate() {
        let fp = f.fingerprint(text);
        // §8.4: base, weight, clock; the element of the smallest clock, ties to the smaller base.
        let elements: Vec<(u64, f64)> = fp
            .term_hashes
            .iter()
            .map(|&(h, tf)| {
                let q = (tf as u64 * idf.quantum(h) as u64) as f64;
                (h as u64 ^ (h >> 64) as u64, q)
            })
            .collect();
        let sample = |g: u32, cube: bool| -> u32 {
            let mut best = (f64::INFINITY, u64::MAX);
            for &(a, q) in &elements {
                let x = derived(a, S + g / 2);
                let v = if g.is_multiple_of(2) {
                    x as u32
                } else {
                    (x >> 32) as u32
                };
                let w = if cube { q * q * q } else { q };
                let e = (neg_ln_unit(v) / w, a);
                if e.0 < best.0 || (e.0 == best.0 && e.1 < best.1) {
                    best = e;
                }
            }
            best.1 as u32
        };
        let digits = &fp.weighed.as_ref().unwrap().material.digits;
        let mut want = Vec::new();
        for band in 0..4u32 {
            // §8.3 fuzzy: [1, s, B, w, b, digits of the band's members, fragments LE].
            let mut key = vec![1u8, 0, 4, 2, band as u8];
            key.extend((band as usize..24).step_by(4).map(|m| digits[m]));
            for j in 0..2 {
                key.extend(sample(S + 16 * band + j, false).to_le_bytes());
            }
            want.push((Path::Fuzzy, h64(&key, CODE_SEED)));
        }
        for band in 0..2u32 {
            // §8.3 similar: [4, y, b, fragments of samples S + 8192 + 16·b + j, cubed weights].
            let mut key = vec![4u8, 3, band as u8];
            for j in 0..3 {
                key.extend(sample(S + 8192 + 16 * band + j, true).to_le_bytes());
            }
            want.push((Path::Similar, h64(&key, CODE_SEED)));
        }
        let got: Vec<(Path, u64)> = f
            .codes(&fp, res)
            .iter()
            .filter(|c| matches!(c.path, Path::Fuzzy | Path::Similar))
            .map(|c| (c.path, c.key))
            .collect();
        assert_eq!(got, want, "{name}");
        for (_, key) in &want {
            let docs: Vec<u32> = index.lookup(*key).unwrap().expect("indexed").collect();
            assert!(docs.contains(&(i as u32)), "{name}");
        }
    }
}

/// A set made with version 13 keeps working: a version 13 segment (the golden file) adopted
/// into a set takes a version 14 segment beside it, the two answer as one index of all their
/// documents built today, and `merge` rewrites both as one version 14 segment that answers
/// the same.
#[test]
fn a_set_with_a_version_13_segment_grows_and_merges_as_version_14() {
    let golden = Index::open(std::fs::read(root().join(GOLDEN_V13)).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let mut w = SetWriter::create(&set_dir, IndexBuilder::like(&golden)).unwrap();
    w.adopt(&[root().join(GOLDEN_V13)]).unwrap();
    // New documents: the golden corpus's articles, whole.
    let more = corpus();
    let mut b = w.builder();
    for (name, title, text) in &more {
        b.add(name, Some(title), text);
    }
    w.add(b, false).unwrap();
    let versions =
        |w: &SetWriter| -> Vec<u32> { w.set().parts().iter().map(|p| p.index.version()).collect() };
    assert_eq!(
        versions(&w),
        [13, 14],
        "no merge between one segment and a larger one"
    );
    // One index of all the documents, built today with the same schema.
    let mut one = IndexBuilder::like(&golden).with_set_sections();
    for (name, title, text) in short_corpus().iter().chain(&more) {
        one.add(name, Some(title), text);
    }
    let mut bytes = Vec::new();
    one.finish(&mut bytes).unwrap();
    let one = Index::open(bytes).unwrap();
    let docs: Vec<_> = short_corpus().into_iter().chain(more).collect();
    let want = hits_by_name(&IndexSet::from_indexes(vec![("one".into(), one)]), &docs);
    assert!(want.iter().all(|hits| !hits.is_empty()));
    assert_eq!(
        hits_by_name(w.set(), &docs),
        want,
        "a set of a v13 and a v14 segment"
    );
    w.merge_all().unwrap();
    assert_eq!(versions(&w), [14]);
    w.set().verify().unwrap();
    let merged = &w.set().parts()[0].index;
    let filter = merged.sections();
    let filter = filter.iter().find(|s| s.name == "FILTER").unwrap();
    assert_eq!(filter.offset % 64, 0);
    assert_eq!(hits_by_name(w.set(), &docs), want, "the merged set");
    drop(w);
    assert_eq!(
        hits_by_name(&IndexSet::open(&set_dir).unwrap(), &docs),
        want,
        "reopened"
    );
}

/// Each document's hits in `set`, by name and score bits.
fn hits_by_name<D: AsRef<[u8]>>(
    set: &IndexSet<D>,
    docs: &[(String, String, String)],
) -> Vec<Vec<(String, u32)>> {
    docs.iter()
        .map(|(_, _, text)| {
            let r = set.query(text, &QueryOptions::default()).unwrap();
            r.hits
                .iter()
                .map(|h| {
                    let name = set.name(h.part, h.hit.doc).unwrap().unwrap();
                    (name.into_owned(), h.hit.score.to_bits())
                })
                .collect()
        })
        .collect()
}
