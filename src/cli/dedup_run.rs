//! `pocketdex dedup-run`: collapse content-equivalent documents in ranked result lists (TREC
//! run files), keeping the best-ranked document of each equivalence group.

use super::util;
use anyhow::Context;
use pocketdex_methods::groups::UnionFind;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Collapse content-equivalent documents in ranked result lists
///
/// RUN is a TREC run file: one line per retrieved document, `qid Q0 docid rank score tag`,
/// whitespace-separated. For each query, documents are taken best first (highest score; equal
/// scores by rank, then by line order), and a document is dropped when a better-ranked document
/// of the same query is in its equivalence group: what a search engine aware of content
/// equivalence would show (the content-equivalence paper's runs with redundant documents
/// removed). Ranks are renumbered 1, 2, …; scores and tags are kept as written.
///
/// FILE holds the groups: the JSON Lines of `pocketdex dups --json` or `groups.jsonl` of
/// `pocketdex report` (lines with a "members" list; other lines are ignored), the rows of
/// `pocketdex dups -o rows.jsonl` (grouped by "cluster_id"), or plain text with one group per
/// line, ids separated by white space. Groups that share a document are merged. An empty file
/// (`dups` found no group) leaves the run as it is; a file whose lines hold no group at all
/// (not a groups file) is an error.
///
/// The collapsed run goes to stdout (or --output); counts go to stderr.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The TREC run file (- for stdin).
    #[arg(value_name = "RUN")]
    run: String,
    /// The equivalence groups.
    #[arg(short, long, value_name = "FILE")]
    groups: PathBuf,
    /// Write the collapsed run here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// List every dropped entry on stderr, with the document that replaced it.
    #[arg(short, long)]
    verbose: bool,
}

/// One line of a run.
#[derive(Clone, Debug)]
struct Entry {
    qid: String,
    docid: String,
    rank: i64,
    score: f64,
    score_text: String,
    tag: String,
    line: usize,
}

/// Document id → group number, from a groups file.
fn read_groups(path: &PathBuf) -> anyhow::Result<(HashMap<String, u32>, usize)> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open groups file {}", path.display()))?;
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut lists: Vec<Vec<u32>> = Vec::new();
    // The number of a document id, given on first sight.
    let mut number = |id: String| {
        let next = ids.len() as u32;
        *ids.entry(id).or_insert(next)
    };
    // Per `cluster_id` of the rows of `dups -o`: which of `lists` its documents go to.
    let mut clusters: HashMap<String, usize> = HashMap::new();
    // Lines that are not blank, and whether one was the summary of `dups --json`: an empty
    // file (`report`'s groups.jsonl) or a summary alone is a grouping without groups, what a
    // collection without near copies gets, not a wrong file.
    let (mut lines, mut summary) = (0usize, false);
    for (no, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        lines += 1;
        let as_id = |x: &serde_json::Value| match x {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let members: Vec<String> = if t.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(t)
                .with_context(|| format!("{}:{}: invalid JSON", path.display(), no + 1))?;
            summary |= v.get("type").and_then(|t| t.as_str()) == Some("summary");
            match (
                v.get("members").and_then(|m| m.as_array()),
                v.get("cluster_id"),
            ) {
                (Some(m), _) => m.iter().map(as_id).collect(),
                // A row of `dups -o rows.jsonl`: its cluster is its group.
                (None, Some(cluster)) => {
                    if let Some(id) = v.get("id") {
                        let at = *clusters.entry(cluster.to_string()).or_insert_with(|| {
                            lists.push(Vec::new());
                            lists.len() - 1
                        });
                        lists[at].push(number(as_id(id)));
                    }
                    continue;
                }
                (None, None) => continue,
            }
        } else if no == 0 && t.starts_with("group ") && t.contains(" documents") {
            anyhow::bail!(
                "{} is the text output of `pocketdex dups`, which this does not read: give its `--json` output, or the rows of `dups -o rows.jsonl`",
                path.display()
            );
        } else {
            t.split_whitespace().map(str::to_owned).collect()
        };
        lists.push(members.into_iter().map(&mut number).collect());
    }
    let mut uf = UnionFind::new(ids.len());
    for l in &lists {
        for w in l.windows(2) {
            uf.union(w[0], w[1]);
        }
    }
    if lines > 0 && !summary && lists.iter().all(Vec::is_empty) {
        anyhow::bail!(
            "{} holds no groups: give the JSON Lines of `pocketdex dups --json` (lines with a \"members\" list), the rows of `dups -o rows.jsonl`, `groups.jsonl` of `pocketdex report`, or one group of ids per line",
            path.display()
        );
    }
    // Groups after merging those that share a document, and only those of two documents or
    // more: the rows of `dups -o` give every document a cluster, most of them alone.
    let mut by_id: HashMap<String, u32> = ids.into_iter().map(|(id, n)| (id, uf.find(n))).collect();
    let mut sizes: HashMap<u32, usize> = HashMap::new();
    for g in by_id.values() {
        *sizes.entry(*g).or_default() += 1;
    }
    by_id.retain(|_, g| sizes[g] > 1);
    let groups = sizes.values().filter(|&&n| n > 1).count();
    Ok((by_id, groups))
}

fn read_run(arg: &str) -> anyhow::Result<Vec<Entry>> {
    let reader: Box<dyn BufRead> = if arg == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(arg).with_context(|| format!("cannot open run {arg}"))?,
        ))
    };
    let mut entries = Vec::new();
    for (no, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("reading {arg}"))?;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 6 {
            anyhow::bail!(
                "{arg}:{}: expected 6 fields `qid Q0 docid rank score tag`, found {}",
                no + 1,
                f.len()
            );
        }
        let rank = f[3]
            .parse::<i64>()
            .with_context(|| format!("{arg}:{}: rank {:?} is not an integer", no + 1, f[3]))?;
        let score = f[4]
            .parse::<f64>()
            .ok()
            // NaN would rank above every number (total_cmp), infinity above every score.
            .filter(|s| s.is_finite())
            .with_context(|| {
                format!("{arg}:{}: score {:?} is not a finite number", no + 1, f[4])
            })?;
        entries.push(Entry {
            qid: f[0].to_owned(),
            docid: f[2].to_owned(),
            rank,
            score,
            score_text: f[4].to_owned(),
            tag: f[5].to_owned(),
            line: no,
        });
    }
    Ok(entries)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (group_of, group_count) = read_groups(&args.groups)?;
    let entries = read_run(&args.run)?;
    // Queries in order of first appearance.
    let mut order: Vec<String> = Vec::new();
    let mut by_query: HashMap<String, Vec<Entry>> = HashMap::new();
    for e in entries {
        if !by_query.contains_key(&e.qid) {
            order.push(e.qid.clone());
        }
        by_query.entry(e.qid.clone()).or_default().push(e);
    }
    // -o is written as every output is (atomically, never over an input, a link or a
    // device): the new run is made in memory, as the old one is read.
    if let Some(p) = &args.output {
        pocketdex::atomic::check_output(p)?;
        pocketdex::atomic::check_not_input(p, &[Path::new(&args.run), args.groups.as_path()])?;
    }
    let mut buffer = Vec::new();
    let mut out: Box<dyn Write> = match &args.output {
        Some(_) => Box::new(&mut buffer),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let (mut total, mut dropped, mut affected) = (0usize, 0usize, 0usize);
    for qid in &order {
        let mut list = by_query.remove(qid).unwrap_or_default();
        list.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.rank.cmp(&b.rank))
                .then(a.line.cmp(&b.line))
        });
        // Group → the document kept for it.
        let mut kept: HashMap<u32, String> = HashMap::new();
        let mut rank = 0;
        let before = dropped;
        for e in &list {
            total += 1;
            if let Some(&g) = group_of.get(&e.docid) {
                if let Some(k) = kept.get(&g) {
                    dropped += 1;
                    if args.verbose {
                        eprintln!(
                            "{qid}: dropped {} (rank {}), equivalent to {k}",
                            e.docid, e.rank
                        );
                    }
                    continue;
                }
                kept.insert(g, e.docid.clone());
            }
            rank += 1;
            writeln!(
                out,
                "{} Q0 {} {rank} {} {}",
                e.qid, e.docid, e.score_text, e.tag
            )?;
        }
        affected += (dropped > before) as usize;
    }
    out.flush()?;
    drop(out);
    if let Some(p) = &args.output {
        pocketdex::atomic::write_file(p, |w| {
            w.write_all(&buffer).map_err(|e| pocketdex::Error::io(p, e))
        })
        .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let queries = |n: usize| match n {
        1 => "1 query".to_string(),
        n => format!("{} queries", util::thousands(n as u64)),
    };
    eprintln!(
        "dedup-run: {}, {total} entries → {} ({dropped} dropped as equivalent to a \
         better-ranked document, in {}); {} covering {}",
        queries(order.len()),
        total - dropped,
        queries(affected),
        util::plural(group_count as u64, "group"),
        util::plural(group_of.len() as u64, "document")
    );
    Ok(ExitCode::SUCCESS)
}
