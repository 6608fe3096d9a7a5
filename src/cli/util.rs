//! Helpers shared by subcommands: the one memory map, progress bars, number formatting.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use pocketdex::{corpus, Index, IndexSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--probes` and `--short-probes`, shared by `query` and `eval`.
#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// Lookups per fuzzy band code: the code and its PROBES − 1 most likely neighbours (more
    /// find more edited copies, for time); default: the index's setting (`info` shows it).
    #[arg(long, value_name = "PROBES", value_parser = clap::value_parser!(u8).range(1..))]
    pub probes: Option<u8>,
    /// Lookups per short-path band, for queries of fewer than 72 terms with the default
    /// parameters (`info` shows the short path): the band's code and the PROBES − 1
    /// combinations of samples a near copy most likely drew instead (more find more edited
    /// short texts, for candidates; 1: the code alone); default: the index's setting (4 since
    /// format version 12; 1 in older files, which were queried so).
    #[arg(long, value_name = "PROBES", value_parser = clap::value_parser!(u8).range(1..))]
    pub short_probes: Option<u8>,
}

/// `--similar` and `--similar-probes`, shared by `query` and `eval`.
#[derive(clap::Args, Debug)]
pub struct SimilarArgs {
    /// High-similarity search: also find documents that say nearly the same thing in other
    /// words (rewrites, revisions, other editions or translations; cosine down to about 0.6),
    /// not only near copies. Looks up the index's similar path (`info` shows it) besides the
    /// usual codes: about twice the lookups.
    #[arg(long)]
    pub similar: bool,
    /// Lookups per similar band with --similar (more find more, for time; at most 64 with one
    /// row per band); default: the index's setting.
    #[arg(long, value_name = "PROBES", requires = "similar",
          value_parser = clap::value_parser!(u8).range(1..))]
    pub similar_probes: Option<u8>,
}

impl SimilarArgs {
    /// Says on stderr when --similar cannot find more than the default query: the index was
    /// built without the similar path.
    pub fn warn_if_absent<D: AsRef<[u8]>>(&self, index: &Index<D>, path: &Path) {
        if self.similar && index.meta().params.similar_bands == 0 {
            eprintln!(
                "pocketdex: warning: {} has no similar path (built with --similar-bands 0): --similar finds only what the default query finds",
                path.display()
            );
        }
    }
}

/// How documents are read, the same for every command that reads them: `--max-doc-bytes`,
/// `--stdin-format` and the record keys (`--id-key`, `--text-key`, `--title-key`).
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Skip, with a message, each document larger than this: a file by its size, a JSON Lines
    /// record by its line's length, a Parquet row by its text's. Reading holds at most about 3
    /// times this (besides the index it builds or queries), however large the input. Suffixes K, M, G:
    /// KiB, MiB, GiB.
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_size,
          help_heading = "Input")]
    pub max_doc_bytes: u64,
    /// What - (standard input) holds.
    #[arg(long, value_name = "FORMAT", default_value = "auto", help_heading = "Input",
          value_parser = choice(&corpus::StdinFormat::ALL, corpus::StdinFormat::name,
                                corpus::StdinFormat::description))]
    pub stdin_format: corpus::StdinFormat,
    /// The field of JSON Lines records, and the column of Parquet files, that holds each
    /// document's id: a string or an integer. A record without one (or with a blank one) is
    /// named FILE:LINE (JSON Lines) or FILE:ROW (Parquet, rows counted from 1); a key of yours
    /// that no record has is refused (by build, add, check --add, dups, eval and synth).
    #[arg(long, value_name = "KEY", default_value = "id", help_heading = "Input")]
    pub id_key: String,
    /// The field (JSON Lines) or column (Parquet) that holds each document's text; a record
    /// without it, or with null, is skipped. A Parquet file without that column is an error
    /// that lists its columns.
    #[arg(
        long,
        value_name = "KEY",
        default_value = "text",
        help_heading = "Input"
    )]
    pub text_key: String,
    /// The field (JSON Lines) or column (Parquet) that holds each document's title, if any.
    #[arg(
        long,
        value_name = "KEY",
        default_value = "title",
        help_heading = "Input"
    )]
    pub title_key: String,
    /// The id of the document read from - (standard input) as text, instead of `-`: a
    /// submission's own id (`... | pocketdex check SET - --add --stdin-id sub-42`). JSON Lines
    /// records have ids of their own.
    #[arg(long, value_name = "ID", help_heading = "Input", value_parser = printable_id)]
    pub stdin_id: Option<String>,
}

/// An id a user can print and delete by, as a check that adds takes them.
fn printable_id(s: &str) -> Result<String, String> {
    if !pocketdex::check::is_printable_id(s) {
        return Err("an id must not be blank or hold control characters".into());
    }
    Ok(s.to_string())
}

impl InputArgs {
    /// The reader these options describe.
    pub fn reader(&self) -> corpus::Reader {
        corpus::Reader {
            max_doc_bytes: self.max_doc_bytes,
            stdin: self.stdin_format,
            keys: corpus::Keys {
                id: self.id_key.clone(),
                text: self.text_key.clone(),
                title: self.title_key.clone(),
            },
            stdin_id: self.stdin_id.clone(),
        }
    }
}

/// Held by a command while it prints the answer to a change it committed (`check --add`'s
/// verdicts): a signal after the commit waits for it, so the answer is whole ([`answered`]).
static ANSWERING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The exit status a signal after the commit stops the process with: the committed
/// command's own ([`status_after_commit`]).
static STATUS_AFTER_COMMIT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Says what the command's exit status is once its change is committed (`add`: 2 when some
/// inputs could not be read; `check --add`: 1 when a near copy was found), for a signal that
/// comes after the commit.
pub fn status_after_commit(status: u8) {
    STATUS_AFTER_COMMIT.store(status, std::sync::atomic::Ordering::SeqCst);
}

/// Holds back a signal handler that finds a change committed (see [`answered`]) until the
/// guard is dropped: the command prints its answer meanwhile.
pub fn answering() -> std::sync::MutexGuard<'static, ()> {
    ANSWERING.lock().unwrap_or_else(|e| e.into_inner())
}

/// For a signal handler once a change is committed: waits until the command's answer is
/// printed ([`answering`]) and returns the exit status to stop with; `None` when it was not
/// printed within `patience` (a reader that stopped reading must not keep the process from
/// ending).
pub fn answered(patience: std::time::Duration) -> Option<u8> {
    let until = std::time::Instant::now() + patience;
    loop {
        match ANSWERING.try_lock() {
            Ok(_) | Err(std::sync::TryLockError::Poisoned(_)) => {
                return Some(STATUS_AFTER_COMMIT.load(std::sync::atomic::Ordering::SeqCst))
            }
            Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}

/// A size in bytes: a number, optionally followed by K, M or G (KiB, MiB, GiB; `KiB`, `MB`
/// and the like are read the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => {
            return Err(format!(
                "{s}: expected a number of bytes, e.g. 65536, 512K, 64M or 1G"
            ))
        }
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s}: expected a number of bytes, e.g. 65536, 512K, 64M or 1G"))?;
    match n.checked_shl(shift).filter(|v| v >> shift == n) {
        Some(0) => Err("the limit must be at least 1 byte".into()),
        Some(v) => Ok(v),
        None => Err(format!("{s} is too large")),
    }
}

/// `--idf`: where the idf table that weighs samples and sketches comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdfSource {
    /// The language's built-in table (reference-corpus/<lang>-idf.tsv): a document gets the
    /// same codes and sketch whatever else is indexed, so hits and scores do not depend on how
    /// a collection is split into batches, shards or index sets.
    Language,
    /// Learned from the first 20,000 documents of this build: adapts to a specialised
    /// vocabulary, but a document's codes and scores depend on what else the build holds.
    Collection,
    /// Copied from an index file (or an index set's schema): a collection's own weights, fixed
    /// for every piece built with them.
    From(PathBuf),
}

impl IdfSource {
    /// Parses `language`, `collection` or the path of an index file or set.
    pub fn parse(s: &str) -> Result<IdfSource, String> {
        match s {
            "language" => Ok(IdfSource::Language),
            "collection" => Ok(IdfSource::Collection),
            path if pocketdex::index_file_of(Path::new(path)).is_file() => {
                Ok(IdfSource::From(pocketdex::index_file_of(Path::new(path))))
            }
            path if !Path::new(path).exists() => Err(format!(
                "{path} does not exist; give `language`, `collection` or an index file or set to copy the table from"
            )),
            other => Err(format!(
                "expected `language`, `collection` or an index file or set to copy the table from; {other} is none of them"
            )),
        }
    }
}

/// An index builder for `lang` weighing with the idf table `idf` says.
pub fn index_builder(
    lang: pocketdex::Lang,
    params: pocketdex::Params,
    idf: &IdfSource,
) -> anyhow::Result<pocketdex::IndexBuilder> {
    let builder = pocketdex::IndexBuilder::for_lang(lang, params)?;
    Ok(match idf {
        IdfSource::Language => builder.with_idf(pocketdex::sketch::Idf::builtin(lang)),
        IdfSource::Collection => builder,
        IdfSource::From(path) => builder
            .with_idf_of(&open_index(path, Access::Scan)?)
            .with_context(|| format!("--idf {}", path.display()))?,
    })
}

/// How a command reads an index, which sets the kernel's read-ahead for its map.
#[derive(Clone, Copy)]
pub enum Access {
    /// A few scattered bytes per lookup (query, eval): read-ahead would page in megabytes a
    /// query never uses.
    Lookups,
    /// Whole sections front to back (verify, info): read-ahead is what makes that fast.
    Scan,
}

/// Opens an index file by memory-mapping it and running the cheap checks of [`Index::open`].
pub fn open_index(path: &Path, access: Access) -> anyhow::Result<Index<memmap2::Mmap>> {
    if path.is_dir() {
        if pocketdex::is_set(path) {
            anyhow::bail!(
                "{} is an index set and this takes one index file; export one with `pocketdex merge {} -o FILE.pdx`",
                path.display(),
                path.display()
            );
        }
        anyhow::bail!("{} is a directory, not an index file", path.display());
    }
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open index {}", path.display()))?;
    // SAFETY: the map is read-only and the index never trusts its bytes (every read is bounds-
    // checked and `verify` checks checksums). If another process truncates the file while it is
    // mapped, reads past the new end fault (SIGBUS), as for every memory-mapped reader; indexes
    // are written by rename, never in place, so pocketdex itself never does that.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .with_context(|| format!("cannot map {}", path.display()))?;
    #[cfg(unix)]
    let _ = map.advise(match access {
        Access::Lookups => memmap2::Advice::Random,
        Access::Scan => memmap2::Advice::Sequential,
    });
    Index::open(map).with_context(|| format!("{}", path.display()))
}

/// Runs `each` for every INDEX argument: with several, one that fails is reported and the
/// others still run (exit status 2 at the end); with one, or on a closed stdout, the error is
/// the command's.
pub fn for_each_index(
    paths: &[PathBuf],
    mut each: impl FnMut(&PathBuf) -> anyhow::Result<()>,
) -> anyhow::Result<std::process::ExitCode> {
    let mut failed = 0;
    for path in paths {
        match each(path) {
            Ok(()) => {}
            Err(e) if paths.len() == 1 || is_closed_pipe(&e) => return Err(e),
            Err(e) => {
                eprintln!("pocketdex: error: {}", crate::message(&e));
                failed += 1;
            }
        }
    }
    Ok(if failed > 0 {
        std::process::ExitCode::from(2)
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// Standard output for a command whose exit status is its answer (`query`: any hit; `check`:
/// new, near copy or error; `dups`: any group): once its reader has gone (`| head -n1`), the
/// rest of the output is dropped and the command runs on, so that its status is the answer for
/// every DOC, as if all had been read. (Other commands end quietly, with status 0.)
pub struct AnswerOut<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> AnswerOut<W> {
    pub fn new(inner: W) -> AnswerOut<W> {
        AnswerOut {
            inner,
            closed: false,
        }
    }

    /// `r`, but a closed pipe closes this output instead of failing.
    fn unless_closed<T>(&mut self, r: std::io::Result<T>, closed: T) -> std::io::Result<T> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(closed)
            }
            r => r,
        }
    }
}

impl<W: Write> Write for AnswerOut<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.unless_closed(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.unless_closed(r, ())
    }
}

/// True when `e` is a write to a closed stdout (`pocketdex query … | head`): not an error.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Refuses inputs that would be read twice: the same file or directory given twice (by its
/// canonical path, so `a.jsonl` and `./a.jsonl` are one), one inside another given directory,
/// or standard input twice. `twice` says what reading it twice would do.
pub fn inputs_once(inputs: &[PathBuf], twice: &str) -> anyhow::Result<()> {
    if inputs.iter().filter(|i| i.as_os_str() == "-").count() > 1 {
        anyhow::bail!("- (standard input) is given twice: it can be read once");
    }
    // Canonical path → its position among the inputs; a path that cannot be resolved is
    // reported as unreadable when it is read.
    let mut seen: std::collections::HashMap<PathBuf, usize> = Default::default();
    let mut real = Vec::new();
    for (i, input) in inputs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.as_os_str() != "-")
    {
        let Ok(path) = std::fs::canonicalize(input) else {
            continue;
        };
        if let Some(&first) = seen.get(&path) {
            return Err(given_twice(inputs, i, "the same input as", first, twice));
        }
        seen.insert(path.clone(), i);
        real.push((i, path));
    }
    // One inside another: an ancestor of its canonical path among the inputs (a directory
    // walk does not follow links, so the real path is the one read).
    for (i, path) in &real {
        if let Some(&outer) = path.ancestors().skip(1).find_map(|a| seen.get(a)) {
            return Err(if outer < *i {
                given_twice(inputs, *i, "inside", outer, twice)
            } else {
                given_twice(inputs, outer, "a directory holding", *i, twice)
            });
        }
    }
    Ok(())
}

/// Refuses an output directory (`report --out`, `eval --out`) that is one of the input
/// directories or below one: its files would be read as documents by the next run, and one
/// that shares a name with an input would replace it. `files` are the names written in it.
pub fn out_dir_outside_inputs(
    out: &Path,
    files: &[&str],
    inputs: &[PathBuf],
) -> anyhow::Result<()> {
    if let Some(dir) = pocketdex::atomic::input_dir_holding(out, inputs) {
        anyhow::bail!(
            "--out {} is inside the input directory {}: its files would be read as documents by the next run; choose a directory outside it",
            out.display(),
            printable(&dir.to_string_lossy())
        );
    }
    for name in files {
        pocketdex::atomic::check_not_input(&out.join(name), inputs)?;
    }
    Ok(())
}

/// The error of [`inputs_once`]: `inputs[later]` is `how` `inputs[first]`.
fn given_twice(
    inputs: &[PathBuf],
    later: usize,
    how: &str,
    first: usize,
    twice: &str,
) -> anyhow::Error {
    anyhow::anyhow!(
        "{} is {how} {}: {twice}; give each document once",
        printable(&inputs[later].to_string_lossy()),
        printable(&inputs[first].to_string_lossy())
    )
}

/// Opens what INDEX arguments name, to be queried as one: index files and index sets (a
/// directory with a manifest, read as its current snapshot), in order.
pub fn open_indexes(paths: &[PathBuf], access: Access) -> anyhow::Result<IndexSet<memmap2::Mmap>> {
    let mut all: Option<IndexSet<memmap2::Mmap>> = None;
    // The same index twice would rank each of its hits twice.
    if let Some((first, again)) = pocketdex::repeated_path(paths) {
        anyhow::bail!(
            "{} and {} are the same index; give each index once",
            first.display(),
            again.display()
        );
    }
    for path in paths {
        let set = if path.is_dir() {
            if !pocketdex::is_set(path) {
                anyhow::bail!(
                    "{} is a directory but not an index set (it has no {}); pass an index file, or a set made by `pocketdex add`",
                    path.display(),
                    pocketdex::MANIFEST
                );
            }
            IndexSet::open(path).with_context(|| format!("{}", path.display()))?
        } else {
            // A segment copied or opened from inside a set does not know the set's deletions.
            if let Some(dir) = path.parent().filter(|d| pocketdex::is_set(d)) {
                eprintln!(
                    "pocketdex: warning: {} is a file of the index set {}: alone it does not know the set's deletions (deleted documents can be hits) nor its other segments; give the set's directory instead",
                    printable(&path.display().to_string()),
                    printable(&dir.display().to_string())
                );
            }
            IndexSet::from_indexes(vec![(
                path.display().to_string(),
                open_index(path, access)?,
            )])
        };
        all = Some(match all {
            None => set,
            Some(a) => a.join(set),
        });
    }
    all.ok_or_else(|| anyhow::anyhow!("no index given"))
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: Option<u64>, what: &str) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let template = if len.is_some() {
        "{spinner} {msg} [{bar:40}] {human_pos}/{human_len} ({rate}/s, eta {eta})"
    } else {
        "{spinner} {msg} {human_pos} ({rate}/s)"
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate(state.per_sec()));
                },
            )
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}

/// The progress bar of a command that reads INPUT sources: a bar with a total when the number
/// of documents is known up front, a counting spinner otherwise, nothing with `quiet`.
pub fn input_progress(
    sources: &[pocketdex::corpus::Source],
    quiet: bool,
    what: &str,
) -> ProgressBar {
    if quiet {
        ProgressBar::hidden()
    } else {
        progress(pocketdex::corpus::counts_known(sources).then_some(0), what)
    }
}

/// `s` as text output shows it: control characters (newlines, tabs, ESC, …), the line and
/// paragraph separators U+2028 and U+2029 (line breaks to some terminals and editors) and the
/// bidirectional controls that reorder a terminal's text are escaped as Rust writes them (`\n`,
/// `\u{1b}`), so that a document name cannot forge lines or move the cursor. JSON output
/// prints names exactly.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    fn escaped(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !s.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `n what`, with an `s` unless `n` is 1: "1 document", "2 documents".
pub fn plural(n: impl Into<u64>, what: &str) -> String {
    let n = n.into();
    format!("{} {what}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// "1 symlink was", "3 symlinks were": a count, its noun and the verb that agrees with it.
pub fn plural_were(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one} was")
    } else {
        format!("{} {many} were", thousands(n))
    }
}

/// Refuses a DOC that is an index file or an index set: read as a document it would be
/// skipped as binary (or its manifest queried as text), and "no near copy" would be a wrong
/// answer. `hint` says what the user likely meant.
pub fn refuse_index_docs<S: AsRef<Path>>(docs: &[S], hint: &str) -> anyhow::Result<()> {
    refuse_indexes_as("DOC", "a document", docs, hint)
}

/// [`refuse_index_docs`] for the INPUTs of `build` and `add`, which would index nothing of
/// an index but a set's manifest: an index keeps no text to index again.
pub fn refuse_index_inputs<S: AsRef<Path>>(inputs: &[S], hint: &str) -> anyhow::Result<()> {
    refuse_indexes_as("INPUT", "documents", inputs, hint)
}

/// Refuses an index file or set among `docs`, given as the argument `arg`, which takes
/// `what_it_takes`.
fn refuse_indexes_as<S: AsRef<Path>>(
    arg: &str,
    what_it_takes: &str,
    docs: &[S],
    hint: &str,
) -> anyhow::Result<()> {
    for p in docs.iter().map(AsRef::as_ref) {
        let d = &p.to_string_lossy();
        let what = if pocketdex::is_set(p) {
            "an index set"
        } else if p.is_file() && pocketdex::is_index_file(p) {
            "an index file"
        } else {
            continue;
        };
        anyhow::bail!(
            "the {arg} {} is {what}, not {what_it_takes}; {}",
            printable(d),
            hint.replace("{}", &printable(d))
        );
    }
    Ok(())
}

/// Says on stderr what of `inputs` is read otherwise than it may look: a named pipe (FIFO),
/// whose opening waits until another process opens it for writing (without this, a command
/// waiting for a writer that never comes shows nothing at all); a `.json` file holding a JSON
/// array, an export of records that is read as one document, so that "no duplicates" or "no
/// near copy" would be said of nothing that was parsed.
pub fn note_inputs<S: AsRef<Path>>(inputs: &[S]) {
    for a in inputs.iter().map(AsRef::as_ref) {
        // A regular file only: a pipe's bytes would be taken from its reader (and waited for).
        if a.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            && std::fs::metadata(a).is_ok_and(|m| m.is_file())
            && is_json_array(a)
        {
            eprintln!(
                "pocketdex: note: {} is a JSON array, read as one document; records are read from JSON Lines, one object per line (`jq -c '.[]' {} > records.jsonl`)",
                printable(&a.to_string_lossy()),
                printable(&a.to_string_lossy())
            );
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        for a in inputs.iter().map(AsRef::as_ref) {
            // The path itself, not what a link names: `<(…)` and /dev/stdin are links to
            // pipes whose writer is already there.
            if a.as_os_str() != "-"
                && std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_fifo())
            {
                eprintln!(
                    "pocketdex: reading the named pipe {} (this waits until a writer opens it)",
                    printable(&a.to_string_lossy())
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = inputs;
}

/// True when the file's first byte but blanks (and a byte order mark) is `[`.
fn is_json_array(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path).is_ok_and(|f| f.take(4096).read_to_end(&mut head).is_ok())
        && head
            .strip_prefix(b"\xef\xbb\xbf".as_slice())
            .unwrap_or(&head)
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            == Some(&b'[')
}

/// Warns on stderr that `n` documents share an id with an earlier one (`first`, the first of
/// those ids), and `then`: what follows from it for this command.
pub fn warn_repeated_ids(n: u64, first: &str, then: &str) {
    eprintln!(
        "warning: {} {} an id with an earlier one (first: {}); {then}",
        plural(n, "document"),
        if n == 1 { "shares" } else { "share" },
        printable(first)
    );
}

/// An integer with thousands separators: 10,499.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate per second for people: whole numbers with separators from 10 up, one decimal below.
pub fn rate(per_sec: f64) -> String {
    if per_sec >= 10.0 {
        thousands(per_sec.round() as u64)
    } else {
        format!("{per_sec:.1}")
    }
}

/// Bytes per document beyond the names and titles: the one definition `build` and `info`
/// print. `sections` are (name, bytes) of the file's sections.
pub fn bytes_beyond_names<'a>(
    total: u64,
    sections: impl IntoIterator<Item = (&'a str, u64)>,
    docs: u64,
) -> f64 {
    let names: u64 = sections
        .into_iter()
        .filter(|(name, _)| matches!(*name, "NAMES" | "TITLES"))
        .map(|(_, len)| len)
        .sum();
    total.saturating_sub(names) as f64 / docs.max(1) as f64
}

/// Bytes as a human-readable size.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A value parser over a library's named choices (a language, a method, a level): `--help`
/// lists each name with its description, and any other word is refused with the list.
pub fn choice<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    description: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        all.iter()
            .map(|&t| PossibleValue::new(name(t)).help(description(t))),
    )
    .map(move |s: String| {
        *all.iter()
            .find(|&&t| name(t) == s)
            .expect("clap accepts only the listed names")
    })
}

/// `--lang`'s parser: the languages with built-in stopwords and reference tables.
/// Why a DOC could not be read, for a line that names the DOC already: an I/O error's system
/// reason, or the error's message without the DOC's name in front.
pub fn why_unread(doc: &Path, e: &dyn std::fmt::Display) -> String {
    let message = format!("{e:#}");
    message
        .strip_prefix(&format!("{}: ", doc.display()))
        .unwrap_or(&message)
        .to_string()
}

/// A count of at least 1 (clap's ranged parser would say "not in 1..18446744073709551615").
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a whole number: {e}")),
    }
}

pub fn lang() -> impl clap::builder::TypedValueParser<Value = pocketdex::Lang> {
    choice(
        &pocketdex::Lang::ALL,
        pocketdex::Lang::code,
        pocketdex::Lang::description,
    )
}
