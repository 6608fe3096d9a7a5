//! The language's idf table (`Idf::builtin`, `build --idf language`): hits and scores do not
//! depend on how a collection is split into indexes; a table learned from the collection's
//! first documents makes them depend on it.

use crate::common;

use common::{pocketdex, samples, stderr, stdout, Rng};
use pocketdex::fingerprint::Resolution;
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
use std::collections::BTreeSet;

/// An index of `docs` at the resolution of the whole sample corpus, weighed with `idf` (the
/// collection's own table when `None`).
fn build(docs: &[(String, String)], idf: Option<Idf>) -> Index<Vec<u8>> {
    let params = Params {
        resolution: Some(Resolution::for_docs(300)),
        ..Params::default()
    };
    let mut b = IndexBuilder::for_lang(Lang::En, params).unwrap();
    if let Some(idf) = idf {
        b = b.with_idf(idf);
    }
    for (name, text) in docs {
        b.add(name, None, text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    Index::open(out).unwrap()
}

/// Every tenth sample and an edited copy of it (5% of its words replaced).
fn queries(docs: &[(String, String)]) -> Vec<String> {
    let mut rng = Rng::new(7);
    docs.iter()
        .step_by(10)
        .enumerate()
        .flat_map(|(i, (_, text))| {
            let donor = &docs[(i * 10 + 1) % docs.len()].1;
            let n = text.split_whitespace().count() / 20;
            [text.clone(), common::edit_words(text, donor, n, &mut rng)]
        })
        .collect()
}

/// (name, score bits) of every hit of `text` in each index.
fn hits(indexes: &[&Index<Vec<u8>>], text: &str) -> BTreeSet<(String, u32)> {
    let options = QueryOptions {
        top: usize::MAX,
        ..QueryOptions::default()
    };
    indexes
        .iter()
        .flat_map(|index| {
            index
                .query(text, &options)
                .unwrap()
                .hits
                .iter()
                .map(|h| {
                    (
                        index.name(h.doc).unwrap().unwrap().to_string(),
                        h.score.to_bits(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn language_idf_makes_hits_and_scores_independent_of_the_split() {
    let docs = samples();
    let (a, b) = docs.split_at(docs.len() / 3);
    let queries = queries(&docs);

    let en = || Some(Idf::builtin(Lang::En));
    let (whole, part_a, part_b) = (build(&docs, en()), build(a, en()), build(b, en()));
    assert_eq!(whole.fingerprinter().idf(), Some(&Idf::builtin(Lang::En)));
    assert_eq!(part_a.fingerprinter().idf(), whole.fingerprinter().idf());
    let mut found = 0;
    for q in &queries {
        let want = hits(&[&whole], q);
        assert!(!want.is_empty());
        found += want.len();
        assert_eq!(hits(&[&part_a, &part_b], q), want);
    }
    assert!(found >= queries.len());

    // Learned from each build's documents, the tables differ, and so do the scores (of the
    // edited copies: a document scores 1.0 against itself with any table).
    let (whole, part_a, part_b) = (build(&docs, None), build(a, None), build(b, None));
    assert_ne!(part_a.fingerprinter().idf(), whole.fingerprinter().idf());
    let differ = queries
        .iter()
        .filter(|q| hits(&[&part_a, &part_b], q) != hits(&[&whole], q))
        .count();
    assert!(differ > queries.len() / 3, "{differ} of {}", queries.len());
}

/// `build --idf`: `collection` by default (a table learned from the input), `language` is the
/// built-in table whatever the input, an index file's table is copied; all find the edited
/// copy of the quick start.
#[test]
fn build_idf_option() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sections = Vec::new();
    for (name, extra) in [
        ("default", &[][..]),
        ("language", &["--idf", "language"][..]),
        ("collection", &["--idf", "collection"][..]),
        ("one", &["--idf", "language"][..]),
        ("copied", &["--idf", "tests/golden/v6.pdx"][..]),
    ] {
        let index = tmp.path().join(format!("{name}.pdx"));
        let input = if name == "one" {
            "samples/wiki-en/Jupiter.txt"
        } else {
            "samples/wiki-en"
        };
        let mut args = vec!["build", input, "-o", index.to_str().unwrap(), "-q"];
        args.extend_from_slice(extra);
        let o = pocketdex(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = pocketdex(&["query", index.to_str().unwrap(), "samples/query/edited.txt"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("Jupiter.txt"), "{}", stdout(&o));
        let bytes = std::fs::read(&index).unwrap();
        sections.push(Index::open(bytes).unwrap().fingerprinter().idf().cloned());
    }
    let builtin = Some(Idf::builtin(Lang::En));
    assert_ne!(sections[0], builtin);
    assert_eq!(sections[0], sections[2]);
    assert_eq!(sections[1], builtin);
    assert_eq!(sections[3], builtin);
    // The golden segment was built with the language's table.
    assert_eq!(sections[4], builtin);

    let help = stdout(&pocketdex(&["build", "--help"]));
    for want in ["--idf", "language", "collection", "shards"] {
        assert!(help.contains(want), "{want}: {help}");
    }
    let o = pocketdex(&["build", "samples/wiki-en", "-o", "x.pdx", "--idf", "corpus"]);
    assert_eq!(o.status.code(), Some(2));
}
