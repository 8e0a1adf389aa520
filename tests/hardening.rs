//! Limits and failure behaviour that take more than one message to show (the one-message cases
//! are the table of `tests/hostile.rs`): cancellation and id reuse, requests in flight, clients
//! that disconnect or stop reading, slow HTTP clients, session eviction, timeouts.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use mcp_tools::testing::TestClient;
use mcp_tools::{Context, HttpOptions, Limits, Resource, ResourceContents, Server, State, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tower::ServiceExt as _;

/// Calls started and calls whose handler was dropped (cancelled) by the `hold` tool.
#[derive(Default)]
struct Probe {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

struct OnDrop(Arc<Probe>);
impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Holds until cancelled.
#[tool]
async fn hold(probe: State<Probe>) -> String {
    probe.started.fetch_add(1, Ordering::SeqCst);
    let _guard = OnDrop(probe.arc().clone());
    std::future::pending::<()>().await;
    unreachable!()
}

/// Echo the text back.
#[tool]
async fn say(text: String) -> String {
    text
}

/// Sends `count` progress notifications of about 1 KiB each, then answers.
#[tool]
async fn chatter(count: u32, ctx: Context) -> u32 {
    let padding = "x".repeat(1000);
    for i in 0..count {
        ctx.report_progress(f64::from(i), None, Some(&padding));
        if i % 64 == 0 {
            tokio::task::yield_now().await;
        }
    }
    count
}

/// The revision the request was served in.
#[tool]
async fn revision(ctx: Context) -> String {
    ctx.protocol_version().to_owned()
}

/// Sleeps for `ms` milliseconds.
#[tool]
async fn nap(ms: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

fn server_with(probe: Arc<Probe>, limits: Limits) -> Server {
    Server::builder()
        .name("hardening")
        .state_arc(probe)
        .limits(limits)
        .resource(Resource::new("test://slow", "slow", |request, _| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(vec![ResourceContents::text(request.uri, None, "late")])
        }))
        .build()
        .unwrap()
}

fn server(probe: Arc<Probe>) -> Server {
    server_with(probe, Limits::new())
}

async fn eventually(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..200 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what} (waited 5 s)");
}

fn call(id: Value, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        .to_string()
}

fn cancel(id: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}).to_string()
}

// ---------------------------------------------------------------------------------------------
// One connection's requests.

#[tokio::test]
async fn a_cancelled_id_reused_is_tracked_as_the_new_request() {
    let probe = Arc::new(Probe::default());
    let client = TestClient::connect(&server(probe.clone())).await;
    // Request 7, cancelled; 7 again while the first is still unwinding.
    client.send_message(&call(json!(7), "hold", json!({})));
    eventually("the first call started", || probe.started.load(Ordering::SeqCst) == 1).await;
    client.send_message(&cancel(json!(7)));
    client.send_message(&call(json!(7), "hold", json!({})));
    eventually("the second call started", || probe.started.load(Ordering::SeqCst) == 2).await;
    eventually("the first call was dropped", || probe.dropped.load(Ordering::SeqCst) == 1).await;
    // The id belongs to the second request: a third with it is refused ...
    let third = client.send_raw(&call(json!(7), "say", json!({"text": "x"}))).await;
    assert_eq!(third["error"]["code"], -32600, "{third}");
    assert!(third["error"]["message"].as_str().unwrap().contains("already in use"), "{third}");
    // ... and the second can still be cancelled.
    client.send_message(&cancel(json!(7)));
    eventually("the second call was dropped", || probe.dropped.load(Ordering::SeqCst) == 2).await;
    let fourth = client.send_raw(&call(json!(7), "say", json!({"text": "free"}))).await;
    assert_eq!(fourth["result"]["content"][0]["text"], "free", "the id is free again: {fourth}");
}

#[tokio::test]
async fn requests_beyond_the_connection_limit_wait_for_a_place_in_order_then_are_refused() {
    let probe = Arc::new(Probe::default());
    let client =
        TestClient::connect(&server_with(probe.clone(), Limits::new().max_in_flight_per_connection(2))).await;
    let tool = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let held: Vec<i64> = (0..2).map(|_| client.send_request("tools/call", tool("hold", json!({})))).collect();
    eventually("two calls running", || probe.started.load(Ordering::SeqCst) == 2).await;
    // Two more wait for a place: one the client gives up on, one it wants ...
    let given_up = client.send_request("tools/call", tool("hold", json!({})));
    let wanted = client.send_request("tools/call", tool("say", json!({"text": "waited"})));
    // ... and one more is refused.
    let refused = client.send_raw(&call(json!("extra"), "say", json!({"text": "x"}))).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("2 running and 2 waiting"), "{refused}");
    let early = tokio::time::timeout(Duration::from_millis(200), client.answer(wanted)).await;
    assert!(early.is_err(), "a waiting request runs only when a place frees: {early:?}");
    // A waiting request can be cancelled: it never runs.
    client.send_message(&cancel(json!(given_up)));
    client.send_message(&cancel(json!(held[0])));
    let answer = client.answer(wanted).await.expect("the waiting call ran");
    assert_eq!(answer["content"][0]["text"], "waited", "{answer}");
    assert_eq!(probe.started.load(Ordering::SeqCst), 2, "the cancelled waiting call never started");
    // Places free again: a new call runs at once.
    let served = client.send_raw(&call(json!(5), "say", json!({"text": "room again"}))).await;
    assert_eq!(served["result"]["content"][0]["text"], "room again", "{served}");
    client.send_message(&cancel(json!(held[1])));
    eventually("both held calls ended", || probe.dropped.load(Ordering::SeqCst) == 2).await;
}

#[tokio::test]
async fn a_client_that_sends_many_requests_at_once_gets_every_answer() {
    let client =
        TestClient::connect(&server_with(Arc::default(), Limits::new().max_in_flight_per_connection(4)))
            .await;
    let ids: Vec<i64> = (0..8)
        .map(|i| client.send_request("tools/call", json!({"name": "nap", "arguments": {"ms": 20 + i}})))
        .collect();
    for (i, id) in ids.into_iter().enumerate() {
        let answer = client.answer(id).await.expect("every request is answered");
        assert_eq!(answer["structuredContent"]["result"], json!(20 + i), "{answer}");
    }
}

#[tokio::test]
async fn requests_in_flight_are_bounded_per_server() {
    let probe = Arc::new(Probe::default());
    let server = server_with(probe.clone(), Limits::new().max_in_flight(2));
    let (a, b) = (TestClient::connect(&server).await, TestClient::connect(&server).await);
    a.send_message(&call(json!(1), "hold", json!({})));
    b.send_message(&call(json!(1), "hold", json!({})));
    eventually("two calls running", || probe.started.load(Ordering::SeqCst) == 2).await;
    let c = TestClient::connect(&server).await;
    let refused = c.send_raw(&call(json!(1), "say", json!({"text": "x"}))).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("the server is busy"), "{refused}");
    // A place is given back when its request ends, however it ends; a refused request took none.
    a.send_message(&cancel(json!(1)));
    eventually("the cancelled call was dropped", || probe.dropped.load(Ordering::SeqCst) == 1).await;
    let answered = c.send_raw(&call(json!(2), "say", json!({"text": "in"}))).await;
    assert_eq!(answered["result"]["content"][0]["text"], "in", "{answered}");
    let again = c.send_raw(&call(json!(3), "say", json!({"text": "again"}))).await;
    assert_eq!(
        again["result"]["content"][0]["text"], "again",
        "the finished call gave its place back: {again}"
    );
    c.send_message(&call(json!(4), "hold", json!({})));
    eventually("a third call running", || probe.started.load(Ordering::SeqCst) == 3).await;
    let full = c.send_raw(&call(json!(5), "say", json!({"text": "x"}))).await;
    assert!(full["error"]["message"].as_str().unwrap().contains("the server is busy"), "full again: {full}");
}

#[tokio::test]
async fn the_server_default_timeout_cancels_tools_and_other_requests() {
    let probe = Arc::new(Probe::default());
    let limits = Limits::new().request_timeout(Some(Duration::from_millis(100)));
    let client = TestClient::connect(&server_with(probe.clone(), limits)).await;
    let result = client.call("hold", json!({})).await.unwrap();
    assert!(result.is_error());
    assert!(result.text().contains("did not finish within 100ms"), "{}", result.text());
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1, "the handler was dropped");
    let error = client.request("resources/read", json!({"uri": "test://slow"})).await.unwrap_err();
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("`resources/read` did not finish within 100ms"), "{}", error.message);
    // Quick calls are unaffected.
    assert_eq!(client.call("nap", json!({"ms": 1})).await.unwrap().structured(), Some(&json!({"result": 1})));
}

// ---------------------------------------------------------------------------------------------
// Clients that stop reading.

#[tokio::test]
async fn a_stdio_client_that_stops_reading_is_disconnected_not_buffered() {
    let server = server_with(
        Arc::default(),
        Limits::new().max_queued_bytes(64 * 1024).write_timeout(Duration::from_millis(300)),
    );
    // A pipe of 4 KiB that nobody reads.
    let (mut input, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, _unread) = tokio::io::duplex(4 * 1024);
    let served = tokio::spawn(async move { server.serve(server_in, server_out).await });
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    input.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let text = "y".repeat(16 * 1024);
    let writer = tokio::spawn(async move {
        // 4 MiB of answers asked for; the server stops reading once its queue is full.
        for id in 1..=256 {
            let line = format!("{}\n", call(json!(id), "say", json!({"text": text})));
            if input.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        input
    });
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), served).await.expect("the server gave up").unwrap();
    let error = outcome.expect_err("a stalled client ends the connection with an error");
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
    drop(writer);
}

#[tokio::test]
async fn notifications_to_a_client_that_is_behind_are_dropped_not_queued() {
    let server = server_with(Arc::default(), Limits::new().max_queued_bytes(32 * 1024));
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(4 * 1024);
    let served = tokio::spawn(async move { server.serve(server_in, server_out).await });
    let mut output = BufReader::new(output);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    input.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let mut line = String::new();
    output.read_line(&mut line).await.unwrap();
    let chatter = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "chatter", "arguments": {"count": 2000}, "_meta": {"progressToken": "p"}}});
    input.write_all(format!("{chatter}\n").as_bytes()).await.unwrap();
    // Not reading for a while: 2 MB of progress is produced, 32 KiB may wait.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (mut progress, mut answer) = (0, None);
    while answer.is_none() {
        line.clear();
        output.read_line(&mut line).await.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "notifications/progress" {
            progress += 1;
        } else {
            answer = Some(message);
        }
    }
    assert_eq!(answer.unwrap()["result"]["structuredContent"]["result"], 2000, "the answer always arrives");
    assert!(progress < 2000, "notifications that did not fit were dropped ({progress} of 2000 arrived)");
    assert!(progress > 0);
    drop(input);
    served.await.unwrap().unwrap();
}

// ---------------------------------------------------------------------------------------------
// HTTP over real connections.

async fn listen(server: &Server, options: HttpOptions) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = server.clone();
    tokio::spawn(async move { server.serve_http_on(listener, options, std::future::pending()).await });
    addr
}

fn http_request(addr: SocketAddr, body: &str, headers: &[(&str, &str)]) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// Sends one request on a new connection and reads the whole response (status, headers, body).
async fn http_exchange(addr: SocketAddr, body: &str, headers: &[(&str, &str)]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = http_request(addr, body, &[headers, &[("Connection", "close")]].concat());
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut response))
        .await
        .unwrap()
        .unwrap();
    response
}

async fn http_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = http_exchange(addr, &init.to_string(), &[]).await;
    let line =
        response.lines().find(|l| l.to_ascii_lowercase().starts_with("mcp-session-id:")).expect(&response);
    line.split_once(':').unwrap().1.trim().to_owned()
}

async fn call_then_hang_up(
    addr: SocketAddr,
    body: &str,
    headers: &[(&str, &str)],
    probe: &Probe,
    started: usize,
) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(http_request(addr, body, headers).as_bytes()).await.unwrap();
    eventually("the call started", || probe.started.load(Ordering::SeqCst) == started).await;
    drop(stream);
    eventually("the client hung up: its call is cancelled", || {
        probe.dropped.load(Ordering::SeqCst) == started
    })
    .await;
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_its_call_in_every_http_mode() {
    let probe = Arc::new(Probe::default());
    let server = server(probe.clone());
    let hold = call(json!(1), "hold", json!({}));

    // A session, JSON answer pending.
    let addr = listen(&server, HttpOptions::new()).await;
    let session = http_session(addr).await;
    let in_session = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    call_then_hang_up(addr, &hold, &in_session, &probe, 1).await;

    // A session answering with SSE.
    let addr = listen(&server, HttpOptions::new().always_sse(true)).await;
    let session = http_session(addr).await;
    let in_session = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    call_then_hang_up(addr, &hold, &in_session, &probe, 2).await;

    // Stateless 2025-11-25.
    let addr = listen(&server, HttpOptions::new().stateless(true)).await;
    call_then_hang_up(addr, &hold, &[("MCP-Protocol-Version", "2025-11-25")], &probe, 3).await;

    // 2026-07-28.
    let stateless = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hold", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers =
        [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "hold")];
    call_then_hang_up(addr, &stateless.to_string(), &headers, &probe, 4).await;
}

#[tokio::test]
async fn slow_http_clients_are_cut_off() {
    let server = server(Arc::default());
    let options = HttpOptions::new()
        .header_read_timeout(Duration::from_millis(300))
        .body_read_timeout(Duration::from_millis(300));
    let addr = listen(&server, options).await;

    // Headers that never end: the connection is closed.
    let mut slow_headers = TcpStream::connect(addr).await.unwrap();
    slow_headers.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n").await.unwrap();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), slow_headers.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the server closed a connection whose headers never ended");

    // A body that never ends: 408.
    let mut slow_body = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    slow_body.write_all(head.as_bytes()).await.unwrap();
    let mut response = vec![0; 4096];
    let n =
        tokio::time::timeout(Duration::from_secs(5), slow_body.read(&mut response)).await.unwrap().unwrap();
    let response = String::from_utf8_lossy(&response[..n]);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("not received in full within 300ms"), "{response}");

    // The server still serves.
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let response = http_exchange(addr, &ping, &[("MCP-Protocol-Version", "2025-11-25")]).await;
    assert!(response.starts_with("HTTP/1.1 400"), "a ping without a session: {response}");
}

#[tokio::test]
async fn connections_beyond_the_limit_wait_for_a_free_one() {
    let server = server(Arc::default());
    let addr =
        listen(&server, HttpOptions::new().max_connections(1).header_read_timeout(Duration::from_secs(30)))
            .await;
    let occupying = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let waiting = tokio::spawn(async move { http_exchange(addr, &ping, &[]).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the second connection waits while the first is open");
    drop(occupying);
    let response = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
    assert!(response.starts_with("HTTP/1.1 "), "{response}");
}

// ---------------------------------------------------------------------------------------------
// HTTP through the router.

fn post(body: &Value, session: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    request.body(Body::from(body.to_string())).unwrap()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

async fn open_session(app: &axum::Router) -> String {
    let response = app.clone().oneshot(post(&initialize(), None)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

async fn ping_status(app: &axum::Router, session: &str) -> StatusCode {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    app.clone().oneshot(post(&ping, Some(session))).await.unwrap().status()
}

#[tokio::test]
async fn a_caller_past_its_share_of_sessions_replaces_its_least_recently_used_one() {
    let options = HttpOptions::new().max_sessions(10).max_sessions_per_caller(2);
    let app = server(Arc::default()).http_router(options);
    let first = open_session(&app).await;
    let second = open_session(&app).await;
    assert_eq!(ping_status(&app, &first).await, StatusCode::OK, "first used last");
    let third = open_session(&app).await;
    assert_eq!(ping_status(&app, &second).await, StatusCode::NOT_FOUND, "the least recently used went");
    assert_eq!(ping_status(&app, &first).await, StatusCode::OK);
    assert_eq!(ping_status(&app, &third).await, StatusCode::OK);
}

#[tokio::test]
async fn a_full_server_refuses_a_new_session_and_keeps_the_others() {
    let app = server(Arc::default()).http_router(HttpOptions::new().max_sessions(2));
    let first = open_session(&app).await;
    let second = open_session(&app).await;
    let refused = app.clone().oneshot(post(&initialize(), None)).await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().get("mcp-session-id").is_none());
    assert_eq!(ping_status(&app, &first).await, StatusCode::OK);
    assert_eq!(ping_status(&app, &second).await, StatusCode::OK);
}

#[test]
fn a_router_built_outside_a_runtime_still_expires_idle_sessions() {
    let app = server(Arc::default())
        .http_router(HttpOptions::new().session_idle_timeout(Duration::from_millis(100)));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let session = open_session(&app).await;
        assert_eq!(ping_status(&app, &session).await, StatusCode::OK);
        // Untouched for several idle timeouts: swept (by the task the first request started).
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(ping_status(&app, &session).await, StatusCode::NOT_FOUND, "the idle session was swept");
    });
}

#[tokio::test]
async fn a_stateless_request_without_a_version_header_is_2025_03_26() {
    let app = server(Arc::default()).http_router(HttpOptions::new().stateless(true));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "revision", "arguments": {}}});
    let response = app.clone().oneshot(post(&body, None)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "2025-03-26", "{answer}");
}

#[tokio::test]
async fn the_host_check_reads_the_http2_authority_too() {
    let app = server(Arc::default()).http_router(HttpOptions::new());
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for (authority, expected) in
        [("evil.example", StatusCode::FORBIDDEN), ("localhost:8080", StatusCode::BAD_REQUEST)]
    {
        // No Host header: the authority is in the request target, as HTTP/2 sends it.
        let request = Request::post(format!("http://{authority}/mcp"))
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(ping.to_string()))
            .unwrap();
        assert_eq!(app.clone().oneshot(request).await.unwrap().status(), expected, "{authority}");
    }
}

#[tokio::test]
async fn a_path_without_its_slash_is_served() {
    let app = server(Arc::default()).http_router(HttpOptions::new().path("mcp"));
    let session = open_session(&app).await;
    assert_eq!(ping_status(&app, &session).await, StatusCode::OK);
}

#[test]
#[should_panic(expected = "cannot appear in the endpoint's path")]
fn a_route_pattern_as_path_is_refused_clearly() {
    let _ = server(Arc::default()).http_router(HttpOptions::new().path("/mcp/{id}"));
}
