//! The in-process dispatch path, without a transport: a JSON-RPC message goes through the
//! session (decode, route, deserialize the arguments, call, encode) and its answer comes back
//! on the in-memory queue. `cargo bench -p mcp-tools-bench --bench dispatch`.

use mcp_tools::testing::TestClient;
use mcp_tools::{Server, Tool, ToolResult, tool};
use serde_json::json;

/// Add two numbers.
#[tool]
async fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

const ADD: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1.5,"b":2}}}"#;
const ADD_STATELESS: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1.5,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

/// Sends `message` over `client` for every iteration and checks the first answer.
fn run(bencher: divan::Bencher, rt: &tokio::runtime::Runtime, client: &TestClient, message: &str) {
    let answer = rt.block_on(client.send_raw(message));
    assert!(answer.get("result").is_some(), "{answer}");
    bencher.bench_local(|| rt.block_on(client.send_raw(message)));
}

/// `tools/call add` on an initialized 2025-11-25 session.
#[divan::bench]
fn call_handshake(bencher: divan::Bencher) {
    let rt = runtime();
    let server = Server::builder().build().expect("a server");
    let client = rt.block_on(TestClient::connect(&server));
    run(bencher, &rt, &client, ADD);
}

/// `tools/call add` as a 2026-07-28 request (the envelope read on every call).
#[divan::bench]
fn call_stateless(bencher: divan::Bencher) {
    let rt = runtime();
    let server = Server::builder().build().expect("a server");
    let client = rt.block_on(async { TestClient::connect_uninitialized(&server) });
    run(bencher, &rt, &client, ADD_STATELESS);
}

/// `tools/list` of one page of `n` runtime tools (pre-serialised at build).
#[divan::bench(args = [10, 1_000])]
fn list(bencher: divan::Bencher, n: usize) {
    let rt = runtime();
    let mut builder = Server::builder().inventory(false).page_size(n);
    for i in 0..n {
        builder = builder.tool(Tool::new(
            format!("tool_{i}"),
            "Looks a record up by its id.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
            |args, _| async move { ToolResult::structured(args) },
        ));
    }
    let server = builder.build().expect("a server");
    let client = rt.block_on(TestClient::connect(&server));
    run(bencher, &rt, &client, LIST);
}
