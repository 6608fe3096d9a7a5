//! A generator of collections without near-duplicates, for scale tests: documents drawn from
//! topic mixtures over a vocabulary with a Zipf background and lognormal lengths, deterministic
//! for a seed and a document number (so any document can be made alone, in any order, on any
//! thread).
//!
//! Each document mixes the background (the vocabulary's own frequencies: function words
//! included, as in running text) with one to three *topics*. A topic is a few hundred words drawn
//! from the vocabulary's middle and tail, so documents on a topic share characteristic words as
//! real articles on a subject do, while documents in general do not look alike: with the
//! background alone, every document would have the same word distribution. Each document stresses
//! its topics' words in an order of its own (Zipf weights over a permutation drawn for it, the
//! burstiness of real text): with one order per topic, long documents on the same single topic
//! converged to the same distribution and reached cosine 0.8–0.95, near-duplicates in a
//! collection meant to have none (generator version 1).

use super::Rng;
use pocketdex::error::{Error, Result};
use pocketdex::reference::Reference;
use pocketdex::text::Lang;
use std::path::Path;

/// Words with relative frequencies, most frequent first.
#[derive(Clone, Debug, PartialEq)]
pub struct Vocabulary {
    words: Vec<String>,
    weights: Vec<f64>,
}

impl Vocabulary {
    /// A vocabulary from words and weights (any order; weights need not sum to 1). Words without
    /// a positive finite weight are left out.
    pub fn new(mut entries: Vec<(String, f64)>) -> Result<Vocabulary> {
        entries.retain(|(w, f)| !w.trim().is_empty() && f.is_finite() && *f > 0.0);
        if entries.len() < 2 {
            return Err(Error::Invalid(
                "a vocabulary needs at least two words with a positive weight".into(),
            ));
        }
        entries.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let (words, weights) = entries.into_iter().unzip();
        Ok(Vocabulary { words, weights })
    }

    /// The `limit` most frequent words of a wordfreq list (`large_en.msgpack.gz`, see
    /// `scripts/fetch-wordfreq.sh`), with their frequencies.
    pub fn from_wordfreq(path: &Path, limit: usize) -> Result<Vocabulary> {
        let mut words = crate::wordfreq::read(path)?;
        words.truncate(limit);
        Vocabulary::new(words)
    }

    /// A vocabulary from text: one word per line, optionally followed by a tab and its count;
    /// without counts, the line order is the rank and weights follow Zipf's law (1/rank).
    pub fn from_word_list(raw: &str, limit: usize) -> Result<Vocabulary> {
        let mut entries = Vec::new();
        for (line_no, line) in raw.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (word, weight) = match line.split_once('\t') {
                Some((w, c)) => (
                    w,
                    c.trim().parse::<f64>().map_err(|_| {
                        Error::Invalid(format!("word list line {}: bad count {c:?}", line_no + 1))
                    })?,
                ),
                None => (line, 1.0 / (entries.len() + 1) as f64),
            };
            entries.push((word.to_string(), weight));
        }
        if limit < 2 {
            return Err(Error::Invalid(
                "a vocabulary needs at least two words".into(),
            ));
        }
        // The most frequent first (`new` sorts), then the first `limit`.
        let mut v = Vocabulary::new(entries)?;
        v.words.truncate(limit);
        v.weights.truncate(limit);
        Ok(v)
    }

    /// A vocabulary that needs no download: the language's stopwords at the top ranks (running
    /// text is about half function words), then `size` pseudo-words whose two-letter prefixes
    /// follow the built-in reference distribution, with Zipf weights. Prefix classes therefore
    /// see what they see in the language; the words themselves are not real.
    pub fn builtin(lang: Lang, size: usize, seed: u64) -> Vocabulary {
        let reference = Reference::builtin(lang);
        let prefixes: Vec<(&str, f64)> = reference
            .prefixes
            .iter()
            .filter(|(p, _)| p.chars().all(char::is_alphabetic))
            .map(|(p, s)| (p.as_str(), *s))
            .collect();
        let alias = Alias::new(&prefixes.iter().map(|p| p.1).collect::<Vec<_>>());
        let mut rng = Rng::new(seed ^ 0x766f_6361_6275_6c61);
        // Later letters follow the letters of the prefixes, weighted by the prefixes' shares.
        let mut letter_mass: std::collections::BTreeMap<char, f64> = Default::default();
        for (p, share) in &prefixes {
            for c in p.chars().filter(|c| c.is_lowercase()) {
                *letter_mass.entry(c).or_default() += share;
            }
        }
        let letters: Vec<char> = letter_mass.keys().copied().collect();
        let letter_alias = Alias::new(&letter_mass.values().copied().collect::<Vec<_>>());
        let mut entries: Vec<(String, f64)> = Vec::with_capacity(size + 200);
        let stopwords = lang.stopwords();
        // Function words take about half of running text: spread that mass over the stopwords
        // by Zipf's law, on the scale of the content words' weights below.
        let content_mass: f64 = (1..=size).map(|r| 1.0 / r as f64).sum();
        let stop_norm: f64 = (1..=stopwords.len()).map(|r| 1.0 / r as f64).sum();
        for (r, w) in stopwords.iter().enumerate() {
            entries.push((w.clone(), content_mass / stop_norm / (r + 1) as f64));
        }
        let mut seen: std::collections::HashSet<String> = stopwords.into_iter().collect();
        let mut rank = 0usize;
        while rank < size {
            let prefix = prefixes[alias.sample(rng.next_u64())].0;
            // Short words are common and long ones rare, as in text: 0–9 more letters.
            let extra = (rng.below(4) + rng.below(4) + rng.below(3)).min(9);
            let mut w = prefix.to_string();
            for _ in 0..extra {
                w.push(letters[letter_alias.sample(rng.next_u64())]);
            }
            if seen.insert(w.clone()) {
                rank += 1;
                entries.push((w, 1.0 / rank as f64));
            }
        }
        Vocabulary::new(entries).expect("stopwords and pseudo-words")
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True when there are no words (never, once built).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The words, most frequent first.
    pub fn words(&self) -> &[String] {
        &self.words
    }
}

/// Walker's alias method (Vose's construction): draws index i with probability w_i / Σw from one
/// random 64-bit number in O(1).
#[derive(Clone, Debug)]
pub struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    /// The table of non-negative weights (at least one positive).
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l as u32;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What is left is 1 up to rounding.
        for i in small.into_iter().chain(large) {
            prob[i] = 1.0;
        }
        Alias { prob, alias }
    }

    /// An index drawn from the weights: the high bits of `x` pick a column, the low 32 bits
    /// decide between it and its alias.
    #[inline]
    pub fn sample(&self, x: u64) -> usize {
        let col = (((x >> 32) * self.prob.len() as u64) >> 32) as usize;
        let u = (x & 0xffff_ffff) as f64 / 4_294_967_296.0;
        if u < self.prob[col] {
            col
        } else {
            self.alias[col] as usize
        }
    }
}

/// The shape of a generated collection. Defaults give documents of 20–4,000 words (median 120,
/// mean about 180), 1–3 topics of 2,000, and 25–60% topical words.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Shape {
    /// Number of topics.
    pub topics: u32,
    /// Words per topic.
    pub topic_words: u32,
    /// Median document length in words (of the lognormal).
    pub median_words: f64,
    /// σ of the log length.
    pub sigma: f64,
    /// Shortest document, in words.
    pub min_words: u32,
    /// Longest document, in words.
    pub max_words: u32,
    /// Seed of everything.
    pub seed: u64,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            topics: 2000,
            topic_words: 300,
            median_words: 120.0,
            sigma: 0.9,
            min_words: 20,
            max_words: 4000,
            seed: 1,
        }
    }
}

/// Makes documents of a [`Shape`] over a [`Vocabulary`].
#[derive(Clone, Debug)]
pub struct Generator {
    vocab: Vocabulary,
    background: Alias,
    /// Per topic: its words (vocabulary indices).
    topics: Vec<Vec<u32>>,
    /// Zipf weights by rank within a topic (1/r), which a document gives its topics' words in
    /// an order of its own.
    ranks: Alias,
    shape: Shape,
}

/// The version of the documents a [`Generator`] makes: scale benchmarks name their files with it,
/// so that files of an earlier version are not reused. Version 2 gives each document its own
/// order of its topics' words (the module's notes).
pub const VERSION: u32 = 2;

/// Vocabulary ranks below this are function words and the most general ones: no topic uses them.
const TOPIC_SKIP: usize = 100;

impl Generator {
    /// A generator; fails when the shape does not make sense.
    pub fn new(vocab: Vocabulary, shape: Shape) -> Result<Generator> {
        if shape.topics == 0 || shape.topic_words == 0 {
            return Err(Error::Invalid(
                "topics and topic words must be positive".into(),
            ));
        }
        let lengths_ok = shape.min_words >= 1
            && shape.min_words <= shape.max_words
            && shape.median_words > 0.0
            && shape.sigma >= 0.0;
        if !lengths_ok {
            return Err(Error::Invalid(
                "document lengths: need 1 ≤ min ≤ max, median > 0, σ ≥ 0".into(),
            ));
        }
        let background = Alias::new(&vocab.weights);
        // Topic words come from the middle and the tail: weights flattened to their square root,
        // the most general words left out.
        let skip = TOPIC_SKIP.min(vocab.len() / 2);
        let flat: Vec<f64> = vocab.weights[skip..].iter().map(|w| w.sqrt()).collect();
        let pick = Alias::new(&flat);
        let per_topic = (shape.topic_words as usize).min(flat.len());
        let topics = (0..shape.topics)
            .map(|t| {
                let mut rng = Rng::new(mix(shape.seed, 0x746f_7069_6300_0000 | t as u64));
                let mut words: Vec<u32> = Vec::with_capacity(per_topic);
                let mut tries = 0;
                while words.len() < per_topic && tries < per_topic * 20 {
                    tries += 1;
                    let w = (skip + pick.sample(rng.next_u64())) as u32;
                    if !words.contains(&w) {
                        words.push(w);
                    }
                }
                words
            })
            .collect();
        let weights: Vec<f64> = (1..=per_topic).map(|r| 1.0 / r as f64).collect();
        Ok(Generator {
            vocab,
            background,
            topics,
            ranks: Alias::new(&weights),
            shape,
        })
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    /// Document number `i` into `out` (cleared first): sentences of 6–25 words, capitalised and
    /// ended with a full stop, now and then a comma. The same seed and `i` give the same text.
    pub fn document(&self, i: u64, out: &mut String) {
        let s = &self.shape;
        let mut rng = Rng::new(mix(s.seed, i));
        let len = (s.median_words * (s.sigma * normal(&mut rng)).exp())
            .round()
            .clamp(s.min_words as f64, s.max_words as f64) as usize;
        let k = 1 + rng.below(3);
        let mut mine = [0usize; 3];
        let mut cut = [0f64; 3];
        let share = 0.25 + 0.35 * rng.unit();
        let mut acc = 0.0;
        let split: Vec<f64> = (0..k).map(|_| 0.2 + rng.unit()).collect();
        let total: f64 = split.iter().sum();
        for j in 0..k {
            mine[j] = rng.below(self.topics.len());
            acc += share * split[j] / total;
            cut[j] = acc;
        }
        // This document's order of each of its topics' words: rank r (a Zipf draw) is word
        // `order[j][r]` (Fisher–Yates, from the document's own stream).
        let order: Vec<Vec<u32>> = mine[..k]
            .iter()
            .map(|&t| {
                let mut words = self.topics[t].clone();
                for i in (1..words.len()).rev() {
                    words.swap(i, rng.below(i + 1));
                }
                words
            })
            .collect();
        out.clear();
        let mut left_in_sentence = 0usize;
        for n in 0..len {
            let u = rng.unit();
            let word = match (0..k).find(|&j| u < cut[j]) {
                Some(j) => {
                    let words = &order[j];
                    // A topic may have fewer words than the ranks (a small vocabulary).
                    words[self.ranks.sample(rng.next_u64()) % words.len()] as usize
                }
                None => self.background.sample(rng.next_u64()),
            };
            let word = &self.vocab.words[word];
            if left_in_sentence == 0 {
                left_in_sentence = 6 + rng.below(20);
                if n > 0 {
                    out.push(' ');
                }
                let mut chars = word.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(word);
            }
            left_in_sentence -= 1;
            if left_in_sentence == 0 || n + 1 == len {
                out.push('.');
                left_in_sentence = 0;
            } else if rng.below(16) == 0 {
                out.push(',');
            }
        }
    }
}

/// A 64-bit mix of a seed and a number (SplitMix64 of their combination), so that documents and
/// topics get independent streams.
fn mix(seed: u64, i: u64) -> u64 {
    Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03))
        .next_u64()
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_draws_follow_the_weights() {
        let a = Alias::new(&[1.0, 2.0, 7.0, 0.0]);
        let mut rng = Rng::new(5);
        let mut counts = [0u32; 4];
        for _ in 0..100_000 {
            counts[a.sample(rng.next_u64())] += 1;
        }
        assert_eq!(counts[3], 0);
        for (c, p) in counts.iter().zip([0.1, 0.2, 0.7]) {
            let f = *c as f64 / 100_000.0;
            assert!((f - p).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn documents_are_deterministic_and_shaped() {
        let g = Generator::new(Vocabulary::builtin(Lang::En, 20_000, 1), Shape::default()).unwrap();
        let (mut a, mut b) = (String::new(), String::new());
        g.document(17, &mut a);
        g.document(17, &mut b);
        assert_eq!(a, b);
        g.document(18, &mut b);
        assert_ne!(a, b);
        let mut lens: Vec<usize> = (0..2000)
            .map(|i| {
                g.document(i, &mut a);
                a.split_whitespace().count()
            })
            .collect();
        lens.sort_unstable();
        assert!(lens[0] >= 20 && *lens.last().unwrap() <= 4000);
        let median = lens[1000] as f64;
        assert!((median - 120.0).abs() < 15.0, "median {median}");
        // About half the words are stopwords, as in running text.
        let stop: std::collections::HashSet<String> = Lang::En.stopwords().into_iter().collect();
        g.document(3, &mut a);
        let words: Vec<String> = pocketdex::text::words(&a).collect();
        let share = words.iter().filter(|w| stop.contains(*w)).count() as f64 / words.len() as f64;
        assert!((0.2..0.7).contains(&share), "stopword share {share}");
    }

    #[test]
    fn documents_on_one_topic_are_not_near_duplicates() {
        // Few topics, so that many documents have the same single topic: with one order of a
        // topic's words for all its documents (version 1), these 1,500 documents held 1,192
        // pairs at cosine ≥ 0.8.
        let shape = Shape {
            topics: 8,
            median_words: 400.0,
            ..Shape::default()
        };
        let g = Generator::new(Vocabulary::builtin(Lang::En, 20_000, 1), shape).unwrap();
        let texts: Vec<String> = (0..1500)
            .map(|i| {
                let mut t = String::new();
                g.document(i, &mut t);
                t
            })
            .collect();
        let analyzer = pocketdex::text::Analyzer::new(Lang::En.stopwords());
        let docs = crate::terms::TermDocs::from_texts(&analyzer, &texts);
        let close = crate::truth::truth(&docs, 0.5);
        let near = close.iter().filter(|p| p.cosine >= 0.8).count();
        assert_eq!(near, 0, "pairs at cosine ≥ 0.8: {near}");
        // Documents on a topic still share its words: the topical share shows in cosines of
        // 0.5 and more between some of them, which background words alone never reach.
        assert!(!close.is_empty());
    }

    #[test]
    fn median_and_sigma_set_the_lengths() {
        // σ 0: every document has the median length (`synth --generate --words 40 --sigma 0`).
        let shape = Shape {
            median_words: 40.0,
            sigma: 0.0,
            ..Shape::default()
        };
        let g = Generator::new(Vocabulary::builtin(Lang::En, 20_000, 1), shape).unwrap();
        let mut a = String::new();
        for i in 0..50 {
            g.document(i, &mut a);
            assert_eq!(a.split_whitespace().count(), 40);
        }
    }

    #[test]
    fn word_lists_rank_by_line_or_count() {
        let v = Vocabulary::from_word_list("b\t1\na\t5\n# comment\nc\t2\n", 10).unwrap();
        assert_eq!(v.words(), ["a", "c", "b"]);
        // The limit keeps the most frequent, wherever they stand in the list.
        let v = Vocabulary::from_word_list("b\t1\na\t5\nc\t2\n", 2).unwrap();
        assert_eq!(v.words(), ["a", "c"]);
        let v = Vocabulary::from_word_list("x\ny\nz\n", 2).unwrap();
        assert_eq!(v.words(), ["x", "y"]);
        assert!(Vocabulary::from_word_list("x\tnot-a-number\n", 10).is_err());
    }
}
