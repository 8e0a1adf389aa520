//! Helpers for the workspace's integration tests: spawn a server binary and speak
//! newline-delimited JSON-RPC to it over its stdin/stdout, as an MCP host does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// How long any single answer may take before the test fails (generous: CI machines are small).
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// What a package built by a test (tests/dev_loop.rs, tests/library_crate.rs,
/// tests/readme_quickstart.rs) appends to its `Cargo.toml`, beside mcp-tools with its default
/// features as a user takes it: dependencies the package never uses, there only so that cargo
/// builds the crates it shares with the workspace's test build with the features that build gave
/// them (the workspace's tests turn on mcp-tools' `client`, `auth`, ..., whose dependencies add
/// features to hyper, tower, futures-util, getrandom, ..., and whose derive macros add features
/// to syn 2 and 3, the host's). A crate with other features is another build, and so is
/// everything above it: without these lines the first package a test built compiled some 150
/// crates again (36 s on 2 cores); with them, only mcp-tools and its macros (about 15 s;
/// bench/test-time.md). If the list falls behind the workspace's dependencies, the tests stay
/// right and get slower: bench/test-time.md shows how to compare the two builds.
pub fn shared_build() -> String {
    // (section, package, version, features)
    const DEPENDENCIES: &[(&str, &str, &str, &[&str])] = &[
        ("dependencies", "bitflags", "2", &["std"]),
        ("dependencies", "equivalent", "1", &[]),
        ("dependencies", "futures-channel", "0.3", &["sink"]),
        ("dependencies", "futures-util", "0.3", &["io", "sink"]),
        ("dependencies", "getrandom", "0.3", &["std"]),
        ("dependencies", "getrandom", "0.4", &["std", "sys_rng"]),
        ("dependencies", "hyper", "1", &["client"]),
        ("dependencies", "hyper-util", "0.1", &["client-legacy", "client-proxy"]),
        ("dependencies", "sync_wrapper", "1", &["futures"]),
        ("dependencies", "tower", "0.5", &["retry", "timeout"]),
        ("dependencies", "tracing-core", "0.1", &[]),
        ("dependencies", "zerocopy", "0.8", &[]),
        ("build-dependencies", "syn", "2", &["full", "extra-traits", "visit", "visit-mut"]),
        ("build-dependencies", "syn", "3", &["full", "extra-traits", "visit", "visit-mut", "fold"]),
    ];
    let mut toml = String::new();
    for (section, package, version, features) in DEPENDENCIES {
        // Named after the package and its major version: two versions of one package can both be
        // listed, and the names cannot clash with the package's own dependencies.
        let major = version.split('.').find(|part| *part != "0").unwrap_or("0");
        toml += &format!(
            "\n[{section}.shared-build-{package}-{major}]\npackage = {package:?}\nversion = {version:?}\nfeatures = {features:?}\n"
        );
    }
    toml
}

/// The path of an example binary built by `cargo test` (examples are built with the tests).
/// `cargo test --test NAME` alone does not build examples: a binary older than a source it is
/// built from (the runtime, the macros, the examples) fails the test with a message saying so,
/// rather than letting it run the old code.
pub fn example_binary(name: &str) -> PathBuf {
    // target/debug/deps/<test-binary> → target/debug/examples/<name>
    let mut path = std::env::current_exe().expect("test binary path");
    path.pop();
    if path.ends_with("deps") {
        path.pop();
    }
    path.push("examples");
    path.push(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} is not built; run the tests with `cargo test --workspace`", path.display());
    if let Some(source) = changed_since_built(&path) {
        panic!(
            "{} is older than {}, one of its sources: the example was not rebuilt (`cargo test \
             --test NAME` does not build examples); run `cargo build --examples` first, or \
             `cargo test --workspace`",
            path.display(),
            source.display()
        );
    }
    path
}

/// A source of `binary` (as listed in the dep-info file cargo writes beside it) modified after
/// the binary was.
fn changed_since_built(binary: &Path) -> Option<PathBuf> {
    let built = std::fs::metadata(binary).and_then(|m| m.modified()).ok()?;
    let deps = std::fs::read_to_string(binary.with_extension("d")).ok()?;
    // `binary: source source…`, spaces within a path escaped with a backslash.
    let (_, sources) = deps.lines().next()?.split_once(": ")?;
    let sources = sources.replace("\\ ", "\u{0}");
    sources.split(' ').map(|s| PathBuf::from(s.replace('\u{0}', " "))).find(|source| {
        std::fs::metadata(source).and_then(|m| m.modified()).is_ok_and(|modified| modified > built)
    })
}

/// A server process spoken to over stdio.
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: i64,
}

impl StdioServer {
    /// Spawns `binary` with `args`; its stderr is inherited (shown when a test fails).
    pub fn spawn(binary: &PathBuf, args: &[&str]) -> StdioServer {
        let mut child = Command::new(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        StdioServer { child, stdin, lines, next_id: 1 }
    }

    /// Writes raw bytes (a message must end with `\n`).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush");
    }

    /// Writes one JSON message and a newline.
    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next line the server writes, parsed. Every line must be JSON-RPC (stdout carries
    /// nothing else).
    pub fn recv(&mut self) -> Value {
        let line = self.lines.recv_timeout(TIMEOUT).expect("the server answered in time");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
        assert_eq!(value["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
        value
    }

    /// Whether the server writes nothing within `wait`.
    pub fn is_silent_for(&mut self, wait: Duration) -> bool {
        match self.lines.recv_timeout(wait) {
            Ok(line) => panic!("unexpected message {line}"),
            Err(_) => true,
        }
    }

    /// Sends a request and returns the id used.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its answer; notifications that come first are returned too.
    pub fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.send_request(method, params);
        let mut notifications = Vec::new();
        loop {
            let message = self.recv();
            if message.get("id") == Some(&json!(id)) {
                return (message, notifications);
            }
            assert!(message.get("method").is_some(), "an answer to another request: {message}");
            notifications.push(message);
        }
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub fn initialize(&mut self) -> Value {
        let (answer, _) = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "harness", "version": "1.0.0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer["result"].clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the process to exit; returns its exit code.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.wait_exit()
    }

    /// Waits (stdin left open) for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "the server did not exit after EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
