//! Tasks shared by several servers through a real Redis (`mcp_tools::store::Redis`): a task
//! started on one server is read, cancelled and answered through another; a task whose server
//! stopped reads as failed within the lease; Redis lost while serving gives clear errors and the
//! same server recovers when it is back; Redis unreachable at start-up is a clear error.
//!
//! Needs a Redis: `bash scripts/test-redis.sh` starts one and runs this file with
//! `MCP_TOOLS_REDIS_URL` (and `MCP_TOOLS_REDIS_SERVER`, the `redis-server` binary, for the test
//! that stops and restarts a Redis of its own). Each test uses keys of its own prefix.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_tools::store::Redis;
use mcp_tools::testing::TestClient;
use mcp_tools::{AuthInfo, Context, Elicitation, Server, ToolError, tool};
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
