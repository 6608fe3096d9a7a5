//! Corpus loading shared by the benches: paths relative to the crate root, the sample articles
//! in `samples/wiki-en`, JSON Lines files of `{"id"?, "text", "title"?}`, and the arguments of
//! `pocketdex synth` that make a bench's edited copies.

#![allow(dead_code)] // each bench uses part of it

pub mod run;

use std::path::{Path, PathBuf};

/// One document of a benchmark corpus.
pub struct Doc {
    pub id: String,
    pub title: Option<String>,
    pub text: String,
}

/// The crate root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A path as given, or else relative to the crate root.
pub fn resolve(path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    if p.is_absolute() || p.exists() {
        p
    } else {
        root().join(p)
    }
}

/// The tag a benchmark id ends in for a corpus file: its file name.
pub fn tag_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `samples/wiki-en/*.txt`, sorted by file name; ids are the file names.
pub fn load_samples() -> Vec<Doc> {
    let dir = root().join("samples/wiki-en");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| Doc {
            id: p
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned(),
            title: None,
            text: std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())),
        })
        .collect()
}

/// One document per JSON line: `id` (string or number; the line number when missing), `text`,
/// optional `title`. An error when the file cannot be read; a panic on a malformed line.
pub fn load_jsonl(path: &Path) -> std::io::Result<Vec<Doc>> {
    let raw = std::fs::read_to_string(path)?;
    Ok(raw
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            let id = match &v["id"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => (i + 1).to_string(),
                other => other.to_string(),
            };
            let text = v["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{}:{}: no \"text\"", path.display(), i + 1))
                .to_owned();
            let title = v["title"].as_str().map(str::to_owned);
            Doc { id, title, text }
        })
        .collect())
}

/// The arguments of `pocketdex synth` that write edited copies of the documents of `source`
/// (of its first `limit`, when given) to `to`: about `copies` of them, evenly over `rates`
/// (one copy per rate of a document drawn), seeded.
pub fn synth_copies(
    source: &Path,
    limit: Option<u64>,
    docs: u64,
    copies: u64,
    rates: &[f64],
    seed: u64,
    to: &Path,
) -> Vec<String> {
    let share = (copies as f64 / (docs as f64 * rates.len() as f64)).min(1.0);
    let rates: Vec<String> = rates.iter().map(|r| r.to_string()).collect();
    let mut args = vec!["synth".to_string(), source.display().to_string()];
    if let Some(n) = limit {
        args.extend(["--limit".to_string(), n.to_string()]);
    }
    args.extend([
        "--share".to_string(),
        share.to_string(),
        "--rates".to_string(),
        rates.join(","),
        "--copies-only".to_string(),
        "--seed".to_string(),
        seed.to_string(),
        "-o".to_string(),
        to.display().to_string(),
    ]);
    args
}
