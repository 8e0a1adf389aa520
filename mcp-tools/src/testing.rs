//! An in-process client for tests: call a server's tools and read their results without a
//! transport. Messages still go through the real protocol layer (encoding, lifecycle,
//! validation, concurrency), so what passes here passes over stdio.
//!
//! ```rust,standalone_crate
//! use mcp_tools::{testing::TestClient, tool, Server};
//! use serde_json::json;
//!
//! /// Greet someone.
//! #[tool]
//! async fn greet(name: String) -> String {
//!     format!("Hello, {name}!")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder().build().unwrap();
//! let client = TestClient::connect(&server).await;
//! let result = client.call("greet", json!({"name": "Ada"})).await.unwrap();
//! assert!(!result.is_error());
//! assert_eq!(result.text(), "Hello, Ada!");
//! # }
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};

use crate::Server;
use crate::session::{Origin, Outbound, Session};

/// A JSON-RPC error answer.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The error code (e.g. -32602).
    pub code: i64,
    /// The error message.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

/// A `tools/call` result as a client sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult {
    raw: Value,
}

impl CallResult {
    /// Whether the result has `isError: true`.
    pub fn is_error(&self) -> bool {
        self.raw.get("isError").and_then(Value::as_bool).unwrap_or(false)
    }
    /// The text of all text blocks, joined by newlines.
    pub fn text(&self) -> String {
        self.content()
            .iter()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
    /// The content blocks.
    pub fn content(&self) -> &[Value] {
        self.raw.get("content").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }
    /// The structured content, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.raw.get("structuredContent")
    }
    /// The whole result object.
    pub fn json(&self) -> &Value {
        &self.raw
    }
}

struct Incoming {
    queue: mpsc::UnboundedReceiver<Vec<u8>>,
    answers: HashMap<i64, Value>,
    notifications: Vec<Value>,
}

/// A client connected in-process to a [`Server`].
pub struct TestClient {
    session: Arc<Session>,
    origin: Origin,
    next_id: AtomicI64,
    incoming: Mutex<Incoming>,
    responder: Option<Arc<Responder>>,
}

/// Answers the server's requests to the client (`sampling/createMessage`, `elicitation/create`,
/// `roots/list`, …): gets the method and params, returns the result or an error.
pub type Responder = dyn Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync;

impl TestClient {
    /// Connects and performs the `initialize` handshake (as client `mcp-tools-test`, declaring no
    /// capabilities).
    pub async fn connect(server: &Server) -> TestClient {
        Self::connect_uninitialized(server).initialized(json!({})).await
    }

    /// Connects declaring `capabilities` (e.g. `{"sampling": {}, "elicitation": {}, "roots": {}}`)
    /// and answering the server's requests with `responder`.
    ///
    /// ```rust,standalone_crate
    /// use mcp_tools::{tool, Context, SamplingRequest, Server, ToolError};
    /// use mcp_tools::testing::TestClient;
    /// use serde_json::json;
    ///
    /// /// Ask the client's model.
    /// #[tool]
    /// async fn ask(question: String, ctx: Context) -> Result<String, ToolError> {
    ///     let answer = ctx.sample(SamplingRequest::new(50).user(question)).await?;
    ///     Ok(answer.text().unwrap_or_default().to_owned())
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = Server::builder().build().unwrap();
    /// let client = TestClient::connect_with(&server, json!({"sampling": {}}), |method, _params| {
    ///     assert_eq!(method, "sampling/createMessage");
    ///     Ok(json!({"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "test"}))
    /// })
    /// .await;
    /// let result = client.call("ask", json!({"question": "6 × 7?"})).await.unwrap();
    /// assert_eq!(result.text(), "42");
    /// # }
    /// ```
    pub async fn connect_with(
        server: &Server,
        capabilities: Value,
        responder: impl Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync + 'static,
    ) -> TestClient {
        let mut client = Self::connect_uninitialized(server);
        client.responder = Some(Arc::new(responder));
        client.initialized(capabilities).await
    }

    async fn initialized(self, capabilities: Value) -> TestClient {
        self.request(
            "initialize",
            json!({
                "protocolVersion": crate::LATEST_PROTOCOL_VERSION,
                "capabilities": capabilities,
                "clientInfo": {"name": "mcp-tools-test", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .await
        .expect("initialize succeeds");
        self.notify("notifications/initialized", json!({}));
        self
    }

    /// Connects without the handshake (to test the lifecycle itself).
    pub fn connect_uninitialized(server: &Server) -> TestClient {
        let (outbound, queue) = Outbound::channel();
        let session = Session::new(server.inner.clone(), Some(outbound.clone()));
        session.forward_events();
        TestClient {
            session,
            origin: Origin::new(outbound),
            next_id: AtomicI64::new(1),
            incoming: Mutex::new(Incoming { queue, answers: HashMap::new(), notifications: Vec::new() }),
            responder: None,
        }
    }

    /// Sends a request and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.send_request(method, params);
        self.answer(id).await
    }

    /// Sends a request without waiting; returns its id (see [`answer`](Self::answer)).
    pub fn send_request(&self, method: &str, params: Value) -> i64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.session.handle_message(message.to_string().as_bytes(), &self.origin);
        id
    }

    /// Waits for the answer to request `id`, collecting notifications that arrive meanwhile.
    pub async fn answer(&self, id: i64) -> Result<Value, RpcError> {
        let message = self.wait_for(|m| m.get("id") == Some(&json!(id))).await;
        into_result(message)
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.session.handle_message(message.to_string().as_bytes(), &self.origin);
    }

    /// Sends raw bytes as one message and returns the first message that comes back.
    pub async fn send_raw(&self, message: &str) -> Value {
        self.session.handle_message(message.as_bytes(), &self.origin);
        let mut incoming = self.incoming.lock().await;
        let bytes = incoming.queue.recv().await.expect("the session is open");
        serde_json::from_slice(&bytes).expect("the server sends JSON")
    }

    /// Every tool, following `nextCursor` across pages.
    pub async fn list_tools(&self) -> Result<Vec<Value>, RpcError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool. Protocol errors (unknown tool, malformed request) are `Err`; a tool that
    /// failed is an `Ok` result with [`is_error`](CallResult::is_error).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallResult, RpcError> {
        let raw = self.request("tools/call", json!({"name": name, "arguments": arguments})).await?;
        Ok(CallResult { raw })
    }

    /// Calls a tool with a progress token, so progress notifications are sent.
    pub async fn call_with_progress(
        &self,
        name: &str,
        arguments: Value,
        token: &str,
    ) -> Result<CallResult, RpcError> {
        let params = json!({"name": name, "arguments": arguments, "_meta": {"progressToken": token}});
        let raw = self.request("tools/call", params).await?;
        Ok(CallResult { raw })
    }

    /// The notifications received so far (drained).
    pub async fn take_notifications(&self) -> Vec<Value> {
        let mut incoming = self.incoming.lock().await;
        while let Ok(bytes) = incoming.queue.try_recv() {
            let message: Value = serde_json::from_slice(&bytes).expect("the server sends JSON");
            if !self.answer_server_request(&message) {
                stash(&mut incoming, message);
            }
        }
        std::mem::take(&mut incoming.notifications)
    }

    /// Waits for the next notification named `method` (one already received counts) and
    /// returns it.
    pub async fn notification(&self, method: &str) -> Value {
        {
            let mut incoming = self.incoming.lock().await;
            if let Some(i) = incoming.notifications.iter().position(|n| n["method"] == method) {
                return incoming.notifications.remove(i);
            }
        }
        self.wait_for(|m| m["method"] == method && m.get("id").is_none()).await
    }

    async fn wait_for(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        let mut incoming = self.incoming.lock().await;
        if let Some(id) = incoming.answers.keys().copied().find(|id| wanted(&json!({"id": id}))) {
            return incoming.answers.remove(&id).expect("present");
        }
        loop {
            let bytes = incoming.queue.recv().await.expect("the session is open");
            let message: Value = serde_json::from_slice(&bytes).expect("the server sends JSON");
            if wanted(&message) {
                return message;
            }
            if !self.answer_server_request(&message) {
                stash(&mut incoming, message);
            }
        }
    }

    /// Answers a request from the server (with the responder, or "method not found").
    fn answer_server_request(&self, message: &Value) -> bool {
        let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str))
        else {
            return false;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let outcome = match &self.responder {
            Some(responder) => responder(method, &params),
            None => {
                Err(RpcError { code: -32601, message: format!("the test client does not answer {method}") })
            }
        };
        let answer = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}}),
        };
        self.session.handle_message(answer.to_string().as_bytes(), &self.origin);
        true
    }
}

fn stash(incoming: &mut Incoming, message: Value) {
    match message.get("id").and_then(Value::as_i64) {
        Some(id) if message.get("method").is_none() => {
            incoming.answers.insert(id, message);
        }
        _ => incoming.notifications.push(message),
    }
}

fn into_result(message: Value) -> Result<Value, RpcError> {
    if let Some(error) = message.get("error") {
        return Err(RpcError {
            code: error["code"].as_i64().unwrap_or_default(),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
        });
    }
    Ok(message.get("result").cloned().unwrap_or(Value::Null))
}
