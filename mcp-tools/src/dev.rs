//! `dev`: the development loop. The binary, run as `cargo run -- dev` by an MCP host (or the
//! inspector), stands between the host and the server it builds: it serves the host over stdio
//! through a child server process, watches the package's sources, rebuilds on change, and
//! swaps in the new server without the host noticing more than a `list_changed`:
//!
//! * the host's `initialize` is replayed to each new server (its answer is kept from the host);
//! * requests already sent finish on the old server, which is retired (its stdin closed: it
//!   finishes its running calls and exits); new ones go to the new server;
//! * the server's own requests (sampling, elicitation, roots) get ids of the proxy's, so the
//!   host's answers reach the server that asked, whichever it is;
//! * the catalog (`tools/list`, `resources/list`, `prompts/list`) of each new server is
//!   compared with the old one's: a change is announced with `notifications/…/list_changed`;
//! * a build that fails is reported to the host as an `error` log message and on stderr; the
//!   old server keeps serving.
//!
//! Sources are watched by polling their modification times twice a second (a crate's sources
//! are a few hundred files at most: microseconds of work, and no platform-specific watcher).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::server::Server;

/// How the running binary was built, to build it again.
struct Build {
    manifest_dir: PathBuf,
    cargo: String,
    args: Vec<String>,
    exe: PathBuf,
    /// What is watched: the package's sources.
    watched: Vec<PathBuf>,
}

/// Ids of the proxy's own requests to a server start with this.
const OWN: &str = "mcp-tools-dev:";

/// One server process.
struct Server_ {
    generation: u64,
    process: Child,
    /// `None` once retired.
    stdin: Option<ChildStdin>,
}

/// What the proxy knows of the session.
#[derive(Default)]
struct Session {
    /// The host's `initialize` request, replayed to every new server.
    initialize: Option<Value>,
    /// The host sent `notifications/initialized`.
    initialized: bool,
    /// The catalog of the newest server that reported one: (tools, resources, prompts).
    catalog: Option<[Value; 3]>,
    /// Catalogs being collected, by generation.
    collecting: HashMap<u64, [Option<Value>; 3]>,
    /// Server→host requests in flight: proxy id → (generation, the server's id).
    asked: HashMap<String, (u64, Value)>,
    next_id: u64,
}

pub(crate) async fn run(server: &Server) -> ExitCode {
    let build = match Build::of_this_binary() {
        Ok(build) => build,
        Err(why) => {
            eprintln!("error: dev: {why}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "{} dev: serving over stdio through a child server; watching {} for changes (rebuilds with `{} {}`)",
        server.info().name,
        build.manifest_dir.display(),
        build.cargo,
        build.args.join(" ")
    );
    let (to_host, mut for_host) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = for_host.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.write_all(b"\n").await.is_err() {
                break;
            }
            let _ = stdout.flush().await;
        }
    });
    let (from_servers, mut server_lines) = mpsc::unbounded_channel::<(u64, Vec<u8>)>();
    let mut generation = 1;
    let mut current = match spawn(&build.exe, generation, &from_servers) {
        Ok(child) => child,
        Err(e) => {
            eprintln!("error: dev: cannot start {}: {e}", build.exe.display());
            return ExitCode::FAILURE;
        }
    };
    let mut retiring: Vec<Server_> = Vec::new();
    let mut session = Session::default();
    let mut host = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut fingerprint = build.fingerprint();
    let mut changed_at: Option<SystemTime> = None;
    let mut building: Option<tokio::task::JoinHandle<Result<(), String>>> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            read = host.read_until(b'\n', &mut line) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let message = std::mem::take(&mut line);
                        from_host(&message, &mut session, &mut current).await;
                    }
                }
            }
            Some((from, message)) = server_lines.recv() => {
                from_server(from, &message, &mut session, &mut current, &to_host).await;
            }
            _ = tick.tick() => {
                retiring.retain_mut(|s| s.process.try_wait().map_or(true, |status| status.is_none()));
                let now = build.fingerprint();
                if now != fingerprint {
                    fingerprint = now;
                    changed_at = Some(SystemTime::now());
                }
                // A change settled (no further one for a tick) and no build running: build.
                let settled = changed_at.is_some_and(|at| at.elapsed().unwrap_or_default() >= Duration::from_millis(400));
                if settled && building.is_none() {
                    changed_at = None;
                    log(&to_host, &session, "info", "sources changed: rebuilding");
                    building = Some(tokio::spawn(build.run()));
                }
            }
            Some(built) = async { match &mut building { Some(task) => Some(task.await), None => None } } => {
                building = None;
                match built.unwrap_or_else(|e| Err(e.to_string())) {
                    Err(errors) => {
                        eprintln!("dev: the build failed; the running server keeps serving\n{errors}");
                        let summary: String = errors.lines().take(40).collect::<Vec<_>>().join("\n");
                        log(&to_host, &session, "error", &format!("the build failed; the running server keeps serving:\n{summary}"));
                    }
                    Ok(()) => {
                        generation += 1;
                        match spawn(&build.exe, generation, &from_servers) {
                            Err(e) => eprintln!("dev: cannot start the new server: {e}"),
                            Ok(mut next) => {
                                if let Some(initialize) = &session.initialize {
                                    // The host's handshake, replayed: its answer stays here.
                                    let mut replay = initialize.clone();
                                    replay["id"] = json!(format!("{OWN}initialize:{generation}"));
                                    send(&mut next, &replay).await;
                                    if session.initialized {
                                        send(&mut next, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
                                    }
                                }
                                let old = std::mem::replace(&mut current, next);
                                eprintln!("dev: rebuilt; server {generation} serves, server {} finishes its calls", old.generation);
                                retiring.push(retire(old));
                            }
                        }
                    }
                }
            }
        }
    }
    // The host went away: every server finishes and exits.
    let mut all = retiring;
    all.push(retire(current));
    for mut server in all {
        let _ = tokio::time::timeout(Duration::from_secs(10), server.process.wait()).await;
        let _ = server.process.start_kill();
    }
    drop(to_host);
    let _ = writer.await;
    ExitCode::SUCCESS
}

/// A message from the host: remembered when it is the handshake, routed back to the server
/// that asked when it answers a server's request, else passed to the current server.
async fn from_host(message: &[u8], session: &mut Session, current: &mut Server_) {
    let Ok(mut value) = serde_json::from_slice::<Value>(message) else {
        return pass(current, message).await; // the server answers what it is not
    };
    match (value.get("method").and_then(Value::as_str), value.get("id")) {
        (Some("initialize"), Some(_)) => session.initialize = Some(value.clone()),
        (Some("notifications/initialized"), None) => session.initialized = true,
        (None, Some(Value::String(id))) if session.asked.contains_key(id) => {
            let (generation, original) = session.asked.remove(id).expect("present");
            value["id"] = original;
            if generation == current.generation {
                return send(current, &value).await;
            }
            // The server that asked was replaced; it still runs until its calls finish, but
            // its stdin is closed: the answer cannot reach it.
            return tracing::debug!(generation, "an answer to a retired server's request was dropped");
        }
        _ => {}
    }
    pass(current, message).await;
}

/// A message from server `from`: the proxy's own answers are kept; the server's requests get
/// an id of the proxy's; the rest goes to the host.
async fn from_server(
    from: u64,
    message: &[u8],
    session: &mut Session,
    current: &mut Server_,
    to_host: &mpsc::UnboundedSender<Vec<u8>>,
) {
    let Ok(mut value) = serde_json::from_slice::<Value>(message) else {
        let _ = to_host.send(message.to_vec());
        return;
    };
    let own = value.get("id").and_then(Value::as_str).and_then(|id| id.strip_prefix(OWN)).map(str::to_owned);
    if let Some(own) = own {
        return own_answer(from, &own, &value, session, current, to_host).await;
    }
    // The host's `initialized` notification may come before the first server's catalog is
    // known: take it once the handshake is through.
    let answered_initialize = from == current.generation
        && value.get("result").is_some_and(|r| r.get("protocolVersion").is_some())
        && session.catalog.is_none()
        && !session.collecting.contains_key(&from);
    if let (Some(method), Some(id)) =
        (value.get("method").and_then(Value::as_str).map(str::to_owned), value.get("id").cloned())
    {
        session.next_id += 1;
        let proxy_id = format!("dev-{}", session.next_id);
        session.asked.insert(proxy_id.clone(), (from, id));
        value["id"] = json!(proxy_id);
        tracing::debug!(method, "a server request, forwarded with the proxy's id");
    }
    let _ = to_host.send(serde_json::to_vec(&value).expect("JSON"));
    if answered_initialize {
        collect_catalog(current, session).await;
    }
}

/// Asks a server for its catalog (first pages).
async fn collect_catalog(server: &mut Server_, session: &mut Session) {
    session.collecting.insert(server.generation, [None, None, None]);
    for (i, method) in ["tools/list", "resources/list", "prompts/list"].iter().enumerate() {
        let id = format!("{OWN}list:{}:{i}", server.generation);
        send(server, &json!({"jsonrpc": "2.0", "id": id, "method": method})).await;
    }
}

/// The answer to one of the proxy's own requests.
async fn own_answer(
    from: u64,
    own: &str,
    value: &Value,
    session: &mut Session,
    current: &mut Server_,
    to_host: &mpsc::UnboundedSender<Vec<u8>>,
) {
    if own.starts_with("initialize:") {
        if from == current.generation {
            collect_catalog(current, session).await;
        }
        return;
    }
    let Some(index) = own.rsplit(':').next().and_then(|i| i.parse::<usize>().ok()).filter(|i| *i < 3) else {
        return;
    };
    let Some(parts) = session.collecting.get_mut(&from) else { return };
    // A method the server does not serve (no resources, say) is an empty catalog part.
    parts[index] = Some(value.get("result").cloned().unwrap_or(Value::Null));
    if parts.iter().any(Option::is_none) {
        return;
    }
    let parts = session.collecting.remove(&from).expect("present");
    let catalog = parts.map(|p| p.unwrap_or(Value::Null));
    if let Some(previous) = &session.catalog
        && session.initialized
    {
        let kinds = ["tools", "resources", "prompts"];
        for (i, kind) in kinds.iter().enumerate() {
            if previous[i] != catalog[i] {
                let notification =
                    json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed")});
                let _ = to_host.send(serde_json::to_vec(&notification).expect("JSON"));
            }
        }
    }
    session.catalog = Some(catalog);
}

/// Logs to the host (an MCP `notifications/message`) once it is initialized.
fn log(to_host: &mpsc::UnboundedSender<Vec<u8>>, session: &Session, level: &str, text: &str) {
    if session.initialized {
        let message = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": level, "logger": "mcp-tools dev", "data": text}});
        let _ = to_host.send(serde_json::to_vec(&message).expect("JSON"));
    }
}

async fn send(server: &mut Server_, value: &Value) {
    pass(server, &serde_json::to_vec(value).expect("JSON")).await;
}

async fn pass(server: &mut Server_, message: &[u8]) {
    let message = message.strip_suffix(b"\n").unwrap_or(message);
    let Some(stdin) = &mut server.stdin else { return };
    if stdin.write_all(message).await.is_err() || stdin.write_all(b"\n").await.is_err() {
        tracing::warn!(generation = server.generation, "the server's stdin is closed");
    }
}

/// Starts server `generation` (the binary serving stdio), reading its stdout into `lines`.
fn spawn(
    exe: &Path,
    generation: u64,
    lines: &mpsc::UnboundedSender<(u64, Vec<u8>)>,
) -> std::io::Result<Server_> {
    let mut process = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = process.stdin.take().expect("piped");
    let stdout = process.stdout.take().expect("piped");
    let lines = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = line.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(line);
                    if lines.send((generation, line)).is_err() {
                        break;
                    }
                }
            }
        }
    });
    Ok(Server_ { generation, process, stdin: Some(stdin) })
}

/// Closes a server's stdin: it finishes its running calls and exits.
fn retire(mut server: Server_) -> Server_ {
    server.stdin = None;
    server
}

impl Build {
    /// The build of the running binary: `cargo run -- dev` sets `CARGO_MANIFEST_DIR` and
    /// `CARGO`; the executable's place says the profile and whether it is an example.
    fn of_this_binary() -> Result<Build, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).ok_or(
            "run it through cargo (`cargo run -- dev`, or `cargo run --example NAME -- dev`): it rebuilds the package with cargo",
        )?;
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let name = exe.file_stem().and_then(|n| n.to_str()).ok_or("the executable has no name")?.to_owned();
        let parent = exe.parent().ok_or("the executable is in no folder")?;
        let (kind, profile_dir) = match parent.file_name().and_then(|n| n.to_str()) {
            Some("examples") => ("--example", parent.parent().ok_or("no profile folder")?),
            _ => ("--bin", parent),
        };
        let mut args = vec!["build".to_owned(), kind.to_owned(), name.clone()];
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => args.push("--release".into()),
            Some(profile) => args.extend(["--profile".into(), profile.to_owned()]),
        }
        let mut watched: Vec<PathBuf> =
            ["src", "Cargo.toml", "build.rs", "widgets"].iter().map(|p| manifest_dir.join(p)).collect();
        if kind == "--example" {
            watched.push(manifest_dir.join("examples"));
        }
        Ok(Build { manifest_dir, cargo, args, exe, watched })
    }

    /// The newest modification time and the count of the watched files.
    fn fingerprint(&self) -> (Option<SystemTime>, usize) {
        let mut newest = None;
        let mut count = 0;
        for path in &self.watched {
            walk(path, &mut |modified| {
                count += 1;
                newest = newest.max(Some(modified));
            });
        }
        (newest, count)
    }

    /// Builds; the compiler's output when it fails.
    fn run(&self) -> impl std::future::Future<Output = Result<(), String>> + Send + 'static {
        let mut command = Command::new(&self.cargo);
        command.args(&self.args).current_dir(&self.manifest_dir).stdout(Stdio::null()).stderr(Stdio::piped());
        async move {
            let output = command.output().await.map_err(|e| format!("cannot run cargo: {e}"))?;
            if output.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&output.stderr).into_owned())
            }
        }
    }
}

/// Calls `each` with the modification time of every file under `path` (or of `path`).
fn walk(path: &Path, each: &mut impl FnMut(SystemTime)) {
    let Ok(meta) = std::fs::metadata(path) else { return };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        for entry in entries.flatten() {
            walk(&entry.path(), each);
        }
    } else if let Ok(modified) = meta.modified() {
        each(modified);
    }
}
