//! The JSON API: request and response types (which the OpenAPI description is derived from)
//! and the handlers, each a thin call of the library's one operation.

use crate::error::{ApiError, ErrorBody};
use crate::state::Snapshot;
use crate::App;
use axum::body::Bytes;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::Json;
use pocketdex::check::{Check, Committed};
use pocketdex::{HitRecord, QueryOptions, Verdict};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;
use utoipa::{IntoParams, ToSchema};

/// Query documents up to this size, and batches of up to [`INLINE_TEXTS`] documents of this
/// size in all, are answered on the async worker (see [`query`] and [`query_batch`]).
const INLINE_BYTES: usize = 64 << 10;

/// Most documents of a batch answered on the async worker.
const INLINE_TEXTS: usize = 64;

/// Most hits a request may ask for.
const MAX_TOP: usize = 10_000;

/// A query document with its options (`text/plain` bodies give the options as URL parameters).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    /// The document (plain text; HTML markup is removed).
    pub text: String,
    /// Keep at most this many hits (1 to 10,000; default 100).
    #[schema(minimum = 1, maximum = 10000)]
    pub top: Option<usize>,
    /// Keep hits whose estimated similarity is at least this (0 to 1; default 0.5, with
    /// `similar` 0.4).
    #[schema(minimum = 0, maximum = 1)]
    pub threshold: Option<f32>,
    /// Also find documents that say nearly the same thing in other words (the similar path).
    pub similar: Option<bool>,
}

/// How to query (all optional): the URL parameters of a `text/plain` query. (JSON requests
/// carry the same fields beside their text: serde's `flatten` would let unknown fields pass.)
#[derive(Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Keep at most this many hits (1 to 10,000; default 100).
    #[param(minimum = 1, maximum = 10000)]
    pub top: Option<usize>,
    /// Keep hits whose estimated similarity is at least this (0 to 1; default 0.5, with
    /// `similar` 0.4).
    #[param(minimum = 0, maximum = 1)]
    pub threshold: Option<f32>,
    /// Also find documents that say nearly the same thing in other words (the similar path).
    pub similar: Option<bool>,
}

impl Options {
    fn query_options(&self) -> Result<QueryOptions, ApiError> {
        let mut o = if self.similar == Some(true) {
            QueryOptions::similar()
        } else {
            QueryOptions::default()
        };
        if let Some(t) = self.threshold {
            if !(0.0..=1.0).contains(&t) {
                return Err(ApiError::bad_request(format!(
                    "threshold must be between 0 and 1, not {t}"
                )));
            }
            o.threshold = t;
        }
        if let Some(top) = self.top {
            if !(1..=MAX_TOP).contains(&top) {
                return Err(ApiError::bad_request(format!(
                    "top must be between 1 and {MAX_TOP}, not {top}"
                )));
            }
            o.top = top;
        }
        Ok(o)
    }
}

/// Many query documents in one request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchRequest {
    /// The documents, answered in this order (at most 10,000).
    #[schema(max_items = 10000)]
    pub texts: Vec<String>,
    /// Keep at most this many hits (1 to 10,000; default 100).
    #[schema(minimum = 1, maximum = 10000)]
    pub top: Option<usize>,
    /// Keep hits whose estimated similarity is at least this (0 to 1; default 0.5, with
    /// `similar` 0.4).
    #[schema(minimum = 0, maximum = 1)]
    pub threshold: Option<f32>,
    /// Also find documents that say nearly the same thing in other words (the similar path).
    pub similar: Option<bool>,
}

/// What a query cost.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct QueryStats {
    /// Index terms of the document.
    pub terms: u32,
    /// Codes looked up.
    pub lookups: usize,
    /// Distinct documents the codes found, before ranking.
    pub candidates: usize,
    /// Hits answered.
    pub hits: usize,
    /// Time the library took, in microseconds.
    pub micros: u64,
}

/// The answer to one query: the hit objects of `pocketdex query --json` (without its `type`
/// and `query` labels), best first, and what the query cost.
#[derive(Serialize, ToSchema)]
pub struct QueryAnswer {
    /// Hits, best first.
    pub hits: Vec<HitRecord>,
    /// What the query cost.
    pub stats: QueryStats,
    /// Why nothing was looked up, when the text is no document: "empty" (nothing but white
    /// space or markup) or "binary (NUL or control bytes)", as `pocketdex query` reports such
    /// a file. Absent for every text that was looked up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The answers to a batch, in the order of its texts.
#[derive(Serialize, ToSchema)]
pub struct BatchAnswer {
    /// One answer per text.
    pub results: Vec<QueryAnswer>,
}

/// One document to check.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckDocument {
    /// Its id (its name in the index when it is added).
    pub id: String,
    /// Its text.
    pub text: String,
    /// Its title.
    pub title: Option<String>,
}

/// The submission check: each document's near copies among the index's documents and the
/// documents before it in the request; with `add` (a server started with `--writable`), the
/// new ones are added to the index set as one new segment, all or none.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The documents, checked in this order (at most 10,000).
    #[schema(max_items = 10000)]
    pub documents: Vec<CheckDocument>,
    /// A document scoring at least this is a near copy (default 0.8).
    #[schema(minimum = 0, maximum = 1)]
    pub threshold: Option<f32>,
    /// Near copies reported per document (1 to 10,000; default 10).
    #[schema(minimum = 1, maximum = 10000)]
    pub top: Option<usize>,
    /// Add each new document (needs `--writable`; default false).
    #[serde(default)]
    pub add: bool,
    /// With `add`: a new document whose id the set holds replaces that document (without
    /// `add`: say what adding with `replace` would).
    #[serde(default)]
    pub replace: bool,
}

/// The verdicts of a check.
#[derive(Serialize, ToSchema)]
pub struct CheckAnswer {
    /// One verdict per document, in order.
    pub results: Vec<Verdict>,
    /// Documents added.
    pub added: u64,
    /// The set's generation after the check.
    pub generation: u64,
}

/// Two documents to compare: the query text and an indexed document's id (its text from
/// `--texts`), or a second text.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// The first document.
    pub text: String,
    /// The id of an indexed document (needs `serve --texts`).
    pub id: Option<String>,
    /// Or the second document's text.
    pub other: Option<String>,
}

/// A run of a text, shared with the other document or not.
#[derive(Serialize, ToSchema)]
pub struct Span {
    /// The text of the run.
    pub text: String,
    /// True for an index term the other document has too.
    pub shared: bool,
}

/// What two documents share: `pocketdex compare --json` and both texts in runs, their shared
/// index terms marked.
#[derive(Serialize, ToSchema)]
pub struct CompareAnswer {
    /// Every measure of every method (as `pocketdex compare --json`).
    #[schema(value_type = Object)]
    pub comparison: serde_json::Value,
    /// Each method's score, threshold and verdict.
    #[schema(value_type = Vec<Object>)]
    pub verdicts: Vec<serde_json::Value>,
    /// Distinct index terms both have.
    pub shared_terms: usize,
    /// The first text in runs.
    pub a: Vec<Span>,
    /// The second text in runs.
    pub b: Vec<Span>,
}

/// The server's state.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// "ok", or "stale": the index on disk changed (or is gone) and could not be opened, so
    /// the previous version is still served; `reload_error` says why.
    pub status: String,
    /// Live documents served.
    pub documents: u64,
    /// Times a replaced index was picked up since start.
    pub reloads: u64,
    /// Why the index on disk is not what is served, while it is not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reload_error: Option<String>,
}

/// What is served.
#[derive(Serialize, ToSchema)]
pub struct InfoAnswer {
    /// `pocketdex info --json` of the index.
    #[schema(value_type = Object)]
    pub index: serde_json::Value,
    /// True when `/v1/check` may add documents.
    pub writable: bool,
    /// True when `/v1/compare` can look up an indexed document's text.
    pub texts: bool,
    /// Largest request body, in bytes.
    pub max_body: usize,
}

/// A request body: its bytes and whether it is JSON.
pub struct Payload {
    json: bool,
    bytes: Bytes,
    /// The URL's query string, when it has one: a JSON request takes its options from the
    /// body, so options in the URL would be ignored without a word.
    url_options: Option<String>,
    /// The type a client sends without choosing one (none, or curl -d's form-urlencoded, or
    /// octet-stream): a JSON query sent so is refused, not searched as text.
    unchosen: Option<String>,
}

impl FromRequest<Arc<App>> for Payload {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &Arc<App>) -> Result<Payload, ApiError> {
        let kind = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap_or("?").to_ascii_lowercase());
        let essence = kind
            .as_deref()
            .map(|k| k.split(';').next().unwrap_or("").trim().to_string());
        let json = match essence.as_deref() {
            Some("application/json") => true,
            Some(e) if e.ends_with("+json") => true,
            // curl --data-binary sends form-urlencoded unless told otherwise: its body is the
            // document as it is, like text/plain's.
            None | Some("application/x-www-form-urlencoded" | "application/octet-stream") => false,
            Some(e) if e.starts_with("text/") => false,
            Some(other) => {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!(
                        "the body is {other}; send application/json, or the document as text/plain"
                    ),
                ))
            }
        };
        // A compressed body would be read as its compressed bytes: "not UTF-8" would mislead.
        if let Some(coding) = req
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
        {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("the body is sent with Content-Encoding: {coding}, which this server does not decode; send it uncompressed"),
            ));
        }
        let url_options = req
            .uri()
            .query()
            .filter(|q| !q.is_empty())
            .map(str::to_owned);
        let limit = app.config.max_body;
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body is larger than this server's limit of {limit} bytes (serve --max-body)"
                ),
            )
        };
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let bytes = axum::body::to_bytes(req.into_body(), limit)
            .await
            .map_err(|e| {
                if std::error::Error::source(&e)
                    .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                {
                    too_large()
                } else {
                    ApiError::bad_request(format!("the body could not be read: {e}"))
                }
            })?;
        let unchosen = match essence.as_deref() {
            None => Some("no content type".to_string()),
            Some(e @ ("application/x-www-form-urlencoded" | "application/octet-stream")) => {
                Some(e.to_string())
            }
            _ => None,
        };
        Ok(Payload {
            json,
            bytes,
            url_options,
            unchosen,
        })
    }
}

impl Payload {
    /// The body as a JSON request of type `T`.
    fn parse<T: serde::de::DeserializeOwned>(&self, what: &str) -> Result<T, ApiError> {
        if !self.json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("send {what} as application/json"),
            ));
        }
        if let Some(q) = &self.url_options {
            return Err(ApiError::bad_request(format!(
                "options of a JSON request go in its body, not the URL (?{q}); URL options go with a document sent as text/plain to /v1/query"
            )));
        }
        // A byte order mark, which some editors and Windows tools write, is no part of JSON.
        let bytes = self
            .bytes
            .strip_prefix(b"\xef\xbb\xbf")
            .unwrap_or(&self.bytes);
        if let Err(e) = std::str::from_utf8(bytes) {
            return Err(ApiError::bad_request(format!(
                "the body is not UTF-8 (invalid byte at offset {}); send JSON as UTF-8",
                e.valid_up_to()
            )));
        }
        if bytes.trim_ascii().is_empty() {
            return Err(ApiError::bad_request(format!(
                "the body is empty: send {what} as a JSON object, {{...}} (see /v1/openapi.json)"
            )));
        }
        // serde reads a struct from an array too, by position: `["text", 5]` is not a request.
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return Err(ApiError::bad_request(format!(
                "{what} must be a JSON object, {{...}} (see /v1/openapi.json)"
            )));
        }
        serde_json::from_slice(bytes).map_err(|e| {
            ApiError::bad_request(format!("invalid JSON: {}", plain_types(&e.to_string())))
        })
    }

    /// The body as text.
    fn text(self) -> Result<String, ApiError> {
        if let Some(kind) = &self.unchosen {
            // `curl -d @query.json URL` sends form-urlencoded: its options would be lost and its
            // braces searched as words.
            if serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&self.bytes)
                .is_ok()
            {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!(
                        "the body is a JSON object sent as {kind}: send it with content-type application/json (curl -H 'content-type: application/json'), or the document itself as text/plain"
                    ),
                ));
            }
        }
        if self.bytes.is_empty() {
            return Err(ApiError::bad_request(
                "the body is empty: send the document as text/plain, or JSON {\"text\": ...}",
            ));
        }
        String::from_utf8(self.bytes.into()).map_err(|e| {
            ApiError::bad_request(format!(
                "the body is not UTF-8 (invalid byte at offset {}); send the document as UTF-8 text",
                e.utf8_error().valid_up_to()
            ))
        })
    }
}

/// serde's message with JSON's words for Rust's types ("expected usize" says nothing to a
/// client in another language).
fn plain_types(message: &str) -> String {
    let mut m = message.to_string();
    for (rust, json) in [
        ("expected usize", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected u32", "expected a whole number"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
        (
            "expected struct CheckDocument",
            "expected a document, {\"id\", \"text\"}",
        ),
    ] {
        m = m.replace(rust, json);
    }
    // Any other struct is a JSON object.
    if let Some(i) = m.find("expected struct ") {
        let end = m[i + 16..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(m.len(), |e| i + 16 + e);
        m.replace_range(i..end, "expected an object");
    }
    m
}

/// Why a text is no document (as `pocketdex query` and `check` skip such a file), if it is
/// not: nothing but white space or markup, or binary.
fn no_document(text: &str, plain: &str) -> Option<&'static str> {
    if pocketdex::text::looks_binary(text.as_bytes()) {
        Some("binary (NUL or control bytes)")
    } else if plain.trim().is_empty() {
        Some("empty")
    } else {
        None
    }
}

/// One query against a snapshot; markup is removed as `query` removes it from files.
fn answer(s: &Snapshot, text: &str, opts: &QueryOptions) -> Result<QueryAnswer, ApiError> {
    let start = Instant::now();
    let plain = pocketdex::text::plain_text(text, None);
    if let Some(why) = no_document(text, &plain) {
        return Ok(QueryAnswer {
            hits: Vec::new(),
            stats: QueryStats {
                terms: 0,
                lookups: 0,
                candidates: 0,
                hits: 0,
                micros: start.elapsed().as_micros() as u64,
            },
            message: Some(why.into()),
        });
    }
    let r = s.set.query(&plain, opts)?;
    let hits = s.set.records(&r)?;
    Ok(QueryAnswer {
        stats: QueryStats {
            terms: r.terms,
            lookups: r.lookups,
            candidates: r.candidates,
            hits: hits.len(),
            micros: start.elapsed().as_micros() as u64,
        },
        hits,
        message: None,
    })
}

/// Finds the near copies of one document.
#[utoipa::path(post, path = "/v1/query", tag = "query",
    params(Options),
    request_body(description = "The document as text/plain (options as URL parameters), or a JSON query", content(
        (QueryRequest = "application/json"),
        (String = "text/plain"),
    )),
    responses(
        (status = 200, body = QueryAnswer, description = "Hits, best first, and what the query cost"),
        (status = 400, body = ErrorBody, description = "Malformed JSON, not UTF-8, or an option out of range"),
        (status = 413, body = ErrorBody, description = "The body is over --max-body"),
        (status = 415, body = ErrorBody, description = "Neither JSON nor plain text"),
        (status = 500, body = ErrorBody, description = "A part of the index could not be read (damaged on disk since it was opened); the message says what to do"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight, or over --timeout"),
    ))]
pub async fn query(
    State(app): State<Arc<App>>,
    uri: axum::http::Uri,
    payload: Payload,
) -> Result<Json<QueryAnswer>, ApiError> {
    let (text, options) = if payload.json {
        let q = payload.parse::<QueryRequest>("the query")?;
        let o = Options {
            top: q.top,
            threshold: q.threshold,
            similar: q.similar,
        };
        (q.text, o)
    } else {
        let Query(options) = Query::<Options>::try_from_uri(&uri).map_err(|e| {
            let why = e.body_text();
            let why = why
                .strip_prefix("Failed to deserialize query string: ")
                .unwrap_or(&why);
            ApiError::bad_request(format!(
                "URL options: {why} (top is a whole number from 1 to 10000, threshold a number from 0 to 1, similar true or false)"
            ))
        })?;
        (payload.text()?, options)
    };
    let opts = options.query_options()?;
    let snapshot = app.served.snapshot();
    // A document of ordinary size is answered on the async worker itself (tens of µs; the hop
    // to the blocking pool cost a third of the throughput under load, measured with
    // `cargo bench --bench serve`); a large one on the blocking pool, not to stall a worker.
    if text.len() <= INLINE_BYTES {
        return Ok(Json(answer(&snapshot, &text, &opts)?));
    }
    let a = app.cpu(move || answer(&snapshot, &text, &opts)).await??;
    Ok(Json(a))
}

/// Finds the near copies of many documents.
#[utoipa::path(post, path = "/v1/query/batch", tag = "query",
    request_body(content = BatchRequest, content_type = "application/json"),
    responses(
        (status = 200, body = BatchAnswer, description = "One answer per text, in order"),
        (status = 400, body = ErrorBody, description = "Malformed JSON, an option out of range, or more than 10,000 texts"),
        (status = 413, body = ErrorBody, description = "The body is over --max-body"),
        (status = 415, body = ErrorBody, description = "Not JSON"),
        (status = 500, body = ErrorBody, description = "A part of the index could not be read (damaged on disk since it was opened); the message says what to do"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight, or over --timeout"),
    ))]
pub async fn query_batch(
    State(app): State<Arc<App>>,
    payload: Payload,
) -> Result<Json<BatchAnswer>, ApiError> {
    use rayon::prelude::*;
    let req = payload.parse::<BatchRequest>("a batch")?;
    batch_size(req.texts.len(), "texts")?;
    let opts = Options {
        top: req.top,
        threshold: req.threshold,
        similar: req.similar,
    }
    .query_options()?;
    let snapshot = app.served.snapshot();
    // A batch of ordinary size is answered on the async worker, one query after another, as a
    // single query is: the other requests keep the cores busy, and the hop to the blocking
    // pool and rayon's hand-offs within the batch cost about a fifth of the server's time
    // under load (`cargo bench --bench serve -- --batch 16`). A larger batch goes to the
    // blocking pool and its queries to every core.
    let bytes: usize = req.texts.iter().map(String::len).sum();
    if req.texts.len() <= INLINE_TEXTS && bytes <= INLINE_BYTES {
        let results = req
            .texts
            .iter()
            .map(|t| answer(&snapshot, t, &opts))
            .collect::<Result<Vec<_>, ApiError>>()?;
        return Ok(Json(BatchAnswer { results }));
    }
    let results = app
        .cpu(move || {
            req.texts
                .par_iter()
                .map(|t| answer(&snapshot, t, &opts))
                .collect::<Result<Vec<_>, ApiError>>()
        })
        .await??;
    Ok(Json(BatchAnswer { results }))
}

/// Checks submissions for near copies and, with `add` on a writable server, adds the new ones.
#[utoipa::path(post, path = "/v1/check", tag = "check",
    request_body(content = CheckRequest, content_type = "application/json"),
    responses(
        (status = 200, body = CheckAnswer, description = "One verdict per document; new ones added when asked"),
        (status = 400, body = ErrorBody, description = "Malformed JSON or an option out of range"),
        (status = 403, body = ErrorBody, description = "add on a server started without --writable"),
        (status = 409, body = CheckAnswer, description = "With add: some document could not be added (empty or binary, or its id is taken or given twice): nothing was added, and its verdict (status error) says why. This answer is a CheckAnswer, not an ErrorBody"),
        (status = 413, body = ErrorBody, description = "The body is over --max-body"),
        (status = 415, body = ErrorBody, description = "Not JSON"),
        (status = 500, body = ErrorBody, description = "The served set could not be read or written (damaged, removed, its disk full); the message says what to do. Nothing was added"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight, or over --timeout; nothing was added (a request whose commit began is answered with what it did, however long that takes)"),
    ))]
pub async fn check(
    State(app): State<Arc<App>>,
    deadline: Option<axum::Extension<Arc<crate::Deadline>>>,
    payload: Payload,
) -> Result<(StatusCode, Json<CheckAnswer>), ApiError> {
    let req = payload.parse::<CheckRequest>("the documents to check")?;
    batch_size(req.documents.len(), "documents")?;
    // The check's own defaults (those of `pocketdex check`), checked as a query's options are.
    let checked = Options {
        top: Some(req.top.unwrap_or(10)),
        threshold: Some(req.threshold.unwrap_or(0.8)),
        similar: None,
    }
    .query_options()?;
    let (top, threshold) = (checked.top, checked.threshold);
    if req.add && !app.config.writable {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this server is read-only: start it with `pocketdex serve SET --writable` to add documents",
        ));
    }
    let app2 = app.clone();
    let (status, answer) = app
        .cpu(move || -> Result<_, ApiError> {
            if req.add {
                // One writer at a time within the server; the set's lock keeps out other
                // processes (waited for, as `check --add --wait`).
                let waiting = |w: bool| {
                    if let Some(d) = &deadline {
                        d.waiting_for_lock(w);
                    }
                };
                waiting(true);
                let _one = app2.writing.lock().expect("not poisoned");
                let writer = pocketdex::SetWriter::open(&app2.served.path, true);
                waiting(false);
                let mut writer = writer?;
                let (results, additions) = {
                    let mut check = Check::new(
                        writer.set(),
                        Some(writer.builder()),
                        top,
                        threshold,
                        req.replace,
                    )?;
                    let results = run_check(&mut check, &req.documents)?;
                    (results, check.finish())
                };
                // Past its timeout (the lock waited for, a large batch), a request adds
                // nothing: the client was answered 503 and will send it again.
                if deadline.as_ref().is_some_and(|d| !d.begin_commit()) {
                    return Err(ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the request took longer than serve --timeout; it changed nothing",
                    ));
                }
                let change = match additions.commit(&mut writer)? {
                    Committed::Refused { .. } => {
                        let results = results
                            .into_iter()
                            .map(|v| Verdict { added: false, ..v })
                            .collect();
                        let generation = writer.set().generation();
                        return Ok((
                            StatusCode::CONFLICT,
                            CheckAnswer {
                                results,
                                added: 0,
                                generation,
                            },
                        ));
                    }
                    Committed::Added(change) => Some(change),
                    Committed::Nothing => None,
                };
                drop(writer);
                // Their texts under --texts, if any, are not what was indexed.
                app2.changed_ids
                    .lock()
                    .expect("not poisoned")
                    .extend(results.iter().filter(|v| v.added).map(|v| v.doc.clone()));
                app2.served.reload_after_own_change();
                let generation = app2.served.snapshot().set.generation();
                Ok((
                    StatusCode::OK,
                    CheckAnswer {
                        results,
                        added: change.map_or(0, |c| c.added),
                        generation,
                    },
                ))
            } else {
                let snapshot = app2.served.snapshot();
                let mut check = Check::new(&snapshot.set, None, top, threshold, req.replace)?;
                if app2.served.is_set {
                    // A dry run on a set says what adding would say of ids too.
                    check = check.with_id_checks();
                }
                let results = run_check(&mut check, &req.documents)?;
                Ok((
                    StatusCode::OK,
                    CheckAnswer {
                        results,
                        added: 0,
                        generation: snapshot.set.generation(),
                    },
                ))
            }
        })
        .await??;
    Ok((status, Json(answer)))
}

/// Most documents in one request: a body of empty texts is small, but its answer, held in
/// memory, is not (3 million empty texts: 12 MB in, 237 MB out).
const MAX_BATCH: usize = 10_000;

fn batch_size(n: usize, what: &str) -> Result<(), ApiError> {
    if n > MAX_BATCH {
        return Err(ApiError::bad_request(format!(
            "{what}: at most {MAX_BATCH} in one request, not {n}; send them in several requests"
        )));
    }
    Ok(())
}

fn run_check(check: &mut Check<'_>, docs: &[CheckDocument]) -> Result<Vec<Verdict>, ApiError> {
    use rayon::prelude::*;
    let f = check.fingerprinter().clone();
    // A document with no text (none, or only markup or white space) or a binary one is an
    // error, as `pocketdex check` reports such a file: it is not new, and it is never added.
    let fps: Vec<_> = docs
        .par_iter()
        .map(|d| {
            let text = pocketdex::text::plain_text(&d.text, None);
            match no_document(&d.text, &text) {
                Some(why) => Err(why),
                None => Ok(f.fingerprint(&text)),
            }
        })
        .collect();
    docs.iter()
        .zip(fps)
        .map(|(d, fp)| match fp {
            Ok(fp) => Ok(check.check(&d.id, d.title.as_deref(), fp)?),
            Err(why) => Ok(check.unchecked(d.id.clone(), why)),
        })
        .collect()
}

/// What two documents share.
#[utoipa::path(post, path = "/v1/compare", tag = "compare",
    request_body(content = CompareRequest, content_type = "application/json"),
    responses(
        (status = 200, body = CompareAnswer, description = "Every measure, and both texts with shared index terms marked"),
        (status = 400, body = ErrorBody, description = "Malformed JSON, or neither or both of id and other"),
        (status = 404, body = ErrorBody, description = "No indexed document has that id, no text for it, or the server has no --texts"),
        (status = 422, body = ErrorBody, description = "A text, or the indexed document's, cannot be read as a document (over the size limit, binary, empty)"),
        (status = 413, body = ErrorBody, description = "The body is over --max-body"),
        (status = 415, body = ErrorBody, description = "Not JSON"),
        (status = 500, body = ErrorBody, description = "A part of the index could not be read (damaged on disk since it was opened); the message says what to do"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight, or over --timeout"),
    ))]
pub async fn compare(
    State(app): State<Arc<App>>,
    payload: Payload,
) -> Result<Json<CompareAnswer>, ApiError> {
    let req = payload.parse::<CompareRequest>("the documents to compare")?;
    let app2 = app.clone();
    let answer = app
        .cpu(move || -> Result<CompareAnswer, ApiError> {
            let other_is = if req.id.is_some() {
                "the indexed document's text"
            } else {
                "other"
            };
            let other = match (req.id, req.other) {
                (Some(id), None) => {
                    let Some(texts) = &app2.texts else {
                        return Err(ApiError::new(
                            StatusCode::NOT_FOUND,
                            "this server has no texts to compare with: start it with --texts DIR (or FILE.jsonl), what the index was built from",
                        ));
                    };
                    if app2.changed_ids.lock().expect("not poisoned").contains(&id) {
                        return Err(ApiError::new(
                            StatusCode::NOT_FOUND,
                            format!("no text for id {id:?}: it was added or replaced through /v1/check since the server started, and --texts does not hold what was indexed; send its text as \"other\" instead of \"id\""),
                        ));
                    }
                    // Only the texts of indexed documents: --texts may hold other files.
                    if app2.served.snapshot().set.find(&id)?.is_none() {
                        return Err(ApiError::new(
                            StatusCode::NOT_FOUND,
                            format!("no indexed document has the id {id:?}"),
                        ));
                    }
                    texts
                        .get(&id)
                        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e))?
                        .ok_or_else(|| {
                            ApiError::new(
                                StatusCode::NOT_FOUND,
                                format!("no text for id {id:?} under --texts: the server keeps no text of what it indexes, and reads these from --texts, which lacks this one (a document added through /v1/check, say); send its text as \"other\" instead of \"id\""),
                            )
                        })?
                        .map_err(|why| {
                            ApiError::new(
                                StatusCode::UNPROCESSABLE_ENTITY,
                                format!("the text of this document cannot be compared: {why}"),
                            )
                        })?
                }
                (None, Some(other)) => other,
                _ => {
                    return Err(ApiError::bad_request(
                        "give either id (an indexed document) or other (a second text)",
                    ))
                }
            };
            // As `pocketdex compare` refuses a binary file, and `/v1/query` skips one.
            for (what, t) in [("text", &req.text), (other_is, &other)] {
                if pocketdex::text::looks_binary(t.as_bytes()) {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!("{what} cannot be compared: binary (NUL or control bytes)"),
                    ));
                }
                // As `pocketdex compare` refuses an empty file: every measure of nothing is
                // 0 or 1, which says nothing about the other text.
                if pocketdex::text::plain_text(t, None).trim().is_empty() {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!("{what} cannot be compared: empty (no text, or none once markup is removed)"),
                    ));
                }
            }
            let lang = app2.served.snapshot().info["language"]
                .as_str()
                .and_then(pocketdex::Lang::from_code)
                .unwrap_or(pocketdex::Lang::En);
            crate::shared::compare(&req.text, &other, lang)
        })
        .await??;
    Ok(Json(answer))
}

/// What is served: the index's parameters, counts and sizes.
#[utoipa::path(get, path = "/v1/info", tag = "server",
    responses(
        (status = 200, body = InfoAnswer, description = "What is served"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight"),
    ))]
pub async fn info(State(app): State<Arc<App>>) -> Json<InfoAnswer> {
    Json(InfoAnswer {
        index: app.served.snapshot().info.clone(),
        writable: app.config.writable,
        texts: app.texts.is_some(),
        max_body: app.config.max_body,
    })
}

/// Answers while the server runs.
#[utoipa::path(get, path = "/healthz", tag = "server",
    responses(
        (status = 200, body = Health, description = "The server is up (status \"stale\" while the index on disk cannot be opened and the previous version is served)"),
        (status = 503, body = ErrorBody, description = "Too many requests in flight"),
    ))]
pub async fn healthz(State(app): State<Arc<App>>) -> Json<Health> {
    let reload_error = app.served.reload_error();
    Json(Health {
        status: if reload_error.is_some() {
            "stale"
        } else {
            "ok"
        }
        .into(),
        reload_error,
        documents: app.served.snapshot().documents,
        reloads: app
            .served
            .reloads
            .load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// The OpenAPI description of this API.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "pocketdex",
        description = "Near copies of any document from a pocketdex index: the JSON API of `pocketdex serve`."
    ),
    paths(query, query_batch, check, compare, info, healthz),
    components(schemas(ErrorBody))
)]
pub struct ApiDoc;
