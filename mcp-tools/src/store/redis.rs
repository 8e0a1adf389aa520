//! [`Redis`]: the task store and the bus of several instances, through one Redis server (see the
//! [module's documentation](crate::store)).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig, PubSub};
use ::redis::{Client, Cmd, FromRedisValue, cmd};
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::dispatch::bus::{Bus, BusError, BusMessage};
#[cfg(feature = "http")]
use crate::dispatch::session_store::{Runner, SessionRecord, SessionStore, SessionStoreError, StoredEvents};
use crate::model::task::{TaskRecord, TaskStatus, TaskStore, TaskStoreError};
use crate::protocol::INTERNAL_ERROR;

/// Why a task whose instance holds no lease failed.
pub(crate) const INSTANCE_STOPPED: &str = "the server instance running it stopped";

/// How often the subscription's connection is checked with a `PING`.
const SUBSCRIPTION_PING: Duration = Duration::from_secs(5);

/// The subscription's back-off between attempts to subscribe again: first, and at most.
const RESUBSCRIBE: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

/// Replaces the stored value only if it is still the one read: a task found orphaned is failed
/// unless its instance saved it meanwhile.
const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0";

/// GCRA (as the in-process limiter's, [`governor`]'s) on one key, atomically, on Redis's clock.
/// `KEYS[1]`: the caller's key; `ARGV[1]`: the interval between calls, `ARGV[2]`: the tolerance
/// (the interval times the burst less one), both in microseconds. The key holds the theoretical
/// arrival time and expires when it is reached (the allowance is whole again: forgetting it
/// changes nothing). Answers 0 when the call is allowed (and counted), else the wait in
/// microseconds.
#[cfg(feature = "rate-limit")]
const GCRA: &str = r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local earliest = tat - tolerance
if now < earliest then
  return earliest - now
end
local after = tat + interval
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', string.format('%d', math.ceil((after - now) / 1000)))
return 0";

/// Tasks shared through Redis by the instances of one service: their [`TaskStore`] (records,
/// with the instance running each and its lease) and their [`Bus`] (Redis pub/sub), in one
/// value. Give it to [`ServerBuilder::redis`](crate::ServerBuilder::redis), or run the server
/// with `--redis URL`. Cloning it shares its connections.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use mcp_tools::Server;
/// use mcp_tools::store::Redis;
///
/// let redis = Redis::builder("redis://:secret@10.0.0.5:6379/0")
///     .prefix("billing-mcp")
///     .lease(Duration::from_secs(5))
///     .connect()
///     .await?;
/// let server = Server::builder().redis(redis).build()?;
/// # let _ = server; Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Redis {
    inner: Arc<Inner>,
}

struct Inner {
    /// The URL, its password hidden: what errors and logs name.
    shown: String,
    commands: ConnectionManager,
    keys: Keys,
    /// This instance's id (random): whose lease a running task's record names.
    instance: String,
    timeout: Duration,
    lease: Duration,
    max_ttl: Duration,
    /// The SHA-1 of [`GCRA`] once Redis loaded it (`SCRIPT LOAD`): calls then send `EVALSHA`.
    #[cfg(feature = "rate-limit")]
    gcra: std::sync::OnceLock<String>,
    /// The other instances' messages, as the subscription hears them.
    heard: broadcast::Sender<BusMessage>,
    /// Stops the lease's renewal and the subscription when the last clone is dropped.
    _stop: DropGuard,
}

/// The keys of one service.
#[derive(Clone)]
struct Keys {
    prefix: String,
}

impl Keys {
    fn task(&self, task_id: &str) -> String {
        format!("{}:task:{task_id}", self.prefix)
    }
    fn lease(&self, instance: &str) -> String {
        format!("{}:instance:{instance}", self.prefix)
    }
    fn bus(&self) -> String {
        format!("{}:bus", self.prefix)
    }
    fn secret(&self, name: &str) -> String {
        format!("{}:secret:{name}", self.prefix)
    }
    #[cfg(feature = "rate-limit")]
    fn rate(&self, limit: &str, key: u128) -> String {
        format!("{}:rate:{limit}:{key:032x}", self.prefix)
    }
    #[cfg(feature = "http")]
    fn session(&self, session_id: &str) -> String {
        format!("{}:session:{session_id}", self.prefix)
    }
    #[cfg(feature = "http")]
    fn events(&self, session_id: &str, stream: u64) -> String {
        format!("{}:sse:{session_id}:{stream}", self.prefix)
    }
}

/// How to reach Redis and keep tasks there ([`Redis::builder`]).
#[derive(Clone)]
#[must_use]
pub struct RedisBuilder {
    url: String,
    prefix: String,
    timeout: Duration,
    lease: Duration,
    max_ttl: Duration,
}

/// Redis could not be reached, or failed a command: the message names the URL (its password
/// hidden) and what failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisError {
    message: String,
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RedisError {}

impl RedisError {
    fn new(message: impl Into<String>) -> Self {
        RedisError { message: message.into() }
    }
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("url", &self.inner.shown)
            .field("prefix", &self.inner.keys.prefix)
            .field("instance", &self.inner.instance)
            .field("lease", &self.inner.lease)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for RedisBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBuilder")
            .field("url", &redacted(&self.url))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("lease", &self.lease)
            .field("max_ttl", &self.max_ttl)
            .finish()
    }
}

impl Redis {
    /// Connects to the Redis at `url` (`redis://[:PASSWORD@]HOST[:PORT][/DB]`) with the default
    /// settings ([`RedisBuilder`]). Fails, naming the URL, when it cannot be reached.
    pub async fn connect(url: impl Into<String>) -> Result<Redis, RedisError> {
        Self::builder(url).connect().await
    }

    /// Settings for the Redis at `url`, connected with [`RedisBuilder::connect`].
    pub fn builder(url: impl Into<String>) -> RedisBuilder {
        RedisBuilder {
            url: url.into(),
            prefix: "mcp-tools".into(),
            timeout: Duration::from_secs(2),
            lease: Duration::from_secs(10),
            max_ttl: Duration::from_secs(60 * 60),
        }
    }

    /// A secret every instance using this Redis (and prefix) shares: 32 random bytes, made by
    /// the first instance that asks for `name` (`SET NX`) and read by the others, kept without
    /// a time to live (`PREFIX:secret:NAME`). The command line's `--redis` signs the
    /// `requestState` of 2026-07-28 requests with `shared_secret("request-state")` (unless the
    /// server was given [`request_state_secret`](crate::ServerBuilder::request_state_secret)),
    /// so a request's next round may reach any instance. Two round trips.
    pub async fn shared_secret(&self, name: &str) -> Result<Vec<u8>, RedisError> {
        let key = self.inner.keys.secret(name);
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        let fresh: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.run::<Option<String>>("make a shared secret", cmd("SET").arg(&key).arg(&fresh).arg("NX"))
            .await?;
        let stored: String = self.run("read a shared secret", cmd("GET").arg(&key)).await?;
        Ok(stored.into_bytes())
    }

    /// This instance's id: the name of its lease (`PREFIX:instance:ID`).
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Runs `command` (described by `what`, for errors), bounded by the timeout.
    async fn run<T: FromRedisValue>(&self, what: &str, command: &Cmd) -> Result<T, RedisError> {
        run(&self.inner.commands, &self.inner.shown, self.inner.timeout, what, command).await
    }

    /// Runs `pipe` (described by `what`, for errors) in one round trip, bounded by the timeout.
    #[cfg(feature = "http")]
    async fn run_pipe<T: FromRedisValue>(
        &self,
        what: &str,
        pipe: &::redis::Pipeline,
    ) -> Result<T, RedisError> {
        let (shown, timeout) = (&self.inner.shown, self.inner.timeout);
        let mut connection = self.inner.commands.clone();
        match tokio::time::timeout(timeout, pipe.query_async::<T>(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(RedisError::new(format!("Redis at {shown} failed to {what}: {e}"))),
            Err(_) => Err(RedisError::new(format!("Redis at {shown} did not {what} within {timeout:?}"))),
        }
    }

    /// How long a key holding `task` lives from now (`None`: it has expired).
    fn expiry(&self, task: &TaskRecord) -> Option<Duration> {
        let max = self.inner.max_ttl;
        let ends = task.created_at + task.ttl.map_or(max, |ttl| ttl.min(max));
        let left = ends.duration_since(SystemTime::now()).unwrap_or_default();
        if !task.status.is_terminal() {
            // Kept while it runs (saved again at each change), whatever its time to live.
            return Some(left.max(max));
        }
        (!left.is_zero()).then_some(left)
    }

    async fn save_task(&self, task: TaskRecord) -> Result<(), RedisError> {
        let key = self.inner.keys.task(&task.task_id);
        match self.expiry(&task) {
            Some(ttl) => {
                let value = Stored::of(&task, &self.inner.instance).to_json();
                self.run::<()>("save a task", cmd("SET").arg(&key).arg(value).arg("PX").arg(millis(ttl)))
                    .await
            }
            None => self.run::<()>("forget an expired task", cmd("DEL").arg(&key)).await,
        }
    }

    async fn load_task(&self, task_id: &str) -> Result<Option<TaskRecord>, RedisError> {
        let key = self.inner.keys.task(task_id);
        // Twice at most: a task found orphaned is failed unless its instance saved it meanwhile
        // (then it is read again).
        for _ in 0..2 {
            let Some(raw) = self.run::<Option<String>>("read a task", cmd("GET").arg(&key)).await? else {
                return Ok(None);
            };
            let stored: Stored = serde_json::from_str(&raw)
                .map_err(|e| RedisError::new(format!("task `{key}` in Redis is not a task record: {e}")))?;
            let (mut task, instance) = stored.into_record();
            if task.status.is_terminal() || instance == self.inner.instance {
                return Ok(Some(task));
            }
            let lease = self.inner.keys.lease(&instance);
            if self.run::<bool>("read an instance's lease", cmd("EXISTS").arg(&lease)).await? {
                return Ok(Some(task));
            }
            // Its instance stopped (or lost Redis for a whole lease): the task will not end.
            task.status = TaskStatus::Failed;
            task.status_message = Some(INSTANCE_STOPPED.into());
            task.error = Some(
                json!({"code": INTERNAL_ERROR, "message": format!("the task failed: {INSTANCE_STOPPED}")}),
            );
            task.input_requests = Map::new();
            task.last_updated_at = SystemTime::now();
            let ttl = self.expiry(&task).unwrap_or(Duration::from_millis(1));
            let failed = Stored::of(&task, &instance).to_json();
            let script = cmd("EVAL")
                .arg(COMPARE_AND_SET)
                .arg(1)
                .arg(&key)
                .arg(&raw)
                .arg(failed)
                .arg(millis(ttl))
                .clone();
            if self.run::<i64>("fail an orphaned task", &script).await? == 1 {
                tracing::warn!(task = %task_id, %instance, "a task's instance holds no lease: the task failed");
                return Ok(Some(task));
            }
        }
        self.run::<Option<String>>("read a task", cmd("GET").arg(&key))
            .await?
            .map(|raw| serde_json::from_str::<Stored>(&raw).map(|s| s.into_record().0))
            .transpose()
            .map_err(|e| RedisError::new(format!("task `{key}` in Redis is not a task record: {e}")))
    }
}

/// Shared rate limits ([`RateLimit::shared`](crate::middleware::RateLimit::shared)).
#[cfg(feature = "rate-limit")]
impl Redis {
    /// How long a shared rate limit waits for Redis by default: [`RedisBuilder::timeout`].
    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Counts a call of `key` under limit `limit` (GCRA: one call every `interval`, `tolerance`
    /// saved up), in one round trip (`EVALSHA`; the first call of an instance loads the script
    /// first, and one after Redis lost its scripts sends it whole): `None` when it is allowed,
    /// else the wait. Bounded by `timeout`.
    pub(crate) async fn rate_limit(
        &self,
        limit: &str,
        key: u128,
        (interval, tolerance): (Duration, Duration),
        timeout: Duration,
    ) -> Result<Option<Duration>, RedisError> {
        use ::redis::{ErrorKind, ServerErrorKind};
        let key = self.inner.keys.rate(limit, key);
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let (interval, tolerance) = (micros(interval).max(1), micros(tolerance));
        let shown = &self.inner.shown;
        let failed =
            |e: ::redis::RedisError| RedisError::new(format!("Redis at {shown} failed to count a call: {e}"));
        let check = async {
            let mut connection = self.inner.commands.clone();
            let sha = match self.inner.gcra.get() {
                Some(sha) => sha.clone(),
                None => {
                    let sha: String = cmd("SCRIPT")
                        .arg("LOAD")
                        .arg(GCRA)
                        .query_async(&mut connection)
                        .await
                        .map_err(failed)?;
                    self.inner.gcra.get_or_init(|| sha).clone()
                }
            };
            let call = |command: &str, script: &str| {
                cmd(command).arg(script).arg(1).arg(&key).arg(interval).arg(tolerance).clone()
            };
            let wait = match call("EVALSHA", &sha).query_async::<u64>(&mut connection).await {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    // Redis restarted or flushed its scripts: EVAL runs it and loads it again.
                    call("EVAL", GCRA).query_async::<u64>(&mut connection).await.map_err(failed)?
                }
                other => other.map_err(failed)?,
            };
            Ok((wait > 0).then(|| Duration::from_micros(wait)))
        };
        match tokio::time::timeout(timeout, check).await {
            Ok(outcome) => outcome,
            Err(_) => {
                Err(RedisError::new(format!("Redis at {shown} did not count a call within {timeout:?}")))
            }
        }
    }
}

impl RedisBuilder {
    /// The prefix of every key and channel (default `mcp-tools`): the same for the instances
    /// of one service, another for each service sharing the Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long a command, or a connection attempt, may take before it fails (default 2 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long an instance's lease lasts without renewal (default 10 s; renewed every third
    /// of it): a task whose instance stopped reads as failed at most this long after the
    /// instance's last renewal.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// Keeps no ended task longer than `ttl` after its creation, whatever its own time to live
    /// (default one hour, as [`MemoryTaskStore`](crate::MemoryTaskStore)); a running task is
    /// kept at least this long after its last change.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// Connects: checks Redis answers, takes this instance's lease and subscribes to the bus,
    /// then renews the lease and keeps the subscription (subscribing again after a loss) in
    /// the background, on the current Tokio runtime, until the last clone of the [`Redis`] is
    /// dropped. Fails, naming the URL, when Redis cannot be reached in time.
    pub async fn connect(self) -> Result<Redis, RedisError> {
        let shown = redacted(&self.url);
        let unreachable =
            |e: &dyn fmt::Display| RedisError::new(format!("cannot connect to Redis at {shown}: {e}"));
        let client = Client::open(self.url.as_str())
            .map_err(|e| RedisError::new(format!("invalid Redis URL {shown}: {e}")))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let commands = match tokio::time::timeout(
            self.timeout * 2,
            ConnectionManager::new_with_config(client.clone(), config),
        )
        .await
        {
            Ok(Ok(commands)) => commands,
            Ok(Err(e)) => return Err(unreachable(&e)),
            Err(_) => return Err(unreachable(&format_args!("no connection within {:?}", self.timeout * 2))),
        };
        let keys = Keys { prefix: self.prefix };
        let instance = new_instance_id();
        let lease = keys.lease(&instance);
        run::<()>(&commands, &shown, self.timeout, "take the instance's lease", &renewal(&lease, self.lease))
            .await
            .map_err(|e| unreachable(&e))?;
        let subscription =
            subscribe(&client, &keys.bus(), self.timeout).await.map_err(|e| unreachable(&e))?;
        let stop = CancellationToken::new();
        let (heard, _) = broadcast::channel(256);
        tokio::spawn(renew_lease(
            commands.clone(),
            shown.clone(),
            self.timeout,
            lease,
            self.lease,
            stop.clone(),
        ));
        tokio::spawn(listen(
            Listener {
                client,
                channel: keys.bus(),
                instance: instance.clone(),
                shown: shown.clone(),
                timeout: self.timeout,
                heard: heard.clone(),
            },
            subscription,
            stop.clone(),
        ));
        tracing::info!(redis = %shown, %instance, "tasks are kept in Redis");
        Ok(Redis {
            inner: Arc::new(Inner {
                shown,
                commands,
                keys,
                instance,
                timeout: self.timeout,
                lease: self.lease,
                max_ttl: self.max_ttl,
                #[cfg(feature = "rate-limit")]
                gcra: std::sync::OnceLock::new(),
                heard,
                _stop: stop.drop_guard(),
            }),
        })
    }
}

impl TaskStore for Redis {
    fn save(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move { Ok(self.save_task(task).await?) })
    }

    fn load<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { Ok(self.load_task(task_id).await?) })
    }
}

/// 2025-11-25 sessions: one JSON record under `PREFIX:session:ID`, living the idle timeout from
/// its last use.
#[cfg(feature = "http")]
impl SessionStore for Redis {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let value = serde_json::to_string(record).expect("JSON serializes");
            let key = self.inner.keys.session(id);
            let save = cmd("SET").arg(&key).arg(value).arg("PX").arg(millis(idle)).clone();
            Ok(self.run::<()>("save a session", &save).await?)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, SessionStoreError>> {
        Box::pin(async move {
            let key = self.inner.keys.session(id);
            // Read and renewed in one round trip (GETEX: Redis 6.2 and later).
            let read = cmd("GETEX").arg(&key).arg("PX").arg(millis(idle)).clone();
            let Some(raw) = self.run::<Option<String>>("read a session", &read).await? else {
                return Ok(None);
            };
            let record = serde_json::from_str(&raw).map_err(|e| {
                RedisError::new(format!("session `{key}` in Redis is not a session record: {e}"))
            })?;
            Ok(Some(record))
        })
    }

    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            let touch = cmd("PEXPIRE").arg(self.inner.keys.session(id)).arg(millis(idle)).clone();
            // 1 when the key exists (and is renewed), 0 when it does not.
            Ok(self.run::<i64>("renew a session", &touch).await? == 1)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            self.run::<i64>("end a session", cmd("DEL").arg(self.inner.keys.session(id))).await?;
            Ok(())
        })
    }

    /// A Redis stream per resumable stream (`PREFIX:sse:SESSION:STREAM`), its entries numbered
    /// `0-N` for event `N - 1` (Redis refuses `0-0`; event 0 is the priming event, kept as the
    /// start mark, field `start`, so that the stream exists from the moment its client can name
    /// it; an event: field `data`, the message; the end: field `end`), trimmed to about
    /// [`EVENTS_PER_STREAM`] entries, living `ttl` from the last append: one pipelined round
    /// trip per batch.
    fn append_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        events: &'a [(u64, Arc<str>)],
        end: Option<u64>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let key = self.inner.keys.events(session, stream);
            let mut pipe = ::redis::pipe();
            let add = |pipe: &mut ::redis::Pipeline, seq: u64| {
                pipe.cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(EVENTS_PER_STREAM)
                    .arg(format!("0-{}", seq + 1));
            };
            for (seq, data) in events {
                add(&mut pipe, *seq);
                pipe.arg("data").arg(data.as_bytes()).ignore();
            }
            if let Some(seq) = end {
                add(&mut pipe, seq);
                pipe.arg("end").arg(1).ignore();
            }
            pipe.cmd("PEXPIRE").arg(&key).arg(millis(ttl)).ignore();
            Ok(self.run_pipe::<()>("keep a stream's events", &pipe).await?)
        })
    }

    /// The start mark (entry `0-1`: field `start`, this instance's name; field `request`, the
    /// request's id as JSON), and the time to live: one pipelined round trip.
    fn open_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        request: Option<&'a str>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let key = self.inner.keys.events(session, stream);
            let mut pipe = ::redis::pipe();
            pipe.cmd("XADD").arg(&key).arg("0-1").arg("start").arg(&self.inner.instance);
            if let Some(request) = request {
                pipe.arg("request").arg(request);
            }
            pipe.ignore();
            pipe.cmd("PEXPIRE").arg(&key).arg(millis(ttl)).ignore();
            Ok(self.run_pipe::<()>("open a stream's copy", &pipe).await?)
        })
    }

    /// One `EXISTS` of the instance's lease (none for this instance's own).
    fn runner_alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            if instance == self.inner.instance {
                return Ok(true);
            }
            let lease = self.inner.keys.lease(instance);
            Ok(self.run::<bool>("read an instance's lease", cmd("EXISTS").arg(&lease)).await?)
        })
    }

    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<StoredEvents>, SessionStoreError>> {
        Box::pin(async move {
            let key = self.inner.keys.events(session, stream);
            let mut pipe = ::redis::pipe();
            pipe.cmd("EXISTS").arg(&key);
            // Exclusive start (`(`): Redis 6.2 and later.
            pipe.cmd("XRANGE")
                .arg(&key)
                .arg(format!("(0-{}", after + 1))
                .arg("+")
                .arg("COUNT")
                .arg(2 * EVENTS_PER_STREAM);
            // The start mark: who writes the stream.
            pipe.cmd("XRANGE").arg(&key).arg("0-1").arg("0-1");
            type Entries = Vec<(String, Vec<::redis::Value>)>;
            let (exists, entries, start): (bool, Entries, Entries) =
                self.run_pipe("read a stream's events", &pipe).await?;
            if !exists {
                return Ok(None);
            }
            let mut read = StoredEvents::default();
            if let Some((_, fields)) = start.first() {
                let field = |name: &[u8]| {
                    fields.chunks_exact(2).find(|f| is_bulk(&f[0], name)).and_then(|f| match &f[1] {
                        ::redis::Value::BulkString(value) => {
                            Some(String::from_utf8_lossy(value).into_owned())
                        }
                        _ => None,
                    })
                };
                if let Some(instance) = field(b"start") {
                    read.runner = Some(Runner { instance, request: field(b"request") });
                }
            }
            for (id, fields) in entries {
                let Some(seq) = id.strip_prefix("0-").and_then(|n| n.parse::<u64>().ok()?.checked_sub(1))
                else {
                    continue;
                };
                match fields.as_slice() {
                    [name, ::redis::Value::BulkString(data)] if is_bulk(name, b"data") => {
                        let data = String::from_utf8_lossy(data);
                        read.events.push((seq, Arc::from(data.as_ref())));
                    }
                    [name, _] if is_bulk(name, b"end") => read.ended = true,
                    _ => {}
                }
            }
            Ok(Some(read))
        })
    }
}

/// Whether a Redis value is the bulk string `text`.
#[cfg(feature = "http")]
fn is_bulk(value: &::redis::Value, text: &[u8]) -> bool {
    matches!(value, ::redis::Value::BulkString(bytes) if bytes == text)
}

/// The events kept in Redis per resumable stream (about: trimmed with `MAXLEN ~`), as an
/// instance keeps in memory.
#[cfg(feature = "http")]
const EVENTS_PER_STREAM: usize = 1024;

/// What travels on the bus: the message and the instance that sent it.
#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    message: BusMessage,
}

impl Bus for Redis {
    fn publish(&self, message: BusMessage) -> BoxFuture<'_, Result<(), BusError>> {
        Box::pin(async move {
            let envelope = Envelope { from: self.inner.instance.clone(), message };
            let text = serde_json::to_string(&envelope).expect("JSON serializes");
            self.run::<i64>("publish on the bus", cmd("PUBLISH").arg(self.inner.keys.bus()).arg(text))
                .await?;
            Ok(())
        })
    }

    fn subscribe(&self) -> BoxStream<'static, BusMessage> {
        let heard = self.inner.heard.subscribe();
        Box::pin(futures_util::stream::unfold(heard, |mut heard| async move {
            loop {
                match heard.recv().await {
                    Ok(message) => return Some((message, heard)),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a listener of the bus fell behind and missed messages");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }))
    }
}

/// Runs `command` on `commands`, bounded by `timeout`; errors name the Redis and what failed.
async fn run<T: FromRedisValue>(
    commands: &ConnectionManager,
    shown: &str,
    timeout: Duration,
    what: &str,
    command: &Cmd,
) -> Result<T, RedisError> {
    let mut connection = commands.clone();
    match tokio::time::timeout(timeout, command.query_async::<T>(&mut connection)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(RedisError::new(format!("Redis at {shown} failed to {what}: {e}"))),
        Err(_) => Err(RedisError::new(format!("Redis at {shown} did not {what} within {timeout:?}"))),
    }
}

/// The command that takes or renews a lease.
fn renewal(key: &str, lease: Duration) -> Cmd {
    cmd("SET").arg(key).arg(1).arg("PX").arg(millis(lease)).clone()
}

/// Renews this instance's lease every third of it, until `stop`; then gives it up, so that the
/// tasks it ran (if any still ran) read as failed at once.
async fn renew_lease(
    commands: ConnectionManager,
    shown: String,
    timeout: Duration,
    key: String,
    lease: Duration,
    stop: CancellationToken,
) {
    let mut failing = false;
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(lease / 3) => {}
        }
        match run::<()>(&commands, &shown, timeout, "renew the instance's lease", &renewal(&key, lease)).await
        {
            Ok(()) if failing => {
                failing = false;
                tracing::info!(redis = %shown, "the instance's lease is renewed again");
            }
            Ok(()) => {}
            Err(e) if !failing => {
                failing = true;
                tracing::error!(error = %e, "cannot renew the instance's lease: other instances will report its tasks failed if this lasts");
            }
            Err(_) => {}
        }
    }
    let _ = run::<()>(&commands, &shown, timeout, "give the lease up", cmd("DEL").arg(&key)).await;
}

/// What the subscription needs to subscribe again and deliver what it hears.
struct Listener {
    client: Client,
    channel: String,
    instance: String,
    shown: String,
    timeout: Duration,
    heard: broadcast::Sender<BusMessage>,
}

/// A connection subscribed to `channel`, within `timeout`.
async fn subscribe(client: &Client, channel: &str, timeout: Duration) -> Result<PubSub, String> {
    let connect = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok::<_, ::redis::RedisError>(pubsub)
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(pubsub)) => Ok(pubsub),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no subscription within {timeout:?}")),
    }
}

/// Hears the bus until `stop`: delivers the other instances' messages, checks the connection
/// with a `PING` every few seconds, and subscribes again after a loss, with back-off.
async fn listen(listener: Listener, first: PubSub, stop: CancellationToken) {
    let mut subscription = Some(first);
    let mut pause = RESUBSCRIBE.0;
    loop {
        let pubsub = match subscription.take() {
            Some(pubsub) => pubsub,
            None => match subscribe(&listener.client, &listener.channel, listener.timeout).await {
                Ok(pubsub) => {
                    tracing::info!(redis = %listener.shown, "subscribed to the bus again");
                    pause = RESUBSCRIBE.0;
                    pubsub
                }
                Err(e) => {
                    tracing::debug!(redis = %listener.shown, error = %e, "cannot subscribe to the bus yet");
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(RESUBSCRIBE.1);
                    continue;
                }
            },
        };
        let (mut sink, mut messages) = pubsub.split();
        let mut ping = tokio::time::interval(SUBSCRIPTION_PING);
        ping.tick().await;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                message = messages.next() => match message {
                    Some(message) => listener.deliver(message.get_payload_bytes()),
                    None => break,
                },
                _ = ping.tick() => {
                    let answered = tokio::time::timeout(listener.timeout, sink.ping::<::redis::Value>()).await;
                    if !matches!(answered, Ok(Ok(_))) {
                        break;
                    }
                }
            }
        }
        tracing::warn!(redis = %listener.shown, "lost the bus's subscription; subscribing again");
    }
}

impl Listener {
    fn deliver(&self, payload: &[u8]) {
        match serde_json::from_slice::<Envelope>(payload) {
            Ok(envelope) if envelope.from == self.instance => {}
            Ok(envelope) => {
                let _ = self.heard.send(envelope.message);
            }
            // A message of a newer version, or not ours: ignored.
            Err(e) => tracing::debug!(error = %e, "a message on the bus was not understood"),
        }
    }
}

/// A task record as kept in Redis: the record, and the instance running it.
#[derive(Serialize, Deserialize)]
struct Stored {
    task_id: String,
    status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status_message: Option<String>,
    created_at_ms: u64,
    last_updated_at_ms: u64,
    #[serde(default)]
    ttl_ms: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    input_requests: Map<String, Value>,
    #[serde(default)]
    owner: Option<String>,
    instance: String,
}

impl Stored {
    fn of(task: &TaskRecord, instance: &str) -> Stored {
        Stored {
            task_id: task.task_id.clone(),
            status: task.status,
            status_message: task.status_message.clone(),
            created_at_ms: since_epoch(task.created_at),
            last_updated_at_ms: since_epoch(task.last_updated_at),
            ttl_ms: task.ttl.map(millis),
            poll_interval_ms: task.poll_interval.map(millis),
            result: task.result.clone(),
            error: task.error.clone(),
            input_requests: task.input_requests.clone(),
            owner: task.owner.clone(),
            instance: instance.to_owned(),
        }
    }

    fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON serializes")
    }

    fn into_record(self) -> (TaskRecord, String) {
        let mut task = TaskRecord::new(
            self.task_id,
            self.ttl_ms.map(Duration::from_millis),
            self.poll_interval_ms.map(Duration::from_millis),
        )
        .with_owner(self.owner);
        task.status = self.status;
        task.status_message = self.status_message;
        task.created_at = UNIX_EPOCH + Duration::from_millis(self.created_at_ms);
        task.last_updated_at = UNIX_EPOCH + Duration::from_millis(self.last_updated_at_ms);
        task.result = self.result;
        task.error = self.error;
        task.input_requests = self.input_requests;
        (task, self.instance)
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn since_epoch(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A random instance id: 64 bits, in hex.
fn new_instance_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `url` with its password (if any) hidden.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}
