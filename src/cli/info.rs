//! `pocketdex info`: what an index holds and how its bytes are spent.

use super::util;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show an index's parameters, counts, section sizes and bytes per document.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The index file.
    #[arg(value_name = "FILE.pdx")]
    index: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Written with `?`, not println!, so that a closed stdout ends the command quietly.
    let mut out = std::io::stdout().lock();
    let index = util::open_index(&args.index, util::Access::Scan)?;
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
    let lists = index.list_lengths();
    if args.json {
        let o = json!({
            "file": args.index.display().to_string(),
            "format_version": pocketdex::FORMAT_VERSION,
            "bytes": total,
            "documents": m.doc_count,
            "codes": m.slot_count,
            "references": m.ref_count,
            "posting_bits": m.posting_bits,
            "language": m.lang,
            "params": p,
            "sections": sections,
            "bytes_per_document": total as f64 / docs,
            "bytes_per_document_beyond_names": (total - names - titles) as f64 / docs,
            "resolution": index.resolution(),
            "lists": lists,
        });
        writeln!(out, "{o}")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{}: pocketdex index, format version {}",
        args.index.display(),
        pocketdex::FORMAT_VERSION
    )?;
    writeln!(out, "  language          {}", m.lang)?;
    writeln!(out, "  documents         {}", m.doc_count)?;
    writeln!(out, "  distinct codes    {}", m.slot_count)?;
    writeln!(
        out,
        "  references        {} ({:.2} per code, {} bits each)",
        m.ref_count,
        m.ref_count as f64 / m.slot_count.max(1) as f64,
        m.posting_bits
    )?;
    let r = index.resolution();
    writeln!(
        out,
        "  posting lists     mean {:.2}, median {}, p99 {}, max {}; {:.2}% of references in lists over 1,000",
        lists.mean,
        lists.p50,
        lists.p99,
        lists.max,
        100.0 * lists.share_in_long
    )?;
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
        "  short path        documents with < {} terms: {} weighted MinHash bands × {} rows",
        p.short_below, p.minhash_bands, r.short_rows
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
    writeln!(out, "  sections:")?;
    for s in &sections {
        writeln!(
            out,
            "    {:<9} {:>12} bytes  {:>7.2} bytes/doc  at {}",
            s.name,
            s.len,
            s.len as f64 / docs,
            s.offset
        )?;
    }
    writeln!(
        out,
        "  total             {} ({total} bytes)",
        util::size(total)
    )?;
    writeln!(
        out,
        "  bytes/document    {:.1} ({:.1} beyond names and titles)",
        total as f64 / docs,
        (total - names - titles) as f64 / docs
    )?;
    Ok(ExitCode::SUCCESS)
}
