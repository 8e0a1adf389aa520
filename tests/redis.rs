//! Several servers sharing a real Redis (`mcp_tools::store::Redis`) as one service. Tasks: a task
//! started on one server is read, cancelled and answered through another; a task whose server
//! stopped reads as failed within the lease, and a finished one's result outlives its server;
//! Redis lost while serving gives clear errors and the
//! same server recovers when it is back; Redis unreachable at start-up is a clear error. Events:
//! a run-time catalog change, a resource update and a task's changes on one server reach the
//! listeners of another, once. Sessions (2025-11-25, over HTTP): created through one server,
//! served and ended through another, expiring only when idle everywhere; a call's question to the
//! client (elicitation) answered through another instance than the call's; a resumable stream
//! written on one server is resumed on another with exactly the missed events (also right after
//! its priming event; and answered with an error when its server stopped). Rate limits made
//! `shared`: a caller's calls split between servers are limited as one, callers apart, keys
//! expire, and Redis down means what the limit says (open or closed).
//!
//! Needs a Redis: `bash scripts/test-redis.sh` starts one and runs this file with
//! `MCP_TOOLS_REDIS_URL` (and `MCP_TOOLS_REDIS_SERVER`, the `redis-server` binary, for the test
//! that stops and restarts a Redis of its own). Each test uses keys of its own prefix.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_tools::middleware::RateLimit;
use mcp_tools::store::Redis;
use mcp_tools::testing::TestClient;
use mcp_tools::{
    AuthInfo, Context, Elicitation, Resource, ResourceContents, Server, Tool, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The lease the tests' instances hold: a stopped instance's tasks fail within it.
const LEASE: Duration = Duration::from_millis(1500);

/// Sleeps, then answers (a task for clients that support tasks).
#[tool(task = "optional")]
async fn nap(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// What the `watched` tools saw when they stopped, by tag: whether they were cancelled.
static STOPPED: Mutex<Option<HashMap<String, bool>>> = Mutex::new(None);

fn stopped(tag: &str) -> Option<bool> {
    STOPPED.lock().unwrap().as_ref().and_then(|m| m.get(tag).copied())
}

/// Records, when the tool's call is dropped, whether it was cancelled.
struct Watch(String, Context);

impl Drop for Watch {
    fn drop(&mut self) {
        STOPPED.lock().unwrap().get_or_insert_default().insert(self.0.clone(), self.1.is_cancelled());
    }
}

/// Runs for a minute unless stopped; records how it stopped under `tag`.
#[tool(task = "required")]
async fn watched(tag: String, ctx: Context) -> String {
    let _watch = Watch(tag, ctx);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "never cancelled".into()
}

#[derive(Deserialize, JsonSchema)]
struct Yes {
    yes: bool,
}

/// Works a little (becoming a task), then asks the client whether to go on.
#[tool(task = "required")]
async fn ask_then_go(ctx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answer = ctx.input_key("go").elicit::<Yes>("Go on?").await?;
    Ok(format!("went: {}", matches!(answer, Elicitation::Accept(Yes { yes: true }))))
}

/// Logs at the info level, then answers.
#[tool]
async fn chatty(ctx: Context) -> String {
    ctx.log(mcp_tools::LogLevel::Info, "chatting");
    "said it".into()
}

/// Asks the client whether to go on (in the call: a 2025-11-25 `elicitation/create`).
#[tool]
async fn confirm(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Yes>("Go on?").await?;
    Ok(format!("went: {}", matches!(answer, Elicitation::Accept(Yes { yes: true }))))
}

/// Works a while (time to listen to it), then asks the client whether to go on.
#[tool(task = "required")]
async fn ask_later(ctx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answer = ctx.input_key("go").elicit::<Yes>("Go on?").await?;
    Ok(format!("went: {}", matches!(answer, Elicitation::Accept(Yes { yes: true }))))
}

fn redis_url() -> String {
    std::env::var("MCP_TOOLS_REDIS_URL").expect(
        "MCP_TOOLS_REDIS_URL: run these tests with `bash scripts/test-redis.sh`, which starts a Redis",
    )
}

/// A prefix no other test (or run) uses.
fn unique_prefix() -> String {
    format!("test-{:016x}", fastrand::u64(..))
}

/// One instance: its own connections to the Redis at `url`, keys under `prefix`.
async fn instance(url: &str, prefix: &str) -> Server {
    let redis = Redis::builder(url)
        .prefix(prefix)
        .lease(LEASE)
        .timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    Server::builder().task_poll_interval(Duration::from_millis(50)).redis(redis).build().unwrap()
}

/// A 2026-07-28 client declaring the tasks extension, as the caller `alice` (a task belongs to
/// its creator's identity: the same caller reaches it through every instance).
fn client(server: &Server) -> TestClient {
    client_as(server, "alice")
}

fn client_as(server: &Server, subject: &str) -> TestClient {
    let capabilities = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    TestClient::connect_stateless_with(server, capabilities, |_, _| {
        unreachable!("no question is answered inline")
    })
    .with_identity(AuthInfo::new(subject))
}

async fn get(client: &TestClient, task_id: &str) -> Value {
    client.request("tasks/get", json!({"taskId": task_id})).await.unwrap()
}

/// Polls `tasks/get` until the task's status is `status` (at most `within`).
async fn wait_for(client: &TestClient, task_id: &str, status: &str, within: Duration) -> Value {
    let start = Instant::now();
    loop {
        let task = get(client, task_id).await;
        if task["status"] == status {
            return task;
        }
        assert!(
            start.elapsed() < within,
            "task {task_id} is still {} after {within:?}: {task}",
            task["status"]
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn start_task(client: &TestClient, tool: &str, arguments: Value) -> String {
    let created = client.call(tool, arguments).await.unwrap();
    let created = created.json();
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_through_one_server_is_polled_to_its_result_through_another() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (instance(&url, &prefix).await, instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let task_id = start_task(&on_a, "nap", json!({"millis": 300})).await;
    let working = get(&on_b, &task_id).await;
    assert_eq!((working["status"].as_str(), working["taskId"].as_str()), (Some("working"), Some(&*task_id)));
    let done = wait_for(&on_b, &task_id, "completed", Duration::from_secs(5)).await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms", "{done}");
    // Still the creator's: another caller on B is told it does not exist.
    let error = client_as(&b, "mallory").request("tasks/get", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(error.code, -32602, "{error:?}");
    assert!(error.message.contains("unknown task"), "{error:?}");
    // A third instance, started after the task ended, reads it too.
    let c = instance(&url, &prefix).await;
    assert_eq!(get(&client(&c), &task_id).await["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_through_b_stops_the_task_running_on_a() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (instance(&url, &prefix).await, instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let tag = format!("cancel-{prefix}");
    let task_id = start_task(&on_a, "watched", json!({"tag": tag})).await;
    assert_eq!(get(&on_b, &task_id).await["status"], "working");
    let acknowledged = on_b.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(acknowledged["resultType"], "complete");
    let cancelled = wait_for(&on_b, &task_id, "cancelled", Duration::from_secs(5)).await;
    assert_eq!(cancelled["statusMessage"], "cancelled by the client");
    assert_eq!(stopped(&tag), Some(true), "the tool on A was stopped by its cancellation");
    assert_eq!(get(&on_a, &task_id).await["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_sent_through_b_reach_the_question_of_the_task_on_a() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (instance(&url, &prefix).await, instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let task_id = start_task(&on_a, "ask_then_go", json!({})).await;
    let asking = wait_for(&on_b, &task_id, "input_required", Duration::from_secs(5)).await;
    let question = &asking["inputRequests"]["go"];
    assert_eq!(question["method"], "elicitation/create", "{asking}");
    // An answer to a question nobody asked is ignored; the real one is delivered to A.
    let answers =
        json!({"go": {"action": "accept", "content": {"yes": true}}, "other": {"action": "decline"}});
    let acknowledged =
        on_b.request("tasks/update", json!({"taskId": task_id, "inputResponses": answers})).await.unwrap();
    assert_eq!(acknowledged["resultType"], "complete");
    // Acknowledged once A took the answer and saved: the question is gone, read anywhere.
    let after = get(&on_b, &task_id).await;
    assert!(after.get("inputRequests").is_none_or(|asked| asked.get("go").is_none()), "{after}");
    let done = wait_for(&on_b, &task_id, "completed", Duration::from_secs(5)).await;
    assert_eq!(done["result"]["content"][0]["text"], "went: true", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_server_stopped_reads_failed_within_the_lease() {
    let (url, prefix) = (redis_url(), unique_prefix());
    // Server A on a runtime of its own: shutting that runtime down stops it as a killed process
    // would stop (its task, its lease's renewal and its connections end, nothing is saved).
    let runtime_a =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (url_a, prefix_a, tag) = (url.clone(), prefix.clone(), format!("killed-{prefix}"));
    let (a, on_a, task_id) = runtime_a
        .spawn(async move {
            let a = instance(&url_a, &prefix_a).await;
            let on_a = client(&a);
            let task_id = start_task(&on_a, "watched", json!({"tag": tag})).await;
            (a, on_a, task_id)
        })
        .await
        .unwrap();
    let b = instance(&url, &prefix).await;
    let on_b = client(&b);
    assert_eq!(get(&on_b, &task_id).await["status"], "working");
    runtime_a.shutdown_background();
    let stopped_at = Instant::now();
    // The lease was renewed less than a third of it ago: the task still reads as working.
    assert_eq!(get(&on_b, &task_id).await["status"], "working", "not failed before its lease ran out");
    let failed = wait_for(&on_b, &task_id, "failed", LEASE + Duration::from_secs(2)).await;
    let took = stopped_at.elapsed();
    assert!(
        took <= LEASE + Duration::from_millis(500),
        "failed {took:?} after the stop; the lease is {LEASE:?}"
    );
    assert_eq!(failed["statusMessage"], "the server instance running it stopped", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed["error"]["message"].as_str().unwrap().contains("the server instance running it stopped"));
    // Saved so: it stays failed, also read through a new instance.
    let c = instance(&url, &prefix).await;
    assert_eq!(get(&client(&c), &task_id).await["status"], "failed");
    std::mem::forget((a, on_a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_tasks_result_outlives_the_instance_that_ran_it() {
    let (url, prefix) = (redis_url(), unique_prefix());
    // A on a runtime of its own, stopped as a killed process stops, once its task finished.
    let runtime_a =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (url_a, prefix_a) = (url.clone(), prefix.clone());
    let (a, on_a, task_id) = runtime_a
        .spawn(async move {
            let a = instance(&url_a, &prefix_a).await;
            let on_a = client(&a);
            let task_id = start_task(&on_a, "nap", json!({"millis": 50})).await;
            wait_for(&on_a, &task_id, "completed", Duration::from_secs(5)).await;
            (a, on_a, task_id)
        })
        .await
        .unwrap();
    runtime_a.shutdown_background();
    // Past A's lease: A is gone for good, not merely slow.
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    // An instance started afterwards (A "restarted", or any other) reads the result, as often as
    // asked: nothing was kept in A's memory only.
    let b = instance(&url, &prefix).await;
    for _ in 0..2 {
        let done = get(&client(&b), &task_id).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["content"][0]["text"], "slept 50 ms", "{done}");
    }
    std::mem::forget((a, on_a));
}

/// A Redis of this test's own, which it stops and starts again (append-only file on, so what
/// was saved before the stop is there after it).
struct OwnRedis {
    binary: String,
    dir: std::path::PathBuf,
    port: u16,
    child: Option<std::process::Child>,
}

impl OwnRedis {
    fn start() -> OwnRedis {
        let binary = std::env::var("MCP_TOOLS_REDIS_SERVER")
            .expect("MCP_TOOLS_REDIS_SERVER: run these tests with `bash scripts/test-redis.sh`");
        let dir = std::env::temp_dir().join(format!("mcp-tools-redis-{}", unique_prefix()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut redis = OwnRedis { binary, dir, port, child: None };
        redis.run();
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn run(&mut self) {
        let child = std::process::Command::new(&self.binary)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_lost_while_serving_fails_clearly_and_the_same_servers_recover_when_it_is_back() {
    let mut redis = OwnRedis::start();
    let prefix = unique_prefix();
    let (a, b) = (instance(&redis.url(), &prefix).await, instance(&redis.url(), &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let before = start_task(&on_a, "nap", json!({"millis": 10})).await;
    wait_for(&on_b, &before, "completed", Duration::from_secs(5)).await;

    redis.stop();
    let asked = Instant::now();
    let error = on_b.request("tasks/get", json!({"taskId": before})).await.unwrap_err();
    assert!(asked.elapsed() < Duration::from_secs(3), "answered in {:?}", asked.elapsed());
    assert_eq!(error.code, -32603, "{error:?}");
    assert!(
        error.message.contains("the task store failed") && error.message.contains(&redis.url()),
        "names the store and the Redis: {error:?}"
    );
    let error = on_a.call("nap", json!({"millis": 10})).await.unwrap_err();
    assert!(error.message.contains("the task could not be created"), "{error:?}");
    let error = on_a.request("tasks/cancel", json!({"taskId": before})).await.unwrap_err();
    assert!(error.message.contains("the task store failed"), "{error:?}");

    redis.run();
    // The same servers, not restarted: they reconnect by themselves.
    let start = Instant::now();
    let back = loop {
        match on_b.request("tasks/get", json!({"taskId": before})).await {
            Ok(task) => break task,
            Err(e) => assert!(start.elapsed() < Duration::from_secs(10), "still failing: {e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(back["result"]["content"][0]["text"], "slept 10 ms", "kept across the restart: {back}");
    let after = start_task(&on_a, "nap", json!({"millis": 10})).await;
    wait_for(&on_b, &after, "completed", Duration::from_secs(5)).await;
    // A's subscription to the bus is back too (retried with back-off): a cancellation through B
    // reaches its task. One published before A subscribed again is lost, so it is sent again.
    let tag = format!("recovered-{prefix}");
    let watched = start_task(&on_a, "watched", json!({"tag": tag})).await;
    let start = Instant::now();
    while stopped(&tag).is_none() {
        assert!(start.elapsed() < Duration::from_secs(15), "A never heard the cancellation");
        on_b.request("tasks/cancel", json!({"taskId": watched})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(stopped(&tag), Some(true));
    wait_for(&on_b, &watched, "cancelled", Duration::from_secs(5)).await;
}

#[tokio::test]
async fn redis_unreachable_at_start_up_is_a_clear_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/");
    let error =
        Redis::builder(&url).timeout(Duration::from_millis(500)).connect().await.unwrap_err().to_string();
    let shown = format!("redis://***@127.0.0.1:{port}/");
    assert!(error.starts_with(&format!("cannot connect to Redis at {shown}")), "{error}");
    assert!(!error.contains("hunter2"), "the password is not shown: {error}");
    let error = Redis::connect("http://example.com/").await.unwrap_err().to_string();
    assert!(error.starts_with("invalid Redis URL http://example.com/"), "{error}");

    // The command line's `--redis`: exit code 2 when unreachable; served from Redis otherwise.
    let server = Server::builder().build().unwrap();
    let unreachable = format!("redis://127.0.0.1:{port}/");
    let code = server.run_cli(["--redis", &unreachable, "call", "nap", r#"{"millis": 0}"#]).await;
    assert_eq!(code, ExitCode::from(2));
    let code = server.run_cli(["call", "nap", r#"{"millis": 0}"#, "--redis", &redis_url()]).await;
    assert_eq!(code, ExitCode::SUCCESS);
    let code = server.run_cli(["list", "--redis", &redis_url()]).await;
    assert_eq!(code, ExitCode::from(2), "--redis goes with serving or call only");
}

// ---------------------------------------------------------------------------------------------
// Events between instances: a change made on one instance is heard by the listeners of every
// other, exactly as if it were their own, and once on its own.

const WATCHED: &str = "test://watched";

/// An instance serving one subscribable resource, with a 2026-07-28 listener and a 2025-11-25
/// session subscribed to it.
async fn watching_instance(url: &str, prefix: &str) -> Server {
    let redis = Redis::builder(url).prefix(prefix).lease(LEASE).connect().await.unwrap();
    Server::builder()
        .task_poll_interval(Duration::from_millis(50))
        .resource(Resource::fixed(WATCHED, "watched", ResourceContents::text(WATCHED, None, "v1")))
        .redis(redis)
        .build()
        .unwrap()
}

/// Opens a listen stream on `client`, waiting for its acknowledgement; its id.
async fn listen(client: &TestClient, filter: Value) -> i64 {
    let id = client.send_request("subscriptions/listen", json!({"notifications": filter}));
    let ack = tokio::time::timeout(
        Duration::from_secs(5),
        client.notification("notifications/subscriptions/acknowledged"),
    )
    .await
    .expect("acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
    id
}

/// The next notification named `method`, within a few seconds.
async fn heard(client: &TestClient, method: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(5), client.notification(method))
        .await
        .unwrap_or_else(|_| panic!("no {method} within 5 s"))
}

/// Nothing more heard, after a while for anything late (a duplicate, a loop) to arrive.
async fn nothing_more(client: &TestClient, who: &str) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rest = client.take_notifications().await;
    assert!(rest.is_empty(), "{who} heard more: {rest:?}");
}

fn late_tool() -> Tool {
    Tool::new("late", "Added at run time.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().text("late"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_on_a_is_heard_by_the_listeners_of_b_and_once_by_as_own() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let (listening_a, listening_b) = (
        listen(&on_a, json!({"toolsListChanged": true})).await,
        listen(&on_b, json!({"toolsListChanged": true, "promptsListChanged": true})).await,
    );
    let session_b = TestClient::connect(&b).await;

    a.add_tool(late_tool()).unwrap();
    let changed = heard(&on_b, "notifications/tools/list_changed").await;
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listening_b);
    heard(&session_b, "notifications/tools/list_changed").await;
    let own = heard(&on_a, "notifications/tools/list_changed").await;
    assert_eq!(own["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listening_a);
    // Once each: B does not publish what it heard back to A, nor tell its listeners twice.
    nothing_more(&on_a, "A's listener").await;
    nothing_more(&on_b, "B's listener").await;
    nothing_more(&session_b, "B's session").await;
    // The event says "list again": B's catalog is its own (the application adds the tool on
    // every instance; here it has not yet on B).
    assert!(!b.tool_names().contains(&"late".to_owned()));

    // Removing a resource on B: resources list listeners on A hear it; B's (not asking) do not.
    let resources_a = TestClient::connect(&a).await;
    assert!(b.remove_resource(WATCHED));
    heard(&resources_a, "notifications/resources/list_changed").await;
    nothing_more(&on_b, "B's listener (it asked for tools and prompts)").await;
    nothing_more(&on_a, "A's listener (it asked for tools)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_updated_on_a_reaches_the_subscribers_of_b_only() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let listening = listen(&on_b, json!({"resourceSubscriptions": [WATCHED]})).await;
    listen(&on_a, json!({"toolsListChanged": true})).await;
    let session_b = TestClient::connect(&b).await;
    session_b.request("resources/subscribe", json!({"uri": WATCHED})).await.unwrap();
    let unsubscribed_b = TestClient::connect(&b).await;

    a.notify_resource_updated(WATCHED);
    let updated = heard(&on_b, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], WATCHED);
    assert_eq!(updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listening);
    assert_eq!(heard(&session_b, "notifications/resources/updated").await["params"]["uri"], WATCHED);
    nothing_more(&on_b, "B's listener").await;
    nothing_more(&session_b, "B's session").await;
    nothing_more(&unsubscribed_b, "a session of B not subscribed").await;
    nothing_more(&on_a, "A's listener (not subscribed)").await;
    // Another URI: nobody subscribed to it.
    a.notify_resource_updated("test://other");
    nothing_more(&on_b, "B's listener").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_b_hears_the_changes_of_a_task_running_on_a() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (instance(&url, &prefix).await, instance(&url, &prefix).await);
    let (on_a, on_b) = (client(&a), client(&b));
    let task_id = start_task(&on_a, "ask_later", json!({})).await;
    listen(&on_b, json!({"taskIds": [task_id]})).await;
    let asking = heard(&on_b, "notifications/tasks").await;
    assert_eq!(
        (asking["params"]["taskId"].as_str(), asking["params"]["status"].as_str()),
        (Some(&*task_id), Some("input_required")),
        "{asking}"
    );
    let answers = json!({"go": {"action": "accept", "content": {"yes": true}}});
    on_b.request("tasks/update", json!({"taskId": task_id, "inputResponses": answers})).await.unwrap();
    // Completed with its result (working again first, unless it ended as soon as answered).
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let change = heard(&on_b, "notifications/tasks").await;
        statuses.push(change["params"]["status"].as_str().unwrap().to_owned());
        if change["params"]["status"] == "completed" {
            assert_eq!(change["params"]["result"]["content"][0]["text"], "went: true", "{change}");
        }
    }
    assert!(statuses == ["completed"] || statuses == ["working", "completed"], "{statuses:?}");
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25 sessions shared over HTTP: created through one instance, served by any, ended
// through any; idle expiry kept.

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn http_post(session: Option<&str>, body: &Value) -> axum::http::Request<axum::body::Body> {
    let mut request = axum::http::Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(axum::body::Body::from(body.to_string())).unwrap()
}

async fn exchange(app: &axum::Router, request: axum::http::Request<axum::body::Body>) -> (u16, Value) {
    use tower::ServiceExt as _;
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    // A JSON answer, or the last message of an SSE stream.
    let json = text.lines().filter_map(|l| l.strip_prefix("data: ")).rfind(|d| !d.is_empty()).map_or_else(
        || serde_json::from_str(&text).unwrap_or(Value::Null),
        |d| serde_json::from_str(d).unwrap(),
    );
    (status, json)
}

async fn open_session(app: &axum::Router) -> String {
    use tower::ServiceExt as _;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "shared", "version": "1"}}});
    let response = app.clone().oneshot(http_post(None, &initialize)).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

async fn rpc(app: &axum::Router, session: &str, id: u64, method: &str, params: Value) -> (u16, Value) {
    exchange(
        app,
        http_post(Some(session), &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
    )
    .await
}

fn get_stream(session: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .body(axum::body::Body::empty())
        .unwrap()
}

fn delete(session: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", session)
        .body(axum::body::Body::empty())
        .unwrap()
}

/// Waits until `check` holds (at most 3 s), polling.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < Duration::from_secs(3), "not within 3 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_initialized_through_a_is_served_by_b_and_ended_through_either() {
    use futures_util::StreamExt as _;
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let options = || mcp_tools::HttpOptions::new().keep_alive(None);
    let (app_a, app_b) = (a.http_router(options()), b.http_router(options()));
    let session = open_session(&app_a).await;

    // B accepts it at once, in the revision negotiated on A.
    let (status, pong) = rpc(&app_b, &session, 2, "ping", json!({})).await;
    assert_eq!((status, &pong["result"]), (200, &json!({})), "{pong}");
    let (status, called) =
        rpc(&app_b, &session, 3, "tools/call", json!({"name": "nap", "arguments": {"millis": 1}})).await;
    assert_eq!(status, 200);
    assert_eq!(called["result"]["content"][0]["text"], "slept 1 ms", "{called}");
    let (status, _) = rpc(&app_b, "0123456789abcdef0123456789abcdef", 4, "ping", json!({})).await;
    assert_eq!(status, 404, "an unknown session is still unknown");

    // The GET stream is on A; the subscription is made through B and the update happens on a
    // third instance: A's stream carries it.
    let stream = {
        use tower::ServiceExt as _;
        app_a.clone().oneshot(get_stream(&session)).await.unwrap()
    };
    assert_eq!(stream.status().as_u16(), 200);
    let (status, subscribed) = rpc(&app_b, &session, 5, "resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!((status, &subscribed["result"]), (200, &json!({})), "{subscribed}");
    let c = watching_instance(&url, &prefix).await;
    let mut events = stream.into_body().into_data_stream();
    // A reads the session again when B's change reaches it (the bus): retried until then.
    let updated = loop {
        c.notify_resource_updated(WATCHED);
        match tokio::time::timeout(Duration::from_millis(300), events.next()).await {
            Ok(Some(Ok(chunk))) => break String::from_utf8(chunk.to_vec()).unwrap(),
            Ok(other) => panic!("the stream ended: {other:?}"),
            Err(_) => continue,
        }
    };
    assert!(updated.contains("notifications/resources/updated") && updated.contains(WATCHED), "{updated}");

    // DELETE through B ends it on B and on A.
    let response = {
        use tower::ServiceExt as _;
        app_b.clone().oneshot(delete(&session)).await.unwrap()
    };
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(rpc(&app_b, &session, 6, "ping", json!({})).await.0, 404);
    // At once on A too, which holds a copy: not only once the news of the end reaches it (the
    // official suite's lifecycle check, through nginx, caught A still answering 200).
    assert_eq!(rpc(&app_a, &session, 7, "ping", json!({})).await.0, 404, "A still served the ended session");
    // And a new instance does not find it either.
    let d = watching_instance(&url, &prefix).await;
    assert_eq!(rpc(&d.http_router(options()), &session, 8, "ping", json!({})).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_lives_while_used_anywhere_and_expires_when_idle_everywhere() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let idle = Duration::from_millis(600);
    let options = || mcp_tools::HttpOptions::new().session_idle_timeout(idle);
    let (app_a, app_b) = (a.http_router(options()), b.http_router(options()));
    let session = open_session(&app_a).await;
    // Used on B only, for longer than the timeout: A's record stays alive in Redis.
    let start = Instant::now();
    let mut id = 10;
    while start.elapsed() < idle * 2 {
        id += 1;
        assert_eq!(rpc(&app_b, &session, id, "ping", json!({})).await.0, 200, "after {:?}", start.elapsed());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A log level set through B holds on A.
    let logs_on_a = async |id| {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}});
        use tower::ServiceExt as _;
        let response = app_a.clone().oneshot(http_post(Some(&session), &call)).await.unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        assert!(text.contains("said it"), "{text}");
        text.contains("notifications/message")
    };
    assert!(logs_on_a(80).await, "info logs are sent by default");
    let (status, _) = rpc(&app_b, &session, 90, "logging/setLevel", json!({"level": "error"})).await;
    assert_eq!(status, 200);
    let mut id = 100;
    eventually("A's copy takes the log level set through B", async || {
        id += 1;
        !logs_on_a(id).await
    })
    .await;
    // Unused everywhere: gone everywhere.
    tokio::time::sleep(idle * 2).await;
    assert_eq!(rpc(&app_b, &session, 92, "ping", json!({})).await.0, 404);
    assert_eq!(rpc(&app_a, &session, 93, "ping", json!({})).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_by_a_call_on_a_is_answered_through_b() {
    use futures_util::StreamExt as _;
    use tower::ServiceExt as _;
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let options = || mcp_tools::HttpOptions::new().keep_alive(None);
    let (app_a, app_b) = (a.http_router(options()), b.http_router(options()));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "shared", "version": "1"}}});
    let response = app_a.clone().oneshot(http_post(None, &initialize)).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    // B has served the session before (it holds a copy whose requests would be numbered alike).
    assert_eq!(rpc(&app_b, &session, 2, "ping", json!({})).await.0, 200);

    // The call runs on A; its question comes on the call's stream, from A.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "confirm", "arguments": {}}});
    let response = app_a.clone().oneshot(http_post(Some(&session), &call)).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut stream = response.into_body().into_data_stream();
    let mut next_message = async || -> Value {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("a message within 5 s")
            .expect("the stream goes on")
            .unwrap();
        let text = String::from_utf8(chunk.to_vec()).unwrap();
        let data = text.lines().find_map(|l| l.strip_prefix("data: ").filter(|d| !d.is_empty()));
        serde_json::from_str(data.unwrap_or_else(|| panic!("no message in {text:?}"))).unwrap()
    };
    let mut question = next_message().await;
    while question.get("method").is_none() {
        question = next_message().await; // a priming event, if any
    }
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let id = question["id"].as_i64().unwrap();
    assert!(id > 1 << 32, "a shared session's requests are numbered from a random point: {id}");

    // The answer reaches B (round robin): B passes it to A, whose call goes on.
    let answer =
        json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"yes": true}}});
    let accepted = app_b.clone().oneshot(http_post(Some(&session), &answer)).await.unwrap();
    assert_eq!(accepted.status().as_u16(), 202);
    let result = next_message().await;
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "went: true", "{result}");

    // An answer nobody waits for is dropped everywhere; the session goes on.
    let stray = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}});
    assert_eq!(
        app_b.clone().oneshot(http_post(Some(&session), &stray)).await.unwrap().status().as_u16(),
        202
    );
    assert_eq!(rpc(&app_a, &session, 4, "ping", json!({})).await.0, 200);
}

// ---------------------------------------------------------------------------------------------
// Rate limits shared by the instances: `RateLimit::shared` counts in Redis.

/// One instance whose every call goes through `limit(redis)`, counted in the Redis at `url`.
async fn limited_instance(url: &str, prefix: &str, limit: impl FnOnce(&Redis) -> RateLimit) -> Server {
    let redis = Redis::builder(url).prefix(prefix).lease(LEASE).connect().await.unwrap();
    Server::builder().layer(limit(&redis)).redis(redis).build().unwrap()
}

/// Answers at once (never a task: a refusal is the call's own answer).
#[tool]
async fn hello() -> String {
    "hello".into()
}

/// Calls `hello` as `client`: `Ok` when it ran, `Err(result)` when refused.
async fn try_hello(client: &TestClient) -> Result<(), Value> {
    let result = client.call("hello", json!({})).await.unwrap();
    if result.is_error() { Err(result.json().clone()) } else { Ok(()) }
}

fn retry_after_ms(refused: &Value) -> u64 {
    refused["_meta"][RateLimit::RETRY_AFTER_META]
        .as_u64()
        .unwrap_or_else(|| panic!("no retry time: {refused}"))
}

/// One command to the Redis at `url`, in RESP, over a plain connection: its answer, raw.
fn redis_command(url: &str, args: &[&str]) -> String {
    use std::io::{Read as _, Write as _};
    let address = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut connection = std::net::TcpStream::connect(address).unwrap();
    let mut command = format!("*{}\r\n", args.len());
    for arg in args {
        command.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    connection.write_all(command.as_bytes()).unwrap();
    connection.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    // Read until the answer pauses (it is small).
    while let Ok(n) = connection.read(&mut buffer) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8(answer).unwrap()
}

/// The keys of `prefix`'s rate limits now in Redis.
fn rate_keys(url: &str, prefix: &str) -> Vec<String> {
    let answer = redis_command(url, &["KEYS", &format!("{prefix}:rate:*")]);
    answer.lines().filter(|l| l.starts_with(&format!("{prefix}:rate:"))).map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_calls_split_between_two_servers_are_limited_as_one_and_callers_count_apart() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let limit = |redis: &Redis| RateLimit::per_minute(3).shared(redis, "calls");
    let (a, b) = (limited_instance(&url, &prefix, limit).await, limited_instance(&url, &prefix, limit).await);
    let (alice_a, alice_b) = (client(&a), client(&b));
    // Three a minute for Alice, wherever her calls land.
    try_hello(&alice_a).await.unwrap();
    try_hello(&alice_b).await.unwrap();
    try_hello(&alice_a).await.unwrap();
    let refused = try_hello(&alice_b).await.unwrap_err();
    assert_eq!(
        refused["content"][0]["text"],
        "`hello` was not run: rate limit reached (3 calls a minute per caller). Retry in 20 s.",
        "the message of the in-process limit: {refused}"
    );
    let wait = retry_after_ms(&refused);
    assert!((15_000..=20_000).contains(&wait), "{wait} ms");
    let again = try_hello(&alice_a).await.unwrap_err();
    assert!(retry_after_ms(&again) <= wait, "a refused call did not count");
    // Bob has his own allowance, on either server.
    let (bob_a, bob_b) = (client_as(&a, "bob"), client_as(&b, "bob"));
    for bob in [&bob_b, &bob_a, &bob_b] {
        try_hello(bob).await.unwrap();
    }
    assert!(try_hello(&bob_a).await.is_err());
    // A third server joining later sees the same counts.
    let c = limited_instance(&url, &prefix, limit).await;
    assert!(try_hello(&client(&c)).await.is_err());
    try_hello(&client_as(&c, "carol")).await.unwrap();
    // In Redis: one key per caller (a digest, not the id), each with a time to live.
    let keys = rate_keys(&url, &prefix);
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert!(keys.iter().all(|k| !k.contains("alice") && k.starts_with(&format!("{prefix}:rate:calls:"))));
    for key in &keys {
        let ttl = redis_command(&url, &["PTTL", key]);
        let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
        assert!((1..=60_000).contains(&ttl), "{key}: {ttl}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_limits_keys_expire_when_the_allowance_is_whole_again() {
    let (url, prefix) = (redis_url(), unique_prefix());
    // Two calls per 600 ms, per caller and tool: a key lives at most 600 ms after its last call.
    let limit =
        |redis: &Redis| RateLimit::new(2, Duration::from_millis(600)).per_tool().shared(redis, "fast");
    let (a, b) = (limited_instance(&url, &prefix, limit).await, limited_instance(&url, &prefix, limit).await);
    try_hello(&client(&a)).await.unwrap();
    try_hello(&client(&b)).await.unwrap();
    let refused = try_hello(&client(&a)).await.unwrap_err();
    assert!(retry_after_ms(&refused) <= 300, "{refused}");
    try_hello(&client_as(&b, "bob")).await.unwrap();
    assert_eq!(rate_keys(&url, &prefix).len(), 2);
    // Served again after the wait it was told; every key gone once its allowance is whole.
    tokio::time::sleep(Duration::from_millis(retry_after_ms(&refused) + 20)).await;
    try_hello(&client(&b)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(rate_keys(&url, &prefix), Vec::<String>::new(), "the keys expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_a_shared_limit_fails_open_by_default_or_closed_as_configured_and_counts_again_when_back()
{
    let mut redis = OwnRedis::start();
    let prefix = unique_prefix();
    let timeout = Duration::from_millis(300);
    let open = limited_instance(&redis.url(), &prefix, |r| {
        RateLimit::per_minute(2).shared(r, "calls").store_timeout(timeout)
    })
    .await;
    let closed = limited_instance(&redis.url(), &prefix, |r| {
        RateLimit::per_minute(2).shared(r, "calls").store_timeout(timeout).fail_closed()
    })
    .await;
    let (on_open, on_closed) = (client(&open), client(&closed));
    try_hello(&on_open).await.unwrap();
    try_hello(&on_closed).await.unwrap();
    assert!(try_hello(&on_open).await.is_err(), "counted as one before Redis stops");

    redis.stop();
    // Fail-open: run (uncounted, however many), each within the timeout.
    for _ in 0..4 {
        let asked = Instant::now();
        try_hello(&on_open).await.unwrap();
        assert!(asked.elapsed() < timeout + Duration::from_millis(700), "took {:?}", asked.elapsed());
    }
    // Fail-closed: refused, saying why, with a retry time.
    let asked = Instant::now();
    let refused = try_hello(&on_closed).await.unwrap_err();
    assert!(asked.elapsed() < timeout + Duration::from_millis(700), "took {:?}", asked.elapsed());
    assert_eq!(
        refused["content"][0]["text"],
        "`hello` was not run: its rate limit (2 calls a minute per caller) could not be checked. Retry in 1.0 s.",
        "{refused}"
    );
    assert_eq!(retry_after_ms(&refused), 1_000);

    // Back (with the counts saved before the stop, and no scripts loaded): counted again, by
    // the same servers.
    redis.run();
    let start = Instant::now();
    let refused = loop {
        match try_hello(&on_closed).await {
            Err(refused) if retry_after_ms(&refused) != 1_000 => break refused,
            _ => assert!(start.elapsed() < Duration::from_secs(10), "not counting again"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(refused["content"][0]["text"].as_str().unwrap().contains("rate limit reached"), "{refused}");
    assert!(try_hello(&on_open).await.is_err(), "the open one counts again too");
}

// ---------------------------------------------------------------------------------------------
// Resumable streams (`HttpOptions::resumable`, `Last-Event-ID`) of shared sessions: a stream
// that instance A writes is resumed on instance B.

/// Logs `count` ticks, `every_ms` apart, then answers.
#[tool]
async fn ticker(count: u64, every_ms: u64, ctx: Context) -> String {
    for i in 1..=count {
        ctx.log(mcp_tools::LogLevel::Info, format!("tick {i}"));
        tokio::time::sleep(Duration::from_millis(every_ms)).await;
    }
    format!("ticked {count}")
}

/// The SSE events read from `body` until `enough` of them (with an id and data) came, or the
/// body ended: `(id, data)` each.
async fn sse_events(
    body: &mut (impl futures_util::Stream<Item = Result<axum::body::Bytes, axum::Error>> + Unpin),
    enough: usize,
) -> Vec<(String, String)> {
    use futures_util::StreamExt as _;
    let (mut text, mut events) = (String::new(), Vec::new());
    while events.len() < enough {
        let Ok(Some(chunk)) = tokio::time::timeout(Duration::from_secs(5), body.next()).await else { break };
        text.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            let field = |name: &str| event.lines().find_map(|l| l.strip_prefix(name)).map(str::to_owned);
            if let (Some(id), Some(data)) = (field("id: "), field("data: "))
                && !data.is_empty()
            {
                events.push((id, data));
            }
        }
    }
    events
}

fn resume(session: &str, last_event_id: &str) -> axum::http::Request<axum::body::Body> {
    let mut request = get_stream(session);
    request.headers_mut().insert("last-event-id", last_event_id.parse().unwrap());
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_written_on_a_is_resumed_on_b_with_exactly_the_missed_events_in_order() {
    use tower::ServiceExt as _;
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let options = || mcp_tools::HttpOptions::new().resumable(Duration::from_millis(100)).keep_alive(None);
    let (app_a, app_b) = (a.http_router(options()), b.http_router(options()));
    let session = open_session(&app_a).await;

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ticker", "arguments": {"count": 6, "every_ms": 150}}});
    let response = app_a.clone().oneshot(http_post(Some(&session), &call)).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body().into_data_stream();
    // The first two ticks (after the priming event, which has no data).
    let seen = sse_events(&mut body, 2).await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].1.contains("tick 1") && seen[1].1.contains("tick 2"), "{seen:?}");
    let stream = seen[0].0.split_once('-').unwrap().0.to_owned();
    assert_eq!(
        seen.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        [format!("{stream}-1"), format!("{stream}-2")]
    );
    // The client loses the connection; the load balancer sends it to B.
    drop(body);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let response = app_b.clone().oneshot(resume(&session, &format!("{stream}-2"))).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body().into_data_stream();
    let resumed = sse_events(&mut body, 100).await;
    let ids: Vec<_> = resumed.iter().map(|(id, _)| id.clone()).collect();
    let expected: Vec<_> = (3..=7).map(|seq| format!("{stream}-{seq}")).collect();
    assert_eq!(ids, expected, "exactly the missed events, in order, then the answer: {resumed:?}");
    for (tick, (_, data)) in (3..=6).zip(&resumed) {
        let message: Value = serde_json::from_str(data).unwrap();
        assert_eq!(message["method"], "notifications/message", "{message}");
        assert!(data.contains(&format!("tick {tick}")), "{data}");
    }
    let answer: Value = serde_json::from_str(&resumed[4].1).unwrap();
    assert_eq!(
        (answer["id"].as_u64(), answer["result"]["content"][0]["text"].as_str()),
        (Some(7), Some("ticked 6"))
    );

    // Resumed again after the end, from its start, on a third instance: replayed whole, then
    // ended.
    let c = watching_instance(&url, &prefix).await;
    let response = c.http_router(options()).oneshot(resume(&session, &format!("{stream}-0"))).await.unwrap();
    let mut body = response.into_body().into_data_stream();
    let replayed = sse_events(&mut body, 100).await;
    assert_eq!(replayed.len(), 7, "{replayed:?}");
    assert_eq!(replayed[6], resumed[4]);
    // On A, where it ran, its memory serves it as before.
    let response = app_a.clone().oneshot(resume(&session, &format!("{stream}-5"))).await.unwrap();
    let mut body = response.into_body().into_data_stream();
    assert_eq!(sse_events(&mut body, 100).await, resumed[3..].to_vec());
    // A stream no instance ran: a new GET stream, as before.
    let response = app_b.clone().oneshot(resume(&session, "12345-1")).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_on_b_right_after_its_priming_event_gets_the_answer() {
    use futures_util::StreamExt as _;
    use tower::ServiceExt as _;
    let (url, prefix) = (redis_url(), unique_prefix());
    let (a, b) = (watching_instance(&url, &prefix).await, watching_instance(&url, &prefix).await);
    let options = || mcp_tools::HttpOptions::new().resumable(Duration::from_millis(100)).keep_alive(None);
    let (app_a, app_b) = (a.http_router(options()), b.http_router(options()));
    let session = open_session(&app_a).await;
    // The call sends nothing for 300 ms; the client keeps only the priming event's id (the
    // official suite's server-sse-polling does this: the server closes the stream at once).
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "nap", "arguments": {"millis": 300}}});
    let response = app_a.clone().oneshot(http_post(Some(&session), &call)).await.unwrap();
    let mut body = response.into_body().into_data_stream();
    let priming = String::from_utf8(body.next().await.unwrap().unwrap().to_vec()).unwrap();
    let primed = priming.lines().find_map(|l| l.strip_prefix("id: ")).unwrap().to_owned();
    assert!(primed.ends_with("-0"), "{priming:?}");
    drop(body);
    // Resumed at once on B, before A has appended any event: B finds the stream and follows it.
    let response = app_b.clone().oneshot(resume(&session, &primed)).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut body = response.into_body().into_data_stream();
    let events = sse_events(&mut body, 1).await;
    let stream = primed.trim_end_matches("-0");
    assert_eq!(events.len(), 1, "the answer, resumed on B: {events:?}");
    assert_eq!(events[0].0, format!("{stream}-1"));
    let answer: Value = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "slept 300 ms", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_on_b_whose_instance_stopped_is_answered_with_an_error_within_the_lease() {
    use futures_util::StreamExt as _;
    use tower::ServiceExt as _;
    let (url, prefix) = (redis_url(), unique_prefix());
    let options = || mcp_tools::HttpOptions::new().resumable(Duration::from_millis(100)).keep_alive(None);
    // A on a runtime of its own, stopped as a killed process stops (see the task test above).
    let runtime_a =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (url_a, prefix_a) = (url.clone(), prefix.clone());
    let (a, session, primed) = runtime_a
        .spawn(async move {
            let a = instance(&url_a, &prefix_a).await;
            let app_a = a.http_router(options());
            let session = open_session(&app_a).await;
            let call = json!({"jsonrpc": "2.0", "id": "long-1", "method": "tools/call",
                "params": {"name": "nap", "arguments": {"millis": 60_000}}});
            let response = app_a.oneshot(http_post(Some(&session), &call)).await.unwrap();
            let mut body = response.into_body().into_data_stream();
            let priming = String::from_utf8(body.next().await.unwrap().unwrap().to_vec()).unwrap();
            let primed = priming.lines().find_map(|l| l.strip_prefix("id: ")).unwrap().to_owned();
            (a, session, primed)
        })
        .await
        .unwrap();
    let b = instance(&url, &prefix).await;
    let response = b.http_router(options()).oneshot(resume(&session, &primed)).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut body = response.into_body().into_data_stream();
    runtime_a.shutdown_background();
    let stopped_at = Instant::now();
    let events = sse_events(&mut body, 1).await;
    let took = stopped_at.elapsed();
    assert_eq!(events.len(), 1, "an answer for the stopped instance: {events:?}");
    let stream = primed.trim_end_matches("-0");
    assert_eq!(events[0].0, format!("{stream}-1"));
    let answer: Value = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(answer["id"], "long-1", "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("instance running it stopped"), "{answer}");
    assert!(
        took <= LEASE + Duration::from_millis(2500),
        "answered {took:?} after the stop (lease {LEASE:?})"
    );
    // And the stream ends there.
    assert!(tokio::time::timeout(Duration::from_secs(3), body.next()).await.unwrap().is_none());
    std::mem::forget(a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instance_reads_the_same_shared_secret_made_once() {
    let (url, prefix) = (redis_url(), unique_prefix());
    let connect = || async { Redis::builder(redis_url()).prefix(&prefix).connect().await.unwrap() };
    let (a, b) = (connect().await, connect().await);
    let first = a.shared_secret("request-state").await.unwrap();
    assert_eq!(first.len(), 64, "32 random bytes, in hex");
    assert_eq!(b.shared_secret("request-state").await.unwrap(), first, "B reads A's");
    assert_eq!(a.shared_secret("request-state").await.unwrap(), first, "made once");
    assert_ne!(a.shared_secret("other").await.unwrap(), first, "one a name");
    let elsewhere = Redis::builder(url).prefix(unique_prefix()).connect().await.unwrap();
    assert_ne!(elsewhere.shared_secret("request-state").await.unwrap(), first, "one a prefix");
}
