//! The performance suite's large catalog (`scripts/bench-perf.sh`, `bench/perf.md`): `add` and
//! `echo` as runtime tools, plus generated tools up to N in all, every one listed on one page.
//!
//! ```sh
//! cargo run --release --example bench_large -- 10000           # stdio
//! cargo run --release --example bench_large -- 10000 --http 127.0.0.1:8080
//! ```

use std::process::ExitCode;

use mcp_tools::{Server, Tool, ToolResult};
use serde_json::json;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let Some(count) = args.first().and_then(|n| n.parse::<usize>().ok()).filter(|&n| n >= 2) else {
        eprintln!("usage: bench_large N [--http ADDR | list | ...]   (N ≥ 2 tools in all)");
        return ExitCode::from(2);
    };
    args.remove(0);
    let number = json!({"type": "number"});
    let mut builder = Server::builder()
        .name("bench_large")
        .inventory(false)
        .page_size(count)
        .tool(Tool::new(
            "add",
            "Add two numbers.",
            json!({"type": "object", "properties": {"a": number, "b": number}, "required": ["a", "b"]}),
            |args, _| async move {
                let sum = args["a"].as_f64().unwrap_or_default() + args["b"].as_f64().unwrap_or_default();
                Ok(ToolResult::new().text(sum.to_string()))
            },
        ))
        .tool(Tool::new(
            "echo",
            "Echo a text back.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            |args, _| async move { Ok(ToolResult::new().text(args["text"].as_str().unwrap_or_default())) },
        ));
    for i in 0..count - 2 {
        builder = builder.tool(Tool::new(
            format!("tool_{i:05}"),
            format!("Generated tool number {i}: looks a record up by its id and returns it with its owner."),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The record's id"},
                    "limit": {"type": "integer", "description": "At most this many results"}
                },
                "required": ["id"]
            }),
            |args, _| async move { ToolResult::structured(args) },
        ));
    }
    match builder.build() {
        Ok(server) => server.run_with_args(args),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
