//! [`RateLimit`]: so many calls per period, per caller (or per caller and tool), on the
//! [`governor`] crate's GCRA.
//!
//! ```rust,standalone_crate
//! use std::time::Duration;
//! use mcp_tools::middleware::RateLimit;
//! use mcp_tools::{tool, Server};
//!
//! /// Search the web (costly: each call is paid for).
//! #[tool(annotations(read_only, open_world = true))]
//! async fn search(query: String) -> String {
//!     format!("results for {query}")
//! }
//!
//! let server = Server::builder()
//!     // Every caller: 60 calls a minute over all tools, at most 10 in a row.
//!     .layer(RateLimit::per_minute(60).burst(10))
//!     // And `search` alone: 5 calls every 10 seconds per caller.
//!     .tool_layer("search", RateLimit::new(5, Duration::from_secs(10)))
//!     .build()
//!     .unwrap();
//! ```

use std::collections::HashMap;
use std::fmt;
use std::hash::RandomState;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use governor::clock::{Clock as _, MonotonicClock};
use governor::nanos::Nanos;
use governor::state::StateStore;
use governor::state::keyed::ShrinkableKeyedStateStore;
use governor::{Quota, RateLimiter};
use sha2::{Digest as _, Sha256};
use tower::{Layer, ServiceExt as _};

use super::layered::{Around, Layered, ToolFuture};
use crate::dispatch::pipeline::{ToolCall, ToolService};
use crate::model::result::ToolResult;

/// Limits how often each caller may call: `calls` per `period`, in bursts of up to
/// [`burst`](Self::burst) calls (by default `calls`: the whole period's allowance at once). A
/// call over the limit is not run: it is answered at once with a tool error (`isError: true`)
/// saying the limit and in how many seconds to retry, and with the wait in milliseconds in the
/// result's `_meta` under [`RETRY_AFTER_META`](Self::RETRY_AFTER_META)
/// (`"io.mcp-tools/retryAfterMs"`), for programs. A refused call does not count.
///
/// The algorithm is GCRA (a leaky bucket, [`governor`]): calls are allowed one every
/// `period / calls`, with up to `burst` saved up; so `RateLimit::per_minute(60).burst(10)` allows
/// 10 calls at once, then one a second.
///
/// **Who is a caller** is [`Context::caller_id`](crate::Context::caller_id): the verified
/// identity's subject (or client) over HTTP with authorization; else the connection (stdio, in
/// process, a 2025-11-25 HTTP session); else the client's network address (stateless HTTP
/// without authorization: everyone behind one address shares a limit). With
/// [`per_tool`](Self::per_tool), each caller has a limit for each tool.
///
/// **Which calls count**: those that go through the layer: every call with
/// [`ServerBuilder::layer`](crate::ServerBuilder::layer), one tool's with
/// [`ServerBuilder::tool_layer`](crate::ServerBuilder::tool_layer). Clones of a `RateLimit`
/// share their counts (configure it first, then clone); two `RateLimit`s count apart. Each
/// request counts: a 2026-07-28 call retried with the answers to its `input_required` questions
/// counts once per round.
///
/// **Memory is bounded** however many callers come: the limiter remembers at most
/// [`max_keys`](Self::max_keys) callers (default 100,000; a few dozen bytes each: a caller is
/// remembered by a 128-bit digest of its id, never the id itself). A caller whose allowance is
/// whole again is forgotten (it is then no different from a new one): a call sweeps the table
/// of them when the last sweep is a minute old, or, while the table is full, `period / calls`
/// old (but no more often than every 100 ms, and at least every second). When the table is
/// still full of callers seen recently, new callers share one allowance, the overflow (a
/// warning is logged); the callers already in the table keep theirs.
///
/// **Several instances** (feature `redis` too): a `RateLimit` counts in its instance's memory,
/// so three instances behind a load balancer allow three times the limit. Made
/// [`shared`](Self::shared), it counts in Redis instead, one count for the whole service (see
/// there).
#[derive(Clone)]
pub struct RateLimit {
    config: Config,
    limiter: Arc<Limiter>,
    /// Where the counts are kept when they are shared by the instances of a service.
    #[cfg(feature = "redis")]
    shared: Option<Arc<SharedLimit>>,
}

/// How a [`RateLimit`] was configured.
#[derive(Clone, Copy, Debug)]
struct Config {
    calls: NonZeroU32,
    period: Duration,
    burst: Option<NonZeroU32>,
    per_tool: bool,
    max_keys: usize,
}

/// The callers a limiter remembers by default.
const DEFAULT_MAX_KEYS: usize = 100_000;

/// How often the table is swept of the callers it need not remember, when it is not full.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

impl RateLimit {
    /// The key of [`ToolResult::meta`] on a refused call's result: the wait before the next
    /// call can go through, in milliseconds (rounded up).
    pub const RETRY_AFTER_META: &'static str = "io.mcp-tools/retryAfterMs";

    /// At most `calls` (at least 1) per `period` (at least 1 ns) per caller.
    pub fn new(calls: u32, period: Duration) -> Self {
        let calls = NonZeroU32::new(calls).unwrap_or(NonZeroU32::MIN);
        let period = period.max(Duration::from_nanos(1));
        RateLimit::build(Config { calls, period, burst: None, per_tool: false, max_keys: DEFAULT_MAX_KEYS })
    }

    /// At most `calls` a second per caller.
    pub fn per_second(calls: u32) -> Self {
        RateLimit::new(calls, Duration::from_secs(1))
    }

    /// At most `calls` a minute per caller.
    pub fn per_minute(calls: u32) -> Self {
        RateLimit::new(calls, Duration::from_secs(60))
    }

    /// At most `calls` an hour per caller.
    pub fn per_hour(calls: u32) -> Self {
        RateLimit::new(calls, Duration::from_secs(3600))
    }

    /// At most `calls` (at least 1) in a row, after which calls are allowed at the limit's
    /// pace (default: the limit's `calls`). Starts the counts afresh.
    pub fn burst(self, calls: u32) -> Self {
        let burst = NonZeroU32::new(calls).unwrap_or(NonZeroU32::MIN);
        let config = Config { burst: Some(burst), ..self.config };
        self.rebuild(config)
    }

    /// Counts each caller's calls of each tool apart (default: a caller's calls of all the
    /// tools behind the layer count together). Starts the counts afresh.
    pub fn per_tool(self) -> Self {
        let config = Config { per_tool: true, ..self.config };
        self.rebuild(config)
    }

    /// Remembers at most `keys` (at least 1) callers, or caller and tool pairs with
    /// [`per_tool`](Self::per_tool) (default 100,000). Starts the counts afresh.
    pub fn max_keys(self, keys: usize) -> Self {
        let config = Config { max_keys: keys.max(1), ..self.config };
        self.rebuild(config)
    }

    /// How many callers (or caller and tool pairs) the limiter remembers now: at most
    /// [`max_keys`](Self::max_keys). A [`shared`](Self::shared) limit remembers none here (its
    /// counts are in Redis).
    pub fn keys(&self) -> usize {
        self.limiter.gcra.len()
    }

    /// The same limit configured anew (the counts start afresh), still shared if it was.
    fn rebuild(self, config: Config) -> Self {
        RateLimit {
            #[cfg(feature = "redis")]
            shared: self.shared,
            ..RateLimit::build(config)
        }
    }

    fn build(config: Config) -> Self {
        let burst = config.burst.unwrap_or(config.calls);
        let interval = (config.period / config.calls.get()).max(Duration::from_nanos(1));
        let quota = Quota::with_period(interval).expect("a positive interval").allow_burst(burst);
        let full = Arc::new(AtomicBool::new(false));
        let store = BoundedStore {
            table: Mutex::new(Table { states: HashMap::default(), overflow: None }),
            max_keys: config.max_keys,
            full: full.clone(),
            overflowed: AtomicBool::new(false),
        };
        let gcra = RateLimiter::new(quota, store, MonotonicClock);
        let limiter = Limiter {
            gcra,
            full,
            epoch: Instant::now(),
            last_sweep_ms: AtomicU64::new(0),
            full_sweep_every: interval.clamp(Duration::from_millis(100), Duration::from_secs(1)),
            description: describe(&config, burst),
            per_tool: config.per_tool,
            interval,
            burst,
        };
        RateLimit {
            config,
            limiter: Arc::new(limiter),
            #[cfg(feature = "redis")]
            shared: None,
        }
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("RateLimit");
        debug.field("limit", &self.limiter.description);
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            return debug.field("shared", shared).finish();
        }
        debug.field("max_keys", &self.config.max_keys).field("keys", &self.keys()).finish()
    }
}

/// The limit in words: `60 calls a minute per caller, in bursts of up to 10`.
fn describe(config: &Config, burst: NonZeroU32) -> String {
    let calls = config.calls.get();
    let noun = if calls == 1 { "call" } else { "calls" };
    let period = match config.period.as_secs() {
        1 if config.period.subsec_nanos() == 0 => "a second".to_owned(),
        60 if config.period.subsec_nanos() == 0 => "a minute".to_owned(),
        3600 if config.period.subsec_nanos() == 0 => "an hour".to_owned(),
        _ => format!("per {}", humantime::format_duration(config.period)),
    };
    let whom = if config.per_tool { "per caller and tool" } else { "per caller" };
    let mut text = format!("{calls} {noun} {period} {whom}");
    if burst != config.calls {
        text.push_str(&format!(", in bursts of up to {burst}"));
    }
    text
}

/// What the layer's services share: the limiter and its housekeeping.
struct Limiter {
    gcra: RateLimiter<u128, BoundedStore, MonotonicClock>,
    /// Set by the store when its table is full.
    full: Arc<AtomicBool>,
    /// The origin of `last_sweep_ms`.
    epoch: Instant,
    last_sweep_ms: AtomicU64,
    /// How often a full table is swept, at most.
    full_sweep_every: Duration,
    description: String,
    per_tool: bool,
    /// The time between calls at the limit's pace, and the calls allowed in a row (for a
    /// shared limit's GCRA in Redis).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    interval: Duration,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    burst: NonZeroU32,
}

impl Limiter {
    /// The key of a call: a digest of its caller's id (and tool), 128 bits (a collision, two
    /// callers sharing a limit, is as likely as guessing a random 128-bit number).
    fn key(&self, call: &ToolCall) -> u128 {
        let mut hash = Sha256::new();
        let caller = call.context().caller_id();
        hash.update((caller.len() as u64).to_le_bytes());
        hash.update(caller.as_bytes());
        if self.per_tool {
            hash.update(call.name().as_bytes());
        }
        let digest = hash.finalize();
        u128::from_le_bytes(digest[..16].try_into().expect("a SHA-256 digest has 32 bytes"))
    }

    /// Forgets the callers whose allowance is whole again: every [`SWEEP_EVERY`], or every
    /// `full_sweep_every` while the table is full. One thread sweeps; the others go on.
    fn sweep_if_due(&self) {
        let now = self.epoch.elapsed().as_millis() as u64;
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        let since = Duration::from_millis(now.saturating_sub(last));
        let full = self.full.load(Ordering::Relaxed);
        if since < SWEEP_EVERY && !(full && since >= self.full_sweep_every) {
            return;
        }
        if self.last_sweep_ms.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return;
        }
        self.gcra.retain_recent();
        if !full {
            self.gcra.shrink_to_fit();
        }
    }

    /// Counts a call of `key`: `Err` with the wait when it is over the limit.
    fn check(&self, key: u128) -> Result<(), Duration> {
        self.sweep_if_due();
        self.gcra.check_key(&key).map_err(|not_until| not_until.wait_time_from(self.gcra.clock().now()))
    }
}

/// The limiter's state: each remembered caller's GCRA state (its theoretical arrival time),
/// at most `max_keys` of them, and the overflow's, shared by the callers that found the table
/// full.
struct BoundedStore {
    table: Mutex<Table>,
    max_keys: usize,
    full: Arc<AtomicBool>,
    /// Whether the overflow was used since the last sweep (to warn once).
    overflowed: AtomicBool,
}

struct Table {
    states: HashMap<u128, Nanos, RandomState>,
    overflow: Option<Nanos>,
}

impl StateStore for BoundedStore {
    type Key = u128;

    fn measure_and_replace<T, F, E>(&self, key: &u128, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = table.states.get_mut(key) {
            let (outcome, next) = f(Some(*state))?;
            *state = next;
            return Ok(outcome);
        }
        if table.states.len() < self.max_keys {
            let (outcome, next) = f(None)?;
            table.states.insert(*key, next);
            self.full.store(table.states.len() >= self.max_keys, Ordering::Relaxed);
            return Ok(outcome);
        }
        if !self.overflowed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                max_keys = self.max_keys,
                "rate limit: the table of callers is full; new callers share one allowance until it is swept"
            );
        }
        let (outcome, next) = f(table.overflow)?;
        table.overflow = Some(next);
        Ok(outcome)
    }
}

impl ShrinkableKeyedStateStore<u128> for BoundedStore {
    fn retain_recent(&self, drop_below: Nanos) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.states.retain(|_, state| *state > drop_below);
        if table.overflow.is_some_and(|state| state <= drop_below) {
            table.overflow = None;
        }
        self.full.store(table.states.len() >= self.max_keys, Ordering::Relaxed);
        self.overflowed.store(false, Ordering::Relaxed);
    }

    fn shrink_to_fit(&self) {
        self.table.lock().unwrap_or_else(PoisonError::into_inner).states.shrink_to_fit();
    }

    fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(PoisonError::into_inner).states.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Layer<ToolService> for RateLimit {
    type Service = RateLimitService;

    fn layer(&self, inner: ToolService) -> RateLimitService {
        Layered::new(inner, self.clone())
    }
}

/// The service of a [`RateLimit`].
pub type RateLimitService = Layered<RateLimit>;

impl Around for RateLimit {
    fn around(&self, inner: ToolService, call: ToolCall) -> ToolFuture {
        let key = self.limiter.key(&call);
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            return shared.around(inner, call, key, self.limiter.clone());
        }
        match self.limiter.check(key) {
            Ok(()) => Box::pin(inner.oneshot(call)),
            Err(wait) => {
                let refusal = refusal(call.name(), &self.limiter.description, wait);
                Box::pin(async move { Ok(refusal) })
            }
        }
    }
}

/// What a [`shared`](RateLimit::shared) rate limit does with a call when Redis fails (cannot be
/// reached, or does not answer within the timeout): the call is never held longer than that.
#[cfg(feature = "redis")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoreFailure {
    /// The call is run, uncounted, and an error is logged (the first failure, then at most
    /// every 10 seconds while Redis fails; an info line when it answers again). The default:
    /// an outage of Redis does not become an outage of the service.
    #[default]
    Open,
    /// The call is refused as one over the limit is (a tool error, with
    /// [`RETRY_AFTER_META`](RateLimit::RETRY_AFTER_META)), saying the limit could not be
    /// checked and to retry in a second; the error is logged as with `Open`.
    Closed,
}

/// A rate limit counted in Redis: the limit's name, what to do when Redis fails, and how long to
/// wait for it.
#[cfg(feature = "redis")]
struct SharedLimit {
    redis: crate::store::redis::Redis,
    name: String,
    on_failure: StoreFailure,
    timeout: Duration,
    /// When a failure was last logged (milliseconds since `epoch`; 0: Redis answers).
    failing_since_log_ms: AtomicU64,
    epoch: Instant,
}

#[cfg(feature = "redis")]
impl fmt::Debug for SharedLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedLimit")
            .field("name", &self.name)
            .field("redis", &self.redis)
            .field("on_failure", &self.on_failure)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// How often a shared limit logs that Redis still fails.
#[cfg(feature = "redis")]
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(10);

#[cfg(feature = "redis")]
impl RateLimit {
    /// Counts in Redis, one count for every instance of the service (feature `redis`): a
    /// caller's calls spread over three instances are limited as if one served them all. The
    /// instances give the same limit the same `name` (two limits, say the server's and one
    /// tool's, two names; the keys are `PREFIX:rate:NAME:DIGEST`, under the
    /// [`prefix`](crate::store::RedisBuilder::prefix) of `redis`). The limit itself (calls,
    /// period, burst, per tool) must be configured alike on every instance.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_tools::Server;
    /// use mcp_tools::middleware::RateLimit;
    /// use mcp_tools::store::Redis;
    ///
    /// let redis = Redis::connect("redis://10.0.0.5:6379/").await?;
    /// let server = Server::builder()
    ///     .layer(RateLimit::per_minute(60).burst(10).shared(&redis, "calls"))
    ///     // Tasks, events and sessions shared too (the same `Redis`).
    ///     .redis(redis)
    ///     .build()?;
    /// # let _ = server; Ok(())
    /// # }
    /// ```
    ///
    /// Each call is one round trip to Redis: a Lua script (`EVALSHA`) doing GCRA atomically
    /// on Redis's clock (the instances' clocks do not matter), the same algorithm and the same
    /// answers as in memory: a refused call gets the same message and
    /// [`RETRY_AFTER_META`](Self::RETRY_AFTER_META). Memory in Redis is bounded: each caller's
    /// key (a 128-bit digest of its id, never the id) expires when its allowance is whole
    /// again, so at most the callers of the last `period` are kept;
    /// [`max_keys`](Self::max_keys) does not apply.
    ///
    /// When Redis fails, a call waits at most the [`store_timeout`](Self::store_timeout), then
    /// is run uncounted ([`StoreFailure::Open`], the default, an error logged) or refused
    /// ([`fail_closed`](Self::fail_closed)).
    ///
    /// The ready-made command line's `--redis URL` shares tasks, events and sessions only: a
    /// `RateLimit` is added in code, so share it with the `Redis` given to
    /// [`ServerBuilder::redis`](crate::ServerBuilder::redis), as above.
    pub fn shared(mut self, redis: &crate::store::redis::Redis, name: impl Into<String>) -> Self {
        let (on_failure, timeout) =
            self.shared.as_ref().map_or((StoreFailure::Open, redis.timeout()), |s| (s.on_failure, s.timeout));
        self.shared = Some(Arc::new(SharedLimit {
            redis: redis.clone(),
            name: name.into(),
            on_failure,
            timeout,
            failing_since_log_ms: AtomicU64::new(0),
            epoch: Instant::now(),
        }));
        self
    }

    /// What a [`shared`](Self::shared) limit does with a call when Redis fails (default
    /// [`StoreFailure::Open`]). Call it after `shared`; it does nothing to a limit counted in
    /// memory.
    pub fn on_store_failure(self, on_failure: StoreFailure) -> Self {
        self.reshare(|s| s.on_failure = on_failure)
    }

    /// A [`shared`](Self::shared) limit refuses calls while Redis fails
    /// (`on_store_failure(StoreFailure::Closed)`).
    pub fn fail_closed(self) -> Self {
        self.on_store_failure(StoreFailure::Closed)
    }

    /// A [`shared`](Self::shared) limit runs calls uncounted while Redis fails, logging an
    /// error (`on_store_failure(StoreFailure::Open)`, the default).
    pub fn fail_open(self) -> Self {
        self.on_store_failure(StoreFailure::Open)
    }

    /// How long a [`shared`](Self::shared) limit waits for Redis before it treats it as failed
    /// (default: the [`Redis`](crate::store::Redis)'s own
    /// [`timeout`](crate::store::RedisBuilder::timeout), 2 s unless set). Call it after
    /// `shared`.
    pub fn store_timeout(self, timeout: Duration) -> Self {
        self.reshare(|s| s.timeout = timeout.max(Duration::from_millis(1)))
    }

    fn reshare(mut self, change: impl FnOnce(&mut SharedLimit)) -> Self {
        if let Some(shared) = self.shared.take() {
            let mut shared = Arc::try_unwrap(shared).unwrap_or_else(|shared| SharedLimit {
                redis: shared.redis.clone(),
                name: shared.name.clone(),
                on_failure: shared.on_failure,
                timeout: shared.timeout,
                failing_since_log_ms: AtomicU64::new(0),
                epoch: shared.epoch,
            });
            change(&mut shared);
            self.shared = Some(Arc::new(shared));
        }
        self
    }
}

#[cfg(feature = "redis")]
impl SharedLimit {
    /// The call, counted in Redis: run, refused over the limit, or as configured when Redis
    /// fails.
    fn around(
        self: &Arc<Self>,
        inner: ToolService,
        call: ToolCall,
        key: u128,
        limiter: Arc<Limiter>,
    ) -> ToolFuture {
        let shared = self.clone();
        Box::pin(async move {
            let burst = limiter.burst.get();
            let pace = (limiter.interval, limiter.interval * (burst - 1));
            match shared.redis.rate_limit(&shared.name, key, pace, shared.timeout).await {
                Ok(None) => {
                    shared.answered();
                    inner.oneshot(call).await
                }
                Ok(Some(wait)) => {
                    shared.answered();
                    Ok(refusal(call.name(), &limiter.description, wait))
                }
                Err(e) => {
                    shared.failed(&e);
                    match shared.on_failure {
                        StoreFailure::Open => inner.oneshot(call).await,
                        StoreFailure::Closed => Ok(unchecked(call.name(), &limiter.description)),
                    }
                }
            }
        })
    }

    fn failed(&self, error: &crate::store::redis::RedisError) {
        let now = (self.epoch.elapsed().as_millis() as u64).max(1);
        let last = self.failing_since_log_ms.load(Ordering::Relaxed);
        let due = last == 0 || Duration::from_millis(now.saturating_sub(last)) >= FAILURE_LOG_EVERY;
        if due
            && self
                .failing_since_log_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let outcome = match self.on_failure {
                StoreFailure::Open => "calls run uncounted",
                StoreFailure::Closed => "calls are refused",
            };
            tracing::error!(limit = %self.name, error = %error, "a shared rate limit cannot count in Redis: {outcome}");
        }
    }

    fn answered(&self) {
        if self.failing_since_log_ms.load(Ordering::Relaxed) != 0
            && self.failing_since_log_ms.swap(0, Ordering::Relaxed) != 0
        {
            tracing::info!(limit = %self.name, "a shared rate limit counts in Redis again");
        }
    }
}

/// The answer to a call whose shared limit could not be checked, failing closed.
#[cfg(feature = "redis")]
fn unchecked(tool: &str, limit: &str) -> ToolResult {
    ToolResult::error(format!(
        "`{tool}` was not run: its rate limit ({limit}) could not be checked. Retry in 1.0 s."
    ))
    .meta(RateLimit::RETRY_AFTER_META, 1_000u64)
}

/// The answer to a call over the limit.
fn refusal(tool: &str, limit: &str, wait: Duration) -> ToolResult {
    let millis = wait.as_nanos().div_ceil(1_000_000).max(1);
    let retry = if millis < 10_000 {
        // Tenths of a second, rounded up: "0.3 s", "2.5 s".
        format!("{:.1} s", millis.div_ceil(100) as f64 / 10.0)
    } else {
        format!("{} s", millis.div_ceil(1000))
    };
    tracing::debug!(tool, retry_after_ms = millis as u64, "rate limit: call refused");
    ToolResult::error(format!("`{tool}` was not run: rate limit reached ({limit}). Retry in {retry}."))
        .meta(RateLimit::RETRY_AFTER_META, millis as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_the_limit_in_words() {
        let text = |limit: RateLimit| limit.limiter.description.clone();
        assert_eq!(text(RateLimit::per_minute(60)), "60 calls a minute per caller");
        assert_eq!(text(RateLimit::per_second(1).per_tool()), "1 call a second per caller and tool");
        assert_eq!(
            text(RateLimit::new(5, Duration::from_millis(250)).burst(2)),
            "5 calls per 250ms per caller, in bursts of up to 2"
        );
        assert_eq!(text(RateLimit::per_hour(0)), "1 call an hour per caller");
    }

    #[test]
    fn the_refusal_rounds_the_wait_up() {
        let result = refusal("t", "1 call a minute per caller", Duration::from_millis(2_401));
        assert!(result.is_error());
        assert_eq!(
            result.joined_text(),
            "`t` was not run: rate limit reached (1 call a minute per caller). Retry in 2.5 s."
        );
        assert_eq!(result.meta_map().unwrap()[RateLimit::RETRY_AFTER_META], 2_401);
        let long = refusal("t", "x", Duration::from_millis(59_000));
        assert!(long.joined_text().ends_with("Retry in 59 s."));
        let short = refusal("t", "x", Duration::from_nanos(10));
        assert!(short.joined_text().ends_with("Retry in 0.1 s."));
        assert_eq!(short.meta_map().unwrap()[RateLimit::RETRY_AFTER_META], 1);
    }

    #[test]
    fn a_full_table_sends_new_callers_to_the_overflow_and_keeps_the_others() {
        let limit = RateLimit::per_hour(2).max_keys(3);
        let limiter = &limit.limiter;
        for key in 1..=3u128 {
            assert!(limiter.check(key).is_ok());
        }
        assert_eq!(limit.keys(), 3);
        // Callers 4 and 5 share the overflow's allowance of 2.
        assert!(limiter.check(4).is_ok());
        assert!(limiter.check(5).is_ok());
        assert!(limiter.check(6).is_err());
        assert_eq!(limit.keys(), 3);
        // Caller 1 still has its own allowance: one call left.
        assert!(limiter.check(1).is_ok());
        assert!(limiter.check(1).is_err());
    }
}
