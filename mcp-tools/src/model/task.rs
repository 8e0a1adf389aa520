//! Tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28): a tool call a client
//! polls for instead of waiting on. A tool says whether it may run as one ([`TaskSupport`]);
//! the state of each task ([`TaskRecord`]) is kept in a [`TaskStore`], in memory by default
//! ([`MemoryTaskStore`]), so its result outlives the client's connection.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Whether a tool runs as a task when the client supports tasks (`#[tool(task = "...")]`,
/// [`Tool::task`](crate::Tool::task)).
///
/// A task-capable tool called by a 2026-07-28 client that declares the tasks extension runs
/// like any call until it first waits for something other than the client's answer; then the
/// call becomes a task: the client gets a task handle at once and polls it (`tasks/get`), while
/// the tool runs on, and the questions it asks from then on reach the client through the task
/// (`inputRequests`, answered with `tasks/update`). A call that finishes at once is answered at
/// once. Questions asked before the call became a task are answered through the request itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task for clients that support tasks; an ordinary call for the others.
    Optional,
    /// Only ever a task: a 2026-07-28 client that does not declare the tasks extension gets
    /// the "missing required client capability" error naming it. (2025-11-25 sessions have no
    /// such extension; there the tool runs as an ordinary call.)
    Required,
}

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answers (see [`TaskRecord::input_requests`]).
    InputRequired,
    /// Finished with a result (a tool error included).
    Completed,
    /// Ended by a protocol-level failure (see [`TaskRecord::error`]).
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// The observable state of one task: what `tasks/get` answers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TaskRecord {
    /// Its id (server-generated, unguessable).
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A message about the status, if any.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When its status last changed.
    pub last_updated_at: SystemTime,
    /// How long after creation it is kept (`None`: for as long as the store keeps it).
    pub ttl: Option<Duration>,
    /// How often the client should poll.
    pub poll_interval: Option<Duration>,
    /// The tool's result (a complete `CallToolResult`), once completed.
    pub result: Option<Value>,
    /// The JSON-RPC error object, once failed.
    pub error: Option<Value>,
    /// The questions waiting for the client's answers, by key (while input is required).
    pub input_requests: Map<String, Value>,
}

impl TaskRecord {
    /// A working task created now.
    pub fn new(task_id: impl Into<String>, ttl: Option<Duration>, poll_interval: Option<Duration>) -> Self {
        let now = SystemTime::now();
        TaskRecord {
            task_id: task_id.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl,
            poll_interval,
            result: None,
            error: None,
            input_requests: Map::new(),
        }
    }

    /// Whether the task's time to live has passed.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.ttl.is_some_and(|ttl| self.created_at + ttl < now)
    }

    /// The task's members on the wire: id, status, timestamps, time to live, poll interval.
    fn base(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.task_id));
        task.insert("status".into(), json!(self.status));
        if let Some(message) = &self.status_message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(rfc3339(self.created_at)));
        task.insert("lastUpdatedAt".into(), json!(rfc3339(self.last_updated_at)));
        task.insert("ttlMs".into(), self.ttl.map_or(Value::Null, |ttl| json!(millis(ttl))));
        if let Some(interval) = self.poll_interval {
            task.insert("pollIntervalMs".into(), json!(millis(interval)));
        }
        task
    }

    /// The task with what its status carries: the questions, the result or the error (the
    /// `DetailedTask` of `tasks/get` and `notifications/tasks`).
    pub fn detailed(&self) -> Map<String, Value> {
        let mut task = self.base();
        match self.status {
            TaskStatus::InputRequired => {
                task.insert("inputRequests".into(), Value::Object(self.input_requests.clone()));
            }
            TaskStatus::Completed => {
                task.insert("result".into(), self.result.clone().unwrap_or_else(|| json!({"content": []})));
            }
            TaskStatus::Failed => {
                let error = self.error.clone();
                task.insert(
                    "error".into(),
                    error.unwrap_or_else(|| json!({"code": -32603, "message": "failed"})),
                );
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        task
    }

    /// The task handle a call answers with (`CreateTaskResult`).
    pub(crate) fn created(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("resultType".into(), json!("task"));
        task.extend(self.base());
        // Conformance suites up to 0.2.0-alpha.11 check a task handle against the schema of a
        // tool result, which requires `content` (modelcontextprotocol/conformance#424, #473);
        // an empty list satisfies them and means nothing to clients that know tasks.
        task.insert("content".into(), json!([]));
        task
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// Why a task store could not do what was asked.
pub type TaskStoreError = Box<dyn std::error::Error + Send + Sync>;

/// Where tasks' states are kept, so a client can read a task's result after it reconnected
/// (or, with a store outside the process, after the server restarted). Every change of a task
/// is saved whole; a task is read by id.
///
/// The default is [`MemoryTaskStore`]; set another with
/// [`ServerBuilder::task_store`](crate::ServerBuilder::task_store).
pub trait TaskStore: Send + Sync + 'static {
    /// Saves a task's current state (new, or replacing the previous one).
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>>;
    /// The state of task `task_id`, if it is known and has not expired.
    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;
}

/// Tasks kept in this process's memory, each until its time to live has passed.
#[derive(Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.tasks.lock().map(|t| t.len()).unwrap_or_default();
        f.debug_struct("MemoryTaskStore").field("tasks", &count).finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let mut tasks = self.tasks.lock().expect("task store lock");
        let now = SystemTime::now();
        tasks.retain(|_, t| !t.is_expired(now));
        tasks.insert(task.task_id.clone(), task);
        Box::pin(async { Ok(()) })
    }

    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = self.tasks.lock().expect("task store lock").get(task_id).cloned();
        let found = found.filter(|t| !t.is_expired(SystemTime::now()));
        Box::pin(async move { Ok(found) })
    }
}
