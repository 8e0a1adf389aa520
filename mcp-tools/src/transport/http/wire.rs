//! What every part of the HTTP transport shares: header names, JSON-RPC error responses, the
//! `Accept` check, and the peek at a message's method and id.

use crate::context::peer::Queue;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::dispatch::Received;

use crate::protocol::jsonrpc::{ErrorObject, encode_error};
use crate::protocol::{INVALID_REQUEST, RequestId};

pub(super) const SESSION_HEADER: &str = "mcp-session-id";
pub(super) const VERSION_HEADER: &str = "mcp-protocol-version";

/// What the transport reads of a message before the session does: its method and id.
#[derive(Deserialize, Default)]
pub(super) struct Peek {
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub id: Option<RequestId>,
}

/// Whether `message` is the answer (result or error) to request `id`.
pub(super) fn is_answer_to(message: &[u8], id: Option<&RequestId>) -> bool {
    let Ok(peek) = serde_json::from_slice::<Peek>(message) else { return false };
    peek.method.is_none() && peek.id.as_ref() == id
}

/// A JSON-RPC error as the body of a response with this status.
pub(super) fn rpc_error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i32,
    message: impl Into<String>,
) -> Response {
    let body = encode_error(id, &ErrorObject::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// An error response with a fixed message and no id.
pub(super) fn plain(status: StatusCode, message: &'static str) -> Response {
    rpc_error_response(status, None, INVALID_REQUEST, message)
}

/// Whether an `Accept` header admits `wanted` (`type/subtype`), wildcards included.
pub(super) fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let (kind, _) = wanted.split_once('/').unwrap_or((wanted, ""));
    headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |item| {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            // `q=0` means "not acceptable" (RFC 9110 §12.4.2).
            let refused = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .any(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0));
            !refused && (media == wanted || media == "*/*" || media == format!("{kind}/*"))
        },
    )
}

/// The first message a handled message sends back when it is a request (its answer, or what the
/// call sends before it), or the whole response when there is nothing more to wait for: 202 for
/// a notification or a response, 400 with the error for an invalid message, 202 when the
/// request was cancelled or the server shuts down first.
pub(super) async fn first_message(
    received: Received,
    answers: &mut Queue,
    shutdown: &CancellationToken,
) -> Result<Vec<u8>, Response> {
    match received {
        Received::Notification => Err(StatusCode::ACCEPTED.into_response()),
        Received::Invalid => {
            let body = answers.recv().await.unwrap_or_default();
            Err((StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response())
        }
        Received::Request => {
            let first = tokio::select! {
                first = answers.recv() => first,
                _ = shutdown.cancelled() => None,
            };
            first.ok_or_else(|| StatusCode::ACCEPTED.into_response())
        }
    }
}
