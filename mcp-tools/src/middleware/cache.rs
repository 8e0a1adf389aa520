//! [`ResultCache`]: an opt-in cache of the results of read-only, idempotent tools, on the
//! [`quick_cache`] crate.
//!
//! ```rust,standalone_crate
//! use std::time::Duration;
//! use mcp_tools::middleware::ResultCache;
//! use mcp_tools::{tool, Server};
//!
//! /// Today's exchange rate between two currencies.
//! #[tool(annotations(read_only, idempotent))]
//! async fn rate(from: String, to: String) -> String {
//!     format!("1 {from} = 0.92 {to}")
//! }
//!
//! let server = Server::builder()
//!     // Answers of `rate` (and of every read-only, idempotent tool) kept for 5 minutes, in at
//!     // most 16 MiB; other tools' calls pass through.
//!     .layer(ResultCache::new().time_to_live(Duration::from_secs(300)).max_bytes(16 << 20))
//!     .build()
//!     .unwrap();
//! ```

use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quick_cache::sync::{Cache, DefaultLifecycle, EntryAction, EntryResult};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tower::{Layer, ServiceExt as _};

use super::layered::{Around, Layered, ToolFuture};
use crate::dispatch::pipeline::{ToolCall, ToolService};
use crate::model::result::ToolResult;

/// Caches the results of the tools annotated both read-only and idempotent
/// (`#[tool(annotations(read_only, idempotent))]`: `readOnlyHint` and `idempotentHint` true);
/// the calls of every other tool pass through untouched. Opt-in: a server caches nothing
/// unless it adds this layer.
///
/// * **Key**: the tool's name, its arguments in a canonical form (object keys sorted, so
///   `{"a":1,"b":2}` and `{"b":2,"a":1}` are one call; numbers as the client wrote them, so `1`
///   and `1.0` are two), and the caller ([`Context::caller_id`](crate::Context::caller_id)):
///   one caller is never served another's result. Kept as a SHA-256 digest of those.
/// * **What is kept**: a successful result, exactly as the tool answered it (the era's shaping
///   of a result happens after the layers, so a cached answer reads in each era as a fresh
///   one would). Never an error (`isError: true`), nor the result of a call cancelled
///   meanwhile.
/// * **For how long**: [`time_to_live`](Self::time_to_live) after the tool answered (default
///   60 s); expired entries are served never, and swept away at least every time to live.
/// * **Memory**: at most [`max_bytes`](Self::max_bytes) (default 64 MiB) counting each result
///   by its size as JSON, plus 256 bytes of bookkeeping per entry; when full, the entries
///   least worth keeping are evicted (quick_cache's CLOCK-Pro). A result larger than
///   [`max_entry_bytes`](Self::max_entry_bytes) (default 1 MiB) is not kept.
/// * **Concurrent identical calls** (same tool, arguments and caller) are coalesced: while one
///   runs, the others wait for its result instead of running the tool again. If it fails (or is
///   cancelled), one of the waiting calls runs the tool in its turn.
///
/// The annotations are a promise: a tool whose answer depends on more than its arguments and
/// its caller (the time, the client's answers to its questions, data that changes) is served
/// stale answers for up to the time to live. Put the layer around the tools that may be
/// (`tool_layer`), or do not annotate the others idempotent.
///
/// Clones of a `ResultCache` share their entries (configure it first, then clone).
#[derive(Clone)]
pub struct ResultCache {
    config: Config,
    store: Arc<Store>,
}

#[derive(Clone, Copy, Debug)]
struct Config {
    time_to_live: Duration,
    max_bytes: u64,
    max_entry_bytes: u64,
}

/// The bookkeeping counted for each entry beside its result's size: its key, expiry, the
/// cache's own structures.
const ENTRY_OVERHEAD: u64 = 256;

/// A cache key: the digest of a call's tool, caller and canonical arguments.
type Key = [u8; 32];

/// One cached result.
struct Entry {
    result: ToolResult,
    expires: Instant,
    /// Its size as JSON, plus [`ENTRY_OVERHEAD`].
    weight: u64,
}

#[derive(Clone, Copy)]
struct ByWeight;

impl Weighter<Key, Arc<Entry>> for ByWeight {
    fn weight(&self, _: &Key, entry: &Arc<Entry>) -> u64 {
        entry.weight
    }
}

type Entries = Cache<Key, Arc<Entry>, ByWeight, DefaultHashBuilder, DefaultLifecycle<Key, Arc<Entry>>>;

/// The entries, and when expired ones were last swept away.
struct Store {
    entries: Entries,
    config: Config,
    /// `config.max_entry_bytes`, at most half of `max_bytes`.
    max_entry_bytes: u64,
    epoch: Instant,
    last_sweep_ms: AtomicU64,
}

impl Default for ResultCache {
    fn default() -> Self {
        ResultCache::new()
    }
}

impl ResultCache {
    /// A cache keeping results 60 s, in at most 64 MiB, none larger than 1 MiB.
    pub fn new() -> Self {
        ResultCache::build(Config {
            time_to_live: Duration::from_secs(60),
            max_bytes: 64 << 20,
            max_entry_bytes: 1 << 20,
        })
    }

    /// How long a result is served after the tool answered it (default 60 s). Empties the
    /// cache.
    pub fn time_to_live(self, time_to_live: Duration) -> Self {
        ResultCache::build(Config { time_to_live, ..self.config })
    }

    /// The most memory the cached results take, counted as their size as JSON plus 256 bytes
    /// per entry (default 64 MiB; at least 4 KiB). Empties the cache.
    pub fn max_bytes(self, bytes: u64) -> Self {
        ResultCache::build(Config { max_bytes: bytes.max(4096), ..self.config })
    }

    /// The largest result kept, counted as for [`max_bytes`](Self::max_bytes) (default 1 MiB;
    /// at most half of `max_bytes`): a larger one is answered but not cached. Empties the
    /// cache.
    pub fn max_entry_bytes(self, bytes: u64) -> Self {
        ResultCache::build(Config { max_entry_bytes: bytes, ..self.config })
    }

    /// How many results are cached now (expired ones included until they are swept away).
    pub fn entries(&self) -> usize {
        self.store.entries.len()
    }

    /// How much memory they take, counted as for [`max_bytes`](Self::max_bytes).
    pub fn bytes(&self) -> u64 {
        self.store.entries.weight()
    }

    /// Forgets every cached result.
    pub fn clear(&self) {
        self.store.entries.clear();
    }

    fn build(config: Config) -> Self {
        let max_entry_bytes = config.max_entry_bytes.min(config.max_bytes / 2);
        // Each shard holds an equal part of the weight, and takes nothing over 97% of its part
        // (quick_cache): so many shards (a power of two, at most 16) that a shard holds at
        // least twice the largest entry.
        let shards = (config.max_bytes / (2 * max_entry_bytes).max(1)).clamp(1, 16);
        let shards = 1usize << shards.ilog2();
        let options = OptionsBuilder::new()
            .shards(shards)
            .estimated_items_capacity((config.max_bytes / 4096).max(64) as usize)
            .weight_capacity(config.max_bytes)
            .build()
            .expect("every option is set");
        let entries = Cache::with_options(
            options,
            ByWeight,
            DefaultHashBuilder::default(),
            DefaultLifecycle::default(),
        );
        let store = Store {
            entries,
            config,
            max_entry_bytes,
            epoch: Instant::now(),
            last_sweep_ms: AtomicU64::new(0),
        };
        ResultCache { config, store: Arc::new(store) }
    }
}

impl fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultCache")
            .field("time_to_live", &self.config.time_to_live)
            .field("max_bytes", &self.config.max_bytes)
            .field("max_entry_bytes", &self.store.max_entry_bytes)
            .field("entries", &self.entries())
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl Store {
    /// Removes the expired entries, at most once per time to live (and per second).
    fn sweep_if_due(&self, now: Instant) {
        let every = self.config.time_to_live.max(Duration::from_secs(1));
        let now_ms = now.saturating_duration_since(self.epoch).as_millis() as u64;
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if Duration::from_millis(now_ms.saturating_sub(last)) < every {
            return;
        }
        if self.last_sweep_ms.compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            self.entries.retain(|_, entry| entry.expires > now);
        }
    }
}

/// Whether calls of this tool are cached: annotated read-only and idempotent.
fn cacheable(call: &ToolCall) -> bool {
    let annotations = call.annotations();
    annotations.read_only_hint == Some(true) && annotations.idempotent_hint == Some(true)
}

/// The key of a call: SHA-256 of its tool's name, its caller and its canonical arguments,
/// each of the first two prefixed by its length.
fn key(call: &ToolCall) -> Key {
    let mut hash = Sha256::new();
    for part in [call.name(), call.context().caller_id()] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    let arguments: Value = serde_json::from_str(call.arguments().get()).unwrap_or(Value::Null);
    canonical(&arguments, &mut HashWriter(&mut hash)).expect("hashing does not fail");
    hash.finalize().into()
}

/// Writes `value` as compact JSON with every object's keys sorted.
fn canonical(value: &Value, out: &mut impl io::Write) -> io::Result<()> {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.write_all(b"{")?;
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                canonical(value, out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                canonical(item, out)?;
            }
            out.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(out, scalar)?),
    }
}

/// Feeds what is written into a hash.
struct HashWriter<'a>(&'a mut Sha256);

impl io::Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Counts what is written.
struct Counter(u64);

impl io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A result's weight: its size as JSON, plus the bookkeeping.
fn weight(result: &ToolResult) -> u64 {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, result) {
        Ok(()) => counter.0 + ENTRY_OVERHEAD,
        Err(_) => u64::MAX,
    }
}

impl Layer<ToolService> for ResultCache {
    type Service = ResultCacheService;

    fn layer(&self, inner: ToolService) -> ResultCacheService {
        Layered::new(inner, self.clone())
    }
}

/// The service of a [`ResultCache`].
pub type ResultCacheService = Layered<ResultCache>;

impl Around for ResultCache {
    fn around(&self, inner: ToolService, call: ToolCall) -> ToolFuture {
        if !cacheable(&call) {
            return Box::pin(inner.oneshot(call));
        }
        let key = key(&call);
        let store = self.store.clone();
        Box::pin(async move {
            let now = Instant::now();
            store.sweep_if_due(now);
            // The usual hit: a shared lock.
            if let Some(entry) = store.entries.get(&key).filter(|entry| entry.expires > now) {
                return Ok(entry.result.clone());
            }
            // Else the entry's place: a hit after all, or the right to fill it (waiting while
            // an identical call fills it).
            let found = store
                .entries
                .entry_async(&key, |_, entry| {
                    if entry.expires > Instant::now() {
                        EntryAction::Retain(entry.clone())
                    } else {
                        EntryAction::ReplaceWithGuard
                    }
                })
                .await;
            let guard = match found {
                EntryResult::Retained(entry) => return Ok(entry.result.clone()),
                EntryResult::Vacant(guard) | EntryResult::Replaced(guard, _) => Some(guard),
                // Neither is asked for (no `Remove`, no timeout): run the tool, keep nothing.
                EntryResult::Removed(..) | EntryResult::Timeout => None,
            };
            let context = call.context().clone();
            let result = inner.oneshot(call).await?;
            if let Some(guard) = guard
                && !result.is_error()
                && !context.is_cancelled()
            {
                let weight = weight(&result);
                if weight <= store.max_entry_bytes {
                    let expires = Instant::now() + store.config.time_to_live;
                    let _ = guard.insert(Arc::new(Entry { result: result.clone(), expires, weight }));
                }
            }
            Ok(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canonical_text(value: Value) -> String {
        let mut out = Vec::new();
        canonical(&value, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_canonical_form_sorts_keys_at_every_depth() {
        assert_eq!(
            canonical_text(json!({"b": [{"y": 1, "x": "é\""}], "a": null, "c": {"z": true, "a": 1.5}})),
            r#"{"a":null,"b":[{"x":"é\"","y":1}],"c":{"a":1.5,"z":true}}"#
        );
        assert_eq!(canonical_text(json!({"b": 2, "a": 1})), canonical_text(json!({"a": 1, "b": 2})));
        assert_ne!(canonical_text(json!({"a": 1})), canonical_text(json!({"a": 1.0})));
    }

    #[test]
    fn a_result_weighs_its_json_and_the_bookkeeping() {
        let result = ToolResult::new().text("hello");
        let json = serde_json::to_string(&result).unwrap();
        assert_eq!(weight(&result), json.len() as u64 + ENTRY_OVERHEAD);
    }

    #[test]
    fn the_largest_entry_is_at_most_half_the_cache() {
        let cache = ResultCache::new().max_bytes(10_000).max_entry_bytes(1 << 20);
        assert_eq!(cache.store.max_entry_bytes, 5_000);
        // The order of the settings does not matter.
        let cache = ResultCache::new().max_entry_bytes(100 << 20).max_bytes(1 << 30);
        assert_eq!(cache.store.max_entry_bytes, 100 << 20);
        assert_eq!(ResultCache::new().max_bytes(1).config.max_bytes, 4096);
    }
}
