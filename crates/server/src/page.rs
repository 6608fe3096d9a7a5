//! The web page at `/`: HTML, CSS and script embedded in the binary, nothing fetched from
//! elsewhere (it works offline, from removable media).

use crate::App;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

/// One embedded file.
pub struct Asset {
    /// Its media type.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static str,
}

const INDEX: Asset = Asset {
    content_type: "text/html; charset=utf-8",
    body: include_str!("../assets/index.html"),
};
const SCRIPT: Asset = Asset {
    content_type: "text/javascript; charset=utf-8",
    body: include_str!("../assets/app.js"),
};
const STYLE: Asset = Asset {
    content_type: "text/css; charset=utf-8",
    body: include_str!("../assets/app.css"),
};

impl IntoResponse for Asset {
    fn into_response(self) -> Response {
        (
            [
                (header::CONTENT_TYPE, self.content_type),
                // Revalidated, so that a new binary's page is never mixed with an old script.
                (header::CACHE_CONTROL, "no-cache"),
            ],
            self.body,
        )
            .into_response()
    }
}

/// The page's routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(|| async { INDEX }))
        .route("/app.js", get(|| async { SCRIPT }))
        .route("/app.css", get(|| async { STYLE }))
}
