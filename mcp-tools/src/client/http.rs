//! The Streamable HTTP wire of a [`Client`](super::Client) (reqwest): every message is POSTed
//! to the endpoint; a request's answer comes back as a JSON body or an SSE stream carrying, in
//! order, what the server sends before it (progress, logs, and in 2025-11-25 its own requests).
//!
//! 2025-11-25: the `Mcp-Session-Id` the `initialize` answer names travels on every later
//! request, with `MCP-Protocol-Version`; after `notifications/initialized` a GET stream carries
//! the server's messages unrelated to a request; a stream that ends before its request's answer
//! is resumed with GET and `Last-Event-ID` after the server's `retry:` delay; a session the
//! server ended (404) is replaced by a new one (the client initializes again); closing DELETEs
//! the session. 2026-07-28 (a request carrying the envelope, or once the client speaks it): no
//! session; each request names its revision, method, target and mirrored arguments in headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), and a cancelled request's
//! stream is simply closed (which cancels it on the server).
//!
//! Server-sent events are parsed here ([`SseParser`]), after the WHATWG event-stream rules,
//! holding at most the client's message limit of one event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE,
};
use reqwest::{Method, Response, StatusCode};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::auth::Authenticator;
use super::error::ClientError;
use super::wire::header_text;
use super::wire::{Incoming, IncomingTx, Kind, Outgoing, Wire};
use crate::protocol::Era;

static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";

/// How long making a connection may take (a stream, once open, has no time limit: the client's
/// request timeout bounds the wait for an answer).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The reconnection delay when the server gave none (`retry:`), doubled after each failure up
/// to [`MAX_RECONNECT_DELAY`].
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);
/// Reconnections that may fail in a row before a stream is given up.
const MAX_RECONNECT_FAILURES: u32 = 5;
/// How much of an error response's body is read (for its JSON-RPC error, or its text).
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// How long closing waits for the server to end the session (DELETE).
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// A Streamable HTTP connection to one endpoint.
pub(crate) struct Http {
    shared: Arc<Shared>,
}

struct Shared {
    url: reqwest::Url,
    client: reqwest::Client,
    /// The builder's headers, on every request.
    headers: HeaderMap,
    auth: Option<Arc<dyn Authenticator>>,
    incoming: IncomingTx,
    max_bytes: usize,
    state: Mutex<State>,
    /// Fired when the client closes: every stream ends.
    closed: CancellationToken,
}

#[derive(Default)]
struct State {
    /// The revision the client speaks (`set_protocol_version`).
    version: Option<String>,
    /// The 2025-11-25 session.
    session: Option<String>,
    /// Why the session can no longer be used (the server ended it), once it cannot and until
    /// the client forgets it (`forget_ended_session`) to start a new one.
    expired: Option<String>,
    /// Whether the GET stream was started.
    listening: bool,
    /// The streams of running requests, by id (its JSON text): cancelling one closes it.
    streams: HashMap<String, CancellationToken>,
}

/// What the wire reads of an outgoing message.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct HeadParams {
    #[serde(rename = "_meta", default)]
    meta: Option<HeadMeta>,
    #[serde(rename = "requestId", default)]
    request_id: Option<Value>,
}

#[derive(Deserialize)]
struct HeadMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<String>,
}

impl Head<'_> {
    fn params(&self) -> HeadParams {
        self.params.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default()
    }
}

/// Whether a message from the server is the answer to request `id`.
fn answers(message: &[u8], id: &Value) -> bool {
    #[derive(Deserialize)]
    struct Fields {
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        method: Option<IgnoredAny>,
    }
    serde_json::from_slice::<Fields>(message).is_ok_and(|f| f.method.is_none() && f.id.as_ref() == Some(id))
}

/// The key of a request id in [`State::streams`].
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn transport(error: reqwest::Error) -> ClientError {
    // reqwest's own text names the operation; its source says why (refused, reset…).
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    ClientError::Transport(text)
}

fn content_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

impl Http {
    /// A wire to the endpoint at `url`, with `headers` on every request and `auth` authorizing
    /// them; what the server sends goes to `incoming`.
    pub fn new(
        url: &str,
        headers: Vec<(String, String)>,
        auth: Option<Arc<dyn Authenticator>>,
        incoming: IncomingTx,
        max_bytes: usize,
    ) -> Result<Http, ClientError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| ClientError::Transport(format!("invalid URL `{url}`: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Transport(format!("`{url}` is not an http or https URL")));
        }
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| ClientError::Transport(format!("`{name}` is not a valid header name")))?;
            let value = HeaderValue::from_str(&value).map_err(|_| {
                ClientError::Transport(format!("the value of the header `{name}` is not valid"))
            })?;
            map.append(header, value);
        }
        // Every request goes to the configured URL and nowhere else: a redirect is not followed
        // (it would take the session, the credentials and the calls to another origin); the
        // server's 3xx is the request's error.
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Transport(format!("cannot make an HTTP client: {e}")))?;
        Ok(Http {
            shared: Arc::new(Shared {
                url,
                client,
                headers: map,
                auth,
                incoming,
                max_bytes,
                state: Mutex::new(State::default()),
                closed: CancellationToken::new(),
            }),
        })
    }
}

impl Wire for Http {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.shared.clone().send(message))
    }

    fn set_protocol_version(&self, version: &str) {
        self.shared.state().version = Some(version.to_owned());
    }

    fn forget_ended_session(&self) -> bool {
        let mut state = self.shared.state();
        if state.expired.take().is_none() {
            return false;
        }
        state.session = None;
        // The new session's GET stream is opened after its `notifications/initialized`.
        state.listening = false;
        true
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(delete) = self.shared.stop() {
                delete.await;
            }
            let _ = self.shared.incoming.send(Incoming::Closed(None));
        })
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        // The client is gone without closing: streams end, and the session too if a runtime
        // is there to say so.
        if let Some(delete) = self.shared.stop()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(delete);
        }
    }
}

/// The revision a message is sent in, as far as its headers go.
enum Shape {
    /// 2026-07-28: this revision in `MCP-Protocol-Version`, no session.
    Stateless(String),
    /// 2025-11-25 (or before `initialize` is answered): the session, the negotiated revision.
    Session,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("HTTP wire state lock")
    }

    /// Ends the connection once: every stream is closed; the DELETE of the session, if there
    /// is one, is returned to be run.
    fn stop(self: &Arc<Self>) -> Option<BoxFuture<'static, ()>> {
        if self.closed.is_cancelled() {
            return None;
        }
        self.closed.cancel();
        let (session, version) = {
            let mut state = self.state();
            state.streams.clear();
            (state.session.take(), state.version.clone())
        };
        let session = session?;
        let shared = self.clone();
        Some(Box::pin(async move {
            let mut headers = shared.headers.clone();
            if let Ok(value) = HeaderValue::from_str(&session) {
                headers.insert(SESSION_HEADER.clone(), value);
            }
            if let Some(value) = version.and_then(|v| HeaderValue::from_str(&v).ok()) {
                headers.insert(VERSION_HEADER.clone(), value);
            }
            let mut request =
                shared.client.delete(shared.url.clone()).headers(headers).timeout(DELETE_TIMEOUT);
            if let Some(auth) = &shared.auth
                && let Ok(Some(value)) = auth.authorization(shared.url.as_str()).await
            {
                request = request.header(AUTHORIZATION, value);
            }
            match request.send().await {
                Ok(response) => {
                    tracing::debug!(status = %response.status(), "the session was ended (DELETE)")
                }
                Err(e) => tracing::debug!(error = %e, "ending the session (DELETE) failed"),
            }
        }))
    }

    async fn send(self: Arc<Self>, message: Outgoing) -> Result<(), ClientError> {
        if self.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        let head: Head<'_> = serde_json::from_slice(&message.bytes)
            .map_err(|e| ClientError::Protocol(format!("an outgoing message is not JSON-RPC: {e}")))?;
        let params = head.params();
        let shape = {
            let state = self.state();
            match params.meta.as_ref().and_then(|m| m.version.clone()) {
                // A request with the envelope (`server/discover` before any revision is set).
                Some(version) => Shape::Stateless(version),
                None => match &state.version {
                    Some(version) if Era::of(version) == Era::Stateless => Shape::Stateless(version.clone()),
                    _ => Shape::Session,
                },
            }
        };
        let stateless = matches!(shape, Shape::Stateless(_));
        if !stateless && let Some(why) = self.state().expired.clone() {
            return Err(ClientError::Transport(why));
        }
        match message.kind {
            Kind::Request { method, name } => {
                let Some(id) = head.id else {
                    return Err(ClientError::Protocol(format!("the request `{method}` has no id")));
                };
                let mut headers =
                    self.post_headers(&shape, Some(&method), name.as_deref(), &message.param_headers)?;
                // The request's own credentials (a gateway passing its caller's token on):
                // `execute` then sends these and not the client's.
                if let Some(value) = &message.authorization {
                    let value = HeaderValue::from_str(value).map_err(|_| {
                        ClientError::Unauthorized("the Authorization value is not a valid header".into())
                    })?;
                    headers.insert(AUTHORIZATION, value);
                }
                let stream = self.closed.child_token();
                self.state().streams.insert(id_key(&id), stream.clone());
                tokio::spawn(self.clone().run_request(id, message.bytes, headers, stream, stateless));
                Ok(())
            }
            Kind::Notification | Kind::Response => {
                let method = head.method.unwrap_or_default();
                if method == "notifications/cancelled"
                    && let Some(id) = &params.request_id
                {
                    // The request's stream is closed: over HTTP that cancels it (the only way
                    // in 2026-07-28, where nothing else would tell the server).
                    if let Some(stream) = self.state().streams.remove(&id_key(id)) {
                        stream.cancel();
                    }
                    if stateless {
                        return Ok(());
                    }
                }
                let headers =
                    self.post_headers(&shape, Some(method.as_str()).filter(|m| !m.is_empty()), None, &[])?;
                let response = self.execute(Method::POST, &headers, Some(message.bytes)).await?;
                if !stateless {
                    self.note_session(&response);
                }
                if !response.status().is_success() {
                    return Err(self.error_of(response, headers.get(&SESSION_HEADER)).await);
                }
                if method == "notifications/initialized" && !stateless {
                    self.start_listening().await;
                }
                Ok(())
            }
        }
    }

    /// The headers of a POST: `request` is a request's method and name.
    fn post_headers(
        &self,
        shape: &Shape,
        method: Option<&str>,
        name: Option<&str>,
        param_headers: &[(String, String)],
    ) -> Result<HeaderMap, ClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let invalid = |what: &str| ClientError::Protocol(format!("{what} cannot be sent in an HTTP header"));
        match shape {
            Shape::Stateless(version) => {
                let value = HeaderValue::from_str(version).map_err(|_| invalid("the version"))?;
                headers.insert(VERSION_HEADER.clone(), value);
            }
            Shape::Session => self.session_headers(&mut headers),
        }
        // The method and target in headers (SEP-2243): required in 2026-07-28, and harmless
        // (ignored) for a server of an older revision.
        if let Some(method) = method {
            let value = HeaderValue::from_str(method).map_err(|_| invalid("the method"))?;
            headers.insert(METHOD_HEADER.clone(), value);
        }
        if let Some(name) = name {
            let value = HeaderValue::from_str(&header_text(name)).map_err(|_| invalid("the name"))?;
            headers.insert(NAME_HEADER.clone(), value);
        }
        for (name, value) in param_headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid(name))?;
            headers.insert(header, HeaderValue::from_str(value).map_err(|_| invalid(name))?);
        }
        for (name, value) in &self.headers {
            headers.insert(name, value.clone());
        }
        Ok(headers)
    }

    /// The session and the negotiated revision (2025-11-25), when known.
    fn session_headers(&self, headers: &mut HeaderMap) {
        let state = self.state();
        if let Some(value) = state.session.as_deref().and_then(|s| HeaderValue::from_str(s).ok()) {
            headers.insert(SESSION_HEADER.clone(), value);
        }
        if let Some(value) = state.version.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(VERSION_HEADER.clone(), value);
        }
    }

    /// The headers of a GET of the server's stream (2025-11-25), resuming after `last_event`.
    fn get_headers(&self, last_event: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        self.session_headers(&mut headers);
        if let Some(value) = last_event.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID.clone(), value);
        }
        for (name, value) in &self.headers {
            headers.insert(name, value.clone());
        }
        headers
    }

    /// Keeps the session a response names (the `initialize` answer's).
    fn note_session(&self, response: &Response) {
        if let Some(session) = response.headers().get(&SESSION_HEADER).and_then(|v| v.to_str().ok()) {
            let mut state = self.state();
            if state.session.as_deref() != Some(session) {
                state.session = Some(session.to_owned());
            }
        }
    }

    /// Sends one HTTP request, authorized; refused (401, or 403 asking for more scopes), the
    /// authenticator may renew the credentials, and the request is sent once more. Headers
    /// that carry their own `Authorization` are sent as they are, never renewed.
    async fn execute(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<Response, ClientError> {
        let mut body = body;
        let mut renewed = false;
        let own = headers.contains_key(AUTHORIZATION);
        let auth = self.auth.as_ref().filter(|_| !own);
        loop {
            let mut request = self.client.request(method.clone(), self.url.clone()).headers(headers.clone());
            if let Some(auth) = auth
                && let Some(value) = auth.authorization(self.url.as_str()).await?
            {
                let value = HeaderValue::from_str(&value).map_err(|_| {
                    ClientError::Unauthorized("the Authorization value is not a valid header".into())
                })?;
                request = request.header(AUTHORIZATION, value);
            }
            // The body is kept for a second attempt only when there can be one.
            let payload = if auth.is_some() && !renewed { body.clone() } else { body.take() };
            if let Some(payload) = payload {
                request = request.body(payload);
            }
            let response = tokio::select! {
                response = request.send() => response.map_err(transport)?,
                () = self.closed.cancelled() => return Err(ClientError::Closed),
            };
            let status = response.status();
            let challenge =
                response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let refused = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN
                    && challenge.as_deref().is_some_and(|c| c.contains("insufficient_scope")));
            if !refused {
                return Ok(response);
            }
            let said = match &challenge {
                Some(challenge) => format!("HTTP {}; {challenge}", status.as_u16()),
                None => format!("HTTP {}", status.as_u16()),
            };
            if own {
                return Err(ClientError::Unauthorized(format!(
                    "the server refused the request's own credentials ({said})"
                )));
            }
            let Some(auth) = auth else {
                return Err(ClientError::Unauthorized(format!("the server requires authorization ({said})")));
            };
            if renewed {
                return Err(ClientError::Unauthorized(format!(
                    "the server refused the renewed credentials ({said})"
                )));
            }
            if !auth.refused(self.url.as_str(), status.as_u16(), challenge.as_deref()).await? {
                return Err(ClientError::Unauthorized(format!(
                    "the server refused the credentials ({said})"
                )));
            }
            renewed = true;
        }
    }

    /// What an error response means: the JSON-RPC error it carries, or its status and text; a
    /// 404 to a request that named a 2025-11-25 `session` means the server ended it (marked
    /// ended, unless a new one already replaced it).
    async fn error_of(&self, mut response: Response, session: Option<&HeaderValue>) -> ClientError {
        let status = response.status();
        let body = read_limited(&mut response, ERROR_BODY_LIMIT).await.unwrap_or_else(|(partial, _)| partial);
        let error = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v.get("error").cloned());
        let rpc = error.filter(|e| e["code"].is_i64());
        let text = match &rpc {
            Some(error) => error["message"].as_str().unwrap_or_default().to_owned(),
            None => String::from_utf8_lossy(&body[..body.len().min(512)]).trim().to_owned(),
        };
        if status == StatusCode::NOT_FOUND
            && let Some(session) = session
        {
            let why = format!("the server ended the session (HTTP 404: {text})");
            let mut state = self.state();
            if state.session.as_deref().is_some_and(|current| current.as_bytes() == session.as_bytes()) {
                state.expired = Some(why.clone());
            }
            return ClientError::Transport(why);
        }
        match rpc {
            Some(error) => ClientError::Rpc {
                code: error["code"].as_i64().unwrap_or(-32603),
                message: text,
                data: error.get("data").cloned(),
            },
            None if text.is_empty() => ClientError::Transport(format!("the server answered HTTP {status}")),
            None => ClientError::Transport(format!("the server answered HTTP {status}: {text}")),
        }
    }

    /// A request's POST and its answer, until answered or its stream is closed; a failure is
    /// reported to the client as the request's.
    async fn run_request(
        self: Arc<Self>,
        id: Value,
        body: Vec<u8>,
        headers: HeaderMap,
        stream: CancellationToken,
        stateless: bool,
    ) {
        let outcome = tokio::select! {
            outcome = self.exchange(&id, body, &headers, stateless) => outcome,
            () = stream.cancelled() => Ok(()),
        };
        {
            let mut state = self.state();
            state.streams.remove(&id_key(&id));
        }
        if let Err(error) = outcome
            && !stream.is_cancelled()
        {
            let _ = self.incoming.send(Incoming::Failed(id, error));
        }
    }

    async fn exchange(
        &self,
        id: &Value,
        body: Vec<u8>,
        headers: &HeaderMap,
        stateless: bool,
    ) -> Result<(), ClientError> {
        let mut response = self.execute(Method::POST, headers, Some(body)).await?;
        if !stateless {
            self.note_session(&response);
        }
        let status = response.status();
        if !status.is_success() {
            return Err(self.error_of(response, headers.get(&SESSION_HEADER)).await);
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(ClientError::Protocol(format!(
                "the server accepted the request (HTTP {status}) without answering it"
            )));
        }
        match content_type(&response).as_str() {
            "application/json" => {
                let body = read_limited(&mut response, self.max_bytes).await.map_err(|(_, e)| e)?;
                if answers(&body, id) {
                    let _ = self.incoming.send(Incoming::Message(body));
                    return Ok(());
                }
                // An error that names no request (a null id): the request's.
                let error = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v.get("error").cloned());
                match error {
                    Some(error) if error["code"].is_i64() => Err(ClientError::Rpc {
                        code: error["code"].as_i64().unwrap_or(-32603),
                        message: error["message"].as_str().unwrap_or_default().to_owned(),
                        data: error.get("data").cloned(),
                    }),
                    _ => Err(ClientError::Protocol(format!(
                        "the server's JSON answer does not answer request {id}"
                    ))),
                }
            }
            EVENT_STREAM => self.follow(response, id).await,
            other => Err(ClientError::Protocol(format!(
                "the server answered with Content-Type `{other}`, neither JSON nor an event stream"
            ))),
        }
    }

    /// Reads a request's event stream until its answer; a stream that ends before it is
    /// resumed (GET with `Last-Event-ID`, after the server's `retry` delay) when its events had
    /// ids.
    async fn follow(&self, mut response: Response, id: &Value) -> Result<(), ClientError> {
        let mut parser = SseParser::new(self.max_bytes);
        loop {
            let ended = match self.read_events(&mut response, &mut parser, Some(id)).await {
                Read::Answered => return Ok(()),
                Read::Ended(why) => why,
            };
            let Some(last) = parser.last_event_id.clone() else {
                let why = ended.map(|e| format!(" ({e})")).unwrap_or_default();
                let lost = if parser.oversized {
                    "; a message over the client's size limit was dropped"
                } else {
                    ""
                };
                return Err(ClientError::Transport(format!(
                    "the server closed the stream before answering{why}{lost}"
                )));
            };
            response = self.resume(&parser, &last).await?;
        }
    }

    /// Reconnects to a stream after `last`: waits the server's `retry` delay (or a growing
    /// one, after failures), then GETs it.
    async fn resume(&self, parser: &SseParser, last: &str) -> Result<Response, ClientError> {
        let mut failures = 0;
        loop {
            tokio::time::sleep(reconnect_delay(parser.retry, failures)).await;
            let attempt = self.execute(Method::GET, &self.get_headers(Some(last)), None).await;
            match attempt {
                Ok(response) if response.status().is_success() => {
                    if content_type(&response) != EVENT_STREAM {
                        return Err(ClientError::Protocol(
                            "the server resumed a stream with something other than an event stream".into(),
                        ));
                    }
                    return Ok(response);
                }
                // A session that ended meanwhile is not marked ended here: the request may have
                // run, and must not be sent again in a new session; the next request finds out.
                Ok(response) => return Err(self.error_of(response, None).await),
                Err(error @ (ClientError::Transport(_) | ClientError::Timeout(_))) => {
                    failures += 1;
                    if failures > MAX_RECONNECT_FAILURES {
                        return Err(error);
                    }
                    tracing::debug!(%error, failures, "resuming a stream failed; trying again");
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Reads events from `response`, each message to the client, until the answer to `id`
    /// (if given) or the end of the stream.
    async fn read_events(&self, response: &mut Response, parser: &mut SseParser, id: Option<&Value>) -> Read {
        parser.new_connection();
        let mut events = Vec::new();
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return Read::Ended(None),
                Err(e) => return Read::Ended(Some(transport(e).to_string())),
            };
            parser.feed(&chunk, &mut events);
            let mut answered = false;
            for message in events.drain(..) {
                let message = message.trim_ascii();
                if message.is_empty() {
                    continue; // a priming event
                }
                answered |= id.is_some_and(|id| answers(message, id));
                // A message on a request's stream belongs to that request.
                let incoming = match id.and_then(Value::as_i64) {
                    Some(request) => Incoming::Related(message.to_vec(), request),
                    None => Incoming::Message(message.to_vec()),
                };
                if self.incoming.send(incoming).is_err() {
                    return Read::Ended(Some("the client is gone".into()));
                }
            }
            if answered {
                return Read::Answered;
            }
        }
    }

    /// Starts the GET stream (2025-11-25), once.
    /// Starts the session's GET stream, and waits (at most [`CONNECT_TIMEOUT`]) until the
    /// server answered its GET: what the server sends from then on, which it may send only on
    /// that stream (a request of its own in the course of a call, say), is not missed.
    async fn start_listening(self: &Arc<Self>) {
        {
            let mut state = self.state();
            if state.listening {
                return;
            }
            state.listening = true;
        }
        let shared = self.clone();
        let closed = self.closed.clone();
        let (opened, answered) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            tokio::select! {
                () = shared.listen(opened) => {}
                () = closed.cancelled() => {}
            }
        });
        let _ = tokio::time::timeout(CONNECT_TIMEOUT, answered).await;
    }

    /// The GET stream: the server's messages unrelated to a request, reconnected (after the
    /// server's `retry` delay, with `Last-Event-ID`) whenever it ends, until the server has
    /// none (405), the session ends, or reconnecting keeps failing.
    /// `opened` is told once the server answered the first GET.
    async fn listen(&self, opened: tokio::sync::oneshot::Sender<()>) {
        let mut parser = SseParser::new(self.max_bytes);
        let mut failures = 0;
        let mut opened = Some(opened);
        loop {
            let headers = self.get_headers(parser.last_event_id.as_deref());
            let answer = self.execute(Method::GET, &headers, None).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            match answer {
                Ok(mut response)
                    if response.status().is_success() && content_type(&response) == EVENT_STREAM =>
                {
                    failures = 0;
                    if let Read::Ended(Some(why)) = self.read_events(&mut response, &mut parser, None).await {
                        tracing::debug!(%why, "the GET stream ended");
                    }
                }
                Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => {
                    tracing::debug!("the server offers no GET stream");
                    return;
                }
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                    let error = self.error_of(response, headers.get(&SESSION_HEADER)).await;
                    tracing::debug!(%error, "the GET stream's session is gone");
                    return;
                }
                Ok(response) => {
                    failures += 1;
                    tracing::debug!(status = %response.status(), failures, "the GET stream was refused");
                }
                Err(ClientError::Closed) => return,
                Err(error) => {
                    failures += 1;
                    tracing::debug!(%error, failures, "opening the GET stream failed");
                }
            }
            if failures > MAX_RECONNECT_FAILURES {
                tracing::warn!(
                    "the server's GET stream could not be reopened: its notifications are no longer received"
                );
                return;
            }
            tokio::time::sleep(reconnect_delay(parser.retry, failures)).await;
        }
    }
}

/// How a stream's reading ended.
enum Read {
    Answered,
    /// The stream ended (and why, when it failed).
    Ended(Option<String>),
}

/// The wait before reconnecting: the server's `retry` when it gave one, else a delay doubling
/// with each failure.
fn reconnect_delay(retry: Option<Duration>, failures: u32) -> Duration {
    retry.unwrap_or_else(|| {
        (RECONNECT_DELAY * 2u32.pow(failures.saturating_sub(1).min(5))).min(MAX_RECONNECT_DELAY)
    })
}

/// A body read whole, up to `limit` bytes; past it, what was read and why it stopped.
async fn read_limited(response: &mut Response, limit: usize) -> Result<Vec<u8>, (Vec<u8>, ClientError)> {
    let too_large =
        || ClientError::Protocol(format!("the server's answer exceeds the client's limit of {limit} bytes"));
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err((Vec::new(), too_large()));
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err((body, too_large()));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err((body, transport(e))),
        }
    }
}

/// A parser of server-sent events (the WHATWG `text/event-stream` format): lines ending in
/// LF, CR or CRLF; `data` lines joined; `id` and `retry` kept for reconnecting; comments,
/// unknown fields and events of other types than `message` ignored. At most `max` bytes of an
/// event's data are held: a larger event is dropped (and noted).
struct SseParser {
    max: usize,
    line: Vec<u8>,
    /// The current line is longer than any field the parser keeps.
    line_over: bool,
    /// The last chunk ended in CR: a LF opening the next one ends no line.
    after_cr: bool,
    /// The first bytes of a connection (a BOM is skipped there).
    at_start: bool,
    data: Vec<u8>,
    has_data: bool,
    data_over: bool,
    event: Vec<u8>,
    id_buffer: Option<String>,
    /// The id of the last event dispatched (`Last-Event-ID` when reconnecting).
    last_event_id: Option<String>,
    /// The server's reconnection delay.
    retry: Option<Duration>,
    /// An event over the limit was dropped.
    oversized: bool,
}

impl SseParser {
    fn new(max: usize) -> SseParser {
        SseParser {
            max,
            line: Vec::new(),
            line_over: false,
            after_cr: false,
            at_start: true,
            data: Vec::new(),
            has_data: false,
            data_over: false,
            event: Vec::new(),
            id_buffer: None,
            last_event_id: None,
            retry: None,
            oversized: false,
        }
    }

    /// A new connection: what was left of an event is dropped; the id and retry stay.
    fn new_connection(&mut self) {
        self.line.clear();
        self.line_over = false;
        self.after_cr = false;
        self.at_start = true;
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.data_over = false;
        self.event.clear();
    }

    /// Parses `chunk`; the data of each `message` event completed goes to `out`.
    fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Vec<u8>>) {
        if self.at_start && !chunk.is_empty() {
            self.at_start = false;
            chunk = chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk);
        }
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while !chunk.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                self.extend_line(chunk);
                return;
            };
            self.extend_line(&chunk[..end]);
            let cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            self.end_line(out);
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        // Room for the longest data line kept, with its field name.
        let room = (self.max + 16).saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line_over = true;
        }
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end_line(&mut self, out: &mut Vec<Vec<u8>>) {
        let line = std::mem::take(&mut self.line);
        let over = std::mem::take(&mut self.line_over);
        self.process(&line, over, out);
        self.line = line;
        self.line.clear();
    }

    fn process(&mut self, line: &[u8], over: bool, out: &mut Vec<Vec<u8>>) {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                let joined = self.data.len() + usize::from(self.has_data) + value.len();
                if over || joined > self.max {
                    self.data_over = true;
                } else {
                    if self.has_data {
                        self.data.push(b'\n');
                    }
                    self.data.extend_from_slice(value);
                }
                self.has_data = true;
            }
            _ if over => {} // no other field is that long
            b"event" => self.event = value.to_vec(),
            b"id" if !value.contains(&0) => {
                self.id_buffer = (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok()) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Vec<u8>>) {
        self.last_event_id.clone_from(&self.id_buffer);
        let is_message = self.event.is_empty() || self.event == b"message";
        if self.has_data && is_message {
            if self.data_over {
                tracing::warn!(
                    limit = self.max,
                    "the server sent a message over the client's limit; dropped"
                );
                self.oversized = true;
            } else {
                out.push(std::mem::take(&mut self.data));
            }
        }
        self.reset_event();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]], max: usize) -> (Vec<String>, SseParser) {
        let mut parser = SseParser::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        (out.into_iter().map(|m| String::from_utf8(m).unwrap()).collect(), parser)
    }

    #[test]
    fn events_are_parsed_across_chunks_and_line_endings() {
        let (events, parser) = parse(
            &[
                b"\xEF\xBB\xBFid: 1-0\nretry: 500\ndata: \n\n",
                b": keep-alive\r\n\r\nevent: message\r",
                b"\nid: 1-1\rdata: {\"a\"",
                b":1}\r\n\r\n",
            ],
            1024,
        );
        assert_eq!(events, ["", "{\"a\":1}"]);
        assert_eq!(parser.last_event_id.as_deref(), Some("1-1"));
        assert_eq!(parser.retry, Some(Duration::from_millis(500)));
    }

    #[test]
    fn data_lines_join_and_other_events_and_fields_are_ignored() {
        let (events, parser) = parse(
            &[
                b"data: a\ndata:b\nunknown: x\nnocolon\n\n",
                b"event: ping\ndata: skipped\n\n",
                b"retry: soon\ndata: c\n\n",
            ],
            1024,
        );
        assert_eq!(events, ["a\nb", "c"]);
        assert_eq!(parser.retry, None, "a retry that is not a number is ignored");
        assert_eq!(parser.last_event_id, None);
    }

    #[test]
    fn an_incomplete_event_is_not_dispatched_and_its_id_not_taken() {
        let (events, parser) = parse(&[b"id: 1\ndata: x\n\nid: 2\ndata: {\"partial"], 1024);
        assert_eq!(events, ["x"]);
        assert_eq!(parser.last_event_id.as_deref(), Some("1"));
    }

    #[test]
    fn an_event_over_the_limit_is_dropped_and_the_stream_goes_on() {
        let big = format!("data: {}\n\n", "x".repeat(100));
        let (events, parser) = parse(&[big.as_bytes(), b"data: small\n\n"], 32);
        assert_eq!(events, ["small"]);
        assert!(parser.oversized);
        let (events, parser) =
            parse(&[b"data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\ndata: ok\n\n"], 25);
        assert_eq!(events, ["ok"], "the joined data counts");
        assert!(parser.oversized);
    }
}
