//! The indexed documents' own texts (`serve --texts`), for the page's "what do they share":
//! an index holds codes and sketches, not text.

use pocketdex::corpus::{self, Item};
use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where the texts are.
pub enum Texts {
    /// A directory the index was built from: id = path relative to it.
    Dir(PathBuf),
    /// A JSON Lines file: each id's line, by byte offset and length.
    Jsonl {
        path: PathBuf,
        lines: HashMap<String, (u64, u32)>,
    },
}

impl Texts {
    /// Opens a directory, or reads the ids of a `.jsonl` file (one pass over it).
    pub fn open(path: &Path) -> Result<Texts, String> {
        if path.is_dir() {
            let dir = path
                .canonicalize()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(Texts::Dir(dir));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if path.extension().is_none_or(|e| e != "jsonl") {
            return Err(format!(
                "{}: --texts takes the directory or the .jsonl file the index was built from",
                path.display()
            ));
        }
        let mut lines = HashMap::new();
        let mut reader = std::io::BufReader::new(file);
        let (mut offset, mut line, mut n) = (0u64, String::new(), 0usize);
        loop {
            line.clear();
            let len = reader
                .read_line(&mut line)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if len == 0 {
                break;
            }
            n += 1;
            #[derive(serde::Deserialize)]
            struct Id {
                id: Option<serde_json::Value>,
            }
            if let Ok(Id { id: Some(id) }) = serde_json::from_str::<Id>(&line) {
                let id = match id {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                lines.entry(id).or_insert((offset, len as u32));
            }
            offset += len as u64;
        }
        eprintln!(
            "pocketdex: {} texts of {} ({n} lines) ready to compare",
            lines.len(),
            path.display()
        );
        Ok(Texts::Jsonl {
            path: path.to_path_buf(),
            lines,
        })
    }

    /// The plain text of the document `id` (markup removed, as the index read it), or `None`
    /// when there is no such document; `Some(Err(why))` when there is one that cannot be read
    /// as a document (too large, binary); `Err` when reading failed.
    pub fn get(&self, id: &str) -> Result<Option<Result<String, String>>, String> {
        let item = match self {
            Texts::Dir(dir) => {
                // Only files below the directory: an id with `..` or an absolute path is none.
                // A UTF-8 name that holds `\xHH` text is its own id, and is tried first; an
                // escaped name (not UTF-8, control characters) only by its bytes.
                let found = [dir.join(id), dir.join(corpus::path_of_id(id))]
                    .into_iter()
                    .find_map(|p| p.canonicalize().ok().filter(|p| p.is_file()));
                let Some(path) = found else {
                    return Ok(None);
                };
                if !path.starts_with(dir) || !path.is_file() {
                    return Ok(None);
                }
                corpus::read_file(&path, id.to_string())
            }
            Texts::Jsonl { path, lines } => {
                let Some(&(offset, len)) = lines.get(id) else {
                    return Ok(None);
                };
                let mut f =
                    std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let mut buf = vec![0; len as usize];
                f.seek(SeekFrom::Start(offset))
                    .and_then(|_| f.read_exact(&mut buf))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                corpus::from_json_line(&String::from_utf8_lossy(&buf), id.to_string())
            }
        };
        match item {
            Item::Doc(d) => Ok(Some(Ok(d.text))),
            Item::Skipped(s) => Ok(Some(Err(format!("{id}: {}", s.reason)))),
        }
    }
}
