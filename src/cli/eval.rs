//! `pocketdex eval`: measure retrieval quality against exact similarities.

use super::util;
use anyhow::Context;
use pocketdex::corpus::{self, Item, Source};
use pocketdex::fingerprint::Fingerprint;
use pocketdex::{Analyzer, Index, IndexBuilder, Lang, Params};
use pocketdex_eval::{self as eval, DocMap, Report, Settings, TermDocs};
use serde_json::json;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Measure recall and precision against exact similarities.
///
/// Computes the ground truth of INPUT (same forms as `build`): every pair of documents whose
/// tf-idf cosine of content words (markup and stopwords removed) is at least --min, with the
/// Jaccard of their word 3-shingles. Then queries the index (--index, or one built on the fly
/// with the default parameters) with every document, and reports recall and precision per
/// similarity bucket of 0.05, as in Figure 1 of "Wikipedia in the Pocket".
///
/// Writes to --out: eval.tsv (one row per bucket: lo hi pairs found recall found_both
/// recall_both long_pairs long_recall short_pairs short_recall mean_jaccard3 hits mean_score
/// bias rmse score_ge_lo correct precision; see the `pocketdex_eval` documentation), eval.json
/// (everything: settings, index parameters, buckets, summary, timings), eval.svg (recall and
/// precision curves) and truth.tsv (the pairs, in the format of scripts/oracle/truth.py).
///
/// Recall of a bucket: its truth pairs (a, b) where a's hits contain b or b's contain a.
/// precision(s): of the hits (other than the query itself) with score ≥ s, the share whose true
/// cosine is ≥ s. "long": both documents have at least the index's fuzzy-path number of terms.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The index to measure; its documents are matched to INPUT by id. Default: build one from
    /// INPUT with the default parameters (in memory).
    #[arg(long, value_name = "FILE.pdx")]
    index: Option<PathBuf>,
    /// Language of the documents when building the index (default: en). With --index, the
    /// index's own stopwords are used.
    #[arg(long, value_parser = crate::cli::util::lang())]
    lang: Option<Lang>,
    /// Where the idf table of the index built from INPUT comes from (as `build --idf`; default:
    /// collection). Not with --index, whose own table is used.
    #[arg(long, value_name = "collection|language|FILE.pdx", conflicts_with = "index",
          value_parser = util::IdfSource::parse)]
    idf: Option<util::IdfSource>,
    /// Directory for eval.tsv, eval.json, eval.svg and truth.tsv (created if missing).
    #[arg(
        short,
        long,
        visible_alias = "output",
        default_value = "eval-out",
        value_name = "DIR"
    )]
    out: PathBuf,
    /// Lowest cosine of a truth pair.
    #[arg(long, default_value_t = 0.5, value_name = "COS")]
    min: f32,
    /// Query threshold on the estimated similarity (0: every candidate counts as a hit).
    #[arg(short, long, default_value_t = 0.0, value_name = "T")]
    threshold: f32,
    /// Keep at most N hits per query (default: all; at least 1).
    #[arg(long, value_name = "N",
          value_parser = util::at_least_one)]
    top: Option<usize>,
    #[command(flatten)]
    probes: util::ProbeArgs,
    /// Measure high-similarity search: queries as `query --similar` makes them.
    #[command(flatten)]
    similar: util::SimilarArgs,
    /// Print the report as one JSON object on stdout (the summary still goes to stderr).
    #[arg(long)]
    json: bool,
    /// No progress bars and no summary.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    input: util::InputArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for (name, v) in [("--min", args.min), ("--threshold", args.threshold)] {
        if !(0.0..=1.0).contains(&v) {
            anyhow::bail!("{name} must be between 0 and 1, not {v}");
        }
    }
    util::inputs_once(
        &args.inputs,
        "each of its documents would be paired with itself",
    )?;
    util::out_dir_outside_inputs(
        &args.out,
        &["truth.tsv", "eval.tsv", "eval.svg", "eval.json"],
        &args.inputs,
    )?;
    let sources = corpus::sources(&args.inputs)?;
    if !args.quiet {
        util::note_inputs(&args.inputs);
    }
    // The results directory is written last: make sure it can be, before the work.
    if args.out.exists() && !args.out.is_dir() {
        anyhow::bail!(
            "--out names a directory for the report's files; {} is a file",
            args.out.display()
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    pocketdex::atomic::check_output(&args.out.join("eval.json"))?;
    match &args.index {
        Some(path) => {
            let index = util::open_index(path, util::Access::Lookups)?;
            args.similar.warn_if_absent(&index, path);
            if let Some(lang) = args.lang {
                if lang.code() != index.meta().lang {
                    eprintln!(
                        "warning: --lang {} ignored: the index is in '{}' and its stopwords are used",
                        lang.code(),
                        index.meta().lang
                    );
                }
            }
            let analyzer = index.fingerprinter().analyzer().clone();
            let start = Instant::now();
            let corpus = read(&sources, &analyzer, None, &args)?;
            let read_s = start.elapsed().as_secs_f64();
            let map = DocMap::by_name(&index, &corpus.ids)?;
            if map.corpus_docs_not_in_index > 0 {
                eprintln!(
                    "warning: {} of {} documents are not in the index (by id); pairs with them are left out of recall",
                    map.corpus_docs_not_in_index,
                    corpus.ids.len()
                );
            }
            if map.index_docs_not_in_corpus > 0 {
                eprintln!(
                    "warning: {} of {} index documents are not in INPUT (by id); hits on them are left out",
                    map.index_docs_not_in_corpus,
                    index.doc_count()
                );
            }
            measure(&index, corpus, map, read_s, 0.0, &args)
        }
        None => {
            let lang = args.lang.unwrap_or(Lang::En);
            let idf = args.idf.clone().unwrap_or(util::IdfSource::Collection);
            let mut builder = util::index_builder(lang, Params::default(), &idf)?;
            // As `build` does: samples only for the resolutions this collection can need.
            if let Some(n) = corpus::count_at_most(&sources)? {
                builder.size_hint(n);
            }
            let analyzer = builder.fingerprinter().analyzer().clone();
            let start = Instant::now();
            let mut builder = Some(builder);
            let corpus = read(&sources, &analyzer, builder.as_mut(), &args)?;
            let read_s = start.elapsed().as_secs_f64();
            let start = Instant::now();
            let mut bytes = Vec::new();
            builder
                .expect("set above")
                .finish(&mut bytes)
                .context("building the index")?;
            let index = Index::open(bytes)?;
            let build_s = start.elapsed().as_secs_f64();
            let map = DocMap::identity(corpus.ids.len());
            measure(&index, corpus, map, read_s, build_s, &args)
        }
    }
}

/// The documents read: ids, texts and content terms, in input order.
struct Corpus {
    ids: Vec<String>,
    texts: Vec<String>,
    terms: TermDocs,
    skipped: usize,
}

/// Reads every source; with a builder, also fingerprints and adds every document to it.
fn read(
    sources: &[Source],
    analyzer: &Analyzer,
    mut builder: Option<&mut IndexBuilder>,
    args: &Args,
) -> anyhow::Result<Corpus> {
    let fingerprinter = builder.as_ref().map(|b| {
        b.weighing_fingerprinter()
            .unwrap_or(b.fingerprinter())
            .clone()
    });
    let what = if fingerprinter.is_some() {
        "reading and indexing"
    } else {
        "reading"
    };
    let bar = util::input_progress(sources, args.quiet, what);
    let mut corpus = Corpus {
        ids: Vec::new(),
        texts: Vec::new(),
        terms: TermDocs::new(),
        skipped: 0,
    };
    let mut shown = 0;
    type Read = Result<(corpus::Document, Vec<String>, Option<Fingerprint>), corpus::Skipped>;
    let reader = args.input.reader();
    let by_place = super::ingest::by_place(&reader, sources);
    let mut named_by_place = 0u64;
    reader.for_each_batch(
        sources,
        512,
        |item| match item {
            Item::Doc(d) => {
                let terms = analyzer.terms(&d.text);
                let fp = fingerprinter.as_ref().map(|f| f.fingerprint(&d.text));
                Ok((d, terms, fp))
            }
            Item::Skipped(s) => Err(s),
        },
        |n| {
            if bar.length().is_some() {
                bar.inc_length(n)
            }
        },
        |batch: Vec<Read>| {
            for item in batch {
                bar.inc(1);
                match item {
                    Ok((d, terms, fp)) => {
                        if let (Some(b), Some(fp)) = (builder.as_deref_mut(), fp) {
                            b.add_fingerprint(&d.id, d.title.as_deref(), fp)?;
                        }
                        corpus.terms.push(&terms);
                        named_by_place += by_place(&d.id) as u64;
                        corpus.ids.push(d.id);
                        corpus.texts.push(d.text);
                    }
                    Err(s) => {
                        corpus.skipped += 1;
                        if !args.quiet && shown < 10 {
                            bar.suspend(|| {
                                eprintln!("skipped {}: {}", util::printable(&s.id), s.reason)
                            });
                            shown += 1;
                        }
                    }
                }
            }
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    // A misspelt key would name every document by its place in the truth and the tables.
    super::ingest::check_id_key(&args.input.id_key, corpus.ids.len() as u64, named_by_place)?;
    if corpus.ids.is_empty() {
        anyhow::bail!(
            "no documents to evaluate ({} inputs skipped)",
            corpus.skipped
        );
    }
    // Pairs of one id cannot be told apart in an index's hits: they are left out of the measures.
    if let Some((n, first)) = pocketdex::repeated_ids(corpus.ids.iter().map(String::as_str)) {
        util::warn_repeated_ids(
            n,
            first,
            "pairs of one id are left out of the measures (`same_id_pairs` in eval.json); give every document an id of its own",
        );
    }
    Ok(corpus)
}

fn measure<D: AsRef<[u8]> + Sync>(
    index: &Index<D>,
    corpus: Corpus,
    map: DocMap,
    read_s: f64,
    build_s: f64,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let n = corpus.ids.len() as u64;
    let settings = Settings {
        min: args.min,
        threshold: args.threshold,
        top: args.top,
        probes: args.probes.probes,
        short_probes: args.probes.short_probes,
        similar: args.similar.similar,
        similar_probes: args.similar.similar_probes,
        long_min_terms: index.meta().params.min_terms,
    };
    let bar = |what: &str| {
        if args.quiet {
            indicatif::ProgressBar::hidden()
        } else {
            util::progress(Some(n), what)
        }
    };

    if !args.quiet && n < 10 {
        eprintln!(
            "note: the truth is the tf-idf cosine within the collection, and among {n} documents \
             a word they all hold weighs nothing (idf = ln(N/df) = 0): near copies score low in a \
             collection this small, so its truth has few pairs; `pocketdex compare A B` scores \
             one pair alone"
        );
    }
    let start = Instant::now();
    let b = bar("ground truth");
    let pairs = eval::truth_with_progress(&corpus.terms, args.min, &|k| b.inc(k));
    b.finish_and_clear();
    let truth_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let b = bar("querying");
    let answers = eval::query_all(
        index,
        &corpus.texts,
        &map,
        &settings.query_options(),
        &|k| b.inc(k),
    )?;
    b.finish_and_clear();
    let query_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let report = Report::compute(
        &corpus.ids,
        &corpus.terms,
        &pairs,
        &answers,
        &map,
        &settings,
    );
    drop(answers);
    let metrics_s = start.elapsed().as_secs_f64();

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let path = |name: &str| args.out.join(name);
    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        std::fs::write(path(name), bytes)
            .with_context(|| format!("cannot write {}", path(name).display()))
    };
    {
        let file = std::fs::File::create(path("truth.tsv"))
            .with_context(|| format!("cannot write {}", path("truth.tsv").display()))?;
        let mut w = std::io::BufWriter::new(file);
        eval::write_truth_tsv(&mut w, &corpus.ids, &pairs)?;
        std::io::Write::flush(&mut w)?;
    }
    write("eval.tsv", report.tsv().as_bytes())?;
    let name = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let title = format!(
        "pocketdex: {} ({} docs, {} pairs with cosine ≥ {:.2})",
        name, report.documents, report.truth_pairs, args.min
    );
    write("eval.svg", report.svg(&title)?.as_bytes())?;

    let m = index.meta();
    let p = &m.params;
    let mut out = json!({
        "inputs": args.inputs,
        "documents": corpus.ids.len(),
        "skipped": corpus.skipped,
        "vocabulary": corpus.terms.vocab_len(),
        "index": {
            "file": args.index.as_ref().map(|f| f.display().to_string()),
            "built": args.index.is_none(),
            "documents": m.doc_count,
            "codes": m.slot_count,
            "references": m.ref_count,
            "bytes": index.len_bytes(),
            "language": m.lang,
            "params": p,
            "index_docs_not_in_input": map.index_docs_not_in_corpus,
            "input_docs_not_in_index": map.corpus_docs_not_in_index,
        },
        "timings_s": {
            "read": read_s,
            "build": build_s,
            "truth": truth_s,
            "queries": query_s,
            "metrics": metrics_s,
        },
        "files": {
            "tsv": path("eval.tsv").display().to_string(),
            "json": path("eval.json").display().to_string(),
            "svg": path("eval.svg").display().to_string(),
            "truth": path("truth.tsv").display().to_string(),
        },
    });
    if let (serde_json::Value::Object(o), serde_json::Value::Object(r)) =
        (&mut out, serde_json::to_value(&report)?)
    {
        o.extend(r);
    }
    write("eval.json", serde_json::to_string_pretty(&out)?.as_bytes())?;
    if args.json {
        // With `?`: a closed stdout (`| head`) ends the command quietly, as in `query`.
        writeln!(std::io::stdout().lock(), "{out}")?;
    }
    if !args.quiet {
        eprint!("{}", report.text());
        eprintln!(
            "time: read{} {read_s:.2} s, {}truth {truth_s:.2} s, queries {query_s:.2} s ({:.0} µs/query), metrics {metrics_s:.2} s",
            if args.index.is_none() { " + fingerprint" } else { "" },
            if args.index.is_none() { format!("build {build_s:.2} s, ") } else { String::new() },
            query_s * 1e6 / n.max(1) as f64,
        );
        eprintln!(
            "wrote {}, {}, {}, {}",
            path("eval.tsv").display(),
            path("eval.json").display(),
            path("eval.svg").display(),
            path("truth.tsv").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
