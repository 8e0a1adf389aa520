//! The Streamable HTTP transport, both revisions on one endpoint: POST (client messages:
//! [`post`]; a 2026-07-28 request is served alone, [`stateless`]), and, for 2025-11-25 clients,
//! GET (the server's stream) and DELETE (end a session: [`sessions`]) with `Mcp-Session-Id`
//! sessions; JSON or SSE answers ([`sse`]), Host/Origin checks and a body limit
//! ([`HttpOptions`]). Built on axum; mount it in your own `Router` with
//! [`Server::http_router`] or run it with [`Server::serve_http`].

#[cfg(feature = "auth")]
mod auth;
#[cfg(not(feature = "auth"))]
#[path = "no_auth.rs"]
mod auth;
mod cors;
pub(crate) mod options;
mod post;
mod sessions;
mod sse;
mod stateless;
mod wire;

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures_util::FutureExt as _;
use futures_util::future::Either;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::Service as _;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

use super::shutdown_signal;
use crate::server::Server;
use options::HttpOptions;
use sessions::HttpState;
use wire::plain;

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
    ///
    /// # Panics
    ///
    /// If [`HttpOptions::path`] is not a plain path (see there).
    pub fn http_router(&self, options: HttpOptions) -> Router {
        router(self.http_state(options, CancellationToken::new()))
    }

    fn http_state(&self, options: HttpOptions, shutdown: CancellationToken) -> Arc<HttpState> {
        if let Err(problem) = options.check_path() {
            panic!("HttpOptions::path({:?}): {problem}", options.path);
        }
        let max_body_bytes = options.max_body_bytes.unwrap_or(self.shared.limits.max_message_bytes);
        let state = Arc::new(HttpState {
            server: self.clone(),
            options,
            max_body_bytes,
            sessions: RwLock::default(),
            shutdown,
            sweeping: std::sync::Once::new(),
        });
        // In a runtime, idle sessions are swept from now on; otherwise from the first request.
        if tokio::runtime::Handle::try_current().is_ok() {
            state.start_sweeper();
        }
        state
    }
}

/// The endpoint's routes and layers over its state.
fn router(state: Arc<HttpState>) -> Router {
    let path = state.options.path.clone();
    let cors = cors_layer(state.clone());
    let metadata = auth::metadata_routes(Router::new(), &state);
    Router::new()
        .route(&path, axum::routing::any(endpoint))
        .with_state(state)
        .merge(metadata)
        .layer(cors::BrowserCorsLayer(cors))
}

impl Server {
    /// Serves MCP over Streamable HTTP on `addr` until SIGINT or SIGTERM, then shuts down
    /// gracefully: stops accepting, lets running calls finish (bounded by the shutdown timeout)
    /// and closes open streams.
    pub async fn serve_http(&self, addr: SocketAddr, options: HttpOptions) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        tracing::info!("serving MCP over HTTP at http://{}{}", listener.local_addr()?, options.path);
        self.serve_http_on(listener, options, shutdown_signal()).await
    }

    /// Like [`serve_http`](Self::serve_http) on a bound listener, shutting down when `shutdown`
    /// resolves.
    ///
    /// Connections are bounded ([`HttpOptions::max_connections`]; more wait in the backlog),
    /// and so is the time a client may take to send its headers
    /// ([`HttpOptions::header_read_timeout`], also the idle keep-alive time) and its body
    /// ([`HttpOptions::body_read_timeout`]).
    pub async fn serve_http_on(
        &self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        if let Ok(addr) = listener.local_addr()
            && !addr.ip().is_loopback()
            && !options.is_protected()
        {
            tracing::warn!(
                %addr,
                "serving MCP over HTTP on a non-loopback address without authorization: anyone who can \
                 reach it can call every tool. Serve it on 127.0.0.1 behind a proxy that authenticates \
                 clients (see SECURITY.md)"
            );
        }
        let token = CancellationToken::new();
        let connections = Arc::new(Semaphore::new(options.max_connections));
        let header_read_timeout = options.header_read_timeout;
        let state = self.http_state(options, token.clone());
        let app = router(state.clone());
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder.http1().timer(TokioTimer::new()).header_read_timeout(Some(header_read_timeout));
        builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(header_read_timeout));
        let graceful = GracefulShutdown::new();
        tokio::pin!(shutdown);
        loop {
            // A place for the connection first: past the limit, clients wait in the backlog.
            let permit = tokio::select! {
                permit = connections.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
                _ = &mut shutdown => break,
            };
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, then accept again.
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                },
                _ = &mut shutdown => break,
            };
            let (app, state) = (app.clone(), state.clone());
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(ConnectInfo(peer));
                    let request = request.map(axum::body::Body::new);
                    // A client's request to the endpoint goes to it directly; browsers' (CORS),
                    // other paths (metadata) and `OPTIONS` go through the router, which answers
                    // them as it does when mounted. Futures as they are, not awaited in another
                    // (which would be larger).
                    if is_direct(&state, &request) {
                        Either::Left(endpoint(State(state.clone()), request).map(Ok))
                    } else {
                        Either::Right(app.clone().call(request))
                    }
                });
            let connection =
                builder.serve_connection_with_upgrades(TokioIo::new(stream), service).into_owned();
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, %peer, "connection ended with an error");
                }
                drop(permit);
            });
        }
        tracing::info!("shutting down: no new connections; finishing running calls");
        // Let running requests finish, then end the streams that never would.
        let grace = self.shared.shutdown_timeout;
        let stop = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            stop.cancel();
        });
        if tokio::time::timeout(grace * 2, graceful.shutdown()).await.is_err() {
            tracing::warn!("connections still open after the shutdown timeout; closing them");
        }
        Ok(())
    }
}

/// CORS for browser pages of allowed origins: preflights answered, the session header exposed.
fn cors_layer(state: Arc<HttpState>) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin.to_str().is_ok_and(|o| state.options.origin_allowed(o))
        }))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        // The 2026-07-28 transport's `Mcp-Param-*` headers are named by the tools: whatever a
        // page of an allowed origin asks for is allowed.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([HeaderName::from_static("mcp-session-id")])
        .max_age(std::time::Duration::from_secs(600))
}

/// Every request to the endpoint. Not an `async fn` (nor is [`route`]): axum boxes the handler's
/// future for each request, and an `async fn` that awaits another holds its request twice (as
/// its argument and in the future it awaits); this one is the future of `post` itself, or an
/// answer ready at once (the authorization check, when there is one, gets a box of its own).
fn endpoint(
    State(state): State<Arc<HttpState>>,
    request: Request,
) -> impl std::future::Future<Output = Response> + Send {
    state.start_sweeper();
    if let Some(refused) = refused(&state, &request) {
        return Either::Left(std::future::ready(refused));
    }
    if !auth::required(&state) {
        return Either::Right(Either::Left(route(state, request)));
    }
    // With authorization, the caller's token: verified before anything reads the request.
    Either::Right(Either::Right(Box::pin(async move {
        let mut request = request;
        if let Err(response) = auth::authenticate(&state, &mut request).await {
            return response;
        }
        route(state, request).await
    })))
}

/// Whether [`Server::serve_http_on`] gives a request to [`endpoint`] itself, as the router
/// would: one for the endpoint's path, not from a browser (no `Origin`: no CORS) and not a
/// preflight. Saves the router's matching, boxing and layers on every client request.
fn is_direct(state: &HttpState, request: &Request) -> bool {
    request.uri().path() == state.options.path
        && request.method() != Method::OPTIONS
        && !request.headers().contains_key(header::ORIGIN)
}

/// The answer to a request whose `Host` or `Origin` is not allowed, if it is one.
fn refused(state: &HttpState, request: &Request) -> Option<Response> {
    let headers = request.headers();
    // DNS-rebinding protection: the Host (and a browser's Origin) must be allowed.
    if !state.options.any_host {
        // HTTP/1 names the host in `Host`, HTTP/2 in the `:authority` of the URI.
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let host = host.or_else(|| request.uri().authority().map(|a| a.as_str())).unwrap_or_default();
        if !state.options.host_allowed(host) {
            return Some(plain(StatusCode::FORBIDDEN, "Forbidden: this Host is not allowed"));
        }
    }
    // A browser page may call the endpoint only from an allowed origin (the CORS layer
    // answers preflights and adds the headers).
    if let Some(origin) = headers.get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|o| state.options.origin_allowed(o))
    {
        return Some(plain(StatusCode::FORBIDDEN, "Forbidden: this Origin is not allowed"));
    }
    None
}

/// A request by its method: a POST's future, or the answer to the others at once.
fn route(state: Arc<HttpState>, request: Request) -> impl std::future::Future<Output = Response> + Send {
    if *request.method() == Method::POST {
        return Either::Left(post::post(state, request));
    }
    // GET and DELETE come once a session: boxed, they cost POST's future nothing.
    Either::Right(Box::pin(async move {
        match sessions::unsupported_version(request.headers()) {
            Some(response) => response,
            None if *request.method() == Method::GET => sessions::get(state, request).await,
            None if *request.method() == Method::DELETE => sessions::delete(state, request).await,
            None => {
                let mut response =
                    plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: use POST, GET or DELETE");
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
                response
            }
        }
    }) as std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use serde_json::{Value, json};
    use tower::ServiceExt as _;

    use super::*;

    fn post(body: &Value, session: Option<&str>) -> Request {
        let mut request = axum::http::Request::post("/mcp")
            .header(header::HOST, "localhost")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
        }
        request.body(Body::from(body.to_string())).unwrap()
    }

    fn initialize(capabilities: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}})
    }

    #[tokio::test]
    async fn resumable_notifications_and_responses_leave_no_replay_stream() {
        let server = Server::builder().build().unwrap();
        let options = HttpOptions::new().resumable(std::time::Duration::from_millis(100));
        let state = server.http_state(options, CancellationToken::new());
        let app = router(state.clone());
        let response = app.clone().oneshot(post(&initialize(json!({})), None)).await.unwrap();
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        for i in 0..100 {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": i, "progress": 1}});
            let answer = json!({"jsonrpc": "2.0", "id": i, "result": {}});
            let invalid = json!({"jsonrpc": "2.0", "id": i});
            for message in [note, answer, invalid] {
                let _ = app.clone().oneshot(post(&message, Some(&session))).await.unwrap();
            }
        }
        assert_eq!(state.session(&session).unwrap().hub.len(), 0, "no stream was kept");
    }

    #[tokio::test]
    async fn a_failed_initialize_leaves_nothing_running() {
        let server =
            Server::builder().limits(crate::Limits::new().max_capabilities_size(16)).build().unwrap();
        let state = server.http_state(HttpOptions::new(), CancellationToken::new());
        let app = router(state.clone());
        let listening = server.shared.events.receiver_count();
        for _ in 0..50 {
            let failed = initialize(json!({"experimental": {"padding": "more than sixteen bytes"}}));
            let response = app.clone().oneshot(post(&failed, None)).await.unwrap();
            assert!(response.headers().get("mcp-session-id").is_none());
        }
        tokio::task::yield_now().await;
        assert_eq!(server.shared.events.receiver_count(), listening, "no event forwarding was started");
        assert!(state.sessions.read().unwrap().is_empty());
        let response = app.clone().oneshot(post(&initialize(json!({})), None)).await.unwrap();
        assert!(response.headers().get("mcp-session-id").is_some());
        assert_eq!(server.shared.events.receiver_count(), listening + 1, "a session forwards events");
    }
}
