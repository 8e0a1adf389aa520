//! Streamable HTTP of the stateless revision (2026-07-28) beside 2025-11-25 sessions on the same
//! endpoint: header checks (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`)
//! and their error, statuses, no session, JSON and SSE answers, listen streams.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use futures_util::StreamExt as _;
use mcp_tools::{Context, HttpOptions, Server, Tool, ToolResult, tool};
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// Report progress, then answer.
#[tool]
async fn counting(to: u32, ctx: Context) -> String {
    for i in 1..=to {
        ctx.report_progress(f64::from(i), Some(f64::from(to)), None);
    }
    format!("counted to {to}")
}

fn server() -> Server {
    let mirrored = Tool::new(
        "regional",
        "Echo the region, which the client mirrors in a header.",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"}
        }, "required": ["region"]}),
        |args, _| async move { Ok(ToolResult::new().text(args["region"].as_str().unwrap_or_default())) },
    );
    Server::builder().name("http-stateless").tool(mirrored).build().unwrap()
}

fn app() -> Router {
    server().http_router(HttpOptions::new())
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A well-formed stateless POST of `method` with `params` (the envelope added), its headers
/// derived from the body.
fn stateless(method: &str, mut params: Value) -> axum::http::request::Builder {
    params["_meta"] = meta();
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost:1234")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .extension(body);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    request
}

fn build(request: axum::http::request::Builder) -> Request<Body> {
    let body = request.extensions_ref().and_then(|e| e.get::<Value>()).cloned().unwrap();
    request.body(Body::from(body.to_string())).unwrap()
}

async fn send(app: &Router, request: Request<Body>) -> Response<Body> {
    app.clone().oneshot(request).await.unwrap()
}

async fn json_of(response: Response<Body>) -> Value {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
}

#[tokio::test]
async fn a_stateless_request_is_answered_alone_with_no_session() {
    let app = app();
    let response = send(&app, build(stateless("server/discover", json!({})))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    let answer = json_of(response).await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["resultType"], "complete");
    let response =
        send(&app, build(stateless("tools/call", json!({"name": "counting", "arguments": {"to": 1}})))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let answer = json_of(response).await;
    assert_eq!(answer["result"]["content"][0]["text"], "counted to 1");
    assert_eq!(answer["result"]["resultType"], "complete");
}

#[tokio::test]
async fn an_unknown_or_removed_method_is_404_and_a_bad_envelope_400() {
    let app = app();
    for method in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"] {
        let response = send(&app, build(stateless(method, json!({})))).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method}");
        let answer = json_of(response).await;
        assert_eq!(
            (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
            (Some(7), Some(-32601)),
            "{method}"
        );
    }
    // No envelope, with the 2026-07-28 header: invalid params, 400.
    let body = json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}});
    let request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = send(&app, request).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let answer = json_of(response).await;
    assert_eq!((answer["id"].as_i64(), answer["error"]["code"].as_i64()), (Some(101), Some(-32602)));
    // A missing capability is 400 too.
    let ask = Tool::new("ask", "Ask the model.", json!({"type": "object"}), |_, ctx: Context| async move {
        let answer = ctx.sample(mcp_tools::SamplingRequest::new(5).user("hi")).await?;
        Ok(ToolResult::new().text(answer.text().unwrap_or_default()))
    });
    let app = Server::builder().inventory(false).tool(ask).build().unwrap().http_router(HttpOptions::new());
    let response = send(&app, build(stateless("tools/call", json!({"name": "ask"})))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let answer = json_of(response).await;
    assert_eq!(answer["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}), "{answer}");
}

#[tokio::test]
async fn the_protocol_version_header_must_match_the_envelope_before_the_version_is_checked() {
    let app = app();
    let mut request = stateless("server/discover", json!({}));
    request.headers_mut().unwrap().insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
    let response = send(&app, build(request)).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(response).await["error"]["code"], -32020);

    let mut request = stateless("server/discover", json!({}));
    request.headers_mut().unwrap().remove("mcp-protocol-version");
    assert_eq!(json_of(send(&app, build(request)).await).await["error"]["code"], -32020);

    // Header and envelope agree on a revision this server does not speak.
    let body = json!({"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "v999.0.0")
        .header("mcp-method", "server/discover")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = send(&app, request).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let answer = json_of(response).await;
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    assert_eq!(answer["error"]["data"]["requested"], "v999.0.0");
}

#[tokio::test]
async fn the_method_and_name_headers_must_match_the_body() {
    let app = app();
    let call = || stateless("tools/call", json!({"name": "counting", "arguments": {"to": 1}}));
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("mcp-method", Some("tools/list")),
        ("mcp-method", None),
        ("mcp-method", Some("TOOLS/CALL")),
        ("mcp-name", Some("other_tool")),
        ("mcp-name", None),
        ("mcp-name", Some("=?base64?Y291bnRpbmc?=")), // bad padding
    ];
    for (name, value) in cases {
        let mut request = call();
        let headers = request.headers_mut().unwrap();
        match value {
            Some(v) => {
                headers.insert(name, v.parse().unwrap());
            }
            None => {
                headers.remove(name);
            }
        }
        let response = send(&app, build(request)).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{name}: {value:?}");
        let answer = json_of(response).await;
        assert_eq!(
            (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
            (Some(7), Some(-32020)),
            "{name}: {value:?}"
        );
    }
    // Whitespace around a value, a Base64-wrapped name and header names in any case are fine.
    for (name, value) in
        [("mcp-name", "  counting  "), ("mcp-name", "=?base64?Y291bnRpbmc=?="), ("MCP-METHOD", "tools/call")]
    {
        let mut request = call();
        request.headers_mut().unwrap().insert(name, value.parse().unwrap());
        let response = send(&app, build(request)).await;
        assert_eq!(response.status(), StatusCode::OK, "{name}: {value}");
    }
}

#[tokio::test]
async fn mirrored_arguments_must_come_with_their_header() {
    let app = app();
    let call =
        |arguments: Value| stateless("tools/call", json!({"name": "regional", "arguments": arguments}));
    let mut request = call(json!({"region": "eu-west", "count": 3}));
    request.headers_mut().unwrap().insert("mcp-param-region", "eu-west".parse().unwrap());
    request.headers_mut().unwrap().insert("Mcp-Param-Count", "3".parse().unwrap());
    let response = send(&app, build(request)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(json_of(response).await["result"]["content"][0]["text"], "eu-west");

    let mut request = call(json!({"region": "Hello"}));
    request.headers_mut().unwrap().insert("mcp-param-region", "=?base64?SGVsbG8=?=".parse().unwrap());
    assert_eq!(send(&app, build(request)).await.status(), StatusCode::OK);

    for header in [None, Some("us-east"), Some("=?base64?SGVs!!!bG8=?=")] {
        let mut request = call(json!({"region": "eu-west"}));
        if let Some(value) = header {
            request.headers_mut().unwrap().insert("mcp-param-region", value.parse().unwrap());
        }
        let response = send(&app, build(request)).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{header:?}");
        assert_eq!(json_of(response).await["error"]["code"], -32020);
    }
}

#[tokio::test]
async fn a_tool_with_an_invalid_header_mirror_is_a_start_up_error() {
    let bad = Tool::new(
        "bad",
        "Mirrors a number.",
        json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
        |_, _| async { Ok(ToolResult::new()) },
    );
    let error = Server::builder().inventory(false).tool(bad).build().unwrap_err();
    assert!(
        error.to_string().contains("`x` has `x-mcp-header` but is not a string, integer or boolean"),
        "{error}"
    );
}

#[tokio::test]
async fn progress_comes_on_the_calls_own_stream_before_its_complete_result() {
    let app = app();
    let mut params = json!({"name": "counting", "arguments": {"to": 3}});
    let mut request = stateless("tools/call", params.clone());
    params["_meta"] = meta();
    params["_meta"]["progressToken"] = json!("p");
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    *request.extensions_mut().unwrap().get_mut::<Value>().unwrap() = body;
    let response = send(&app, build(request)).await;
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let messages: Vec<Value> = String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(
        messages[..3]
            .iter()
            .all(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p")
    );
    assert_eq!(messages[3]["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_then_carries_the_changes_it_asked_for() {
    let server = server();
    let app = server.http_router(HttpOptions::new());
    let request = stateless("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let response = send(&app, build(request)).await;
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    let mut body = response.into_body().into_data_stream();
    let mut next = async || {
        loop {
            let chunk =
                tokio::time::timeout(Duration::from_secs(5), body.next()).await.unwrap().unwrap().unwrap();
            let text = String::from_utf8(chunk.to_vec()).unwrap();
            if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
                return serde_json::from_str::<Value>(data).unwrap();
            }
        }
    };
    let ack = next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    server.remove_tool("counting");
    let changed = next().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
}

#[tokio::test]
async fn a_2025_session_and_a_stateless_request_share_the_endpoint() {
    let app = app();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(initialize.to_string()))
        .unwrap();
    let response = send(&app, request).await;
    assert!(response.headers().get("mcp-session-id").is_some());
    let answer = json_of(response).await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    assert!(answer["result"].get("resultType").is_none());
    let response = send(&app, build(stateless("tools/list", json!({})))).await;
    let answer = json_of(response).await;
    assert_eq!(answer["result"]["resultType"], "complete");
}
