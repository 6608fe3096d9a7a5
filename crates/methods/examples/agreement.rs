//! Each method against its brute force on a collection: the table "Agreement with brute force"
//! of the README. For every method (or those named with `--method`), runs
//! [`Detector::find`] and [`Detector::brute_force`] (the exact score of all n² pairs) with the
//! default options and prints one JSON line: the brute-force pairs, the share of them the
//! method reports (directly, or through identical copies), the reported pairs whose score
//! differs from the brute force's, and those below the threshold.
//!
//! ```sh
//! cargo run --release -p pocketdex-methods --example agreement -- data/dev/debian-copyright
//! cargo run --release -p pocketdex-methods --example agreement -- data/dev/wiki-synth.jsonl \
//!     --method spotsigs --spot-jaccard set --min-idf 0.2 --max-idf 0.85
//! ```
//!
//! `--spot-jaccard set`, `--min-idf X` and `--max-idf X` set SpotSigs' options as `dups` does.
//!
//! Inputs are read as `pocketdex dups` reads them (directories, files, `.jsonl`), markup
//! removed. Brute force is quadratic: about 20 million pairs per method at 6,400 documents.
use pocketdex::corpus;
use pocketdex_methods::spotsigs::SpotJaccard;
use pocketdex_methods::{Detector, Evidence, Features, Options, Pair, ALL};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut inputs = Vec::new();
    let mut only = Vec::new();
    // Every pair found is listed, so that each brute-force pair can be looked up.
    let mut options = Options {
        spanning_above: usize::MAX,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--method" => only.push(value()?.clone()),
            "--min-idf" => options.min_idf = value()?.parse()?,
            "--max-idf" => options.max_idf = value()?.parse()?,
            "--spot-jaccard" => {
                options.spot_jaccard = match value()?.as_str() {
                    "set" => SpotJaccard::Set,
                    _ => SpotJaccard::Weighted,
                }
            }
            _ => inputs.push(a.clone()),
        }
    }
    if inputs.is_empty() {
        return Err("usage: agreement INPUT... [--method M]...".into());
    }
    let texts = corpus::texts(&corpus::sources(&inputs)?)?;
    for &method in ALL {
        if !only.is_empty() && !only.iter().any(|m| m == method.name()) {
            continue;
        }
        let d = Detector::new(method, options.clone())?;
        let features: Vec<Features> = texts.par_iter().map(|t| d.prepare(t)).collect();
        let out = d.find(&features)?;
        let truth: HashMap<(u32, u32), f64> = d
            .brute_force(&features)?
            .into_iter()
            .map(|p| ((p.a, p.b), p.score))
            .collect();
        let (recall, disagree, below) = agreement(texts.len(), &out.pairs, &truth, d.threshold());
        println!(
            "{{\"method\": \"{}\", \"measure\": \"{}\", \"documents\": {}, \"brute_force_pairs\": {}, \"reported\": {}, \"recall\": {recall:.4}, \"disagree\": {disagree}, \"below_threshold\": {below}}}",
            method.name(),
            d.measure(),
            texts.len(),
            truth.len(),
            out.pairs.len()
        );
    }
    Ok(())
}

/// The share of `truth` reported (directly, or with both documents joined through identical
/// copies), the reported pairs whose score is not the brute force's, and those below `t`.
fn agreement(
    n: usize,
    pairs: &[Pair],
    truth: &HashMap<(u32, u32), f64>,
    t: f64,
) -> (f64, usize, usize) {
    let mut rep: Vec<u32> = (0..n as u32).collect();
    fn find(rep: &mut [u32], mut x: u32) -> u32 {
        while rep[x as usize] != x {
            rep[x as usize] = rep[rep[x as usize] as usize];
            x = rep[x as usize];
        }
        x
    }
    let mut disagree = 0;
    let mut below = 0;
    for p in pairs {
        if p.evidence == Evidence::Identical {
            let (x, y) = (find(&mut rep, p.a), find(&mut rep, p.b));
            rep[x.max(y) as usize] = x.min(y);
        }
        if p.score + 1e-9 < t {
            below += 1;
        }
        // A later copy's pair (score 1) stands for its first's; it agrees when the copies are
        // identical to the brute force as well.
        match truth.get(&(p.a, p.b)) {
            Some(s) if (s - p.score).abs() < 1e-9 => {}
            _ => disagree += 1,
        }
    }
    let reported: HashSet<(u32, u32)> = pairs
        .iter()
        .map(|p| {
            let (x, y) = (find(&mut rep, p.a), find(&mut rep, p.b));
            (x.min(y), x.max(y))
        })
        .collect();
    let covered = truth
        .keys()
        .filter(|&&(a, b)| {
            let (x, y) = (find(&mut rep, a), find(&mut rep, b));
            x == y || reported.contains(&(x.min(y), x.max(y)))
        })
        .count();
    let recall = if truth.is_empty() {
        1.0
    } else {
        covered as f64 / truth.len() as f64
    };
    (recall, disagree, below)
}
