//! The Streamable HTTP transport (MCP 2025-11-25): one endpoint answering POST (client
//! messages), GET (the server's stream) and DELETE (end a session), with `Mcp-Session-Id`
//! sessions, JSON or SSE answers, Host/Origin checks and a body limit. Built on axum; mount it in
//! your own `Router` with [`Server::http_router`](crate::Server::http_router) or run it with
//! [`Server::serve_http`](crate::Server::serve_http).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::{INVALID_REQUEST, PARSE_ERROR, RequestId, RpcError, encode_error};
use crate::session::{Origin, Outbound, Received, Session};
use crate::{HttpParts, SUPPORTED_PROTOCOL_VERSIONS, Server};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// Options of the HTTP transport. The defaults are safe for a local server: loopback hosts
/// only, sessions on, a 16 MiB body limit.
///
/// ```
/// use mcp_tools::HttpOptions;
/// use std::time::Duration;
///
/// // Behind a load balancer: no sessions, the public host name allowed.
/// let options = HttpOptions::new()
///     .stateless(true)
///     .allow_host("mcp.example.com")
///     .allow_origin("https://app.example.com")
///     .max_body_size(4 * 1024 * 1024)
///     .session_idle_timeout(Duration::from_secs(600));
/// ```
#[derive(Clone, Debug)]
pub struct HttpOptions {
    path: String,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    any_host: bool,
    max_body_bytes: Option<usize>,
    session_idle_timeout: Duration,
    stateless: bool,
    keep_alive: Option<Duration>,
    always_sse: bool,
    resumable: Option<Duration>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            any_host: false,
            max_body_bytes: None,
            session_idle_timeout: Duration::from_secs(30 * 60),
            stateless: false,
            keep_alive: Some(Duration::from_secs(15)),
            always_sse: false,
            resumable: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: endpoint `/mcp`, loopback hosts, sessions on.
    pub fn new() -> Self {
        Self::default()
    }
    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
    /// Also accepts requests whose `Host` (and `Origin`) names this host (without port).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }
    /// Accepts any `Host` header: only behind a proxy that checks it. `Origin` is still checked.
    pub fn allow_any_host(mut self) -> Self {
        self.any_host = true;
        self
    }
    /// Also accepts browser requests from this origin (e.g. `https://app.example.com`); its
    /// pages get CORS answers (preflights, `Access-Control-Allow-Origin`, the session header
    /// exposed), so a web host on another origin can call the endpoint.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into().to_ascii_lowercase());
        self
    }
    /// The largest request body, in bytes (default: the server's message limit, 16 MiB);
    /// larger ones get 413.
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body_bytes = Some(bytes);
        self
    }
    /// How long an unused session is kept (default 30 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }
    /// Stateless mode: no sessions; every POST stands alone, so any instance behind a load
    /// balancer can answer it. GET and DELETE answer 405, and tools cannot send requests to the
    /// client (sampling, elicitation, roots).
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }
    /// Answer every request with an SSE stream (as the TypeScript SDK does), not only those
    /// that send something before their result (default: false, a plain JSON body when
    /// possible).
    pub fn always_sse(mut self, always: bool) -> Self {
        self.always_sse = always;
        self
    }
    /// Resumable streams (SEP-1699): every request is answered with an SSE stream whose events
    /// carry ids, opened by a priming event that tells the client to reconnect after `retry`.
    /// When the connection drops (or a tool calls
    /// [`Context::close_sse_stream`](crate::Context::close_sse_stream)), the call goes on; the
    /// client reconnects with a GET carrying `Last-Event-ID` and gets what it missed, then the
    /// rest. Events are kept in memory, per session, a bounded number per stream. Needs sessions.
    pub fn resumable(mut self, retry: Duration) -> Self {
        self.resumable = Some(retry);
        self
    }
    /// How often an idle SSE stream gets a keep-alive comment (default 15 s; `None`: never).
    pub fn keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.keep_alive = interval;
        self
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let name = strip_port(&host);
        self.allowed_hosts.iter().any(|h| h == name)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        if self.allowed_origins.contains(&origin) {
            return true;
        }
        let authority = origin.split_once("://").map_or(origin.as_str(), |(_, rest)| rest);
        let authority = authority.split('/').next().unwrap_or_default();
        self.allowed_hosts.iter().any(|h| h == strip_port(authority))
    }
}

/// `localhost:8080` → `localhost`, `[::1]:80` → `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_once(']').map_or(authority, |(h, _)| &authority[..h.len() + 1]);
    }
    authority.split(':').next().unwrap_or(authority)
}

struct HttpSession {
    session: Arc<Session>,
    last_seen: Mutex<Instant>,
    hub: Hub,
}

/// Events kept per stream for replay.
const EVENTS_PER_STREAM: usize = 1024;
/// Finished streams kept for replay per session.
const FINISHED_STREAMS: usize = 64;

/// The resumable SSE streams of one session: each request's events, numbered and kept for
/// replay, delivered to whichever connection currently listens.
#[derive(Default)]
struct Hub {
    streams: Mutex<HashMap<u64, HubStream>>,
    next: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct HubStream {
    next_seq: u64,
    events: std::collections::VecDeque<(u64, Arc<str>)>,
    listener: Option<mpsc::UnboundedSender<(u64, Arc<str>)>>,
    finished: Option<Instant>,
}

impl Hub {
    /// A new stream, with its first listener.
    fn open(&self) -> (u64, mpsc::UnboundedReceiver<(u64, Arc<str>)>) {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut streams = self.streams.lock().expect("hub lock");
        // Forget the oldest finished streams beyond the bound.
        let mut finished: Vec<(u64, Instant)> =
            streams.iter().filter_map(|(id, s)| s.finished.map(|at| (*id, at))).collect();
        if finished.len() > FINISHED_STREAMS {
            finished.sort_by_key(|(_, at)| *at);
            for (old, _) in &finished[..finished.len() - FINISHED_STREAMS] {
                streams.remove(old);
            }
        }
        streams.insert(id, HubStream { next_seq: 1, listener: Some(tx), ..HubStream::default() });
        (id, rx)
    }

    fn push(&self, id: u64, data: Arc<str>) {
        let mut streams = self.streams.lock().expect("hub lock");
        let Some(stream) = streams.get_mut(&id) else { return };
        let seq = stream.next_seq;
        stream.next_seq += 1;
        if stream.events.len() == EVENTS_PER_STREAM {
            stream.events.pop_front();
        }
        stream.events.push_back((seq, data.clone()));
        if let Some(listener) = &stream.listener
            && listener.send((seq, data)).is_err()
        {
            stream.listener = None;
        }
    }

    /// The stream's request is answered: its listener ends after the last event.
    fn finish(&self, id: u64) {
        if let Some(stream) = self.streams.lock().expect("hub lock").get_mut(&id) {
            stream.finished = Some(Instant::now());
            stream.listener = None;
        }
    }

    /// Ends the current connection of a stream; the events keep being recorded.
    fn disconnect(&self, id: u64) -> bool {
        self.streams.lock().expect("hub lock").get_mut(&id).is_some_and(|s| s.listener.take().is_some())
    }

    /// Events after `after`, and a listener for what follows if the stream is still running.
    #[allow(clippy::type_complexity)]
    fn resume(
        &self,
        id: u64,
        after: u64,
    ) -> Option<(Vec<(u64, Arc<str>)>, Option<mpsc::UnboundedReceiver<(u64, Arc<str>)>>)> {
        let mut streams = self.streams.lock().expect("hub lock");
        let stream = streams.get_mut(&id)?;
        let missed = stream.events.iter().filter(|(seq, _)| *seq > after).cloned().collect();
        let live = stream.finished.is_none().then(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            stream.listener = Some(tx);
            rx
        });
        Some((missed, live))
    }
}

struct HttpState {
    server: Server,
    options: HttpOptions,
    max_body_bytes: usize,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// Fired on shutdown: open SSE streams end so connections can close.
    shutdown: CancellationToken,
}

impl HttpState {
    fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.sessions.lock().expect("sessions lock").get(id).cloned()?;
        *session.last_seen.lock().expect("last-seen lock") = Instant::now();
        Some(session)
    }

    fn expire_idle(&self) {
        let timeout = self.options.session_idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            let stale: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.last_seen.lock().expect("last-seen lock").elapsed() > timeout)
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

impl Server {
    /// The MCP endpoint as an axum [`Router`], to serve alone or merge into your own app (add
    /// routes, middleware, a TLS terminator in front). Call it inside a Tokio runtime: idle
    /// sessions are swept by a task spawned here.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_tools::{HttpOptions, Server};
    ///
    /// let server = Server::builder().build().expect("valid catalog");
    /// let app = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .merge(server.http_router(HttpOptions::new()));
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>()).await
    /// # }
    /// ```
    pub fn http_router(&self, options: HttpOptions) -> Router {
        self.http_router_with_shutdown(options, CancellationToken::new())
    }

    fn http_router_with_shutdown(&self, options: HttpOptions, shutdown: CancellationToken) -> Router {
        let max_body_bytes = options.max_body_bytes.unwrap_or(self.inner.max_message_bytes);
        let state = Arc::new(HttpState {
            server: self.clone(),
            options,
            max_body_bytes,
            sessions: Mutex::new(HashMap::new()),
            shutdown,
        });
        let sweeper = Arc::downgrade(&state);
        let period = (state.options.session_idle_timeout / 4).max(Duration::from_millis(50));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(period).await;
                    let Some(state) = sweeper.upgrade() else { return };
                    state.expire_idle();
                }
            });
        }
        let path = state.options.path.clone();
        Router::new().route(&path, axum::routing::any(endpoint)).with_state(state)
    }

    /// Serves MCP over Streamable HTTP on `addr` until SIGINT or SIGTERM, then shuts down
    /// gracefully: stops accepting, lets running calls finish (bounded by the shutdown timeout)
    /// and closes open streams.
    pub async fn serve_http(&self, addr: SocketAddr, options: HttpOptions) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        tracing::info!("serving MCP over HTTP at http://{}{}", listener.local_addr()?, options.path);
        self.serve_http_on(listener, options, crate::server::shutdown_signal()).await
    }

    /// Like [`serve_http`](Self::serve_http) on a bound listener, shutting down when `shutdown`
    /// resolves.
    pub async fn serve_http_on(
        &self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let token = CancellationToken::new();
        let app = self.http_router_with_shutdown(options, token.clone());
        let grace = self.inner.shutdown_timeout;
        let stop = token.clone();
        let serve = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                shutdown.await;
                tracing::info!("shutting down: no new connections; finishing running calls");
                // Let running requests finish, then end the streams that never would.
                let stop = stop.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(grace).await;
                    stop.cancel();
                });
            });
        serve.await
    }
}

fn rpc_error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i32,
    message: impl Into<String>,
) -> Response {
    let body = encode_error(id, &RpcError::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn plain(status: StatusCode, message: &'static str) -> Response {
    rpc_error_response(status, None, INVALID_REQUEST, message)
}

/// Whether an `Accept` header admits `wanted` (`type/subtype`), wildcards included.
fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let (kind, _) = wanted.split_once('/').unwrap_or((wanted, ""));
    headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |item| {
            let media = item.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            media == wanted || media == "*/*" || media == format!("{kind}/*")
        },
    )
}

async fn endpoint(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let headers = request.headers();
    // DNS-rebinding protection: the Host (and a browser's Origin) must be allowed.
    if !state.options.any_host {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        if !state.options.host_allowed(host) {
            return plain(StatusCode::FORBIDDEN, "Forbidden: this Host is not allowed");
        }
    }
    // A browser page of an allowed origin may call the endpoint (CORS): preflights are
    // answered and every response names the origin and exposes the session header.
    let cors_origin = match headers.get(header::ORIGIN) {
        Some(origin) if origin.to_str().is_ok_and(|o| state.options.origin_allowed(o)) => {
            Some(origin.clone())
        }
        Some(_) => return plain(StatusCode::FORBIDDEN, "Forbidden: this Origin is not allowed"),
        None => None,
    };
    let mut response = route(state, request).await;
    if let Some(origin) = cors_origin {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("mcp-session-id"));
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

async fn route(state: Arc<HttpState>, request: Request) -> Response {
    let headers = request.headers();
    if let Some(version) = headers.get(VERSION_HEADER) {
        let supported = version.to_str().is_ok_and(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(&v));
        if !supported {
            return plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: unsupported MCP-Protocol-Version (supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
            );
        }
    }
    match *request.method() {
        Method::OPTIONS => {
            let mut response = StatusCode::NO_CONTENT.into_response();
            let h = response.headers_mut();
            h.insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
            h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id"),
            );
            h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
            response
        }
        Method::POST => post(state, request).await,
        Method::GET => get(state, request),
        Method::DELETE => delete(state, request.headers()),
        _ => {
            let mut response =
                plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: use POST, GET or DELETE");
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
            response
        }
    }
}

fn session_id_of(headers: &HeaderMap) -> Option<String> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// The session a request names: 400 when it names none, 404 when it is unknown or ended.
#[allow(clippy::result_large_err)] // the error is the response itself, returned at once
fn named_session(state: &HttpState, headers: &HeaderMap) -> Result<(String, Arc<HttpSession>), Response> {
    let Some(id) = session_id_of(headers) else {
        return Err(plain(StatusCode::BAD_REQUEST, "Bad Request: Mcp-Session-Id header is required"));
    };
    match state.session(&id) {
        Some(session) => Ok((id, session)),
        None => Err(rpc_error_response(StatusCode::NOT_FOUND, None, -32001, "Session not found")),
    }
}

#[derive(Deserialize, Default)]
struct Peek {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<RequestId>,
}

async fn post(state: Arc<HttpState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    if !(accepts(headers, "application/json") && accepts(headers, "text/event-stream")) {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept both application/json and text/event-stream",
        );
    }
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    let body: Bytes = match axum::body::to_bytes(body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            return rpc_error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                INVALID_REQUEST,
                format!("Payload Too Large: the body exceeds {} bytes", state.max_body_bytes),
            );
        }
    };
    let peek: Peek = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(_) => match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(serde_json::Value::Array(_)) => {
                return rpc_error_response(
                    StatusCode::BAD_REQUEST,
                    None,
                    INVALID_REQUEST,
                    "JSON-RPC batches are not supported",
                );
            }
            // Valid JSON but not a valid message (a null id, say): the session says what is wrong.
            Ok(_) => Peek::default(),
            Err(_) => {
                return rpc_error_response(
                    StatusCode::BAD_REQUEST,
                    None,
                    PARSE_ERROR,
                    "Parse error: invalid JSON",
                );
            }
        },
    };
    let is_initialize = peek.method.as_deref() == Some("initialize");
    let version = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);

    // Find or make the session.
    let (session, session_id, issued) = if state.options.stateless {
        let session = if is_initialize {
            Session::new(state.server.inner.clone(), None)
        } else {
            Session::new_stateless(state.server.inner.clone(), version.as_deref())
        };
        (session, None, None)
    } else if is_initialize {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let session = Session::new(state.server.inner.clone(), None);
        session.forward_events();
        (session, Some(id.clone()), Some(id))
    } else {
        match named_session(&state, headers) {
            Ok((id, s)) => (s.session.clone(), Some(id), None),
            Err(response) => return response,
        }
    };

    let peer_addr = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    let (reply, mut answers) = Outbound::channel();
    let http = Some(Arc::new(HttpParts {
        headers: parts.headers.clone(),
        peer_addr,
        session_id: session_id.clone(),
    }));
    // Resumable mode: requests of an existing session get a numbered, replayable stream.
    if let (Some(retry), Some(id), false, false) =
        (state.options.resumable, &session_id, is_initialize, state.options.stateless)
        && let Some(http_session) = state.session(id)
    {
        let (stream_id, listener) = http_session.hub.open();
        let hub_session = Arc::downgrade(&http_session);
        let close: crate::session::CloseStream =
            Arc::new(move || hub_session.upgrade().is_some_and(|s| s.hub.disconnect(stream_id)));
        let origin = Origin { reply, http, close: Some(close) };
        match session.handle_message(&body, &origin) {
            Received::Request => {}
            Received::Notification => return StatusCode::ACCEPTED.into_response(),
            Received::Invalid => {
                drop(origin);
                let body = answers.recv().await.unwrap_or_default();
                return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body)
                    .into_response();
            }
        }
        drop(origin);
        let request_id = peek.id;
        let pump_session = http_session.clone();
        let shutdown = state.shutdown.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    m = answers.recv() => m,
                    _ = shutdown.cancelled() => None,
                };
                let Some(message) = message else { break };
                let done = is_answer_to(&message, request_id.as_ref());
                pump_session.hub.push(stream_id, String::from_utf8_lossy(&message).into());
                if done {
                    break;
                }
            }
            pump_session.hub.finish(stream_id);
        });
        // The priming event: an id to resume from, the reconnection delay, and empty data.
        let priming = Bytes::from(format!("id: {stream_id}-0\nretry: {}\ndata: \n\n", retry.as_millis()));
        let events = hub_events(stream_id, Vec::new(), Some(listener), state.shutdown.clone());
        let stream = futures_util::stream::once(async move { priming }).chain(events);
        return sse_response(stream, state.options.keep_alive);
    }
    let origin = Origin { reply, http, close: None };
    let received = session.handle_message(&body, &origin);
    drop(origin);

    let with_session = |mut response: Response| {
        if let Some(id) = &issued
            && let Ok(value) = HeaderValue::from_str(id)
        {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        response
    };

    match received {
        Received::Notification => StatusCode::ACCEPTED.into_response(),
        Received::Invalid => {
            let body = answers.recv().await.unwrap_or_default();
            (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        Received::Request => {
            let request_id = peek.id;
            let first = tokio::select! {
                first = answers.recv() => first,
                _ = state.shutdown.cancelled() => None,
            };
            let Some(first) = first else {
                // Cancelled, or shutting down: nothing to say.
                return StatusCode::ACCEPTED.into_response();
            };
            if is_answer_to(&first, request_id.as_ref()) && (is_initialize || !state.options.always_sse) {
                if let (Some(id), true) = (&issued, session_initialized(&first)) {
                    state.sessions.lock().expect("sessions lock").insert(
                        id.clone(),
                        Arc::new(HttpSession {
                            session: session.clone(),
                            last_seen: Mutex::new(Instant::now()),
                            hub: Hub::default(),
                        }),
                    );
                }
                return with_session(
                    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], first).into_response(),
                );
            }
            // Messages before the answer (progress, logs, requests to the client): stream them.
            let stream = call_stream(first, answers, request_id, state.shutdown.clone());
            with_session(sse_response(stream, state.options.keep_alive))
        }
    }
}

fn session_initialized(answer: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(answer).is_ok_and(|v| v.get("result").is_some())
}

/// Whether `message` is the answer (result or error) to request `id`.
fn is_answer_to(message: &[u8], id: Option<&RequestId>) -> bool {
    let Ok(peek) = serde_json::from_slice::<Peek>(message) else { return false };
    peek.method.is_none() && peek.id.as_ref() == id
}

/// The SSE events of one POSTed request: `first`, then what follows, ending after its answer.
fn call_stream(
    first: Vec<u8>,
    answers: mpsc::UnboundedReceiver<Vec<u8>>,
    request_id: Option<RequestId>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Bytes> {
    let done = is_answer_to(&first, request_id.as_ref());
    futures_util::stream::unfold(
        (Some(first), answers, request_id, done, shutdown),
        |(pending, mut answers, id, done, shutdown)| async move {
            if let Some(message) = pending {
                return Some((sse_event(None, &message), (None, answers, id, done, shutdown)));
            }
            if done {
                return None;
            }
            let message = tokio::select! {
                m = answers.recv() => m?,
                _ = shutdown.cancelled() => return None,
            };
            let done = is_answer_to(&message, id.as_ref());
            Some((sse_event(None, &message), (None, answers, id, done, shutdown)))
        },
    )
}

/// A resumable stream's events: `missed` first, then what `live` delivers, each with its id.
fn hub_events(
    stream_id: u64,
    missed: Vec<(u64, Arc<str>)>,
    live: Option<mpsc::UnboundedReceiver<(u64, Arc<str>)>>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let event =
        move |(seq, data): (u64, Arc<str>)| sse_event(Some(&format!("{stream_id}-{seq}")), data.as_bytes());
    let live = futures_util::stream::unfold((live, shutdown), |(live, shutdown)| async move {
        let mut live = live?;
        let item = tokio::select! {
            item = live.recv() => item?,
            _ = shutdown.cancelled() => return None,
        };
        Some((item, (Some(live), shutdown)))
    });
    futures_util::stream::iter(missed).chain(live).map(event)
}

/// One SSE `message` event (a JSON-RPC message is one line, so one `data:` field).
fn sse_event(id: Option<&str>, message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 48);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A `text/event-stream` response of these events, with a keep-alive comment whenever the
/// stream has been quiet for `keep_alive`.
fn sse_response(
    events: impl Stream<Item = Bytes> + Send + 'static,
    keep_alive: Option<Duration>,
) -> Response {
    let events = events.boxed();
    let body = match keep_alive {
        None => Body::from_stream(events.map(Ok::<_, Infallible>)),
        Some(interval) => Body::from_stream(
            futures_util::stream::unfold(events, move |mut events| async move {
                let item = match tokio::time::timeout(interval, events.next()).await {
                    Ok(Some(event)) => event,
                    Ok(None) => return None,
                    Err(_) => Bytes::from_static(b": keep-alive\n\n"),
                };
                Some((item, events))
            })
            .map(Ok::<_, Infallible>),
        ),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .expect("a valid response")
}

/// GET: the stream of messages unrelated to any request (list changes, resource updates).
fn get(state: Arc<HttpState>, request: Request) -> Response {
    if state.options.stateless {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if !accepts(request.headers(), "text/event-stream") {
        return plain(StatusCode::NOT_ACCEPTABLE, "Not Acceptable: the client must accept text/event-stream");
    }
    let (_, http_session) = match named_session(&state, request.headers()) {
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
    let (out, queue) = Outbound::channel();
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

/// DELETE: the client ends its session.
fn delete(state: Arc<HttpState>, headers: &HeaderMap) -> Response {
    if state.options.stateless {
        let mut response =
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: this server is stateless");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let (id, _) = match named_session(&state, headers) {
        Ok(found) => found,
        Err(response) => return response,
    };
    if let Some(s) = state.sessions.lock().expect("sessions lock").remove(&id) {
        s.session.close();
    }
    (StatusCode::OK, Body::empty()).into_response()
}
