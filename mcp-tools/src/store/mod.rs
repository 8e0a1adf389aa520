//! Several instances of one server, one service: tasks shared through Redis (feature `redis`).
//!
//! Run three copies of a server behind a load balancer and a client's requests land on any of
//! them. [`Redis`] is the [`TaskStore`](crate::TaskStore) and the [`Bus`](crate::Bus) that let
//! them serve tasks as one:
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
//!     // Every instance alike: stateless HTTP, behind the load balancer.
//!     server.run_cli(["--http", "0.0.0.0:8080", "--stateless"]).await;
//!     Ok(())
//! }
//! ```
//!
//! The ready-made command line does the same with `--redis URL`
//! (`my-server --http 0.0.0.0:8080 --stateless --redis redis://10.0.0.5:6379/`).
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
//!   failed: …"; calls that are no tasks are served as usual. When Redis is back the same
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
//! * 2025-11-25 sessions (`Mcp-Session-Id`) and their resumable SSE streams (`Last-Event-ID`):
//!   a session lives on the instance that created it; run `--http ... --stateless` (or pin
//!   sessions to an instance in the load balancer).
//! * Listen streams' `list_changed` and `resources/updated` events: an instance's listeners hear
//!   its own changes only ([`BusMessage`](crate::BusMessage) has their variants; they are not
//!   published yet). Tasks' status notifications on listen streams are sent by the instance
//!   running the task.
//! * Rate limits (`middleware::RateLimit`) count per instance.
//! * The key signing 2026-07-28's `requestState` is not kept in Redis: give every instance the
//!   same secret ([`ServerBuilder::request_state_secret`](crate::ServerBuilder::request_state_secret)),
//!   or a multi-round-trip request whose next round reaches another instance is refused.

pub(crate) mod redis;

pub use self::redis::{Redis, RedisBuilder, RedisError};
