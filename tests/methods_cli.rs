//! The classical methods from the command line, as a user runs them: `dups` with every method
//! (text and --json, exit statuses, set-aside and skipped documents), `compare`, `report` (its
//! table and SVG plot) and `dedup-run`, in temporary directories of real text with planted
//! duplicates. Every score `dups --json` reports is checked against the pair's exact score
//! from the library's `compare`.

use crate::common;

use common::{failed_with, pocketdex, root, stderr, stdout};
use pocketdex_methods::compare::{compare, Input};
use pocketdex_methods::exact::Exact;
use pocketdex_methods::fuzzy::Fuzzy;
use pocketdex_methods::minhash::Minhash;
use pocketdex_methods::simhash::Simhash;
use pocketdex_methods::spex::Spex;
use pocketdex_methods::spotsigs::Spotsigs;
use pocketdex_methods::trials::Trials;
use pocketdex_methods::{Method, Options};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// 40 sample articles, Jupiter and its edited copy (five words changed), Abacus with an
/// identical copy and an HTML copy, an error page and an empty file.
fn collection(dir: &Path) -> PathBuf {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let samples = root().join("samples/wiki-en");
    let mut names: Vec<String> = std::fs::read_dir(&samples)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in names
        .iter()
        .take(40)
        .chain(["Jupiter.txt".to_string()].iter())
    {
        std::fs::copy(samples.join(n), input.join(n)).unwrap();
    }
    std::fs::copy(
        root().join("samples/query/edited.txt"),
        input.join("Jupiter-edited.txt"),
    )
    .unwrap();
    let abacus = std::fs::read_to_string(samples.join("Abacus.txt")).unwrap();
    std::fs::write(input.join("copy-Abacus.txt"), &abacus).unwrap();
    std::fs::write(
        input.join("Abacus.html"),
        format!(
            "<!DOCTYPE html><html><head><title>x</title></head><body><p>{abacus}</p></body></html>"
        ),
    )
    .unwrap();
    std::fs::write(
        input.join("error.html"),
        "<html><body><h1>404 Not Found</h1><hr><p>nginx/1.18.0</p></body></html>",
    )
    .unwrap();
    std::fs::write(input.join("empty.txt"), "").unwrap();
    input
}

fn text_of(input: &Path, id: &str) -> String {
    let item = pocketdex::corpus::read_file(&input.join(id), id.to_string());
    match item {
        pocketdex::corpus::Item::Doc(d) => d.text,
        other => panic!("{other:?}"),
    }
}

/// The exact score `compare` gives a pair for a method (None for fuzzy: tf-idf needs the
/// collection).
fn exact_score(method: &dyn Method, a: &str, b: &str) -> Option<f64> {
    let c = compare(
        Input { raw: a, plain: a },
        Input { raw: b, plain: b },
        &Options::default(),
    )
    .unwrap();
    Some(match method.name() {
        "exact" => 1.0,
        "minhash" => c.minhash.jaccard.score,
        "trials" => c.trials.jaccard.score,
        "spex" => c.spex.score,
        "spotsigs" => c.spotsigs.jaccard.score,
        "simhash" => c.simhash.cosine,
        "fuzzy" => return None,
        other => panic!("no exact score for {other}"),
    })
}

fn group_with<'a>(groups: &'a [Value], id: &str) -> Option<&'a Value> {
    groups
        .iter()
        .find(|g| g["members"].as_array().unwrap().iter().any(|m| m == id))
}

#[test]
fn dups_every_method_json_agrees_with_exact_scores() {
    let tmp = tempfile::tempdir().unwrap();
    let input = collection(tmp.path());
    let dir = input.to_str().unwrap();
    // (method, is the edited Jupiter found at the default threshold?)
    let expect: [(&dyn Method, bool); 7] = [
        (&Exact, false),
        (&Fuzzy, true),
        (&Minhash, false),
        (&Trials, false),
        (&Spex, true),
        // SpotSigs: weighted Jaccard 0.600 (as sets, 0.583).
        (&Spotsigs, true),
        (&Simhash, true),
    ];
    for (method, jupiter) in expect {
        let o = pocketdex(&["dups", dir, "--method", method.name(), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{method:?}: {}", stderr(&o));
        let all = lines(&o);
        let summary = all.last().unwrap();
        assert_eq!(summary["type"], "summary", "{method:?}");
        assert_eq!(summary["method"], method.name());
        assert_eq!(summary["skipped"], 1, "empty.txt is skipped");
        let threshold = summary["threshold"].as_f64().unwrap();
        let groups: Vec<Value> = all
            .iter()
            .filter(|v| v.get("members").is_some())
            .cloned()
            .collect();
        assert_eq!(summary["groups"].as_u64().unwrap() as usize, groups.len());
        // The three Abacus documents are one group for every method.
        let abacus =
            group_with(&groups, "Abacus.txt").unwrap_or_else(|| panic!("{method:?}: {groups:?}"));
        let mut members: Vec<&str> = abacus["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        members.sort();
        assert_eq!(
            members,
            ["Abacus.html", "Abacus.txt", "copy-Abacus.txt"],
            "{method:?}"
        );
        let found_jupiter = group_with(&groups, "Jupiter-edited.txt").is_some_and(|g| {
            g["members"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m == "Jupiter.txt")
        });
        assert_eq!(found_jupiter, jupiter, "{method:?}");
        for g in &groups {
            assert_eq!(
                g["size"].as_u64().unwrap() as usize,
                g["members"].as_array().unwrap().len()
            );
            for p in g["pairs"].as_array().unwrap() {
                let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
                let score = p["score"].as_f64().unwrap();
                assert!(
                    score + 1e-9 >= threshold,
                    "{method:?}: {p} below {threshold}"
                );
                if let Some(want) = exact_score(method, &text_of(&input, a), &text_of(&input, b)) {
                    assert!((score - want).abs() < 1e-9, "{method:?}: {p}: exact {want}");
                }
            }
        }
        let aside: Vec<&Value> = all.iter().filter(|v| v["type"] == "set_aside").collect();
        if method.is(&Spotsigs) {
            assert!(aside.iter().any(|v| v["id"] == "error.html"), "{aside:?}");
        }
    }
}

#[test]
fn dups_text_output_threshold_and_exit_statuses() {
    let tmp = tempfile::tempdir().unwrap();
    let input = collection(tmp.path());
    let dir = input.to_str().unwrap();
    let o = pocketdex(&["dups", dir, "--method", "minhash", "--threshold", "0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("group 1: 3 documents\n  Abacus.html\n"),
        "{out}"
    );
    // A lower threshold finds the edited copy (exact Jaccard 0.5758).
    assert!(out.contains("group 2: 2 documents\n  Jupiter-edited.txt\n  Jupiter.txt\n    0.5758  Jupiter-edited.txt  Jupiter.txt  ("), "{out}");
    assert!(stderr(&o).contains("minhash:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped empty.txt"), "{}", stderr(&o));

    // Two unrelated documents: no group, exit 1.
    let pair = tmp.path().join("pair");
    std::fs::create_dir_all(&pair).unwrap();
    for n in ["Abacus.txt", "Jupiter.txt"] {
        std::fs::copy(root().join("samples/wiki-en").join(n), pair.join(n)).unwrap();
    }
    let o = pocketdex(&["dups", pair.to_str().unwrap(), "--method", "spex", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(lines(&o).last().unwrap()["groups"], 0);

    // Another method's option, or a threshold for exact, is said to be ignored.
    let o = pocketdex(&[
        "dups",
        dir,
        "-m",
        "exact",
        "-t",
        "0.5",
        "--permutations",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: --threshold (exact copies are identical at --level), --permutations not used by exact: ignored"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["dups", dir, "-m", "minhash", "--permutations", "64"]);
    assert!(!stderr(&o).contains("not used by"), "{}", stderr(&o));

    let o = pocketdex(&["dups", dir, "--threshold", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("threshold"), "{}", stderr(&o));
    let o = pocketdex(&["dups", "no/such/dir"]);
    assert_eq!(o.status.code(), Some(2));

    // Repeated ids: the rows of -o cannot be joined back by id, and the warning says how.
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("rep.jsonl");
    let text = "the quick brown fox jumps over the lazy dog near the river bank today";
    std::fs::write(
        &input,
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": "a", "text": text}),
            serde_json::json!({"id": "a", "text": text})
        ),
    )
    .unwrap();
    let rows = tmp.path().join("rows.jsonl");
    let o = pocketdex(&[
        "dups",
        input.to_str().unwrap(),
        "-o",
        rows.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("join the rows back to the documents by their order"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn no_verify_reports_estimates() {
    let tmp = tempfile::tempdir().unwrap();
    let input = collection(tmp.path());
    let o = pocketdex(&[
        "dups",
        input.to_str().unwrap(),
        "--method",
        "simhash",
        "--no-verify",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = lines(&o);
    assert_eq!(all.last().unwrap()["verified"], false);
    let mut n = 0;
    for g in all.iter().filter(|v| v["type"] == "group") {
        for p in g["pairs"].as_array().unwrap() {
            if let Some(d) = p["evidence"]["hamming"]["distance"].as_f64() {
                let est = (std::f64::consts::PI * d / 64.0).cos();
                assert!((p["score"].as_f64().unwrap() - est).abs() < 1e-9, "{p}");
                n += 1;
            }
        }
    }
    assert!(n > 0);
}

#[test]
fn compare_shows_every_measure() {
    let a = "samples/wiki-en/Jupiter.txt";
    let b = "samples/query/edited.txt";
    let o = pocketdex(&["compare", a, b, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["comparison"];
    assert_eq!(c["exact"].as_array().unwrap().len(), 6);
    let ta = std::fs::read_to_string(root().join(a)).unwrap();
    let tb = std::fs::read_to_string(root().join(b)).unwrap();
    let want = exact_score(&Spex, &ta, &tb).unwrap();
    assert!((c["spex"]["score"].as_f64().unwrap() - want).abs() < 1e-12);
    assert!(c["minhash"]["estimate"].as_f64().unwrap() > 0.3);
    assert!(c["simhash"]["hamming"].as_u64().unwrap() <= 64);
    assert!(c["fuzzy"]["colliding_groups"].as_u64().is_some());
    // Five words changed leave the most distinctive terms: both similar bands collide both ways,
    // and the fuzzy counts leave the similar path out (4 fuzzy + 6 short codes each).
    assert_eq!(c["fuzzy"]["similar_hits"], serde_json::json!([2, 2]));
    assert_eq!(c["fuzzy"]["codes"], serde_json::json!([10, 10]));
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 7);
    let spex = verdicts.iter().find(|x| x["method"] == "spex").unwrap();
    assert_eq!(spex["near_duplicate"], true);

    // A file against itself: equal at every level, every score 1.
    let o = pocketdex(&["compare", a, a]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert_eq!(out.matches(" same").count(), 6, "{out}");
    assert!(out.contains("1.0000"), "{out}");
    assert!(out.contains("similar collisions      2/2"), "{out}");

    let o = pocketdex(&["compare", a, "no/such/file"]);
    assert_eq!(o.status.code(), Some(2));

    // A document over --max-doc-bytes is refused before it is held; one at the limit is not.
    let len = |p: &str| std::fs::metadata(root().join(p)).unwrap().len();
    assert!(len(a) > len(b));
    let o = pocketdex(&["compare", a, b, "--max-doc-bytes", &len(a).to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let size = len(b).to_string();
    let o = pocketdex(&["compare", b, a, "--max-doc-bytes", &size]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!(
            "{a} is larger than --max-doc-bytes ({size} bytes)"
        )),
        "{}",
        stderr(&o)
    );

    // The exact verdict is at --level, as `dups -m exact --level` groups; a document empty
    // at that level (only stopwords) is no exact copy, as `dups` sets it aside.
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (la, lb) = (write("la.txt", "La Luna."), write("lb.txt", "la luna"));
    let exact = |args: &[&str]| {
        let o = pocketdex(&[&["compare", "--json"][..], args].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let e = v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["method"] == "exact")
            .unwrap()
            .clone();
        e["near_duplicate"].as_bool().unwrap()
    };
    assert!(!exact(&["--level", "whitespace", &la, &lb]));
    assert!(exact(&["--level", "case", &la, &lb]));
    let the = write("the.txt", "the");
    assert!(!exact(&[&the, &the]));

    // A file is read once: a pipe's bytes are there only once (it said "empty").
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pocketdex"))
        .args(["compare", "/dev/stdin", a])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        std::fs::read(root().join(a)).unwrap().as_slice(),
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches(" same").count(), 6, "{}", stdout(&o));
}

#[test]
fn report_writes_table_plot_and_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let input = collection(tmp.path());
    let out_dir = tmp.path().join("report");
    let o = pocketdex(&[
        "report",
        input.to_str().unwrap(),
        "--method",
        "exact",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("in equivalence groups: 3 "), "{text}");
    assert!(
        text.contains("redundant (all but one document per group): 2"),
        "{text}"
    );
    let tsv = std::fs::read_to_string(out_dir.join("group-sizes.tsv")).unwrap();
    let rows: Vec<&str> = tsv.lines().collect();
    assert_eq!(rows[0], "size\tgroups\tdocuments\tshare");
    assert!(rows[1].starts_with("3\t1\t3\t"), "{tsv}");
    let svg = std::fs::read_to_string(out_dir.join("group-sizes.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<circle"),
        "{}",
        &svg[..200.min(svg.len())]
    );
    assert!(svg.contains("group size"));
    let groups = std::fs::read_to_string(out_dir.join("groups.jsonl")).unwrap();
    let g: Value = serde_json::from_str(groups.lines().next().unwrap()).unwrap();
    assert_eq!(g["members"].as_array().unwrap().len(), 3);
    assert_eq!(
        std::fs::read_to_string(out_dir.join("report.txt")).unwrap(),
        text.lines()
            .filter(|l| !l.starts_with("wrote "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );

    let o = pocketdex(&[
        "report",
        input.to_str().unwrap(),
        "--method",
        "spex",
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["type"], "report");
    let sizes = v["sizes"].as_array().unwrap();
    let docs: u64 = sizes.iter().map(|s| s["documents"].as_u64().unwrap()).sum();
    assert_eq!(docs, v["in_groups"].as_u64().unwrap());
    assert_eq!(
        v["redundant"].as_u64().unwrap(),
        docs - v["groups"].as_u64().unwrap()
    );
}

#[test]
fn dedup_run_keeps_the_best_ranked_of_each_group() {
    let tmp = tempfile::tempdir().unwrap();
    let input = collection(tmp.path());
    let groups = tmp.path().join("groups.jsonl");
    let o = pocketdex(&[
        "dups",
        input.to_str().unwrap(),
        "--method",
        "spex",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(&groups, &o.stdout).unwrap();
    let run = tmp.path().join("run.txt");
    std::fs::write(
        &run,
        "301 Q0 Jupiter-edited.txt 1 12.5 bm25\n\
         301 Q0 Abacus.txt 2 11.0 bm25\n\
         301 Q0 Jupiter.txt 3 10.0 bm25\n\
         301 Q0 copy-Abacus.txt 4 9.5 bm25\n\
         301 Q0 1.txt 5 9.0 bm25\n\
         302 Q0 Abacus.html 1 3.25 bm25\n\
         302 Q0 Abacus.txt 2 3.0 bm25\n",
    )
    .unwrap();
    let o = pocketdex(&[
        "dedup-run",
        run.to_str().unwrap(),
        "--groups",
        groups.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "301 Q0 Jupiter-edited.txt 1 12.5 bm25\n\
         301 Q0 Abacus.txt 2 11.0 bm25\n\
         301 Q0 1.txt 3 9.0 bm25\n\
         302 Q0 Abacus.html 1 3.25 bm25\n"
    );
    assert!(stderr(&o).contains("3 dropped"), "{}", stderr(&o));
    let collapsed = stdout(&o);

    // The rows of `dups -o rows.jsonl` are groups too (by cluster); its text output and a file
    // without groups are refused, not read as no groups.
    let rows = tmp.path().join("rows.jsonl");
    let o = pocketdex(&[
        "dups",
        input.to_str().unwrap(),
        "--method",
        "spex",
        "-o",
        rows.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let with = |g: &Path| {
        pocketdex(&[
            "dedup-run",
            run.to_str().unwrap(),
            "--groups",
            g.to_str().unwrap(),
        ])
    };
    let o = with(&rows);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), collapsed);
    let text = tmp.path().join("groups.txt");
    let o = pocketdex(&["dups", input.to_str().unwrap(), "--method", "spex"]);
    std::fs::write(&text, &o.stdout).unwrap();
    let o = with(&text);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("text output of `pocketdex dups`"),
        "{}",
        stderr(&o)
    );
    let none = tmp.path().join("none.jsonl");
    std::fs::write(
        &none,
        "{\"id\": \"a\", \"text\": \"a document\"}\n{\"members\": []}\n",
    )
    .unwrap();
    let o = with(&none);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds no groups"), "{}", stderr(&o));
    // What a collection without near copies gets, from `report` (an empty groups.jsonl) or
    // `dups --json` (its summary alone): the run unchanged.
    let report = tmp.path().join("report");
    let o = pocketdex(&[
        "report",
        "samples/wiki-en",
        "--method",
        "exact",
        "--out",
        report.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let empty = report.join("groups.jsonl");
    assert_eq!(std::fs::read_to_string(&empty).unwrap(), "");
    let summary = tmp.path().join("summary.jsonl");
    let o = pocketdex(&["dups", "samples/wiki-en", "--method", "exact", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::write(&summary, &o.stdout).unwrap();
    let unchanged = std::fs::read_to_string(&run).unwrap();
    for g in [&empty, &summary] {
        let o = with(g);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), unchanged);
        assert!(stderr(&o).contains("0 dropped"), "{}", stderr(&o));
    }

    let (r, g) = (run.to_str().unwrap(), groups.to_str().unwrap());
    let dedup = |line: &str, more: &[&str]| {
        std::fs::write(&run, line).unwrap();
        pocketdex(&[&["dedup-run", r, "--groups", g][..], more].concat())
    };
    let o = dedup("301 Q0 Abacus.txt 1\n", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected 6 fields"), "{}", stderr(&o));
    // A score that is not a finite number is refused (NaN ranked first).
    let o = dedup("301 Q0 Abacus.txt 1 NaN bm25\n", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a finite number"), "{}", stderr(&o));
    // -o is never the run itself (it was overwritten), and is written whole.
    let line = "301 Q0 Abacus.txt 1 2.0 bm25\n";
    let o = dedup(line, &["-o", r]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&run).unwrap(), line);
    let out = tmp.path().join("collapsed.txt");
    let o = dedup(line, &["-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), line);
}

/// `--spanning-above`: a group larger than the limit lists a spanning tree of its pairs, says
/// so in JSON, text and the summary, and the groups do not change.
#[test]
fn dups_lists_a_spanning_tree_for_large_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let base = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    // Six copies, each with a different word dropped: every pair is near-identical.
    let words: Vec<&str> = base.split_whitespace().collect();
    for i in 0..6 {
        let mut w = words.clone();
        w.remove(10 + 7 * i);
        std::fs::write(input.join(format!("j{i}.txt")), w.join(" ")).unwrap();
    }
    let dir = input.to_str().unwrap();
    let run = |above: &str| {
        let o = pocketdex(&[
            "dups",
            dir,
            "--method",
            "spex",
            "--json",
            "--spanning-above",
            above,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (lines(&o), stderr(&o))
    };
    let (all, _) = run("6");
    let (span, _) = run("5");
    let group = |v: &[Value]| v.iter().find(|x| x["type"] == "group").unwrap().clone();
    let (ga, gs) = (group(&all), group(&span));
    assert_eq!(ga["members"], gs["members"]);
    assert_eq!(ga["size"], 6);
    assert_eq!(ga["pairs_listed"], "all");
    assert_eq!(ga["pairs"].as_array().unwrap().len(), 15);
    assert_eq!(gs["pairs_listed"], "spanning");
    assert_eq!(gs["pairs"].as_array().unwrap().len(), 5);
    let summary = span.last().unwrap();
    assert_eq!(summary["pairs"], 5);
    assert_eq!(summary["pairs_found"], 15);
    assert_eq!(summary["spanned_groups"], 1);
    // The best pair of the group is listed either way.
    let best = |g: &Value| {
        g["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["score"].as_f64().unwrap())
            .fold(0.0, f64::max)
    };
    assert_eq!(best(&ga), best(&gs));
    // Text output says so, and so does the summary on stderr.
    let o = pocketdex(&["dups", dir, "--method", "spex", "--spanning-above", "5"]);
    assert!(
        stdout(&o).contains("a spanning tree of its pairs"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("15 pairs found in all"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["dups", dir, "--spanning-above", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Two documents without content words: the methods over content words say they would set
/// them aside, as `dups` does, rather than leave simhash's "Hamming distance 0" (two empty
/// fingerprints) unexplained.
#[test]
fn compare_says_which_methods_set_aside_a_document_without_content() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, "the of and 1234 5678\n").unwrap();
    std::fs::write(&b, "is it 42 99 100\n").unwrap();
    let o = pocketdex(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // minhash, trials, simhash and cosine, for each document.
    assert_eq!(
        text.matches("would be set aside: no content words").count(),
        8,
        "{text}"
    );
    let o = pocketdex(&["dups", dir.path().to_str().unwrap(), "--method", "simhash"]);
    assert!(
        stderr(&o).contains("set aside a.txt: no content words"),
        "{}",
        stderr(&o)
    );
}

/// What a user gets wrong is said, not taken for "no duplicates": nothing read, the same input
/// twice, an output that is an input or a link; a fuzzy run on a handful of documents says why
/// its scores are low; closed output pipes end commands quietly, never with a panic.
#[test]
fn methods_refuse_what_cannot_be_compared_and_survive_closed_pipes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &Path| p.to_str().unwrap().to_owned();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for args in [
        vec!["dups".to_string(), t(&empty)],
        vec![
            "report".to_string(),
            t(&empty),
            "--out".into(),
            t(&tmp.path().join("rep")),
        ],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = pocketdex(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("nothing to compare: the inputs hold no documents"),
            "{}",
            stderr(&o)
        );
    }
    assert!(
        !tmp.path().join("rep").exists(),
        "a failed report leaves no directory"
    );
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    failed_with(
        &pocketdex(&["report", "samples/wiki-en", "--output", &t(&file)]),
        "is a file; --out names the directory",
    );
    // dups -o takes the extension in any case, and .ndjson as JSON Lines.
    let rows = tmp.path().join("rows.NDJSON");
    let o = pocketdex(&["dups", &t(&empty), "--method", "exact", "-o", &t(&rows)]);
    assert!(!stderr(&o).contains("name a .parquet"), "{}", stderr(&o));
    let out = tmp.path().join("s.jsonl");
    let o = pocketdex(&["synth", &t(&empty), "-o", &t(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no documents to edit"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    let o = pocketdex(&["synth", "--generate", "0", "-o", &t(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    let two = tmp.path().join("two");
    std::fs::create_dir(&two).unwrap();
    for f in ["samples/wiki-en/Jupiter.txt", "samples/query/edited.txt"] {
        let p = root().join(f);
        std::fs::copy(&p, two.join(p.file_name().unwrap())).unwrap();
    }
    let o = pocketdex(&["dups", &t(&two), &t(&two)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the same input as"),
        "{}",
        stderr(&o)
    );
    let o = pocketdex(&["dups", &t(&two), "--method", "fuzzy"]);
    assert!(
        stderr(&o).contains("in a collection this small"),
        "{}",
        stderr(&o)
    );

    // `reference` refuses, before reading, an output that is its word list or a link.
    let words = tmp.path().join("words.gz");
    std::fs::write(&words, b"not read").unwrap();
    let idf_to = |out: &Path| {
        pocketdex(&[
            "reference",
            "idf",
            "--lang",
            "en",
            "--wordfreq",
            &t(&words),
            "-o",
            &t(out),
        ])
    };
    failed_with(&idf_to(&words), "is also an input");
    assert_eq!(std::fs::read(&words).unwrap(), b"not read");
    let link = tmp.path().join("link.tsv");
    std::os::unix::fs::symlink(&words, &link).unwrap();
    failed_with(&idf_to(&link), "symbolic link");

    // Output and messages into pipes closed before the first write.
    let closed = |args: &[&str], stdout: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pocketdex"));
        c.args(args)
            .current_dir(root())
            .stdin(std::process::Stdio::null());
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut kept = String::new();
        if stdout {
            drop(child.stdout.take());
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut kept).unwrap();
        } else {
            drop(child.stderr.take());
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut kept).unwrap();
        }
        (child.wait().unwrap(), kept)
    };
    let (status, err) = closed(
        &[
            "eval",
            &t(&two),
            "--out",
            &t(&tmp.path().join("ev")),
            "--json",
        ],
        true,
    );
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let (status, out) = closed(&["dups", "samples/wiki-en", "--method", "exact"], false);
    assert_eq!(status.code(), Some(1), "no groups, and no panic: {out}");
}

/// `synth` of its own output names the new copies apart from the old ones; `compare` reads a
/// JSON Lines file (or standard input) of one record as that record's text, and refuses one of
/// several.
#[test]
fn synth_names_copies_once_and_compare_reads_records() {
    let tmp = tempfile::tempdir().unwrap();
    let once = tmp.path().join("once.jsonl");
    let twice = tmp.path().join("twice.jsonl");
    let (o1, o2) = (once.to_str().unwrap(), twice.to_str().unwrap());
    let o = pocketdex(&[
        "synth",
        "samples/wiki-en",
        "--share",
        "1",
        "--limit",
        "20",
        "-o",
        o1,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = pocketdex(&["synth", o1, "--share", "1", "-o", o2]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ids: Vec<String> = std::fs::read_to_string(&twice)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let distinct: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    assert!(ids.iter().any(|i| i.ends_with("~e0~e0")));
    assert!(ids.iter().any(|i| i.ends_with("~e0.1")), "{ids:?}");

    // compare: a record against the file it came from.
    let text = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    let one = tmp.path().join("one.jsonl");
    std::fs::write(
        &one,
        format!(
            "{}\n",
            serde_json::json!({"id": "j", "title": "Jupiter", "text": text})
        ),
    )
    .unwrap();
    let o = pocketdex(&[
        "compare",
        one.to_str().unwrap(),
        "samples/wiki-en/Jupiter.txt",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let exact = v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["method"] == "exact")
        .unwrap();
    assert_eq!(exact["near_duplicate"], true, "{v}");
    failed_with(
        &pocketdex(&["compare", o1, "samples/wiki-en/Jupiter.txt"]),
        "compare takes one document as A and one as B",
    );
    // eval of a collection this small says why its truth is thin.
    let o = pocketdex(&[
        "eval",
        "samples/wiki-en/Jupiter.txt",
        "samples/query/edited.txt",
        "--out",
        tmp.path().join("eval").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("among 2 documents a word they all hold weighs nothing"),
        "{}",
        stderr(&o)
    );
}

/// `dups --id-key` that no record has is refused, as `build` refuses it: every row of `-o`
/// would be named by its place and join back to nothing.
#[test]
fn dups_refuses_an_id_key_no_record_has() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("docs.jsonl");
    let lines: Vec<String> = common::samples()
        .iter()
        .take(20)
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let input = input.to_str().unwrap();
    let o = pocketdex(&["dups", input, "--id-key", "ID", "-q"]);
    failed_with(&o, "no record has a field \"ID\" (--id-key)");
    let o = pocketdex(&["dups", input, "--id-key", "id", "-q"]);
    assert!(o.status.code() != Some(2), "{}", stderr(&o));
    // eval and synth alike: a misspelt key would name (synth: rewrite) every id by its place.
    let out = tmp.path().join("out");
    let o = pocketdex(&[
        "eval",
        input,
        "--id-key",
        "ID",
        "--out",
        out.to_str().unwrap(),
    ]);
    failed_with(&o, "no record has a field \"ID\" (--id-key)");
    let copies = tmp.path().join("copies.jsonl");
    let o = pocketdex(&[
        "synth",
        input,
        "--id-key",
        "ID",
        "-o",
        copies.to_str().unwrap(),
    ]);
    failed_with(&o, "no record has a field \"ID\" (--id-key)");
    assert!(!copies.exists());
}

/// What is read otherwise than it looks, or given and not used, is said: a JSON array (one
/// document, not records), synth's output under a name that is read as one document, an option
/// of no use to the method; and compare reads a record's text by --text-key.
#[test]
fn inputs_and_options_of_no_effect_are_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let records: Vec<Value> = common::samples()
        .iter()
        .take(3)
        .map(|(id, text)| serde_json::json!({"id": id, "content": text}))
        .collect();
    let array = tmp.path().join("export.json");
    std::fs::write(&array, serde_json::to_string(&records).unwrap()).unwrap();
    let array = array.to_str().unwrap();
    let o = pocketdex(&["dups", array]);
    assert!(
        stderr(&o).contains("is a JSON array, read as one document"),
        "{}",
        stderr(&o)
    );
    let txt = tmp.path().join("copies.txt");
    let o = pocketdex(&["synth", "samples/wiki-en", "-o", txt.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds JSON Lines"), "{}", stderr(&o));
    let o = pocketdex(&["dups", "samples/wiki-en", "-m", "exact", "--no-verify"]);
    assert!(stderr(&o).contains("--no-verify"), "{}", stderr(&o));
    let o = pocketdex(&["dups", "samples/wiki-en", "-m", "minhash", "--no-verify"]);
    assert!(!stderr(&o).contains("not used"), "{}", stderr(&o));
    // One record whose text is in `content`: compared by its text with --text-key.
    let one = tmp.path().join("one.jsonl");
    std::fs::write(&one, records[0].to_string() + "\n").unwrap();
    let one = one.to_str().unwrap();
    let same = format!("samples/wiki-en/{}", records[0]["id"].as_str().unwrap());
    failed_with(&pocketdex(&["compare", one, &same]), "text");
    let o = pocketdex(&["compare", one, &same, "--text-key", "content", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let exact = v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["method"] == "exact")
        .unwrap();
    assert_eq!(exact["near_duplicate"], true, "{v}");
    let o = pocketdex(&[
        "compare",
        one,
        &same,
        "--text-key",
        "content",
        "--min-idf",
        "0.5",
    ]);
    assert!(
        stderr(&o).contains("--min-idf and --max-idf are not used"),
        "{}",
        stderr(&o)
    );
}
