//! [`Telemetry`] (feature `otel`): OpenTelemetry for every request, after the MCP semantic
//! conventions, as an [`Observer`] of `dispatch/observe.rs`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, RwLock};
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::metrics::{BoundHistogram, Histogram, MeterProvider as _};
use opentelemetry::propagation::{Extractor, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::{InstrumentationScope, Key, KeyValue, StringValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::resource::{EnvResourceDetector, ResourceDetector as _};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;

use super::otlp;
use super::request_span::{self, Direct};
use crate::dispatch::observe::{Begun, Observation, Observed, Observer, Outcome};
use crate::protocol::RequestId;

/// The metric's name.
const DURATION: &str = "mcp.server.operation.duration";
/// Its bucket boundaries in seconds, as the semantic conventions advise.
const BUCKETS: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// OpenTelemetry (feature `otel`): every request the server answers becomes an OpenTelemetry span
/// named and attributed after OpenTelemetry's semantic conventions for MCP, and is measured by the
/// `mcp.server.operation.duration` histogram; both are exported by OTLP.
///
/// **The span.** One per request, of kind `SERVER`, named `{mcp.method.name} {target}` (`tools/call
/// get_weather`, `prompts/get greet`; the method alone when there is no tool or prompt), with the
/// attributes
///
/// | attribute | when |
/// |---|---|
/// | `mcp.method.name` | always |
/// | `jsonrpc.request.id` | always (the id as text: `7`, `request-7`) |
/// | `gen_ai.tool.name`, `gen_ai.operation.name` = `execute_tool` | `tools/call` |
/// | `gen_ai.prompt.name` | `prompts/get` |
/// | `mcp.resource.uri` | `resources/read`, `resources/subscribe`, `resources/unsubscribe` |
/// | `mcp.protocol.version` | once known: the session's revision (2025-11-25 and older), or the request's envelope (2026-07-28) |
/// | `mcp.session.id` | a Streamable HTTP session's requests |
/// | `network.transport` | `tcp` over HTTP, `pipe` otherwise (stdio) |
/// | `network.protocol.name` = `http`, `client.address`, `client.port` | over HTTP |
/// | `error.type` | a failed request: `tool_error` (a `tools/call` result with `isError`), the JSON-RPC error code (`-32602`), or `cancelled` (never answered) |
/// | `rpc.response.status_code` | a JSON-RPC error: its code |
///
/// and the status `ERROR` whenever `error.type` is set. Its parent is the client's: the W3C trace
/// context a client puts in the request's `params._meta` (`traceparent`, `tracestate`, and
/// `baggage`: SEP-414, which the 2026-07-28 revision carries on every request), else, over
/// HTTP, the request's `traceparent`/`tracestate` headers (a link to those when both are there and
/// differ). Without either it is the root of a new trace. The request runs *in* this span: the
/// handler sees it as `opentelemetry::Context::current()`, and its `tracing` spans (through
/// [`Telemetry::layer`]; the events inside them with them) are its children. The span is made
/// with the SDK directly, not through `tracing`. It ends when the answer is sent.
///
/// **The metric.** `mcp.server.operation.duration`, a histogram in seconds (buckets 0.01 s to
/// 300 s, as the conventions advise) of the time from a request's arrival to its answer, with the
/// span's low-cardinality attributes (`mcp.method.name`, `gen_ai.tool.name`,
/// `gen_ai.operation.name`, `gen_ai.prompt.name`, `mcp.protocol.version`, `network.transport`,
/// `network.protocol.name`, `error.type`, `rpc.response.status_code`). It is recorded through
/// handles bound to each attribute set met (the SDK's bound instruments), so that a request
/// costs no hashing of its attributes: at most 512 of them, never for a JSON-RPC error (where a
/// tool's name is whatever the caller sent); further sets are recorded as usual. To the same end
/// the names of tools and prompts that answered (at most 512 of each) and their span names
/// (`tools/call get_weather`; at most 4,096 in the process, kept for its life) are shared by their
/// requests rather than allocated for each.
///
/// **Turning it on.** The command line every server has does it all: `--otel`, or on by itself
/// when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (and
/// `OTEL_SDK_DISABLED` is not `true`). It builds [`Telemetry::from_env_as`] (the server's name
/// is the default `service.name`), adds [`Telemetry::layer`] to the logging it sets up, and
/// flushes and shuts the exporters down when the server stops:
///
/// ```sh
/// OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 my-server --http 8080
/// ```
///
/// [`Telemetry::from_env`] reads the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (the
/// signal paths `/v1/traces` and `/v1/metrics` are added), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`,
/// `…_COMPRESSION`, `OTEL_EXPORTER_OTLP_PROTOCOL` (this build speaks `http/protobuf`),
/// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and its `…_ARG`,
/// `OTEL_SPAN_*_LIMIT`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE` and
/// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (the batches of spans), `OTEL_METRIC_EXPORT_INTERVAL`, and
/// `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` (`otlp`, the default, or `none`). A value it
/// cannot use (another protocol, compression, a malformed URL, header, timeout or batch size) is
/// an error at start-up that names the variable.
///
/// Spans are exported by a span processor of this crate, which writes each span's OTLP protobuf
/// when the span ends, on the thread that ends it, and sends the batches from a thread of its own
/// (opentelemetry-otlp's exporter, which metrics still use, copies each span into owned protobuf
/// structs first, on the batch processor's thread, and spent four times as many instructions a
/// span). A request's own span is recorded by the telemetry without the SDK's span object: its
/// attributes stay the request's fields until they are written, most of them as bytes prepared
/// once. It is otherwise what the SDK would make: the SDK's sampler (`OTEL_TRACES_SAMPLER`) and
/// span limits, the SDK's random ids, and a span in the request's `opentelemetry::Context` that
/// the handler can add attributes, events, links and a status to. bench/middleware.md has the
/// measures; the tests compare what is written with opentelemetry-proto's conversion of the
/// SDK's spans for the same requests.
///
/// **Your own setup.** Serving without the command line, or exporting elsewhere: build the SDK's
/// providers yourself ([`Telemetry::new`]), give the server the telemetry
/// ([`ServerBuilder::telemetry`](crate::ServerBuilder::telemetry)), put [`Telemetry::layer`] in
/// your `tracing` subscriber (without it the handlers' own spans are not exported; the requests' are),
/// and call [`Telemetry::shutdown`] at the end:
///
/// ```no_run
/// use mcp_tools::middleware::Telemetry;
/// use mcp_tools::{HttpOptions, Server};
/// use tracing_subscriber::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let telemetry = Telemetry::from_env_as("notes", "1.0.0")?;
/// tracing_subscriber::registry()
///     .with(tracing_subscriber::fmt::layer().with_filter(tracing_subscriber::EnvFilter::new("warn")))
///     .with(telemetry.layer())
///     .init();
/// let server = Server::builder().telemetry(telemetry.clone()).build()?;
/// server.serve_http("127.0.0.1:8080".parse()?, HttpOptions::new()).await?;
/// telemetry.shutdown()?;
/// # Ok(())
/// # }
/// ```
///
/// A server without telemetry creates nothing per request: no span, no attribute, no clock read.
///
/// Cheap to clone: clones share the providers.
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Inner>,
}

struct Inner {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    tracer: SdkTracer,
    duration: Durations,
    propagator: TextMapCompositePropagator,
    /// With the telemetry's own OTLP export ([`Telemetry::from_env`]), where request spans go
    /// without the SDK's span.
    direct: Option<Arc<Direct>>,
    shut_down: Once,
}

/// Why telemetry could not be set up or shut down.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TelemetryError(String);

impl Telemetry {
    /// Telemetry exported by OTLP over HTTP (`http/protobuf`) as the standard `OTEL_*` variables
    /// say (see [`Telemetry`]); `service.name` defaults to the executable's
    /// name. Spans go in batches, metrics every `OTEL_METRIC_EXPORT_INTERVAL` (60 s), and both on
    /// [`shutdown`](Self::shutdown).
    pub fn from_env() -> Result<Telemetry, TelemetryError> {
        let exe = std::env::current_exe().ok();
        let name =
            exe.as_deref().and_then(|p| p.file_stem()).and_then(|n| n.to_str()).unwrap_or("mcp-server");
        Self::build_from_env(name, None)
    }

    /// [`from_env`](Self::from_env) with this `service.name` and `service.version`, unless
    /// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` set them. The command line passes the
    /// server's name and version.
    pub fn from_env_as(service_name: &str, service_version: &str) -> Result<Telemetry, TelemetryError> {
        Self::build_from_env(service_name, Some(service_version))
    }

    /// Whether the environment asks for telemetry: `OTEL_EXPORTER_OTLP_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (and `OTEL_SDK_DISABLED` is not `true`). The
    /// command line turns telemetry on by itself when it does.
    pub fn enabled_by_env() -> bool {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        !sdk_disabled() && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    }

    fn build_from_env(
        service_name: &str,
        service_version: Option<&str>,
    ) -> Result<Telemetry, TelemetryError> {
        let resource = resource(service_name, service_version);
        let disabled = sdk_disabled();
        let mut traces = SdkTracerProvider::builder().with_resource(resource.clone());
        let mut queue = None;
        if !disabled && exporter_wanted("OTEL_TRACES_EXPORTER")? {
            let processor = otlp::Config::from_env()
                .and_then(|config| Ok((config, otlp::Batching::from_env()?)))
                .and_then(|(config, batching)| otlp::OtlpSpanProcessor::new(config, batching))
                .map_err(|e| TelemetryError(format!("cannot set up the OTLP span exporter: {e}")))?;
            queue = Some(processor.queue());
            traces = traces.with_span_processor(processor);
        }
        let mut metrics = SdkMeterProvider::builder().with_resource(resource);
        if !disabled && exporter_wanted("OTEL_METRICS_EXPORTER")? {
            use opentelemetry_otlp::WithHttpConfig as _;
            let mut builder = opentelemetry_otlp::MetricExporter::builder().with_http();
            if let Some(client) = plain_metrics_client() {
                builder = builder.with_http_client(client);
            }
            let exporter = builder
                .build()
                .map_err(|e| TelemetryError(format!("cannot set up the OTLP metric exporter: {e}")))?;
            metrics = metrics.with_periodic_exporter(exporter);
        }
        Ok(Self::with_direct(traces.build(), metrics.build(), |scope| {
            queue.map(|queue| Direct::from_env(queue, scope.clone()))
        }))
    }

    /// Telemetry of providers you built: your exporters, processors, sampler and resource (the
    /// SDK's in-memory exporters in tests). Request spans are the SDK's spans, so that your
    /// processors see them. [`shutdown`](Self::shutdown) shuts them down.
    pub fn new(tracer_provider: SdkTracerProvider, meter_provider: SdkMeterProvider) -> Telemetry {
        Self::with_direct(tracer_provider, meter_provider, |_| None)
    }

    /// The telemetry of these providers, whose request spans are recorded by `direct` (given the
    /// telemetry's instrumentation scope) if it makes one: `from_env`'s, queued to its own OTLP
    /// processor in `tracer_provider` without the SDK's span. Else they are the SDK's spans.
    fn with_direct(
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
        direct: impl FnOnce(&InstrumentationScope) -> Option<Direct>,
    ) -> Telemetry {
        let scope =
            InstrumentationScope::builder("mcp-tools").with_version(env!("CARGO_PKG_VERSION")).build();
        let tracer = tracer_provider.tracer_with_scope(scope.clone());
        let duration = meter_provider
            .meter_with_scope(scope.clone())
            .f64_histogram(DURATION)
            .with_unit("s")
            .with_description("MCP request duration, from its arrival to its answer")
            .with_boundaries(BUCKETS.to_vec())
            .build();
        let propagator = TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]);
        let direct = direct(&scope).map(Arc::new);
        Telemetry {
            inner: Arc::new(Inner {
                direct,
                tracer_provider,
                meter_provider,
                tracer,
                duration: Durations::new(duration),
                propagator,
                shut_down: Once::new(),
            }),
        }
    }

    /// The `tracing` layer that turns the handlers' `tracing` spans (and the events inside
    /// them) into OpenTelemetry spans of this telemetry's tracer, children of their request's
    /// span: add it to your subscriber (the command line does; without it a request still has
    /// its span, but its handler's spans are not exported). It takes spans and events at `INFO` and above (not those of the
    /// OpenTelemetry and HTTP client crates, which export them); give your other layers their
    /// own filters ([`Layer::with_filter`]), as a filter on the whole subscriber below `INFO`
    /// would turn the request spans off.
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        // Targets are prefixes: `opentelemetry` is also `opentelemetry_sdk`, `opentelemetry-otlp`…
        let exporters = ["opentelemetry", "reqwest", "hyper", "h2", super::otlp::LOG_TARGET]
            .map(|target| (target, LevelFilter::OFF));
        let filter = Targets::new().with_default(LevelFilter::INFO).with_targets(exporters);
        // No timing of the time between polls, no thread attributes: they cost each poll and
        // every span, for little a request needs.
        tracing_opentelemetry::layer()
            .with_tracer(self.inner.tracer.clone())
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_filter(filter)
    }

    /// The tracer provider (to add tracers of your own, or flush).
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.inner.tracer_provider
    }

    /// The meter provider (to add metrics of your own, or flush).
    pub fn meter_provider(&self) -> &SdkMeterProvider {
        &self.inner.meter_provider
    }

    /// Exports the spans and metrics recorded so far.
    pub fn force_flush(&self) -> Result<(), TelemetryError> {
        let traces = self.inner.tracer_provider.force_flush();
        let metrics = self.inner.meter_provider.force_flush();
        traces.and(metrics).map_err(|e| TelemetryError(format!("telemetry: flushing failed: {e}")))
    }

    /// Exports what is left and shuts the providers down; later calls do nothing. The command
    /// line calls it when the server stops.
    pub fn shutdown(&self) -> Result<(), TelemetryError> {
        let mut result = Ok(());
        self.inner.shut_down.call_once(|| {
            let traces = self.inner.tracer_provider.shutdown();
            let metrics = self.inner.meter_provider.shutdown();
            result = traces
                .and(metrics)
                .map_err(|e| TelemetryError(format!("telemetry: shutting down failed: {e}")));
        });
        result
    }

    /// The telemetry a server's observer is, if it is one.
    pub(crate) fn of(observer: &dyn Observer) -> Option<&Telemetry> {
        (observer as &dyn std::any::Any).downcast_ref::<Telemetry>()
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

/// The metric exporter's HTTP client, when its endpoint is `http://` (the default): one that
/// loads no TLS root certificates (see `otlp::blocking_client`), with the timeout the variables
/// give. `None` (opentelemetry-otlp makes its client) for an `https://` endpoint, or variables
/// opentelemetry-otlp reads its own way (a compression).
fn plain_metrics_client() -> Option<reqwest::blocking::Client> {
    let config = super::otlp::Config::from_env_for(super::otlp::Signal::Metrics).ok()?;
    if config.endpoint.scheme() != "http" {
        return None;
    }
    super::otlp::blocking_client(config.timeout, true).ok()
}

/// `OTEL_SDK_DISABLED=true`: the SDK exports nothing.
fn sdk_disabled() -> bool {
    std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Whether `OTEL_TRACES_EXPORTER` (or `OTEL_METRICS_EXPORTER`) asks for OTLP (the default) or
/// for nothing (`none`).
fn exporter_wanted(variable: &str) -> Result<bool, TelemetryError> {
    match std::env::var(variable).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Err(_) | Ok("" | "otlp") => Ok(true),
        Ok("none") => Ok(false),
        Ok(other) => Err(TelemetryError(format!(
            "{variable}={other}: this server exports by OTLP only (set it to `otlp` or `none`)"
        ))),
    }
}

/// The SDK's resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the SDK's own), with
/// this name and version where the environment gives none.
fn resource(service_name: &str, service_version: Option<&str>) -> Resource {
    let from_env = EnvResourceDetector::new().detect();
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|n| !n.is_empty())
        || from_env.get(&Key::from_static_str("service.name")).is_some();
    let mut resource = Resource::builder();
    if !named {
        resource = resource.with_service_name(service_name.to_owned());
    }
    if let (Some(version), None) = (service_version, from_env.get(&Key::from_static_str("service.version"))) {
        resource = resource.with_attribute(KeyValue::new("service.version", version.to_owned()));
    }
    resource.build()
}

/// The W3C `traceparent` header's name.
static TRACEPARENT_HEADER: http::HeaderName = http::HeaderName::from_static("traceparent");

/// The W3C trace context and baggage a client put in `params._meta` (SEP-414).
#[derive(serde::Deserialize, Default)]
struct MetaCarrier<'a> {
    #[serde(borrow, default)]
    traceparent: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tracestate: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    baggage: Option<Cow<'a, str>>,
}

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent.as_deref(),
            "tracestate" => self.tracestate.as_deref(),
            "baggage" => self.baggage.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        let keys = [
            ("traceparent", &self.traceparent),
            ("tracestate", &self.tracestate),
            ("baggage", &self.baggage),
        ];
        keys.into_iter().filter(|(_, value)| value.is_some()).map(|(key, _)| key).collect()
    }
}

/// An HTTP request's headers, read by the propagators.
struct HeaderCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

impl Inner {
    /// The client's trace context from `_meta`, and from the HTTP headers.
    fn remote_parents(
        &self,
        request: &Begun<'_>,
    ) -> (Option<opentelemetry::Context>, Option<opentelemetry::Context>) {
        let valid = |cx: opentelemetry::Context| cx.span().span_context().is_valid().then_some(cx);
        // Most `_meta` carry no trace context (a progress token): it is read only when it does.
        static TRACEPARENT: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"traceparent\""));
        let from_meta = request
            .meta
            .filter(|meta| TRACEPARENT.find(meta.get().as_bytes()).is_some())
            .and_then(|meta| serde_json::from_str::<MetaCarrier<'_>>(meta.get()).ok())
            .filter(|carrier| carrier.traceparent.is_some())
            .and_then(|carrier| valid(self.propagator.extract(&carrier)));
        let from_headers = request
            .http
            // A header name made once: one given as text would be parsed at every request.
            .filter(|http| http.headers.contains_key(&TRACEPARENT_HEADER))
            .and_then(|http| valid(self.propagator.extract(&HeaderCarrier(&http.headers))));
        (from_meta, from_headers)
    }
}

impl Observer for Telemetry {
    fn begin(&self, request: &Begun<'_>, began: Instant) -> Arc<Observed> {
        let (tool, prompt, resource) = match request.method {
            "tools/call" => (request.target, None, None),
            "prompts/get" => (None, request.target, None),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                (None, None, request.target)
            }
            _ => (None, None, None),
        };
        // A tool or prompt the telemetry knows shares its name and its spans' name.
        let known = match (tool, prompt) {
            (Some(tool), _) => self.inner.duration.known(false, tool),
            (None, Some(prompt)) => self.inner.duration.known(true, prompt),
            (None, None) => None,
        };
        let name: Cow<'static, str> = match (known.as_ref().and_then(|k| k.span_name), tool.or(prompt)) {
            (Some(name), _) => Cow::Borrowed(name),
            (_, Some(target)) => {
                let mut name = String::with_capacity(request.method.len() + 1 + target.len());
                name.push_str(request.method);
                name.push(' ');
                name.push_str(target);
                Cow::Owned(name)
            }
            (_, None) => Cow::Owned(request.method.to_owned()),
        };
        let (method_index, method) = known_method(request.method);
        // The metric's attributes (low cardinality), which the span has too. A name is shared by
        // the two (one allocation, cloned by reference count).
        let metric = Metric {
            method,
            method_index,
            http: request.http.is_some(),
            target: match &known {
                Some(known) => Some(known.name.clone()),
                None => tool.or(prompt).map(Arc::<str>::from),
            },
            known,
        };
        let version = request.protocol_version.map(known_version);
        let attributes = SpanAttributes {
            metric: metric.clone(),
            id: request.id.clone(),
            resource: resource.map(Box::from),
            version: version.clone(),
            session: request.session_id.map(Box::from),
            peer: request
                .http
                .and_then(|http| http.peer_addr)
                .map(|peer| (client_address(peer.ip()), peer.port())),
        };
        let (from_meta, from_headers) = self.inner.remote_parents(request);
        let mut links = Vec::new();
        if let (Some(meta), Some(headers)) = (&from_meta, &from_headers) {
            // The transport's context, when the client's MCP context is another: a link.
            let transport = headers.span().span_context().clone();
            if meta.span().span_context().span_id() != transport.span_id() {
                links.push(Link::with_context(transport));
            }
        }
        let parent = from_meta.or(from_headers).unwrap_or_default();
        // The span's end is its start plus the request's duration, as the metric measures it:
        // one clock read less.
        let start = SystemTime::now();
        let context = match &self.inner.direct {
            // The telemetry's own OTLP export: the span is recorded without the SDK's span.
            Some(direct) => direct.start(&parent, name, start, attributes, links),
            None => {
                let span = self
                    .inner
                    .tracer
                    .span_builder(name)
                    .with_start_time(start)
                    .with_kind(SpanKind::Server)
                    .with_attributes(attributes.key_values())
                    .with_links(links)
                    .start_with_context(&self.inner.tracer, &parent);
                parent.with_span(span)
            }
        };
        let protocol_version = version.map_or_else(OnceLock::new, OnceLock::from);
        Observed::new(began, Request { inner: self.inner.clone(), context, start, metric, protocol_version })
    }
}

/// What a request's span is attributed with when it begins, in this order: its metric's
/// attributes, then `jsonrpc.request.id`, `mcp.resource.uri`, `mcp.protocol.version`,
/// `mcp.session.id`, `client.address` and `client.port`. The SDK's span takes them as
/// [`key_values`](Self::key_values); the telemetry's own ([`request_span`]) writes them as they
/// are, most as bytes prepared once ([`Prepared`]).
struct SpanAttributes {
    metric: Metric,
    id: RequestId,
    resource: Option<Box<str>>,
    version: Option<(Option<u8>, Value)>,
    session: Option<Box<str>>,
    /// The client's address and port, over HTTP.
    peer: Option<(Arc<Address>, u16)>,
}

impl SpanAttributes {
    /// The attributes as the SDK's span takes them.
    fn key_values(&self) -> Vec<KeyValue> {
        // Room for all a span can have, those `end` adds included: the SDK keeps this vector.
        let mut attributes = Vec::with_capacity(14);
        self.metric.push_attributes(&mut attributes);
        // The id as text: a string id shared, a number written into an allocation of its size.
        let id = match &self.id {
            RequestId::Number(n) => StringValue::from(String::from(itoa::Buffer::new().format(*n))),
            RequestId::String(s) => StringValue::from(s.clone()),
        };
        attributes.push(KeyValue::new(REQUEST_ID, id));
        if let Some(resource) = &self.resource {
            attributes.push(KeyValue::new(RESOURCE_URI, String::from(resource.clone())));
        }
        if let Some((_, version)) = &self.version {
            attributes.push(KeyValue::new(PROTOCOL_VERSION, version.clone()));
        }
        if let Some(session) = &self.session {
            attributes.push(KeyValue::new(SESSION_ID, String::from(session.clone())));
        }
        if let Some((address, port)) = &self.peer {
            attributes.push(KeyValue::new(CLIENT_ADDRESS, StringValue::from(address.text.clone())));
            attributes.push(KeyValue::new(CLIENT_PORT, i64::from(*port)));
        }
        attributes
    }
}

impl request_span::Attributes for SpanAttributes {
    fn count(&self) -> usize {
        let metric = &self.metric;
        let target = match (&metric.target, metric.method_index == Some(TOOLS_CALL)) {
            (None, _) => 0,
            (Some(_), true) => 2,
            (Some(_), false) => 1,
        };
        3 + target
            + usize::from(metric.http)
            + usize::from(self.resource.is_some())
            + usize::from(self.version.is_some())
            + usize::from(self.session.is_some())
            + 2 * usize::from(self.peer.is_some())
    }

    fn write(&self, out: &mut Vec<u8>, at_most: usize) {
        let prepared = &*PREPARED;
        let mut left = at_most;
        let mut room = || left.checked_sub(1).map(|l| left = l).is_some();
        let metric = &self.metric;
        if room() {
            match metric.method_index {
                Some(i) => out.extend_from_slice(&prepared.methods[usize::from(i)]),
                None => otlp::attribute(out, METHOD, &metric.method),
            }
        }
        if room() {
            out.extend_from_slice(&prepared.transports[usize::from(metric.http)]);
        }
        if let Some(target) = &metric.target {
            // A known tool's or prompt's attribute is written already.
            let name = |out: &mut Vec<u8>, key| match &metric.known {
                Some(known) => out.extend_from_slice(&known.attribute),
                None => otlp::attribute_text(out, key, target),
            };
            if metric.method_index == Some(TOOLS_CALL) {
                if room() {
                    name(out, TOOL);
                }
                if room() {
                    out.extend_from_slice(&prepared.operation);
                }
            } else if room() {
                name(out, PROMPT);
            }
        }
        if metric.http && room() {
            out.extend_from_slice(&prepared.protocol_name);
        }
        if room() {
            match &self.id {
                RequestId::Number(n) => otlp::attribute_text(out, REQUEST_ID, itoa::Buffer::new().format(*n)),
                RequestId::String(s) => otlp::attribute_text(out, REQUEST_ID, s),
            }
        }
        if let Some(resource) = &self.resource
            && room()
        {
            otlp::attribute_text(out, RESOURCE_URI, resource);
        }
        if let Some(version) = &self.version
            && room()
        {
            match version {
                (Some(i), _) => out.extend_from_slice(&prepared.versions[usize::from(*i)]),
                (None, version) => otlp::attribute(out, PROTOCOL_VERSION, version),
            }
        }
        if let Some(session) = &self.session
            && room()
        {
            otlp::attribute_text(out, SESSION_ID, session);
        }
        if let Some((address, port)) = &self.peer {
            if room() {
                out.extend_from_slice(&address.attribute);
            }
            if room() {
                otlp::attribute_int(out, CLIENT_PORT, i64::from(*port));
            }
        }
    }
}

/// The attributes whose value is one of a few, written once ([`SpanAttributes::write`]).
struct Prepared {
    /// `mcp.method.name` of each of [`METHODS`].
    methods: Vec<Vec<u8>>,
    /// `network.transport`: `pipe` (stdio), `tcp` (HTTP).
    transports: [Vec<u8>; 2],
    /// `gen_ai.operation.name` = `execute_tool`.
    operation: Vec<u8>,
    /// `network.protocol.name` = `http`.
    protocol_name: Vec<u8>,
    /// `mcp.protocol.version` of each supported revision.
    versions: Vec<Vec<u8>>,
}

static PREPARED: std::sync::LazyLock<Prepared> = std::sync::LazyLock::new(|| {
    let text = |key: &str, value: &str| {
        let mut out = Vec::new();
        otlp::attribute_text(&mut out, key, value);
        out
    };
    Prepared {
        methods: METHODS.iter().map(|method| text(METHOD, method)).collect(),
        transports: [text(TRANSPORT, "pipe"), text(TRANSPORT, "tcp")],
        operation: text(OPERATION, "execute_tool"),
        protocol_name: text(PROTOCOL_NAME, "http"),
        versions: crate::protocol::SUPPORTED_PROTOCOL_VERSIONS
            .iter()
            .map(|version| text(PROTOCOL_VERSION, version))
            .collect(),
    }
});

/// The attributes' names, after the MCP semantic conventions.
const METHOD: &str = "mcp.method.name";
const TRANSPORT: &str = "network.transport";
const TOOL: &str = "gen_ai.tool.name";
const OPERATION: &str = "gen_ai.operation.name";
const PROMPT: &str = "gen_ai.prompt.name";
const PROTOCOL_NAME: &str = "network.protocol.name";
const REQUEST_ID: &str = "jsonrpc.request.id";
const RESOURCE_URI: &str = "mcp.resource.uri";
const PROTOCOL_VERSION: &str = "mcp.protocol.version";
const SESSION_ID: &str = "mcp.session.id";
const CLIENT_ADDRESS: &str = "client.address";
const CLIENT_PORT: &str = "client.port";
const ERROR_TYPE: &str = "error.type";
const STATUS_CODE: &str = "rpc.response.status_code";

/// A method's name as an attribute value (the protocol's own without copying it), and its
/// place among [`METHODS`] when it is one of them.
fn known_method(method: &str) -> (Option<u8>, Value) {
    match METHODS.iter().position(|known| *known == method) {
        Some(i) => (u8::try_from(i).ok(), Value::from(METHODS[i])),
        None => (None, Value::from(method.to_owned())),
    }
}

/// The methods whose names are attribute values without a copy.
const METHODS: [&str; 20] = [
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "server/discover",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/list",
    "tasks/result",
];

/// A protocol revision as an attribute value (the known ones without copying them), and its
/// place among the supported revisions when it is one of them.
fn known_version(version: &str) -> (Option<u8>, Value) {
    let known = crate::protocol::SUPPORTED_PROTOCOL_VERSIONS;
    match known.iter().position(|known| *known == version) {
        Some(i) => (u8::try_from(i).ok(), Value::from(known[i])),
        None => (None, Value::from(version.to_owned())),
    }
}

/// A client's IP address: as text, and as the span attribute `client.address` written.
struct Address {
    text: Arc<str>,
    attribute: Box<[u8]>,
}

/// A client's IP address as an attribute. Consecutive requests on a thread mostly come from one
/// address (a client's connection, or the proxy in front): the last one is kept, per thread, and
/// shared.
fn client_address(ip: IpAddr) -> Arc<Address> {
    thread_local! {
        static LAST: RefCell<Option<(IpAddr, Arc<Address>)>> = const { RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((kept, address)) if *kept == ip => address.clone(),
        _ => {
            let text: Arc<str> = ip.to_string().into();
            let mut attribute = Vec::new();
            otlp::attribute_text(&mut attribute, CLIENT_ADDRESS, &text);
            let address = Arc::new(Address { text, attribute: attribute.into() });
            *last = Some((ip, address.clone()));
            address
        }
    })
}

/// What a request's `mcp.server.operation.duration` measurement is attributed with, as far as
/// known when it begins (the revision and the outcome come later).
#[derive(Clone)]
struct Metric {
    method: Value,
    /// The method's place among [`METHODS`].
    method_index: Option<u8>,
    /// Over HTTP (else stdio).
    http: bool,
    /// The tool's (`tools/call`) or prompt's (`prompts/get`) name.
    target: Option<Arc<str>>,
    /// That name as [`Durations`] keeps it, once a request naming it has succeeded.
    known: Option<Arc<Target>>,
}

impl Metric {
    /// The attributes known when the request begins.
    fn push_attributes(&self, attributes: &mut Vec<KeyValue>) {
        attributes.push(KeyValue::new(METHOD, self.method.clone()));
        attributes.push(KeyValue::new(TRANSPORT, if self.http { "tcp" } else { "pipe" }));
        if let Some(target) = &self.target {
            let name = Value::from(StringValue::from(target.clone()));
            if self.method_index == Some(TOOLS_CALL) {
                attributes.push(KeyValue::new(TOOL, name));
                attributes.push(KeyValue::new(OPERATION, "execute_tool"));
            } else {
                attributes.push(KeyValue::new(PROMPT, name));
            }
        }
        if self.http {
            attributes.push(KeyValue::new(PROTOCOL_NAME, "http"));
        }
    }

    /// All the measurement's attributes.
    fn attributes(&self, version: Option<&Value>, outcome: Outcome) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(8);
        self.push_attributes(&mut attributes);
        if let Some(version) = version {
            attributes.push(KeyValue::new(PROTOCOL_VERSION, version.clone()));
        }
        if let Some(error_type) = error_type(outcome) {
            attributes.push(KeyValue::new(ERROR_TYPE, error_type));
        }
        if let Outcome::Error(code) = outcome {
            attributes.push(KeyValue::new(STATUS_CODE, code.to_string()));
        }
        attributes
    }

    /// The attribute set but for the target's name, as one number: the key of a handle bound
    /// to it. `None` for the sets no handle is bound to: an unknown method or revision, and a
    /// JSON-RPC error (an unknown tool's name is the caller's choice).
    fn code(&self, version: Option<u8>, outcome: Outcome) -> Option<u32> {
        let outcome = match outcome {
            Outcome::Answered => 0,
            Outcome::ToolError => 1,
            Outcome::Cancelled => 2,
            Outcome::Error(_) => return None,
        };
        let version = match version {
            Some(i) => u32::from(i) + 1,
            None => 0,
        };
        Some(u32::from(self.method_index?) | u32::from(self.http) << 8 | outcome << 9 | version << 12)
    }
}

/// `tools/call`'s and `prompts/get`'s places among [`METHODS`].
const TOOLS_CALL: u8 = 0;
const PROMPTS_GET: u8 = 10;

/// The value of `error.type` for an outcome, if it is a failure.
fn error_type(outcome: Outcome) -> Option<Value> {
    match outcome {
        Outcome::Answered => None,
        Outcome::ToolError => Some("tool_error".into()),
        Outcome::Error(code) => Some(code.to_string().into()),
        Outcome::Cancelled => Some("cancelled".into()),
    }
}

/// The most attribute sets [`Durations`] binds a handle to; measurements of further sets go
/// through the SDK's attribute lookup.
const MAX_BOUND: usize = 512;
/// The most tool names, and prompt names, [`Durations`] keeps.
const MAX_TARGETS: usize = 512;

/// The request-duration histogram, with handles bound to the attribute sets it has recorded
/// (the SDK's bound instruments): recording through one costs no hashing or comparing of the
/// attributes, which was most of what the metric cost a request (bench/middleware.md). At most
/// [`MAX_BOUND`] of them, and never for a JSON-RPC error (where a tool's or prompt's name is
/// whatever the caller sent).
///
/// It also keeps the names of the tools and prompts of requests that succeeded (at most
/// [`MAX_TARGETS`] of each), with their spans' name: a request naming one shares them instead of
/// allocating its own, which the span exporter's thread would free.
struct Durations {
    histogram: Histogram<f64>,
    /// Tools' names (`[0]`) and prompts' (`[1]`).
    targets: [RwLock<Kept>; 2],
    /// The handles of requests that name no tool or prompt.
    untargeted: Handles,
    /// How many handles there are in all.
    count: AtomicUsize,
}

/// Tools' or prompts' names, as [`Durations`] keeps them.
type Kept = HashMap<Box<str>, Arc<Target>, foldhash::fast::RandomState>;

/// A tool's or prompt's name, kept by [`Durations`].
struct Target {
    name: Arc<str>,
    /// `tools/call {name}` or `prompts/get {name}` ([`span_name`]).
    span_name: Option<&'static str>,
    /// The handles of its requests' attribute sets.
    handles: Handles,
    /// Its span attribute (`gen_ai.tool.name` or `gen_ai.prompt.name`) written.
    attribute: Box<[u8]>,
}

/// Handles bound to attribute sets, by [`Metric::code`].
#[derive(Default)]
struct Handles(RwLock<Vec<(u32, BoundHistogram<f64>)>>);

impl Durations {
    fn new(histogram: Histogram<f64>) -> Durations {
        Durations {
            histogram,
            targets: Default::default(),
            untargeted: Handles::default(),
            count: AtomicUsize::new(0),
        }
    }

    /// The tool's (`prompt` false) or prompt's name as kept, if it is.
    fn known(&self, prompt: bool, name: &str) -> Option<Arc<Target>> {
        self.targets[usize::from(prompt)].read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    /// Keeps a tool's or prompt's name (unless there are [`MAX_TARGETS`] already: then the
    /// names met later take no write lock at every request).
    fn keep(&self, prompt: bool, name: &Arc<str>) -> Option<Arc<Target>> {
        let targets = &self.targets[usize::from(prompt)];
        {
            let kept = targets.read().unwrap_or_else(|e| e.into_inner());
            if let Some(target) = kept.get(&**name) {
                return Some(target.clone());
            }
            if kept.len() >= MAX_TARGETS {
                return None;
            }
        }
        let mut targets = targets.write().unwrap_or_else(|e| e.into_inner());
        if let Some(target) = targets.get(&**name) {
            return Some(target.clone());
        }
        if targets.len() >= MAX_TARGETS {
            return None;
        }
        let method = if prompt { "prompts/get" } else { "tools/call" };
        let mut attribute = Vec::new();
        otlp::attribute_text(&mut attribute, if prompt { PROMPT } else { TOOL }, name);
        let target = Arc::new(Target {
            name: name.clone(),
            span_name: span_name(method, name),
            handles: Handles::default(),
            attribute: attribute.into(),
        });
        targets.insert(name.as_ref().into(), target.clone());
        Some(target)
    }

    fn record(&self, seconds: f64, metric: &Metric, version: Option<&(Option<u8>, Value)>, outcome: Outcome) {
        let code = metric.code(version.and_then(|(i, _)| *i), outcome);
        let version = version.map(|(_, v)| v);
        let attributes = || metric.attributes(version, outcome);
        let Some(code) = code else {
            return self.histogram.record(seconds, &attributes());
        };
        let kept;
        let handles = match (&metric.target, &metric.known) {
            (None, _) => &self.untargeted,
            (Some(_), Some(known)) => &known.handles,
            (Some(name), None) => match self.keep(metric.method_index == Some(PROMPTS_GET), name) {
                Some(target) => {
                    kept = target;
                    &kept.handles
                }
                None => return self.histogram.record(seconds, &attributes()),
            },
        };
        let find = |handles: &[(u32, BoundHistogram<f64>)]| {
            handles.iter().find(|(c, _)| *c == code).map(|(_, handle)| handle.clone())
        };
        if let Some(handle) = find(&handles.0.read().unwrap_or_else(|e| e.into_inner())) {
            return handle.record(seconds);
        }
        let attributes = attributes();
        if self.count.load(Ordering::Relaxed) >= MAX_BOUND {
            return self.histogram.record(seconds, &attributes);
        }
        let mut bound = handles.0.write().unwrap_or_else(|e| e.into_inner());
        let handle = match find(&bound) {
            Some(handle) => handle,
            None => {
                let handle = self.histogram.bind(&attributes);
                bound.push((code, handle.clone()));
                self.count.fetch_add(1, Ordering::Relaxed);
                handle
            }
        };
        drop(bound);
        handle.record(seconds);
    }
}

/// The most span names [`span_name`] keeps, in all.
const MAX_SPAN_NAMES: usize = 4096;

/// `{method} {name}`, kept for the life of the process (a span's name is `'static` or its own
/// allocation): at most [`MAX_SPAN_NAMES`] of them, shared by every telemetry.
fn span_name(method: &str, name: &str) -> Option<&'static str> {
    type Names = HashMap<(&'static str, Box<str>), &'static str>;
    static NAMES: std::sync::LazyLock<Mutex<Names>> = std::sync::LazyLock::new(Mutex::default);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let method = METHODS.iter().find(|known| **known == method)?;
    if let Some(kept) = names.get(&(*method, name.into())) {
        return Some(kept);
    }
    if names.len() >= MAX_SPAN_NAMES {
        return None;
    }
    let kept: &'static str = Box::leak(format!("{method} {name}").into_boxed_str());
    names.insert((method, name.into()), kept);
    Some(kept)
}

/// One request being watched: its trace context (its span in it), and what its measurement is
/// attributed with.
struct Request {
    inner: Arc<Inner>,
    context: opentelemetry::Context,
    /// When its span started.
    start: SystemTime,
    metric: Metric,
    protocol_version: OnceLock<(Option<u8>, Value)>,
}

impl Observation for Request {
    fn poll_in(
        &self,
        request: Pin<&mut (dyn Future<Output = ()> + Send)>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<()> {
        // The request runs with its span as the current OpenTelemetry context: the handler's
        // `tracing` spans (through `Telemetry::layer`) and its own OpenTelemetry spans are its
        // children.
        let _entered = self.context.clone().attach();
        request.poll(cx)
    }

    fn protocol_version(&self, version: &str) {
        let version = known_version(version);
        let value = version.1.clone();
        if self.protocol_version.set(version).is_ok() {
            self.context.span().set_attribute(KeyValue::new(PROTOCOL_VERSION, value));
        }
    }

    fn end(&self, outcome: Outcome, elapsed: Duration) {
        let span = self.context.span();
        if let Some(error_type) = error_type(outcome) {
            span.set_attribute(KeyValue::new(ERROR_TYPE, error_type));
            span.set_status(Status::error(match outcome {
                Outcome::ToolError => "the tool returned an error result",
                Outcome::Cancelled => "the request was cancelled",
                _ => "",
            }));
        }
        if let Outcome::Error(code) = outcome {
            span.set_attribute(KeyValue::new(STATUS_CODE, code.to_string()));
        }
        self.inner.duration.record(elapsed.as_secs_f64(), &self.metric, self.protocol_version.get(), outcome);
        span.end_with_timestamp(self.start + elapsed);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    /// `_meta` as it reaches [`Observer::begin`].
    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn a_client_address_is_the_requests_own() {
        let text = |ip: &str| client_address(ip.parse().unwrap()).text.to_string();
        for ip in ["127.0.0.1", "127.0.0.1", "::1", "10.0.0.7", "10.0.0.7", "127.0.0.1"] {
            assert_eq!(text(ip), ip);
        }
    }

    #[test]
    fn every_bound_attribute_set_has_a_code_of_its_own() {
        let mut seen = std::collections::HashSet::new();
        let versions = crate::protocol::SUPPORTED_PROTOCOL_VERSIONS.len();
        for method in 0..METHODS.len() {
            for http in [false, true] {
                let metric = Metric {
                    method: Value::from(""),
                    method_index: Some(method as u8),
                    http,
                    target: None,
                    known: None,
                };
                for version in std::iter::once(None).chain((0..versions).map(|v| Some(v as u8))) {
                    for outcome in [Outcome::Answered, Outcome::ToolError, Outcome::Cancelled] {
                        let code = metric.code(version, outcome).expect("a code");
                        assert!(seen.insert(code), "{method} {http} {version:?} {outcome:?}");
                    }
                    // A JSON-RPC error is never bound.
                    assert_eq!(metric.code(version, Outcome::Error(-32602)), None);
                }
            }
        }
        assert_eq!(
            (METHODS[usize::from(TOOLS_CALL)], METHODS[usize::from(PROMPTS_GET)]),
            ("tools/call", "prompts/get")
        );
        let unknown =
            Metric { method: Value::from("x"), method_index: None, http: false, target: None, known: None };
        assert_eq!(unknown.code(None, Outcome::Answered), None);
    }

    #[test]
    fn the_trace_context_is_read_from_meta_and_headers() {
        let telemetry =
            Telemetry::new(SdkTracerProvider::builder().build(), SdkMeterProvider::builder().build());
        let meta = raw(
            r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"rojo=1","other":{"x":1}}"#,
        );
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".parse().unwrap(),
        );
        let http = crate::context::HttpParts { headers, peer_addr: None, session_id: None, auth: None };
        let id = RequestId::Number(1);
        let begun = Begun {
            method: "tools/call",
            id: &id,
            target: Some("t"),
            protocol_version: None,
            session_id: None,
            meta: Some(&meta),
            http: Some(&http),
        };
        let (from_meta, from_headers) = telemetry.inner.remote_parents(&begun);
        let from_meta = from_meta.expect("a context from _meta");
        let cx = from_meta.span().span_context().clone();
        assert_eq!(cx.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(cx.span_id().to_string(), "00f067aa0ba902b7");
        assert!(cx.is_remote() && cx.is_sampled());
        assert_eq!(cx.trace_state().get("rojo"), Some("1"));
        let from_headers = from_headers.expect("a context from the headers");
        assert_eq!(
            from_headers.span().span_context().trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );

        // A malformed traceparent, or none, is no parent.
        let bad = raw(r#"{"traceparent":"00-zz-yy-01"}"#);
        let none = raw(r#"{"progressToken":1}"#);
        for meta in [&bad, &none] {
            let begun = Begun { meta: Some(meta), http: None, ..begun };
            assert!(telemetry.inner.remote_parents(&begun).0.is_none());
        }
    }

    /// One request as the tests below watch it.
    struct Case<'a> {
        begun: Begun<'a>,
        /// The revision, learnt after the request began.
        later_version: Option<&'static str>,
        /// Its handler adds an attribute, an event, a link and a status to the request's span.
        handler: bool,
        outcome: Outcome,
    }

    /// Watches the request as a server does: begun, polled in its context, ended.
    fn watch(telemetry: &Telemetry, case: &Case<'_>) {
        let observed = telemetry.begin(&case.begun, Instant::now());
        if case.handler {
            let handler = async {
                use opentelemetry::trace::TraceContextExt as _;
                let cx = opentelemetry::Context::current();
                let span = cx.span();
                span.set_attribute(KeyValue::new("weather.city", "Paris"));
                span.add_event("retry", vec![KeyValue::new("attempt", 2)]);
                span.add_link(cx.span().span_context().clone(), vec![KeyValue::new("why", "self")]);
                span.set_status(Status::Ok);
            };
            let watched = std::pin::pin!(crate::dispatch::observe::Watched::new(observed.clone(), handler));
            let mut context = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(watched.poll(&mut context).is_ready());
        }
        if let Some(version) = case.later_version {
            observed.protocol_version(version);
        }
        observed.end(case.outcome);
    }

    /// The same requests watched by a telemetry of the SDK's spans (exported by the SDK's
    /// in-memory exporter) and by one recording its own (exported by its processor to a
    /// collector), with these span limits.
    struct Both {
        sdk: Telemetry,
        exporter: opentelemetry_sdk::trace::InMemorySpanExporter,
        direct: Telemetry,
        received: std::sync::mpsc::Receiver<(String, String, Vec<u8>)>,
    }

    impl Both {
        fn new(limits: opentelemetry_sdk::trace::SpanLimits) -> Both {
            let exporter = opentelemetry_sdk::trace::InMemorySpanExporter::default();
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(exporter.clone())
                .with_span_limits(limits)
                .build();
            let sdk = Telemetry::new(provider, SdkMeterProvider::builder().build());
            let (endpoint, received) = otlp::collector(200);
            let batching =
                otlp::Batching { max_queue: 1000, max_batch: 1000, delay: Duration::from_secs(3600) };
            let processor = otlp::OtlpSpanProcessor::new(otlp::config(&endpoint), batching).unwrap();
            let queue = processor.queue();
            let provider = SdkTracerProvider::builder().with_span_processor(processor).build();
            let direct = Telemetry::with_direct(provider, SdkMeterProvider::builder().build(), |scope| {
                let mut config = opentelemetry_sdk::trace::Config::default();
                config.span_limits = limits;
                Some(Direct::new(queue, scope.clone(), config))
            });
            assert!(direct.inner.direct.is_some() && sdk.inner.direct.is_none());
            Both { sdk, exporter, direct, received }
        }

        fn watch(&self, cases: &[Case<'_>]) {
            for telemetry in [&self.sdk, &self.direct] {
                cases.iter().for_each(|case| watch(telemetry, case));
            }
        }

        /// The spans each exported, as protobuf (the SDK's converted by opentelemetry-proto),
        /// without what differs from one span to the next: its own id and times, a root's new
        /// trace, and the ids of a link to itself.
        fn spans(&self) -> [Vec<opentelemetry_proto::tonic::trace::v1::Span>; 2] {
            use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
            use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
            use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
            use prost::Message as _;

            let theirs = group_spans_by_resource_and_scope(
                self.exporter.get_finished_spans().unwrap(),
                &ResourceAttributesWithSchema::default(),
            );
            self.direct.force_flush().unwrap();
            let (_, _, body) = self.received.recv_timeout(Duration::from_secs(10)).unwrap();
            let ours = ExportTraceServiceRequest::decode(body.as_slice()).unwrap().resource_spans;
            [theirs, ours].map(|requests| {
                let spans = requests.into_iter().flat_map(|r| r.scope_spans).flat_map(|s| s.spans);
                let same = |mut span: opentelemetry_proto::tonic::trace::v1::Span| {
                    span.span_id.clear();
                    (span.start_time_unix_nano, span.end_time_unix_nano) = (0, 0);
                    span.events.iter_mut().for_each(|event| event.time_unix_nano = 0);
                    for link in &mut span.links {
                        if link.trace_id == span.trace_id && link.attributes.iter().any(|a| a.key == "why") {
                            (link.trace_id, link.span_id) = (Vec::new(), Vec::new());
                        }
                    }
                    if span.parent_span_id.is_empty() {
                        span.trace_id.clear();
                    }
                    span
                };
                spans.map(same).collect()
            })
        }
    }

    /// A client's trace context, in `_meta` (`sampled` or not) and in an HTTP request's header.
    fn trace_context(sampled: bool) -> (Box<RawValue>, crate::context::HttpParts) {
        let flags = if sampled { "01" } else { "00" };
        let meta = raw(&format!(
            r#"{{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-{flags}","tracestate":"rojo=1"}}"#
        ));
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".parse().unwrap(),
        );
        let peer = Some("10.1.2.3:4567".parse().unwrap());
        (meta, crate::context::HttpParts { headers, peer_addr: peer, session_id: None, auth: None })
    }

    #[test]
    fn a_request_span_is_the_same_with_or_without_the_sdks_span() {
        let both = Both::new(opentelemetry_sdk::trace::SpanLimits::default());
        let (sampled, traced) = trace_context(true);
        let (unsampled, _) = trace_context(false);
        let plain = crate::context::HttpParts {
            headers: http::HeaderMap::new(),
            peer_addr: None,
            session_id: None,
            auth: None,
        };
        let (seven, text) = (RequestId::Number(7), RequestId::String("request-7".into()));
        let begun = Begun {
            method: "tools/call",
            id: &seven,
            target: Some("weather"),
            protocol_version: Some("2025-11-25"),
            session_id: None,
            meta: None,
            http: None,
        };
        let case = |begun, outcome| Case { begun, later_version: None, handler: false, outcome };
        let cases = [
            // A tool not known yet, then known (its name shared), with a handler at work.
            case(begun, Outcome::Answered),
            Case { handler: true, ..case(begun, Outcome::Answered) },
            // Over HTTP: a parent from `_meta`, a link to the header's, a session, a peer.
            case(
                Begun { meta: Some(&sampled), http: Some(&traced), session_id: Some("s-1"), ..begun },
                Outcome::ToolError,
            ),
            case(
                Begun {
                    method: "prompts/get",
                    target: Some("greet"),
                    id: &text,
                    http: Some(&plain),
                    ..begun
                },
                Outcome::Error(-32602),
            ),
            case(
                Begun { method: "resources/read", target: Some("file:///a.txt"), ..begun },
                Outcome::Cancelled,
            ),
            Case {
                later_version: Some("2026-07-28"),
                ..case(
                    Begun { method: "initialize", target: None, protocol_version: None, ..begun },
                    Outcome::Answered,
                )
            },
            case(
                Begun { method: "x/custom", target: None, protocol_version: Some("1999-01-01"), ..begun },
                Outcome::Answered,
            ),
            // A parent that is not sampled: no span, either way.
            case(Begun { meta: Some(&unsampled), ..begun }, Outcome::Answered),
        ];
        both.watch(&cases);
        let [theirs, ours] = both.spans();
        assert_eq!(theirs.len(), cases.len() - 1, "every span but the unsampled one");
        for (theirs, ours) in theirs.iter().zip(&ours) {
            assert_eq!(theirs, ours);
        }
        assert_eq!(theirs.len(), ours.len());
        // The cases say what they should.
        let names: Vec<_> = ours.iter().map(|span| span.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tools/call weather",
                "tools/call weather",
                "tools/call weather",
                "prompts/get greet",
                "resources/read",
                "initialize",
                "x/custom"
            ]
        );
        assert_eq!(ours[1].events.len(), 1);
        assert_eq!(ours[2].links.len(), 1);
        assert_eq!(hex(&ours[2].trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(ours[2].trace_state, "rojo=1");
        assert_eq!(ours[2].attributes.len(), 11, "{:?}", ours[2].attributes);
        both.sdk.shutdown().unwrap();
        both.direct.shutdown().unwrap();
    }

    #[test]
    fn span_limits_apply_alike_with_or_without_the_sdks_span() {
        let both = Both::new(opentelemetry_sdk::trace::SpanLimits {
            max_attributes_per_span: 5,
            max_events_per_span: 0,
            max_links_per_span: 1,
            max_attributes_per_event: 1,
            max_attributes_per_link: 0,
        });
        let (meta, traced) = trace_context(true);
        let id = RequestId::Number(7);
        // Ten attributes known at the start, a link from the start, and a handler adding
        // more of each; then the error's attributes.
        let begun = Begun {
            method: "tools/call",
            id: &id,
            target: Some("weather"),
            protocol_version: Some("2025-11-25"),
            session_id: Some("s-1"),
            meta: Some(&meta),
            http: Some(&traced),
        };
        both.watch(&[Case { begun, later_version: None, handler: true, outcome: Outcome::Error(-32602) }]);
        let [theirs, ours] = both.spans();
        assert_eq!((theirs.len(), ours.len()), (1, 1));
        assert_eq!(theirs, ours);
        let ours = &ours[0];
        assert_eq!((ours.attributes.len(), ours.dropped_attributes_count), (5, 8));
        assert_eq!((ours.events.len(), ours.dropped_events_count), (0, 1));
        assert_eq!((ours.links.len(), ours.dropped_links_count), (1, 1));
        assert!(ours.links[0].attributes.is_empty());
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
