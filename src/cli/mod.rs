//! Argument definitions and dispatch; results go to stdout, progress and summaries to stderr.
//! Exit status: 0 success, 2 error, 1 for an answer scripts branch on (each command says which).

mod build;
mod clusters;
mod compare;
mod dedup_run;
mod dups;
mod eval;
mod info;
mod ingest;
mod query;
mod reference;
mod report;
mod serve;
mod set;
mod sign;
mod synth;
pub(crate) mod util;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Near-duplicate search with fuzzy-fingerprints in one small, memory-mapped index file.
///
/// Build an index of a collection once, then use any document as a query: its near copies
/// are found with a few O(1) lookups, from a file that needs nothing else.
///
/// An index that changes (add, delete, check submissions) is an index set, a directory: see
/// `pocketdex help add`.
///
/// Example:
///   pocketdex build samples/wiki-en -o wiki.pdx
///   pocketdex query wiki.pdx samples/query/edited.txt
///   pocketdex add archive samples/wiki-en
///   pocketdex check archive samples/query/edited.txt --add
///   pocketdex serve wiki.pdx
#[derive(Parser, Debug)]
// Verbatim: one example command per line, as it is pasted.
#[command(
    name = "pocketdex",
    version,
    long_about,
    max_term_width = 100,
    verbatim_doc_comment
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Build(build::Args),
    Query(query::Args),
    Add(set::AddArgs),
    Delete(set::DeleteArgs),
    Check(set::CheckArgs),
    Merge(set::MergeArgs),
    Adopt(set::AdoptArgs),
    Repair(set::RepairArgs),
    Info(info::Args),
    Verify(verify::Args),
    Serve(serve::Args),
    Keygen(sign::KeygenArgs),
    Sign(sign::SignArgs),
    #[command(subcommand)]
    Reference(reference::Command),
    Eval(eval::Args),
    Synth(synth::Args),
    Dups(dups::Args),
    Compare(compare::Args),
    Report(report::Args),
    DedupRun(dedup_run::Args),
}

impl Cli {
    /// The command line, parsed. A negative number is read as an option's value (`--top -3`
    /// is then refused by the option's range, with its range), not as an unknown option with a
    /// tip to write `-- -3`, which would make it a DOC.
    pub fn parse_args() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        let command = Cli::command().mut_subcommands(|c| c.allow_negative_numbers(true));
        let matches = command.get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// True for `pocketdex serve`, which handles SIGTERM and Ctrl-C itself.
    pub fn is_serve(&self) -> bool {
        matches!(self.command, Command::Serve(_))
    }

    /// True when the command prints JSON on stdout for a script (`query`, `check` and `repair`
    /// with `--json`): an error that ends it is then a JSON line there too.
    pub fn json_output(&self) -> bool {
        match &self.command {
            Command::Query(a) => a.json,
            Command::Check(a) => a.json,
            Command::Repair(a) => a.json,
            _ => false,
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Build(a) => build::run(a),
        Command::Query(a) => query::run(a),
        Command::Add(a) => set::add(a),
        Command::Delete(a) => set::delete(a),
        Command::Check(a) => set::check(a),
        Command::Merge(a) => set::merge(a),
        Command::Adopt(a) => set::adopt(a),
        Command::Repair(a) => set::repair(a),
        Command::Info(a) => info::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Keygen(a) => sign::keygen(a),
        Command::Sign(a) => sign::sign(a),
        Command::Reference(c) => reference::run(c),
        Command::Eval(a) => eval::run(a),
        Command::Synth(a) => synth::run(a),
        Command::Dups(a) => dups::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::run(a),
        Command::DedupRun(a) => dedup_run::run(a),
    }
}
