//! The span exporter of [`Telemetry::from_env`](super::Telemetry::from_env): OTLP over HTTP
//! (`http/protobuf`), the protobuf written straight from the SDK's span data.
//!
//! opentelemetry-otlp's span exporter copies every span into opentelemetry-proto's owned structs,
//! encodes those with prost and frees them again: about 17,000 instructions a span, on a thread
//! that shares the server's cores (bench/middleware.md). This one writes the same message (OTLP
//! 1.x `ExportTraceServiceRequest`) from the spans as they are. Its tests decode what it writes
//! with opentelemetry-proto and compare it with opentelemetry-proto's own conversion of the same
//! spans. Metrics are still exported by opentelemetry-otlp.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
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

/// How much of a collector's answer is read (and dropped): an `ExportTraceServiceResponse` is a
/// few bytes, or an error message.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// Sends batches of spans by OTLP over HTTP (see the module's documentation).
pub(crate) struct OtlpSpanExporter {
    config: Config,
    /// `None` once shut down.
    client: Mutex<Option<reqwest::blocking::Client>>,
    /// The `Resource` message (its attributes), written once.
    resource: Vec<u8>,
    resource_schema: String,
    /// The size of the last request, to size the next one's buffer.
    last_size: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for OtlpSpanExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the headers: they often carry a token.
        f.debug_struct("OtlpSpanExporter")
            .field("endpoint", &self.config.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl OtlpSpanExporter {
    pub fn new(config: Config) -> Result<OtlpSpanExporter, String> {
        let client = blocking_client(config.timeout, config.endpoint.scheme() == "http")?;
        Ok(OtlpSpanExporter {
            config,
            client: Mutex::new(Some(client)),
            resource: Vec::new(),
            resource_schema: String::new(),
            last_size: Default::default(),
        })
    }

    fn send(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let client = self.client.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let client = client.ok_or(OTelSdkError::AlreadyShutdown)?;
        let size = self.last_size.load(std::sync::atomic::Ordering::Relaxed).max(1024);
        let mut body = Vec::with_capacity(size + size / 8);
        encode_request(&self.resource, &self.resource_schema, &batch, &mut body);
        drop(batch);
        self.last_size.store(body.len(), std::sync::atomic::Ordering::Relaxed);
        let url = &self.config.endpoint;
        let response = client
            .post(url.clone())
            .headers(self.config.headers.clone())
            .header(CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .map_err(|e| {
                OTelSdkError::InternalFailure(format!("OTLP export: {}", crate::fetch_error::describe(&e)))
            })?;
        let status = response.status();
        // Read to the end (so that the connection is kept for the next batch), but no more than
        // an answer of OTLP needs: a collector's answer is not kept, and cannot fill the memory.
        let _ = std::io::copy(&mut std::io::Read::take(response, MAX_ANSWER_BYTES), &mut std::io::sink());
        if !status.is_success() {
            return Err(OTelSdkError::InternalFailure(format!(
                "OTLP export to {url}: the collector answered {status}"
            )));
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

impl SpanExporter for OtlpSpanExporter {
    fn export(&self, batch: Vec<SpanData>) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        // The SDK's batch processor calls this on its own thread and waits for it: sending
        // with the blocking client is what opentelemetry-otlp does there too.
        std::future::ready(self.send(batch))
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        match self.client.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(_) => Ok(()),
            None => Err(OTelSdkError::AlreadyShutdown),
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.resource.clear();
        for (key, value) in resource.iter() {
            message(&mut self.resource, 1, |out| key_value(out, key.as_str(), value));
        }
        self.resource_schema = resource.schema_url().unwrap_or_default().to_owned();
    }
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
/// scope (in the order they first come), the spans in the batch's order.
fn encode_request(resource: &[u8], resource_schema: &str, batch: &[SpanData], out: &mut Vec<u8>) {
    // Almost always one scope (mcp-tools'): each span's scope is found among the few seen.
    let mut scopes: Vec<&InstrumentationScope> = Vec::new();
    let mut scope_of = Vec::with_capacity(batch.len());
    let mut last = 0;
    for span in batch {
        let scope = &span.instrumentation_scope;
        if scopes.get(last).is_none_or(|seen| *seen != scope) {
            last = match scopes.iter().position(|seen| *seen == scope) {
                Some(index) => index,
                None => {
                    scopes.push(scope);
                    scopes.len() - 1
                }
            };
        }
        scope_of.push(last);
    }
    message(out, 1, |out| {
        message(out, 1, |out| out.extend_from_slice(resource));
        for (index, scope) in scopes.iter().enumerate() {
            message(out, 2, |out| {
                message(out, 1, |out| {
                    string(out, 1, scope.name());
                    string(out, 2, scope.version().unwrap_or_default());
                    attributes(out, 3, scope.attributes());
                });
                for (span, _) in batch.iter().zip(&scope_of).filter(|(_, of)| **of == index) {
                    message(out, 2, |out| encode_span(out, span));
                }
                string(out, 3, scope.schema_url().unwrap_or_default());
            });
        }
        string(out, 3, resource_schema);
    });
}

fn encode_span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    ids_and_state(out, context);
    if span.parent_span_id != SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    let kind = match span.span_kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    uint(out, 6, kind);
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    attributes(out, 9, &span.attributes);
    uint(out, 10, span.dropped_attributes_count.into());
    for event in &span.events.events {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            attributes(out, 3, &event.attributes);
            uint(out, 4, event.dropped_attributes_count.into());
        });
    }
    uint(out, 12, span.events.dropped_count.into());
    for link in &span.links.links {
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
    uint(out, 14, span.links.dropped_count.into());
    message(out, 15, |out| {
        let code = match &span.status {
            Status::Unset => 0,
            Status::Ok => 1,
            Status::Error { description } => {
                string(out, 2, description);
                2
            }
        };
        uint(out, 3, code);
    });
    fixed32(out, 16, span_flags(context.trace_flags().to_u8(), span.parent_span_is_remote));
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
        let mut exporter = OtlpSpanExporter {
            config: Config::from_vars(|_| None).unwrap(),
            client: Mutex::new(None),
            resource: Vec::new(),
            resource_schema: String::new(),
            last_size: Default::default(),
        };
        exporter.set_resource(resource);
        let mut ours = Vec::new();
        encode_request(&exporter.resource, &exporter.resource_schema, &batch, &mut ours);
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

    /// A collector: answers every request with `status` and hands each one (its first line, its
    /// headers in lower case, its body) to the test.
    fn collector(status: u16) -> (String, std::sync::mpsc::Receiver<(String, String, Vec<u8>)>) {
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

    #[test]
    fn the_sdk_exports_through_it_to_a_collector() {
        let (endpoint, received) = collector(200);
        let config = |endpoint: &str| {
            Config::from_vars(|name| match name {
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some(endpoint.to_owned()),
                "OTEL_EXPORTER_OTLP_HEADERS" => Some("authorization=Bearer%20s3cret".to_owned()),
                _ => None,
            })
            .unwrap()
        };
        let exporter = OtlpSpanExporter::new(config(&endpoint)).unwrap();
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_resource(Resource::builder_empty().with_service_name("weather").build())
            .with_batch_exporter(exporter)
            .build();
        use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
        let tracer = provider.tracer("mcp-tools");
        for name in ["first", "second"] {
            let mut span = tracer.start(name);
            span.set_attribute(KeyValue::new("n", 1));
            span.end();
        }
        provider.force_flush().unwrap();
        let (first, head, body) = received.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, "post /v1/traces http/1.1");
        assert!(head.contains("content-type: application/x-protobuf"), "{head}");
        assert!(head.contains("authorization: bearer s3cret"), "{head}");
        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        let resource = &request.resource_spans[0];
        let service = &resource.resource.as_ref().unwrap().attributes;
        assert!(service.iter().any(|kv| kv.key == "service.name"), "the resource is sent: {service:?}");
        let spans = &resource.scope_spans[0].spans;
        assert_eq!(spans.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["first", "second"]);
        provider.shutdown().unwrap();

        // A collector that refuses, and none at all: the SDK is told, with the reason.
        let (refusing, _requests) = collector(503);
        let exporter = OtlpSpanExporter::new(config(&refusing)).unwrap();
        let batch = || vec![span("ok", &InstrumentationScope::builder("s").build(), vec![])];
        let error = exporter.send(batch()).unwrap_err().to_string();
        assert!(error.contains("the collector answered 503"), "{error}");
        // A redirect is not followed (the spans and the headers stay with the configured origin).
        let (redirecting, requests) = collector(307);
        let exporter = OtlpSpanExporter::new(config(&redirecting)).unwrap();
        let error = exporter.send(batch()).unwrap_err().to_string();
        assert!(error.contains("the collector answered 307"), "{error}");
        assert_eq!(requests.try_iter().count(), 1, "one request, no second one after the redirect");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let exporter = OtlpSpanExporter::new(config(&format!("http://{closed}/v1/traces"))).unwrap();
        let error = exporter.send(batch()).unwrap_err().to_string();
        assert!(error.contains("cannot connect to"), "{error}");
        exporter.shutdown().unwrap();
        assert!(matches!(exporter.send(batch()), Err(OTelSdkError::AlreadyShutdown)));
    }
}
