//! Tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28): a tool call a client
//! polls for instead of waiting on. A tool says whether it may run as one ([`TaskSupport`]);
//! the state of each task ([`TaskRecord`]) is kept in a [`TaskStore`], in memory by default
//! ([`MemoryTaskStore`]), so its result outlives the client's connection.

use std::collections::{BTreeSet, HashMap};
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
    /// Who created it: the caller's verified identity, or its connection (stdio, in process).
    /// Only the same caller may read, answer or cancel it; to anyone else it does not exist.
    /// `None` when the server cannot tell callers apart (HTTP without authorization): then
    /// whoever knows its id may use it.
    pub owner: Option<String>,
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
            owner: None,
        }
    }

    /// The same task, created by `owner` (see [`owner`](Self::owner)).
    pub fn with_owner(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
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

/// Tasks kept in this process's memory: at most [`capacity`](Self::capacity) of them (10,000
/// by default), each ended one until its time to live has passed, and never longer than
/// [`max_ttl`](Self::max_ttl) after its creation (one hour by default, also for tasks without a
/// time to live). A running task is kept until it ends (the server bounds how many run). When
/// the store is full, the ended task that would expire first makes room; a store full of
/// running tasks refuses new ones.
pub struct MemoryTaskStore {
    capacity: usize,
    max_ttl: Duration,
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    tasks: HashMap<String, TaskRecord>,
    /// The ended tasks by the time they expire: purging looks at the front only.
    expiring: BTreeSet<(SystemTime, String)>,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore { capacity: 10_000, max_ttl: Duration::from_secs(60 * 60), inner: Mutex::default() }
    }
}

impl MemoryTaskStore {
    /// An empty store with the default bounds.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps at most `tasks` tasks (at least 1).
    pub fn capacity(mut self, tasks: usize) -> Self {
        self.capacity = tasks.max(1);
        self
    }

    /// Keeps no task longer than `ttl` after its creation, whatever its own time to live.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// How many tasks the store holds now.
    pub fn len(&self) -> usize {
        self.inner.lock().expect("task store lock").tasks.len()
    }

    /// Whether the store holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When `task` is forgotten: its time to live, capped by the store's.
    fn expiry(&self, task: &TaskRecord) -> SystemTime {
        let ttl = task.ttl.map_or(self.max_ttl, |ttl| ttl.min(self.max_ttl));
        task.created_at.checked_add(ttl).unwrap_or(task.created_at)
    }

    fn store(&self, task: TaskRecord) -> Result<(), TaskStoreError> {
        let mut kept = self.inner.lock().expect("task store lock");
        let now = SystemTime::now();
        // Expired tasks are at the front of the index: a save looks only at those.
        while let Some(first) = kept.expiring.first()
            && first.0 < now
        {
            let (_, id) = kept.expiring.pop_first().expect("just seen");
            kept.tasks.remove(&id);
        }
        let expiry = self.expiry(&task);
        let known = kept.tasks.get(&task.task_id).map(|t| t.status.is_terminal());
        if known.is_none() && kept.tasks.len() >= self.capacity {
            // The ended task that would go first makes room; running ones are never dropped.
            let Some((_, id)) = kept.expiring.pop_first() else {
                return Err(
                    format!("the task store is full: {} tasks, all still running", self.capacity).into()
                );
            };
            kept.tasks.remove(&id);
        }
        if task.status.is_terminal() && known != Some(true) {
            kept.expiring.insert((expiry, task.task_id.clone()));
        }
        kept.tasks.insert(task.task_id.clone(), task);
        Ok(())
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("tasks", &self.len())
            .field("capacity", &self.capacity)
            .field("max_ttl", &self.max_ttl)
            .finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let saved = self.store(task);
        Box::pin(async { saved })
    }

    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = self.inner.lock().expect("task store lock").tasks.get(task_id).cloned();
        let now = SystemTime::now();
        let found = found.filter(|t| !t.status.is_terminal() || self.expiry(t) >= now);
        Box::pin(async move { Ok(found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(id: &str, ttl: Option<Duration>) -> TaskRecord {
        let mut task = TaskRecord::new(id, ttl, None);
        task.status = TaskStatus::Completed;
        task
    }

    fn load(store: &MemoryTaskStore, id: &str) -> Option<TaskRecord> {
        futures_util::FutureExt::now_or_never(store.load(id)).unwrap().unwrap()
    }

    #[test]
    fn a_full_store_drops_the_ended_task_that_expires_first_and_never_a_running_one() {
        let store = MemoryTaskStore::new().capacity(3);
        store.store(TaskRecord::new("running", None, None)).unwrap();
        store.store(ended("soon", Some(Duration::from_secs(10)))).unwrap();
        store.store(ended("later", Some(Duration::from_secs(100)))).unwrap();
        store.store(ended("new", Some(Duration::from_secs(50)))).unwrap();
        assert_eq!(store.len(), 3);
        assert!(load(&store, "soon").is_none(), "the first to expire made room");
        assert!(load(&store, "running").is_some() && load(&store, "later").is_some());
        // Updating a kept task needs no room.
        store.store(ended("running", None)).unwrap();
        assert_eq!(store.len(), 3);

        let running = MemoryTaskStore::new().capacity(2);
        running.store(TaskRecord::new("a", None, None)).unwrap();
        running.store(TaskRecord::new("b", None, None)).unwrap();
        let error = running.store(TaskRecord::new("c", None, None)).unwrap_err();
        assert!(error.to_string().contains("full"), "{error}");
    }

    #[test]
    fn ended_tasks_expire_by_their_ttl_capped_by_the_store_and_running_ones_stay() {
        let store = MemoryTaskStore::new().max_ttl(Duration::from_millis(20));
        store.store(ended("unbounded", None)).unwrap();
        store.store(ended("long", Some(Duration::from_secs(3600)))).unwrap();
        store.store(TaskRecord::new("running", Some(Duration::from_millis(1)), None)).unwrap();
        assert!(load(&store, "unbounded").is_some());
        std::thread::sleep(Duration::from_millis(30));
        assert!(load(&store, "unbounded").is_none() && load(&store, "long").is_none());
        assert!(load(&store, "running").is_some(), "a running task is kept until it ends");
        // The next save forgets the expired ones (looking only at them).
        store.store(TaskRecord::new("next", None, None)).unwrap();
        assert_eq!(store.len(), 2);
    }
}
