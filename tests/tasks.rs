//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): which calls become tasks,
//! `tasks/get` / `tasks/update` / `tasks/cancel`, questions through the task, failures, status
//! notifications on listen streams, and a custom store. Tasks bound to their caller and bounded:
//! tests/callers.rs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_tools::testing::TestClient;
use mcp_tools::{
    Context, Elicitation, MemoryTaskStore, Server, TaskRecord, TaskStore, TaskStoreError, TaskSupport, Tool,
    ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Sleeps, then answers (a task for clients that support tasks).
#[tool(task = "optional")]
async fn nap(millis: u64) -> String {
    if millis > 0 {
        tokio::time::sleep(Duration::from_millis(millis)).await;
    }
    format!("slept {millis} ms")
}

/// Always a task.
#[tool(task = "required")]
async fn batch() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "batch done".into()
}

#[derive(Deserialize, JsonSchema)]
struct Yes {
    yes: bool,
}

/// Works, then asks two questions at once, then answers.
#[tool(task = "optional")]
async fn ask_twice(ctx: Context) -> Result<String, mcp_tools::ToolError> {
    tokio::task::yield_now().await;
    let (a, b) = tokio::join!(ctx.input_key("a").elicit::<Yes>("A?"), ctx.input_key("b").elicit::<Yes>("B?"));
    let yes = |e: Elicitation<Yes>| matches!(e, Elicitation::Accept(Yes { yes: true }));
    Ok(format!("a={} b={}", yes(a?), yes(b?)))
}

/// Asks first (through the request), then works as a task.
#[tool(task = "required")]
async fn ask_then_work(ctx: Context) -> Result<String, mcp_tools::ToolError> {
    let answer = ctx.input_key("go").elicit::<Yes>("Go?").await?;
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(format!("went: {}", matches!(answer, Elicitation::Accept(Yes { yes: true }))))
}

/// Panics after a while.
#[tool(task = "optional")]
async fn crashes() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    panic!("boom")
}

/// Reports a tool error after a while.
#[tool(task = "optional")]
async fn refuses() -> Result<String, mcp_tools::ToolError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    Err(mcp_tools::ToolError::new("refused"))
}

fn server() -> Server {
    Server::builder().task_poll_interval(Duration::from_millis(50)).build().unwrap()
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Polls `tasks/get` until the task is terminal (or `status`), at most 5 s.
async fn wait_for(client: &TestClient, task_id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
        let now = task["status"].as_str().unwrap().to_owned();
        if now == status
            || (status == "terminal" && ["completed", "failed", "cancelled"].contains(&now.as_str()))
        {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {task_id} never reached {status}");
}

#[tokio::test]
async fn a_task_capable_call_becomes_a_task_and_its_result_is_read_with_tasks_get() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    let created = client.call("nap", json!({"millis": 50})).await.unwrap();
    let created = created.json();
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    let task_id = created["taskId"].as_str().unwrap();
    assert_eq!(task_id.len(), 32, "128 random bits");
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z') && created["ttlMs"] == 3_600_000);
    assert_eq!(created["pollIntervalMs"], 50);
    for key in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(key).is_none(), "a task handle carries no {key}: {created}");
    }
    // Durable before the handle is sent: readable at once.
    let working = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(
        (working["resultType"].as_str(), working["taskId"].as_str()),
        (Some("complete"), Some(task_id))
    );
    let done = wait_for(&client, task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 50 ms", "{done}");
    assert_eq!(done["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_call_that_finishes_at_once_is_answered_at_once() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    let result = client.call("nap", json!({"millis": 0})).await.unwrap();
    assert_eq!(result.json()["resultType"], "complete", "{:?}", result);
    assert_eq!(result.text(), "slept 0 ms");
}

#[tokio::test]
async fn without_the_extension_a_call_runs_as_usual_or_is_refused_when_it_must_be_a_task() {
    let server = server();
    let plain = TestClient::connect_stateless(&server);
    let result = plain.call("nap", json!({"millis": 10})).await.unwrap();
    assert_eq!(
        (result.json()["resultType"].as_str(), result.text().as_str()),
        (Some("complete"), "slept 10 ms")
    );
    let error = plain.call("batch", json!({})).await.unwrap_err();
    assert_eq!(error.code, -32021);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let error = plain.request(method, json!({"taskId": "x"})).await.unwrap_err();
        assert_eq!(error.code, -32021, "{method}");
    }
    // A 2025-11-25 session knows no tasks: the tool runs as an ordinary call, and the
    // extension is not announced.
    let session = TestClient::connect(&server).await;
    assert_eq!(session.call("batch", json!({})).await.unwrap().text(), "batch done");
    let initialize = TestClient::connect_uninitialized(&server);
    let answer = initialize
        .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}))
        .await
        .unwrap();
    assert!(answer["capabilities"].get("extensions").is_none(), "{answer}");
    let discovered =
        TestClient::connect_stateless(&server).request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["extensions"], json!({"io.modelcontextprotocol/tasks": {}}));
}

#[tokio::test]
async fn an_unknown_task_is_invalid_params_and_the_legacy_task_methods_do_not_exist() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let error = client.request(method, json!({"taskId": "nope"})).await.unwrap_err();
        assert_eq!(error.code, -32602, "{method}");
    }
    for method in ["tasks/result", "tasks/list"] {
        assert_eq!(client.request(method, json!({})).await.unwrap_err().code, -32601, "{method}");
    }
}

#[tokio::test]
async fn a_cancelled_task_stops_and_says_so_and_cancelling_a_finished_one_is_harmless() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    let created = client.call("nap", json!({"millis": 60_000})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().unwrap().to_owned();
    let ack = client.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(ack, json!({"resultType": "complete"}));
    let cancelled = wait_for(&client, &task_id, "terminal").await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(
        client.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap(),
        json!({"resultType": "complete"})
    );
}

/// A store whose saves take a while (a database across a network, say).
struct Slow(MemoryTaskStore);

impl TaskStore for Slow {
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            self.0.save(task).await
        })
    }
    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.0.load(task_id)
    }
}

#[tokio::test]
async fn questions_asked_by_a_task_are_answered_with_tasks_update_one_by_one() {
    // Saves that lag: the acknowledgement of an answer must still wait for the task's state
    // without the answered question.
    let server = Server::builder()
        .task_poll_interval(Duration::from_millis(50))
        .task_store(Slow(MemoryTaskStore::new()))
        .build()
        .unwrap();
    let client = TestClient::connect_stateless_with(&server, with_tasks(), |_, _| unreachable!());
    let created = client.call("ask_twice", json!({})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().expect("a task").to_owned();
    let waiting = wait_for(&client, &task_id, "input_required").await;
    let keys: Vec<&String> = waiting["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b"], "{waiting}");
    assert_eq!(waiting["inputRequests"]["a"]["method"], "elicitation/create");

    let yes = json!({"action": "accept", "content": {"yes": true}});
    let ack = client
        .request("tasks/update", json!({"taskId": task_id, "inputResponses": {"a": yes, "zzz": yes}}))
        .await;
    assert_eq!(ack.unwrap(), json!({"resultType": "complete"}));
    // Right after the acknowledgement (as the conformance suite asks), not eventually: the
    // answered question is gone, the other one is still asked.
    let still = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(still["status"], "input_required", "{still}");
    assert!(
        still["inputRequests"].get("a").is_none() && still["inputRequests"].get("b").is_some(),
        "{still}"
    );

    client.request("tasks/update", json!({"taskId": task_id, "inputResponses": {"b": yes}})).await.unwrap();
    let done = wait_for(&client, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "a=true b=true", "{done}");
}

#[tokio::test]
async fn a_call_may_ask_through_the_request_first_then_become_a_task() {
    let yes = |_: &str, _: &Value| Ok(json!({"action": "accept", "content": {"yes": true}}));
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), yes);
    let first =
        client.answer(client.send_request("tools/call", json!({"name": "ask_then_work"}))).await.unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none());
    // The TestClient answers and retries: the second round becomes a task.
    let created = client.call("ask_then_work", json!({})).await.unwrap();
    assert_eq!(created.json()["resultType"], "task", "{:?}", created);
    assert!(created.json().get("requestState").is_none());
    let task_id = created.json()["taskId"].as_str().unwrap().to_owned();
    let done = wait_for(&client, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "went: true");
}

#[tokio::test]
async fn a_panic_fails_the_task_while_a_tool_error_completes_it() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    let created = client.call("crashes", json!({})).await.unwrap();
    let failed = wait_for(&client, created.json()["taskId"].as_str().unwrap(), "terminal").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    let created = client.call("refuses", json!({})).await.unwrap();
    let done = wait_for(&client, created.json()["taskId"].as_str().unwrap(), "terminal").await;
    assert_eq!(
        (done["status"].as_str(), done["result"]["isError"].as_bool()),
        (Some("completed"), Some(true))
    );
}

#[tokio::test]
async fn a_listener_hears_the_changes_of_the_tasks_it_names() {
    let client = TestClient::connect_stateless_with(&server(), with_tasks(), |_, _| unreachable!());
    let created = client.call("nap", json!({"millis": 30})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().unwrap().to_owned();
    let listen =
        client.send_request("subscriptions/listen", json!({"notifications": {"taskIds": [task_id]}}));
    let ack = client.notification("notifications/subscriptions/acknowledged").await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]));
    let changed = client.notification("notifications/tasks").await;
    assert_eq!(
        (changed["params"]["taskId"].as_str(), changed["params"]["status"].as_str()),
        (Some(task_id.as_str()), Some("completed"))
    );
    assert_eq!(changed["params"]["result"]["content"][0]["text"], "slept 30 ms");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen);
    // Without the extension, asking for task notifications is refused.
    let plain = TestClient::connect_stateless(&server());
    let error = plain
        .request("subscriptions/listen", json!({"notifications": {"taskIds": ["x"]}}))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32021);
}

/// A store that counts what it is asked, over the memory store.
#[derive(Default)]
struct Counting {
    inner: MemoryTaskStore,
    saves: Arc<AtomicUsize>,
}

impl TaskStore for Counting {
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        self.saves.fetch_add(1, Ordering::Relaxed);
        self.inner.save(task)
    }
    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.inner.load(task_id)
    }
}

#[tokio::test]
async fn tasks_live_in_the_configured_store_and_belong_to_their_connection() {
    let saves = Arc::new(AtomicUsize::new(0));
    let store = Counting { inner: MemoryTaskStore::new(), saves: saves.clone() };
    let runtime = Tool::new("job", "A runtime task.", json!({"type": "object"}), |_, _| async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        Ok(ToolResult::new().text("job done"))
    })
    .task(TaskSupport::Required);
    let server = Server::builder().inventory(false).tool(runtime).task_store(store).build().unwrap();
    let client = TestClient::connect_stateless_with(&server, with_tasks(), |_, _| unreachable!());
    let created = client.call("job", json!({})).await.unwrap();
    let task_id = created.json()["taskId"].as_str().unwrap().to_owned();
    // Without authorization a task is its connection's: another one does not see it (over
    // HTTP, tests/callers.rs shows a caller's later requests reading it).
    let other = TestClient::connect_stateless_with(&server, with_tasks(), |_, _| unreachable!());
    let error = other.request("tasks/get", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(error.code, -32602);
    let done = wait_for(&client, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "job done");
    assert!(saves.load(Ordering::Relaxed) >= 2, "created, then completed");
}
