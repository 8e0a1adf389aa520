//! The MCP client over Streamable HTTP (`ClientBuilder::connect_http`) against this crate's own
//! server on a local port, in both eras: lists, calls, errors, progress, the server's questions
//! (2025-11-25 requests on the call's stream; 2026-07-28 input rounds), resources, prompts,
//! `Mcp-Param-*` headers, the GET stream, listen streams, resumption after the server closes a
//! stream, cancellation, bearer tokens and renewed credentials, the fallback to a session, and
//! the end of a session (replaced by a new one); and against small hand-made servers: the
//! fallback whatever a 2025-only server answers `server/discover`, the reconnection delay a
//! server asks for, a revision refused then asked for again, and tools with invalid
//! `x-mcp-header` declarations left out.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use mcp_tools::auth::{Authorization, StaticTokens};
use mcp_tools::client::{
    Authenticator, BearerToken, CallOptions, Client, ClientBuilder, ClientError, EraChoice,
    ServerNotification,
};
use mcp_tools::{
    Auth, AuthInfo, Context, Elicitation, Era, HttpOptions, LogLevel, Prompt, PromptMessage, PromptResult,
    Resource, ResourceContents, Server, Tool, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Add two numbers.
#[tool(annotations(read_only, idempotent))]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Count to `n`, reporting progress.
#[tool]
async fn count(n: u32, ctx: Context) -> String {
    for i in 1..=n {
        ctx.report_progress(f64::from(i), Some(f64::from(n)), Some("counting"));
    }
    format!("counted to {n}")
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Greet the user by the name they give.
#[tool]
async fn greet(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("who").elicit::<Name>("Who are you?").await? {
        Elicitation::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Ask the model for a haiku.
#[tool]
async fn haiku(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx.sample(mcp_tools::SamplingRequest::new(50).user("a haiku about rust")).await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// What the HTTP request said: a header of the client's and the session.
#[tool]
async fn whoami(ctx: Context) -> String {
    let http = ctx.http().expect("over HTTP");
    let tenant = http.headers.get("x-tenant").and_then(|v| v.to_str().ok()).unwrap_or("-");
    format!("tenant={tenant} session={}", http.session_id.as_deref().unwrap_or("-"))
}

/// Closes its stream, then logs and answers: the client must reconnect to see either.
#[tool]
async fn reconnect(ctx: Context) -> String {
    let closed = ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "after the disconnect");
    format!("closed={closed}")
}

/// Runs until cancelled; counts the calls that ended so (their future dropped).
#[tool]
async fn forever() -> String {
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
        }
    }
    let _counted = Counted;
    std::future::pending::<String>().await
}

static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Needs `notes:admin` (a step-up over HTTP with authorization).
#[tool]
async fn admin_only(auth: Auth) -> Result<String, ToolError> {
    if !auth.has_scope("notes:admin") {
        return Err(ToolError::insufficient_scope(["notes:admin"]));
    }
    Ok(format!("admin {}", auth.subject().unwrap_or_default()))
}

/// A long job (a task for clients that follow tasks).
#[tool(task = "optional")]
async fn long_job() -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    "job done".into()
}

fn server() -> Server {
    let mirrored = Tool::new(
        "regional",
        "Echo the region, which a 2026-07-28 client mirrors in a header.",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"}
        }, "required": ["region"]}),
        |args, _| async move {
            Ok(ToolResult::new().text(format!(
                "{} x{}",
                args["region"].as_str().unwrap_or_default(),
                args["count"]
            )))
        },
    );
    Server::builder()
        .name("http-client-test")
        .instructions("Be nice.")
        .resource(Resource::fixed(
            "notes://one",
            "one",
            ResourceContents::text("notes://one", None, "the first note"),
        ))
        .prompt(Prompt::new("summarize", "Summarize.", |args, _| async move {
            let topic = args.get("topic").cloned().unwrap_or_default();
            Ok(PromptResult::new(vec![PromptMessage::user(format!("summarize {topic}"))]))
        }))
        .tool(Tool::new("fail", "Always fails.", json!({"type": "object"}), |_, _| async {
            Err::<ToolResult, _>(ToolError::new("it failed"))
        }))
        .tool(mirrored)
        .build()
        .unwrap()
}

/// `server` on a free local port; its endpoint's URL.
async fn serve(server: &Server, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = server.clone();
    tokio::spawn(async move { server.serve_http_on(listener, options, std::future::pending()).await });
    format!("http://{addr}/mcp")
}

fn builder() -> ClientBuilder {
    Client::builder()
        .name("http-test-client")
        .request_timeout(Duration::from_secs(30))
        .on_elicitation(|params| async move {
            assert_eq!(params["message"], "Who are you?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
        .on_sampling(|_| async {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "rust never sleeps"}, "model": "test"}))
        })
}

/// A client of each era over HTTP: a 2025-11-25 session, then 2026-07-28.
async fn clients(url: &str) -> [Client; 2] {
    [
        builder().era(EraChoice::Handshake).connect_http(url).await.unwrap(),
        builder().connect_http(url).await.unwrap(),
    ]
}

/// Waits (at most 10 s) for a notification `wanted` accepts.
async fn wait_for(
    notes: &mut tokio::sync::broadcast::Receiver<ServerNotification>,
    wanted: impl Fn(&ServerNotification) -> bool,
) -> bool {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match notes.recv().await {
                Ok(note) if wanted(&note) => return true,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return false,
            }
        }
    })
    .await
    .unwrap_or(false)
}

#[tokio::test]
async fn a_client_speaks_2026_by_default_and_a_session_when_asked() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let [session, stateless] = clients(&url).await;
    assert_eq!(session.era(), Era::Handshake);
    assert_eq!(session.protocol_version(), "2025-11-25");
    assert_eq!(stateless.era(), Era::Stateless);
    assert_eq!(stateless.protocol_version(), "2026-07-28");
    for client in [&session, &stateless] {
        assert_eq!(client.server_info().name, "http-client-test");
        assert_eq!(client.instructions(), Some("Be nice."));
        assert!(client.server_capabilities()["tools"].is_object());
        client.ping().await.unwrap();
    }
    // The session is named on every request; the stateless requests have none.
    let who = session.call_tool("whoami", json!({})).await.unwrap().text();
    assert!(who.starts_with("tenant=- session=") && who.len() > "tenant=- session=".len() + 8, "{who}");
    let again = session.call_tool("whoami", json!({})).await.unwrap().text();
    assert_eq!(who, again, "the same session");
    assert_eq!(stateless.call_tool("whoami", json!({})).await.unwrap().text(), "tenant=- session=-");
    // The builder's headers travel on every request, in both eras.
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let client = builder().era(era).header("X-Tenant", "acme").connect_http(&url).await.unwrap();
        let who = client.call_tool("whoami", json!({})).await.unwrap().text();
        assert!(who.starts_with("tenant=acme "), "{era:?}: {who}");
    }
}

#[tokio::test]
async fn tools_are_listed_and_called_and_errors_say_what_went_wrong_in_both_eras() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    for client in clients(&url).await {
        let era = client.era();
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        for expected in ["add", "fail", "count", "regional"] {
            assert!(names.contains(&expected), "{era:?}: {names:?}");
        }
        let added = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(added.text(), "5");
        assert!(!added.is_error());
        let failed = client.call_tool("fail", json!({})).await.unwrap();
        assert!(failed.is_error() && failed.text().contains("it failed"), "{era:?}: {failed:?}");
        // An unknown tool: -32602 (in 2026-07-28 an HTTP 400 carrying it).
        let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
        assert!(matches!(unknown, ClientError::Rpc { code: -32602, .. }), "{era:?}: {unknown:?}");
        let invalid = client.call_tool("add", json!({"a": "two"})).await.unwrap();
        assert!(invalid.is_error(), "{era:?}: an invalid argument is a tool error");
    }
}

#[tokio::test]
async fn progress_reaches_the_caller_in_both_eras() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    for client in clients(&url).await {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = CallOptions::new().progress(tx);
        let result = client.call_tool_with("count", json!({"n": 3}), options).await.unwrap();
        assert_eq!(result.text(), "counted to 3");
        let mut seen = Vec::new();
        while let Ok(progress) = rx.try_recv() {
            seen.push((progress.progress, progress.total, progress.message));
        }
        assert_eq!(seen.len(), 3, "{:?}: {seen:?}", client.era());
        assert_eq!(seen[0], (1.0, Some(3.0), Some("counting".to_owned())));
        assert_eq!(seen[2], (3.0, Some(3.0), Some("counting".to_owned())));
    }
}

#[tokio::test]
async fn the_servers_questions_are_answered_by_the_clients_handlers_in_both_eras() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    for client in clients(&url).await {
        let greeted = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(greeted.text(), "Hello, Ada!", "{:?}", client.era());
        let haiku = client.call_tool("haiku", json!({})).await.unwrap();
        assert_eq!(haiku.text(), "rust never sleeps", "{:?}", client.era());
    }
    // A call's own handler answers its questions.
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let client = builder().era(era).connect_http(&url).await.unwrap();
        let options = CallOptions::new().questions(|question| async move {
            assert_eq!(question.method, "elicitation/create");
            Ok(json!({"action": "accept", "content": {"name": "Grace"}}))
        });
        let greeted = client.call_tool_with("greet", json!({}), options).await.unwrap();
        assert_eq!(greeted.text(), "Hello, Grace!", "{era:?}");
    }
}

#[tokio::test]
async fn resources_and_prompts_in_both_eras() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    for client in clients(&url).await {
        let resources = client.list_resources().await.unwrap();
        assert_eq!(resources[0]["uri"], "notes://one");
        let read = client.read_resource("notes://one").await.unwrap();
        assert_eq!(read["contents"][0]["text"], "the first note");
        let missing = client.read_resource("notes://nope").await.unwrap_err();
        assert!(matches!(missing, ClientError::Rpc { .. }), "{missing:?}");
        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts[0]["name"], "summarize");
        let mut arguments = Map::new();
        arguments.insert("topic".into(), json!("rust"));
        let prompt = client.get_prompt("summarize", arguments).await.unwrap();
        assert_eq!(prompt["messages"][0]["content"]["text"], "summarize rust");
    }
}

#[tokio::test]
async fn mirrored_arguments_travel_in_mcp_param_headers() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let client = builder().connect_http(&url).await.unwrap();
    assert_eq!(client.era(), Era::Stateless);
    // Listing the tools teaches the client which arguments the headers mirror; the server
    // checks every `Mcp-Param-*` header against the arguments (400 otherwise).
    client.list_tools().await.unwrap();
    let plain = client.call_tool("regional", json!({"region": "eu-west-1", "count": 3})).await.unwrap();
    assert_eq!(plain.text(), "eu-west-1 x3");
    assert!(!plain.is_error());
    // Not plain ASCII: Base64 in the header, which the server decodes.
    let encoded = client.call_tool("regional", json!({"region": "Zürich", "count": 1})).await.unwrap();
    assert_eq!(encoded.text(), "Zürich x1");
    let without_count = client.call_tool("regional", json!({"region": "us"})).await.unwrap();
    assert_eq!(without_count.text(), "us xnull");
}

#[tokio::test]
async fn the_get_stream_delivers_list_changes_to_a_session() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let client = builder().era(EraChoice::Handshake).connect_http(&url).await.unwrap();
    let mut notes = client.notifications();
    // The GET stream opens after `notifications/initialized`: a change is retried until one
    // arrives, in case the first came before the stream was open.
    let mut heard = false;
    for i in 0..10 {
        let name = format!("late_{i}");
        server
            .add_tool(Tool::new(name, "Added later.", json!({"type": "object"}), |_, _| async {
                Ok(ToolResult::new().text("late"))
            }))
            .unwrap();
        let changed = tokio::time::timeout(Duration::from_secs(1), async {
            loop {
                if notes.recv().await.unwrap() == ServerNotification::ToolsChanged {
                    return;
                }
            }
        });
        if changed.await.is_ok() {
            heard = true;
            break;
        }
    }
    assert!(heard, "the tool list change arrived on the GET stream");
    let listed = client.list_tools().await.unwrap();
    assert!(listed.iter().any(|t| t["name"] == "late_0"));
}

#[tokio::test]
async fn a_listen_stream_stays_open_and_carries_list_changes() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let client = builder().connect_http(&url).await.unwrap();
    assert_eq!(client.era(), Era::Stateless);
    let mut notes = client.notifications();
    let listening = client.listen(json!({"toolsListChanged": true})).await.unwrap();
    for i in 0..2 {
        let name = format!("listened_{i}");
        server
            .add_tool(Tool::new(name, "Added later.", json!({"type": "object"}), |_, _| async {
                Ok(ToolResult::new().text("late"))
            }))
            .unwrap();
        assert!(wait_for(&mut notes, |n| *n == ServerNotification::ToolsChanged).await, "change {i} arrived");
    }
    drop(listening);
    // The client goes on working once the stream is gone.
    assert_eq!(client.call_tool("add", json!({"a": 1, "b": 1})).await.unwrap().text(), "2");
}

#[tokio::test]
async fn a_stream_the_server_closes_is_resumed_after_its_retry_delay() {
    let server = server();
    let retry = Duration::from_millis(400);
    let url = serve(&server, HttpOptions::new().resumable(retry)).await;
    let client = builder().era(EraChoice::Handshake).connect_http(&url).await.unwrap();
    let (logs, mut logged) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let result = client.call_tool_with("reconnect", json!({}), CallOptions::new().logs(logs)).await.unwrap();
    let took = started.elapsed();
    assert_eq!(
        result.text(),
        "closed=true",
        "the tool closed its stream and the answer came on the resumed one"
    );
    assert!(took >= retry, "the client waited the server's retry delay: {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The log sent while the client was away was replayed, as the call's own.
    match logged.try_recv() {
        Ok(ServerNotification::Log { data, .. }) => assert_eq!(data, "after the disconnect"),
        other => panic!("the replayed log: {other:?}"),
    }
    // Every answer of a resumable server comes as a numbered stream; ordinary calls go on.
    assert_eq!(client.call_tool("add", json!({"a": 2, "b": 2})).await.unwrap().text(), "4");
}

#[tokio::test]
async fn a_call_the_client_gives_up_on_is_cancelled_on_the_server_in_both_eras() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    for client in clients(&url).await {
        let before = CANCELLED.load(Ordering::SeqCst);
        let call = client.call_tool("forever", json!({}));
        assert!(tokio::time::timeout(Duration::from_millis(200), call).await.is_err(), "still running");
        for _ in 0..500 {
            if CANCELLED.load(Ordering::SeqCst) > before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            CANCELLED.load(Ordering::SeqCst) > before,
            "{:?}: the server cancelled the call",
            client.era()
        );
        assert_eq!(client.call_tool("add", json!({"a": 1, "b": 1})).await.unwrap().text(), "2");
    }
}

#[tokio::test]
async fn a_client_that_follows_tasks_gets_the_tasks_result() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let client = builder().tasks(true).connect_http(&url).await.unwrap();
    assert_eq!(client.era(), Era::Stateless);
    assert_eq!(client.call_tool("long_job", json!({})).await.unwrap().text(), "job done");
}

#[tokio::test]
async fn auto_falls_back_to_a_session_on_a_server_of_the_2025_era_only() {
    let old = Server::builder().name("old").only_era(Era::Handshake).build().unwrap();
    let url = serve(&old, HttpOptions::new()).await;
    let client = builder().connect_http(&url).await.unwrap();
    assert_eq!(client.era(), Era::Handshake);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().name, "old");
    assert_eq!(client.call_tool("add", json!({"a": 20, "b": 22})).await.unwrap().text(), "42");
    let greeted = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(greeted.text(), "Hello, Ada!");
    // Asked for 2026-07-28 only, the client says why it cannot.
    let error = builder().era(EraChoice::Stateless).connect_http(&url).await.unwrap_err();
    assert!(matches!(error, ClientError::Rpc { .. }), "{error:?}");
}

const TOKEN: &str = "bearer-token-0123456789abcdef0123456789";
/// The same caller, with more scopes.
const ADMIN: &str = "admin-token-0123456789abcdef0123456789a";

fn protected() -> HttpOptions {
    let tokens = StaticTokens::new()
        .token(TOKEN, AuthInfo::new("alice"))
        .unwrap()
        .token(ADMIN, AuthInfo::new("alice").scopes(["notes:admin"]))
        .unwrap();
    HttpOptions::new().authorization(Authorization::new("http://localhost/mcp", tokens).unwrap())
}

#[tokio::test]
async fn a_bearer_token_authorizes_every_request() {
    let server = server();
    let url = serve(&server, protected()).await;
    // Without a token: refused with the server's challenge.
    for era in [EraChoice::Handshake, EraChoice::Stateless] {
        let error = builder().era(era).connect_http(&url).await.unwrap_err();
        match &error {
            ClientError::Unauthorized(text) => {
                assert!(text.contains("401") && text.contains("Bearer"), "{text}")
            }
            other => panic!("{era:?}: {other:?}"),
        }
        let error = builder()
            .era(era)
            .auth(BearerToken::new("wrong-token-0123456789abcdef"))
            .connect_http(&url)
            .await;
        assert!(matches!(error, Err(ClientError::Unauthorized(_))), "{era:?}: {error:?}");
    }
    // With it, in both eras (a session's GET stream and DELETE carry it too).
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let client = builder().era(era).auth(BearerToken::new(TOKEN)).connect_http(&url).await.unwrap();
        assert_eq!(client.call_tool("add", json!({"a": 2, "b": 5})).await.unwrap().text(), "7");
        let greeted = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(greeted.text(), "Hello, Ada!");
        client.close().await;
    }
}

/// The refusals an authenticator was told of: the status, and the challenge's scope.
type Refusals = Arc<Mutex<Vec<(u16, Option<String>)>>>;

/// Gives a stale token until the server refuses it, then `renewed`.
struct Renewing {
    renewed: &'static str,
    token: Mutex<String>,
    refusals: Refusals,
}

impl Authenticator for Renewing {
    fn authorization<'a>(&'a self, _url: &'a str) -> BoxFuture<'a, Result<Option<String>, ClientError>> {
        Box::pin(async move { Ok(Some(format!("Bearer {}", self.token.lock().unwrap()))) })
    }

    fn refused<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, ClientError>> {
        Box::pin(async move {
            assert!(url.ends_with("/mcp"), "{url}");
            self.refusals.lock().unwrap().push((status, challenge.map(str::to_owned)));
            *self.token.lock().unwrap() = self.renewed.to_owned();
            Ok(true)
        })
    }
}

#[tokio::test]
async fn an_authenticator_renews_refused_credentials_and_the_request_is_sent_again() {
    let server = server();
    let url = serve(&server, protected()).await;
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let refusals = Arc::new(Mutex::new(Vec::new()));
        let auth = Renewing {
            renewed: TOKEN,
            token: Mutex::new("stale-token-0123456789abcdef".into()),
            refusals: refusals.clone(),
        };
        let client = builder().era(era).auth(auth).connect_http(&url).await.unwrap();
        assert_eq!(client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
        let refusals = refusals.lock().unwrap().clone();
        assert_eq!(refusals.len(), 1, "{era:?}: asked once, on the first request: {refusals:?}");
        assert_eq!(refusals[0].0, 401);
        assert!(refusals[0].1.as_deref().is_some_and(|c| c.starts_with("Bearer")), "{refusals:?}");
    }
}

#[tokio::test]
async fn a_call_that_needs_more_scopes_is_retried_with_the_token_the_authenticator_steps_up_to() {
    let server = server();
    let url = serve(&server, protected()).await;
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let refusals = Arc::new(Mutex::new(Vec::new()));
        let auth = Renewing { renewed: ADMIN, token: Mutex::new(TOKEN.into()), refusals: refusals.clone() };
        let client = builder().era(era).auth(auth).connect_http(&url).await.unwrap();
        assert_eq!(client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
        assert!(refusals.lock().unwrap().is_empty(), "the token was good until now");
        let admin = client.call_tool("admin_only", json!({})).await.unwrap();
        assert_eq!(admin.text(), "admin alice", "{era:?}");
        let refusals = refusals.lock().unwrap().clone();
        assert_eq!(refusals.len(), 1, "{era:?}: {refusals:?}");
        assert_eq!(refusals[0].0, 403);
        let challenge = refusals[0].1.clone().unwrap_or_default();
        assert!(challenge.contains("insufficient_scope") && challenge.contains("notes:admin"), "{challenge}");
        // A plain bearer token cannot step up: the call fails with the server's challenge.
        let plain = builder().era(era).auth(BearerToken::new(TOKEN)).connect_http(&url).await.unwrap();
        let error = plain.call_tool("admin_only", json!({})).await.unwrap_err();
        assert!(
            matches!(error, ClientError::Unauthorized(ref text) if text.contains("403")),
            "{era:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn closing_ends_the_session_and_a_session_the_server_ended_is_replaced() {
    let server = server();
    let url = serve(&server, HttpOptions::new()).await;
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches("/mcp").parse().unwrap();
    let client = builder().era(EraChoice::Handshake).connect_http(&url).await.unwrap();
    let who = client.call_tool("whoami", json!({})).await.unwrap().text();
    let session = who.rsplit("session=").next().unwrap().to_owned();
    assert_eq!(raw(addr, "POST", &session, &ping()).await, 200, "the session is alive");
    client.close().await;
    assert!(matches!(client.ping().await, Err(ClientError::Closed)));
    assert!(client.is_closed());
    assert_eq!(raw(addr, "POST", &session, &ping()).await, 404, "the client ended its session (DELETE)");

    // The server ends a session (here another party DELETEs it; a restarted server forgets
    // them all): the request it refused (404) goes out again in a new session, which the client
    // initializes (the 2025-11-25 transport says it MUST), and so do requests made meanwhile.
    let client = builder().era(EraChoice::Handshake).connect_http(&url).await.unwrap();
    let who = client.call_tool("whoami", json!({})).await.unwrap().text();
    let session = who.rsplit("session=").next().unwrap().to_owned();
    assert_eq!(raw(addr, "DELETE", &session, "").await, 200);
    let (first, second) =
        tokio::join!(client.call_tool("whoami", json!({})), client.call_tool("add", json!({"a": 1, "b": 1})));
    assert_eq!(second.unwrap().text(), "2");
    let renewed = first.unwrap().text().rsplit("session=").next().unwrap().to_owned();
    assert_ne!(renewed, session, "a new session");
    assert_eq!(client.call_tool("whoami", json!({})).await.unwrap().text(), who.replace(&session, &renewed));
    assert_eq!(raw(addr, "POST", &renewed, &ping()).await, 200, "the new session is alive");
    // The new session's GET stream delivers the server's notifications again (a change is made
    // until one arrives, in case the first came before the stream was open).
    let mut notes = client.notifications();
    let mut heard = false;
    for i in 0..10 {
        let tool =
            Tool::new(format!("renewed_{i}"), "Added later.", json!({"type": "object"}), |_, _| async {
                Ok(ToolResult::new().text("late"))
            });
        server.add_tool(tool).unwrap();
        let changed = tokio::time::timeout(Duration::from_secs(1), async {
            while notes.recv().await.unwrap() != ServerNotification::ToolsChanged {}
        });
        if changed.await.is_ok() {
            heard = true;
            break;
        }
    }
    assert!(heard, "the tool list change arrived on the new session's GET stream");
    client.close().await;
    assert_eq!(raw(addr, "POST", &renewed, &ping()).await, 404, "and is ended on close");
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let error = builder().connect_http(format!("http://{addr}/mcp")).await.unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
    let error = builder().connect_http("ftp://example.invalid/mcp").await.unwrap_err();
    assert!(matches!(error, ClientError::Transport(ref t) if t.contains("not an http")), "{error:?}");
}

fn ping() -> String {
    json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}).to_string()
}

/// One raw HTTP/1.1 request naming `session`; the response's status.
async fn raw(addr: SocketAddr, method: &str, session: &str, body: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Hand-made servers: what other servers answer.

/// How a hand-made 2025 server answers `server/discover`.
#[derive(Clone, Copy, Debug)]
enum Discover {
    /// 400, plain text (a session is required).
    PlainBadRequest,
    /// 404, no body.
    NotFound,
    /// 200, a JSON-RPC -32601 error.
    MethodNotFound,
    /// 200, an SSE stream carrying a JSON-RPC error.
    SseError,
    /// 200, an SSE stream that ends without an answer.
    SseNothing,
}

/// A minimal 2025-11-25 server (no session), its GET stream's connections (when, and their
/// `Last-Event-ID`), closing each after a priming event with `retry`.
#[derive(Clone)]
struct Fake {
    discover: Discover,
    retry_ms: u64,
    gets: Gets,
}

/// The GET stream's connections: when, and their `Last-Event-ID`.
type Gets = Arc<Mutex<Vec<(Instant, Option<String>)>>>;

fn sse(events: Vec<String>, then_close_after: Duration) -> Response {
    let first = futures_util::stream::iter(events.into_iter().map(|e| Ok::<_, Infallible>(Bytes::from(e))));
    let end = futures_util::stream::once(async move {
        tokio::time::sleep(then_close_after).await;
        Ok::<_, Infallible>(Bytes::from_static(b": bye\n\n"))
    });
    ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(first.chain(end))).into_response()
}

async fn fake_endpoint(fake: Fake, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    if method == Method::GET {
        let last = headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let n = {
            let mut gets = fake.gets.lock().unwrap();
            gets.push((Instant::now(), last));
            gets.len()
        };
        return sse(
            vec![format!("id: get-{n}\nretry: {}\ndata: \n\n", fake.retry_ms)],
            Duration::from_millis(100),
        );
    }
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = message["id"].clone();
    let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    match message["method"].as_str() {
        Some("server/discover") => match fake.discover {
            Discover::PlainBadRequest => {
                (StatusCode::BAD_REQUEST, "Bad Request: No valid session ID").into_response()
            }
            Discover::NotFound => StatusCode::NOT_FOUND.into_response(),
            Discover::MethodNotFound => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                ([(header::CONTENT_TYPE, "application/json")], error.to_string()).into_response()
            }
            Discover::SseError => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "not initialized"}});
                sse(vec![format!("event: message\ndata: {error}\n\n")], Duration::ZERO)
            }
            Discover::SseNothing => sse(vec![": nothing to say\n\n".into()], Duration::ZERO),
        },
        Some("initialize") => {
            let result = json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}});
            // Answered on a stream with event ids, closed a little after the answer.
            let events = vec![
                format!("id: init-0\nretry: {}\ndata: \n\n", fake.retry_ms),
                format!("id: init-1\nevent: message\ndata: {}\n\n", answer(result)),
            ];
            sse(events, Duration::from_millis(100))
        }
        Some(_) if !id.is_null() => {
            ([(header::CONTENT_TYPE, "application/json")], answer(json!({}))).into_response()
        }
        _ => StatusCode::ACCEPTED.into_response(),
    }
}

async fn serve_fake(fake: Fake) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |method: Method, headers: HeaderMap, body: Bytes| {
            fake_endpoint(fake.clone(), method, headers, body)
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn whatever_a_2025_server_answers_server_discover_the_client_falls_back_to_initialize() {
    for discover in [
        Discover::PlainBadRequest,
        Discover::NotFound,
        Discover::MethodNotFound,
        Discover::SseError,
        Discover::SseNothing,
    ] {
        let fake = Fake { discover, retry_ms: 60_000, gets: Arc::default() };
        let url = serve_fake(fake).await;
        let connecting = builder().request_timeout(Duration::from_secs(20)).connect_http(&url);
        let client = tokio::time::timeout(Duration::from_secs(10), connecting)
            .await
            .unwrap_or_else(|_| panic!("{discover:?}: the fallback did not hang"))
            .unwrap_or_else(|e| panic!("{discover:?}: {e}"));
        assert_eq!(client.era(), Era::Handshake, "{discover:?}");
        assert_eq!(client.protocol_version(), "2025-06-18");
        assert_eq!(client.server_info().name, "fake");
        client.ping().await.unwrap();
        client.close().await;
    }
}

#[tokio::test]
async fn the_get_stream_reconnects_after_the_servers_retry_delay_with_the_last_event_id() {
    let gets = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake { discover: Discover::PlainBadRequest, retry_ms: 700, gets: gets.clone() };
    let url = serve_fake(fake).await;
    let client = builder().connect_http(&url).await.unwrap();
    assert_eq!(client.era(), Era::Handshake);
    tokio::time::timeout(Duration::from_secs(10), async {
        while gets.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the client reconnected twice");
    client.close().await;
    let gets = gets.lock().unwrap().clone();
    assert_eq!(gets[0].1, None, "the first GET resumes nothing");
    assert_eq!(gets[1].1.as_deref(), Some("get-1"));
    assert_eq!(gets[2].1.as_deref(), Some("get-2"));
    for pair in gets.windows(2) {
        // The server closes each stream 100 ms after opening it; the client waits 700 ms more.
        let delay = pair[1].0 - pair[0].0;
        assert!(delay >= Duration::from_millis(750), "{delay:?}: not less than the retry delay");
        assert!(delay < Duration::from_millis(1_400), "{delay:?}: not much more");
    }
}

/// A 2026-07-28 server that refuses the first request as an unsupported revision (400, -32022,
/// naming 2026-07-28 among those it supports): the client asks again (SEP-2575) and speaks
/// 2026-07-28, not a session. The conformance suite's `request-metadata` scenario does this.
#[tokio::test]
async fn a_refused_revision_the_server_says_it_supports_is_asked_for_again() {
    let discovers = Arc::new(AtomicUsize::new(0));
    let seen = discovers.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let message: Value = serde_json::from_slice(&body).unwrap_or_default();
                let id = message["id"].clone();
                let version = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
                assert_eq!(version, Some("2026-07-28"), "{message}");
                assert_eq!(
                    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                    "2026-07-28"
                );
                if message["method"] == "server/discover" && seen.fetch_add(1, Ordering::SeqCst) == 0 {
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                        "message": "Unsupported protocol version",
                        "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
                    return (
                        StatusCode::BAD_REQUEST,
                        [(header::CONTENT_TYPE, "application/json")],
                        error.to_string(),
                    )
                        .into_response();
                }
                let result = match message["method"].as_str() {
                    Some("server/discover") => {
                        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "picky", "version": "1"}})
                    }
                    _ => json!({"resultType": "complete", "tools": []}),
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    for era in [EraChoice::Stateless, EraChoice::Auto] {
        discovers.store(0, Ordering::SeqCst);
        let client = builder().era(era).connect_http(&url).await.unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.era(), Era::Stateless, "{era:?}");
        assert_eq!(discovers.load(Ordering::SeqCst), 2, "{era:?}: refused once, then asked again");
        assert_eq!(client.list_tools().await.unwrap(), Vec::<Value>::new());
        client.close().await;
    }
}

/// A tool whose `x-mcp-header` declarations break SEP-2243's rules is left out of the tools a
/// 2026-07-28 client lists (it could not mirror their arguments faithfully); the others stay.
/// A 2025-11-25 session mirrors nothing, and lists every tool.
#[tokio::test]
async fn tools_with_invalid_header_declarations_are_left_out_in_2026() {
    let with = |header: Value, kind: &str| json!({"type": "object", "properties": {"p": {"type": kind, "x-mcp-header": header}}});
    let tools = json!([
        {"name": "valid", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "size": {"type": "number", "x-mcp-header": "Size"},
            "deep": {"type": "object", "properties": {"on": {"type": "boolean", "x-mcp-header": "On"}}}}}},
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"name": "empty", "inputSchema": with(json!(""), "string")},
        {"name": "space", "inputSchema": with(json!("My Region"), "string")},
        {"name": "colon", "inputSchema": with(json!("Region:Primary"), "string")},
        {"name": "non_ascii", "inputSchema": with(json!("Région"), "string")},
        {"name": "control", "inputSchema": with(json!("Region\t1"), "string")},
        {"name": "not_a_string", "inputSchema": with(json!(7), "string")},
        {"name": "object", "inputSchema": with(json!("Data"), "object")},
        {"name": "array", "inputSchema": with(json!("Items"), "array")},
        {"name": "null", "inputSchema": with(json!("Nil"), "null")},
        {"name": "twice", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}}},
    ]);
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: Bytes| {
            let tools = tools.clone();
            async move {
                let message: Value = serde_json::from_slice(&body).unwrap_or_default();
                let result = match message["method"].as_str() {
                    Some("server/discover") => {
                        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "headers", "version": "1"}})
                    }
                    Some("initialize") => {
                        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "headers", "version": "1"}})
                    }
                    Some("tools/list") => json!({"resultType": "complete", "tools": tools}),
                    _ => return StatusCode::ACCEPTED.into_response(),
                };
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let names =
        |tools: Vec<Value>| tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>();

    let client = builder().era(EraChoice::Stateless).connect_http(&url).await.unwrap();
    assert_eq!(names(client.list_tools().await.unwrap()), ["valid", "plain"]);
    client.close().await;
    let client = builder().era(EraChoice::Handshake).connect_http(&url).await.unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 12);
    client.close().await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_to_another_origin() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // Elsewhere: a real server, and how many requests reached it.
    let reached = Arc::new(AtomicUsize::new(0));
    let elsewhere = serve(&server(), HttpOptions::new()).await;
    let counting = reached.clone();
    let target = elsewhere.clone();
    let app =
        axum::Router::new().route(
            "/mcp",
            axum::routing::any(move || {
                counting.fetch_add(1, Ordering::SeqCst);
                let target = target.clone();
                async move {
                    (axum::http::StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, target)])
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redirecting = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let refused = builder().era(era).auth(BearerToken::new(TOKEN)).connect_http(&redirecting).await;
        let Err(error) = refused else { panic!("{era:?}: connected through a redirect") };
        let error = error.to_string();
        assert!(error.contains("307"), "{era:?}: {error}");
    }
    assert!(reached.load(Ordering::SeqCst) >= 2, "the redirecting server was asked");
    // The server the redirect named was never reached: connecting to it directly still works.
    let direct = builder().connect_http(&elsewhere).await.unwrap();
    assert_eq!(direct.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
}
