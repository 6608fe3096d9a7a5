//! `pocketdex query`: find the near copies of documents in an index.

use super::util;
use pocketdex::corpus::{self, Item, SkipKind, Source};
use pocketdex::{IndexSet, QueryOptions, SetQueryResult};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Find indexed documents that are near copies of each DOC.
///
/// DOC is a file, a directory (every regular file below it is a query), a JSON Lines file
/// ending in .jsonl or .ndjson (each line's "text" is a query, labelled by its "id"; --text-key and
/// --id-key name other fields), a Parquet file ending in .parquet (each row, as a line of
/// JSON Lines), or - (standard
/// input: JSON Lines when its first non-blank character is `{`, else one document labelled
/// `-`; --stdin-format says which). Hits are ranked best first by their estimated similarity (cosine of the
/// tf-idf vectors, from the index's simhash sketches, 192 bits by default) and, on ties, by the number of code groups
/// that collided.
///
/// INDEX is an index file or an index set (a directory made by `pocketdex add`); --index adds
/// more files or sets, all queried as one (their hits ranked together, each naming the INDEX
/// that holds it: "in FILE", or "index" in JSON, as the same id may be in several). Indexes built with
/// other settings (--lang, --idf, --expected-docs) are each queried with their own, with a
/// note: their scores then come from different idf tables.
///
/// Exit status (every DOC is looked up even when the output is no longer read, `| head`):
/// 0 when any DOC had a hit, 1 when none had (an empty DOC has none), 2 on error,
/// and 2 when none had a hit and some DOC had nothing looked up because it was skipped as
/// binary, over --max-doc-bytes or as records without text ("no near copy" is then not known;
/// a directory with one binary file among its documents is looked up). An index file changed
/// in place while it is read (truncated, or copied over with cp) kills the query with SIGBUS
/// (status 135); replace an index with mv, as pocketdex's own writers do.
///
/// With --json, one JSON object per line: each hit as {"type": "hit", "query", "id", "score",
/// "rank", "codes", "path", "title"?, "index"?}, best first ("index" with --index); then, for every DOC, what its query cost:
/// {"type": "query", "query", "terms", "lookups", "candidates", "hits"} (index terms of the
/// DOC, codes looked up, distinct documents they found before ranking, hits printed); a DOC
/// skipped as empty, binary, without text (no text field, or null) or over --max-doc-bytes
/// as {"type": "query",
/// "query", "message", "hits": 0} (nothing was looked up); a DOC that could not be read (a
/// missing file, a damaged Parquet file, a JSON Lines line that is not JSON or whose text is
/// no string), or holds no documents (an empty directory), as {"type": "error", "query",
/// "message", "hits": 0}, which makes the exit status 2.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The index file or index set.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Another index file or set to query together with INDEX (repeat for more): shards of one
    /// collection built with the same --lang, --expected-docs and --idf (language, or the same
    /// FILE.pdx) answer as one index of all their documents.
    #[arg(long = "index", value_name = "INDEX")]
    more: Vec<PathBuf>,
    /// Documents to look up.
    #[arg(required = true, value_name = "DOC")]
    docs: Vec<PathBuf>,
    #[command(flatten)]
    trust: super::sign::Trust,
    /// Show at most N hits per DOC (at least 1).
    #[arg(long, default_value_t = 100, value_name = "N",
          value_parser = util::at_least_one)]
    top: usize,
    /// Keep hits whose estimated similarity, as printed to four decimals, is at least T (0 to
    /// 1; default 0.5, with --similar 0.4, so that pairs at cosine 0.6 are not lost to the
    /// estimate's error).
    #[arg(short, long, value_name = "T")]
    threshold: Option<f32>,
    #[command(flatten)]
    probes: util::ProbeArgs,
    #[command(flatten)]
    similar: util::SimilarArgs,
    /// JSON Lines output.
    #[arg(long)]
    pub(super) json: bool,
    #[command(flatten)]
    input: util::InputArgs,
}

/// One query document: its label (as given) and what was read.
struct QueryDoc {
    label: String,
    item: Item,
}

enum Answer {
    /// The hits, or the error of a query that read a damaged part of the index.
    Hits(pocketdex::Result<SetQueryResult>),
    Skipped(corpus::Skipped),
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let defaults = if args.similar.similar {
        QueryOptions::similar()
    } else {
        QueryOptions::default()
    };
    let threshold = args.threshold.unwrap_or(defaults.threshold);
    if !(0.0..=1.0).contains(&threshold) {
        anyhow::bail!("--threshold must be between 0 and 1, not {threshold}");
    }
    let targets: Vec<PathBuf> = std::iter::once(args.index.clone())
        .chain(args.more.iter().cloned())
        .collect();
    let index = util::open_indexes(&targets, util::Access::Lookups).map_err(|e| {
        // `query doc.txt index.pdx`: say which argument is which.
        let swapped = !args.index.is_dir()
            && !pocketdex::is_index_file(&args.index)
            && args.docs.iter().any(|d| {
                let d = std::path::Path::new(d);
                pocketdex::is_set(d) || pocketdex::is_index_file(d)
            });
        if swapped {
            anyhow::anyhow!("{e:#} (the index comes first: `pocketdex query INDEX DOC...`)")
        } else {
            e
        }
    })?;
    util::refuse_index_docs(
        &args.docs,
        "to query it together with the first, give it as `--index {}`",
    )?;
    args.trust.check(&index, &targets)?;
    if !index.answers_as_one() {
        eprintln!(
            "pocketdex: note: these indexes were built with other settings (--lang, --idf or \
             --expected-docs); each is queried with its own, and their scores come from \
             different idf tables (shards that should answer as one index are built alike)"
        );
    }
    if let Some(p) = index.parts().first() {
        args.similar.warn_if_absent(&p.index, &args.index);
    }
    let opts = QueryOptions {
        top: args.top,
        threshold,
        probes: args.probes.probes,
        short_probes: args.probes.short_probes,
        similar: args.similar.similar,
        similar_probes: args.similar.similar_probes,
        self_name: None,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(util::AnswerOut::new(stdout.lock()));
    // Per document: answered, and skipped other than as empty.
    let (mut any_hit, mut errors) = (false, 0usize);
    let (answered, not_looked_up) = (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
    // Output errors stay `io::Error`s, so that a closed stdout is told apart by its kind.
    let mut emit = |batch: Vec<(QueryDoc, Answer)>, out: &mut dyn Write| -> std::io::Result<()> {
        for (q, answer) in batch {
            match answer {
                Answer::Hits(r) => {
                    let r = damaged(r)?;
                    any_hit |= !r.hits.is_empty();
                    answered.set(answered.get() + 1);
                    print_result(&index, &q.label, r, &args, threshold, out)?;
                }
                Answer::Skipped(skipped) => {
                    let is_error = unreadable(skipped.kind);
                    // An empty document has no near copy; a binary one, one too large or a
                    // record without text was not looked up.
                    let empty = matches!(skipped.kind, SkipKind::Empty | SkipKind::NoText);
                    let reason = skipped.reason;
                    errors += is_error as usize;
                    if !is_error && !empty {
                        not_looked_up.set(not_looked_up.get() + 1);
                    }
                    eprintln!("pocketdex: {}: {}", util::printable(&q.label), reason);
                    if args.json {
                        let kind = if is_error { "error" } else { "query" };
                        writeln!(
                            out,
                            "{}",
                            json!({"type": kind, "query": q.label, "message": reason, "hits": 0})
                        )?;
                    }
                }
            }
        }
        Ok(())
    };
    let answer = |mut q: QueryDoc| {
        let a = match &q.item {
            // A file queried against an index that holds it and an identical copy finds itself
            // first.
            Item::Doc(d) => Answer::Hits(index.query(
                &d.text,
                &QueryOptions {
                    self_name: Some(q.label.clone()),
                    ..opts.clone()
                },
            )),
            Item::Skipped(s) => Answer::Skipped(s.clone()),
        };
        // Answered: its text is not needed while the batch waits to be printed.
        if let Item::Doc(d) = &mut q.item {
            d.text = String::new();
        }
        (q, a)
    };
    let reader = args.input.reader();
    util::note_inputs(&args.docs);
    // DOCs none of whose documents was looked up, some skipped other than as empty.
    let mut unanswered = 0usize;
    for arg in &args.docs {
        let before = (answered.get(), not_looked_up.get());
        let source = match Source::from_arg(arg) {
            Ok(source) => source,
            Err(e) => {
                let q = QueryDoc {
                    label: arg.display().to_string(),
                    item: Item::Skipped(corpus::Skipped {
                        id: arg.display().to_string(),
                        kind: corpus::SkipKind::Unreadable(
                            e.io_kind().unwrap_or(std::io::ErrorKind::Other),
                        ),
                        // The line names the DOC; the reason is the system's.
                        reason: format!("cannot read: {}", util::why_unread(arg, &e)),
                    }),
                };
                emit(vec![answer(q)], &mut out)?;
                continue;
            }
        };
        // The same read loop as `build`'s, labelled as the user named the document: a file
        // by its path as given, a file below a directory by its path, a line or row by its id
        // (`-` for one document on stdin).
        let label = |item: &Item| {
            let id = match item {
                Item::Doc(d) => &d.id,
                Item::Skipped(s) => &s.id,
            };
            match &source {
                Source::Dir(dir) => dir.join(id).display().to_string(),
                Source::File(_) => arg.display().to_string(),
                _ => id.clone(),
            }
        };
        let mut read = 0usize;
        // An error of the output or of the index ends the command; an error reading this DOC
        // (a damaged Parquet file, say) is this DOC's, and the others are still answered.
        let mut fatal: Option<pocketdex::Error> = None;
        let reading = reader.for_each_batch(
            std::slice::from_ref(&source),
            256,
            |item| {
                answer(QueryDoc {
                    label: label(&item),
                    item,
                })
            },
            |_| {},
            |batch| {
                read += batch.len();
                emit(batch, &mut out).map_err(|e| {
                    fatal = Some(unwrap_damaged(e));
                    // Only stops the reading: `fatal` is what is reported.
                    pocketdex::Error::Invalid("stopped".into())
                })
            },
        );
        if let Some(e) = fatal {
            return Err(e.into());
        }
        let unread = match reading {
            Ok(_) if read == 0 => Some("no documents in it".to_string()),
            Ok(_) => None,
            Err(e) => Some(util::why_unread(arg, &e)),
        };
        // An empty directory or JSON Lines file: nothing was looked up, which is not "no hits".
        if let Some(reason) = unread {
            let q = QueryDoc {
                label: arg.display().to_string(),
                item: Item::Skipped(corpus::Skipped {
                    id: arg.display().to_string(),
                    kind: corpus::SkipKind::Unreadable(std::io::ErrorKind::InvalidData),
                    reason,
                }),
            };
            emit(vec![answer(q)], &mut out)?;
        }
        if answered.get() == before.0 && not_looked_up.get() > before.1 {
            unanswered += 1;
        }
    }
    out.flush()?;
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else if any_hit {
        ExitCode::SUCCESS
    } else if unanswered > 0 {
        // "No hit" would tell a script that a document it never looked up is new.
        eprintln!(
            "pocketdex: no hit, but {} not looked up (see above)",
            util::plural_were(unanswered as u64, "DOC", "DOCs")
        );
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    })
}

/// True for the skips that lose a query document (it could not be read: a record that is not
/// JSON, or whose text is no string): errors. The others (empty, binary, no text once markup
/// is removed, a null or missing text, over --max-doc-bytes, as the user chose) are reported
/// and not looked up; a DOC all of whose documents were skipped so, but for empty ones, makes
/// "no hit" unknown (see `run`'s exit status).
fn unreadable(kind: corpus::SkipKind) -> bool {
    use corpus::SkipKind::*;
    match kind {
        Unreadable(_) | InvalidJson | WrongType | UnprintableId => true,
        Empty | Binary | NoText | NoTextField | TooLarge => false,
    }
}

fn print_result<D: AsRef<[u8]>>(
    index: &IndexSet<D>,
    label: &str,
    r: SetQueryResult,
    args: &Args,
    threshold: f32,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if args.json {
        for record in damaged(index.records(&r))? {
            let mut o = serde_json::to_value(record).map_err(std::io::Error::other)?;
            o["type"] = json!("hit");
            o["query"] = json!(label);
            writeln!(out, "{o}")?;
        }
        // What the query cost, after its hits (so that the first line of a DOC is its best hit).
        writeln!(
            out,
            "{}",
            json!({"type": "query", "query": label, "terms": r.terms, "lookups": r.lookups,
                   "candidates": r.candidates, "hits": r.hits.len()})
        )?;
        return Ok(());
    }
    let n = r.hits.len();
    let label = util::printable(label);
    writeln!(
        out,
        "{label}: {} index terms, {n} hit{}{}",
        r.terms,
        if n == 1 { "" } else { "s" },
        if n == 0 {
            format!(" at similarity ≥ {threshold}")
        } else {
            String::new()
        }
    )?;
    for (rank, sh) in r.hits.iter().enumerate() {
        let h = &sh.hit;
        let title = damaged(index.title(sh.part, h.doc))?
            .map(|t| format!("  \"{}\"", util::printable(&t)))
            .unwrap_or_default();
        // Several indexes may hold the same id: say which one this is.
        let source = index
            .source(sh.part)
            .map(|s| format!("  in {}", util::printable(s)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:>2}. {:.3}  {}  ({}, {} code group{}){source}{title}",
            rank + 1,
            h.score,
            util::printable(&damaged(index.name(sh.part, h.doc))?.unwrap_or_default()),
            h.path.name(),
            h.codes,
            if h.codes == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

/// A library result as an output result: a damaged index ends the output as an error (the
/// output loop keeps `io::Error`s to tell a closed stdout apart).
fn damaged<T>(r: pocketdex::Result<T>) -> std::io::Result<T> {
    r.map_err(std::io::Error::other)
}

/// The library's error again, from [`damaged`]'s wrapping (its message names the file; an I/O
/// error around it would add "I/O: "); other I/O errors (stdout's) as they are.
fn unwrap_damaged(e: std::io::Error) -> pocketdex::Error {
    match e.downcast::<pocketdex::Error>() {
        Ok(e) => e,
        Err(e) => pocketdex::Error::from(e),
    }
}
