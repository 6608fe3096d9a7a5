//! Documents in: a directory (every regular file below it), a single file, a JSON Lines file, or
//! JSON Lines on stdin; decoded lossily, HTML stripped, empty and binary inputs reported and
//! skipped. Documents are read in ordered batches so that memory stays bounded.

use crate::error::{Error, Result};
use crate::text;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One document ready for fingerprinting.
#[derive(Clone, Debug)]
pub struct Document {
    /// Its id: path relative to the input directory, file name, or the JSON `id`.
    pub id: String,
    /// Optional title (JSON `title`).
    pub title: Option<String>,
    /// Plain text (markup removed).
    pub text: String,
    /// Invalid UTF-8 sequences replaced while decoding.
    pub invalid_utf8: usize,
}

/// An input that could not be indexed, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The id or path of the input.
    pub id: String,
    /// What kind of input it was: front ends choose exit statuses and output types by it.
    pub kind: SkipKind,
    /// Why it was skipped, for people.
    pub reason: String,
}

/// Why an input was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipKind {
    /// The file could not be read (its [`std::io::ErrorKind`]): an error, not a property of
    /// the document.
    Unreadable(std::io::ErrorKind),
    /// Nothing but white space.
    Empty,
    /// NUL or control bytes: not text.
    Binary,
    /// No text left once markup is removed.
    NoText,
    /// A JSON Lines record that is not JSON.
    InvalidJson,
    /// A JSON Lines record without a `"text"` field.
    NoTextField,
}

impl SkipKind {
    /// True for the kinds that are errors of reading rather than documents without text.
    pub fn is_error(self) -> bool {
        matches!(self, SkipKind::Unreadable(_))
    }
}

/// What one input item became.
#[derive(Clone, Debug)]
pub enum Item {
    /// A document.
    Doc(Document),
    /// Reported and skipped.
    Skipped(Skipped),
}

/// Where documents come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Every regular file below a directory; ids are paths relative to it, `/`-separated.
    Dir(PathBuf),
    /// One file; its id is its file name.
    File(PathBuf),
    /// One document per line: `{"id": "...", "text": "...", "title": "..."}`.
    Jsonl(PathBuf),
    /// JSON Lines on standard input.
    Stdin,
}

impl Source {
    /// The source an INPUT argument names: `-` is JSON Lines on stdin, a `.jsonl` file is JSON
    /// Lines, a directory is walked, any other path is one document.
    pub fn from_arg(arg: &str) -> Result<Source> {
        if arg == "-" {
            return Ok(Source::Stdin);
        }
        let path = PathBuf::from(arg);
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        Ok(if meta.is_dir() {
            Source::Dir(path)
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            Source::Jsonl(path)
        } else {
            Source::File(path)
        })
    }
}

/// The sources of several INPUT arguments (see [`Source::from_arg`]); the first that cannot
/// be read is the error.
pub fn sources<S: AsRef<str>>(args: &[S]) -> Result<Vec<Source>> {
    args.iter().map(|a| Source::from_arg(a.as_ref())).collect()
}

/// At most how many documents the sources hold, when that can be known without parsing them:
/// files of directories, lines of JSON Lines files (read once more, at memory speed); `None`
/// for standard input.
pub fn count_at_most(sources: &[Source]) -> Result<Option<u64>> {
    let mut total = 0u64;
    for source in sources {
        total += match source {
            Source::Dir(dir) => walk(dir)?.0.len() as u64,
            Source::File(_) => 1,
            Source::Jsonl(path) => {
                let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
                let mut buf = vec![0u8; 1 << 20];
                let (mut lines, mut last) = (0u64, b'\n');
                loop {
                    let n = match std::io::Read::read(&mut file, &mut buf) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(Error::io(path, e)),
                    };
                    lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                    last = buf[n - 1];
                }
                lines + (last != b'\n') as u64
            }
            Source::Stdin => return Ok(None),
        };
    }
    Ok(Some(total))
}

/// True when the number of documents is known once the sources are listed (directories and
/// files), so a progress bar can show a total; JSON Lines are counted as they stream.
pub fn counts_known(sources: &[Source]) -> bool {
    sources
        .iter()
        .all(|s| matches!(s, Source::Dir(_) | Source::File(_)))
}

/// The files below a directory, sorted by relative path, with their ids; symlinks and other
/// non-regular entries are left out (their number is returned).
pub fn walk(dir: &Path) -> Result<(Vec<(PathBuf, String)>, usize)> {
    let mut files = Vec::new();
    let mut others = 0;
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io(
                path,
                e.into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("file system loop")),
            )
        })?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            let id = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            files.push((entry.path().to_path_buf(), id));
        } else if !entry.file_type().is_dir() {
            others += 1;
        }
    }
    Ok((files, others))
}

/// Reads one file as a document: binary and empty files are skipped, HTML is stripped (by
/// extension `.html`/`.htm`/`.xhtml`, or by content).
pub fn read_file(path: &Path, id: String) -> Item {
    match std::fs::read(path) {
        Ok(bytes) => {
            let html = path
                .extension()
                .and_then(|e| e.to_str())
                .map(|e| matches!(e.to_ascii_lowercase().as_str(), "html" | "htm" | "xhtml"))
                .filter(|&h| h);
            from_bytes(id, None, &bytes, html)
        }
        Err(e) => Item::Skipped(Skipped {
            id,
            kind: SkipKind::Unreadable(e.kind()),
            reason: format!("cannot read: {e}"),
        }),
    }
}

/// A document from raw bytes (see [`read_file`]).
pub fn from_bytes(id: String, title: Option<String>, bytes: &[u8], html: Option<bool>) -> Item {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::Empty,
            reason: "empty".into(),
        });
    }
    if text::looks_binary(bytes) {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::Binary,
            reason: "binary (NUL or control bytes)".into(),
        });
    }
    let decoded = text::decode(bytes);
    from_text(id, title, decoded.text, html, decoded.invalid_utf8)
}

fn from_text(
    id: String,
    title: Option<String>,
    raw: String,
    html: Option<bool>,
    invalid_utf8: usize,
) -> Item {
    let text = match text::plain_text(&raw, html) {
        std::borrow::Cow::Borrowed(_) => raw,
        std::borrow::Cow::Owned(t) => t,
    };
    if text.trim().is_empty() {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::NoText,
            reason: "no text (empty after removing markup)".into(),
        });
    }
    Item::Doc(Document {
        id,
        title,
        text,
        invalid_utf8,
    })
}

#[derive(serde::Deserialize)]
struct JsonDoc {
    id: Option<serde_json::Value>,
    text: Option<String>,
    title: Option<String>,
}

/// Parses one JSON Lines record; `fallback_id` names it when it has no `id`.
pub fn from_json_line(line: &str, fallback_id: String) -> Item {
    let doc: JsonDoc = match serde_json::from_str(line) {
        Ok(d) => d,
        Err(e) => {
            return Item::Skipped(Skipped {
                id: fallback_id,
                kind: SkipKind::InvalidJson,
                reason: format!("invalid JSON: {e}"),
            })
        }
    };
    let id = match doc.id {
        Some(serde_json::Value::String(s)) => s,
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => fallback_id,
    };
    match doc.text {
        Some(text) if !text.trim().is_empty() => from_text(id, doc.title, text, None, 0),
        Some(_) => Item::Skipped(Skipped {
            id,
            kind: SkipKind::Empty,
            reason: "empty".into(),
        }),
        None => Item::Skipped(Skipped {
            id,
            kind: SkipKind::NoTextField,
            reason: "no \"text\" field".into(),
        }),
    }
}

/// Reads every source and hands the items to `sink` in input order, in batches processed in
/// parallel by `map` (e.g. fingerprinting): about `batch` files of a directory, or about 4 MiB
/// of JSON Lines, at a time. Reading, mapping and the sink overlap: a reader thread reads JSON
/// Lines ahead, the rayon pool maps batch i (splitting lines, decoding and parsing JSON
/// included) while the calling thread sinks batch i − 1, so that every core stays busy.
/// `on_count` learns how many items are known to be coming, when a directory has been listed.
pub fn for_each_batch<T: Send>(
    sources: &[Source],
    batch: usize,
    map: impl Fn(Item) -> T + Sync,
    mut on_count: impl FnMut(u64),
    mut sink: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<usize> {
    let mut non_regular = 0;
    let mut overlap = Overlap { pending: None };
    for source in sources {
        match source {
            Source::Dir(dir) => {
                let (files, others) = walk(dir)?;
                non_regular += others;
                on_count(files.len() as u64);
                for chunk in files.chunks(batch.max(1)) {
                    overlap.step(
                        || {
                            chunk
                                .par_iter()
                                .map(|(path, id)| map(read_file(path, id.clone())))
                                .collect()
                        },
                        &mut sink,
                    )?;
                }
            }
            Source::File(path) => {
                on_count(1);
                let id = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                overlap.step(|| vec![map(read_file(path, id))], &mut sink)?;
            }
            Source::Jsonl(path) => {
                let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
                jsonl(
                    file,
                    &path.display().to_string(),
                    &map,
                    &mut overlap,
                    &mut sink,
                )?;
            }
            Source::Stdin => {
                jsonl(std::io::stdin(), "stdin", &map, &mut overlap, &mut sink)?;
            }
        }
    }
    overlap.finish(&mut sink)?;
    Ok(non_regular)
}

/// Runs the map of one batch on the rayon pool while the calling thread sinks the previous
/// batch's results.
struct Overlap<T> {
    pending: Option<Vec<T>>,
}

impl<T: Send> Overlap<T> {
    fn step(
        &mut self,
        work: impl FnOnce() -> Vec<T> + Send,
        sink: &mut impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<()> {
        let previous = self.pending.take();
        let (mapped, sunk) = std::thread::scope(|s| {
            let worker = s.spawn(work);
            let sunk = previous.map_or(Ok(()), &mut *sink);
            let mapped = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (mapped, sunk)
        });
        self.pending = Some(mapped);
        sunk
    }

    fn finish(&mut self, sink: &mut impl FnMut(Vec<T>) -> Result<()>) -> Result<()> {
        self.pending.take().map_or(Ok(()), sink)
    }
}

/// Bytes of JSON Lines read ahead per batch (whole lines: a longer line makes a longer batch).
const JSONL_CHUNK: usize = 4 << 20;

/// One batch of JSON Lines: whole lines, and the number of the first.
struct Chunk {
    bytes: Vec<u8>,
    first_line: usize,
}

fn jsonl<T: Send>(
    reader: impl std::io::Read + Send,
    name: &str,
    map: &(impl Fn(Item) -> T + Sync),
    overlap: &mut Overlap<T>,
    sink: &mut impl FnMut(Vec<T>) -> Result<()>,
) -> Result<()> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Chunk>>(2);
        s.spawn(move || read_chunks(reader, tx));
        for chunk in rx {
            let chunk = chunk.map_err(|e| Error::io(name, e))?;
            overlap.step(
                || {
                    let lines: Vec<(usize, &[u8])> = chunk
                        .bytes
                        .split(|&b| b == b'\n')
                        .enumerate()
                        .map(|(i, l)| (chunk.first_line + i, l))
                        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
                        .collect();
                    lines
                        .into_par_iter()
                        .map(|(no, line)| {
                            let id = || format!("{name}:{no}");
                            let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
                            match std::str::from_utf8(line) {
                                Ok(line) => map(from_json_line(line, id())),
                                Err(_) => map(from_json_line(&text::decode(line).text, id())),
                            }
                        })
                        .collect()
                },
                sink,
            )?;
        }
        Ok(())
    })
}

/// Reads `reader` in chunks of whole lines (the last one may lack its newline) and sends them,
/// numbered, until the end or an error. Stops when the receiver is gone.
fn read_chunks(
    mut reader: impl std::io::Read,
    tx: std::sync::mpsc::SyncSender<std::io::Result<Chunk>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut line = 1;
    loop {
        let mut buf = std::mem::take(&mut carry);
        let start = buf.len();
        buf.resize(start + JSONL_CHUNK, 0);
        let mut filled = start;
        // Fill the chunk (reads of a pipe or terminal may be short).
        let eof = loop {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => break true,
                Ok(n) => {
                    filled += n;
                    if filled == buf.len() {
                        break false;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        };
        buf.truncate(filled);
        let cut = if eof {
            buf.len()
        } else {
            match buf.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                // One line longer than the chunk: keep reading it.
                None => {
                    carry = buf;
                    continue;
                }
            }
        };
        carry = buf[cut..].to_vec();
        buf.truncate(cut);
        let lines = buf.iter().filter(|&&b| b == b'\n').count();
        if !buf.is_empty()
            && tx
                .send(Ok(Chunk {
                    bytes: buf,
                    first_line: line,
                }))
                .is_err()
        {
            return;
        }
        line += lines;
        if eof {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_records() {
        match from_json_line(
            r#"{"id": 7, "text": "<p>Hello <b>world</b></p>", "title": "T"}"#,
            "f:1".into(),
        ) {
            Item::Doc(d) => {
                assert_eq!(d.id, "7");
                assert_eq!(d.title.as_deref(), Some("T"));
                assert_eq!(
                    d.text.split_whitespace().collect::<Vec<_>>(),
                    ["Hello", "world"]
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(from_json_line("{not json", "f:2".into()), Item::Skipped(s) if s.id == "f:2")
        );
        assert!(
            matches!(from_json_line(r#"{"id":"x","text":"  "}"#, "f:3".into()), Item::Skipped(s) if s.reason == "empty")
        );
    }

    #[test]
    fn empty_and_binary_bytes_are_skipped() {
        assert!(
            matches!(from_bytes("e".into(), None, b" \n\t", None), Item::Skipped(s) if s.reason == "empty")
        );
        assert!(
            matches!(from_bytes("b".into(), None, b"\x00\x01\x02PNG", None), Item::Skipped(s) if s.reason.starts_with("binary"))
        );
        assert!(
            matches!(from_bytes("h".into(), None, b"<html><script>x</script></html>", None), Item::Skipped(s) if s.reason.starts_with("no text"))
        );
        match from_bytes("u".into(), None, b"caf\xe9 au lait", None) {
            Item::Doc(d) => assert_eq!(d.invalid_utf8, 1),
            other => panic!("{other:?}"),
        }
    }
}
