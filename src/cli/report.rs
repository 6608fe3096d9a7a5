//! `pocketdex report`: how much of a collection is redundant, with the distribution of group
//! sizes as a table and a log-log plot (Figure 2 of the content-equivalence paper).

use super::dups::{self, Found, MethodArgs};
use anyhow::Context;
use plotters::prelude::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Report how much of a collection is redundant
///
/// Finds the equivalence groups as `pocketdex dups` does (same methods and options), then
/// writes into DIR:
///   report.txt        the summary and the table below, as printed
///   group-sizes.tsv   size, groups, documents, share of the collection: one row per group size
///   group-sizes.svg   number of groups against group size on log-log axes, as Figure 2 of the
///                     content-equivalence paper (a straight line suggests a power law)
///   groups.jsonl      the groups, one JSON line each, as `dups --json` prints them (input for
///                     `pocketdex dedup-run --groups`)
///
/// The summary counts the documents in groups (and their share), the groups, and the redundant
/// documents: those that could go while one document per group stays. For retrieval
/// equivalence as in the paper's Figure 2, use --method exact.
///
/// With --json, the summary and the table go to stdout as one JSON object.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    method: MethodArgs,
    /// The directory to write the report into (created if missing; files in it are replaced).
    #[arg(short, long, visible_alias = "output", value_name = "DIR")]
    out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: super::util::InputArgs,
    /// No progress bar and no diagnostics.
    #[arg(short, long)]
    quiet: bool,
}

/// One row of the group-size table.
struct Row {
    size: usize,
    groups: usize,
}

/// The files `report` writes into its directory.
const FILES: [&str; 4] = [
    "report.txt",
    "group-sizes.tsv",
    "group-sizes.svg",
    "groups.jsonl",
];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.out.exists() && !args.out.is_dir() {
        anyhow::bail!(
            "{} is a file; --out names the directory the report's files are written to",
            args.out.display()
        );
    }
    super::util::out_dir_outside_inputs(&args.out, &FILES, &args.inputs)?;
    // Made before the inputs are read, so that a directory that cannot be made fails at once;
    // taken back when the run fails and this call made it.
    let existed = args.out.exists();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let found = dups::detect(&args.inputs, &args.input.reader(), &args.method, args.quiet)
        .inspect_err(|_| {
            if !existed {
                let _ = std::fs::remove_dir(&args.out);
            }
        })?;
    let mut by_size: BTreeMap<usize, usize> = BTreeMap::new();
    for g in &found.groups {
        *by_size.entry(g.members.len()).or_default() += 1;
    }
    let rows: Vec<Row> = by_size
        .into_iter()
        .map(|(size, groups)| Row { size, groups })
        .collect();
    let n = found.ids.len();
    let share = |d: usize| d as f64 / n.max(1) as f64;

    // groups.jsonl
    let mut groups_file = std::io::BufWriter::new(create(&args.out.join("groups.jsonl"))?);
    for (i, g) in found.groups.iter().enumerate() {
        writeln!(groups_file, "{}", found.group_json(i + 1, g))?;
    }
    groups_file.flush()?;

    // group-sizes.tsv
    let mut tsv = String::from("size\tgroups\tdocuments\tshare\n");
    for r in &rows {
        tsv.push_str(&format!(
            "{}\t{}\t{}\t{:.6}\n",
            r.size,
            r.groups,
            r.size * r.groups,
            share(r.size * r.groups)
        ));
    }
    std::fs::write(args.out.join("group-sizes.tsv"), &tsv)
        .with_context(|| format!("cannot write {}", args.out.display()))?;

    // group-sizes.svg
    let svg = args.out.join("group-sizes.svg");
    plot(&svg, &rows, &found).with_context(|| format!("cannot draw {}", svg.display()))?;

    // report.txt and stdout
    let text = summary_text(&found, &rows);
    std::fs::write(args.out.join("report.txt"), &text)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let in_groups = found.in_groups();
        let mut summary = found.summary_json();
        summary["type"] = json!("report");
        summary["share_in_groups"] = json!(share(in_groups));
        summary["redundant"] = json!(in_groups - found.groups.len());
        summary["share_redundant"] = json!(share(in_groups - found.groups.len()));
        summary["largest_group"] = json!(found.groups.first().map_or(0, |g| g.members.len()));
        summary["sizes"] = json!(rows
            .iter()
            .map(|r| json!({"size": r.size, "groups": r.groups, "documents": r.size * r.groups}))
            .collect::<Vec<_>>());
        summary["files"] = json!(FILES
            .iter()
            .map(|f| args.out.join(f).display().to_string())
            .collect::<Vec<_>>());
        writeln!(out, "{summary}")?;
    } else {
        write!(out, "{text}")?;
        writeln!(
            out,
            "wrote report.txt, group-sizes.tsv, group-sizes.svg and groups.jsonl to {}",
            args.out.display()
        )?;
    }
    out.flush()?;
    if !args.quiet {
        found.report_left_out(false);
        found.print_summary();
    }
    Ok(ExitCode::SUCCESS)
}

fn create(path: &Path) -> anyhow::Result<std::fs::File> {
    std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))
}

fn summary_text(found: &Found, rows: &[Row]) -> String {
    let d = &found.detector;
    let n = found.ids.len();
    let in_groups = found.in_groups();
    let groups = found.groups.len();
    let pct = |x: usize| 100.0 * x as f64 / n.max(1) as f64;
    let mut s = String::new();
    s.push_str(&format!(
        "method: {} ({})\n",
        d.method().name(),
        d.criterion()
    ));
    s.push_str(&format!(
        "documents: {n}; {} inputs skipped by the reader, {} documents set aside by the method\n",
        found.skipped.len(),
        found.outcome.set_aside.len()
    ));
    s.push_str(&format!(
        "in equivalence groups: {in_groups} ({:.1}%) in {groups} groups\n",
        pct(in_groups)
    ));
    s.push_str(&format!(
        "redundant (all but one document per group): {} ({:.1}%)\n",
        in_groups - groups,
        pct(in_groups - groups)
    ));
    if let Some(g) = found.groups.first() {
        s.push_str(&format!(
            "largest group: {} documents (first: {})\n",
            g.members.len(),
            found.ids[g.members[0] as usize]
        ));
    }
    s.push_str("\n  size   groups  documents   share\n");
    for r in rows {
        s.push_str(&format!(
            "{:>6} {:>8} {:>10} {:>6.2}%\n",
            r.size,
            r.groups,
            r.size * r.groups,
            pct(r.size * r.groups)
        ));
    }
    s
}

/// Groups against group size on log-log axes.
fn plot(path: &Path, rows: &[Row], found: &Found) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (720, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let max_size = rows.iter().map(|r| r.size).max().unwrap_or(2) as f64;
    let max_groups = rows.iter().map(|r| r.groups).max().unwrap_or(1) as f64;
    let caption = format!(
        "Group sizes: {} ({}), {} documents",
        found.detector.method().name(),
        found.detector.criterion(),
        found.ids.len()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 16))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (1f64..(max_size * 2.0).max(10.0)).log_scale(),
            (0.8f64..(max_groups * 2.0).max(10.0)).log_scale(),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .max_light_lines(0)
        .x_labels(12)
        .y_labels(12)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("group size (documents)")
        .y_desc("number of groups")
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let points: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.size as f64, r.groups as f64))
        .collect();
    chart
        .draw_series(LineSeries::new(points.clone(), BLUE.mix(0.4)))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .draw_series(points.into_iter().map(|p| Circle::new(p, 4, BLUE.filled())))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if rows.is_empty() {
        root.draw(&Text::new(
            "no groups found",
            (300, 260),
            ("sans-serif", 20).into_font(),
        ))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}
