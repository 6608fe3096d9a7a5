//! The command line as a user runs it: build, query (text and --json), info, verify, exit
//! statuses, atomic writes, and damaged or foreign files.

use crate::common;

use common::{failed_with, pocketdex, root, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output};

fn build_sample(dir: &Path) -> String {
    let out = dir.join("wiki.pdx");
    let o = build(Path::new("samples/wiki-en"), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("indexed 300 documents"),
        "{}",
        stderr(&o)
    );
    out.display().to_string()
}

/// `pocketdex build INPUT -o OUT`.
fn build(input: &Path, out: &Path) -> Output {
    pocketdex(&[
        "build",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
}

#[test]
fn quick_start_finds_the_edited_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let o = pocketdex(&["query", &index, "samples/query/edited.txt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = stdout(&o).lines().nth(1).unwrap_or_default().to_string();
    assert!(first.contains("Jupiter.txt"), "{}", stdout(&o));

    let o = pocketdex(&["verify", &index]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(": ok (300 documents"), "{}", stdout(&o));
    // A command that prints JSON says there too why it ended.
    let o = pocketdex(&["query", "no-such.pdx", "samples/query/edited.txt", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&line["type"], &line["busy"]),
        (&"error".into(), &false.into()),
        "{line}"
    );
    assert!(
        line["message"].as_str().unwrap().contains("no-such.pdx"),
        "{line}"
    );
    let o = pocketdex(&["verify", "-q", &index]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let o = pocketdex(&["info", &index, "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["documents"], 300);
    assert_eq!(info["block_size"], 16_384, "the block size written today");
    let o = pocketdex(&["info", &index]);
    assert!(
        stdout(&o).contains("integrity         BLAKE3 block tree, 16 KiB blocks"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        info["bytes"].as_u64(),
        Some(std::fs::metadata(&index).unwrap().len())
    );
    assert!(
        info["bytes_per_document_beyond_names"].as_f64().unwrap()
            < info["bytes_per_document"].as_f64().unwrap()
    );
}

#[test]
fn json_hits_and_self_first_for_a_whole_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let o = pocketdex(&["query", &index, "samples/wiki-en", "--json", "--top", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut first: std::collections::HashMap<String, String> = Default::default();
    let mut queries = 0;
    for line in stdout(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "query" {
            // Every DOC's cost: its lookups found at least its own document.
            assert!(v["lookups"].as_u64().unwrap() >= 4, "{v}");
            assert!(v["candidates"].as_u64().unwrap() >= 1, "{v}");
            assert!(v["terms"].as_u64().unwrap() >= 1, "{v}");
            queries += 1;
            continue;
        }
        assert_eq!(v["type"], "hit");
        let score = v["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score));
        first
            .entry(v["query"].as_str().unwrap().to_string())
            .or_insert_with(|| v["id"].as_str().unwrap().to_string());
    }
    assert_eq!(first.len(), 300);
    assert_eq!(queries, 300);
    for (query, id) in &first {
        assert_eq!(query, &format!("samples/wiki-en/{id}"));
    }
}

#[test]
fn identical_documents_each_find_themselves_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir(&dir).unwrap();
    let text = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(dir.join(name), &text).unwrap();
    }
    let index = tmp.path().join("x.pdx").display().to_string();
    assert!(pocketdex(&["build", dir.to_str().unwrap(), "-o", &index])
        .status
        .success());
    for name in ["a.txt", "b.txt", "c.txt"] {
        let q = dir.join(name).display().to_string();
        let o = pocketdex(&["query", &index, &q, "--json"]);
        let first: serde_json::Value =
            serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
        assert_eq!(first["id"], name);
        assert_eq!(first["score"], 1.0);
    }
}

#[test]
fn no_hit_exits_1_and_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let unrelated = tmp.path().join("q.txt");
    std::fs::write(
        &unrelated,
        "Zebrafish embryos regenerate cardiac tissue after cryoinjury; \
        researchers tracked cardiomyocyte proliferation with lineage tracing and live imaging.",
    )
    .unwrap();
    let o = pocketdex(&[
        "query",
        &index,
        unrelated.to_str().unwrap(),
        "--threshold",
        "0.8",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = pocketdex(&["query", &index, "no/such/file.txt"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pocketdex(&["query", "Cargo.toml", "samples/query/edited.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a pocketdex index"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn stdin_jsonl_build_and_stdin_query() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("j.pdx").display().to_string();
    let jupiter = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    let lines = format!(
        "{}\n{}\nnot json\n{}\n",
        serde_json::json!({"id": "jup", "title": "Jupiter", "text": jupiter}),
        serde_json::json!({"id": "empty", "text": ""}),
        serde_json::json!({"id": "html", "text": "<html><body><p>Saturn is the sixth planet from the Sun and the second largest.</p></body></html>"}),
    );
    let run = |args: &[&str], input: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(c.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
        c.wait_with_output().unwrap()
    };
    // The record that is not JSON is an error (exit 2); the others are indexed.
    let o = run(&["build", "-", "-o", &index], &lines);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("indexed 2 documents") && err.contains("2 skipped"),
        "{err}"
    );
    assert!(err.contains("stdin:3: invalid JSON"), "{err}");
    let o = run(&["query", &index, "-", "--json"], &jupiter);
    let hit: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(hit["id"], "jup");
    assert_eq!(hit["title"], "Jupiter");
    assert_eq!(hit["query"], "-");
}

#[test]
fn binary_and_empty_files_are_skipped_and_invalid_utf8_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mixed");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    std::fs::write(dir.join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::write(
        dir.join("latin1.txt"),
        b"Caf\xe9 cr\xe8me br\xfbl\xe9e recipes from Lyon",
    )
    .unwrap();
    // A Spark output's part file, and a JSON Lines file: a directory's files are documents.
    std::fs::write(dir.join("part-0.snappy.parquet"), b"PAR1\x15\x00\x00PAR1").unwrap();
    std::fs::write(
        dir.join("records.jsonl"),
        "{\"id\": \"a\", \"text\": \"one record\"}\n",
    )
    .unwrap();
    let index = tmp.path().join("m.pdx").display().to_string();
    let o = pocketdex(&["build", dir.to_str().unwrap(), "-o", &index]);
    let err = stderr(&o);
    assert!(
        err.contains("skipped part-0.snappy.parquet: binary (a Parquet file, whose rows are read only from a file given by name"),
        "{err}"
    );
    assert!(
        err.contains(
            "note: 1 JSON Lines file below the input directories was read as one document"
        ),
        "{err}"
    );
    std::fs::remove_file(dir.join("part-0.snappy.parquet")).unwrap();
    std::fs::remove_file(dir.join("records.jsonl")).unwrap();
    // A record whose id ends so is no file read whole.
    let records = tmp.path().join("r.jsonl");
    std::fs::write(
        &records,
        "{\"id\": \"exports/a.JSONL\", \"text\": \"Glassblowers gather molten glass.\"}\n",
    )
    .unwrap();
    let o = pocketdex(&[
        "build",
        records.to_str().unwrap(),
        dir.to_str().unwrap(),
        "-o",
        &index,
    ]);
    assert!(
        !stderr(&o).contains("JSON Lines file below"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["build", dir.to_str().unwrap(), "-o", &index]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("skipped blob.bin: binary"), "{err}");
    assert!(err.contains("skipped empty.txt: empty"), "{err}");
    assert!(
        err.contains("1 document had invalid UTF-8 (4 sequences"),
        "{err}"
    );
    // --quiet leaves out the progress and the summary, not what was lost; `add` alike.
    let set = tmp.path().join("set");
    for args in [
        vec!["build", dir.to_str().unwrap(), "-o", &index, "-q"],
        vec!["add", set.to_str().unwrap(), dir.to_str().unwrap(), "-q"],
    ] {
        let o = pocketdex(&args);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("skipped blob.bin: binary"), "{err}");
        assert!(err.contains("1 document had invalid UTF-8"), "{err}");
        assert!(
            !err.contains("indexed") && !err.contains("created"),
            "{err}"
        );
    }
    // A compressed file says what it is.
    std::fs::write(
        dir.join("docs.jsonl.gz"),
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3],
    )
    .unwrap();
    let o = pocketdex(&["build", dir.to_str().unwrap(), "-o", &index]);
    assert!(
        stderr(&o).contains("skipped docs.jsonl.gz: binary (gzip-compressed: decompress it first)"),
        "{}",
        stderr(&o)
    );
    // An input given twice, or inside another, would index its documents twice.
    let latin1 = dir.join("latin1.txt");
    for (args, says) in [
        (
            vec![dir.to_str().unwrap(), latin1.to_str().unwrap()],
            "is inside",
        ),
        (
            vec![latin1.to_str().unwrap(), dir.to_str().unwrap()],
            "is a directory holding",
        ),
        (vec!["-", "-"], "- (standard input) is given twice"),
    ] {
        let o = pocketdex(&[&["build"][..], &args, &["-o", &index]].concat());
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

#[test]
fn failed_build_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("only-empty");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("e.txt"), "   ").unwrap();
    let out = tmp.path().join("never.pdx");
    let o = pocketdex(&["build", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("pdx"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn verify_exits_2_on_a_flipped_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let mut bytes = std::fs::read(&index).unwrap();
    let n = bytes.len();
    for at in [9, n / 3, n / 2, n - 20, n - 3] {
        bytes[at] ^= 1;
        std::fs::write(&index, &bytes).unwrap();
        let o = pocketdex(&["verify", &index]);
        assert_eq!(o.status.code(), Some(2), "byte {at}");
        assert!(
            stderr(&o).contains("rebuild")
                || stderr(&o).contains("restore")
                || stderr(&o).contains("copy"),
            "{}",
            stderr(&o)
        );
        bytes[at] ^= 1;
    }
}

/// `query --similar`: a copy of an article with a quarter of its words replaced, which the
/// near-duplicate codes of a 2-million-document index miss, is found through the similar path;
/// `--similar-probes` needs `--similar`; `info` says what the similar path is.
#[test]
fn similar_finds_a_heavily_edited_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("big.pdx").display().to_string();
    let o = pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        &index,
        "--expected-docs",
        "2000000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = common::samples();
    // A long article (171 words: the fuzzy path alone, without the short path's probes, which
    // find a shorter one, such as Jupiter's 59 terms, edited as much).
    let j = docs.iter().position(|d| d.0 == "Morphine.txt").unwrap();
    let text = &docs[j].1;
    let n = text.split_whitespace().count() / 4;
    let mut rng = common::Rng::new(1);
    let edited = common::edit_words(text, &docs[j + 1].1, n, &mut rng);
    let query = tmp.path().join("edited.txt");
    std::fs::write(&query, edited).unwrap();
    let q = query.display().to_string();

    let o = pocketdex(&["query", &index, &q, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = pocketdex(&["query", &index, &q, "--json", "--similar"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["id"], "Morphine.txt", "{lines:?}");
    assert_eq!(lines[0]["path"], "similar");
    let stats = lines.last().unwrap();
    assert_eq!(stats["type"], "query");
    assert!(stats["lookups"].as_u64().unwrap() > 96, "{stats}");
    // The default threshold of --similar is 0.4: a query made of four articles scores about 0.5
    // against each, and keeps exactly the hits of `--threshold 0` that score at least 0.4,
    // among them one below 0.5.
    let mix: String = ["Jupiter.txt", "Abacus.txt", "Academic_art.txt", "1.txt"]
        .iter()
        .map(|n| std::fs::read_to_string(root().join("samples/wiki-en").join(n)).unwrap())
        .collect();
    let mixed = tmp.path().join("mix.txt");
    std::fs::write(&mixed, mix).unwrap();
    let m = mixed.display().to_string();
    let hits = |extra: &[&str]| -> Vec<(String, f64)> {
        let mut args = vec!["query", index.as_str(), m.as_str(), "--json", "--similar"];
        args.extend_from_slice(extra);
        stdout(&pocketdex(&args))
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["type"] == "hit")
            .map(|v| {
                (
                    v["id"].as_str().unwrap().to_string(),
                    v["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // -t is --threshold, as in check, dups, report and eval.
    let all = hits(&["-t", "0"]);
    let kept: Vec<(String, f64)> = all.iter().filter(|h| h.1 >= 0.4).cloned().collect();
    assert_eq!(hits(&[]), kept, "{all:?}");
    assert!(kept.iter().any(|h| h.1 < 0.5), "{all:?}");

    let o = pocketdex(&["query", &index, &q, "--similar-probes", "8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--similar"), "{}", stderr(&o));
    let o = pocketdex(&["info", &index]);
    assert!(
        stdout(&o).contains("similar path      every document: 2 weighted MinHash bands × 3 rows"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("short path        documents with < 60 terms: 6 weighted MinHash bands × 3 rows; 4 lookups per band at query time"),
        "{}",
        stdout(&o)
    );

    // A short query looks up each of its 6 short bands 4 times, or once with --short-probes 1.
    let short: String = text
        .split_whitespace()
        .take(25)
        .collect::<Vec<_>>()
        .join(" ");
    let q = tmp.path().join("short.txt");
    std::fs::write(&q, short).unwrap();
    let q = q.display().to_string();
    let lookups = |extra: &[&str]| -> u64 {
        let o = pocketdex(&[&["query", &index, &q, "--json"], extra].concat());
        let stats: serde_json::Value =
            serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
        assert_eq!(stats["type"], "query");
        stats["lookups"].as_u64().unwrap()
    };
    assert_eq!(lookups(&[]), lookups(&["--short-probes", "1"]) + 6 * 3);
    assert_eq!(lookups(&["--short-probes", "1"]) % 6, 0);
}

/// `build --resolution`: three numbers take the similar rows the size ladder pairs with that
/// many samples, a fourth sets them, anything else is refused with an example.
#[test]
fn resolution_option_with_three_or_four_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("r.pdx").display().to_string();
    let build = |resolution: &str| {
        let args = [
            "build",
            "samples/wiki-en",
            "-o",
            &index,
            "--resolution",
            resolution,
            "-q",
        ];
        pocketdex(&args)
    };
    for (given, rows) in [("4,0,2", 1), ("4,1,2", 2), ("4,2,3", 4), ("4,2,3,3", 3)] {
        let o = build(given);
        assert!(o.status.success(), "{given}: {}", stderr(&o));
        let info: serde_json::Value =
            serde_json::from_slice(&pocketdex(&["info", &index, "--json"]).stdout).unwrap();
        assert_eq!(info["resolution"]["similar_rows"], rows, "{given}: {info}");
    }
    for bad in ["4,2", "4,2,3,3,1", "4,x,3", "4,2,3,0", "4,2,3,5"] {
        let o = build(bad);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let e = stderr(&o);
        assert!(e.contains("resolution") || e.contains("rows"), "{bad}: {e}");
    }
}

/// A reader that stops early (`pocketdex query … | head -n 1`) is not an error: the closed pipe
/// ends the command quietly with status 0, for a directory of queries and for JSON Lines (whose
/// batches are written from inside the library's reading loop), as text and as JSON.
#[test]
fn closed_stdout_exits_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let jsonl = tmp.path().join("queries.jsonl");
    let lines: Vec<String> = common::samples()
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let jsonl = jsonl.to_str().unwrap();
    for (input, extra) in [
        ("samples/wiki-en", &[][..]),
        ("samples/wiki-en", &["--json"][..]),
        (jsonl, &[][..]),
        (jsonl, &["--json"][..]),
    ] {
        // Every hit of every sample article (a few hundred kilobytes, more than a pipe holds).
        let mut child = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
            .args(["query", &index, input, "--threshold", "0", "--similar"])
            .args(extra)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        // The reader is dropped here: the pipe is closed with most of the output unwritten.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(out.stderr.is_empty(), "{}", stderr(&out));
    }
}

/// Every command that writes results to stdout ends quietly when stdout is a pipe whose reader
/// is gone (`… | head -n 0`): the write fails with "broken pipe", which is not an error of the
/// command. Its status is 0, but for the commands whose status is their answer (`query`,
/// `check`, `dups`), which keep it: `check` of a near copy says 1 (see also
/// `sets_cli::a_closed_output_changes_no_verdict`).
#[test]
fn every_command_exits_quietly_on_a_closed_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("x.pdx");
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (file, set) = (s(&file), s(&tmp.path().join("set")));
    assert!(pocketdex(&["build", "samples/wiki-en", "-o", &file, "-q"])
        .status
        .success());
    assert!(pocketdex(&["add", &set, "samples/wiki-en", "-q"])
        .status
        .success());
    let edited = "samples/query/edited.txt";
    let jupiter = "samples/wiki-en/Jupiter.txt";
    let commands: Vec<Vec<&str>> = vec![
        vec!["info", &file],
        vec!["info", &set, "--json"],
        vec!["verify", &file, &set],
        vec!["query", &set, edited],
        vec!["query", &file, edited, "--json"],
        vec!["check", &set, edited],
        vec!["check", &set, edited, "--json"],
        vec![
            "dups",
            "samples/wiki-en",
            "samples/query",
            "--method",
            "fuzzy",
            "-q",
        ],
        vec![
            "dups",
            "samples/wiki-en",
            "samples/query",
            "--method",
            "fuzzy",
            "-q",
            "--json",
        ],
        vec!["compare", edited, jupiter],
        vec!["--help"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
            .args(&args)
            .current_dir(root())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let answer = if args[0] == "check" { 1 } else { 0 };
        assert_eq!(o.status.code(), Some(answer), "{args:?}: {}", stderr(&o));
        assert!(o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
    }
}

/// `pocketdex ARGS` as an unprivileged user when the tests run as root (as CI does), so that
/// file permissions apply to it. It then runs a copy of the binary in `dir` (a test's temporary
/// directory, opened to that user), from `dir`: the checkout may be closed to other users.
fn unprivileged(args: &[&str], dir: &Path) -> Command {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pocketdex"));
        c.args(args).current_dir(root());
        return c;
    }
    let bin = dir.join("pocketdex-bin");
    if !bin.exists() {
        std::fs::copy(env!("CARGO_BIN_EXE_pocketdex"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut c = Command::new(bin);
    c.args(args).current_dir(dir).uid(65534).gid(65534);
    c
}

/// Spawns `c`, again while its binary is "busy": a child another test thread forks while the
/// copy is being written holds the file open for writing until it executes its own program.
fn spawn(c: &mut Command) -> std::process::Child {
    for _ in 0..100 {
        match c.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
    panic!("the binary stays busy")
}

/// `c`'s output, spawned with [`spawn`].
fn output(mut c: Command) -> std::process::Output {
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    spawn(&mut c).wait_with_output().unwrap()
}

/// An output directory that cannot be written is reported before any document is read (the
/// build reads stdin, which stays open: reading it first would never end), naming the OS error
/// once.
#[test]
fn an_unwritable_output_is_reported_before_reading() {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = ro.join("x.pdx");
    let mut child = spawn(
        unprivileged(&["build", "-", "-o", out.to_str().unwrap()], tmp.path())
            .stdin(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let stdin = child.stdin.take(); // kept open until the build has ended
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the build waits for its input before checking its output"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write") && err.contains("ro"), "{err}");
    assert_eq!(err.matches("Permission denied").count(), 1, "{err}");
    assert_eq!(err.matches("os error 13").count(), 1, "{err}");
}

#[test]
fn os_errors_are_printed_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.pdx");
    let o = pocketdex(&["build", "no/such/input", "-o", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("no/such/input"), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}

/// A directory where a file is expected: the output of a build, or an index that is not a set.
#[test]
fn directories_in_place_of_files_say_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let o = pocketdex(&["build", "samples/wiki-en/Crab.txt", "-o", dir]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a directory; give the name of the file to write"),
        "{}",
        stderr(&o)
    );
    for args in [
        vec!["query", dir, "samples/query/edited.txt"],
        vec!["info", dir],
        vec!["verify", dir],
        vec!["check", dir, "samples/query/edited.txt"],
    ] {
        let o = pocketdex(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            err.contains("is a directory but not an index set") && err.contains("pass an index"),
            "{args:?}: {err}"
        );
    }
}

/// `pocketdex ARGS` with `input` on its stdin.
fn with_stdin(args: &[&str], input: &str) -> std::process::Output {
    use std::process::Stdio;
    let mut c = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    // A command may stop reading early (a document over the limit): a closed pipe is fine.
    let _ = std::io::Write::write_all(&mut stdin, input.as_bytes());
    drop(stdin);
    c.wait_with_output().unwrap()
}

/// A document over --max-doc-bytes, a file or a JSON Lines record, is skipped with a message
/// that names it and the limit; the rest is indexed.
#[test]
fn documents_over_the_size_limit_are_skipped_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir(&dir).unwrap();
    let crab = std::fs::read_to_string(root().join("samples/wiki-en/Crab.txt")).unwrap();
    std::fs::write(dir.join("small.txt"), &crab).unwrap();
    std::fs::write(dir.join("big.txt"), crab.repeat(4)).unwrap();
    let jsonl = tmp.path().join("more.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": "long", "text": crab.repeat(4)}),
            serde_json::json!({"id": "short", "text": "A short record about tide pools."}),
        ),
    )
    .unwrap();
    let index = tmp.path().join("x.pdx");
    let o = pocketdex(&[
        "build",
        dir.to_str().unwrap(),
        jsonl.to_str().unwrap(),
        "--max-doc-bytes",
        "1K",
        "-o",
        index.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("skipped big.txt: 2.3 KiB, over the limit of 1 KiB per document"),
        "{err}"
    );
    let line = format!("skipped {}:1: ", jsonl.display());
    assert!(
        err.contains(&line) && err.contains("over the limit of 1 KiB"),
        "{err}"
    );
    assert!(
        err.contains("indexed 2 documents") && err.contains("2 skipped"),
        "{err}"
    );
    assert!(err.contains("--max-doc-bytes"), "{err}");
    // What was indexed answers; one document on stdin over the limit is refused as well.
    let o = pocketdex(&["query", index.to_str().unwrap(), "samples/wiki-en/Crab.txt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_stdin(
        &[
            "query",
            index.to_str().unwrap(),
            "-",
            "--max-doc-bytes",
            "100",
        ],
        &crab,
    );
    assert!(stderr(&o).contains("-: "), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("over the limit of 100 B"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&[
        "build",
        "samples/wiki-en",
        "--max-doc-bytes",
        "64X",
        "-o",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("64M"), "{}", stderr(&o));
}

/// `-` follows one rule in every command: JSON Lines when its first non-blank character is
/// `{`, one document (labelled `-`) otherwise; --stdin-format overrides it.
#[test]
fn stdin_is_read_by_one_rule_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("x.pdx");
    let index = index.to_str().unwrap();
    let jupiter = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    let crab = std::fs::read_to_string(root().join("samples/wiki-en/Crab.txt")).unwrap();
    let jsonl = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "jup", "text": jupiter}),
        serde_json::json!({"id": "crab", "text": crab}),
    );
    // build: plain text is one document named -, JSON Lines are records.
    let o = with_stdin(&["build", "-", "-o", index], &jupiter);
    assert!(stderr(&o).contains("indexed 1 document "), "{}", stderr(&o));
    let o = with_stdin(&["build", "-", "-o", index], &jsonl);
    assert!(stderr(&o).contains("indexed 2 documents"), "{}", stderr(&o));
    // query: the same two readings.
    let o = with_stdin(&["query", index, "-", "--json"], &jsonl);
    let queries: Vec<String> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "query")
        .map(|v| v["query"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(queries, ["jup", "crab"]);
    let o = with_stdin(&["query", index, "-"], &crab);
    assert!(stdout(&o).starts_with("-: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("crab"), "{}", stdout(&o));
    // Overridden: JSON Lines read as one document, text read as JSON Lines.
    let o = with_stdin(&["query", index, "-", "--stdin-format", "text"], &jsonl);
    assert_eq!(
        stdout(&o).lines().filter(|l| l.starts_with("-: ")).count(),
        1
    );
    let o = with_stdin(&["query", index, "-", "--stdin-format", "jsonl"], &crab);
    assert!(
        stderr(&o).contains("invalid JSON at line 1"),
        "{}",
        stderr(&o)
    );
    // check reads it alike.
    let o = with_stdin(&["check", index, "-"], &crab);
    assert!(
        stdout(&o).starts_with("-: near copy of crab"),
        "{}",
        stdout(&o)
    );
}

/// Names with newlines, tabs and terminal escapes are shown escaped in text output, exactly in
/// JSON output. `build` refuses such ids (no one could type them to `delete`), so the index
/// that holds one is written by the library, as a pocketdex before 2026-11-28 wrote it.
#[test]
fn control_characters_in_names_are_escaped_in_text_output() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("x.pdx");
    let index = index.to_str().unwrap();
    let crab = std::fs::read_to_string(root().join("samples/wiki-en/Crab.txt")).unwrap();
    let evil = "forged\nline\t\u{1b}[31mred\u{202e}";
    let jsonl = tmp.path().join("evil.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": evil, "title": "t\u{1b}]0;x\u{7}", "text": crab}),
            serde_json::json!({"id": "empty\u{1b}[2J", "text": " "}),
        ),
    )
    .unwrap();
    let o = pocketdex(&["build", jsonl.to_str().unwrap(), "-o", index]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("skipped forged\\nline\\t\\u{1b}[31mred\\u{202e}: its id is blank or holds control characters"),
        "{err}"
    );
    assert!(err.contains("skipped empty\\u{1b}[2J: empty"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    let mut b =
        pocketdex::IndexBuilder::for_lang(pocketdex::Lang::En, pocketdex::Params::default())
            .unwrap();
    b.add(evil, Some("t\u{1b}]0;x\u{7}"), &crab);
    let mut bytes = Vec::new();
    b.finish(&mut bytes).unwrap();
    std::fs::write(index, bytes).unwrap();
    let o = pocketdex(&["query", index, "samples/wiki-en/Crab.txt"]);
    let out = stdout(&o);
    assert!(
        out.contains("forged\\nline\\t\\u{1b}[31mred\\u{202e}"),
        "{out}"
    );
    assert!(out.contains("t\\u{1b}]0;x\\u{7}"), "{out}");
    assert!(!out.contains('\u{1b}') && out.lines().count() == 2, "{out}");
    let o = pocketdex(&["query", index, "samples/wiki-en/Crab.txt", "--json"]);
    let hit: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(hit["id"], evil);
    let o = pocketdex(&["check", index, "samples/wiki-en/Crab.txt"]);
    assert!(
        stdout(&o).contains("near copy of forged\\nline"),
        "{}",
        stdout(&o)
    );
    // And in error messages: a missing index whose name holds a newline and an escape.
    let o = pocketdex(&[
        "query",
        "gone\nforged\u{1b}[31m.pdx",
        "samples/wiki-en/Crab.txt",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("gone\\nforged\\u{1b}[31m.pdx") && stderr(&o).lines().count() == 1,
        "{}",
        stderr(&o)
    );
}

#[test]
fn rough_edges_of_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    // --top 0 would print nothing and succeed: refused.
    for cmd in ["query", "check"] {
        let o = pocketdex(&[cmd, &index, "samples/query/edited.txt", "--top", "0"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(stderr(&o).contains("--top"), "{cmd}: {}", stderr(&o));
    }
    // A negative number is an option's value, refused by its range (clap's tip to write
    // `-- -3` would make it a DOC); eval's --top and --probes are at least 1; --out a file.
    let o = pocketdex(&[
        "query",
        &index,
        "samples/query/edited.txt",
        "--threshold",
        "-0.5",
    ]);
    assert!(
        stderr(&o).contains("--threshold must be between 0 and 1, not -0.5"),
        "{}",
        stderr(&o)
    );
    for opt in ["--top", "--probes"] {
        let o = pocketdex(&["eval", "samples/wiki-en", opt, "0"]);
        assert_eq!(o.status.code(), Some(2), "{opt}");
        assert!(stderr(&o).contains(opt), "{}", stderr(&o));
    }
    let o = pocketdex(&["eval", "samples/wiki-en", "--out", "README.md"]);
    assert!(stderr(&o).contains("README.md is a file"), "{}", stderr(&o));
    let o = build(Path::new("samples/wiki-en"), Path::new("README.md/x.pdx"));
    assert!(
        stderr(&o).contains("README.md is a file, not a directory"),
        "{}",
        stderr(&o)
    );
    // synth reports what it skipped, as build does, and writes only JSON Lines.
    let jsonl = tmp.path().join("s.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"a\", \"text\": \"one two\"}\n{\"id\": 1.5, \"text\": \"x\"}\nnot json\n",
    )
    .unwrap();
    let synth_out = tmp.path().join("out.jsonl");
    let o = pocketdex(&[
        "synth",
        jsonl.to_str().unwrap(),
        "-o",
        synth_out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wrote 1 document and 0 edited copies")
            && stderr(&o)
                .contains("2 inputs skipped (1 with a field of the wrong type, 1 invalid JSON)"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["synth", jsonl.to_str().unwrap(), "-o", "x.parquet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("synth writes JSON Lines"),
        "{}",
        stderr(&o)
    );
    // Nothing to index says why each input was skipped.
    let dir = tmp.path().join("nothing");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("e.txt"), "  ").unwrap();
    let out = tmp.path().join("n.pdx");
    let o = build(&dir.join("e.txt"), &out);
    assert!(
        stderr(&o)
            .contains("no documents to index: the one document read was skipped (e.txt: empty)"),
        "{}",
        stderr(&o)
    );
    std::fs::write(dir.join("b.bin"), [0u8, 1, 2, 3]).unwrap();
    std::fs::write(dir.join("f.txt"), "\n").unwrap();
    let o = pocketdex(&[
        "build",
        dir.to_str().unwrap(),
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(err.contains("skipped b.bin: binary"), "{err}");
    assert!(
        err.contains("all 3 documents read were skipped (2 empty, 1 binary; listed above)"),
        "{err}"
    );
    let set = tmp.path().join("set");
    let o = pocketdex(&["add", set.to_str().unwrap(), dir.to_str().unwrap(), "-q"]);
    assert!(
        stderr(&o).contains("no documents to add: all 3 documents read"),
        "{}",
        stderr(&o)
    );
    // A JSON error is placed by the file's line and column.
    let jsonl = tmp.path().join("j.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"a\", \"text\": \"hello world\"}\n{\"id\": \"b\", \"text\": bad}\n",
    )
    .unwrap();
    let o = build(&jsonl, &out);
    assert!(
        stderr(&o).contains(":2: invalid JSON at line 2, column 21: expected value"),
        "{}",
        stderr(&o)
    );
    // Singular and plural, rates without decimals.
    assert!(
        stderr(&o).contains("indexed 1 document ("),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("docs/s"), "{}", stderr(&o));
}

/// Several INDEX or DOC arguments: a bad one is reported and the others still answered; the
/// same index twice is refused (its hits would count twice); an empty directory as DOC is an
/// error, not "no hits"; a damaged block names its file, once, in `query` and `verify`.
#[test]
fn each_argument_is_answered_or_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let missing = tmp.path().join("missing.pdx");
    let o = pocketdex(&["info", missing.to_str().unwrap(), &index]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("pocketdex index, format version"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("missing.pdx"), "{}", stderr(&o));

    let doc = "samples/query/edited.txt";
    let twice = tmp.path().join(".").join("wiki.pdx");
    let o = pocketdex(&["query", &index, "--index", twice.to_str().unwrap(), doc]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("are the same index"), "{}", stderr(&o));

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = pocketdex(&["query", &index, empty.to_str().unwrap(), doc, "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("empty: no documents in it"),
        "{}",
        stderr(&o)
    );
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "error");
    assert!(
        lines.iter().any(|l| l["type"] == "hit"),
        "the other DOC is answered"
    );

    // Damage in the sketches: open succeeds, the query's read of the block fails.
    let bytes = std::fs::read(&index).unwrap();
    let info: serde_json::Value =
        serde_json::from_slice(&pocketdex(&["info", &index, "--json"]).stdout).unwrap();
    let sketches = info["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "SKETCHES")
        .expect("a SKETCHES section");
    let mut bad = bytes.clone();
    bad[sketches["offset"].as_u64().unwrap() as usize + 5] ^= 0x40;
    let damaged = tmp.path().join("damaged.pdx");
    std::fs::write(&damaged, &bad).unwrap();
    let d = damaged.to_str().unwrap();
    let o = pocketdex(&["query", &index, "--index", d, doc]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{d}: SKETCHES block 0")) && !err.contains("I/O"),
        "{err}"
    );
    let o = pocketdex(&["verify", d]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).matches(d).count(), 1, "{}", stderr(&o));

    // A set where one index file is taken says how to make one (it said "No such device").
    let set = tmp.path().join("set");
    let o = pocketdex(&["add", set.to_str().unwrap(), "samples/wiki-en", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = pocketdex(&["eval", "samples/wiki-en", "--index", set.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is an index set and this takes one index file")
            && stderr(&o).contains("merge"),
        "{}",
        stderr(&o)
    );
}

/// A DOC that cannot be read (a file named .parquet that is not Parquet, JSON Lines whose every
/// line is broken) is an error line of its own and exit status 2, not "no hit", and the other
/// DOCs are still answered; a swapped INDEX and DOC, an empty index file and `--top 0` are
/// named for what they are; indexes of other settings queried together get a note.
#[test]
fn unreadable_docs_are_errors_and_mistakes_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build_sample(tmp.path());
    let doc = "samples/query/edited.txt";
    let fake = tmp.path().join("fake.parquet");
    std::fs::write(&fake, "id,text\n1,not parquet at all\n").unwrap();
    let o = pocketdex(&["query", &index, fake.to_str().unwrap(), doc, "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "error", "{}", stdout(&o));
    assert!(lines[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("not a Parquet file"));
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "hit" && l["id"] == "Jupiter.txt"),
        "the other DOC is answered: {}",
        stdout(&o)
    );

    let broken = tmp.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"id\": 1, \"text\": \n{not json}\n").unwrap();
    let o = pocketdex(&["query", &index, broken.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("invalid JSON"), "{}", stderr(&o));
    // An empty file has nothing to look up: no hit, as documented, not an error.
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let o = pocketdex(&["query", &index, empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // But a DOC that was not looked up (binary, a record without text) leaves "no hit"
    // unknown: exit 2, not the 1 a script takes for "no near copy".
    let binary = tmp.path().join("doc.gz");
    std::fs::write(&binary, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03").unwrap();
    let o = pocketdex(&["query", &index, binary.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gzip-compressed: decompress it first")
            && stderr(&o).contains("1 DOC was not looked up"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["query", &index, doc, binary.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a hit of another DOC: {}",
        stderr(&o)
    );
    let records = tmp.path().join("records.jsonl");
    std::fs::write(&records, "{\"id\": \"a\", \"body\": \"Jupiter\"}\n").unwrap();
    let o = pocketdex(&["query", &index, records.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A directory whose other documents were looked up is answered: no hit is no hit.
    let queries = tmp.path().join("queries");
    std::fs::create_dir(&queries).unwrap();
    std::fs::copy(&binary, queries.join("doc.gz")).unwrap();
    std::fs::write(
        queries.join("new.txt"),
        "zebra quagga okapi savanna stripes herd",
    )
    .unwrap();
    let o = pocketdex(&["query", &index, queries.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let named = [
        (vec!["query", doc, &index], "the index comes first"),
        (
            vec!["query", empty.to_str().unwrap(), doc],
            "the file is empty",
        ),
        (
            vec!["query", &index, doc, "--top", "0"],
            "must be at least 1",
        ),
    ];
    for (args, says) in named {
        failed_with(&pocketdex(&args), says);
    }

    // A German index beside an English one: each queried with its own settings, with a note;
    // the DOC's terms are counted as INDEX counts them, whatever comes after it.
    let de = tmp.path().join("de.pdx");
    let o = pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        de.to_str().unwrap(),
        "--lang",
        "de",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let terms = |args: &[&str]| {
        let o = pocketdex(args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let last: serde_json::Value =
            serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
        (last["terms"].as_u64().unwrap(), stderr(&o))
    };
    let de = de.to_str().unwrap();
    let (alone, quiet) = terms(&["query", &index, doc, "--json"]);
    assert!(!quiet.contains("note"), "{quiet}");
    let (mixed, note) = terms(&["query", &index, "--index", de, doc, "--json"]);
    assert_eq!(alone, mixed);
    assert!(note.contains("built with other settings"), "{note}");
    let (de_alone, _) = terms(&["query", de, doc, "--json"]);
    let (de_first, _) = terms(&["query", de, "--index", &index, doc, "--json"]);
    assert_eq!(de_alone, de_first);
    assert_ne!(alone, de_alone, "German stopwords are other terms");
    // The same id in both: each of its hits names the index that holds it.
    let both = stdout(&pocketdex(&["query", &index, "--index", de, doc]));
    let mut got: Vec<&str> = both
        .lines()
        .filter(|l| l.contains("Jupiter.txt"))
        .map(|l| l.rsplit("  in ").next().unwrap())
        .collect();
    let mut want = vec![index.as_str(), de];
    got.sort();
    want.sort();
    assert_eq!(got, want, "{both}");
    let alone = stdout(&pocketdex(&["query", &index, doc, "--json"]));
    assert!(
        alone.contains("Jupiter.txt") && !alone.contains("\"index\""),
        "{alone}"
    );
}

/// The build summary and `info` give one figure for bytes per document beyond the names and
/// titles; `info --json` prints parameters as they were given.
#[test]
fn build_and_info_agree_on_bytes_beyond_names() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t.pdx");
    let jsonl = tmp.path().join("titled.jsonl");
    let lines: Vec<String> = common::samples()
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "title": id, "text": text}).to_string())
        .collect();
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let o = build(&jsonl, &out);
    let err = stderr(&o);
    let built: f64 = err
        .split(", ")
        .find_map(|p| p.strip_suffix(" beyond names and titles\n"))
        .unwrap_or_else(|| panic!("{err}"))
        .parse()
        .unwrap();
    let o = pocketdex(&["info", out.to_str().unwrap(), "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let shown = info["bytes_per_document_beyond_names"].as_f64().unwrap();
    assert_eq!(format!("{built:.1}"), format!("{shown:.1}"));
    let text = stdout(&pocketdex(&["info", out.to_str().unwrap()]));
    assert!(
        text.contains(&format!("({built:.1} beyond names and titles)")),
        "{text}"
    );
    assert_eq!(
        info["params"]["schemes"],
        serde_json::json!([[-0.45, 0.45]])
    );
    assert!(!stdout(&o).contains("99999"), "{}", stdout(&o));
}

/// `info` says where the idf table came from and how many terms each view weighs: the golden
/// file of long documents has sketch-only entries, a build of the samples has none, a set's
/// segment has the language's table.
#[test]
fn info_shows_the_idf_table() {
    let golden = common::root().join("tests/golden/v11.pdx");
    let text = stdout(&pocketdex(&["info", golden.to_str().unwrap()]));
    assert!(
        text.contains("idf table         learned from 30 documents: 515 terms weigh the samples (others 3.06), 1,214 the sketch (others 3.31)"),
        "{text}"
    );
    let o = pocketdex(&["info", golden.to_str().unwrap(), "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        info["idf"],
        serde_json::json!({"learned_from": 30, "terms": 515, "sketch_terms": 1214,
                           "default": 3.0625, "sketch_default": 3.3125})
    );
    let v9 = common::root().join("tests/golden/v9.pdx");
    let text = stdout(&pocketdex(&["info", v9.to_str().unwrap()]));
    assert!(
        text.contains("idf table         the language's: 10,000 terms (others 8.06)"),
        "{text}"
    );
}

/// An unreadable subdirectory is skipped and reported like an unreadable file; the rest is
/// indexed (run unprivileged, so that permissions apply).
#[test]
fn unreadable_files_and_directories_are_skipped_alike() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (name, sample) in [
        ("a.txt", "Crab.txt"),
        ("u.txt", "Jupiter.txt"),
        ("sub/b.txt", "Abacus.txt"),
    ] {
        std::fs::copy(root().join("samples/wiki-en").join(sample), dir.join(name)).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.join("u.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(dir.join("sub"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = tmp.path().join("x.pdx");
    let o = output(unprivileged(
        &["build", dir.to_str().unwrap(), "-o", out.to_str().unwrap()],
        tmp.path(),
    ));
    let err = stderr(&o);
    // Written with the rest, and exit status 2: a script shipping it learns what is missing.
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.exists(), "{err}");
    assert!(
        err.contains("skipped u.txt: cannot read: Permission denied"),
        "{err}"
    );
    assert!(
        err.contains("skipped sub/: cannot read directory: Permission denied"),
        "{err}"
    );
    assert!(err.contains("indexed 1 document "), "{err}");
    let o = output(unprivileged(
        &["query", out.to_str().unwrap(), dir.to_str().unwrap()],
        tmp.path(),
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).contains("a.txt: "), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("sub/: cannot read directory"),
        "{}",
        stderr(&o)
    );
}

/// Every example command in `--help` is one command on its line, so that it can be pasted.
#[test]
fn help_examples_are_one_command_per_line() {
    let commands = [
        "build",
        "query",
        "add",
        "delete",
        "check",
        "merge",
        "info",
        "verify",
        "eval",
        "synth",
        "dups",
        "compare",
        "report",
        "dedup-run",
    ];
    // Each command's line in the list is its own summary (a doc comment that slid onto a
    // constant once gave synth the summary of the input options).
    let list = stdout(&pocketdex(&["--help"]));
    let synth = list
        .lines()
        .find(|l| l.trim_start().starts_with("synth "))
        .unwrap();
    assert!(synth.contains("Write development data"), "{synth}");
    let mut helps = vec![list.clone()];
    for c in commands {
        helps.push(stdout(&pocketdex(&["help", c])));
    }
    helps.push(stdout(&pocketdex(&["help", "reference", "build"])));
    for help in &helps {
        for line in help.lines() {
            let invocations = commands
                .iter()
                .map(|c| line.matches(&format!("pocketdex {c} ")).count())
                .sum::<usize>();
            assert!(invocations <= 1, "{line}");
            if invocations == 1 && line.trim_start().starts_with("pocketdex ") {
                assert!(line.starts_with("  pocketdex "), "{line}");
            }
        }
    }
}

/// A JSON Lines input that is a named pipe is read once, as it streams: the build does not
/// count its lines first (which read the pipe to its end and left the build waiting for a
/// second writer that never came). It says that it reads a named pipe, which waits for a
/// writer (before, a build waiting for one showed nothing).
#[test]
fn a_json_lines_pipe_is_built_from() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("docs.jsonl");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let lines: String = common::samples()
        .iter()
        .take(20)
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
        .collect();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, lines).unwrap())
    };
    let out = tmp.path().join("piped.pdx");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
        .args(["build", fifo.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            // Lets the writer finish, so that the test ends.
            let _ = std::fs::File::open(&fifo);
            panic!("the build of a named pipe did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    writer.join().unwrap();
    assert!(status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        err.contains(&format!(
            "reading the named pipe {} (this waits until a writer opens it)",
            fifo.display()
        )),
        "{err}"
    );
    let o = pocketdex(&["info", out.to_str().unwrap(), "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["documents"], 20);
}

/// Repeated ids are reported once every document is in: how many documents repeat an earlier
/// one's id, and the first of them in input order; every document is indexed.
#[test]
fn repeated_ids_are_counted_and_the_first_named() {
    let tmp = tempfile::tempdir().unwrap();
    let jsonl = tmp.path().join("ids.jsonl");
    // Documents 0..8 with ids a b c b a d a c: b (document 3), a (4), a (6) and c (7) repeat an
    // earlier id, the first of them b.
    let ids = ["a", "b", "c", "b", "a", "d", "a", "c"];
    let lines: String = common::samples()
        .iter()
        .zip(ids)
        .map(|((_, text), id)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
        .collect();
    std::fs::write(&jsonl, lines).unwrap();
    let index = tmp.path().join("ids.pdx");
    let o = build(&jsonl, &index);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "warning: 4 documents share an id with an earlier one (first: b); both are indexed"
        ),
        "{err}"
    );
    assert!(err.contains("indexed 8 documents"), "{err}");
    // Without repeats, no warning.
    let lines: String = common::samples()
        .iter()
        .take(8)
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
        .collect();
    std::fs::write(&jsonl, lines).unwrap();
    let o = build(&jsonl, &index);
    let err = stderr(&o);
    assert!(o.status.success() && !err.contains("share an id"), "{err}");
}

/// Outputs that would destroy something are refused before any work: an input given as the
/// output (build, dups, synth), a symbolic link or a device; `synth` writes atomically and
/// refuses sizes it cannot make.
#[test]
fn outputs_never_replace_inputs_links_or_devices() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = tmp.path().join("doc.txt");
    let text = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    std::fs::write(&doc, &text).unwrap();
    let d = doc.to_str().unwrap();
    let jsonl = tmp.path().join("in.jsonl");
    let line = format!("{}\n", serde_json::json!({"id": "a", "text": text}));
    std::fs::write(&jsonl, &line).unwrap();
    let j = jsonl.to_str().unwrap();
    for args in [
        vec!["build", d, "-o", d],
        vec!["dups", j, "-o", j],
        vec!["synth", j, "-o", j],
    ] {
        let o = pocketdex(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), text);
    assert_eq!(std::fs::read_to_string(&jsonl).unwrap(), line);
    let link = tmp.path().join("link.pdx");
    std::os::unix::fs::symlink(&doc, &link).unwrap();
    let o = build(&doc, &link);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let o = build(&doc, Path::new("/dev/null"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    // synth: sizes out of range are refused (not a panic), and the output is whole or absent.
    let out = tmp.path().join("gen.jsonl");
    let o = pocketdex(&[
        "synth",
        "--generate",
        "5",
        "--vocab-size",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists());
    let o = pocketdex(&[
        "synth",
        "--generate",
        "5",
        "--topics",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = pocketdex(&["synth", "--generate", "50", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 50);
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".pocketdex-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// An output that would replace a document below an input directory, or that the next run
/// would read back as one, is refused before any work, by every command that writes; an index
/// there (which readers skip as binary) may be written again, and `-o -` names no file.
#[test]
fn outputs_never_replace_documents_below_their_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir(&dir).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let jupiter = std::fs::read(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    std::fs::write(dir.join("Jupiter.txt"), &jupiter).unwrap();
    std::fs::copy(
        root().join("samples/query/edited.txt"),
        dir.join("edited.txt"),
    )
    .unwrap();
    let rows = dir.join("rows.jsonl");
    std::fs::write(&rows, "{\"id\": \"r\", \"text\": \"kept as it was\"}\n").unwrap();
    let d = s(&dir);
    let o = pocketdex(&["build", &d, "-o", &s(&dir.join("Jupiter.txt"))]);
    failed_with(&o, "is a file below the input directory");
    // Rows and copies below an input directory, existing or new, would be read back.
    for args in [
        vec!["dups", &d, "-o", &s(&rows)],
        vec!["synth", &d, "-o", &s(&dir.join("edited.txt"))],
        vec!["dups", &d, "-o", &s(&dir.join("new-rows.jsonl"))],
        vec!["synth", &d, "-o", &s(&dir.join("new-copies.jsonl"))],
    ] {
        let o = pocketdex(&args);
        failed_with(&o, "below the input directory");
    }
    assert!(!dir.join("new-rows.jsonl").exists() && !dir.join("new-copies.jsonl").exists());
    assert_eq!(std::fs::read(dir.join("Jupiter.txt")).unwrap(), jupiter);
    assert_eq!(
        std::fs::read_to_string(&rows).unwrap(),
        "{\"id\": \"r\", \"text\": \"kept as it was\"}\n"
    );
    // A report's or an evaluation's directory inside an input, or a file of theirs that is an
    // input: refused, nothing written.
    let out = dir.join("report");
    failed_with(
        &pocketdex(&["report", &d, "--out", &s(&out)]),
        "is inside the input directory",
    );
    assert!(!out.exists());
    let groups = tmp.path().join("groups.jsonl");
    std::fs::write(
        &groups,
        "{\"id\": \"g\", \"text\": \"a document named groups\"}\n",
    )
    .unwrap();
    failed_with(
        &pocketdex(&["report", &s(&groups), &d, "--out", &s(tmp.path())]),
        "is also an input",
    );
    failed_with(
        &pocketdex(&["eval", &d, "--out", &d]),
        "is inside the input directory",
    );
    // An index below the input directory is written again: readers skip it.
    let index = dir.join("index.pdx");
    assert!(pocketdex(&["build", &d, "-o", &s(&index), "-q"])
        .status
        .success());
    let o = pocketdex(&["build", &d, "-o", &s(&index), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // `-o -` is no file named `-`.
    for args in [vec!["build", &d, "-o", "-"], vec!["synth", &d, "-o", "-"]] {
        failed_with(&pocketdex(&args), "(standard output) is not supported here");
    }
    assert!(!root().join("-").exists());
}

/// `repair` drops only damaged or missing segments: one it cannot read for its permissions, or
/// one a newer pocketdex wrote, is refused with what to do, and the set is left as it was (run
/// unprivileged, so that permissions apply).
#[test]
fn repair_refuses_to_drop_a_sound_segment_it_cannot_read() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    let set_arg = set.to_str().unwrap();
    let samples = root().join("samples/wiki-en");
    let o = output(unprivileged(
        &["add", set_arg, samples.to_str().unwrap(), "-q"],
        tmp.path(),
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let segment = std::fs::read_dir(&set)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("seg-"))
        .unwrap();
    let before = std::fs::read(&segment).unwrap();
    std::fs::set_permissions(&segment, std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = output(unprivileged(&["repair", set_arg], tmp.path()));
    std::fs::set_permissions(&segment, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Permission denied") && err.contains("make it readable"),
        "{err}"
    );
    assert!(!set.join("damaged").exists(), "{err}");
    assert_eq!(std::fs::read(&segment).unwrap(), before);
    // A segment of a newer format version: upgrade, not rebuild, and nothing dropped.
    let mut newer = before.clone();
    newer[8] = 99;
    std::fs::write(&segment, &newer).unwrap();
    let o = pocketdex(&["repair", set_arg]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("index format version 99")
            && err.contains("upgrade pocketdex")
            && err.contains("written by a newer pocketdex"),
        "{err}"
    );
    assert!(!set.join("damaged").exists(), "{err}");
    std::fs::write(&segment, &before).unwrap();
    assert!(pocketdex(&["verify", set_arg]).status.success());
}

/// Paths that are not UTF-8 (a Latin-1 archive's names) are taken as INPUT and DOC, as they
/// are below a directory given.
#[cfg(unix)]
#[test]
fn paths_that_are_not_utf8_are_inputs_and_docs() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"d\xe9p\xf4t"));
    std::fs::create_dir(&dir).unwrap();
    let doc = dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"));
    std::fs::copy(root().join("samples/wiki-en/Jupiter.txt"), &doc).unwrap();
    let index = tmp.path().join("x.pdx");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_pocketdex"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = run(&[
        "build".as_ref(),
        dir.as_os_str(),
        "-o".as_ref(),
        index.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "query".as_ref(),
        index.as_os_str(),
        doc.as_os_str(),
        "--json".as_ref(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let hit: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(hit["id"], "caf\\xE9.txt");
    let o = run(&[
        "compare".as_ref(),
        doc.as_os_str(),
        "samples/wiki-en/Jupiter.txt".as_ref(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
