//! `pocketdex serve`: the JSON API and the web page over an index (the `pocketdex-server` crate).

use super::util;
use pocketdex_server::{App, Config};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Serve an index over HTTP: a JSON API and a web page for lookups
///
/// Opens INDEX (an index file or an index set) once and answers on ADDR until SIGTERM, SIGHUP
/// or Ctrl-C, then finishes the requests in flight (a second signal stops at once). Open the printed address in a browser for
/// the page: paste a document or drop files to see their near copies, with what each pair
/// shares (that needs --texts). The page needs nothing from the internet.
///
/// The API (described at /v1/openapi.json):
///   POST /v1/query        one document: text/plain body (options as ?top=&threshold=&similar=),
///                         or JSON {"text", "top"?, "threshold"?, "similar"?}
///                         -> {"hits": [{"id", "score", "rank", "codes", "path", "title"?}],
///                             "stats": {"terms", "lookups", "candidates", "hits", "micros"}}
///   POST /v1/query/batch  {"texts": [...], "top"?, "threshold"?, "similar"?}
///                         -> {"results": [answer, ...]}
///   POST /v1/check        {"documents": [{"id", "text", "title"?}], "threshold"?, "top"?,
///                         "add"?, "replace"?} -> {"results": [verdict, ...], "added", "generation"}
///   POST /v1/compare      {"text", "id"} (or {"text", "other"}) -> measures and shared terms
///   GET  /v1/info         the index as `pocketdex info --json` shows it
///   GET  /healthz         {"status": "ok", "documents", "reloads"}; "status": "stale" and
///                         "reload_error" while the index on disk cannot be opened (or is
///                         gone) and the previous version is still served
/// Errors are {"error": "..."} with status 400 (malformed), 403 (add without --writable),
/// 404, 405, 409 (check: an id taken, nothing added), 413 (body over --max-body), 415 (neither
/// JSON nor text) or 503 (over --max-in-flight or --timeout; retry).
///
/// An index replaced on disk (renamed over, as `build` and the set commands do) is picked up
/// within a second; requests in flight finish on the old one. Copying over an index in place
/// (cp onto the same file) can crash the server, as it does every reader of a mapped file.
///
/// Example:
///   pocketdex serve sample.pdx
///   curl --data-binary @samples/query/edited.txt http://127.0.0.1:8080/v1/query
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The index file or index set.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// Address to listen on (port 0: any free port; 0.0.0.0 to serve other machines).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "HOST:PORT", value_parser = host_port)]
    addr: SocketAddr,
    /// Let /v1/check add new documents (INDEX must be an index set; one change at a time, and
    /// the set's lock keeps other writers out meanwhile).
    #[arg(long)]
    writable: bool,
    /// The directory or .jsonl file INDEX was built from: lets /v1/compare and the page show
    /// what a query shares with a hit (the index holds no text).
    #[arg(long, value_name = "DIR|FILE.jsonl")]
    texts: Option<PathBuf>,
    /// Largest request body (suffixes K, M, G); larger ones are refused with 413.
    #[arg(long, value_name = "BYTES", default_value = "16M", value_parser = util::parse_size)]
    max_body: u64,
    /// Longest a request may take, in seconds, waiting included; longer ones get 503. A client
    /// that sends no request, or its headers too slowly, is disconnected after this or 10 s,
    /// whichever is shorter (an idle keep-alive connection too).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    timeout: f64,
    /// Requests in flight at once; more are refused with 503 and Retry-After.
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = util::at_least_one)]
    max_in_flight: usize,
    /// Threads serving connections, 1 to 1024 [default: the number of cores].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    #[command(flatten)]
    trust: super::sign::Trust,
}

/// `HOST:PORT`, HOST an IP address or a name (`localhost:8080`); of a name's addresses the
/// first IPv4 one, as most clients try it first.
fn host_port(s: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let addrs: Vec<SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| format!("{e} (HOST:PORT, e.g. 127.0.0.1:8080 or localhost:8080)"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{s} names no address"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // At most a day: a timeout must fit a Duration and a timer; one of days means none.
    if !(args.timeout > 0.0 && args.timeout <= 86_400.0) {
        anyhow::bail!(
            "--timeout must be a positive number of seconds, at most 86400 (a day), not {}",
            args.timeout
        );
    }
    let defaults = Config::default();
    let config = Config {
        addr: args.addr,
        writable: args.writable,
        max_body: usize::try_from(args.max_body).unwrap_or(usize::MAX),
        timeout: Duration::from_secs_f64(args.timeout),
        max_in_flight: args.max_in_flight,
        workers: args.threads.map_or(defaults.workers, usize::from),
        texts: args.texts.clone(),
        ..defaults
    };
    // Every snapshot served, the first and each replacement, is checked as `query` checks it.
    let trust: Option<pocketdex_server::state::Trust> = match args.trust.key()? {
        None => None,
        Some(_) => {
            let (trust, index) = (args.trust.clone(), args.index.clone());
            Some(Box::new(move |set: &pocketdex::IndexSet| {
                trust
                    .check(set, std::slice::from_ref(&index))
                    .map_err(|e| format!("{e:#}"))
            }))
        }
    };
    let app = App::new(&args.index, config, trust).map_err(anyhow::Error::msg)?;
    pocketdex_server::run(app).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}
