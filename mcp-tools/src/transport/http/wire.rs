//! What every part of the HTTP transport shares: header names, JSON-RPC error responses, the
//! `Accept` check, and the peek at a message's method and id.

use std::io::Write as _;

use crate::context::peer::Queue;
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio_util::sync::CancellationToken;

use crate::dispatch::{InlineCall, Received};

use crate::protocol::jsonrpc::{ErrorObject, RawMessage, encode_error};
use crate::protocol::{INVALID_REQUEST, RequestId};

// Parsed names (a `&str` is parsed and checked at every lookup).
pub(super) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// What the transport keeps of a message the session handles: its id, and what its method
/// means to the transport (the method itself is borrowed from the body while it is there).
#[derive(Default)]
pub(super) struct Peek {
    pub id: Option<RequestId>,
    /// It has a method: a request if it has an id too, else a notification.
    pub has_method: bool,
    pub is_initialize: bool,
    /// It changes its session (log level, subscriptions): a shared session is saved before
    /// it is answered.
    pub changes_session: bool,
}

impl Peek {
    /// The id and kind of a `parsed` message (all empty when it is not a JSON-RPC message:
    /// the session says why).
    pub fn of(parsed: &Result<RawMessage<'_>, ErrorObject>) -> Peek {
        let Ok(fields) = parsed else { return Peek::default() };
        let id = fields.id.and_then(|id| serde_json::from_str(id.get()).ok());
        let method = fields.method.as_deref();
        Peek {
            id,
            has_method: method.is_some(),
            is_initialize: method == Some("initialize"),
            changes_session: matches!(
                method,
                Some("logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
            ),
        }
    }
}

/// Whether `message` is the answer (result or error) to request `id`.
pub(super) fn is_answer_to(message: &[u8], id: Option<&RequestId>) -> bool {
    // Answers are encoded here as `{"jsonrpc":"2.0","id":ID,"result"|"error":…}`: read that
    // prefix, without parsing the rest (a large result, say).
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    if let Some(rest) = message.strip_prefix(HEAD) {
        // An integer id is written on the stack: this runs for every answer.
        let mut digits = [0u8; 24];
        let written;
        let id: &[u8] = match id {
            Some(RequestId::Number(n)) => {
                let mut cursor = &mut digits[..];
                write!(cursor, "{n}").expect("an i64 fits in 24 bytes");
                let len = 24 - cursor.len();
                &digits[..len]
            }
            other => {
                written = serde_json::to_vec(&other).expect("an id serializes");
                &written
            }
        };
        return rest
            .strip_prefix(id)
            .is_some_and(|rest| rest.starts_with(br#","result":"#) || rest.starts_with(br#","error":"#));
    }
    #[derive(Deserialize)]
    struct Fields {
        #[serde(default)]
        method: Option<IgnoredAny>,
        #[serde(default)]
        id: Option<RequestId>,
    }
    let Ok(fields) = serde_json::from_slice::<Fields>(message) else { return false };
    fields.method.is_none() && fields.id.as_ref() == id
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
    accepts_all(headers, [wanted])
}

/// Whether an `Accept` header admits every one of `wanted`, read once (this runs for every
/// POST, so nothing is allocated either).
pub(super) fn accepts_all<const N: usize>(headers: &HeaderMap, wanted: [&str; N]) -> bool {
    let values = headers.get_all(header::ACCEPT);
    // What the SDKs send (`application/json, text/event-stream`): one value listing exactly
    // `wanted`, in order, recognised without taking it apart.
    let mut all = values.iter();
    if let (Some(only), None) = (all.next(), all.next())
        && lists_exactly(only.as_bytes(), &wanted)
    {
        return true;
    }
    let mut admitted = [false; N];
    let items = values.iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    for item in items {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or_default().trim();
        // `q=0` means "not acceptable" (RFC 9110 §12.4.2).
        let refused = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .any(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0));
        if refused {
            continue;
        }
        for (admitted, wanted) in admitted.iter_mut().zip(wanted) {
            let kind = wanted.split_once('/').map_or(wanted, |(kind, _)| kind);
            let any_subtype = media.strip_suffix("/*").is_some_and(|k| k.eq_ignore_ascii_case(kind));
            *admitted |= media.eq_ignore_ascii_case(wanted) || media == "*/*" || any_subtype;
        }
    }
    admitted.iter().all(|a| *a)
}

/// Whether `value` is `wanted` joined by `, ` (media types compare without regard to case).
fn lists_exactly(mut value: &[u8], wanted: &[&str]) -> bool {
    for (i, media) in wanted.iter().enumerate() {
        if i > 0 {
            let Some(rest) = value.strip_prefix(b", ") else { return false };
            value = rest;
        }
        match value.split_at_checked(media.len()) {
            Some((head, rest)) if head.eq_ignore_ascii_case(media.as_bytes()) => value = rest,
            _ => return false,
        }
    }
    value.is_empty()
}

/// The first message a handled message sends back when it is a request (its answer, or what the
/// call sends before it), or the whole response when there is nothing more to wait for: 202 for
/// a notification or a response, 400 with the error for an invalid message, 202 when the
/// request was cancelled or the server shuts down first.
pub(super) async fn first_message(
    received: Received,
    answers: &mut Queue,
    shutdown: &CancellationToken,
    call: Option<InlineCall>,
) -> Result<Vec<u8>, Response> {
    match received {
        Received::Notification => Err(StatusCode::ACCEPTED.into_response()),
        Received::Invalid => {
            let body = answers.recv().await.unwrap_or_default();
            Err((StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response())
        }
        Received::Request => {
            let first = match call {
                // The request runs here until it sends something: most just answer.
                Some(mut call) => tokio::select! {
                    biased;
                    () = &mut call => answers.try_recv(),
                    first = answers.recv() => {
                        // It sent something before its end (progress, a request to the
                        // client): the rest runs on its own while the stream carries it.
                        tokio::spawn(call);
                        first
                    }
                    _ = shutdown.cancelled() => None,
                },
                None => tokio::select! {
                    first = answers.recv() => first,
                    _ = shutdown.cancelled() => None,
                },
            };
            first.ok_or_else(|| StatusCode::ACCEPTED.into_response())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::{encode_raw_result, encode_result};
    use axum::http::HeaderValue;
    use serde_json::value::RawValue;

    #[test]
    fn answers_are_told_from_requests_and_notifications_with_the_same_id() {
        let one = RequestId::Number(1);
        let text = RequestId::String("a\"b".into());
        let raw = RawValue::from_string("{}".into()).unwrap();
        assert!(is_answer_to(&encode_result(&one, &serde_json::json!({})), Some(&one)));
        assert!(is_answer_to(&encode_raw_result(&text, &raw), Some(&text)));
        assert!(is_answer_to(&encode_error(Some(&one), &ErrorObject::new(1, "x")), Some(&one)));
        assert!(is_answer_to(&encode_error(None, &ErrorObject::new(1, "x")), None));
        assert!(!is_answer_to(&encode_result(&one, &serde_json::json!({})), Some(&RequestId::Number(11))));
        assert!(!is_answer_to(&encode_result(&one, &serde_json::json!({})), Some(&text)));
        assert!(
            !is_answer_to(&encode_result(&RequestId::Number(11), &raw), Some(&one)),
            "1 is a prefix of 11"
        );
        for n in [i64::MIN, -1, 0, i64::MAX] {
            let id = RequestId::Number(n);
            assert!(is_answer_to(&encode_raw_result(&id, &raw), Some(&id)), "{n}");
        }
        // A request to the client that happens to use the same id is not the answer.
        assert!(!is_answer_to(br#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#, Some(&one)));
        // Other shapes are parsed.
        assert!(is_answer_to(br#"{"id":1,"jsonrpc":"2.0","result":{}}"#, Some(&one)));
        assert!(!is_answer_to(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#, Some(&one)));
    }

    #[test]
    fn accept_matches_types_wildcards_and_refusals() {
        let headers = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
            h
        };
        assert!(accepts(&headers("Application/JSON, text/event-stream"), "application/json"));
        assert!(accepts(&headers("text/*"), "text/event-stream"));
        assert!(accepts(&headers("*/*"), "application/json"));
        assert!(!accepts(&headers("application/json;q=0"), "application/json"));
        assert!(!accepts(&headers("text/html"), "text/event-stream"));
        let both = ["application/json", "text/event-stream"];
        assert!(accepts_all(&headers("text/event-stream, application/json"), both));
        assert!(accepts_all(&headers("application/*;q=0.5, text/*"), both));
        assert!(accepts_all(&headers("application/json;q=0, */*"), both), "another item admits it");
        assert!(!accepts_all(&headers("application/json"), both), "one is missing");
        assert!(!accepts_all(&headers("application/json, text/event-stream;q=0"), both));
        // The SDKs' value, recognised whole; near misses go through the full reading.
        assert!(lists_exactly(b"application/json, text/event-stream", &both));
        assert!(lists_exactly(b"Application/JSON, Text/Event-Stream", &both));
        for near in [
            "application/json, text/event-stream;q=0",
            "application/json,text/event-stream",
            "application/json",
        ] {
            assert!(!lists_exactly(near.as_bytes(), &both), "{near}");
        }
        assert!(accepts_all(&headers("application/json, text/event-stream"), both));
        assert!(accepts_all(&headers("application/json,text/event-stream"), both));
        let mut two = headers("application/json");
        two.append(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(accepts_all(&two, both), "two Accept lines, one type each");
    }
}
