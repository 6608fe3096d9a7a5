//! `pocketdex serve` as a client meets it: the binary on an ephemeral loopback port, spoken to
//! over real sockets; every endpoint against the command line's answers, every error, a
//! replaced index, a submission check that adds, and a graceful stop.

use crate::common;

use common::{edit_words, pocketdex, root, samples, stderr, stdout, Rng};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server, stopped when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    /// What it printed on stderr after its address, collected by a thread.
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    fn start(index: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pocketdex"))
            .args(["serve", index, "--addr", "127.0.0.1:0"])
            .args(extra)
            .current_dir(root())
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let addr = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("the server ended before serving: {seen}"))
                .unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if let Some(at) = line.find("at http://") {
                let rest = &line[at + "at http://".len()..];
                break rest[..rest.find('/').unwrap()].parse().unwrap();
            }
        };
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        Server { child, addr, log }
    }

    /// One request with `Connection: close`; the status, headers (lower-case) and body.
    fn raw(&self, head: &str, body: &[u8]) -> Response {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        // A server may answer (413) and close before it reads the whole body.
        let _ = s.write_all(body);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        parse(&out)
    }

    fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Response {
        let kind = content_type
            .map(|c| format!("Content-Type: {c}\r\n"))
            .unwrap_or_default();
        self.raw(
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\n{kind}Content-Length: {}\r\nConnection: close\r\n\r\n",
                self.addr,
                body.len()
            ),
            body,
        )
    }

    fn get(&self, path: &str) -> Response {
        self.request("GET", path, None, b"")
    }

    fn post_json(&self, path: &str, v: &Value) -> Response {
        self.request(
            "POST",
            path,
            Some("application/json"),
            v.to_string().as_bytes(),
        )
    }

    fn post_text(&self, path: &str, text: &str) -> Response {
        self.request(
            "POST",
            path,
            Some("text/plain; charset=utf-8"),
            text.as_bytes(),
        )
    }

    /// Sends SIGTERM and waits for the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        std::mem::forget(self);
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{e}: {:?} ({})",
                String::from_utf8_lossy(&self.body),
                self.status
            )
        })
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    /// The error message of an error answer, after checking its status.
    fn error(&self, status: u16) -> String {
        assert_eq!(
            self.status,
            status,
            "{}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(self.header("content-type"), Some("application/json"));
        self.json()["error"].as_str().unwrap().to_string()
    }
}

fn parse(raw: &[u8]) -> Response {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..end]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked")
    {
        body = unchunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..nl]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[nl + 2..nl + 2 + n]);
        b = &b[nl + 2 + n + 2..];
    }
}

fn build(dir: &Path, name: &str, input: &str) -> String {
    let out = dir.join(name).display().to_string();
    let o = pocketdex(&["build", input, "-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// The hits of `query --json` for one document, without the labels the server leaves out.
fn cli_hits(index: &str, doc: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["query", index, doc, "--json"];
    args.extend_from_slice(extra);
    let o = pocketdex(&args);
    assert!(o.status.code() != Some(2), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "hit")
        .map(|mut v| {
            let o = v.as_object_mut().unwrap();
            o.remove("type");
            o.remove("query");
            v
        })
        .collect()
}

#[test]
fn query_answers_exactly_as_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &[]);

    // The edited copy of the quick start, as plain text and as JSON.
    let edited = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let want = cli_hits(&index, "samples/query/edited.txt", &[]);
    assert_eq!(want[0]["id"], "Jupiter.txt");
    let r = server.post_text("/v1/query", &edited);
    assert_eq!(r.status, 200);
    let a = r.json();
    assert_eq!(a["hits"], json!(want));
    assert_eq!(a["stats"]["hits"], want.len());
    assert_eq!(a["stats"]["terms"], 53);
    assert!(a["stats"]["candidates"].as_u64().unwrap() >= 1);
    let a = server
        .post_json("/v1/query", &json!({"text": edited}))
        .json();
    assert_eq!(a["hits"], json!(want));

    // Options in JSON and as URL parameters, against the CLI with the same options.
    let want = cli_hits(
        &index,
        "samples/query/edited.txt",
        &["--top", "2", "--threshold", "0.2", "--similar"],
    );
    assert_eq!(want.len(), 2);
    let a = server
        .post_json(
            "/v1/query",
            &json!({"text": edited, "top": 2, "threshold": 0.2, "similar": true}),
        )
        .json();
    assert_eq!(a["hits"], json!(want));
    let a = server
        .post_text("/v1/query?top=2&threshold=0.2&similar=true", &edited)
        .json();
    assert_eq!(a["hits"], json!(want));

    // Edited copies of real articles, in one batch, in order: each answer is the CLI's.
    let docs = samples();
    let mut rng = Rng::new(13);
    let picked: Vec<usize> = (0..12).map(|i| i * 23 % docs.len()).collect();
    let texts: Vec<String> = picked
        .iter()
        .map(|&i| edit_words(&docs[i].1, &docs[(i + 1) % docs.len()].1, 3, &mut rng))
        .collect();
    let b = server
        .post_json("/v1/query/batch", &json!({"texts": texts, "top": 5}))
        .json();
    let results = b["results"].as_array().unwrap();
    assert_eq!(results.len(), texts.len());
    for ((t, &i), r) in texts.iter().zip(&picked).zip(results) {
        let path = tmp.path().join("q.txt");
        std::fs::write(&path, t).unwrap();
        let want = cli_hits(&index, &path.display().to_string(), &["--top", "5"]);
        assert_eq!(r["hits"], json!(want), "{}", docs[i].0);
        assert_eq!(r["hits"][0]["id"], docs[i].0.as_str());
    }

    // An HTML document: its markup is removed, as `query` removes it from a file.
    let html = format!(
        "<html><head><title>J</title><style>p {{ color: red }}</style></head><body><p>{}</p></body></html>",
        edited.replace("\n\n", "</p><p>")
    );
    let path = tmp.path().join("edited.html");
    std::fs::write(&path, &html).unwrap();
    let want = cli_hits(&index, &path.display().to_string(), &[]);
    assert_eq!(want[0]["id"], "Jupiter.txt");
    let a = server.post_text("/v1/query", &html).json();
    assert_eq!(a["hits"], json!(want));

    // A document with no index term: no hits, not an error.
    let a = server.post_text("/v1/query", "1234 5678").json();
    assert_eq!(a["hits"], json!([]));
    assert_eq!(a["stats"]["terms"], 0);
    assert_eq!(server.stop().code(), Some(0));
}

#[test]
fn info_health_openapi_and_page() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &[]);
    let o = pocketdex(&["info", &index, "--json"]);
    let want: Value = serde_json::from_slice(&o.stdout).unwrap();
    let info = server.get("/v1/info").json();
    assert_eq!(info["index"], want);
    assert_eq!(info["writable"], false);
    assert_eq!(info["texts"], false);
    assert_eq!(info["max_body"], 16 << 20);

    let h = server.get("/healthz").json();
    assert_eq!(h, json!({"status": "ok", "documents": 300, "reloads": 0}));

    let api = server.get("/v1/openapi.json");
    assert_eq!(api.header("content-type"), Some("application/json"));
    let api = api.json();
    assert!(api["openapi"].as_str().unwrap().starts_with("3."));
    let paths: Vec<&str> = api["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for p in [
        "/v1/query",
        "/v1/query/batch",
        "/v1/check",
        "/v1/compare",
        "/v1/info",
        "/healthz",
    ] {
        assert!(paths.contains(&p), "{p} not in {paths:?}");
    }
    // Every schema a path refers to is described.
    let text = api.to_string();
    for r in text.split("\"#/components/schemas/").skip(1) {
        let name = &r[..r.find('"').unwrap()];
        assert!(api["components"]["schemas"][name].is_object(), "{name}");
    }

    // The page and its assets are served from the binary, and refer to nothing elsewhere.
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    for asset in ["/app.js", "/app.css"] {
        let a = server.get(asset);
        assert_eq!(a.status, 200, "{asset}");
        let body = String::from_utf8(a.body).unwrap();
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{asset}"
        );
    }
    let html = String::from_utf8(page.body).unwrap();
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
}

#[test]
fn every_error_is_json_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &["--max-body", "1K"]);
    let q = "/v1/query";

    let m = server
        .request("POST", q, Some("application/json"), b"{\"text\": ")
        .error(400);
    assert!(m.contains("invalid JSON") && m.contains("line 1"), "{m}");
    let m = server.post_json(q, &json!({"txt": "a"})).error(400);
    assert!(m.contains("unknown field `txt`"), "{m}");
    let m = server.post_json(q, &json!({"text": 5})).error(400);
    assert!(m.contains("invalid type"), "{m}");
    let m = server
        .request("POST", q, Some("text/plain"), b"caf\xe9 au lait")
        .error(400);
    assert!(m.contains("not UTF-8") && m.contains("offset 3"), "{m}");
    let m = server
        .post_json(q, &json!({"text": "a", "top": 0}))
        .error(400);
    assert!(m.contains("top must be between 1 and 10000"), "{m}");
    let m = server
        .post_json(q, &json!({"text": "a", "threshold": 1.5}))
        .error(400);
    assert!(m.contains("threshold must be between 0 and 1"), "{m}");
    let m = server.post_text("/v1/query?top=many", "a").error(400);
    assert!(m.contains("top"), "{m}");
    let m = server.post_text("/v1/query?top=-1", "a").error(400);
    assert!(
        m.starts_with("URL options: top: ") && m.contains("from 1 to 10000"),
        "{m}"
    );
    // A compressed body is refused by its encoding, not called "not UTF-8".
    let r = server.raw(
        &format!("POST {q} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"),
        b"\x1f\x8b\x08\x00",
    );
    assert!(r.error(415).contains("Content-Encoding: gzip"));
    // A JSON request's options are in its body: in the URL they would be silently ignored.
    let m = server
        .post_json("/v1/query?top=1", &json!({"text": "a"}))
        .error(400);
    assert!(m.contains("go in its body") && m.contains("?top=1"), "{m}");
    // serde would read a struct from an array by position.
    let m = server.post_json(q, &json!(["a", 5])).error(400);
    assert!(m.contains("must be a JSON object"), "{m}");
    let m = server
        .post_json("/v1/query/batch", &json!([["a"]]))
        .error(400);
    assert!(m.contains("must be a JSON object"), "{m}");
    // An empty JSON body is said to be empty, on every JSON endpoint.
    for path in [q, "/v1/query/batch", "/v1/check"] {
        for body in [&b""[..], b"  \n"] {
            let m = server
                .request("POST", path, Some("application/json"), body)
                .error(400);
            assert!(m.starts_with("the body is empty: send "), "{path}: {m}");
        }
    }
    let m = server.post_text("/v1/query/batch", "a").error(415);
    assert!(m.contains("application/json"), "{m}");
    let m = server
        .request("POST", q, Some("image/png"), b"\x89PNG")
        .error(415);
    assert!(m.contains("image/png"), "{m}");

    // Over --max-body: declared, and sent without a length (chunked).
    let big = "word ".repeat(400);
    let m = server.post_text(q, &big).error(413);
    assert!(m.contains("1024 bytes") && m.contains("--max-body"), "{m}");
    let chunk = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len());
    let r = server.raw(
        &format!("POST {q} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"),
        chunk.as_bytes(),
    );
    assert!(r.error(413).contains("--max-body"));

    let m = server.get("/v2/query").error(404);
    assert!(m.contains("no such route: GET /v2/query"), "{m}");
    let m = server.get(q).error(405);
    assert!(m.contains("/v1/query does not take GET"), "{m}");
    let m = server
        .post_json(
            "/v1/check",
            &json!({"documents": [{"id": "a", "text": "b"}], "add": true}),
        )
        .error(403);
    assert!(m.contains("--writable"), "{m}");
    let m = server
        .post_json("/v1/compare", &json!({"text": "a", "id": "Jupiter.txt"}))
        .error(404);
    assert!(m.contains("--texts"), "{m}");
    let m = server
        .post_json("/v1/compare", &json!({"text": "a"}))
        .error(400);
    assert!(m.contains("either id"), "{m}");

    // An error answered before its body is read, on a keep-alive connection whose client sends
    // the body after the head (as Python's http.client does): the answer says the connection
    // closes, so the client does not send its next request into a closed socket. An answer
    // after the whole body keeps the connection.
    for (head, keeps) in [
        ("POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n", false),
        ("POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 5\r\n\r\n", false),
        ("POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n", true),
    ] {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let _ = s.write_all(b"hello");
        let mut answer = [0u8; 4096];
        let n = s.read(&mut answer).unwrap();
        let head = String::from_utf8_lossy(&answer[..n]).to_lowercase();
        assert_eq!(!head.contains("connection: close"), keeps, "{head}");
        if keeps {
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let n = s.read(&mut answer).unwrap();
            assert!(answer[..n].starts_with(b"HTTP/1.1 200"));
        }
    }

    // Garbage on the wire: the connection gets 400 or is closed, and the server carries on.
    for junk in [
        &b"\x00\x01\x02\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /v1/query HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(junk).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        if !out.is_empty() {
            assert!(
                out.starts_with(b"HTTP/1.1 4"),
                "{:?}",
                String::from_utf8_lossy(&out)
            );
        }
    }
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(server.stop().code(), Some(0));
}

/// A batch big enough to keep the server busy for a while (at most 10,000 texts: the limit).
fn slow_batch(n: usize) -> Value {
    let docs = samples();
    let texts: Vec<&str> = (0..n).map(|i| docs[i % docs.len()].1.as_str()).collect();
    json!({"texts": texts, "top": 1})
}

#[test]
fn limits_on_time_and_requests_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");

    let server = Server::start(&index, &["--timeout", "0.05", "--threads", "1"]);
    let m = server
        .post_json("/v1/query/batch", &slow_batch(10_000))
        .error(503);
    assert!(
        m.contains("longer than 0.05 s") && m.contains("--timeout"),
        "{m}"
    );
    // Quick requests still answer.
    assert_eq!(server.get("/healthz").status, 200);
    drop(server);

    let server = Server::start(&index, &["--max-in-flight", "1", "--threads", "1"]);
    let addr = server.addr;
    let body = slow_batch(10_000).to_string();
    let busy = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "POST /v1/query/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        parse(&out).status
    });
    // While the batch is in flight, a second request is turned away at once.
    let start = Instant::now();
    let mut refused = None;
    while start.elapsed() < Duration::from_secs(20) && !busy.is_finished() {
        let r = server.get("/healthz");
        if r.status == 503 {
            refused = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = refused.expect("a request beyond --max-in-flight 1 was refused while a batch ran");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(r.error(503).contains("--max-in-flight"));
    assert_eq!(busy.join().unwrap(), 200);
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn sigterm_finishes_requests_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &["--threads", "1"]);
    let addr = server.addr;
    let body = slow_batch(3_000).to_string();
    let n = 3_000;
    let (tx, rx) = std::sync::mpsc::channel();
    let client = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "POST /v1/query/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        tx.send(()).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        parse(&out)
    });
    rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let log = server.log.clone();
    let status = server.stop();
    assert_eq!(status.code(), Some(0), "{}", log.lock().unwrap());
    let r = client.join().unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["results"].as_array().unwrap().len(), n);
    let log = log.lock().unwrap();
    assert!(log.contains("finishing the requests in flight"), "{log}");
    // Nothing listens any more.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_replaced_index_is_picked_up_without_dropping_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let half = tmp.path().join("half");
    std::fs::create_dir(&half).unwrap();
    for (name, text) in samples().iter().take(150) {
        std::fs::write(half.join(name), text).unwrap();
    }
    let index = build(tmp.path(), "served.pdx", &half.display().to_string());
    let full = build(tmp.path(), "full.pdx", "samples/wiki-en");
    let full_copy = tmp.path().join("full-copy.pdx");
    std::fs::copy(&full, &full_copy).unwrap();
    let server = Server::start(&index, &[]);
    assert_eq!(server.get("/healthz").json()["documents"], 150);

    // Clients query without pause while the file is replaced (renamed over, as build does).
    let addr = server.addr;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let s = Server {
                    child: Command::new("true").spawn().unwrap(),
                    addr,
                    log: Default::default(),
                };
                let (mut ok, mut other) = (0, Vec::new());
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = s.post_text(
                        "/v1/query",
                        "Jupiter is the largest planet of the Solar System, a gas giant",
                    );
                    if r.status == 200 {
                        ok += 1;
                    } else {
                        other.push(r.status);
                    }
                }
                (ok, other)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::rename(&full, &index).unwrap();
    let start = Instant::now();
    while server.get("/healthz").json()["documents"] != 300 {
        assert!(start.elapsed() < Duration::from_secs(20), "not picked up");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in clients {
        let (ok, other) = c.join().unwrap();
        assert!(ok > 0);
        assert!(other.is_empty(), "failed requests: {other:?}");
    }
    let h = server.get("/healthz").json();
    assert_eq!(h["reloads"], 1);
    assert_eq!(server.get("/v1/info").json()["index"]["documents"], 300);

    // A damaged replacement is refused; the server keeps answering from the last good one.
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.truncate(bytes.len() / 2);
    let bad = tmp.path().join("bad.pdx");
    std::fs::write(&bad, bytes).unwrap();
    std::fs::rename(&bad, &index).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let health = server.get("/healthz").json();
    assert_eq!(health["documents"], 300);
    // And /healthz says that what is on disk is not what is served.
    assert_eq!(health["status"], "stale", "{health}");
    assert!(
        health["reload_error"]
            .as_str()
            .unwrap()
            .contains("cannot be opened: ")
            && health["reload_error"]
                .as_str()
                .unwrap()
                .contains("index is truncated"),
        "{health}"
    );
    let r = server.post_text(
        "/v1/query",
        "Jupiter is the largest planet of the Solar System",
    );
    assert_eq!(r.status, 200);
    assert!(server
        .log
        .lock()
        .unwrap()
        .contains("still serving the previous version"));
    // Gone: said too; the good file back in its place is served, and the state is ok again.
    std::fs::remove_file(&index).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let health = server.get("/healthz").json();
    assert!(
        health["status"] == "stale" && health["reload_error"].as_str().unwrap().contains("is gone"),
        "{health}"
    );
    std::fs::copy(&full_copy, &bad).unwrap();
    std::fs::rename(&bad, &index).unwrap();
    let start = Instant::now();
    while server.get("/healthz").json()["status"] != "ok" {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not served again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Damaged in one byte that opening does not read (the last names, near the end): every
    // byte of a replacement is checked before it is served, so it is refused too, where it used
    // to be swapped in and fail every query whose hits it names.
    let mut bytes = std::fs::read(&full_copy).unwrap();
    let at = bytes.len() - 3000;
    bytes[at] ^= 1;
    std::fs::write(&bad, bytes).unwrap();
    std::fs::rename(&bad, &index).unwrap();
    let start = Instant::now();
    while !server.log.lock().unwrap().contains("checksum mismatch") {
        assert!(start.elapsed() < Duration::from_secs(20), "not refused");
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..20 {
        let r = server.post_text(
            "/v1/query",
            "Jupiter is the largest planet of the Solar System",
        );
        assert_eq!(r.status, 200);
    }
    assert_eq!(server.get("/healthz").json()["reloads"], 2);
}

#[test]
fn check_and_add_on_a_writable_set() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("archive").display().to_string();
    let o = pocketdex(&["add", &set, "samples/wiki-en"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = samples();
    let jupiter = &docs.iter().find(|d| d.0 == "Jupiter.txt").unwrap().1;

    // Read-only: the verdicts of `check --json`, nothing added.
    let ro = Server::start(&set, &[]);
    let edited = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let a = ro
        .post_json(
            "/v1/check",
            &json!({"documents": [{"id": "sub-1", "text": edited}]}),
        )
        .json();
    let o = pocketdex(&["check", &set, "samples/query/edited.txt", "--json"]);
    let mut want: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    want.as_object_mut().unwrap().remove("type");
    want["doc"] = json!("sub-1");
    assert_eq!(a["results"][0], want);
    assert_eq!(a["results"][0]["status"], "near-copy");
    assert_eq!(a["added"], 0);
    drop(ro);

    let rw = Server::start(&set, &["--writable"]);
    let generation = rw.get("/v1/info").json()["index"]["generation"]
        .as_u64()
        .unwrap();
    let new_text = "Quokkas are small macropods living on Rottnest Island, off Western Australia; \
                    visitors photograph them smiling, and the island protects them by law.";
    let body = json!({"add": true, "documents": [
        {"id": "quokka", "text": new_text, "title": "Quokka"},
        {"id": "jupiter-again", "text": jupiter},
        {"id": "quokka-2", "text": new_text},
    ]});
    // A dry run first says what adding will do: the third is a near copy of the first.
    let dry = rw
        .post_json("/v1/check", &json!({"documents": body["documents"]}))
        .json();
    assert_eq!(dry["results"][2]["hits"][0]["path"], "submitted");
    assert_eq!(dry["added"], 0);
    let a = rw.post_json("/v1/check", &body);
    assert_eq!(a.status, 200);
    let a = a.json();
    let status: Vec<&str> = a["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["new", "near-copy", "near-copy"]);
    assert_eq!(a["results"][0]["added"], true);
    assert_eq!(a["results"][1]["hits"][0]["id"], "Jupiter.txt");
    // Found among the same request's submissions.
    assert_eq!(a["results"][2]["hits"][0]["id"], "quokka");
    assert_eq!(a["results"][2]["hits"][0]["path"], "submitted");
    assert_eq!(a["added"], 1);
    assert_eq!(a["generation"], generation + 1);
    // The server answers from the new generation at once.
    let q = rw.post_text("/v1/query", new_text).json();
    assert_eq!(q["hits"][0]["id"], "quokka");
    assert_eq!(q["hits"][0]["title"], "Quokka");
    assert_eq!(rw.get("/healthz").json()["documents"], 301);

    // An id the set holds: nothing is added, 409 with the verdicts.
    let body = json!({"add": true, "documents": [
        {"id": "other", "text": "Axolotls are salamanders that keep their larval gills for life."},
        {"id": "Jupiter.txt", "text": "Cuttlefish change colour with chromatophores under their skin."},
    ]});
    let r = rw.post_json("/v1/check", &body);
    assert_eq!(r.status, 409);
    let a = r.json();
    assert_eq!(a["added"], 0);
    assert_eq!(a["results"][1]["status"], "error");
    assert!(a["results"][1]["message"]
        .as_str()
        .unwrap()
        .contains("already in the set"));
    assert!(a["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v["added"] == false));
    assert_eq!(rw.get("/healthz").json()["documents"], 301);
    // Ids that could not be printed on a line or deleted by: errors, nothing added.
    for id in ["", "  ", "a\nb", "nul\u{0}"] {
        let body = json!({"add": true, "documents": [
            {"id": id, "text": "Narwhals grow one long spiral tusk, a tooth with millions of nerve endings."},
        ]});
        let r = rw.post_json("/v1/check", &body);
        assert_eq!(r.status, 409, "{id:?}");
        let message = r.json()["results"][0]["message"].to_string();
        assert!(
            message.contains("blank or holds control characters"),
            "{message}"
        );
    }
    assert_eq!(rw.get("/healthz").json()["documents"], 301);
    // The CLI sees what the server added.
    let o = pocketdex(&["info", &set, "--json"]);
    let info: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["live_documents"], 301);
    assert_eq!(rw.stop().code(), Some(0));
}

/// A document replaced through `/v1/check` has no text under `--texts` any more (the file is
/// its old version): `/v1/compare` by its id says so rather than compare with the old text.
#[test]
fn compare_refuses_the_texts_of_documents_changed_through_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("archive").display().to_string();
    let o = pocketdex(&["add", &set, "samples/wiki-en", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rw = Server::start(&set, &["--writable", "--texts", "samples/wiki-en"]);
    let edited = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let compare = json!({"text": edited, "id": "Jupiter.txt"});
    assert_eq!(rw.post_json("/v1/compare", &compare).status, 200);
    let body = json!({"add": true, "replace": true, "documents": [
        {"id": "Jupiter.txt", "text": "Io, the innermost Galilean moon, has hundreds of active volcanoes fed by tidal heating."},
    ]});
    let r = rw.post_json("/v1/check", &body);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["results"][0]["added"], true);
    let r = rw.post_json("/v1/compare", &compare);
    assert!(r.error(404).contains("added or replaced through /v1/check"));
    // Other documents still compare.
    let compare = json!({"text": edited, "id": "Caravaggio.txt"});
    assert_eq!(rw.post_json("/v1/compare", &compare).status, 200);
    assert_eq!(rw.stop().code(), Some(0));
}

#[test]
fn compare_marks_the_shared_terms() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &["--texts", "samples/wiki-en"]);
    assert_eq!(server.get("/v1/info").json()["texts"], true);
    let edited = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let a = server
        .post_json("/v1/compare", &json!({"text": edited, "id": "Jupiter.txt"}))
        .json();
    // The runs are the texts, cut up.
    let joined = |side: &str| -> String {
        a[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["text"].as_str().unwrap())
            .collect()
    };
    assert_eq!(joined("a"), edited);
    let jupiter = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    assert_eq!(joined("b"), jupiter);
    assert!(a["shared_terms"].as_u64().unwrap() > 30);
    assert!(a["a"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["shared"] == true && s["text"] == "Jupiter"));
    // The measures are `compare --json`'s.
    let o = pocketdex(&[
        "compare",
        "samples/query/edited.txt",
        "samples/wiki-en/Jupiter.txt",
        "--json",
    ]);
    let want: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["comparison"], want["comparison"]);
    assert_eq!(a["verdicts"], want["verdicts"]);
    // No id outside the texts' directory.
    let m = server
        .post_json("/v1/compare", &json!({"text": "a", "id": "../README.md"}))
        .error(404);
    assert!(m.contains("no indexed document has the id"), "{m}");
    // A UTF-8 name that holds `\x09` as text is its own id, and its text is found by it.
    let dir = tmp.path().join("texts");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(
        root().join("samples/wiki-en/Jupiter.txt"),
        dir.join("notes\\x09old.txt"),
    )
    .unwrap();
    let literal = build(tmp.path(), "literal.pdx", dir.to_str().unwrap());
    let s2 = Server::start(&literal, &["--texts", dir.to_str().unwrap()]);
    let a = s2
        .post_json(
            "/v1/compare",
            &json!({"text": edited, "id": "notes\\x09old.txt"}),
        )
        .json();
    assert!(a["shared_terms"].as_u64().unwrap() > 30, "{a}");
    drop(s2);
    // A binary text is no document, as `compare` and `/v1/query` say.
    let m = server
        .post_json(
            "/v1/compare",
            &json!({"text": "abc\u{0}def", "other": "hello world"}),
        )
        .error(422);
    assert!(m.contains("text cannot be compared: binary"), "{m}");
    // So is an empty one, or one that is only markup, as `compare` refuses an empty file.
    for (text, other, says) in [
        (
            "",
            "Jupiter is the fifth planet",
            "text cannot be compared: empty",
        ),
        (
            "Jupiter is the fifth planet",
            "   ",
            "other cannot be compared: empty",
        ),
        (
            "<p></p>",
            "<p>Jupiter</p>",
            "text cannot be compared: empty",
        ),
    ] {
        let m = server
            .post_json("/v1/compare", &json!({"text": text, "other": other}))
            .error(422);
        assert!(m.contains(says), "{m}");
    }
}

/// Abuse a demanding operator expects to be cut short: connections that send nothing, or their
/// headers too slowly, are closed after `--timeout` (and do not hold up a stop); a batch of
/// more than 10,000 texts is refused; an empty document is an error in a check (never new, never
/// added); `/v1/compare` by id reads only the texts of indexed documents.
#[test]
fn idle_connections_batches_empty_documents_and_foreign_texts() {
    let tmp = tempfile::tempdir().unwrap();
    let texts = tmp.path().join("texts");
    std::fs::create_dir(&texts).unwrap();
    for (id, text) in samples().iter().take(20) {
        std::fs::write(texts.join(id), text).unwrap();
    }
    let index = build(tmp.path(), "t.pdx", texts.to_str().unwrap());
    // Not indexed: written after the build.
    std::fs::write(texts.join(".env"), "API_KEY=hunter2\n").unwrap();
    let server = Server::start(
        &index,
        &["--timeout", "2", "--texts", texts.to_str().unwrap()],
    );
    let start = Instant::now();
    let mut silent = TcpStream::connect(server.addr).unwrap();
    let mut partial = TcpStream::connect(server.addr).unwrap();
    partial
        .write_all(b"POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Le")
        .unwrap();
    for s in [&mut silent, &mut partial] {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = Vec::new();
        // Closed by the server: the read ends (with nothing or an error), not by our timeout.
        let _ = s.read_to_end(&mut buf);
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "{:?}",
            start.elapsed()
        );
    }
    let r = server.post_json("/v1/query/batch", &json!({"texts": vec![""; 10_001]}));
    assert!(r.error(400).contains("at most 10000"), "{:?}", r);
    let r = server.post_json(
        "/v1/check",
        &json!({"documents": [{"id": "e", "text": "<p> </p>"}]}),
    );
    assert_eq!(r.status, 200);
    let v = &r.json()["results"][0];
    assert_eq!(
        (v["status"].as_str(), v["message"].as_str()),
        (Some("error"), Some("empty"))
    );
    // A text that is no document is said to be none, as `pocketdex query` skips such a file,
    // in a batch too; and it is an error to check, binary as well as empty.
    let r = server.post_json(
        "/v1/query/batch",
        &json!({"texts": [" \n\t", "\u{0}\u{0}\u{0} x", samples()[0].1]}),
    );
    assert_eq!(r.status, 200);
    let results = r.json()["results"].clone();
    assert_eq!(results[0]["message"], "empty");
    assert_eq!(results[1]["message"], "binary (NUL or control bytes)");
    assert_eq!(results[0]["stats"]["lookups"], 0);
    assert!(results[2].get("message").is_none(), "{}", results[2]);
    assert_eq!(results[2]["hits"][0]["id"], samples()[0].0.as_str());
    let r = server.post_json("/v1/query", &json!({"text": ""}));
    assert_eq!(r.json()["message"], "empty");
    let r = server.post_json(
        "/v1/check",
        &json!({"documents": [{"id": "b", "text": "\u{0}binary\u{0}"}]}),
    );
    assert_eq!(r.json()["results"][0]["status"], "error");
    // A byte order mark before JSON is read past; serde's Rust type names are not shown.
    let mut body = b"\xef\xbb\xbf".to_vec();
    body.extend_from_slice(br#"{"text": "hello world", "top": 3}"#);
    let r = server.request("POST", "/v1/query", Some("application/json"), &body);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // A JSON query sent without its type (curl -d) is refused, not searched as words; as
    // text/plain, it is what the client chose.
    let q = br#"{"text": "hello world", "top": 3}"#;
    for kind in [None, Some("application/x-www-form-urlencoded")] {
        let r = server.request("POST", "/v1/query", kind, q);
        assert!(r.error(415).contains("application/json"), "{:?}", r);
    }
    assert_eq!(
        server
            .request("POST", "/v1/query", Some("text/plain"), q)
            .status,
        200
    );
    let r = server.post_json("/v1/query", &json!({"text": "x", "top": "ten"}));
    let e = r.error(400);
    assert!(e.contains("a whole number") && !e.contains("usize"), "{e}");
    let r = server.post_json("/v1/compare", &json!({"text": "a key", "id": ".env"}));
    assert!(r.error(404).contains("no indexed document"), "{:?}", r);
    let (id, _) = &samples()[0];
    let r = server.post_json("/v1/compare", &json!({"text": "a key", "id": id}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // A stop does not wait on a connection that never sends its request.
    let mut idle = TcpStream::connect(server.addr).unwrap();
    idle.write_all(b"GET /").unwrap();
    let stopped = Instant::now();
    assert_eq!(server.stop().code(), Some(0));
    assert!(
        stopped.elapsed() < Duration::from_secs(10),
        "{:?}",
        stopped.elapsed()
    );
}

/// A `/v1/check` that adds, answered 503 for its time (here: another writer holds the set's lock
/// beyond `--timeout`), added nothing, then or later: the client sends it again and it is new.
#[test]
fn a_check_answered_for_its_time_adds_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("archive");
    let set_arg = set.display().to_string();
    let o = pocketdex(&["add", &set_arg, "samples/wiki-en", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let live = || {
        let o = pocketdex(&["info", &set_arg, "--json"]);
        serde_json::from_str::<Value>(stdout(&o).trim()).unwrap()["live_documents"].clone()
    };
    let before = live();
    let server = Server::start(&set_arg, &["--writable", "--timeout", "0.5"]);
    let doc = json!({"add": true, "documents": [{"id": "sub-1", "text":
        "Tide pools are rocky hollows on the shore that keep sea water when the tide goes out, \
         and the anemones, crabs and small fish that live in them wait there for the sea"}]});
    let lock = std::fs::File::options()
        .write(true)
        .open(set.join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    let r = server.post_json("/v1/check", &doc);
    assert_eq!(r.status, 503, "{r:?}");
    // It says what held it up, and when to send it again.
    let m = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        m.contains("changed nothing") && m.contains("lock, which another writer holds"),
        "{m}"
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    // The server's writer gets the lock once it is let go, and must not add then.
    lock.unlock().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(live(), before);
    let r = server.post_json("/v1/check", &doc);
    assert_eq!(r.status, 200, "{r:?}");
    let a = r.json();
    assert_eq!(a["results"][0]["status"], "new", "{a}");
    assert_eq!(a["added"], 1, "{a}");
    assert_eq!(live(), before.as_u64().unwrap() + 1);
}

/// A client that sends requests and never reads the answers is disconnected once an answer
/// cannot be written for `--timeout`, instead of holding its connection (and a file
/// descriptor) for ever.
#[test]
fn a_client_that_never_reads_is_disconnected() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let server = Server::start(&index, &["--timeout", "1"]);
    let one = server.get("/v1/openapi.json").body.len();
    let mut s = TcpStream::connect(server.addr).unwrap();
    let n = 2000;
    // About 60 MB of answers, far beyond what the sockets' buffers hold.
    let request = format!(
        "GET /v1/openapi.json HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    );
    s.write_all(request.repeat(n).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // Others are served meanwhile.
    assert_eq!(server.get("/healthz").status, 200);
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    let end = loop {
        match s.read(&mut buf) {
            Ok(0) => break "closed",
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break "reset",
            Err(e) => panic!("{e} after {got} bytes: the connection was kept"),
        }
    };
    assert!(
        got < n * one,
        "{end} after all {got} bytes: nothing was cut off"
    );
}

/// An index damaged where opening does not read (the names, near the end) is refused at start,
/// as a damaged replacement is: served, it would fail every query naming those documents with
/// a 500 while /healthz said "ok".
#[test]
fn a_damaged_index_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let index = build(tmp.path(), "wiki.pdx", "samples/wiki-en");
    let mut bytes = std::fs::read(&index).unwrap();
    let at = bytes.len() - 3000;
    bytes[at] ^= 1;
    std::fs::write(&index, bytes).unwrap();
    let o = pocketdex(&["serve", &index, "--addr", "127.0.0.1:0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("checksum mismatch") && err.contains("wiki.pdx"),
        "{err}"
    );
    assert_eq!(err.matches("wiki.pdx").count(), 1, "{err}");
}
