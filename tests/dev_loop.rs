//! The `dev` subcommand end to end, as a host uses it: a real temporary package, served through
//! `dev`; its source edited while the host stays connected. The host sees the new tool after a
//! `notifications/tools/list_changed`, without reconnecting; a build that fails is reported to
//! it as an error log while the old server keeps serving.
//!
//! And the proxy's bounds (its server's `Limits`), against a host that is hostile or merely
//! broken: a line over the message limit is refused without being buffered, an answer over it
//! is not passed on, a host that stops reading is disconnected instead of buffered for, and
//! symbolic links in the sources neither loop the watcher nor keep `dev` from serving.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn lib(description: &str, body: &str) -> String {
    format!(
        "use mcp_tools::tool;\n\n/// {description}\n#[tool]\npub async fn greet(name: String) -> String {{\n    {body}\n}}\n"
    )
}

/// The `main` of the packages that take the ready-made one.
const MAIN: &str = "mcp_tools::main!();\n";

/// A package `name` in a temporary folder, built once; its folder and the target folder.
fn package(name: &str, lib: &str, main: &str) -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Under target/ (cargo's folder for tests' files), so that cargo reads the workspace's
    // .cargo/config.toml there too: built with the same profile. mcp-tools with its default
    // features, as tests/library_crate.rs and the README's quick start (tests/readme_quickstart.rs)
    // take it: the three packages share one build of mcp-tools (a package's features are its own,
    // so another list would build it again), and the workspace's build of its dependencies
    // (`harness::shared_build`). Each test's
    // package has a name of its own: they share target/debug, where the binary is named after it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-tools-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nmcp-tools-rs = {{ path = {:?} }}\n\n[workspace]\n{}",
        root.join("mcp-tools"),
        harness::shared_build()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let target = root.join("target");
    let status = Command::new(cargo())
        .args(["build", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success());
    (dir, target)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The host: the `dev` process's stdin, and its stdout's messages on a channel. The host reads
/// `dev`'s output only as the test takes messages (and a few ahead): a test that takes none is
/// a host that has stopped reading. Dropped, it kills `dev`.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
    next_id: i64,
    /// What `dev` wrote to stderr (its build's output among it): shown only if the test fails,
    /// so that a passing run prints none of the failed builds the tests cause on purpose.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Host {
    fn start(name: &str, dir: &Path, target: &Path) -> Host {
        let mut child = Command::new(target.join("debug").join(name))
            .arg("dev")
            .current_dir(dir)
            .env("CARGO_MANIFEST_DIR", dir)
            .env("CARGO", cargo())
            .env("CARGO_TARGET_DIR", target)
            .env("CARGO_NET_OFFLINE", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let captured = stderr.clone();
        let child_stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(child_stderr).lines() {
                let Ok(line) = line else { break };
                let mut captured = captured.lock().unwrap();
                captured.push_str(&line);
                captured.push('\n');
            }
        });
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::sync_channel(64);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(message) = serde_json::from_str(&line)
                    && tx.send(message).is_err()
                {
                    break;
                }
            }
        });
        Host { child, stdin: Some(stdin), messages, next_id: 1, stderr }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    /// The next message matching `wanted`, within `wait`; the others seen meanwhile.
    fn wait_for(&mut self, wait: Duration, wanted: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + wait;
        let mut others = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return (message, others),
                Ok(message) => others.push(message),
                Err(_) => {
                    // Each as its first 300 characters: some are large.
                    let seen: Vec<String> =
                        others.iter().map(|m| m.to_string().chars().take(300).collect()).collect();
                    panic!("nothing matching within {wait:?}; seen: {seen:?}")
                }
            }
        }
    }

    /// Sends a request; its id.
    fn ask(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.ask(method, params);
        let (answer, _) =
            self.wait_for(Duration::from_secs(30), |m| m["id"] == id && m.get("method").is_none());
        answer
    }

    /// The handshake; the server's answer.
    fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    fn description(&mut self) -> String {
        let list = self.request("tools/list", json!({}));
        list["result"]["tools"][0]["description"].as_str().unwrap_or_default().to_owned()
    }

    /// Closes `dev`'s input; how it ended.
    fn finish(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }

    /// The most memory `dev` has used so far (its peak resident set), in bytes, where the
    /// system says (Linux).
    fn peak_memory(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- what `dev` wrote to stderr ---\n{}", self.stderr.lock().unwrap());
        }
    }
}

#[test]
fn an_edited_tool_reaches_the_connected_host_and_a_broken_build_keeps_the_old_server() {
    let (dir, target) = package("devloop", &lib("Say hello.", "format!(\"hello {name}\")"), MAIN);
    let mut host = Host::start("devloop", &dir, &target);
    let init = host.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "devloop", "{init}");
    assert_eq!(host.description(), "Say hello.");

    // Edit the tool: the host hears of it, and sees the new one, on the same connection.
    std::thread::sleep(Duration::from_millis(1100)); // a modification time the watcher can tell apart
    std::fs::write(
        dir.join("src/lib.rs"),
        lib("Say hello, twice.", "format!(\"hello {name}, hello {name}\")"),
    )
    .unwrap();
    let (_, seen) =
        host.wait_for(Duration::from_secs(120), |m| m["method"] == "notifications/tools/list_changed");
    assert!(
        seen.iter().any(|m| m["method"] == "notifications/message"
            && m["params"]["data"].as_str().is_some_and(|d| d.contains("rebuilding"))),
        "the host was told of the rebuild: {seen:?}"
    );
    assert_eq!(host.description(), "Say hello, twice.");
    let call = host.request("tools/call", json!({"name": "greet", "arguments": {"name": "Ada"}}));
    assert_eq!(call["result"]["content"][0]["text"], "hello Ada, hello Ada", "{call}");

    // Break the build: an error log; the running server keeps serving.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(dir.join("src/lib.rs"), lib("Broken.", "this does not compile")).unwrap();
    let (error, _) = host.wait_for(Duration::from_secs(120), |m| {
        m["method"] == "notifications/message" && m["params"]["level"] == "error"
    });
    assert!(error["params"]["data"].as_str().unwrap().contains("the build failed"), "{error}");
    assert_eq!(host.description(), "Say hello, twice.");

    let status = host.finish();
    assert!(status.success(), "dev ends with its host: {status}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The package of the bounds' tests: small limits, so that going over them costs the test little.
/// Built once for all of them (and left under target/tmp).
fn bounded_package() -> &'static (PathBuf, PathBuf) {
    static PACKAGE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let lib = "use mcp_tools::tool;\n\n/// Say hello.\n#[tool]\npub async fn greet(name: String) -> String {\n    format!(\"hello {name}\")\n}\n\n/// A text of `bytes` bytes.\n#[tool]\npub async fn big(bytes: u32) -> String {\n    \"x\".repeat(bytes as usize)\n}\n";
        let main = "use devloop_bounds as _;\n\nfn main() -> std::process::ExitCode {\n    mcp_tools::Server::builder()\n        .name(env!(\"CARGO_PKG_NAME\"))\n        .version(env!(\"CARGO_PKG_VERSION\"))\n        .limits(\n            mcp_tools::Limits::new()\n                .max_message_size(64 * 1024)\n                .max_queued_bytes(256 * 1024)\n                .write_timeout(std::time::Duration::from_secs(3)),\n        )\n        .run()\n}\n";
        package("devloop_bounds", lib, main)
    })
}

/// More than `dev` needs with the bounded package's limits (64 KiB messages, 256 KiB queued),
/// far less than the messages the tests below send it.
const MEMORY_BOUND: u64 = 64 << 20;

#[test]
fn a_host_line_over_the_message_limit_is_refused_without_being_buffered() {
    let (dir, target) = bounded_package();
    let mut host = Host::start("devloop_bounds", dir, target);
    host.initialize();
    // A 128 MiB request, 2048 times the limit; then a small one.
    let pad = "x".repeat(128 << 20);
    let huge = format!(r#"{{"jsonrpc":"2.0","id":"huge","method":"ping","params":{{"pad":"{pad}"}}}}"#);
    drop(pad);
    let stdin = host.stdin.as_mut().unwrap();
    stdin.write_all(huge.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    drop(huge);
    let (refused, _) = host.wait_for(Duration::from_secs(30), |m| m.get("error").is_some());
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["id"].is_null(), "the id of a discarded line is not known: {refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("limit"), "{refused}");
    let ping = host.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    if let Some(peak) = host.peak_memory() {
        assert!(peak < MEMORY_BOUND, "dev buffered the line: {} MiB at its peak", peak >> 20);
    }
    assert!(host.finish().success());
}

#[test]
fn a_server_message_over_the_limit_is_not_passed_on_and_the_host_is_told() {
    let (dir, target) = bounded_package();
    let mut host = Host::start("devloop_bounds", dir, target);
    host.initialize();
    let id = host.ask("tools/call", json!({"name": "big", "arguments": {"bytes": 200_000}}));
    let (error, seen) = host.wait_for(Duration::from_secs(30), |m| {
        m["method"] == "notifications/message" && m["params"]["level"] == "error"
    });
    assert!(error["params"]["data"].as_str().unwrap().contains("limit"), "{error}");
    assert!(!seen.iter().any(|m| m["id"] == id), "the answer over the limit was passed on");
    // The same tool, within the limit, and the next request: served as usual.
    let call = host.request("tools/call", json!({"name": "big", "arguments": {"bytes": 1000}}));
    assert_eq!(call["result"]["content"][0]["text"].as_str().map(str::len), Some(1000), "{call}");
    assert!(host.finish().success());
}

#[test]
fn a_host_that_stops_reading_is_disconnected_not_buffered_for() {
    let (dir, target) = bounded_package();
    let mut host = Host::start("devloop_bounds", dir, target);
    host.initialize();
    // 8,000 calls answered with 16 KiB each (125 MiB), none of them read: `dev` stops reading
    // too once 256 KiB wait for the host, and after the write timeout (3 s) gives up on it.
    let mut stdin = host.stdin.take().unwrap();
    let name = "y".repeat(16 * 1024);
    let writer = std::thread::spawn(move || {
        for id in 0..8_000 {
            let call = json!({"jsonrpc": "2.0", "id": format!("flood-{id}"), "method": "tools/call",
                "params": {"name": "greet", "arguments": {"name": name}}});
            if writeln!(stdin, "{call}").is_err() {
                break; // dev is gone
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut peak = None;
    let status = loop {
        peak = host.peak_memory().or(peak);
        if let Some(status) = host.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "dev still buffers for a host that stopped reading");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!status.success(), "a host disconnected for not reading is a failure: {status}");
    writer.join().unwrap();
    if let Some(peak) = peak {
        assert!(peak < MEMORY_BOUND, "dev buffered for the host: {} MiB at its peak", peak >> 20);
    }
}

/// Two links to `.` in `src/` make a tree of paths without end (`src/a/b/a/…`) for a watcher
/// that follows links; `dev` must still answer at once, and keep answering.
#[cfg(unix)]
#[test]
fn symbolic_link_loops_in_the_sources_do_not_keep_dev_from_serving() {
    let name = "devloop_links";
    let (dir, target) = package(name, &lib("Say hello.", "format!(\"hello {name}\")"), MAIN);
    std::os::unix::fs::symlink(".", dir.join("src/a")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("src/b")).unwrap();
    let mut host = Host::start(name, &dir, &target);
    let init = host.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], name, "{init}");
    std::thread::sleep(Duration::from_secs(2)); // a few rounds of the watcher
    assert_eq!(host.description(), "Say hello.");
    assert!(host.finish().success());
    std::fs::remove_dir_all(&dir).unwrap();
}
