//! Every input a fuzzer failed on, run through the fuzz targets' own checks under plain
//! `cargo test`: `tests/fuzz-regressions/TARGET/*` (one file per bug, named after it) and the
//! seed corpora `fuzz/corpus/TARGET/*`. The checks are `fuzz/src/lib.rs`, included here, so a
//! target and its regression test cannot drift apart. See the README's "Fuzzing".

#[path = "../fuzz/src/lib.rs"]
mod checks;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

/// Panics seen by the panic hook, caught ones included: libFuzzer's hook aborts on every panic,
/// even one the library catches and turns into an error, so a regression input must raise none.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

/// Runs every file of `tests/fuzz-regressions/TARGET` and `fuzz/corpus/TARGET` through
/// `check`; returns how many it ran.
fn run(target: &str, check: fn(&[u8])) -> usize {
    count_panics();
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
            let before = PANICS.load(Ordering::SeqCst);
            check(&std::fs::read(f).unwrap());
            let after = PANICS.load(Ordering::SeqCst);
            assert_eq!(
                before,
                after,
                "{} raised a panic (caught or not)",
                f.display()
            );
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

/// `verify` counted the start bits of STARTS over whole words, so a list start moved into the
/// last word's bits beyond the references passed: one code then found no documents. Found by
/// the `mutate` target (tests/fuzz-regressions/mutate/starts-bit-in-padding).
#[test]
fn verify_refuses_a_list_start_beyond_the_references() {
    use pocketdex::{Index, IndexBuilder, Lang, Params};
    let mut b = IndexBuilder::for_lang(Lang::En, Params::default()).unwrap();
    for (i, t) in ["Choir", "Logarithm", "Triton_moon"].iter().enumerate() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/wiki-en/{t}.txt"));
        b.add(
            &i.to_string(),
            None,
            &std::fs::read_to_string(path).unwrap(),
        );
    }
    let mut bytes = Vec::new();
    b.finish(&mut bytes).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    let refs = index.meta().ref_count;
    let starts = index
        .sections()
        .into_iter()
        .find(|s| s.name == "STARTS")
        .unwrap();
    drop(index);
    assert!(
        refs % 64 != 0,
        "the last word has bits beyond the references"
    );
    let at = |p: u64| starts.offset as usize + (p / 8) as usize;
    // The last list start moves past the last reference: as many start bits as before.
    let last = (1..refs)
        .rev()
        .find(|&p| bytes[at(p)] >> (p % 8) & 1 == 1)
        .unwrap();
    bytes[at(last)] &= !(1 << (last % 8));
    bytes[at(refs)] |= 1 << (refs % 8);
    pocketdex::reseal(&mut bytes);
    let index = Index::open(&bytes[..]).unwrap();
    let e = index.verify().unwrap_err();
    assert!(e.to_string().contains("STARTS"), "{e}");
}

/// A query looks up the short path up to `short_below · 6/5` terms, computed in u32: a
/// `short_below` above 2³² · 5/6 overflowed (a panic with overflow checks; in release a
/// wrapped bound, so short documents were not looked up). Found by the `mutate` target
/// (tests/fuzz-regressions/mutate/short-below-overflow).
#[test]
fn a_huge_short_below_neither_overflows_nor_hides_short_documents() {
    use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
    // 3,579,139,414 · 6/5 = 2³² (+ 0.8): the bound wrapped to 0.
    let params = Params {
        short_below: 3_579_139_414,
        ..Params::default()
    };
    let text = "Choirs sing choral music written for ensembles of singers in churches.";
    let mut b = IndexBuilder::for_lang(Lang::En, params).unwrap();
    b.add("choir", None, text);
    b.add(
        "other",
        None,
        "Logarithms invert exponentiation for every positive base.",
    );
    let mut bytes = Vec::new();
    b.finish(&mut bytes).unwrap();
    let index = Index::open(bytes).unwrap();
    let hits = index.query(text, &QueryOptions::default()).unwrap().hits;
    assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
}
