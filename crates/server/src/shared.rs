//! What two documents share: every measure of `pocketdex compare`, and both texts cut into runs
//! with the index terms they have in common marked, for the page to highlight.

use crate::api::{CompareAnswer, Span};
use crate::error::ApiError;
use pocketdex::text::{self, Analyzer};
use pocketdex::Lang;
use pocketdex_methods::compare::{compare as measures, Input};
use serde_json::json;
use std::collections::HashSet;

/// Compares `a` and `b` (plain text or HTML) as `pocketdex compare` does.
pub fn compare(a: &str, b: &str, lang: Lang) -> Result<CompareAnswer, ApiError> {
    let (plain_a, plain_b) = (text::plain_text(a, None), text::plain_text(b, None));
    let options = pocketdex_methods::Options {
        lang,
        ..Default::default()
    };
    let c = measures(
        Input {
            raw: a,
            plain: &plain_a,
        },
        Input {
            raw: b,
            plain: &plain_b,
        },
        &options,
    )?;
    let verdicts = c.verdict_records().iter().map(|v| json!(v)).collect();
    let analyzer = Analyzer::for_lang(lang);
    let terms = |t: &str| -> HashSet<String> { analyzer.terms(t).into_iter().collect() };
    let (terms_a, terms_b) = (terms(&plain_a), terms(&plain_b));
    Ok(CompareAnswer {
        comparison: serde_json::to_value(&c).map_err(|e| ApiError::bad_request(e.to_string()))?,
        verdicts,
        shared_terms: terms_a.intersection(&terms_b).count(),
        a: spans(&plain_a, &terms_b, &analyzer),
        b: spans(&plain_b, &terms_a, &analyzer),
    })
}

/// `text` in runs: each word that is an index term of the other document is a shared run, and
/// everything between them (other words, spaces, punctuation) is kept as it is.
fn spans(text: &str, other: &HashSet<String>, analyzer: &Analyzer) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut push = |s: &str, shared: bool| match out.last_mut() {
        Some(last) if last.shared == shared => last.text.push_str(s),
        _ => out.push(Span {
            text: s.to_string(),
            shared,
        }),
    };
    let mut at = 0;
    for word in text::segments(text) {
        // A segment is a slice of `text`: its offset is where its bytes start.
        let start = word.as_ptr() as usize - text.as_ptr() as usize;
        let folded = text::fold(word);
        let shared = text::is_content_word(&folded)
            && !analyzer.is_stopword(&folded)
            && other.contains(&folded);
        if shared {
            push(&text[at..start], false);
            push(word, true);
            at = start + word.len();
        }
    }
    push(&text[at..], false);
    out.retain(|s| !s.text.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_the_text_and_mark_only_shared_terms() {
        let a = "The Moon orbits Earth; the moon is bright.";
        let b = "Earth has one moon.";
        let analyzer = Analyzer::for_lang(Lang::En);
        let other: HashSet<String> = analyzer.terms(b).into_iter().collect();
        let runs = spans(a, &other, &analyzer);
        let joined: String = runs.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(joined, a);
        let shared: Vec<&str> = runs
            .iter()
            .filter(|s| s.shared)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(shared, ["Moon", "Earth", "moon"]);
    }

    #[test]
    fn compare_counts_shared_terms_both_ways() {
        let c = compare(
            "Jupiter is a gas giant.",
            "A giant of gas, Jupiter.",
            Lang::En,
        )
        .unwrap();
        assert_eq!(c.shared_terms, 3);
        assert!(c.a.iter().any(|s| s.shared && s.text == "Jupiter"));
        assert!(c.b.iter().any(|s| s.shared && s.text == "giant"));
        assert!(c.comparison["cosine"].as_f64().unwrap() > 0.9);
    }
}
