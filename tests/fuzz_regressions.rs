//! Every input a fuzzer failed on, run through the fuzz targets' own checks under plain
//! `cargo test`: `tests/fuzz-regressions/TARGET/*` (one file per bug, named after it) and the
//! seed corpora `fuzz/corpus/TARGET/*`. The checks are `fuzz/src/lib.rs`, included here, so a
//! target and its regression test cannot drift apart. See the README's "Fuzzing".

#[path = "../fuzz/src/lib.rs"]
mod checks;

use std::path::Path;

/// Runs every file of `tests/fuzz-regressions/TARGET` and `fuzz/corpus/TARGET` through
/// `check`; returns how many it ran.
fn run(target: &str, check: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in [
        root.join("tests/fuzz-regressions").join(target),
        root.join("fuzz/corpus").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files.iter().filter(|f| f.is_file()) {
            eprintln!("{}", f.display());
            check(&std::fs::read(f).unwrap());
            n += 1;
        }
    }
    n
}

#[test]
fn open() {
    assert!(run("open", checks::open) > 0);
}

#[test]
fn mutate() {
    assert!(run("mutate", checks::mutate) > 0);
}

#[test]
fn documents() {
    assert!(run("documents", checks::documents) > 0);
}

#[test]
fn methods() {
    assert!(run("methods", checks::methods) > 0);
}

#[test]
fn query() {
    assert!(run("query", checks::query) > 0);
}
