//! [`HttpOptions`]: the endpoint's path, the hosts and origins it accepts, sessions or
//! stateless, SSE answers, resumable streams, and limits.

use std::time::Duration;

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
    pub(super) path: String,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) allowed_origins: Vec<String>,
    pub(super) any_host: bool,
    pub(super) max_body_bytes: Option<usize>,
    pub(super) session_idle_timeout: Duration,
    pub(super) stateless: bool,
    pub(super) keep_alive: Option<Duration>,
    pub(super) always_sse: bool,
    pub(super) resumable: Option<Duration>,
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

    pub(super) fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let name = strip_port(&host);
        self.allowed_hosts.iter().any(|h| h == name)
    }

    pub(super) fn origin_allowed(&self, origin: &str) -> bool {
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
