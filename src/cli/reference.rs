//! `pocketdex reference`: build the reference distributions and idf tables in `reference-corpus/`.

use anyhow::Context;
use pocketdex::sketch::{LanguageIdf, LANGUAGE_IDF_TERMS, LANGUAGE_IDF_TOKENS};
use pocketdex::{Analyzer, Lang, Reference};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Reference distributions and idf tables: what a language looks like, compiled into pocketdex.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Build a reference table from a wordfreq word list
    ///
    /// See reference-corpus/README.md.
    ///
    /// Example (after scripts/fetch-wordfreq.sh):
    ///   pocketdex reference build --lang en --wordfreq data/wordfreq/large_en.msgpack.gz -o reference-corpus/en.tsv
    #[command(verbatim_doc_comment)]
    Build(BuildArgs),
    /// Build a language's idf table (what `build --idf language` weighs with)
    ///
    /// From a wordfreq word list: idf = ln(1 / (1 − exp(−f · TOKENS))) of each of the TERMS
    /// most frequent content terms (f: frequency per token), one default for every other term
    /// (see reference-corpus/README.md).
    ///
    /// Example (after scripts/fetch-wordfreq.sh):
    ///   pocketdex reference idf --lang en --wordfreq data/wordfreq/large_en.msgpack.gz -o reference-corpus/en-idf.tsv
    #[command(verbatim_doc_comment)]
    Idf(IdfArgs),
}

/// What both tables are made from and where they go.
#[derive(clap::Args, Debug)]
pub struct SourceArgs {
    /// Language: picks the stopwords, which are no index terms.
    #[arg(long, value_parser = crate::cli::util::lang())]
    lang: Lang,
    /// A wordfreq `large_<lang>.msgpack.gz` file.
    #[arg(long, value_name = "FILE")]
    wordfreq: PathBuf,
    /// Where to write the table (default: stdout).
    #[arg(short, long, value_name = "FILE.tsv")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Drop prefixes whose share is below this (they fall back to a hashed class); at least 0,
    /// below 1.
    #[arg(long, default_value_t = 1e-6, value_parser = min_share, allow_negative_numbers = true)]
    min_share: f64,
}

#[derive(clap::Args, Debug)]
pub struct IdfArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Nominal document length in tokens (stopwords included) for which document frequencies
    /// are estimated.
    #[arg(long, default_value_t = LANGUAGE_IDF_TOKENS)]
    tokens: u32,
    /// Number of terms in the table (every index stores it, 5 bytes a term).
    #[arg(long, default_value_t = LANGUAGE_IDF_TERMS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    terms: usize,
}

/// A share in [0, 1): a share of 1 or more (or NaN) drops every prefix.
fn min_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!(
            "{v} is not a share in [0, 1) (1 or more would drop every prefix)"
        )),
        Err(e) => Err(e.to_string()),
    }
}

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    // Before the word list is read: an output that cannot be written, or that is the word
    // list itself, is refused as every other command refuses it.
    let source = match &cmd {
        Command::Build(a) => &a.source,
        Command::Idf(a) => &a.source,
    };
    if let Some(out) = &source.output {
        pocketdex::atomic::check_output(out)?;
        pocketdex::atomic::check_not_input(out, std::slice::from_ref(&source.wordfreq))?;
    }
    match cmd {
        Command::Build(a) => build(a),
        Command::Idf(a) => idf(a),
    }
}

fn build(b: BuildArgs) -> anyhow::Result<ExitCode> {
    let a = &b.source;
    let mut r = Reference::from_word_frequencies(
        pocketdex_eval::wordfreq::read(&a.wordfreq)?,
        a.lang,
        &Analyzer::for_lang(a.lang),
        b.min_share,
    )?;
    let file = file_name(&a.wordfreq);
    r.provenance = vec![
        format!("source: wordfreq 3.1.1 (PyPI), data/{file}; data licence CC BY-SA 4.0 (see reference-corpus/README.md)"),
        format!("built by: pocketdex reference build --lang {} --wordfreq {file} --min-share {}", a.lang.code(), b.min_share),
        "columns: prefix (first 2 characters of a content term, digits as 0), share of term occurrences".into(),
    ];
    write(a.output.as_deref(), &r.to_tsv())?;
    eprintln!("{} prefixes", r.prefixes.len());
    Ok(ExitCode::SUCCESS)
}

fn idf(i: IdfArgs) -> anyhow::Result<ExitCode> {
    let a = &i.source;
    let mut t = LanguageIdf::from_word_frequencies(
        pocketdex_eval::wordfreq::read(&a.wordfreq)?,
        a.lang.code(),
        &Analyzer::for_lang(a.lang),
        i.tokens,
        i.terms,
    )?;
    let file = file_name(&a.wordfreq);
    t.provenance = vec![
        format!("source: wordfreq 3.1.1 (PyPI), data/{file}; data licence CC BY-SA 4.0 (see reference-corpus/README.md)"),
        format!("built by: pocketdex reference idf --lang {} --wordfreq {file} --tokens {} --terms {}", a.lang.code(), i.tokens, i.terms),
        format!("columns: content term, round(16 · idf) with idf = ln(1 / (1 − exp(−f · {}))), f its frequency per token; default: that of every other term", i.tokens),
    ];
    write(a.output.as_deref(), &t.to_tsv())?;
    eprintln!(
        "{} terms, default idf {} (id {:016x})",
        t.terms.len(),
        t.default as f32 / pocketdex::sketch::IDF_SCALE,
        t.idf().id()
    );
    Ok(ExitCode::SUCCESS)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn write(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        // Written beside and renamed into place: an interrupted run leaves the old table.
        Some(path) => pocketdex::atomic::write_file(path, |w| Ok(w.write_all(text.as_bytes())?))
            .with_context(|| format!("writing {}", path.display()))?,
        None => write!(std::io::stdout().lock(), "{text}")?,
    }
    Ok(())
}
