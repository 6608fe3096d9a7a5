//! Documents in: a directory (every regular file below it), a single file, a JSON Lines file, or
//! JSON Lines on stdin; decoded lossily, HTML stripped, empty and binary inputs reported and
//! skipped. Documents are read in ordered batches so that memory stays bounded.

use crate::error::{Error, Result};
use crate::text;
use rayon::prelude::*;
use std::io::BufRead;
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
    /// Why it was skipped.
    pub reason: String,
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
            reason: format!("cannot read: {e}"),
        }),
    }
}

/// A document from raw bytes (see [`read_file`]).
pub fn from_bytes(id: String, title: Option<String>, bytes: &[u8], html: Option<bool>) -> Item {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Item::Skipped(Skipped {
            id,
            reason: "empty".into(),
        });
    }
    if text::looks_binary(bytes) {
        return Item::Skipped(Skipped {
            id,
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
            reason: "empty".into(),
        }),
        None => Item::Skipped(Skipped {
            id,
            reason: "no \"text\" field".into(),
        }),
    }
}

/// Reads every source and hands the items to `sink` in input order, in batches of about `batch`
/// items processed in parallel by `map` (e.g. fingerprinting). `on_count` learns how many
/// items are known to be coming, when a directory has been listed.
pub fn for_each_batch<T: Send>(
    sources: &[Source],
    batch: usize,
    map: impl Fn(Item) -> T + Sync,
    mut on_count: impl FnMut(u64),
    mut sink: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<usize> {
    let mut non_regular = 0;
    for source in sources {
        match source {
            Source::Dir(dir) => {
                let (files, others) = walk(dir)?;
                non_regular += others;
                on_count(files.len() as u64);
                for chunk in files.chunks(batch) {
                    let items: Vec<T> = chunk
                        .par_iter()
                        .map(|(path, id)| map(read_file(path, id.clone())))
                        .collect();
                    sink(items)?;
                }
            }
            Source::File(path) => {
                on_count(1);
                let id = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                sink(vec![map(read_file(path, id))])?;
            }
            Source::Jsonl(path) => {
                let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
                jsonl(
                    std::io::BufReader::new(file),
                    &path.display().to_string(),
                    batch,
                    &map,
                    &mut sink,
                )?;
            }
            Source::Stdin => {
                jsonl(std::io::stdin().lock(), "stdin", batch, &map, &mut sink)?;
            }
        }
    }
    Ok(non_regular)
}

fn jsonl<T: Send>(
    mut reader: impl BufRead,
    name: &str,
    batch: usize,
    map: &(impl Fn(Item) -> T + Sync),
    sink: &mut impl FnMut(Vec<T>) -> Result<()>,
) -> Result<()> {
    let mut lines: Vec<(usize, String)> = Vec::with_capacity(batch);
    let mut buf = Vec::new();
    let mut no = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(name, e))?;
        if n > 0 {
            no += 1;
            let line = text::decode(&buf).text;
            if !line.trim().is_empty() {
                lines.push((no, line));
            }
        }
        if lines.len() >= batch || (n == 0 && !lines.is_empty()) {
            let items: Vec<T> = std::mem::take(&mut lines)
                .into_par_iter()
                .map(|(no, line)| map(from_json_line(&line, format!("{name}:{no}"))))
                .collect();
            sink(items)?;
        }
        if n == 0 {
            return Ok(());
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
