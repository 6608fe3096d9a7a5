//! `pocketdex add`, `delete`, `check` and `merge`: keeping an index set up to date.

use super::ingest;
use super::util;
use anyhow::Context;
use pocketdex::check::{Committed, Status};
use pocketdex::fingerprint::Resolution;
use pocketdex::{Change, Check, IndexSet, Lang, Params, SetWriter, Verdict};
use serde_json::json;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Where a set comes from and how to wait for its lock (shared by the writing commands).
#[derive(clap::Args, Debug)]
pub struct WriterArgs {
    /// Wait for another process changing the set to finish, instead of failing.
    #[arg(long)]
    wait: bool,
}

impl WriterArgs {
    /// Takes the lock of the existing set at `path`, whose schema `schema` was read (by
    /// [`CreateArgs::schema_unlocked`]) before the documents were: a set made again meanwhile,
    /// of another schema, is refused, as what was read for it would not fit.
    fn open_as_read(
        &self,
        path: &Path,
        schema: &pocketdex::Index<memmap2::Mmap>,
    ) -> anyhow::Result<SetWriter> {
        let writer = self.open(path)?;
        writer.agrees_with_read(schema)?;
        Ok(writer)
    }

    /// Opens the set at `path` for writing; with --wait, says so on stderr when another
    /// process holds its lock, so that a wait is not mistaken for a hang.
    fn open(&self, path: &Path) -> anyhow::Result<SetWriter> {
        let opened = match SetWriter::open(path, false) {
            Err(pocketdex::Error::Busy { .. }) if self.wait => {
                eprintln!(
                    "pocketdex: waiting for another pocketdex process to finish changing {} (--wait)",
                    path.display()
                );
                SetWriter::open(path, true)
            }
            other => other,
        };
        opened.with_context(|| format!("opening {}", path.display()))
    }
}

/// What a new set is made with (used only when INDEX does not exist yet).
#[derive(clap::Args, Debug)]
pub struct CreateArgs {
    /// Language of the documents (a new set only): stopwords, reference distribution and idf
    /// [default: en].
    #[arg(long, value_parser = crate::cli::util::lang(), help_heading = "A new set")]
    lang: Option<Lang>,
    /// The size the set will grow to (a new set only): codes are made as specific as a
    /// collection of N documents needs, and stay so for the set's life [default: 1000000].
    #[arg(long, value_name = "N", help_heading = "A new set")]
    expected_docs: Option<u64>,
    /// Where the set's idf table comes from (a new set only): `language` (the built-in table of
    /// --lang) or an index FILE.pdx whose table is copied, e.g. one built from a representative
    /// part of the collection, so that its boilerplate weighs little, or an index set's (its
    /// schema's) [default: language].
    #[arg(long, value_name = "language|FILE.pdx|SET", value_parser = util::IdfSource::parse,
          help_heading = "A new set")]
    idf: Option<util::IdfSource>,
}

impl CreateArgs {
    /// The first of the options for a new set that was given.
    fn given(&self) -> Option<&'static str> {
        [
            (self.lang.is_some(), "--lang"),
            (self.expected_docs.is_some(), "--expected-docs"),
            (self.idf.is_some(), "--idf"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// Opens the set at `path` for writing, or creates it when nothing is there.
    fn open_or_create(&self, path: &Path, w: &WriterArgs) -> anyhow::Result<(SetWriter, bool)> {
        if path.is_file() {
            if !pocketdex::is_index_file(path) {
                anyhow::bail!(
                    "{} is a file, not an index set; INDEX is the set's directory (created when missing), and the documents come after it: `pocketdex add SET DOC...`",
                    path.display()
                );
            }
            anyhow::bail!(
                "{} is an index file, which never changes; keep documents that change in an index set (a directory): `pocketdex add SET DOC...`, then `pocketdex merge SET -o FILE.pdx` to ship one file",
                path.display()
            );
        }
        // A creation that another process gave up (it removes what it made) while this one
        // waited for its lock: the set is gone again, so make it (a few rounds at most).
        for _ in 0..3 {
            if !pocketdex::is_set(path) {
                break;
            }
            match self.open_existing(path, w) {
                Err(_) if w.wait && !pocketdex::is_set(path) => continue,
                other => return other,
            }
        }
        let lang = self.lang.unwrap_or(Lang::En);
        let params = Params {
            resolution: Some(Resolution::for_docs(
                self.expected_docs.unwrap_or(1_000_000),
            )),
            ..Params::default()
        };
        let idf = self.idf.clone().unwrap_or(util::IdfSource::Language);
        if idf == util::IdfSource::Collection {
            anyhow::bail!("a set cannot learn its idf table from the documents that come first; give --idf language or an index file");
        }
        let schema = util::index_builder(lang, params, &idf)?;
        // Another process may create the set first (two submissions on a new archive): with
        // --wait this one then adds to it, as to any set.
        match SetWriter::create_or_wait(path, schema, w.wait)
            .with_context(|| format!("creating the index set {}", path.display()))?
        {
            Some(writer) => Ok((writer, true)),
            None => self.open_existing(path, w),
        }
    }

    /// Opens the existing set at `path` for writing; the options for a new set must agree
    /// with it.
    fn open_existing(&self, path: &Path, w: &WriterArgs) -> anyhow::Result<(SetWriter, bool)> {
        let writer = w.open(path)?;
        pocketdex::atomic::check_writable(&path.join(pocketdex::MANIFEST))?;
        self.agrees_with(path, writer.schema())?;
        Ok((writer, false))
    }

    /// The schema of the existing set at `path`, read without its lock: documents are read
    /// and fingerprinted with it before the lock is taken ([`WriterArgs::open_as_read`]), so
    /// that a long batch or a slow pipe holds up no other writer. The options for a new set
    /// must agree with it.
    fn schema_unlocked(&self, path: &Path) -> anyhow::Result<pocketdex::Index<memmap2::Mmap>> {
        let schema = util::open_index(&path.join(pocketdex::SCHEMA), util::Access::Scan)?;
        self.agrees_with(path, &schema)?;
        Ok(schema)
    }

    /// Refuses options for a new set that disagree with the set at `path`, whose schema is
    /// `schema`.
    fn agrees_with(
        &self,
        path: &Path,
        schema: &pocketdex::Index<memmap2::Mmap>,
    ) -> anyhow::Result<()> {
        let idf = match &self.idf {
            None => None,
            Some(util::IdfSource::Language) => Some(pocketdex::GivenIdf::Language),
            Some(util::IdfSource::Collection) => Some(pocketdex::GivenIdf::collection()),
            Some(util::IdfSource::From(file)) => Some(pocketdex::GivenIdf::of_index(
                file,
                &util::open_index(file, util::Access::Scan)?,
            )),
        };
        pocketdex::NewSetOptions {
            lang: self.lang,
            expected_docs: self.expected_docs,
            idf,
        }
        .agree_with(path, schema)?;
        Ok(())
    }
}

/// Add documents to an index set, as one new segment
///
/// INDEX is an index set: a directory holding segment files and a manifest. It is created when
/// it does not exist (with --lang and --expected-docs, fixed for its life). INPUT is what
/// `build` takes: directories, files, .jsonl and .parquet files, or - (standard input, read
/// as `build` reads it).
///
/// Document ids are unique in a set: adding an id the set holds fails and changes nothing,
/// unless --replace, which deletes the old document in the same step. The change is atomic and
/// durable when the command returns: a crash leaves the set as it was before or after. Segments
/// are merged as they accumulate (about log₂ of the number of adds remain).
///
/// Empty and binary files, and documents over --max-doc-bytes, are skipped and reported, as
/// `build` skips them (`check --add` calls them errors: a submission must be a document). An
/// index file or set given as INPUT is refused: a piece built with `build --segment-of` joins
/// with `pocketdex adopt`.
///
/// Exit status: 0 when the documents were added (skipped ones aside); 2 on error, when nothing
/// changes (a missing INPUT, an id the set holds; a set this call would have created is not
/// left behind), or when some inputs could not be read (unreadable files, JSON Lines records
/// that are not JSON or have a field of the wrong type, as a truncated upload has, or an id
/// that is blank or holds control characters): they are
/// listed and the rest are added, so add the others again once fixed. Empty and binary
/// documents are skipped with a message, exit 0, as long as some document is added: when every
/// one is skipped, nothing is added and the status is 2.
///
/// Example:
///   pocketdex add archive.set samples/wiki-en
///   pocketdex check archive.set submission.txt --add
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct AddArgs {
    /// The index set (a directory; created when missing).
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Replace documents whose id the set already holds (default: refuse and change nothing).
    #[arg(long)]
    replace: bool,
    #[command(flatten)]
    input: util::InputArgs,
    #[command(flatten)]
    create: CreateArgs,
    #[command(flatten)]
    writer: WriterArgs,
    /// List every skipped input.
    #[arg(short, long)]
    verbose: bool,
    /// No summary on stderr (what was skipped, and warnings, are still said).
    #[arg(short, long)]
    quiet: bool,
}

pub fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    util::refuse_index_inputs(
        &args.inputs,
        "add the documents it was made of (a piece built with `build --segment-of SET` joins a set with `pocketdex adopt`)",
    )?;
    if pocketdex::is_set(&args.index) {
        // An existing set: read first, locked only to commit (a takedown's `delete` or a
        // submission's `check --add` need not wait for a long batch or a slow pipe).
        let nothing = || format!("nothing was added to {}", args.index.display());
        let schema = args.create.schema_unlocked(&args.index)?;
        let builder = pocketdex::IndexBuilder::like(&schema).with_set_sections();
        let (builder, summary) = read_batch(&args, builder).with_context(nothing)?;
        let mut writer = args
            .writer
            .open_as_read(&args.index, &schema)
            .with_context(nothing)?;
        let before = writer.generation();
        let result = commit_batch(&args, &mut writer, builder, summary, false, start);
        let unchanged = writer.generation() == before;
        return result.with_context(|| match unchanged {
            false => args.index.display().to_string(),
            true => nothing(),
        });
    }
    let (mut writer, created) = args.create.open_or_create(&args.index, &args.writer)?;
    let before = writer.generation();
    let result = read_batch(&args, writer.builder())
        .and_then(|(b, summary)| commit_batch(&args, &mut writer, b, summary, created, start));
    // An error before the commit changed nothing: say so. (One after it, the set could not be
    // opened again, says itself that the change is committed.)
    let unchanged = writer.generation() == before;
    let made_dir = writer.made_directory();
    if created && unchanged && result.is_err() {
        // Nothing was added: the set this call created goes again.
        let _ = writer.discard_unused();
    }
    result.with_context(|| match (unchanged, created) {
        (false, _) => args.index.display().to_string(),
        (true, true) => format!(
            "nothing was added, and {}",
            not_created(&args.index, made_dir)
        ),
        (true, false) => format!("nothing was added to {}", args.index.display()),
    })
}

/// What became of a set's directory that a failed first change created the set in: removed
/// when the change made it, else left as the empty directory it was.
fn not_created(dir: &Path, made_dir: bool) -> String {
    if made_dir {
        format!("{} was not created", dir.display())
    } else {
        format!("{} is the empty directory it was, not a set", dir.display())
    }
}

/// Reads and fingerprints `add`'s inputs into `builder` (one for a segment of the set).
fn read_batch(
    args: &AddArgs,
    mut builder: pocketdex::IndexBuilder,
) -> anyhow::Result<(pocketdex::IndexBuilder, ingest::Summary)> {
    let f = builder.fingerprinter().clone();
    util::inputs_once(&args.inputs, "its documents would be added twice")?;
    let sources = pocketdex::corpus::sources(&args.inputs)?;
    if !args.quiet {
        util::note_inputs(&args.inputs);
    }
    let summary = ingest::fingerprinted(
        &args.input.reader(),
        &sources,
        true,
        |t| {
            // The builder's own fingerprinter (the set's idf table): its weighing is the
            // builder's, and the terms are freed on the thread that allocated them.
            let mut fp = f.fingerprint(t);
            fp.shed_terms();
            fp
        },
        args.quiet,
        "adding",
        |d, fp| {
            builder
                .add_fingerprint(&d.id, d.title.as_deref(), fp)
                .map(|_| ())
        },
    )?;
    // Said even with --quiet: a document skipped is something lost.
    summary.report(args.verbose);
    if summary.docs == 0 {
        anyhow::bail!("no documents to add: {}", summary.nothing_read());
    }
    // The caller says that nothing was added.
    summary.check_id_key(&args.input)?;
    Ok((builder, summary))
}

/// Adds what [`read_batch`] read to the set, under its lock, and says what was done.
fn commit_batch(
    args: &AddArgs,
    writer: &mut SetWriter,
    builder: pocketdex::IndexBuilder,
    summary: ingest::Summary,
    created: bool,
    start: Instant,
) -> anyhow::Result<ExitCode> {
    // A signal during the merge after the commit stops with what this call exits with.
    util::status_after_commit(if summary.had_errors() { 2 } else { 0 });
    let change = writer.add(builder, args.replace)?;
    warn_merge_failed(&args.index, &change);
    if !args.quiet {
        eprintln!(
            "{} {} ({} of text) in {:.2} s{}; {}",
            if created {
                "created the set with"
            } else {
                "added"
            },
            plural(change.added, "document"),
            util::size(summary.bytes),
            start.elapsed().as_secs_f64(),
            if change.deleted > 0 {
                format!(", replacing {}", change.deleted)
            } else {
                String::new()
            },
            state(&args.index, &change)
        );
    }
    if summary.had_errors() {
        eprintln!(
            "pocketdex: some inputs could not be read (unreadable, or records that are not JSON, have a field of the wrong type or an id that cannot be printed) and were not added (listed above); exit status 2. Add them once they are fixed (the rest are in {})",
            args.index.display()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn state(path: &Path, c: &Change) -> String {
    format!(
        "{} now holds {} in {} (generation {})",
        path.display(),
        plural(c.live_docs, "document"),
        plural(c.segments, "segment"),
        c.generation
    )
}

/// Warns, whatever `--quiet` says, when the merge after an add failed: the documents are in.
fn warn_merge_failed(path: &Path, c: &Change) {
    if let Some(why) = &c.merge_failed {
        eprintln!(
            "pocketdex: warning: the documents are in, but merging segments afterwards failed ({why}); the set is sound, run `pocketdex merge {}` once the cause is fixed",
            path.display()
        );
    }
}

/// Delete documents from an index set by id.
///
/// Deleted documents never appear in hits again (`merge` drops their bytes).
///
/// ID - reads ids from stdin, one per line. Exit status: 0 when every id was found and
/// deleted, 1 when some were not in the set (the others are deleted), 2 on error.
#[derive(clap::Args, Debug)]
pub struct DeleteArgs {
    /// The index set.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Document ids exactly as `query --json` prints them (`query`'s text output escapes
    /// control characters), or - (one per line on stdin).
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,
    #[command(flatten)]
    writer: WriterArgs,
    /// No summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub fn delete(args: DeleteArgs) -> anyhow::Result<ExitCode> {
    let mut ids = Vec::new();
    for id in &args.ids {
        if id == "-" {
            for line in std::io::stdin().lock().lines() {
                let line = line.context("reading ids from stdin")?;
                if !line.is_empty() {
                    ids.push(line);
                }
            }
        } else {
            ids.push(id.clone());
        }
    }
    // An id given twice is deleted once and counted once.
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    if ids.is_empty() {
        // Only `-` gives none: an empty list of takedowns is no error, but an operator whose
        // ids file came out empty should hear of it.
        eprintln!("pocketdex: warning: standard input held no ids; nothing is deleted");
    }
    let mut writer = args.writer.open(&args.index)?;
    let (found, change) = writer.delete(&ids)?;
    let missing: Vec<&String> = ids
        .iter()
        .zip(&found)
        .filter(|e| !e.1)
        .map(|e| e.0)
        .collect();
    if !args.quiet {
        for id in missing.iter().take(10) {
            if pocketdex::check::is_printable_id(id) {
                eprintln!("not found: {}", util::printable(id));
            } else {
                // Such an id prints as nothing or as escapes: say why it cannot be there.
                eprintln!(
                    "not found: {:?} (no document has a blank id or one with control characters)",
                    id
                );
            }
        }
        if missing.len() > 10 {
            eprintln!("… and {} more not found", missing.len() - 10);
        }
        eprintln!(
            "deleted {} of {}; {}",
            plural(change.deleted, "document"),
            ids.len(),
            state(&args.index, &change)
        );
    }
    Ok(if missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The submission check: is each DOC a near copy of a document in the index?
///
/// Each DOC is looked up like `query` does; it is a near copy when a document scores at least
/// --threshold. A later DOC is also checked against the earlier new ones of the same call, so
/// that a run without --add says what --add would do (an id the set holds, or one given twice,
/// is then an error as with --add). With --add, each DOC without a near copy
/// is added to the set (created when missing), all in one locked step; with --replace, a DOC
/// whose id the set holds replaces that document and is not a near copy of it. INDEX may be
/// an index file or set without --add.
///
/// Exit status: 0 when every DOC is new, 1 when a near copy was found for some DOC, 2 on
/// error: a DOC that cannot be checked (missing, unreadable, empty, binary, over
/// --max-doc-bytes, a damaged Parquet file, a directory or JSON Lines file without documents)
/// or an id the set already holds; nothing is added then. Output no longer read (`| head`)
/// changes none of it: every DOC is still checked (and added).
///
/// Output: one line per DOC, `DOC: new`, `DOC: new, added`, `DOC: error: WHY` or `DOC: near
/// copy of ID (score)` followed by its hits; with --add it is printed once the step is done,
/// so "added" is only said of what was added. With --json one object per DOC: {"type": "check", "doc",
/// "status": "new" | "near-copy" | "error", "added", "hits": [{"id", "score", "codes",
/// "path"}], "message"?}, where "path" "submitted" marks an earlier DOC of the same call.
///
/// Example:
///   pocketdex check archive.set submission.txt --add && echo "accepted"
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct CheckArgs {
    /// The index set (or, without --add, any index file).
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Documents to check: files, directories, .jsonl and .parquet files, or - (stdin: JSON
    /// Lines if it starts with `{`, else one document).
    #[arg(required = true, value_name = "DOC")]
    docs: Vec<PathBuf>,
    /// A document scoring at least T, as printed to four decimals, makes DOC a near copy
    /// (estimated cosine; a copy with 5% of its words changed scores about 0.95, related
    /// articles 0.3–0.6).
    #[arg(short, long, value_name = "T", default_value_t = 0.8)]
    threshold: f32,
    /// Add each DOC that has no near copy.
    #[arg(long)]
    add: bool,
    /// With --add: a new DOC whose id the set holds replaces that document (without --add:
    /// say what --add --replace would).
    #[arg(long)]
    replace: bool,
    /// Show at most N near copies per DOC (at least 1).
    #[arg(long, default_value_t = 10, value_name = "N",
          value_parser = util::at_least_one)]
    top: usize,
    /// JSON Lines output.
    #[arg(long)]
    pub(super) json: bool,
    /// No summary of what was added on stderr (the verdicts and errors are still printed).
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    input: util::InputArgs,
    #[command(flatten)]
    create: CreateArgs,
    #[command(flatten)]
    writer: WriterArgs,
}

/// What reading a check's DOCs gives, in input order: a document to check, or a DOC (or a
/// document in it) that could not be checked, and why.
enum Event {
    Doc(String, Option<String>, Box<pocketdex::Fingerprint>),
    Unchecked(String, String),
}

/// Reads the DOCs of a check and fingerprints them with `f`, handing each event to `sink` in
/// input order (a DOC's documents, then its errors); returns the documents read and, of them,
/// those named by their place (`--id-key` found in none). An error of `sink` ends the reading.
fn read_checked(
    args: &CheckArgs,
    f: &pocketdex::Fingerprinter,
    sink: &mut dyn FnMut(Event) -> anyhow::Result<()>,
) -> anyhow::Result<(u64, u64)> {
    let (mut read_docs, mut by_place) = (0u64, 0u64);
    // Invalid UTF-8 of every DOC, warned of once as `add` does.
    let mut invalid = ingest::Summary::default();
    util::note_inputs(&args.docs);
    let reader = args.input.reader();
    for d in &args.docs {
        let source = match pocketdex::corpus::Source::from_arg(d) {
            Ok(s) => s,
            Err(e) => {
                sink(Event::Unchecked(
                    d.display().to_string(),
                    util::why_unread(d, &e),
                ))?;
                continue;
            }
        };
        // An error of the sink (of the index) ends the command; an error reading this DOC (a
        // damaged Parquet file, say) is this DOC's, and the others are still checked.
        let mut fatal: Option<anyhow::Error> = None;
        let read = ingest::fingerprinted(
            &reader,
            std::slice::from_ref(&source),
            // The check itself refuses to add an unprintable id (a verdict of error); a dry
            // run on a file names its queries as given.
            false,
            |t| f.fingerprint(t),
            true,
            "checking",
            |d, fp| match sink(Event::Doc(d.id.clone(), d.title.clone(), Box::new(fp))) {
                Ok(()) => Ok(()),
                Err(e) => {
                    fatal = Some(e);
                    // Only stops the reading: `fatal` is what is reported.
                    Err(pocketdex::Error::Invalid("stopped".into()))
                }
            },
        );
        if let Some(e) = fatal {
            return Err(e);
        }
        match read {
            // Every DOC that could not be checked (missing, unreadable, empty, binary, too
            // large, or holding no documents at all) is an error: a submission that was not
            // looked at is not "new".
            Ok(summary) => {
                read_docs += summary.docs;
                by_place += summary.named_by_place;
                invalid.invalid.0 += summary.invalid.0;
                invalid.invalid.1 += summary.invalid.1;
                if summary.docs == 0 && summary.skipped.is_empty() {
                    sink(Event::Unchecked(
                        d.display().to_string(),
                        "no documents in it".into(),
                    ))?;
                }
                for s in summary.skipped {
                    sink(Event::Unchecked(s.id, s.reason))?;
                }
            }
            Err(e) => sink(Event::Unchecked(
                d.display().to_string(),
                util::why_unread(d, &e),
            ))?,
        }
    }
    invalid.warn_invalid();
    Ok((read_docs, by_place))
}

pub fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.threshold) {
        anyhow::bail!(
            "--threshold must be between 0 and 1, not {}",
            args.threshold
        );
    }
    if args.replace && !args.add && !args.index.is_dir() {
        anyhow::bail!(
            "--replace applies to an index set (with --add, or without it to say what --add --replace would do); {} is an index file, which never changes",
            args.index.display()
        );
    }
    util::refuse_index_docs(
        &args.docs,
        "check the documents it was built from (a piece built with `build --segment-of SET` joins a set with `pocketdex adopt`)",
    )?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(util::AnswerOut::new(stdout.lock()));
    let mut near_copies = 0usize;
    // With --add, the verdicts wait for the commit: a refused step adds nothing, and its
    // verdicts must not say "added".
    let mut held: Vec<Verdict> = Vec::new();
    // One event: a verdict printed (or held, with --add). A DOC that is not there is an error
    // of that DOC, as an unreadable one is: the others are still checked (nothing is added).
    let mut handle = |check: &mut Check, e: Event| -> anyhow::Result<()> {
        let v = match e {
            Event::Doc(id, title, fp) => check.check(&id, title.as_deref(), *fp)?,
            Event::Unchecked(doc, why) => {
                eprintln!("pocketdex: {}: {why}", util::printable(&doc));
                check.unchecked(doc, why)
            }
        };
        near_copies += (v.status == Status::NearCopy) as usize;
        if args.add {
            held.push(v);
        } else {
            print_check(&mut out, &args, &v)?;
        }
        Ok(())
    };
    let make_check = |set, builder| -> anyhow::Result<Check> {
        let check = Check::new(set, builder, args.top, args.threshold, args.replace)
            .with_context(|| args.index.display().to_string())?;
        // On a set, a dry run says what adding would say of each id too.
        Ok(if args.index.is_dir() {
            check.with_id_checks()
        } else {
            check
        })
    };
    let mut writer = None;
    let mut created = false;
    let read_only;
    let (check, read_docs, by_place) = if args.add && pocketdex::is_set(&args.index) {
        // An existing set: the DOCs are read and fingerprinted before its lock is taken, and
        // checked and added under it, so that a slow pipe holds up no other writer.
        let schema = args.create.schema_unlocked(&args.index)?;
        let mut events = Vec::new();
        let (read_docs, by_place) = read_checked(&args, schema.fingerprinter(), &mut |e| {
            events.push(e);
            Ok(())
        })?;
        writer = Some(args.writer.open_as_read(&args.index, &schema)?);
        let w = writer.as_ref().expect("set");
        let mut check = make_check(w.set(), Some(w.builder()))?;
        for e in events {
            handle(&mut check, e)?;
        }
        (check, read_docs, by_place)
    } else {
        let set: &IndexSet = if args.add {
            // A new set, made under its lock.
            let (w, new) = args.create.open_or_create(&args.index, &args.writer)?;
            (writer, created) = (Some(w), new);
            writer.as_ref().expect("set").set()
        } else {
            // They would be silently ignored: without --add no set is created or changed.
            if let Some(option) = args.create.given() {
                anyhow::bail!(
                    "{option} applies when `check --add` creates a set; without --add the index is only read"
                );
            }
            read_only =
                util::open_indexes(std::slice::from_ref(&args.index), util::Access::Lookups)?;
            &read_only
        };
        let mut check = make_check(set, writer.as_ref().map(|w| w.builder()))?;
        let f = check.fingerprinter().clone();
        // Checked as they are read: a dry run's verdicts come as it goes.
        let (read_docs, by_place) = read_checked(&args, &f, &mut |e| handle(&mut check, e))?;
        (check, read_docs, by_place)
    };
    if args.add {
        let mut all = ingest::Summary::default();
        (all.docs, all.named_by_place) = (read_docs, by_place);
        if let Err(e) = all.check_id_key(&args.input) {
            drop(check);
            if let Some(w) = writer.filter(|_| created) {
                let _ = w.discard_unused();
            }
            return Err(e.context(format!("nothing was added to {}", args.index.display())));
        }
    }
    let errors = check.errors();
    let additions = check.finish();
    let mut refused = None;
    let mut added = None;
    // The verdicts are printed once the step is done, the set's lock let go (a slow reader of
    // them holds up no other writer), and before the merge that may follow; a signal after
    // the commit waits for them and stops with this command's status.
    let made_dir = writer.as_ref().is_some_and(|w| w.made_directory());
    let mut answering = None;
    if let Some(mut w) = writer {
        util::status_after_commit(if near_copies > 0 { 1 } else { 0 });
        answering = Some(util::answering());
        let committed = additions.commit_unmerged(&mut w);
        if created && !matches!(committed, Ok(Committed::Added(_))) {
            // Nothing was added: the set this call created goes again.
            let _ = w.discard_unused();
        }
        match committed.inspect_err(|_| util::status_after_commit(2))? {
            Committed::Refused { held_ids, .. } => refused = Some(held_ids),
            Committed::Added(change) => added = Some(change),
            Committed::Nothing => {}
        }
    }
    for mut v in held {
        v.added &= refused.is_none();
        print_check(&mut out, &args, &v).inspect_err(|_| util::status_after_commit(2))?;
    }
    out.flush().inspect_err(|_| util::status_after_commit(2))?;
    drop(answering);
    if let Some(change) = &mut added {
        // Merged by a writer of its own: when another has taken the lock meanwhile, its own
        // change merges instead.
        match SetWriter::open(&args.index, false) {
            Ok(mut w) => w.merge_as_policy_asks(change),
            Err(pocketdex::Error::Busy { .. }) => {}
            Err(e) => change.merge_failed = Some(e.to_string()),
        }
        warn_merge_failed(&args.index, change);
    }
    out.flush()?;
    if let Some(held_ids) = refused {
        anyhow::bail!(
            "nothing was added{}: fix the errors above and check again{}",
            if created {
                format!(", and {}", not_created(&args.index, made_dir))
            } else {
                format!(" to {}", args.index.display())
            },
            if held_ids > 0 {
                " (--replace lets a new document take a held id)"
            } else {
                ""
            }
        );
    }
    if let Some(change) = added.filter(|_| !args.quiet) {
        eprintln!(
            "{} {}{}; {}",
            if created {
                "created the set with"
            } else {
                "added"
            },
            plural(change.added, "document"),
            if change.deleted > 0 {
                format!(", replacing {}", change.deleted)
            } else {
                String::new()
            },
            state(&args.index, &change)
        );
    }
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else if near_copies > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_check(out: &mut dyn Write, args: &CheckArgs, v: &Verdict) -> std::io::Result<()> {
    if args.json {
        let mut o = serde_json::to_value(v).map_err(std::io::Error::other)?;
        o["type"] = json!("check");
        return writeln!(out, "{o}");
    }
    let doc = util::printable(&v.doc);
    match (v.status, v.hits.first()) {
        (Status::Error, _) => writeln!(
            out,
            "{doc}: error: {}",
            v.message.as_deref().unwrap_or_default()
        ),
        (_, Some(best)) => {
            let best_id = util::printable(&best.id);
            writeln!(out, "{doc}: near copy of {best_id} ({:.3})", best.score)?;
            for (rank, n) in v.hits.iter().enumerate() {
                writeln!(
                    out,
                    "  {:>2}. {:.3}  {}  ({})",
                    rank + 1,
                    n.score,
                    util::printable(&n.id),
                    n.path
                )?;
            }
            Ok(())
        }
        (_, None) if v.added => writeln!(out, "{doc}: new, added"),
        (_, None) => writeln!(out, "{doc}: new"),
    }
}

/// Add index files built apart (build --segment-of) to an index set as its segments
///
/// Each FILE.pdx is a segment built from SET's schema with `pocketdex build ... --segment-of
/// SET` (on another core, machine or day; from Python, `IndexBuilder.like(schema,
/// segment=True)`). Every byte of each file is checked; a file built with other parameters, a
/// plain index, or an id the set holds or another file repeats is refused, and then nothing
/// changes. The files are copied into the set in one atomic step, in the order given, and left
/// where they are. No merge follows: `pocketdex merge SET` joins the segments when wanted.
///
/// Example:
///   pocketdex add archive.set first-batch/
///   pocketdex build part-1.jsonl --segment-of archive.set -o part-1.pdx
///   pocketdex build part-2.jsonl --segment-of archive.set -o part-2.pdx
///   pocketdex adopt archive.set part-1.pdx part-2.pdx
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct AdoptArgs {
    /// The index set.
    #[arg(value_name = "SET")]
    index: PathBuf,
    /// Segment files built with `build --segment-of SET`.
    #[arg(required = true, value_name = "FILE.pdx")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    writer: WriterArgs,
    /// No summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub fn adopt(args: AdoptArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    if let Some(dir) = args.files.iter().find(|f| f.is_dir()) {
        anyhow::bail!(
            "{} is a directory, not an index file: adopt takes the files that `pocketdex build DOC... --segment-of {} -o FILE.pdx` writes",
            dir.display(),
            args.index.display(),
        );
    }
    // The same file twice (by two names, too) would be refused for its ids; say what it is.
    let mut seen = std::collections::HashMap::new();
    for f in &args.files {
        if let Ok(real) = f.canonicalize() {
            if let Some(first) = seen.insert(real, f) {
                anyhow::bail!(
                    "{} is given twice (as {} too); nothing was added",
                    f.display(),
                    first.display()
                );
            }
        }
    }
    let mut writer = args.writer.open(&args.index)?;
    let change = writer
        .adopt(&args.files)
        .with_context(|| format!("nothing was added to {}", args.index.display()))?;
    if !args.quiet {
        eprintln!(
            "adopted {} in {} in {:.2} s; {}",
            plural(change.added, "document"),
            plural(args.files.len() as u64, "segment"),
            start.elapsed().as_secs_f64(),
            state(&args.index, &change)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Compact an index set, or write it as one index file to ship.
///
/// Without -o: merges every segment into one and drops deleted documents (the set stays a set;
/// readers see the old or the new state, never a mix). With -o FILE.pdx: writes the set's live
/// documents as one plain index file, byte for byte what `build` writes for them with the
/// set's parameters (`build --idf language --expected-docs N` for a set made with the
/// defaults), and leaves the set as it is. The file must be outside the set's directory. An
/// export reads the set's current snapshot and takes no lock: it works on read-only media and
/// while another process changes the set.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The index set.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Write one index file here instead of compacting the set.
    #[arg(short, long, value_name = "FILE.pdx")]
    output: Option<PathBuf>,
    #[command(flatten)]
    writer: WriterArgs,
    /// No summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    if args.index.is_file() && pocketdex::is_index_file(&args.index) {
        anyhow::bail!(
            "{} is already one index file: merge takes an index set (a directory made by `pocketdex add`); to ship this file, copy it as it is",
            args.index.display()
        );
    }
    match &args.output {
        // A snapshot is exported without the writer's lock: from read-only media too.
        Some(out) => {
            let stats = pocketdex::export_set(&args.index, out)
                .with_context(|| format!("writing {}", out.display()))?;
            if !args.quiet {
                eprintln!(
                    "wrote {} ({} documents, {} bytes) in {:.2} s",
                    out.display(),
                    stats.docs,
                    stats.bytes,
                    start.elapsed().as_secs_f64()
                );
            }
        }
        None => {
            let mut writer = args.writer.open(&args.index)?;
            let change = writer.merge_all()?;
            if !args.quiet && change.merged == 0 {
                eprintln!("nothing to merge: {}", state(&args.index, &change));
            } else if !args.quiet {
                eprintln!(
                    "merged {} in {:.2} s; {}",
                    plural(change.merged, "segment"),
                    start.elapsed().as_secs_f64(),
                    state(&args.index, &change)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Make a damaged index set sound again, dropping what cannot be read
///
/// Every segment is checked, every byte (as `verify` does). One that is damaged (a bad sector,
/// a broken copy), missing, or not the file the manifest names is dropped from the set and
/// moved to INDEX/damaged/; the ids of its live documents that can still be read are printed,
/// one per line, so that they can be added again from their sources (`pocketdex add INDEX
/// DOC...`). A damaged schema (schema.pdx) is written again from a sound segment. The set then
/// answers as one index of the documents left. A copy of the set's directory made after the
/// segment was written (copied while no writer runs) restores it with nothing lost: prefer it.
///
/// Exit status: 0 when nothing needed dropping (a rewritten schema loses nothing), 1 when
/// segments were dropped (their ids on stdout), 2 on error (a damaged manifest: restore it from
/// a copy).
///
/// Example:
///   pocketdex verify archive
///   pocketdex repair archive > lost-ids.txt
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct RepairArgs {
    /// The index set.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// One JSON object on stdout (every dropped segment, why, its ids) instead of ids.
    #[arg(long)]
    pub(super) json: bool,
    #[command(flatten)]
    writer: WriterArgs,
    /// No summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub fn repair(args: RepairArgs) -> anyhow::Result<ExitCode> {
    let repair = SetWriter::repair(&args.index, args.writer.wait)
        .with_context(|| format!("repairing {}", args.index.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &repair)?;
        writeln!(out)?;
    } else {
        for d in &repair.dropped {
            // As `query` prints ids: control characters escaped (--json has them exact).
            for id in &d.ids {
                writeln!(out, "{}", util::printable(id))?;
            }
        }
    }
    out.flush()?;
    if !args.quiet {
        if repair.schema_rewritten {
            eprintln!(
                "{} was damaged and is written again from a sound segment (nothing lost)",
                args.index.join(pocketdex::SCHEMA).display()
            );
        }
        for d in &repair.dropped {
            eprintln!("dropped {}: {}", d.file, util::printable(&d.why));
            let ids = match (d.ids.len(), d.unread) {
                (_, 0) => "whose ids are printed".to_string(),
                (0, _) => "whose ids could not be read".to_string(),
                (n, unread) => format!("the ids of {n} printed, {unread} could not be read"),
            };
            let kept = match &d.kept_as {
                Some(p) => format!("; the file is kept as {}", p.display()),
                None => String::new(),
            };
            eprintln!(
                "  it held {}, {ids}{kept}",
                plural(d.live_docs, "live document"),
            );
        }
        if repair.dropped.is_empty() && !repair.schema_rewritten {
            eprintln!(
                "nothing to repair: every segment and the schema are sound; {}",
                state(&args.index, &repair.change)
            );
        } else {
            eprintln!("{}", state(&args.index, &repair.change));
            if !repair.dropped.is_empty() {
                eprintln!(
                    "add the dropped documents again from their sources: pocketdex add {} DOC...",
                    args.index.display()
                );
            }
        }
    }
    Ok(if repair.dropped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
