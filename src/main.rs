//! The `pocketdex` command line: a thin layer over the library, one file per subcommand in `cli/`.

/// `eprintln!` for every module below, which never panics: std's panics when stderr is closed
/// or full (`pocketdex dups DIR 2>&1 | head`, `2>/dev/full`), ending a command with a
/// backtrace in the middle of its work; a message that cannot be written is lost instead.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as `eprintln!` above.
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse_args();
    let json = args.json_output();
    explain_sigbus();
    // A server stops on SIGTERM by finishing its requests, the writes of `/v1/check` with
    // them: what a write it could not finish left, the next writer removes.
    if !args.is_serve() {
        clean_up_on_signals();
    }
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`pocketdex query … | head`) is not an error.
            if cli::util::is_closed_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("pocketdex: error: {}", message(&e));
            if json {
                // A script reading JSON gets the error there too, and whether to try again:
                // `busy` when another writer holds the set's lock.
                let busy = e.chain().any(|c| {
                    matches!(
                        c.downcast_ref::<pocketdex::Error>(),
                        Some(pocketdex::Error::Busy { .. })
                    )
                });
                // Not println!, which panics when the reader is gone.
                let line =
                    serde_json::json!({"type": "error", "message": causes(&e), "busy": busy});
                let _ = writeln!(std::io::stdout(), "{line}");
            }
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, joined by ": ", leaving out a cause whose text the message already
/// ends with (a library error that shows its source, `path: Permission denied (os error 13)`,
/// would otherwise print the OS error twice); control characters escaped, as in names printed
/// elsewhere (a file name with a newline or an escape sequence cannot forge a line or colours).
pub(crate) fn message(e: &anyhow::Error) -> String {
    cli::util::printable(&causes(e)).into_owned()
}

/// The causes of `e`, joined (see [`message`], which escapes them).
fn causes(e: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

/// On SIGINT, SIGTERM or SIGHUP: removes the temporary files of writes in progress (an
/// interrupted build leaves nothing behind), then dies of the signal as if it had no handler, so
/// the shell sees an interrupted command (status 130, 143 or 129); but after an index set's
/// change was committed, says so and exits 0 (the change is done). A signal ignored when
/// pocketdex starts (`nohup`, a background job of a script) stays ignored.
#[cfg(unix)]
fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let handled: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| !ignored(s))
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(&handled) else {
        return; // Without a handler the signals kill as before; stale files go at the next write.
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            pocketdex::atomic::remove_in_flight(|removed, held| {
                if pocketdex::atomic::committed().is_some() {
                    return;
                }
                // Ending here: the segments no manifest names can go too (a new one renamed
                // into place before the manifest that would have named it).
                if removed + held.remove_unnamed_segments() > 0 {
                    eprintln!("\npocketdex: interrupted; the unfinished output was removed");
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            });
            // Interrupted after a change was committed (an `add` merging segments, a `check
            // --add` printing its verdicts or merging, a `merge` or `delete` removing the files
            // it no longer needs): the change stands, and a script must not take it for undone
            // and make it again. What follows it goes on meanwhile: the command's answer is
            // printed whole first, without the list of temporary files held, at most 10 s (for
            // a reader that stopped reading); then what it left unfinished is removed and the
            // command's own status is given.
            let status = cli::util::answered(std::time::Duration::from_secs(10));
            pocketdex::atomic::remove_in_flight(|_, held| {
                held.remove_unnamed_segments();
                let what = pocketdex::atomic::committed().unwrap_or_default();
                match status {
                    Some(status) => {
                        eprintln!(
                            "\npocketdex: interrupted after the change was committed: {what}; the set is sound (what came after the change, such as a merge of segments, was cut short)"
                        );
                        std::process::exit(status.into());
                    }
                    None => {
                        eprintln!(
                            "\npocketdex: interrupted after the change was committed ({what}) while its answer could not be written; the set is sound"
                        );
                        std::process::exit(2);
                    }
                }
            });
        }
    });
}

#[cfg(not(unix))]
fn clean_up_on_signals() {}

/// Says why, when a file pocketdex has mapped (an index, a `.jsonl` input) shrinks under it:
/// another program truncated it or rewrote it in place, and the read of a lost page faults
/// (SIGBUS). The process still dies of the signal (status 135), as the README's limits say.
#[cfg(unix)]
fn explain_sigbus() {
    extern "C" fn on_sigbus(_: libc::c_int) {
        const WHY: &[u8] = b"\npocketdex: a file it was reading shrank: another program truncated or rewrote an index or .jsonl input in place while it was read (replace files by renaming a new one into place; read a .jsonl that may shrink as a stream: cat docs.jsonl | pocketdex ... -)\n";
        // SAFETY: write(2) and signal(2) are async-signal-safe. With the default action back,
        // the read that faulted faults again when this returns, and ends the process.
        unsafe {
            libc::write(2, WHY.as_ptr().cast(), WHY.len());
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        }
    }
    // SAFETY: the handler only calls async-signal-safe functions.
    unsafe { libc::signal(libc::SIGBUS, on_sigbus as *const () as libc::sighandler_t) };
}

#[cfg(not(unix))]
fn explain_sigbus() {}

/// Whether `signal` is ignored (SIG_IGN) in this process.
#[cfg(unix)]
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`, a
    // zeroed plain C struct owned here.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}
