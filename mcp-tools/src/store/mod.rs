//! Several instances of one server, one service: tasks, events, sessions, resumable streams and
//! rate limits shared through Redis (feature `redis`).
//!
//! Run three copies of a server behind a load balancer and a client's requests land on any of
//! them. [`Redis`] is the [`TaskStore`](crate::TaskStore), the [`Bus`](crate::Bus) and the store
//! of 2025-11-25 sessions that let them serve as one:
//!
//! ```no_run
//! use mcp_tools::Server;
//! use mcp_tools::store::Redis;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Fails at once, naming the URL, when Redis cannot be reached.
//!     let redis = Redis::connect("redis://127.0.0.1:6379/").await?;
//!     let server = Server::builder().redis(redis).build()?;
//!     // Every instance alike, behind the load balancer: no sticky routing is needed.
//!     server.run_cli(["--http", "0.0.0.0:8080"]).await;
//!     Ok(())
//! }
//! ```
//!
//! The ready-made command line does the same with `--redis URL`
//! (`my-server --http 0.0.0.0:8080 --redis redis://10.0.0.5:6379/`). Rate limits are added in
//! code, so a shared one is given the `Redis` in code too
//! (`RateLimit::per_minute(60).shared(&redis, "calls")`, feature `rate-limit`; see below).
//!
//! # What is shared
//!
//! * **Task records.** Every change of a task's state is saved whole (one JSON value under
//!   `PREFIX:task:ID`), so `tasks/get` on any instance reads it: the result of a task that ran on
//!   instance A is read through instance B. An ended task's key expires with the task (its
//!   `ttlMs` from its creation, capped by [`RedisBuilder::max_ttl`]); a task still running is
//!   kept at least `max_ttl` after its last change.
//! * **Cancellation and answers.** A task runs on the instance that started it. `tasks/cancel`
//!   or `tasks/update` reaching another instance is published on the bus (`PREFIX:bus`, Redis
//!   pub/sub) and the instance running the task stops it, or hands the answers to its waiting
//!   questions. `tasks/update` answers once the task's stored state no longer lists the
//!   questions it answered (as on one instance), waiting at most 5 seconds.
//! * **Leases.** Each instance holds a lease, `PREFIX:instance:ID`, which it renews every third
//!   of [`RedisBuilder::lease`] (10 seconds by default). A task found `working` or
//!   `input_required` whose instance holds no lease is saved `failed`, with the reason "the
//!   server instance running it stopped": a task whose instance was killed reads as failed
//!   **at most one lease (10 s) after the instance's last renewal**, never `working` forever.
//!   The failure is found by whoever reads the task next (`tasks/get`, `tasks/update`,
//!   `tasks/cancel` on any instance) and saved, so every later read agrees.
//! * **Events.** A change an instance makes (a tool, resource or prompt added or removed at run
//!   time, [`Server::notify_resource_updated`](crate::Server::notify_resource_updated), a task's
//!   new state) is published on the bus, and every other instance tells its own listeners
//!   (2026-07-28 `subscriptions/listen` streams, 2025-11-25 sessions) as if it were its own, by
//!   their filters; what an instance hears it never publishes again, and it does not hear its
//!   own. The event says "list again", not what changed: each instance's catalog is its own, so
//!   an application changes it on every instance (which then each announce it). Changes learnt
//!   from a mount's upstream are not published (every instance hears its upstream itself).
//! * **2025-11-25 sessions** (`Mcp-Session-Id`, HTTP): `initialize` through any instance saves
//!   the session's record (`PREFIX:session:ID`: owner, negotiated revision, client info and
//!   capabilities, log level, subscriptions) before it is answered; any other instance accepts
//!   the session, making a copy of it from the record; `logging/setLevel` and
//!   `resources/subscribe`/`unsubscribe` save the record before they are answered and tell the
//!   others, whose copies read it again; DELETE through any instance removes it and ends every
//!   copy. The record lives the idle timeout (`HttpOptions::session_idle_timeout`) from its last
//!   use on any instance, so idle expiry holds for the service as a whole. The GET stream stays
//!   on the instance holding the connection (it hears every instance's events). A running call's
//!   requests to the client (sampling, elicitation, roots) go out on its stream from the
//!   instance running it, numbered from a random point per copy of the session (ids between
//!   2^32 and 2^52), so no two copies use the same id; the client's answer may reach any
//!   instance: one with no request waiting for it publishes it on the bus
//!   ([`BusMessage::SessionAnswer`](crate::BusMessage::SessionAnswer): one `PUBLISH`), and
//!   the instance whose call waits for it hands it over. (Delivery is the bus's: at most once;
//!   an answer lost while an instance's subscription is down leaves the call to its timeout.)
//! * **Resumable streams** (`--resumable`, [`HttpOptions::resumable`](crate::HttpOptions::resumable),
//!   SEP-1699) of shared sessions: the instance running a request numbers its stream's events
//!   (`STREAM-SEQ`; a shared session's streams are numbered at random, so no two instances
//!   number two alike) and, besides keeping them in memory, appends them in order to a Redis
//!   stream, `PREFIX:sse:SESSION:STREAM` (event `SEQ` as entry `0-(SEQ+1)`; entry `0-1`, the start
//!   mark, is written before the stream's priming event is sent, so a client resuming at once
//!   on another instance finds the stream; the request's answer is followed by an end mark), trimmed to about 1,024 entries and living the idle timeout from its last append.
//!   The appends are made by a task of the stream's own, batched, so the client's connection never
//!   waits for Redis; a copy more than 1,024 events behind, or holding more bytes waiting
//!   than the stream keeps for replay (`Limits::max_queued_bytes`), or whose append failed, is given up
//!   (logged). A GET with `Last-Event-ID` naming a stream this instance does not hold (another
//!   ran it, or this one has forgotten it) is replayed from Redis: exactly the events after the
//!   one named, in order, then what the running instance appends (read every 25 ms, backing off
//!   to 500 ms while nothing comes), until the end mark; the stream also closes when its key has
//!   expired, after 10 failed reads in a row (the client resumes again), on shutdown, or when
//!   the client goes (reads stop with it). The start mark names the instance writing the stream
//!   and the request it answers: while nothing comes for a second, the following instance checks
//!   that instance's lease (once a second); when the lease is gone and a last read finds nothing
//!   more, it answers the request for it, a JSON-RPC error (-32603, "the request was not
//!   answered: the server instance running it stopped"), and ends the stream: a client whose
//!   instance was killed mid-request learns it within about the lease, never waits forever. A stream this instance holds is served from its
//!   memory, as without Redis. A `Last-Event-ID` naming a stream kept nowhere gets a new GET
//!   stream, as before. The server-to-client requests a resumed stream carries are answered
//!   as any (the answer may reach any instance, as above).
//! * **Rate limits** (feature `rate-limit`, [`RateLimit::shared`](crate::middleware::RateLimit::shared)):
//!   a shared limit counts each caller (or caller and tool) under
//!   `PREFIX:rate:NAME:DIGEST` (a 128-bit digest of the caller's id), with GCRA run atomically
//!   by a Lua script on Redis's clock, so a caller's calls spread over the instances are limited
//!   as one; a key expires when its caller's allowance is whole again. While Redis fails, calls
//!   run uncounted and an error is logged (the default), or are refused
//!   ([`RateLimit::fail_closed`](crate::middleware::RateLimit::fail_closed)), after at most the
//!   limit's [`store_timeout`](crate::middleware::RateLimit::store_timeout).
//!
//! # What it costs, in Redis round trips
//!
//! | operation | round trips |
//! |---|---|
//! | a call becoming a task | 1 (`SET`, before the handle is answered) |
//! | each change of a task's state (a question asked or answered, its end) | 1 (`SET`) |
//! | `tasks/get` | 1 (`GET`); +1 (`EXISTS` of the lease) when the task runs on another instance; +1 (`EVAL`, a compare-and-set) when it is found orphaned |
//! | `tasks/cancel` | as `tasks/get`, +1 (`PUBLISH`) when another instance runs it |
//! | `tasks/update` | as `tasks/get`; when another instance runs it, +1 (`PUBLISH`) and one `GET` every 5–100 ms until the answers are taken |
//! | each event (a run-time catalog change, a resource update, a task's new state) | 1 `PUBLISH`, after it is told locally (not waited for) |
//! | `initialize` of a 2025-11-25 session | 1 (`SET`, before it is answered) |
//! | a request naming a session this instance holds no copy of | 1 (`GETEX`: read and renewed) |
//! | any other request of a session | 1 (`PEXPIRE`, waited for: it renews the record and says whether the session still exists, so that a session ended through another instance is refused at once, not once the news arrives) |
//! | `logging/setLevel`, `resources/subscribe`/`unsubscribe` | 1 (`SET`) + 1 `PUBLISH`; +1 `GETEX` on every instance holding a copy |
//! | DELETE | 1 (`DEL`) + 1 `PUBLISH` |
//! | a request of a shared session answered on a resumable stream | 1 (`XADD` of the start mark + `PEXPIRE`, pipelined, before the stream opens) |
//! | a client's answer to a request of another instance (sampling, elicitation, roots) | 1 `PUBLISH` |
//! | each event of a resumable stream of a shared session | 1 pipelined `XADD`s + `PEXPIRE` per batch of the events queued (not waited for by the client's connection) |
//! | resuming a stream on an instance not holding it | 1 (`EXISTS` + 2 `XRANGE`s, pipelined); then 1 per read while the request runs (every 25–500 ms), +1 (`EXISTS` of the writer's lease) a second while nothing comes |
//! | a call through a shared `RateLimit` | 1 (`EVALSHA`); +1 (`SCRIPT LOAD`) on an instance's first call; +1 (`EVAL`) once after Redis lost its scripts |
//! | each instance, all the time | 1 `SET` per third of a lease; one subscribed connection, `PING`ed every 5 s |
//!
//! Each instance uses two connections: one multiplexed connection for commands (Redis's
//! connection manager: it reconnects by itself), and one for its subscription.
//!
//! # When Redis fails
//!
//! * **At start-up**: [`Redis::connect`] fails with an error naming the URL (its password, if
//!   any, hidden); `--redis` prints it and the server exits with code 2.
//! * **While serving**: every command has a timeout ([`RedisBuilder::timeout`], 2 seconds by
//!   default), so nothing hangs. While Redis cannot be reached, `tasks/get`, `tasks/update` and
//!   `tasks/cancel` answer a JSON-RPC error (`-32603`, "the task store failed: Redis at URL …"),
//!   and a call that would become a task fails with "the task could not be created: its store
//!   failed: …"; calls that are no tasks are served as usual. A 2025-11-25 `initialize`, a
//!   request naming a session held by no copy here, and DELETE answer HTTP 503 ("the session
//!   store failed: …"); requests of sessions this instance holds a copy of are served. A GET
//!   resuming a stream this instance does not hold answers 503 too; the streams it holds are
//!   served from memory (their copies in Redis are given up, logged). A call through a shared
//!   `RateLimit` runs uncounted or is refused, as the limit says (fail-open by default). When Redis is back the same
//!   instance works again by itself: the connection manager reconnects at the next command, and
//!   the subscription is retried with back-off (100 ms doubling to 5 s). Messages published
//!   while an instance's subscription is down do not reach it (a cancellation sent then is
//!   lost: send it again).
//! * A task whose state change could not be saved keeps running; its next change saves the
//!   whole record again. An instance that cannot renew its lease for a whole lease has its
//!   running tasks reported failed by the others.
//!
//! # Redis settings that keep tasks safe
//!
//! * **Version**: Redis 6.2 or later (or Valkey): sessions are read with `GETEX`.
//! * **Persistence**: a task's result lives only in Redis. Turn on AOF
//!   (`appendonly yes`, `appendfsync everysec`) or RDB snapshots, or a restarted Redis has
//!   forgotten every task (clients then hear "unknown task").
//! * **Eviction**: every key this store writes has a TTL. Use `maxmemory-policy noeviction`
//!   (writes fail, clearly, when memory is full) or `volatile-ttl` (the keys closest to their
//!   expiry go first); never an `allkeys-*` policy, which may evict a running task's record or
//!   an instance's lease (its tasks would then read as failed).
//! * Give each service its own [`RedisBuilder::prefix`] (default `mcp-tools`) when several share
//!   one Redis; the instances of one service must use the same prefix.
//!
//! # Not shared yet
//!
//! * Listeners hear the events published while their instance is subscribed to the bus: at most
//!   once, so an event published while an instance's subscription is down is not heard there.
//! * A resumable stream's copy in Redis is bounded in events (about 1,024), not in bytes (each
//!   event is at most one message, [`Limits::max_message_bytes`](crate::Limits::max_message_bytes));
//!   an instance's memory keeps at most `Limits::max_queued_bytes` per session. A stream whose
//!   instance died mid-request is never marked ended: a client resumed elsewhere is replayed
//!   what was kept, then waits (keep-alives) until the key expires (the idle timeout). The copy
//!   trails the live stream by one round trip: a client resuming elsewhere before the stream's
//!   first append reached Redis (sooner than its `retry` delay) is taken for one naming an
//!   unknown stream and gets a new GET stream.
//! * Rate limits count in Redis only when made [`shared`](crate::middleware::RateLimit::shared);
//!   a plain `RateLimit` counts per instance.
//! * The key signing 2026-07-28's `requestState`: the command line's `--redis` shares it
//!   ([`Redis::shared_secret`], made once and kept in Redis); a server built in code with
//!   [`ServerBuilder::redis`](crate::ServerBuilder::redis) is given the same secret on every
//!   instance with [`ServerBuilder::request_state_secret`](crate::ServerBuilder::request_state_secret)
//!   (`redis.shared_secret("request-state")` is one), or a multi-round-trip request whose next
//!   round reaches another instance is refused.

pub(crate) mod redis;

pub use self::redis::{Redis, RedisBuilder, RedisError};
