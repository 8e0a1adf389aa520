//! Benchmark of deferred mode as a client sees it, on a synthetic 10,000-tool catalog:
//!
//! * token economy: bytes of `tools/list` served directly vs deferred;
//! * `search_tools` round trip over stdio against a `ping` round trip (target: ≤ 1.5×).
//!
//! Run with `scripts/bench-deferred.sh` (builds the release binaries, writes bench/deferred.md).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tools::deferred::DeferredTools;
use mcp_tools::{Server, Tool, ToolResult};
use serde_json::{Value, json};

const TOOLS: usize = 10_000;
const ROUNDS: usize = 2_000;

const VERBS: &[&str] = &[
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "export",
    "import",
    "archive",
    "restore",
    "approve",
    "assign",
    "summarize",
    "translate",
    "convert",
    "schedule",
    "cancel",
    "sync",
    "validate",
    "notify",
];
const NOUNS: &[&str] = &[
    "invoice",
    "customer",
    "order",
    "ticket",
    "repository",
    "branch",
    "calendar_event",
    "email",
    "contact",
    "payment",
    "shipment",
    "product",
    "warehouse",
    "employee",
    "timesheet",
    "report",
    "dashboard",
    "alert",
    "incident",
    "deployment",
    "container",
    "database",
    "backup",
    "certificate",
    "domain",
    "user",
    "group",
    "permission",
    "document",
    "spreadsheet",
    "presentation",
    "meeting",
    "recording",
    "transcript",
    "message",
    "channel",
    "playlist",
    "forecast",
    "budget",
    "expense",
    "subscription",
    "coupon",
    "review",
    "survey",
    "lead",
    "campaign",
    "webhook",
    "secret",
    "log",
    "metric",
];
const SYSTEMS: &[&str] = &["crm", "erp", "git", "mail", "chat", "cloud", "hr", "finance", "support", "media"];

/// A deterministic catalog: `{system}.{verb}_{noun}_{n}` with descriptions and parameters.
fn catalog() -> Vec<Value> {
    (0..TOOLS)
        .map(|i| {
            let verb = VERBS[i % VERBS.len()];
            let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
            let system = SYSTEMS[(i / (VERBS.len() * NOUNS.len())) % SYSTEMS.len()];
            let variant = i / (VERBS.len() * NOUNS.len() * SYSTEMS.len());
            let thing = noun.replace('_', " ");
            json!({
                "name": format!("{system}.{verb}_{noun}_{variant}"),
                "description": format!(
                    "{} a {thing} in the {system} system. Use it when the user asks to {verb} one or more {thing}s; \
                     returns the affected {thing} with its id, owner and timestamps.",
                    capitalize(verb)
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": format!("The {thing}'s id")},
                        "query": {"type": "string", "description": format!("Words to find the {thing} by")},
                        "limit": {"type": "integer", "description": "At most this many results"}
                    },
                    "required": ["id"]
                },
                "tags": [system]
            })
        })
        .collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

fn server(tools: &[Value], deferred: bool) -> Server {
    let mut builder = Server::builder().inventory(false).page_size(TOOLS * 2);
    if deferred {
        builder = builder.defer_tools(DeferredTools::new());
    }
    for t in tools {
        builder = builder.tool(
            Tool::new(
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
                t["inputSchema"].clone(),
                |args, _| async move { ToolResult::structured(args) },
            )
            .tags(t["tags"].as_array().unwrap().iter().filter_map(Value::as_str)),
        );
    }
    builder.build().expect("a valid catalog")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!(
            "Deferred mode as a client sees it, on a synthetic catalog (see bench/deferred.md).\n\
             usage: bench_deferred (no options; scripts/bench-deferred.sh builds and runs it)"
        );
        return;
    }
    if let Some(arg) = std::env::args().nth(1) {
        eprintln!("bench_deferred: unknown argument {arg} (it takes none; see --help)");
        std::process::exit(2);
    }
    let tools = catalog();
    let direct = server(&tools, false).tools_json().to_string().len();
    let deferred = server(&tools, true).tools_json().to_string().len();
    println!("## Token economy ({TOOLS} tools)\n");
    println!("| `tools/list` | bytes | ≈ tokens (bytes / 4) |");
    println!("|---|---|---|");
    println!("| direct | {direct} | {} |", direct / 4);
    println!("| deferred | {deferred} | {} |", deferred / 4);
    println!("\nDeferred is {:.0}× smaller.\n", direct as f64 / deferred as f64);

    // Round trips over stdio against the release `catalog` example.
    let dir = std::env::temp_dir().join(format!("mcp-tools-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("catalog.json");
    std::fs::write(&file, json!({"tools": tools}).to_string()).unwrap();
    let binary = std::env::current_exe().unwrap().with_file_name("catalog");
    let mut child = Command::new(&binary)
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {}: {e} (build it with --example catalog)", binary.display())
        });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut id = 0u64;
    let mut round_trip = |method: &str, params: Value| -> Duration {
        id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let start = Instant::now();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        let elapsed = start.elapsed();
        assert!(answer.contains(&format!("\"id\":{id}")), "unexpected answer {answer}");
        elapsed
    };
    round_trip(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
    );
    let queries = [
        "create an invoice for a customer",
        "list open support tickets",
        "delete a git branch",
        "schedule a meeting",
        "export the budget report",
        "approve an expense",
        "translate a document",
        "restore a database backup",
    ];
    let mut pings = Vec::with_capacity(ROUNDS);
    let mut searches = Vec::with_capacity(ROUNDS);
    let mut calls = Vec::with_capacity(ROUNDS);
    let echo = tools[0]["name"].as_str().unwrap().to_owned();
    for round in 0..ROUNDS + 200 {
        let ping = round_trip("ping", json!({}));
        let query = queries[round % queries.len()];
        let search = round_trip("tools/call", json!({"name": "search_tools", "arguments": {"query": query}}));
        let call = round_trip("tools/call", json!({"name": echo, "arguments": {"id": "42"}}));
        if round >= 200 {
            pings.push(ping);
            searches.push(search);
            calls.push(call);
        }
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    pings.sort();
    searches.sort();
    calls.sort();
    let (ping50, search50) = (percentile(&pings, 0.5), percentile(&searches, 0.5));
    println!("## `search_tools` round trip over stdio ({TOOLS} tools, {ROUNDS} rounds after 200 warm-up)\n");
    println!("| request | p50 | p90 | p99 |");
    println!("|---|---|---|---|");
    for (name, v) in
        [("ping", &pings), ("search_tools (limit 10)", &searches), ("tools/call of one catalog tool", &calls)]
    {
        println!(
            "| {name} | {:.1} µs | {:.1} µs | {:.1} µs |",
            percentile(v, 0.5).as_secs_f64() * 1e6,
            percentile(v, 0.9).as_secs_f64() * 1e6,
            percentile(v, 0.99).as_secs_f64() * 1e6
        );
    }
    let ratio = search50.as_secs_f64() / ping50.as_secs_f64();
    println!("\n`search_tools` p50 / `ping` p50 = {ratio:.2} (target ≤ 1.5)");
}
