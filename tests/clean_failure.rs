//! Failing cleanly, with real processes and real files: builds killed (SIGKILL), terminated
//! (SIGTERM) and interrupted (SIGINT) while they write leave no temporary file behind (or none
//! after the next build); concurrent builds into one directory leave each other alone; new
//! index files get the umask's permissions.

use crate::common;

use common::{root, stderr};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pocketdex"));
    c.current_dir(root());
    c
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The names of pocketdex's temporary files in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pocketdex-") && n.ends_with(".pdx.tmp"))
        .collect()
}

/// A build of the samples into `out` that stalls `stall_ms` once its temporary file is
/// written (before the rename), stderr captured. The child starts with SIGINT and SIGTERM at
/// their defaults: pocketdex keeps a signal its parent ignored (as under `nohup`, or in a
/// shell's background job), so a test run from such a job would otherwise see its signals
/// ignored.
fn stalled_build(out: &Path, stall_ms: u64) -> Child {
    let mut c = bin();
    c.args(["build", "samples/wiki-en", "-o", s(out), "-q"])
        .env("POCKETDEX_STALL_WRITE_MS", stall_ms.to_string())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe, the only call made between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    c.spawn().unwrap()
}

/// Waits until a temporary file appears in `dir`.
fn wait_for_temporary(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    while temporaries(dir).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before writing"
        );
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not waited for yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn sigterm_and_sigint_during_a_build_leave_nothing() {
    for (sig, status) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("x.pdx");
        let mut child = stalled_build(&out, 60_000);
        wait_for_temporary(tmp.path(), &mut child);
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        // Dies of the signal, as without a handler: the shell shows 128 + its number.
        assert_eq!(
            o.status.signal(),
            Some(sig),
            "{:?} {}",
            o.status,
            stderr(&o)
        );
        assert_eq!(128 + sig, status);
        assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "signal {sig}: {left:?}");
    }
}

#[test]
fn kill_9_leaves_a_temporary_file_that_the_next_build_removes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = stalled_build(&tmp.path().join("x.pdx"), 60_000);
    wait_for_temporary(tmp.path(), &mut child);
    child.kill().unwrap(); // SIGKILL: nothing runs, the file stays
    child.wait().unwrap();
    assert_eq!(temporaries(tmp.path()).len(), 1);
    let o = bin()
        .args(["build", "samples/wiki-en/Crab.txt", "-q", "-o"])
        .arg(tmp.path().join("y.pdx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(temporaries(tmp.path()).is_empty());
    assert!(!tmp.path().join("x.pdx").exists());
}

/// SIGKILL at the moment the temporary file appears, with a build's own timing (no stall): a
/// collection large enough that writing takes a while.
#[test]
fn kill_9_at_real_moments_of_the_write_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.jsonl");
    let mut lines = String::new();
    for round in 0..30 {
        for (id, text) in common::samples() {
            let doc = serde_json::json!({"id": format!("{round}/{id}"), "text": text});
            lines.push_str(&format!("{doc}\n"));
        }
    }
    std::fs::write(&big, lines).unwrap();
    let outdir = tmp.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    let mut killed = 0;
    for delay_ms in [0u64, 10, 30] {
        let mut child = bin()
            .args(["build", s(&big), "-q", "-o"])
            .arg(outdir.join("x.pdx"))
            .spawn()
            .unwrap();
        let start = Instant::now();
        while temporaries(&outdir).is_empty() && child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < Duration::from_secs(300));
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
    }
    assert!(killed > 0, "every build finished before it could be killed");
    let o = bin()
        .args(["build", "samples/wiki-en/Crab.txt", "-q", "-o"])
        .arg(outdir.join("y.pdx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        temporaries(&outdir).is_empty(),
        "{:?}",
        temporaries(&outdir)
    );
}

#[test]
fn concurrent_builds_into_one_directory_leave_each_other_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = tmp.path().join("slow.pdx");
    // Stalled long enough for the second build to finish first on a loaded machine (the whole
    // test suite at once): 1.5 s was not, once.
    let mut child = stalled_build(&slow, 6_000);
    wait_for_temporary(tmp.path(), &mut child);
    // A second build into the same directory while the first one's file is being written.
    let o = bin()
        .args(["build", "samples/wiki-en/Crab.txt", "-q", "-o"])
        .arg(tmp.path().join("fast.pdx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        temporaries(tmp.path()).len(),
        1,
        "the live build's file stays"
    );
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bin().args(["verify", s(&slow)]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(temporaries(tmp.path()).is_empty());
}

/// Builds `out` with the process umask `umask`; returns the file's permission bits.
fn build_with_umask(out: &Path, umask: u32) -> u32 {
    let mut c = bin();
    c.args(["build", "samples/wiki-en/Crab.txt", "-q", "-o", s(out)]);
    // SAFETY: umask(2) is async-signal-safe and touches only the child's own state.
    unsafe {
        c.pre_exec(move || {
            libc::umask(umask as libc::mode_t);
            Ok(())
        });
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::metadata(out).unwrap().permissions().mode() & 0o777
}

/// A new index file gets the umask's permissions; one written over an old file keeps the old
/// file's, as `cp` and a shell's `>` do (a 0600 index stays private when it is rebuilt or
/// signed).
#[test]
fn index_files_get_the_umasks_permissions_or_keep_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("x.pdx");
    assert_eq!(build_with_umask(&out, 0o022), 0o644);
    assert_eq!(build_with_umask(&tmp.path().join("y.pdx"), 0o002), 0o664);
    assert_eq!(build_with_umask(&tmp.path().join("z.pdx"), 0o077), 0o600);
    // Rebuilt over them, with another umask: each keeps its own.
    assert_eq!(build_with_umask(&out, 0o002), 0o644);
    assert_eq!(build_with_umask(&tmp.path().join("z.pdx"), 0o022), 0o600);
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(build_with_umask(&out, 0o022), 0o640);
}

/// A reader keeps the index it mapped while pocketdex writes a new one at the same path: its
/// writers rename a new file into place and never change a file in place, which would kill a
/// reader with SIGBUS (see the README's limits).
#[test]
fn rebuilding_an_index_under_a_running_query_leaves_the_query_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("x.pdx");
    let build = |input: &str| {
        let o = bin()
            .args(["build", input, "-q", "-o", s(&index)])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    build("samples/wiki-en");
    let query = bin()
        .args(["query", s(&index), "samples/wiki-en", "--json", "--similar"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for input in [
        "samples/wiki-en/Crab.txt",
        "samples/query",
        "samples/wiki-en",
    ] {
        build(input);
    }
    let o = query.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?} {}", o.status, stderr(&o));
    let queries = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(r#""type":"query""#))
        .count();
    assert_eq!(queries, 300);
}

/// An index that another program truncates under a running query kills it with SIGBUS, as the
/// README's limits say, and the query says why first.
#[cfg(target_os = "linux")]
#[test]
fn an_index_truncated_under_a_query_is_explained() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("x.pdx");
    let o = bin()
        .args(["build", "samples/wiki-en", "-q", "-o", s(&index)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The query maps the index, then waits for its document on standard input.
    let mut query = bin()
        .args(["query", s(&index), "-", "--stdin-format", "text"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let maps = format!("/proc/{}/maps", query.id());
    let start = Instant::now();
    while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(s(&index))) {
        assert!(
            start.elapsed().as_secs() < 60,
            "the query never mapped the index"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap()
        .set_len(0)
        .unwrap();
    let doc = std::fs::read("samples/query/edited.txt").unwrap();
    let mut stdin = query.stdin.take().unwrap();
    // The query may meet the shrunk file (and die of it) before it reads its document: its
    // pipe is closed by then, which is what the test is after.
    match stdin.write_all(&doc) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    drop(stdin);
    let o = query.wait_with_output().unwrap();
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGBUS),
        "{:?} {}",
        o.status,
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("pocketdex: a file it was reading shrank"),
        "{}",
        stderr(&o)
    );
}
