//! Test helpers: the committed sample corpus and deterministic edits of real text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The sample corpus: (file name, text) for every file of `samples/wiki-en`, sorted by name.
pub fn samples() -> Vec<(String, String)> {
    let dir = root().join("samples/wiki-en");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("samples/wiki-en exists")
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// The deterministic generator of `pocketdex synth` (SplitMix64), so edits are the same on
/// every run.
pub use pocketdex_eval::synth::Rng;

/// `text` with `n` words replaced by words taken from `donor` (a different real text).
pub fn edit_words(text: &str, donor: &str, n: usize, rng: &mut Rng) -> String {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    let donor: Vec<&str> = donor.split_whitespace().collect();
    for _ in 0..n {
        let i = rng.below(words.len());
        words[i] = donor[rng.below(donor.len())];
    }
    words.join(" ")
}

/// Reads a file the tests depend on.
pub fn read(path: impl AsRef<Path>) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

/// Runs the `pocketdex` binary in the repository root.
pub fn pocketdex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pocketdex"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

/// A command's standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that a command failed with exit status 2 and a message containing `says`.
pub fn failed_with(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(
        stderr(o).contains(says),
        "wanted {says:?} in: {}",
        stderr(o)
    );
}

/// An index of `(name, text)` documents with the default parameters, as bytes.
pub fn build(docs: &[(String, String)]) -> Vec<u8> {
    let mut b =
        pocketdex::IndexBuilder::for_lang(pocketdex::Lang::En, pocketdex::Params::default())
            .unwrap();
    for (name, text) in docs {
        b.add(name, None, text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    out
}
