//! An in-process client for tests: call a server's tools and read their results without a
//! transport. Messages still go through the real protocol layer (decoding, lifecycle,
//! validation, concurrency, the server's limits), so a tool that passes here behaves the same
//! over stdio and HTTP; only the framing (lines, HTTP bodies and their size limits) is skipped.
//! The client speaks either
//! era: a 2025-11-25 session ([`TestClient::connect`]) or stateless 2026-07-28 requests
//! ([`TestClient::connect_stateless`]); a tool should behave the same in both.
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

use std::sync::Arc;

use serde_json::{Value, json};

use crate::protocol::Era;
use crate::server::Server;
use crate::transport::memory::Connection;
pub use crate::transport::memory::{Responder, RpcError};

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

/// A client connected in-process to a [`Server`].
pub struct TestClient {
    connection: Connection,
}

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
        warn_if_empty(server);
        let connection = Connection::open(server, Some(Arc::new(responder)));
        TestClient { connection }.initialized(capabilities).await
    }

    /// Connects as a 2026-07-28 client: no handshake; every request carries the stateless
    /// envelope, declaring no capabilities.
    pub fn connect_stateless(server: &Server) -> TestClient {
        warn_if_empty(server);
        TestClient { connection: Connection::open_stateless(server, json!({}), None) }
    }

    /// Connects as a 2026-07-28 client declaring `capabilities`. When a call answers
    /// `input_required` (a tool asked for sampling, elicitation or roots), `responder` answers
    /// each input request and the call is retried with the answers, as a real client does: the
    /// same responder, and the same tool code, as in a 2025-11-25 session.
    ///
    /// ```rust,standalone_crate
    /// use mcp_tools::{tool, Context, Elicitation, Server, ToolError};
    /// use mcp_tools::testing::TestClient;
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name { name: String }
    ///
    /// /// Greet the user by name.
    /// #[tool]
    /// async fn greet(ctx: Context) -> Result<String, ToolError> {
    ///     match ctx.elicit::<Name>("What is your name?").await? {
    ///         Elicitation::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
    ///         _ => Ok("Hello!".into()),
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = Server::builder().build().unwrap();
    /// let answer = |method: &str, _: &serde_json::Value| {
    ///     assert_eq!(method, "elicitation/create");
    ///     Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    /// };
    /// let stateless = TestClient::connect_stateless_with(&server, json!({"elicitation": {}}), answer);
    /// assert_eq!(stateless.call("greet", json!({})).await.unwrap().text(), "Hello, Ada!");
    /// let session = TestClient::connect_with(&server, json!({"elicitation": {}}), answer).await;
    /// assert_eq!(session.call("greet", json!({})).await.unwrap().text(), "Hello, Ada!");
    /// # }
    /// ```
    pub fn connect_stateless_with(
        server: &Server,
        capabilities: Value,
        responder: impl Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync + 'static,
    ) -> TestClient {
        warn_if_empty(server);
        TestClient { connection: Connection::open_stateless(server, capabilities, Some(Arc::new(responder))) }
    }

    /// The same client, sending every request as a caller with this verified identity (as
    /// Streamable HTTP with authorization does; the tool's [`Context::auth`](crate::Context::auth)
    /// returns it). A task belongs to its creator's identity rather than to this connection, so
    /// that clients with the same identity reach it through any server sharing its task store.
    pub fn with_identity(mut self, auth: crate::context::auth::AuthInfo) -> TestClient {
        self.connection.set_identity(auth);
        self
    }

    /// The era this client speaks.
    pub fn era(&self) -> Era {
        self.connection.era()
    }

    async fn initialized(self, capabilities: Value) -> TestClient {
        self.connection.initialize(capabilities).await.expect("initialize succeeds");
        self
    }

    /// Connects without the handshake (to test the lifecycle itself).
    pub fn connect_uninitialized(server: &Server) -> TestClient {
        warn_if_empty(server);
        TestClient { connection: Connection::open(server, None) }
    }

    /// Sends a request and waits for its answer (stateless: answering and retrying an
    /// `input_required` result until the request completes).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.connection.request(method, params).await
    }

    /// Sends a request without waiting; returns its id (see [`answer`](Self::answer)). Stateless,
    /// the params get the envelope; the answer is the first round's, even `input_required`.
    pub fn send_request(&self, method: &str, params: Value) -> i64 {
        self.connection.send_request(method, params)
    }

    /// Waits for the answer to request `id`, collecting notifications that arrive meanwhile.
    pub async fn answer(&self, id: i64) -> Result<Value, RpcError> {
        self.connection.answer(id).await
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.connection.notify(method, params);
    }

    /// Sends raw bytes as one message, without waiting for anything (a request whose answer
    /// you collect later with [`answer`](Self::answer), a cancellation, a malformed message).
    pub fn send_message(&self, message: &str) {
        self.connection.send(message);
    }

    /// Sends raw bytes as one message and returns the first message that comes back.
    pub async fn send_raw(&self, message: &str) -> Value {
        self.connection.send(message);
        self.connection.next_message().await
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
        self.connection.take_notifications().await
    }

    /// Waits for the next notification named `method` (one already received counts) and
    /// returns it.
    pub async fn notification(&self, method: &str) -> Value {
        self.connection.notification(method).await
    }
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient").finish_non_exhaustive()
    }
}

/// A test of a server with nothing in it is almost always a test whose `#[tool]` functions the
/// linker left out (they live in a library crate the test never names): say so where the test's
/// output shows it.
fn warn_if_empty(server: &Server) {
    if let Some(warning) = empty_warning(server) {
        eprintln!("mcp_tools::testing: {warning}");
    }
}

fn empty_warning(server: &Server) -> Option<String> {
    server.empty_catalog_warning(
        "at the top of the test file (each file in tests/ is a crate of its own, linked with the \
         library only if it names it)",
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_test_server_says_where_the_library_is_to_be_named() {
        let empty = crate::Server::builder().inventory(false).build().unwrap();
        let warning = super::empty_warning(&empty).expect("a warning");
        assert!(warning.contains("use my_library as _;") && warning.contains("the test file"), "{warning}");
        assert!(!warning.contains("main.rs"), "{warning}");
    }
}
