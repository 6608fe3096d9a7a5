//! `pocketdex add`, `delete`, `check`, `merge` and `adopt` as a user runs them: a set answers as
//! one `build` of its live documents, shards queried together too, segments built apart adopted, exit statuses, the writer lock,
//! and crashes (an injected abort at every step, and kill -9 at random moments) that leave the
//! old or the new state and no litter.

use crate::common;

use common::{failed_with, pocketdex, root, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pocketdex"));
    c.current_dir(root());
    c
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The query documents: an edited copy and a few samples (one of them deleted in the tests).
const QUERIES: [&str; 4] = [
    "samples/query/edited.txt",
    "samples/wiki-en/Jupiter.txt",
    "samples/wiki-en/Information.txt",
    "samples/wiki-en/Caravaggio.txt",
];

/// The hits of every query document, as JSON Lines (what a script would compare).
fn answers(index: &Path) -> String {
    let mut args = vec!["query", s(index)];
    args.extend(QUERIES);
    args.extend(["--json", "--threshold", "0.3"]);
    let o = pocketdex(&args);
    assert!(o.status.code().unwrap() < 2, "{}", stderr(&o));
    stdout(&o)
}

/// The sample documents split into `n` JSON Lines files (in order).
fn split_samples(dir: &Path, n: usize) -> Vec<PathBuf> {
    let docs = common::samples();
    let per = docs.len().div_ceil(n);
    docs.chunks(per)
        .enumerate()
        .map(|(i, chunk)| {
            let p = dir.join(format!("part{i}.jsonl"));
            let lines: Vec<String> = chunk
                .iter()
                .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string())
                .collect();
            std::fs::write(&p, lines.join("\n") + "\n").unwrap();
            p
        })
        .collect()
}

/// A temporary directory holding `set`, an index set of the samples.
fn sample_set() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    ok(&pocketdex(&["add", s(&set), "samples/wiki-en", "-q"]));
    (tmp, set)
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}{}", stdout(o), stderr(o));
}

/// The files of a set's directory, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// One build of every sample in `dir`, as a set of `expected_docs` answers: the oracle.
fn one_build(dir: &Path, expected_docs: &str) -> PathBuf {
    let built = dir.join("all.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        s(&built),
        "--expected-docs",
        expected_docs,
        "--idf",
        "language",
        "-q",
    ]));
    built
}

#[test]
fn a_set_answers_as_one_build_and_merges_into_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    let built = one_build(tmp.path(), "1000000");
    let want = answers(&built);
    assert!(want.contains("\"id\":\"Jupiter.txt\""));
    // Grown in three adds of JSON Lines parts: the same hits, scores and order.
    let set = tmp.path().join("set");
    for part in split_samples(tmp.path(), 3) {
        ok(&pocketdex(&["add", s(&set), s(&part), "-q"]));
    }
    assert_eq!(answers(&set), want);
    // Shards built separately, queried together.
    let parts = split_samples(tmp.path(), 2);
    let (a, b) = (tmp.path().join("a.pdx"), tmp.path().join("b.pdx"));
    for (part, out) in parts.iter().zip([&a, &b]) {
        ok(&pocketdex(&[
            "build",
            s(part),
            "-o",
            s(out),
            "--expected-docs",
            "1000000",
            "--idf",
            "language",
            "-q",
        ]));
    }
    let mut args = vec!["query", s(&a), "--index", s(&b)];
    args.extend(QUERIES);
    args.extend(["--json", "--threshold", "0.3"]);
    // As one build answers, but that each hit names the shard that holds it.
    let (mut unnamed, mut held) = (String::new(), std::collections::BTreeSet::new());
    for line in stdout(&pocketdex(&args)).lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "hit" {
            let index = v.as_object_mut().unwrap().remove("index");
            held.insert(
                index
                    .expect("a hit names its index")
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        unnamed += &format!("{v}\n");
    }
    assert_eq!(unnamed, want);
    assert!(!held.is_empty() && held.iter().all(|i| [s(&a), s(&b)].contains(&i.as_str())));
    // merge -o writes exactly what build writes; a compacted set answers the same.
    let shipped = tmp.path().join("shipped.pdx");
    ok(&pocketdex(&["merge", s(&set), "-o", s(&shipped)]));
    assert!(std::fs::read(&shipped).unwrap() == std::fs::read(&built).unwrap());
    ok(&pocketdex(&["merge", s(&set)]));
    assert_eq!(answers(&set), want);
    let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(info["segments"].as_array().unwrap().len(), 1);
    assert_eq!(info["live_documents"], 300);
    ok(&pocketdex(&["verify", s(&set), s(&shipped)]));
}

#[test]
fn segments_built_apart_are_adopted_and_ship_as_one_build() {
    let tmp = tempfile::tempdir().unwrap();
    let built = one_build(tmp.path(), "1000");
    let want = answers(&built);
    // The set holds the first part; the others are built apart from its schema, then adopted.
    let set = tmp.path().join("set");
    let parts = split_samples(tmp.path(), 3);
    ok(&pocketdex(&[
        "add",
        s(&set),
        s(&parts[0]),
        "--expected-docs",
        "1000",
        "-q",
    ]));
    let segments: Vec<PathBuf> = parts[1..]
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let out = tmp.path().join(format!("seg{i}.pdx"));
            ok(&pocketdex(&[
                "build",
                s(part),
                "--segment-of",
                s(&set),
                "-o",
                s(&out),
                "-q",
            ]));
            out
        })
        .collect();
    // Refused, and nothing changes: a plain index, a segment twice, other parameters.
    let plain = tmp.path().join("plain.pdx");
    ok(&pocketdex(&["build", s(&parts[1]), "-o", s(&plain), "-q"]));
    let other_set = tmp.path().join("other");
    ok(&pocketdex(&[
        "add",
        s(&other_set),
        s(&parts[0]),
        "--expected-docs",
        "1000000",
        "-q",
    ]));
    let other = tmp.path().join("other.pdx");
    ok(&pocketdex(&[
        "build",
        s(&parts[1]),
        "--segment-of",
        s(&other_set),
        "-o",
        s(&other),
        "-q",
    ]));
    for (bad, why) in [
        (vec![s(&segments[0]), s(&plain)], "not a segment"),
        (vec![s(&segments[0]), s(&segments[0])], "given twice"),
        (vec![s(&segments[0]), s(&other)], "other parameters"),
    ] {
        let mut args = vec!["adopt", s(&set)];
        args.extend(bad);
        let o = pocketdex(&args);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    let parameters = pocketdex(&[
        "build",
        s(&parts[1]),
        "--segment-of",
        s(&set),
        "--lang",
        "de",
        "-o",
        s(&other),
    ]);
    assert!(
        stderr(&parameters).contains("cannot be used with"),
        "{}",
        stderr(&parameters)
    );
    let mut args = vec!["adopt", s(&set)];
    args.extend(segments.iter().map(|p| s(p)));
    ok(&pocketdex(&args));
    assert_eq!(answers(&set), want);
    let again = pocketdex(&["adopt", s(&set), s(&segments[0])]);
    assert!(
        stderr(&again).contains("already in the index set"),
        "{}",
        stderr(&again)
    );
    // Shipped as one file: what one build of every document writes.
    let shipped = tmp.path().join("shipped.pdx");
    ok(&pocketdex(&["merge", s(&set), "-o", s(&shipped)]));
    assert!(std::fs::read(&shipped).unwrap() == std::fs::read(&built).unwrap());
}

#[test]
fn check_delete_and_their_exit_statuses() {
    let (tmp, set) = sample_set();
    // A near copy: status 1 and its original named.
    let o = pocketdex(&["check", s(&set), "samples/query/edited.txt"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("edited.txt: near copy of Jupiter.txt"),
        "{}",
        stdout(&o)
    );
    // A new document: status 0; with --add it is added, and a second check finds it.
    let new = tmp.path().join("submission.txt");
    std::fs::write(&new, "Hydrothermal vents on the floor of the Pacific Ocean host communities of tube worms, clams and bacteria that live on chemical energy instead of sunlight; submarines such as Alvin first reached them in 1977, and since then expeditions have mapped hundreds of vent fields along the mid-ocean ridges, where hot water rich in minerals rises from the crust.").unwrap();
    let o = pocketdex(&["check", s(&set), s(&new)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = pocketdex(&["check", s(&set), s(&new), "--add", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (line["status"].as_str(), line["added"].as_bool()),
        (Some("new"), Some(true))
    );
    let o = pocketdex(&["check", s(&set), s(&new), "--add"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("near copy of submission.txt (1.000)"),
        "{}",
        stdout(&o)
    );
    // Two new documents in one call that copy each other: the second is the near copy.
    let twin = tmp.path().join("twin");
    std::fs::create_dir(&twin).unwrap();
    let text = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let other: String = text.replace("Jupiter", "Zeus").replace("planet", "world");
    std::fs::write(twin.join("a.txt"), &other).unwrap();
    std::fs::write(twin.join("b.txt"), &other).unwrap();
    let o = pocketdex(&["check", s(&set), s(&twin), "--add", "--json", "-t", "0.99"]);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "new");
    assert_eq!(lines[1]["status"], "near-copy");
    assert_eq!(lines[1]["hits"][0]["path"], "submitted");
    // An id the set holds is an error unless replaced; nothing is added then.
    let o = pocketdex(&["add", s(&set), "samples/wiki-en/Caravaggio.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("already in the index set"),
        "{}",
        stderr(&o)
    );
    ok(&pocketdex(&[
        "add",
        s(&set),
        "samples/wiki-en/Caravaggio.txt",
        "--replace",
        "-q",
    ]));
    // Delete: found ids go (status 0), a missing one makes status 1; hits never show them.
    let o = pocketdex(&["delete", s(&set), "Jupiter.txt"]);
    ok(&o);
    let o = pocketdex(&["delete", s(&set), "Jupiter.txt", "Caravaggio.txt"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not found: Jupiter.txt"));
    let a = answers(&set);
    assert!(
        !a.contains("\"id\":\"Jupiter.txt\"") && !a.contains("\"id\":\"Caravaggio.txt\""),
        "{a}"
    );
    assert!(a.contains("\"id\":\"Information.txt\""));
    // An empty list of ids from standard input deletes nothing and says so.
    let o = bin()
        .args(["delete", s(&set), "-", "-q"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    ok(&o);
    assert!(
        stderr(&o).contains("standard input held no ids; nothing is deleted"),
        "{}",
        stderr(&o)
    );
    assert_eq!(answers(&set), a);
    // A plain index file cannot change.
    let file = tmp.path().join("x.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        s(&file),
        "-q",
    ]));
    let o = pocketdex(&["add", s(&file), "samples/wiki-en/Caravaggio.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("index file, which never changes"),
        "{}",
        stderr(&o)
    );
    // A directory of documents is not an index.
    let o = pocketdex(&["query", "samples/wiki-en", "samples/query/edited.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an index set"), "{}", stderr(&o));
}

#[test]
fn a_second_writer_fails_or_waits() {
    let (tmp, set) = sample_set();
    // A writer whose writes stall (the interruption tests' hook) holds the lock for a few
    // seconds: `add` and `check --add` read their documents before they take it.
    let doc = serde_json::json!({"id": "stalled", "text": "A document about lighthouses, their keepers, the Fresnel lens and the fog signals that warned ships off the rocks of the Atlantic coast for two centuries, before radio beacons and satellite navigation made most of them museums."});
    let upload = tmp.path().join("upload.jsonl");
    std::fs::write(&upload, format!("{doc}\n")).unwrap();
    let mut first = bin()
        .args(["add", s(&set), s(&upload), "-q", "--wait"])
        .env("POCKETDEX_STALL_WRITE_MS", "3000")
        .spawn()
        .unwrap();
    // Wait until it holds the lock: a second writer then fails at once.
    let mut busy = None;
    for _ in 0..100 {
        let o = pocketdex(&["delete", s(&set), "no such id"]);
        if o.status.code() == Some(2) && stderr(&o).contains("another pocketdex process") {
            busy = Some(o);
            break;
        }
        assert!(o.status.code() == Some(1), "{}", stderr(&o));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(busy.is_some(), "the second writer was never refused");
    // A script reading --json learns it there too, and that trying again will do.
    let o = pocketdex(&["check", s(&set), s(&upload), "--add", "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&line["type"], &line["busy"]),
        (&"error".into(), &true.into()),
        "{line}"
    );
    assert!(line["message"]
        .as_str()
        .unwrap()
        .contains("another pocketdex process"));
    // With --wait it waits for the first to finish.
    let waiting = bin()
        .args(["delete", s(&set), "Fog.txt", "--wait", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It says that it waits (a wait is no hang), once it finds the lock taken.
    let mut waiting = waiting;
    let mut note = String::new();
    // Kept open to the end: the process may write more.
    let mut err = std::io::BufReader::new(waiting.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut err, &mut note).unwrap();
    assert!(
        note.contains("waiting for another pocketdex process to finish changing"),
        "{note}"
    );
    assert!(first.wait().unwrap().success());
    let o = waiting.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(o.status.success(), "{rest}");
    let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(
        info["live_documents"], 300,
        "one added, one deleted: {info}"
    );
}

/// A signal after `check --add` committed its documents (while segments merge) stops the
/// merge only: every verdict is printed, and the exit status is check's own (1: a near copy
/// was found), not an interrupted command's nor "every DOC is new".
#[cfg(unix)]
#[test]
fn a_signal_after_check_add_commits_leaves_its_verdicts_and_status() {
    use std::io::BufRead;
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    let mut samples: Vec<PathBuf> = std::fs::read_dir(root().join("samples/wiki-en"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    samples.sort();
    let (old, new) = samples.split_at(150);
    let first = tmp.path().join("first");
    std::fs::create_dir(&first).unwrap();
    for f in old {
        std::fs::copy(f, first.join(f.file_name().unwrap())).unwrap();
    }
    ok(&pocketdex(&["add", s(&set), s(&first), "-q"]));
    // 150 new documents, and one copy of a document in the set under a new id: adding 150 to
    // a segment of 150 merges the two.
    let docs = tmp.path().join("docs.jsonl");
    let mut lines = String::new();
    for f in new.iter().chain([&old[0]]) {
        let name = f.file_name().unwrap().to_string_lossy();
        let text = std::fs::read_to_string(f).unwrap();
        lines += &format!(
            "{}\n",
            serde_json::json!({"id": format!("new/{name}"), "text": text})
        );
    }
    std::fs::write(&docs, lines).unwrap();
    // Every write stalls before its rename: the segment, the manifest (the commit), then the
    // merged segment, during which the signal comes.
    let mut child = bin()
        .args(["check", s(&set), s(&docs), "--add", "--json"])
        .env("POCKETDEX_STALL_WRITE_MS", "1500")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut verdicts = Vec::new();
    for _ in 0..151 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        verdicts.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
    }
    // The verdicts are out, so the documents are committed and the merge has begun.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted after the change was committed"),
        "{err}"
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let near = verdicts
        .iter()
        .filter(|v| v["status"] == "near-copy")
        .count();
    let added = verdicts.iter().filter(|v| v["added"] == true).count();
    assert_eq!((near, added), (1, 150));
    let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(info["live_documents"], 300, "{info}");
    ok(&pocketdex(&["verify", s(&set)]));
    assert!(!files(&set).iter().any(|f| f.ends_with(".tmp")));
}

/// `add` and `check --add` to an existing set read their documents before they take the
/// set's lock: a slow producer (a pipe) holds up no takedown, and what they add lands beside
/// what changed meanwhile.
#[test]
fn a_slow_add_holds_up_no_other_writer() {
    // The directory lives as long as the test.
    let (_tmp, set) = sample_set();
    let mut slow = bin()
        .args(["add", s(&set), "-", "-q"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While it waits for its input, the set takes a delete and a merge at once.
    ok(&pocketdex(&["delete", s(&set), "Fog.txt", "-q"]));
    ok(&pocketdex(&["merge", s(&set), "-q"]));
    let doc = serde_json::json!({"id": "slow", "text": "Sea otters wrap themselves in kelp to sleep without drifting away, and crack sea urchins on stones they carry in a pouch of loose skin under each forearm."});
    {
        use std::io::Write;
        let mut stdin = slow.stdin.take().unwrap();
        writeln!(stdin, "{doc}").unwrap();
    }
    let o = slow.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(info["live_documents"], 300, "{info}");
    let o = pocketdex(&["query", s(&set), "samples/wiki-en/Fog.txt", "--json"]);
    assert!(!stdout(&o).contains("\"id\":\"Fog.txt\""), "{}", stdout(&o));
    // So does a submission's check --add: checked against the set as it is when the lock is
    // taken, after its input.
    let mut slow = bin()
        .args(["check", s(&set), "-", "--add", "--stdin-id", "otter-copy"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ok(&pocketdex(&["delete", s(&set), "Abacus.txt", "-q"]));
    {
        use std::io::Write;
        let mut stdin = slow.stdin.take().unwrap();
        write!(stdin, "{}", doc["text"].as_str().unwrap()).unwrap();
    }
    let o = slow.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("otter-copy: near copy of slow"),
        "{}",
        stdout(&o)
    );
    ok(&pocketdex(&["verify", s(&set)]));
}

/// A crash (abort at `step`) while `op` changes the set leaves a set that verifies and answers
/// as before or as after `op`; the next writer leaves no temporary or orphaned file.
/// The steps of a change at which `POCKETDEX_CRASH_AT` aborts the process.
const STEPS: [&str; 4] = [
    "segment-written",
    "segment-renamed",
    "manifest-written",
    "committed",
];

fn crash_at_every_step(op: &[&str], setup: impl Fn(&Path)) {
    for step in STEPS {
        let tmp = tempfile::tempdir().unwrap();
        let set = tmp.path().join("set");
        setup(&set);
        let before = answers(&set);
        // The state after: the same operation on a copy, uninterrupted.
        let copy = tmp.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        for f in files(&set) {
            std::fs::copy(set.join(&f), copy.join(&f)).unwrap();
        }
        let run = |dir: &Path, crash: Option<&str>| {
            let mut c = bin();
            c.arg(op[0]).arg(dir).args(&op[1..]);
            if let Some(step) = crash {
                c.env("POCKETDEX_CRASH_AT", step);
            }
            c.output().unwrap()
        };
        let o = run(&copy, None);
        assert!(o.status.code().unwrap() < 2, "{}", stderr(&o));
        let after = answers(&copy);
        assert_ne!(before, after, "{op:?} changes the answers");
        let o = run(&set, Some(step));
        if o.status.success() {
            // This operation never reaches the step (e.g. delete writes no segment).
            continue;
        }
        assert_eq!(
            o.status.code(),
            None,
            "{step}: aborted by a signal: {}",
            stderr(&o)
        );
        ok(&pocketdex(&["verify", s(&set)]));
        let now = answers(&set);
        assert!(
            now == before || now == after,
            "{op:?} crashed at {step}: neither old nor new state"
        );
        if step == "committed" {
            assert_eq!(now, after, "a committed change survives");
        }
        // The next writer cleans up what the crash left.
        let o = pocketdex(&["delete", s(&set), "no such id", "-q"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let left: Vec<String> = files(&set)
            .into_iter()
            .filter(|f| f.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{step}: litter {left:?}");
        let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
        let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
        let segments = info["segments"].as_array().unwrap().len();
        let pdx = files(&set).iter().filter(|f| f.starts_with("seg-")).count();
        assert_eq!(pdx, segments, "{step}: orphaned segments {:?}", files(&set));
    }
}

fn two_segments(set: &Path) {
    ok(&pocketdex(&["add", s(set), "samples/wiki-en", "-q"]));
    let extra = set.parent().unwrap().join("extra.txt");
    std::fs::write(
        &extra,
        std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap(),
    )
    .unwrap();
    ok(&pocketdex(&["add", s(set), s(&extra), "-q"]));
    ok(&pocketdex(&["delete", s(set), "Crab.txt", "-q"]));
}

#[test]
fn crashes_in_add_leave_the_old_or_the_new_set() {
    crash_at_every_step(&["add", "samples/query/edited.txt"], two_segments);
}

#[test]
fn crashes_in_delete_leave_the_old_or_the_new_set() {
    crash_at_every_step(&["delete", "Jupiter.txt", "Information.txt"], two_segments);
}

#[test]
fn crashes_in_merge_leave_the_old_or_the_new_set() {
    // A merge changes no answer; its crash must still leave a sound set with the same answers.
    for step in STEPS {
        let tmp = tempfile::tempdir().unwrap();
        let set = tmp.path().join("set");
        two_segments(&set);
        let before = answers(&set);
        let o = bin()
            .args(["merge", s(&set)])
            .env("POCKETDEX_CRASH_AT", step)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), None, "{step}: {}", stderr(&o));
        ok(&pocketdex(&["verify", s(&set)]));
        assert_eq!(answers(&set), before, "{step}");
        ok(&pocketdex(&["merge", s(&set), "-q"]));
        assert_eq!(answers(&set), before);
        let names = files(&set);
        assert_eq!(
            names.iter().filter(|f| f.starts_with("seg-")).count(),
            1,
            "{names:?}"
        );
        assert!(!names.iter().any(|f| f.ends_with(".tmp")), "{names:?}");
    }
}

#[test]
fn kill_9_during_add_leaves_the_old_or_the_new_set() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    ok(&pocketdex(&[
        "add",
        s(&set),
        "samples/wiki-en/Crab.txt",
        "-q",
    ]));
    let before = answers(&set);
    // A larger add (the samples three times under other ids), killed at several moments.
    let big = tmp.path().join("big.jsonl");
    let mut lines = Vec::new();
    for round in 0..3 {
        for (id, text) in common::samples() {
            lines
                .push(serde_json::json!({"id": format!("{round}/{id}"), "text": text}).to_string());
        }
    }
    std::fs::write(&big, lines.join("\n")).unwrap();
    let mut states = std::collections::HashSet::new();
    for delay_ms in [5u64, 20, 40, 80, 160, 400] {
        let mut child = bin().args(["add", s(&set), s(&big), "-q"]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        ok(&pocketdex(&["verify", s(&set)]));
        let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
        let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
        let live = info["live_documents"].as_u64().unwrap();
        assert!(live == 1 || live == 901, "{delay_ms} ms: {live} documents");
        states.insert((live, status.success()));
        if live == 901 {
            assert_ne!(answers(&set), before);
            break;
        }
        assert_eq!(answers(&set), before, "{delay_ms} ms");
    }
    // The next writer leaves no temporary file.
    let _ = pocketdex(&["delete", s(&set), "no such id", "-q"]);
    assert!(
        !files(&set).iter().any(|f| f.ends_with(".tmp")),
        "{:?}",
        files(&set)
    );
}

/// A creation that crashed before its first manifest leaves a directory the next `add` creates
/// the set in.
#[test]
fn a_crashed_creation_is_created_again() {
    for step in ["segment-written", "manifest-written"] {
        let tmp = tempfile::tempdir().unwrap();
        let set = tmp.path().join("set");
        let o = bin()
            .args(["add", s(&set), "samples/wiki-en"])
            .env("POCKETDEX_CRASH_AT", step)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), None, "{step}: {}", stderr(&o));
        assert!(set.is_dir() && !set.join("pocketdex-set.json").exists());
        ok(&pocketdex(&["add", s(&set), "samples/wiki-en", "-q"]));
        ok(&pocketdex(&["verify", s(&set)]));
        assert!(answers(&set).contains("\"id\":\"Jupiter.txt\""));
    }
}

/// What a submission system must be able to trust: a DOC that was not checked (missing,
/// empty, binary) is an error and nothing is added; a refused step never says "added"; a failed
/// `add` or `check --add` leaves no set behind; `merge -o` never writes into the set.
#[test]
fn unchecked_documents_are_errors_and_failures_leave_nothing() {
    let (tmp, set) = sample_set();
    let new = tmp.path().join("new.txt");
    std::fs::write(&new, "Hydrothermal vents on the floor of the Pacific Ocean host communities of tube worms, clams and bacteria that live on chemical energy instead of sunlight, mapped along the mid-ocean ridges.").unwrap();
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let binary = tmp.path().join("binary.dat");
    std::fs::write(&binary, [0u8, 1, 2, 3, 0, 159, 146, 150]).unwrap();
    let missing = tmp.path().join("missing.txt");
    // Inputs that hold no document at all, and one that cannot be read past its name.
    let empty_dir = tmp.path().join("nothing");
    std::fs::create_dir(&empty_dir).unwrap();
    let empty_jsonl = tmp.path().join("nothing.jsonl");
    std::fs::write(&empty_jsonl, "\n").unwrap();
    let fake = tmp.path().join("fake.parquet");
    std::fs::write(&fake, "not parquet").unwrap();
    let generation = |set: &Path| {
        let o = pocketdex(&["info", s(set), "--json"]);
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        v["generation"].clone()
    };
    let before = generation(&set);
    for bad in [&empty, &binary, &missing, &empty_dir, &empty_jsonl, &fake] {
        let o = pocketdex(&["check", s(&set), s(bad), s(&new), "--add", "--json"]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            bad.display(),
            stderr(&o)
        );
        let lines: Vec<serde_json::Value> = stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // Each DOC's verdict, then the error that ended the step: nothing was added.
        assert_eq!(lines.len(), 3, "{}", stdout(&o));
        assert_eq!(lines[2]["type"], "error");
        assert!(lines[2]["message"]
            .as_str()
            .unwrap()
            .starts_with("nothing was added"));
        // The new document is new, but the step was refused: not "added".
        let of = |doc: &Path| {
            let name = doc.file_name().unwrap().to_str().unwrap();
            lines
                .iter()
                .find(|l| l["doc"].as_str().unwrap().ends_with(name))
                .unwrap_or_else(|| panic!("no line for {name}: {}", stdout(&o)))
                .clone()
        };
        assert_eq!(
            (of(&new)["status"].as_str(), of(&new)["added"].as_bool()),
            (Some("new"), Some(false))
        );
        assert_eq!(of(bad)["status"], "error");
        assert_eq!(generation(&set), before, "nothing added");
        // Without --add as well: an unchecked DOC is not "new".
        let o = pocketdex(&["check", s(&set), s(bad)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stdout(&o).contains(": error: "), "{}", stdout(&o));
    }
    // A failed add, or a check --add with nothing to add, does not create a set.
    let dup = tmp.path().join("dup.jsonl");
    std::fs::write(&dup, "{\"id\":\"a\",\"text\":\"one two three four\"}\n{\"id\":\"a\",\"text\":\"five six seven eight\"}\n").unwrap();
    let fresh = tmp.path().join("fresh");
    let o = pocketdex(&["add", s(&fresh), s(&dup)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!fresh.exists(), "a failed add left {:?}", files(&fresh));
    let o = pocketdex(&["add", s(&fresh), s(&empty)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!fresh.exists());
    let o = pocketdex(&["check", s(&fresh), s(&empty), "--add"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!fresh.exists());
    // Blank standard input is not a submission that passes.
    let mut c = bin();
    c.args(["check", s(&set), "-", "--add"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(generation(&set), before, "nothing added");
    // The idf table the set has may be named again; another one is refused.
    ok(&pocketdex(&[
        "add",
        s(&set),
        s(&new),
        "--idf",
        "language",
        "--lang",
        "en",
        "-q",
    ]));
    let sample = tmp.path().join("sample.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        s(&sample),
        "-q",
    ]));
    failed_with(
        &pocketdex(&["add", s(&set), s(&new), "--idf", s(&sample), "--replace"]),
        "has another idf table than --idf",
    );
    // A set names its own table (its schema's), as the set being joined: it agrees.
    ok(&pocketdex(&[
        "add",
        s(&set),
        s(&new),
        "--idf",
        s(&set),
        "--replace",
        "-q",
    ]));
    failed_with(
        &pocketdex(&["add", s(&set), s(&new), "--idf", "missing.pdx"]),
        "missing.pdx does not exist",
    );
    // A revision that replaces its own id is not a near copy of the document it replaces;
    // without --replace it is.
    let rev_dir = tmp.path().join("rev");
    std::fs::create_dir(&rev_dir).unwrap();
    let rev = rev_dir.join("Caravaggio.txt");
    let old = std::fs::read_to_string(root().join("samples/wiki-en/Caravaggio.txt")).unwrap();
    std::fs::write(
        &rev,
        format!("{old}\nHis paintings hang in Rome and Naples.\n"),
    )
    .unwrap();
    let o = pocketdex(&["check", s(&set), s(&rev), "--add", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = pocketdex(&["check", s(&set), s(&rev), "--add", "--replace", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["added"].as_bool()),
        (Some("new"), Some(true))
    );
    assert!(stderr(&o).contains("replacing 1"), "{}", stderr(&o));
    // The schema's part of `info` has no per-document figures: it holds no documents.
    let o = pocketdex(&["info", s(&set)]);
    ok(&o);
    let out = stdout(&o);
    let schema = out
        .split("every segment shares the parameters of its schema:")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        schema.contains("prefix classes")
            && !schema.contains("bytes/doc")
            && !schema.contains("\n  documents "),
        "{schema}"
    );
    // merge of a plain file and adopt of a directory say what each takes.
    failed_with(
        &pocketdex(&["merge", s(&sample), "-o", s(&tmp.path().join("y.pdx"))]),
        "is already one index file: merge takes an index set",
    );
    failed_with(
        &pocketdex(&["adopt", s(&set), s(&fresh.with_file_name("nothing"))]),
        "is a directory, not an index file",
    );
    // merge -o into the set's own directory is refused, and the set is untouched.
    let seg = files(&set)
        .into_iter()
        .find(|f| f.starts_with("seg-"))
        .unwrap();
    for out in [set.join(&seg), set.join("x.pdx"), set.clone()] {
        let o = pocketdex(&["merge", s(&set), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("outside the index set"),
            "{}",
            stderr(&o)
        );
    }
    ok(&pocketdex(&["verify", s(&set)]));
    // A text file given as INDEX is named for what it is.
    let o = pocketdex(&["add", s(&new), "samples/wiki-en/Caravaggio.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a file, not an index set"),
        "{}",
        stderr(&o)
    );
}

/// Two writers that start on a set that does not exist yet, both with `--wait`: one creates
/// it, the other waits and adds to it (it used to fail "another process is changing the set",
/// or call the half-created directory "not an index set"). Without `--wait` the second fails
/// with the lock's message, never with a wrong one.
#[test]
fn two_writers_creating_one_set_both_add_with_wait() {
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let set = tmp.path().join(format!("set{round}"));
        let spawn = |doc: &str, wait: bool| {
            let mut c = bin();
            c.args(["add", s(&set), doc, "-q"]);
            if wait {
                c.arg("--wait");
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let wait = round % 2 == 0;
        let a = spawn("samples/wiki-en", wait);
        let b = spawn("samples/query/edited.txt", wait);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let live = |set: &Path| -> u64 {
            let info = stdout(&pocketdex(&["info", s(set), "--json"]));
            let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
            info["live_documents"].as_u64().unwrap()
        };
        if wait {
            ok(&a);
            ok(&b);
            assert_eq!(live(&set), 301, "round {round}");
        } else {
            for o in [&a, &b] {
                if !o.status.success() {
                    assert!(
                        stderr(o).contains("another pocketdex process"),
                        "{}",
                        stderr(o)
                    );
                }
            }
            assert!(a.status.success() || b.status.success());
        }
        ok(&pocketdex(&["verify", s(&set)]));
    }
}

/// `verify` checks a set's schema: damaged, missing, or another set's (whose parameters new
/// segments would get) is an error there and for writers; a piece built into the set's
/// directory is refused (the set's next writer would remove it).
#[test]
fn verify_checks_the_schema_and_pieces_stay_outside_the_set() {
    let (tmp, set) = sample_set();
    let schema = set.join("schema.pdx");
    let good = std::fs::read(&schema).unwrap();
    let fails = |args: &[&str], says: &str| failed_with(&pocketdex(args), says);
    let mut damaged = good.clone();
    let at = damaged.len() / 2;
    damaged[at] ^= 1;
    std::fs::write(&schema, &damaged).unwrap();
    fails(&["verify", s(&set)], "schema.pdx");
    std::fs::remove_file(&schema).unwrap();
    fails(&["verify", s(&set)], "schema.pdx");
    // Another set's schema: German, so its parameters differ.
    let other = tmp.path().join("other");
    ok(&pocketdex(&[
        "add",
        s(&other),
        "samples/query/edited.txt",
        "--lang",
        "de",
        "-q",
    ]));
    std::fs::copy(other.join("schema.pdx"), &schema).unwrap();
    fails(&["verify", s(&set)], "not this set's schema");
    fails(
        &["add", s(&set), "samples/query/edited.txt"],
        "not this set's schema",
    );
    std::fs::write(&schema, &good).unwrap();
    ok(&pocketdex(&["verify", s(&set)]));
    let inside = set.join("seg-00000050.pdx");
    fails(
        &[
            "build",
            "samples/query/edited.txt",
            "--segment-of",
            s(&set),
            "-o",
            s(&inside),
        ],
        "must be outside the index set",
    );
    assert!(!inside.exists());
    // A plain index file is not a set: the advice is to make one, not to `add` to the file.
    let plain = tmp.path().join("plain.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        s(&plain),
        "-q",
    ]));
    fails(
        &["delete", s(&plain), "Jupiter.txt"],
        "is an index file, which never changes",
    );
}

/// Messages that say what happened and what to do: an add that fails says nothing was added
/// (and that a set it would have made was not); a piece whose id the set holds is named and
/// not offered `--replace`, which `adopt` lacks; options for a new set are refused by a
/// `check` that only reads.
#[test]
fn failed_changes_say_what_was_left_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    let fails = |args: &[&str], says: &[&str]| {
        let o = pocketdex(args);
        for s in says {
            failed_with(&o, s);
        }
        assert!(!stderr(&o).contains("--replace"), "{}", stderr(&o));
    };
    let missing = tmp.path().join("missing.txt");
    fails(
        &["add", s(&set), "samples/wiki-en/Jupiter.txt", s(&missing)],
        &["nothing was added, and", "was not created"],
    );
    assert!(!set.exists());
    // An empty directory made for the set (with its own permissions) is left as it was.
    let made = tmp.path().join("made");
    std::fs::create_dir(&made).unwrap();
    fails(
        &["add", s(&made), "samples/wiki-en/Jupiter.txt", s(&missing)],
        &[
            "nothing was added, and",
            "is the empty directory it was, not a set",
        ],
    );
    let o = pocketdex(&["check", s(&made), s(&missing), "--add"]);
    failed_with(&o, "is the empty directory it was, not a set");
    assert!(
        made.is_dir() && files(&made).is_empty(),
        "{:?}",
        files(&made)
    );
    ok(&pocketdex(&["add", s(&set), "samples/wiki-en", "-q"]));
    let piece = tmp.path().join("piece.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en/Jupiter.txt",
        "--segment-of",
        s(&set),
        "-o",
        s(&piece),
        "-q",
    ]));
    fails(
        &["adopt", s(&set), s(&piece)],
        &["piece.pdx: document id \"Jupiter.txt\"", "pocketdex delete"],
    );
    fails(
        &["check", s(&set), "samples/query/edited.txt", "--lang", "de"],
        &["--lang applies when `check --add` creates a set"],
    );
}

/// `repair` drops a damaged or missing segment, lists the ids of its documents, keeps the file
/// under `damaged/`, and leaves a set that verifies and answers as one build of what is left;
/// the documents added again make it whole. A damaged schema is written again, byte for byte;
/// a sound set is left as it is.
#[test]
fn repair_drops_damaged_segments_and_lists_what_they_held() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    let docs = common::samples();
    // Batches of 220, 60 and 20 documents: the merge policy keeps three segments.
    let bounds = [0, 220, 280, docs.len()];
    let batches: Vec<PathBuf> = (0..3)
        .map(|b| {
            let p = tmp.path().join(format!("batch{b}.jsonl"));
            let lines: Vec<String> = docs[bounds[b]..bounds[b + 1]]
                .iter()
                .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string())
                .collect();
            std::fs::write(&p, lines.join("\n") + "\n").unwrap();
            p
        })
        .collect();
    for b in &batches {
        ok(&pocketdex(&["add", s(&set), s(b), "-q"]));
    }
    let segments: Vec<String> = files(&set)
        .into_iter()
        .filter(|f| f.starts_with("seg-"))
        .collect();
    assert_eq!(segments.len(), 3, "{segments:?}");
    let repair = |args: &[&str]| {
        let mut a = vec!["repair", s(&set)];
        a.extend(args);
        pocketdex(&a)
    };
    // A sound set: nothing to do, exit 0.
    let o = repair(&[]);
    ok(&o);
    assert!(stderr(&o).contains("nothing to repair"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");

    // The middle segment (batch 1) damaged in one byte: queries fail, verify names the cure.
    let middle = set.join(&segments[1]);
    let mut bytes = std::fs::read(&middle).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(&middle, &bytes).unwrap();
    failed_with(&pocketdex(&["verify", s(&set)]), "pocketdex repair");
    let o = repair(&["--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let dropped = r["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{r}");
    assert_eq!(dropped[0]["file"], segments[1].as_str());
    assert_eq!(dropped[0]["live_docs"], 60);
    let ids: Vec<&str> = dropped[0]["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let batch1: Vec<&str> = docs[220..280].iter().map(|d| d.0.as_str()).collect();
    assert!(ids.iter().all(|id| batch1.contains(id)), "{ids:?}");
    assert_eq!(
        ids.len() as u64 + dropped[0]["unread"].as_u64().unwrap(),
        60
    );
    assert_eq!(r["change"]["live_docs"], 240);
    assert_eq!(r["change"]["segments"], 2);
    assert_eq!(
        std::fs::read(set.join("damaged").join(&segments[1])).unwrap(),
        bytes,
        "the damaged file is kept as it was"
    );
    assert!(!middle.exists());
    ok(&pocketdex(&["verify", s(&set)]));
    // What is left answers as one build of batches 0 and 2.
    let left = tmp.path().join("left.jsonl");
    let text = |p: &PathBuf| std::fs::read_to_string(p).unwrap();
    std::fs::write(&left, text(&batches[0]) + &text(&batches[2])).unwrap();
    let built = tmp.path().join("left.pdx");
    ok(&pocketdex(&[
        "build",
        s(&left),
        "-o",
        s(&built),
        "--idf",
        "language",
        "--expected-docs",
        "1000000",
        "-q",
    ]));
    assert_eq!(answers(&set), answers(&built));
    let o = repair(&[]);
    ok(&o);
    assert!(stderr(&o).contains("nothing to repair"), "{}", stderr(&o));

    // The dropped documents added again: the set answers as one build of all of them, in the
    // set's order (batch 1 now comes last).
    ok(&pocketdex(&["add", s(&set), s(&batches[1]), "-q"]));
    ok(&pocketdex(&["verify", s(&set)]));
    let whole = tmp.path().join("whole.jsonl");
    std::fs::write(
        &whole,
        text(&batches[0]) + &text(&batches[2]) + &text(&batches[1]),
    )
    .unwrap();
    let all = tmp.path().join("whole.pdx");
    ok(&pocketdex(&[
        "build",
        s(&whole),
        "-o",
        s(&all),
        "--idf",
        "language",
        "--expected-docs",
        "1000000",
        "-q",
    ]));
    assert_eq!(answers(&set), answers(&all));

    let segments = || -> Vec<String> {
        files(&set)
            .into_iter()
            .filter(|f| f.starts_with("seg-"))
            .collect()
    };
    let now = segments();
    assert_eq!(now.len(), 2, "{now:?}");

    // A repair cut short after moving a segment out of the set, before its manifest: the next
    // repair still lists the segment's ids, from where it was moved.
    std::fs::rename(set.join(&now[1]), set.join("damaged").join(&now[1])).unwrap();
    let o = repair(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let listed: Vec<&str> = out.lines().collect();
    let moved: Vec<&str> = docs[280..]
        .iter()
        .chain(&docs[220..280])
        .map(|d| d.0.as_str())
        .collect();
    assert_eq!(listed, moved);
    ok(&pocketdex(&["verify", s(&set)]));

    // A damaged schema: written again from a segment, the same bytes; exit 0.
    let schema = set.join("schema.pdx");
    let good = std::fs::read(&schema).unwrap();
    let mut bad = good.clone();
    let at = bad.len() / 2;
    bad[at] ^= 1;
    std::fs::write(&schema, &bad).unwrap();
    let o = repair(&[]);
    ok(&o);
    assert!(stderr(&o).contains("written again"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&schema).unwrap(), good);
    ok(&pocketdex(&["verify", s(&set)]));

    // A missing segment: named as missing, dropped with its ids unread.
    let gone = segments()[0].clone();
    std::fs::remove_file(set.join(&gone)).unwrap();
    failed_with(
        &pocketdex(&["query", s(&set), "samples/query/edited.txt"]),
        "pocketdex repair",
    );
    let o = repair(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "no file, no ids");
    assert!(stderr(&o).contains(&gone), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("whose ids could not be read"),
        "{}",
        stderr(&o)
    );
    ok(&pocketdex(&["verify", s(&set)]));

    // A plain index file is not mended: the message says what is.
    failed_with(
        &pocketdex(&["repair", s(&built)]),
        "rebuild it or restore a good copy",
    );
}

/// A batch of submissions, some of them near copies of each other, gets the verdicts that
/// checking and adding them one at a time gets: the earlier new documents of a call are
/// found by their codes, as an index of them would find them (before, by their sketches
/// alone, which called unrelated documents near copies and took quadratic time).
#[test]
fn a_checked_batch_answers_as_one_document_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let mut names: Vec<PathBuf> = std::fs::read_dir(root().join("samples/wiki-en"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let (indexed, submitted) = names.split_at(200);
    let set = tmp.path().join("set");
    let mut args = vec!["add".to_string(), s(&set).into(), "-q".into()];
    args.extend(indexed.iter().map(|p| s(p).to_string()));
    ok(&pocketdex(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    // The submissions: 40 new articles, and copies (every 12th or every 4th word left out) of
    // some of them and of indexed ones, after their originals.
    let batch = tmp.path().join("batch");
    std::fs::create_dir(&batch).unwrap();
    let thin = |text: &str, every: usize| -> String {
        let w: Vec<&str> = text.split_whitespace().collect();
        let kept: Vec<&str> = (0..w.len())
            .filter(|i| i % every != 1)
            .map(|i| w[i])
            .collect();
        kept.join(" ")
    };
    let mut files = Vec::new();
    for (i, p) in submitted
        .iter()
        .take(40)
        .chain(indexed.iter().take(6))
        .enumerate()
    {
        let text = std::fs::read_to_string(p).unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        if i < 40 {
            files.push((format!("{i:03}-{name}"), text.clone()));
        }
        if i % 4 == 0 {
            files.push((format!("{:03}-near-{name}", 100 - i), thin(&text, 12)));
            files.push((format!("{:03}-far-{name}", 150 - i), thin(&text, 4)));
        }
    }
    for (name, text) in &files {
        std::fs::write(batch.join(name), text).unwrap();
    }
    files.sort();
    let verdict = |line: &serde_json::Value| {
        let hits: Vec<(String, String)> = line["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["id"].as_str().unwrap().into(), h["score"].to_string()))
            .collect();
        (
            line["doc"].as_str().unwrap().to_string(),
            line["status"].to_string(),
            hits,
        )
    };
    // The oracle first: one call per document, on a copy of the set.
    let one = tmp.path().join("one");
    let o = Command::new("cp")
        .args(["-r", s(&set), s(&one)])
        .output()
        .unwrap();
    ok(&o);
    let mut expected = Vec::new();
    for (name, _) in &files {
        let o = pocketdex(&[
            "check",
            s(&one),
            s(&batch.join(name)),
            "--add",
            "--json",
            "-t",
            "0.7",
        ]);
        assert!(o.status.code().unwrap() < 2, "{}", stderr(&o));
        let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        expected.push(verdict(&line));
    }
    let o = pocketdex(&["check", s(&set), s(&batch), "--add", "--json", "-t", "0.7"]);
    assert!(o.status.code().unwrap() < 2, "{}", stderr(&o));
    let got: Vec<_> = stdout(&o)
        .lines()
        .map(|l| verdict(&serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(got, expected);
    // The batch found copies among its own documents, and some were far enough to be new.
    let within = got
        .iter()
        .filter(|(_, _, hits)| {
            hits.iter()
                .any(|(id, _)| files.iter().any(|(n, _)| n == id))
        })
        .count();
    assert!(
        within >= 5,
        "{within} near copies found among the batch: {got:?}"
    );
    assert_eq!(answers(&set), answers(&one));
}

/// A dry run of `check` on a set says what `--add` would say of ids too (held, given twice;
/// `--replace` previews a replacement), a misspelt `--id-key` adds nothing, and a set that
/// `check --add` creates is said to be created.
#[test]
fn a_dry_run_says_what_adding_would_and_check_add_refuses_what_add_refuses() {
    let (tmp, set) = sample_set();
    let doc = tmp.path().join("Abacus.txt");
    std::fs::write(&doc, "Submarine volcanoes erupt pillow lavas beneath the glaciers of Iceland during the long winter storms, far from any harbour.").unwrap();
    let o = pocketdex(&["check", s(&set), s(&doc)]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("is already in the set"),
        "{}",
        stdout(&o)
    );
    let o = pocketdex(&["check", s(&set), s(&doc), "--replace"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o).trim(), "Abacus.txt: new");
    // The same id twice in one call.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(
        other.join("x.txt"),
        "Glaciers carve fjords over thousands of years.",
    )
    .unwrap();
    let more = tmp.path().join("more");
    std::fs::create_dir(&more).unwrap();
    std::fs::write(
        more.join("x.txt"),
        "Coral reefs grow a few centimetres each year in warm water.",
    )
    .unwrap();
    let o = pocketdex(&["check", s(&set), s(&other), s(&more)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("given twice"), "{}", stdout(&o));
    // A file of the index is not a set: no id checks without --add (it cannot be added to).
    let file = tmp.path().join("one.pdx");
    ok(&pocketdex(&[
        "build",
        "samples/wiki-en",
        "-o",
        s(&file),
        "-q",
    ]));
    let o = pocketdex(&["check", s(&file), s(&doc)]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // --id-key that no record has: nothing added, as `add` refuses it.
    let records = tmp.path().join("records.jsonl");
    std::fs::write(&records, "{\"ident\": \"q\", \"text\": \"Quantum chromodynamics describes quarks and gluons bound by the strong force.\"}\n{\"id\": \"n\", \"text\": null}\n").unwrap();
    let o = pocketdex(&["check", s(&set), s(&records), "--add", "--id-key", "ident2"]);
    failed_with(&o, "no record has a field \"ident2\"");
    assert!(
        stderr(&o).contains("no text (\"text\" is null)"),
        "{}",
        stderr(&o)
    );
    // Documents on standard input take the ids they are given.
    let stdin_check = |text: &str, extra: &[&str]| {
        let mut c = bin();
        c.args(["check", s(&set), "-", "--add"]).args(extra);
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        // A command refused before it reads (a blank --stdin-id) may be gone already.
        let wrote = child.stdin.take().unwrap().write_all(text.as_bytes());
        if let Err(e) = wrote {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        child.wait_with_output().unwrap()
    };
    let o = stdin_check(
        "Lighthouse keepers trimmed the wicks of oil lamps every night until electric lights and clockwork rotation took over.",
        &["--stdin-id", "sub-42"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "sub-42: new, added");
    let o = stdin_check(
        "Beekeepers calm a hive with smoke, which masks the alarm pheromone that guard bees release.",
        &["--stdin-id", "sub-43"],
    );
    assert_eq!(stdout(&o).trim(), "sub-43: new, added", "{}", stderr(&o));
    failed_with(
        &stdin_check("any text", &["--stdin-id", " "]),
        "must not be blank",
    );
    // A set created by check --add says so.
    let fresh = tmp.path().join("fresh");
    let o = pocketdex(&["check", s(&fresh), s(&doc), "--add"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("created the set with 1 document"),
        "{}",
        stderr(&o)
    );
}

/// A truncated upload (its last record cut off) is an error of `add`, as of `query` and
/// `check`: exit 2, the rest added, the broken record named.
#[test]
fn add_calls_a_broken_record_an_error_and_adds_the_rest() {
    let (tmp, set) = sample_set();
    let upload = tmp.path().join("upload.jsonl");
    std::fs::write(
        &upload,
        "{\"id\": \"whole\", \"text\": \"Glassblowers gather molten glass on a pipe and shape it by breath and by turning.\"}\n{\"id\": \"cut\", \"text\": \"Coopers bend oak staves over a fi\n",
    )
    .unwrap();
    let o = pocketdex(&["add", s(&set), s(&upload)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("upload.jsonl:2"), "{}", stderr(&o));
    assert!(stderr(&o).contains("were not added"), "{}", stderr(&o));
    let info = stdout(&pocketdex(&["info", s(&set), "--json"]));
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(info["live_documents"], 301, "{info}");
}

/// Every id an index holds prints on one line and can be given to `delete`: a record whose id
/// holds control characters is an error of `add` and `build` (the others are added), and a file
/// whose name holds one is named with it escaped, `\xHH`, as a name that is not UTF-8 is.
#[test]
fn ids_that_cannot_be_printed_are_refused_or_escaped() {
    let (tmp, set) = sample_set();
    let upload = tmp.path().join("upload.jsonl");
    std::fs::write(
        &upload,
        concat!(
            "{\"id\": \"fine\", \"text\": \"Glassblowers gather molten glass on a pipe and shape it by breath.\"}\n",
            "{\"id\": \"tab\\there\", \"text\": \"Coopers bend oak staves over a fire and bind them with iron hoops.\"}\n",
            "{\"id\": \"  \", \"text\": \"Wheelwrights fit spokes into a hub and shrink an iron tyre onto the felloes.\"}\n",
        ),
    )
    .unwrap();
    for cmd in ["add", "build"] {
        let out = tmp.path().join("built.pdx");
        let target = if cmd == "add" { s(&set) } else { s(&out) };
        let o = if cmd == "add" {
            pocketdex(&["add", target, s(&upload)])
        } else {
            pocketdex(&["build", s(&upload), "-o", target])
        };
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("tab\\there: its id is blank or holds control characters"),
            "{cmd}: {}",
            stderr(&o)
        );
        let info = stdout(&pocketdex(&["info", target, "--json"]));
        let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
        // The blank id's record is named by its place, as a record without an id is.
        let (key, want) = if cmd == "add" {
            ("live_documents", 302)
        } else {
            ("documents", 2)
        };
        assert_eq!(info[key], want, "{cmd}: {info}");
    }
    #[cfg(unix)]
    {
        let dir = tmp.path().join("names");
        std::fs::create_dir(&dir).unwrap();
        let text = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
        std::fs::write(dir.join("line\nbreak.txt"), &text).unwrap();
        let index = tmp.path().join("names.pdx");
        let o = pocketdex(&["build", s(&dir), "-o", s(&index)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = pocketdex(&["query", s(&index), "samples/wiki-en/Jupiter.txt", "--json"]);
        assert!(
            stdout(&o).contains("\"id\":\"line\\\\x0Abreak.txt\""),
            "{}",
            stdout(&o)
        );
    }
}

/// Output no longer read (`check … | head -n0`) changes no answer: the exit status is still the
/// verdict of every DOC, and `--add` still adds every new one.
#[test]
fn a_closed_output_changes_no_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    ok(&pocketdex(&["add", s(&set), "samples/wiki-en", "-q"]));
    // Its reader gone before it writes (a process starts in milliseconds; the pipe closes now).
    let closed = |args: &[&str]| {
        let mut c = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(c.stdout.take());
        let o = c.wait_with_output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let edited = "samples/query/edited.txt";
    assert_eq!(closed(&["check", s(&set), edited]).0, Some(1));
    assert_eq!(closed(&["check", s(&set), edited, "--json"]).0, Some(1));
    assert_eq!(
        closed(&["check", s(&set), "missing.txt", edited]).0,
        Some(2)
    );
    assert_eq!(closed(&["query", s(&set), edited]).0, Some(0));
    let new = tmp.path().join("new.txt");
    std::fs::write(&new, "Marmots are large ground squirrels of the genus Marmota, with fifteen species living in Asia, Europe and North America; they hibernate through the winter in burrows.").unwrap();
    assert_eq!(closed(&["query", s(&set), s(&new)]).0, Some(1));
    let (code, err) = closed(&["check", s(&set), s(&new), "--add"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        closed(&["check", s(&set), s(&new)]).0,
        Some(1),
        "it was added"
    );
}

/// A set's directory is its writers' own: no other command writes a file there, and a set (or
/// an index file) given where documents are expected is refused; below an input directory its
/// manifest is no document, as its segments are none.
#[test]
fn a_set_is_neither_a_place_for_outputs_nor_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let holder = tmp.path().join("holder");
    let set = holder.join("set");
    ok(&pocketdex(&["add", s(&set), "samples/wiki-en", "-q"]));
    let seg = set.join(
        files(&set)
            .into_iter()
            .find(|f| f.starts_with("seg-"))
            .unwrap(),
    );
    let before = std::fs::read(&seg).unwrap();
    let edited = "samples/query/edited.txt";
    let (new, manifest) = (set.join("new.pdx"), set.join(pocketdex::MANIFEST));
    let rows = set.join("rows.jsonl");
    let below = set.join("sub");
    std::fs::create_dir(&below).unwrap();
    let deeper = below.join("x.pdx");
    for args in [
        vec!["build", edited, "-o", s(&seg)],
        vec!["build", edited, "-o", s(&new)],
        vec!["build", edited, "-o", s(&deeper)],
        vec!["synth", "samples/wiki-en", "-o", s(&manifest)],
        vec!["synth", "--generate", "10", "-o", s(&manifest)],
        vec!["dups", "samples/wiki-en", "-o", s(&rows)],
    ] {
        failed_with(&pocketdex(&args), "must be outside the index set");
    }
    std::fs::remove_dir(&below).unwrap();
    assert_eq!(std::fs::read(&seg).unwrap(), before);
    assert!(!new.exists() && !rows.exists());
    ok(&pocketdex(&["verify", s(&set)]));
    // A set or an index file as INPUT: refused, saying what it is.
    let other = tmp.path().join("other");
    failed_with(
        &pocketdex(&["add", s(&other), s(&set)]),
        "is an index set, not documents",
    );
    assert!(!other.exists());
    let pdx = tmp.path().join("x.pdx");
    failed_with(
        &pocketdex(&["build", s(&set), "-o", s(&pdx)]),
        "is an index set, not documents",
    );
    ok(&pocketdex(&["build", edited, "-o", s(&pdx), "-q"]));
    failed_with(
        &pocketdex(&["add", s(&other), s(&pdx)]),
        "is an index file, not documents; add the documents it was made of",
    );
    // Below an input directory: only the documents beside the set are indexed.
    std::fs::copy(root().join(edited), holder.join("edited.txt")).unwrap();
    let beside = tmp.path().join("beside.pdx");
    let o = pocketdex(&["build", s(&holder), "-o", s(&beside)]);
    ok(&o);
    // The set's files are said to be what they are, not "binary".
    let err = stderr(&o);
    assert!(
        err.contains("skipped set/schema.pdx: a pocketdex index (it keeps no text to index")
            && !err.contains("binary"),
        "{err}"
    );
    let info: serde_json::Value =
        serde_json::from_str(&stdout(&pocketdex(&["info", s(&beside), "--json"]))).unwrap();
    assert_eq!(info["documents"], 1, "{info}");
}

/// The segment files in `set` that its manifest does not name.
fn unnamed_segments(set: &Path) -> Vec<String> {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(set.join("pocketdex-set.json")).unwrap())
            .unwrap();
    let named: Vec<&str> = m["manifest"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    files(set)
        .into_iter()
        .filter(|f| f.starts_with("seg-") && f.ends_with(".pdx") && !named.contains(&f.as_str()))
        .collect()
}

/// SIGTERM while a change is under way leaves the old or the new state and no segment file
/// that the manifest does not name: neither a new one renamed into place before the manifest
/// that would name it, nor the old ones of a committed merge (the next writer would remove
/// them, but a set that no one writes to again would keep them).
#[test]
fn a_signal_leaves_no_segment_the_manifest_does_not_name() {
    let (tmp, set) = sample_set();
    ok(&pocketdex(&["add", s(&set), "samples/query", "-q"]));
    let before = answers(&set);
    assert!(files(&set).iter().filter(|f| f.starts_with("seg-")).count() >= 2);
    // An add stalled with its segment in place, before the manifest names it: interrupted, it
    // changed nothing. A merge stalled after its commit, before it removes the segments it
    // merged: the merge stands (status 0, saying so).
    for (args, step, unnamed_while_stalled, said) in [
        (
            vec!["add", s(&set), "samples/wiki-en", "--replace", "-q"],
            "segment-renamed",
            1,
            "interrupted; the unfinished output was removed",
        ),
        (
            vec!["merge", s(&set), "-q"],
            "committed",
            2,
            "interrupted after the change was committed",
        ),
    ] {
        let mut child = bin()
            .args(&args)
            .env("POCKETDEX_STALL_AT", step)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while unnamed_segments(&set).len() < unnamed_while_stalled {
            assert!(
                child.try_wait().unwrap().is_none(),
                "{step}: ended before stalling"
            );
            assert!(start.elapsed().as_secs() < 60, "{step}: never stalled");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let o = child.wait_with_output().unwrap();
        assert!(stderr(&o).contains(said), "{step}: {}", stderr(&o));
        if step == "committed" {
            ok(&o);
            assert_eq!(
                files(&set).iter().filter(|f| f.starts_with("seg-")).count(),
                1
            );
        }
        assert_eq!(unnamed_segments(&set), Vec::<String>::new(), "{step}");
        ok(&pocketdex(&["verify", s(&set)]));
        // Replacing documents by themselves, or merging, answers as before.
        assert_eq!(answers(&set), before, "{step}");
    }
    drop(tmp);
}
