//! Telemetry (`mcp_tools::middleware::Telemetry`, feature `otel`): the span of every request after
//! OpenTelemetry's MCP semantic conventions (name, kind, attributes, `error.type`), its parent
//! taken from `_meta.traceparent` or the HTTP `traceparent` header, the handler's own `tracing`
//! spans as its children, and the `mcp.server.operation.duration` metric; in both eras, in
//! process and over HTTP. The SDK's in-memory exporters receive what OTLP would be sent.

use std::collections::HashMap;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use mcp_tools::middleware::Telemetry;
use mcp_tools::testing::TestClient;
use mcp_tools::{
    HttpOptions, Prompt, PromptMessage, PromptResult, Resource, ResourceContents, Server, Tool, ToolError,
    ToolResult, tool,
};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, InMemoryMetricExporterBuilder, PeriodicReader, SdkMeterProvider, Temporality,
};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tower::ServiceExt as _;
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// The client's trace and span: the parent every server span below should have.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
/// Another client context, sent in the HTTP header.
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN: &str = "b7ad6b7169203331";

fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

/// Looks up the weather of a city (in a span of its own, with an event in it).
#[tool]
async fn weather(city: String) -> String {
    let lookup = tracing::info_span!("lookup", city = %city);
    async {
        tracing::info!("looking the city up");
        format!("sunny in {city}")
    }
    .instrument(lookup)
    .await
}

/// Always fails.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

/// Sleeps a while.
#[tool]
async fn nap(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "rested".to_owned()
}

/// In-memory exporters behind a telemetry, whose layer is this thread's `tracing` subscriber
/// while the harness lives (the tests run on a current-thread runtime).
struct Harness {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    telemetry: Telemetry,
    _subscriber: tracing::subscriber::DefaultGuard,
}

fn harness() -> Harness {
    let spans = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let metrics = InMemoryMetricExporter::default();
    let meter_provider =
        SdkMeterProvider::builder().with_reader(PeriodicReader::builder(metrics.clone()).build()).build();
    let telemetry = Telemetry::new(tracer_provider, meter_provider);
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    Harness { spans, metrics, telemetry, _subscriber: guard }
}

impl Harness {
    fn server(&self) -> Server {
        Server::builder()
            .telemetry(self.telemetry.clone())
            .prompt(Prompt::new("greet", "Greets.", |_, _| async {
                Ok(PromptResult::new(vec![PromptMessage::user("hello")]))
            }))
            .resource(Resource::fixed(
                "notes://today",
                "today",
                ResourceContents::text("notes://today", None, "x"),
            ))
            .build()
            .unwrap()
    }

    fn finished(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().unwrap()
    }

    /// The one finished span named `name`.
    fn span(&self, name: &str) -> SpanData {
        let spans = self.finished();
        let named: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(named.len(), 1, "one span named {name:?} among {:?}", names(&spans));
        named[0].clone()
    }

    /// The data points of `mcp.server.operation.duration`, after a flush.
    fn duration_points(&self) -> Vec<HistogramDataPoint<f64>> {
        self.telemetry.meter_provider().force_flush().unwrap();
        let mut points = Vec::new();
        for resource in self.metrics.get_finished_metrics().unwrap() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics().filter(|m| m.name() == "mcp.server.operation.duration") {
                    assert_eq!(metric.unit(), "s");
                    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                        panic!("mcp.server.operation.duration is an f64 histogram: {:?}", metric.data());
                    };
                    points = histogram.data_points().cloned().collect();
                }
            }
        }
        points
    }
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// The value of attribute `key` as text, if the span has it.
fn attribute(attributes: &[opentelemetry::KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

/// The attributes of the semantic conventions a span has, sorted.
fn conventions(span: &SpanData) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = span
        .attributes
        .iter()
        .filter(|kv| {
            let key = kv.key.as_str();
            ["mcp.", "gen_ai.", "jsonrpc.", "network.", "error.", "rpc.", "client."]
                .iter()
                .any(|p| key.starts_with(p))
        })
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect();
    found.sort();
    found
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> =
        expected.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    pairs.sort();
    pairs
}

/// A tools/call of `weather` with the client's trace context in `_meta`: the server span, and
/// the handler's span under it.
async fn call_with_trace_context(client: &TestClient, harness: &Harness, version: &str) {
    let id = client.send_request(
        "tools/call",
        json!({"name": "weather", "arguments": {"city": "Oslo"},
               "_meta": {"traceparent": traceparent(TRACE, CLIENT_SPAN), "tracestate": "vendor=1"}}),
    );
    let result = client.answer(id).await.unwrap();
    assert_eq!(result["content"][0]["text"], "sunny in Oslo");

    let server = harness.span("tools/call weather");
    assert_eq!(server.span_kind, SpanKind::Server);
    assert_eq!(server.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(server.parent_span_id, SpanId::from_hex(CLIENT_SPAN).unwrap());
    assert!(server.parent_span_is_remote);
    assert_eq!(server.span_context.trace_state().header(), "vendor=1");
    assert_eq!(server.status, Status::Unset);
    let id = id.to_string();
    assert_eq!(
        conventions(&server),
        pairs(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "weather"),
            ("gen_ai.operation.name", "execute_tool"),
            ("jsonrpc.request.id", &id),
            ("mcp.protocol.version", version),
            ("network.transport", "pipe"),
        ])
    );

    let lookup = harness.span("lookup");
    assert_eq!(lookup.span_kind, SpanKind::Internal);
    assert_eq!(lookup.span_context.trace_id(), server.span_context.trace_id());
    assert_eq!(lookup.parent_span_id, server.span_context.span_id());
    assert!(!lookup.parent_span_is_remote);
    assert_eq!(attribute(&lookup.attributes, "city").as_deref(), Some("Oslo"));
    assert_eq!(lookup.events.iter().map(|e| e.name.to_string()).collect::<Vec<_>>(), ["looking the city up"]);
    assert!(lookup.end_time <= server.end_time, "the handler's span ends within the request's");
}

#[tokio::test]
async fn a_tool_call_continues_the_clients_trace_2025_11_25() {
    let harness = harness();
    let server = harness.server();
    let client = TestClient::connect(&server).await;
    // The handshake is a request too.
    let initialize = harness.span("initialize");
    assert_eq!(attribute(&initialize.attributes, "mcp.method.name").as_deref(), Some("initialize"));
    assert_eq!(initialize.parent_span_id, SpanId::INVALID);
    harness.spans.reset();
    call_with_trace_context(&client, &harness, "2025-11-25").await;
}

#[tokio::test]
async fn a_tool_call_continues_the_clients_trace_2026_07_28() {
    let harness = harness();
    let server = harness.server();
    let client = TestClient::connect_stateless(&server);
    call_with_trace_context(&client, &harness, "2026-07-28").await;
}

#[tokio::test]
async fn a_tool_error_and_a_json_rpc_error_set_error_type_in_both_eras() {
    let harness = harness();
    let server = harness.server();
    for (client, version) in [
        (TestClient::connect(&server).await, "2025-11-25"),
        (TestClient::connect_stateless(&server), "2026-07-28"),
    ] {
        harness.spans.reset();
        let result = client.call("broken", json!({})).await.unwrap();
        assert!(result.is_error());
        let span = harness.span("tools/call broken");
        assert_eq!(attribute(&span.attributes, "error.type").as_deref(), Some("tool_error"), "{version}");
        assert_eq!(attribute(&span.attributes, "rpc.response.status_code"), None);
        assert_eq!(attribute(&span.attributes, "mcp.protocol.version").as_deref(), Some(version));
        assert!(matches!(span.status, Status::Error { .. }), "{version}: {:?}", span.status);

        let error = client.call("no_such_tool", json!({})).await.unwrap_err();
        assert_eq!(error.code, -32602);
        let span = harness.span("tools/call no_such_tool");
        assert_eq!(attribute(&span.attributes, "error.type").as_deref(), Some("-32602"), "{version}");
        assert_eq!(attribute(&span.attributes, "rpc.response.status_code").as_deref(), Some("-32602"));
        assert_eq!(attribute(&span.attributes, "gen_ai.tool.name").as_deref(), Some("no_such_tool"));
        assert!(matches!(span.status, Status::Error { .. }));
        // No trace context: each is the root of a trace of its own.
        assert_eq!(span.parent_span_id, SpanId::INVALID);

        // Params the call cannot read (read once for the span and the call): refused alike.
        let error = client.request("tools/call", json!({"arguments": {}})).await.unwrap_err();
        assert_eq!(error.code, -32602, "{version}");
        assert!(
            error.message.contains("invalid tools/call params: missing field `name`"),
            "{}",
            error.message
        );
        let error = client.request("tools/call", json!({"name": 7})).await.unwrap_err();
        assert_eq!(error.code, -32602, "{version}");
        assert!(error.message.contains("invalid"), "{version}: {}", error.message);
        assert_eq!(
            names(&harness.spans.get_finished_spans().unwrap()).iter().filter(|n| *n == "tools/call").count(),
            2
        );
        // And read ones are called as ever.
        assert!(!client.call("weather", json!({"city": "Oslo"})).await.unwrap().is_error(), "{version}");
    }
}

#[tokio::test]
async fn span_names_follow_the_method_and_its_target() {
    let harness = harness();
    let server = harness.server();
    let client = TestClient::connect_stateless(&server);
    client.request("tools/list", json!({})).await.unwrap();
    client.request("prompts/get", json!({"name": "greet"})).await.unwrap();
    client.request("resources/read", json!({"uri": "notes://today"})).await.unwrap();
    let list = harness.span("tools/list");
    assert_eq!(attribute(&list.attributes, "gen_ai.tool.name"), None);
    assert_eq!(attribute(&list.attributes, "gen_ai.operation.name"), None);
    let prompt = harness.span("prompts/get greet");
    assert_eq!(attribute(&prompt.attributes, "gen_ai.prompt.name").as_deref(), Some("greet"));
    assert_eq!(attribute(&prompt.attributes, "mcp.method.name").as_deref(), Some("prompts/get"));
    // A resource's URI is an attribute, never in the name (its cardinality is unbounded).
    let read = harness.span("resources/read");
    assert_eq!(attribute(&read.attributes, "mcp.resource.uri").as_deref(), Some("notes://today"));
    for span in [&list, &prompt, &read] {
        assert_eq!(span.span_kind, SpanKind::Server);
        assert_eq!(span.parent_span_id, SpanId::INVALID);
        assert_eq!(attribute(&span.attributes, "error.type"), None);
        assert_eq!(attribute(&span.attributes, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    }

    // A name met again (kept by the telemetry once a request naming it succeeded) names its
    // spans alike; a prompt and a tool of one name are told apart.
    let tools = Server::builder()
        .telemetry(harness.telemetry.clone())
        .prompt(Prompt::new("weather", "Asks.", |_, _| async {
            Ok(PromptResult::new(vec![PromptMessage::user("how is the weather?")]))
        }))
        .build()
        .unwrap();
    let client = TestClient::connect_stateless(&tools);
    for _ in 0..3 {
        client.call("weather", json!({"city": "Oslo"})).await.unwrap();
        client.request("prompts/get", json!({"name": "weather"})).await.unwrap();
        client.request("prompts/get", json!({"name": "greet"})).await.unwrap_err();
    }
    let named = |name: &str| harness.finished().into_iter().filter(|s| s.name == name).collect::<Vec<_>>();
    let calls = named("tools/call weather");
    assert_eq!(calls.len(), 3, "{:?}", names(&harness.finished()));
    assert!(calls.iter().all(|s| attribute(&s.attributes, "gen_ai.tool.name").as_deref() == Some("weather")));
    let prompts = named("prompts/get weather");
    assert_eq!(prompts.len(), 3);
    assert!(
        prompts.iter().all(|s| attribute(&s.attributes, "gen_ai.prompt.name").as_deref() == Some("weather")
            && attribute(&s.attributes, "gen_ai.tool.name").is_none())
    );
    // An unknown prompt's (an error each time) are named each time too.
    assert_eq!(named("prompts/get greet").len(), 1 + 3);
}

#[tokio::test]
async fn the_duration_metric_is_recorded_with_the_conventions_attributes() {
    let harness = harness();
    let server = harness.server();
    let client = TestClient::connect_stateless(&server);
    for _ in 0..2 {
        client.call("weather", json!({"city": "Oslo"})).await.unwrap();
    }
    client.call("broken", json!({})).await.unwrap();
    client.call("no_such_tool", json!({})).await.unwrap_err();

    let points = harness.duration_points();
    let point = |tool: &str| {
        let found: Vec<&HistogramDataPoint<f64>> = points
            .iter()
            .filter(|p| {
                attribute(&p.attributes().cloned().collect::<Vec<_>>(), "gen_ai.tool.name").as_deref()
                    == Some(tool)
            })
            .collect();
        assert_eq!(found.len(), 1, "one data point of {tool}");
        let mut attributes: Vec<(String, String)> =
            found[0].attributes().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect();
        attributes.sort();
        (found[0].clone(), attributes)
    };
    let common = [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
        ("network.transport", "pipe"),
    ];
    let (weather, attributes) = point("weather");
    assert_eq!(attributes, pairs(&[common.as_slice(), &[("gen_ai.tool.name", "weather")]].concat()));
    assert_eq!(weather.count(), 2);
    assert!(weather.sum() > 0.0 && weather.sum() < 10.0, "{} s", weather.sum());
    assert_eq!(
        weather.bounds().collect::<Vec<_>>(),
        [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
    );
    let (broken, attributes) = point("broken");
    assert_eq!(
        attributes,
        pairs(&[common.as_slice(), &[("gen_ai.tool.name", "broken"), ("error.type", "tool_error")]].concat())
    );
    assert_eq!(broken.count(), 1);
    let (_, attributes) = point("no_such_tool");
    assert_eq!(
        attributes,
        pairs(
            &[
                common.as_slice(),
                &[
                    ("gen_ai.tool.name", "no_such_tool"),
                    ("error.type", "-32602"),
                    ("rpc.response.status_code", "-32602"),
                ],
            ]
            .concat()
        )
    );
    // No request id nor session id in a metric: their cardinality is unbounded.
    assert!(points.iter().all(|p| p.attributes().all(|kv| kv.key.as_str() != "jsonrpc.request.id")));
}

/// Telemetry as `harness` makes it, its metrics exported with `temporality`, and a server of
/// `tools` tools `t0`, `t1`… that answer `ok`.
fn many_tools(temporality: Temporality, tools: usize) -> (InMemoryMetricExporter, Telemetry, Server) {
    let metrics = InMemoryMetricExporterBuilder::new().with_temporality(temporality).build();
    let meter_provider =
        SdkMeterProvider::builder().with_reader(PeriodicReader::builder(metrics.clone()).build()).build();
    let telemetry = Telemetry::new(SdkTracerProvider::builder().build(), meter_provider);
    let mut builder = Server::builder().inventory(false).telemetry(telemetry.clone());
    for i in 0..tools {
        builder = builder.tool(Tool::new(
            format!("t{i}"),
            "Answers ok.",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolResult::new().text("ok")) },
        ));
    }
    (metrics, telemetry, builder.build().unwrap())
}

/// The newest export's `mcp.server.operation.duration` points: the count of each tool's.
fn counts_by_tool(metrics: &InMemoryMetricExporter, telemetry: &Telemetry) -> HashMap<String, u64> {
    telemetry.meter_provider().force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let mut counts = HashMap::new();
    for scope in exported.last().expect("an export").scope_metrics() {
        for metric in scope.metrics().filter(|m| m.name() == "mcp.server.operation.duration") {
            let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                panic!("an f64 histogram");
            };
            for point in histogram.data_points() {
                let attributes: Vec<_> = point.attributes().cloned().collect();
                let tool = attribute(&attributes, "gen_ai.tool.name").expect("a tool's name");
                assert_eq!(attribute(&attributes, "mcp.method.name").as_deref(), Some("tools/call"));
                assert_eq!(attribute(&attributes, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
                assert_eq!(attribute(&attributes, "network.transport").as_deref(), Some("pipe"));
                assert!(counts.insert(tool, point.count()).is_none(), "one point a tool");
            }
        }
    }
    counts
}

/// The metric is recorded through handles bound to its attribute sets, up to a bound (512);
/// the sets past it, and the same sets across delta exports, are counted alike.
#[tokio::test]
async fn the_duration_metric_counts_every_attribute_set_alike_past_its_bound_handles() {
    let (metrics, telemetry, server) = many_tools(Temporality::Cumulative, 600);
    let client = TestClient::connect_stateless(&server);
    for i in 0..600 {
        client.call(&format!("t{i}"), json!({})).await.unwrap();
    }
    for name in ["t0", "t599", "t599"] {
        client.call(name, json!({})).await.unwrap();
    }
    let counts = counts_by_tool(&metrics, &telemetry);
    assert_eq!(counts.len(), 600);
    assert_eq!((counts["t0"], counts["t1"], counts["t598"], counts["t599"]), (2, 1, 1, 3));
    assert_eq!(counts.values().sum::<u64>(), 603);

    // Delta: each export counts what came since the last.
    let (metrics, telemetry, server) = many_tools(Temporality::Delta, 2);
    let client = TestClient::connect_stateless(&server);
    for name in ["t0", "t0", "t1"] {
        client.call(name, json!({})).await.unwrap();
    }
    assert_eq!(counts_by_tool(&metrics, &telemetry), HashMap::from([("t0".into(), 2), ("t1".into(), 1)]));
    client.call("t0", json!({})).await.unwrap();
    assert_eq!(counts_by_tool(&metrics, &telemetry), HashMap::from([("t0".into(), 1)]));
    client.call("t1", json!({})).await.unwrap();
    client.call("t1", json!({})).await.unwrap();
    assert_eq!(counts_by_tool(&metrics, &telemetry), HashMap::from([("t1".into(), 2)]));
}

#[tokio::test]
async fn a_cancelled_request_ends_its_span_as_cancelled() {
    let harness = harness();
    let server = harness.server();
    let client = TestClient::connect(&server).await;
    let id = client.send_request("tools/call", json!({"name": "nap", "arguments": {"millis": 10_000}}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.notify("notifications/cancelled", json!({"requestId": id}));
    let mut span = None;
    for _ in 0..200 {
        if let Some(found) = harness.finished().into_iter().find(|s| s.name == "tools/call nap") {
            span = Some(found);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let span = span.expect("the cancelled request's span ends within 2 s");
    assert_eq!(attribute(&span.attributes, "error.type").as_deref(), Some("cancelled"));
    assert!(span.end_time.duration_since(span.start_time).unwrap() < Duration::from_secs(5));
}

#[tokio::test]
async fn without_telemetry_a_request_makes_no_span_of_its_own() {
    let harness = harness();
    let server = Server::builder().build().unwrap();
    let client = TestClient::connect_stateless(&server);
    client.call("weather", json!({"city": "Oslo"})).await.unwrap();
    // Only the handler's own span, at the root: the server made none.
    assert_eq!(names(&harness.finished()), ["lookup"]);
    assert_eq!(harness.span("lookup").parent_span_id, SpanId::INVALID);
    assert!(harness.duration_points().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Over Streamable HTTP: the `traceparent` header, when `_meta` has none.

fn app(server: &Server) -> Router {
    server.http_router(HttpOptions::new())
}

fn post(body: &Value, session: Option<&str>, traceparent: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent);
    }
    request.body(Body::from(body.to_string())).unwrap()
}

/// A 2026-07-28 POST of a tools/call of `weather`, `meta` added to its envelope.
fn stateless_call(id: i64, meta: Value, traceparent: &str) -> Request<Body> {
    let mut envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    envelope.as_object_mut().unwrap().extend(meta.as_object().unwrap().clone());
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}, "_meta": envelope}});
    Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "weather")
        .header("traceparent", traceparent)
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn json_answer(app: &Router, request: Request<Body>) -> (StatusCode, Option<String>, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, session, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn over_http_a_session_request_takes_the_traceparent_header_as_parent() {
    let harness = harness();
    let app = app(&harness.server());
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = json_answer(&app, post(&initialize, None, None)).await;
    assert_eq!(status, StatusCode::OK);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    json_answer(&app, post(&initialized, Some(&session), None)).await;
    harness.spans.reset();

    let call = json!({"jsonrpc": "2.0", "id": "call-7", "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}}});
    let header = traceparent(HEADER_TRACE, HEADER_SPAN);
    let (status, _, answer) = json_answer(&app, post(&call, Some(&session), Some(&header))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["content"][0]["text"], "sunny in Oslo");

    let server = harness.span("tools/call weather");
    assert_eq!(server.span_kind, SpanKind::Server);
    assert_eq!(server.span_context.trace_id(), TraceId::from_hex(HEADER_TRACE).unwrap());
    assert_eq!(server.parent_span_id, SpanId::from_hex(HEADER_SPAN).unwrap());
    assert_eq!(
        conventions(&server),
        pairs(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "weather"),
            ("gen_ai.operation.name", "execute_tool"),
            ("jsonrpc.request.id", "call-7"),
            ("mcp.protocol.version", "2025-11-25"),
            ("mcp.session.id", &session),
            ("network.transport", "tcp"),
            ("network.protocol.name", "http"),
        ])
    );
    assert_eq!(harness.span("lookup").parent_span_id, server.span_context.span_id());
}

#[tokio::test]
async fn over_http_a_stateless_request_prefers_meta_and_links_the_header() {
    let harness = harness();
    let app = app(&harness.server());
    let header = traceparent(HEADER_TRACE, HEADER_SPAN);

    // `_meta` without trace context: the header's is the parent.
    let (status, session, answer) = json_answer(&app, stateless_call(1, json!({}), &header)).await;
    assert_eq!((status, session), (StatusCode::OK, None));
    assert_eq!(answer["result"]["content"][0]["text"], "sunny in Oslo");
    let server = harness.span("tools/call weather");
    assert_eq!(server.span_context.trace_id(), TraceId::from_hex(HEADER_TRACE).unwrap());
    assert_eq!(server.parent_span_id, SpanId::from_hex(HEADER_SPAN).unwrap());
    assert!(server.links.is_empty());
    assert_eq!(attribute(&server.attributes, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(attribute(&server.attributes, "network.transport").as_deref(), Some("tcp"));
    assert_eq!(attribute(&server.attributes, "mcp.session.id"), None);
    harness.spans.reset();

    // Both: `_meta` (the MCP client's context) is the parent, the header's a link.
    let meta = json!({"traceparent": traceparent(TRACE, CLIENT_SPAN)});
    let (status, _, _) = json_answer(&app, stateless_call(2, meta, &header)).await;
    assert_eq!(status, StatusCode::OK);
    let server = harness.span("tools/call weather");
    assert_eq!(server.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(server.parent_span_id, SpanId::from_hex(CLIENT_SPAN).unwrap());
    let links: Vec<_> =
        server.links.iter().map(|l| (l.span_context.trace_id(), l.span_context.span_id())).collect();
    assert_eq!(links, [(TraceId::from_hex(HEADER_TRACE).unwrap(), SpanId::from_hex(HEADER_SPAN).unwrap())]);
    assert_eq!(harness.span("lookup").parent_span_id, server.span_context.span_id());
}
