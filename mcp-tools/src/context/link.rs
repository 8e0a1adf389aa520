//! The client link: the one way a running call asks the client something (sampling,
//! elicitation, roots). A [`Context`](super::Context) holds a link, never the connection, so the
//! same tool code works however the question travels: as a server→client JSON-RPC request on a
//! 2025-11-25 session ([`RequestLink`]), as an input request of an `input_required` result that
//! the client answers by retrying (2026-07-28, [`InputLink`]), or not at all ([`Unreachable`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::peer::Outbound;
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::stateless::StatelessParams;

/// Why a request to the client failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport cannot carry the request (e.g. stateless HTTP of 2025-11-25).
    #[error("not supported by this client: {0}")]
    Unsupported(String),
    /// The client did not declare the capability the request needs (e.g. `sampling`). In
    /// 2026-07-28, a call that fails with this error (through `?`) is answered with the
    /// protocol's "missing required client capability" error naming it.
    #[error("not supported by this client: the client did not declare the `{0}` capability")]
    MissingCapability(String),
    /// The client answered with a JSON-RPC error.
    #[error("the client refused the request ({code}): {message}")]
    Rejected {
        /// The error code.
        code: i64,
        /// The client's message.
        message: String,
    },
    /// The client's answer did not have the expected shape.
    #[error("the client's answer is malformed: {0}")]
    Malformed(String),
    /// The call was cancelled while waiting.
    #[error("the call was cancelled while waiting for the client")]
    Cancelled,
    /// The client did not answer in time.
    #[error("the client did not answer in time")]
    Timeout,
    /// The connection closed.
    #[error("the client disconnected")]
    Disconnected,
}

/// How a call reaches its client.
pub(crate) trait ClientLink: Send + Sync {
    /// Why no request can reach this client at all, if none can.
    fn unavailable(&self) -> Option<ClientError> {
        None
    }

    /// The call asks to become a task now (a tool that says itself when it does: see
    /// [`Context::become_task`](super::Context::become_task)); nothing where calls never do.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    fn start_task(&self) {}

    /// Asks the client `method` with `params` and waits for its result. `key` names the question
    /// among the call's others (stateless input requests); `via` is the queue of the call being
    /// served (its messages travel together); `cancel` is the call's cancellation.
    fn request<'a>(
        &'a self,
        key: Option<&'a str>,
        method: &'a str,
        params: Value,
        via: &'a Outbound,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>>;
}

/// A client that cannot be asked anything; says why.
pub(crate) struct Unreachable(pub &'static str);

impl ClientLink for Unreachable {
    fn unavailable(&self) -> Option<ClientError> {
        Some(ClientError::Unsupported(self.0.to_owned()))
    }

    fn request<'a>(
        &'a self,
        _: Option<&'a str>,
        _: &'a str,
        _: Value,
        _: &'a Outbound,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move { Err(ClientError::Unsupported(self.0.to_owned())) })
    }
}

/// Server→client JSON-RPC requests of one connection: each gets an id, travels on the call's
/// queue, and waits for the response with that id ([`resolve`](RequestLink::resolve)), the
/// call's cancellation, the connection's end or a timeout, whichever comes first.
pub(crate) struct RequestLink {
    pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, ClientError>>>>,
    next_id: AtomicI64,
    closed: CancellationToken,
    timeout: Duration,
}

impl RequestLink {
    pub fn new(timeout: Duration) -> Self {
        RequestLink {
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: CancellationToken::new(),
            timeout,
        }
    }

    /// Numbers this link's requests from a random point, not from 1: the link of a session
    /// that several instances serve, each with its own copy and its own requests, so that an
    /// answer that reaches the wrong instance names one request of the whole service (see
    /// `Session::share_as`). The ids stay below 2^53, exact in every client's numbers.
    #[cfg(feature = "http")]
    pub fn spread_ids(&self) {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        // From 2^32 to 2^52: about a million million starting points, billions of ids each.
        let start = (1i64 << 32) + (u64::from_le_bytes(bytes) % ((1u64 << 52) - (1u64 << 32))) as i64;
        self.next_id.store(start, Ordering::Relaxed);
    }

    /// Delivers the client's response (its raw `id`, `result` and `error` members); false when
    /// no request of this link waits for it (an unknown id, or one already answered, cancelled
    /// or timed out).
    pub fn resolve(
        &self,
        id: Option<&RawValue>,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
    ) -> bool {
        let Some(id) = id.and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok()) else {
            tracing::debug!("ignoring a response whose id this server never used");
            return false;
        };
        let Some(waiter) = self.pending.lock().expect("pending lock").remove(&id) else {
            tracing::debug!(id, "a response to an unknown or finished request");
            return false;
        };
        let outcome = match (result, error) {
            (Some(result), _) => serde_json::from_str(result.get())
                .map_err(|e| ClientError::Malformed(format!("the client's result is not JSON: {e}"))),
            (None, Some(error)) => {
                let error: Value = serde_json::from_str(error.get()).unwrap_or(Value::Null);
                Err(ClientError::Rejected {
                    code: error["code"].as_i64().unwrap_or_default(),
                    message: error["message"].as_str().unwrap_or("(no message)").to_owned(),
                })
            }
            (None, None) => Err(ClientError::Malformed("a response with neither result nor error".into())),
        };
        let _ = waiter.send(outcome);
        true
    }

    /// The connection ended: every waiting request fails, and so will every later one.
    pub fn close(&self) {
        self.closed.cancel();
        for (_, waiter) in self.pending.lock().expect("pending lock").drain() {
            let _ = waiter.send(Err(ClientError::Disconnected));
        }
    }
}

impl ClientLink for RequestLink {
    fn request<'a>(
        &'a self,
        _key: Option<&'a str>,
        method: &'a str,
        params: Value,
        via: &'a Outbound,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            self.pending.lock().expect("pending lock").insert(id, tx);
            #[derive(Serialize)]
            struct Request<'a> {
                jsonrpc: &'static str,
                id: i64,
                method: &'a str,
                params: &'a Value,
            }
            if !via.ready().await {
                self.pending.lock().expect("pending lock").remove(&id);
                return Err(ClientError::Disconnected);
            }
            via.send(
                serde_json::to_vec(&Request { jsonrpc: "2.0", id, method, params: &params })
                    .expect("serializes"),
            );
            let outcome = tokio::select! {
                outcome = rx => outcome.unwrap_or(Err(ClientError::Disconnected)),
                _ = cancel.cancelled() => Err(ClientError::Cancelled),
                _ = self.closed.cancelled() => Err(ClientError::Disconnected),
                _ = tokio::time::sleep(self.timeout) => Err(ClientError::Timeout),
            };
            if outcome.is_err() {
                self.pending.lock().expect("pending lock").remove(&id);
                if matches!(outcome, Err(ClientError::Cancelled | ClientError::Timeout)) {
                    let reason =
                        if matches!(outcome, Err(ClientError::Timeout)) { "timed out" } else { "cancelled" };
                    via.notify(encode_notification(
                        "notifications/cancelled",
                        &json!({"requestId": id, "reason": reason}),
                    ));
                }
            }
            outcome
        })
    }
}

/// The input requests of one stateless (2026-07-28) request. A question whose answer came with
/// the request (its `inputResponses`, or the answers sealed in its `requestState`) is answered
/// at once; any other is recorded and never answered: the dispatcher sees that input is
/// required ([`wait_for_questions`](InputLink::wait_for_questions)), drops the call and answers
/// with an `input_required` result listing what was asked. The client retries with the answers,
/// and the call runs again from the start, now finding them.
pub(crate) struct InputLink {
    /// The answers of the previous rounds, by key.
    answers: HashMap<String, Value>,
    /// The request's params, whose `inputResponses` answer this round's questions: each answer
    /// is read when a question asks for it, so answers to questions never asked are never
    /// built or kept.
    params: Option<Arc<RawValue>>,
    /// The answers of `inputResponses` the call's questions read, to seal for the next round.
    used: Mutex<HashMap<String, Value>>,
    /// Set once the call became a task: questions then wait for `tasks/update`.
    task: OnceLock<Arc<TaskQuestions>>,
    asked: Mutex<Vec<(String, Value)>>,
    /// How many questions the call asked so far, in all and under each name: an unnamed question
    /// is keyed by its position (`elicitation-1`), a named one by its name (the second under the
    /// same name: `name-2`), so a call that runs again asks under the same keys.
    count: Mutex<(usize, HashMap<String, usize>)>,
    questions: tokio::sync::Notify,
    /// Set when the call asked to become a task ([`ClientLink::start_task`]).
    task_asked: tokio::sync::watch::Sender<bool>,
}

impl InputLink {
    /// A link with the answers of the previous rounds (by key), and the request's params.
    pub fn new(answers: HashMap<String, Value>, params: Option<Arc<RawValue>>) -> Self {
        InputLink {
            answers,
            params,
            used: Mutex::default(),
            task: OnceLock::new(),
            asked: Mutex::new(Vec::new()),
            count: Mutex::new((0, HashMap::new())),
            questions: Default::default(),
            task_asked: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The answer to the question `key`: a previous round's, else this request's.
    fn answer(&self, key: &str) -> Option<Value> {
        if let Some(answer) = self.answers.get(key) {
            return Some(answer.clone());
        }
        let params = StatelessParams::decode(self.params.as_deref()).ok()?;
        let answer = params.answers().answer(key)?;
        self.used.lock().expect("used lock").insert(key.to_owned(), answer.clone());
        Some(answer)
    }

    /// The answers of this request's `inputResponses` that its questions read.
    pub fn used(&self) -> HashMap<String, Value> {
        self.used.lock().expect("used lock").clone()
    }

    /// Resolves once the call asked something that has no answer yet.
    pub async fn wait_for_questions(&self) {
        loop {
            let notified = self.questions.notified();
            if !self.asked.lock().expect("asked lock").is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// The questions without an answer, `(key, {"method", "params"})`, in the order asked.
    pub fn take_questions(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut *self.asked.lock().expect("asked lock"))
    }

    /// Whether the call asked something it has no answer to.
    pub fn has_questions(&self) -> bool {
        !self.asked.lock().expect("asked lock").is_empty()
    }

    /// Resolves once the call asked to become a task ([`ClientLink::start_task`]).
    pub async fn wait_for_task_start(&self) {
        let _ = self.task_asked.subscribe().wait_for(|asked| *asked).await;
    }

    /// From now on the call is a task: its questions wait for the answers `tasks/update` brings.
    pub fn become_task(&self, questions: Arc<TaskQuestions>) {
        let _ = self.task.set(questions);
    }
}

/// A task's question waiting for its answer: its key, the request, and where the answer goes.
type Question = (String, Value, oneshot::Sender<Value>);

/// The outstanding questions of a task, each waiting for its answer: `tasks/get` shows them,
/// `tasks/update` answers them.
#[derive(Default)]
pub(crate) struct TaskQuestions {
    /// The questions waiting for an answer, and the version of that list (one more at each
    /// question asked or answer taken).
    outstanding: Mutex<(Vec<Question>, u64)>,
    changed: tokio::sync::Notify,
    /// The last version the task's record was saved with ([`saved`](Self::saved)).
    saved: std::sync::atomic::AtomicU64,
    saved_changed: tokio::sync::Notify,
}

impl TaskQuestions {
    /// Asks `question` under `key`; resolves with the client's answer.
    fn ask(&self, key: String, question: Value) -> oneshot::Receiver<Value> {
        let (tx, rx) = oneshot::channel();
        let mut outstanding = self.outstanding.lock().expect("outstanding lock");
        outstanding.0.push((key, question, tx));
        outstanding.1 += 1;
        drop(outstanding);
        self.changed.notify_one();
        rx
    }

    /// The questions waiting for an answer, by key, and the version of that list.
    pub fn snapshot(&self) -> (serde_json::Map<String, Value>, u64) {
        let outstanding = self.outstanding.lock().expect("outstanding lock");
        let asked = outstanding.0.iter().map(|(key, question, _)| (key.clone(), question.clone())).collect();
        (asked, outstanding.1)
    }

    /// Delivers the answers to outstanding questions (`answer_for` of a question's key: the
    /// answer, if the client gave one); the version of the list without them, if any was
    /// answered. Only outstanding questions are looked up.
    pub fn answer(&self, answer_for: impl Fn(&str) -> Option<Value>) -> Option<u64> {
        let mut outstanding = self.outstanding.lock().expect("outstanding lock");
        let before = outstanding.0.len();
        let mut still = Vec::with_capacity(before);
        for (key, question, tx) in outstanding.0.drain(..) {
            match answer_for(&key) {
                Some(answer) => {
                    let _ = tx.send(answer);
                }
                None => still.push((key, question, tx)),
            }
        }
        let answered = still.len() != before;
        outstanding.0 = still;
        if !answered {
            return None;
        }
        outstanding.1 += 1;
        let version = outstanding.1;
        drop(outstanding);
        self.changed.notify_one();
        Some(version)
    }

    /// Resolves when a question was asked or answered.
    pub async fn changed(&self) {
        self.changed.notified().await
    }

    /// Records that the task's state was saved with the questions of `version` (`u64::MAX`:
    /// the task ended).
    pub fn mark_saved(&self, version: u64) {
        self.saved.fetch_max(version, std::sync::atomic::Ordering::AcqRel);
        self.saved_changed.notify_waiters();
    }

    /// Resolves once the task's state was saved with the questions of `version` or later.
    pub async fn saved(&self, version: u64) {
        loop {
            let notified = self.saved_changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.saved.load(std::sync::atomic::Ordering::Acquire) >= version {
                return;
            }
            notified.await;
        }
    }
}

impl ClientLink for InputLink {
    fn start_task(&self) {
        self.task_asked.send_replace(true);
    }

    fn request<'a>(
        &'a self,
        key: Option<&'a str>,
        method: &'a str,
        params: Value,
        _: &'a Outbound,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        let key = {
            let mut count = self.count.lock().expect("count lock");
            count.0 += 1;
            match key {
                None => format!("{}-{}", method.split('/').next().unwrap_or(method), count.0),
                Some(key) => {
                    let uses = count.1.entry(key.to_owned()).or_default();
                    *uses += 1;
                    if *uses == 1 { key.to_owned() } else { format!("{key}-{uses}") }
                }
            }
        };
        if !matches!(method, "elicitation/create" | "sampling/createMessage" | "roots/list") {
            let why = format!(
                "`{method}` cannot be asked of a 2026-07-28 client (only elicitation, sampling and roots)"
            );
            return Box::pin(async move { Err(ClientError::Unsupported(why)) });
        }
        if let Some(answer) = self.answer(&key) {
            return Box::pin(async move { Ok(answer) });
        }
        if let Some(task) = self.task.get() {
            let answer = task.ask(key, json!({"method": method, "params": params}));
            return Box::pin(async move { answer.await.map_err(|_| ClientError::Cancelled) });
        }
        self.asked.lock().expect("asked lock").push((key, json!({"method": method, "params": params})));
        self.questions.notify_one();
        Box::pin(std::future::pending())
    }
}
