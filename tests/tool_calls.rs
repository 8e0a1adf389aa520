//! The call path through the in-process test client: argument decoding, return types, errors,
//! panics, concurrency, cancellation, progress, logging, state, runtime tools, pagination.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mcp_tools::testing::TestClient;
use mcp_tools::{
    Annotations, Args, Auth, Context, LogLevel, Server, ServerBuilder, State, Tool, ToolError, ToolResult,
    tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Default)]
struct Counter {
    calls: AtomicU32,
}

/// Count calls to this tool.
#[tool(annotations(idempotent = false))]
async fn count(counter: State<Counter>) -> u32 {
    counter.calls.fetch_add(1, Ordering::SeqCst) + 1
}

/// Echo a greeting; `times` defaults to 1.
#[tool]
async fn greet(name: String, #[tool(default = 1)] times: usize, punctuation: Option<String>) -> String {
    let p = punctuation.unwrap_or_else(|| "!".into());
    vec![format!("Hello, {name}{p}"); times].join(" ")
}

#[derive(Deserialize, JsonSchema)]
struct Range {
    /// Start, inclusive.
    from: i64,
    /// End, exclusive.
    to: i64,
}

/// List the integers in a range.
#[tool]
fn range(Args(range): Args<Range>) -> Result<Vec<i64>, ToolError> {
    if range.to - range.from > 1000 {
        return Err(ToolError::new("ranges are limited to 1000 numbers"));
    }
    Ok((range.from..range.to).collect())
}

/// Always panics.
#[tool]
async fn explode(message: String) -> String {
    panic!("boom: {message}");
}

/// Fails with an anyhow error carrying context.
#[tool]
async fn read_config(path: String) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    Ok(text)
}

/// Fails with a plain message, or a boxed error.
#[tool]
async fn fail_plainly(boxed: bool) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    if boxed {
        return Err(std::io::Error::other("the disk is full").into());
    }
    Err("no luck".into())
}

/// Fails with an I/O error.
#[tool]
async fn read_missing() -> std::io::Result<String> {
    std::fs::read_to_string("/definitely/not/here")
}

/// Does nothing.
#[tool]
fn nothing() {}

/// Returns mixed content.
#[tool]
async fn mixed() -> ToolResult {
    ToolResult::new().text("a picture:").image([1u8, 2, 3], "image/png").meta("k", "v")
}

/// Sleeps, then answers with the delay.
#[tool]
async fn sleep_ms(ms: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

/// Closed until the test opens it.
struct Gate(tokio::sync::Semaphore);

impl Default for Gate {
    fn default() -> Self {
        Gate(tokio::sync::Semaphore::new(0))
    }
}

/// Waits until the gate opens.
#[tool]
async fn gated(gate: State<Gate>) -> String {
    let _permit = gate.0.acquire().await.expect("the gate is never closed");
    "through".into()
}

/// Waits until cancelled; records that the handler saw the cancellation.
#[tool]
async fn wait_forever(ctx: Context, counter: State<Counter>) -> String {
    struct OnDrop<'a>(&'a Counter);
    impl Drop for OnDrop<'_> {
        fn drop(&mut self) {
            self.0.calls.fetch_add(100, Ordering::SeqCst);
        }
    }
    let _guard = OnDrop(&counter);
    ctx.cancelled().await;
    "cancelled".into()
}

/// Keeps its thread busy for `ms` milliseconds before it answers (no `.await` on the way).
#[tool]
async fn hog(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

/// Who is calling (only read, never asks).
#[tool]
async fn caller(auth: Auth) -> String {
    auth.info().and_then(|info| info.principal().map(str::to_owned)).unwrap_or_else(|| "anonymous".into())
}

/// Reports progress three times and logs at two levels.
#[tool]
async fn busy(ctx: Context) -> String {
    for step in [0.0, 50.0, 100.0] {
        ctx.report_progress(step, Some(100.0), Some("working"));
    }
    ctx.log(LogLevel::Debug, "a debug detail");
    ctx.log(LogLevel::Warning, json!({"disk": "almost full"}));
    format!("done for {}", ctx.client_info().name)
}

#[derive(Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

/// Describe a shape.
#[tool]
async fn shape(round: bool) -> Shape {
    if round { Shape::Circle { radius: 1.0 } } else { Shape::Square { side: 2.0 } }
}

fn builder() -> ServerBuilder {
    Server::builder().name("calls").state(Counter::default()).state(Gate::default())
}

async fn client() -> TestClient {
    TestClient::connect(&builder().build().expect("builds")).await
}

#[tokio::test]
async fn defaults_and_options_fill_missing_arguments() {
    let c = client().await;
    let r = c.call("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(r.text(), "Hello, Ada!");
    let r = c.call("greet", json!({"name": "Ada", "times": 2})).await.unwrap();
    assert_eq!(r.text(), "Hello, Ada! Hello, Ada!");
    // The advertised schema of an optional argument has no `null`: it is left out, not sent null.
    let r = c.call("greet", json!({"name": "Ada", "punctuation": null})).await.unwrap();
    assert!(r.is_error());
    assert!(
        r.text().contains("- /punctuation: null is not allowed: omit the field instead\n"),
        "{}",
        r.text()
    );
    assert!(r.structured().is_none(), "a string result is plain text");
}

#[tokio::test]
async fn string_results_have_no_output_schema_and_structs_do() {
    let server = builder().build().unwrap();
    assert_eq!(server.tool("greet").unwrap().output_schema, None);
    let range = server.tool("range").unwrap();
    assert_eq!(range.input_schema["required"], json!(["from", "to"]), "Args<T>: the struct's fields");
    assert_eq!(
        range.output_schema.unwrap(),
        json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}}, "required": ["result"]})
    );
}

#[tokio::test]
async fn non_object_outputs_are_wrapped_in_result() {
    let c = client().await;
    let r = c.call("range", json!({"from": 1, "to": 4})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({"result": [1, 2, 3]})));
    assert_eq!(r.text(), r#"{"result":[1,2,3]}"#);
    let r = c.call("count", json!({})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({"result": 1})));
}

#[tokio::test]
async fn internally_tagged_enums_keep_an_object_schema_without_wrapping() {
    let server = builder().build().unwrap();
    let schema = server.tool("shape").unwrap().output_schema.unwrap();
    assert_eq!(schema["type"], "object");
    assert!(schema.get("oneOf").is_some());
    let c = TestClient::connect(&server).await;
    let r = c.call("shape", json!({"round": true})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({"kind": "circle", "radius": 1.0})));
}

#[tokio::test]
async fn errors_are_results_with_the_message() {
    let c = client().await;
    let r = c.call("range", json!({"from": 0, "to": 5000})).await.unwrap();
    assert!(r.is_error());
    assert_eq!(r.text(), "ranges are limited to 1000 numbers");
    let r = c.call("read_missing", json!({})).await.unwrap();
    assert!(r.is_error());
    assert!(r.text().contains("No such file"), "{}", r.text());
}

#[tokio::test]
async fn unit_and_mixed_results() {
    let c = client().await;
    let r = c.call("nothing", json!({})).await.unwrap();
    assert_eq!(r.json(), &json!({"content": []}));
    let r = c.call("mixed", json!({})).await.unwrap();
    assert_eq!(r.content().len(), 2);
    assert_eq!(r.content()[1], json!({"type": "image", "data": "AQID", "mimeType": "image/png"}));
    assert_eq!(r.json()["_meta"], json!({"k": "v"}));
}

#[tokio::test]
async fn a_panicking_handler_is_an_error_result_and_the_server_goes_on() {
    let c = client().await;
    let r = c.call("explode", json!({"message": "x"})).await.unwrap();
    assert!(r.is_error());
    assert!(r.text().contains("panicked"));
    assert!(!r.text().contains("boom"), "panic details stay in the server's log");
    let r = c.call("greet", json!({"name": "still here"})).await.unwrap();
    assert!(!r.is_error());
}

#[tokio::test]
async fn unknown_arguments_and_tools_are_reported() {
    let c = client().await;
    let r = c.call("nothing", json!({"surprise": 1})).await.unwrap();
    assert!(r.is_error());
    assert!(r.text().contains("surprise"), "{}", r.text());
    let e = c.call("nope", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn calls_run_concurrently_and_answer_as_they_finish() {
    let gate = std::sync::Arc::new(Gate::default());
    let server =
        Server::builder().name("calls").state(Counter::default()).state_arc(gate.clone()).build().unwrap();
    let c = TestClient::connect(&server).await;
    let blocked = c.send_request("tools/call", json!({"name": "gated", "arguments": {}}));
    let fast = c.send_request("tools/call", json!({"name": "sleep_ms", "arguments": {"ms": 1}}));
    // The second call is answered while the first still waits at the closed gate.
    let fast_answer = c.answer(fast).await.unwrap();
    assert_eq!(fast_answer["structuredContent"]["result"], 1);
    gate.0.add_permits(1);
    let blocked_answer = c.answer(blocked).await.unwrap();
    assert_eq!(blocked_answer["content"][0]["text"], "through");
}

#[tokio::test]
async fn cancellation_drops_the_handler_and_suppresses_the_answer() {
    let server = builder().build().unwrap();
    let c = TestClient::connect(&server).await;
    let id = c.send_request("tools/call", json!({"name": "wait_forever", "arguments": {}}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    c.notify("notifications/cancelled", json!({"requestId": id, "reason": "user"}));
    // The next request is answered; the cancelled one never is.
    let r = c.call("count", json!({})).await.unwrap();
    // `count` adds 1; the dropped handler's guard added 100.
    assert_eq!(r.structured(), Some(&json!({"result": 101})));
    let late = tokio::time::timeout(Duration::from_millis(200), c.answer(id)).await;
    assert!(late.is_err(), "no answer for a cancelled request");
}

#[tokio::test]
async fn progress_is_sent_only_with_a_token_and_logs_honour_the_level() {
    let c = client().await;
    let r = c.call("busy", json!({})).await.unwrap();
    assert_eq!(r.text(), "done for mcp-tools-test");
    let n = c.take_notifications().await;
    let methods: Vec<&str> = n.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["notifications/message"], "no token: no progress; default level info drops debug");

    c.request("logging/setLevel", json!({"level": "debug"})).await.unwrap();
    c.call_with_progress("busy", json!({}), "tok-1").await.unwrap();
    let n = c.take_notifications().await;
    let progress: Vec<&Value> = n.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3);
    assert_eq!(
        progress[1]["params"],
        json!({"progressToken": "tok-1", "progress": 50.0, "total": 100.0, "message": "working"})
    );
    let logs: Vec<&Value> = n.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[1]["params"], json!({"level": "warning", "data": {"disk": "almost full"}}));

    c.request("logging/setLevel", json!({"level": "error"})).await.unwrap();
    c.call("busy", json!({})).await.unwrap();
    assert!(c.take_notifications().await.is_empty());
    let e = c.request("logging/setLevel", json!({"level": "loud"})).await.unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn state_is_shared_between_calls() {
    let c = client().await;
    for expected in 1..=3 {
        let r = c.call("count", json!({})).await.unwrap();
        assert_eq!(r.structured(), Some(&json!({"result": expected})));
    }
}

#[tokio::test]
async fn a_second_initialize_is_rejected() {
    let c = client().await;
    let e = c
        .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32600);
}

#[tokio::test]
async fn tools_list_paginates_with_cursors() {
    let server = builder().page_size(3).build().unwrap();
    let c = TestClient::connect(&server).await;
    let first = c.request("tools/list", json!({})).await.unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 3);
    assert!(first["nextCursor"].is_string());
    let all = c.list_tools().await.unwrap();
    let names: Vec<&str> = all.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by name");
    assert_eq!(names, server.tool_names());
    let e = c.request("tools/list", json!({"cursor": "bogus"})).await.unwrap_err();
    assert_eq!(e.code, -32602);
}

fn echo_tool(validate: bool) -> Tool {
    Tool::new(
        "echo",
        "Echo the arguments back as structured content.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}, "n": {"type": "integer"}},
            "required": ["text"],
            "additionalProperties": false,
            "$defs": {"unused": {"type": "string"}}
        }),
        |args, _ctx| async move { ToolResult::structured(args) },
    )
    .validate_arguments(validate)
    .annotations(Annotations::new().read_only(true))
}

#[tokio::test]
async fn runtime_tools_are_listed_verbatim_and_validated() {
    let server = builder().tool(echo_tool(true)).build().unwrap();
    let c = TestClient::connect(&server).await;
    let tools = c.list_tools().await.unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["inputSchema"]["$defs"], json!({"unused": {"type": "string"}}), "served verbatim");
    assert_eq!(echo["annotations"], json!({"readOnlyHint": true}));

    let r = c.call("echo", json!({"text": "hi", "n": 2})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({"text": "hi", "n": 2})));
    let r = c.call("echo", json!({"text": "", "n": "two", "extra": true})).await.unwrap();
    assert!(r.is_error());
    let text = r.text();
    assert!(text.contains("/text") && text.contains("/n") && text.contains("extra"), "{text}");
}

#[tokio::test]
async fn runtime_tools_without_validation_get_raw_arguments() {
    let server = builder().tool(echo_tool(false)).build().unwrap();
    let c = TestClient::connect(&server).await;
    let r = c.call("echo", json!({"anything": [1]})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({"anything": [1]})));
}

#[tokio::test]
async fn runtime_output_is_checked_against_its_output_schema() {
    let tool = Tool::new("report", "Produce a report.", json!({"type": "object"}), |args, _| async move {
        ToolResult::structured(json!({"pages": args.get("pages").cloned().unwrap_or(json!(1))}))
    })
    .output_schema(
        json!({"type": "object", "properties": {"pages": {"type": "integer"}}, "required": ["pages"]}),
    );
    let server = builder().tool(tool).build().unwrap();
    let c = TestClient::connect(&server).await;
    assert!(!c.call("report", json!({"pages": 3})).await.unwrap().is_error());
    let r = c.call("report", json!({"pages": "many"})).await.unwrap();
    assert!(r.is_error());
    assert!(r.text().contains("/pages"), "{}", r.text());
    assert!(r.structured().is_none(), "the malformed output is not sent");
}

#[tokio::test]
async fn an_output_schema_that_cannot_compile_fails_its_calls_not_the_server() {
    // Output validators are compiled on a tool's first call; a schema the meta-schema accepts but
    // that cannot compile (a pattern that is no regular expression) makes each call an error.
    let tool = Tool::new("report", "Produce a report.", json!({"type": "object"}), |_, _| async {
        ToolResult::structured(json!({"code": "a"}))
    })
    .output_schema(
        json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "(unclosed"}}}),
    );
    let server = builder().tool(tool).build().unwrap();
    let c = TestClient::connect(&server).await;
    for _ in 0..2 {
        let r = c.call("report", json!({})).await.unwrap();
        assert!(r.is_error(), "{r:?}");
        assert!(r.text().contains("declares an output schema that cannot be used"), "{}", r.text());
        assert!(r.structured().is_none());
    }
    assert_eq!(c.call("greet", json!({"name": "Ada"})).await.unwrap().text(), "Hello, Ada!");
}

#[tokio::test]
async fn a_runtime_tool_replaces_one_with_the_same_name() {
    let replacement = Tool::new("greet", "Greet, differently.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().text("replaced"))
    });
    let server = builder().tool(replacement).build().unwrap();
    assert_eq!(server.tool("greet").unwrap().description, "Greet, differently.");
    let c = TestClient::connect(&server).await;
    assert_eq!(c.call("greet", json!({})).await.unwrap().text(), "replaced");
}

#[tokio::test]
async fn the_last_runtime_tool_of_a_name_wins() {
    let text = |t: &'static str| move |_, _| async move { Ok(ToolResult::new().text(t)) };
    // An invalid first `echo` replaced by a valid one is no problem: only the last one counts.
    let invalid = Tool::new("echo2", "Broken.", json!({"type": "string"}), text("broken"));
    let server = Server::builder()
        .inventory(false)
        .tool(invalid)
        .tool(Tool::new("first", "First.", json!({"type": "object"}), text("first")))
        .tool(Tool::new("echo2", "Second.", json!({"type": "object"}), text("second")))
        .tool(Tool::new("last", "Last.", json!({"type": "object"}), text("last")))
        .build()
        .unwrap();
    let listed = server.tools_json();
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["echo2", "first", "last"], "one of each name, listed by name");
    assert_eq!(server.tool("echo2").unwrap().description, "Second.");
    let c = TestClient::connect(&server).await;
    assert_eq!(c.call("echo2", json!({})).await.unwrap().text(), "second");
}

#[tokio::test]
async fn a_runtime_handler_error_or_panic_is_a_result() {
    let failing = Tool::new("fail", "Fail.", json!({"type": "object"}), |_, _| async {
        Err::<ToolResult, _>(ToolError::new("nope"))
    });
    let panicking = Tool::new("panic", "Panic.", json!({"type": "object"}), |_, _| async {
        panic!("runtime boom");
        #[allow(unreachable_code)]
        Ok(ToolResult::new())
    });
    let server = builder().tool(failing).tool(panicking).build().unwrap();
    let c = TestClient::connect(&server).await;
    let r = c.call("fail", json!({})).await.unwrap();
    assert!(r.is_error() && r.text() == "nope");
    let r = c.call("panic", json!({})).await.unwrap();
    assert!(r.is_error() && r.text().contains("panicked"));
}

#[test]
fn bad_runtime_tools_fail_the_build_with_every_problem() {
    let no_object =
        Tool::new("bad name!", "", json!({"type": "string"}), |_, _| async { Ok(ToolResult::new()) })
            .annotations(Annotations::new().read_only(true).destructive(true));
    let bad_schema = Tool::new(
        "bad_schema",
        "Has an invalid schema.",
        json!({"type": "object", "properties": {"a": {"type": 5}}}),
        |_, _| async { Ok(ToolResult::new()) },
    );
    let bad_output =
        Tool::new("bad_output", "Has an invalid output schema.", json!({"type": "object"}), |_, _| async {
            Ok(ToolResult::new())
        })
        .output_schema(json!({"type": "object", "required": "pages"}));
    let err = builder().tool(no_object).tool(bad_schema).tool(bad_output).build().unwrap_err();
    let problems = err.problems().join("\n");
    assert!(problems.contains("runtime tool `bad_output`: its output schema is invalid"), "{problems}");
    assert!(problems.contains("\"bad name!\" contains ' '"), "{problems}");
    assert!(problems.contains("no description"), "{problems}");
    assert!(problems.contains("read-only and destructive"), "{problems}");
    assert!(problems.contains("\"type\": \"object\""), "{problems}");
    assert!(problems.contains("bad_schema"), "{problems}");
    assert_eq!(err.problems().len(), 6);
}

#[test]
fn missing_state_is_a_start_up_error_naming_the_tool() {
    let err = Server::builder().build().unwrap_err();
    let problems = err.problems().join("\n");
    assert!(problems.contains("tool `count`"), "{problems}");
    assert!(problems.contains("State<tool_calls::Counter>"), "{problems}");
    assert!(problems.contains("tool `wait_forever`"), "{problems}");
    assert!(
        problems.contains("with `mcp_tools::main!()`, write `fn main()"),
        "how to register it without a builder: {problems}"
    );
}

/// Serves `input` (newline-delimited messages, written at once) over an in-memory stream until
/// it ends; the answers in the order they were written.
async fn serve_lines(input: &str) -> Vec<Value> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let server = builder().build().unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let task = tokio::spawn(async move { server.serve(server_read, server_write).await });
    let (read, mut write) = tokio::io::split(client_end);
    let mut lines = tokio::io::BufReader::new(read).lines();
    write.write_all(input.as_bytes()).await.unwrap();
    // Close our side: the server must still answer the running calls before exiting.
    write.shutdown().await.unwrap();
    let mut answers = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    task.await.unwrap().unwrap();
    answers
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn serve_speaks_newline_delimited_json_over_any_stream() {
    let answers = serve_lines(&[
        INITIALIZE,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"explode","arguments":{"message":"m"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep_ms","arguments":{"ms":50}}}"#,
        "",
    ].join("\n"))
    .await;
    assert_eq!(answers.len(), 3, "{answers:?}");
    let by_id = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(by_id(2)["result"]["isError"], true, "the panic became a result");
    assert_eq!(by_id(3)["result"]["structuredContent"]["result"], 50, "answered after EOF");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_holds_its_thread_does_not_hold_up_the_requests_after_it() {
    // The first `hog` is polled by the reader itself and keeps it 200 ms; after that, requests
    // run as tasks for a while: the second `hog` runs beside the reader, which answers the
    // `ping` at once instead of after it.
    let hog = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hog","arguments":{{"ms":200}}}}}}"#
        )
    };
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    let answers = serve_lines(&[INITIALIZE, &hog(2), &hog(3), ping, ""].join("\n")).await;
    let order: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    assert_eq!(order.len(), 4, "{answers:?}");
    let position = |id: i64| order.iter().position(|&i| i == id).unwrap();
    assert!(position(4) < position(3), "the ping waited for the second hog: {order:?}");
    assert!(answers.iter().all(|a| a.get("error").is_none()), "{answers:?}");
}

#[tokio::test]
async fn anyhow_and_boxed_errors_become_error_results_with_their_causes() {
    let c = client().await;
    let r = c.call("read_config", json!({"path": "/definitely/not/here.toml"})).await.unwrap();
    assert!(r.is_error());
    assert!(
        r.text().starts_with("reading /definitely/not/here.toml: No such file or directory"),
        "the context, then its cause: {}",
        r.text()
    );
    let r = c.call("fail_plainly", json!({"boxed": false})).await.unwrap();
    assert_eq!((r.is_error(), r.text()), (true, "no luck".to_owned()));
    let r = c.call("fail_plainly", json!({"boxed": true})).await.unwrap();
    assert_eq!((r.is_error(), r.text()), (true, "the disk is full".to_owned()));
}

/// Whether the `#[tool]` registered as `name` (in this test binary) can reach its client.
fn reaches_client(name: &str) -> bool {
    let registration = mcp_tools::__private::inventory::iter::<mcp_tools::__private::ToolRegistration>
        .into_iter()
        .find(|registration| registration.name == name)
        .unwrap_or_else(|| panic!("no #[tool] `{name}`"));
    (registration.reaches_client)()
}

#[test]
fn a_tool_reaches_its_client_only_through_a_context_parameter() {
    assert!(!reaches_client("greet"), "arguments only");
    assert!(!reaches_client("nothing"), "no parameter");
    assert!(!reaches_client("range"), "Args<T>");
    assert!(!reaches_client("count"), "State<T> only reads");
    assert!(!reaches_client("caller"), "Auth only reads");
    assert!(reaches_client("busy"), "Context");
    assert!(reaches_client("wait_forever"), "Context beside State<T>");
}
