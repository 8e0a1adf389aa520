//! The built-in rate limit (`middleware::RateLimit`, feature `rate-limit`) and result cache
//! (`middleware::ResultCache`, feature `cache`): in both eras (a 2025-11-25 session and
//! stateless 2026-07-28 requests, in process, where two connections are two callers), and the
//! rate limit over HTTP with two token subjects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use mcp_tools::auth::{Authorization, StaticTokens};
use mcp_tools::middleware::{RateLimit, ResultCache};
use mcp_tools::testing::{CallResult, TestClient};
use mcp_tools::{Annotations, AuthInfo, HttpOptions, Server, ServerBuilder, Tool, ToolResult, tool};
use serde_json::{Value, json};
use tower::ServiceExt as _;

// ---------------------------------------------------------------------------------------------
// Servers, tools and clients.

/// Both eras: `false` a 2025-11-25 session, `true` stateless 2026-07-28 requests.
const ERAS: [bool; 2] = [false, true];

/// A new caller (a new in-process connection) of `server`, in the era `stateless` says.
async fn client(server: &Server, stateless: bool) -> TestClient {
    if stateless { TestClient::connect_stateless(server) } else { TestClient::connect(server).await }
}

/// How many times a tool's handler ran; how many runs are under way, and the most ever at once.
#[derive(Clone, Default)]
struct Runs(Arc<[AtomicUsize; 3]>);

impl Runs {
    fn get(&self) -> usize {
        self.0[0].load(Ordering::SeqCst)
    }
    fn most_at_once(&self) -> usize {
        self.0[2].load(Ordering::SeqCst)
    }
}

fn read_only_idempotent() -> Annotations {
    Annotations::new().read_only(true).idempotent(true)
}

/// A tool counting its runs in `runs`: answers `{"run": N, "args": …}` (structured, as text
/// too, and `run` in its `_meta`); fails with `{"fail": true}`; sleeps `sleep_ms` first;
/// pads its answer with `pad` bytes.
fn counter(name: &str, annotations: Annotations, runs: &Runs) -> Tool {
    let runs = runs.clone();
    Tool::new(name, "Counts its runs.", json!({"type": "object"}), move |args: Value, _| {
        let runs = runs.clone();
        async move {
            let now = runs.0[1].fetch_add(1, Ordering::SeqCst) + 1;
            runs.0[2].fetch_max(now, Ordering::SeqCst);
            if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            runs.0[1].fetch_sub(1, Ordering::SeqCst);
            let run = runs.0[0].fetch_add(1, Ordering::SeqCst) + 1;
            if args.get("fail") == Some(&json!(true)) {
                return Ok(ToolResult::error(format!("failed on run {run}")));
            }
            let pad = "x".repeat(args.get("pad").and_then(Value::as_u64).unwrap_or(0) as usize);
            let result = ToolResult::structured(json!({"run": run, "args": args, "pad": pad}))?;
            Ok(result.meta("io.example/run", run))
        }
    })
    .annotations(annotations)
}

fn builder() -> ServerBuilder {
    Server::builder().inventory(false)
}

/// The `run` a counter's answer reports.
fn run_of(result: &CallResult) -> u64 {
    result.structured().and_then(|s| s["run"].as_u64()).unwrap_or_else(|| panic!("no run in {result:?}"))
}

/// The wait a refusal asks for, in milliseconds.
fn retry_after_ms(result: &Value) -> u64 {
    result["_meta"][RateLimit::RETRY_AFTER_META]
        .as_u64()
        .unwrap_or_else(|| panic!("no retry time in {result}"))
}

// ---------------------------------------------------------------------------------------------
// Rate limit.

#[tokio::test]
async fn a_call_over_the_limit_is_refused_saying_the_limit_and_when_to_retry_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("ping", Annotations::new(), &runs))
            .layer(RateLimit::per_minute(2))
            .build()
            .unwrap();
        let alice = client(&server, stateless).await;
        for n in 1..=2 {
            let result = alice.call("ping", json!({})).await.unwrap();
            assert!(!result.is_error(), "call {n}: {result:?}");
        }
        let refused = alice.call("ping", json!({})).await.unwrap();
        assert!(refused.is_error());
        // Two a minute: the next one in 30 s (less the few ms the calls took).
        assert_eq!(
            refused.text(),
            "`ping` was not run: rate limit reached (2 calls a minute per caller). Retry in 30 s.",
            "stateless: {stateless}"
        );
        let wait = retry_after_ms(refused.json());
        assert!((25_000..=30_000).contains(&wait), "{wait} ms");
        assert_eq!(runs.get(), 2, "a refused call does not run the tool");

        // Another caller (another connection) has its own allowance.
        let bob = client(&server, stateless).await;
        assert!(!bob.call("ping", json!({})).await.unwrap().is_error());
        assert_eq!(runs.get(), 3);
        // And Alice's refusal did not count: she is still refused, no later than before.
        let again = alice.call("ping", json!({})).await.unwrap();
        assert!(again.is_error());
        assert!(retry_after_ms(again.json()) <= wait);
        assert_eq!(runs.get(), 3);
    }
}

#[tokio::test]
async fn a_refused_caller_is_served_again_after_the_wait_it_was_told_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("ping", Annotations::new(), &runs))
            .layer(RateLimit::new(1, Duration::from_millis(300)))
            .build()
            .unwrap();
        let client = client(&server, stateless).await;
        assert!(!client.call("ping", json!({})).await.unwrap().is_error());
        let refused = client.call("ping", json!({})).await.unwrap();
        assert!(refused.is_error());
        assert!(refused.text().contains("(1 call per 300ms per caller)"), "{}", refused.text());
        let wait = retry_after_ms(refused.json());
        assert!((1..=300).contains(&wait), "{wait} ms");
        tokio::time::sleep(Duration::from_millis(wait + 100)).await;
        let later = client.call("ping", json!({})).await.unwrap();
        assert!(!later.is_error(), "{later:?}");
        assert_eq!(runs.get(), 2);
    }
}

#[tokio::test]
async fn a_burst_is_allowed_then_calls_come_at_the_limits_pace_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("ping", Annotations::new(), &runs))
            .layer(RateLimit::per_minute(60).burst(3))
            .build()
            .unwrap();
        let client = client(&server, stateless).await;
        for _ in 0..3 {
            assert!(!client.call("ping", json!({})).await.unwrap().is_error());
        }
        let refused = client.call("ping", json!({})).await.unwrap();
        assert!(refused.is_error());
        assert!(
            refused.text().contains("(60 calls a minute per caller, in bursts of up to 3)"),
            "{}",
            refused.text()
        );
        // One a second after the burst.
        let wait = retry_after_ms(refused.json());
        assert!((1..=1000).contains(&wait), "{wait} ms");
        assert_eq!(runs.get(), 3);
    }
}

#[tokio::test]
async fn per_tool_counts_each_tool_apart_and_a_tool_layer_limits_only_its_tool_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let tools = || [counter("a", Annotations::new(), &runs), counter("b", Annotations::new(), &runs)];

        // Per caller (the default): the calls of both tools count together.
        let server = builder().tools(tools()).layer(RateLimit::per_minute(1)).build().unwrap();
        let c = client(&server, stateless).await;
        assert!(!c.call("a", json!({})).await.unwrap().is_error());
        let refused = c.call("b", json!({})).await.unwrap();
        assert!(refused.is_error());
        assert!(
            refused.text().starts_with("`b` was not run: rate limit reached (1 call a minute per caller)")
        );

        // Per caller and tool: each tool has its allowance.
        let server = builder().tools(tools()).layer(RateLimit::per_minute(1).per_tool()).build().unwrap();
        let c = client(&server, stateless).await;
        assert!(!c.call("a", json!({})).await.unwrap().is_error());
        assert!(!c.call("b", json!({})).await.unwrap().is_error());
        let refused = c.call("a", json!({})).await.unwrap();
        assert!(refused.text().contains("(1 call a minute per caller and tool)"), "{}", refused.text());
        assert!(c.call("b", json!({})).await.unwrap().is_error());

        // Around one tool: the other is not limited.
        let server = builder().tools(tools()).tool_layer("a", RateLimit::per_minute(1)).build().unwrap();
        let c = client(&server, stateless).await;
        assert!(!c.call("a", json!({})).await.unwrap().is_error());
        assert!(c.call("a", json!({})).await.unwrap().is_error());
        for _ in 0..5 {
            assert!(!c.call("b", json!({})).await.unwrap().is_error());
        }
    }
}

#[tokio::test]
async fn the_limiter_remembers_at_most_max_keys_callers_however_many_come_and_new_ones_share_the_overflow() {
    let runs = Runs::default();
    let limit = RateLimit::per_hour(2).max_keys(8);
    let server =
        builder().tool(counter("ping", Annotations::new(), &runs)).layer(limit.clone()).build().unwrap();
    let mut clients = Vec::new();
    let mut outcomes = Vec::new();
    for n in 0..40 {
        let c = client(&server, n % 2 == 1).await;
        outcomes.push(!c.call("ping", json!({})).await.unwrap().is_error());
        assert!(limit.keys() <= 8, "{} keys after {} callers", limit.keys(), n + 1);
        clients.push(c);
    }
    assert_eq!(limit.keys(), 8);
    // The first 8 callers have their own allowance; callers 9 and 10 share the overflow's two
    // calls, and the 30 after them find it spent.
    let expected: Vec<bool> = (0..40).map(|n| n < 10).collect();
    assert_eq!(outcomes, expected);
    assert_eq!(runs.get(), 10);
    // A remembered caller keeps its own allowance (one call left of two), overflow or not.
    assert!(!clients[0].call("ping", json!({})).await.unwrap().is_error());
    assert!(clients[0].call("ping", json!({})).await.unwrap().is_error());
    assert!(clients[20].call("ping", json!({})).await.unwrap().is_error());
    assert_eq!(limit.keys(), 8);
}

#[tokio::test]
async fn a_full_table_forgets_the_callers_whose_allowance_is_whole_again() {
    let runs = Runs::default();
    let limit = RateLimit::new(1, Duration::from_millis(200)).max_keys(4);
    let server =
        builder().tool(counter("ping", Annotations::new(), &runs)).layer(limit.clone()).build().unwrap();
    for n in 0..4 {
        let c = client(&server, n % 2 == 0).await;
        assert!(!c.call("ping", json!({})).await.unwrap().is_error());
    }
    assert_eq!(limit.keys(), 4);
    // The fifth caller gets the overflow's one call, the sixth finds it spent.
    assert!(!client(&server, false).await.call("ping", json!({})).await.unwrap().is_error());
    assert!(client(&server, true).await.call("ping", json!({})).await.unwrap().is_error());
    // Once the first four could call again, they are no different from new callers: the next
    // call sweeps them away and its caller gets a place of its own.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let late = client(&server, false).await;
    assert!(!late.call("ping", json!({})).await.unwrap().is_error());
    assert_eq!(limit.keys(), 1);
    assert!(late.call("ping", json!({})).await.unwrap().is_error());
}

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789ab";

fn http_app(server: &Server) -> Router {
    let tokens = StaticTokens::new()
        .token(ALICE, AuthInfo::new("alice"))
        .unwrap()
        .token(BOB, AuthInfo::new("bob"))
        .unwrap();
    let authorization = Authorization::new("http://localhost/mcp", tokens).unwrap();
    server.http_router(HttpOptions::new().authorization(authorization))
}

/// A 2026-07-28 `tools/call` of `name` POSTed by the holder of `token`: its status and result.
async fn http_call(app: &Router, token: &str, name: &str) -> (StatusCode, Value) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let answer: Value =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&bytes)));
    (status, answer["result"].clone())
}

#[tokio::test]
async fn over_http_each_token_subject_has_its_own_limit() {
    let runs = Runs::default();
    let limit = RateLimit::per_minute(2);
    let server =
        builder().tool(counter("ping", Annotations::new(), &runs)).layer(limit.clone()).build().unwrap();
    let app = http_app(&server);
    for _ in 0..2 {
        let (status, result) = http_call(&app, ALICE, "ping").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(result["isError"], Value::Null, "{result}");
    }
    // Alice has spent her allowance: refused, told when to retry, in text and in `_meta`.
    let (status, refused) = http_call(&app, ALICE, "ping").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(refused["isError"], true);
    assert_eq!(
        refused["content"][0]["text"],
        "`ping` was not run: rate limit reached (2 calls a minute per caller). Retry in 30 s."
    );
    assert!((25_000..=30_000).contains(&retry_after_ms(&refused)), "{refused}");
    // Bob is not limited by Alice: his own two calls go through, then he is refused too.
    for _ in 0..2 {
        let (_, result) = http_call(&app, BOB, "ping").await;
        assert_eq!(result["isError"], Value::Null, "{result}");
        assert_eq!(result["structuredContent"]["run"].as_u64().unwrap() as usize, runs.get());
    }
    assert_eq!(http_call(&app, BOB, "ping").await.1["isError"], true);
    assert_eq!(runs.get(), 4);
    // One key per subject.
    assert_eq!(limit.keys(), 2);
}

// ---------------------------------------------------------------------------------------------
// Result cache.

#[tokio::test]
async fn a_second_identical_call_is_served_from_the_cache_exactly_whatever_its_key_order_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("lookup", read_only_idempotent(), &runs))
            .layer(ResultCache::new())
            .build()
            .unwrap();
        let client = client(&server, stateless).await;
        let arguments = json!({"a": 1, "b": {"x": [1, {"p": true, "q": null}], "y": "z"}});
        let first = client.call("lookup", arguments.clone()).await.unwrap();
        assert!(!first.is_error());
        assert_eq!(run_of(&first), 1);
        let second = client.call("lookup", arguments).await.unwrap();
        assert_eq!(runs.get(), 1, "served from the cache");
        assert_eq!(second.json(), first.json(), "exactly what the tool answered");
        assert_eq!(second.json()["_meta"]["io.example/run"], 1);

        // The same arguments, their keys in another order (at every depth): the same call.
        let reordered: Value =
            serde_json::from_str(r#"{"b": {"y": "z", "x": [1, {"q": null, "p": true}]}, "a": 1}"#).unwrap();
        let third = client.call("lookup", reordered).await.unwrap();
        assert_eq!(runs.get(), 1);
        assert_eq!(run_of(&third), 1);

        // Other arguments: another call.
        let other = client.call("lookup", json!({"a": 2})).await.unwrap();
        assert_eq!(run_of(&other), 2);
        assert_eq!(runs.get(), 2);
    }
}

/// A tool whose output is not an object: a 2025-11-25 client gets it wrapped as
/// `{"result": …}`, a 2026-07-28 client as it is; the era's shaping happens after the layers.
#[tool(annotations(read_only, idempotent))]
async fn primes(below: u32) -> Vec<u32> {
    PRIMES_RUNS.fetch_add(1, Ordering::SeqCst);
    (2..below).filter(|n| (2..*n).all(|d| n % d != 0)).collect()
}

static PRIMES_RUNS: AtomicUsize = AtomicUsize::new(0);

#[tokio::test]
async fn a_cached_answer_reads_in_each_era_as_a_fresh_one_would() {
    let server = Server::builder().layer(ResultCache::new()).build().unwrap();
    let mut answers = Vec::new();
    for stateless in ERAS {
        let client = client(&server, stateless).await;
        let before = PRIMES_RUNS.load(Ordering::SeqCst);
        let first = client.call("primes", json!({"below": 12})).await.unwrap();
        let second = client.call("primes", json!({"below": 12})).await.unwrap();
        assert_eq!(PRIMES_RUNS.load(Ordering::SeqCst), before + 1, "stateless: {stateless}");
        assert_eq!(second.json(), first.json());
        answers.push(first);
    }
    assert_eq!(answers[0].structured(), Some(&json!({"result": [2, 3, 5, 7, 11]})));
    assert!(answers[0].text().contains("[2,3,5,7,11]"), "{}", answers[0].text());
    assert!(answers[1].text().contains("[2,3,5,7,11]"), "{}", answers[1].text());
}

#[tokio::test]
async fn another_caller_is_never_served_the_first_callers_result_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("lookup", read_only_idempotent(), &runs))
            .layer(ResultCache::new())
            .build()
            .unwrap();
        let alice = client(&server, stateless).await;
        let bob = client(&server, stateless).await;
        assert_eq!(run_of(&alice.call("lookup", json!({"q": 1})).await.unwrap()), 1);
        assert_eq!(run_of(&bob.call("lookup", json!({"q": 1})).await.unwrap()), 2);
        // Each is served their own from then on.
        assert_eq!(run_of(&alice.call("lookup", json!({"q": 1})).await.unwrap()), 1);
        assert_eq!(run_of(&bob.call("lookup", json!({"q": 1})).await.unwrap()), 2);
        assert_eq!(runs.get(), 2);
    }
}

#[tokio::test]
async fn only_tools_both_read_only_and_idempotent_are_cached_in_both_eras() {
    for stateless in ERAS {
        let kinds = [
            ("plain", Annotations::new(), false),
            ("read_only", Annotations::new().read_only(true), false),
            ("idempotent", Annotations::new().idempotent(true), false),
            ("explicitly_not", Annotations::new().read_only(false).idempotent(true), false),
            ("both", read_only_idempotent(), true),
        ];
        let runs: Vec<Runs> = kinds.iter().map(|_| Runs::default()).collect();
        let mut builder = builder().layer(ResultCache::new());
        for ((name, annotations, _), runs) in kinds.iter().zip(&runs) {
            builder = builder.tool(counter(name, annotations.clone(), runs));
        }
        let server = builder.build().unwrap();
        let client = client(&server, stateless).await;
        for ((name, _, cached), runs) in kinds.iter().zip(&runs) {
            for _ in 0..3 {
                assert!(!client.call(name, json!({"x": 1})).await.unwrap().is_error());
            }
            assert_eq!(runs.get(), if *cached { 1 } else { 3 }, "{name}, stateless: {stateless}");
        }
    }
}

#[tokio::test]
async fn an_error_is_never_cached_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("lookup", read_only_idempotent(), &runs))
            .layer(ResultCache::new())
            .build()
            .unwrap();
        let client = client(&server, stateless).await;
        for run in 1..=3 {
            let failed = client.call("lookup", json!({"fail": true})).await.unwrap();
            assert!(failed.is_error());
            assert_eq!(failed.text(), format!("failed on run {run}"));
        }
        assert_eq!(runs.get(), 3);
    }
}

#[tokio::test]
async fn an_entry_expires_after_its_time_to_live_in_both_eras() {
    for stateless in ERAS {
        let runs = Runs::default();
        let server = builder()
            .tool(counter("lookup", read_only_idempotent(), &runs))
            .layer(ResultCache::new().time_to_live(Duration::from_millis(200)))
            .build()
            .unwrap();
        let client = client(&server, stateless).await;
        assert_eq!(run_of(&client.call("lookup", json!({})).await.unwrap()), 1);
        assert_eq!(run_of(&client.call("lookup", json!({})).await.unwrap()), 1);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(run_of(&client.call("lookup", json!({})).await.unwrap()), 2);
        assert_eq!(run_of(&client.call("lookup", json!({})).await.unwrap()), 2);
        assert_eq!(runs.get(), 2);
    }
}

#[tokio::test]
async fn concurrent_identical_calls_run_the_tool_once_in_both_eras() {
    for stateless in ERAS {
        for cached in [false, true] {
            let runs = Runs::default();
            let mut builder = builder().tool(counter("lookup", read_only_idempotent(), &runs));
            if cached {
                builder = builder.layer(ResultCache::new());
            }
            let server = builder.build().unwrap();
            let client = client(&server, stateless).await;
            let params = json!({"name": "lookup", "arguments": {"sleep_ms": 200}});
            let ids: Vec<i64> = (0..3).map(|_| client.send_request("tools/call", params.clone())).collect();
            let mut answers = Vec::new();
            for id in ids {
                answers.push(client.answer(id).await.unwrap());
            }
            if !cached {
                // Without the cache the three calls run at once: the comparison is fair.
                assert_eq!((runs.get(), runs.most_at_once()), (3, 3), "stateless: {stateless}");
                continue;
            }
            // With it, the first runs the tool, the two others wait for its result.
            assert_eq!((runs.get(), runs.most_at_once()), (1, 1), "stateless: {stateless}");
            for answer in &answers {
                assert_eq!(answer["structuredContent"]["run"], 1, "{answer}");
            }
        }
    }
}

#[tokio::test]
async fn when_the_call_others_wait_for_fails_each_waiting_one_runs_the_tool_in_turn() {
    let runs = Runs::default();
    let server = builder()
        .tool(counter("lookup", read_only_idempotent(), &runs))
        .layer(ResultCache::new())
        .build()
        .unwrap();
    let client = client(&server, false).await;
    let params = json!({"name": "lookup", "arguments": {"sleep_ms": 100, "fail": true}});
    let ids: Vec<i64> = (0..3).map(|_| client.send_request("tools/call", params.clone())).collect();
    let mut texts = Vec::new();
    for id in ids {
        let answer = client.answer(id).await.unwrap();
        assert_eq!(answer["isError"], true);
        texts.push(answer["content"][0]["text"].as_str().unwrap().to_owned());
    }
    texts.sort();
    assert_eq!(texts, ["failed on run 1", "failed on run 2", "failed on run 3"]);
    // One after another: an error is never shared, nor kept.
    assert_eq!((runs.get(), runs.most_at_once()), (3, 1));
}

#[tokio::test]
async fn the_cache_holds_at_most_max_bytes_and_no_result_over_max_entry_bytes() {
    let runs = Runs::default();
    let cache = ResultCache::new().max_bytes(8 * 1024);
    let server = builder()
        .tool(counter("lookup", read_only_idempotent(), &runs))
        .layer(cache.clone())
        .build()
        .unwrap();
    let client = client(&server, false).await;
    // 100 results of about 1.3 KiB (600 bytes of padding as structured content and as text).
    for n in 0..100 {
        let result = client.call("lookup", json!({"n": n, "pad": 600})).await.unwrap();
        assert!(!result.is_error());
        assert!(cache.bytes() <= 8 * 1024, "{} bytes after {} results", cache.bytes(), n + 1);
    }
    assert!((1..100).contains(&cache.entries()), "{} entries", cache.entries());
    assert_eq!(runs.get(), 100);
    // A result over half the cache (the largest kept) is answered, never kept.
    let before = cache.entries();
    for _ in 0..2 {
        assert!(!client.call("lookup", json!({"pad": 3000})).await.unwrap().is_error());
    }
    assert_eq!(runs.get(), 102);
    assert!(cache.entries() <= before);
}
