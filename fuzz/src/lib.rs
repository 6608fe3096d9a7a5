//! The checks behind pocketdex's fuzz targets, one public function per target (each
//! `fuzz_targets/NAME.rs` calls `NAME(data)`). The regression tests (`tests/fuzz_regressions.rs`
//! at the root) include this file and run every committed input through the same functions
//! under plain `cargo test`.
//!
//! - [`open`]: any bytes as an index file: open, what `pocketdex info` reads, `verify`, queries,
//!   lookups and names.
//! - [`mutate`]: a valid index (or segment) edited by the input, its checksums recomputed
//!   ([`pocketdex::reseal`]), then the checks of [`open`]: the parsers behind the checksums.
//! - [`documents`]: any bytes as a document file and as JSON Lines, the text pipeline
//!   (scanner, analyzer, HTML, fingerprints, codes, probes), the reference, idf and word-list
//!   parsers, and an index built from the JSON Lines documents.
//! - [`methods`]: up to four texts (split at NUL) through one classical method (picked by the
//!   first byte): preparation, pair finding against brute force; or through `compare`.
//! - [`query`]: any query text and options against a fixed valid index.
//!
//! Beyond "no panic", each checks what the library promises: hits within the options and
//! sorted; names of hits present; a verified file's names found by `find`; the word scanner
//! equal to `unicode_words`; a built index that verifies and gives back its names and titles;
//! `find` of a method agreeing with its brute force; a query by text equal to one by
//! fingerprint and to a set of that one index.

use pocketdex::corpus::{self, Item};
use pocketdex::fingerprint::Resolution;
use pocketdex::reference::Reference;
use pocketdex::sketch::{Idf, LanguageIdf};
use pocketdex::text::{self, Analyzer, Lang};
use pocketdex::{Index, IndexBuilder, IndexSet, Params, QueryOptions, QueryResult, SetWriter};
use pocketdex_methods::compare::{compare, Input};
use pocketdex_methods::groups::group_pairs;
use pocketdex_methods::spotsigs::{SpotJaccard, Spotsigs};
use pocketdex_methods::{Detector, Evidence, Options};
use std::sync::OnceLock;

// The calls that return `Result<…>` (a damaged block read is an error): each is adapted here,
// in one line, to "an answer or none"; an error is never an answer, so it is allowed anywhere.

fn query_text<D: AsRef<[u8]>>(
    index: &Index<D>,
    text: &str,
    opts: &QueryOptions,
) -> Option<QueryResult> {
    index.query(text, opts).ok()
}

fn name<D: AsRef<[u8]>>(index: &Index<D>, doc: u32) -> Option<String> {
    index.name(doc).ok().flatten().map(|n| n.into_owned())
}

fn title<D: AsRef<[u8]>>(index: &Index<D>, doc: u32) -> Option<String> {
    index.title(doc).ok().flatten().map(|t| t.into_owned())
}

fn sketch<D: AsRef<[u8]>>(index: &Index<D>, doc: u32) -> Option<Vec<u64>> {
    index.sketch(doc).ok().flatten()
}

fn find<D: AsRef<[u8]>>(index: &Index<D>, name: &str) -> Option<u32> {
    index.find(name).ok().flatten()
}

/// `Err(())` when a damaged block was read.
fn lookup<D: AsRef<[u8]>>(index: &Index<D>, key: u64) -> Result<Option<Vec<u32>>, ()> {
    index
        .lookup(key)
        .map(|p| p.map(|p| p.collect()))
        .map_err(|_| ())
}

/// `None` when a damaged block was read.
fn lookup_many<D: AsRef<[u8]>>(index: &Index<D>, keys: &[u64]) -> Option<Vec<(usize, Vec<u32>)>> {
    let mut found = Vec::new();
    index
        .lookup_many(keys, |i, p| found.push((i, p.collect())))
        .ok()?;
    Some(found)
}

/// Sample texts: (name, title, text).
const SAMPLES: &[(&str, &str, &str)] = &[
    (
        "Jupiter.txt",
        "Jupiter",
        include_str!("../../samples/wiki-en/Jupiter.txt"),
    ),
    (
        "Choir.txt",
        "Choir",
        include_str!("../../samples/wiki-en/Choir.txt"),
    ),
    (
        "Logarithm.txt",
        "Logarithm",
        include_str!("../../samples/wiki-en/Logarithm.txt"),
    ),
    (
        "Triton_moon.txt",
        "Triton (moon)",
        include_str!("../../samples/wiki-en/Triton_moon.txt"),
    ),
    (
        "Venus_de_Milo.txt",
        "",
        include_str!("../../samples/wiki-en/Venus_de_Milo.txt"),
    ),
    (
        "Aurora.txt",
        "Aurora",
        include_str!("../../samples/wiki-en/Aurora.txt"),
    ),
    (
        "Atlantis.txt",
        "Atlantis",
        include_str!("../../samples/wiki-en/Atlantis.txt"),
    ),
    (
        "Abacus.txt",
        "Abacus",
        include_str!("../../samples/wiki-en/Abacus.txt"),
    ),
    (
        "Kinkaku_ji.txt",
        "Kinkaku-ji",
        include_str!("../../samples/wiki-en/Kinkaku_ji.txt"),
    ),
];

/// The query of the quick start: an edited copy of Jupiter.txt.
const EDITED: &str = include_str!("../../samples/query/edited.txt");

fn build(builder: IndexBuilder, docs: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut b = builder;
    for (n, t, text) in docs {
        b.add(n, Some(t), text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).expect("the samples build");
    out
}

/// A valid index of every sample, with titles (the resolution chosen for its size).
fn fixed_index_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        build(
            IndexBuilder::for_lang(Lang::En, Params::default()).expect("default parameters"),
            SAMPLES,
        )
    })
}

/// [`fixed_index_bytes`] opened.
fn fixed_index() -> &'static Index<&'static [u8]> {
    static INDEX: OnceLock<Index<&'static [u8]>> = OnceLock::new();
    INDEX.get_or_init(|| Index::open(fixed_index_bytes()).expect("the fixed index opens"))
}

/// The fixed index as a set of one index (which must answer as the index).
fn fixed_set() -> &'static IndexSet<&'static [u8]> {
    static SET: OnceLock<IndexSet<&'static [u8]>> = OnceLock::new();
    SET.get_or_init(|| {
        let index = Index::open(fixed_index_bytes()).expect("the fixed index opens");
        IndexSet::from_indexes(vec![("fixed".to_string(), index)])
    })
}

/// The bases [`mutate`] edits: a small index with titles, and an index set's segment (sections
/// CODES and IDS, a fixed resolution with samples in its codes, the built-in idf table).
fn bases() -> &'static [Base] {
    static BASES: OnceLock<Vec<Base>> = OnceLock::new();
    BASES.get_or_init(|| {
        let plain = build(
            IndexBuilder::for_lang(Lang::En, Params::default()).expect("default parameters"),
            &SAMPLES[1..5],
        );
        vec![Base::new(plain), Base::new(segment(&SAMPLES[4..8]))]
    })
}

/// The bytes of the one segment of a new index set holding `docs`.
fn segment(docs: &[(&str, &str, &str)]) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!(
        "pocketdex-fuzz-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let params = Params {
        resolution: Some(Resolution::for_docs(1_000_000)),
        ..Params::default()
    };
    let schema = IndexBuilder::for_lang(Lang::En, params)
        .expect("parameters")
        .with_idf(Idf::builtin(Lang::En));
    let mut w = SetWriter::create(&dir, schema).expect("a new set");
    let mut b = w.builder();
    for (n, t, text) in docs {
        b.add(n, Some(t), text);
    }
    w.add(b, false).expect("the samples are added");
    drop(w);
    let seg = std::fs::read_dir(&dir)
        .expect("the set's directory")
        .map(|e| e.expect("an entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seg-"))
        })
        .expect("a segment");
    let bytes = std::fs::read(seg).expect("the segment");
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

/// A valid file and its regions: the header with the directory, each section, the trailer.
struct Base {
    bytes: Vec<u8>,
    regions: Vec<(usize, usize)>,
}

impl Base {
    fn new(bytes: Vec<u8>) -> Base {
        let index = Index::open(&bytes[..]).expect("a base opens");
        index.verify().expect("a base verifies");
        let sections = index.sections();
        let first = sections
            .iter()
            .map(|s| s.offset as usize)
            .min()
            .unwrap_or(0);
        let mut regions = vec![(0, first)];
        regions.extend(sections.iter().map(|s| (s.offset as usize, s.len as usize)));
        regions.push((bytes.len() - 16, 16));
        drop(index);
        Base { bytes, regions }
    }
}

/// (a) Any bytes as an index file.
pub fn open(data: &[u8]) {
    check_index(data);
}

/// The checks of an index file: what `pocketdex info` and `verify` read, then queries, lookups
/// and names. Panics on a broken promise; an error for damaged bytes is fine.
fn check_index(bytes: &[u8]) {
    let Ok(index) = Index::open(bytes) else {
        return;
    };
    // pocketdex info
    let meta = index.meta().clone();
    let _ = format!("{meta:?}");
    let sections = index.sections();
    assert!(sections.iter().all(|s| s
        .offset
        .checked_add(s.len)
        .is_some_and(|e| e <= bytes.len() as u64)));
    let lists = index.list_lengths().ok();
    let _ = (
        index.version(),
        index.is_segment(),
        index.resolution(),
        index.len_bytes(),
    );
    let n = index.doc_count();
    assert_eq!(n, meta.doc_count);
    let docs: Vec<u32> = (0..n.min(4))
        .chain([n.saturating_sub(1), n, u32::MAX])
        .collect();
    for &d in &docs {
        let (nm, tt, sk) = (name(&index, d), title(&index, d), sketch(&index, d));
        if d >= n {
            assert!(
                nm.is_none() && tt.is_none() && sk.is_none(),
                "document {d} of {n}"
            );
        } else {
            // A name may be missing from a damaged table (verify finds it); a sketch may not
            // (open checked the size of SKETCHES), unless its block is damaged (an error).
            if let Ok(sk) = index.sketch(d) {
                assert_eq!(sk.map(|s| s.len()), Some(meta.params.sketch_words as usize));
            }
            let _ = sk;
        }
    }
    let verified = index.verify().is_ok();
    // Queries, lookups, names.
    for (text, similar) in [(EDITED, false), (SAMPLES[1].2, true), ("", false)] {
        let opts = QueryOptions {
            similar,
            self_name: Some("Choir.txt".into()),
            ..QueryOptions::default()
        };
        if let Some(r) = query_text(&index, text, &opts) {
            check_hits(&index, &r, &opts, verified);
        }
    }
    let f = index.fingerprinter();
    let fp = f.fingerprint(EDITED);
    let mut keys: Vec<u64> = f
        .codes(&fp, index.resolution())
        .iter()
        .map(|c| c.key)
        .collect();
    keys.extend([0, u64::MAX]);
    let one: Result<Vec<Option<Vec<u32>>>, ()> = keys.iter().map(|&k| lookup(&index, k)).collect();
    let many = lookup_many(&index, &keys);
    // lookup_many reads what lookup reads: both fail, or they answer alike.
    assert_eq!(
        one.is_ok(),
        many.is_some(),
        "lookup_many and lookup disagree on damage"
    );
    if let (Ok(one), Some(many)) = (one, many) {
        let want: Vec<(usize, Vec<u32>)> = one
            .into_iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p?)))
            .collect();
        assert_eq!(many, want, "lookup_many differs from lookup");
        for (_, docs) in &many {
            assert!(
                docs.iter().all(|&d| d < n),
                "a posting beyond the documents"
            );
        }
    }
    let _ = find(&index, "Choir.txt");
    let _ = find(&index, "");
    if verified {
        if meta.slot_count > 0 {
            assert_eq!(
                lists.map(|l| l.lists),
                Some(meta.slot_count as u64),
                "verified, but lists ≠ codes"
            );
        }
        for &d in docs.iter().filter(|&&d| d < n) {
            let nm = name(&index, d).expect("a name");
            let found = find(&index, &nm).expect("a verified file finds its names");
            assert_eq!(name(&index, found).as_deref(), Some(nm.as_str()));
        }
    }
}

/// What every query answer promises; names when the index is `verified`.
fn check_hits<D: AsRef<[u8]>>(
    index: &Index<D>,
    r: &QueryResult,
    opts: &QueryOptions,
    verified: bool,
) {
    assert!(r.hits.len() <= opts.top);
    assert!(r.hits.len() <= r.candidates);
    for w in r.hits.windows(2) {
        assert!(w[0].score >= w[1].score, "hits out of order: {:?}", r.hits);
    }
    for h in &r.hits {
        assert!(h.doc < index.doc_count(), "hit {h:?} beyond the documents");
        assert!(
            (0.0..=1.0).contains(&h.score) && h.score >= opts.threshold,
            "{h:?}"
        );
        assert!(
            !verified || name(index, h.doc).is_some(),
            "hit {h:?} has no name"
        );
    }
}

/// (b) A valid index or segment edited by the input, its checksums recomputed, then the
/// checks of [`open`]. The first byte picks the base; then every 4 bytes are one edit
/// `[op, lo, hi, value]`: `op % (regions + 1)` picks the region (header and directory, a
/// section, the trailer, or the whole file), `lo, hi` the offset in it, and `op / 32` what to
/// do there: set the byte (0–2), flip a bit (3), add to it (4), write a notable 32- (5) or
/// 64-bit (6) number, or remove up to 255 bytes (7; 255 truncates the file).
pub fn mutate(data: &[u8]) {
    let Some((&pick, edits)) = data.split_first() else {
        return;
    };
    let base = &bases()[pick as usize % bases().len()];
    let mut bytes = base.bytes.clone();
    let regions = &base.regions;
    for e in edits.chunks_exact(4) {
        let (op, at, v) = (e[0], u16::from_le_bytes([e[1], e[2]]) as usize, e[3]);
        let r = op as usize % (regions.len() + 1);
        let (start, len) = regions.get(r).copied().unwrap_or((0, bytes.len()));
        let pos = start + at % len.max(1);
        if pos >= bytes.len() {
            continue;
        }
        let notable = |v: u8| -> u64 {
            match v % 8 {
                0 => 0,
                1 => 1,
                2 => u64::MAX,
                3 => 1 << (v / 8 % 64),
                4 => (1 << (v / 8 % 64)) - 1,
                5 => bytes.len() as u64 + (v / 8) as u64,
                6 => u32::MAX as u64,
                _ => (v / 8) as u64,
            }
        };
        match op / 32 {
            0..=2 => bytes[pos] = v,
            3 => bytes[pos] ^= 1 << (v % 8),
            4 => bytes[pos] = bytes[pos].wrapping_add(v),
            5 | 6 => {
                let x = notable(v);
                let w = if op / 32 == 5 { 4 } else { 8 };
                let end = (pos + w).min(bytes.len());
                bytes[pos..end].copy_from_slice(&x.to_le_bytes()[..end - pos]);
            }
            _ if v == 255 => bytes.truncate(pos),
            _ => {
                let end = (pos + v as usize).min(bytes.len());
                bytes.drain(pos..end);
            }
        }
    }
    pocketdex::reseal(&mut bytes);
    check_index(&bytes);
}

/// The index's fingerprinter settings used by [`documents`]: analyzer and the fixed index.
fn analyzer() -> &'static Analyzer {
    static A: OnceLock<Analyzer> = OnceLock::new();
    A.get_or_init(|| Analyzer::for_lang(Lang::En))
}

/// (c) Any bytes as a document file (HTML recognised or forced) and as JSON Lines, through the
/// text pipeline; and as a reference distribution, idf table and word list. The JSON Lines
/// documents (at most 8) are built into an index that must verify and give their names and
/// titles back.
pub fn documents(data: &[u8]) {
    let decoded = text::decode(data);
    let mut texts = vec![decoded.text.clone()];
    for html in [None, Some(true)] {
        if let Item::Doc(d) = corpus::from_bytes("doc".into(), None, data, html) {
            assert!(!d.text.trim().is_empty());
            if !texts.contains(&d.text) {
                texts.push(d.text);
            }
        }
    }
    for t in &texts {
        pipeline(t);
    }
    // JSON Lines, line by line as the corpus reader splits them.
    let mut docs = Vec::new();
    for (no, line) in data.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
        let id = format!("doc:{no}");
        let item = match std::str::from_utf8(line) {
            Ok(line) => corpus::from_json_line(line, id),
            Err(_) => corpus::from_json_line(&text::decode(line).text, id),
        };
        if let Item::Doc(d) = item {
            docs.push(d);
        }
    }
    let raw = decoded.text.as_str();
    // Reference distributions, idf tables and word lists (`--reference`, `--idf`, stopwords).
    if let Ok(r) = Reference::parse(raw) {
        let _ = r.to_tsv();
        if let Ok(f) = pocketdex::Fingerprinter::with_reference(
            Params::default(),
            &r,
            Analyzer::for_lang(Lang::En),
        ) {
            let _ = f.fingerprint(EDITED);
        }
    }
    if let Ok(t) = LanguageIdf::parse(raw) {
        let _ = t.to_tsv();
        let idf = t.idf();
        let _ = idf.get(pocketdex::sketch::term_hash("jupiter"));
    }
    let words = text::parse_word_list(raw);
    let _ = Analyzer::new(words).terms(EDITED);
    // An index of the JSON Lines documents.
    if docs.is_empty() {
        return;
    }
    docs.truncate(8);
    let mut b = IndexBuilder::like(fixed_index());
    for d in &docs {
        b.add(&d.id, d.title.as_deref(), &d.text);
    }
    let mut out = Vec::new();
    b.finish(&mut out).expect("documents that were read build");
    let index = Index::open(&out[..]).expect("a built index opens");
    index.verify().expect("a built index verifies");
    assert_eq!(index.doc_count() as usize, docs.len());
    for (i, d) in docs.iter().enumerate() {
        let doc = i as u32;
        assert_eq!(
            name(&index, doc).as_deref(),
            Some(d.id.as_str()),
            "name of {i}"
        );
        let want = d.title.as_deref().filter(|t| !t.is_empty());
        assert_eq!(title(&index, doc).as_deref(), want, "title of {i}");
        let found = find(&index, &d.id).expect("a built index finds its names");
        assert_eq!(name(&index, found).as_deref(), Some(d.id.as_str()));
    }
}

/// The text pipeline on one text: the scanner against `unicode_words`, the analyzer, HTML
/// stripping, and the fixed index's fingerprints, codes and probes.
fn pipeline(t: &str) {
    let scanned: Vec<String> = text::words(t).collect();
    let reference: Vec<String> = text::segments(t).map(text::fold).collect();
    assert_eq!(scanned, reference, "the scanner differs from unicode_words");
    let _ = analyzer().terms(t);
    if text::looks_like_html(t) {
        let _ = text::strip_html(t);
    }
    let index = fixed_index();
    let f = index.fingerprinter();
    let fp = f.fingerprint(t);
    let res = index.resolution();
    let _ = f.codes(&fp, res);
    let probes = f.query_probes(&fp, res, 4, 4, Some(4));
    // A query's fingerprint is the document's analysis: the same terms, the same probes.
    let q = f.fingerprint_query(t);
    assert_eq!(q.term_hashes(), fp.term_hashes);
    assert_eq!(f.query_probes(&q, res, 4, 4, Some(4)), probes);
}

/// One detector per method with the default options, then SpotSigs with the Jaccard of sets
/// and SpotSigs with an idf filter that, among four texts, drops the signatures of one text
/// alone (and may set aside what is left with too few).
fn detectors() -> &'static [Detector] {
    static D: OnceLock<Vec<Detector>> = OnceLock::new();
    D.get_or_init(|| {
        let mut d: Vec<Detector> = pocketdex_methods::ALL
            .iter()
            .map(|&m| Detector::new(m, Options::default()).expect("default options"))
            .collect();
        for o in [
            Options {
                spot_jaccard: SpotJaccard::Set,
                ..Options::default()
            },
            Options {
                min_idf: 0.1,
                max_idf: 0.9,
                min_signatures: 1,
                ..Options::default()
            },
        ] {
            d.push(Detector::new(&Spotsigs, o).expect("valid SpotSigs options"));
        }
        d
    })
}

/// (c) The first byte picks a classical method (or one of SpotSigs' variants, or, past the last,
/// `compare`); the rest is up
/// to four texts separated by NUL bytes. A method prepares each text, finds the pairs, and its
/// pairs are checked against brute force; `compare` compares the first two by every measure.
/// (One method per input: `compare` and the fuzzy method each take a millisecond.)
pub fn methods(data: &[u8]) {
    // The methods' parallel parts on this thread itself: a pool of one other thread would
    // cost two context switches per parallel call (a fifth of the time in `perf`). A pool per
    // calling thread, not the global one: a pool whose only thread is the caller runs nothing
    // for other threads (the test harness calls this from several, which then exit).
    thread_local! {
        static POOL: rayon::ThreadPool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .expect("a pool of the calling thread");
    }
    POOL.with(|pool| pool.install(|| methods_here(data)));
}

fn methods_here(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let decoded = text::decode(rest).text;
    let texts: Vec<&str> = decoded.split('\0').take(4).collect();
    let Some(det) = detectors().get(pick as usize % (detectors().len() + 1)) else {
        let (a, b) = (texts[0], texts.get(1).copied().unwrap_or(""));
        let c = compare(
            Input { raw: a, plain: a },
            Input { raw: b, plain: b },
            &Options::default(),
        )
        .expect("compare");
        let _ = c.verdicts();
        return;
    };
    let features: Vec<_> = texts.iter().map(|t| det.prepare(t)).collect();
    let out = det.find(&features).expect("find");
    let brute = det.brute_force(&features).expect("brute force");
    let t = det.threshold();
    let name = det.method().name();
    for p in &out.pairs {
        assert!(p.a < p.b && (p.b as usize) < texts.len(), "{name}: {p:?}");
        assert!(p.score + 1e-9 >= t, "{name}: {p:?} below {t}");
        // A later copy of identical features is reported with score 1 whatever its
        // measure (which may be undefined: tf-idf of two copies and nothing else).
        if p.evidence == Evidence::Identical {
            continue;
        }
        let b = brute.iter().find(|q| (q.a, q.b) == (p.a, p.b));
        assert!(
            b.is_some_and(|q| (q.score - p.score).abs() < 1e-6),
            "{name}: found {p:?}, brute force {b:?}"
        );
    }
    if !det.method().estimates() {
        // The exact methods find every pair: the same groups as brute force (copies are
        // reported once, with the first of them).
        let copies = out
            .pairs
            .iter()
            .filter(|p| p.evidence == Evidence::Identical);
        let all: Vec<_> = brute.iter().chain(copies).cloned().collect();
        let members = |pairs: &[_]| -> Vec<Vec<u32>> {
            group_pairs(texts.len(), pairs)
                .into_iter()
                .map(|g| g.members)
                .collect()
        };
        assert_eq!(
            members(&out.pairs),
            members(&all),
            "{name}: {:?} vs {brute:?}",
            out.pairs
        );
    }
}

/// (d) Any query text and options against the fixed index (the first byte holds the options),
/// by text, by fingerprint and through a set of that one index: the same answers, within what
/// the options promise.
pub fn query(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = text::decode(rest).text;
    let index = fixed_index();
    let opts = QueryOptions {
        top: 1 + (flags & 7) as usize * 3,
        threshold: [0.0, 0.3, 0.5, 0.9][(flags >> 3) as usize & 3],
        probes: (flags & 0x20 != 0).then_some(flags % 5),
        short_probes: (flags & 0x20 != 0).then_some(flags % 6),
        similar: flags & 0x40 != 0,
        similar_probes: (flags & 0x20 != 0).then_some(flags % 7),
        self_name: (flags & 0x80 != 0).then(|| text.lines().next().unwrap_or("").to_string()),
    };
    let Some(r) = query_text(index, &text, &opts) else {
        return;
    };
    check_hits(index, &r, &opts, true);
    let fp = index.fingerprinter().fingerprint(&text);
    let by_fp = index
        .query_fingerprint(&fp, &opts)
        .expect("the index's own fingerprint");
    assert_eq!(by_fp.hits, r.hits, "by fingerprint");
    let set = fixed_set()
        .query(&text, &opts)
        .expect("a valid index answers");
    let set_hits: Vec<_> = set.hits.iter().map(|h| h.hit.clone()).collect();
    assert_eq!(set_hits, r.hits, "a set of the one index");
}
