//! Our client (mcp-tools' `client`) against another MCP server, no gateway in between: the
//! interop check of scripts/interop.sh (section 9) against the TypeScript and Python SDK servers
//! (tests/interop/gateway/ts_server.mjs, py_server.py).
//!
//! ```sh
//! cargo run --example client_check -- [--era auto|2025-11-25] [--expect VERSION] \
//!     [--tool NAME ARGS_JSON] [--progress NAME ARGS_JSON N] [--resource URI TEXT] \
//!     [--prompt NAME ARGS_JSON TEXT] (--http URL | -- COMMAND ARGS...)
//! ```
//!
//! Connects over stdio (a command it starts) or Streamable HTTP, in the era asked for
//! (`auto`: 2026-07-28 first, a 2025-11-25 session if the server does not speak it;
//! `2025-11-25`: the handshake only), and checks: the era it landed on (`--expect`), tools/list,
//! a call (`--tool`; its structured output when the tool declares an output schema), N progress
//! notifications of a call (`--progress`), a resource read (`--resource`, its text), a prompt
//! (`--prompt`, a text its messages contain). Prints "ok - ..." / "not ok - ..." lines, then
//! "N passed, M failed"; exits 1 when a check failed.

use std::process::ExitCode;
use std::time::Duration;

use mcp_tools::client::{CallOptions, Client, EraChoice};
use serde_json::{Map, Value};

#[derive(Default)]
struct Checks {
    label: String,
    passed: usize,
    failed: usize,
}

impl Checks {
    fn check(&mut self, name: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                self.passed += 1;
                println!("ok - {} {name}", self.label);
            }
            Err(why) => {
                self.failed += 1;
                let why: String = why.split_whitespace().collect::<Vec<_>>().join(" ");
                println!("not ok - {} {name}: {}", self.label, why.chars().take(600).collect::<String>());
            }
        }
    }
}

struct Options {
    era: String,
    expect: Option<String>,
    tool: Option<(String, Value)>,
    progress: Option<(String, Value, usize)>,
    resource: Option<(String, String)>,
    prompt: Option<(String, Value, String)>,
    http: Option<String>,
    command: Vec<String>,
}

fn parse(mut args: Vec<String>) -> Result<Options, String> {
    let mut options = Options {
        era: "auto".into(),
        expect: None,
        tool: None,
        progress: None,
        resource: None,
        prompt: None,
        http: None,
        command: Vec::new(),
    };
    let json = |text: String| serde_json::from_str::<Value>(&text).map_err(|e| format!("{text}: {e}"));
    args.reverse();
    let mut next = |flag: &str| args.pop().ok_or_else(|| format!("{flag} needs a value"));
    while let Ok(flag) = next("") {
        match flag.as_str() {
            "--era" => options.era = next("--era")?,
            "--expect" => options.expect = Some(next("--expect")?),
            "--tool" => options.tool = Some((next("--tool")?, json(next("--tool")?)?)),
            "--progress" => {
                let (name, arguments) = (next("--progress")?, json(next("--progress")?)?);
                let count = next("--progress")?.parse().map_err(|_| "--progress N: not a number")?;
                options.progress = Some((name, arguments, count));
            }
            "--resource" => options.resource = Some((next("--resource")?, next("--resource")?)),
            "--prompt" => {
                options.prompt = Some((next("--prompt")?, json(next("--prompt")?)?, next("--prompt")?))
            }
            "--http" => options.http = Some(next("--http")?),
            "--" => {
                while let Ok(arg) = next("") {
                    options.command.push(arg);
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if options.http.is_none() && options.command.is_empty() {
        return Err("give --http URL or -- COMMAND ARGS...".into());
    }
    Ok(options)
}

async fn run(options: Options) -> Checks {
    let transport = if options.http.is_some() { "http" } else { "stdio" };
    let mut checks =
        Checks { label: format!("rust client {transport} ({}):", options.era), ..Checks::default() };
    let era = match options.era.as_str() {
        "2025-11-25" => EraChoice::Handshake,
        _ => EraChoice::Auto,
    };
    let builder =
        Client::builder().name("mcp-tools-client-check").era(era).request_timeout(Duration::from_secs(20));
    let connected = match &options.http {
        Some(url) => builder.connect_http(url).await,
        None => {
            let mut command = tokio::process::Command::new(&options.command[0]);
            command.args(&options.command[1..]);
            builder.connect_stdio(command).await
        }
    };
    let client = match connected {
        Ok(client) => client,
        Err(e) => {
            checks.check("connects", Err(e.to_string()));
            return checks;
        }
    };
    let version = client.protocol_version().to_owned();
    checks.check(
        &format!("connects ({version}, server {})", client.server_info().name),
        match &options.expect {
            Some(expected) if *expected != version => Err(format!("landed on {version}, not {expected}")),
            _ => Ok(()),
        },
    );
    let tools = client.list_tools().await;
    checks.check(
        "tools/list",
        match &tools {
            Ok(tools) if !tools.is_empty() => Ok(()),
            Ok(_) => Err("no tools".into()),
            Err(e) => Err(e.to_string()),
        },
    );
    let tools = tools.unwrap_or_default();
    if let Some((name, arguments)) = &options.tool {
        let declared =
            tools.iter().find(|t| t["name"] == **name).and_then(|t| t.get("outputSchema")).is_some();
        let outcome = match client.call_tool(name, arguments.clone()).await {
            Err(e) => Err(e.to_string()),
            Ok(result) if result.is_error() => Err(result.text()),
            Ok(result) => match result.structured() {
                Some(Value::Object(_)) => Ok(()),
                None if !declared => Ok(()),
                other => Err(format!("structuredContent {other:?} for a tool with an outputSchema")),
            },
        };
        checks.check(
            &format!("tools/call {name}{}", if declared { " (structured output)" } else { "" }),
            outcome,
        );
    }
    if let Some((name, arguments, count)) = &options.progress {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let outcome =
            match client.call_tool_with(name, arguments.clone(), CallOptions::new().progress(tx)).await {
                Err(e) => Err(e.to_string()),
                Ok(result) if result.is_error() => Err(result.text()),
                Ok(_) => {
                    let mut seen = Vec::new();
                    while let Ok(p) = rx.try_recv() {
                        seen.push(p.progress);
                    }
                    if seen.len() == *count {
                        Ok(())
                    } else {
                        Err(format!("progress {seen:?}, not {count} notifications"))
                    }
                }
            };
        checks.check(&format!("progress of {name} received ({count})"), outcome);
    }
    if let Some((uri, text)) = &options.resource {
        let outcome = match client.read_resource(uri).await {
            Err(e) => Err(e.to_string()),
            Ok(result) if result["contents"][0]["text"] == **text => Ok(()),
            Ok(result) => Err(format!("read {result}")),
        };
        checks.check(&format!("resources/read {uri}"), outcome);
    }
    if let Some((name, arguments, text)) = &options.prompt {
        let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
        let outcome = match client.get_prompt(name, arguments).await {
            Err(e) => Err(e.to_string()),
            Ok(result) if result.to_string().contains(text.as_str()) => Ok(()),
            Ok(result) => Err(format!("got {result}")),
        };
        checks.check(&format!("prompts/get {name}"), outcome);
    }
    client.close().await;
    checks
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let checks = runtime.block_on(async {
        match tokio::time::timeout(Duration::from_secs(60), run(options)).await {
            Ok(checks) => checks,
            Err(_) => {
                let mut checks = Checks::default();
                checks.check("finishes within 60 s", Err("timed out".into()));
                checks
            }
        }
    });
    println!("{} passed, {} failed", checks.passed, checks.failed);
    if checks.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
