//! The hostile-client suite, second part: several callers on one server, one of them hostile.
//! What a caller creates or holds (tasks, listen streams, sessions, the answers of its input
//! rounds) is bounded per caller and in all, and another caller can neither see it, use it nor
//! take its place: over the in-process transport (callers told apart by their connection) and
//! over HTTP with tokens (callers told apart by their identity).

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use futures_util::StreamExt as _;
use mcp_tools::auth::{Authorization, StaticTokens};
use mcp_tools::deferred::DeferredTools;
use mcp_tools::testing::TestClient;
use mcp_tools::{
    AuthInfo, Context, Elicitation, HttpOptions, Limits, Resource, ResourceContents, Server, TaskSupport,
    Tool, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tower::ServiceExt as _;

// ---------------------------------------------------------------------------------------------
// The server and its callers.

/// Sleeps `millis`, then answers (a task for clients that support tasks).
#[tool(task = "optional")]
async fn slow(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

#[derive(Deserialize, JsonSchema)]
struct Yes {
    yes: bool,
}

/// Works a little, then asks whether to go on (a task for clients that support tasks).
#[tool(task = "optional")]
async fn confirm(ctx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    let answer = ctx.input_key("go").elicit::<Yes>("Go on?").await?;
    Ok(format!("confirmed: {}", matches!(answer, Elicitation::Accept(Yes { yes: true }))))
}

#[derive(Deserialize, JsonSchema)]
struct Note {
    text: String,
}

/// Asks three questions in turn (never a task: its questions travel as input rounds).
#[tool]
async fn interview(ctx: Context) -> Result<String, ToolError> {
    let mut lengths = Vec::new();
    for key in ["first", "second", "third"] {
        match ctx.input_key(key).elicit::<Note>(key).await? {
            Elicitation::Accept(Note { text }) => lengths.push(text.len()),
            _ => return Ok("declined".into()),
        }
    }
    Ok(format!("{lengths:?}"))
}

/// Echo the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789ab";
/// A token issued to a client named like Alice's subject, without a subject of its own.
const ALICE_CLIENT: &str = "client-token-0123456789abcdef012345678";

fn resources(builder: mcp_tools::ServerBuilder) -> mcp_tools::ServerBuilder {
    let fixed = |uri: &str, scopes: &[&str]| {
        Resource::fixed(uri, uri, ResourceContents::text(uri, None, "text")).scopes(scopes.iter().copied())
    };
    builder
        .resource(fixed("notes://a", &[]))
        .resource(fixed("notes://b", &[]))
        .resource(fixed("notes://c", &[]))
        .resource(fixed("notes://secret", &["notes:secret"]))
}

fn server(limits: Limits) -> Server {
    resources(Server::builder()).task_poll_interval(Duration::from_millis(20)).limits(limits).build().unwrap()
}

fn authorization() -> Authorization {
    let tokens = StaticTokens::new()
        .token(ALICE, AuthInfo::new("alice").scopes(["notes:secret"]))
        .unwrap()
        .token(BOB, AuthInfo::new("bob"))
        .unwrap()
        .token(ALICE_CLIENT, AuthInfo::default().client_id("alice"))
        .unwrap();
    Authorization::new("http://localhost/mcp", tokens).unwrap()
}

fn app(server: &Server, options: HttpOptions) -> Router {
    server.http_router(options.authorization(authorization()))
}

fn capabilities() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A 2026-07-28 POST of `method` by the holder of `token`, its headers derived from the body.
fn stateless(token: &str, id: i64, method: &str, mut params: Value) -> Request<Body> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities(),
    });
    let name = ["name", "uri", "taskId"].iter().find_map(|k| params.get(*k)).and_then(Value::as_str);
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    request.body(Body::from(body.to_string())).unwrap()
}

/// The status and first message of a response (a JSON body, or the first event of an SSE
/// stream), and the rest of the stream, which stays open while it is held.
async fn exchange(
    app: &Router,
    request: Request<Body>,
) -> (StatusCode, Value, Option<axum::body::BodyDataStream>) {
    let response: Response<Body> = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let sse =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"text/event-stream");
    if !sse {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        return (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), None);
    }
    let mut stream = response.into_body().into_data_stream();
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("an event within 5 s")
            .expect("the stream goes on")
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(data) =
            text.lines().find_map(|l| l.strip_prefix("data:")).filter(|d| !d.trim().is_empty())
        {
            return (status, serde_json::from_str(data.trim()).unwrap(), Some(stream));
        }
    }
}

/// The JSON-RPC answer to a request (its status left aside).
async fn rpc(app: &Router, token: &str, method: &str, params: Value) -> Value {
    exchange(app, stateless(token, 1, method, params)).await.1
}

/// `message` with the task id in it replaced, to compare the errors of two ids.
fn without(message: &Value, task_id: &str) -> String {
    message.to_string().replace(task_id, "ID")
}

/// Polls `tasks/get` by `token` until the task has `status`, at most 5 s.
async fn wait_for(app: &Router, token: &str, task_id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = rpc(app, token, "tasks/get", json!({"taskId": task_id})).await;
        if task["result"]["status"] == status {
            return task["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {task_id} never reached {status}");
}

// ---------------------------------------------------------------------------------------------
// Tasks belong to their caller, and are bounded.

#[tokio::test]
async fn another_callers_task_is_as_unknown_as_one_that_never_was_to_every_method_and_to_listen() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new());
    let created = rpc(&app, ALICE, "tools/call", json!({"name": "confirm", "arguments": {}})).await;
    let task_id = created["result"]["taskId"].as_str().expect("a task").to_owned();
    let asking = wait_for(&app, ALICE, &task_id, "input_required").await;
    assert_eq!(asking["inputRequests"]["go"]["method"], "elicitation/create");

    let never = "0123456789abcdef0123456789abcdef";
    let answer = json!({"go": {"action": "accept", "content": {"yes": false}}});
    for (method, extra) in [
        ("tasks/get", json!({})),
        ("tasks/update", json!({"inputResponses": answer})),
        ("tasks/cancel", json!({})),
    ] {
        let mut params = json!({"taskId": task_id});
        let mut unknown = json!({"taskId": never});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
            unknown[k] = v.clone();
        }
        let theirs = rpc(&app, BOB, method, params).await;
        let nobodys = rpc(&app, BOB, method, unknown).await;
        assert_eq!(theirs["error"]["code"], -32602, "{method}: {theirs}");
        assert_eq!(without(&theirs["error"], &task_id), without(&nobodys["error"], never), "{method}");
    }
    let listen = json!({"notifications": {"taskIds": [task_id]}});
    let (status, theirs, _) = exchange(&app, stateless(BOB, 2, "subscriptions/listen", listen.clone())).await;
    assert_eq!((status, &theirs["error"]["code"]), (StatusCode::BAD_REQUEST, &json!(-32602)), "{theirs}");
    assert!(theirs["error"]["message"].as_str().unwrap().contains("unknown task"), "{theirs}");

    // Nothing Bob sent reached the task: it still waits for Alice's answer, which ends it.
    let still = wait_for(&app, ALICE, &task_id, "input_required").await;
    assert_eq!(still["inputRequests"]["go"]["method"], "elicitation/create");
    let (_, ack, stream) = exchange(&app, stateless(ALICE, 3, "subscriptions/listen", listen)).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    drop(stream);
    let yes = json!({"go": {"action": "accept", "content": {"yes": true}}});
    let updated = rpc(&app, ALICE, "tasks/update", json!({"taskId": task_id, "inputResponses": yes})).await;
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let done = wait_for(&app, ALICE, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: true");
}

#[tokio::test]
async fn a_task_belongs_to_its_connection_when_there_is_no_authorization() {
    let server = server(Limits::new());
    let mine = TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!());
    let other = TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!());
    let created = mine.call("slow", json!({"millis": 20})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().unwrap().to_owned();
    let error = other.request("tasks/get", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("unknown task"), "{}", error.message);
    assert!(mine.request("tasks/get", json!({"taskId": task_id})).await.is_ok());
}

/// Starts a long task for `client`; its id, or the error that refused it.
async fn start_task(client: &TestClient) -> Result<String, mcp_tools::testing::RpcError> {
    let created = client.call("slow", json!({"millis": 60_000})).await?;
    Ok(created.json()["taskId"].as_str().expect("a task handle").to_owned())
}

#[tokio::test]
async fn running_tasks_are_bounded_per_caller_and_a_cancelled_one_gives_its_share_back() {
    let server = server(Limits::new());
    let greedy = TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!());
    let mut started = Vec::new();
    for _ in 0..16 {
        started.push(start_task(&greedy).await.expect("within the caller's share"));
    }
    let refused = start_task(&greedy).await.unwrap_err();
    assert_eq!(refused.code, -32603);
    assert!(refused.message.contains("too many running tasks"), "{}", refused.message);
    assert!(refused.message.contains("16"), "{}", refused.message);

    // Another caller is not refused.
    let other = TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!());
    start_task(&other).await.expect("another caller has its own share");

    // A cancelled task gives its share back.
    greedy.request("tasks/cancel", json!({"taskId": started[0]})).await.unwrap();
    let mut again = Err(refused);
    for _ in 0..100 {
        again = start_task(&greedy).await;
        if again.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    again.expect("the cancelled task's share is free again");
}

#[tokio::test]
async fn running_tasks_are_bounded_in_all_and_hold_the_servers_places() {
    let server = server(Limits::new().max_tasks(3, 2));
    let clients: Vec<TestClient> = (0..3)
        .map(|_| TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!()))
        .collect();
    start_task(&clients[0]).await.unwrap();
    start_task(&clients[0]).await.unwrap();
    start_task(&clients[1]).await.unwrap();
    let refused = start_task(&clients[2]).await.unwrap_err();
    assert!(refused.message.contains("the server is busy: 3 running tasks"), "{}", refused.message);

    // Each running task holds one of the server's places: with 4, three tasks leave one for a
    // request, and a fourth task (which needs its own besides its request's) is refused.
    let server = server_with_places(4);
    let clients: Vec<TestClient> = (0..4)
        .map(|_| TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!()))
        .collect();
    for client in &clients[..3] {
        start_task(client).await.unwrap();
    }
    let refused = start_task(&clients[3]).await.unwrap_err();
    assert!(refused.message.contains("busy"), "{}", refused.message);
    assert_eq!(
        clients[3].call("echo", json!({"text": "still served"})).await.unwrap().text(),
        "still served"
    );
}

fn server_with_places(places: usize) -> Server {
    server(Limits::new().max_in_flight(places))
}

// ---------------------------------------------------------------------------------------------
// Listen streams: bounded, outside the places of requests, by the rules of subscriptions.

/// Opens a listen stream for `client`; its id once acknowledged, or the error refusing it.
async fn listen(client: &TestClient, filter: Value) -> Result<i64, mcp_tools::testing::RpcError> {
    let id = client.send_request("subscriptions/listen", json!({"notifications": filter}));
    // The acknowledgement comes first; a refused stream is answered instead (and a stream that
    // ends is answered only after its acknowledgement).
    let ack = client.notification("notifications/subscriptions/acknowledged");
    match tokio::time::timeout(Duration::from_millis(500), ack).await {
        Ok(_) => Ok(id),
        Err(_) => {
            let answer = tokio::time::timeout(Duration::from_secs(5), client.answer(id)).await;
            Err(answer.expect("refused at once").expect_err("a stream answers only when it ends"))
        }
    }
}

#[tokio::test]
async fn one_callers_listen_streams_are_bounded_and_starve_no_other_callers_calls() {
    // Eight places for requests on the whole server: the streams must hold none of them.
    let server = server_with_places(8);
    let greedy = TestClient::connect_stateless(&server);
    for _ in 0..16 {
        listen(&greedy, json!({"toolsListChanged": true})).await.expect("within the caller's share");
    }
    let refused = listen(&greedy, json!({"toolsListChanged": true})).await.unwrap_err();
    assert!(refused.message.contains("too many listen streams"), "{}", refused.message);

    let other = TestClient::connect_stateless(&server);
    for i in 0..8 {
        let text = format!("call {i}");
        assert_eq!(other.call("echo", json!({"text": text})).await.unwrap().text(), text);
    }
    assert_eq!(greedy.call("echo", json!({"text": "mine too"})).await.unwrap().text(), "mine too");
    listen(&other, json!({"toolsListChanged": true})).await.expect("another caller has its own share");
}

#[tokio::test]
async fn listen_streams_are_bounded_in_all_and_an_ended_one_gives_its_share_back() {
    let server = server(Limits::new().max_listen_streams(3, 2));
    let clients: Vec<TestClient> = (0..3).map(|_| TestClient::connect_stateless(&server)).collect();
    let first = listen(&clients[0], json!({"toolsListChanged": true})).await.unwrap();
    listen(&clients[0], json!({"toolsListChanged": true})).await.unwrap();
    listen(&clients[1], json!({"toolsListChanged": true})).await.unwrap();
    let refused = listen(&clients[2], json!({"toolsListChanged": true})).await.unwrap_err();
    assert!(refused.message.contains("the server is busy: 3 listen streams"), "{}", refused.message);
    clients[0].notify("notifications/cancelled", json!({"requestId": first}));
    let mut again = Err(refused);
    for _ in 0..100 {
        again = listen(&clients[2], json!({"toolsListChanged": true})).await;
        if again.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    again.expect("the cancelled stream's share is free again");
}

#[tokio::test]
async fn listen_follows_only_served_resources_and_a_bounded_number_of_them() {
    let server = server(Limits::new().max_subscriptions(2));
    let client = TestClient::connect_stateless(&server);
    let unknown = listen(&client, json!({"resourceSubscriptions": ["notes://nowhere"]})).await.unwrap_err();
    assert_eq!(unknown.code, -32602);
    assert!(unknown.message.contains("no such resource"), "{}", unknown.message);
    let many = json!({"resourceSubscriptions": ["notes://a", "notes://b", "notes://c"]});
    let too_many = listen(&client, many).await.unwrap_err();
    assert!(too_many.message.contains("at most 2 resources and tasks"), "{}", too_many.message);
    let tasks = json!({"resourceSubscriptions": ["notes://a"], "taskIds": ["t1", "t2"]});
    let client = TestClient::connect_stateless_with(&server, capabilities(), |_, _| unreachable!());
    assert!(listen(&client, tasks).await.unwrap_err().message.contains("at most 2"));
    listen(&client, json!({"resourceSubscriptions": ["notes://a", "notes://b"]}))
        .await
        .expect("two are allowed");
}

#[tokio::test]
async fn listen_to_a_resource_needs_the_scopes_that_reading_it_needs() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new());
    let filter = json!({"notifications": {"resourceSubscriptions": ["notes://secret"]}});
    let (status, refused, _) =
        exchange(&app, stateless(BOB, 1, "subscriptions/listen", filter.clone())).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let (status, ack, stream) = exchange(&app, stateless(ALICE, 1, "subscriptions/listen", filter)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["notes://secret"]));
    drop(stream);
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25 sessions: per caller first; a full server refuses, it never evicts another caller.

fn post(body: &Value, token: &str, session: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    request.body(Body::from(body.to_string())).unwrap()
}

/// A new session of the holder of `token`: its id, or the status and body that refused it.
async fn open_session(app: &Router, token: &str) -> Result<String, (StatusCode, Option<String>, Value)> {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = app.clone().oneshot(post(&initialize, token, None)).await.unwrap();
    let status = response.status();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let retry = response.headers().get(header::RETRY_AFTER).map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    match session {
        Some(session) if status == StatusCode::OK => {
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            app.clone().oneshot(post(&initialized, token, Some(&session))).await.unwrap();
            Ok(session)
        }
        _ => Err((status, retry, serde_json::from_slice(&bytes).unwrap_or(Value::Null))),
    }
}

/// The status of a `ping` in `session`.
async fn ping(app: &Router, token: &str, session: &str) -> StatusCode {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    app.clone().oneshot(post(&ping, token, Some(session))).await.unwrap().status()
}

#[tokio::test]
async fn a_full_server_refuses_new_sessions_and_ends_no_other_callers_session() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new().max_sessions(4));
    let mut alices = Vec::new();
    for _ in 0..4 {
        alices.push(open_session(&app, ALICE).await.unwrap());
    }
    let (status, retry, body) = open_session(&app, BOB).await.unwrap_err();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(retry.is_some(), "a refused session says when to retry");
    assert!(body["error"]["message"].as_str().unwrap().contains("4 sessions, its limit"), "{body}");
    for session in &alices {
        assert_eq!(ping(&app, ALICE, session).await, StatusCode::OK, "Alice's sessions all live");
    }
}

#[tokio::test]
async fn a_caller_past_its_share_of_sessions_ends_only_its_own_oldest() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new().max_sessions(10).max_sessions_per_caller(2));
    let bobs = open_session(&app, BOB).await.unwrap();
    let first = open_session(&app, ALICE).await.unwrap();
    let second = open_session(&app, ALICE).await.unwrap();
    let third = open_session(&app, ALICE).await.unwrap();
    assert_eq!(ping(&app, ALICE, &first).await, StatusCode::NOT_FOUND, "her own oldest made room");
    assert_eq!(ping(&app, ALICE, &second).await, StatusCode::OK);
    assert_eq!(ping(&app, ALICE, &third).await, StatusCode::OK);
    assert_eq!(ping(&app, BOB, &bobs).await, StatusCode::OK, "another caller's session is untouched");
}

#[tokio::test]
async fn a_client_named_like_a_subject_is_not_that_subject() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new());
    let alices = open_session(&app, ALICE).await.unwrap();
    assert_eq!(ping(&app, ALICE_CLIENT, &alices).await, StatusCode::NOT_FOUND);
    assert_eq!(ping(&app, ALICE, &alices).await, StatusCode::OK);
}

// ---------------------------------------------------------------------------------------------
// Input rounds (2026-07-28): only answers to questions asked are kept, and rounds are bounded.

/// `tools/call interview` with `inputResponses` and a `requestState`, over HTTP.
async fn interview_round(app: &Router, answers: Value, state: Option<&str>) -> Value {
    let mut params = json!({"name": "interview", "arguments": {}, "inputResponses": answers});
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    rpc(app, ALICE, "tools/call", params).await
}

fn accept(text: &str) -> Value {
    json!({"action": "accept", "content": {"text": text}})
}

#[tokio::test]
async fn answers_to_questions_never_asked_are_neither_kept_nor_sealed() {
    let server = server(Limits::new());
    let app = app(&server, HttpOptions::new());
    let mut junk = serde_json::Map::new();
    for i in 0..5000 {
        junk.insert(format!("junk-{i}"), accept("never asked"));
    }
    // A first round whose answers answer nothing asked yet: the first question is asked, and
    // nothing is sealed (an answer to a later question included: it is read once it is asked).
    let mut answers = junk.clone();
    answers.insert("third".into(), accept("too early"));
    let round = interview_round(&app, Value::Object(answers), None).await;
    assert_eq!(round["result"]["resultType"], "input_required", "{round}");
    assert!(round["result"]["inputRequests"]["first"].is_object());
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(state.len() < 256, "nothing unasked was sealed: {} bytes", state.len());

    // The answer to the question asked is read and sealed; the rest are not.
    let mut answers = junk.clone();
    answers.insert("first".into(), accept("one"));
    let round = interview_round(&app, Value::Object(answers), Some(&state)).await;
    assert!(round["result"]["inputRequests"]["second"].is_object(), "{round}");
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(state.len() < 512, "only the one answer was sealed: {} bytes", state.len());

    let round = interview_round(&app, json!({"second": accept("two")}), Some(&state)).await;
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();
    let done = interview_round(&app, json!({"third": accept("three")}), Some(&state)).await;
    assert_eq!(done["result"]["content"][0]["text"], "[3, 3, 5]", "{done}");
}

#[tokio::test]
async fn the_answers_a_request_carries_from_round_to_round_are_bounded() {
    let server = server(Limits::new().max_request_state_size(64 * 1024));
    let app = app(&server, HttpOptions::new());
    let round = interview_round(&app, json!({}), None).await;
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();
    let essay = "x".repeat(100 * 1024);
    let refused = interview_round(&app, json!({"first": accept(&essay)}), Some(&state)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("more than this server's limit of 65536"), "{message}");
    // The server goes on serving the same caller.
    let round = interview_round(&app, json!({"first": accept("short")}), Some(&state)).await;
    assert!(round["result"]["inputRequests"]["second"].is_object(), "{round}");
}

// ---------------------------------------------------------------------------------------------
// Deferred search reveals nothing of the tools a caller may not use.

fn deferred_server() -> Server {
    let tool = |name: &str, description: &str, tags: &[&str], scopes: &[&str]| {
        Tool::new(name, description, json!({"type": "object"}), |_, _| async {
            Ok(ToolResult::new().text("ok"))
        })
        .tags(tags.iter().copied())
        .scopes(scopes.iter().copied())
        .task(TaskSupport::Forbidden)
    };
    Server::builder()
        .inventory(false)
        .tool(tool("read_note", "Read a note.", &["notes"], &[]))
        .tool(tool("list_notes", "List the notes.", &["notes"], &[]))
        .tool(tool("purge_accounts", "Purge user accounts.", &["danger-zone"], &["admin"]))
        .defer_tools(DeferredTools::new())
        .build()
        .unwrap()
}

#[tokio::test]
async fn deferred_search_counts_and_names_only_what_every_caller_may_see() {
    let server = deferred_server();
    let client = TestClient::connect(&server).await;
    let tools = client.list_tools().await.unwrap();
    let search = tools.iter().find(|t| t["name"] == "search_tools").expect("the search meta-tool");
    let definition = search.to_string();
    assert!(!definition.contains("danger-zone"), "a hidden tool's tag is not named: {definition}");
    assert!(!definition.contains("3 tools"), "hidden tools are not counted: {definition}");
    assert!(definition.contains("notes"), "{definition}");

    // Over HTTP, a search that finds nothing hints at the tags of the caller's tools only.
    let app = app(&server, HttpOptions::new());
    let found =
        rpc(&app, BOB, "tools/call", json!({"name": "search_tools", "arguments": {"query": "zzqx vvkq"}}))
            .await;
    let text = found["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("notes") && !text.contains("danger-zone"), "{text}");
}
