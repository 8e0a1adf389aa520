//! The cluster bus: messages between the instances of one service (several processes serving
//! the same clients behind a load balancer, sharing a [`TaskStore`](crate::TaskStore)).
//!
//! A request may reach an instance other than the one that holds what it concerns: `tasks/cancel`
//! or `tasks/update` for a task running elsewhere. That instance publishes a [`BusMessage`] and
//! the one running the task acts on it. And a change one instance makes (a tool added at run
//! time, a resource updated, a task's new state) is published for the others to tell their own
//! listeners (see `dispatch/events.rs`: what each event means there, and why none loops). The default bus, [`LocalBus`], joins no other instance:
//! a server alone in its process needs none. `mcp_tools::store::Redis` (feature `redis`) is a bus
//! through Redis pub/sub.

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why a bus could not publish a message.
pub type BusError = Box<dyn std::error::Error + Send + Sync>;

/// A message from one instance of a service to the others.
///
/// The tasks' requests are acted upon by the instance running the task; the events (lists,
/// resources, tasks' states) are told by every instance that hears them to its own listeners
/// (2026-07-28 listen streams, 2025-11-25 sessions), never published again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BusMessage {
    /// `tasks/cancel` reached an instance that does not run the task: the one running it stops it.
    CancelTask {
        /// The task.
        task_id: String,
    },
    /// `tasks/update` reached an instance that does not run the task: the one running it hands
    /// these answers (by the key of the question they answer) to the task's waiting questions.
    AnswerTask {
        /// The task.
        task_id: String,
        /// The answers to the questions the task's state listed, by key.
        answers: Map<String, Value>,
    },
    /// A list changed (`notifications/tools/list_changed` and its siblings): the publishing
    /// instance's catalog changed at run time; listeners are told to list again.
    ListChanged {
        /// Which list.
        list: ListKind,
    },
    /// A resource changed (`notifications/resources/updated`, to the listeners subscribed to
    /// it): [`Server::notify_resource_updated`](crate::Server::notify_resource_updated) was
    /// called on the publishing instance.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A task's state changed on the instance running it (`notifications/tasks`, to the listen
    /// streams that named the task).
    TaskChanged {
        /// The task.
        task_id: String,
        /// What `tasks/get` now answers for it.
        state: Map<String, Value>,
    },
    /// A 2025-11-25 session kept in the shared store changed (its log level, its resource
    /// subscriptions): the instances holding a copy of it read it again.
    SessionChanged {
        /// The session (`Mcp-Session-Id`).
        session_id: String,
    },
    /// A 2025-11-25 session was ended (DELETE): the instances holding a copy of it end it.
    SessionEnded {
        /// The session (`Mcp-Session-Id`).
        session_id: String,
    },
    /// The client of a shared 2025-11-25 session answered a request (sampling, elicitation,
    /// roots) that another instance sent: the instance whose call waits for it hands it over.
    SessionAnswer {
        /// The session (`Mcp-Session-Id`).
        session_id: String,
        /// The JSON-RPC response as the client sent it (`id` and `result` or `error`).
        response: Value,
    },
}

/// The lists a client can hear have changed ([`BusMessage::ListChanged`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `resources/list`.
    Resources,
    /// `prompts/list`.
    Prompts,
}

/// How the instances of one service reach each other: what one publishes, every *other*
/// instance subscribed hears (an instance does not hear its own messages: it acts on them
/// itself).
///
/// Delivery is at most once: a message published while an instance's subscription is down (its
/// connection to the broker lost and not yet back) does not reach it. Set one with
/// [`ServerBuilder::bus`](crate::ServerBuilder::bus); the default is [`LocalBus`].
pub trait Bus: Send + Sync + 'static {
    /// Sends `message` to the other instances; fails when it cannot be handed to the broker.
    fn publish(&self, message: BusMessage) -> BoxFuture<'_, Result<(), BusError>>;

    /// The messages of the other instances from now on, until the bus is dropped. A
    /// subscriber that falls behind misses the oldest messages rather than slowing the bus down.
    fn subscribe(&self) -> BoxStream<'static, BusMessage>;
}

/// The bus of a server alone in its process: it publishes nowhere and hears nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalBus;

impl Bus for LocalBus {
    fn publish(&self, _message: BusMessage) -> BoxFuture<'_, Result<(), BusError>> {
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self) -> BoxStream<'static, BusMessage> {
        Box::pin(futures_util::stream::empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_travel_as_tagged_json() {
        let answer = BusMessage::AnswerTask {
            task_id: "t1".into(),
            answers: json!({"a": {"action": "accept"}}).as_object().unwrap().clone(),
        };
        let text = serde_json::to_value(&answer).unwrap();
        assert_eq!(
            text,
            json!({"type": "answer_task", "task_id": "t1", "answers": {"a": {"action": "accept"}}})
        );
        assert_eq!(serde_json::from_value::<BusMessage>(text).unwrap(), answer);
        let listed = serde_json::to_value(BusMessage::ListChanged { list: ListKind::Tools }).unwrap();
        assert_eq!(listed, json!({"type": "list_changed", "list": "tools"}));
    }
}
