//! The OpenAPI bridge (feature `openapi`) against a mock API (axum, in the test) described by
//! tests/data/openapi/pets.yaml: the tools generated (names, texts, annotations, schemas), and
//! calls in every parameter location, with JSON and form bodies, errors, the API key header,
//! binary and text answers, timeouts, cancellation, both protocol eras, scopes over HTTP; and,
//! against a mock that records each request as it arrives (tests/data/openapi/wire.yaml), that
//! no argument changes the path called or adds a header, cookie or query pair, and redirects.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use mcp_tools::auth::{Authorization, StaticTokens};
use mcp_tools::openapi::{OpenApi, Redirects};
use mcp_tools::testing::TestClient;
use mcp_tools::{AuthInfo, Era, HttpOptions, Server};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/openapi/pets.yaml");
const KEY: &str = "secret-key";

/// The mock API, on a free port; its base URL.
async fn mock_api() -> String {
    mock_api_watching_slow().await.0
}

/// How many requests to `/slow` began, and how many were dropped before answering.
#[derive(Clone, Default)]
struct SlowRequests {
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

/// Counts a dropped request when dropped before `finish`.
struct DropGuard(Option<Arc<AtomicUsize>>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(dropped) = self.0.take() {
            dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The mock API and its `/slow` counters.
async fn mock_api_watching_slow() -> (String, SlowRequests) {
    let slow = SlowRequests::default();
    let watched = slow.clone();
    fn authorized(headers: &HeaderMap) -> bool {
        headers.get("x-api-key").is_some_and(|v| v == KEY)
    }
    let app = Router::new()
        .route(
            "/v1/pets",
            get(|RawQuery(query): RawQuery| async move {
                json!([{"id": 1, "name": "Rex", "tag": null, "query": query}]).to_string()
            })
            .post(|headers: HeaderMap, body: String| async move {
                let pet: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let typed = headers.get("content-type").is_some_and(|v| v == "application/json");
                (
                    StatusCode::CREATED,
                    [("content-type", "application/json")],
                    json!({"id": 7, "name": pet["name"], "typed": typed}).to_string(),
                )
            }),
        )
        .route(
            "/v1/pets/{id}",
            get(|Path(id): Path<u64>, headers: HeaderMap| async move {
                if !authorized(&headers) {
                    return (StatusCode::UNAUTHORIZED, "no key").into_response();
                }
                if id == 404 {
                    return (StatusCode::NOT_FOUND, "no such pet").into_response();
                }
                ([("content-type", "application/json")], json!({"id": id, "name": "Rex"}).to_string())
                    .into_response()
            })
            .delete(|| async { StatusCode::NO_CONTENT }),
        )
        .route(
            "/v1/pets/{id}/photo",
            get(|| async { ([("content-type", "image/png")], vec![0x89u8, b'P', b'N', b'G']) }),
        )
        .route(
            "/v1/pets/{id}/notes",
            get(|Path(id): Path<String>, RawQuery(query): RawQuery| async move {
                let q = pairs(query.as_deref().unwrap_or_default());
                (
                    [("content-type", "application/json")],
                    json!({"path": id, "query": q.get("id")}).to_string(),
                )
            }),
        )
        .route(
            "/v1/login",
            post(|headers: HeaderMap, body: String| async move {
                let form =
                    headers.get("content-type").is_some_and(|v| v == "application/x-www-form-urlencoded");
                (
                    [("content-type", "text/plain")],
                    format!("welcome {}{}", pairs(&body)["user"], if form { "" } else { " (not a form?)" }),
                )
            }),
        )
        .route(
            "/v1/echo",
            get(|headers: HeaderMap, RawQuery(query): RawQuery| async move {
                let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
                (
                    [("content-type", "application/json")],
                    json!({"trace": header("x-trace"), "cookie": header("cookie"), "query": query})
                        .to_string(),
                )
            }),
        )
        .route("/v1/boom", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "kaboom") }))
        .route(
            "/v1/slow",
            get(move || {
                let slow = watched.clone();
                async move {
                    slow.started.fetch_add(1, Ordering::SeqCst);
                    let mut guard = DropGuard(Some(slow.dropped.clone()));
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    guard.0 = None;
                    "late"
                }
            }),
        )
        .route(
            "/v1/tree",
            post(|body: String| async move {
                fn count(tree: &Value) -> u64 {
                    1 + tree["children"].as_array().map_or(0, |c| c.iter().map(count).sum())
                }
                (
                    [("content-type", "application/json")],
                    json!({"nodes": count(&serde_json::from_str(&body).unwrap())}).to_string(),
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, slow)
}

/// `a=1&b=2` (no percent-decoding needed by these tests).
fn pairs(text: &str) -> HashMap<String, String> {
    text.split('&').filter_map(|p| p.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

fn api(base: &str) -> OpenApi {
    OpenApi::from_path(DOC).unwrap().base_url(base).header("X-Api-Key", KEY)
}

async fn client(api: &OpenApi) -> TestClient {
    let server = Server::builder().name("pets").inventory(false).tools(api.tools().unwrap()).build().unwrap();
    TestClient::connect(&server).await
}

fn by_name<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn every_operation_becomes_a_described_tool() {
    let base = mock_api().await;
    let api = api(&base);
    let c = client(&api).await;
    let tools = c.list_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "boom",
            "createPet",
            "deletePet",
            "echoRequest",
            "getPet",
            "getPetPhoto",
            "get_pets_id_notes",
            "listPets",
            "login",
            "plantTree",
            "slow"
        ]
    );
    // The multipart upload is skipped, and says why.
    let skipped = api.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0].0 == "PUT /pets/{petId}/photo" && skipped[0].1.contains("multipart/form-data"),
        "{skipped:?}"
    );
    assert_eq!(api.operation_count(), 12);

    let list = by_name(&tools, "listPets");
    assert_eq!(list["title"], "List the pets");
    assert_eq!(list["description"], "List the pets\n\nPets of the store, optionally filtered by tags.");
    assert_eq!(
        list["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(
        list["inputSchema"]["properties"]["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 100, "description": "How many at most."})
    );
    assert!(list.get("outputSchema").is_none(), "an array answer has no output schema");

    let get_pet = by_name(&tools, "getPet");
    assert_eq!(get_pet["inputSchema"]["required"], json!(["petId"]));
    assert_eq!(get_pet["inputSchema"]["properties"]["petId"]["description"], "The pet's id.");
    assert_eq!(
        get_pet["outputSchema"]["properties"]["tag"]["type"],
        json!(["string", "null"]),
        "nullable translated"
    );

    let create = by_name(&tools, "createPet");
    assert_eq!(create["inputSchema"]["required"], json!(["body"]));
    assert_eq!(create["inputSchema"]["properties"]["body"]["properties"]["name"]["examples"], json!(["Rex"]));
    assert_eq!(create["annotations"], json!({"destructiveHint": false, "openWorldHint": true}));

    let delete = by_name(&tools, "deletePet");
    assert_eq!(
        delete["annotations"],
        json!({"destructiveHint": true, "idempotentHint": true, "openWorldHint": true})
    );

    // Two locations sharing a name: both prefixed.
    let notes = by_name(&tools, "get_pets_id_notes");
    let props: Vec<&String> = notes["inputSchema"]["properties"].as_object().unwrap().keys().collect();
    assert_eq!(props, ["path_id", "query_id"]);

    // A recursive schema: in $defs, and valid JSON Schema.
    let tree = by_name(&tools, "plantTree");
    assert_eq!(tree["inputSchema"]["properties"]["body"], json!({"$ref": "#/$defs/Tree"}));
    assert!(tree["inputSchema"]["$defs"]["Tree"].is_object());
}

#[tokio::test]
async fn operations_go_through_the_servers_layers() {
    let base = mock_api().await;
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    let layer = tower::layer::layer_fn(move |inner: mcp_tools::middleware::ToolService| {
        let record = record.clone();
        tower::service_fn(move |call: mcp_tools::middleware::ToolCall| {
            record.lock().unwrap().push(format!("{} {}", call.name(), call.arguments().get()));
            inner.clone().oneshot(call)
        })
    });
    let tools = api(&base).tools().unwrap();
    let server = Server::builder().inventory(false).tools(tools).layer(layer).build().unwrap();
    let c = TestClient::connect(&server).await;
    let pet = c.call("getPet", json!({"petId": 3})).await.unwrap();
    assert_eq!(pet.structured(), Some(&json!({"id": 3, "name": "Rex"})));
    assert_eq!(*seen.lock().unwrap(), [r#"getPet {"petId":3}"#]);
}

#[tokio::test]
async fn calls_reach_the_api_with_every_parameter_location_and_body() {
    let base = mock_api().await;
    let c = client(&api(&base)).await;

    let pet = c.call("getPet", json!({"petId": 3})).await.unwrap();
    assert_eq!(pet.structured(), Some(&json!({"id": 3, "name": "Rex"})), "the API key header was sent");

    let pets = c.call("listPets", json!({"limit": 2, "tag": ["a", "b c"]})).await.unwrap();
    assert!(!pets.is_error());
    let listed: Value = serde_json::from_str(&pets.text()).unwrap();
    assert_eq!(listed[0]["query"], "limit=2&tag=a&tag=b+c", "arrays exploded, values encoded");

    let created = c.call("createPet", json!({"body": {"name": "Milo"}})).await.unwrap();
    assert_eq!(created.structured(), Some(&json!({"id": 7, "name": "Milo", "typed": true})));

    let notes = c.call("get_pets_id_notes", json!({"path_id": "a/b", "query_id": "q"})).await.unwrap();
    assert_eq!(
        notes.structured(),
        Some(&json!({"path": "a/b", "query": "q"})),
        "a path value is one encoded segment"
    );

    let login = c.call("login", json!({"body": {"user": "ada"}})).await.unwrap();
    assert_eq!(login.text(), "welcome ada");

    let echo = c
        .call(
            "echoRequest",
            json!({"X-Trace": "t-1", "session": "s-9", "filter": {"name": "Rex", "kind": "dog"}}),
        )
        .await
        .unwrap();
    let echoed = echo.structured().unwrap();
    assert_eq!(echoed["trace"], "t-1");
    assert_eq!(echoed["cookie"], "session=s-9");
    assert_eq!(echoed["query"], "filter%5Bname%5D=Rex&filter%5Bkind%5D=dog", "deepObject");

    let photo = c.call("getPetPhoto", json!({"petId": 1})).await.unwrap();
    assert_eq!(photo.content()[0]["type"], "resource");
    assert_eq!(photo.content()[0]["resource"]["mimeType"], "image/png");
    assert_eq!(photo.content()[0]["resource"]["blob"], "iVBORw==");

    let deleted = c.call("deletePet", json!({"petId": 1})).await.unwrap();
    assert_eq!(deleted.text(), "HTTP 204 No Content");

    let tree = c.call("plantTree", json!({"body": {"children": [{"children": [{}]}, {}]}})).await.unwrap();
    assert_eq!(tree.structured(), Some(&json!({"nodes": 4})));
}

#[tokio::test]
async fn api_failures_are_error_results_that_say_what_happened() {
    let base = mock_api().await;
    let c = client(&api(&base)).await;
    let boom = c.call("boom", json!({})).await.unwrap();
    assert!(boom.is_error());
    assert!(boom.text().contains("answered HTTP 500 Internal Server Error: kaboom"), "{}", boom.text());
    let missing = c.call("getPet", json!({"petId": 404})).await.unwrap();
    assert!(
        missing.is_error() && missing.text().contains("404 Not Found: no such pet"),
        "{}",
        missing.text()
    );
    let no_path = c.call("getPet", json!({})).await.unwrap();
    assert!(
        no_path.is_error() && no_path.text().contains("the path parameter `petId` is required"),
        "{}",
        no_path.text()
    );
    let no_body = c.call("createPet", json!({})).await.unwrap();
    assert!(
        no_body.is_error() && no_body.text().contains("the request `body` is required"),
        "{}",
        no_body.text()
    );

    // Without the API key, the API refuses: its answer is the error.
    let keyless = client(&OpenApi::from_path(DOC).unwrap().base_url(&base)).await;
    let refused = keyless.call("getPet", json!({"petId": 1})).await.unwrap();
    assert!(refused.is_error() && refused.text().contains("401 Unauthorized: no key"), "{}", refused.text());

    // A slow API: the request's timeout.
    let impatient = client(&api(&base).timeout(Duration::from_millis(200))).await;
    let late = impatient.call("slow", json!({})).await.unwrap();
    assert!(late.is_error() && late.text().contains("did not answer in time"), "{}", late.text());

    // Nothing listens.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nowhere = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let offline = client(&api(&nowhere)).await;
    let failed = offline.call("getPet", json!({"petId": 1})).await.unwrap();
    assert!(failed.is_error() && failed.text().contains("cannot connect"), "{}", failed.text());
}

#[tokio::test]
async fn arguments_are_checked_only_when_asked() {
    let base = mock_api().await;
    // By default a value the document forbids still reaches the API (which decides).
    let lenient = client(&api(&base)).await;
    let r = lenient.call("listPets", json!({"limit": 1000})).await.unwrap();
    assert!(!r.is_error(), "{}", r.text());
    let strict = client(&api(&base).validate_arguments(true)).await;
    let r = strict.call("listPets", json!({"limit": 1000})).await.unwrap();
    assert!(r.is_error() && r.text().contains("/limit"), "{}", r.text());
}

#[test]
fn filters_and_bad_documents() {
    let tools = |api: OpenApi| -> Vec<String> {
        let mut names: Vec<String> =
            api.base_url("http://127.0.0.1:1").tools().unwrap().iter().map(|t| t.name().to_owned()).collect();
        names.sort();
        names
    };
    let doc = || OpenApi::from_path(DOC).unwrap();
    assert_eq!(
        tools(doc().include_tags(["pets"]).exclude_tags(["admin"])),
        ["createPet", "getPet", "listPets"]
    );
    assert_eq!(tools(doc().methods(["DELETE"])), ["deletePet"]);
    assert_eq!(tools(doc().include_paths(["/pets/{petId}"])), ["deletePet", "getPet", "getPetPhoto"]);
    assert_eq!(tools(doc().exclude_paths(["/pets", "/echo", "/boom", "/slow", "/tree"])), ["login"]);

    let relative = OpenApi::from_path(DOC).unwrap().tools().unwrap_err();
    assert!(relative.0.contains("no absolute server URL (\"/v1\")"), "{relative}");
    let ftp = OpenApi::from_path(DOC).unwrap().base_url("ftp://example.com/v1").tools().unwrap_err();
    assert!(ftp.0.contains("not an http or https URL"), "{ftp}");
    let swagger = OpenApi::parse(r#"{"swagger": "2.0", "paths": {}}"#).unwrap_err();
    assert!(swagger.0.contains("Swagger 2.0 is not supported"), "{swagger}");
    let broken = OpenApi::parse("openapi: [unclosed").unwrap_err();
    assert!(broken.0.contains("not valid YAML"), "{broken}");
    let json =
        OpenApi::parse(r#"{"openapi": "3.1.0", "paths": {"/x": {"get": {"responses": {}}}}}"#).unwrap();
    assert_eq!(tools(json), ["get_x"]);
}

/// Polls `condition` for up to 5 s.
async fn eventually(condition: impl Fn() -> bool) -> bool {
    for _ in 0..100 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    condition()
}

#[tokio::test]
async fn cancelling_a_call_aborts_its_request() {
    let (base, slow) = mock_api_watching_slow().await;
    let c = client(&api(&base)).await;
    let id = c.send_request("tools/call", json!({"name": "slow", "arguments": {}}));
    assert!(eventually(|| slow.started.load(Ordering::SeqCst) == 1).await, "the request reached the API");
    assert_eq!(slow.dropped.load(Ordering::SeqCst), 0);
    c.notify("notifications/cancelled", json!({"requestId": id, "reason": "user"}));
    assert!(
        eventually(|| slow.dropped.load(Ordering::SeqCst) == 1).await,
        "the API saw the request abandoned (connection closed) once the call was cancelled"
    );
    let late = tokio::time::timeout(Duration::from_millis(200), c.answer(id)).await;
    assert!(late.is_err(), "no answer for a cancelled call");
    assert_eq!(c.call("getPet", json!({"petId": 2})).await.unwrap().structured().unwrap()["id"], 2);
}

#[tokio::test]
async fn generated_tools_serve_both_eras() {
    let base = mock_api().await;
    let server =
        Server::builder().name("pets").inventory(false).tools(api(&base).tools().unwrap()).build().unwrap();
    let legacy = TestClient::connect(&server).await;
    let current = TestClient::connect_stateless(&server);
    assert_eq!((legacy.era(), current.era()), (Era::Handshake, Era::Stateless));
    for c in [&legacy, &current] {
        let tools = c.list_tools().await.unwrap();
        assert_eq!(tools.len(), 11);
        assert_eq!(
            by_name(&tools, "getPet")["outputSchema"]["properties"]["tag"]["type"],
            json!(["string", "null"])
        );
        let pet = c.call("getPet", json!({"petId": 5})).await.unwrap();
        assert_eq!(pet.structured(), Some(&json!({"id": 5, "name": "Rex"})), "{:?}", c.era());
        let created = c.call("createPet", json!({"body": {"name": "Ada"}})).await.unwrap();
        assert_eq!(created.structured().unwrap()["name"], "Ada");
        let boom = c.call("boom", json!({})).await.unwrap();
        assert!(boom.is_error() && boom.text().contains("HTTP 500"), "{}", boom.text());
    }
}

#[tokio::test]
async fn a_response_larger_than_the_limit_is_an_error() {
    let base = mock_api().await;
    let c = client(&api(&base).max_response_size(16)).await;
    let r = c.call("getPet", json!({"petId": 1})).await.unwrap();
    assert!(r.is_error() && r.text().contains("larger than 16 bytes"), "{}", r.text());
    let small = c.call("deletePet", json!({"petId": 1})).await.unwrap();
    assert!(!small.is_error(), "{}", small.text());
}

#[tokio::test]
async fn scopes_guard_generated_tools_over_http() {
    const READER: &str = "0123456789abcdef0123456789abcdef-reader";
    const RESOURCE: &str = "http://localhost/mcp";
    let base = mock_api().await;
    // Reading needs pets:read; changing anything needs pets:write.
    let reads = api(&base).methods(["get"]).scopes(["pets:read"]).tools().unwrap();
    let writes =
        api(&base).methods(["post", "put", "patch", "delete"]).scopes(["pets:write"]).tools().unwrap();
    let server = Server::builder().name("pets").inventory(false).tools(reads).tools(writes).build().unwrap();
    let tokens = StaticTokens::new().token(READER, AuthInfo::new("reader").scopes(["pets:read"])).unwrap();
    let app =
        server.http_router(HttpOptions::new().authorization(Authorization::new(RESOURCE, tokens).unwrap()));
    let send = |body: Value, session: Option<String>| {
        let app = app.clone();
        async move {
            let mut request = Request::post("/mcp")
                .header(header::HOST, "localhost")
                .header(header::ACCEPT, "application/json, text/event-stream")
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::AUTHORIZATION, format!("Bearer {READER}"));
            if let Some(session) = session {
                request =
                    request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
            }
            let response = app.oneshot(request.body(Body::from(body.to_string())).unwrap()).await.unwrap();
            let status = response.status();
            let challenge =
                response.headers().get(header::WWW_AUTHENTICATE).map(|v| v.to_str().unwrap().to_owned());
            let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (status, challenge, serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null), session)
        }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, _, _, session) = send(initialize, None).await;
    assert_eq!(status, StatusCode::OK);
    let call = |name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let (_, _, listed, _) =
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), session.clone()).await;
    let mut names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["boom", "echoRequest", "getPet", "getPetPhoto", "get_pets_id_notes", "listPets", "slow"],
        "the reader sees only what it may call"
    );
    let (status, _, answer, _) = send(call("getPet", json!({"petId": 4})), session.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["structuredContent"], json!({"id": 4, "name": "Rex"}));
    let (status, challenge, _, _) = send(call("createPet", json!({"body": {"name": "X"}})), session).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "step-up");
    assert!(challenge.unwrap().contains(r#"scope="pets:write""#));
}

const WIRE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/openapi/wire.yaml");

/// One request as a recording mock received it: the request target as sent (no dot segment
/// resolved, nothing decoded) and every header, repeated ones too.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    }
}

#[derive(Clone, Default)]
struct Received(Arc<std::sync::Mutex<Vec<Seen>>>);

impl Received {
    /// `METHOD target` of every request received since the last call.
    fn lines(&self) -> Vec<String> {
        self.take().iter().map(|s| format!("{} {}", s.method, s.target)).collect()
    }
    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A mock that records every request and answers it with what it received (JSON), or with a
/// 302 to the location given for its path; its origin.
async fn recording_mock(redirects: Vec<(&'static str, String)>) -> (String, Received) {
    let received = Received::default();
    let log = received.clone();
    let redirects = Arc::new(redirects);
    let app = Router::new().fallback(move |request: Request<Body>| {
        let (log, redirects) = (log.clone(), redirects.clone());
        async move {
            let seen = Seen {
                method: request.method().to_string(),
                target: request.uri().to_string(),
                headers: request
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect(),
            };
            log.0.lock().unwrap().push(seen.clone());
            if let Some((_, location)) = redirects.iter().find(|(path, _)| *path == request.uri().path()) {
                return (StatusCode::FOUND, [(header::LOCATION, location.clone())]).into_response();
            }
            let body = json!({"method": seen.method, "target": seen.target, "headers": seen.headers});
            ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (origin, received)
}

/// The API described by wire.yaml (base URL `…/api`), and another origin it redirects to.
struct Wire {
    base: String,
    api: Received,
    elsewhere: String,
    stolen: Received,
}

async fn wire() -> Wire {
    let (elsewhere, stolen) = recording_mock(Vec::new()).await;
    let (origin, api) = recording_mock(vec![
        ("/api/redirect/elsewhere", format!("{elsewhere}/steal")),
        ("/api/redirect/here", "/api/echo?moved=1".into()),
        ("/api/redirect/away", "/api/redirect/elsewhere".into()),
        ("/api/redirect/loop", "/api/redirect/loop".into()),
    ])
    .await;
    Wire { base: format!("{origin}/api"), api, elsewhere, stolen }
}

fn wire_api(base: &str) -> OpenApi {
    OpenApi::from_path(WIRE).unwrap().base_url(base).header("X-Api-Key", KEY)
}

#[tokio::test]
async fn path_values_never_change_which_path_is_called() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let refused = [
        ("deleteSession", json!({"userId": "42", "sessionId": ".."}), "`sessionId`"),
        ("deleteSession", json!({"userId": "42", "sessionId": "."}), "`sessionId`"),
        ("deleteSession", json!({"userId": "..", "sessionId": "7"}), "`userId`"),
        ("getUserField", json!({"userId": "..", "field": ".."}), "`userId`"),
        ("deleteSession", json!({"userId": "42", "sessionId": [".."]}), "`sessionId`"),
        // Two parameters in one segment make one `..` together.
        ("getFile", json!({"stem": ".", "suffix": "."}), "`stem`"),
    ];
    for (tool, arguments, named) in refused {
        let r = c.call(tool, arguments.clone()).await.unwrap();
        assert!(
            r.is_error() && r.text().contains(named) && r.text().contains("path segment"),
            "{tool} {arguments}: {}",
            r.text()
        );
    }
    let empty = c.call("deleteSession", json!({"userId": "42", "sessionId": ""})).await.unwrap();
    assert!(
        empty.is_error() && empty.text().contains("the path parameter `sessionId` is empty"),
        "{}",
        empty.text()
    );
    assert_eq!(wire.api.lines(), Vec::<String>::new(), "nothing refused reached the API");

    // Dots that are not a whole segment, and encoded dots, are sent as they are: one segment.
    for session in ["...", ".hidden", "%2E%2E", "%2e", "a/../b", "..\\.."] {
        let r = c.call("deleteSession", json!({"userId": "42", "sessionId": session})).await.unwrap();
        assert!(!r.is_error(), "{session}: {}", r.text());
    }
    let file = c.call("getFile", json!({"stem": "a", "suffix": ".."})).await.unwrap();
    assert!(!file.is_error(), "{}", file.text());
    assert_eq!(
        wire.api.lines(),
        [
            "DELETE /api/users/42/sessions/...",
            "DELETE /api/users/42/sessions/.hidden",
            "DELETE /api/users/42/sessions/%252E%252E",
            "DELETE /api/users/42/sessions/%252e",
            "DELETE /api/users/42/sessions/a%2F..%2Fb",
            "DELETE /api/users/42/sessions/..%5C..",
            "GET /api/files/a..",
        ]
    );
}

#[tokio::test]
async fn redirects_are_not_followed_by_default() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let away = c.call("redirectElsewhere", json!({})).await.unwrap();
    let text = away.text();
    assert!(away.is_error(), "{text}");
    assert!(
        text.contains(&format!("answered a redirect (HTTP 302 Found) to {}/steal", wire.elsewhere))
            && text.contains("does not follow redirects")
            && text.contains("follow_redirects"),
        "{text}"
    );
    assert!(wire.stolen.take().is_empty(), "the other origin received nothing");
    // Not even within the API's origin.
    let here = c.call("redirectHere", json!({})).await.unwrap();
    let moved = format!("to {}/echo?moved=1", wire.base);
    assert!(here.is_error() && here.text().contains(&moved), "{}", here.text());
    assert_eq!(wire.api.lines(), ["GET /api/redirect/elsewhere", "GET /api/redirect/here"]);
}

#[tokio::test]
async fn same_origin_redirects_are_followed_and_others_refused() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base).follow_redirects(Redirects::SameOrigin)).await;
    let here = c.call("redirectHere", json!({})).await.unwrap();
    assert!(!here.is_error(), "{}", here.text());
    assert_eq!(here.structured().unwrap()["target"], "/api/echo?moved=1");
    assert_eq!(wire.api.lines(), ["GET /api/redirect/here", "GET /api/echo?moved=1"]);

    let elsewhere_origin = wire.elsewhere.as_str();
    for tool in ["redirectElsewhere", "redirectAway"] {
        let r = c.call(tool, json!({})).await.unwrap();
        let text = r.text();
        assert!(r.is_error(), "{tool}: {text}");
        assert!(
            text.contains(&format!("to {elsewhere_origin}/steal"))
                && text.contains(&format!("another origin ({elsewhere_origin})"))
                && text.contains("only within the API's origin"),
            "{tool}: {text}"
        );
    }
    assert!(wire.stolen.take().is_empty(), "the other origin received nothing");
    assert_eq!(
        wire.api.lines(),
        ["GET /api/redirect/elsewhere", "GET /api/redirect/away", "GET /api/redirect/elsewhere"]
    );

    let endless = c.call("redirectLoop", json!({})).await.unwrap();
    assert!(endless.is_error() && endless.text().contains("after 10 redirects"), "{}", endless.text());
    assert_eq!(wire.api.lines().len(), 11, "the first request and 10 redirects");
}

#[tokio::test]
async fn cookie_values_cannot_add_a_cookie() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let cookies = |arguments: Value| {
        let (c, wire) = (&c, &wire);
        async move {
            let r = c.call("echo", arguments).await.unwrap();
            assert!(!r.is_error(), "{}", r.text());
            wire.api.take().pop().unwrap().header("cookie").join(" | ")
        }
    };
    assert_eq!(cookies(json!({"pref": "dark; admin=1"})).await, "pref=dark%3B%20admin=1");
    assert_eq!(
        cookies(json!({"pref": "a,b\"c\\d%e\té\r\nX: y", "session": "s=1"})).await,
        "pref=a%2Cb%22c%5Cd%25e%09%C3%A9%0D%0AX:%20y; session=s=1"
    );
    // An array's items are joined by an encoded comma too (older parsers split cookies on `,`).
    assert_eq!(cookies(json!({"pref": ["x", "admin=1"]})).await, "pref=x%2Cadmin=1");
}

#[tokio::test]
async fn header_values_cannot_add_or_alter_a_header() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let r = c.call("echo", json!({"X-Trace": "a, b;c=\"d\""})).await.unwrap();
    assert!(!r.is_error(), "{}", r.text());
    let seen = wire.api.take().pop().unwrap();
    assert_eq!(seen.header("x-trace"), ["a, b;c=\"d\""], "a comma-separated value is one header");
    assert_eq!(seen.header("x-api-key"), [KEY]);
    for value in ["t\r\nX-Api-Key: stolen", "t\nX-Admin: 1", "t\rX", "t\0"] {
        let r = c.call("echo", json!({"X-Trace": value})).await.unwrap();
        assert!(
            r.is_error() && r.text().contains("the header parameter `X-Trace`") && r.text().contains("CR"),
            "{value:?}: {}",
            r.text()
        );
    }
    assert!(wire.api.take().is_empty(), "nothing refused reached the API");
}

#[tokio::test]
async fn a_caller_cannot_replace_the_configured_credentials_or_the_requests_own_headers() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let tools = c.list_tools().await.unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    let properties = echo["inputSchema"]["properties"].as_object().unwrap();
    assert!(properties.contains_key("X-Api-Key"), "a header parameter the document declares");
    for ignored in ["Authorization", "Content-Type"] {
        assert!(!properties.contains_key(ignored), "OpenAPI ignores a header parameter named {ignored}");
    }
    let r = c.call("echo", json!({"X-Api-Key": "the caller's own"})).await.unwrap();
    assert!(!r.is_error(), "{}", r.text());
    let seen = wire.api.take().pop().unwrap();
    assert_eq!(seen.header("x-api-key"), [KEY], "the configured key is sent, not the caller's");
}

#[tokio::test]
async fn query_values_cannot_add_a_pair() {
    let wire = wire().await;
    let c = client(&wire_api(&wire.base)).await;
    let arguments = json!({
        "q": "a&b=c#f",
        "filter": {"k]&admin=1&x[": "v&w=1"},
        "opts": {"o&p=1": "z?y"},
    });
    let r = c.call("echo", arguments).await.unwrap();
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(
        wire.api.lines(),
        ["GET /api/echo?q=a%26b%3Dc%23f&filter%5Bk%5D%26admin%3D1%26x%5B%5D=v%26w%3D1&o%26p%3D1=z%3Fy"]
    );
}

#[tokio::test]
async fn a_transformed_operation_is_served_and_called_as_transformed() {
    use mcp_tools::transform::{ArgTransform, ToolTransform};
    let base = mock_api().await;
    let server = Server::builder()
        .name("pets")
        .inventory(false)
        .tools(api(&base).tools().unwrap())
        .transform(
            "listPets",
            ToolTransform::new()
                .rename("list_cats")
                .description("The store's cats.")
                .argument("tag", ArgTransform::new().hide_with(json!(["cats"])))
                .argument("limit", ArgTransform::new().rename("at_most").default(5)),
        )
        .build()
        .unwrap();
    let c = TestClient::connect(&server).await;
    let tools = c.list_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t["name"] == "listPets"), "the original is not served");
    let cats = by_name(&tools, "list_cats");
    assert_eq!(cats["description"], "The store's cats.");
    let properties = cats["inputSchema"]["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["at_most"], "{cats}");
    assert_eq!(properties["at_most"]["default"], 5);
    // The hidden argument's fixed value and the new default reach the API under the
    // operation's own parameter names.
    let listed = c.call("list_cats", json!({})).await.unwrap();
    let listed: Value = serde_json::from_str(&listed.text()).unwrap();
    assert_eq!(listed[0]["query"], "limit=5&tag=cats");
    let listed = c.call("list_cats", json!({"at_most": 2})).await.unwrap();
    let listed: Value = serde_json::from_str(&listed.text()).unwrap();
    assert_eq!(listed[0]["query"], "limit=2&tag=cats");
    // The new schema is checked: the operation's own limits (1..=100) stay, the hidden
    // argument cannot be given.
    assert!(c.call("list_cats", json!({"at_most": 0})).await.unwrap().is_error());
    let smuggled = c.call("list_cats", json!({"tag": ["dogs"]})).await.unwrap();
    assert!(smuggled.is_error() && smuggled.text().contains("tag"), "{}", smuggled.text());
}
