//! End to end: spawn the quickstart binary and drive it over stdio as an MCP host would,
//! including every kind of bad input. The server must answer each one and keep serving.

use std::time::Duration;

use harness::{StdioServer, example_binary};
use serde_json::{Value, json};

fn quickstart() -> StdioServer {
    StdioServer::spawn(&example_binary("quickstart"), &[])
}

fn tool_text(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn handshake_negotiates_the_latest_version_and_declares_tools() {
    let mut server = quickstart();
    let result = server.initialize();
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "notes");
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["instructions"].as_str().unwrap().contains("notes"));
    assert_eq!(server.close(), Some(0), "clean exit on EOF");
}

#[test]
fn older_clients_get_their_version_and_unknown_versions_get_the_latest() {
    for (asked, expected) in
        [("2024-11-05", "2024-11-05"), ("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")]
    {
        let mut server = quickstart();
        let (answer, _) = server.request(
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}),
        );
        assert_eq!(answer["result"]["protocolVersion"], expected, "asked for {asked}");
    }
}

#[test]
fn requests_before_initialize_are_errors_and_ping_is_allowed() {
    let mut server = quickstart();
    let (answer, _) = server.request("ping", json!({}));
    assert_eq!(answer["result"], json!({}));
    let (answer, _) = server.request("tools/list", json!({}));
    assert_eq!(answer["error"]["code"], -32600);
    // A 2026-07-28 probe without its envelope is invalid params (it names what is missing)…
    let (answer, _) = server.request("server/discover", json!({}));
    assert_eq!(answer["error"]["code"], -32602);
    assert!(answer["error"]["message"].as_str().unwrap().contains("_meta"), "{answer}");
    // …and does not decide the connection's era: the client can still initialize afterwards.
    assert_eq!(server.initialize()["protocolVersion"], "2025-11-25");
}

#[test]
fn tools_list_carries_schemas_and_annotations() {
    let mut server = quickstart();
    server.initialize();
    let (answer, _) = server.request("tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["create_note", "delete_note", "search_notes"]);
    assert!(answer["result"].get("nextCursor").is_none(), "one page");
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty());
        if let Some(output) = tool.get("outputSchema") {
            assert_eq!(output["type"], "object", "{tool}");
        }
    }
    let search = &tools[2];
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert_eq!(search["inputSchema"]["properties"]["limit"]["default"], 10);
    assert_eq!(search["inputSchema"]["properties"]["tag"]["type"], "string", "no null in optional types");
    assert_eq!(tools[1]["annotations"]["destructiveHint"], true);
}

#[test]
fn create_search_delete_round_trip() {
    let mut server = quickstart();
    server.initialize();
    let (created, _) = server.request(
        "tools/call",
        json!({"name": "create_note", "arguments": {"title": "Groceries", "body": "milk and bread", "tags": ["home"]}}),
    );
    let note = &created["result"]["structuredContent"];
    assert_eq!(note["title"], "Groceries");
    let id = note["id"].as_u64().expect("an id");
    // The same JSON is also sent as text for clients that only read text.
    assert_eq!(serde_json::from_str::<Value>(&tool_text(&created)).unwrap(), *note);

    let (found, _) =
        server.request("tools/call", json!({"name": "search_notes", "arguments": {"query": "bread"}}));
    assert_eq!(found["result"]["structuredContent"]["total"], 1);
    assert_eq!(found["result"]["structuredContent"]["notes"][0]["id"], id);

    let (deleted, notifications) =
        server.request("tools/call", json!({"name": "delete_note", "arguments": {"id": id}}));
    assert!(deleted["result"].get("isError").is_none());
    assert!(tool_text(&deleted).contains("Deleted note"));
    assert_eq!(notifications.len(), 1, "one log message before the result");
    assert_eq!(notifications[0]["method"], "notifications/message");

    let (again, _) = server.request("tools/call", json!({"name": "delete_note", "arguments": {"id": id}}));
    assert_eq!(again["result"]["isError"], true, "the error path is a result, not a JSON-RPC error");
    assert!(tool_text(&again).contains(&format!("no note with id {id}")));
}

#[test]
fn invalid_arguments_list_every_problem_with_its_path() {
    let mut server = quickstart();
    server.initialize();
    let (answer, _) = server.request(
        "tools/call",
        json!({"name": "search_notes", "arguments": {"query": 42, "limit": "ten", "colour": "red"}}),
    );
    assert_eq!(answer["result"]["isError"], true);
    let text = tool_text(&answer);
    assert!(text.contains("/query"), "{text}");
    assert!(text.contains("/limit"), "{text}");
    assert!(text.contains("colour"), "{text}");
    // Missing required arguments too.
    let (answer, _) = server.request("tools/call", json!({"name": "create_note", "arguments": {}}));
    let text = tool_text(&answer);
    assert!(text.contains("title") && text.contains("body"), "{text}");
    // Arguments that are not an object.
    let (answer, _) = server.request("tools/call", json!({"name": "create_note", "arguments": [1, 2]}));
    assert_eq!(answer["result"]["isError"], true);
    assert!(tool_text(&answer).contains("must be a JSON object"));
}

#[test]
fn bad_messages_get_errors_and_the_server_keeps_serving() {
    let mut server = quickstart();
    server.initialize();

    server.send_raw(b"{this is not json\n");
    let answer = server.recv();
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(answer["id"], Value::Null);

    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    assert_eq!(server.recv()["error"]["code"], -32600, "batches are rejected");

    server.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}\n");
    let answer = server.recv();
    assert_eq!((answer["error"]["code"].clone(), answer["id"].clone()), (json!(-32600), json!(7)));

    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n");
    assert_eq!(server.recv()["error"]["code"], -32600, "null ids are invalid");

    let (answer, _) = server.request("tools/call", json!({"name": "no_such_tool", "arguments": {}}));
    assert_eq!(answer["error"]["code"], -32602);
    assert!(answer["error"]["message"].as_str().unwrap().contains("no_such_tool"));

    let (answer, _) = server.request("resources/list", json!({}));
    assert_eq!(answer["error"]["code"], -32601);

    let (answer, _) = server.request("tools/call", json!({"arguments": {}}));
    assert_eq!(answer["error"]["code"], -32602, "tools/call without a name");

    // Blank lines and a notification get no answer.
    server.send_raw(b"\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}\n");
    assert!(server.is_silent_for(Duration::from_millis(200)));

    // Still serving.
    let (answer, _) = server.request("ping", json!({}));
    assert_eq!(answer["result"], json!({}));
    assert_eq!(server.close(), Some(0));
}

#[test]
fn an_oversized_message_is_rejected_without_losing_the_next_one() {
    let mut server = StdioServer::spawn(&example_binary("quickstart"), &[]);
    server.initialize();
    // 17 MiB, over the default 16 MiB limit, then a normal request on the next line.
    let mut big = br#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"create_note","arguments":{"title":"x","body":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    big.extend_from_slice(b"\"}}}\n");
    server.send_raw(&big);
    let answer = server.recv();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("exceeds"));
    let (answer, _) = server.request("ping", json!({}));
    assert_eq!(answer["result"], json!({}));
}

#[test]
fn cli_lists_and_calls_tools() {
    let binary = example_binary("quickstart");
    let list = std::process::Command::new(&binary).arg("list").output().unwrap();
    assert!(list.status.success());
    let listed: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(listed["tools"].as_array().unwrap().len(), 3);

    let ok = std::process::Command::new(&binary)
        .args(["call", "create_note", r#"{"title":"t","body":"b"}"#])
        .output()
        .unwrap();
    assert!(ok.status.success());
    let result: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(result["structuredContent"]["title"], "t");

    let failed =
        std::process::Command::new(&binary).args(["call", "delete_note", r#"{"id":5}"#]).output().unwrap();
    assert_eq!(failed.status.code(), Some(1), "isError → exit code 1");
    let result: Value = serde_json::from_slice(&failed.stdout).unwrap();
    assert_eq!(result["isError"], true);

    let stateless = std::process::Command::new(&binary)
        .args(["call", "--stateless", "create_note", r#"{"title":"s","body":"b"}"#])
        .output()
        .unwrap();
    assert!(stateless.status.success(), "{}", String::from_utf8_lossy(&stateless.stderr));
    let result: Value = serde_json::from_slice(&stateless.stdout).unwrap();
    assert_eq!(
        (result["resultType"].as_str(), result["structuredContent"]["title"].as_str()),
        (Some("complete"), Some("s"))
    );

    let unknown = std::process::Command::new(&binary).args(["call", "nope"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("create_note"), "lists the tools");

    let help = std::process::Command::new(&binary).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("call NAME"));
    // After a subcommand too: `server-json --help` is the usage, not an unknown option.
    let help = std::process::Command::new(&binary).args(["server-json", "--help"]).output().unwrap();
    assert!(help.status.success(), "{}", String::from_utf8_lossy(&help.stderr));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--package TYPE=ID"));
}

#[test]
fn sigterm_lets_the_running_call_finish_then_exits() {
    let mut server = StdioServer::spawn(&example_binary("everything"), &[]);
    server.initialize();
    let id = server.send_request("tools/call", json!({"name": "test_tool_with_logging", "arguments": {}}));
    // The call is running once its first log arrives; then the signal.
    let first = server.recv();
    assert_eq!(first["method"], "notifications/message", "{first}");
    let status =
        std::process::Command::new("kill").args(["-TERM", &server.pid().to_string()]).status().unwrap();
    assert!(status.success());
    // The call (about 100 ms of work) still completes: its logs, then its answer.
    let mut answer = None;
    for _ in 0..4 {
        let message = server.recv();
        if message["id"] == id {
            answer = Some(message);
            break;
        }
    }
    let answer = answer.expect("the running call was answered");
    assert_eq!(answer["result"]["content"][0]["text"], "Tool with logging executed successfully");
    assert_eq!(server.wait_exit(), Some(0));
}

#[test]
fn auth_options_are_checked_before_serving() {
    let binary = example_binary("quickstart");
    let run = |args: &[&str]| {
        let output = std::process::Command::new(&binary).args(args).output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run(&["--http", "0", "--auth-issuer", "https://login.example.com"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--auth-audience URL is required"), "{stderr}");
    let (code, stderr) = run(&[
        "--http",
        "0",
        "--auth-audience",
        "http://mcp.example.com/mcp",
        "--auth-issuer",
        "https://login.example.com",
    ]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("must be https"), "{stderr}");
    let (code, stderr) =
        run(&["--http", "0", "--auth-audience", "https://mcp.example.com/mcp", "--auth-token-file", "/nope"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("cannot read the token file /nope"), "{stderr}");
    let (code, stderr) = run(&["--http", "0", "--auth-audience", "https://mcp.example.com/mcp"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("needs --auth-issuer URL or --auth-token-file FILE"), "{stderr}");
}

#[test]
fn http_prints_its_url_and_help_survives_a_closed_pipe() {
    let (mut child, line) = serve_http("quickstart");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        line.contains("serving MCP at http://127.0.0.1:")
            && line.trim_end().ends_with("/mcp (Ctrl-C to stop)"),
        "{line}"
    );

    // `--help | head -1`: the reader goes away; the server must not panic.
    let mut child = std::process::Command::new(example_binary("quickstart"))
        .arg("--help")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
}

/// The example served over HTTP on a free port, and the first line it prints (its URL).
fn serve_http(example: &str) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(example_binary(example))
        .args(["--http", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    (child, line)
}

/// One HTTP/1.1 exchange on a fresh connection: the status line and headers (lower-cased
/// names), and a reader left at the start of the body.
fn http_post(
    port: u16,
    session: Option<&str>,
    body: &Value,
) -> (String, Vec<(String, String)>, std::io::BufReader<std::net::TcpStream>) {
    use std::io::{BufRead as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.to_string();
    let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else { break };
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    (status, headers, reader)
}

#[test]
fn sigterm_over_http_lets_the_running_call_finish_then_exits() {
    use std::io::{BufRead as _, Read as _};
    let (mut child, line) = serve_http("everything");
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, headers, mut reader) = http_post(port, None, &initialize);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let mut answer = String::new();
    reader.read_to_string(&mut answer).unwrap();
    assert!(answer.contains("\"protocolVersion\""), "{answer}");
    let session = headers.iter().find(|(n, _)| n == "mcp-session-id").map(|(_, v)| v.clone()).unwrap();
    let (status, _, _) =
        http_post(port, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(status.starts_with("HTTP/1.1 202"), "{status}");

    // The call streams its logs before its answer; once the first one is here, the signal.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "test_tool_with_logging", "arguments": {}}});
    let (status, headers, mut stream) = http_post(port, Some(&session), &call);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        headers.iter().any(|(n, v)| n == "content-type" && v.starts_with("text/event-stream")),
        "{headers:?}"
    );
    let mut received = String::new();
    while !received.contains("Tool execution started") {
        let mut line = String::new();
        assert!(stream.read_line(&mut line).unwrap() > 0, "the stream ended early: {received}");
        received.push_str(&line);
    }
    let kill = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    // The running call (about 100 ms more) still completes on its stream, which then ends.
    stream.read_to_string(&mut received).unwrap();
    assert!(received.contains("Tool execution completed"), "{received}");
    assert!(received.contains("Tool with logging executed successfully"), "{received}");
    // And the server exits, successfully, without being killed.
    let started = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("the server did not exit within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "still accepting after shutdown");
}
