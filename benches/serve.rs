//! The load benchmark of `pocketdex serve` (issue 13): a generated collection of ~1 KB documents
//! indexed by the binary, the library answering a query set on two threads in this process,
//! then `pocketdex serve` as a child process under a closed-loop load of C keep-alive HTTP/1.1
//! connections on the loopback interface, each POSTing the queries (text/plain) one after the
//! other; the library again after it, so that the server/library ratio is of one run.
//!
//! It reports requests/s, latency (p50, p90, p99, max), errors (any status but 200, any I/O
//! error), the server's throughput over the library's (and "by CPU": the library's CPU time per
//! query over the server's and the client's per request, what the ratio would be on two cores
//! of their own, since other processes on a shared machine inflate neither), the server's CPU
//! and the client's, and the server's resident memory and threads after warming up and after
//! the load. A sample of answers is
//! compared with the library's `records` after the load. A table goes to stdout, then one JSON
//! line with every number (also in `OUT/report.json`).
//!
//! ```sh
//! scripts/serve-bench.sh                                # the full run: 200,000 docs, 30 s, 64 connections
//! cargo bench --bench serve -- --test                   # CI: 5,000 docs, 3 s; asserts no error, right answers
//! cargo bench --bench serve -- --docs 200000 --seconds 30 --connections 64
//! cargo bench --bench serve -- --server A --server "A --threads 4" --rounds 2   # alternating
//! ```
//!
//! Options: `--docs N` (200,000), `--seconds S` (30), `--connections C` (64), `--queries Q`
//! (2,000: three quarters edited copies of indexed documents at rates 0.02–0.2, one quarter
//! generated documents not in the index, mixed), `--library-seconds S` (each library phase; a
//! third of --seconds), `--warmup S` (3), `--client-threads N` (1: the load generator's tokio
//! runtime, current-thread for 1), `--server "PATH [ARG…]"` (a `pocketdex` binary to serve
//! with and arguments of its own for `serve`, repeatable; default the one cargo built), `--serve-arg ARG` (passed to every `serve`,
//! repeatable), `--rounds R` (1: each round runs every server, in reversed order every other
//! round, and a library phase closes each), `--floor` (after each load, as long again up to
//! 10 s of `GET /healthz`: what HTTP alone costs the server and the client), `--batch N` (1: each
//! request POSTs N queries to `/v1/query/batch`; rates and CPU are then per query), `--out DIR` (`data/serve`; generated files are kept
//! and reused), `--test`. Timings are never asserted: this is a shared 2-core machine, and the
//! load generator shares the cores with the server; compare numbers of one run only.
//!
//! The load generator is a connection per task on tokio that writes each request whole and
//! parses the answer's head with `httparse` (hyper's parser), as wrk does, rather than `oha`: it
//! lets one process measure the library, the server and its answers in the same run with
//! nothing to install, and costs a few µs of CPU per request, which matters when it shares two
//! cores with the server. The answers after the load are read by hyper's own client
//! connection, a second implementation of HTTP.

mod common;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use pocketdex::{IndexSet, QueryOptions};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_pocketdex");
/// Edit rates of the queries that are edited copies.
const RATES: [f64; 4] = [0.02, 0.05, 0.1, 0.2];
/// Median words and σ of the log length of generated documents: about 1 KB of text each
/// (`synth --generate --words 145 --sigma 0.35`).
const WORDS: f64 = 145.0;
const SIGMA: f64 = 0.35;
/// Edited copies are made of documents among the first this many.
const POOL: u64 = 20_000;
/// Answers compared with the library's after each load.
const SAMPLE: usize = 300;

struct Options {
    docs: u64,
    seconds: f64,
    connections: usize,
    queries: usize,
    library_seconds: Option<f64>,
    warmup: f64,
    client_threads: usize,
    /// Each a binary and, after spaces, arguments of its own for `serve`.
    servers: Vec<String>,
    serve_args: Vec<String>,
    rounds: usize,
    floor: bool,
    /// Queries per request: above 1, each request POSTs that many to `/v1/query/batch`.
    batch: usize,
    out: PathBuf,
    test: bool,
}

fn options() -> Options {
    let mut o = Options {
        docs: 200_000,
        seconds: 30.0,
        connections: 64,
        queries: 2_000,
        library_seconds: None,
        warmup: 3.0,
        client_threads: 1,
        servers: Vec::new(),
        serve_args: Vec::new(),
        rounds: 1,
        floor: false,
        batch: 1,
        out: PathBuf::from("data/serve"),
        test: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--docs" => o.docs = value().parse().expect("--docs: a number"),
            "--seconds" => o.seconds = value().parse().expect("--seconds: a number"),
            "--connections" => o.connections = value().parse().expect("--connections: a number"),
            "--queries" => o.queries = value().parse().expect("--queries: a number"),
            "--library-seconds" => {
                o.library_seconds = Some(value().parse().expect("--library-seconds: a number"))
            }
            "--warmup" => o.warmup = value().parse().expect("--warmup: a number"),
            "--client-threads" => {
                o.client_threads = value().parse().expect("--client-threads: a number")
            }
            "--server" => o.servers.push(value()),
            "--serve-arg" => o.serve_args.push(value()),
            "--rounds" => o.rounds = value().parse().expect("--rounds: a number"),
            "--out" => o.out = PathBuf::from(value()),
            "--floor" => o.floor = true,
            "--batch" => o.batch = value().parse().expect("--batch: a number"),
            "--test" => {
                o.test = true;
                o.docs = 5_000;
                o.seconds = 3.0;
                o.queries = 400;
                o.warmup = 1.0;
                o.out = PathBuf::from("target/serve-test");
            }
            // cargo bench passes --bench.
            _ => {}
        }
    }
    assert!(o.docs >= 100, "--docs: at least 100");
    assert!(o.connections >= 1 && o.client_threads >= 1 && o.rounds >= 1);
    assert!(o.seconds > 0.0 && o.queries >= 10 && o.batch >= 1);
    if o.servers.is_empty() {
        o.servers.push(BIN.to_string());
    }
    o
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs `pocketdex ARGS` to its end; panics with its stderr when it fails.
fn pocketdex(args: &[&str]) {
    let out = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("pocketdex {args:?}: {e}"));
    assert!(
        out.status.success(),
        "pocketdex {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes `path` by `make(tmp)` unless it exists; a run stopped halfway leaves only the temporary.
fn cached(path: &Path, make: impl FnOnce(&Path)) {
    if path.exists() {
        eprintln!("reusing {}", path.display());
        return;
    }
    let tmp = path.with_extension("tmp");
    eprintln!("making {}", path.display());
    make(&tmp);
    std::fs::rename(&tmp, path).expect("rename into place");
}

/// The collection, the index and the query texts.
fn data(o: &Options) -> (PathBuf, Vec<String>) {
    std::fs::create_dir_all(&o.out).expect("create --out");
    // Fresh queries are the generated documents after the first `docs`: never indexed.
    let fresh = (o.queries / 4) as u64;
    let edited = o.queries as u64 - fresh;
    let generated = o
        .out
        .join(format!("gen-{}-w{WORDS}-s{SIGMA}.jsonl", o.docs + fresh));
    cached(&generated, |to| {
        pocketdex(&[
            "synth",
            "--generate",
            &(o.docs + fresh).to_string(),
            "--words",
            &WORDS.to_string(),
            "--sigma",
            &SIGMA.to_string(),
            "-o",
            s(to),
        ])
    });
    let index = o
        .out
        .join(format!("index-{}-w{WORDS}-s{SIGMA}.pdx", o.docs));
    cached(&index, |to| {
        // The first `docs` lines on the build's standard input.
        let mut build = Command::new(BIN)
            .args(["build", "-", "--stdin-format", "jsonl", "-o", s(to)])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("pocketdex build");
        let mut input = std::io::BufWriter::new(build.stdin.take().expect("stdin"));
        let reader = BufReader::new(std::fs::File::open(&generated).expect("open collection"));
        for line in reader.lines().take(o.docs as usize) {
            writeln!(input, "{}", line.expect("read collection")).expect("write to build");
        }
        drop(
            input
                .into_inner()
                .map_err(|e| e.into_error())
                .expect("flush"),
        );
        assert!(
            build.wait().expect("wait for build").success(),
            "build failed"
        );
    });
    let pool = POOL.min(o.docs);
    let copies = o.out.join(format!("edited-{pool}-{edited}.jsonl"));
    cached(&copies, |to| {
        let args = common::synth_copies(&generated, Some(pool), pool, edited, &RATES, 13, to);
        pocketdex(&args.iter().map(String::as_str).collect::<Vec<_>>())
    });
    let text = |line: &str| -> String {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        v["text"].as_str().expect("text").to_owned()
    };
    let edited: Vec<String> = std::fs::read_to_string(&copies)
        .expect("read edited copies")
        .lines()
        .map(text)
        .collect();
    let fresh: Vec<String> = BufReader::new(std::fs::File::open(&generated).expect("open"))
        .lines()
        .skip(o.docs as usize)
        .map(|l| text(&l.expect("read collection")))
        .collect();
    // Mixed: a fresh document after every three edited copies, while both last.
    let (mut queries, mut e, mut f) = (Vec::new(), edited.into_iter(), fresh.into_iter());
    loop {
        let before = queries.len();
        queries.extend(e.by_ref().take(3));
        queries.extend(f.next());
        if queries.len() == before {
            break;
        }
    }
    (index, queries)
}

/// CPU seconds this thread has used.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// The library on `threads` threads for `secs`: `IndexSet::query` and `records`, what the
/// server computes per request (api.rs `answer`). Returns queries per second and CPU µs per
/// query (the threads' own CPU time, which other processes on a shared machine do not inflate).
fn library(set: &IndexSet, queries: &[String], threads: usize, secs: f64) -> (f64, f64) {
    let opts = QueryOptions::default();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(secs);
    let (done, cpu) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let opts = &opts;
                scope.spawn(move || {
                    let cpu0 = thread_cpu();
                    let mut i = t * queries.len() / threads;
                    let mut n = 0u64;
                    while Instant::now() < until {
                        let r = set.query(&queries[i], opts).expect("query");
                        std::hint::black_box(set.records(&r).expect("records"));
                        i = (i + 1) % queries.len();
                        n += 1;
                    }
                    (n, thread_cpu() - cpu0)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .fold((0u64, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    (
        done as f64 / start.elapsed().as_secs_f64(),
        cpu * 1e6 / done as f64,
    )
}

/// A running `pocketdex serve`.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(bin: &Path, index: &Path, extra: &[String]) -> Server {
        let mut child = Command::new(bin)
            .args(["serve", s(index), "--addr", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the address from the first line, then keeps the pipe drained.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                match line.split_once(" at http://") {
                    Some((_, rest)) if tx.is_some() => {
                        let addr = rest.split('/').next().unwrap_or("").to_string();
                        let _ = tx.take().expect("once").send(addr);
                    }
                    _ => eprintln!("  server: {line}"),
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server printed no address within 60 s")
            .parse()
            .expect("a socket address");
        Server { child, addr }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, as an operator stops it; it must exit by itself. Returns how it ended.
    fn stop(mut self) -> String {
        // SAFETY: kill(2) on our own child's pid; it has not been reaped yet.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                // Dying of the signal is not the graceful shutdown `serve` promises (the
                // command line's own SIGTERM handler can win over the server's); reported, not
                // asserted here: what this bench measures is load.
                assert!(
                    status.success() || status.signal() == Some(libc::SIGTERM),
                    "the server exited with {status}"
                );
                return if status.success() {
                    "exited".into()
                } else {
                    "killed by SIGTERM".into()
                };
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("the server did not stop within 30 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A process's resident memory and threads: (VmRSS MB, RssAnon MB, threads).
fn rss(pid: u32) -> (f64, f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (
        field("VmRSS:") / 1024.0,
        field("RssAnon:") / 1024.0,
        field("Threads:"),
    )
}

/// CPU seconds a process has used (user + system).
fn cpu_secs(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    // Fields after the command name, which may hold spaces: utime and stime are the 12th and
    // 13th after it.
    let rest = &stat[stat.rfind(')').expect("stat") + 2..];
    let f: Vec<f64> = rest
        .split(' ')
        .skip(11)
        .take(2)
        .map(|x| x.parse().expect("ticks"))
        .collect();
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (f[0] + f[1]) / tick
}

/// What one load run measured.
struct Load {
    requests: u64,
    errors: u64,
    first_errors: Vec<String>,
    /// Latencies of the answered requests in µs, sorted.
    micros: Vec<u32>,
    secs: f64,
    client_cpu: f64,
}

impl Load {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.secs
    }

    /// Nearest-rank percentile, in ms.
    fn ms(&self, p: f64) -> f64 {
        if self.micros.is_empty() {
            return f64::NAN;
        }
        let rank = ((p * self.micros.len() as f64).ceil() as usize).clamp(1, self.micros.len());
        self.micros[rank - 1] as f64 / 1000.0
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    // Requests are written whole; Nagle would only delay the next one.
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    // The connection's I/O runs as its own task; it ends when `send` is dropped.
    tokio::spawn(conn);
    Ok(send)
}

/// POSTs one query and reads the whole answer: its status and body (the answers' check).
async fn post(send: &mut Sender, addr: SocketAddr, body: Bytes) -> Result<(u16, Bytes), String> {
    send.ready().await.map_err(|e| format!("ready: {e}"))?;
    let req = hyper::Request::post("/v1/query")
        .header(hyper::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(hyper::header::HOST, addr.to_string())
        .body(Full::new(body))
        .expect("a request");
    let resp = send
        .send_request(req)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    Ok((status, body))
}

/// The bytes of one whole HTTP/1.1 request: `target` (e.g. `POST /v1/query`) and, when given,
/// a body with its content type.
fn raw_request(target: &str, body: Option<(&str, &str)>) -> Vec<u8> {
    let mut r = format!("{target} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if let Some((content_type, body)) = body {
        r += &format!(
            "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    } else {
        r += "\r\n";
    }
    r.into_bytes()
}

/// A query POSTed as text/plain to `/v1/query`.
fn query_request(text: &str) -> Vec<u8> {
    raw_request("POST /v1/query", Some(("text/plain; charset=utf-8", text)))
}

/// `texts` POSTed as JSON to `/v1/query/batch`.
fn batch_request(texts: &[String]) -> Vec<u8> {
    let body = json!({ "texts": texts }).to_string();
    raw_request("POST /v1/query/batch", Some(("application/json", &body)))
}

/// One keep-alive connection of the load, as a load generator keeps one (wrk's way): a request
/// is written whole, the answer read into one buffer and its head parsed with `httparse`
/// (hyper's parser), in the connection's own task. hyper's client connection runs its I/O as a
/// second task and hands each answer across a channel, which cost ~11 µs of CPU per request,
/// a third of what the server spends, on the cores the server shares.
struct Conn {
    stream: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        // Requests are written whole; Nagle would only delay the next one.
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(1 << 16),
        })
    }

    /// Reads what has arrived into the buffer; `closed` is the error when nothing will.
    async fn read_more(&mut self, closed: &str) -> Result<(), String> {
        use tokio::io::AsyncReadExt;
        match self.stream.read_buf(&mut self.buf).await {
            Ok(0) => Err(closed.to_string()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    /// Sends `req` and reads its answer: the status, and the body when it is not 200 (for the
    /// error message). An answer without a `Content-Length` is an error: the server sends one.
    async fn exchange(&mut self, req: &[u8]) -> Result<(u16, String), String> {
        use tokio::io::AsyncWriteExt;
        self.stream
            .write_all(req)
            .await
            .map_err(|e| format!("send: {e}"))?;
        self.buf.clear();
        let (status, head, len) = loop {
            self.read_more("the server closed the connection").await?;
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&self.buf) {
                Ok(httparse::Status::Complete(head)) => {
                    let len = resp
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                        .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
                        .ok_or("an answer without Content-Length")?;
                    break (resp.code.unwrap_or(0), head, len);
                }
                Ok(httparse::Status::Partial) => continue,
                Err(e) => return Err(format!("a malformed answer: {e}")),
            }
        };
        while self.buf.len() < head + len {
            self.read_more("the server closed the connection mid-answer")
                .await?;
        }
        if self.buf.len() > head + len {
            return Err("more bytes than the answer's Content-Length".into());
        }
        let body = if status == 200 {
            String::new()
        } else {
            String::from_utf8_lossy(&self.buf[head..]).into_owned()
        };
        Ok((status, body))
    }
}

fn runtime(threads: usize) -> tokio::runtime::Runtime {
    if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    }
    .enable_all()
    .build()
    .expect("a tokio runtime")
}

/// `connections` connections, each POSTing the queries in turn (from its own offset) and each
/// next one as soon as the answer is in, until `secs` have passed; a connection that fails is
/// counted and opened again.
fn load(addr: SocketAddr, requests: &Arc<Vec<Vec<u8>>>, o: &Options, secs: f64) -> Load {
    let rt = runtime(o.client_threads);
    let cpu0 = cpu_secs("self");
    let start = Instant::now();
    let until = tokio::time::Instant::from_std(start + Duration::from_secs_f64(secs));
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..o.connections)
            .map(|c| {
                let requests = requests.clone();
                let mut i = c * requests.len() / o.connections;
                tokio::spawn(async move {
                    let (mut ok, mut errors, mut first, mut micros) =
                        (0u64, 0u64, Vec::new(), Vec::with_capacity(1 << 14));
                    let mut fail = |e: String, errors: &mut u64| {
                        *errors += 1;
                        if first.len() < 5 {
                            first.push(e);
                        }
                    };
                    'connect: while tokio::time::Instant::now() < until {
                        let mut conn = match Conn::open(addr).await {
                            Ok(s) => s,
                            Err(e) => {
                                fail(e, &mut errors);
                                tokio::time::sleep(Duration::from_millis(10)).await;
                                continue;
                            }
                        };
                        while tokio::time::Instant::now() < until {
                            let t0 = Instant::now();
                            let r = conn.exchange(&requests[i]).await;
                            i = (i + 1) % requests.len();
                            match r {
                                Ok((200, _)) => {
                                    ok += 1;
                                    micros.push(t0.elapsed().as_micros().min(u32::MAX as u128)
                                        as u32);
                                }
                                Ok((status, body)) => {
                                    fail(format!("status {status}: {body}"), &mut errors)
                                }
                                Err(e) => {
                                    fail(e, &mut errors);
                                    continue 'connect;
                                }
                            }
                        }
                    }
                    (ok, errors, first, micros)
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.push(t.await.expect("a connection task"));
        }
        all
    });
    let secs = start.elapsed().as_secs_f64();
    let client_cpu = cpu_secs("self") - cpu0;
    let mut l = Load {
        requests: 0,
        errors: 0,
        first_errors: Vec::new(),
        micros: Vec::new(),
        secs,
        client_cpu,
    };
    for (ok, errors, first, micros) in results {
        l.requests += ok;
        l.errors += errors;
        l.first_errors.extend(first);
        l.micros.extend(micros);
    }
    l.first_errors.truncate(5);
    l.micros.sort_unstable();
    l
}

/// Queries of the sample whose answer from the server differs from the library's records
/// (as JSON: ids, scores rounded as serialized, ranks, codes, paths).
fn wrong_answers(addr: SocketAddr, queries: &[String], expected: &[(usize, Value)]) -> Vec<String> {
    runtime(1).block_on(async {
        let mut send = connect(addr).await.expect("connect for the sample");
        let mut wrong = Vec::new();
        for (i, want) in expected {
            let (status, body) = post(&mut send, addr, Bytes::from(queries[*i].clone()))
                .await
                .expect("a sample query");
            let got: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if status != 200 || &got["hits"] != want {
                wrong.push(format!(
                    "query {i}: status {status}, hits {} instead of {want}",
                    got["hits"]
                ));
            }
        }
        wrong
    })
}

/// One server's load run, from start to stop.
struct Run {
    server: String,
    round: usize,
    load: Load,
    warmup_errors: u64,
    rss_before: (f64, f64, f64),
    rss_after: (f64, f64, f64),
    server_cpu: f64,
    wrong: Vec<String>,
    /// How the server ended on SIGTERM.
    stopped: String,
    /// `--floor`: GET /healthz requests/s, server and client CPU µs per request, errors.
    floor: Option<(f64, f64, f64, u64)>,
}

fn serve_run(
    o: &Options,
    server: &str,
    round: usize,
    index: &Path,
    queries: &[String],
    requests: &Arc<Vec<Vec<u8>>>,
    expected: &[(usize, Value)],
) -> Run {
    let mut words = server.split_whitespace();
    let bin = PathBuf::from(words.next().expect("--server: a path"));
    let args: Vec<String> = words
        .map(str::to_owned)
        .chain(o.serve_args.clone())
        .collect();
    let label = server;
    let server = Server::start(&bin, index, &args);
    let pid = server.pid();
    // Warming up touches the index's pages and lets the allocator reach its working set.
    let warm = load(server.addr, requests, o, o.warmup);
    let rss_before = rss(pid);
    let cpu0 = cpu_secs(&pid.to_string());
    let l = load(server.addr, requests, o, o.seconds);
    let server_cpu = cpu_secs(&pid.to_string()) - cpu0;
    let rss_after = rss(pid);
    let wrong = wrong_answers(server.addr, queries, expected);
    let floor = o.floor.then(|| {
        let cpu0 = cpu_secs(&pid.to_string());
        let f = load(
            server.addr,
            // The cheapest request.
            &Arc::new(vec![raw_request("GET /healthz", None)]),
            o,
            o.seconds.min(10.0),
        );
        let cpu = cpu_secs(&pid.to_string()) - cpu0;
        (
            f.rate(),
            cpu * 1e6 / f.requests.max(1) as f64,
            f.client_cpu * 1e6 / f.requests.max(1) as f64,
            f.errors,
        )
    });
    let stopped = server.stop();
    let r = Run {
        floor,
        stopped,
        server: label.to_string(),
        round,
        warmup_errors: warm.errors,
        load: l,
        rss_before,
        rss_after,
        server_cpu,
        wrong,
    };
    eprintln!(
        "  {} round {round}: {:.0} requests/s, p99 {:.2} ms, {} errors",
        r.server,
        r.load.rate(),
        r.load.ms(0.99),
        r.load.errors
    );
    r
}

fn main() {
    let o = options();
    eprintln!(
        "serve benchmark: {} documents, {} queries, {} s at {} connections",
        o.docs, o.queries, o.seconds, o.connections
    );
    let (index, queries) = data(&o);
    let bytes: usize = queries.iter().map(String::len).sum();
    let set = IndexSet::open_files(std::slice::from_ref(&index)).expect("open the index");
    let opts = QueryOptions::default();
    // The library's answers to a sample, as the server serializes them.
    let step = (queries.len() / SAMPLE).max(1);
    let expected: Vec<(usize, Value)> = (0..queries.len())
        .step_by(step)
        .take(SAMPLE)
        .map(|i| {
            let r = set.query(&queries[i], &opts).expect("query");
            (
                i,
                serde_json::to_value(set.records(&r).expect("records")).expect("json"),
            )
        })
        .collect();
    let with_hits = queries
        .iter()
        .filter(|q| !set.query(q, &opts).expect("query").hits.is_empty())
        .count();
    // With --batch N, each request asks for N consecutive queries (the last one for what is
    // left), so that every query is asked once per cycle, as without.
    let requests: Arc<Vec<Vec<u8>>> = Arc::new(if o.batch == 1 {
        queries.iter().map(|q| query_request(q)).collect()
    } else {
        queries.chunks(o.batch).map(batch_request).collect()
    });
    // Queries per request, on average over a cycle (the last batch may be shorter).
    let per_request = queries.len() as f64 / requests.len() as f64;
    let lib_secs = o.library_seconds.unwrap_or((o.seconds / 3.0).max(1.0));
    const LIBRARY_THREADS: usize = 2;

    // Library, then every server, per round (the order reversed every other round), then the
    // library again: each server run is compared with the library phases on either side of it,
    // so that a drift of the shared machine falls on both.
    let phase = |lib: &mut Vec<(f64, f64)>| {
        lib.push(library(&set, &queries, LIBRARY_THREADS, lib_secs));
        let (rate, cpu) = lib.last().expect("a phase");
        eprintln!("  library: {rate:.0} queries/s, {cpu:.1} CPU µs per query");
    };
    let mut lib = Vec::new();
    phase(&mut lib);
    let mut runs = Vec::new();
    for round in 1..=o.rounds {
        let mut order: Vec<&String> = o.servers.iter().collect();
        if round % 2 == 0 {
            order.reverse();
        }
        for server in order {
            runs.push(serve_run(
                &o, server, round, &index, &queries, &requests, &expected,
            ));
        }
        phase(&mut lib);
    }
    let mean = |v: &[(f64, f64)]| {
        let n = v.len() as f64;
        (
            v.iter().map(|p| p.0).sum::<f64>() / n,
            v.iter().map(|p| p.1).sum::<f64>() / n,
        )
    };
    let (lib_rate, lib_cpu) = mean(&lib);

    let index_mb = std::fs::metadata(&index).expect("index").len() as f64 / 1e6;
    println!(
        "\n`pocketdex serve` under load: {} documents (index {index_mb:.1} MB), {} queries \
         ({:.0} bytes mean, {:.0}% with a hit), {} per request{}, {} connections, {} s, client on {} thread(s); \
         latencies are per request\n",
        o.docs,
        queries.len(),
        bytes as f64 / queries.len() as f64,
        100.0 * with_hits as f64 / queries.len() as f64,
        o.batch,
        if o.batch > 1 { " (/v1/query/batch)" } else { "" },
        o.connections,
        o.seconds,
        o.client_threads
    );
    println!(
        "| server | round | queries/s | p50 ms | p90 ms | p99 ms | max ms | errors | library q/s | server/library | by CPU | CPU µs/query server + client | cores server + client | RSS MB before → after | threads before → after |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut report = Vec::new();
    for r in &runs {
        let l = &r.load;
        // The library phases on either side of this run.
        let (near_rate, near_cpu) = mean(&lib[r.round - 1..=r.round]);
        // The binary's file name and its own arguments.
        let (bin, args) = r.server.split_once(' ').unwrap_or((&r.server, ""));
        let bin = Path::new(bin)
            .file_name()
            .map_or(bin.to_string(), |n| n.to_string_lossy().into_owned());
        let name = format!("{bin} {args}").trim().to_string();
        let queries_per_s = l.rate() * per_request;
        let per = |cpu: f64| cpu * 1e6 / (l.requests.max(1) as f64 * per_request);
        // What the ratio would be on two cores of their own: the library's CPU per query over
        // the server's and the client's per request (other processes inflate neither).
        let by_cpu = near_cpu / (per(r.server_cpu) + per(l.client_cpu));
        println!(
            "| {name} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {near_rate:.0} | {:.2} | {by_cpu:.2} | {:.0} + {:.0} | {:.2} + {:.2} | {:.1} → {:.1} ({:+.1}%) | {} → {} |",
            r.round,
            queries_per_s,
            l.ms(0.5),
            l.ms(0.9),
            l.ms(0.99),
            l.ms(1.0),
            l.errors + r.warmup_errors,
            queries_per_s / near_rate,
            per(r.server_cpu),
            per(l.client_cpu),
            r.server_cpu / l.secs,
            l.client_cpu / l.secs,
            r.rss_before.0,
            r.rss_after.0,
            100.0 * (r.rss_after.0 / r.rss_before.0 - 1.0),
            r.rss_before.2,
            r.rss_after.2,
        );
        report.push(json!({
            "server": r.server, "round": r.round,
            "requests": l.requests, "seconds": l.secs, "requests_per_s": l.rate(),
            "batch": o.batch, "queries_per_s": queries_per_s,
            "p50_ms": l.ms(0.5), "p90_ms": l.ms(0.9), "p99_ms": l.ms(0.99), "max_ms": l.ms(1.0),
            "errors": l.errors, "warmup_errors": r.warmup_errors, "first_errors": l.first_errors,
            "library_queries_per_s": near_rate, "server_over_library": queries_per_s / near_rate,
            "server_over_library_by_cpu": by_cpu,
            "server_cpu_us_per_query": per(r.server_cpu), "client_cpu_us_per_query": per(l.client_cpu),
            "server_cpu_cores": r.server_cpu / l.secs, "client_cpu_cores": l.client_cpu / l.secs,
            "rss_before_mb": r.rss_before.0, "rss_after_mb": r.rss_after.0,
            "rss_anon_before_mb": r.rss_before.1, "rss_anon_after_mb": r.rss_after.1,
            "rss_after_over_before": r.rss_after.0 / r.rss_before.0,
            "threads_before": r.rss_before.2, "threads_after": r.rss_after.2,
            "floor": r.floor.map(|f| json!({"requests_per_s": f.0, "server_cpu_us_per_request": f.1, "client_cpu_us_per_request": f.2, "errors": f.3})),
            "sample": expected.len(), "wrong_answers": r.wrong.len(), "on_sigterm": r.stopped,
        }));
    }
    println!(
        "\nlibrary ({LIBRARY_THREADS} threads, IndexSet::query + records, this process): {lib_rate:.0} queries/s, \
         {lib_cpu:.1} CPU µs per query (phases: {})",
        lib.iter()
            .map(|(r, c)| format!("{r:.0} q/s {c:.1} µs"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for r in &runs {
        if let Some((rate, server, client, errors)) = r.floor {
            println!(
                "floor, {} round {}: GET /healthz {rate:.0} requests/s, CPU µs/request {server:.0} + {client:.0}, {errors} errors",
                r.server, r.round
            );
        }
    }
    for r in runs.iter().filter(|r| r.stopped != "exited") {
        println!(
            "note: {} round {} was {} instead of shutting down gracefully",
            r.server, r.round, r.stopped
        );
    }
    for r in &runs {
        let (near_rate, _) = mean(&lib[r.round - 1..=r.round]);
        let ok = |b: bool| if b { "met" } else { "MISSED" };
        println!(
            "targets, {} round {}: ≥ 5,000 queries/s {}; p99 ≤ 20 ms {}; zero errors {}; ≥ half the library {}; RSS within 10% {}",
            r.server,
            r.round,
            ok(r.load.rate() * per_request >= 5000.0),
            ok(r.load.ms(0.99) <= 20.0),
            ok(r.load.errors + r.warmup_errors == 0),
            ok(r.load.rate() * per_request >= 0.5 * near_rate),
            ok(r.rss_after.0 <= 1.1 * r.rss_before.0),
        );
    }
    let all = json!({
        "bench": "serve", "docs": o.docs, "queries": queries.len(), "query_bytes_mean": bytes as f64 / queries.len() as f64,
        "queries_with_hits": with_hits, "index_mb": index_mb,
        "connections": o.connections, "seconds": o.seconds, "client_threads": o.client_threads,
        "serve_args": o.serve_args,
        "library_threads": LIBRARY_THREADS, "library_queries_per_s": lib_rate, "library_cpu_us_per_query": lib_cpu,
        "library_phases": lib.iter().map(|(r, c)| json!({"queries_per_s": r, "cpu_us_per_query": c})).collect::<Vec<_>>(),
        "runs": report,
    });
    println!("{all}");
    std::fs::write(o.out.join("report.json"), format!("{all:#}\n")).expect("write report.json");

    // Never timings: only what must hold on any machine.
    for r in &runs {
        assert_eq!(
            r.load.errors + r.warmup_errors,
            0,
            "{}: errors under load: {:?}",
            r.server,
            r.load.first_errors
        );
        assert!(
            r.wrong.is_empty(),
            "{}: wrong answers: {:?}",
            r.server,
            &r.wrong[..r.wrong.len().min(3)]
        );
        assert!(r.load.requests > 0, "{}: no request answered", r.server);
        assert!(
            r.floor.is_none_or(|f| f.3 == 0),
            "{}: errors under the GET /healthz load",
            r.server
        );
    }
}
