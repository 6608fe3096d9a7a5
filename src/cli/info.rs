//! `pocketdex info`: what an index holds and how its bytes are spent.

use super::util;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Show an index's parameters, counts and sizes.
///
/// Its parameters, counts, integrity checks and signature, section sizes and bytes per
/// document.
///
/// For an index set: its generation, live and deleted documents and segments, then the
/// parameters every segment shares (those of its schema). Several INDEX arguments are shown one
/// after the other (with --json, one object per line); one that cannot be opened is reported and
/// the others still shown (exit status 2).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Index files or index sets.
    #[arg(required = true, value_name = "INDEX")]
    indexes: Vec<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    trust: super::sign::Trust,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Written with `?`, not println!, so that a closed stdout ends the command quietly.
    let mut out = std::io::stdout().lock();
    util::for_each_index(&args.indexes, |path| one(path, &args, &mut out))
}

fn one(path: &PathBuf, args: &Args, out: &mut dyn Write) -> anyhow::Result<()> {
    if path.is_dir() {
        if args.trust.key()?.is_some() {
            let set = util::open_indexes(std::slice::from_ref(path), util::Access::Scan)?;
            args.trust.check(&set, std::slice::from_ref(path))?;
        }
        set_info(path, args.json, out)
    } else {
        let index = util::open_index(path, util::Access::Scan)?;
        args.trust.check_one(&index, path)?;
        // Reached with a key only when the file is signed by it.
        let checked = args.trust.key()?.is_some();
        file_info(path, &index, checked, args.json, out)
    }
}

/// An index set: its state, its segments, then its schema's parameters.
fn set_info(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let set = util::open_indexes(&[path.to_path_buf()], util::Access::Scan)?;
    let schema = util::open_index(&path.join(pocketdex::SCHEMA), util::Access::Scan)?;
    let docs: u64 = set.parts().iter().map(|p| p.index.doc_count() as u64).sum();
    let bytes: u64 = set.parts().iter().map(|p| p.index.len_bytes()).sum();
    if json {
        let o = pocketdex::info::set_info(&path.display().to_string(), &set, &schema);
        writeln!(out, "{o}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: pocketdex index set, generation {}",
        path.display(),
        set.generation()
    )?;
    writeln!(out, "  live documents    {}", set.live_docs())?;
    writeln!(
        out,
        "  deleted           {} (merge drops them)",
        docs - set.live_docs()
    )?;
    writeln!(
        out,
        "  total             {} ({bytes} bytes)",
        util::size(bytes)
    )?;
    writeln!(out, "  segments          {}", set.parts().len())?;
    for p in set.parts() {
        writeln!(
            out,
            "    {}  {} document{}, {} deleted, {}",
            p.file,
            p.index.doc_count(),
            if p.index.doc_count() == 1 { "" } else { "s" },
            p.index.doc_count() as u64 - p.live_docs(),
            util::size(p.index.len_bytes())
        )?;
    }
    writeln!(out, "  every segment shares the parameters of its schema:")?;
    file_info(&path.join(pocketdex::SCHEMA), &schema, false, false, out)
}

/// One index file.
/// `checked`: the signature was checked against the trusted key of --public-key.
fn file_info<D: AsRef<[u8]>>(
    path: &Path,
    index: &pocketdex::Index<D>,
    checked: bool,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let m = index.meta();
    let p = &m.params;
    let docs = m.doc_count.max(1) as f64;
    let sections = index.sections();
    let names = sections
        .iter()
        .find(|s| s.name == "NAMES")
        .map_or(0, |s| s.len);
    let titles = sections
        .iter()
        .find(|s| s.name == "TITLES")
        .map_or(0, |s| s.len);
    let total = index.len_bytes();
    if json {
        let mut o = pocketdex::info::file_info(&path.display().to_string(), index)?;
        o["signature_checked"] = checked.into();
        writeln!(out, "{o}")?;
        return Ok(());
    }
    let lists = index.list_lengths()?;
    writeln!(
        out,
        "{}: pocketdex index, format version {}",
        path.display(),
        index.version()
    )?;
    match index.signature() {
        Some(s) => writeln!(
            out,
            "  signature         Ed25519, key {} ({})",
            s.public_key.short(),
            if checked {
                "checked: signed by the trusted key"
            } else {
                "not checked: --public-key KEY checks it"
            }
        )?,
        None => writeln!(out, "  signature         none")?,
    }
    match index.block_size() {
        Some(b) => writeln!(
            out,
            "  integrity         BLAKE3 block tree, {} blocks, each checked when first read",
            if b >= 1024 {
                format!("{} KiB", b / 1024)
            } else {
                format!("{b}-byte")
            }
        )?,
        None => writeln!(
            out,
            "  integrity         large sections checked whole when first read (format {})",
            index.version()
        )?,
    }
    writeln!(out, "  language          {}", m.lang)?;
    // A set's schema holds parameters and no documents: nothing per document to show.
    let has_docs = m.doc_count > 0;
    if has_docs {
        writeln!(out, "  documents         {}", m.doc_count)?;
        writeln!(out, "  distinct codes    {}", m.slot_count)?;
        writeln!(
            out,
            "  references        {} ({:.2} per code, {} bits each)",
            m.ref_count,
            m.ref_count as f64 / m.slot_count.max(1) as f64,
            m.posting_bits
        )?;
        writeln!(
            out,
            "  posting lists     mean {:.2}, median {}, p99 {}, max {}; {:.2}% of references in lists over 1,000",
            lists.mean,
            lists.p50,
            lists.p99,
            lists.max,
            100.0 * lists.share_in_long
        )?;
    }
    let r = index.resolution();
    writeln!(
        out,
        "  prefix classes    {} in {} bands",
        p.classes, r.bands
    )?;
    writeln!(
        out,
        "  schemes           {:?} ({:?} deviation)",
        p.schemes, p.deviation
    )?;
    writeln!(
        out,
        "  fuzzy codes       band digits + {} weighted MinHash sample{} per band; {} lookups per band at query time",
        r.samples,
        if r.samples == 1 { "" } else { "s" },
        p.probes
    )?;
    writeln!(
        out,
        "  fuzzy path        documents with ≥ {} index terms",
        p.min_terms
    )?;
    writeln!(
        out,
        "  short path        documents with < {} terms: {} weighted MinHash bands × {} rows; {} lookup{} per band at query time (queries of < {} terms)",
        p.short_below,
        p.minhash_bands,
        r.short_rows,
        p.short_probes,
        if p.short_probes == 1 { "" } else { "s" },
        p.short_below.saturating_add(p.short_below / 5)
    )?;
    if p.similar_bands > 0 {
        writeln!(
        out,
            "  similar path      every document: {} weighted MinHash bands × {} row{} (cubed tf·idf); {} lookups per band with query --similar",
            p.similar_bands,
            r.similar_rows,
            if r.similar_rows == 1 { "" } else { "s" },
            p.similar_probes
        )?;
    } else {
        writeln!(out, "  similar path      none (built with --similar-bands 0; query --similar finds only near copies)")?;
    }
    writeln!(
        out,
        "  sketch            {}-bit simhash per document",
        p.sketch_bits()
    )?;
    if let Some(idf) = index.fingerprinter().idf() {
        let source = match idf.docs {
            0 => "the language's".to_string(),
            n => format!("learned from {} documents", util::thousands(n as u64)),
        };
        if idf.len() > idf.sample_terms() {
            writeln!(
                out,
                "  idf table         {source}: {} terms weigh the samples (others {:.2}), {} the sketch (others {:.2})",
                util::thousands(idf.sample_terms() as u64),
                idf.default,
                util::thousands(idf.len() as u64),
                idf.sketch_default()
            )?;
        } else {
            writeln!(
                out,
                "  idf table         {source}: {} terms (others {:.2})",
                util::thousands(idf.len() as u64),
                idf.default
            )?;
        }
    }
    writeln!(out, "  sections:")?;
    for s in &sections {
        let per_doc = if has_docs {
            format!("  {:>7.2} bytes/doc", s.len as f64 / docs)
        } else {
            String::new()
        };
        writeln!(
            out,
            "    {:<9} {:>12} bytes{per_doc}  at {}",
            s.name, s.len, s.offset
        )?;
    }
    writeln!(
        out,
        "  total             {} ({total} bytes)",
        util::size(total)
    )?;
    if has_docs {
        writeln!(
            out,
            "  bytes/document    {:.1} ({:.1} beyond names and titles)",
            total as f64 / docs,
            (total - names - titles) as f64 / docs
        )?;
    }
    Ok(())
}
