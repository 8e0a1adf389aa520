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
//! The proxy keeps the server's [`Limits`](crate::Limits), as the stdio transport does:
//!
//! * a line longer than `max_message_bytes`, either way, is never held whole (the stdio
//!   transport's own bounded reading): one from the host is answered with a -32600 error (id
//!   `null`) and discarded; one from a server is dropped and reported to the host as an `error`
//!   log message and on stderr (a request it answered gets no answer);
//! * what waits for the host is the stdio transport's queue (`max_queued_bytes`): while it is
//!   full, neither the host nor the servers are read (the servers' own backpressure takes it
//!   from there), logs and `list_changed` that do not fit are dropped, and a host that makes no
//!   room for `write_timeout` is disconnected: `dev` ends, with a failure;
//! * the other queues hold a few messages each (`max_queued_bytes / max_message_bytes`, at least
//!   one): the servers' lines waiting for the proxy, the host's waiting for a server (the host
//!   is not read while the current server's is full).
//!
//! Sources are watched by polling their modification times twice a second, off the serving
//! path (a blocking task; the first walk too, so that `initialize` is answered at once). A walk
//! enters no symbolic link to a folder, counts a link to a file only when the file is inside
//! the package, and stops at [`MAX_WALK_ENTRIES`] entries and [`MAX_WALK_DEPTH`] folders deep
//! (a crate's sources are a few hundred files: microseconds of work, and no platform-specific
//! watcher).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::context::peer::Outbound;
use crate::protocol::INVALID_REQUEST;
use crate::protocol::jsonrpc::{ErrorObject, RawMessage, encode_error};
use crate::server::Server;
use crate::transport::stdio::{Frame, read_line, write_loop};

/// How the running binary was built, to build it again.
struct Build {
    manifest_dir: PathBuf,
    cargo: String,
    args: Vec<String>,
    exe: PathBuf,
    /// What is watched: the package's sources.
    watch: Arc<Watch>,
}

/// Ids of the proxy's own requests to a server start with this.
const OWN: &str = "mcp-tools-dev:";

/// The proxy's own messages to one server: the replayed `initialize` and `initialized`, and
/// the three catalog requests.
const OWN_MESSAGES: usize = 8;

/// Server→host requests (sampling, elicitation, roots) remembered until the host answers: a
/// host that never answers, or servers that keep asking, cannot grow the proxy without bound.
/// The oldest is forgotten first (its answer, if it ever comes, goes to the current server,
/// which does not know the id and drops it).
const MAX_ASKED: usize = 1024;

/// One line read: its bytes, or the length of a line over the message limit (discarded as it
/// was read).
type Line = Result<Vec<u8>, usize>;

/// One server process.
struct Server_ {
    generation: u64,
    process: Child,
    /// `None` once retired: the server's stdin is closed once what is queued is written.
    input: Option<Input>,
}

/// A server's input, written by a task of its own (the proxy's messages first).
struct Input {
    /// The host's messages: a few at most (the host is not read while it is full).
    host: mpsc::Sender<Vec<u8>>,
    /// The proxy's own: [`OWN_MESSAGES`] at most.
    own: mpsc::Sender<Vec<u8>>,
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
    /// Server→host requests in flight: the number of the proxy's id (`dev-N`) → (generation,
    /// the server's id). At most [`MAX_ASKED`]: past that, the oldest is forgotten.
    asked: BTreeMap<u64, (u64, Value)>,
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
    let limits = &server.shared.limits;
    let max = limits.max_message_bytes;
    // Each of the queues between the host and the servers holds about `max_queued_bytes`.
    let capacity = (limits.max_queued_bytes / max.max(1)).max(1);
    // What goes to the host: the stdio transport's queue and writer.
    let (to_host, queue) = server.shared.outbound();
    let close = CancellationToken::new();
    let mut writer = tokio::spawn(write_loop(tokio::io::stdout(), queue, close.clone(), || false));
    // The host's lines, read by a task (a read is not cut short by the other events).
    let (host_lines, mut host) = mpsc::channel::<Line>(1);
    tokio::spawn(read_lines(tokio::io::stdin(), max, host_lines, |line| line));
    let (from_servers, mut server_lines) = mpsc::channel::<(u64, Line)>(capacity);
    let mut generation = 1;
    let mut current = match spawn(&build.exe, generation, &from_servers, max, capacity) {
        Ok(child) => child,
        Err(e) => {
            eprintln!("error: dev: cannot start {}: {e}", build.exe.display());
            return ExitCode::FAILURE;
        }
    };
    let mut retiring: Vec<Server_> = Vec::new();
    let mut session = Session::default();
    // The first walk of the sources runs beside the serving, like every later one.
    let mut walking = Some(walk_in_background(&build.watch));
    let mut fingerprint: Option<Fingerprint> = None;
    let mut warned_truncated = false;
    let mut changed_at: Option<SystemTime> = None;
    let mut building: Option<tokio::task::JoinHandle<Result<(), String>>> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let code = loop {
        // Backpressure, as in the stdio transport: while the host's queue is full, neither the
        // host nor the servers are read; a host that makes no room within the write timeout
        // (or has closed its end) is disconnected.
        if !to_host.ready().await {
            eprintln!(
                "dev: the host has not read its messages for {:?} (or closed its end): disconnecting it",
                limits.write_timeout
            );
            break ExitCode::FAILURE;
        }
        tokio::select! {
            read = async {
                // Room in the current server's input first: the host is not read while it is full.
                let room = match &current.input {
                    Some(input) => input.host.clone().reserve_owned().await.ok(),
                    None => None,
                };
                host.recv().await.map(|line| (line, room))
            } => match read {
                None => break ExitCode::SUCCESS, // the host went away
                Some((Err(length), _)) => to_host.send(oversized(length, max)),
                Some((Ok(line), room)) => {
                    if line.trim_ascii().is_empty() {
                        continue;
                    }
                    let Some(message) = from_host(line, &mut session, current.generation) else { continue };
                    match room {
                        Some(room) => drop(room.send(message)),
                        None => tracing::warn!(generation = current.generation, "the server's stdin is closed: a message of the host's was dropped"),
                    }
                }
            },
            Some((from, line)) = server_lines.recv() => match line {
                Ok(message) => from_server(from, message, &mut session, &current, &to_host),
                Err(length) => {
                    let text = format!(
                        "server {from} sent a message of {length} bytes, over the limit of {max} bytes (`Limits::max_message_bytes`): it was dropped, and a request it answered gets no answer"
                    );
                    eprintln!("dev: {text}");
                    log(&to_host, &session, "error", &text);
                }
            },
            _ = tick.tick() => {
                retiring.retain_mut(|s| s.process.try_wait().map_or(true, |status| status.is_none()));
                if walking.is_none() {
                    walking = Some(walk_in_background(&build.watch));
                }
                // A change settled (no further one for a tick) and no build running: build.
                let settled = changed_at.is_some_and(|at| at.elapsed().unwrap_or_default() >= Duration::from_millis(400));
                if settled && building.is_none() {
                    changed_at = None;
                    log(&to_host, &session, "info", "sources changed: rebuilding");
                    building = Some(tokio::spawn(build.run()));
                }
            }
            Some(walked) = async { match &mut walking { Some(task) => Some(task.await), None => None } } => {
                walking = None;
                let Ok(now) = walked else { continue }; // a walk that panicked: the next one
                if now.truncated && !warned_truncated {
                    warned_truncated = true;
                    eprintln!(
                        "dev: the sources have more than {MAX_WALK_ENTRIES} entries or {MAX_WALK_DEPTH} levels of folders: changes beyond those are not seen"
                    );
                }
                if fingerprint.is_some_and(|before| before != now) {
                    changed_at = Some(SystemTime::now());
                }
                fingerprint = Some(now);
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
                        match spawn(&build.exe, generation, &from_servers, max, capacity) {
                            Err(e) => eprintln!("dev: cannot start the new server: {e}"),
                            Ok(next) => {
                                if let Some(initialize) = &session.initialize {
                                    // The host's handshake, replayed: its answer stays here.
                                    let mut replay = initialize.clone();
                                    replay["id"] = json!(format!("{OWN}initialize:{generation}"));
                                    send_own(&next, &replay);
                                    if session.initialized {
                                        send_own(&next, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
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
    };
    // The host went away, or was disconnected: every server finishes its calls and exits. What
    // they still write is read and dropped (a server blocked on its output would not exit).
    drop(host);
    drop(from_servers);
    let discard = tokio::spawn(async move { while server_lines.recv().await.is_some() {} });
    let mut all = retiring;
    all.push(retire(current));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    for mut server in all {
        let _ = tokio::time::timeout_at(deadline, server.process.wait()).await;
        let _ = server.process.start_kill();
    }
    discard.abort();
    // The writer flushes what is queued, unless the host has stopped reading.
    close.cancel();
    drop(to_host);
    if tokio::time::timeout(limits.write_timeout, &mut writer).await.is_err() {
        writer.abort();
    }
    code
}

/// The answer to a line over the message limit (the stdio transport's).
fn oversized(length: usize, max: usize) -> Vec<u8> {
    let message =
        format!("message of {length} bytes exceeds this server's limit of {max} bytes; it was discarded");
    encode_error(None, &ErrorObject::new(INVALID_REQUEST, message))
}

/// Reads `input`'s lines into `lines` (each through `wrap`) until it ends or nobody takes them.
/// A line over `max` bytes is consumed as it comes and reported with its length, never held
/// whole (the stdio transport's reading); while `lines` is full, `input` is not read.
async fn read_lines<R: AsyncRead + Unpin, T>(
    input: R,
    max: usize,
    lines: mpsc::Sender<T>,
    wrap: impl Fn(Line) -> T,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    loop {
        let mut line = Vec::new();
        let read = match read_line(&mut reader, &mut line, max).await {
            Ok(Frame::End) | Err(_) => return,
            Ok(Frame::TooLong(length)) => Err(length),
            Ok(Frame::Line) => Ok(line),
        };
        if lines.send(wrap(read)).await.is_err() {
            return;
        }
    }
}

/// A message from the host: remembered when it is the handshake, routed back to the server
/// that asked when it answers a server's request, else passed to the current server. What goes
/// to the current server, if anything. Only the envelope is decoded: the rest stays text.
fn from_host(message: Vec<u8>, session: &mut Session, current: u64) -> Option<Vec<u8>> {
    let Ok(envelope) = serde_json::from_slice::<RawMessage>(&message) else {
        return Some(message); // the server answers what it is not
    };
    match (envelope.method.as_deref(), envelope.id) {
        (Some("initialize"), Some(_)) => session.initialize = serde_json::from_slice(&message).ok(),
        (Some("notifications/initialized"), None) => session.initialized = true,
        (None, Some(id)) => {
            if let Ok(id) = serde_json::from_str::<String>(id.get())
                && let Some(number) = id.strip_prefix("dev-").and_then(|n| n.parse::<u64>().ok())
                && let Some((generation, original)) = session.asked.remove(&number)
            {
                if generation != current {
                    // The server that asked was replaced; it still runs until its calls finish,
                    // but its stdin is closed: the answer cannot reach it.
                    tracing::debug!(generation, "an answer to a retired server's request was dropped");
                    return None;
                }
                let mut value: Value = serde_json::from_slice(&message).ok()?;
                value["id"] = original;
                return Some(serde_json::to_vec(&value).expect("JSON"));
            }
        }
        _ => {}
    }
    Some(message)
}

/// A message from server `from`: the proxy's own answers are kept; the server's requests get
/// an id of the proxy's; the rest goes to the host.
fn from_server(from: u64, message: Vec<u8>, session: &mut Session, current: &Server_, to_host: &Outbound) {
    let Ok(mut value) = serde_json::from_slice::<Value>(&message) else {
        to_host.send(message);
        return;
    };
    let own = value.get("id").and_then(Value::as_str).and_then(|id| id.strip_prefix(OWN)).map(str::to_owned);
    if let Some(own) = own {
        return own_answer(from, &own, &value, session, current, to_host);
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
        let proxy_id = session.ask(from, id);
        value["id"] = json!(proxy_id);
        tracing::debug!(method, "a server request, forwarded with the proxy's id");
        to_host.send(serde_json::to_vec(&value).expect("JSON"));
    } else {
        to_host.send(message);
    }
    if answered_initialize {
        collect_catalog(current, session);
    }
}

impl Session {
    /// Remembers server `from`'s request `id` on its way to the host; the id it goes with.
    fn ask(&mut self, from: u64, id: Value) -> String {
        self.next_id += 1;
        if self.asked.len() >= MAX_ASKED
            && let Some((oldest, _)) = self.asked.pop_first()
        {
            tracing::warn!(
                oldest,
                "dev: {MAX_ASKED} server requests unanswered by the host: the oldest is forgotten"
            );
        }
        self.asked.insert(self.next_id, (from, id));
        format!("dev-{}", self.next_id)
    }
}

/// Asks a server for its catalog (first pages).
fn collect_catalog(server: &Server_, session: &mut Session) {
    session.collecting.insert(server.generation, [None, None, None]);
    for (i, method) in ["tools/list", "resources/list", "prompts/list"].iter().enumerate() {
        let id = format!("{OWN}list:{}:{i}", server.generation);
        send_own(server, &json!({"jsonrpc": "2.0", "id": id, "method": method}));
    }
}

/// The answer to one of the proxy's own requests.
fn own_answer(
    from: u64,
    own: &str,
    value: &Value,
    session: &mut Session,
    current: &Server_,
    to_host: &Outbound,
) {
    if own.starts_with("initialize:") {
        if from == current.generation {
            collect_catalog(current, session);
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
                to_host.notify(serde_json::to_vec(&notification).expect("JSON"));
            }
        }
    }
    session.catalog = Some(catalog);
}

/// Logs to the host (an MCP `notifications/message`) once it is initialized; dropped when the
/// host is behind by the queue's limit.
fn log(to_host: &Outbound, session: &Session, level: &str, text: &str) {
    if session.initialized {
        let message = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": level, "logger": "mcp-tools dev", "data": text}});
        to_host.notify(serde_json::to_vec(&message).expect("JSON"));
    }
}

/// Sends one of the proxy's own messages to a server.
fn send_own(server: &Server_, value: &Value) {
    let Some(input) = &server.input else { return };
    if input.own.try_send(serde_json::to_vec(value).expect("JSON")).is_err() {
        tracing::warn!(generation = server.generation, "the server's stdin is closed");
    }
}

/// Starts server `generation` (the binary serving stdio): a task writes its input, another
/// reads its output's lines (bounded by `max` bytes) into `lines`.
fn spawn(
    exe: &Path,
    generation: u64,
    lines: &mpsc::Sender<(u64, Line)>,
    max: usize,
    capacity: usize,
) -> std::io::Result<Server_> {
    let mut process = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = process.stdin.take().expect("piped");
    let stdout = process.stdout.take().expect("piped");
    let (host, mut from_host) = mpsc::channel::<Vec<u8>>(capacity);
    let (own, mut from_proxy) = mpsc::channel::<Vec<u8>>(OWN_MESSAGES);
    tokio::spawn(async move {
        loop {
            // The proxy's first: a new server's replayed handshake goes before the host's messages.
            let message = tokio::select! {
                biased;
                Some(message) = from_proxy.recv() => message,
                Some(message) = from_host.recv() => message,
                else => break, // retired: its stdin closes
            };
            if stdin.write_all(&message).await.is_err() || stdin.write_all(b"\n").await.is_err() {
                tracing::warn!(generation, "the server's stdin is closed");
                break;
            }
        }
    });
    tokio::spawn(read_lines(stdout, max, lines.clone(), move |line| (generation, line)));
    Ok(Server_ { generation, process, input: Some(Input { host, own }) })
}

/// Closes a server's stdin (once what is queued is written): it finishes its running calls and
/// exits.
fn retire(mut server: Server_) -> Server_ {
    server.input = None;
    server
}

/// Walks the watched files on a thread of the blocking pool.
fn walk_in_background(watch: &Arc<Watch>) -> tokio::task::JoinHandle<Fingerprint> {
    let watch = watch.clone();
    tokio::task::spawn_blocking(move || watch.fingerprint())
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
        let mut paths: Vec<PathBuf> =
            ["src", "Cargo.toml", "build.rs", "widgets"].iter().map(|p| manifest_dir.join(p)).collect();
        if kind == "--example" {
            paths.push(manifest_dir.join("examples"));
        }
        let watch = Arc::new(Watch { package: manifest_dir.clone(), paths });
        Ok(Build { manifest_dir, cargo, args, exe, watch })
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

/// The most entries (files, folders, links) one walk of the sources looks at.
const MAX_WALK_ENTRIES: usize = 10_000;
/// How many folders deep below a watched folder a walk goes.
const MAX_WALK_DEPTH: usize = 32;

/// What is watched: files and folders of a package.
struct Watch {
    /// The package's folder: a link to a file is watched only when the file is inside it.
    package: PathBuf,
    paths: Vec<PathBuf>,
}

/// The watched files as one walk saw them; any difference between two is a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    /// The newest modification time.
    newest: Option<SystemTime>,
    files: usize,
    /// The walk stopped at [`MAX_WALK_ENTRIES`] or [`MAX_WALK_DEPTH`]: files beyond are unseen.
    truncated: bool,
}

impl Watch {
    /// Walks the watched paths (blocking: file system calls; bounded, see [`Walk::visit`]).
    fn fingerprint(&self) -> Fingerprint {
        let package = std::fs::canonicalize(&self.package).unwrap_or_else(|_| self.package.clone());
        let mut walk = Walk {
            package,
            left: MAX_WALK_ENTRIES,
            seen: Fingerprint { newest: None, files: 0, truncated: false },
        };
        for path in &self.paths {
            walk.visit(path, 0);
        }
        walk.seen
    }
}

/// One walk of the watched files.
struct Walk {
    /// The package's folder, its links resolved.
    package: PathBuf,
    /// Entries it may still look at.
    left: usize,
    seen: Fingerprint,
}

impl Walk {
    /// Visits `path`, `depth` folders below a watched path. A file counts; a folder's entries
    /// are visited, down to [`MAX_WALK_DEPTH`]. A symbolic link is never followed into a folder
    /// (two links to `.` make paths without end; a link may lead anywhere on the disk), and a
    /// link to a file counts only when that file is inside the package (a generated file linked
    /// into `src/` is watched; nothing outside is looked at).
    fn visit(&mut self, path: &Path, depth: usize) {
        if self.left == 0 {
            self.seen.truncated = true;
            return;
        }
        self.left -= 1;
        let Ok(meta) = std::fs::symlink_metadata(path) else { return };
        let kind = meta.file_type();
        if kind.is_dir() {
            if depth >= MAX_WALK_DEPTH {
                self.seen.truncated = true;
                return;
            }
            let Ok(entries) = std::fs::read_dir(path) else { return };
            for entry in entries.flatten() {
                if self.left == 0 {
                    self.seen.truncated = true;
                    return;
                }
                self.visit(&entry.path(), depth + 1);
            }
        } else if kind.is_symlink() {
            let Ok(target) = std::fs::canonicalize(path) else { return };
            if target.starts_with(&self.package)
                && let Ok(meta) = std::fs::metadata(&target)
                && meta.is_file()
            {
                self.file(&meta);
            }
        } else if kind.is_file() {
            self.file(&meta);
        }
    }

    fn file(&mut self, meta: &std::fs::Metadata) {
        self.seen.files += 1;
        if let Ok(modified) = meta.modified() {
            self.seen.newest = self.seen.newest.max(Some(modified));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder for one test: a package `pkg` (its `src/lib.rs`) beside a folder `outside`.
    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcp-tools-dev-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pkg/src")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        std::fs::write(dir.join("pkg/src/lib.rs"), "").unwrap();
        dir
    }

    /// A file modified at `secs` after the epoch.
    fn file_of(path: &Path, secs: u64) {
        std::fs::write(path, "").unwrap();
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
    }

    /// What the watcher sees of `package`'s `src`: the newest modification time and the number
    /// of files; `None` if the walk took more than a minute.
    fn walked(package: &Path) -> Option<(Option<SystemTime>, usize)> {
        walked_whole(package).map(|seen| (seen.newest, seen.files))
    }

    fn walked_whole(package: &Path) -> Option<Fingerprint> {
        let watch = Watch { package: package.to_owned(), paths: vec![package.join("src")] };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(watch.fingerprint()));
        rx.recv_timeout(Duration::from_secs(60)).ok()
    }

    #[cfg(unix)]
    #[test]
    fn links_to_directories_are_not_entered() {
        let dir = folder("loops");
        // `src/a/b/a/b/…` without end for a walk that follows links.
        std::os::unix::fs::symlink(".", dir.join("pkg/src/a")).unwrap();
        std::os::unix::fs::symlink(".", dir.join("pkg/src/b")).unwrap();
        std::os::unix::fs::symlink("../../outside", dir.join("pkg/src/vendor")).unwrap();
        file_of(&dir.join("outside/far.rs"), 4_000_000_000);
        let (newest, files) = walked(&dir.join("pkg")).expect("the walk ends");
        assert_eq!(files, 1, "only src/lib.rs");
        assert!(newest < Some(SystemTime::UNIX_EPOCH + Duration::from_secs(4_000_000_000)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_file_is_watched_only_inside_the_package() {
        let dir = folder("files");
        // Both newer than anything else: the newest time says which were seen.
        file_of(&dir.join("outside/secret.rs"), 4_000_000_000);
        file_of(&dir.join("pkg/generated.rs"), 3_000_000_000);
        std::os::unix::fs::symlink("../../outside/secret.rs", dir.join("pkg/src/secret.rs")).unwrap();
        std::os::unix::fs::symlink("../generated.rs", dir.join("pkg/src/generated.rs")).unwrap();
        let (newest, files) = walked(&dir.join("pkg")).expect("the walk ends");
        assert_eq!(newest, Some(SystemTime::UNIX_EPOCH + Duration::from_secs(3_000_000_000)));
        assert_eq!(files, 2, "src/lib.rs and src/generated.rs");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_walk_is_bounded_in_depth() {
        let dir = folder("deep");
        let mut path = dir.join("pkg/src");
        for _ in 0..100 {
            path.push("d");
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("f.rs"), "").unwrap();
        }
        let (_, files) = walked(&dir.join("pkg")).expect("the walk ends");
        assert!(files <= MAX_WALK_DEPTH + 1, "{files} files: the walk goes 32 folders deep at most");
        assert!(walked_whole(&dir.join("pkg")).unwrap().truncated, "and says so");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn requests_the_host_never_answers_are_bounded() {
        let mut session = Session::default();
        let ids: Vec<String> = (0..MAX_ASKED + 10).map(|i| session.ask(1, json!(i))).collect();
        assert_eq!(session.asked.len(), MAX_ASKED, "the oldest are forgotten");
        let answer = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{}}}}"#).into_bytes();
        // A remembered request's answer goes back with the server's own id...
        let routed = from_host(answer(&ids[MAX_ASKED + 9]), &mut session, 1).expect("to the server");
        let routed: Value = serde_json::from_slice(&routed).unwrap();
        assert_eq!(routed["id"], json!(MAX_ASKED + 9));
        assert_eq!(session.asked.len(), MAX_ASKED - 1);
        // ...a forgotten one's goes on unchanged (the server drops an id it does not know),
        // and an answer to a retired server's request goes nowhere.
        let forgotten = from_host(answer(&ids[0]), &mut session, 1).expect("passed on");
        assert_eq!(serde_json::from_slice::<Value>(&forgotten).unwrap()["id"], json!(ids[0]));
        assert!(from_host(answer(&ids[20]), &mut session, 2).is_none());
    }

    #[test]
    fn the_walk_is_bounded_in_entries() {
        let dir = folder("wide");
        for i in 0..12_000 {
            std::fs::write(dir.join(format!("pkg/src/{i}.rs")), "").unwrap();
        }
        let (_, files) = walked(&dir.join("pkg")).expect("the walk ends");
        assert!(files <= MAX_WALK_ENTRIES, "{files} files: the walk looks at 10,000 entries at most");
        assert!(walked_whole(&dir.join("pkg")).unwrap().truncated, "and says so");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
