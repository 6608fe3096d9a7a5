//! Running a bench's commands and measuring them: wall time, CPU time and the peak resident
//! memory of the command alone (through a helper process); the first lines of a file; and the
//! generated collections that the scale benches share.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Call first in a bench's `main`: when the bench was started as [`run`]'s helper
/// (`--rusage PROGRAM ARGS…`), runs the command and exits.
pub fn serve_rusage() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--rusage") {
        rusage_helper(&args[at + 1], &args[at + 2..]);
    }
}

/// What running a command cost: wall time, CPU time and peak resident memory.
pub struct Run {
    pub secs: f64,
    pub cpu_secs: f64,
    /// Peak resident memory: anonymous memory plus the file pages mapped in (a method's
    /// features spilled to a temporary file count here while mapped, though the kernel can
    /// drop them).
    pub max_rss_mb: f64,
    /// Peak anonymous resident memory (heap and stacks), sampled every 20 ms: what the process
    /// cannot give back under memory pressure.
    pub max_anon_mb: f64,
    pub stdout: Vec<u8>,
}

/// Runs a command to its end and measures it. The command runs under a small helper process
/// (this executable with `--rusage`), because Linux keeps a process's peak resident memory across
/// fork and exec: a child forked straight from this process, which holds indexes and queries,
/// would report our peak instead of its own.
pub fn run(cmd: &mut Command) -> Run {
    let start = Instant::now();
    let mut helper = Command::new(std::env::current_exe().expect("own path"));
    helper
        .arg("--rusage")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let out = helper.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let secs = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let (err, usage) = err
        .trim_end()
        .rsplit_once('\n')
        .unwrap_or(("", err.trim_end()));
    let usage: Vec<f64> = usage
        .strip_prefix("rusage ")
        .unwrap_or_else(|| panic!("{cmd:?}: no rusage from the helper: {err}"))
        .split(' ')
        .map(|x| x.parse().expect("rusage numbers"))
        .collect();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{cmd:?} failed: {err}"
    );
    Run {
        secs,
        cpu_secs: usage[0],
        max_rss_mb: usage[1] / 1024.0,
        max_anon_mb: usage[2] / 1024.0,
        stdout: out.stdout,
    }
}

/// The helper of [`run`]: runs `program args…` with this process's stdin, stdout and stderr,
/// reaps it with wait4, and appends `rusage CPU_SECONDS MAX_RSS_KB MAX_ANON_KB` to stderr; exits
/// with the command's status. The kernel keeps no peak of anonymous memory, so a thread reads
/// the child's `RssAnon` every 20 ms.
// The child is reaped by wait4, which std's `wait` cannot replace: it gives no rusage.
#[allow(clippy::zombie_processes)]
fn rusage_helper(program: &str, args: &[String]) -> ! {
    let child = Command::new(program)
        .args(args)
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let status_file = format!("/proc/{}/status", child.id());
    let max_anon = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sampler = {
        let max_anon = max_anon.clone();
        // Ends when the child is reaped and its status file is gone.
        std::thread::spawn(move || {
            while let Ok(s) = std::fs::read_to_string(&status_file) {
                let kb = s
                    .lines()
                    .find_map(|l| l.strip_prefix("RssAnon:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
                if let Some(kb) = kb {
                    max_anon.fetch_max(kb, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own un-reaped child; `status` and `usage` are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    sampler.join().expect("the sampler does not panic");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    eprintln!(
        "\nrusage {} {} {}",
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_maxrss,
        max_anon.load(std::sync::atomic::Ordering::Relaxed)
    );
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        2
    };
    std::process::exit(code)
}

/// The first `n` lines of `from` into `to` (skipped when `to` exists).
pub fn head(from: &Path, to: &Path, n: u64) {
    if to.exists() {
        return;
    }
    use std::io::{BufRead, Write};
    let r = std::io::BufReader::new(std::fs::File::open(from).expect("open"));
    let tmp = to.with_extension("tmp");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).expect("create"));
    for line in r.lines().take(n as usize) {
        writeln!(w, "{}", line.expect("read")).expect("write");
    }
    w.flush().expect("flush");
    std::fs::rename(tmp, to).expect("rename");
}

/// The sizes of a `--docs N,N,…` option.
pub fn sizes(value: &str) -> Vec<u64> {
    value
        .split(',')
        .map(|n| n.trim().parse().expect("--docs: numbers"))
        .collect()
}

/// The generated collection of `n` documents in `out` (`pocketdex synth --generate`, over
/// `vocab` or the built-in pseudo-words), made when missing: its tag (the vocabulary's name,
/// or `builtin`, and the generator's version) and its path, `OUT/gen-TAG-N.jsonl`, a name every
/// scale bench reuses (and no bench takes for another version's documents).
pub fn generated(bin: &str, out: &Path, vocab: Option<&Path>, n: u64) -> (String, PathBuf) {
    let name = match vocab {
        Some(v) => v
            .file_name()
            .and_then(|n| n.to_string_lossy().split('.').next().map(str::to_string))
            .unwrap_or_else(|| "vocab".into()),
        None => "builtin".into(),
    };
    let tag = format!("{name}-v{}", pocketdex_eval::synth::generate::VERSION);
    let gen = out.join(format!("gen-{tag}-{n}.jsonl"));
    if !gen.exists() {
        let tmp = out.join(format!("gen-{tag}-{n}.jsonl.tmp"));
        let mut cmd = Command::new(bin);
        cmd.args(["synth", "--generate", &n.to_string()]);
        if let Some(v) = vocab {
            cmd.arg("--vocab").arg(v);
        }
        cmd.arg("-o").arg(&tmp);
        let g = run(&mut cmd);
        eprintln!("generated {n} documents in {:.1} s", g.secs);
        std::fs::rename(&tmp, &gen).expect("rename");
    }
    (tag, gen)
}
