//! Development data with graded similarity: edited copies of real documents at controlled rates
//! (word substitutions, insertions, deletions, a sentence move, added boilerplate), so that an
//! evaluation covers the whole similarity range; and ([`generate`]) whole collections without
//! near-duplicates for scale tests. Deterministic for a given seed.

pub mod generate;

/// Lines of boilerplate that mail and web pages append.
const BOILERPLATE: [&str; 6] = [
    "Sent from my phone.",
    "This message and any attachments are confidential and intended solely for the addressee.",
    "Please consider the environment before printing this e-mail.",
    "Click here to unsubscribe from this list.",
    "All rights reserved.",
    "Diese Nachricht wurde automatisch erstellt.",
];

/// SplitMix64: a small, fixed generator, so copies are the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// What an edit did, for the record.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Edits {
    /// The per-word edit rate asked for.
    pub rate: f64,
    /// Words replaced by a vocabulary word.
    pub substituted: usize,
    /// Words removed.
    pub deleted: usize,
    /// Vocabulary words inserted.
    pub inserted: usize,
    /// Whether one sentence was moved elsewhere.
    pub sentence_moved: bool,
    /// Whether a line of boilerplate was appended.
    pub boilerplate: bool,
}

/// An edited copy of `text`: each word is substituted, deleted, or followed by an inserted word
/// with probability `rate / 3` each (new words drawn from `vocab`); with probability 1/2 one
/// sentence moves, with probability 3/10 a boilerplate line is appended.
pub fn edit(text: &str, rate: f64, vocab: &[&str], rng: &mut Rng) -> (String, Edits) {
    let mut e = Edits {
        rate,
        ..Edits::default()
    };
    let mut sentences: Vec<&str> = split_sentences(text);
    if sentences.len() > 2 && rng.unit() < 0.5 {
        let from = rng.below(sentences.len());
        let s = sentences.remove(from);
        let to = rng.below(sentences.len() + 1);
        sentences.insert(to, s);
        e.sentence_moved = from != to;
    }
    let mut out: Vec<&str> = Vec::new();
    let pick = |rng: &mut Rng| -> &str {
        if vocab.is_empty() {
            "word"
        } else {
            vocab[rng.below(vocab.len())]
        }
    };
    for word in sentences.iter().flat_map(|s| s.split_whitespace()) {
        let r = rng.unit();
        if r < rate / 3.0 {
            out.push(pick(rng));
            e.substituted += 1;
        } else if r < 2.0 * rate / 3.0 {
            e.deleted += 1;
        } else if r < rate {
            out.push(word);
            out.push(pick(rng));
            e.inserted += 1;
        } else {
            out.push(word);
        }
    }
    if rng.unit() < 0.3 {
        out.push(BOILERPLATE[rng.below(BOILERPLATE.len())]);
        e.boilerplate = true;
    }
    (out.join(" "), e)
}

/// Sentences: text split after `.`, `!` or `?` followed by white space.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut v = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for i in 0..b.len().saturating_sub(1) {
        if matches!(b[i], b'.' | b'!' | b'?') && b[i + 1].is_ascii_whitespace() {
            v.push(text[start..=i].trim());
            start = i + 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        v.push(rest);
    }
    v.retain(|s| !s.is_empty());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_zero_keeps_every_word_and_rates_are_honoured() {
        let text = "One two three. Four five six! Seven eight nine? Ten.";
        let mut rng = Rng::new(3);
        for _ in 0..20 {
            let (copy, e) = edit(text, 0.0, &["x"], &mut rng);
            let mut a: Vec<&str> = copy
                .split_whitespace()
                .filter(|w| !BOILERPLATE.iter().any(|b| b.contains(w)))
                .collect();
            let mut b: Vec<&str> = text.split_whitespace().collect();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
            assert_eq!(e.substituted + e.deleted + e.inserted, 0);
        }
        let long: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        let (_, e) = edit(&long, 0.3, &["x"], &mut Rng::new(1));
        let edited = (e.substituted + e.deleted + e.inserted) as f64 / 10_000.0;
        assert!((edited - 0.3).abs() < 0.02, "{edited}");
        assert_eq!(
            edit(&long, 0.3, &["x"], &mut Rng::new(9)),
            edit(&long, 0.3, &["x"], &mut Rng::new(9))
        );
    }
}
