//! `pocketdex dups`: groups of near-duplicate documents found with one of the classical methods;
//! also the reading and detection that `pocketdex report` shares.

use super::util;
use pocketdex::corpus::{self, Item, Skipped};
use pocketdex::Lang;
use pocketdex_methods::exact::Exact;
use pocketdex_methods::groups::{clusters, group_pairs, Group};
use pocketdex_methods::spotsigs::SpotJaccard;
use pocketdex_methods::{Detector, Evidence, Level, Method, Options, Outcome, Pair};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Find groups of near-duplicate documents with a classical method
///
/// Every pair of documents whose score reaches the threshold is found (never by comparing all
/// pairs); the groups are the connected components of those pairs, largest first, each listed
/// with its members and the scores of the pairs inside it.
///
/// Methods (score and default threshold):
///   exact     identical canonical text after --level (all six levels by default)
///   fuzzy     tf-idf cosine of content words ≥ 0.8 (candidates: the fuzzy-fingerprint index)
///   minhash   Jaccard of 3-word shingles of content words ≥ 0.8 (candidates: 128 MinHash values)
///   trials    Jaccard of 2-word n-grams ≥ 0.9 (candidates: 2 of 6 trials of 14 hashes agree)
///   spex      S3 of 8-word chunks ≥ 0.58 (chunks repeated in the collection; exact)
///   spotsigs  weighted Jaccard of stopword-anchored spot signatures ≥ 0.6 (exact)
///   simhash   cosine of term frequencies ≥ 0.8, among 64-bit simhashes within 3 bits
///
/// The estimating methods (fuzzy, minhash, trials, simhash) verify every candidate with the
/// exact measure and report it, so no pair is reported below the threshold; --no-verify
/// reports their own estimates instead. Documents with identical features are compared once:
/// each later copy is reported as one pair with the first, score 1. Documents a method cannot
/// describe (no content words; for SpotSigs, too few antecedents, as error pages have) are set
/// aside and reported.
///
/// INPUT is read as by `pocketdex build`: a directory, a file, a .jsonl or .parquet file or -
/// (standard input: JSON Lines if it starts with `{`, else one document); markup is removed.
///
/// With --output FILE.parquet or FILE.jsonl, also one row per document read (skipped ones
/// aside) for deduplicating pipelines: {id, cluster_id, cluster_size, representative_id,
/// is_duplicate, score}. A cluster is a group, or one document in none (size 1, its own
/// representative); cluster_id numbers the groups as --json does (1, 2, …, largest first),
/// then the documents in no group in input order. The representative is the cluster's first
/// document in input order, and every other member is a duplicate, so the rows where
/// is_duplicate is false are the deduplicated collection. score is the highest score of a
/// reported pair joining the document within its group (null for a cluster of one). Parquet
/// types: id and representative_id Utf8, cluster_id and cluster_size Int64, is_duplicate
/// Boolean, score Float64 (nullable); Snappy-compressed. The file is written atomically; the
/// groups are then not listed on stdout (--json still prints its lines).
///
/// A group of more than --spanning-above documents (default 100) lists a spanning tree of its
/// pairs, the best-scoring ones that join it, instead of every pair found ("pairs_listed":
/// "spanning" in JSON): m near-identical documents would otherwise cost up to m(m − 1)/2
/// lines. The groups, and every document's best score, are the same either way.
///
/// Memory: every document's features are held (see the README's "At scale"). minhash and
/// trials spill the values they count pairs with to temporary files in TMPDIR (12 bytes per
/// value: 3 GB for minhash at 2 million documents) once there are more than 4 million.
///
/// Exit status: 0 when some group was found, 1 when none, 2 on error (no document read at all,
/// an input given twice); the same when the output is no longer read (`| head`).
///
/// With --json, JSON Lines: one {"type": "group", "group", "size", "members": [ids], "pairs":
/// [{"a", "b", "score", "estimate"?, "evidence"}]} per group; {"type": "set_aside", "id",
/// "reason"} and {"type": "skipped", "id", "reason"} per document left out; and a final
/// {"type": "summary", ...} with the counts.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    method: MethodArgs,
    /// JSON Lines output.
    #[arg(long)]
    json: bool,
    /// Also write one row per document to FILE (see above): Parquet for FILE.parquet, JSON
    /// Lines for FILE.jsonl or FILE.ndjson (the extension in any case).
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    input: util::InputArgs,
    /// List every skipped and set-aside document on stderr, not only the first ten.
    #[arg(short, long)]
    verbose: bool,
    /// No progress bar, summary, notes, warnings or list of skipped inputs: only the groups
    /// (and errors).
    #[arg(short, long)]
    quiet: bool,
}

/// The method and its parameters (shared with `pocketdex report`).
#[derive(clap::Args, Debug, Clone)]
pub struct MethodArgs {
    /// The method (see above).
    #[arg(short, long, default_value = "minhash",
          value_parser = crate::cli::util::choice(pocketdex_methods::ALL, |m| m.name(), |m| m.description()))]
    method: &'static dyn Method,
    /// Keep pairs whose score is at least T (0 < T ≤ 1); default: the method's.
    #[arg(short, long, value_name = "T")]
    threshold: Option<f64>,
    /// Report the estimating methods' own estimates (sketch agreement, agreeing trials, Hamming
    /// distance, fuzzy sketch) instead of the exact measure.
    #[arg(long)]
    no_verify: bool,
    /// A group of more than N documents lists a spanning tree of its pairs, the best-scoring
    /// ones that join it (one fewer than its members), not every pair found: a group of m near-identical
    /// documents would otherwise list up to m(m − 1)/2. Such groups are cut to their tree while
    /// the pairs are found, so they are not held either. The groups are the same either way.
    #[arg(long, value_name = "N", default_value_t = Options::default().spanning_above,
          value_parser = util::at_least_one)]
    spanning_above: usize,
    /// Features held in memory (e.g. 512M, 2G); a collection's features beyond it are kept in
    /// an unnamed temporary file in TMPDIR and read through the page cache, which the system
    /// reclaims under memory pressure. fuzzy sorts its candidates in runs of a quarter of it,
    /// spilled to TMPDIR beyond the first. Raise it where memory is plentiful; the method's own
    /// tables come on top.
    #[arg(long, value_name = "SIZE", default_value = "512M",
          value_parser = crate::cli::util::parse_size)]
    memory_limit: u64,
    #[command(flatten)]
    params: ParamArgs,
}

/// The language and every method's parameters (shared with `pocketdex compare`).
#[derive(clap::Args, Debug, Clone)]
pub struct ParamArgs {
    /// Language of the documents: stopwords, stemmer and SpotSigs antecedents.
    #[arg(long, value_parser = crate::cli::util::lang(), default_value = "en")]
    lang: Lang,
    /// exact: canonicalization level; each includes the ones before it.
    #[arg(long, default_value = "stem", help_heading = "exact",
          value_parser = crate::cli::util::choice(&Level::ALL, Level::name, Level::description))]
    level: Level,
    /// minhash: words per shingle.
    #[arg(long, default_value_t = Options::default().shingle, value_name = "Q", help_heading = "minhash")]
    shingle: usize,
    /// minhash: hash permutations (sketch values per document).
    #[arg(long, default_value_t = Options::default().permutations, value_name = "P", help_heading = "minhash")]
    permutations: usize,
    /// trials: words per n-gram.
    #[arg(long, default_value_t = Options::default().ngram, value_name = "N", help_heading = "trials")]
    ngram: usize,
    /// trials: hash functions per trial (more = stricter).
    #[arg(long, default_value_t = Options::default().hashes, value_name = "H", help_heading = "trials")]
    hashes: usize,
    /// trials: number of trials.
    #[arg(long, default_value_t = Options::default().trials, value_name = "R", help_heading = "trials")]
    trials: usize,
    /// trials: trials that must agree for a duplicate.
    #[arg(long, default_value_t = Options::default().agree, value_name = "A", help_heading = "trials")]
    agree: usize,
    /// spex: words per chunk.
    #[arg(long, default_value_t = Options::default().chunk, value_name = "L", help_heading = "spex")]
    chunk: usize,
    /// spotsigs: non-stopwords after each antecedent.
    #[arg(long, default_value_t = Options::default().chain, value_name = "C", help_heading = "spotsigs")]
    chain: usize,
    /// spotsigs: antecedents, comma-separated (default: the, is, was, has, … for en).
    #[arg(
        long,
        value_name = "W1,W2,...",
        value_delimiter = ',',
        help_heading = "spotsigs"
    )]
    antecedents: Vec<String>,
    /// spotsigs: documents with fewer spot signatures (repeats counted), before or after the
    /// idf filter, are set aside.
    #[arg(long, default_value_t = Options::default().min_signatures, value_name = "M", help_heading = "spotsigs")]
    min_signatures: usize,
    /// spotsigs: the score: the paper's weighted (multiset) Jaccard, or the Jaccard of the
    /// signature sets.
    #[arg(long, default_value = "weighted", value_name = "KIND", help_heading = "spotsigs",
          value_parser = crate::cli::util::choice(&SpotJaccard::ALL, SpotJaccard::name, SpotJaccard::description))]
    spot_jaccard: SpotJaccard,
    /// spotsigs: drop signatures whose idf, ln((N+1)/df) / ln(N+1) over the N documents, is
    /// below this: those of more than (N+1)^(1−X) documents, boilerplate (the authors: 0.2;
    /// default 0 keeps them, since in a collection of many copies of one text every signature
    /// is that common).
    #[arg(long, default_value_t = Options::default().min_idf, value_name = "X", help_heading = "spotsigs")]
    min_idf: f64,
    /// spotsigs: drop signatures whose idf is above this: those of fewer than (N+1)^(1−X)
    /// documents, too rare to match (the authors: 0.85; default 1 keeps them, since that drops
    /// the signatures a pair of copies shares with no other document).
    #[arg(long, default_value_t = Options::default().max_idf, value_name = "X", help_heading = "spotsigs")]
    max_idf: f64,
    /// simhash: largest Hamming distance (bits of 64) searched.
    #[arg(long, default_value_t = Options::default().max_hamming, value_name = "K", help_heading = "simhash")]
    max_hamming: u32,
}

impl ParamArgs {
    /// The options these parameters give (threshold and verification at their defaults).
    pub fn options(&self) -> Options {
        Options {
            lang: self.lang,
            threshold: None,
            verify: true,
            level: self.level,
            shingle: self.shingle,
            permutations: self.permutations,
            ngram: self.ngram,
            hashes: self.hashes,
            trials: self.trials,
            agree: self.agree,
            chunk: self.chunk,
            chain: self.chain,
            antecedents: (!self.antecedents.is_empty()).then(|| self.antecedents.clone()),
            min_signatures: self.min_signatures,
            spot_jaccard: self.spot_jaccard,
            min_idf: self.min_idf,
            max_idf: self.max_idf,
            max_hamming: self.max_hamming,
            ..Options::default()
        }
    }
}

impl ParamArgs {
    /// The options given a value other than their default that `method` does not use (each
    /// option is one method's, as its help heading says).
    fn unused_by(&self, method: &dyn Method) -> Vec<&'static str> {
        let d = Options::default();
        let given = [
            ("--level", "exact", self.level != d.level),
            ("--shingle", "minhash", self.shingle != d.shingle),
            (
                "--permutations",
                "minhash",
                self.permutations != d.permutations,
            ),
            ("--ngram", "trials", self.ngram != d.ngram),
            ("--hashes", "trials", self.hashes != d.hashes),
            ("--trials", "trials", self.trials != d.trials),
            ("--agree", "trials", self.agree != d.agree),
            ("--chunk", "spex", self.chunk != d.chunk),
            ("--chain", "spotsigs", self.chain != d.chain),
            ("--antecedents", "spotsigs", !self.antecedents.is_empty()),
            (
                "--min-signatures",
                "spotsigs",
                self.min_signatures != d.min_signatures,
            ),
            (
                "--spot-jaccard",
                "spotsigs",
                self.spot_jaccard != d.spot_jaccard,
            ),
            ("--min-idf", "spotsigs", self.min_idf != d.min_idf),
            ("--max-idf", "spotsigs", self.max_idf != d.max_idf),
            (
                "--max-hamming",
                "simhash",
                self.max_hamming != d.max_hamming,
            ),
        ];
        given
            .into_iter()
            .filter(|&(_, m, changed)| changed && m != method.name())
            .map(|(option, _, _)| option)
            .collect()
    }
}

impl MethodArgs {
    fn options(&self) -> Options {
        Options {
            threshold: self.threshold,
            verify: !self.no_verify,
            spanning_above: self.spanning_above,
            memory_limit: self.memory_limit,
            ..self.params.options()
        }
    }
}

/// Everything one run of a method found.
pub struct Found {
    /// Document ids in input order.
    pub ids: Vec<String>,
    /// The detector that ran.
    pub detector: Detector,
    /// Its pairs, set-aside documents and counts.
    pub outcome: Outcome,
    /// The equivalence groups.
    pub groups: Vec<Group>,
    /// Inputs the reader skipped (empty, binary, unreadable).
    pub skipped: Vec<Skipped>,
    /// Bytes of plain text read.
    pub bytes: u64,
    /// Seconds for reading and finding.
    pub seconds: f64,
    /// How many documents repeat an earlier one's id, and the first such id.
    pub repeated_ids: Option<(u64, String)>,
}

/// Reads the inputs, prepares every document (in parallel, while reading) and finds the pairs.
pub fn detect(
    inputs: &[PathBuf],
    reader: &corpus::Reader,
    m: &MethodArgs,
    quiet: bool,
) -> anyhow::Result<Found> {
    let start = Instant::now();
    let detector = Detector::new(m.method, m.options())?;
    // An option of another method changes nothing: say so rather than run as if it did.
    let mut unused = m.params.unused_by(m.method);
    if m.method.is(&Exact) && m.threshold.is_some() {
        unused.insert(0, "--threshold (exact copies are identical at --level)");
    }
    if m.no_verify && !m.method.estimates() {
        unused.insert(
            0,
            "--no-verify (its score is its exact measure, not an estimate)",
        );
    }
    if !unused.is_empty() && !quiet {
        eprintln!(
            "note: {} not used by {}: ignored",
            unused.join(", "),
            m.method.name()
        );
    }
    util::inputs_once(inputs, "each of its documents would be paired with itself")?;
    let sources = corpus::sources(inputs)?;
    if !quiet {
        util::note_inputs(inputs);
    }
    if m.method.is(&Exact) && m.params.level == Level::Whitespace && !quiet {
        eprintln!(
            "note: documents are read with markup removed, so --level whitespace equals --level \
             markup here; `pocketdex compare` shows the levels of raw files"
        );
    }
    let bar = util::input_progress(&sources, quiet, "reading");
    // A misspelt --id-key would name every record by its place: the rows of `-o` would join
    // back to nothing.
    let by_place = super::ingest::by_place(reader, &sources);
    let mut named_by_place = 0u64;
    let mut ids = Vec::new();
    let mut store = detector.store();
    let mut skipped = Vec::new();
    let mut bytes = 0u64;
    // Documents with invalid UTF-8 and the sequences replaced, reported as `build` does.
    let mut invalid = super::ingest::Summary::default();
    let non_regular = reader.for_each_batch(
        &sources,
        512,
        |item| match item {
            Item::Doc(d) => {
                let f = detector.prepare(&d.text);
                Ok((d.id, d.text.len(), d.invalid_utf8, f))
            }
            Item::Skipped(s) => Err(s),
        },
        |n| {
            if bar.length().is_some() {
                bar.inc_length(n)
            }
        },
        |batch| {
            for item in batch {
                bar.inc(1);
                match item {
                    Ok((id, len, replaced, f)) => {
                        named_by_place += by_place(&id) as u64;
                        ids.push(id);
                        bytes += len as u64;
                        if replaced > 0 {
                            invalid.invalid.0 += 1;
                            invalid.invalid.1 += replaced as u64;
                        }
                        store.push(f)?;
                    }
                    Err(s) => skipped.push(s),
                }
            }
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    super::ingest::check_id_key(&reader.keys.id, ids.len() as u64, named_by_place)?;
    if !quiet {
        invalid.warn_invalid();
    }
    if !quiet && non_regular > 0 {
        eprintln!(
            "note: {} not followed",
            super::util::plural_were(
                non_regular as u64,
                "symlink or special file",
                "symlinks or special files"
            )
        );
    }
    if ids.is_empty() {
        // Nothing read is an error, not "no duplicates": a script must tell the two apart.
        let summary = super::ingest::Summary {
            skipped,
            ..Default::default()
        };
        summary.report(false);
        anyhow::bail!("nothing to compare: {}", summary.nothing_read());
    }
    if !quiet && ids.len() < 10 && m.method.is(&pocketdex_methods::fuzzy::Fuzzy) {
        eprintln!(
            "note: fuzzy verifies pairs by their tf-idf cosine within the collection, and among \
             {} documents a word they all hold weighs nothing (idf = ln(N/df) = 0): near copies \
             score low in a collection this small; `pocketdex compare A B` scores one pair \
             alone, and `--method minhash` compares word sets",
            ids.len()
        );
    }
    let repeated_ids =
        pocketdex::repeated_ids(ids.iter().map(String::as_str)).map(|(n, f)| (n, f.to_string()));
    if let Some((n, first)) = repeated_ids.as_ref().filter(|_| !quiet) {
        util::warn_repeated_ids(*n, first, "each is treated as its own document");
    }
    store.seal()?;
    let outcome = detector.find_in(&store)?;
    drop(store);
    let groups = group_pairs(ids.len(), &outcome.pairs);
    Ok(Found {
        ids,
        detector,
        outcome,
        groups,
        skipped,
        bytes,
        seconds: start.elapsed().as_secs_f64(),
        repeated_ids,
    })
}

impl Found {
    /// Documents that are in some group.
    pub fn in_groups(&self) -> usize {
        self.groups.iter().map(|g| g.members.len()).sum()
    }

    /// A pair as JSON, with ids.
    pub fn pair_json(&self, p: &Pair) -> serde_json::Value {
        let mut o = json!({
            "a": self.ids[p.a as usize],
            "b": self.ids[p.b as usize],
            "score": p.score,
            "evidence": p.evidence,
        });
        if let Some(e) = p.estimate {
            o["estimate"] = json!(e);
        }
        o
    }

    /// True when the group lists a spanning tree of its pairs, not every pair found.
    pub fn spanned(&self, g: &Group) -> bool {
        g.members.len() > self.detector.options().spanning_above
    }

    /// A group as its JSON line.
    pub fn group_json(&self, number: usize, g: &Group) -> serde_json::Value {
        json!({
            "type": "group",
            "group": number,
            "size": g.members.len(),
            "members": g.members.iter().map(|&d| &self.ids[d as usize]).collect::<Vec<_>>(),
            "pairs_listed": if self.spanned(g) { "spanning" } else { "all" },
            "pairs": g.pairs.iter().map(|p| self.pair_json(p)).collect::<Vec<_>>(),
        })
    }

    /// The counts as the JSON summary object.
    pub fn summary_json(&self) -> serde_json::Value {
        let d = &self.detector;
        json!({
            "type": "summary",
            "method": d.method(),
            "threshold": d.threshold(),
            "measure": d.measure(),
            "verified": d.options().verify || !d.method().estimates(),
            "documents": self.ids.len(),
            "groups": self.groups.len(),
            "in_groups": self.in_groups(),
            "pairs": self.outcome.pairs.len(),
            "pairs_found": self.outcome.stats.pairs_found,
            "spanned_groups": self.outcome.stats.spanned_groups,
            "set_aside": self.outcome.set_aside.len(),
            "skipped": self.skipped.len(),
            "distinct": self.outcome.stats.distinct,
            "copies": self.outcome.stats.copies,
            "candidates": self.outcome.stats.candidates,
            "bytes": self.bytes,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
        })
    }

    /// Skipped and set-aside documents on stderr (the first ten unless `verbose`).
    pub fn report_left_out(&self, verbose: bool) {
        let lines: Vec<String> = self
            .skipped
            .iter()
            .map(|s| format!("skipped {}: {}", util::printable(&s.id), s.reason))
            .chain(self.outcome.set_aside.iter().map(|s| {
                let id = util::printable(&self.ids[s.doc as usize]);
                format!("set aside {id}: {}", s.reason)
            }))
            .collect();
        let shown = if verbose {
            lines.len()
        } else {
            lines.len().min(10)
        };
        for l in &lines[..shown] {
            eprintln!("{l}");
        }
        if shown < lines.len() {
            eprintln!("… and {} more (--verbose lists all)", lines.len() - shown);
        }
    }

    /// The one-paragraph summary on stderr.
    pub fn print_summary(&self) {
        let d = &self.detector;
        let n = self.ids.len();
        let in_groups = self.in_groups();
        eprintln!(
            "{}: {} ({}) in {:.2} s ({:.0} docs/s): {} group{} holding {} ({:.1}%), {} pair{} \
             with {}",
            d.method().name(),
            util::plural(n as u64, "document"),
            util::size(self.bytes),
            self.seconds,
            n as f64 / self.seconds.max(1e-9),
            self.groups.len(),
            if self.groups.len() == 1 { "" } else { "s" },
            util::plural(in_groups as u64, "document"),
            100.0 * in_groups as f64 / n.max(1) as f64,
            self.outcome.pairs.len(),
            if self.outcome.pairs.len() == 1 {
                ""
            } else {
                "s"
            },
            d.criterion(),
        );
        let s = &self.outcome.stats;
        eprintln!(
            "{} distinct ({} compared once), {} candidate pairs, {} set aside, {} skipped",
            s.distinct,
            match s.copies {
                1 => "1 later copy".to_string(),
                n => format!("{} later copies", util::thousands(n)),
            },
            s.candidates,
            self.outcome.set_aside.len(),
            self.skipped.len()
        );
        if s.spanned_groups > 0 {
            eprintln!(
                "groups of more than {} documents listed with a spanning tree of their pairs: {} ({} pairs found in all; --spanning-above raises the limit)",
                d.options().spanning_above,
                s.spanned_groups,
                s.pairs_found
            );
        }
        for note in &self.outcome.notes {
            eprintln!("{note}");
        }
    }
}

/// Evidence in words.
pub fn evidence_text(e: &Evidence) -> String {
    match *e {
        Evidence::Identical => "identical".into(),
        Evidence::Sketch { agree, of } => format!("{agree}/{of} sketch values"),
        Evidence::Trials { agree, of } => format!("{agree}/{of} trials"),
        Evidence::Shared { shared, a, b } => format!("{shared} shared of {a}/{b}"),
        Evidence::Hamming { distance } => format!("{distance} bits apart"),
        Evidence::Codes { groups } => {
            format!("{groups} code group{}", if groups == 1 { "" } else { "s" })
        }
        Evidence::Computed => String::new(),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Before any document is read.
    let output = match &args.output {
        Some(path) => {
            let format = super::clusters::Format::of(path)?;
            pocketdex::atomic::check_output(path)?;
            pocketdex::atomic::check_outside_inputs(path, &args.inputs)?;
            Some((path, format))
        }
        None => None,
    };
    let found = detect(&args.inputs, &args.input.reader(), &args.method, args.quiet)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(util::AnswerOut::new(stdout.lock()));
    if args.json {
        for (i, g) in found.groups.iter().enumerate() {
            writeln!(out, "{}", found.group_json(i + 1, g))?;
        }
        for s in &found.outcome.set_aside {
            let line =
                json!({"type": "set_aside", "id": found.ids[s.doc as usize], "reason": s.reason});
            writeln!(out, "{line}")?;
        }
        for s in &found.skipped {
            writeln!(
                out,
                "{}",
                json!({"type": "skipped", "id": s.id, "reason": s.reason})
            )?;
        }
        writeln!(out, "{}", found.summary_json())?;
    } else if output.is_none() {
        for (i, g) in found.groups.iter().enumerate() {
            let spanning = if found.spanned(g) {
                " (a spanning tree of its pairs: the best that join it)"
            } else {
                ""
            };
            writeln!(
                out,
                "group {}: {} documents{spanning}",
                i + 1,
                g.members.len()
            )?;
            for &m in &g.members {
                writeln!(out, "  {}", util::printable(&found.ids[m as usize]))?;
            }
            for p in &g.pairs {
                let est = match p.estimate {
                    Some(e) if found.detector.options().verify => format!(", estimate {e:.3}"),
                    _ => String::new(),
                };
                writeln!(
                    out,
                    "    {:.4}  {}  {}  ({}{est})",
                    p.score,
                    util::printable(&found.ids[p.a as usize]),
                    util::printable(&found.ids[p.b as usize]),
                    evidence_text(&p.evidence)
                )?;
            }
        }
    }
    out.flush()?;
    if let Some((path, format)) = output {
        let rows = clusters(found.ids.len(), &found.groups);
        super::clusters::write(path, format, &found.ids, &rows)?;
        if !args.quiet {
            eprintln!(
                "wrote {} ({} duplicates) to {}",
                util::plural(rows.len() as u64, "row"),
                util::thousands(rows.iter().filter(|r| r.is_duplicate).count() as u64),
                path.display()
            );
        }
        // Said whatever --quiet says: a join by id would keep or drop the wrong copy.
        if let Some((_, first)) = &found.repeated_ids {
            eprintln!(
                "warning: ids repeat (first: {}), so rows of {} with the same id are different documents: join the rows back to the documents by their order (one row per document read, in input order, skipped ones aside), not by id",
                util::printable(first),
                path.display()
            );
        }
    }
    if !args.quiet {
        found.report_left_out(args.verbose);
        found.print_summary();
    }
    Ok(if found.groups.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
