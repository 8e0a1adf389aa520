//! The ready-made command line every server binary gets: serve stdio, `list`, `call`,
//! `server-json`, `--help`, `--http`; and the `run` methods that start it.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

#[cfg(feature = "otel")]
use crate::middleware::Telemetry;
use crate::model::server_json::{Package, Serving};
use crate::protocol::Implementation;
use crate::server::{Server, ServerBuilder};
use crate::transport::memory::Connection;

const USAGE: &str = "\
USAGE:
  {bin}
      serve MCP over stdio (what MCP hosts run)
  {bin} list
      print the tools as `tools/list` sends them (JSON)
  {bin} call NAME [ARGS] [--stateless]
      call tool NAME with ARGS (a JSON object, default {}) and print the result; exit code 1
      if the result is an error. Each call is a new process: state does not carry over.
      --stateless: as a 2026-07-28 client (default: 2025-11-25)
  {bin} --http ADDR [OPTIONS]
      serve Streamable HTTP at http://ADDR/mcp; ADDR is HOST:PORT or a PORT on 127.0.0.1.
      --stateless          no sessions (for several instances behind a load balancer)
      --sse                answer every request with an SSE stream, not only streaming ones
      --resumable          resumable SSE streams: event ids, Last-Event-ID replay (SEP-1699)
      --allow-host HOST    also accept this Host (default: loopback names only)
      --allow-any-host     accept any Host (only behind a proxy that checks it)
      --allow-origin URL   also accept browser requests from this origin
      --path PATH          the endpoint's path (default /mcp)
      --auth-audience URL  require OAuth access tokens issued for this resource (the server's
                           canonical URI, e.g. https://mcp.example.com/mcp), verified with
      --auth-issuer URL      JWTs of this issuer (keys found through its metadata), or
      --auth-token-file F    static tokens, one a line: TOKEN SUBJECT [SCOPE ...]
      --auth-scopes A,B    scopes every request needs (feature `auth`)
      --auth-allow-jwt-typ also accept the issuer's JWTs typed JWT or untyped, not at+jwt
  {bin} server-json [OPTIONS]
      print the server's entry for the MCP registry (server.json, schema 2025-12-11): name,
      version and description from Cargo, packages, remotes, their arguments and environment,
      and in _meta the transports and tools. Exit code 2, with every reason, when it cannot.
      --name NAME          its name in the registry, reverse-DNS: io.github.USER/SERVER, or
                           com.example/SERVER for a domain you own (default: ServerJson::name,
                           else io.github.OWNER/NAME from a github.com repository)
      --description TEXT   at most 100 characters (default: Cargo's description)
      --package TYPE=ID    a package clients run it from, TYPE one of npm, pypi, nuget, oci
                           (ID an image with its tag), mcpb (ID a release asset's URL, then
                           --sha256 HEX); {version} in ID is the server's version; repeatable
      --remote URL         a Streamable HTTP endpoint where it is hosted; repeatable
      --http ADDR [HTTP OPTIONS]
                           the packages serve Streamable HTTP (`--http ADDR ...`), not stdio;
                           the --auth-* values given become the arguments' defaults, and
                           --auth-token-file makes the remotes ask for a bearer token
  {bin} dev
      the development loop, run by the MCP host as `cargo run -- dev`: serves stdio through a
      child server, rebuilds when the package's sources change and swaps the new server in
      without disconnecting the host (its `initialize` replayed, `list_changed` sent)
  {bin} --help | --version

  --otel (with any of the above)
      OpenTelemetry: a span per request (named and attributed after the MCP semantic
      conventions) and the mcp.server.operation.duration metric, exported by OTLP over HTTP as
      the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...). On by
      itself when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
      Needs the `otel` feature of mcp-tools-rs.

  --redis URL (with stdio, --http or call)
      keep tasks in the Redis at URL (redis://[:PASSWORD@]HOST[:PORT][/DB]), shared by every
      instance given the same URL: a task started on one is read, answered and cancelled
      through any other, and one whose instance died reads as failed within 10 s; events, 2025-11-25
      HTTP sessions and the key signing 2026-07-28 requestState are shared too. Exit code 2
      when Redis cannot be reached. Needs the `redis` feature of mcp-tools-rs.

Logs go to stderr; set RUST_LOG (e.g. RUST_LOG=debug) to see more.";

/// The command line's telemetry: [`Telemetry`] with the `otel` feature, none without.
#[cfg(not(feature = "otel"))]
type Telemetry = std::convert::Infallible;

/// Logs to stderr (stdout carries only protocol messages), filtered by `RUST_LOG`; with
/// telemetry, spans go to its OpenTelemetry layer too (which has a filter of its own).
fn init_logging(telemetry: Option<&Telemetry>) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    #[cfg(feature = "otel")]
    if let Some(telemetry) = telemetry {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        // `RUST_LOG` filters the log only: the telemetry's layer sees the spans it turns off.
        let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
        let _ =
            tracing_subscriber::registry().with(log.with_filter(filter)).with(telemetry.layer()).try_init();
        return;
    }
    #[cfg(not(feature = "otel"))]
    let _ = telemetry;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

impl ServerBuilder {
    /// The ready-made `main`: sets up logging to stderr (filter with `RUST_LOG`), builds the
    /// server (printing every catalog problem and exiting with code 2 if there are any), and
    /// runs [`Server::run`].
    pub fn run(self) -> ExitCode {
        self.run_with_args(std::env::args().skip(1))
    }

    /// Like [`run`](Self::run) with these arguments (without the program name), for binaries
    /// that take arguments of their own first.
    pub fn run_with_args<I, S>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut args: Vec<String> = args.into_iter().map(Into::into).collect();
        #[cfg(feature = "otel")]
        let given = self.telemetry_given().cloned();
        #[cfg(not(feature = "otel"))]
        let given = None;
        let telemetry = match telemetry(&mut args, given, self.identity()) {
            Ok(telemetry) => telemetry,
            Err(code) => return code,
        };
        init_logging(telemetry.as_ref());
        #[cfg(feature = "otel")]
        let this = match &telemetry {
            Some(telemetry) if self.telemetry_given().is_none() => self.telemetry(telemetry.clone()),
            _ => self,
        };
        #[cfg(not(feature = "otel"))]
        let this = self;
        let runtime = match runtime(this.wants_current_thread()) {
            Ok(runtime) => runtime,
            Err(code) => return code,
        };
        // A server that mounts upstreams connects them as it is built, on the runtime it serves on.
        #[cfg(feature = "client")]
        let built = if this.mounts_any() { runtime.block_on(this.connect()) } else { this.build() };
        #[cfg(not(feature = "client"))]
        let built = this.build();
        match built {
            Ok(server) => run_on(runtime, server, args, telemetry),
            Err(e) => {
                eprintln!("{e}");
                shut_down(telemetry);
                ExitCode::from(2)
            }
        }
    }
}

impl Server {
    /// Runs the ready-made command line (see [`run_cli`](Self::run_cli)) on this process's
    /// arguments, on a new Tokio runtime; logs go to stderr (filter with `RUST_LOG`).
    ///
    /// Logging is set up here, unless a `tracing` subscriber is set already: what the server
    /// logs between [`ServerBuilder::build`] and this call (the semantic search index, built in
    /// the background from `build` on, may be ready by then) is not shown. [`ServerBuilder::run`]
    /// sets logging up before it builds.
    pub fn run(self) -> ExitCode {
        self.run_with_args(std::env::args().skip(1))
    }

    /// Like [`run`](Self::run) with these arguments (without the program name), for binaries
    /// that take arguments of their own first.
    pub fn run_with_args<I, S>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut args: Vec<String> = args.into_iter().map(Into::into).collect();
        #[cfg(feature = "otel")]
        let given = self.telemetry().cloned();
        #[cfg(not(feature = "otel"))]
        let given = None;
        let telemetry = match telemetry(&mut args, given, self.info()) {
            Ok(telemetry) => telemetry,
            Err(code) => return code,
        };
        init_logging(telemetry.as_ref());
        #[cfg(feature = "otel")]
        if let Some(telemetry) = &telemetry {
            self.set_telemetry(telemetry.clone());
        }
        run_built(self, args, telemetry)
    }

    /// Runs the ready-made command line on `args` (without the program name):
    ///
    /// * no arguments: serve MCP over stdio;
    /// * `list`: print the tools as the JSON that `tools/list` sends;
    /// * `call NAME [JSON-ARGS]`: call a tool in-process and print the result (exit code 1 when
    ///   it is an error result);
    /// * `server-json [OPTIONS]`: print the server's entry for the MCP registry
    ///   ([`Server::server_json`], with the options' name, description, packages and remotes);
    /// * `--http ADDR [OPTIONS]`: serve Streamable HTTP;
    /// * `--help`, `--version`.
    pub async fn run_cli<I, S>(&self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        run(self, args.into_iter().map(Into::into).collect()).await
    }
}

/// The Tokio runtime the command line runs on: multi-threaded, unless the server asked for the
/// current thread ([`ServerBuilder::current_thread`]).
fn runtime(current_thread: bool) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = if current_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    builder.enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the async runtime: {e}");
        ExitCode::from(2)
    })
}

/// Runs the command line on a new Tokio runtime, then flushes and shuts the telemetry down.
fn run_built(server: Server, args: Vec<String>, telemetry: Option<Telemetry>) -> ExitCode {
    match runtime(server.shared.current_thread) {
        Ok(runtime) => run_on(runtime, server, args, telemetry),
        Err(code) => code,
    }
}

/// Runs the command line on `runtime`, then flushes and shuts the telemetry down.
fn run_on(
    runtime: tokio::runtime::Runtime,
    server: Server,
    args: Vec<String>,
    telemetry: Option<Telemetry>,
) -> ExitCode {
    let code = runtime.block_on(server.run_cli(args));
    // Do not wait for a blocked stdin read to return.
    runtime.shutdown_timeout(Duration::from_millis(100));
    shut_down(telemetry);
    code
}

async fn run(server: &Server, args: Vec<String>) -> ExitCode {
    let bin = std::env::args()
        .next()
        .and_then(|p| std::path::Path::new(&p).file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| server.info().name.clone());
    let usage = USAGE.replace("{bin}", &bin);
    let mut args = args;
    let redis = match take_value(&mut args, "--redis") {
        Ok(redis) => redis,
        Err(e) => {
            eprintln!("error: {e}\n\n{usage}");
            return ExitCode::from(2);
        }
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let Some(url) = redis {
        match args.as_slice() {
            ["help"] | [.., "-h" | "--help"] | ["-h" | "--help", ..] | ["-V" | "--version"] => {}
            [] | ["--http", ..] | ["call", ..] => {
                if let Err(code) = use_redis(server, &url).await {
                    return code;
                }
            }
            _ => {
                eprintln!("error: --redis goes with serving (stdio or --http) or `call`\n\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    let serving = matches!(args.as_slice(), [] | ["--http", ..]);
    if let (true, Some(warning)) = (serving, server.empty_catalog_warning(MAIN_FIX)) {
        tracing::warn!("{warning}");
    }
    match args.as_slice() {
        [] => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                // A person ran it: say what this is rather than seem to hang.
                eprintln!(
                    "{} {}: an MCP server, speaking JSON-RPC on stdin/stdout to an MCP host (Claude Desktop, an IDE, the MCP Inspector). \
                     Waiting for a host on stdin (Ctrl-D to quit). Try `{bin} list`, `{bin} call NAME '{{…}}'`, `{bin} --http 8080` or `{bin} --help`.",
                    server.info().name,
                    server.info().version
                );
            }
            serve_stdio(server).await
        }
        // `--help` anywhere (`server-json --help`, `--http 8080 --help`) asks for the usage.
        ["help"] | [.., "-h" | "--help"] | ["-h" | "--help", ..] => {
            print_text(&format!(
                "{} {}: an MCP server\n\n{usage}",
                server.info().name,
                server.info().version
            ));
            ExitCode::SUCCESS
        }
        ["-V" | "--version"] => {
            print_text(&format!("{} {}", server.info().name, server.info().version));
            ExitCode::SUCCESS
        }
        ["list"] => {
            if let Some(warning) = server.empty_catalog_warning(MAIN_FIX) {
                eprintln!("warning: {warning}");
            }
            print_json(&server.tools_json());
            ExitCode::SUCCESS
        }
        ["call", rest @ ..] if !rest.is_empty() && rest.len() <= 3 => {
            let stateless = rest.contains(&"--stateless");
            let positional: Vec<&str> = rest.iter().copied().filter(|a| *a != "--stateless").collect();
            match positional.as_slice() {
                [name] => call(server, name, "{}", stateless).await,
                [name, arguments] => call(server, name, arguments, stateless).await,
                _ => {
                    eprintln!("error: unexpected arguments {args:?}\n\n{usage}");
                    ExitCode::from(2)
                }
            }
        }
        ["--http", rest @ ..] => http(server, rest, &usage).await,
        ["server-json", rest @ ..] => server_json(server, rest, &usage),
        ["dev"] => crate::dev::run(server).await,
        _ => {
            eprintln!("error: unexpected arguments {args:?}\n\n{usage}");
            ExitCode::from(2)
        }
    }
}

/// Takes `FLAG VALUE` (or `FLAG=VALUE`) out of `args`, wherever it is: its value, if given.
fn take_value(args: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    let inline = format!("{flag}=");
    let Some(at) = args.iter().position(|a| a == flag || a.starts_with(&inline)) else {
        return Ok(None);
    };
    let arg = args.remove(at);
    let value = match arg.strip_prefix(&inline) {
        Some(value) => value.to_owned(),
        None if at < args.len() => args.remove(at),
        None => return Err(format!("{flag} needs a value")),
    };
    if value.is_empty() {
        return Err(format!("{flag} needs a value"));
    }
    Ok(Some(value))
}

/// `--redis URL`: the server keeps its tasks in that Redis (or the command line exits with
/// code 2, saying why).
#[cfg(feature = "redis")]
async fn use_redis(server: &Server, url: &str) -> Result<(), ExitCode> {
    match crate::store::redis::Redis::connect(url).await {
        Ok(redis) => {
            // Every instance signs `requestState` alike, so a request's next round may reach any.
            match redis.shared_secret("request-state").await {
                Ok(secret) => server.share_request_state_secret(&secret),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Err(ExitCode::from(2));
                }
            }
            server.set_redis(redis);
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

#[cfg(not(feature = "redis"))]
async fn use_redis(_server: &Server, _url: &str) -> Result<(), ExitCode> {
    eprintln!(
        "error: --redis needs the `redis` feature of mcp-tools-rs: add `features = [\"redis\"]` to the \
         `mcp-tools-rs` line of the server's Cargo.toml"
    );
    Err(ExitCode::from(2))
}

/// `server-json [OPTIONS]`: the registry entry, on stdout.
fn server_json(server: &Server, args: &[&str], usage: &str) -> ExitCode {
    let mut config = server.server_json_config().clone();
    let mut serving = Serving::default();
    let (mut packages, mut remotes) = (Vec::new(), Vec::new());
    let mut rest = args;
    while let Some((arg, tail)) = rest.split_first() {
        rest = tail;
        let (flag, inline) = split_flag(arg);
        let takes_value = matches!(
            flag,
            "--name"
                | "--description"
                | "--package"
                | "--sha256"
                | "--remote"
                | "--http"
                | "--auth-audience"
                | "--auth-issuer"
                | "--auth-token-file"
                | "--auth-scopes"
                | "--allow-host"
                | "--allow-origin"
                | "--path"
        );
        let value = match (takes_value, inline) {
            (true, Some(value)) => value.to_owned(),
            (true, None) => match rest.split_first() {
                Some((value, tail)) => {
                    rest = tail;
                    (*value).to_owned()
                }
                None => {
                    eprintln!("error: {flag} needs a value");
                    return ExitCode::from(2);
                }
            },
            (false, Some(_)) => {
                eprintln!("error: {flag} takes no value");
                return ExitCode::from(2);
            }
            (false, None) => String::new(),
        };
        match flag {
            "--name" => config = config.name(value),
            "--description" => config = config.description(value),
            "--package" => match Package::parse(&value) {
                Ok(package) => packages.push(package),
                Err(message) => {
                    eprintln!("error: {message}");
                    return ExitCode::from(2);
                }
            },
            "--sha256" => match packages.last_mut() {
                Some(package) => package.sha256 = Some(value),
                None => {
                    eprintln!("error: --sha256 goes after the --package it is the digest of");
                    return ExitCode::from(2);
                }
            },
            "--remote" => remotes.push(value),
            "--http" => serving.http = Some(value),
            "--auth-audience" | "--auth-issuer" | "--auth-token-file" | "--auth-scopes" | "--allow-host"
            | "--allow-origin" | "--path" => serving.options.push((flag.to_owned(), Some(value))),
            "--auth-allow-jwt-typ" | "--stateless" | "--sse" | "--resumable" | "--allow-any-host" => {
                serving.options.push((flag.to_owned(), None));
            }
            other => {
                eprintln!("error: unknown option {other:?} of server-json\n\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    if !packages.is_empty() {
        config.packages = packages;
    }
    if !remotes.is_empty() {
        config.remotes = remotes;
    }
    match server.server_json_with(&config, &serving) {
        Ok((entry, warnings)) => {
            for warning in warnings {
                eprintln!("warning: {warning}");
            }
            print_json(&entry);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--flag=value` as (`--flag`, `Some(value)`); anything else as itself.
fn split_flag(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
        _ => (arg, None),
    }
}

async fn call(server: &Server, name: &str, arguments: &str, stateless: bool) -> ExitCode {
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => {
            eprintln!("error: the arguments must be a JSON object, not {other}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: the arguments are not valid JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let connection = if stateless {
        Connection::open_stateless(server, json!({}), None)
    } else {
        let connection = Connection::open(server, None);
        if let Err(e) = connection.initialize(json!({})).await {
            eprintln!("error: the server refused to initialize: {}", e.message);
            return ExitCode::from(2);
        }
        connection
    };
    let result = connection.request("tools/call", json!({"name": name, "arguments": arguments})).await;
    for notification in connection.take_notifications().await {
        eprintln!("{notification}");
    }
    match result {
        Ok(result) => {
            print_json(&result);
            let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
            if is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
        Err(e) => {
            eprintln!("error: {}", e.message);
            if server.tool(name).is_none() {
                eprintln!("the tools are: {}", server.tool_names().join(", "));
            }
            ExitCode::from(2)
        }
    }
}

async fn serve_stdio(server: &Server) -> ExitCode {
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        // The client went away while the server wrote to it: the end of the session.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            tracing::debug!("the client closed its end of stdout: {e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("stdio transport failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
fn print_text(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

fn print_json(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

#[cfg(feature = "http")]
async fn http(server: &Server, args: &[&str], usage: &str) -> ExitCode {
    let mut options = crate::transport::http::options::HttpOptions::new();
    let Some((addr, mut rest)) = args.split_first() else {
        eprintln!("error: --http needs an address (HOST:PORT or PORT)\n\n{usage}");
        return ExitCode::from(2);
    };
    let addr: std::net::SocketAddr = match addr.parse::<u16>() {
        Ok(port) => std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => match addr.parse() {
            Ok(a) => a,
            Err(_) => {
                eprintln!("error: {addr:?} is not an address (HOST:PORT, e.g. 127.0.0.1:8080) or a port");
                return ExitCode::from(2);
            }
        },
    };
    let mut auth = AuthFlags::default();
    while let Some((arg, tail)) = rest.split_first() {
        rest = tail;
        // `--flag=value` too (as the MCP registry's named arguments may be written).
        let (flag, inline) = split_flag(arg);
        let mut value_of = |flag: &str| {
            match inline {
                Some(value) => Some(value),
                None => rest.split_first().map(|(value, tail)| {
                    rest = tail;
                    *value
                }),
            }
            .ok_or_else(|| format!("error: {flag} needs a value"))
        };
        match flag {
            "--auth-audience" | "--auth-issuer" | "--auth-token-file" | "--auth-scopes" => {
                let value = match value_of(flag) {
                    Ok(value) => value,
                    Err(message) => {
                        eprintln!("{message}");
                        return ExitCode::from(2);
                    }
                };
                let slot = match flag {
                    "--auth-audience" => &mut auth.audience,
                    "--auth-issuer" => &mut auth.issuer,
                    "--auth-token-file" => &mut auth.token_file,
                    _ => &mut auth.scopes,
                };
                *slot = Some(value.to_owned());
            }
            "--auth-allow-jwt-typ" => auth.allow_jwt_typ = true,
            "--stateless" => options = options.stateless(true),
            "--sse" => options = options.always_sse(true),
            "--resumable" => options = options.resumable(std::time::Duration::from_secs(1)),
            "--allow-any-host" => options = options.allow_any_host(),
            "--allow-host" | "--allow-origin" | "--path" => {
                let value = match value_of(flag) {
                    Ok(value) => value,
                    Err(message) => {
                        eprintln!("{message}");
                        return ExitCode::from(2);
                    }
                };
                options = match flag {
                    "--allow-host" => options.allow_host(value),
                    "--allow-origin" => options.allow_origin(value),
                    _ => {
                        let options = options.path(value);
                        if let Err(problem) = options.check_path() {
                            eprintln!("error: --path {value:?}: {problem}");
                            return ExitCode::from(2);
                        }
                        options
                    }
                };
            }
            other => {
                eprintln!("error: unknown option {other:?}\n\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    let options = match auth.apply(options) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot serve HTTP on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let local = listener.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
    eprintln!(
        "{} {}: serving MCP at http://{local}{} (Ctrl-C to stop)",
        server.info().name,
        server.info().version,
        options.endpoint_path()
    );
    match server.serve_http_on(listener, options, crate::transport::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: serving HTTP on {local} failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The `--auth-*` options of `--http`.
#[cfg(feature = "http")]
#[derive(Default)]
struct AuthFlags {
    audience: Option<String>,
    issuer: Option<String>,
    token_file: Option<String>,
    scopes: Option<String>,
    allow_jwt_typ: bool,
}

#[cfg(feature = "http")]
impl AuthFlags {
    fn apply(
        self,
        options: crate::transport::http::options::HttpOptions,
    ) -> Result<crate::transport::http::options::HttpOptions, String> {
        let any = self.audience.is_some()
            || self.issuer.is_some()
            || self.token_file.is_some()
            || self.scopes.is_some()
            || self.allow_jwt_typ;
        if !any {
            return Ok(options);
        }
        #[cfg(not(feature = "auth"))]
        {
            let _ = options;
            Err("the --auth-* options need the `auth` feature of mcp-tools-rs (`features = [\"auth\"]` on its line in Cargo.toml)".to_owned())
        }
        #[cfg(feature = "auth")]
        {
            use crate::auth::{Authorization, JwtVerifier, StaticTokens};
            let Some(audience) = &self.audience else {
                return Err("--auth-audience URL is required with the other --auth-* options: the server's canonical URI, which tokens must be issued for".to_owned());
            };
            let authorization = match (&self.issuer, &self.token_file) {
                (Some(issuer), None) => JwtVerifier::new(issuer)
                    .map(|jwt| if self.allow_jwt_typ { jwt.allow_jwt_typ() } else { jwt })
                    .and_then(|jwt| Authorization::new(audience, jwt))
                    .map(|authorization| authorization.authorization_server(issuer)),
                (None, Some(file)) => StaticTokens::from_file(std::path::Path::new(file))
                    .and_then(|tokens| Authorization::new(audience, tokens)),
                (Some(_), Some(_)) => {
                    return Err("give either --auth-issuer or --auth-token-file, not both".to_owned());
                }
                (None, None) => {
                    return Err(
                        "--auth-audience needs --auth-issuer URL or --auth-token-file FILE".to_owned()
                    );
                }
            }
            .map_err(|e| e.to_string())?;
            let scopes: Vec<&str> =
                self.scopes.as_deref().unwrap_or_default().split(',').filter(|s| !s.is_empty()).collect();
            Ok(options.authorization(authorization.require_scopes(scopes)))
        }
    }
}

#[cfg(not(feature = "http"))]
async fn http(_: &Server, _: &[&str], _: &str) -> ExitCode {
    eprintln!(
        "error: this binary was built without the `http` feature of mcp-tools-rs (`features = [\"http\"]` on its line in Cargo.toml)"
    );
    ExitCode::from(2)
}

/// Takes `--otel` out of `args`, and gives the telemetry to run with: the server's own, else one
/// from the `OTEL_*` variables with `--otel` or when they ask for it ([`Telemetry::enabled_by_env`]).
/// `--otel` with telemetry that cannot be set up is an error (exit code 2); without `--otel`, a
/// warning, and the server runs without.
#[cfg(feature = "otel")]
fn telemetry(
    args: &mut Vec<String>,
    given: Option<Telemetry>,
    info: &Implementation,
) -> Result<Option<Telemetry>, ExitCode> {
    let flag = take_otel_flag(args);
    if given.is_some() || !(flag || Telemetry::enabled_by_env()) {
        return Ok(given);
    }
    match Telemetry::from_env_as(&info.name, &info.version) {
        Ok(telemetry) => Ok(Some(telemetry)),
        Err(e) if flag => {
            eprintln!("error: --otel: {e}");
            Err(ExitCode::from(2))
        }
        Err(e) => {
            eprintln!("warning: OpenTelemetry is off: {e}");
            Ok(None)
        }
    }
}

#[cfg(not(feature = "otel"))]
fn telemetry(
    args: &mut Vec<String>,
    _: Option<Telemetry>,
    _: &Implementation,
) -> Result<Option<Telemetry>, ExitCode> {
    if take_otel_flag(args) {
        eprintln!(
            "error: --otel: this binary was built without the `otel` feature of mcp-tools-rs (`features = [\"otel\"]` on its line in Cargo.toml)"
        );
        return Err(ExitCode::from(2));
    }
    Ok(None)
}

/// Whether `args` had `--otel` (taken out: it goes with any command).
fn take_otel_flag(args: &mut Vec<String>) -> bool {
    let before = args.len();
    args.retain(|arg| arg != "--otel");
    args.len() != before
}

/// Exports what the telemetry holds and shuts it down.
fn shut_down(telemetry: Option<Telemetry>) {
    #[cfg(feature = "otel")]
    if let Some(Err(e)) = telemetry.map(|telemetry| telemetry.shutdown()) {
        eprintln!("warning: {e}");
    }
    #[cfg(not(feature = "otel"))]
    let _ = telemetry;
}

/// Where a binary names its library (see [`Server::empty_catalog_warning`]).
const MAIN_FIX: &str = "to main.rs (`mcp_tools::main!()` does it for the package's own library)";

#[cfg(test)]
mod tests {
    use tokio::runtime::RuntimeFlavor;

    use super::*;

    #[test]
    fn the_runtime_is_the_one_the_server_asked_for() {
        let flavor =
            |server: &Server| runtime(server.shared.current_thread).unwrap().handle().runtime_flavor();
        let default = Server::builder().inventory(false).build().unwrap();
        assert_eq!(flavor(&default), RuntimeFlavor::MultiThread);
        let builder = Server::builder().inventory(false).current_thread(true);
        assert!(builder.wants_current_thread());
        let single = builder.build().unwrap();
        assert_eq!(flavor(&single), RuntimeFlavor::CurrentThread);
    }
}
