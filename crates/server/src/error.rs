//! Errors as HTTP answers: a status and `{"error": "what is wrong and what to do"}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
}

/// The body of every error answer.
#[derive(serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong and what to do.
    pub error: String,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl From<pocketdex::Error> for ApiError {
    /// A library error is the server's fault or the index's (damaged, changed): 500, with the
    /// library's message, which says what to do.
    fn from(e: pocketdex::Error) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response()
    }
}

/// A JSON error answer with this status (for middleware that answers before a handler).
pub fn answer(status: StatusCode, message: impl Into<String>) -> Response {
    ApiError::new(status, message).into_response()
}
