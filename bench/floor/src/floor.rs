//! What both floors answer: the result of `initialize` and of a call to `add` or `echo` (marked
//! complete for a 2026-07-28 request), computed from a parsed request with serde_json and
//! nothing else.

use serde_json::{Value, json};

/// The result for `method` with `params`, if the floor answers it by computation.
pub fn result(method: &str, params: &Value) -> Option<Value> {
    Some(match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"},
        }),
        "tools/call" => {
            let args = &params["arguments"];
            let text = match params["name"].as_str() {
                Some("add") => {
                    (args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0)).to_string()
                }
                Some("echo") => args["text"].as_str().unwrap_or_default().to_owned(),
                _ => "unknown tool".to_owned(),
            };
            let content = json!([{"type": "text", "text": text}]);
            match params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() {
                // A 2026-07-28 request: its result says it is complete.
                Some(_) => json!({"resultType": "complete", "content": content, "isError": false}),
                None => json!({"content": content, "isError": false}),
            }
        }
        _ => return None,
    })
}
