//! Serves an HTTP API described by an OpenAPI 3.0/3.1 document (JSON or YAML) as MCP tools: one
//! tool per operation, calling the API (see `mcp_tools::openapi`).
//!
//! ```sh
//! cargo run --example openapi -- spec.json --base-url https://api.example.com list
//! cargo run --example openapi -- spec.yaml --base-url http://127.0.0.1:8080 \
//!     --header 'X-Api-Key: 8f1c…' call getPet '{"petId": 7}'
//! # a large API behind the search / describe / call meta-tools:
//! cargo run --example openapi -- api.github.com.json --base-url https://api.github.com --defer
//! ```
//!
//! Options (before the usual command line: `list`, `call`, `--http ADDR`, or nothing to serve
//! stdio): `--base-url URL` (default: the document's first server), `--header 'Name: value'`
//! (repeatable; credentials for the API), `--defer` (serve the operations behind the deferred
//! search meta-tools), `--validate` (check arguments against the generated schemas),
//! `--no-output-schemas` (declare no output schemas), `--include-tag TAG` / `--exclude-tag TAG` (repeatable),
//! `--follow-same-origin-redirects` (follow the API's redirects to its own origin; by default
//! none is followed).

use std::process::ExitCode;
use std::time::Instant;

use mcp_tools::Server;
use mcp_tools::deferred::DeferredTools;
use mcp_tools::openapi::{OpenApi, Redirects};

const USAGE: &str = "usage: openapi FILE [--base-url URL] [--header 'Name: value']... [--defer] [--validate] \
[--no-output-schemas] [--include-tag TAG]... [--exclude-tag TAG]... [--follow-same-origin-redirects] \
[list | call NAME ARGS | --http ADDR | ...]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((file, mut rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if file == "--help" || file == "-h" {
        println!("Serves an HTTP API described by OpenAPI as MCP tools.\n{USAGE}");
        return ExitCode::SUCCESS;
    }
    let started = Instant::now();
    let mut api = match OpenApi::from_path(file) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut defer = false;
    while let Some((flag, tail)) = rest.split_first() {
        let value = tail.first();
        let step = match (flag.as_str(), value) {
            ("--defer", _) => {
                defer = true;
                1
            }
            ("--validate", _) => {
                api = api.validate_arguments(true);
                1
            }
            ("--no-output-schemas", _) => {
                api = api.output_schemas(false);
                1
            }
            ("--follow-same-origin-redirects", _) => {
                api = api.follow_redirects(Redirects::SameOrigin);
                1
            }
            ("--base-url", Some(url)) => {
                api = api.base_url(url.clone());
                2
            }
            ("--include-tag", Some(tag)) => {
                api = api.include_tags([tag.clone()]);
                2
            }
            ("--exclude-tag", Some(tag)) => {
                api = api.exclude_tags([tag.clone()]);
                2
            }
            ("--header", Some(header)) => match header.split_once(':') {
                Some((name, value)) => {
                    api = api.header(name.trim(), value.trim());
                    2
                }
                None => {
                    eprintln!("error: --header takes 'Name: value', not {header:?}");
                    return ExitCode::from(2);
                }
            },
            ("--base-url" | "--include-tag" | "--exclude-tag" | "--header", None) => {
                eprintln!("error: {flag} needs a value\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => break, // the command line of every server
        };
        rest = &rest[step..];
    }
    let tools = match api.tools() {
        Ok(tools) => tools,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let skipped = api.skipped().len();
    eprintln!(
        "{}: {} tools from {} operations{} in {:.0} ms",
        api.title().unwrap_or(file),
        tools.len(),
        api.operation_count(),
        if skipped > 0 { format!(" ({skipped} skipped: see the log)") } else { String::new() },
        started.elapsed().as_secs_f64() * 1e3
    );
    let name = api.title().map_or_else(|| "openapi".to_owned(), |t| t.to_ascii_lowercase().replace(' ', "-"));
    drop(api); // the parsed document is not needed once the tools are built
    let mut builder = Server::builder().name(name).inventory(false).tools(tools);
    if defer {
        builder = builder.defer_tools(DeferredTools::new());
    }
    builder.run_with_args(rest.iter().cloned())
}
