//! Fuzzing on stable Rust: proptest strategies generate hostile input for three targets, and
//! each run checks properties that must hold for any input.
//!
//! * `messages`: the JSON-RPC decoder and dispatcher behind the real stdio transport: sequences
//!   of generated requests (every method, odd ids, arbitrary params), mutations of the corpus
//!   (`fuzz/corpus/*.json`: flipped, inserted, deleted, truncated bytes) and raw bytes. Every
//!   line the server writes is a JSON-RPC 2.0 message, and a final `ping` is answered.
//! * `arguments`: decoding and validating a rich argument type (nested structs, a tagged enum,
//!   maps, ranges, lengths, a pattern) from near-valid and arbitrary JSON. A call never fails at
//!   the protocol level, and arguments the handler sees always satisfy the type's schema.
//! * `http`: the HTTP request path (method, headers, body) through the real router. Every
//!   response has an expected status, and a new session still works after each request.
//!
//! Under `cargo test` each target replays the corpus and runs a fixed-seed batch (quick and
//! deterministic). `scripts/fuzz.sh` runs them for a set time with fresh seeds
//! (`FUZZ_SECONDS`); a failure prints the seed (`PROPTEST_RNG_SEED`) and the shrunk input.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use mcp_tools::testing::TestClient;
use mcp_tools::{Args, Context, HttpOptions, Server, tool};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tower::ServiceExt as _;

// ---------------------------------------------------------------------------------------------
// The server fuzzed.

/// Echo the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Always panics.
#[tool]
async fn explode() -> String {
    panic!("boom")
}

/// Reports progress, logs, then answers.
#[tool]
async fn chatty(times: u8, ctx: Context) -> u8 {
    for i in 0..times.min(8) {
        ctx.report_progress(f64::from(i), None, None);
        ctx.log(mcp_tools::LogLevel::Info, "working");
    }
    times
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Order {
    id: u64,
    #[schemars(length(min = 1, max = 16))]
    customer: String,
    items: Vec<Item>,
    shipping: Shipping,
    note: Option<String>,
    #[serde(default)]
    labels: HashMap<String, u8>,
    priority: Priority,
    #[schemars(range(min = 0.0, max = 1.0))]
    discount: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Item {
    #[schemars(regex(pattern = r"^[A-Z]{3}-[0-9]{3}$"))]
    sku: String,
    #[schemars(range(min = 1, max = 100))]
    quantity: u16,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "method", rename_all = "lowercase")]
enum Shipping {
    Pickup,
    Courier {
        #[schemars(length(min = 5, max = 10))]
        postcode: String,
    },
    Post {
        address: Address,
    },
}

#[derive(Deserialize, JsonSchema)]
struct Address {
    line: String,
    #[schemars(length(equal = 2))]
    country: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    Normal,
    High,
}

/// Place an order.
#[tool]
async fn place_order(Args(order): Args<Order>) -> String {
    let _ = (&order.note, &order.labels, &order.priority, order.discount, order.id);
    let shipped = match &order.shipping {
        Shipping::Pickup => "pickup".to_owned(),
        Shipping::Courier { postcode } => postcode.clone(),
        Shipping::Post { address } => format!("{} {}", address.line, address.country),
    };
    let items: Vec<String> = order.items.iter().map(|i| format!("{}x{}", i.quantity, i.sku)).collect();
    format!("{}: {} to {shipped}", order.customer, items.join(","))
}

fn server() -> Server {
    Server::builder()
        .name("fuzz")
        .resource(mcp_tools::Resource::fixed(
            "test://a",
            "a",
            mcp_tools::ResourceContents::text("test://a", None, "A"),
        ))
        .resource_template(mcp_tools::ResourceTemplate::new("files://{+path}", "files", |request, _| async move {
            Ok(vec![mcp_tools::ResourceContents::text(request.uri, None, "file")])
        }))
        .build()
        .expect("the fuzz server builds")
}

// ---------------------------------------------------------------------------------------------
// Strategies.

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
];

const TOOLS: &[&str] = &["echo", "explode", "chatty", "place_order", "nope"];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        Just(Value::String("\u{0}\u{ffff}\u{10ffff}".into())),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..6)
                .prop_map(|m: BTreeMap<String, Value>| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => (0i64..20).prop_map(|n| Some(json!(n))),
        1 => any::<i64>().prop_map(|n| Some(json!(n))),
        1 => "[a-z0-9-]{0,6}".prop_map(|s| Some(json!(s))),
        1 => Just(None),
        1 => json_value().prop_map(Some),
    ]
}

/// Params that make sense for `method` most of the time, arbitrary JSON otherwise.
fn params(method: &'static str) -> BoxedStrategy<Option<Value>> {
    let structured: BoxedStrategy<Value> = match method {
        "initialize" => (prop_oneof![Just("2025-11-25".to_owned()), Just("2024-11-05".to_owned()), "[0-9-]{0,10}"], json_value())
            .prop_map(|(version, capabilities)| {
                json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "fuzz", "version": "0"}})
            })
            .boxed(),
        "tools/call" => (prop::sample::select(TOOLS), json_value(), prop::option::of("[a-z0-9]{1,4}"))
            .prop_map(|(name, arguments, token)| {
                let mut params = json!({"name": name, "arguments": arguments});
                if let Some(token) = token {
                    params["_meta"] = json!({"progressToken": token});
                }
                params
            })
            .boxed(),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            prop_oneof![Just("test://a".to_owned()), "files://[a-z./%]{0,12}", "\\PC{0,16}"]
                .prop_map(|uri| json!({"uri": uri}))
                .boxed()
        }
        "notifications/cancelled" => id().prop_map(|id| json!({"requestId": id})).boxed(),
        "logging/setLevel" => prop_oneof![Just("debug".to_owned()), Just("error".to_owned()), "[a-z]{0,8}"]
            .prop_map(|level| json!({"level": level}))
            .boxed(),
        _ => json_value().boxed(),
    };
    prop_oneof![
        6 => structured.prop_map(Some),
        1 => json_value().prop_map(Some),
        1 => Just(None),
    ]
    .boxed()
}

/// A generated message, mostly well-formed JSON-RPC.
fn message() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![
        9 => prop::sample::select(METHODS),
        1 => Just("nope/nope"),
    ];
    (method, id(), prop_oneof![8 => Just(json!("2.0")), 1 => json_value()]).prop_flat_map(
        |(method, id, jsonrpc)| {
            params(method).prop_map(move |params| {
                let mut message = Map::new();
                message.insert("jsonrpc".into(), jsonrpc.clone());
                if let Some(id) = &id {
                    message.insert("id".into(), id.clone());
                }
                message.insert("method".into(), json!(method));
                if let Some(params) = params {
                    message.insert("params".into(), params);
                }
                Value::Object(message).to_string().into_bytes()
            })
        },
    )
}

/// The seed inputs: `fuzz/corpus/*.json`, one message per file.
fn corpus() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus");
    let mut files: Vec<_> =
        std::fs::read_dir(dir).expect("fuzz/corpus exists").map(|e| e.unwrap().path()).collect();
    files.sort();
    let corpus: Vec<Vec<u8>> =
        files.iter().map(|f| std::fs::read(f).unwrap().trim_ascii_end().to_vec()).collect();
    assert!(corpus.len() >= 20, "the corpus has {} entries", corpus.len());
    corpus
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Truncate(usize),
    Repeat(usize, usize, usize),
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Flip(at, bit) => {
                if let Some(b) = bytes.get_mut(at % len) {
                    *b ^= 1 << (bit % 8);
                }
            }
            Mutation::Insert(at, byte) => bytes.insert(at % (bytes.len() + 1), byte),
            Mutation::Delete(at, n) => {
                let at = at % len;
                let end = (at + n % 16).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            Mutation::Truncate(at) => bytes.truncate(at % len),
            Mutation::Repeat(at, n, times) => {
                let at = at % len;
                let end = (at + n % 32).min(bytes.len());
                let chunk = bytes[at.min(end)..end].to_vec();
                for _ in 0..times % 64 {
                    bytes.splice(end..end, chunk.iter().copied());
                }
            }
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mutation::Flip(a, b)),
        (
            any::<usize>(),
            prop_oneof![Just(b'{'), Just(b'['), Just(b'"'), Just(b'\\'), Just(b'\n'), Just(0u8), any::<u8>()]
        )
            .prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, n)| Mutation::Delete(a, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(a, n, t)| Mutation::Repeat(a, n, t)),
    ]
}

fn mutated(corpus: Arc<Vec<Vec<u8>>>) -> impl Strategy<Value = Vec<u8>> {
    (0..corpus.len(), prop::collection::vec(mutation(), 0..4))
        .prop_map(move |(i, mutations)| mutate(corpus[i].clone(), &mutations))
}

fn any_message(corpus: Arc<Vec<Vec<u8>>>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => message(),
        4 => mutated(corpus),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

// ---------------------------------------------------------------------------------------------
// Running.

/// Runs `test` on inputs of `strategy`: a fixed-seed batch under `cargo test`, or fresh seeds
/// for `FUZZ_SECONDS` seconds. Returns the number of cases run.
fn fuzz<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> u64
where
    S::Value: std::fmt::Debug,
{
    let seconds: Option<u64> = std::env::var("FUZZ_SECONDS").ok().and_then(|s| s.parse().ok());
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut total = 0u64;
    let mut round = 0u64;
    loop {
        let seed = match (deadline, std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok())) {
            (_, Some(seed)) => RngSeed::Fixed(seed),
            (Some(_), None) => RngSeed::Fixed(rand_seed(round)),
            (None, None) => RngSeed::Fixed(0x6d63_702d_746f_6f6c),
        };
        let config = Config {
            cases,
            rng_seed: seed,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(failure) = runner.run(&strategy, &test) {
            panic!(
                "{name}: {failure}\nreproduce with PROPTEST_RNG_SEED={seed} cargo test --test fuzz {name}"
            );
        }
        total += u64::from(cases);
        round += 1;
        match deadline {
            Some(deadline) if Instant::now() < deadline => continue,
            _ => break,
        }
    }
    if deadline.is_some() {
        println!("{name}: {total} cases, no failure");
    }
    total
}

fn rand_seed(round: u64) -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    nanos ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Feeds `messages` to a fresh stdio connection, then a `ping`; every line written back must be
/// a JSON-RPC 2.0 message, and the ping must be answered.
async fn serve_lines(server: &Server, messages: &[Vec<u8>]) -> Result<(), String> {
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let served = {
        let server = server.clone();
        tokio::spawn(async move { server.serve(server_in, server_out).await })
    };
    let writer = {
        let messages = messages.to_vec();
        tokio::spawn(async move {
            for message in messages {
                input.write_all(&message).await?;
                input.write_all(b"\n").await?;
            }
            input.write_all(br#"{"jsonrpc":"2.0","id":"fuzz-final","method":"ping"}"#).await?;
            input.write_all(b"\n").await?;
            Ok::<_, std::io::Error>(input)
        })
    };
    let mut output = BufReader::new(output);
    let mut line = String::new();
    loop {
        line.clear();
        let read = tokio::time::timeout(Duration::from_secs(20), output.read_line(&mut line)).await;
        match read {
            Err(_) => return Err("no answer to the final ping within 20 s".into()),
            Ok(Err(e)) => return Err(format!("reading the output: {e}")),
            Ok(Ok(0)) => return Err("the server ended before answering the final ping".into()),
            Ok(Ok(_)) => {}
        }
        let message: Value = serde_json::from_str(&line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        if message["jsonrpc"] != "2.0" {
            return Err(format!("not JSON-RPC 2.0: {line}"));
        }
        if message.get("id").is_none() && message.get("method").is_none() {
            return Err(format!("neither an answer nor a notification: {line}"));
        }
        if message["id"] == "fuzz-final" && message.get("method").is_none() {
            // A connection a stateless request claimed has no `ping` (2026-07-28).
            let stateless =
                message["error"]["message"].as_str().is_some_and(|m| m.contains("stateless protocol"));
            if message["result"] != json!({}) && !stateless {
                return Err(format!("the final ping: {line}"));
            }
            break;
        }
    }
    let input = writer.await.unwrap().map_err(|e| format!("writing: {e}"))?;
    drop(input);
    // The server drains its running calls and ends cleanly; nothing more is read.
    drop(output);
    match tokio::time::timeout(Duration::from_secs(20), served).await {
        Ok(Ok(Ok(()))) | Ok(Ok(Err(_))) => Ok(()),
        Ok(Err(panic)) => Err(format!("the server task panicked: {panic}")),
        Err(_) => Err("the server did not end within 20 s of its input".into()),
    }
}

#[test]
fn messages() {
    let corpus = Arc::new(corpus());
    let runtime = runtime();
    let server = server();
    // The corpus as it is, each entry after a handshake.
    let initialize = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#.to_vec();
    for entry in corpus.iter() {
        let outcome = runtime.block_on(serve_lines(&server, &[initialize.clone(), entry.clone()]));
        assert!(outcome.is_ok(), "corpus entry {}: {outcome:?}", String::from_utf8_lossy(entry));
    }
    let sequences = prop::collection::vec(any_message(corpus.clone()), 1..8);
    let with_handshake = (any::<bool>(), sequences).prop_map(move |(handshake, mut messages)| {
        if handshake {
            messages.insert(0, initialize.clone());
        }
        messages
    });
    fuzz("messages", 48, with_handshake, |messages| {
        runtime.block_on(serve_lines(&server, &messages)).map_err(TestCaseError::fail)
    });
}

/// Arguments for `place_order`: valid ones with a few fields replaced, dropped or added.
fn order_arguments() -> impl Strategy<Value = Value> {
    let sku = prop_oneof![3 => "[A-Z]{3}-[0-9]{3}", 1 => "\\PC{0,8}"];
    let item = (sku, prop_oneof![3 => 1u64..=100, 1 => any::<u64>()])
        .prop_map(|(sku, quantity)| json!({"sku": sku, "quantity": quantity}));
    let shipping = prop_oneof![
        Just(json!({"method": "pickup"})),
        "[0-9]{3,12}".prop_map(|postcode| json!({"method": "courier", "postcode": postcode})),
        ("\\PC{0,10}", "[A-Z]{1,3}").prop_map(
            |(line, country)| json!({"method": "post", "address": {"line": line, "country": country}})
        ),
        json_value(),
    ];
    let valid = (
        any::<u64>(),
        "\\PC{0,20}",
        prop::collection::vec(item, 0..4),
        shipping,
        prop::option::of("\\PC{0,8}"),
        prop::collection::btree_map("[a-z]{1,4}", 0u64..300, 0..3),
        prop::sample::select(vec!["low", "normal", "high", "urgent"]),
        prop_oneof![3 => 0.0f64..=1.0, 1 => -10.0f64..10.0],
    )
        .prop_map(|(id, customer, items, shipping, note, labels, priority, discount)| {
            let mut order = json!({"id": id, "customer": customer, "items": items, "shipping": shipping,
                "labels": labels, "priority": priority, "discount": discount});
            if let Some(note) = note {
                order["note"] = json!(note);
            }
            order
        });
    let fields = ["id", "customer", "items", "shipping", "note", "labels", "priority", "discount", "extra"];
    (
        valid,
        prop::collection::vec((prop::sample::select(fields.to_vec()), prop::option::of(json_value())), 0..3),
    )
        .prop_map(|(mut order, edits)| {
            for (field, value) in edits {
                match value {
                    Some(value) => order[field] = value,
                    None => {
                        order.as_object_mut().unwrap().remove(field);
                    }
                }
            }
            order
        })
}

#[test]
fn arguments() {
    let runtime = runtime();
    let server = server();
    let client = runtime.block_on(TestClient::connect(&server));
    let schema = serde_json::to_value(schemars::schema_for!(Order)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let (accepted, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let cases = fuzz("arguments", 256, prop_oneof![9 => order_arguments(), 1 => json_value()], |arguments| {
        let result = runtime
            .block_on(client.call("place_order", arguments.clone()))
            .map_err(|e| TestCaseError::fail(format!("a protocol error: {e:?}")))?;
        if result.is_error() {
            prop_assert!(
                result.text().starts_with("Invalid arguments for tool `place_order`"),
                "{}",
                result.text()
            );
            refused.fetch_add(1, Ordering::Relaxed);
        } else {
            let problems: Vec<String> = validator.iter_errors(&arguments).map(|e| e.to_string()).collect();
            prop_assert!(
                problems.is_empty(),
                "the handler ran with invalid arguments {arguments}: {problems:?}"
            );
            accepted.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    let (accepted, refused) = (accepted.into_inner(), refused.into_inner());
    assert!(
        accepted > 0 && refused > 0,
        "both kinds were generated: {accepted} accepted, {refused} refused of {cases}"
    );
}

/// A request to the HTTP endpoint: method, headers, body.
fn http_request(
    corpus: Arc<Vec<Vec<u8>>>,
) -> impl Strategy<Value = (String, Vec<(String, String)>, Vec<u8>)> {
    let method =
        prop::sample::select(vec!["POST", "POST", "POST", "GET", "DELETE", "PUT", "OPTIONS", "PATCH"]);
    let header = prop_oneof![
        prop::sample::select(vec!["localhost", "localhost:1", "evil.example", "", "[::1]:80", "a b"])
            .prop_map(|v| ("host".to_owned(), v.to_owned())),
        prop::sample::select(vec![
            "application/json, text/event-stream",
            "application/json",
            "*/*",
            "text/event-stream",
            "x"
        ])
        .prop_map(|v| ("accept".to_owned(), v.to_owned())),
        prop::sample::select(vec!["application/json", "application/json; charset=utf-8", "text/plain", ""])
            .prop_map(|v| ("content-type".to_owned(), v.to_owned())),
        prop::sample::select(vec!["2025-11-25", "2026-07-28", "2025-03-26", "1999-01-01", ""])
            .prop_map(|v| ("mcp-protocol-version".to_owned(), v.to_owned())),
        "[0-9a-f]{0,32}".prop_map(|v| ("mcp-session-id".to_owned(), v)),
        prop::sample::select(METHODS.to_vec()).prop_map(|v| ("mcp-method".to_owned(), v.to_owned())),
        "[a-z_]{0,8}".prop_map(|v| ("mcp-name".to_owned(), v)),
        prop::sample::select(vec!["http://localhost:3000", "https://evil.example", "null"])
            .prop_map(|v| ("origin".to_owned(), v.to_owned())),
        "[0-9-]{0,8}".prop_map(|v| ("last-event-id".to_owned(), v)),
        ("mcp-param-[a-z]{1,6}", "[ -~]{0,12}").prop_map(|(n, v)| (n, v)),
    ];
    (method, prop::collection::vec(header, 0..8), any_message(corpus))
        .prop_map(|(method, headers, body)| (method.to_owned(), headers, body))
}

#[test]
fn http() {
    let corpus = Arc::new(corpus());
    let runtime = runtime();
    let app = server().http_router(HttpOptions::new().max_sessions(64));
    let expected = [200, 202, 400, 403, 404, 405, 406, 409, 413, 415];
    fuzz("http", 96, http_request(corpus), |(method, headers, body)| {
        runtime.block_on(async {
            let mut request = Request::builder().method(method.as_str()).uri("/mcp");
            for (name, value) in &headers {
                request = request.header(name.as_str(), value.as_str());
            }
            let Ok(request) = request.body(Body::from(body.clone())) else {
                return Ok(()); // not a request http can carry (a header value it refuses)
            };
            let response = app.clone().oneshot(request).await.unwrap();
            let status = response.status();
            prop_assert!(expected.contains(&status.as_u16()), "unexpected status {status} for {method} {headers:?}");
            let is_sse = response.headers().get("content-type").is_some_and(|v| v == "text/event-stream");
            if !is_sse {
                let bytes = tokio::time::timeout(Duration::from_secs(20), axum::body::to_bytes(response.into_body(), 1 << 24))
                    .await
                    .map_err(|_| TestCaseError::fail("the body never ended"))?
                    .unwrap();
                if bytes.starts_with(b"{") {
                    let message: Value = serde_json::from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(&message["jsonrpc"], "2.0");
                }
            }
            // A new session still works.
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}});
            let request = Request::post("/mcp")
                .header("host", "localhost")
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(Body::from(init.to_string()))
                .unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            prop_assert_eq!(response.status(), StatusCode::OK);
            Ok(())
        })
    });
}
