//! The classical methods against brute-force oracles on real text: the 300 committed Wikipedia
//! lead sections plus edited, re-cased, re-spaced and identical copies. Every oracle here is
//! computed independently, from strings (word windows as `String`s, `HashSet`s, `HashMap`s),
//! over all n² pairs; the methods must report exactly the oracle's pairs and scores (spex,
//! SpotSigs, exact, simhash), or a subset with exact scores and the recall their estimates
//! promise (minhash, trials, fuzzy). Plus known answers for S3 and Jaccard, the canonicalization
//! levels, and the multi-trial probability table of the duplicate-elimination note.

use crate::common;

use common::{edit_words, samples, Rng};
use pocketdex::text::{self, Analyzer, Lang};
use pocketdex_methods::canon::{Canonicalizer, Level};
use pocketdex_methods::compare::{compare, Input};
use pocketdex_methods::exact::Exact;
use pocketdex_methods::fuzzy::Fuzzy;
use pocketdex_methods::groups::{clusters, group_pairs, UnionFind};
use pocketdex_methods::minhash::Minhash;
use pocketdex_methods::simhash::Simhash;
use pocketdex_methods::spex::Spex;
use pocketdex_methods::spotsigs::{SpotJaccard, Spotsigs};
use pocketdex_methods::trials::Trials;
use pocketdex_methods::trials::{probability, TrialParams};
use pocketdex_methods::{
    find_pairs, spotsigs, Detector, Evidence, Features, Method, Options, Outcome, ALL,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// The samples, then edited copies (1–12 words replaced by words of another article), then
/// copies that differ in case and spacing only, then byte-identical copies.
fn corpus() -> Vec<(String, String)> {
    let base = samples();
    let mut docs = base.clone();
    let mut rng = Rng::new(4);
    for (i, edits) in [1usize, 1, 2, 2, 3, 4, 6, 8, 12]
        .iter()
        .cycle()
        .take(72)
        .enumerate()
    {
        let k = (i * 7) % base.len();
        let donor = &base[(k + 101) % base.len()].1;
        let text = edit_words(&base[k].1, donor, *edits, &mut rng);
        docs.push((format!("edit{i:02}-{}", base[k].0), text));
    }
    for k in [3usize, 50, 99] {
        let shouted = base[k].1.to_uppercase().replace(' ', "  \n ");
        docs.push((format!("shout-{}", base[k].0), shouted));
    }
    for k in [10usize, 20, 20, 150] {
        docs.push((
            format!("copy{}-{}", docs.len(), base[k].0),
            base[k].1.clone(),
        ));
    }
    // A document with a single content word, and an error page without running text.
    docs.push(("tiny.txt".into(), "Zanzibar.".into()));
    docs.push((
        "error.html".into(),
        "404 Not Found. nginx/1.18.0 (Ubuntu) Home | Login | Contact".into(),
    ));
    docs
}

fn detect(
    method: &'static dyn Method,
    options: Options,
    docs: &[(String, String)],
) -> (Detector, Vec<Features>, Outcome) {
    let d = Detector::new(method, options).unwrap();
    let features: Vec<Features> = docs.iter().map(|(_, t)| d.prepare(t)).collect();
    let out = d.find(&features).unwrap();
    (d, features, out)
}

/// Oracle pairs (a < b) with their exact score.
type Truth = HashMap<(u32, u32), f64>;

fn all_pairs(n: usize, score: impl Fn(usize, usize) -> Option<f64>, t: f64) -> Truth {
    let mut truth = Truth::new();
    for a in 0..n {
        for b in a + 1..n {
            if let Some(s) = score(a, b) {
                if s > 0.0 && s + 1e-9 >= t {
                    truth.insert((a as u32, b as u32), s);
                }
            }
        }
    }
    truth
}

fn set_of(items: Vec<String>) -> HashSet<String> {
    items.into_iter().collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> Option<f64> {
    let i = a.intersection(b).count();
    let u = a.len() + b.len() - i;
    (u > 0).then(|| i as f64 / u as f64)
}

/// Word windows of `q` as strings; fewer than q words make one window of all of them.
fn windows(words: &[String], q: usize) -> HashSet<String> {
    if words.is_empty() {
        return HashSet::new();
    }
    if words.len() < q {
        return set_of(vec![words.join(" ")]);
    }
    set_of(words.windows(q).map(|w| w.join(" ")).collect())
}

fn terms(text: &str) -> Vec<String> {
    Analyzer::for_lang(Lang::En).terms(text)
}

fn all_words(text: &str) -> Vec<String> {
    text::words(text).collect()
}

/// Every reported pair: in the oracle with the same score. Every oracle pair: reported, or its
/// documents joined through copies with identical features (`Evidence::Identical`). Returns
/// the share of oracle pairs covered.
fn check(method: &str, docs: usize, out: &Outcome, truth: &Truth) -> f64 {
    let mut reps = UnionFind::new(docs);
    for p in &out.pairs {
        assert!(p.a < p.b, "{method}: pair not ordered: {p:?}");
        if p.evidence == Evidence::Identical {
            reps.union(p.a, p.b);
        }
        let want = truth.get(&(p.a, p.b)).unwrap_or_else(|| {
            panic!("{method}: reported pair {p:?} is not an oracle pair (score below threshold?)")
        });
        assert!(
            (p.score - want).abs() < 1e-9,
            "{method}: pair {p:?} scores {}, the oracle {want}",
            p.score
        );
    }
    let reported: HashSet<(u32, u32)> = out
        .pairs
        .iter()
        .map(|p| {
            let (x, y) = (reps.find(p.a), reps.find(p.b));
            (x.min(y), x.max(y))
        })
        .collect();
    let covered = truth
        .keys()
        .filter(|&&(a, b)| {
            let (x, y) = (reps.find(a), reps.find(b));
            x == y || reported.contains(&(x.min(y), x.max(y)))
        })
        .count();
    if truth.is_empty() {
        return 1.0;
    }
    covered as f64 / truth.len() as f64
}

#[test]
fn exact_groups_equal_canonical_strings() {
    let docs = corpus();
    let canon = Canonicalizer::new(Lang::En);
    for level in [Level::Case, Level::Stem] {
        let options = Options {
            level,
            ..Options::default()
        };
        let (_, _, out) = detect(&Exact, options, &docs);
        let texts: Vec<String> = docs
            .iter()
            .map(|(_, t)| canon.canonical_plain(t, level))
            .collect();
        let truth = all_pairs(
            docs.len(),
            |a, b| (texts[a] == texts[b] && !texts[a].is_empty()).then_some(1.0),
            1.0,
        );
        assert_eq!(check("exact", docs.len(), &out, &truth), 1.0);
        // Re-cased, re-spaced copies join their originals from level 4 on, as identical copies
        // do; edits that only touch stopwords vanish at level 5.
        let groups = group_pairs(docs.len(), &out.pairs);
        let group_of = |id: &str| {
            let i = docs.iter().position(|(n, _)| n == id).unwrap() as u32;
            groups.iter().position(|g| g.members.contains(&i))
        };
        for k in [3usize, 50, 99] {
            let original = &docs[k].0;
            assert!(group_of(original).is_some());
            assert_eq!(group_of(original), group_of(&format!("shout-{original}")));
        }
        assert!(out.pairs.iter().all(|p| p.score == 1.0));
    }
}

#[test]
fn minhash_reports_exact_jaccard_and_finds_nearly_all_pairs() {
    let docs = corpus();
    let (d, features, out) = detect(&Minhash, Options::default(), &docs);
    let sh: Vec<HashSet<String>> = docs.iter().map(|(_, t)| windows(&terms(t), 3)).collect();
    let truth = all_pairs(docs.len(), |a, b| jaccard(&sh[a], &sh[b]), 0.8);
    assert!(
        truth.len() >= 40,
        "the corpus has near duplicates: {}",
        truth.len()
    );
    let recall = check("minhash", docs.len(), &out, &truth);
    eprintln!(
        "minhash: {} oracle pairs, {} reported, recall {recall:.3}",
        truth.len(),
        out.pairs.len()
    );
    // Candidates reach down to three standard errors below the threshold.
    assert!(recall >= 0.97, "recall {recall}");
    // The library's own brute force agrees with the string oracle.
    let brute: Truth = d
        .brute_force(&features)
        .unwrap()
        .into_iter()
        .map(|p| ((p.a, p.b), p.score))
        .collect();
    assert_eq!(brute.len(), truth.len());
    for (k, s) in &truth {
        assert!((brute[k] - s).abs() < 1e-9);
    }
}

#[test]
fn minhash_estimates_without_verification_are_within_their_error() {
    let docs = corpus();
    let options = Options {
        verify: false,
        ..Options::default()
    };
    let (_, _, out) = detect(&Minhash, options, &docs);
    let sh: Vec<HashSet<String>> = docs.iter().map(|(_, t)| windows(&terms(t), 3)).collect();
    assert!(!out.pairs.is_empty());
    for p in &out.pairs {
        let exact = jaccard(&sh[p.a as usize], &sh[p.b as usize]).unwrap();
        let se = (exact * (1.0 - exact) / 128.0).sqrt();
        assert!(p.score >= 0.8 - 1e-9);
        // Four standard errors: fails by chance with probability 6e-5 per pair.
        assert!(
            (p.score - exact).abs() <= 4.0 * se + 1e-9,
            "{p:?} vs exact {exact}"
        );
    }
}

#[test]
fn trials_detect_pairs_as_often_as_the_formula_says() {
    let docs = corpus();
    let params = TrialParams::default();
    // Threshold 0.6 so that the oracle holds pairs across the whole detection curve.
    let options = Options {
        threshold: Some(0.6),
        ..Options::default()
    };
    let (_, _, out) = detect(&Trials, options, &docs);
    let ng: Vec<HashSet<String>> = docs.iter().map(|(_, t)| windows(&terms(t), 2)).collect();
    let truth = all_pairs(docs.len(), |a, b| jaccard(&ng[a], &ng[b]), 0.6);
    let recall = check("trials", docs.len(), &out, &truth);
    let (mut expected, mut var) = (0.0, 0.0);
    for &j in truth.values() {
        let p = probability(j, &params);
        expected += p;
        var += p * (1.0 - p);
    }
    let n = truth.len() as f64;
    let found = recall * n;
    eprintln!("trials: {n} oracle pairs at Jaccard ≥ 0.6, {found} found, {expected:.1} expected");
    assert!(
        (found - expected).abs() <= 4.0 * var.sqrt() + 1.0,
        "found {found} of {n} pairs, the formula expects {expected:.1} ± {:.1}",
        var.sqrt()
    );
}

#[test]
fn spex_s3_equals_brute_force_exactly() {
    let docs = corpus();
    for t in [0.58, 0.3, 0.9] {
        let options = Options {
            threshold: Some(t),
            ..Options::default()
        };
        let (_, _, out) = detect(&Spex, options, &docs);
        let ch: Vec<HashSet<String>> = docs
            .iter()
            .map(|(_, t)| windows(&all_words(t), 8))
            .collect();
        let truth = all_pairs(
            docs.len(),
            |a, b| {
                let i = ch[a].intersection(&ch[b]).count();
                Some(2.0 * i as f64 / (ch[a].len() + ch[b].len()) as f64)
            },
            t,
        );
        assert!(!truth.is_empty());
        assert_eq!(check("spex", docs.len(), &out, &truth), 1.0, "t = {t}");
        eprintln!(
            "spex t={t}: {} oracle pairs, {} reported",
            truth.len(),
            out.pairs.len()
        );
    }
}

/// SpotSigs signatures from strings: antecedent + the next two words that are not stopwords.
fn spot_strings(text: &str) -> Vec<String> {
    let words = all_words(text);
    let analyzer = Analyzer::for_lang(Lang::En);
    let ante: HashSet<String> = spotsigs::default_antecedents(Lang::En)
        .into_iter()
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if ante.contains(w) {
            let chain: Vec<&String> = words[i + 1..]
                .iter()
                .filter(|x| !analyzer.is_stopword(x))
                .take(2)
                .collect();
            if chain.len() == 2 {
                out.push(format!("{w}:{}:{}", chain[0], chain[1]));
            }
        }
    }
    out
}

/// A multiset of strings: each string and its occurrences.
fn counted(items: Vec<String>) -> HashMap<String, u32> {
    let mut m = HashMap::new();
    for x in items {
        *m.entry(x).or_insert(0) += 1;
    }
    m
}

/// Σ min / Σ max of the counts.
fn weighted_jaccard(a: &HashMap<String, u32>, b: &HashMap<String, u32>) -> Option<f64> {
    let mut min = 0;
    let mut max = 0;
    for (k, &x) in a {
        let y = b.get(k).copied().unwrap_or(0);
        min += x.min(y);
        max += x.max(y);
    }
    max += b
        .iter()
        .filter(|(k, _)| !a.contains_key(*k))
        .map(|(_, &y)| y)
        .sum::<u32>();
    (max > 0).then(|| min as f64 / max as f64)
}

/// The SpotSigs oracle from strings: each document's signature multiset, the idf filter over
/// the documents with at least 4 signatures (copies counted), and the weighted Jaccard (or the
/// Jaccard of the sets) of what is left, for documents still holding 4. Returns the oracle
/// pairs and the documents it sets aside.
fn spotsigs_oracle(
    docs: &[(String, String)],
    idf: (f64, f64),
    weighted: bool,
    t: f64,
) -> (Truth, HashSet<u32>) {
    let mut sigs: Vec<HashMap<String, u32>> =
        docs.iter().map(|(_, t)| counted(spot_strings(t))).collect();
    let total = |m: &HashMap<String, u32>| m.values().sum::<u32>();
    let first: Vec<bool> = sigs.iter().map(|m| total(m) >= 4).collect();
    let n = first.iter().filter(|&&x| x).count() as f64;
    let mut df: HashMap<String, f64> = HashMap::new();
    for (m, _) in sigs.iter().zip(&first).filter(|(_, &l)| l) {
        for k in m.keys() {
            *df.entry(k.clone()).or_insert(0.0) += 1.0;
        }
    }
    for m in &mut sigs {
        m.retain(|k, _| {
            let x = ((n + 1.0) / df.get(k).copied().unwrap_or(1.0)).ln() / (n + 1.0).ln();
            x >= idf.0 && x <= idf.1
        });
        if !weighted {
            m.values_mut().for_each(|c| *c = 1);
        }
    }
    let live: Vec<bool> = (0..docs.len())
        .map(|i| first[i] && total(&sigs[i]) >= 4)
        .collect();
    let truth = all_pairs(
        docs.len(),
        |a, b| {
            (live[a] && live[b])
                .then(|| weighted_jaccard(&sigs[a], &sigs[b]))
                .flatten()
        },
        t,
    );
    let aside = (0..docs.len() as u32)
        .filter(|&i| !live[i as usize])
        .collect();
    (truth, aside)
}

#[test]
fn spotsigs_weighted_jaccard_equals_brute_force_and_sets_aside_error_pages() {
    let docs = corpus();
    let (_, _, out) = detect(&Spotsigs, Options::default(), &docs);
    let (truth, want) = spotsigs_oracle(&docs, (0.0, 1.0), true, 0.6);
    assert!(truth.len() >= 20);
    assert_eq!(check("spotsigs", docs.len(), &out, &truth), 1.0);
    eprintln!(
        "spotsigs: {} oracle pairs, {} reported, {} set aside",
        truth.len(),
        out.pairs.len(),
        out.set_aside.len()
    );
    let aside: HashSet<u32> = out.set_aside.iter().map(|s| s.doc).collect();
    assert_eq!(aside, want);
    let error = docs.iter().position(|(id, _)| id == "error.html").unwrap() as u32;
    let reason = &out
        .set_aside
        .iter()
        .find(|s| s.doc == error)
        .unwrap()
        .reason;
    assert!(reason.contains("too few antecedents"), "{reason}");
    // Weighted and set scores differ on this corpus: repeats count.
    let set = detect(
        &Spotsigs,
        Options {
            spot_jaccard: SpotJaccard::Set,
            ..Options::default()
        },
        &docs,
    )
    .2;
    let (set_truth, _) = spotsigs_oracle(&docs, (0.0, 1.0), false, 0.6);
    assert_eq!(
        check("spotsigs --spot-jaccard set", docs.len(), &set, &set_truth),
        1.0
    );
    let differ = truth
        .iter()
        .filter(|(k, s)| set_truth.get(k).is_none_or(|x| (*x - **s).abs() > 1e-9))
        .count();
    assert!(
        differ > 0,
        "no pair scores differently weighted and as sets"
    );
}

/// The idf filter drops signatures at both ends and sets aside the documents left with too few,
/// with their identical copies; the pairs of what is left equal the brute force.
#[test]
fn spotsigs_idf_filter_equals_brute_force() {
    let docs = corpus();
    // The second range drops every signature of fewer than 4 of the ~380 documents, so only
    // texts with several copies keep enough: a handful of pairs.
    for (idf, t, least) in [((0.3, 0.95), 0.6, 10), ((0.1, 0.8), 0.3, 1)] {
        let options = Options {
            min_idf: idf.0,
            max_idf: idf.1,
            threshold: Some(t),
            ..Options::default()
        };
        let (d, features, out) = detect(&Spotsigs, options, &docs);
        let (truth, want) = spotsigs_oracle(&docs, idf, true, t);
        let aside: HashSet<u32> = out.set_aside.iter().map(|s| s.doc).collect();
        assert_eq!(aside, want, "idf {idf:?}");
        assert!(out
            .set_aside
            .iter()
            .any(|s| s.reason.contains("after the idf filter")));
        assert!(truth.len() >= least, "idf {idf:?}: {} pairs", truth.len());
        assert_eq!(check("spotsigs, idf filter", docs.len(), &out, &truth), 1.0);
        // The library's brute force agrees with the string oracle too.
        let brute = d.brute_force(&features).unwrap();
        assert_eq!(brute.len(), truth.len());
        for p in brute {
            assert!((truth[&(p.a, p.b)] - p.score).abs() < 1e-9);
        }
    }
}

fn tf(text: &str) -> HashMap<String, f64> {
    let mut m = HashMap::new();
    for t in terms(text) {
        *m.entry(t).or_insert(0.0) += 1.0;
    }
    m
}

fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let dot: f64 = a.iter().filter_map(|(k, x)| b.get(k).map(|y| x * y)).sum();
    let n = |v: &HashMap<String, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    if dot == 0.0 {
        0.0
    } else {
        (dot / (n(a) * n(b))).min(1.0)
    }
}

#[test]
fn simhash_finds_every_pair_within_the_radius_with_exact_cosine() {
    let docs = corpus();
    for k in [3u32, 6] {
        let options = Options {
            max_hamming: k,
            threshold: Some(0.5),
            ..Options::default()
        };
        let (d, features, out) = detect(&Simhash, options, &docs);
        // The Hamming search is exact for the fingerprints: compare with all pairs.
        let fps: Vec<Option<u64>> = docs
            .iter()
            .map(|(_, t)| {
                let terms = terms(t);
                (!terms.is_empty()).then(|| {
                    pocketdex_methods::simhash::fingerprint(
                        &pocketdex_methods::cosine::TermVector::from_terms(&terms),
                    )
                })
            })
            .collect();
        let vecs: Vec<HashMap<String, f64>> = docs.iter().map(|(_, t)| tf(t)).collect();
        let truth = all_pairs(
            docs.len(),
            |a, b| {
                let (x, y) = (fps[a]?, fps[b]?);
                ((x ^ y).count_ones() <= k).then(|| cosine(&vecs[a], &vecs[b]))
            },
            0.5,
        );
        assert!(!truth.is_empty());
        assert_eq!(check("simhash", docs.len(), &out, &truth), 1.0, "k = {k}");
        eprintln!(
            "simhash k={k}: {} oracle pairs, {} reported",
            truth.len(),
            out.pairs.len()
        );
        assert_eq!(d.brute_force(&features).unwrap().len(), truth.len());
        for p in &out.pairs {
            if let Evidence::Hamming { distance } = p.evidence {
                assert!(distance <= k);
            }
        }
    }
}

#[test]
fn fuzzy_reports_exact_tfidf_cosine() {
    let docs = corpus();
    let (_, _, out) = detect(&Fuzzy, Options::default(), &docs);
    let vecs: Vec<HashMap<String, f64>> = docs.iter().map(|(_, t)| tf(t)).collect();
    let n = docs.len() as f64;
    let mut df: HashMap<&str, f64> = HashMap::new();
    for v in &vecs {
        for k in v.keys() {
            *df.entry(k).or_insert(0.0) += 1.0;
        }
    }
    let weighted: Vec<HashMap<String, f64>> = vecs
        .iter()
        .map(|v| {
            v.iter()
                .map(|(k, x)| (k.clone(), x * (n / df[k.as_str()]).ln()))
                .filter(|(_, w)| *w > 0.0)
                .collect()
        })
        .collect();
    let truth = all_pairs(
        docs.len(),
        |a, b| Some(cosine(&weighted[a], &weighted[b])),
        0.8,
    );
    assert!(truth.len() >= 40);
    let recall = check("fuzzy", docs.len(), &out, &truth);
    eprintln!(
        "fuzzy: {} oracle pairs, {} reported, recall {recall:.3}",
        truth.len(),
        out.pairs.len()
    );
    assert!(recall >= 0.9, "recall {recall}");
}

#[test]
fn known_answers_s3_and_jaccard() {
    // Ten words; B changes the last one: chunks of 8 words, A and B have 3 each, 2 shared.
    let a = "one two three four five six seven eight nine ten";
    let b = "one two three four five six seven eight nine eleven";
    let c = "completely different words appear in this third document here";
    let spex = find_pairs(
        &Spex,
        &[a, b, c],
        &Options {
            threshold: Some(0.6),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(spex.pairs.len(), 1);
    assert_eq!((spex.pairs[0].a, spex.pairs[0].b), (0, 1));
    assert!((spex.pairs[0].score - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        spex.pairs[0].evidence,
        Evidence::Shared {
            shared: 2,
            a: 3,
            b: 3
        }
    );
    // 3-shingles of content words: {αβγ, βγδ, γδε} and {αβγ, βγδ, γδζ}: Jaccard 2/4.
    let x = "alpha beta gamma delta epsilon";
    let y = "alpha beta gamma delta zeta";
    let mh = find_pairs(
        &Minhash,
        &[x, y],
        &Options {
            threshold: Some(0.5),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(mh.pairs.len(), 1);
    assert_eq!(mh.pairs[0].score, 0.5);
    // Same pair by every measure of `compare`.
    let cmp = compare(
        Input { raw: x, plain: x },
        Input { raw: y, plain: y },
        &Options::default(),
    )
    .unwrap();
    assert_eq!(cmp.minhash.jaccard.score, 0.5);
    assert_eq!(cmp.minhash.jaccard.shared, 2);
    // 2-grams: 3 of 5 shared.
    assert!((cmp.trials.jaccard.score - 0.6).abs() < 1e-12);
    // 5 words < 8: one chunk each, different.
    assert_eq!(cmp.spex.score, 0.0);
    assert!((cmp.cosine - 0.8).abs() < 1e-12);
}

#[test]
fn canonicalization_levels_one_difference_each() {
    let base = "The cat is running.";
    let variants = [
        (Level::Whitespace, "The  cat\n is running."),
        (Level::Markup, "<p>The cat is <b>running</b>.</p>"),
        (Level::Punctuation, "The cat is running!"),
        (Level::Case, "THE CAT IS RUNNING."),
        (Level::Stopwords, "cat running."),
        (Level::Stem, "The cats are runs."),
    ];
    for (from, text) in variants {
        let c = compare(
            Input {
                raw: base,
                plain: &text::plain_text(base, None),
            },
            Input {
                raw: text,
                plain: &text::plain_text(text, None),
            },
            &Options::default(),
        )
        .unwrap();
        for l in &c.exact {
            assert_eq!(l.equal, l.level >= from, "{text:?} at level {:?}", l.level);
        }
    }
}

/// The note's table: % overlap, then 10, 12, …, 20 hashes, in percent.
const NOTE_TABLE: [(f64, [f64; 6]); 13] = [
    (100.0, [100.0, 100.0, 100.0, 100.0, 100.0, 100.0]),
    (99.0, [99.9, 99.9, 99.9, 99.9, 99.9, 99.9]),
    (98.0, [99.9, 99.7, 99.6, 99.3, 98.8, 98.2]),
    (97.0, [99.4, 98.8, 97.9, 96.5, 94.8, 92.7]),
    (96.0, [98.2, 96.5, 94.0, 90.9, 87.0, 82.6]),
    (95.0, [95.8, 92.4, 87.9, 82.4, 76.2, 69.7]),
    (94.0, [92.3, 86.6, 79.7, 72.0, 63.9, 55.8]),
    (93.0, [87.5, 79.5, 70.3, 60.8, 51.5, 42.8]),
    (92.0, [81.6, 71.3, 60.4, 49.8, 40.0, 31.7]),
    (91.0, [75.0, 62.7, 50.6, 39.7, 30.3, 22.8]),
    (90.0, [67.8, 54.1, 41.5, 30.9, 22.4, 15.9]),
    (85.0, [33.7, 20.5, 12.0, 6.8, 3.7, 2.0]),
    (80.0, [12.9, 5.9, 3.0, 1.1, 0.5, 0.2]),
];

#[test]
fn trials_probability_reproduces_the_notes_table() {
    for (overlap, row) in NOTE_TABLE {
        for (i, &want) in row.iter().enumerate() {
            let hashes = 10 + 2 * i;
            let params = TrialParams {
                hashes,
                ..TrialParams::default()
            };
            let got = 100.0 * probability(overlap / 100.0, &params);
            // The note's own formula, as printed there.
            let q = (overlap / 100.0f64).powi(hashes as i32);
            let note = 100.0 * (1.0 - ((1.0 - q).powi(6) + 6.0 * q * (1.0 - q).powi(5)));
            assert!((got - note).abs() < 1e-9);
            if want == 99.9 && got >= 99.85 {
                // The table caps values at 99.9% (e.g. 99.996% for 99% overlap, 10 hashes).
                continue;
            }
            let tolerance = if (overlap, hashes) == (80.0, 14) {
                // The one cell that disagrees with the formula: 2.58%, printed as 3.0%.
                0.45
            } else {
                // Rounded to one decimal, in places truncated (99.77 → 99.7).
                0.1
            };
            assert!(
                (got - want).abs() <= tolerance,
                "{overlap}% overlap, {hashes} hashes: formula {got:.3}%, table {want}%"
            );
        }
    }
}

#[test]
fn identical_copies_are_compared_once() {
    let t = samples()[0].1.clone();
    let texts = vec![t.clone(); 50];
    for &m in ALL {
        let out = find_pairs(m, &texts, &Options::default()).unwrap();
        assert_eq!(out.stats.distinct, 1, "{m:?}");
        assert_eq!(out.pairs.len(), 49, "{m:?}");
        assert!(out
            .pairs
            .iter()
            .all(|p| p.a == 0 && p.evidence == Evidence::Identical));
        assert_eq!(group_pairs(texts.len(), &out.pairs)[0].members.len(), 50);
    }
}

/// Features spilled to a temporary file (a memory limit of 1 byte) give every method the same
/// pairs, scores, documents set aside and counts as features held in memory.
#[test]
fn spilled_features_give_the_same_outcome() {
    let docs = corpus();
    for &m in ALL {
        let (held, spilled) = (
            Options::default(),
            Options {
                memory_limit: 1,
                ..Options::default()
            },
        );
        let (_, _, want) = detect(m, held, &docs);
        let d = Detector::new(m, spilled).unwrap();
        let mut store = d.store();
        for (_, t) in &docs {
            store.push(d.prepare(t)).unwrap();
        }
        assert!(store.spilled(), "{m:?}");
        assert!(d.find_in(&store).is_err(), "{m:?}: read before sealing");
        store.seal().unwrap();
        let got = d.find_in(&store).unwrap();
        let key = |o: &Outcome| -> Vec<(u32, u32, u64)> {
            o.pairs
                .iter()
                .map(|p| (p.a, p.b, p.score.to_bits()))
                .collect()
        };
        assert!(!want.pairs.is_empty(), "{m:?}");
        assert_eq!(key(&got), key(&want), "{m:?}");
        assert_eq!(got.set_aside, want.set_aside, "{m:?}");
        assert_eq!(got.stats, want.stats, "{m:?}");
    }
}

#[test]
fn bad_options_and_mixed_features_are_errors() {
    let bad = Options {
        threshold: Some(1.5),
        ..Options::default()
    };
    assert!(Detector::new(&Minhash, bad).is_err());
    let bad = Options {
        agree: 7,
        ..Options::default()
    };
    assert!(Detector::new(&Trials, bad).is_err());
    // An empty antecedent matches nothing; no signature at all is nothing to compare.
    for bad in [
        Options {
            antecedents: Some(vec!["the".into(), "".into()]),
            ..Options::default()
        },
        Options {
            min_signatures: 0,
            ..Options::default()
        },
    ] {
        let e = Detector::new(&Spotsigs, bad).err().unwrap().to_string();
        assert!(
            e.contains("antecedents") || e.contains("min-signatures"),
            "{e}"
        );
    }
    let a = Detector::new(&Minhash, Options::default()).unwrap();
    let b = Detector::new(&Spex, Options::default()).unwrap();
    let f = vec![a.prepare("some text here"), b.prepare("some text here")];
    assert!(a.find(&f).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// spex keeps every chunk that can be shared, whatever the collection: its S3 pairs are
    /// those of the brute force over all chunks, on random texts over a tiny vocabulary (so that
    /// chunks repeat, inside and across documents).
    #[test]
    fn spex_is_lossless(
        docs in prop::collection::vec(prop::collection::vec(0usize..6, 0..40), 2..24),
        chunk in 1usize..9,
        t in 0.1f64..1.0,
    ) {
        const VOCAB: [&str; 6] = ["amber", "basalt", "cobalt", "dune", "ember", "fjord"];
        let texts: Vec<String> = docs
            .iter()
            .map(|d| d.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" "))
            .collect();
        let options = Options { threshold: Some(t), chunk, ..Options::default() };
        let (_, _, out) = detect(&Spex, options, &texts.iter().map(|x| (String::new(), x.clone())).collect::<Vec<_>>());
        let ch: Vec<HashSet<String>> = texts.iter().map(|x| windows(&all_words(x), chunk)).collect();
        let truth = all_pairs(
            texts.len(),
            |a, b| {
                let i = ch[a].intersection(&ch[b]).count();
                (!ch[a].is_empty() && !ch[b].is_empty())
                    .then(|| 2.0 * i as f64 / (ch[a].len() + ch[b].len()) as f64)
            },
            t,
        );
        prop_assert_eq!(check("spex", texts.len(), &out, &truth), 1.0);
    }
}

/// A group of many near-identical documents lists a spanning tree of its pairs above the
/// limit: the same groups, every document's best score kept, m − 1 pairs instead of ~m²/2;
/// below the limit every pair.
#[test]
fn large_groups_list_a_spanning_tree_of_their_pairs() {
    let base = samples();
    let mut rng = Rng::new(11);
    // 40 copies of one article with one or two words replaced (all distinct, nearly all
    // pairs above the threshold), among the other articles.
    let mut docs: Vec<String> = base.iter().map(|(_, t)| t.clone()).collect();
    let donor = base[7].1.clone();
    for i in 0..40 {
        docs.push(edit_words(&base[3].1, &donor, 1 + i % 2, &mut rng));
    }
    for &method in ALL {
        let run = |above: usize| {
            let options = Options {
                spanning_above: above,
                ..Options::default()
            };
            find_pairs(method, &docs, &options).unwrap()
        };
        let (all, span) = (run(usize::MAX), run(10));
        let name = method.name();
        let groups_all = group_pairs(docs.len(), &all.pairs);
        let groups_span = group_pairs(docs.len(), &span.pairs);
        let members = |g: &[pocketdex_methods::groups::Group]| {
            g.iter().map(|g| g.members.clone()).collect::<Vec<_>>()
        };
        assert_eq!(members(&groups_all), members(&groups_span), "{name}");
        // Each large group keeps m − 1 pairs, every smaller group all of its pairs.
        for (a, s) in groups_all.iter().zip(&groups_span) {
            if a.members.len() > 10 {
                assert_eq!(s.pairs.len(), a.members.len() - 1, "{name}");
            } else {
                assert_eq!(s.pairs, a.pairs, "{name}");
            }
        }
        let big = groups_all.iter().filter(|g| g.members.len() > 10).count() as u64;
        assert_eq!(span.stats.spanned_groups, big, "{name}");
        assert_eq!(span.stats.pairs_found, all.pairs.len() as u64, "{name}");
        // The deduplicated rows, best scores included, are the same.
        assert_eq!(
            clusters(docs.len(), &groups_all),
            clusters(docs.len(), &groups_span),
            "{name}"
        );
        if name != "exact" {
            assert!(big >= 1, "{name}: the 41 near-copies form a large group");
            assert!(all.pairs.len() > 2 * span.pairs.len(), "{name}");
        }
    }
}
