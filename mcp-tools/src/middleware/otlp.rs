//! The span processor and exporter of [`Telemetry::from_env`](super::Telemetry::from_env): OTLP
//! over HTTP (`http/protobuf`), the protobuf written straight from the SDK's span data, when each
//! span ends.
//!
//! opentelemetry-otlp's span exporter copies every span into opentelemetry-proto's owned structs,
//! encodes those with prost and frees them again: about 17,000 instructions a span, on a thread
//! that shares the server's cores (bench/middleware.md). This one writes the same message (OTLP
//! 1.x `ExportTraceServiceRequest`) from the spans as they are. Its tests decode what it writes
//! with opentelemetry-proto and compare it with opentelemetry-proto's own conversion of the same
//! spans. Metrics are still exported by opentelemetry-otlp.
//!
//! Its log lines (a failed export, dropped spans) have this module's target, which
//! [`Telemetry::layer`](super::Telemetry::layer) does not export.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{Event, Link, SpanContext, SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanProcessor};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

/// Where a signal (spans; for metrics, see [`Signal`]) goes and how: the OTLP exporter's
/// standard variables, as the OpenTelemetry specification and opentelemetry-otlp read them.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` +
    /// `/v1/traces`, else `http://localhost:4318/v1/traces`.
    pub endpoint: reqwest::Url,
    /// `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`: `k=v,k2=v2`, the
    /// values percent-decoded.
    pub headers: HeaderMap,
    /// `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds), else
    /// 10 s.
    pub timeout: Duration,
}

/// What is exported: each signal has variables of its own, read before the general ones.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Signal {
    Traces,
    Metrics,
}

impl Signal {
    /// Its variables (protocol, compression, endpoint, headers, timeout) and its endpoint's path.
    fn names(self) -> [&'static str; 6] {
        match self {
            Signal::Traces => [
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                "v1/traces",
            ],
            Signal::Metrics => [
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
                "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
                "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
                "v1/metrics",
            ],
        }
    }
}

impl Config {
    /// The spans' configuration, from this process's environment.
    pub fn from_env() -> Result<Config, String> {
        Self::from_env_for(Signal::Traces)
    }

    /// A signal's configuration, from this process's environment.
    pub fn from_env_for(signal: Signal) -> Result<Config, String> {
        Self::from_vars_for(signal, |name| std::env::var(name).ok())
    }

    /// The spans' configuration the variables `var` gives describe (a test passes its own).
    #[cfg(test)]
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        Self::from_vars_for(Signal::Traces, var)
    }

    /// A signal's configuration the variables `var` gives describe.
    fn from_vars_for(signal: Signal, var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let [protocol_var, compression_var, endpoint_var, headers_var, timeout_var, path] = signal.names();
        let set = |name: &'static str| {
            var(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
                .map(|v| (name, v))
        };
        let either = |general: &'static str| set(general).map(|(_, v)| v);
        let specific_or =
            |specific: &'static str, general: &'static str| set(specific).or_else(|| set(general));
        if let Some((name, protocol)) = specific_or(protocol_var, "OTEL_EXPORTER_OTLP_PROTOCOL")
            && protocol != "http/protobuf"
        {
            return Err(format!(
                "{name}={protocol}: this server exports by OTLP over HTTP in protobuf (`http/protobuf`) only"
            ));
        }
        if let Some((name, compression)) = specific_or(compression_var, "OTEL_EXPORTER_OTLP_COMPRESSION")
            && !compression.eq_ignore_ascii_case("none")
        {
            return Err(format!("{name}={compression}: this server sends spans uncompressed (`none`)"));
        }
        let parse = |name: &str, url: &str| {
            reqwest::Url::parse(url)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https"))
                .ok_or_else(|| format!("{name}={url}: not an http:// or https:// URL"))
        };
        let endpoint = match set(endpoint_var) {
            Some((name, url)) => parse(name, &url)?,
            None => {
                let base = either("OTEL_EXPORTER_OTLP_ENDPOINT");
                let name =
                    if base.is_some() { "OTEL_EXPORTER_OTLP_ENDPOINT" } else { "the default endpoint" };
                let base = base.unwrap_or_else(|| "http://localhost:4318".to_owned());
                parse(name, &format!("{}/{path}", base.trim_end_matches('/')))?
            }
        };
        let mut headers = HeaderMap::new();
        if let Some((name, list)) = specific_or(headers_var, "OTEL_EXPORTER_OTLP_HEADERS") {
            for (key, value) in list.split(',').filter_map(|pair| pair.split_once('=')) {
                let (key, value) = (key.trim(), value.trim());
                if key.is_empty() || value.is_empty() {
                    continue;
                }
                let decoded = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
                let header = HeaderName::from_bytes(key.as_bytes())
                    .map_err(|_| format!("{name}: `{key}` is not a valid HTTP header name"))?;
                // The value is not repeated in the message: it is often a token.
                let value = HeaderValue::from_str(&decoded)
                    .map_err(|_| format!("{name}: the value of `{key}` is not a valid HTTP header value"))?;
                headers.insert(header, value);
            }
        }
        let timeout = match specific_or(timeout_var, "OTEL_EXPORTER_OTLP_TIMEOUT") {
            Some((name, millis)) => Duration::from_millis(
                millis.parse().map_err(|_| format!("{name}={millis}: not a number of milliseconds"))?,
            ),
            None => Duration::from_secs(10),
        };
        Ok(Config { endpoint, headers, timeout })
    }
}

/// The target of this module's log lines, which the telemetry's `tracing` layer leaves out.
pub(crate) const LOG_TARGET: &str = module_path!();

/// How much of a collector's answer is read (and dropped): an `ExportTraceServiceResponse` is a
/// few bytes, or an error message.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// A thread's buffer for the span it writes, kept between spans up to this size.
const KEPT_SPAN_BUFFER: usize = 64 * 1024;

/// How spans are batched: the SDK's batch span processor's variables, read as it reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Batching {
    /// `OTEL_BSP_MAX_QUEUE_SIZE` (2,048): spans waiting to be sent, at most; further ones are
    /// dropped.
    pub max_queue: usize,
    /// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (512, at most `max_queue`): spans sent in one request, at
    /// most. A batch is sent as soon as it is full.
    pub max_batch: usize,
    /// `OTEL_BSP_SCHEDULE_DELAY` (5,000 ms): a batch that is not full is sent this long after the
    /// last send, at the latest.
    pub delay: Duration,
}

impl Batching {
    /// The batching this process's environment asks for.
    pub fn from_env() -> Result<Batching, String> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The batching the variables `var` gives describe. Unlike the SDK, which ignores a value it
    /// cannot read, a value that is not a number (or is 0, for a size) is an error naming it.
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Batching, String> {
        use opentelemetry_sdk::trace::{
            OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE_DEFAULT, OTEL_BSP_MAX_QUEUE_SIZE,
            OTEL_BSP_MAX_QUEUE_SIZE_DEFAULT, OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_SCHEDULE_DELAY_DEFAULT,
        };
        let number = |name: &str, least: u64| -> Result<Option<u64>, String> {
            let Some(value) = var(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else {
                return Ok(None);
            };
            match value.parse::<u64>() {
                Ok(n) if n >= least => Ok(Some(n)),
                _ if least == 0 => Err(format!("{name}={value}: not a number of milliseconds")),
                _ => Err(format!("{name}={value}: not a number of spans (1 or more)")),
            }
        };
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let max_queue = number(OTEL_BSP_MAX_QUEUE_SIZE, 1)?.map_or(OTEL_BSP_MAX_QUEUE_SIZE_DEFAULT, size);
        let max_batch =
            number(OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 1)?.map_or(OTEL_BSP_MAX_EXPORT_BATCH_SIZE_DEFAULT, size);
        let delay = number(OTEL_BSP_SCHEDULE_DELAY, 0)?
            .map_or(OTEL_BSP_SCHEDULE_DELAY_DEFAULT, Duration::from_millis);
        Ok(Batching { max_queue, max_batch: max_batch.min(max_queue), delay })
    }
}

/// The span processor of [`Telemetry::from_env`](super::Telemetry::from_env): it writes each
/// span's protobuf when the span ends, on the thread that ends it, queues it in a batch, and a
/// thread of its own sends the batches by OTLP over HTTP.
///
/// The SDK's batch processor would hand each span's data to its thread through a channel, and
/// that thread would write and free it. Written where it ends, a span is freed by the thread that
/// made it (the allocator's fast path, where frees on another thread take its slow one), and its
/// data is not moved through a channel: bench/middleware.md has the measures. What the batch
/// processor promises is kept: the `OTEL_BSP_*` variables ([`Batching`]), a queue of bounded
/// size whose overflow is dropped and logged, [`force_flush`](SpanProcessor::force_flush), and a
/// shutdown that sends what is left.
pub(crate) struct OtlpSpanProcessor {
    shared: Arc<Shared>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Shared {
    sender: Sender,
    batching: Batching,
    queue: Mutex<Queue>,
    /// The sending thread waits on it for a full batch, a flush or the shutdown.
    wake: Condvar,
}

/// What the threads ending spans and the sending thread share.
#[derive(Default)]
struct Queue {
    /// Full batches first; the last one fills.
    batches: VecDeque<Batch>,
    /// The spans in all of them.
    spans: usize,
    /// Spans dropped as the queue was full, since the last report of it.
    dropped: u64,
    /// Callers of `force_flush`, each told when what was queued before has been sent.
    flushes: Vec<mpsc::Sender<Result<(), String>>>,
    /// The caller of `shutdown`, told when the rest has been sent.
    stop: Option<mpsc::Sender<Result<(), String>>>,
    /// Shut down (or being): spans ending now are not sent.
    stopped: bool,
    /// The bytes of the last batch that filled.
    last_full: usize,
}

/// Spans of one request to the collector, written as protobuf.
#[derive(Default)]
struct Batch {
    spans: usize,
    /// Each instrumentation scope met (in the order met), and its spans: `ScopeSpans.spans`
    /// fields, one after the other.
    scopes: Vec<(InstrumentationScope, Vec<u8>)>,
    /// The room its first scope's buffer is made with.
    reserve: usize,
}

impl Batch {
    /// Adds a span written by [`write_span`].
    fn push(&mut self, scope: &InstrumentationScope, span: &[u8]) {
        // Almost always one scope (mcp-tools', which the handlers' spans share).
        let spans = match self.scopes.iter().position(|(seen, _)| seen == scope) {
            Some(index) => &mut self.scopes[index].1,
            None => {
                let room = if self.scopes.is_empty() { self.reserve } else { 0 };
                self.scopes.push((scope.clone(), Vec::with_capacity(room)));
                &mut self.scopes.last_mut().expect("just pushed").1
            }
        };
        spans.extend_from_slice(span);
        self.spans += 1;
    }

    /// The bytes its spans take.
    fn bytes(&self) -> usize {
        self.scopes.iter().map(|(_, spans)| spans.len()).sum()
    }
}

/// A `Resource` message's fields (its attributes), and its schema.
fn write_resource(resource: &Resource) -> (Vec<u8>, String) {
    let mut written = Vec::new();
    for (key, value) in resource.iter() {
        message(&mut written, 1, |out| key_value(out, key.as_str(), value));
    }
    (written, resource.schema_url().unwrap_or_default().to_owned())
}

/// A span as a `ScopeSpans.spans` field.
#[cfg(test)]
fn write_span(out: &mut Vec<u8>, span: &SpanData) {
    span_message(out, |out| encode_span(out, span));
}

/// Where spans that do not go through the SDK (`otel.rs`'s request spans) join the processor's
/// batches. Cheap to clone.
#[derive(Clone)]
pub(crate) struct SpanQueue(Arc<Shared>);

impl SpanQueue {
    /// Queues a span of this scope: `span` writes a `Span` message's fields ([`write_record`]).
    pub fn push(&self, scope: &InstrumentationScope, span: impl FnOnce(&mut Vec<u8>)) {
        self.0.write_and_queue(scope, span);
    }
}

impl OtlpSpanProcessor {
    pub fn new(config: Config, batching: Batching) -> Result<OtlpSpanProcessor, String> {
        let shared = Arc::new(Shared {
            sender: Sender::new(config)?,
            batching,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        });
        let worker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("mcp-tools-otlp-spans".to_owned())
                .spawn(move || shared.send_batches())
                .map_err(|e| format!("cannot start the OTLP span exporter's thread: {e}"))?
        };
        Ok(OtlpSpanProcessor { shared, worker: Mutex::new(Some(worker)) })
    }

    /// A handle to queue spans of one's own writing, with the SDK's.
    pub fn queue(&self) -> SpanQueue {
        SpanQueue(self.shared.clone())
    }
}

impl std::fmt::Debug for OtlpSpanProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the headers: they often carry a token.
        f.debug_struct("OtlpSpanProcessor")
            .field("endpoint", &self.shared.sender.config.endpoint.as_str())
            .field("batching", &self.shared.batching)
            .finish_non_exhaustive()
    }
}

impl SpanProcessor for OtlpSpanProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        // A span recorded but not sampled is not exported.
        if !span.span_context.is_sampled() {
            return;
        }
        self.shared.write_and_queue(&span.instrumentation_scope, |out| encode_span(out, &span));
    }

    /// Sends everything queued, and waits until it is sent.
    fn force_flush(&self) -> OTelSdkResult {
        let (told, answer) = mpsc::channel();
        {
            // Under the lock that shutting down takes: a flush asked for before the shutdown
            // is answered by the thread before it stops.
            let mut queue = self.shared.lock();
            if queue.stopped {
                return Err(OTelSdkError::AlreadyShutdown);
            }
            queue.flushes.push(told);
        }
        self.shared.wake.notify_one();
        match answer.recv() {
            Ok(result) => result.map_err(OTelSdkError::InternalFailure),
            Err(_) => {
                Err(OTelSdkError::InternalFailure("the OTLP span exporter's thread has stopped".into()))
            }
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let (told, answer) = mpsc::channel();
        {
            let mut queue = self.shared.lock();
            if queue.stopped {
                return Err(OTelSdkError::AlreadyShutdown);
            }
            queue.stopped = true;
            queue.stop = Some(told);
        }
        self.shared.wake.notify_one();
        let result = match answer.recv_timeout(timeout) {
            Ok(result) => result.map_err(OTelSdkError::InternalFailure),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(OTelSdkError::Timeout(timeout)),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(OTelSdkError::InternalFailure("the OTLP span exporter's thread has stopped".into()))
            }
        };
        if let Some(worker) = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = worker.join();
        }
        result
    }

    fn set_resource(&mut self, resource: &Resource) {
        *self.shared.sender.resource.lock().unwrap_or_else(|e| e.into_inner()) = write_resource(resource);
    }
}

impl Drop for OtlpSpanProcessor {
    /// Without a shutdown (the SDK shuts its processors down when dropped), the thread still
    /// sends what is queued, then stops; nobody waits for it.
    fn drop(&mut self) {
        let mut queue = self.shared.lock();
        if !queue.stopped {
            queue.stopped = true;
            queue.stop = Some(mpsc::channel().0);
            drop(queue);
            self.shared.wake.notify_one();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes a span (`span` writes a `Span` message's fields) in a buffer of the thread's, and
    /// queues it: the queue's lock is not held while it is written.
    fn write_and_queue(&self, scope: &InstrumentationScope, span: impl FnOnce(&mut Vec<u8>)) {
        thread_local! {
            static WRITTEN: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        WRITTEN.with_borrow_mut(|written| {
            written.clear();
            span_message(written, span);
            self.queue(scope, written);
            if written.capacity() > KEPT_SPAN_BUFFER {
                *written = Vec::new();
            }
        });
    }

    /// Queues a span written by [`write_span`], unless the queue is full or shut down.
    fn queue(&self, scope: &InstrumentationScope, span: &[u8]) {
        let mut queue = self.lock();
        if queue.stopped {
            return;
        }
        if queue.spans >= self.batching.max_queue {
            queue.dropped += 1;
            let first = queue.dropped == 1;
            drop(queue);
            if first {
                tracing::warn!(
                    "OTLP span export: the queue of {} spans is full; spans are dropped until it is sent \
                     (OTEL_BSP_MAX_QUEUE_SIZE)",
                    self.batching.max_queue
                );
            }
            return;
        }
        let max_batch = self.batching.max_batch;
        if queue.batches.back().is_none_or(|batch| batch.spans >= max_batch) {
            // A full batch's size is the next one's guess: its buffer is not grown span by span.
            let guess = queue.batches.back().map_or(queue.last_full, |batch| batch.bytes());
            queue.last_full = guess;
            queue.batches.push_back(Batch { spans: 0, scopes: Vec::new(), reserve: guess });
        }
        let batch = queue.batches.back_mut().expect("one is there");
        batch.push(scope, span);
        let full = batch.spans >= max_batch;
        queue.spans += 1;
        drop(queue);
        if full {
            self.wake.notify_one();
        }
    }

    /// The sending thread: sends full batches as they fill, the rest after the delay, all of
    /// them on a flush and at shutdown.
    fn send_batches(&self) {
        // A delay of 0 sends at once, in effect: the thread looks every millisecond.
        let delay = self.batching.delay.max(Duration::from_millis(1));
        let mut due = Instant::now() + delay;
        let mut failing = false;
        loop {
            let mut queue = self.lock();
            let timed_out = loop {
                let full = queue.batches.front().is_some_and(|b| b.spans >= self.batching.max_batch);
                if full || !queue.flushes.is_empty() || queue.stop.is_some() {
                    break false;
                }
                let now = Instant::now();
                if now >= due {
                    break true;
                }
                queue = self.wake.wait_timeout(queue, due - now).unwrap_or_else(|e| e.into_inner()).0;
            };
            let all = timed_out || !queue.flushes.is_empty() || queue.stop.is_some();
            let mut batches = Vec::new();
            while let Some(batch) = queue.batches.pop_front() {
                if !all && batch.spans < self.batching.max_batch {
                    queue.batches.push_front(batch);
                    break;
                }
                queue.spans -= batch.spans;
                batches.push(batch);
            }
            let flushes = std::mem::take(&mut queue.flushes);
            let stop = queue.stop.take();
            let dropped = std::mem::take(&mut queue.dropped);
            drop(queue);
            if dropped > 0 {
                tracing::warn!("OTLP span export: {dropped} spans were dropped, the queue being full");
            }
            let mut result = Ok(());
            for batch in &batches {
                let sent = self.sender.send(batch);
                match (&sent, failing) {
                    (Err(e), false) => {
                        tracing::warn!("{e} (further failures are not logged until one succeeds)")
                    }
                    (Ok(()), true) => tracing::info!("OTLP span export works again"),
                    _ => {}
                }
                failing = sent.is_err();
                result = result.and(sent);
            }
            drop(batches);
            if timed_out {
                due = Instant::now() + delay;
            }
            for flush in flushes {
                let _ = flush.send(result.clone());
            }
            if let Some(stop) = stop {
                self.sender.client.lock().unwrap_or_else(|e| e.into_inner()).take();
                let _ = stop.send(result);
                return;
            }
        }
    }
}

/// Sends batches by OTLP over HTTP (see the module's documentation).
struct Sender {
    config: Config,
    /// `None` once shut down.
    client: Mutex<Option<reqwest::blocking::Client>>,
    /// The `Resource` message (its attributes), written once, and its schema.
    resource: Mutex<(Vec<u8>, String)>,
}

impl Sender {
    fn new(config: Config) -> Result<Sender, String> {
        let client = blocking_client(config.timeout, config.endpoint.scheme() == "http")?;
        Ok(Sender {
            config,
            client: Mutex::new(Some(client)),
            resource: Mutex::new((Vec::new(), String::new())),
        })
    }

    /// The request for a batch (`encode_request` makes room for all of it at once).
    fn request(&self, batch: &Batch) -> Vec<u8> {
        let mut body = Vec::new();
        let resource = self.resource.lock().unwrap_or_else(|e| e.into_inner());
        encode_request(&resource.0, &resource.1, batch, &mut body);
        body
    }

    fn send(&self, batch: &Batch) -> Result<(), String> {
        let client = self.client.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let client = client.ok_or("OTLP span export: shut down")?;
        let url = &self.config.endpoint;
        let response = client
            .post(url.clone())
            .headers(self.config.headers.clone())
            .header(CONTENT_TYPE, "application/x-protobuf")
            .body(self.request(batch))
            .send()
            .map_err(|e| format!("OTLP span export: {}", crate::fetch_error::describe(&e)))?;
        let status = response.status();
        // Read to the end (so that the connection is kept for the next batch), but no more than
        // an answer of OTLP needs: a collector's answer is not kept, and cannot fill the memory.
        let _ = std::io::copy(&mut std::io::Read::take(response, MAX_ANSWER_BYTES), &mut std::io::sink());
        if !status.is_success() {
            return Err(format!("OTLP span export to {url}: the collector answered {status}"));
        }
        Ok(())
    }
}

/// A blocking HTTP client for OTLP, made on a thread of its own: reqwest's blocking client runs
/// a Tokio runtime of its own, which cannot be made on a thread that is in one already
/// (`from_env` may be called in async code). No redirects: spans (and the headers' credentials)
/// go to the configured endpoint only. For an `http://` endpoint (`plain`) no TLS root
/// certificates are loaded: reading the system's takes milliseconds at start-up, for nothing.
pub(crate) fn blocking_client(timeout: Duration, plain: bool) -> Result<reqwest::blocking::Client, String> {
    std::thread::spawn(move || {
        let mut builder =
            reqwest::blocking::Client::builder().timeout(timeout).redirect(reqwest::redirect::Policy::none());
        if plain {
            builder = builder.tls_certs_only([]);
        }
        builder.build()
    })
    .join()
    .map_err(|_| "making the OTLP HTTP client panicked".to_owned())?
    .map_err(|e| format!("cannot make the OTLP HTTP client: {e}"))
}

// The protobuf wire format, and OTLP's messages in it
// (opentelemetry-proto: collector/trace/v1, trace/v1, common/v1, resource/v1).

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A field's key: its number and wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit).
fn tag(out: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(out, u64::from(field << 3 | wire_type));
}

fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, 2);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// A string field, left out when empty (proto3's default).
fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    if !value.is_empty() {
        bytes(out, field, value.as_bytes());
    }
}

/// A varint field (`uint32`, `uint64`, an enum), left out when 0.
fn uint(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        tag(out, field, 0);
        varint(out, value);
    }
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        tag(out, field, 1);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        tag(out, field, 5);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// How many bytes a varint of this value takes.
fn varint_length(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// A message field: `body` writes the message, whose length is then put before it.
fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, 2);
    let at = out.len();
    out.push(0);
    body(out);
    let length = out.len() - at - 1;
    if length < 0x80 {
        out[at] = length as u8;
    } else {
        // The length takes more than the one byte kept for it: move the message up.
        let (mut prefix, mut used, mut rest) = ([0u8; 10], 0, length as u64);
        while rest >= 0x80 {
            prefix[used] = rest as u8 | 0x80;
            rest >>= 7;
            used += 1;
        }
        prefix[used] = rest as u8;
        out.splice(at..=at, prefix[..=used].iter().copied());
    }
}

/// A span as a `ScopeSpans.spans` field (2), as [`message`] writes it, but with two bytes kept
/// for its length: a span takes 128 to 16,383 bytes but for the smallest, and is then not moved.
fn span_message(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    tag(out, 2, 2);
    let at = out.len();
    out.extend_from_slice(&[0, 0]);
    body(out);
    let length = out.len() - at - 2;
    if (0x80..0x4000).contains(&length) {
        out[at] = length as u8 | 0x80;
        out[at + 1] = (length >> 7) as u8;
    } else {
        // One byte, or more than two: the span moves to fit.
        let mut prefix = Vec::with_capacity(3);
        varint(&mut prefix, length as u64);
        out.splice(at..at + 2, prefix);
    }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// `SpanFlags`: the W3C trace flags, and whether the parent (or the linked span) is remote.
fn span_flags(trace_flags: u8, remote: bool) -> u32 {
    const HAS_IS_REMOTE: u32 = 0x100;
    const IS_REMOTE: u32 = 0x200;
    u32::from(trace_flags) | HAS_IS_REMOTE | if remote { IS_REMOTE } else { 0 }
}

/// An `ExportTraceServiceRequest` of one `ResourceSpans`, a `ScopeSpans` per instrumentation
/// scope (in the order they first came), the spans in the order they ended. The spans are
/// written already: the messages around them are written with their lengths first, so that
/// the spans are copied once.
fn encode_request(resource: &[u8], resource_schema: &str, batch: &Batch, out: &mut Vec<u8>) {
    let field = |length: usize| 1 + varint_length(length as u64) + length;
    let scopes: Vec<(Vec<u8>, &[u8], Vec<u8>)> = batch
        .scopes
        .iter()
        .map(|(scope, spans)| {
            let (mut head, mut tail) = (Vec::new(), Vec::new());
            message(&mut head, 1, |out| {
                string(out, 1, scope.name());
                string(out, 2, scope.version().unwrap_or_default());
                attributes(out, 3, scope.attributes());
            });
            string(&mut tail, 3, scope.schema_url().unwrap_or_default());
            (head, spans.as_slice(), tail)
        })
        .collect();
    let scope_length =
        |(head, spans, tail): &(Vec<u8>, &[u8], Vec<u8>)| head.len() + spans.len() + tail.len();
    let mut schema = Vec::new();
    string(&mut schema, 3, resource_schema);
    let resource_spans = field(resource.len())
        + scopes.iter().map(|scope| field(scope_length(scope))).sum::<usize>()
        + schema.len();
    out.reserve(field(resource_spans));
    tag(out, 1, 2);
    varint(out, resource_spans as u64);
    bytes(out, 1, resource);
    for scope in &scopes {
        tag(out, 2, 2);
        varint(out, scope_length(scope) as u64);
        out.extend_from_slice(&scope.0);
        out.extend_from_slice(scope.1);
        out.extend_from_slice(&scope.2);
    }
    out.extend_from_slice(&schema);
}

/// A span to write: the SDK's span data, or a request's span the telemetry recorded itself
/// (`otel.rs`), whose attributes are written by the caller of [`write_record`].
pub(crate) struct Record<'a> {
    pub context: &'a SpanContext,
    /// `SpanId::INVALID` for a root span.
    pub parent: SpanId,
    pub parent_is_remote: bool,
    pub name: &'a str,
    pub kind: &'a SpanKind,
    pub start: SystemTime,
    pub end: SystemTime,
    pub dropped_attributes: u32,
    pub events: &'a [Event],
    pub dropped_events: u32,
    pub links: &'a [Link],
    pub dropped_links: u32,
    pub status: &'a Status,
}

fn encode_span(out: &mut Vec<u8>, span: &SpanData) {
    let record = Record {
        context: &span.span_context,
        parent: span.parent_span_id,
        parent_is_remote: span.parent_span_is_remote,
        name: &span.name,
        kind: &span.span_kind,
        start: span.start_time,
        end: span.end_time,
        dropped_attributes: span.dropped_attributes_count,
        events: &span.events.events,
        dropped_events: span.events.dropped_count,
        links: &span.links.links,
        dropped_links: span.links.dropped_count,
        status: &span.status,
    };
    write_record(out, &record, |out| attributes(out, 9, &span.attributes));
}

/// A `Span` message's fields, its attributes (each a field 9: [`attribute`],
/// [`attribute_text`]) written by `attributes`.
pub(crate) fn write_record(out: &mut Vec<u8>, span: &Record<'_>, attributes_of: impl FnOnce(&mut Vec<u8>)) {
    let context = span.context;
    ids_and_state(out, context);
    if span.parent != SpanId::INVALID {
        bytes(out, 4, &span.parent.to_bytes());
    }
    string(out, 5, span.name);
    let kind = match span.kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    uint(out, 6, kind);
    fixed64(out, 7, nanos(span.start));
    fixed64(out, 8, nanos(span.end));
    attributes_of(out);
    uint(out, 10, span.dropped_attributes.into());
    for event in span.events {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            attributes(out, 3, &event.attributes);
            uint(out, 4, event.dropped_attributes_count.into());
        });
    }
    uint(out, 12, span.dropped_events.into());
    for link in span.links {
        message(out, 13, |out| {
            ids_and_state(out, &link.span_context);
            attributes(out, 4, &link.attributes);
            uint(out, 5, link.dropped_attributes_count.into());
            fixed32(
                out,
                6,
                span_flags(link.span_context.trace_flags().to_u8(), link.span_context.is_remote()),
            );
        });
    }
    uint(out, 14, span.dropped_links.into());
    message(out, 15, |out| {
        let code = match span.status {
            Status::Unset => 0,
            Status::Ok => 1,
            Status::Error { description } => {
                string(out, 2, description);
                2
            }
        };
        uint(out, 3, code);
    });
    fixed32(out, 16, span_flags(context.trace_flags().to_u8(), span.parent_is_remote));
}

/// A span's attribute (field 9 of a `Span`).
pub(crate) fn attribute(out: &mut Vec<u8>, key: &str, value: &Value) {
    message(out, 9, |out| key_value(out, key, value));
}

/// A span's attribute of an integer value (field 9 of a `Span`), as [`attribute`] writes it.
pub(crate) fn attribute_int(out: &mut Vec<u8>, key: &str, value: i64) {
    let any_value = 1 + varint_length(value as u64);
    let key_value =
        if key.is_empty() { 0 } else { 1 + varint_length(key.len() as u64) + key.len() } + 2 + any_value;
    tag(out, 9, 2);
    varint(out, key_value as u64);
    string(out, 1, key);
    tag(out, 2, 2);
    varint(out, any_value as u64);
    tag(out, 3, 0);
    varint(out, value as u64);
}

/// A span's attribute of a string value (field 9 of a `Span`), as [`attribute`] writes it. Its
/// lengths are known in advance: they are written first, and nothing is moved.
pub(crate) fn attribute_text(out: &mut Vec<u8>, key: &str, value: &str) {
    let field = |length: usize| 1 + varint_length(length as u64) + length;
    let any_value = field(value.len());
    let key_value = if key.is_empty() { 0 } else { field(key.len()) } + field(any_value);
    out.reserve(field(key_value));
    tag(out, 9, 2);
    varint(out, key_value as u64);
    string(out, 1, key);
    tag(out, 2, 2);
    varint(out, any_value as u64);
    bytes(out, 1, value.as_bytes());
}

/// `trace_id` (1), `span_id` (2) and `trace_state` (3): the same fields in a span and a link.
fn ids_and_state(out: &mut Vec<u8>, context: &SpanContext) {
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    string(out, 3, &context.trace_state().header());
}

fn attributes<'a>(out: &mut Vec<u8>, field: u32, attributes: impl IntoIterator<Item = &'a KeyValue>) {
    for attribute in attributes {
        message(out, field, |out| key_value(out, attribute.key.as_str(), &attribute.value));
    }
}

/// A `KeyValue`'s fields.
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    string(out, 1, key);
    message(out, 2, |out| any_value(out, value));
}

/// An `AnyValue`'s field (a `oneof`: written even when it holds its type's default).
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(text) => bytes(out, 1, text.as_str().as_bytes()),
        Value::Bool(flag) => {
            tag(out, 2, 0);
            out.push(u8::from(*flag));
        }
        Value::I64(number) => {
            tag(out, 3, 0);
            varint(out, *number as u64);
        }
        Value::F64(number) => {
            tag(out, 4, 1);
            out.extend_from_slice(&number.to_bits().to_le_bytes());
        }
        Value::Array(array) => message(out, 5, |out| {
            let mut each = |value: Value| message(out, 1, |out| any_value(out, &value));
            match array {
                Array::Bool(values) => values.iter().for_each(|v| each(Value::Bool(*v))),
                Array::I64(values) => values.iter().for_each(|v| each(Value::I64(*v))),
                Array::F64(values) => values.iter().for_each(|v| each(Value::F64(*v))),
                Array::String(values) => values.iter().for_each(|v| each(Value::String(v.clone()))),
                // A kind of array added to the API later: as its text.
                other => each(Value::from(other.to_string())),
            }
        }),
        // A kind of value added to the API later: as its text.
        other => bytes(out, 1, other.to_string().as_bytes()),
    }
}

/// A collector: answers every request with `status` and hands each one (its first line, its
/// headers in lower case, its body) to the test.
#[cfg(test)]
pub(crate) fn collector(status: u16) -> (String, std::sync::mpsc::Receiver<(String, String, Vec<u8>)>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        head.push_str(&line.to_ascii_lowercase());
                    }
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |n| n.trim().parse().unwrap());
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let first = head.lines().next().unwrap_or_default().to_owned();
                    let _ = sender.send((first, head, body));
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\nlocation: http://{address}/elsewhere\r\ncontent-length: 0\r\n\r\n"
                    );
                    writer.write_all(answer.as_bytes()).unwrap();
                }
            });
        }
    });
    (format!("http://{address}/v1/traces"), received)
}

#[cfg(test)]
pub(crate) fn config(endpoint: &str) -> Config {
    Config::from_vars(|name| match name {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some(endpoint.to_owned()),
        "OTEL_EXPORTER_OTLP_HEADERS" => Some("authorization=Bearer%20s3cret".to_owned()),
        _ => None,
    })
    .unwrap()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use opentelemetry::trace::{Event, Link, SpanContext, TraceFlags, TraceId, TraceState};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};
    use prost::Message as _;

    use super::*;

    fn context(trace: u128, span: u64, remote: bool, state: &str) -> SpanContext {
        let state: TraceState = state.parse().unwrap();
        SpanContext::new(TraceId::from(trace), SpanId::from(span), TraceFlags::SAMPLED, remote, state)
    }

    fn span(name: &'static str, scope: &InstrumentationScope, attributes: Vec<KeyValue>) -> SpanData {
        let start = UNIX_EPOCH + Duration::from_nanos(1_764_000_000_123_456_789);
        let mut events = SpanEvents::default();
        let mut links = SpanLinks::default();
        if name == "tools/call weather" {
            events.events.push(Event::new(
                "retry",
                start + Duration::from_micros(5),
                vec![KeyValue::new("attempt", 2), KeyValue::new("", "")],
                3,
            ));
            events.events.push(Event::new(Cow::Borrowed(""), UNIX_EPOCH, vec![], 0));
            events.dropped_count = 4;
            links.links.push(Link::new(
                context(7, 8, true, "a=1,b=2"),
                vec![KeyValue::new("why", "header")],
                1,
            ));
            links.links.push(Link::new(context(9, 10, false, ""), vec![], 0));
            links.dropped_count = 5;
        }
        SpanData {
            span_context: context(
                0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736,
                0x00f0_67aa_0ba9_02b7,
                false,
                "rojo=1",
            ),
            parent_span_id: if name.is_empty() { SpanId::INVALID } else { SpanId::from(42) },
            parent_span_is_remote: name.starts_with("tools"),
            span_kind: if name.starts_with("tools") { SpanKind::Server } else { SpanKind::Internal },
            name: Cow::Borrowed(name),
            start_time: start,
            end_time: start + Duration::from_micros(37),
            attributes,
            dropped_attributes_count: if name.is_empty() { 0 } else { 6 },
            events,
            links,
            status: match name {
                "tools/call weather" => Status::error("the tool returned an error result"),
                "ok" => Status::Ok,
                _ => Status::Unset,
            },
            instrumentation_scope: scope.clone(),
        }
    }

    /// Decodes what this exporter writes, and what opentelemetry-proto makes of the same spans.
    fn both(
        resource: &Resource,
        batch: Vec<SpanData>,
    ) -> (ExportTraceServiceRequest, ExportTraceServiceRequest) {
        let (written, schema) = write_resource(resource);
        let mut queued = Batch::default();
        for span in &batch {
            let mut one = Vec::new();
            write_span(&mut one, span);
            queued.push(&span.instrumentation_scope, &one);
        }
        let mut ours = Vec::new();
        encode_request(&written, &schema, &queued, &mut ours);
        let ours = ExportTraceServiceRequest::decode(ours.as_slice()).expect("the protobuf reads back");
        let resource_spans =
            group_spans_by_resource_and_scope(batch, &ResourceAttributesWithSchema::from(resource));
        let mut theirs = ExportTraceServiceRequest { resource_spans };
        // opentelemetry-proto groups the scopes in a hash map's order.
        for request in [&mut theirs] {
            for resource in &mut request.resource_spans {
                let mut scopes = std::mem::take(&mut resource.scope_spans);
                let order = |s: &opentelemetry_proto::tonic::trace::v1::ScopeSpans| {
                    ours.resource_spans[0].scope_spans.iter().position(|o| o.scope == s.scope)
                };
                scopes.sort_by_key(order);
                resource.scope_spans = scopes;
            }
        }
        (ours, theirs)
    }

    #[test]
    fn the_protobuf_is_what_opentelemetry_proto_writes_for_the_same_spans() {
        let resource = Resource::builder_empty()
            .with_service_name("weather")
            .with_attributes([KeyValue::new("service.version", "1.2.3"), KeyValue::new("host.cores", 2)])
            .with_schema_url([], "https://opentelemetry.io/schemas/1.30.0")
            .build();
        let ours = InstrumentationScope::builder("mcp-tools").with_version("0.9.0").build();
        let other = InstrumentationScope::builder("handler")
            .with_schema_url("https://example.com/schema")
            .with_attributes([KeyValue::new("scope.attribute", true)])
            .build();
        let long = "x".repeat(20_000);
        let every_kind = vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("empty", ""),
            KeyValue::new("client.port", 54321_i64),
            KeyValue::new("negative", -7_i64),
            KeyValue::new("zero", 0_i64),
            KeyValue::new("ratio", 0.25),
            KeyValue::new("zero.float", 0.0),
            KeyValue::new("yes", true),
            KeyValue::new("no", false),
            KeyValue::new("bools", Value::Array(vec![true, false].into())),
            KeyValue::new("ints", Value::Array(vec![1_i64, -2, 0].into())),
            KeyValue::new("floats", Value::Array(vec![1.5, -0.0].into())),
            KeyValue::new(
                "strings",
                Value::Array(vec![opentelemetry::StringValue::from("a"), "".into()].into()),
            ),
            KeyValue::new("empty.array", Value::Array(Vec::<i64>::new().into())),
            // Lengths of one, two and three bytes.
            KeyValue::new("long", long.clone()),
        ];
        let batch = vec![
            span("tools/call weather", &ours, every_kind),
            span("", &other, vec![KeyValue::new("k", long)]),
            span("ok", &ours, vec![]),
            span("internal", &other, vec![KeyValue::new("n", 1)]),
            // A span of a two-byte length (most are), and a key left empty.
            span("medium", &ours, vec![KeyValue::new("m", "y".repeat(300)), KeyValue::new("", "no key")]),
        ];
        let (ours_decoded, theirs) = both(&resource, batch);
        assert_eq!(ours_decoded, theirs);
        let scopes: Vec<_> = ours_decoded.resource_spans[0]
            .scope_spans
            .iter()
            .map(|s| (s.scope.as_ref().unwrap().name.as_str(), s.spans.len()))
            .collect();
        assert_eq!(scopes, [("mcp-tools", 3), ("handler", 2)]);
        assert_eq!(ours_decoded.resource_spans[0].schema_url, "https://opentelemetry.io/schemas/1.30.0");

        // No spans, and a resource without attributes.
        let (ours_decoded, theirs) = both(&Resource::builder_empty().build(), vec![]);
        assert_eq!(ours_decoded, theirs);
        assert!(ours_decoded.resource_spans[0].scope_spans.is_empty());
    }

    #[test]
    fn attributes_written_from_their_parts_are_the_same_bytes() {
        for key in ["", "k", "gen_ai.tool.name", &"k".repeat(200)] {
            for value in ["", "get_weather", &"v".repeat(130), &"v".repeat(20_000)] {
                let (mut general, mut text) = (Vec::new(), Vec::new());
                attribute(&mut general, key, &Value::from(value.to_owned()));
                attribute_text(&mut text, key, value);
                assert_eq!(general, text, "{} {}", key.len(), value.len());
            }
        }
        for key in ["", "client.port"] {
            for value in [0, 1, 4567, -7, i64::MAX, i64::MIN] {
                let (mut general, mut int) = (Vec::new(), Vec::new());
                attribute(&mut general, key, &Value::I64(value));
                attribute_int(&mut int, key, value);
                assert_eq!(general, int, "{key} {value}");
            }
        }
        for value in [0, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            let mut out = Vec::new();
            varint(&mut out, value);
            assert_eq!(varint_length(value), out.len(), "{value}");
        }
        // A span's length in one, two and three bytes.
        for size in [10, 127, 128, 16_383 - 3, 16_383, 16_384, 20_000] {
            let (mut general, mut kept) = (Vec::new(), Vec::new());
            let body = |out: &mut Vec<u8>| out.extend(std::iter::repeat_n(7, size));
            message(&mut general, 2, body);
            span_message(&mut kept, body);
            assert_eq!(general, kept, "{size}");
        }
    }

    #[test]
    fn the_standard_variables_configure_it() {
        let config = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> =
                vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Config::from_vars(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        let default = config(&[]).unwrap();
        assert_eq!(default.endpoint.as_str(), "http://localhost:4318/v1/traces");
        assert_eq!(default.timeout, Duration::from_secs(10));
        assert!(default.headers.is_empty());

        let general = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example.com:4318/otlp/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cr%20et, x-tenant = acme ,=nokey,novalue=,junk"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
        ])
        .unwrap();
        assert_eq!(general.endpoint.as_str(), "https://collector.example.com:4318/otlp/v1/traces");
        assert_eq!(general.headers.len(), 2);
        assert_eq!(general.headers["api-key"], "s3cr et");
        assert_eq!(general.headers["x-tenant"], "acme");
        assert_eq!(general.timeout, Duration::from_millis(2500));

        // The signal's own variables win, and its endpoint is taken as it is.
        let specific = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
        ])
        .unwrap();
        assert_eq!(specific.endpoint.as_str(), "http://traces:9999/custom");
        assert_eq!(specific.headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(specific.timeout, Duration::from_millis(700));

        // The metrics' variables are their own (the metric exporter's client is made from them).
        let metrics = |vars: &[(&str, &str)]| {
            Config::from_vars_for(Signal::Metrics, |name| {
                vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
            })
        };
        let general = metrics(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318")]).unwrap();
        assert_eq!(general.endpoint.as_str(), "http://general:4318/v1/metrics");
        let own = metrics(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://traces:1/t"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://metrics:2/m"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "900"),
        ])
        .unwrap();
        assert_eq!((own.endpoint.as_str(), own.timeout), ("http://metrics:2/m", Duration::from_millis(900)));

        let error = |vars: &[(&str, &str)]| config(vars).unwrap_err();
        assert_eq!(
            error(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]),
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: this server exports by OTLP over HTTP in protobuf (`http/protobuf`) only"
        );
        assert!(error(&[("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")]).contains("uncompressed"));
        assert!(
            error(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")])
                .contains("not an http:// or https:// URL")
        );
        assert!(error(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "10s")]).contains("not a number of milliseconds"));
        let bad_value = error(&[("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%0Atoken")]);
        assert!(bad_value.contains("the value of `authorization` is not a valid"), "{bad_value}");
        assert!(!bad_value.contains("token"), "{bad_value}");
        assert!(error(&[("OTEL_EXPORTER_OTLP_HEADERS", "bad name=1")]).contains("`bad name` is not a valid"));
    }

    /// A tracer provider exporting to `endpoint` through the processor.
    fn provider(endpoint: &str, batching: Batching) -> opentelemetry_sdk::trace::SdkTracerProvider {
        let processor = OtlpSpanProcessor::new(config(endpoint), batching).unwrap();
        opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_resource(Resource::builder_empty().with_service_name("weather").build())
            .with_span_processor(processor)
            .build()
    }

    /// Ends spans of these names.
    fn end_spans(provider: &opentelemetry_sdk::trace::SdkTracerProvider, names: &[&'static str]) {
        use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
        let tracer = provider.tracer("mcp-tools");
        for name in names {
            let mut span = tracer.start(*name);
            span.set_attribute(KeyValue::new("n", 1));
            span.end();
        }
    }

    /// The names of the spans a request to the collector carried.
    fn names(body: &[u8]) -> Vec<String> {
        let request = ExportTraceServiceRequest::decode(body).unwrap();
        let spans = request.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans);
        spans.map(|span| span.name.clone()).collect()
    }

    const WAIT: Duration = Duration::from_secs(10);

    #[test]
    fn the_sdk_exports_through_it_to_a_collector() {
        let (endpoint, received) = collector(200);
        let batching = Batching::from_vars(|_| None).unwrap();
        let provider = provider(&endpoint, batching);
        end_spans(&provider, &["first", "second"]);
        provider.force_flush().unwrap();
        let (first, head, body) = received.recv_timeout(WAIT).unwrap();
        assert_eq!(first, "post /v1/traces http/1.1");
        assert!(head.contains("content-type: application/x-protobuf"), "{head}");
        assert!(head.contains("authorization: bearer s3cret"), "{head}");
        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        let resource = &request.resource_spans[0];
        let service = &resource.resource.as_ref().unwrap().attributes;
        assert!(service.iter().any(|kv| kv.key == "service.name"), "the resource is sent: {service:?}");
        assert_eq!(names(&body), ["first", "second"]);
        // Nothing queued: a flush sends nothing.
        provider.force_flush().unwrap();
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err());
        // Shutting down sends what is left; after it nothing is queued or sent.
        end_spans(&provider, &["third"]);
        provider.shutdown().unwrap();
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["third"]);
        end_spans(&provider, &["late"]);
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err());
    }

    #[test]
    fn spans_go_in_batches_of_the_configured_size_and_after_the_delay() {
        let (endpoint, received) = collector(200);
        // Full batches go at once, without a flush.
        let batching = Batching { max_queue: 100, max_batch: 2, delay: Duration::from_secs(3600) };
        let batched = provider(&endpoint, batching);
        end_spans(&batched, &["a", "b", "c", "d", "e"]);
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["a", "b"]);
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["c", "d"]);
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err(), "e waits for its batch to fill");
        batched.force_flush().unwrap();
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["e"]);
        batched.shutdown().unwrap();

        // A batch that does not fill goes after the delay.
        let batching = Batching { max_queue: 100, max_batch: 100, delay: Duration::from_millis(50) };
        let provider = provider(&endpoint, batching);
        end_spans(&provider, &["alone"]);
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["alone"]);
        provider.shutdown().unwrap();
    }

    #[test]
    fn past_the_queue_spans_are_dropped() {
        // The queue alone, without a thread to send it.
        let shared = Shared {
            sender: Sender::new(config("http://127.0.0.1:9/v1/traces")).unwrap(),
            batching: Batching { max_queue: 3, max_batch: 2, delay: Duration::from_secs(3600) },
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        };
        let ours = InstrumentationScope::builder("mcp-tools").build();
        let other = InstrumentationScope::builder("handler").build();
        for scope in [&ours, &other, &ours, &ours, &other] {
            let mut one = Vec::new();
            write_span(&mut one, &span("ok", scope, vec![]));
            shared.queue(scope, &one);
        }
        let queue = shared.lock();
        assert_eq!((queue.spans, queue.dropped), (3, 2));
        let batches: Vec<Vec<(&str, usize)>> = queue
            .batches
            .iter()
            .map(|batch| batch.scopes.iter().map(|(scope, spans)| (scope.name(), spans.len())).collect())
            .collect();
        let size = {
            let mut one = Vec::new();
            write_span(&mut one, &span("ok", &ours, vec![]));
            one.len()
        };
        assert_eq!(batches, [vec![("mcp-tools", size), ("handler", size)], vec![("mcp-tools", size)]]);
    }

    #[test]
    fn unsampled_spans_are_not_sent_and_a_failed_send_is_reported() {
        let (endpoint, received) = collector(503);
        let processor =
            OtlpSpanProcessor::new(config(&endpoint), Batching::from_vars(|_| None).unwrap()).unwrap();
        let scope = InstrumentationScope::builder("mcp-tools").build();
        let mut unsampled = span("ok", &scope, vec![]);
        unsampled.span_context = SpanContext::new(
            unsampled.span_context.trace_id(),
            unsampled.span_context.span_id(),
            TraceFlags::default(),
            false,
            TraceState::default(),
        );
        processor.on_end(unsampled);
        processor.force_flush().unwrap();
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err(), "nothing to send");
        processor.on_end(span("ok", &scope, vec![]));
        let error = processor.force_flush().unwrap_err().to_string();
        assert!(error.contains("the collector answered 503"), "{error}");
        assert_eq!(names(&received.recv_timeout(WAIT).unwrap().2), ["ok"]);
        processor.shutdown().unwrap();
        assert!(matches!(processor.force_flush(), Err(OTelSdkError::AlreadyShutdown)));
        assert!(matches!(processor.shutdown(), Err(OTelSdkError::AlreadyShutdown)));
    }

    #[test]
    fn failures_to_send_are_reported_with_their_reason() {
        let scope = InstrumentationScope::builder("s").build();
        let batch = || {
            let mut batch = Batch::default();
            let mut one = Vec::new();
            write_span(&mut one, &span("ok", &scope, vec![]));
            batch.push(&scope, &one);
            batch
        };
        let (refusing, _requests) = collector(503);
        let error = Sender::new(config(&refusing)).unwrap().send(&batch()).unwrap_err();
        assert!(error.contains("the collector answered 503"), "{error}");
        // A redirect is not followed (the spans and the headers stay with the configured origin).
        let (redirecting, requests) = collector(307);
        let error = Sender::new(config(&redirecting)).unwrap().send(&batch()).unwrap_err();
        assert!(error.contains("the collector answered 307"), "{error}");
        assert_eq!(requests.try_iter().count(), 1, "one request, no second one after the redirect");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let error =
            Sender::new(config(&format!("http://{closed}/v1/traces"))).unwrap().send(&batch()).unwrap_err();
        assert!(error.contains("cannot connect to"), "{error}");
    }

    #[test]
    fn the_batch_variables_are_read_as_the_sdk_reads_them() {
        let batching = |vars: &[(&str, &str)]| {
            Batching::from_vars(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
        };
        let default = batching(&[]).unwrap();
        assert_eq!(default, Batching { max_queue: 2048, max_batch: 512, delay: Duration::from_millis(5000) });
        let set = batching(&[
            ("OTEL_BSP_MAX_QUEUE_SIZE", "100"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", " 10 "),
            ("OTEL_BSP_SCHEDULE_DELAY", "0"),
        ])
        .unwrap();
        assert_eq!(set, Batching { max_queue: 100, max_batch: 10, delay: Duration::ZERO });
        // A batch is never larger than the queue.
        let clipped = batching(&[("OTEL_BSP_MAX_QUEUE_SIZE", "5"), ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "9")]);
        assert_eq!(clipped.unwrap().max_batch, 5);
        assert_eq!(
            batching(&[("OTEL_BSP_MAX_QUEUE_SIZE", "0")]).unwrap_err(),
            "OTEL_BSP_MAX_QUEUE_SIZE=0: not a number of spans (1 or more)"
        );
        assert_eq!(
            batching(&[("OTEL_BSP_SCHEDULE_DELAY", "5s")]).unwrap_err(),
            "OTEL_BSP_SCHEDULE_DELAY=5s: not a number of milliseconds"
        );
        assert!(batching(&[("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "-1")]).is_err());
    }
}
