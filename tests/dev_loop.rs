//! The `dev` subcommand end to end, as a host uses it: a real temporary package, served through
//! `dev`; its source edited while the host stays connected. The host sees the new tool after a
//! `notifications/tools/list_changed`, without reconnecting; a build that fails is reported to
//! it as an error log while the old server keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

fn lib(description: &str, body: &str) -> String {
    format!(
        "use mcp_tools::tool;\n\n/// {description}\n#[tool]\npub async fn greet(name: String) -> String {{\n    {body}\n}}\n"
    )
}

/// A package `devloop` in a temporary folder, built once.
fn package() -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Under target/ (cargo's folder for tests' files), so that cargo reads the workspace's
    // .cargo/config.toml there too: built with the same profile, the package shares the
    // workspace's build of the dependencies instead of building them all again.
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-tools-devloop-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"devloop\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nmcp-tools = {{ path = {:?}, features = [\"auth\"] }}\n\n[workspace]\n",
        root.join("mcp-tools")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib("Say hello.", "format!(\"hello {name}\")")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "mcp_tools::main!();\n").unwrap();
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

/// The host: the `dev` process's stdin, and its stdout's messages on a channel.
struct Host {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: i64,
}

impl Host {
    fn start(dir: &Path, target: &Path) -> Host {
        let mut child = Command::new(target.join("debug/devloop"))
            .arg("dev")
            .current_dir(dir)
            .env("CARGO_MANIFEST_DIR", dir)
            .env("CARGO", cargo())
            .env("CARGO_TARGET_DIR", target)
            .env("CARGO_NET_OFFLINE", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(message) = serde_json::from_str(&line) {
                    let _ = tx.send(message);
                }
            }
        });
        Host { child, stdin, messages, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next message matching `wanted`, within `wait`; the others seen meanwhile.
    fn wait_for(&mut self, wait: Duration, wanted: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let deadline = std::time::Instant::now() + wait;
        let mut others = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return (message, others),
                Ok(message) => others.push(message),
                Err(_) => panic!("nothing matching within {wait:?}; seen: {others:?}"),
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (answer, _) =
            self.wait_for(Duration::from_secs(30), |m| m["id"] == id && m.get("method").is_none());
        answer
    }

    fn description(&mut self) -> String {
        let list = self.request("tools/list", json!({}));
        list["result"]["tools"][0]["description"].as_str().unwrap_or_default().to_owned()
    }
}

#[test]
fn an_edited_tool_reaches_the_connected_host_and_a_broken_build_keeps_the_old_server() {
    let (dir, target) = package();
    let mut host = Host::start(&dir, &target);
    let init = host.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "devloop", "{init}");
    host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
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

    drop(host.stdin);
    let status = host.child.wait().unwrap();
    assert!(status.success(), "dev ends with its host: {status}");
    std::fs::remove_dir_all(&dir).unwrap();
}
