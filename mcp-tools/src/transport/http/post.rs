//! POST: one client message. Read and checked ([`read_message`]), given to its session (found,
//! or made by `initialize`: [`find_session`]), and answered: 202 for notifications and
//! responses, a JSON body when the answer comes first, an SSE stream when the call sends
//! something before it, or a numbered, replayable stream in resumable mode.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{FutureExt as _, StreamExt as _};

use super::auth::step_up;
use super::sessions::{
    HttpSession, HttpState, LastSeen, named_session, principal, session_caller, shared_session,
    unsupported_version,
};
use super::sse::{Mirror, call_stream, hub_events, sse_response};
use super::stateless;
use super::wire::{
    Peek, SESSION_HEADER, VERSION_HEADER, accepts_all, first_message, is_answer_to, plain, rpc_error_response,
};
use crate::context::HttpParts;
use crate::context::auth::AuthInfo;
use crate::context::peer::{CloseStream, Outbound, Queue};
use crate::dispatch::session::Session;
use crate::dispatch::{InlineCall, InlineSlot, Origin, Received};
use crate::protocol::jsonrpc::{ErrorObject, RawMessage, check_shape, parse_frame};
use crate::protocol::{INTERNAL_ERROR, INVALID_REQUEST, RequestId};

/// The session a message goes to, and the id to issue when `initialize` made it (for whom).
struct Target {
    session: Arc<Session>,
    session_id: Option<String>,
    /// The HTTP session the request named (its hub serves resumable streams).
    named: Option<Arc<HttpSession>>,
    issued: Option<String>,
    owner: Option<String>,
    /// Whose share of the sessions a new session takes.
    caller: String,
}

/// A POST's answer. Its future is an `async` block over the request's parts: an `async fn`
/// keeps each argument twice (as given, and moved into its body), and this future is boxed and
/// copied for every request.
pub(super) fn post(state: Arc<HttpState>, request: Request) -> impl Future<Output = Response> + Send {
    let (parts, body) = request.into_parts();
    async move {
        let body = match read_message(&state, &parts.headers, body).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        // Valid JSON but not a valid message (a null id, say): the session says what is wrong.
        let parsed = parse_frame(&body);
        let peek = Peek::of(&parsed);
        // The other eras' and modes' futures are boxed: held inline, their size would be every
        // request's, copied at each step of starting it.
        if stateless::is_stateless(&state, &parsed, &parts.headers) {
            return Box::pin(stateless::post(&state, parts, parsed, peek)).await;
        }
        if let Some(response) = unsupported_version(&parts.headers) {
            return response;
        }
        let is_initialize = peek.is_initialize;
        let mut target = match find_session(&state, &parts, is_initialize) {
            // A copy held here of a shared session: still kept (not ended through another
            // instance)?
            Ok(target)
                if target.named.is_some()
                    && state.store().is_some()
                    && let Some(id) = &target.session_id
                    && !state.still_shared(id).await =>
            {
                return rpc_error_response(StatusCode::NOT_FOUND, None, -32001, "Session not found");
            }
            Ok(target) => target,
            // Not held here: shared sessions are looked up in the store.
            Err(response) if response.status() == StatusCode::NOT_FOUND && state.store().is_some() => {
                match Box::pin(shared_session(&state, &parts.headers, &parts.extensions)).await {
                    Ok((id, named)) => Target {
                        session: named.session.clone(),
                        session_id: Some(id),
                        named: Some(named),
                        issued: None,
                        owner: principal(&parts.extensions),
                        caller: String::new(),
                    },
                    Err(response) => return response,
                }
            }
            Err(response) => return response,
        };
        // A change of a shared session is saved before it is answered.
        let changed =
            if peek.changes_session && state.store().is_some() { target.session_id.clone() } else { None };
        let (reply, answers) = state.server.shared.request_outbound();
        let http = Some(Arc::new(HttpParts {
            headers: parts.headers,
            peer_addr: parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0),
            session_id: target.session_id.take(),
            auth: parts.extensions.get::<Arc<AuthInfo>>().cloned(),
        }));
        // Resumable mode: requests (not notifications or responses, which get no stream) of an
        // existing session get a numbered, replayable stream.
        let is_request = peek.has_method && peek.id.is_some();
        if let (Some(_), true) = (state.options.resumable, is_request)
            && let Some(http_session) = target.named.take()
        {
            return Box::pin(answer_resumable(
                &state,
                &target.session,
                http_session,
                parsed,
                (peek.id, changed),
                reply,
                http,
                answers,
            ))
            .await;
        }
        let slot = InlineSlot::default();
        let origin = Origin { reply, http, close: None, inline: Some(slot.clone()), observed: None };
        let received = target.session.handle_parsed(parsed, &origin);
        drop(origin);
        let call = slot.lock().expect("inline slot lock").take();
        answer(&state, target, received, call, (peek.id, changed), is_initialize, answers).await
    }
}

/// Checks the headers and reads the body (bounded) and checks its shape; an unusable message
/// is answered here.
#[allow(clippy::result_large_err)] // the error is the response itself, returned at once
async fn read_message(state: &HttpState, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
    if !accepts_all(headers, ["application/json", "text/event-stream"]) {
        return Err(plain(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept both application/json and text/event-stream",
        ));
    }
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return Err(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    // A timer only if the body is not already here (most are, with their headers).
    let mut read = std::pin::pin!(axum::body::to_bytes(body, state.max_body_bytes));
    let read = match read.as_mut().now_or_never() {
        Some(read) => Ok(read),
        None => tokio::time::timeout(state.options.body_read_timeout, read).await,
    };
    let body: Bytes = match read {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => {
            let too_large = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                .any(|e| e.is::<http_body_util::LengthLimitError>());
            if too_large {
                return Err(rpc_error_response(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    None,
                    INVALID_REQUEST,
                    format!(
                        "Payload Too Large: the body exceeds this server's limit of {} bytes",
                        state.max_body_bytes
                    ),
                ));
            }
            tracing::debug!(error = %e, "reading a request body failed");
            return Err(rpc_error_response(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                format!("Bad Request: the body could not be read ({e})"),
            ));
        }
        Err(_) => {
            let timeout = humantime::format_duration(state.options.body_read_timeout);
            return Err(rpc_error_response(
                StatusCode::REQUEST_TIMEOUT,
                None,
                INVALID_REQUEST,
                format!("Request Timeout: the body was not received in full within {timeout}"),
            ));
        }
    };
    if let Err(error) = check_shape(&body, state.server.shared.limits.max_json_depth) {
        return Err(rpc_error_response(StatusCode::BAD_REQUEST, None, error.code, error.message));
    }
    Ok(body)
}

/// The session a message goes to: a new one for `initialize` (or for every message when
/// stateless), else the one its `Mcp-Session-Id` names.
#[allow(clippy::result_large_err)] // the error is the response itself, returned at once
fn find_session(state: &HttpState, parts: &Parts, is_initialize: bool) -> Result<Target, Response> {
    let headers = &parts.headers;
    let shared = &state.server.shared;
    let owner = principal(&parts.extensions);
    if state.options.stateless {
        let session = if is_initialize {
            Session::new(shared.clone(), None)
        } else {
            let version = headers.get(&VERSION_HEADER).and_then(|v| v.to_str().ok());
            Session::new_stateless(shared.clone(), version)
        };
        let caller = String::new();
        return Ok(Target { session, session_id: None, named: None, issued: None, owner, caller });
    }
    if is_initialize {
        // A full server refuses before the session does any work.
        let caller = session_caller(&parts.extensions);
        state.admit(&caller)?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Events are forwarded once the session is registered (initialize succeeded).
        let session = Session::new(shared.clone(), None);
        let issued = Some(id.clone());
        return Ok(Target { session, session_id: Some(id), named: None, issued, owner, caller });
    }
    let (id, http_session) = named_session(state, headers, &parts.extensions)?;
    let session = http_session.session.clone();
    let caller = String::new();
    Ok(Target { session, session_id: Some(id), named: Some(http_session), issued: None, owner, caller })
}

/// The answer to a message handled by its session: 202, 400 with the error, the JSON answer, or
/// an SSE stream of what the call sends ending with its answer. A successful `initialize`
/// registers its session and names it in `Mcp-Session-Id`.
///
/// An `async` block rather than an `async fn`, for the reason given at [`post`].
#[allow(clippy::manual_async_fn)] // on purpose: see above
fn answer(
    state: &HttpState,
    target: Target,
    received: Received,
    call: Option<InlineCall>,
    (request_id, changed): (Option<RequestId>, Option<String>),
    is_initialize: bool,
    mut answers: Queue,
) -> impl Future<Output = Response> + Send {
    async move {
        let first = match first_message(received, &mut answers, &state.shutdown, call).await {
            Ok(first) => first,
            Err(response) => return response,
        };
        let is_answer = is_answer_to(&first, request_id.as_ref());
        if is_answer && let (Some(id), Some(named)) = (&changed, &target.named) {
            state.save_changed(id, named).await;
        }
        // A call the caller lacks scopes for: the step-up challenge (403), whatever the mode.
        if is_answer && let Some(response) = step_up(state, &first) {
            return response;
        }
        if is_answer && (is_initialize || !state.options.always_sse) {
            let initialized = target.issued.is_some() && session_initialized(&first);
            let mut response =
                (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], first).into_response();
            // Only a successful `initialize` makes a session, registered and named in the answer.
            if let (Some(id), true) = (&target.issued, initialized)
                && let Ok(value) = HeaderValue::from_str(id)
            {
                let http_session = Arc::new(HttpSession {
                    session: target.session.clone(),
                    last_seen: LastSeen::now(),
                    hub: state.new_hub(),
                    owner: target.owner.clone(),
                    caller: target.caller.clone(),
                    renewed: LastSeen::now(),
                });
                if let Err(refused) = state.insert(id.clone(), http_session.clone()) {
                    return refused;
                }
                // Shared: saved before it is named, so that any instance accepts it at once.
                if let Err(e) = state.share(id, &http_session).await {
                    tracing::error!(error = %e, "the session store failed to save a new session");
                    state.sessions.write().expect("sessions lock").remove(id);
                    target.session.close();
                    let message = format!("Service Unavailable: the session store failed: {e}");
                    return rpc_error_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        None,
                        INTERNAL_ERROR,
                        message,
                    );
                }
                target.session.forward_events();
                response.headers_mut().insert(SESSION_HEADER.clone(), value);
            }
            return response;
        }
        // Messages before the answer (progress, logs, requests to the client): stream them.
        let stream = call_stream(first, answers, request_id, state.shutdown.clone());
        sse_response(stream, state.options.keep_alive)
    }
}

/// Resumable mode: the request's messages are numbered and kept in the session's hub, so a
/// client that loses the connection resumes with `Last-Event-ID`; the stream opens with a
/// priming event.
#[allow(clippy::too_many_arguments)]
async fn answer_resumable(
    state: &Arc<HttpState>,
    session: &Arc<Session>,
    http_session: Arc<HttpSession>,
    parsed: Result<RawMessage<'_>, ErrorObject>,
    (request_id, changed): (Option<RequestId>, Option<String>),
    reply: Outbound,
    http: Option<Arc<HttpParts>>,
    mut answers: Queue,
) -> Response {
    let retry = state.options.resumable.unwrap_or_default();
    let (stream_id, listener) = http_session.hub.open();
    // A shared session's stream is kept in the store too: the client may resume it elsewhere.
    let session_id = http.as_ref().and_then(|h| h.session_id.clone());
    let mirror = match (state.store(), session_id) {
        (Some(store), Some(id)) => Some((store.clone(), id, state.options.session_idle_timeout)),
        _ => None,
    };
    let hub_session = Arc::downgrade(&http_session);
    let close: CloseStream =
        Arc::new(move || hub_session.upgrade().is_some_and(|s| s.hub.disconnect(stream_id)));
    let origin = Origin { reply, http, close: Some(close), inline: None, observed: None };
    match session.handle_parsed(parsed, &origin) {
        Received::Request => {}
        Received::Notification => {
            http_session.hub.discard(stream_id);
            return StatusCode::ACCEPTED.into_response();
        }
        Received::Invalid => {
            http_session.hub.discard(stream_id);
            drop(origin);
            let body = answers.recv().await.unwrap_or_default();
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body)
                .into_response();
        }
    }
    drop(origin);
    // The copy in the store exists before the client learns the stream's id (the priming
    // event): a client resuming at once on another instance finds it there. Its events wait in
    // `answers` meanwhile.
    let request = request_id.as_ref().and_then(|id| serde_json::to_string(id).ok());
    let mirror = match mirror {
        Some((store, id, ttl)) => match store.open_events(&id, stream_id, request.as_deref(), ttl).await {
            Ok(()) => Some((store, id, ttl)),
            Err(e) => {
                tracing::error!(error = %e, "could not keep a resumable stream in the shared store: a client resuming it on another instance will not find it");
                None
            }
        },
        None => None,
    };
    let pump_session = http_session.clone();
    let shutdown = state.shutdown.clone();
    let pump_state = changed.is_some().then(|| state.clone());
    tokio::spawn(async move {
        let max_bytes = pump_session.hub.max_bytes();
        let mut mirror = mirror.map(|(store, id, ttl)| Mirror::start(store, id, stream_id, ttl, max_bytes));
        loop {
            let message = tokio::select! {
                m = answers.recv() => m,
                _ = shutdown.cancelled() => None,
            };
            let Some(message) = message else { break };
            let done = is_answer_to(&message, request_id.as_ref());
            if done && let (Some(id), Some(state)) = (&changed, &pump_state) {
                state.save_changed(id, &pump_session).await;
            }
            let data: Arc<str> = String::from_utf8_lossy(&message).into();
            let seq = pump_session.hub.push(stream_id, data.clone());
            if let (Some(mirror), Some(seq)) = (&mut mirror, seq) {
                mirror.send(seq, data);
            }
            if done {
                break;
            }
        }
        pump_session.hub.finish(stream_id);
        if let Some(mirror) = mirror {
            mirror.end();
        }
    });
    // The priming event: an id to resume from, the reconnection delay, and empty data.
    let priming = Bytes::from(format!("id: {stream_id}-0\nretry: {}\ndata: \n\n", retry.as_millis()));
    let events = hub_events(stream_id, Vec::new(), Some(listener), state.shutdown.clone());
    let stream = futures_util::stream::once(async move { priming }).chain(events);
    sse_response(stream, state.options.keep_alive)
}

fn session_initialized(answer: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(answer).is_ok_and(|v| v.get("result").is_some())
}
