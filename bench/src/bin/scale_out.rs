//! `mcp-scale-out`: the load driver of several instances serving as one (issue #43, item 4;
//! `scripts/bench-scale-out.sh` starts Redis, the instances and nginx, then runs it).
//!
//! ```text
//! mcp-scale-out URL [--clients 64] [--sessions 16] [--seconds 600] [--redis redis://HOST:PORT/]
//!               [--out PREFIX]
//! ```
//!
//! `--clients` clients call URL at once, each one request at a time, until `--seconds` have
//! passed: `--sessions` of them are 2025-11-25 clients (a session through `initialize`, then
//! `greet` calls; every 100 calls the session is ended with DELETE and a new one opened), the
//! others 2026-07-28 clients calling `greet`; one in four of these (the client's number a
//! multiple of 4) makes every fifth request a task: `slow_compute` of 0.5 s with the tasks
//! extension, polled with `tasks/get` every 100 ms until it completes, its result checked; every
//! tenth task's result is read a second time, through whichever instance answers. (Every client
//! comes from one address, so the server sees one caller, whose running tasks it limits to 16
//! per instance by default: 12 task clients stay under it.) Every
//! answer is checked against what was asked (the greeting names the call; the task's result
//! names the task), so a lost, mixed-up or failed request is counted, never hidden.
//!
//! With `--redis`, Redis's own command counters (`INFO commandstats`) before and after give the
//! round trips per request. Writes PREFIX.json (every figure) and prints a summary; the script
//! writes bench/scale-out-load.md from it.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const REV: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";
/// The slow_compute every task runs, in seconds.
const TASK_SECONDS: f64 = 0.5;
const POLL: Duration = Duration::from_millis(100);
/// A request not answered within this counts as lost.
const TIMEOUT: Duration = Duration::from_secs(30);
/// A task not finished within this counts as lost.
const TASK_TIMEOUT: Duration = Duration::from_secs(60);

/// What one kind of request measured.
#[derive(Default)]
struct Kind {
    micros: Vec<u32>,
    /// Per minute since the start: (count, latencies) for the stability table.
    by_minute: BTreeMap<u64, Vec<u32>>,
}

#[derive(Default)]
struct Totals {
    kinds: BTreeMap<&'static str, Kind>,
    errors: BTreeMap<&'static str, u64>,
    /// The first few errors, whole.
    error_samples: Vec<String>,
    tasks_started: u64,
    tasks_completed: u64,
    tasks_reread: u64,
    sessions_opened: u64,
    sessions_ended: u64,
    upstreams: BTreeMap<String, u64>,
}

struct Shared {
    totals: Mutex<Totals>,
    start: Instant,
    deadline: Instant,
}

impl Shared {
    fn record(&self, kind: &'static str, took: Duration, upstream: Option<String>) {
        let micros = took.as_micros().min(u128::from(u32::MAX)) as u32;
        let minute = self.start.elapsed().as_secs() / 60;
        let mut totals = self.totals.lock().unwrap();
        let entry = totals.kinds.entry(kind).or_default();
        entry.micros.push(micros);
        entry.by_minute.entry(minute).or_default().push(micros);
        if let Some(upstream) = upstream {
            *totals.upstreams.entry(upstream).or_default() += 1;
        }
    }

    fn error(&self, kind: &'static str, what: String) {
        let mut totals = self.totals.lock().unwrap();
        *totals.errors.entry(kind).or_default() += 1;
        if totals.error_samples.len() < 20 {
            totals.error_samples.push(format!("{kind}: {what}"));
        }
    }

    fn count(&self, what: impl FnOnce(&mut Totals)) {
        what(&mut self.totals.lock().unwrap());
    }
}

/// One answer: the instance that answered (nginx's `X-Upstream`), the session issued, the
/// JSON-RPC message with the request's id.
struct Answer {
    upstream: Option<String>,
    session: Option<String>,
    message: Value,
}

struct Caller {
    http: reqwest::Client,
    url: String,
    next_id: u64,
    name: String,
}

impl Caller {
    /// POSTs `method` with `params`; a 2026-07-28 request when `session` is `None`.
    async fn post(
        &mut self,
        method: &str,
        params: Value,
        mcp_name: Option<&str>,
        session: Option<&str>,
    ) -> Result<Answer, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut params = params;
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .timeout(TIMEOUT);
        match session {
            Some(session) => {
                request =
                    request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
            }
            None if method != "initialize" => {
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": REV,
                    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
                    "io.modelcontextprotocol/clientInfo": {"name": self.name, "version": "1"},
                });
                request = request.header("mcp-protocol-version", REV).header("mcp-method", method);
                if let Some(name) = mcp_name {
                    request = request.header("mcp-name", name);
                }
            }
            None => {}
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request.body(body.to_string()).send().await.map_err(|e| format!("{method}: {e}"))?;
        let status = response.status().as_u16();
        let header =
            |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (upstream, issued) = (header("x-upstream"), header("mcp-session-id"));
        let sse = header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
        let text = response.text().await.map_err(|e| format!("{method}: reading the body: {e}"))?;
        if status != 200 {
            return Err(format!("{method}: HTTP {status} from {upstream:?}: {}", cut(&text)));
        }
        let message = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m["id"] == id)
        } else {
            serde_json::from_str::<Value>(&text).ok().filter(|m| m["id"] == id)
        };
        let message = message.ok_or_else(|| format!("{method}: no answer with id {id}: {}", cut(&text)))?;
        if message.get("error").is_some() {
            return Err(format!("{method}: JSON-RPC error from {upstream:?}: {}", message["error"]));
        }
        Ok(Answer { upstream, session: issued, message })
    }

    async fn delete(&self, session: &str) -> Result<(), String> {
        let response = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| format!("DELETE: {e}"))?;
        match response.status().as_u16() {
            200 | 202 | 204 => Ok(()),
            status => Err(format!("DELETE: HTTP {status}")),
        }
    }
}

fn cut(text: &str) -> String {
    text.chars().take(300).collect()
}

fn text_of(result: &Value) -> Option<&str> {
    result["content"][0]["text"].as_str()
}

/// A greeting checked against its name.
async fn greet(caller: &mut Caller, shared: &Shared, who: &str, session: Option<&str>, kind: &'static str) {
    let begun = Instant::now();
    let params = json!({"name": "greet", "arguments": {"name": who}});
    match caller.post("tools/call", params, Some("greet"), session).await {
        Ok(answer) => {
            let expected = format!("Hello, {who}!");
            if text_of(&answer.message["result"]) == Some(expected.as_str()) {
                shared.record(kind, begun.elapsed(), answer.upstream);
            } else {
                shared.error(kind, format!("wrong answer for {who}: {}", answer.message));
            }
        }
        Err(e) => shared.error(kind, e),
    }
}

/// A 2026-07-28 client: four greetings, then a task, over and over.
async fn stateless_client(mut caller: Caller, shared: Arc<Shared>, number: usize) {
    let mut n = 0u64;
    while Instant::now() < shared.deadline {
        n += 1;
        if !n.is_multiple_of(5) || !number.is_multiple_of(4) {
            greet(&mut caller, &shared, &format!("c{number}-{n}"), None, "greet (2026-07-28)").await;
            continue;
        }
        let label = format!("c{number}-t{n}");
        let begun = Instant::now();
        let params = json!({"name": "slow_compute", "arguments": {"seconds": TASK_SECONDS, "label": label}});
        let created = match caller.post("tools/call", params, Some("slow_compute"), None).await {
            Ok(answer) => answer,
            Err(e) => {
                shared.error("task created", e);
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        let result = &created.message["result"];
        let Some(task_id) = result["taskId"].as_str().filter(|_| result["resultType"] == "task") else {
            shared.error("task created", format!("not a task: {}", created.message));
            tokio::time::sleep(POLL).await;
            continue;
        };
        let task_id = task_id.to_owned();
        shared.record("task created", begun.elapsed(), created.upstream);
        shared.count(|t| t.tasks_started += 1);
        let expected = format!("slow_compute({label}) done after {TASK_SECONDS}s");
        let finished = loop {
            if begun.elapsed() > TASK_TIMEOUT {
                break Err(format!("task {task_id} not finished after {TASK_TIMEOUT:?}"));
            }
            tokio::time::sleep(POLL).await;
            let polled = Instant::now();
            match caller.post("tasks/get", json!({"taskId": task_id}), Some(&task_id), None).await {
                Ok(answer) => {
                    shared.record("tasks/get", polled.elapsed(), answer.upstream);
                    let state = &answer.message["result"];
                    match state["status"].as_str() {
                        Some("working") => continue,
                        Some("completed") => break Ok(state.clone()),
                        other => break Err(format!("task {task_id} ended {other:?}: {state}")),
                    }
                }
                Err(e) => shared.error("tasks/get", e),
            }
        };
        match finished {
            Ok(state) if text_of(&state["result"]) == Some(expected.as_str()) => {
                shared.record("task, created to result read", begun.elapsed(), None);
                shared.count(|t| t.tasks_completed += 1);
                if shared.totals.lock().unwrap().tasks_completed.is_multiple_of(10) {
                    // Read again, through whichever instance answers: the same result.
                    match caller.post("tasks/get", json!({"taskId": task_id}), Some(&task_id), None).await {
                        Ok(again) if again.message["result"]["result"] == state["result"] => {
                            shared.count(|t| t.tasks_reread += 1)
                        }
                        Ok(again) => {
                            shared.error("task result", format!("read again, differs: {}", again.message))
                        }
                        Err(e) => shared.error("task result", e),
                    }
                }
            }
            Ok(state) => shared.error("task result", format!("wrong result for {label}: {state}")),
            Err(e) => shared.error("task result", e),
        }
    }
}

/// A 2025-11-25 client: a session, 100 greetings, DELETE, again.
async fn session_client(mut caller: Caller, shared: Arc<Shared>, number: usize) {
    let mut n = 0u64;
    while Instant::now() < shared.deadline {
        let begun = Instant::now();
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": caller.name, "version": "1"}});
        let session = match caller.post("initialize", params, None, None).await {
            Ok(Answer { session: Some(session), upstream, .. }) => {
                shared.record("initialize (2025-11-25)", begun.elapsed(), upstream);
                session
            }
            Ok(answer) => {
                shared.error("initialize (2025-11-25)", format!("no session: {}", answer.message));
                tokio::time::sleep(POLL).await;
                continue;
            }
            Err(e) => {
                shared.error("initialize (2025-11-25)", e);
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        shared.count(|t| t.sessions_opened += 1);
        // The initialized notification: 202, no answer.
        let notified = caller
            .http
            .post(&caller.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(TIMEOUT)
            .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .send()
            .await;
        match notified.map(|r| r.status().as_u16()) {
            Ok(202) => {}
            other => shared.error("initialize (2025-11-25)", format!("notifications/initialized: {other:?}")),
        }
        for _ in 0..100 {
            if Instant::now() >= shared.deadline {
                break;
            }
            n += 1;
            greet(&mut caller, &shared, &format!("s{number}-{n}"), Some(&session), "greet (2025-11-25)")
                .await;
        }
        let ended = Instant::now();
        match caller.delete(&session).await {
            Ok(()) => {
                shared.record("DELETE (2025-11-25)", ended.elapsed(), None);
                shared.count(|t| t.sessions_ended += 1);
            }
            Err(e) => shared.error("DELETE (2025-11-25)", e),
        }
    }
}

/// Redis's command counters: calls by command (`INFO commandstats`).
fn command_stats(url: &str) -> Result<BTreeMap<String, u64>, String> {
    let address = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut connection = std::net::TcpStream::connect(address).map_err(|e| format!("{address}: {e}"))?;
    connection.write_all(b"*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n").map_err(|e| e.to_string())?;
    connection.set_read_timeout(Some(Duration::from_millis(300))).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    while let Ok(n) = connection.read(&mut buffer) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    let mut stats = BTreeMap::new();
    for line in text.lines() {
        let Some((name, fields)) = line.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let calls = fields.split(',').find_map(|f| f.strip_prefix("calls=")).and_then(|c| c.parse().ok());
        stats.insert(name.to_owned(), calls.unwrap_or(0));
    }
    if stats.is_empty() { Err(format!("no command counters in {:?}", cut(&text))) } else { Ok(stats) }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    f64::from(sorted[rank]) / 1000.0
}

fn summary(micros: &[u32]) -> Value {
    let mut sorted = micros.to_vec();
    sorted.sort_unstable();
    json!({
        "count": sorted.len(),
        "p50_ms": percentile(&sorted, 50.0),
        "p99_ms": percentile(&sorted, 99.0),
        "p999_ms": percentile(&sorted, 99.9),
        "max_ms": sorted.last().map_or(f64::NAN, |m| f64::from(*m) / 1000.0),
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut url, mut clients, mut sessions, mut seconds) = (None, 64usize, 16usize, 600u64);
    let (mut redis, mut out) = (None::<String>, None::<String>);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match arg.as_str() {
            "--clients" => clients = value("--clients").parse().expect("--clients: a number"),
            "--sessions" => sessions = value("--sessions").parse().expect("--sessions: a number"),
            "--seconds" => seconds = value("--seconds").parse().expect("--seconds: a number"),
            "--redis" => redis = Some(value("--redis")),
            "--out" => out = Some(value("--out")),
            "-h" | "--help" => {
                println!(
                    "usage: mcp-scale-out URL [--clients 64] [--sessions 16] [--seconds 600] [--redis URL] [--out PREFIX]"
                );
                return;
            }
            other if !other.starts_with('-') && url.is_none() => url = Some(other.to_owned()),
            other => {
                eprintln!("mcp-scale-out: unknown argument {other} (see --help)");
                std::process::exit(2);
            }
        }
    }
    let url = url.expect("mcp-scale-out URL: the MCP endpoint to load");
    assert!(sessions <= clients, "--sessions is a part of --clients");
    let before = redis.as_deref().map(|r| command_stats(r).expect("Redis's command counters"));

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a Tokio runtime");
    let start = Instant::now();
    let shared = Arc::new(Shared {
        totals: Mutex::new(Totals::default()),
        start,
        deadline: start + Duration::from_secs(seconds),
    });
    runtime.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(clients)
            .tcp_nodelay(true)
            .build()
            .expect("an HTTP client");
        let mut running = Vec::new();
        for number in 0..clients {
            let caller =
                Caller { http: http.clone(), url: url.clone(), next_id: 0, name: format!("load-{number}") };
            let shared = shared.clone();
            running.push(if number < sessions {
                tokio::spawn(session_client(caller, shared, number))
            } else {
                tokio::spawn(stateless_client(caller, shared, number))
            });
        }
        let mut minute = 0;
        let progress = async {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                minute += 1;
                let totals = shared.totals.lock().unwrap();
                let requests: usize = totals.kinds.values().map(|k| k.micros.len()).sum();
                let errors: u64 = totals.errors.values().sum();
                eprintln!("# minute {minute}: {requests} requests answered, {errors} errors");
            }
        };
        tokio::select! {
            _ = futures_join(running) => {}
            _ = progress => {}
        }
    });
    let took = start.elapsed();
    let after = redis.as_deref().map(|r| command_stats(r).expect("Redis's command counters"));

    let totals = shared.totals.lock().unwrap();
    let requests: u64 = totals.kinds.iter().filter(|(k, _)| !k.starts_with("task,")).map(|(_, k)| k.micros.len() as u64).sum::<u64>()
        + totals.sessions_opened // each session's notifications/initialized
        + totals.tasks_reread;
    let errors: u64 = totals.errors.values().sum();
    let kinds: BTreeMap<&str, Value> = totals
        .kinds
        .iter()
        .map(|(name, kind)| {
            let mut figures = summary(&kind.micros);
            figures["by_minute"] = kind
                .by_minute
                .iter()
                .map(|(minute, micros)| {
                    let mut s = summary(micros);
                    s["minute"] = json!(minute + 1);
                    s
                })
                .collect();
            (*name, figures)
        })
        .collect();
    let redis_figures = match (before, after) {
        (Some(before), Some(after)) => {
            let mut by_command: BTreeMap<String, u64> = BTreeMap::new();
            for (name, calls) in &after {
                let delta = calls - before.get(name).copied().unwrap_or(0);
                // The two INFOs asked here are not the service's.
                let delta = if name == "info" { delta.saturating_sub(1) } else { delta };
                if delta > 0 {
                    by_command.insert(name.clone(), delta);
                }
            }
            let total: u64 = by_command.values().sum();
            json!({
                "commands": total,
                "per_request": total as f64 / requests.max(1) as f64,
                "by_command": by_command,
            })
        }
        _ => Value::Null,
    };
    let report = json!({
        "url": url,
        "clients": clients,
        "sessions_clients": sessions,
        "seconds": took.as_secs_f64(),
        "requests_answered": requests,
        "requests_per_second": requests as f64 / took.as_secs_f64(),
        "errors": errors,
        "errors_by_kind": totals.errors,
        "error_samples": totals.error_samples,
        "tasks": {"started": totals.tasks_started, "completed_and_checked": totals.tasks_completed,
                  "read_again_identical": totals.tasks_reread},
        "sessions": {"opened": totals.sessions_opened, "ended": totals.sessions_ended},
        "upstreams": totals.upstreams,
        "kinds": kinds,
        "redis": redis_figures,
    });
    let text = serde_json::to_string_pretty(&report).expect("JSON");
    if let Some(out) = out {
        std::fs::write(format!("{out}.json"), &text).expect("write the report");
    }
    println!("{text}");
    if errors > 0 || totals.tasks_started != totals.tasks_completed {
        eprintln!(
            "mcp-scale-out: {errors} errors; {} tasks started, {} completed with their result",
            totals.tasks_started, totals.tasks_completed
        );
        std::process::exit(1);
    }
}

/// Waits for every client.
async fn futures_join(running: Vec<tokio::task::JoinHandle<()>>) {
    for client in running {
        if let Err(e) = client.await {
            eprintln!("mcp-scale-out: a client panicked: {e}");
        }
    }
}
