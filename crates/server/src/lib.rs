//! pocketdex serve: the JSON API and the offline web page over one index file or index set.
//!
//! Requests flow through the same library calls as the command line: `/v1/query` is
//! [`pocketdex::IndexSet::query`] with [`pocketdex::IndexSet::records`], `/v1/check` is
//! [`pocketdex::Check`], `/v1/info` is [`pocketdex::info`], `/v1/compare` is
//! `pocketdex_methods::compare`, so the server answers exactly as `query --json`, `check
//! --json`, `info --json` and `compare --json` do. The index is opened once ([`state`]) and
//! swapped when it is replaced on disk; the page ([`page`]) is embedded in the binary.

pub mod api;
pub mod error;
pub mod page;
mod shared;
pub mod state;
mod texts;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use error::{answer, ApiError};
use state::{Served, Trust};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use texts::Texts;
use tokio::sync::Semaphore;
use utoipa::OpenApi;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// `/v1/check` may add documents (an index set only).
    pub writable: bool,
    /// Largest request body in bytes; larger ones get 413.
    pub max_body: usize,
    /// Longest a request may take, waiting included; longer ones get 503.
    pub timeout: Duration,
    /// Requests in flight at once; more get 503 at once, with `Retry-After`.
    pub max_in_flight: usize,
    /// Requests computed at once (the rest wait their turn): the cores, by default.
    pub workers: usize,
    /// How often to look for a replaced index on disk.
    pub reload_every: Duration,
    /// The directory or JSON Lines file the index was built from, for `/v1/compare` by id.
    pub texts: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            writable: false,
            max_body: 16 << 20,
            timeout: Duration::from_secs(30),
            max_in_flight: 1024,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            reload_every: Duration::from_secs(1),
            texts: None,
        }
    }
}

/// Everything a request can reach.
pub struct App {
    /// How the server runs.
    pub config: Config,
    /// The index.
    pub served: Served,
    texts: Option<Texts>,
    /// Permits to compute: CPU-bound work runs on blocking threads, at most `workers` at once.
    cpu: Arc<Semaphore>,
    in_flight: Arc<Semaphore>,
    /// One check-and-add at a time within this server.
    writing: Mutex<()>,
    /// Ids added or replaced through `/v1/check`: `--texts` holds no text of theirs, or an
    /// old one, so `/v1/compare` by id refuses them.
    changed_ids: Mutex<std::collections::HashSet<String>>,
}

impl App {
    /// Opens the index at `index` (and the texts) for serving.
    ///
    /// # Errors
    /// A message that says what is wrong: the index cannot be opened, is refused by `trust`, is a
    /// file while `writable` asks for a set, or the texts cannot be read.
    pub fn new(index: &Path, config: Config, trust: Option<Trust>) -> Result<App, String> {
        let served = Served::open(index, trust)?;
        if config.writable && !served.is_set {
            return Err(format!(
                "{} is an index file, which never changes; --writable needs an index set (a directory made by `pocketdex add`)",
                index.display()
            ));
        }
        let texts = config.texts.as_deref().map(Texts::open).transpose()?;
        Ok(App {
            cpu: Arc::new(Semaphore::new(config.workers.max(1))),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            config,
            served,
            texts,
            writing: Mutex::new(()),
            changed_ids: Mutex::default(),
        })
    }

    /// Runs CPU-bound work on a blocking thread when a worker is free.
    async fn cpu<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = self
            .cpu
            .clone()
            .acquire_owned()
            .await
            .expect("never closed");
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            f()
        })
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the request failed inside the server ({e}); please report it"),
            )
        })
    }
}

/// The routes: the API under `/v1`, `/healthz`, and the page at `/`.
pub fn router(app: Arc<App>) -> Router {
    let openapi = api::ApiDoc::openapi()
        .to_pretty_json()
        .expect("the description serializes");
    Router::new()
        .route("/v1/query", post(api::query))
        .route("/v1/query/batch", post(api::query_batch))
        .route("/v1/check", post(api::check))
        .route("/v1/compare", post(api::compare))
        .route("/v1/info", get(api::info))
        .route("/healthz", get(api::healthz))
        .route(
            "/v1/openapi.json",
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], openapi) }),
        )
        .merge(page::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(app.clone(), limits))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                answer(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the request failed inside the server; please report it",
                )
            },
        ))
        .with_state(app)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Response {
    answer(
        StatusCode::NOT_FOUND,
        format!("no such route: {method} {uri}; the API is under /v1 (see /v1/openapi.json), the page at /"),
    )
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> Response {
    answer(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not take {method} (see /v1/openapi.json)",
            uri.path()
        ),
    )
}

/// A writing request's race between its commit and its timeout, which exactly one wins: a
/// request answered 503 for its time changed nothing, and one whose commit began is answered
/// with what it did, however long that takes.
#[derive(Default)]
pub struct Deadline(std::sync::atomic::AtomicU8, std::sync::atomic::AtomicBool);

impl Deadline {
    /// Says whether the request waits for the set's lock (another writer holds it), for the
    /// timeout's answer to say what held it up.
    pub fn waiting_for_lock(&self, waiting: bool) {
        self.1.store(waiting, std::sync::atomic::Ordering::Release);
    }

    fn is_waiting_for_lock(&self) -> bool {
        self.1.load(std::sync::atomic::Ordering::Acquire)
    }

    const RUNNING: u8 = 0;
    const COMMITTING: u8 = 1;
    const TIMED_OUT: u8 = 2;

    /// True when the request may commit (its timeout has not answered it); it then will be
    /// answered by its handler, not by the timeout.
    pub fn begin_commit(&self) -> bool {
        self.swap_from_running(Self::COMMITTING)
    }

    /// True when the timeout answers the request (no commit has begun).
    fn time_out(&self) -> bool {
        self.swap_from_running(Self::TIMED_OUT)
    }

    fn swap_from_running(&self, to: u8) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .compare_exchange(Self::RUNNING, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// The limits every request is held to: requests in flight, and time.
async fn limits(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let Ok(_permit) = app.in_flight.clone().try_acquire_owned() else {
        let mut r = answer(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server is at its limit of {} requests in flight (serve --max-in-flight); retry shortly",
                app.config.max_in_flight
            ),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        // Its body is not read (see below).
        if has_body(&req) {
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return r;
    };
    let timeout = app.config.timeout;
    let deadline = Arc::new(Deadline::default());
    req.extensions_mut().insert(deadline.clone());
    let has_body = has_body(&req);
    let run = next.run(req);
    tokio::pin!(run);
    let mut r = match tokio::time::timeout(timeout, &mut run).await {
        Ok(r) => r,
        Err(_) if deadline.time_out() => {
            let seconds = timeout.as_secs_f64();
            if deadline.is_waiting_for_lock() {
                let mut r = answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the request waited longer than {seconds} s (serve --timeout) for the index set's lock, which another writer holds (a `pocketdex add`, `delete`, `merge` or `check --add`, or another request's add); it changed nothing: send it again"
                    ),
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                r
            } else {
                answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the request took longer than {seconds} s (serve --timeout); it changed nothing"
                    ),
                )
            }
        }
        // A commit has begun: its answer says what it did.
        Err(_) => run.await,
    };
    // An error may be answered before the body is read (an unknown route, a wrong type, a body
    // over the limit); what is left of it would be read as the next request, so hyper closes
    // the connection, and a client that sent the body after the headers must be told.
    if has_body && (r.status().is_client_error() || r.status().is_server_error()) {
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

/// True when a request says that a body follows its head.
fn has_body(req: &Request) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// Serves on `listener` until `shutdown` completes, then finishes the requests in flight.
///
/// Connections are served by `app.config.workers` threads, each a current-thread tokio runtime
/// that keeps the connections it is given (see `Workers`); this task accepts them and hands
/// each to the worker with the fewest open, and looks for a replaced index every
/// `reload_every`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let workers = Workers::for_app(&app)?;
    serve_with(listener, app, workers, shutdown).await
}

/// [`serve`] on workers started already (by [`run`], before it says it is serving).
async fn serve_with(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    workers: Workers,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let watcher = app.clone();
    let every = app.config.reload_every;
    let reloads = tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let w = watcher.clone();
            let _ = tokio::task::spawn_blocking(move || w.served.reload_if_changed()).await;
        }
    });
    let r = accept(listener, &workers, app.config.timeout, shutdown).await;
    reloads.abort();
    workers.stop();
    r
}

/// How long a client has for a request's headers (at most; no longer than a whole request may
/// take), from the moment the connection is open or the previous answer was sent (an idle
/// keep-alive connection included): then it is closed. Without it, connections that send
/// nothing hold their sockets (and a shutdown) for ever.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection on its way to a worker, with the watch of the graceful shutdown.
type Handoff = (std::net::TcpStream, hyper_util::server::graceful::Watcher);

/// Threads that serve connections, each on a current-thread runtime of its own: a connection
/// stays on the thread that got it, so a request and its answer never wake another thread
/// (under tokio's multi-thread scheduler, which moves tasks between its workers and wakes them,
/// a 1 KB query's request cost 46–49 µs of server CPU against 38–39 µs here, `cargo bench
/// --bench serve`). A long request holds up only its own worker's connections: CPU-bound work
/// beyond an ordinary query goes to the blocking threads ([`App::cpu`]).
struct Workers {
    senders: Vec<tokio::sync::mpsc::UnboundedSender<Handoff>>,
    /// Open connections per worker, to hand a new one to the least busy.
    open: Vec<Arc<std::sync::atomic::AtomicUsize>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// The workers `app`'s configuration asks for, serving its routes.
    fn for_app(app: &Arc<App>) -> std::io::Result<Workers> {
        Workers::start(
            app.config.workers.max(1),
            router(app.clone()),
            app.config.timeout,
        )
    }

    /// Starts `n` threads serving `router` with hyper's HTTP/1.1 and a timer: a client has
    /// [`HEADER_TIMEOUT`] (or `request_timeout`, if shorter) for each request's headers, and an
    /// answer that cannot be written for `request_timeout` closes its connection.
    fn start(n: usize, router: Router, request_timeout: Duration) -> std::io::Result<Workers> {
        use hyper_util::rt::{TokioIo, TokioTimer};
        use std::sync::atomic::Ordering;
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT.min(request_timeout))
            .keep_alive(true);
        let service = hyper_util::service::TowerToHyperService::new(router);
        let mut w = Workers {
            senders: Vec::with_capacity(n),
            open: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Handoff>();
            let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let (http, service, count) = (http.clone(), service.clone(), open.clone());
            let thread = std::thread::Builder::new()
                .name(format!("pocketdex-serve-{i}"))
                .spawn(move || {
                    rt.block_on(async move {
                        while let Some((stream, watch)) = rx.recv().await {
                            let stream = match tokio::net::TcpStream::from_std(stream) {
                                Ok(s) => s,
                                Err(e) => {
                                    eprintln!("pocketdex: cannot serve a connection: {e}");
                                    count.fetch_sub(1, Ordering::Relaxed);
                                    continue;
                                }
                            };
                            // An answer that cannot be written for this long (its client
                            // reads nothing) ends the connection.
                            let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
                            stream.set_write_timeout(Some(request_timeout));
                            let conn =
                                watch.watch(http.serve_connection(
                                    TokioIo::new(Box::pin(stream)),
                                    service.clone(),
                                ));
                            let count = count.clone();
                            tokio::spawn(async move {
                                let _ = conn.await;
                                count.fetch_sub(1, Ordering::Relaxed);
                            });
                        }
                    });
                    // The accepting task waited for the connections it could; the rest go.
                    rt.shutdown_timeout(Duration::from_secs(1));
                })?;
            w.senders.push(tx);
            w.open.push(open);
            w.threads.push(thread);
        }
        Ok(w)
    }

    /// Hands `stream` to the worker with the fewest open connections.
    fn hand(&self, stream: std::net::TcpStream, watch: hyper_util::server::graceful::Watcher) {
        use std::sync::atomic::Ordering;
        // A worker that stopped (only a panic in tokio itself would stop one) is passed over.
        let Some(i) = (0..self.open.len())
            .filter(|&i| !self.senders[i].is_closed())
            .min_by_key(|&i| self.open[i].load(Ordering::Relaxed))
        else {
            eprintln!("pocketdex: no worker is left to serve connections; restart the server");
            return;
        };
        self.open[i].fetch_add(1, Ordering::Relaxed);
        if self.senders[i].send((stream, watch)).is_err() {
            self.open[i].fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Stops the threads (after [`accept`] waited for the connections) and joins them.
    fn stop(self) {
        drop(self.senders);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Accepts connections until `shutdown` and hands them to `workers`; then lets the requests in
/// flight finish (each is bounded by `request_timeout`) and closes idle connections, waiting at
/// most `request_timeout` and a second for them.
async fn accept(
    listener: tokio::net::TcpListener,
    workers: &Workers,
    request_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, as axum's loop does,
                    // instead of spinning or stopping.
                    eprintln!("pocketdex: cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // Off this runtime's reactor, onto the worker's (the stream stays non-blocking).
        match stream.into_std() {
            Ok(stream) => workers.hand(stream, graceful.watcher()),
            Err(e) => eprintln!("pocketdex: cannot serve a connection: {e}"),
        }
    }
    drop(listener);
    let limit = request_timeout + Duration::from_secs(1);
    if tokio::time::timeout(limit, graceful.shutdown())
        .await
        .is_err()
    {
        eprintln!(
            "pocketdex: connections still open {} s after the stop are closed",
            limit.as_secs_f64()
        );
    }
    Ok(())
}

/// Raises the soft limit on open files to the hard one: every connection is a file
/// descriptor, and the usual soft limit of 1,024 would refuse connections long before the
/// server is busy (what each process may raise itself to, as nginx's `worker_rlimit_nofile`).
fn raise_open_files_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit read and write the one struct given.
    unsafe {
        let mut l = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

/// Binds, prints the address, and serves until SIGTERM, SIGHUP or Ctrl-C (blocking); a second
/// signal while the requests in flight finish stops at once.
///
/// # Errors
/// When the address cannot be bound, or the server fails.
pub fn run(app: App) -> Result<(), String> {
    raise_open_files_limit();
    // Read before any handler is installed: a server started under `nohup` keeps ignoring it.
    let hangup = !hangup_ignored();
    // Accepting, signals and reloads: the connections are served by `Workers`.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    rt.block_on(async move {
        let addr = app.config.addr;
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            format!("cannot listen on {addr}: {e} (--addr HOST:PORT; port 0 picks a free one)")
        })?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        let app = Arc::new(app);
        // Started before the server says it serves: a supervisor waiting for that line must
        // not see it from a server that then fails (out of threads or file descriptors).
        let workers = Workers::for_app(&app).map_err(|e| {
            format!(
                "cannot start {} serving threads: {e} (--threads)",
                app.config.workers
            )
        })?;
        eprintln!(
            "pocketdex: serving {} ({} documents{}) at http://{bound}/ (Ctrl-C stops)",
            app.served.path.display(),
            app.served.snapshot().documents,
            if app.config.writable {
                ", writable"
            } else {
                ""
            }
        );
        serve_with(listener, app, workers, shutdown_signal(hangup))
            .await
            .map_err(|e| format!("the server failed: {e}"))?;
        eprintln!("pocketdex: stopped");
        Ok(())
    })
}

/// True when SIGHUP is ignored (`nohup`): then it stays ignored.
fn hangup_ignored() -> bool {
    #[cfg(unix)]
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old = std::mem::zeroed::<libc::sigaction>();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
    #[cfg(not(unix))]
    true
}

/// SIGTERM, SIGHUP (a closed terminal; unless ignored, as under `nohup`) or Ctrl-C; a second
/// one, while the requests in flight finish, ends the process at once (exit status 130).
async fn shutdown_signal(hangup: bool) {
    stop_signal(hangup).await;
    eprintln!(
        "pocketdex: stopping: finishing the requests in flight (signal again to stop at once)"
    );
    tokio::spawn(async move {
        stop_signal(hangup).await;
        eprintln!("pocketdex: stopped at once; requests in flight were cut off");
        std::process::exit(130);
    });
}

/// The next SIGTERM, Ctrl-C or (with `hangup`) SIGHUP.
async fn stop_signal(hangup: bool) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let other = async {
        use tokio::signal::unix::{signal, SignalKind};
        let hup = async {
            match hangup.then(|| signal(SignalKind::hangup())) {
                Some(Ok(mut hup)) => {
                    hup.recv().await;
                }
                _ => std::future::pending::<()>().await,
            }
        };
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = hup => {},
                }
            }
            Err(_) => hup.await,
        }
    };
    #[cfg(not(unix))]
    let other = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = other => {},
    }
}
