//! `pocketdex reference`: build the reference distributions in `reference-corpus/`.

use anyhow::Context;
use pocketdex::{Analyzer, Lang, Reference};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Reference distributions: the expected share of index terms per prefix in a language.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Build a reference table from a wordfreq word list (see reference-corpus/README.md).
    ///
    /// Example (after scripts/fetch-wordfreq.sh):
    ///   pocketdex reference build --lang en --wordfreq data/wordfreq/large_en.msgpack.gz -o reference-corpus/en.tsv
    Build(BuildArgs),
}

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// Language: picks the stopwords left out of the distribution.
    #[arg(long, value_parser = crate::cli::util::lang())]
    lang: Lang,
    /// A wordfreq `large_<lang>.msgpack.gz` file.
    #[arg(long, value_name = "FILE")]
    wordfreq: PathBuf,
    /// Where to write the table (default: stdout).
    #[arg(short, long, value_name = "FILE.tsv")]
    output: Option<PathBuf>,
    /// Drop prefixes whose share is below this (they fall back to a hashed class).
    #[arg(long, default_value_t = 1e-6)]
    min_share: f64,
}

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let Command::Build(a) = cmd;
    let mut r = Reference::from_word_frequencies(
        pocketdex_eval::wordfreq::read(&a.wordfreq)?,
        a.lang,
        &Analyzer::for_lang(a.lang),
        a.min_share,
    )?;
    let file = a
        .wordfreq
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    r.provenance = vec![
        format!("source: wordfreq 3.1.1 (PyPI), data/{file}; data licence CC BY-SA 4.0 (see reference-corpus/README.md)"),
        format!("built by: pocketdex reference build --lang {} --wordfreq {file} --min-share {}", a.lang.code(), a.min_share),
        "columns: prefix (first 2 characters of a content term, digits as 0), share of term occurrences".into(),
    ];
    let text = r.to_tsv();
    match &a.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => write!(std::io::stdout().lock(), "{text}")?,
    }
    eprintln!("{} prefixes", r.prefixes.len());
    Ok(ExitCode::SUCCESS)
}
