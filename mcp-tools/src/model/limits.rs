//! [`Limits`]: everything a client controls has a bound, each with a safe default, so a hostile
//! or merely unlucky client cannot make the server stop answering or grow without bound.

use std::time::Duration;

/// The bounds a server puts on what its clients send and keep, set with
/// [`ServerBuilder::limits`](crate::ServerBuilder::limits). Every default is safe for a server
/// on the open internet behind authorization; raise one only for a reason. The HTTP transport
/// has its own on top ([`HttpOptions`](crate::HttpOptions): connections, sessions, read times).
///
/// ```
/// use mcp_tools::Limits;
/// use std::time::Duration;
///
/// let limits = Limits::new()
///     .max_message_size(1024 * 1024)
///     .request_timeout(Some(Duration::from_secs(60)));
/// assert_eq!(limits.max_json_depth, 64);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest message (a stdio line, an HTTP body), in bytes. Larger ones are answered with
    /// an error and discarded. Default 4 MiB.
    pub max_message_bytes: usize,
    /// How deeply arrays and objects may nest in a message. Default 64.
    pub max_json_depth: usize,
    /// Requests one connection (a stdio client, an HTTP session) may have running at once. As
    /// many more wait for a place and start, in the order they came, as running ones finish;
    /// beyond those, requests are refused until some finish. Default 64.
    pub max_in_flight_per_connection: usize,
    /// Requests the whole server may have running at once. Default 1024.
    pub max_in_flight: usize,
    /// The largest `capabilities` a client may declare on `initialize` (kept for the session),
    /// in bytes of JSON. Default 64 KiB.
    pub max_capabilities_bytes: usize,
    /// Resources one session may subscribe to, and resources and tasks one
    /// `subscriptions/listen` stream may follow. Default 256.
    pub max_subscriptions: usize,
    /// Calls running as tasks on the whole server (2026-07-28 tasks extension). Each also holds
    /// one of the server's [`max_in_flight`](Self::max_in_flight) places while it runs. A call
    /// that would become one too many is refused before it starts. Default 256.
    pub max_tasks: usize,
    /// Calls running as tasks for one caller (a verified identity, else a connection, else a
    /// network address). Default 16.
    pub max_tasks_per_caller: usize,
    /// `subscriptions/listen` streams open on the whole server (2026-07-28). They hold none of
    /// the places of ordinary requests. Default 1024.
    pub max_listen_streams: usize,
    /// `subscriptions/listen` streams open for one caller. Default 16.
    pub max_listen_streams_per_caller: usize,
    /// The largest `requestState` of a multi-round-trip request (2026-07-28): the answers it
    /// carries from round to round, in bytes of JSON before sealing. Default 256 KiB.
    pub max_request_state_bytes: usize,
    /// How many bytes of messages may wait for a client that does not read them (per
    /// connection, or per HTTP stream). Answers wait for room, up to `write_timeout`; progress
    /// and log notifications that do not fit are dropped. Default 8 MiB.
    pub max_queued_bytes: usize,
    /// How long an answer may wait for a client that does not read; after that the connection
    /// is closed. Default 30 s.
    pub write_timeout: Duration,
    /// How long any request may run; then it is cancelled and answered with an error. A tool's
    /// own `#[tool(timeout = ...)]` takes precedence. Default: none.
    pub request_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            max_json_depth: 64,
            max_in_flight_per_connection: 64,
            max_in_flight: 1024,
            max_capabilities_bytes: 64 * 1024,
            max_subscriptions: 256,
            max_tasks: 256,
            max_tasks_per_caller: 16,
            max_listen_streams: 1024,
            max_listen_streams_per_caller: 16,
            max_request_state_bytes: 256 * 1024,
            max_queued_bytes: 8 * 1024 * 1024,
            write_timeout: Duration::from_secs(30),
            request_timeout: None,
        }
    }
}

impl Limits {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets [`max_message_bytes`](Self::max_message_bytes) (at least 1 KiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(1024);
        self
    }
    /// Sets [`max_json_depth`](Self::max_json_depth) (at least 8).
    pub fn max_json_depth(mut self, depth: usize) -> Self {
        self.max_json_depth = depth.max(8);
        self
    }
    /// Sets [`max_in_flight_per_connection`](Self::max_in_flight_per_connection) (at least 1).
    pub fn max_in_flight_per_connection(mut self, requests: usize) -> Self {
        self.max_in_flight_per_connection = requests.max(1);
        self
    }
    /// Sets [`max_in_flight`](Self::max_in_flight) (at least 1).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }
    /// Sets [`max_capabilities_bytes`](Self::max_capabilities_bytes).
    pub fn max_capabilities_size(mut self, bytes: usize) -> Self {
        self.max_capabilities_bytes = bytes;
        self
    }
    /// Sets [`max_subscriptions`](Self::max_subscriptions).
    pub fn max_subscriptions(mut self, subscriptions: usize) -> Self {
        self.max_subscriptions = subscriptions;
        self
    }
    /// Sets [`max_tasks`](Self::max_tasks) and
    /// [`max_tasks_per_caller`](Self::max_tasks_per_caller) (each at least 1).
    pub fn max_tasks(mut self, total: usize, per_caller: usize) -> Self {
        self.max_tasks = total.max(1);
        self.max_tasks_per_caller = per_caller.max(1);
        self
    }
    /// Sets [`max_listen_streams`](Self::max_listen_streams) and
    /// [`max_listen_streams_per_caller`](Self::max_listen_streams_per_caller) (each at least 1).
    pub fn max_listen_streams(mut self, total: usize, per_caller: usize) -> Self {
        self.max_listen_streams = total.max(1);
        self.max_listen_streams_per_caller = per_caller.max(1);
        self
    }
    /// Sets [`max_request_state_bytes`](Self::max_request_state_bytes) (at least 1 KiB).
    pub fn max_request_state_size(mut self, bytes: usize) -> Self {
        self.max_request_state_bytes = bytes.max(1024);
        self
    }
    /// Sets [`max_queued_bytes`](Self::max_queued_bytes) (at least the largest message).
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_bytes = bytes;
        self
    }
    /// Sets [`write_timeout`](Self::write_timeout).
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }
    /// Sets [`request_timeout`](Self::request_timeout).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }
}
