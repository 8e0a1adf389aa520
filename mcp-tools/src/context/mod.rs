//! What a running handler holds: the per-call [`Context`] (progress, logging, cancellation,
//! request and client facts, the [client link](link)), typed shared state ([`State`]) and the
//! facts of an HTTP request ([`HttpParts`]).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub(crate) mod auth;
pub(crate) mod link;
pub(crate) mod peer;

use auth::{Auth, AuthInfo};

use crate::protocol::extensions::declared;
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::messages::{LogLevel, ProgressToken};
use crate::protocol::{Era, Implementation, RequestId};
use link::ClientLink;
use peer::{CloseStream, Outbound, Peer};

/// Typed values shared by every call, registered with
/// [`ServerBuilder::state`](crate::ServerBuilder::state).
#[derive(Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values.get(&TypeId::of::<T>()).cloned().map(|v| v.downcast::<T>().expect("keyed by TypeId"))
    }
    pub fn contains(&self, id: TypeId) -> bool {
        self.values.contains_key(&id)
    }
}

/// The facts of one HTTP request, for tools served over Streamable HTTP.
///
/// Credentials are kept out of handlers' reach and out of logs: when the endpoint verifies
/// access tokens (`HttpOptions::authorization`), the `Authorization` header is removed once the
/// token is verified (the identity it carries is [`auth`](Self::auth)), and `Debug` never
/// prints the values of the `Authorization`, `Proxy-Authorization` and `Cookie` headers.
#[non_exhaustive]
pub struct HttpParts {
    /// The request's headers (e.g. a tenant or tracing header), without the `Authorization`
    /// header when the endpoint verified a token from it.
    pub headers: http::HeaderMap,
    /// The TCP peer's address, when the server knows it.
    pub peer_addr: Option<std::net::SocketAddr>,
    /// The MCP session id (`Mcp-Session-Id`), absent in stateless mode.
    pub session_id: Option<String>,
    /// The caller's verified identity, when the endpoint requires authorization.
    pub auth: Option<Arc<AuthInfo>>,
}

impl fmt::Debug for HttpParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// A header value `Debug` must not show: a handler's debug log is no place for secrets.
        struct Redacted;
        impl fmt::Debug for Redacted {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("<redacted>")
            }
        }
        struct Headers<'a>(&'a http::HeaderMap);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let secret = |name: &http::HeaderName| {
                    [http::header::AUTHORIZATION, http::header::PROXY_AUTHORIZATION, http::header::COOKIE]
                        .contains(name)
                };
                let mut map = f.debug_map();
                for (name, value) in self.0 {
                    let value: &dyn fmt::Debug = if secret(name) { &Redacted } else { value };
                    map.entry(name, value);
                }
                map.finish()
            }
        }
        f.debug_struct("HttpParts")
            .field("headers", &Headers(&self.headers))
            .field("peer_addr", &self.peer_addr)
            .field("session_id", &self.session_id)
            .field("auth", &self.auth)
            .finish()
    }
}

/// Everything a [`Context`] is made of (built by the session).
pub(crate) struct CallParts {
    pub request_id: RequestId,
    pub subject: Arc<str>,
    pub progress_token: Option<ProgressToken>,
    pub peer: Arc<Peer>,
    pub state: Arc<StateMap>,
    pub cancel: CancellationToken,
    /// Where this request's answer, and everything related to it, goes.
    pub reply: Outbound,
    /// How this call asks the client something (sampling, elicitation, roots).
    pub client: Arc<dyn ClientLink>,
    pub http: Option<Arc<HttpParts>>,
    pub close_stream: Option<CloseStream>,
    /// The request's `_meta`, as sent.
    pub meta: Option<Box<serde_json::value::RawValue>>,
    /// The connection the request came on, when it is one (stdio, in process, a 2025-11-25
    /// HTTP session).
    pub connection: Option<u64>,
    /// Who calls ([`Context::caller_id`]), worked out when first asked for.
    pub caller_read: std::sync::OnceLock<String>,
    /// That `_meta`, read when first asked for.
    pub meta_read: std::sync::OnceLock<Map<String, Value>>,
}

/// What a tool handler knows about its call. Add a parameter of this type to a `#[tool]`
/// function (it is not part of the input schema) or use the one given to a runtime tool.
///
/// ```
/// use mcp_tools::{tool, Context, LogLevel, ToolError};
///
/// /// Count to `n`, reporting progress.
/// #[tool]
/// async fn count(n: u32, ctx: Context) -> Result<u32, ToolError> {
///     for i in 0..n {
///         if ctx.is_cancelled() {
///             return Err(ToolError::new("cancelled"));
///         }
///         ctx.report_progress(i as f64, Some(n as f64), None);
///     }
///     ctx.log(LogLevel::Info, format!("counted to {n}"));
///     Ok(n)
/// }
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<CallParts>,
    /// The name the client's answers to this context's questions are keyed by (2026-07-28).
    input_key: Option<Arc<str>>,
}

impl Context {
    pub(crate) fn new(parts: CallParts) -> Self {
        Context { inner: Arc::new(parts), input_key: None }
    }

    pub(crate) fn parts(&self) -> &CallParts {
        &self.inner
    }

    pub(crate) fn input_key_name(&self) -> Option<&str> {
        self.input_key.as_deref()
    }

    /// This context, naming what it asks the client `key`: in 2026-07-28 a question to the
    /// client (an elicitation, a sampling request, a roots request) travels as an entry of the
    /// `input_required` result's `inputRequests`, and the client answers under the same key. By
    /// default the key is made from the kind of question and its position in the call
    /// (`elicitation-1`); name it when a client or a test expects a particular key. Ignored in
    /// 2025-11-25 sessions.
    ///
    /// ```
    /// use mcp_tools::{tool, Context, Elicitation, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name { name: String }
    ///
    /// /// Greet the user by name.
    /// #[tool]
    /// async fn greet(ctx: Context) -> Result<String, ToolError> {
    ///     match ctx.input_key("user_name").elicit::<Name>("What is your name?").await? {
    ///         Elicitation::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
    ///         _ => Ok("Hello, stranger!".into()),
    ///     }
    /// }
    /// ```
    pub fn input_key(&self, key: impl Into<String>) -> Context {
        Context { inner: self.inner.clone(), input_key: Some(key.into().into()) }
    }

    /// The JSON-RPC id of the `tools/call` request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The request's `_meta`: W3C trace context (`traceparent`, `tracestate`), a progress
    /// token, a 2026-07-28 request's envelope (`io.modelcontextprotocol/…`), whatever the client
    /// sent there. Empty when the request carried none.
    pub fn meta(&self) -> &Map<String, Value> {
        self.inner.meta_read.get_or_init(|| {
            self.inner
                .meta
                .as_deref()
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default()
        })
    }

    /// The entries of the request's `_meta` whose keys `keep` takes (what [`meta`](Self::meta)
    /// holds, filtered), read from the request's text when `_meta` has not been read whole: the
    /// entries left out are skipped, not read into values (a gateway forwards a few keys of a
    /// 2026-07-28 request's `_meta`, whose envelope it leaves out).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn meta_where(&self, keep: impl Fn(&str) -> bool) -> Map<String, Value> {
        /// Reads a JSON object into the entries whose keys a filter takes, skipping the others.
        struct KeptEntries<F>(F);

        /// An object's key, borrowed from the text when it has no escapes.
        #[derive(serde::Deserialize)]
        struct Key<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

        impl<'de, F: Fn(&str) -> bool> serde::de::DeserializeSeed<'de> for KeptEntries<F> {
            type Value = Map<String, Value>;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
        }

        impl<'de, F: Fn(&str) -> bool> serde::de::Visitor<'de> for KeptEntries<F> {
            type Value = Map<String, Value>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut entries: A,
            ) -> Result<Self::Value, A::Error> {
                let mut kept = Map::new();
                while let Some(Key(key)) = entries.next_key::<Key<'de>>()? {
                    if (self.0)(&key) {
                        kept.insert(key.into_owned(), entries.next_value::<Value>()?);
                    } else {
                        entries.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(kept)
            }
        }

        if let Some(read) = self.inner.meta_read.get() {
            return read.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
        }
        let Some(raw) = self.inner.meta.as_deref() else { return Map::new() };
        let mut read = serde_json::Deserializer::from_str(raw.get());
        serde::de::DeserializeSeed::deserialize(KeptEntries(keep), &mut read).unwrap_or_default()
    }

    /// What is being served: the tool's name for `tools/call` (the method name for other
    /// requests, e.g. `resources/read`).
    pub fn tool_name(&self) -> &str {
        &self.inner.subject
    }

    /// The HTTP request that carried this call (headers, peer address, session id), when the
    /// server runs over Streamable HTTP; `None` over stdio.
    pub fn http(&self) -> Option<&HttpParts> {
        self.inner.http.as_deref()
    }

    /// The caller's verified identity: `Some` over HTTP with authorization configured (see
    /// `HttpOptions::authorization`), `None` over stdio or HTTP without it.
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.inner.http.as_deref().and_then(|h| h.auth.as_deref())
    }

    pub(crate) fn auth_arc(&self) -> Option<Arc<AuthInfo>> {
        self.inner.http.as_deref().and_then(|h| h.auth.clone())
    }

    /// Who is calling, as a key for rate limits, caches and logs: with authorization the
    /// token's holder (`sub:…`, else `client:…`); else the connection (`connection:N`: a stdio
    /// or in-process client, a 2025-11-25 HTTP session); else the network address of an HTTP
    /// client (`address:…`); else `anonymous`.
    pub fn caller_id(&self) -> &str {
        self.inner.caller_read.get_or_init(|| {
            let http = self.inner.http.as_deref();
            let address = http.and_then(|h| h.peer_addr).map(|a| a.ip());
            auth::Caller::of(self.auth(), self.inner.connection, address).key()
        })
    }

    /// The client's `clientInfo` from `initialize`.
    pub fn client_info(&self) -> &Implementation {
        &self.inner.peer.client_info
    }

    /// The client's declared capabilities from `initialize` (e.g. `sampling`, `elicitation`).
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.inner.peer.client_capabilities
    }

    /// The settings the client declared for the protocol extension `id` (`{}` when it declared
    /// it without settings), or `None` when it did not declare it. Whether the host renders MCP
    /// Apps views, say:
    ///
    /// ```
    /// # fn f(ctx: &mcp_tools::Context) -> bool {
    /// use mcp_tools::extensions::UI;
    /// let views = ctx.client_extension(UI).and_then(|ui| ui["mimeTypes"].as_array());
    /// views.is_some_and(|types| types.iter().any(|t| t == mcp_tools::APP_MIME_TYPE))
    /// # }
    /// ```
    pub fn client_extension(&self, id: &str) -> Option<&Value> {
        declared(&self.inner.peer.client_capabilities, id)
    }

    /// The protocol revision of this call: negotiated by `initialize`, or carried by the request.
    pub fn protocol_version(&self) -> &str {
        &self.inner.peer.protocol_version
    }

    /// The era of this call's protocol revision: a 2025-11-25 session or a stateless 2026-07-28
    /// request. Tools rarely need it: progress, logging and requests to the client work in both.
    pub fn era(&self) -> Era {
        self.inner.peer.era
    }

    /// Sends `notifications/progress` for this call. Does nothing when the request carried no
    /// progress token (the client did not ask for progress).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.inner.progress_token else { return };
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.inner.reply.notify(encode_notification("notifications/progress", &params));
    }

    /// Whether progress reports reach anyone (the request carried a progress token).
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// Sends a `notifications/message` log entry to the client, if `level` is at or above the
    /// level the client chose: with `logging/setLevel` in a 2025-11-25 session (default: `info`),
    /// with the request's `logLevel` in 2026-07-28 (none: nothing is sent). `data` is any JSON
    /// value; a string is the usual choice.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.log_as(level, None, data);
    }

    /// Like [`log`](Context::log), naming a logger.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl Into<Value>) {
        if self.inner.peer.log_level().is_none_or(|min| level < min) {
            return;
        }
        let mut params = json!({"level": level, "data": data.into()});
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.inner.reply.notify(encode_notification("notifications/message", &params));
    }

    /// Closes the SSE connection this call's messages travel on, without ending the call
    /// (SEP-1699 polling): the client reconnects with `Last-Event-ID` and receives what follows.
    /// Only on servers with [`HttpOptions::resumable`](crate::HttpOptions::resumable); returns
    /// whether a connection was closed (`false` over stdio or a plain JSON answer).
    pub fn close_sse_stream(&self) -> bool {
        self.inner.close_stream.as_ref().is_some_and(|close| close())
    }

    /// Makes this call a task now, if it is to become one at all (a 2026-07-28 client that
    /// supports tasks, a tool that says itself when it becomes one: a mounted tool, when its
    /// upstream's call became a task). The client gets the task's handle once the handler next
    /// waits; a call that cannot become a task goes on as it is.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn become_task(&self) {
        self.inner.client.start_task();
    }

    /// Whether the client cancelled this call (`notifications/cancelled`). The handler's future
    /// is also dropped at its next `.await` after cancellation; this lets blocking loops stop.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this call.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The cancellation token of this call, to hand to spawned work.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// Shared state of type `T`, registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.state.get::<T>()
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.request_id)
            .field("subject", &self.inner.subject)
            .field("client", &self.inner.peer.client_info)
            .finish_non_exhaustive()
    }
}

/// Shared state of type `T` as a `#[tool]` parameter (not part of the input schema).
///
/// The server checks at start-up that every `State<T>` a tool asks for was registered with
/// [`ServerBuilder::state`](crate::ServerBuilder::state).
///
/// ```
/// use mcp_tools::{tool, State};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// #[derive(Default)]
/// struct Hits {
///     count: AtomicU64,
/// }
///
/// /// Count calls.
/// #[tool]
/// async fn hit(hits: State<Hits>) -> u64 {
///     hits.count.fetch_add(1, Ordering::Relaxed) + 1
/// }
/// ```
///
/// It derefs to `T` (`hits.count` above); [`State::arc`] gives the shared `Arc<T>` itself (to
/// keep it in a spawned task). Its field is private, so a tuple-struct state's own `.0` reads
/// through: `State<Counter>` where `struct Counter(AtomicU64)` is `counter.0`.
pub struct State<T>(Arc<T>);

impl<T> State<T> {
    /// The shared value's `Arc`.
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }

    /// The shared value's `Arc`, taking the parameter.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

/// A `#[tool]` parameter filled from the call's context instead of its arguments:
/// [`Context`] and [`State<T>`].
#[diagnostic::on_unimplemented(
    message = "this `{Self}` is not `mcp_tools::Context`, `mcp_tools::State<T>` or `mcp_tools::Auth`",
    label = "#[tool] fills a parameter whose type is named `Context`, `State` or `Auth` from the call's context",
    note = "use `mcp_tools::Context`, `mcp_tools::State<T>` or `mcp_tools::Auth`; to take your type as an argument instead, name it through an alias (e.g. `type UserContext = Context;`)"
)]
pub trait FromContext: Sized {
    /// Extracts the value.
    fn from_context(ctx: &Context) -> Self;
    /// The state type this extractor needs, checked at start-up: its id and name.
    fn required_state() -> Option<(TypeId, &'static str)> {
        None
    }
    /// Whether the extracted value can reach the call's client: ask it for input, sample,
    /// report progress ([`Context`] can; [`State<T>`] and [`Auth`] only read). A tool none of
    /// whose parameters reaches the client cannot ask anything, so its 2026-07-28 calls skip
    /// what answering a question needs (a record of the request for the `requestState`).
    const REACHES_CLIENT: bool = true;
}

impl FromContext for Auth {
    fn from_context(ctx: &Context) -> Self {
        Auth(ctx.auth_arc())
    }
    const REACHES_CLIENT: bool = false;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Self {
        ctx.clone()
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Self {
        State(ctx.state::<T>().unwrap_or_else(|| {
            panic!("state `{}` is not registered (checked at start-up)", std::any::type_name::<T>())
        }))
    }
    fn required_state() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<T>(), std::any::type_name::<T>()))
    }
    const REACHES_CLIENT: bool = false;
}
