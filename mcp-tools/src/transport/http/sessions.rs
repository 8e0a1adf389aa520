//! The sessions of the HTTP endpoint: each wraps a dispatch session with its last use (idle
//! sessions expire) and its resumable streams; the endpoint's shared state; GET (a session's
//! own stream, or a resumed one) and DELETE.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

use super::options::HttpOptions;
use super::sse::{Hub, hub_events, sse_event, sse_response};
use super::wire::{SESSION_HEADER, VERSION_HEADER, accepts, plain, rpc_error_response};
use crate::context::auth::AuthInfo;
use crate::dispatch::session::Session;
use crate::protocol::{Era, INVALID_REQUEST, SUPPORTED_PROTOCOL_VERSIONS};
use crate::server::Server;

/// One session of the endpoint.
pub(super) struct HttpSession {
    pub session: Arc<Session>,
    pub last_seen: LastSeen,
    pub hub: Hub,
    /// Who opened it (with authorization): no one else may use it.
    pub owner: Option<String>,
    /// Whose share of the sessions it takes: its owner, else the address it was opened from.
    pub caller: String,
}
/// What every request of the endpoint reads.
pub(super) struct HttpState {
    pub server: Server,
    pub options: HttpOptions,
    pub max_body_bytes: usize,
    /// Read by every request (a read lock: the workers do not wait for each other), written when
    /// a session starts or ends.
    pub sessions: RwLock<foldhash::HashMap<String, Arc<HttpSession>>>,
    /// Fired on shutdown: open SSE streams end so connections can close.
    pub shutdown: CancellationToken,
    /// Whether the idle-session sweeper runs.
    pub sweeping: Once,
}

impl HttpState {
    /// Whether a session for `caller` could be registered now: the caller may always replace
    /// its own oldest one; otherwise the server must be below its limit. Checked before an
    /// `initialize` runs, so a refused one does no work (registering checks again).
    #[allow(clippy::result_large_err)] // the error is the response itself, returned at once
    pub fn admit(&self, caller: &str) -> Result<(), Response> {
        let sessions = self.sessions.read().expect("sessions lock");
        let theirs = sessions.values().filter(|s| s.caller == caller).count();
        if theirs >= self.options.max_sessions_per_caller || sessions.len() < self.options.max_sessions {
            return Ok(());
        }
        drop(sessions);
        Err(self.full())
    }

    /// Registers a new session. A caller holding its limit of sessions ends its own least
    /// recently used one to make room; a full server refuses the new one (it never ends another
    /// caller's session).
    #[allow(clippy::result_large_err)] // the error is the response itself, returned at once
    pub fn insert(&self, id: String, session: Arc<HttpSession>) -> Result<(), Response> {
        let evicted = {
            let mut sessions = self.sessions.write().expect("sessions lock");
            let theirs = sessions.iter().filter(|(_, s)| s.caller == session.caller);
            let (count, oldest) = theirs.fold((0, None::<(&String, Instant)>), |(n, oldest), (id, s)| {
                let seen = s.last_seen.get();
                let older = oldest.is_none_or(|(_, at)| seen < at);
                (n + 1, if older { Some((id, seen)) } else { oldest })
            });
            let evicted = match oldest {
                Some((id, _)) if count >= self.options.max_sessions_per_caller => {
                    let id = id.clone();
                    sessions.remove(&id)
                }
                _ if sessions.len() >= self.options.max_sessions => {
                    drop(sessions);
                    session.session.close();
                    return Err(self.full());
                }
                _ => None,
            };
            sessions.insert(id, session);
            evicted
        };
        if let Some(evicted) = evicted {
            tracing::info!(
                limit = self.options.max_sessions_per_caller,
                "a caller opened more sessions than its limit: its least recently used one is ended"
            );
            evicted.session.close();
        }
        Ok(())
    }

    /// The answer to an `initialize` when the server holds its limit of sessions.
    fn full(&self) -> Response {
        tracing::warn!(limit = self.options.max_sessions, "too many sessions: a new one was refused");
        let message = format!(
            "Service Unavailable: this server holds {} sessions, its limit; retry later",
            self.options.max_sessions
        );
        let mut response = rpc_error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            crate::protocol::INTERNAL_ERROR,
            message,
        );
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        response
    }

    /// Whether no request has a session: stateless mode, or the 2026-07-28 revision only.
    pub fn sessionless(&self) -> bool {
        self.options.stateless || self.server.shared.only_era == Some(Era::Stateless)
    }

    /// The session named `id`, marked as used now.
    pub fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.sessions.read().expect("sessions lock").get(id).cloned()?;
        session.last_seen.touch();
        Some(session)
    }

    /// Starts, once, the task that ends idle sessions (it stops with the endpoint). Needs a Tokio
    /// runtime: called when the router is built inside one, else on the first request.
    pub fn start_sweeper(self: &Arc<Self>) {
        self.sweeping.call_once(|| {
            let sweeper = Arc::downgrade(self);
            let period = (self.options.session_idle_timeout / 4).max(Duration::from_millis(50));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(period).await;
                    let Some(state) = sweeper.upgrade() else { return };
                    state.expire_idle();
                }
            });
        });
    }

    /// Ends the sessions unused for longer than the idle timeout.
    pub fn expire_idle(&self) {
        let timeout = self.options.session_idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = self.sessions.write().expect("sessions lock");
            // A session running a request or holding a stream open is not idle.
            let stale: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.last_seen.get().elapsed() > timeout && !s.session.is_busy())
                .map(|(id, _)| id.clone())
                .collect();
            stale.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for s in expired {
            tracing::debug!("session expired after {timeout:?} idle");
            s.session.close();
        }
    }
}

/// When a session was last used: an atomic (in microseconds since it started), so that the
/// requests of one session, and the workers that look sessions up, do not wait for each other.
pub(super) struct LastSeen {
    start: Instant,
    micros: AtomicU64,
}

impl LastSeen {
    /// Used now.
    pub fn now() -> LastSeen {
        LastSeen { start: Instant::now(), micros: AtomicU64::new(0) }
    }

    /// Marks it used now (never earlier than a mark made at the same time by another thread).
    pub fn touch(&self) {
        let micros = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.micros.fetch_max(micros, Ordering::Relaxed);
    }

    /// When it was last used (to the microsecond).
    pub fn get(&self) -> Instant {
        self.start + Duration::from_micros(self.micros.load(Ordering::Relaxed))
    }
}

fn session_id_of(headers: &HeaderMap) -> Option<String> {
    headers.get(&SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// The session a request names: 400 when it names none, 404 when it is unknown, ended, or
/// another caller's (with authorization, a session belongs to whoever opened it).
#[allow(clippy::result_large_err)] // the error is the response itself, returned at once
pub(super) fn named_session(
    state: &HttpState,
    headers: &HeaderMap,
    extensions: &http::Extensions,
) -> Result<(String, Arc<HttpSession>), Response> {
    let Some(id) = session_id_of(headers) else {
        return Err(plain(StatusCode::BAD_REQUEST, "Bad Request: Mcp-Session-Id header is required"));
    };
    let caller = principal(extensions);
    match state.session(&id) {
        Some(session) if session.owner == caller => Ok((id, session)),
        Some(_) => {
            tracing::warn!(caller = ?caller, "a request named another caller's session");
            Err(rpc_error_response(StatusCode::NOT_FOUND, None, -32001, "Session not found"))
        }
        None => Err(rpc_error_response(StatusCode::NOT_FOUND, None, -32001, "Session not found")),
    }
}

/// Who is calling, when the request carries a verified identity: its subject, else its client,
/// each in its own name space.
pub(super) fn principal(extensions: &http::Extensions) -> Option<String> {
    extensions.get::<Arc<AuthInfo>>().and_then(|info| info.identity_key())
}

/// Whose share of the sessions a request's new session takes: the caller's identity, else the
/// address it comes from (everyone behind one proxy, without authorization).
pub(super) fn session_caller(extensions: &http::Extensions) -> String {
    principal(extensions).unwrap_or_else(|| {
        match extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>() {
            Some(info) => format!("address:{}", info.0.ip()),
            None => "anonymous".to_owned(),
        }
    })
}

/// A 2025-11-25 request whose `MCP-Protocol-Version` header names a revision this server does
/// not speak: 400.
pub(super) fn unsupported_version(headers: &HeaderMap) -> Option<Response> {
    let version = headers.get(&VERSION_HEADER)?;
    if version.to_str().is_ok_and(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(&v)) {
        return None;
    }
    let message = format!(
        "Bad Request: unsupported MCP-Protocol-Version (supported: {})",
        SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    );
    Some(rpc_error_response(StatusCode::BAD_REQUEST, None, INVALID_REQUEST, message))
}

/// DELETE: the client ends its session.
pub(super) fn delete(state: Arc<HttpState>, request: &Request) -> Response {
    let headers = request.headers();
    if state.sessionless() {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let (id, _) = match named_session(&state, headers, request.extensions()) {
        Ok(found) => found,
        Err(response) => return response,
    };
    if let Some(s) = state.sessions.write().expect("sessions lock").remove(&id) {
        s.session.close();
    }
    (StatusCode::OK, Body::empty()).into_response()
}

/// GET: the stream of messages unrelated to any request (list changes, resource updates).
pub(super) fn get(state: Arc<HttpState>, request: Request) -> Response {
    if state.sessionless() {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if !accepts(request.headers(), "text/event-stream") {
        return plain(StatusCode::NOT_ACCEPTABLE, "Not Acceptable: the client must accept text/event-stream");
    }
    let (_, http_session) = match named_session(&state, request.headers(), request.extensions()) {
        Ok(found) => found,
        Err(response) => return response,
    };
    // A reconnection: replay what the stream's last connection missed, then follow it.
    let last_event = request.headers().get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| {
        let (stream, seq) = v.split_once('-')?;
        Some((stream.parse::<u64>().ok()?, seq.parse::<u64>().ok()?))
    });
    if let Some((stream_id, after)) = last_event
        && let Some((missed, live)) = http_session.hub.resume(stream_id, after)
    {
        let stream = hub_events(stream_id, missed, live, state.shutdown.clone());
        return sse_response(stream, state.options.keep_alive);
    }
    if http_session.session.has_standalone() {
        return plain(StatusCode::CONFLICT, "Conflict: this session already has a GET stream open");
    }
    let (out, queue) = state.server.shared.outbound();
    http_session.session.set_standalone(Some(out));
    let shutdown = state.shutdown.clone();
    let stream = futures_util::stream::unfold((queue, shutdown), |(mut queue, shutdown)| async move {
        let message = tokio::select! {
            m = queue.recv() => m?,
            _ = shutdown.cancelled() => return None,
        };
        Some((sse_event(None, &message), (queue, shutdown)))
    });
    sse_response(stream, state.options.keep_alive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_seen_moves_forward_only() {
        let seen = LastSeen::now();
        let created = seen.get();
        std::thread::sleep(Duration::from_millis(2));
        seen.touch();
        let touched = seen.get();
        assert!(touched >= created + Duration::from_millis(2), "{touched:?} vs {created:?}");
        // A mark taken earlier but stored later does not move it back.
        seen.micros.fetch_max(1, Ordering::Relaxed);
        assert_eq!(seen.get(), touched);
    }
}
