//! The hostile-input suite: a table of inputs a hostile or broken client sends, each with the
//! exact answer expected, run over stdio (the real line transport, in process) and over HTTP
//! (the real router). After every case a normal call must still work: nothing a client sends
//! stops the server from serving.
//!
//! `cargo test --test hostile`; the cases are listed in `CASES` below.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use mcp_tools::{
    Args, HttpOptions, Limits, Prompt, Resource, ResourceContents, ResourceTemplate, Server, ToolError, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tower::ServiceExt as _;

// ---------------------------------------------------------------------------------------------
// The server under attack.

/// Echo the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

#[derive(Deserialize, JsonSchema)]
struct Bounded {
    /// At most 10.
    #[schemars(range(max = 10))]
    n: u32,
    /// One to eight characters.
    #[schemars(length(min = 1, max = 8))]
    word: Option<String>,
}

/// Take a small number.
#[tool]
async fn bounded(Args(b): Args<Bounded>) -> String {
    format!("{} {}", b.n, b.word.unwrap_or_default())
}

#[derive(Deserialize, JsonSchema)]
struct Style {
    /// A colour name.
    color: Option<String>,
    /// Points.
    size: Option<u32>,
}

/// Style some text.
#[tool]
async fn styled(text: String, style: Style) -> String {
    format!("{text} in {} at {}", style.color.unwrap_or_default(), style.size.unwrap_or(12))
}

/// Always panics.
#[tool]
async fn explode() -> String {
    panic!("boom")
}

/// Sleeps far longer than it may.
#[tool(timeout = "100ms")]
async fn sluggish() -> String {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "done".into()
}

fn server() -> Server {
    Server::builder()
        .name("hostile")
        .limits(
            Limits::new()
                .max_subscriptions(2)
                .max_capabilities_size(1024)
                .max_in_flight_per_connection(4)
                .write_timeout(Duration::from_millis(500)),
        )
        .resource(Resource::fixed("test://a", "a", ResourceContents::text("test://a", None, "A")))
        .resource(Resource::fixed("test://b", "b", ResourceContents::text("test://b", None, "B")))
        .resource(Resource::fixed("test://c", "c", ResourceContents::text("test://c", None, "C")))
        .resource(Resource::new("test://sync-panic", "sync-panic", |_, _| -> std::future::Ready<_> {
            panic!("a synchronous panic in a resource closure")
        }))
        .resource(Resource::new("test://async-panic", "async-panic", |_, _| async {
            if true {
                panic!("a panic in a resource's future");
            }
            Ok::<_, ToolError>(Vec::new())
        }))
        .resource_template(ResourceTemplate::new("files://{+path}", "files", |request, _| async move {
            let path = request.param("path").unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), path)])
        }))
        .resource_template(ResourceTemplate::new("notes://{id}", "notes", |request, _| async move {
            let id = request.param("id").unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), id)])
        }))
        .prompt(Prompt::new("explode", "Panics.", |_, _| async {
            if true {
                panic!("a panic in a prompt");
            }
            Ok(mcp_tools::PromptResult::new(Vec::new()))
        }))
        .completer(|_, _| async {
            if true {
                panic!("a panic in the completer");
            }
            Vec::new()
        })
        .build()
        .expect("the hostile server builds")
}

// ---------------------------------------------------------------------------------------------
// The cases.

/// What a case expects back.
#[derive(Clone, Debug)]
enum Expect {
    /// A JSON-RPC error with this id (`Value::Null`: none), code, and message containing the text.
    Error(Value, i64, &'static str),
    /// A result whose JSON text contains the text.
    Result(Value, &'static str),
    /// A tool result with `isError: true` whose text contains the text.
    ToolError(Value, &'static str),
    /// No answer at all (a notification, a response, a blank line).
    Nothing,
}

use Expect::{Error, Nothing, Result as Ok_, ToolError as ToolErr};

/// Where the input goes: a session already initialized, a fresh connection, or a fresh
/// connection of the stateless revision (2026-07-28: no session, and after the case the normal
/// call is a 2026-07-28 one too).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Setup {
    Initialized,
    Fresh,
    Stateless,
}

struct Case {
    name: &'static str,
    setup: Setup,
    /// Requests sent (and answered) before the input.
    prelude: Vec<Value>,
    input: Vec<u8>,
    expect: Expect,
    /// The HTTP status when it is not the one the expectation implies.
    http_status: Option<StatusCode>,
    /// Whether the case applies to HTTP (stdio framing cases do not).
    http: bool,
}

fn case(name: &'static str, input: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        setup: Setup::Initialized,
        prelude: Vec::new(),
        input: input.into(),
        expect,
        http_status: None,
        http: true,
    }
}

impl Case {
    fn fresh(mut self) -> Self {
        self.setup = Setup::Fresh;
        self
    }
    fn stateless(mut self) -> Self {
        self.setup = Setup::Stateless;
        self
    }
    fn after(mut self, prelude: Vec<Value>) -> Self {
        self.prelude = prelude;
        self
    }
    fn http_status(mut self, status: StatusCode) -> Self {
        self.http_status = Some(status);
        self
    }
    fn stdio_only(mut self) -> Self {
        self.http = false;
        self
    }
}

fn call(id: i64, name: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        .to_string()
        .into_bytes()
}

fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string().into_bytes()
}

/// A 2026-07-28 request: `params` with the envelope (declaring the tasks extension).
fn stateless(id: i64, method: &str, mut params: Value) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    request(id, method, params)
}

fn subscribe(id: i64, uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}})
}

const PARSE: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL: i64 = -32603;
const RESOURCE_NOT_FOUND: i64 = -32002;

fn cases() -> Vec<Case> {
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":{}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let huge_name = "m".repeat(1 << 20);
    let huge_uri = format!("test://{}", "u".repeat(1 << 20));
    let capabilities = json!({"experimental": {"padding": "x".repeat(100 * 1024)}});
    let initialize = |capabilities: Value| {
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
    };
    let unasked: serde_json::Map<String, Value> =
        (0..50_000).map(|i| (format!("q{i}"), json!({"action": "accept"}))).collect();
    let mut hundred_mb = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"".to_vec();
    hundred_mb.resize(100 << 20, b'a');
    vec![
        // Not JSON, or not one JSON object.
        case("invalid JSON", "{nope", Error(Value::Null, PARSE, "invalid JSON")),
        case("truncated JSON", r#"{"jsonrpc":"2.0","id":1,"#, Error(Value::Null, PARSE, "invalid JSON")),
        case("trailing garbage", r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, Error(Value::Null, PARSE, "invalid JSON")),
        case("invalid UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}".to_vec(), Error(Value::Null, PARSE, "invalid JSON")),
        case("a byte-order mark", b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_vec(), Error(Value::Null, PARSE, "invalid JSON")),
        case("a raw NUL in a string", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"a\x00b\"}}".to_vec(), Error(Value::Null, PARSE, "invalid JSON")),
        case("an escaped NUL is just a character", call(1, "echo", json!({"text": "a\u{0}b"})), Ok_(json!(1), r#""text":"a\u0000b""#)),
        case("a lone surrogate", br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}"#.to_vec(), ToolErr(json!(1), "/text: unexpected end of hex escape")),
        case("a batch", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Error(Value::Null, INVALID_REQUEST, "batches are not supported")),
        case("an empty batch", "[]", Error(Value::Null, INVALID_REQUEST, "batches are not supported")),
        case("an array-shaped message", r#"["2.0",5,"ping"]"#, Error(Value::Null, INVALID_REQUEST, "batches are not supported")),
        case("a number", "42", Error(Value::Null, INVALID_REQUEST, "a message is a JSON object")),
        case("a string", r#""ping""#, Error(Value::Null, INVALID_REQUEST, "a message is a JSON object")),
        case("null", "null", Error(Value::Null, INVALID_REQUEST, "a message is a JSON object")),
        case("100 000 nested arrays", deep, Error(Value::Null, INVALID_REQUEST, "deeper than this server's limit of 64")),
        case("a 100 MB message", hundred_mb, Error(Value::Null, INVALID_REQUEST, "exceeds this server's limit of 4194304 bytes"))
            .http_status(StatusCode::PAYLOAD_TOO_LARGE),
        case("a blank line", "   ", Nothing).stdio_only(),
        // Not JSON-RPC 2.0.
        case("an empty object", "{}", Error(Value::Null, INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"")),
        case("no jsonrpc member", r#"{"id":3,"method":"ping"}"#, Error(json!(3), INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"")),
        case("JSON-RPC 1.0", r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, Error(json!(3), INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"")),
        case("a duplicate member", r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "duplicate field `id`")),
        case("a method that is not a string", r#"{"jsonrpc":"2.0","id":4,"method":5}"#, Error(Value::Null, INVALID_REQUEST, "not a JSON-RPC message")),
        case("neither method nor result", r#"{"jsonrpc":"2.0","id":4}"#, Error(json!(4), INVALID_REQUEST, "needs a \"method\"")),
        // Bad ids.
        case("a null id", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "id must be a string or an integer")),
        case("a fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "id must be a string or an integer")),
        case("an object id", r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "id must be a string or an integer")),
        case("a boolean id", r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "id must be a string or an integer")),
        case("an id beyond 64 bits", r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#, Error(Value::Null, INVALID_REQUEST, "id must be a string or an integer")),
        case("a string id is fine", r#"{"jsonrpc":"2.0","id":"a-b","method":"ping"}"#, Ok_(json!("a-b"), "{}")),
        // Methods.
        case("an unknown method", request(5, "nope/nope", json!({})), Error(json!(5), NOT_FOUND, "method not found: `nope/nope`")),
        case("a 1 MiB method name (not echoed whole)", request(5, &huge_name, json!({})), Error(json!(5), NOT_FOUND, "(1048576 bytes)")),
        case("a notification's method sent with an id", request(6, "notifications/initialized", json!({})), Error(json!(6), NOT_FOUND, "method not found")),
        case("tools/call without params", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#, Error(json!(7), INVALID_PARAMS, "tools/call needs params")),
        case("tools/call with string params", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"echo"}"#, Error(json!(7), INVALID_PARAMS, "invalid tools/call params")),
        case("an unknown tool", call(7, "nope", json!({})), Error(json!(7), INVALID_PARAMS, "unknown tool `nope`")),
        // Arguments.
        case("an argument of the wrong type", call(8, "echo", json!({"text": 5})), ToolErr(json!(8), "/text")),
        case("a missing argument", call(8, "echo", json!({})), ToolErr(json!(8), "\"text\" is a required property")),
        case("arguments that are not an object", call(8, "echo", json!([1])), ToolErr(json!(8), "must be a JSON object")),
        case("a number above its declared maximum", call(8, "bounded", json!({"n": 5000})), ToolErr(json!(8), "5000 is greater than the maximum of 10")),
        case("a string longer than declared", call(8, "bounded", json!({"n": 1, "word": "much too long"})), ToolErr(json!(8), "/word")),
        case("valid constrained arguments", call(8, "bounded", json!({"n": 10, "word": "ok"})), Ok_(json!(8), "10")),
        case("an undeclared field of Args<T>", call(8, "bounded", json!({"n": 1, "extra": true})), ToolErr(json!(8), "/extra: unknown field")),
        case("a misspelt field in a nested struct", call(8, "styled", json!({"text": "a", "style": {"colour": "red"}})), ToolErr(json!(8), "/style/colour: unknown field")),
        case("valid nested arguments", call(8, "styled", json!({"text": "a", "style": {"color": "red"}})), Ok_(json!(8), "a in red at 12")),
        // Handlers that fail.
        case("a panicking tool", call(9, "explode", json!({})), ToolErr(json!(9), "its handler panicked")),
        case("a tool past its timeout", call(9, "sluggish", json!({})), ToolErr(json!(9), "did not finish within 100ms")),
        case("a synchronous panic in a resource closure", request(9, "resources/read", json!({"uri": "test://sync-panic"})), Error(json!(9), INTERNAL, "its handler panicked")),
        case("a panic in a resource's future", request(9, "resources/read", json!({"uri": "test://async-panic"})), Error(json!(9), INTERNAL, "its handler panicked")),
        case("a panicking prompt", request(9, "prompts/get", json!({"name": "explode"})), Error(json!(9), INTERNAL, "its handler panicked")),
        case("a panicking completer", request(9, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "explode"}, "argument": {"name": "a", "value": ""}})), Error(json!(9), INTERNAL, "its handler panicked")),
        // Resources.
        case("a template variable spanning segments", request(10, "resources/read", json!({"uri": "files://a/b.txt"})), Ok_(json!(10), r#""text":"a/b.txt""#)),
        case("a template variable with `..`", request(10, "resources/read", json!({"uri": "files://a/../../etc/passwd"})), Error(json!(10), RESOURCE_NOT_FOUND, "Resource not found")),
        case("a simple template variable with `/`", request(10, "resources/read", json!({"uri": "notes://a/b"})), Error(json!(10), RESOURCE_NOT_FOUND, "Resource not found")),
        case("subscribing to an unknown resource", subscribe(11, "test://nope").to_string(), Error(json!(11), INVALID_PARAMS, "no such resource")),
        case("subscribing to a 1 MiB URI (not echoed whole)", subscribe(11, &huge_uri).to_string(), Error(json!(11), INVALID_PARAMS, "(1048583 bytes)")),
        case("one subscription too many", subscribe(11, "test://c").to_string(), Error(json!(11), INVALID_PARAMS, "already has 2 subscriptions"))
            .after(vec![subscribe(21, "test://a"), subscribe(22, "test://b")]),
        // 2026-07-28: what a listen stream follows, tasks, the answers of input rounds.
        case("listening to a resource this server does not serve", stateless(12, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": ["test://nope"]}})), Error(json!(12), INVALID_PARAMS, "no such resource"))
            .stateless().http_status(StatusCode::BAD_REQUEST),
        case("listening to more resources than a stream may follow", stateless(12, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": ["test://a", "test://b", "test://c"]}})), Error(json!(12), INVALID_PARAMS, "at most 2 resources and tasks"))
            .stateless().http_status(StatusCode::BAD_REQUEST),
        case("listening to a task that is not the caller's", stateless(12, "subscriptions/listen", json!({"notifications": {"taskIds": ["0123456789abcdef0123456789abcdef"]}})), Error(json!(12), INVALID_PARAMS, "unknown task"))
            .stateless().http_status(StatusCode::BAD_REQUEST),
        case("reading a task that is not the caller's", stateless(12, "tasks/get", json!({"taskId": "0123456789abcdef0123456789abcdef"})), Error(json!(12), INVALID_PARAMS, "unknown task"))
            .stateless().http_status(StatusCode::BAD_REQUEST),
        case("a requestState larger than any issued", stateless(12, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}, "requestState": format!("v1.{}.sig", "A".repeat(2 << 20))})), Error(json!(12), INVALID_PARAMS, "larger than any this server issues"))
            .stateless().http_status(StatusCode::BAD_REQUEST),
        case("50 000 answers to questions never asked", stateless(12, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}, "inputResponses": unasked})), Ok_(json!(12), r#""text":"x""#))
            .stateless(),
        // Notifications and responses: never answered.
        case("an unknown notification", r#"{"jsonrpc":"2.0","method":"notifications/nope"}"#, Nothing),
        case("cancelling an unknown request", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}"#, Nothing),
        case("a malformed cancellation", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#, Nothing),
        case("a response to nothing", r#"{"jsonrpc":"2.0","id":99,"result":{}}"#, Nothing),
        case("a null result to nothing", r#"{"jsonrpc":"2.0","id":99,"result":null}"#, Nothing),
        case("an error response to nothing", r#"{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}"#, Nothing),
        case("a response without an id", r#"{"jsonrpc":"2.0","result":{}}"#, Nothing),
        // The lifecycle.
        case("a second initialize", initialize(json!({})), Error(json!(1), INVALID_REQUEST, "already initialized")).stdio_only(),
        case("a request before initialize", request(2, "tools/list", json!({})), Error(json!(2), INVALID_REQUEST, "before `initialize`")).fresh().stdio_only(),
        case("ping before initialize", request(2, "ping", json!({})), Ok_(json!(2), "{}")).fresh().stdio_only(),
        case("huge declared capabilities", initialize(capabilities), Error(json!(1), INVALID_PARAMS, "more than this server's limit of 1024")).fresh(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Over stdio: the real line transport on an in-memory pipe.

struct Stdio {
    input: DuplexStream,
    output: BufReader<DuplexStream>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    fn open(server: &Server) -> Stdio {
        let (input, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, output) = tokio::io::duplex(1 << 16);
        let server = server.clone();
        let served = tokio::spawn(async move { server.serve(server_in, server_out).await });
        Stdio { input, output: BufReader::new(output), served }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(10), self.output.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn initialize(&mut self) {
        self.send(&request(0, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))).await;
        assert!(self.recv().await.get("result").is_some());
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    }

    /// A normal call answers, and is the next thing the server says.
    async fn still_serves(&mut self, what: &str) {
        self.send(&call(1000, "echo", json!({"text": "still here"}))).await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], 1000, "{what}: the next message is the normal call's answer: {answer}");
        assert_eq!(answer["result"]["content"][0]["text"], "still here", "{what}");
    }
}

/// Whether `answer` is what `expect` says; every difference, in words.
fn check(name: &str, expect: &Expect, answer: &Value) -> Result<(), String> {
    let fail = |what: String| Err(format!("{name}: {what}\n    got {}", shown(answer)));
    let id_is = |id: &Value| &answer["id"] == id;
    match expect {
        Error(id, code, text) => {
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            if !id_is(id) || answer["error"]["code"] != *code || !message.contains(text) {
                return fail(format!("expected error {code} with id {id} containing {text:?}"));
            }
            if message.len() > 2048 {
                return fail(format!("a short message, not {} bytes", message.len()));
            }
        }
        Ok_(id, text) => {
            if !id_is(id) || !answer.get("result").is_some_and(|r| r.to_string().contains(text)) {
                return fail(format!("expected a result with id {id} containing {text:?}"));
            }
        }
        ToolErr(id, text) => {
            let content = answer["result"]["content"].as_array().cloned().unwrap_or_default();
            let said: String = content.iter().filter_map(|c| c["text"].as_str()).collect();
            if !id_is(id) || answer["result"]["isError"] != true || !said.contains(text) {
                return fail(format!("expected an isError result with id {id} containing {text:?}"));
            }
        }
        Nothing => return fail("expected no answer".into()),
    }
    Ok(())
}

fn shown(answer: &Value) -> String {
    let text = answer.to_string();
    if text.len() > 400 { format!("{}…", &text[..400]) } else { text }
}

#[tokio::test]
async fn every_hostile_input_over_stdio_gets_its_answer_and_the_server_keeps_serving() {
    let server = server();
    let cases = cases();
    assert!(cases.len() >= 60, "the suite has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let mut stdio = Stdio::open(&server);
        if case.setup == Setup::Initialized {
            stdio.initialize().await;
        }
        for message in &case.prelude {
            stdio.send(message.to_string().as_bytes()).await;
            assert!(stdio.recv().await.get("result").is_some(), "{}: prelude", case.name);
        }
        stdio.send(&case.input).await;
        if !matches!(case.expect, Nothing) {
            let answer = stdio.recv().await;
            failures.extend(check(case.name, &case.expect, &answer).err());
        }
        match case.setup {
            Setup::Fresh => stdio.initialize().await,
            Setup::Initialized => {}
            Setup::Stateless => {
                stdio
                    .send(&stateless(
                        1000,
                        "tools/call",
                        json!({"name": "echo", "arguments": {"text": "still here"}}),
                    ))
                    .await;
                let answer = stdio.recv().await;
                assert_eq!(answer["result"]["content"][0]["text"], "still here", "{}: {answer}", case.name);
                drop(stdio.input);
                assert!(stdio.served.await.unwrap().is_ok(), "{}: the server ends cleanly", case.name);
                continue;
            }
        }
        stdio.still_serves(case.name).await;
        drop(stdio.input);
        assert!(
            stdio.served.await.unwrap().is_ok(),
            "{}: the server ends cleanly at end of input",
            case.name
        );
    }
    assert!(failures.is_empty(), "{} cases failed:\n{}", failures.len(), failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Over HTTP: the router, one session per case.

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn post(body: Vec<u8>, session: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    // A 2026-07-28 request's headers repeat its body (as a client's do).
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Some(version) = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() {
        request = request
            .header("mcp-protocol-version", version)
            .header("mcp-method", message["method"].as_str().unwrap_or_default());
        let params = &message["params"];
        if let Some(name) = ["name", "uri", "taskId"].iter().find_map(|k| params[*k].as_str()) {
            request = request.header("mcp-name", name);
        }
    }
    request.body(Body::from(body)).unwrap()
}

/// The status and the first JSON-RPC message of a response (JSON or SSE), if any.
async fn exchange(app: &Router, request: Request<Body>) -> (StatusCode, Option<Value>, Option<String>) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let message = match text.lines().find_map(|l| l.strip_prefix("data: ")).filter(|d| !d.trim().is_empty()) {
        Some(data) => serde_json::from_str(data).ok(),
        None => serde_json::from_str(&text).ok(),
    };
    (status, message, session)
}

async fn http_session(app: &Router) -> String {
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let (status, _, session) = exchange(app, post(init, None)).await;
    assert_eq!(status, StatusCode::OK);
    session.expect("a session id")
}

#[tokio::test]
async fn every_hostile_input_over_http_gets_its_answer_and_the_server_keeps_serving() {
    let app = server().http_router(HttpOptions::new());
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.http).collect();
    assert!(cases.len() >= 55, "the HTTP suite has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let session = match case.setup {
            Setup::Initialized => Some(http_session(&app).await),
            Setup::Fresh | Setup::Stateless => None,
        };
        for message in &case.prelude {
            let (status, answer, _) =
                exchange(&app, post(message.to_string().into_bytes(), session.as_deref())).await;
            assert_eq!(status, StatusCode::OK, "{}: prelude {answer:?}", case.name);
        }
        let (status, answer, _) = exchange(&app, post(case.input.clone(), session.as_deref())).await;
        let expected = case.http_status.unwrap_or(match &case.expect {
            Nothing => StatusCode::ACCEPTED,
            // Messages that are not valid requests.
            Error(_, PARSE | INVALID_REQUEST, _) => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        });
        if status != expected {
            failures.push(format!("{}: status {status}, expected {expected} ({answer:?})", case.name));
        }
        match (&case.expect, answer) {
            (Nothing, None) => {}
            (expect, Some(answer)) => failures.extend(check(case.name, expect, &answer).err()),
            (expect, None) => failures.push(format!("{}: expected {expect:?}, got an empty body", case.name)),
        }
        // A normal call still works (in a new session when the case had none).
        let session = match session {
            Some(session) => session,
            None => http_session(&app).await,
        };
        let (status, answer, _) =
            exchange(&app, post(call(1000, "echo", json!({"text": "still here"})), Some(&session))).await;
        assert_eq!(status, StatusCode::OK, "{}: the normal call", case.name);
        assert_eq!(answer.unwrap()["result"]["content"][0]["text"], "still here", "{}", case.name);
    }
    assert!(failures.is_empty(), "{} cases failed:\n{}", failures.len(), failures.join("\n"));
}
