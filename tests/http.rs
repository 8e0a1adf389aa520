//! The Streamable HTTP transport: every status path, sessions, JSON and SSE answers, stateless
//! mode, request facts in the context, and graceful shutdown.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use mcp_tools::{Context, HttpOptions, Server, tool};
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// Report progress, then answer.
#[tool]
async fn slow_count(to: u32, ctx: Context) -> String {
    for i in 1..=to {
        ctx.report_progress(f64::from(i), Some(f64::from(to)), None);
    }
    format!("counted to {to}")
}

/// Echo a request header back.
#[tool]
async fn whoami(ctx: Context) -> String {
    match ctx.http() {
        Some(http) => format!(
            "tenant={} session={}",
            http.headers.get("x-tenant").and_then(|v| v.to_str().ok()).unwrap_or("-"),
            http.session_id.as_deref().unwrap_or("-")
        ),
        None => "not over HTTP".into(),
    }
}

/// Closes its stream, then logs and answers: the client must reconnect to see either.
#[tool]
async fn reconnect(ctx: Context) -> String {
    let closed = ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(mcp_tools::LogLevel::Info, "after the disconnect");
    format!("closed={closed}")
}

/// Takes a while, then answers.
#[tool]
async fn nap() -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    "rested".into()
}

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn app(options: HttpOptions) -> Router {
    Server::builder().name("http-test").build().unwrap().http_router(options)
}

/// A POST to the endpoint with the headers every message needs.
fn post() -> axum::http::request::Builder {
    Request::post("/mcp")
        .header(header::HOST, "localhost:1234")
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
}

async fn send(app: &Router, request: Request<Body>) -> Response<Body> {
    app.clone().oneshot(request).await.unwrap()
}

async fn body_text(response: Response<Body>) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// Initializes a session; returns its id.
async fn open_session(app: &Router) -> String {
    let body = initialize_body();
    let response = send(app, post().body(Body::from(body.to_string())).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let answer: Value = serde_json::from_str(&body_text(response).await).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    id
}

fn in_session(session: &str, body: &Value) -> Request<Body> {
    post().header("mcp-session-id", session).body(Body::from(body.to_string())).unwrap()
}

/// The `data:` payloads of an SSE body.
fn sse_messages(text: &str) -> Vec<Value> {
    text.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect()
}

#[tokio::test]
async fn a_session_is_issued_on_initialize_and_required_after() {
    let app = app(HttpOptions::new());
    let session = open_session(&app).await;
    assert_eq!(session.len(), 32, "128 random bits, in hex");
    assert!(session.chars().all(|c| c.is_ascii_hexdigit()), "{session}");
    assert_ne!(open_session(&app).await, session, "every session gets its own id");

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = send(&app, in_session(&session, &note)).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(body_text(response).await.is_empty());

    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let response = send(&app, in_session(&session, &ping)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(serde_json::from_str::<Value>(&body_text(response).await).unwrap()["result"], json!({}));

    let response = send(&app, post().body(Body::from(ping.to_string())).unwrap()).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST, "missing session");
    let response = send(&app, in_session("0123456789abcdef0123456789abcdef", &ping)).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "unknown session");
}

#[tokio::test]
async fn delete_ends_the_session() {
    let app = app(HttpOptions::new());
    let session = open_session(&app).await;
    let delete = Request::delete("/mcp")
        .header(header::HOST, "localhost")
        .header("mcp-session-id", &session)
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, delete).await.status(), StatusCode::OK);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(send(&app, in_session(&session, &ping)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn requests_that_stream_get_sse_and_simple_ones_get_json() {
    let app = app(HttpOptions::new());
    let session = open_session(&app).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow_count", "arguments": {"to": 3}, "_meta": {"progressToken": "p"}}});
    let response = send(&app, in_session(&session, &call)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    let messages = sse_messages(&body_text(response).await);
    assert_eq!(messages.len(), 4, "three progress notifications, then the answer: {messages:?}");
    assert_eq!(messages[0]["method"], "notifications/progress");
    assert_eq!(messages[2]["params"]["progress"], 3.0);
    assert_eq!(messages[3]["id"], 7);
    assert_eq!(messages[3]["result"]["content"][0]["text"], "counted to 3");

    // Without a progress token nothing precedes the answer: plain JSON.
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "slow_count", "arguments": {"to": 3}}});
    let response = send(&app, in_session(&session, &call)).await;
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
}

#[tokio::test]
async fn the_context_sees_the_http_request() {
    let app = app(HttpOptions::new());
    let session = open_session(&app).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "whoami"}});
    let request = post()
        .header("mcp-session-id", &session)
        .header("x-tenant", "acme")
        .body(Body::from(call.to_string()))
        .unwrap();
    let answer: Value = serde_json::from_str(&body_text(send(&app, request).await).await).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], format!("tenant=acme session={session}"));
}

#[tokio::test]
async fn bad_requests_get_the_right_status() {
    let app = app(HttpOptions::new().max_body_size(1024));
    let session = open_session(&app).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let base =
        || Request::post("/mcp").header(header::HOST, "localhost").header("mcp-session-id", session.as_str());
    let cases: Vec<(&str, Request<Body>, StatusCode)> = vec![
        (
            "Accept without text/event-stream",
            base()
                .header(header::ACCEPT, "application/json")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(ping.clone()))
                .unwrap(),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            "no Accept",
            base().header(header::CONTENT_TYPE, "application/json").body(Body::from(ping.clone())).unwrap(),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            "text body",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "text/plain")
                .body(Body::from(ping.clone()))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            "foreign Origin",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ORIGIN, "https://evil.example")
                .body(Body::from(ping.clone()))
                .unwrap(),
            StatusCode::FORBIDDEN,
        ),
        (
            "oversized body",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(format!("{{\"x\":\"{}\"}}", "a".repeat(2048))))
                .unwrap(),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "unsupported protocol version header",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "application/json")
                .header("mcp-protocol-version", "1999-01-01")
                .body(Body::from(ping.clone()))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "malformed JSON",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from("{nope"))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "batch",
            base()
                .header(header::ACCEPT, ACCEPT_BOTH)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(format!("[{ping}]")))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "event streams refused with q=0",
            base()
                .header(header::ACCEPT, "application/json, text/event-stream;q=0")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(ping.to_string()))
                .unwrap(),
            StatusCode::NOT_ACCEPTABLE,
        ),
        ("PUT", base().method("PUT").body(Body::empty()).unwrap(), StatusCode::METHOD_NOT_ALLOWED),
        (
            "OPTIONS without an Origin (answered by the CORS layer, with no CORS headers)",
            base().method("OPTIONS").body(Body::empty()).unwrap(),
            StatusCode::OK,
        ),
        (
            "GET without event-stream",
            base().method("GET").header(header::ACCEPT, "application/json").body(Body::empty()).unwrap(),
            StatusCode::NOT_ACCEPTABLE,
        ),
    ];
    for (name, request, expected) in cases {
        let response = send(&app, request).await;
        assert_eq!(response.status(), expected, "{name}");
    }
    let foreign_host = Request::post("/mcp")
        .header(header::HOST, "evil.example:80")
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(ping.clone()))
        .unwrap();
    assert_eq!(send(&app, foreign_host).await.status(), StatusCode::FORBIDDEN, "DNS rebinding");

    // A message with a null id is invalid, not a batch.
    let null_id = base()
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#))
        .unwrap();
    let response = send(&app, null_id).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let answer: Value = serde_json::from_str(&body_text(response).await).unwrap();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("request id"), "{answer}");

    // The parse error is a JSON-RPC error body.
    let malformed = base()
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{nope"))
        .unwrap();
    let answer: Value = serde_json::from_str(&body_text(send(&app, malformed).await).await).unwrap();
    assert_eq!(answer["error"]["code"], -32700);

    // Any supported version is accepted in the header, not only the negotiated one.
    let older = base()
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2025-03-26")
        .body(Body::from(ping))
        .unwrap();
    assert_eq!(send(&app, older).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn allowed_hosts_and_origins_are_configurable() {
    let app = app(HttpOptions::new().allow_host("mcp.example.com").allow_origin("https://app.example.com"));
    let body = initialize_body();
    let request = Request::post("/mcp")
        .header(header::HOST, "mcp.example.com")
        .header(header::ORIGIN, "https://app.example.com")
        .header(header::ACCEPT, ACCEPT_BOTH)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    assert_eq!(send(&app, request).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_get_stream_carries_list_changes() {
    let server = Server::builder().build().unwrap();
    let app = server.http_router(HttpOptions::new().keep_alive(None));
    let session = open_session(&app).await;
    let get = || {
        Request::get("/mcp")
            .header(header::HOST, "localhost")
            .header(header::ACCEPT, "text/event-stream")
            .header("mcp-session-id", session.as_str())
            .body(Body::empty())
            .unwrap()
    };
    let response = send(&app, get()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(send(&app, get()).await.status(), StatusCode::CONFLICT, "one GET stream per session");

    server.set_tool_enabled("whoami", false);
    let mut body = response.into_body().into_data_stream();
    use futures_util::StreamExt as _;
    let chunk = tokio::time::timeout(Duration::from_secs(5), body.next()).await.unwrap().unwrap().unwrap();
    let text = String::from_utf8(chunk.to_vec()).unwrap();
    assert_eq!(sse_messages(&text)[0]["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn stateless_mode_needs_no_session() {
    let app = app(HttpOptions::new().stateless(true));
    let body = initialize_body();
    let response = send(&app, post().body(Body::from(body.to_string())).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());

    // A call with no session and no initialize on this "instance" is answered.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_count", "arguments": {"to": 1}}});
    let response = send(&app, post().body(Body::from(call.to_string())).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let answer: Value = serde_json::from_str(&body_text(response).await).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "counted to 1");

    let get = Request::get("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "text/event-stream")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, get).await.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn serve_http_answers_over_tcp_and_shuts_down_gracefully() {
    let (addr, stop, serving) = serve_until_stopped(Server::builder().build().unwrap()).await;
    let response = raw_post(addr, &initialize_body().to_string(), "").await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.to_ascii_lowercase().contains("mcp-session-id:"));
    assert!(response.contains("\"serverInfo\""));

    stop.send(()).unwrap();
    let result =
        tokio::time::timeout(Duration::from_secs(5), serving).await.expect("stops promptly").unwrap();
    assert!(result.is_ok());
}

/// `server` serving HTTP on a free port until the sender is used.
async fn serve_until_stopped(
    server: Server,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve_http_on(listener, HttpOptions::new(), async {
                let _ = stopped.await;
            })
            .await
    });
    (addr, stop, serving)
}

/// One raw HTTP/1.1 POST of `body` to the endpoint at `addr`, with `headers`; the whole response.
async fn raw_post(addr: std::net::SocketAddr, body: &str, headers: &str) -> String {
    let headers = format!(
        "Host: 127.0.0.1:{}\r\nAccept: {ACCEPT_BOTH}\r\nContent-Type: application/json\r\n{headers}",
        addr.port()
    );
    raw_request(addr, "POST /mcp", &headers, body).await
}

/// One raw HTTP/1.1 request (`line`: method and path; `headers`: each ending in CRLF) with
/// `body`; the whole response.
async fn raw_request(addr: std::net::SocketAddr, line: &str, headers: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{line} HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

/// `serve_http_on` hands plain clients' requests to the endpoint without the router: browsers'
/// requests, preflights and other paths must still be answered as the router answers them.
#[tokio::test]
async fn served_http_answers_browsers_preflights_and_other_paths_as_the_router_does() {
    let (addr, stop, serving) = serve_until_stopped(Server::builder().build().unwrap()).await;
    let host = format!("Host: 127.0.0.1:{}\r\n", addr.port());
    let json = format!("Accept: {ACCEPT_BOTH}\r\nContent-Type: application/json\r\n");
    let initialize = initialize_body().to_string();
    let page = "Origin: http://localhost:5173\r\n";
    let asks = "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r\n";
    // Responses compared lowercase (header names' case is the server's choice).
    let ask = async |line: &str, headers: &str, body: &str| {
        raw_request(addr, line, headers, body).await.to_ascii_lowercase()
    };

    // A page on a loopback origin: its preflight and its POST get CORS headers.
    let preflight = ask("OPTIONS /mcp", &format!("{host}{page}{asks}"), "").await;
    assert!(preflight.starts_with("http/1.1 200"), "{preflight}");
    assert!(preflight.contains("access-control-allow-origin: http://localhost:5173"), "{preflight}");
    assert!(preflight.contains("access-control-allow-headers:"), "{preflight}");
    let from_page = ask("POST /mcp", &format!("{host}{page}{json}"), &initialize).await;
    assert!(from_page.starts_with("http/1.1 200"), "{from_page}");
    assert!(from_page.contains("access-control-allow-origin: http://localhost:5173"), "{from_page}");
    assert!(from_page.contains("access-control-expose-headers: mcp-session-id"), "{from_page}");
    // A page of another origin is refused; a client without an Origin gets no CORS headers.
    let evil = "Origin: http://evil.example\r\n";
    let foreign = ask("POST /mcp", &format!("{host}{evil}{json}"), &initialize).await;
    assert!(foreign.starts_with("http/1.1 403"), "{foreign}");
    let plain = ask("POST /mcp", &format!("{host}{json}"), &initialize).await;
    assert!(plain.starts_with("http/1.1 200"), "{plain}");
    assert!(!plain.contains("access-control-"), "{plain}");
    // The endpoint's checks hold on the direct path: a foreign Host, a wrong method.
    let attacker = format!("Host: attacker.example\r\n{json}");
    let rebinding = ask("POST /mcp", &attacker, &initialize).await;
    assert!(rebinding.starts_with("http/1.1 403"), "{rebinding}");
    let put = ask("PUT /mcp", &host, "").await;
    assert!(put.starts_with("http/1.1 405"), "{put}");
    // Other paths are the router's: not found (a path differing only by a trailing slash too).
    for line in ["POST /other", "POST /mcp/"] {
        let other = ask(line, &format!("{host}{json}"), &initialize).await;
        assert!(other.starts_with("http/1.1 404"), "{line}: {other}");
    }
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), serving).await.expect("stops").unwrap().unwrap();
}

#[tokio::test]
async fn a_call_running_when_the_server_shuts_down_is_answered() {
    let (addr, stop, serving) = serve_until_stopped(Server::builder().build().unwrap()).await;
    let initialized = raw_post(addr, &initialize_body().to_string(), "").await;
    let session = initialized
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase().strip_prefix("mcp-session-id:").map(|v| v.trim().to_owned())
        })
        .expect("a session id");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "nap", "arguments": {}}});
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let calling = tokio::spawn(async move { raw_post(addr, &call.to_string(), &headers).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(5), calling).await.expect("answered").unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("rested"), "the call finished: {response}");
    let result =
        tokio::time::timeout(Duration::from_secs(5), serving).await.expect("stops promptly").unwrap();
    assert!(result.is_ok());
}

#[tokio::test]
async fn resumable_streams_replay_what_a_closed_connection_missed() {
    let app = app(HttpOptions::new().resumable(Duration::from_millis(500)).keep_alive(None));
    let session = open_session(&app).await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "reconnect"}});
    let response = send(&app, in_session(&session, &call)).await;
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    let text = body_text(response).await;
    // Only the priming event: an id, the retry delay, empty data; then the tool closed it.
    let priming_id = text.lines().find_map(|l| l.strip_prefix("id: ")).expect("an event id").to_owned();
    assert!(text.contains("retry: 500\n"), "{text:?}");
    assert!(text.contains("data: \n"), "{text:?}");
    assert!(
        sse_messages(&text.replace("data: \n", "")).is_empty(),
        "no message on the closed connection: {text:?}"
    );

    tokio::time::sleep(Duration::from_millis(150)).await;
    let resume = Request::get("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("last-event-id", &priming_id)
        .body(Body::empty())
        .unwrap();
    let response = send(&app, resume).await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = body_text(response).await;
    let messages = sse_messages(&text);
    assert_eq!(messages.len(), 2, "the log and the answer: {text}");
    assert_eq!(messages[0]["method"], "notifications/message");
    assert_eq!(messages[1]["id"], 9);
    assert_eq!(messages[1]["result"]["content"][0]["text"], "closed=true");
    let ids: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    assert_eq!(ids.len(), 2, "every replayed event has an id");

    // Replaying from the first of those gives only the answer again.
    let again = Request::get("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("last-event-id", ids[0])
        .body(Body::empty())
        .unwrap();
    let messages = sse_messages(&body_text(send(&app, again).await).await);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["id"], 9);
}

#[tokio::test]
async fn browser_pages_of_allowed_origins_get_cors_answers() {
    let app = app(HttpOptions::new().allow_origin("http://app.example.test"));
    let preflight = Request::options("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, "http://app.example.test")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type, mcp-session-id")
        .body(Body::empty())
        .unwrap();
    let response = send(&app, preflight).await;
    assert_eq!(response.status(), StatusCode::OK);
    let h = response.headers();
    assert_eq!(h["access-control-allow-origin"], "http://app.example.test");
    assert!(h["access-control-allow-headers"].to_str().unwrap().contains("mcp-session-id"));
    assert!(h["access-control-allow-methods"].to_str().unwrap().contains("POST"));

    let body = initialize_body();
    let request =
        post().header(header::ORIGIN, "http://app.example.test").body(Body::from(body.to_string())).unwrap();
    let response = send(&app, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["access-control-allow-origin"], "http://app.example.test");
    assert_eq!(response.headers()["access-control-expose-headers"], "mcp-session-id");

    // Not for other origins, and no CORS headers without an Origin.
    let foreign = Request::options("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, "http://elsewhere.example")
        .body(Body::empty())
        .unwrap();
    let response = send(&app, foreign).await;
    assert!(
        response.headers().get("access-control-allow-origin").is_none(),
        "a foreign preflight is not allowed"
    );
    let foreign =
        post().header(header::ORIGIN, "http://elsewhere.example").body(Body::from(body.to_string()));
    assert_eq!(send(&app, foreign.unwrap()).await.status(), StatusCode::FORBIDDEN);
    let response = send(&app, post().body(Body::from(body.to_string())).unwrap()).await;
    assert!(response.headers().get("access-control-allow-origin").is_none());
}
