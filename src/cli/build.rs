//! `pocketdex build`: index a collection into one file.

use super::{ingest, util};
use anyhow::Context;
use pocketdex::corpus;
use pocketdex::fingerprint::{Fingerprinter, Resolution};
use pocketdex::{Lang, Params};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Instant;

/// Build an index file from documents.
///
/// INPUT is a directory (every regular file below it; document id = its path relative to
/// INPUT, a name's bytes that are not UTF-8 or are control characters written \xHH), a single file (id = its file name), a JSON Lines file ending in `.jsonl` or `.ndjson` (one
/// {"id": "...", "text": "...", "title": "..."} per line, title optional; --id-key, --text-key
/// and --title-key name other fields), a Parquet file ending in `.parquet` (one document per
/// row, in the columns those keys name; any compression), or - for standard input: JSON Lines
/// when its first non-blank character is `{`, else one document with the id `-`
/// (--stdin-format says which; every command that reads documents reads - alike). HTML is
/// recognised and its markup removed; invalid UTF-8 is replaced and counted; empty and binary
/// files, documents over --max-doc-bytes, and files and directories that cannot be read are
/// reported and skipped. An index file or an index set given as INPUT is refused (an index
/// keeps no text to index again); below an input directory, both are skipped. OUTPUT may not
/// lie in an index set's directory, whose files are the set's own.
///
/// Exit status: 0 when the index was written (empty and binary documents skipped with a
/// message); 2 on error, when nothing is written, or when some inputs could not be read
/// (unreadable files and directories, JSON Lines records that are not JSON or have a field of
/// the wrong type, ids that are blank or hold control characters): they are listed, and the
/// index is written with the rest.
///
/// The file is written atomically: a failed or interrupted build (Ctrl-C, SIGTERM) leaves
/// nothing at OUTPUT and no temporary file; one killed with SIGKILL leaves a temporary
/// `.pocketdex-*.pdx.tmp` that the next build into that directory removes. A new file gets the
/// permissions the umask allows (0644 with umask 022); a file built over keeps its own.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The index file to write (conventionally *.pdx).
    #[arg(short, long, value_name = "FILE.pdx")]
    output: PathBuf,
    /// Language of the documents: picks the stopwords and the reference distribution.
    #[arg(long, value_parser = crate::cli::util::lang(), default_value = "en")]
    lang: Lang,
    /// Number of prefix classes k.
    #[arg(long, default_value_t = Params::default().classes, help_heading = "Fingerprint parameters")]
    classes: u16,
    /// The size the collection will grow to, when it is built in pieces or will have documents
    /// added: codes are made as specific as a collection of N documents needs (default: the
    /// number of documents of this build). A piece much smaller than N also gets a filter of its
    /// codes (about 10 bits each), so that the codes a query looks up in vain cost little.
    #[arg(long, value_name = "N", help_heading = "Fingerprint parameters")]
    expected_docs: Option<u64>,
    /// Fix the resolution instead: bands (class i belongs to band i mod BANDS), weighted MinHash
    /// samples per fuzzy band code, rows per short-path band, and rows per similar-path band
    /// (default: what the size ladder pairs with the same number of samples, as specific as the
    /// collection size those samples are for).
    #[arg(
        long,
        value_name = "BANDS,SAMPLES,ROWS[,SIMILAR_ROWS]",
        conflicts_with = "expected_docs",
        help_heading = "Fingerprint parameters"
    )]
    resolution: Option<String>,
    /// A fuzzification scheme's interval boundaries, comma-separated (repeat for several schemes;
    /// default: one scheme, -0.45,0.45).
    #[arg(
        long = "scheme",
        value_name = "B1,B2,...",
        allow_hyphen_values = true,
        help_heading = "Fingerprint parameters"
    )]
    schemes: Vec<String>,
    /// Default number of lookups per fuzzy band code at query time: the code and its PROBES − 1
    /// most likely neighbours.
    #[arg(long, default_value_t = Params::default().probes, help_heading = "Fingerprint parameters")]
    probes: u8,
    /// Documents with at least this many index terms get fuzzy codes.
    #[arg(long, default_value_t = Params::default().min_terms, help_heading = "Fingerprint parameters")]
    min_terms: u32,
    /// Documents with fewer index terms get weighted MinHash band codes (the short path).
    #[arg(long, default_value_t = Params::default().short_below, help_heading = "Fingerprint parameters")]
    short_below: u32,
    /// Bands of the short path.
    #[arg(long, default_value_t = Params::default().minhash_bands, help_heading = "Fingerprint parameters")]
    minhash_bands: u8,
    /// Simhash sketch length in 64-bit words.
    #[arg(long, default_value_t = Params::default().sketch_words, help_heading = "Fingerprint parameters")]
    sketch_words: u8,
    /// Bands of weighted MinHash codes per document for high-similarity search (`query
    /// --similar`); 0 indexes none (about 3 bytes per document and band).
    #[arg(long, default_value_t = Params::default().similar_bands, help_heading = "Fingerprint parameters")]
    similar_bands: u8,
    /// Default number of lookups per short-path band at query time (the band's code and its
    /// likeliest variants; `query --short-probes` overrides it).
    #[arg(long, default_value_t = Params::default().short_probes, help_heading = "Fingerprint parameters",
          value_parser = clap::value_parser!(u8).range(1..))]
    short_probes: u8,
    /// Default number of lookups per similar band in a `query --similar`.
    #[arg(long, default_value_t = Params::default().similar_probes, help_heading = "Fingerprint parameters")]
    similar_probes: u8,
    /// Where the idf table that weighs samples and sketches comes from: `collection` (learned
    /// from the first N ≤ 20,000 documents: the samples weigh its N/2 + 500 most frequent terms
    /// by their own idf, the sketch up to 10,500, as many as the rarer rest need to weigh
    /// alike) adapts to the collection's vocabulary, boilerplate included; `language` (the built-in table of --lang) and an index FILE.pdx or set (its table
    /// copied) fix it, so that a document gets the same codes and scores in any build with the
    /// same --expected-docs: shards built apart then answer together as one index.
    #[arg(long, value_name = "collection|language|FILE.pdx|SET", default_value = "collection",
          value_parser = util::IdfSource::parse, help_heading = "Fingerprint parameters")]
    idf: util::IdfSource,
    /// Use z-scores instead of relative deviations from the reference.
    #[arg(long, help_heading = "Fingerprint parameters")]
    zscore: bool,
    /// Write a segment of the index set SET instead of a plain index: its documents get the
    /// set's parameters, idf table and resolution, and the file carries what a segment needs, so
    /// that `pocketdex adopt SET FILE.pdx...` adds it to the set. For a collection built in
    /// pieces on other cores, machines or days, then shipped as one file with `merge SET -o`.
    #[arg(long, value_name = "SET", help_heading = "Fingerprint parameters",
          conflicts_with_all = ["lang", "classes", "expected_docs", "resolution", "schemes", "probes",
                                "short_probes", "min_terms", "short_below", "minhash_bands",
                                "sketch_words", "similar_bands", "similar_probes", "idf", "zscore"])]
    segment_of: Option<PathBuf>,
    #[command(flatten)]
    input: util::InputArgs,
    /// Print every skipped input, not only the first ten.
    #[arg(short, long)]
    verbose: bool,
    /// No progress bar and no summary (what was skipped, and warnings, are still said).
    #[arg(short, long)]
    quiet: bool,
}

impl Args {
    fn params(&self) -> anyhow::Result<Params> {
        let mut p = Params {
            classes: self.classes,
            probes: self.probes,
            short_probes: self.short_probes,
            min_terms: self.min_terms,
            short_below: self.short_below,
            minhash_bands: self.minhash_bands,
            sketch_words: self.sketch_words,
            similar_bands: self.similar_bands,
            similar_probes: self.similar_probes,
            ..Params::default()
        };
        if let Some(n) = self.expected_docs {
            p.resolution = Some(Resolution::for_docs(n));
        }
        if let Some(r) = &self.resolution {
            let v: Vec<u8> = r
                .split(',')
                .map(|x| x.trim().parse::<u8>())
                .collect::<Result<_, _>>()
                .ok()
                .filter(|v: &Vec<u8>| v.len() == 3 || v.len() == 4)
                .with_context(|| {
                    format!(
                        "--resolution {r}: expected three or four numbers, e.g. 4,2,3 or 4,2,3,2"
                    )
                })?;
            let similar = v
                .get(3)
                .copied()
                .unwrap_or_else(|| Resolution::similar_rows_for_samples(v[1]));
            p.resolution = Some(Resolution::new(v[0], v[1], v[2], similar));
        }
        if self.zscore {
            p.deviation = pocketdex::fingerprint::Deviation::ZScore;
        }
        if !self.schemes.is_empty() {
            p.schemes = self
                .schemes
                .iter()
                .map(|s| {
                    s.split(',')
                        .map(|b| b.trim().parse::<f32>())
                        .collect::<Result<Vec<f32>, _>>()
                        .with_context(|| format!("--scheme {s}: expected comma-separated numbers"))
                })
                .collect::<anyhow::Result<_>>()?;
        }
        p.validate()?;
        Ok(p)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let params = args.params()?;
    let params_fixed = params.resolution.is_some();
    // Before any document is read: a build of hours should not fail at its last step.
    pocketdex::atomic::check_output(&args.output)?;
    pocketdex::atomic::check_not_input(&args.output, &args.inputs)?;
    pocketdex::atomic::check_replaces_only_an_index(&args.output)?;
    util::inputs_once(&args.inputs, "its documents would be indexed twice")?;
    util::refuse_index_inputs(
        &args.inputs,
        "an index keeps no text to index again: build from the documents it was made of (`pocketdex merge SET -o FILE.pdx` makes one file of a set; `query INDEX --index {}` queries indexes together)",
    )?;
    let sources = corpus::sources(&args.inputs)?;
    if !args.quiet {
        util::note_inputs(&args.inputs);
    }
    let mut builder = match &args.segment_of {
        Some(set) => {
            if !pocketdex::is_set(set) {
                return Err(anyhow::Error::from(pocketdex::not_a_set(set))
                    .context(format!("--segment-of {}", set.display())));
            }
            let schema = util::open_index(&set.join(pocketdex::SCHEMA), util::Access::Scan)?;
            pocketdex::IndexBuilder::like(&schema).with_set_sections()
        }
        None => util::index_builder(args.lang, params, &args.idf)?,
    };
    // Knowing the collection's size up to a bound spares drawing samples it will not need; a
    // fixed resolution (--resolution, --expected-docs, a set's) already says what to draw.
    if !params_fixed && args.segment_of.is_none() {
        if let Some(n) = corpus::count_at_most(&sources)? {
            builder.size_hint(n);
        }
    }
    // Documents are fingerprinted on every core; once the builder has its idf table (the
    // language's or a copied one from the start, or learned from the first documents), they are
    // weighed there too.
    let fingerprinter = builder.fingerprinter().clone();
    let weighing: OnceLock<Fingerprinter> = OnceLock::new();
    if let Some(f) = builder.weighing_fingerprinter() {
        let _ = weighing.set(f.clone());
    }
    let summary = ingest::fingerprinted(
        &args.input.reader(),
        &sources,
        true,
        |text| {
            let mut fp = weighing.get().unwrap_or(&fingerprinter).fingerprint(text);
            // Weighed by the builder's own table: the terms are freed here, on the thread that
            // allocated them, not on the one that adds documents.
            fp.shed_terms();
            fp
        },
        args.quiet,
        "indexing",
        |d, fp| {
            builder.add_fingerprint(&d.id, d.title.as_deref(), fp)?;
            if weighing.get().is_none() {
                if let Some(f) = builder.weighing_fingerprinter() {
                    let _ = weighing.set(f.clone());
                }
            }
            Ok(())
        },
    )?;
    if builder.is_empty() {
        // Said even with --quiet: the list is the error's explanation.
        summary.report(args.verbose);
        anyhow::bail!(
            "no documents to index: {}; nothing was written to {}",
            summary.nothing_read(),
            args.output.display()
        );
    }
    summary
        .check_id_key(&args.input)
        .with_context(|| format!("nothing was written to {}", args.output.display()))?;
    // Repeated ids are found once every document is in (a set of millions of ids, probed as
    // they come, had cost a cache miss per document on the thread that adds them, which the
    // fingerprinting waits for).
    let repeated = builder
        .repeated_ids()
        .map(|(n, first)| (n, first.to_string()));
    let docs = builder.len() as u64;
    let stats = builder
        .write_to_path(&args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    // Said even with --quiet: a document skipped or shadowed is something lost.
    summary.report(args.verbose);
    if let Some((n, first)) = repeated {
        util::warn_repeated_ids(n, &first, "both are indexed");
    }
    // A script that ships what it built must learn that documents are missing from it.
    let status = if summary.had_errors() {
        eprintln!(
            "pocketdex: some inputs could not be read (unreadable, or records that are not JSON, have a field of the wrong type or an id that cannot be printed) and were not indexed (listed above); exit status 2. {} holds the rest: build again once they are fixed",
            args.output.display()
        );
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    };
    if args.quiet {
        return Ok(status);
    }
    let secs = start.elapsed().as_secs_f64();
    let paths = stats.paths.expect("a build fingerprints its documents");
    eprintln!(
        "indexed {} ({} of text) in {secs:.2} s ({} documents/s); {} skipped",
        util::plural(docs, "document"),
        util::size(summary.bytes),
        util::rate(docs as f64 / secs.max(1e-9)),
        util::thousands(summary.skipped.len() as u64)
    );
    eprintln!(
        "paths: {} fuzzy, {} short (MinHash), {} both, {} exact; resolution: {}, {} per band, {} per short band, {} per similar band",
        paths.fuzzy,
        paths.short,
        paths.both,
        paths.exact,
        util::plural(stats.resolution.bands, "band"),
        util::plural(stats.resolution.samples, "sample"),
        util::plural(stats.resolution.short_rows, "row"),
        util::plural(stats.resolution.similar_rows, "row"),
    );
    let sections = stats.sections.iter().map(|(n, len)| (n.as_str(), *len));
    eprintln!(
        "{} distinct codes, {}; wrote {} ({} bytes): {:.1} bytes/document, {:.1} beyond names and titles",
        util::thousands(stats.codes),
        util::plural(stats.refs, "reference"),
        args.output.display(),
        util::thousands(stats.bytes),
        stats.bytes as f64 / docs as f64,
        util::bytes_beyond_names(stats.bytes, sections, docs)
    );
    Ok(status)
}
