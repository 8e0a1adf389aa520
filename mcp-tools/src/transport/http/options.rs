//! [`HttpOptions`]: the endpoint's path, the hosts and origins it accepts, sessions or
//! stateless, SSE answers, resumable streams, and limits.

use std::time::Duration;

/// Options of the HTTP transport. The defaults are safe for a local server: loopback hosts
/// only, sessions on, a 4 MiB body limit.
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
    pub(super) max_sessions: usize,
    pub(super) max_sessions_per_caller: usize,
    pub(super) stateless: bool,
    pub(super) keep_alive: Option<Duration>,
    pub(super) always_sse: bool,
    pub(super) resumable: Option<Duration>,
    pub(super) max_connections: usize,
    pub(super) header_read_timeout: Duration,
    pub(super) body_read_timeout: Duration,
    #[cfg(feature = "auth")]
    pub(super) authorization: Option<std::sync::Arc<crate::auth::Authorization>>,
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
            max_sessions: 1024,
            max_sessions_per_caller: 64,
            stateless: false,
            keep_alive: Some(Duration::from_secs(15)),
            always_sse: false,
            resumable: None,
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            #[cfg(feature = "auth")]
            authorization: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: endpoint `/mcp`, loopback hosts, sessions on.
    pub fn new() -> Self {
        Self::default()
    }
    /// The endpoint's path (default `/mcp`; a missing leading `/` is added). Letters, digits,
    /// `-._~` and `/`-separated segments; [`Server::http_router`](crate::Server::http_router)
    /// panics on anything else (a route pattern such as `/{id}`, a space).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') { path } else { format!("/{path}") };
        self
    }
    /// Also accepts requests whose `Host` names this host (any port; a port given here is
    /// ignored).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        let host = host.into();
        self.allowed_hosts.push(host_of(&host).unwrap_or(host.to_ascii_lowercase()));
        self
    }
    /// Accepts any `Host` header: only behind a proxy that checks it. `Origin` is still checked.
    pub fn allow_any_host(mut self) -> Self {
        self.any_host = true;
        self
    }
    /// Also accepts browser requests from this origin (scheme, host and port, e.g.
    /// `https://app.example.com`; a trailing `/` is ignored); its pages get CORS answers
    /// (preflights, `Access-Control-Allow-Origin`, the session header exposed), so a web host on
    /// another origin can call the endpoint. Pages of loopback origins (`http://localhost:*`,
    /// `http://127.0.0.1:*`, …) are accepted without this, for local development.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        let origin = origin.into();
        match normalized_origin(&origin) {
            Some(normalized) => self.allowed_origins.push(normalized),
            None => tracing::warn!(%origin, "allow_origin: not an origin (scheme://host[:port]); ignored"),
        }
        self
    }
    /// The largest request body, in bytes (default: the server's message limit, 4 MiB);
    /// larger ones get 413.
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body_bytes = Some(bytes);
        self
    }
    /// How many sessions the server keeps at most (default 1024); when a new one would be one
    /// too many, its `initialize` is refused (503, `Retry-After`): no caller's session is ever
    /// ended to make room for another caller's.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }
    /// How many sessions one caller keeps at most (default 64): a verified identity, or without
    /// authorization a network address (behind a proxy, every client shares the proxy's). A
    /// caller's new session beyond these ends that caller's own least recently used one.
    pub fn max_sessions_per_caller(mut self, sessions: usize) -> Self {
        self.max_sessions_per_caller = sessions.max(1);
        self
    }
    /// How long an unused session is kept (default 30 minutes; a session running a request or
    /// holding its stream open is in use).
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
    /// How many connections [`Server::serve_http`](crate::Server::serve_http) serves at once
    /// (default 1024); more wait in the listener's backlog until one closes.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }
    /// How long a client may take to send a request's headers, and how long an idle
    /// keep-alive connection is kept (default 10 s): slow-header ("slowloris") clients are
    /// dropped. Applies to [`Server::serve_http`](crate::Server::serve_http); a server you run
    /// yourself around [`Server::http_router`](crate::Server::http_router) sets its own.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }
    /// How long a client may take to send a request's body (default 30 s); a slower one gets
    /// 408.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }
    /// Requires an OAuth access token on every request (feature `auth`): see
    /// [`Authorization`](crate::auth::Authorization). The endpoint also serves the resource's
    /// metadata at `/.well-known/oauth-protected-resource…`.
    #[cfg(feature = "auth")]
    pub fn authorization(mut self, authorization: crate::auth::Authorization) -> Self {
        self.authorization = Some(std::sync::Arc::new(authorization));
        self
    }
    /// How often an idle SSE stream gets a keep-alive comment (default 15 s; `None`: never).
    pub fn keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.keep_alive = interval;
        self
    }

    /// The endpoint's path.
    pub(crate) fn endpoint_path(&self) -> &str {
        &self.path
    }

    /// Whether requests need an access token.
    pub(crate) fn is_protected(&self) -> bool {
        #[cfg(feature = "auth")]
        return self.authorization.is_some();
        #[cfg(not(feature = "auth"))]
        false
    }

    /// Whether the endpoint's path is a plain path (no route pattern, nothing to escape).
    pub(crate) fn check_path(&self) -> Result<(), String> {
        let path = &self.path;
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '/');
        if let Some(bad) = path.chars().find(|c| !plain(*c)) {
            return Err(format!(
                "{bad:?} cannot appear in the endpoint's path: use letters, digits, `-._~` and `/`"
            ));
        }
        if path.contains("//") {
            return Err("the endpoint's path has an empty segment (`//`)".into());
        }
        Ok(())
    }

    /// Whether a request naming this authority (its `Host`, or HTTP/2's `:authority`) is
    /// accepted.
    pub(super) fn host_allowed(&self, authority: &str) -> bool {
        // Every request is checked: a plain `host[:port]` naming an allowed host is recognised
        // without parsing or allocating; anything else is parsed.
        let named = plain_host(authority)
            .is_some_and(|host| self.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host)));
        named || host_of(authority).is_some_and(|host| self.allowed_hosts.contains(&host))
    }

    /// Whether a browser page of this origin is accepted: one allowed by name (scheme, host
    /// and port), or one on a loopback host.
    pub(super) fn origin_allowed(&self, origin: &str) -> bool {
        let Some(origin) = normalized_origin(origin) else { return false };
        if self.allowed_origins.contains(&origin) {
            return true;
        }
        let uri: http::Uri = origin.parse().expect("normalized origins parse");
        uri.host().is_some_and(|h| LOOPBACK.contains(&h.to_ascii_lowercase().as_str()))
    }
}

/// The loopback host names a local server answers to.
const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// The host of an authority (`Host` header value), lowercase, without its port.
fn host_of(authority: &str) -> Option<String> {
    let authority: http::uri::Authority = authority.trim().parse().ok()?;
    Some(authority.host().to_ascii_lowercase())
}

/// The host of an authority that is plainly `host[:port]`: a name of letters, digits and `-._~`,
/// or a bracketed IPv6 address, and a port of digits. `None` for anything else (which
/// [`host_of`] parses), so what this accepts is a subset of what that does.
fn plain_host(authority: &str) -> Option<&str> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, Some(port)),
        _ => (authority, None),
    };
    if port.is_some_and(|p| p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let plain = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(ip) => !ip.is_empty() && ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.'),
        None => !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)),
    };
    plain.then_some(host)
}

/// An origin as `scheme://host[:port]`, lowercase, the scheme's default port left out; `None`
/// when it is not one (`null`, a path, no scheme).
fn normalized_origin(origin: &str) -> Option<String> {
    let uri: http::Uri = origin.trim().trim_end_matches('/').parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let host = uri.host()?.to_ascii_lowercase();
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/" && !p.as_str().is_empty()) {
        return None;
    }
    let default = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    Some(match uri.port_u16().filter(|p| Some(*p) != default) {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_without_their_port_and_origins_exactly() {
        let options =
            HttpOptions::new().allow_host("MCP.example.com:443").allow_origin("https://App.example.com/");
        assert!(options.host_allowed("mcp.example.com"));
        assert!(options.host_allowed("mcp.example.com:8443"));
        assert!(options.host_allowed("[::1]:9000"));
        assert!(!options.host_allowed("evil.example.com"));
        assert!(!options.host_allowed("mcp.example.com.evil.net"));
        assert!(options.origin_allowed("https://app.example.com"));
        assert!(options.origin_allowed("https://app.example.com:443"));
        assert!(!options.origin_allowed("http://app.example.com"), "scheme counts");
        assert!(!options.origin_allowed("https://app.example.com:8443"), "port counts");
        assert!(
            !options.origin_allowed("https://mcp.example.com"),
            "an allowed host is not an allowed origin"
        );
        assert!(options.origin_allowed("http://localhost:5173"));
        assert!(options.origin_allowed("http://127.0.0.1"));
        assert!(!options.origin_allowed("null"));
    }

    #[test]
    fn the_quick_host_check_accepts_only_what_parsing_accepts() {
        let options = HttpOptions::new();
        let parsed = |authority: &str| host_of(authority).is_some_and(|h| options.allowed_hosts.contains(&h));
        let cases = [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1:65535",
            "[::1]",
            "[::1]:9000",
            " localhost:80 ",
            "user@localhost",
            "localhost:",
            "localhost:http",
            "localhost:123456",
            "::1",
            "[::1]x",
            "local host",
            "localhost.evil.net",
            "evil.net:80",
            "",
        ];
        for authority in cases {
            if let Some(host) = plain_host(authority) {
                assert_eq!(host_of(authority), Some(host.to_ascii_lowercase()), "{authority:?}");
            }
            assert_eq!(options.host_allowed(authority), parsed(authority), "{authority:?}");
        }
        assert_eq!(plain_host("LocalHost:8080"), Some("LocalHost"), "the quick path is taken");
        assert_eq!(plain_host("[::1]:9000"), Some("[::1]"));
        assert!(options.host_allowed("LocalHost:8080") && !options.host_allowed("localhost.evil.net"));
    }
}
