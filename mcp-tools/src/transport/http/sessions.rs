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
use super::sse::{Hub, hub_events, sse_event, sse_response, stored_events};
use super::wire::{SESSION_HEADER, VERSION_HEADER, accepts, plain, rpc_error_response};
use crate::context::auth::AuthInfo;
use crate::dispatch::events::ServerEvent;
use crate::dispatch::session::Session;
use crate::dispatch::session_store::{SessionStore, SessionStoreError};
use crate::protocol::{Era, INTERNAL_ERROR, INVALID_REQUEST, SUPPORTED_PROTOCOL_VERSIONS};
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
    /// When this instance last renewed its record in the shared store, if there is one.
    pub renewed: LastSeen,
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

    /// The session named `id`, marked as used now (and its shared record renewed, at most once
    /// a quarter of the idle timeout).
    pub fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.sessions.read().expect("sessions lock").get(id).cloned()?;
        session.last_seen.touch();
        let idle = self.options.session_idle_timeout;
        if let Some(store) = self.store()
            && session.renewed.get().elapsed() > idle / 4
        {
            session.renewed.touch();
            let (store, id) = (store.clone(), id.to_owned());
            tokio::spawn(async move {
                if let Err(e) = store.touch(&id, idle).await {
                    tracing::warn!(error = %e, "could not renew a shared session");
                }
            });
        }
        Some(session)
    }

    /// Whether the shared session `id`, of which this instance holds a copy, is still kept in
    /// the store (one round trip, which also renews it): a DELETE through another instance ends
    /// it at once for every instance, not only once the news of it arrives. An ended one is
    /// dropped here. A store that fails is not taken for an end (logged; the copy serves).
    pub async fn still_shared(&self, id: &str) -> bool {
        let Some(store) = self.store() else { return true };
        match store.touch(id, self.options.session_idle_timeout).await {
            Ok(true) => true,
            Ok(false) => {
                if let Some(ended) = self.sessions.write().expect("sessions lock").remove(id) {
                    tracing::debug!("a session ended through another instance");
                    ended.session.close();
                }
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not check a shared session in its store");
                true
            }
        }
    }

    /// The hub of a new session's resumable streams (numbered at random when sessions are
    /// shared).
    pub fn new_hub(&self) -> Hub {
        let max_bytes = self.server.shared.limits.max_queued_bytes;
        if self.store().is_some() { Hub::shared(max_bytes) } else { Hub::new(max_bytes) }
    }

    /// Where sessions are shared with the other instances of the service, if they are.
    pub fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        if self.sessionless() {
            return None;
        }
        self.server.shared.sessions.get()
    }

    /// Saves a new session's record (once its `initialize` succeeded), when sessions are shared.
    pub async fn share(&self, id: &str, http_session: &HttpSession) -> Result<(), SessionStoreError> {
        let Some(store) = self.store() else { return Ok(()) };
        http_session.session.share_as(id);
        let record = http_session.session.record(http_session.owner.clone(), http_session.caller.clone());
        let Some(record) = record else { return Ok(()) };
        store.save(id, &record, self.options.session_idle_timeout).await
    }

    /// Saves what the client changed of a shared session (its log level, its subscriptions)
    /// and tells the other instances, whose copies read it again: before the change is answered.
    pub async fn save_changed(&self, id: &str, http_session: &HttpSession) {
        match self.share(id, http_session).await {
            Ok(()) => self.server.shared.events.tell_others(&ServerEvent::SessionChanged(id.to_owned())),
            Err(e) => tracing::error!(error = %e, "could not save a shared session's change"),
        }
    }

    /// Follows what the other instances say of the shared sessions this one holds copies of:
    /// a changed one is read again, an ended one ends here too, and an answer its client sent
    /// to another instance goes to the call here that asked for it.
    fn follow_shared(self: &Arc<Self>) {
        if self.store().is_none() {
            return;
        }
        let mut events = self.server.shared.events.subscribe();
        let state = Arc::downgrade(self);
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = shutdown.cancelled() => return,
                    event = events.recv() => event,
                };
                let Some(state) = state.upgrade() else { return };
                match event {
                    Ok(ServerEvent::SessionEnded(id)) => {
                        let ended = state.sessions.write().expect("sessions lock").remove(&id);
                        if let Some(ended) = ended {
                            tracing::debug!("a session was ended through another instance");
                            ended.session.close();
                        }
                    }
                    Ok(ServerEvent::SessionChanged(id)) => {
                        let Some(copy) = state.sessions.read().expect("sessions lock").get(&id).cloned()
                        else {
                            continue;
                        };
                        let Some(store) = state.store() else { return };
                        match store.load(&id, state.options.session_idle_timeout).await {
                            Ok(Some(record)) => copy.session.apply(&record),
                            Ok(None) => {}
                            Err(e) => tracing::warn!(error = %e, "could not read a shared session again"),
                        }
                    }
                    Ok(ServerEvent::SessionAnswer(id, response)) => {
                        let copy = state.sessions.read().expect("sessions lock").get(&id).cloned();
                        if let Some(copy) = copy {
                            copy.session.take_passed_answer(&response);
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "missed changes of shared sessions");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Starts, once, the task that ends idle sessions (it stops with the endpoint). Needs a Tokio
    /// runtime: called when the router is built inside one, else on the first request.
    pub fn start_sweeper(self: &Arc<Self>) {
        self.sweeping.call_once(|| {
            self.follow_shared();
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

    /// Ends the sessions unused for longer than the idle timeout (a shared session's copy only:
    /// its record expires by itself when unused everywhere).
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

/// The session a request names, as [`named_session`], and, when sessions are shared and this
/// instance holds no copy of it, made from its record in the store (then held here too).
pub(super) async fn shared_session(
    state: &HttpState,
    headers: &HeaderMap,
    extensions: &http::Extensions,
) -> Result<(String, Arc<HttpSession>), Response> {
    let local = named_session(state, headers, extensions);
    if let Ok((id, _)) = &local
        && !state.still_shared(id).await
    {
        return Err(rpc_error_response(StatusCode::NOT_FOUND, None, -32001, "Session not found"));
    }
    let (Err(not_here), Some(store), Some(id)) = (&local, state.store(), session_id_of(headers)) else {
        return local;
    };
    if not_here.status() != StatusCode::NOT_FOUND {
        return local;
    }
    let record = match store.load(&id, state.options.session_idle_timeout).await {
        Ok(Some(record)) => record,
        Ok(None) => return local,
        Err(e) => {
            tracing::error!(error = %e, "the session store failed");
            let message = format!("Service Unavailable: the session store failed: {e}");
            return Err(rpc_error_response(StatusCode::SERVICE_UNAVAILABLE, None, INTERNAL_ERROR, message));
        }
    };
    if record.owner != principal(extensions) {
        tracing::warn!(caller = ?principal(extensions), "a request named another caller's session");
        return local;
    }
    // Another request may have made the copy meanwhile: that one is used.
    if let Some(copy) = state.session(&id) {
        return Ok((id, copy));
    }
    let session = Session::restore(state.server.shared.clone(), &record);
    session.share_as(&id);
    let copy = Arc::new(HttpSession {
        session: session.clone(),
        last_seen: LastSeen::now(),
        hub: state.new_hub(),
        owner: record.owner,
        caller: record.caller,
        renewed: LastSeen::now(),
    });
    state.insert(id.clone(), copy.clone())?;
    session.forward_events();
    tracing::debug!("a session created through another instance is served here too");
    Ok((id, copy))
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

/// DELETE: the client ends its session (on every instance, when sessions are shared).
pub(super) async fn delete(state: Arc<HttpState>, request: Request) -> Response {
    let headers = request.headers();
    if state.sessionless() {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let (id, _) = match shared_session(&state, headers, request.extensions()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let ended = state.sessions.write().expect("sessions lock").remove(&id);
    if let Some(s) = ended {
        s.session.close();
    }
    if let Some(store) = state.store() {
        if let Err(e) = store.remove(&id).await {
            tracing::error!(error = %e, "the session store failed to end a session");
            let message = format!("Service Unavailable: the session store failed: {e}");
            return rpc_error_response(StatusCode::SERVICE_UNAVAILABLE, None, INTERNAL_ERROR, message);
        }
        state.server.shared.events.tell_others(&ServerEvent::SessionEnded(id));
    }
    (StatusCode::OK, Body::empty()).into_response()
}

/// GET: the stream of messages unrelated to any request (list changes, resource updates).
pub(super) async fn get(state: Arc<HttpState>, request: Request) -> Response {
    if state.sessionless() {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if !accepts(request.headers(), "text/event-stream") {
        return plain(StatusCode::NOT_ACCEPTABLE, "Not Acceptable: the client must accept text/event-stream");
    }
    let (session_id, http_session) =
        match shared_session(&state, request.headers(), request.extensions()).await {
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
    // A stream of a shared session that another instance ran: replayed from the store, then
    // followed there until it ends.
    if let (Some((stream_id, after)), Some(store)) = (last_event, state.store()) {
        match store.read_events(&session_id, stream_id, after).await {
            Ok(Some(first)) => {
                let (store, shutdown) = (store.clone(), state.shutdown.clone());
                let stream = stored_events(store, session_id, (stream_id, after), first, shutdown);
                return sse_response(stream, state.options.keep_alive);
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(error = %e, "the session store failed to replay a resumed stream");
                let message = format!("Service Unavailable: the session store failed: {e}");
                return rpc_error_response(StatusCode::SERVICE_UNAVAILABLE, None, INTERNAL_ERROR, message);
            }
        }
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
