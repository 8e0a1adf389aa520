//! Serves the tools of a JSON file, deferred: `tools/list` shows the search / describe / call
//! meta-tools, and each tool's handler returns its (validated) arguments. A way to try deferred
//! mode on a real catalog, or to prototype a large server before writing it.
//!
//! ```sh
//! cargo run --example catalog -- tests/data/catalog.json            # stdio
//! cargo run --example catalog -- tests/data/catalog.json list       # what tools/list shows
//! cargo run --example catalog -- tests/data/catalog.json --http 8080
//! # searching by meaning as well (HybridRanker::from_model; the model from scripts/fetch-model.sh,
//! # the tools embedded in the background, their vectors cached in ~/.cache/mcp-tools):
//! cargo run --release --features embeddings --example catalog -- tests/data/catalog.json \
//!     --model .cache/models/all-MiniLM-L6-v2
//! # the same model run by another encoder (`--encoder int8`, the default; `exact`: f32 products;
//! # `reference`: candle_transformers' own BERT), as scripts/bench-catalog-startup.py compares them:
//! cargo run --release --features embeddings --example catalog -- tests/data/catalog.json \
//!     --model .cache/models/all-MiniLM-L6-v2 --encoder reference
//! ```
//!
//! The file has the shape of a `tools/list` result: `{"tools": [{"name", "description",
//! "inputSchema", "title"?, "annotations"?, "_meta"?, "tags"?}, ...]}` (`tags`, not part of MCP,
//! feeds the search's tag filter). A tool with `"defer": false` stays listed.

use std::process::ExitCode;

use mcp_tools::deferred::DeferredTools;
use mcp_tools::{Annotations, Server, Tool, ToolResult};
use serde_json::Value;

fn load(path: &str) -> Result<Vec<Tool>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let list: Value = serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let tools = list["tools"].as_array().ok_or_else(|| format!("{path} has no \"tools\" array"))?;
    let mut out = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        let name = t["name"].as_str().ok_or_else(|| format!("tool #{i} has no name"))?;
        let description = t["description"].as_str().unwrap_or_default();
        let schema = t.get("inputSchema").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let mut tool = Tool::new(name, description, schema, |arguments, _ctx| async move {
            ToolResult::structured(arguments)
        });
        if let Some(title) = t["title"].as_str() {
            tool = tool.title(title);
        }
        if let Some(annotations) = t.get("annotations") {
            let annotations: Annotations = serde_json::from_value(annotations.clone())
                .map_err(|e| format!("tool `{name}`: bad annotations: {e}"))?;
            tool = tool.annotations(annotations);
        }
        if let Some(tags) = t["tags"].as_array() {
            tool = tool.tags(tags.iter().filter_map(Value::as_str));
        }
        if let Some(Value::Object(meta)) = t.get("_meta") {
            for (key, value) in meta {
                tool = tool.meta(key.clone(), value.clone());
            }
        }
        if t["defer"] == Value::Bool(false) {
            tool = tool.defer(false);
        }
        out.push(tool);
    }
    Ok(out)
}

/// The deferral, searching with the sentence-embedding model in `model` if one is given, run by
/// `encoder` (`int8`, the default: `HybridRanker::from_model`; `exact`: the same with f32
/// products; `reference`: candle_transformers' own BERT, `SentenceEmbedder::reference`).
fn deferral(model: Option<&str>, encoder: &str) -> Result<DeferredTools, String> {
    let deferred = DeferredTools::new().pin(["get_status"]);
    let Some(model) = model else { return Ok(deferred) };
    #[cfg(feature = "embeddings")]
    {
        use mcp_tools::deferred::{HybridRanker, SentenceEmbedder};
        let fail = |e: mcp_tools::deferred::EmbedError| format!("--model: {e}");
        let ranker = match encoder {
            "int8" => HybridRanker::from_model(model),
            "exact" => HybridRanker::from_model_with(model, SentenceEmbedder::exact),
            "reference" => HybridRanker::from_model_with(model, SentenceEmbedder::reference),
            other => return Err(format!("--encoder {other}: int8, exact or reference")),
        }
        .map_err(fail)?;
        Ok(deferred.ranker(ranker))
    }
    #[cfg(not(feature = "embeddings"))]
    {
        let _ = (deferred, encoder);
        Err(format!("--model {model}: build with `--features embeddings`"))
    }
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().filter(|a| !a.starts_with('-')).cloned() else {
        eprintln!(
            "usage: catalog FILE.json [--model DIR [--encoder int8|exact|reference]] [list | call NAME ARGS | --http ADDR ...]"
        );
        return ExitCode::from(2);
    };
    args.remove(0);
    let mut model = None;
    if args.first().is_some_and(|a| a == "--model") {
        if args.len() < 2 {
            eprintln!("error: --model needs a directory");
            return ExitCode::from(2);
        }
        model = Some(args.remove(1));
        args.remove(0);
    }
    let mut encoder = String::from("int8");
    if model.is_some() && args.first().is_some_and(|a| a == "--encoder") {
        if args.len() < 2 {
            eprintln!("error: --encoder needs int8, exact or reference");
            return ExitCode::from(2);
        }
        encoder = args.remove(1);
        args.remove(0);
    }
    let (tools, deferred) = match load(&path).and_then(|t| Ok((t, deferral(model.as_deref(), &encoder)?))) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut builder = Server::builder()
        .name("catalog")
        .version(env!("CARGO_PKG_VERSION"))
        .inventory(false)
        .defer_tools(deferred);
    for tool in tools {
        builder = builder.tool(tool);
    }
    // The builder's `run_with_args` sets up logging before it builds the server: with every
    // vector cached, the semantic index is ready (and says so in the log) within milliseconds of
    // the build, before a `Server::run_with_args` would have set logging up.
    builder.run_with_args(args)
}
