//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): a call that becomes a task
//! keeps running on its own after its request is answered with the task's handle; its state is
//! saved in the server's [`TaskStore`] at every change (durably before the handle is sent), its
//! questions wait for `tasks/update`, and `tasks/cancel` stops it.
//!
//! Several instances of one service share the store and a [`Bus`]: a task runs on the instance
//! that started it, its state is read from any (through the store), and `tasks/cancel` or
//! `tasks/update` reaching another instance travel over the bus to the one running it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use futures_util::StreamExt as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, json};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::bus::{Bus, BusMessage};
use super::events::{Events, ServerEvent};
use super::extensions::Extension;
use super::quota::{Caller, Held, Quota, Share};
use crate::context::link::{InputLink, TaskQuestions};
use crate::model::result::ToolResult;
use crate::model::task::{TaskRecord, TaskStatus, TaskStore};
use crate::protocol::extensions::TASKS;
use crate::protocol::jsonrpc::ErrorObject;
use crate::protocol::stateless::{InputResponses, complete};
use crate::protocol::{Era, INTERNAL_ERROR, INVALID_PARAMS};

/// The tasks extension as this server offers it: declared in 2026-07-28 only (2025-11-25 had
/// tasks of its own, which this server does not serve), its methods routed by the session, and
/// refused to a client that did not declare it.
pub(crate) fn extension() -> Extension {
    let mut extension = Extension::declared_only(TASKS, &[Era::Stateless])
        .routed("tasks/get")
        .routed("tasks/update")
        .routed("tasks/cancel");
    extension.needs_client = true;
    extension
}

/// A task's running call: how to stop it and its questions.
struct Running {
    cancel: CancellationToken,
    questions: Arc<TaskQuestions>,
}

/// Where tasks' states are kept and how the instances sharing them reach each other.
pub(crate) struct Backend {
    pub store: Arc<dyn TaskStore>,
    pub bus: Arc<dyn Bus>,
}

/// The server's tasks: their store and bus, the calls still running here, and how many may run.
pub(crate) struct Tasks {
    backend: ArcSwap<Backend>,
    ttl: Option<Duration>,
    poll_interval: Duration,
    running: Mutex<HashMap<String, Running>>,
    quota: Arc<Quota>,
    /// Set once the bus is listened to (from the first task started); stops the listener when
    /// the server is dropped.
    listening: Mutex<Option<DropGuard>>,
}

/// What a call that may become a task holds from before it starts: its share of the running
/// tasks, one of the server's places, and its caller (the task's owner). Refused up front, so a
/// call is never stopped half-way for want of room; given back when the call or its task ends.
pub(crate) struct Reserved {
    _share: Share,
    _place: Held,
    owner: Option<String>,
}

/// A call being run as a task.
pub(crate) type Call = Pin<Box<dyn Future<Output = ToolResult> + Send>>;

/// How long `tasks/update` waits for the task's state to drop the questions it answered.
const ANSWER_SAVE_WAIT: Duration = Duration::from_secs(5);

/// How often `tasks/update` reads the state of a task running on another instance while it
/// waits for its answers to be taken: first, and at most.
const ANSWER_POLL: (Duration, Duration) = (Duration::from_millis(5), Duration::from_millis(100));

impl Tasks {
    pub fn new(backend: Backend, ttl: Option<Duration>, poll_interval: Duration, quota: Arc<Quota>) -> Tasks {
        Tasks {
            backend: ArcSwap::from_pointee(backend),
            ttl,
            poll_interval,
            running: Mutex::new(HashMap::new()),
            quota,
            listening: Mutex::new(None),
        }
    }

    /// Keeps tasks in `backend` from now on (the command line's `--redis`, before it serves).
    #[cfg(feature = "redis")]
    pub fn set_backend(&self, backend: Backend) {
        self.backend.store(Arc::new(backend));
        // A listener of the previous bus stops; the next task listens to this one.
        self.listening.lock().expect("listening lock").take();
    }

    fn store(&self) -> Arc<dyn TaskStore> {
        self.backend.load().store.clone()
    }

    /// Listens to the bus, once: the other instances' cancellations and answers for the tasks
    /// running here. Started with the first task (a server that never runs one listens to
    /// nothing), and stopped when the server is dropped.
    fn listen(self: &Arc<Self>) {
        let mut listening = self.listening.lock().expect("listening lock");
        if listening.is_some() {
            return;
        }
        let stop = CancellationToken::new();
        *listening = Some(stop.clone().drop_guard());
        let mut messages = self.backend.load().bus.subscribe();
        let tasks = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    _ = stop.cancelled() => break,
                    message = messages.next() => message,
                };
                let (Some(message), Some(tasks)) = (message, tasks.upgrade()) else { break };
                tasks.heard(message);
            }
        });
    }

    /// Acts on another instance's message about a task running here (others are ignored).
    fn heard(&self, message: BusMessage) {
        let running = self.running.lock().expect("running lock");
        match message {
            BusMessage::CancelTask { task_id } => {
                if let Some(task) = running.get(&task_id) {
                    tracing::debug!(task = %task_id, "cancelled through another instance");
                    task.cancel.cancel();
                }
            }
            BusMessage::AnswerTask { task_id, answers } => {
                if let Some(task) = running.get(&task_id) {
                    tracing::debug!(task = %task_id, "answered through another instance");
                    task.questions.answer(|key| answers.get(key).cloned());
                }
            }
            _ => {}
        }
    }

    /// The error a request that needs the bus answers when it cannot publish.
    fn bus_failed(task_id: &str, e: &super::bus::BusError) -> ErrorObject {
        tracing::error!(task = %crate::protocol::jsonrpc::shown(task_id), error = %e, "the bus failed to carry a task's message");
        ErrorObject::new(
            INTERNAL_ERROR,
            format!("the task runs on another instance of this server, which could not be reached: {e}"),
        )
    }

    /// Room for a call of `caller` that may become a task: a share of the running tasks, then a
    /// place among the server's running requests (`place`); a clear error when either is full.
    pub fn reserve(
        &self,
        caller: &Caller,
        place: impl FnOnce() -> Option<Held>,
    ) -> Result<Reserved, ErrorObject> {
        let share = self.quota.take(caller).map_err(|refused| {
            tracing::debug!(%caller, ?refused, "a call that may become a task was refused");
            ErrorObject::new(INTERNAL_ERROR, self.quota.refusal(&refused))
        })?;
        let place = place().ok_or_else(|| {
            ErrorObject::new(
                INTERNAL_ERROR,
                "the server is busy: no place to run another task; retry shortly",
            )
        })?;
        Ok(Reserved { _share: share, _place: place, owner: caller.owner() })
    }

    /// Makes `call` a task: saves it (working), lets it run on by itself, and returns the
    /// handle to answer with. From now on its questions wait for `tasks/update`, and `cancel`
    /// (the call's cancellation) stops it.
    pub async fn start(
        self: &Arc<Self>,
        call: Call,
        input: &InputLink,
        cancel: CancellationToken,
        events: Arc<Events>,
        reserved: Reserved,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let task_id = new_id();
        let record = TaskRecord::new(task_id.clone(), self.ttl, Some(self.poll_interval))
            .with_owner(reserved.owner.clone());
        self.store().save(record.clone()).await.map_err(|e| {
            tracing::error!(error = %e, "the task store failed to save a new task");
            ErrorObject::new(INTERNAL_ERROR, format!("the task could not be created: its store failed: {e}"))
        })?;
        self.listen();
        let questions = Arc::new(TaskQuestions::default());
        input.become_task(questions.clone());
        self.running
            .lock()
            .expect("running lock")
            .insert(task_id.clone(), Running { cancel: cancel.clone(), questions: questions.clone() });
        let handle = serde_json::value::to_raw_value(&record.created()).expect("JSON serializes");
        let tasks = self.clone();
        tokio::spawn(async move {
            tasks.run(record, call, questions, cancel, events).await;
            // Its share and place are given back once it ended and its state is saved.
            drop(reserved);
        });
        Ok(handle)
    }

    /// Runs a task's call to its end, saving each change of its state.
    async fn run(
        &self,
        mut record: TaskRecord,
        mut call: Call,
        questions: Arc<TaskQuestions>,
        cancel: CancellationToken,
        events: Arc<Events>,
    ) {
        let result = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break None,
                result = &mut call => break Some(result),
                _ = questions.changed() => {
                    let (asked, version) = questions.snapshot();
                    let status = if asked.is_empty() { TaskStatus::Working } else { TaskStatus::InputRequired };
                    if status != record.status || asked != record.input_requests {
                        record.status = status;
                        record.input_requests = asked;
                        self.save(&mut record, &events).await;
                    }
                    questions.mark_saved(version);
                }
            }
        };
        drop(call);
        record.input_requests = Map::new();
        match result {
            None => {
                record.status = TaskStatus::Cancelled;
                record.status_message = Some("cancelled by the client".into());
            }
            Some(result) => finish(&mut record, &result),
        }
        self.running.lock().expect("running lock").remove(&record.task_id);
        self.save(&mut record, &events).await;
        questions.mark_saved(u64::MAX);
    }

    async fn save(&self, record: &mut TaskRecord, events: &Events) {
        record.last_updated_at = SystemTime::now();
        if let Err(e) = self.store().save(record.clone()).await {
            tracing::error!(task = %record.task_id, error = %e, "the task store failed to save a task's state");
        }
        events.announce(ServerEvent::TaskChanged(record.task_id.clone(), Arc::new(record.detailed())));
    }

    /// `tasks/get`: the task's state, with what its status carries.
    pub async fn get(
        &self,
        params: Option<&RawValue>,
        owner: Option<&str>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let record = self.find(params, owner).await?;
        let detailed = serde_json::value::to_raw_value(&record.detailed()).expect("JSON serializes");
        Ok(complete(&detailed, None))
    }

    /// `tasks/update`: the client's answers to the task's questions (those not outstanding are
    /// ignored).
    pub async fn update(
        &self,
        params: Option<&RawValue>,
        owner: Option<&str>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        #[derive(Deserialize)]
        struct Update<'a> {
            #[serde(rename = "inputResponses", borrow, default)]
            input_responses: Option<&'a RawValue>,
        }
        let record = self.find(params, owner).await?;
        let answers = InputResponses::read(
            params
                .and_then(|p| serde_json::from_str::<Update<'_>>(p.get()).ok())
                .and_then(|u| u.input_responses),
        );
        let questions =
            self.running.lock().expect("running lock").get(&record.task_id).map(|r| r.questions.clone());
        if let Some(questions) = questions {
            if let Some(version) = questions.answer(|key| answers.answer(key)) {
                // Acknowledged once the task's state no longer lists the answered questions: a
                // `tasks/get` right after this answer must not see them (the task's own loop
                // saves the change; bounded, should the store hang).
                if tokio::time::timeout(ANSWER_SAVE_WAIT, questions.saved(version)).await.is_err() {
                    tracing::warn!(task = %record.task_id, "the task's answered questions were not saved in time");
                }
            }
            return Ok(acknowledged());
        }
        // Not running here: another instance runs it (or it ended). The questions its state
        // lists are the outstanding ones; their answers go to that instance.
        let given: Map<String, serde_json::Value> = record
            .input_requests
            .keys()
            .filter_map(|key| answers.answer(key).map(|answer| (key.clone(), answer)))
            .collect();
        if record.status.is_terminal() || given.is_empty() {
            return Ok(acknowledged());
        }
        let keys: Vec<String> = given.keys().cloned().collect();
        let bus = self.backend.load().bus.clone();
        bus.publish(BusMessage::AnswerTask { task_id: record.task_id.clone(), answers: given })
            .await
            .map_err(|e| Self::bus_failed(&record.task_id, &e))?;
        self.taken(&record.task_id, &keys).await;
        Ok(acknowledged())
    }

    /// Waits (at most [`ANSWER_SAVE_WAIT`]) until the stored state of task `task_id` no longer
    /// lists the questions `keys`: the instance running it took the answers and saved.
    async fn taken(&self, task_id: &str, keys: &[String]) {
        let store = self.store();
        let deadline = tokio::time::Instant::now() + ANSWER_SAVE_WAIT;
        let mut pause = ANSWER_POLL.0;
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(ANSWER_POLL.1);
            match store.load(task_id).await {
                Ok(Some(task))
                    if !task.status.is_terminal()
                        && keys.iter().any(|k| task.input_requests.contains_key(k)) => {}
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!(task = %task_id, error = %e, "the task store failed while an answer was delivered");
                    return;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(task = %task_id, "another instance did not take the task's answers in time");
                return;
            }
        }
    }

    /// `tasks/cancel`: stops the task if it still runs (a finished one stays as it is).
    pub async fn cancel(
        &self,
        params: Option<&RawValue>,
        owner: Option<&str>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let record = self.find(params, owner).await?;
        let here = self.running.lock().expect("running lock").get(&record.task_id).map(|r| r.cancel.clone());
        match here {
            Some(cancel) => cancel.cancel(),
            // Another instance runs it: that one stops it.
            None if !record.status.is_terminal() => {
                let bus = self.backend.load().bus.clone();
                bus.publish(BusMessage::CancelTask { task_id: record.task_id.clone() })
                    .await
                    .map_err(|e| Self::bus_failed(&record.task_id, &e))?;
            }
            None => {}
        }
        Ok(acknowledged())
    }

    /// The task a request names (`taskId`), or "invalid params".
    async fn find(&self, params: Option<&RawValue>, owner: Option<&str>) -> Result<TaskRecord, ErrorObject> {
        #[derive(Deserialize)]
        struct Named {
            #[serde(rename = "taskId")]
            task_id: String,
        }
        let named = params
            .and_then(|p| serde_json::from_str::<Named>(p.get()).ok())
            .ok_or_else(|| ErrorObject::invalid_params("Invalid params: `taskId` is required"))?;
        self.owned(&named.task_id, owner).await
    }

    /// Task `task_id` if `owner` created it; another caller's task is as unknown as one that
    /// never existed (same error, same text), so its id reveals nothing.
    pub async fn owned(&self, task_id: &str, owner: Option<&str>) -> Result<TaskRecord, ErrorObject> {
        match self.store().load(task_id).await {
            Ok(Some(record)) if record.owner.as_deref() == owner => Ok(record),
            Ok(Some(_)) | Ok(None) => Err(ErrorObject {
                code: INVALID_PARAMS,
                message: format!("unknown task `{}`", crate::protocol::jsonrpc::shown(task_id)),
                data: Some(json!({"taskId": task_id})),
            }),
            Err(e) => {
                tracing::error!(task = %crate::protocol::jsonrpc::shown(task_id), error = %e, "the task store failed to load a task");
                Err(ErrorObject::new(INTERNAL_ERROR, format!("the task store failed: {e}")))
            }
        }
    }
}

/// The record of a call that ended with `result`: completed with it, or failed when the call
/// failed outside the tool's own errors (a panic, a missing client capability).
fn finish(record: &mut TaskRecord, result: &ToolResult) {
    if result.panicked() {
        record.status = TaskStatus::Failed;
        record.error =
            Some(json!({"code": INTERNAL_ERROR, "message": "the tool failed: its handler panicked"}));
    } else if let Some(capability) = result.missing_capability() {
        let error = super::stateless::missing_capability(capability);
        record.status = TaskStatus::Failed;
        record.error = Some(serde_json::to_value(&error).expect("JSON serializes"));
    } else if let Some(error) = result.protocol_error() {
        record.status = TaskStatus::Failed;
        record.error = Some(error.clone());
    } else {
        let raw = serde_json::value::to_raw_value(result).expect("a tool result serializes");
        record.status = TaskStatus::Completed;
        record.result = serde_json::from_str(complete(&raw, None).get()).ok();
    }
}

fn acknowledged() -> Box<RawValue> {
    RawValue::from_string(r#"{"resultType":"complete"}"#.to_owned()).expect("valid JSON")
}

/// An unguessable task id: 128 random bits, in hex.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
