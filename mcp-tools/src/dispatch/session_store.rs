//! 2025-11-25 sessions shared by the instances of one service: what a session is once its
//! `initialize` succeeded ([`SessionRecord`]) and where the records are kept ([`SessionStore`]).
//!
//! A server without a store keeps its sessions in its HTTP endpoint's memory, as always: a
//! session lives on the instance that created it. With one (`ServerBuilder::redis`, or
//! `--redis URL`), a session created through instance A is accepted by instance B:
//!
//! * `initialize` saves the record (before it is answered), with the endpoint's idle timeout as
//!   its time to live.
//! * A request naming a session an instance does not hold reads the record and makes a local
//!   copy of the session from it ([`Session::restore`](super::session::Session::restore)): the
//!   same client, revision, capabilities, log level and subscriptions. An unknown or expired
//!   record is 404, as an unknown session always was; another caller's too.
//! * `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe` save the record
//!   before they are answered, and tell the other instances (the bus's
//!   [`SessionChanged`](super::bus::BusMessage::SessionChanged)), whose copies read it again:
//!   the instance holding the client's GET stream sends the updates of a resource subscribed to
//!   through another.
//! * DELETE on any instance removes the record and tells the others
//!   ([`SessionEnded`](super::bus::BusMessage::SessionEnded)), which end their copies.
//! * Idle expiry: every use refreshes the record's time to live (at most once a quarter of the
//!   timeout per instance); a session unused everywhere for the idle timeout is gone. An
//!   instance's copy unused for the timeout is dropped from its memory only.
//!
//! * Resumable streams (`--resumable`, SEP-1699): the instance running a request appends the
//!   numbered events of its stream to the store as well ([`SessionStore::append_events`]); a
//!   client resuming the stream (`Last-Event-ID`) on another instance is replayed what it
//!   missed from there ([`SessionStore::read_events`]), then what follows as it is appended.
//!
//! What stays on one instance: a connection. A session's GET stream, and the server-to-client
//! requests of a call (sampling, elicitation, roots: answered on the POST of the same instance
//! while the call runs, or they fail), belong to the instance holding it.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::Implementation;
use crate::protocol::messages::LogLevel;

/// Why a session store failed.
pub(crate) type SessionStoreError = Box<dyn std::error::Error + Send + Sync>;

/// A 2025-11-25 session as every instance sees it: what `initialize` said and what the client
/// changed since.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionRecord {
    /// Who opened it, with authorization: no one else may use it.
    #[serde(default)]
    pub owner: Option<String>,
    /// Whose share of an instance's sessions it takes.
    #[serde(default)]
    pub caller: String,
    /// The negotiated revision.
    pub protocol_version: String,
    #[serde(default)]
    pub client_info: Implementation,
    #[serde(default)]
    pub client_capabilities: Map<String, Value>,
    /// The lowest level of `notifications/message` wanted (`None`: none).
    #[serde(default)]
    pub log_level: Option<LogLevel>,
    /// The resources subscribed to.
    #[serde(default)]
    pub subscriptions: Vec<String>,
}

/// Where the sessions of the instances of one service are kept. Every record lives `idle` from
/// its last save or touch.
pub(crate) trait SessionStore: Send + Sync + 'static {
    /// Keeps `record` as session `id` for `idle` from now.
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Session `id`, its time to live renewed to `idle`; `None` when unknown, ended or expired.
    fn load<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, SessionStoreError>>;

    /// Renews session `id`'s time to live to `idle`; `false` when it is no longer kept (ended
    /// through another instance, or expired).
    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> BoxFuture<'a, Result<bool, SessionStoreError>>;

    /// Ends session `id`.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Appends `events` (numbered, in order, each number above the last appended) to resumable
    /// stream `stream` of session `session`, and, with `end`, the mark that the stream ended
    /// (numbered `end`, above the events'). The stream keeps its newest events only (about as
    /// many as an instance keeps in memory) and lives `ttl` from its last append.
    fn append_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        events: &'a [(u64, Arc<str>)],
        end: Option<u64>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Starts keeping resumable stream `stream` of session `session` (living `ttl`), before its
    /// first event's id reaches the client: from then on [`read_events`](Self::read_events)
    /// finds it, even before any event is appended. `request` is the id (as JSON) of the
    /// request the stream answers, kept with this instance's name, so that an instance
    /// following the stream for a client can answer for it if this one stops.
    fn open_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        request: Option<&'a str>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Whether the instance named `instance` (a [`Runner`]'s) is still alive: its lease held.
    fn runner_alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, SessionStoreError>>;

    /// The events of stream `stream` of session `session` numbered above `after`, in order, and
    /// whether it ended; `None` when no such stream is kept (never appended, or expired).
    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<StoredEvents>, SessionStoreError>>;
}

/// What [`SessionStore::read_events`] found of a resumable stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StoredEvents {
    /// The events after the one asked for: number and message, in order.
    pub events: Vec<(u64, Arc<str>)>,
    /// Whether the stream ended (its request was answered): nothing follows these.
    pub ended: bool,
    /// Who writes the stream, as its start mark says (`None`: no mark, or trimmed away).
    pub runner: Option<Runner>,
}

/// The instance writing a resumable stream, and the request it answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Runner {
    /// The instance's name (its lease's).
    pub instance: String,
    /// The request's id, as JSON (`None`: not known).
    pub request: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_travels_as_json() {
        let record = SessionRecord {
            owner: None,
            caller: "address:127.0.0.1".into(),
            protocol_version: "2025-11-25".into(),
            client_info: Implementation::new("c", "1"),
            client_capabilities: json!({"sampling": {}}).as_object().unwrap().clone(),
            log_level: Some(LogLevel::Debug),
            subscriptions: vec!["test://x".into()],
        };
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<SessionRecord>(&text).unwrap(), record);
    }
}
