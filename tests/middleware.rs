//! The call pipeline (`ServerBuilder::layer`, `tool_layer`) and the list filters
//! (`ServerBuilder::list_filter`): what a layer sees and may do, the order of layers, failures
//! and panics inside them, in both eras, in process and over HTTP, and what each caller is shown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use mcp_tools::auth::{Authorization, StaticTokens};
use mcp_tools::deferred::DeferredTools;
use mcp_tools::middleware::{ConcurrencyLimit, ListFilter, ToolCall, ToolService, Viewer};
use mcp_tools::testing::TestClient;
use mcp_tools::{
    AuthInfo, HttpOptions, Limits, Prompt, PromptMessage, PromptResult, Resource, ResourceContents, Server,
    ServerBuilder, Tool, ToolResult, tool,
};
use serde_json::{Map, Value, json};
use tower::ServiceExt as _;

/// Add two numbers.
#[tool(annotations(read_only, idempotent))]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// How many `nap` calls run now, and the most that ever ran at once.
static NAPPING: (AtomicUsize, AtomicUsize) = (AtomicUsize::new(0), AtomicUsize::new(0));

/// Sleeps a while.
#[tool]
async fn nap(millis: u64) -> String {
    let now = NAPPING.0.fetch_add(1, Ordering::SeqCst) + 1;
    NAPPING.1.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    NAPPING.0.fetch_sub(1, Ordering::SeqCst);
    format!("slept {millis} ms")
}

/// What the layers under test saw, in order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn push(&self, what: String) {
        self.0.lock().unwrap().push(what);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A layer that records `label:tool` before and `label:done` after each call.
fn recording(label: &'static str, seen: Seen) -> Around {
    let before = seen.clone();
    Around {
        before: Arc::new(move |call: &mut ToolCall| {
            before.push(format!("{label}:{}", call.name()));
            None
        }),
        after: Some(Arc::new(move || seen.push(format!("{label}:done")))),
    }
}

/// A layer running `f` on each call first: its answer instead of the tool's, or `None` to go on.
fn around(f: impl Fn(&mut ToolCall) -> Option<ToolResult> + Send + Sync + 'static) -> Around {
    Around { before: Arc::new(f), after: None }
}

type Before = Arc<dyn Fn(&mut ToolCall) -> Option<ToolResult> + Send + Sync>;
type After = Arc<dyn Fn() + Send + Sync>;

/// The layer of [`around`] and [`recording`].
#[derive(Clone)]
struct Around {
    before: Before,
    after: Option<After>,
}

impl tower::Layer<ToolService> for Around {
    type Service = AroundService;
    fn layer(&self, inner: ToolService) -> AroundService {
        AroundService { inner, layer: self.clone() }
    }
}

#[derive(Clone)]
struct AroundService {
    inner: ToolService,
    layer: Around,
}

impl tower::Service<ToolCall> for AroundService {
    type Response = ToolResult;
    type Error = mcp_tools::middleware::BoxError;
    type Future = futures_util::future::BoxFuture<'static, Result<ToolResult, Self::Error>>;
    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, mut call: ToolCall) -> Self::Future {
        let answer = (self.layer.before)(&mut call);
        let (inner, after) = (self.inner.clone(), self.layer.after.clone());
        Box::pin(async move {
            let result = match answer {
                Some(answer) => Ok(answer),
                None => inner.oneshot(call).await,
            };
            if let Some(after) = after {
                after();
            }
            result
        })
    }
}

fn runtime_tool() -> Tool {
    Tool::new(
        "shout",
        "Shout the text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args, _| async move {
            Ok(ToolResult::new().text(args["text"].as_str().unwrap_or_default().to_uppercase()))
        },
    )
}

fn builder() -> ServerBuilder {
    Server::builder().tool(runtime_tool())
}

/// Both kinds of clients of one server.
async fn clients(server: &Server) -> [TestClient; 2] {
    [TestClient::connect(server).await, TestClient::connect_stateless(server)]
}

#[tokio::test]
async fn a_layer_wraps_every_kind_of_tool_in_both_eras() {
    let seen = Seen::default();
    let server = builder().layer(recording("log", seen.clone())).build().unwrap();
    for client in clients(&server).await {
        assert_eq!(client.call("add", json!({"a": 2, "b": 3})).await.unwrap().text(), "5");
        assert_eq!(client.call("shout", json!({"text": "hi"})).await.unwrap().text(), "HI");
        assert_eq!(seen.take(), ["log:add", "log:done", "log:shout", "log:done"], "{:?}", client.era());
    }
}

#[tokio::test]
async fn a_layer_may_answer_change_the_arguments_or_change_the_result() {
    let answer = around(|call| (call.name() == "shout").then(|| ToolResult::new().text("refused")));
    let double = around(|call| {
        if call.name() == "add" {
            let mut arguments = call.arguments_json();
            arguments["a"] = json!(arguments["a"].as_i64().unwrap() * 2);
            call.set_arguments(arguments);
        }
        None
    });
    let change = tower::layer::layer_fn(|inner: ToolService| {
        tower::service_fn(move |call: ToolCall| {
            let inner = inner.clone();
            async move {
                let result = inner.oneshot(call).await?;
                Ok::<_, mcp_tools::middleware::BoxError>(result.text("(checked)"))
            }
        })
    });
    let server = builder().layer(double).layer(answer).layer(change).build().unwrap();
    for client in clients(&server).await {
        let added = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(added.content()[0]["text"], "7", "the arguments were changed");
        assert_eq!(added.content().last().unwrap()["text"], "(checked)", "the result was changed");
        let shouted = client.call("shout", json!({"text": "hi"})).await.unwrap();
        assert_eq!(shouted.content()[0]["text"], "refused", "answered without the tool");
    }
}

#[tokio::test]
async fn the_last_layer_added_is_outermost_and_a_tools_own_layers_are_inside() {
    let seen = Seen::default();
    let server = builder()
        .layer(recording("inner", seen.clone()))
        .layer(recording("outer", seen.clone()))
        .tool_layer("add", recording("add-1", seen.clone()))
        .tool_layer("add", recording("add-2", seen.clone()))
        .build()
        .unwrap();
    let client = TestClient::connect(&server).await;
    client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(
        seen.take(),
        [
            "outer:add",
            "inner:add",
            "add-2:add",
            "add-1:add",
            "add-1:done",
            "add-2:done",
            "inner:done",
            "outer:done"
        ]
    );
    client.call("shout", json!({"text": "x"})).await.unwrap();
    assert_eq!(
        seen.take(),
        ["outer:shout", "inner:shout", "inner:done", "outer:done"],
        "add's layers are its own"
    );
}

#[test]
fn a_tool_layer_naming_no_tool_is_a_start_up_error() {
    let error = builder().tool_layer("ad", ConcurrencyLimit::new(1)).build().expect_err("refused");
    assert!(error.to_string().contains("`tool_layer` names `ad`, which is not a tool"), "{error}");
}

#[tokio::test]
async fn a_failing_or_panicking_layer_is_answered_like_a_failing_tool_and_the_server_goes_on() {
    let fails = tower::layer::layer_fn(|inner: ToolService| {
        tower::service_fn(move |call: ToolCall| {
            let inner = inner.clone();
            async move {
                match call.name() {
                    "shout" => Err("the quota service is down".into()),
                    "add" if call.arguments_json()["a"] == 13 => panic!("unlucky"),
                    _ => inner.oneshot(call).await,
                }
            }
        })
    });
    let panics_at_once = tower::layer::layer_fn(|inner: ToolService| {
        tower::service_fn(move |call: ToolCall| {
            if call.arguments_json()["a"] == 7 {
                panic!("seven");
            }
            inner.clone().oneshot(call)
        })
    });
    let server = builder().layer(fails).layer(panics_at_once).build().unwrap();
    for client in clients(&server).await {
        let failed = client.call("shout", json!({"text": "x"})).await.unwrap();
        assert!(
            failed.is_error() && failed.text().contains("the quota service is down"),
            "{}",
            failed.text()
        );
        for a in [13, 7] {
            let panicked = client.call("add", json!({"a": a, "b": 0})).await.unwrap();
            assert!(
                panicked.is_error() && panicked.text().contains("a layer around it panicked"),
                "{}",
                panicked.text()
            );
        }
        assert_eq!(client.call("add", json!({"a": 1, "b": 1})).await.unwrap().text(), "2", "still serving");
    }
}

#[tokio::test]
async fn a_call_waiting_in_a_layer_is_cancelled_or_timed_out_like_any_call() {
    let forever = tower::layer::layer_fn(|inner: ToolService| {
        tower::service_fn(move |call: ToolCall| {
            let inner = inner.clone();
            async move {
                if call.name() == "shout" {
                    std::future::pending::<()>().await;
                }
                inner.oneshot(call).await
            }
        })
    });
    let server = builder()
        .layer(forever)
        .limits(Limits::new().request_timeout(Some(Duration::from_millis(200))))
        .build()
        .unwrap();
    for client in clients(&server).await {
        let timed_out = client.call("shout", json!({"text": "x"})).await.unwrap();
        assert!(
            timed_out.is_error() && timed_out.text().contains("did not finish within"),
            "{}",
            timed_out.text()
        );
        // Cancelled by the client: no answer, and the server serves the next call.
        let id = client.send_request("tools/call", json!({"name": "shout", "arguments": {"text": "y"}}));
        client.notify("notifications/cancelled", json!({"requestId": id}));
        assert_eq!(client.call("add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
    }
}

#[tokio::test]
async fn a_layer_sees_the_calls_context() {
    let seen = Seen::default();
    let record = seen.clone();
    let context = around(move |call| {
        let ctx = call.context();
        record.push(format!(
            "{} {:?} {} {}",
            call.name(),
            ctx.era(),
            ctx.request_id(),
            ctx.meta().get("traceparent").and_then(Value::as_str).unwrap_or("-")
        ));
        record.push(format!("caller {}", ctx.caller_id()));
        None
    });
    let server = builder().layer(context).build().unwrap();
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    for client in clients(&server).await {
        let id = client.send_request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": {"traceparent": parent}}),
        );
        client.answer(id).await.unwrap();
        let seen = seen.take();
        assert!(seen[0].starts_with("add ") && seen[0].ends_with(&format!(" {id} {parent}")), "{seen:?}");
        assert!(seen[1].starts_with("caller connection:"), "{seen:?}");
    }
}

#[tokio::test]
async fn deferred_calls_go_through_the_layers_as_the_tool_they_run() {
    let seen = Seen::default();
    let server =
        builder().defer_tools(DeferredTools::new()).layer(recording("log", seen.clone())).build().unwrap();
    for client in clients(&server).await {
        let found = client.call("search_tools", json!({"query": "add numbers"})).await.unwrap();
        assert!(found.text().contains("\"add\""), "{}", found.text());
        let called =
            client.call("call_tool", json!({"name": "add", "arguments": {"a": 4, "b": 4}})).await.unwrap();
        assert_eq!(called.text(), "8");
        assert_eq!(
            seen.take(),
            ["log:search_tools", "log:done", "log:add", "log:done"],
            "call_tool is not seen, add is"
        );
    }
}

#[tokio::test]
async fn a_tools_concurrency_limit_makes_its_calls_wait_their_turn() {
    let server = builder().tool_layer("nap", ConcurrencyLimit::new(1)).build().unwrap();
    let client = TestClient::connect(&server).await;
    let ids: Vec<i64> = (0..3)
        .map(|_| client.send_request("tools/call", json!({"name": "nap", "arguments": {"millis": 50}})))
        .collect();
    for id in ids {
        assert_eq!(client.answer(id).await.unwrap()["content"][0]["text"], "slept 50 ms");
    }
    assert_eq!(NAPPING.1.load(Ordering::SeqCst), 1, "one at a time");
    // With a bound on waiting calls, the ones beyond it are refused at once.
    let server = builder().tool_layer("nap", ConcurrencyLimit::new(1).max_waiting(1)).build().unwrap();
    let client = TestClient::connect(&server).await;
    let ids: Vec<i64> = (0..3)
        .map(|_| client.send_request("tools/call", json!({"name": "nap", "arguments": {"millis": 200}})))
        .collect();
    let mut texts = Vec::new();
    for id in ids {
        texts.push(client.answer(id).await.unwrap()["content"][0]["text"].as_str().unwrap().to_owned());
    }
    assert_eq!(texts.iter().filter(|t| t.contains("is busy")).count(), 1, "{texts:?}");
    assert_eq!(texts.iter().filter(|t| t.starts_with("slept")).count(), 2, "{texts:?}");
}

// ---------------------------------------------------------------------------------------------
// Over HTTP, with two callers.

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789ab";

fn app(server: &Server) -> Router {
    let tokens = StaticTokens::new()
        .token(ALICE, AuthInfo::new("alice").scopes(["admin"]))
        .unwrap()
        .token(BOB, AuthInfo::new("bob"))
        .unwrap();
    server.http_router(
        HttpOptions::new().authorization(Authorization::new("http://localhost/mcp", tokens).unwrap()),
    )
}

/// A 2026-07-28 POST by the holder of `token`; its answer.
async fn stateless(app: &Router, token: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = app.clone().oneshot(request.body(Body::from(body.to_string())).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn over_http_a_layer_sees_who_calls_and_a_panic_in_it_is_answered() {
    let seen = Seen::default();
    let record = seen.clone();
    let who = around(move |call| {
        let caller = call.context().auth().and_then(|a| a.subject.clone()).unwrap_or_default();
        record.push(format!("{caller} {}", call.context().caller_id()));
        (caller == "bob" && call.name() == "shout").then(|| panic!("bob may not shout"))
    });
    let server = builder().layer(who).build().unwrap();
    let app = app(&server);
    let added =
        stateless(&app, ALICE, "tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 1}})).await;
    assert_eq!(added["result"]["content"][0]["text"], "2");
    let refused =
        stateless(&app, BOB, "tools/call", json!({"name": "shout", "arguments": {"text": "x"}})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(seen.take(), ["alice sub:alice", "bob sub:bob"]);
    let again =
        stateless(&app, BOB, "tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 2}})).await;
    assert_eq!(again["result"]["content"][0]["text"], "4", "still serving");
}

// ---------------------------------------------------------------------------------------------
// List filters: what each caller is shown.

/// Administrators see everything; others see no `admin_` tool, no `secret` resource or prompt,
/// and every tool description says who it is for.
struct ByRole;

impl ByRole {
    fn admin(viewer: &Viewer<'_>) -> bool {
        viewer.auth().is_some_and(|a| a.has_scope("admin"))
    }
}

impl ListFilter for ByRole {
    fn tool(&self, viewer: &Viewer<'_>, tool: &mut Map<String, Value>) -> bool {
        let admin = ByRole::admin(viewer);
        if !admin && tool["name"].as_str().unwrap_or_default().starts_with("admin_") {
            return false;
        }
        let description = tool["description"].as_str().unwrap_or_default().to_owned();
        tool.insert(
            "description".into(),
            json!(format!("{description} (for {})", if admin { "admins" } else { "users" })),
        );
        true
    }
    fn resource(&self, viewer: &Viewer<'_>, resource: &mut Map<String, Value>) -> bool {
        ByRole::admin(viewer) || resource["uri"] != "notes://secret"
    }
    fn prompt(&self, viewer: &Viewer<'_>, prompt: &mut Map<String, Value>) -> bool {
        ByRole::admin(viewer) || prompt["name"] != "secret_prompt"
    }
}

fn filtered_server(deferred: bool) -> Server {
    let admin_tool = Tool::new("admin_purge", "Purge every note.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().text("purged"))
    });
    let fixed = |uri: &str| Resource::fixed(uri, uri, ResourceContents::text(uri, None, "text"));
    let prompt = |name: &str| {
        Prompt::new(name, "A prompt.", |_, _| async {
            Ok(PromptResult::new(vec![PromptMessage::user("hi")]))
        })
    };
    let mut builder = builder()
        .tool(admin_tool)
        .resource(fixed("notes://public"))
        .resource(fixed("notes://secret"))
        .prompt(prompt("open_prompt"))
        .prompt(prompt("secret_prompt"))
        .list_filter(ByRole);
    if deferred {
        builder = builder.defer_tools(DeferredTools::new());
    }
    builder.build().unwrap()
}

fn names(items: &Value, key: &str) -> Vec<String> {
    items.as_array().unwrap().iter().map(|i| i[key].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn each_caller_is_shown_what_the_list_filter_keeps_as_it_rewrites_it() {
    let server = filtered_server(false);
    let app = app(&server);
    for (token, admin) in [(ALICE, true), (BOB, false)] {
        let tools = stateless(&app, token, "tools/list", json!({})).await;
        let listed = names(&tools["result"]["tools"], "name");
        assert_eq!(listed.contains(&"admin_purge".to_owned()), admin, "{listed:?}");
        let add = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "add").unwrap();
        let suffix = if admin { "(for admins)" } else { "(for users)" };
        assert!(add["description"].as_str().unwrap().ends_with(suffix), "{add}");
        assert_eq!(tools["result"]["cacheScope"], "private", "a filtered list is nobody else's");
        let resources = stateless(&app, token, "resources/list", json!({})).await;
        assert_eq!(
            names(&resources["result"]["resources"], "uri").contains(&"notes://secret".to_owned()),
            admin
        );
        let prompts = stateless(&app, token, "prompts/list", json!({})).await;
        assert_eq!(names(&prompts["result"]["prompts"], "name").contains(&"secret_prompt".to_owned()), admin);
    }
    // In process (no identity: a user) and in the 2025-11-25 era too.
    let session = TestClient::connect(&server).await;
    let listed: Vec<Value> = session.list_tools().await.unwrap();
    assert!(listed.iter().all(|t| t["name"] != "admin_purge"));
    assert!(listed.iter().all(|t| t["description"].as_str().unwrap().ends_with("(for users)")));
}

#[tokio::test]
async fn deferred_search_and_describe_show_each_caller_what_the_filter_keeps() {
    let server = filtered_server(true);
    let app = app(&server);
    for (token, admin) in [(ALICE, true), (BOB, false)] {
        let found = stateless(
            &app,
            token,
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "purge every note"}}),
        )
        .await;
        let text = found["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text.contains("admin_purge"), admin, "{text}");
        let described = stateless(
            &app,
            token,
            "tools/call",
            json!({"name": "describe_tools", "arguments": {"names": ["admin_purge", "add"]}}),
        )
        .await;
        let structured = &described["result"]["structuredContent"];
        let shown = names(&structured["tools"], "name");
        assert_eq!(shown.contains(&"admin_purge".to_owned()), admin, "{described}");
        let add = structured["tools"].as_array().unwrap().iter().find(|t| t["name"] == "add").unwrap();
        assert!(add["description"].as_str().unwrap().contains(if admin {
            "(for admins)"
        } else {
            "(for users)"
        }));
    }
}

#[tokio::test]
async fn a_tool_hidden_from_the_list_is_still_called_by_name() {
    let server = filtered_server(false);
    let client = TestClient::connect(&server).await;
    assert_eq!(
        client.call("admin_purge", json!({})).await.unwrap().text(),
        "purged",
        "hiding is not refusing"
    );
    let counted = Arc::new(AtomicUsize::new(0));
    let count = counted.clone();
    let server = builder()
        .layer(around(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            None
        }))
        .build()
        .unwrap();
    let client = TestClient::connect(&server).await;
    client.list_tools().await.unwrap();
    assert_eq!(counted.load(Ordering::SeqCst), 0, "listing is not calling");
}

#[tokio::test]
async fn over_stdio_a_layer_wraps_calls_and_its_panic_is_answered() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let seen = Seen::default();
    let panics = around(|call| (call.name() == "shout").then(|| panic!("no shouting")));
    let server = builder().layer(recording("log", seen.clone())).layer(panics).build().unwrap();
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(async move { server.serve(server_in, server_out).await });
    let mut lines = BufReader::new(output).lines();
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let calls = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shout", "arguments": {"text": "x"}, "_meta": envelope}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 5}, "_meta": envelope}}),
    ];
    for call in &calls {
        input.write_all(format!("{call}\n").as_bytes()).await.unwrap();
        let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        match &answer["id"] {
            id if *id == 1 => {
                assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("panicked"))
            }
            _ => assert_eq!(answer["result"]["content"][0]["text"], "7", "{answer}"),
        }
    }
    drop(input);
    assert!(served.await.unwrap().is_ok(), "the server ends cleanly");
    assert_eq!(seen.take(), ["log:add", "log:done"], "the panicking layer is outside the recording one");
}

#[tokio::test]
async fn a_call_that_becomes_a_task_stays_inside_its_layers_until_it_ends() {
    let seen = Seen::default();
    let job = Tool::new("job", "A long job.", json!({"type": "object"}), |_, _| async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        Ok(ToolResult::new().text("job done"))
    })
    .task(mcp_tools::TaskSupport::Required);
    let server = builder().tool(job).layer(recording("log", seen.clone())).build().unwrap();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let client = TestClient::connect_stateless_with(&server, tasks, |_, _| unreachable!());
    let created = client.call("job", json!({})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(seen.take(), ["log:job"], "the handle is sent while the call runs on inside the layer");
    for _ in 0..500 {
        let task = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
        if task["status"] == "completed" {
            assert_eq!(task["result"]["content"][0]["text"], "job done");
            assert_eq!(seen.take(), ["log:done"], "the layer saw the task's end");
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task never completed");
}
