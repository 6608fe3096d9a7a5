//! The built-in languages beyond English and German on real text (French and Spanish Wikipedia
//! leads, `tests/data/wiki-fr-es.jsonl`): stopwords, a reference distribution that fits the
//! language, and indexes that find their documents and edited copies.

use crate::common;

use common::{edit_words, Rng};
use pocketdex::{Analyzer, Fingerprinter, Index, IndexBuilder, Lang, Params, QueryOptions};

/// The leads of one language: (id, text).
fn leads(lang: Lang) -> Vec<(String, String)> {
    let raw = String::from_utf8(common::read("tests/data/wiki-fr-es.jsonl")).unwrap();
    let docs: Vec<(String, String)> = raw
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["lang"] == lang.code())
        .map(|v| {
            (
                v["id"].as_str().unwrap().into(),
                v["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(docs.len(), 40, "{lang:?}");
    docs
}

#[test]
fn stopwords_of_each_language_are_left_out() {
    for (lang, text, content) in [
        (
            Lang::Fr,
            "Le chat est sur la table et il dort.",
            ["chat", "table", "dort"],
        ),
        (
            Lang::Es,
            "El gato está sobre la mesa y también duerme.",
            ["gato", "mesa", "duerme"],
        ),
        (
            Lang::It,
            "Il gatto è sulla tavola e dorme più di te.",
            ["gatto", "tavola", "dorme"],
        ),
        (
            Lang::Pt,
            "O gato está sobre a mesa e não dorme.",
            ["gato", "mesa", "dorme"],
        ),
    ] {
        assert_eq!(Analyzer::for_lang(lang).terms(text), content, "{lang:?}");
    }
    for lang in Lang::ALL {
        assert_eq!(Lang::from_code(lang.code()), Some(lang));
    }
    assert_eq!(Lang::from_code("xx"), None);
}

/// A language's own reference fits its text: the prefix classes of French and Spanish leads,
/// counted over all 40 of a language (so that a class holds about 100 terms, not a document's
/// few), deviate from it far less than from English's, another language's distribution.
#[test]
fn a_language_reference_fits_its_text() {
    for lang in [Lang::Fr, Lang::Es] {
        let spread = |f: &Fingerprinter| {
            let mut counts = vec![0u32; f.classes().k()];
            for (_, t) in leads(lang) {
                for (c, n) in counts.iter_mut().zip(f.class_vector(&t)) {
                    *c += n;
                }
            }
            let dev = f.deviations(&counts);
            dev.iter().map(|d| d.abs()).sum::<f64>() / dev.len() as f64
        };
        let own = spread(&Fingerprinter::for_lang(lang, Params::default()).unwrap());
        let english = spread(&Fingerprinter::for_lang(Lang::En, Params::default()).unwrap());
        eprintln!(
            "{lang:?}: mean |deviation| {own:.3} from its reference, {english:.3} from English's"
        );
        assert!(
            own * 1.5 < english,
            "{lang:?}: {own:.3} against {english:.3}"
        );
    }
}

#[test]
fn indexes_of_each_language_find_their_documents_and_edited_copies() {
    for lang in [Lang::Fr, Lang::Es] {
        let docs = leads(lang);
        let mut b = IndexBuilder::for_lang(lang, Params::default()).unwrap();
        for (id, text) in &docs {
            b.add(id, None, text);
        }
        let mut bytes = Vec::new();
        b.finish(&mut bytes).unwrap();
        let index = Index::open(bytes).unwrap();
        index.verify().unwrap();
        assert_eq!(index.meta().lang, lang.code());
        let mut rng = Rng::new(3);
        for (i, (id, text)) in docs.iter().enumerate() {
            let r = index.query(text, &QueryOptions::default()).unwrap();
            assert_eq!(r.hits.first().map(|h| h.doc), Some(i as u32), "{id}");
            // 5% of the words from another lead.
            let n = (text.split_whitespace().count() / 20).max(1);
            let edited = edit_words(text, &docs[(i + 1) % docs.len()].1, n, &mut rng);
            let r = index.query(&edited, &QueryOptions::default()).unwrap();
            assert_eq!(
                r.hits.first().map(|h| h.doc),
                Some(i as u32),
                "{id}, edited"
            );
            assert!(r.hits[0].score > 0.8, "{id}: {:?}", r.hits);
        }
    }
}
