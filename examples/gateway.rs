//! A gateway: every MCP server of a host's configuration file behind one endpoint. It reads the
//! `mcpServers` file Claude Desktop, Cursor and Windsurf write (or VS Code's `servers`), mounts
//! each server under its name (`github` → `github_create_issue`), and serves them all over
//! stdio or Streamable HTTP, deferred by default: clients see the search / describe / call
//! meta-tools and find the one tool they need among all the servers' (by meaning as well, with
//! `--model`).
//!
//! ```sh
//! cargo run --example gateway -- mcp.json                       # stdio
//! cargo run --example gateway -- mcp.json --http 127.0.0.1:8080 # Streamable HTTP
//! cargo run --example gateway -- mcp.json --no-defer list       # every tool, listed
//! cargo run --release --features embeddings --example gateway -- mcp.json \
//!     --model .cache/models/all-MiniLM-L6-v2                     # search by meaning too
//! ```
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//!     "github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}},
//!     "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${env:DOCS_TOKEN}"}}
//!   }
//! }
//! ```
//!
//! An entry has a `command` (with `args`, `env` and `cwd`) or a `url` (with `headers`);
//! `"disabled": true` leaves it out, and `${env:NAME}` (or `${NAME}`) in a string is replaced by
//! that environment variable. `"prefix"` replaces the name as the prefix of the server's items
//! (`"prefix": "gh"` → `gh_create_issue`); `"prefix": ""` serves them under their own names
//! (`create_issue`, resources and prompts unchanged), e.g. to put one server behind the gateway
//! as it is. Two servers' items with one name fail the start, naming both. A server that exits
//! is started again with back-off; while it is down its tools leave the list and the search, and
//! a call to one fails at once saying why. One slow or failing server never holds up the others.
//!
//! After `--http ADDR` come the HTTP options of any server of this crate (`--sse`,
//! `--resumable`, `--stateless`, `--allow-host HOST`, `--auth-*` …): scripts/interop.sh runs the
//! official conformance suite against `gateway CONF.json --no-defer --http ADDR --sse
//! --resumable` in front of examples/everything (`"prefix": ""`), over stdio and over HTTP.

use std::process::ExitCode;
use std::time::Duration;

use mcp_tools::Server;
use mcp_tools::compose::{Mount, Upstream};
use mcp_tools::deferred::DeferredTools;
use serde_json::{Map, Value};

/// One server of the file.
#[derive(Debug)]
struct Entry {
    name: String,
    /// The prefix of its items: `"prefix"` if given, else its name (see [`prefix`]).
    prefix: String,
    upstream: Upstream,
}

/// The servers of the configuration text `text` (named `path` in errors).
fn servers(path: &str, text: &str) -> Result<Vec<Entry>, String> {
    let config: Value = serde_json::from_str(text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    // Claude Desktop / Cursor: `mcpServers`; VS Code: `servers` (or `mcp.servers` in settings).
    let servers = config
        .get("mcpServers")
        .or_else(|| config.get("servers"))
        .or_else(|| config.get("mcp").and_then(|m| m.get("servers")))
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{path} has no \"mcpServers\" (or \"servers\") object"))?;
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for (name, entry) in servers {
        let prefix = match entry.get("prefix") {
            None | Some(Value::Null) => Ok(prefix(name)),
            Some(Value::String(given)) => Ok(given.clone()),
            Some(other) => Err(format!("`prefix` must be a string, not {other}")),
        };
        match prefix.and_then(|prefix| Ok((prefix, upstream(name, entry)?))) {
            Ok((prefix, Some(upstream))) => entries.push(Entry { name: name.clone(), prefix, upstream }),
            Ok((_, None)) => {}
            Err(e) => problems.push(format!("server `{name}`: {e}")),
        }
    }
    if problems.is_empty() { Ok(entries) } else { Err(problems.join("\n")) }
}

/// The upstream of one entry (`None` when disabled).
fn upstream(name: &str, entry: &Value) -> Result<Option<Upstream>, String> {
    let Some(entry) = entry.as_object() else { return Err("is not an object".into()) };
    if entry.get("disabled") == Some(&Value::Bool(true)) {
        return Ok(None);
    }
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand(s).map(Some),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        }
    };
    let pairs = |key: &str| -> Result<Vec<(String, String)>, String> {
        let Some(map) = entry.get(key) else { return Ok(Vec::new()) };
        let map: &Map<String, Value> = map.as_object().ok_or_else(|| format!("`{key}` must be an object"))?;
        map.iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), expand(s)?)),
                other => Err(format!("`{key}.{k}` must be a string, not {other}")),
            })
            .collect()
    };
    let kind = text("type")?;
    match (text("command")?, text("url")?, kind.as_deref()) {
        (_, _, Some("sse")) => Err(
            "uses the HTTP+SSE transport of 2024-11-05, which this gateway does not speak: give its Streamable HTTP URL"
                .into(),
        ),
        (Some(command), _, None | Some("stdio")) => {
            let args = match entry.get("args") {
                None => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|a| a.as_str().ok_or_else(|| format!("`args` must be strings, not {a}")).and_then(expand))
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(format!("`args` must be an array, not {other}")),
            };
            let mut upstream = Upstream::command(command, args);
            for (key, value) in pairs("env")? {
                upstream = upstream.env(key, value);
            }
            if let Some(dir) = text("cwd")? {
                upstream = upstream.current_dir(dir);
            }
            Ok(Some(upstream))
        }
        (_, Some(url), None | Some("http" | "streamable-http" | "streamableHttp")) => {
            let mut upstream = Upstream::http(url);
            for (key, value) in pairs("headers")? {
                upstream = upstream.header(key, value);
            }
            Ok(Some(upstream))
        }
        (_, _, Some(other)) if !matches!(other, "stdio" | "http" | "streamable-http" | "streamableHttp") => {
            Err(format!("has the unknown type `{other}`"))
        }
        _ => Err(format!("`{name}` needs a `command` (a stdio server) or a `url` (a Streamable HTTP server)")),
    }
}

/// `text` with `${env:NAME}` and `${NAME}` replaced by the environment's values.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            return Err(format!("`{text}` has an unclosed `${{`"));
        };
        let name = &rest[start + 2..start + len];
        let name = name.strip_prefix("env:").unwrap_or(name);
        let value =
            std::env::var(name).map_err(|_| format!("`{text}` names ${{{name}}}, which is not set"))?;
        out.push_str(&value);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The prefix of a server's items: its name, with what tool names do not allow made `_`.
fn prefix(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// The deferral, searching with the sentence-embedding model in `model` if one is given.
fn deferral(model: Option<&str>) -> Result<DeferredTools, String> {
    let deferred = DeferredTools::new();
    let Some(model) = model else { return Ok(deferred) };
    #[cfg(feature = "embeddings")]
    {
        let ranker =
            mcp_tools::deferred::HybridRanker::from_model(model).map_err(|e| format!("--model: {e}"))?;
        Ok(deferred.ranker(ranker))
    }
    #[cfg(not(feature = "embeddings"))]
    {
        let _ = deferred;
        Err(format!("--model {model}: build with `--features embeddings`"))
    }
}

/// Takes `flag` (and its value, when `valued`) out of `args`.
fn take(args: &mut Vec<String>, flag: &str, valued: bool) -> Result<Option<String>, String> {
    let Some(at) = args.iter().position(|a| a == flag) else { return Ok(None) };
    args.remove(at);
    if !valued {
        return Ok(Some(String::new()));
    }
    if at >= args.len() {
        return Err(format!("{flag} needs a value"));
    }
    Ok(Some(args.remove(at)))
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().filter(|a| !a.starts_with('-')).cloned() else {
        eprintln!(
            "usage: gateway MCP.json [--no-defer] [--model DIR] [--startup-timeout SECONDS] [list | call NAME ARGS | --http ADDR ...]"
        );
        return ExitCode::from(2);
    };
    args.remove(0);
    let options = (|| {
        let defer = take(&mut args, "--no-defer", false)?.is_none();
        let model = take(&mut args, "--model", true)?;
        let startup = match take(&mut args, "--startup-timeout", true)? {
            Some(seconds) => {
                seconds.parse::<f64>().map_err(|_| format!("--startup-timeout {seconds}: not a number"))?
            }
            None => 10.0,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        Ok::<_, String>((defer, model, Duration::from_secs_f64(startup), servers(&path, &text)?))
    })();
    let (defer, model, startup, servers) = match options {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut builder = Server::builder()
        .name("mcp-tools-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "The tools of {} MCP servers ({}), each under its name.",
            servers.len(),
            servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
        ))
        .inventory(false)
        // Its tools wait for other servers: one thread serves them with no hand-offs between
        // threads (bench/gateway.md).
        .current_thread(true);
    if defer {
        match deferral(model.as_deref()) {
            Ok(deferred) => builder = builder.defer_tools(deferred),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    for server in servers {
        builder = builder.mount_with(Mount::new(server.prefix, server.upstream).startup_timeout(startup));
    }
    builder.run_with_args(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_files_are_read() {
        // SAFETY: set once, before any thread reads the environment in this test binary.
        unsafe { std::env::set_var("GATEWAY_TEST_TOKEN", "s3cret") };
        let claude = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"KEY": "${env:GATEWAY_TEST_TOKEN}"}},
            "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${GATEWAY_TEST_TOKEN}"}},
            "off": {"command": "nope", "disabled": true}
        }}"#;
        let entries = servers("claude.json", claude).unwrap();
        let labels: Vec<_> = entries.iter().map(|e| (e.name.as_str(), e.upstream.label())).collect();
        assert_eq!(
            labels,
            [("files", "npx -y server-filesystem /tmp"), ("docs", "https://docs.example.com/mcp")]
        );
        let vscode = r#"{"servers": {"gh": {"type": "http", "url": "https://api.example.com/mcp/"}}}"#;
        assert_eq!(servers("mcp.json", vscode).unwrap()[0].upstream.label(), "https://api.example.com/mcp/");
        let bad = r#"{"mcpServers": {"a": {"type": "sse", "url": "http://x"}, "b": {"args": []}, "c": {"command": "${env:GATEWAY_UNSET_VAR}"}}}"#;
        let problems = servers("bad.json", bad).unwrap_err();
        assert!(problems.contains("server `a`: uses the HTTP+SSE transport"), "{problems}");
        assert!(problems.contains("server `b`: `b` needs a `command`"), "{problems}");
        assert!(problems.contains("names ${GATEWAY_UNSET_VAR}, which is not set"), "{problems}");
        assert_eq!(prefix("my server.v2"), "my_server_v2");
        let prefixes = r#"{"mcpServers": {"my server": {"command": "a"}, "b": {"command": "b", "prefix": ""}, "c": {"command": "c", "prefix": "gh"}}}"#;
        let prefixes: Vec<_> = servers("p.json", prefixes).unwrap().into_iter().map(|e| e.prefix).collect();
        assert_eq!(prefixes, ["my_server", "", "gh"]);
        let bad = r#"{"mcpServers": {"a": {"command": "a", "prefix": 1}}}"#;
        assert!(servers("bad.json", bad).unwrap_err().contains("server `a`: `prefix` must be a string"));
    }
}
