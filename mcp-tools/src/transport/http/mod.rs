//! The Streamable HTTP transport, both revisions on one endpoint: POST (client messages:
//! [`post`]; a 2026-07-28 request is served alone, [`stateless`]), and, for 2025-11-25 clients,
//! GET (the server's stream) and DELETE (end a session: [`sessions`]) with `Mcp-Session-Id`
//! sessions; JSON or SSE answers ([`sse`]), Host/Origin checks and a body limit
//! ([`HttpOptions`]). Built on axum; mount it in your own `Router` with
//! [`Server::http_router`] or run it with [`Server::serve_http`].

pub(crate) mod options;
mod post;
mod sessions;
mod sse;
mod stateless;
mod wire;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

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
    pub fn http_router(&self, options: HttpOptions) -> Router {
        self.http_router_with_shutdown(options, CancellationToken::new())
    }

    fn http_router_with_shutdown(&self, options: HttpOptions, shutdown: CancellationToken) -> Router {
        let max_body_bytes = options.max_body_bytes.unwrap_or(self.shared.max_message_bytes);
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
        self.serve_http_on(listener, options, shutdown_signal()).await
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
        let grace = self.shared.shutdown_timeout;
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
    if *request.method() != Method::POST
        && let Some(response) = sessions::unsupported_version(request.headers())
    {
        return response;
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
        Method::POST => post::post(state, request).await,
        Method::GET => sessions::get(state, request),
        Method::DELETE => sessions::delete(state, request.headers()),
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
