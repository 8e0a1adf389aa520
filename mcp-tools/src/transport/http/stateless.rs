//! POST of the stateless revision (2026-07-28): no session; the headers must agree with the body
//! (`MCP-Protocol-Version` with the envelope, `Mcp-Method` with the method, `Mcp-Name` with the
//! tool, prompt or resource, `Mcp-Param-*` with the arguments a tool mirrors in headers); the
//! request is served by a session of its own, and its errors get the status the revision gives
//! them (404 for an unknown method, 400 for a bad request).

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::context::peer::Queue;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::sessions::HttpState;
use super::sse::{call_stream, sse_response};
use super::wire::{Peek, VERSION_HEADER, first_message, is_answer_to, rpc_error_response};
use crate::context::HttpParts;
use crate::context::auth::AuthInfo;
use crate::dispatch::session::Session;
use crate::dispatch::{InlineCall, InlineSlot, Origin, Received};
use crate::protocol::jsonrpc::{ErrorObject, RawMessage};
use crate::protocol::stateless::{Envelope, HEADER_MISMATCH};
use crate::protocol::{Era, METHOD_NOT_FOUND, RequestId, STATELESS_VERSIONS};

const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const PARAM_HEADER_PREFIX: &str = "mcp-param-";

#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<Envelope<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    uri: Option<Cow<'a, str>>,
    #[serde(rename = "taskId", borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    task_id: Option<Cow<'a, str>>,
    /// Decoded only for a tool that mirrors arguments in headers.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// Whether a POSTed message belongs to the stateless revision: it carries the envelope, it is
/// `server/discover`, or its `MCP-Protocol-Version` header names a stateless revision.
pub(super) fn is_stateless(
    state: &HttpState,
    parsed: &Result<RawMessage<'_>, ErrorObject>,
    headers: &HeaderMap,
) -> bool {
    if let Some(era) = state.server.shared.only_era {
        return era == Era::Stateless;
    }
    let header_says = headers
        .get(&VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| STATELESS_VERSIONS.contains(&v) || (Era::of(v) == Era::Stateless && v.len() == 10));
    if header_says {
        return true;
    }
    let Ok(message) = parsed else { return false };
    message.method.as_deref() == Some("server/discover")
        || crate::protocol::stateless::has_envelope(message.params)
}

pub(super) async fn post(
    state: &HttpState,
    parts: Parts,
    parsed: Result<RawMessage<'_>, ErrorObject>,
    peek: Peek,
) -> Response {
    let method = parsed.as_ref().ok().and_then(|m| m.method.as_deref()).unwrap_or_default();
    let params = parsed.as_ref().ok().and_then(|m| m.params).map(RawValue::get);
    if let Err(message) = check_headers(state, &parts.headers, method, params) {
        return rpc_error_response(StatusCode::BAD_REQUEST, peek.id.as_ref(), HEADER_MISMATCH, message);
    }
    let session = Session::for_request(state.server.shared.clone());
    let (reply, answers) = state.server.shared.request_outbound();
    let http = Some(Arc::new(HttpParts {
        headers: parts.headers,
        peer_addr: parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0),
        session_id: None,
        auth: parts.extensions.get::<Arc<AuthInfo>>().cloned(),
    }));
    let slot = InlineSlot::default();
    let origin = Origin { reply, http, close: None, inline: Some(slot.clone()), observed: None };
    let received = session.handle_parsed(parsed, &origin);
    drop(origin);
    let call = slot.lock().expect("inline slot lock").take();
    answer(state, received, call, peek.id, answers).await
}

/// The headers against the body's `method` and `params`: `Err` says what disagrees. A request
/// whose envelope is incomplete is left to the session (it answers "invalid params").
fn check_headers(
    state: &HttpState,
    headers: &HeaderMap,
    method: &str,
    params: Option<&str>,
) -> Result<(), String> {
    let params: Params<'_> = params.and_then(|p| serde_json::from_str(p).ok()).unwrap_or_default();
    let Some(meta) = &params.meta else { return Ok(()) };
    let (Some(version), Some(_)) = (&meta.protocol_version, &meta.client_capabilities) else { return Ok(()) };
    match header_value(headers, VERSION_HEADER.as_str())? {
        None => return Err("the MCP-Protocol-Version header is required".into()),
        Some(header) if header != *version => {
            return Err(format!(
                "the MCP-Protocol-Version header ({header}) does not match the request's protocol version ({version})"
            ));
        }
        Some(_) => {}
    }
    match header_value(headers, METHOD_HEADER)? {
        Some(named) if named == method => {}
        Some(named) => {
            return Err(format!("the Mcp-Method header ({named}) does not match the method ({method})"));
        }
        None => return Err("the Mcp-Method header is required".into()),
    }
    let name = match method {
        "tools/call" | "prompts/get" => params.name.as_deref(),
        "resources/read" => params.uri.as_deref(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.task_id.as_deref(),
        _ => None,
    };
    if let Some(name) = name {
        match header_value(headers, NAME_HEADER)? {
            Some(named) if named == name => {}
            Some(named) => {
                return Err(format!("the Mcp-Name header ({named}) does not match the request ({name})"));
            }
            None => return Err(format!("the Mcp-Name header is required for {method}")),
        }
    }
    if method == "tools/call"
        && let Some(tool) = params.name.as_deref()
        && let Some(entry) = state.server.shared.registry.load().get(tool).cloned()
        && !entry.header_params.is_empty()
    {
        // Arguments that are not an object mirror nothing (the call then says what is wrong).
        let arguments: serde_json::Map<String, Value> =
            params.arguments.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default();
        for mirrored in &entry.header_params {
            let header = format!("{PARAM_HEADER_PREFIX}{}", mirrored.header);
            let sent = header_value(headers, &header)?;
            let argument = mirrored.find(&arguments).filter(|v| !v.is_null());
            match (argument, sent) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(format!(
                        "the Mcp-Param-{} header is required: the argument `{}` is sent",
                        mirrored.header,
                        mirrored.path.join(".")
                    ));
                }
                (None, Some(_)) => {
                    return Err(format!(
                        "the Mcp-Param-{} header is sent without the argument `{}`",
                        mirrored.header,
                        mirrored.path.join(".")
                    ));
                }
                (Some(argument), Some(sent)) if !mirrors(argument, &sent) => {
                    return Err(format!(
                        "the Mcp-Param-{} header ({sent}) does not match the argument `{}` ({argument})",
                        mirrored.header,
                        mirrored.path.join(".")
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Whether a header's text is the argument's value: a string as it is, an integer in decimal
/// (compared as a number), a boolean as `true`/`false`.
fn mirrors(argument: &Value, header: &str) -> bool {
    match argument {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_f64(), header.parse::<f64>()) {
            (Some(a), Ok(h)) => a == h,
            _ => false,
        },
        _ => false,
    }
}

/// A header's value, its surrounding whitespace trimmed and a `=?base64?…?=` value decoded;
/// `Err` for a value that is not text or not valid Base64.
fn header_value(headers: &HeaderMap, name: &str) -> Result<Option<String>, String> {
    let Some(value) = headers.get(name) else { return Ok(None) };
    let Ok(text) = value.to_str() else { return Err(format!("the {name} header is not text")) };
    let text = text.trim();
    match text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        None => Ok(Some(text.to_owned())),
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(Some)
            .ok_or_else(|| format!("the {name} header is not valid Base64")),
    }
}

/// The answer to a stateless request: 202 for a notification, the JSON answer (an error with
/// the status its code calls for), or an SSE stream of what the call sends, ending with its
/// answer.
async fn answer(
    state: &HttpState,
    received: Received,
    call: Option<InlineCall>,
    request_id: Option<RequestId>,
    mut answers: Queue,
) -> Response {
    let first = match first_message(received, &mut answers, &state.shutdown, call).await {
        Ok(first) => first,
        Err(response) => return response,
    };
    // An error is answered as JSON with its status even when every answer is an SSE stream
    // (`always_sse`): the status is what tells the client what went wrong.
    let status = status_of(&first);
    let answered = is_answer_to(&first, request_id.as_ref());
    if answered && let Some(response) = super::auth::step_up(state, &first) {
        return response;
    }
    if answered && (!state.options.always_sse || status != StatusCode::OK) {
        return (status, [(header::CONTENT_TYPE, "application/json")], first).into_response();
    }
    let stream = call_stream(first, answers, request_id, state.shutdown.clone());
    sse_response(stream, state.options.keep_alive)
}

/// The status of an answer: 404 for an unknown method, 400 for what makes a request bad (its
/// envelope, its headers, its revision, a capability it lacks, its params), 200 otherwise.
fn status_of(answer: &[u8]) -> StatusCode {
    #[derive(Deserialize)]
    struct Answer {
        error: Option<Code>,
    }
    #[derive(Deserialize)]
    struct Code {
        code: i32,
    }
    match serde_json::from_slice::<Answer>(answer).ok().and_then(|a| a.error).map(|e| e.code) {
        Some(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}
