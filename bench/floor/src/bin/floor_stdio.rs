//! The stdio floor: what no framework can beat. Read a line, parse it with serde_json, answer,
//! write, flush; one thread, no runtime. Serves `add` and `echo` like every server of the suite.
//!
//! `floor-stdio [TOOLS_LIST.json]`: with a file, `tools/list` answers with its contents (a
//! pre-serialised `tools/list` result) written as they are.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

#[path = "../floor.rs"]
mod floor;

fn main() {
    let page = std::env::args()
        .nth(1)
        .map(|path| std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}")));
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = line.expect("stdin");
        let Ok(request) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = request.get("id") else { continue }; // a notification
        let params = &request["params"];
        let method = request["method"].as_str().unwrap_or_default();
        let answer = match (method, &page) {
            ("tools/list", Some(page)) => {
                // The pre-serialised page, written by hand.
                writeln!(stdout, "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{}}}", page.trim()).unwrap();
                stdout.flush().unwrap();
                continue;
            }
            ("tools/list", None) => floor_tools(),
            _ => floor::result(method, params).unwrap_or_else(|| json!({})),
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "result": answer});
        serde_json::to_writer(&mut stdout, &message).unwrap();
        stdout.write_all(b"\n").unwrap();
        stdout.flush().unwrap();
    }
}

fn floor_tools() -> Value {
    let number = json!({"type": "number"});
    json!({"tools": [
        {"name": "add", "description": "Add two numbers.", "inputSchema": {"type": "object", "properties": {"a": number, "b": number}, "required": ["a", "b"]}},
        {"name": "echo", "description": "Echo a text back.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    ]})
}
