//! Mounting (`ServerBuilder::mount`, feature `client`): upstream servers in the same process
//! served under prefixes, seen by clients of both eras: tools, resources, templates, prompts and
//! completion namespaced; progress, logs, questions and cancellation forwarded; list changes
//! followed; clashes refused at start-up naming both sides; an upstream lost and found again;
//! middleware and transformations applied to mounted tools like native ones.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tools::client::{CallOptions, Client, ClientBuilder, EraChoice, ServerNotification};
use mcp_tools::compose::{Mount, Upstream};
use mcp_tools::middleware::AccessLog;
use mcp_tools::transform::{ArgTransform, ToolTransform};
use mcp_tools::{
    Context, LogLevel, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceContents,
    ResourceTemplate, Server, Tool, ToolError, ToolResult,
};
use serde_json::{Map, Value, json};

/// An upstream: tools that add, report progress and log, ask the user, run forever; a
/// resource, a template, a prompt and a completer.
fn upstream(name: &str) -> Server {
    Server::builder()
        .name(name)
        .inventory(false)
        .tool(Tool::new(
            "add",
            "Add two numbers.",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
            |args, _| async move {
                let sum = args["a"].as_i64().unwrap_or_default() + args["b"].as_i64().unwrap_or_default();
                Ok(ToolResult::new().text(sum.to_string()))
            },
        ))
        .tool(Tool::new("count", "Count to three, reporting progress and logging.", json!({"type": "object"}), |_, ctx: Context| async move {
            for i in 1..=3 {
                ctx.report_progress(f64::from(i), Some(3.0), Some("counting"));
                ctx.log(LogLevel::Info, json!(format!("step {i}")));
            }
            Ok(ToolResult::new().text("counted"))
        }))
        .tool(Tool::new("greet", "Greet the user by the name they give.", json!({"type": "object"}), |_, ctx: Context| async move {
            let answer = ctx
                .elicit_with_schema("Who are you?", json!({"type": "object", "properties": {"name": {"type": "string"}}}))
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            let name = answer.content.and_then(|c| c["name"].as_str().map(str::to_owned)).unwrap_or("stranger".into());
            Ok(ToolResult::new().text(format!("Hello, {name}!")))
        }))
        .tool(Tool::new("forever", "Never ends.", json!({"type": "object"}), |_, _| async move {
            struct Counted;
            impl Drop for Counted {
                fn drop(&mut self) {
                    ENDED.fetch_add(1, Ordering::SeqCst);
                }
            }
            let _counted = Counted;
            std::future::pending::<Result<ToolResult, ToolError>>().await
        }))
        .tool(Tool::new("link", "Link to a note.", json!({"type": "object"}), |_, _| async move {
            Ok(ToolResult::from_json(json!({"content": [{"type": "resource_link", "uri": "notes://one", "name": "one"}]})))
        }))
        .resource(
            Resource::fixed("notes://one", "one", ResourceContents::text("notes://one", Some("text/plain"), "the first note"))
                .description("The first note."),
        )
        .resource_template(ResourceTemplate::new("notes://by-id/{id}", "note", |request, _| async move {
            let id = request.uri.rsplit('/').next().unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), format!("note {id}"))])
        }))
        .prompt(
            Prompt::new("summarize", "Summarize a topic.", |args, _| async move {
                let topic = args.get("topic").cloned().unwrap_or_default();
                Ok(PromptResult::new(vec![PromptMessage::user(format!("summarize {topic}"))]))
            })
            .argument(PromptArgument::required("topic", "What to summarize")),
        )
        .completer(|request, _| async move {
            ["rust", "ruby", "go"].iter().filter(|v| v.starts_with(&request.value)).map(|v| v.to_string()).collect()
        })
        .build()
        .unwrap()
}

static ENDED: AtomicUsize = AtomicUsize::new(0);

fn native() -> Tool {
    Tool::new("ping", "Answer pong.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().text("pong"))
    })
}

/// A gateway mounting `math` and `notes` (two upstreams of the same kind) beside a native tool.
async fn gateway() -> Server {
    Server::builder()
        .name("gateway")
        .inventory(false)
        .tool(native())
        .mount("math", Upstream::server(upstream("math-server")))
        .mount_with(Mount::new("notes", Upstream::server(upstream("notes-server"))).separator("."))
        .connect()
        .await
        .unwrap()
}

fn caller() -> ClientBuilder {
    Client::builder().name("caller").on_elicitation(|params| async move {
        assert_eq!(params["message"], "Who are you?");
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    })
}

/// A client of each era.
async fn callers(server: &Server) -> [Client; 2] {
    [
        server.connect(caller().era(EraChoice::Handshake)).await.unwrap(),
        server.connect(caller()).await.unwrap(),
    ]
}

fn names(items: &[Value], key: &str) -> Vec<String> {
    let mut names: Vec<String> = items.iter().map(|i| i[key].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn mounted_items_are_namespaced_and_work_in_both_eras() {
    let server = gateway().await;
    for client in callers(&server).await {
        let era = client.era();
        let tools = names(&client.list_tools().await.unwrap(), "name");
        assert_eq!(
            tools,
            [
                "math_add",
                "math_count",
                "math_forever",
                "math_greet",
                "math_link",
                "notes.add",
                "notes.count",
                "notes.forever",
                "notes.greet",
                "notes.link",
                "ping"
            ],
            "{era:?}"
        );
        assert_eq!(client.call_tool("math_add", json!({"a": 2, "b": 3})).await.unwrap().text(), "5");
        assert_eq!(client.call_tool("notes.add", json!({"a": 1, "b": 1})).await.unwrap().text(), "2");
        assert_eq!(client.call_tool("ping", json!({})).await.unwrap().text(), "pong");
        // The upstream checks its own arguments; its error is the caller's error result.
        let wrong = client.call_tool("math_add", json!({"a": "two"})).await.unwrap();
        assert!(wrong.is_error(), "{wrong:?}");
        // A resource link's URI is the gateway's, which reads it.
        let link = client.call_tool("math_link", json!({})).await.unwrap();
        assert_eq!(link.content()[0]["uri"], "notes://math/one");

        let resources = names(&client.list_resources().await.unwrap(), "uri");
        assert_eq!(resources, ["notes://math/one", "notes://notes/one"]);
        let read = client.read_resource("notes://math/one").await.unwrap();
        assert_eq!(read["contents"][0]["text"], "the first note");
        assert_eq!(read["contents"][0]["uri"], "notes://math/one");
        let templates = names(&client.list_resource_templates().await.unwrap(), "uriTemplate");
        assert_eq!(templates, ["notes://math/by-id/{id}", "notes://notes/by-id/{id}"]);
        let read = client.read_resource("notes://notes/by-id/7").await.unwrap();
        assert_eq!(read["contents"][0]["text"], "note 7");
        assert_eq!(read["contents"][0]["uri"], "notes://notes/by-id/7");

        let prompts = names(&client.list_prompts().await.unwrap(), "name");
        assert_eq!(prompts, ["math_summarize", "notes.summarize"]);
        let mut arguments = Map::new();
        arguments.insert("topic".into(), json!("rust"));
        let prompt = client.get_prompt("math_summarize", arguments).await.unwrap();
        assert_eq!(prompt["messages"][0]["content"]["text"], "summarize rust");
        let completed = client
            .complete(json!({"type": "ref/prompt", "name": "notes.summarize"}), "topic", "r")
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["rust", "ruby"]), "{era:?}");
        let completed = client
            .complete(json!({"type": "ref/resource", "uri": "notes://math/by-id/{id}"}), "id", "g")
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["go"]));
    }
}

#[tokio::test]
async fn progress_logs_and_questions_reach_the_caller_in_its_era() {
    let server = gateway().await;
    for client in callers(&server).await {
        let era = client.era();
        if era == mcp_tools::Era::Handshake {
            client.request("logging/setLevel", json!({"level": "info"})).await.unwrap();
        }
        let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
        let (logs_tx, mut logs) = tokio::sync::mpsc::unbounded_channel();
        let mut meta = Map::new();
        if era == mcp_tools::Era::Stateless {
            meta.insert("io.modelcontextprotocol/logLevel".into(), json!("info"));
        }
        let options = CallOptions::new().progress(tx).logs(logs_tx).meta(meta);
        let done = client.call_tool_with("math_count", json!({}), options).await.unwrap();
        assert_eq!(done.text(), "counted");
        let mut seen = Vec::new();
        while let Ok(p) = progress.try_recv() {
            seen.push(p.progress);
        }
        assert_eq!(seen, [1.0, 2.0, 3.0], "{era:?}: the upstream's progress reached the caller");
        let mut said = Vec::new();
        while let Ok(ServerNotification::Log { data, .. }) = logs.try_recv() {
            said.push(data);
        }
        assert_eq!(said, [json!("step 1"), json!("step 2"), json!("step 3")], "{era:?}");
        // The upstream's elicitation is asked of this caller, in its era.
        let greeted = client.call_tool("notes.greet", json!({})).await.unwrap();
        assert_eq!(greeted.text(), "Hello, Ada!", "{era:?}");
    }
    // A caller that cannot answer: the upstream is told, and says so.
    let bare = server.connect(Client::builder().era(EraChoice::Handshake)).await.unwrap();
    let greeted = bare.call_tool("math_greet", json!({})).await.unwrap();
    assert!(greeted.is_error() || greeted.text().contains("stranger"), "{greeted:?}");
}

#[tokio::test]
async fn a_2025_upstream_asks_through_a_gateway_too() {
    // The upstream speaks only 2025-11-25: its question is a request to the gateway's client.
    let old = Server::builder().only_era(mcp_tools::Era::Handshake).inventory(false);
    let old =
        old.tool(Tool::new("greet", "Greet.", json!({"type": "object"}), |_, ctx: Context| async move {
            let answer = ctx
                .elicit_with_schema(
                    "Who are you?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                )
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            Ok(ToolResult::new()
                .text(format!("Hi {}", answer.content.unwrap_or_default()["name"].as_str().unwrap_or("?"))))
        }));
    let server = Server::builder()
        .inventory(false)
        .mount("old", Upstream::server(old.build().unwrap()))
        .connect()
        .await
        .unwrap();
    for client in callers(&server).await {
        assert_eq!(
            client.call_tool("old_greet", json!({})).await.unwrap().text(),
            "Hi Ada",
            "{:?}",
            client.era()
        );
    }
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_upstream() {
    let server = gateway().await;
    for client in callers(&server).await {
        let before = ENDED.load(Ordering::SeqCst);
        let call = client.call_tool("math_forever", json!({}));
        assert!(tokio::time::timeout(Duration::from_millis(200), call).await.is_err(), "still running");
        let mut ended = false;
        for _ in 0..300 {
            if ENDED.load(Ordering::SeqCst) > before {
                ended = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(ended, "{:?}: the upstream's handler was stopped", client.era());
    }
}

#[tokio::test]
async fn an_upstreams_list_changes_reach_the_callers() {
    let math = upstream("math-server");
    let server = Server::builder()
        .inventory(false)
        .mount("math", Upstream::server(math.clone()))
        .connect()
        .await
        .unwrap();
    let [session, stateless] = callers(&server).await;
    let mut session_notes = session.notifications();
    let mut stateless_notes = stateless.notifications();
    let _listening =
        stateless.listen(json!({"toolsListChanged": true, "promptsListChanged": true})).await.unwrap();
    math.add_tool(Tool::new("late", "Added later.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().text("late"))
    }))
    .unwrap();
    math.remove_prompt("summarize");
    for notes in [&mut session_notes, &mut stateless_notes] {
        wait_for(notes, ServerNotification::ToolsChanged).await;
        wait_for(notes, ServerNotification::PromptsChanged).await;
    }
    for client in [&session, &stateless] {
        assert_eq!(client.call_tool("math_late", json!({})).await.unwrap().text(), "late");
        assert!(client.list_prompts().await.map(|p| p.is_empty()).unwrap_or(true));
    }
}

async fn wait_for(
    notes: &mut tokio::sync::broadcast::Receiver<ServerNotification>,
    wanted: ServerNotification,
) {
    let seen = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if notes.recv().await.unwrap() == wanted {
                return;
            }
        }
    });
    seen.await.unwrap_or_else(|_| panic!("{wanted:?} arrives"));
}

#[tokio::test]
async fn clashes_fail_the_start_naming_both_sides() {
    // A mounted tool against a native one.
    let clash = Server::builder()
        .inventory(false)
        .tool(Tool::new("math_add", "Mine.", json!({"type": "object"}), |_, _| async {
            Ok(ToolResult::new())
        }))
        .mount("math", Upstream::server(upstream("math-server")))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(clash.contains("tool `math_add` of upstream `math`"), "{clash}");
    assert!(clash.contains("this server's own"), "{clash}");
    // Two upstreams under no prefix: every name clashes, and both upstreams are named.
    let clash = Server::builder()
        .inventory(false)
        .mount("", Upstream::server(upstream("first")))
        .mount("", Upstream::server(upstream("second")))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(clash.contains("tool `add`"), "{clash}");
    assert!(clash.contains("prompt `summarize`"), "{clash}");
    assert!(clash.contains("resource `notes://one`"), "{clash}");
    assert!(clash.contains("first (in process)") && clash.contains("second (in process)"), "{clash}");
    // A prefix that cannot start a tool name, and two mounts under one prefix.
    let bad = Server::builder()
        .inventory(false)
        .mount("my tools", Upstream::server(upstream("a")))
        .mount("x", Upstream::server(upstream("b")))
        .mount("x", Upstream::server(upstream("c")))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(bad.contains("mount prefix \"my tools\" contains ' '"), "{bad}");
    assert!(bad.contains("two upstreams are mounted under the prefix `x`"), "{bad}");
    // `build` is not how a mounting server starts.
    let built =
        Server::builder().mount("m", Upstream::server(upstream("m"))).build().unwrap_err().to_string();
    assert!(built.contains("connect().await"), "{built}");
}

#[tokio::test]
async fn a_required_upstream_that_cannot_start_fails_the_start_and_another_does_not() {
    let missing = || Upstream::command("/nonexistent/mcp-server", ["--stdio"]);
    let error = Server::builder()
        .inventory(false)
        .mount_with(Mount::new("gone", missing()).required(true))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "the required upstream `gone` (/nonexistent/mcp-server --stdio) could not be connected"
        ),
        "{error}"
    );
    assert!(error.contains("cannot start"), "{error}");
    // Not required: the server starts; a call to its tools would fail at once, and there are none yet.
    let server =
        Server::builder().inventory(false).tool(native()).mount("gone", missing()).connect().await.unwrap();
    let client = server.connect(Client::builder()).await.unwrap();
    assert_eq!(names(&client.list_tools().await.unwrap(), "name"), ["ping"]);
}

/// An upstream whose connections the test can cut: each connection serves `server` over a pipe
/// until cut.
#[derive(Clone, Default)]
struct Cuttable {
    connections: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
    made: Arc<AtomicUsize>,
}

impl Cuttable {
    fn upstream(&self, server: Server) -> Upstream {
        let this = self.clone();
        Upstream::custom("cuttable", move |builder| {
            let (server, this) = (server.clone(), this.clone());
            Box::pin(async move {
                this.made.fetch_add(1, Ordering::SeqCst);
                // client ⇄ (a relay the test can stop) ⇄ server
                let (client_side, mut relay_a) = tokio::io::duplex(1 << 16);
                let (mut relay_b, server_side) = tokio::io::duplex(1 << 16);
                let (reader, writer) = tokio::io::split(server_side);
                tokio::spawn(async move {
                    let _ = server.serve(reader, writer).await;
                });
                let relay = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut relay_a, &mut relay_b).await;
                });
                this.connections.lock().unwrap().push(relay.abort_handle());
                let (reader, writer) = tokio::io::split(client_side);
                builder.connect_pipe(reader, writer).await
            })
        })
    }
    fn cut(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

#[tokio::test]
async fn an_upstream_lost_leaves_the_lists_fails_calls_at_once_and_comes_back() {
    let cuttable = Cuttable::default();
    let server = Server::builder()
        .inventory(false)
        .tool(native())
        .mount("math", cuttable.upstream(upstream("math-server")))
        .connect()
        .await
        .unwrap();
    let client = server.connect(Client::builder().era(EraChoice::Handshake)).await.unwrap();
    assert_eq!(client.call_tool("math_add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
    let mut notes = client.notifications();
    cuttable.cut();
    wait_for(&mut notes, ServerNotification::ToolsChanged).await;
    assert_eq!(names(&client.list_tools().await.unwrap(), "name"), ["ping"], "its tools left the list");
    assert!(client.list_resources().await.map(|r| r.is_empty()).unwrap_or(true), "and its resources");
    let started = std::time::Instant::now();
    let down = client.call_tool("math_add", json!({"a": 1, "b": 2})).await.unwrap();
    assert!(down.is_error(), "{down:?}");
    assert!(down.text().contains("upstream `math` (cuttable) is not available"), "{}", down.text());
    assert!(started.elapsed() < Duration::from_secs(1), "a call to a down upstream fails at once");
    // Reconnected after its back-off: the tools are back.
    wait_for(&mut notes, ServerNotification::ToolsChanged).await;
    assert_eq!(client.call_tool("math_add", json!({"a": 2, "b": 2})).await.unwrap().text(), "4");
    assert_eq!(cuttable.made.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_lost_upstreams_tool_called_through_call_tool_says_why() {
    // Deferred (as the gateway serves by default): the tools of a lost upstream leave the
    // search, and `call_tool` on one says the upstream is not available, not "Unknown tool".
    let cuttable = Cuttable::default();
    let server = Server::builder()
        .inventory(false)
        .tool(native())
        .defer_tools(mcp_tools::deferred::DeferredTools::new())
        .mount("math", cuttable.upstream(upstream("math-server")))
        .connect()
        .await
        .unwrap();
    let client = server.connect(Client::builder().era(EraChoice::Handshake)).await.unwrap();
    let search = |query: &'static str| {
        let client = client.clone();
        async move {
            let found = client.call_tool("search_tools", json!({"query": query})).await.unwrap();
            let tools = found.structured().cloned().unwrap_or_default()["tools"].clone();
            tools
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert!(search("add two numbers").await.contains(&"math_add".to_owned()));
    let call = json!({"name": "math_add", "arguments": {"a": 1, "b": 2}});
    assert_eq!(client.call_tool("call_tool", call.clone()).await.unwrap().text(), "3");
    let mut notes = client.notifications();
    cuttable.cut();
    wait_for(&mut notes, ServerNotification::ToolsChanged).await;
    assert!(!search("add two numbers").await.contains(&"math_add".to_owned()), "it left the search");
    let down = client.call_tool("call_tool", call.clone()).await.unwrap();
    assert!(down.is_error(), "{down:?}");
    assert!(down.text().contains("upstream `math` (cuttable) is not available"), "{}", down.text());
    assert!(!down.text().contains("input schema"), "nothing about its arguments: {}", down.text());
    wait_for(&mut notes, ServerNotification::ToolsChanged).await;
    assert_eq!(client.call_tool("call_tool", call).await.unwrap().text(), "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_fails_as_its_upstream_is_lost_answers_after_its_tools_left() {
    // The failed call and the tools leaving are two steps: the call's answer waits for the
    // second, so that what the caller does next (a search, a listing) no longer finds them.
    for deferred in [false, true] {
        let cuttable = Cuttable::default();
        let mut builder = Server::builder().inventory(false).tool(native());
        if deferred {
            builder = builder.defer_tools(mcp_tools::deferred::DeferredTools::new());
        }
        let server =
            builder.mount("math", cuttable.upstream(upstream("math-server"))).connect().await.unwrap();
        let client = server.connect(Client::builder().era(EraChoice::Handshake)).await.unwrap();
        let offered = || {
            let client = client.clone();
            async move {
                let tools = if deferred {
                    let found =
                        client.call_tool("search_tools", json!({"query": "add two numbers"})).await.unwrap();
                    found.structured().cloned().unwrap_or_default()["tools"].clone()
                } else {
                    json!(client.list_tools().await.unwrap())
                };
                let names = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned());
                names.filter(|name| name.starts_with("math_")).collect::<Vec<_>>()
            }
        };
        assert!(offered().await.contains(&"math_add".to_owned()), "deferred: {deferred}");
        let pending = {
            let client = client.clone();
            let (name, arguments) = if deferred {
                ("call_tool", json!({"name": "math_forever", "arguments": {}}))
            } else {
                ("math_forever", json!({}))
            };
            tokio::spawn(async move { client.call_tool(name, arguments).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        cuttable.cut();
        let failed = tokio::time::timeout(Duration::from_secs(5), pending).await.unwrap().unwrap().unwrap();
        assert!(failed.is_error(), "{failed:?}");
        assert!(failed.text().contains("closed the connection"), "{}", failed.text());
        assert_eq!(offered().await, Vec::<String>::new(), "deferred: {deferred}: at once, not found");
    }
}

/// A 2025-11-25 server written by hand, over a pipe: one tool, `charge`, whose every call is
/// answered with a JSON-RPC error (a URL elicitation the user must complete, `-32042`).
fn refusing_upstream() -> Upstream {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    Upstream::custom("refusing", |builder| {
        Box::pin(async move {
            let (client_side, server_side) = tokio::io::duplex(1 << 16);
            let (reader, mut writer) = tokio::io::split(server_side);
            tokio::spawn(async move {
                let mut lines = BufReader::new(reader).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let request: Value = serde_json::from_str(&line).unwrap();
                    let Some(id) = request.get("id").cloned() else { continue };
                    let answer = match request["method"].as_str().unwrap() {
                        "initialize" => json!({"result": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "refusing", "version": "1"}}}),
                        "tools/list" => json!({"result": {"tools": [
                            {"name": "charge", "description": "Charge the card.", "inputSchema": {"type": "object"}}]}}),
                        "tools/call" => json!({"error": {
                            "code": -32042,
                            "message": "This request requires more information.",
                            "data": {"elicitations": [{"mode": "url", "elicitationId": "e1",
                                "url": "https://pay.example/confirm", "message": "Confirm the payment."}]}}}),
                        _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
                    };
                    let mut message = json!({"jsonrpc": "2.0", "id": id});
                    message.as_object_mut().unwrap().extend(answer.as_object().unwrap().clone());
                    let mut bytes = serde_json::to_vec(&message).unwrap();
                    bytes.push(b'\n');
                    if writer.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
            });
            let (reader, writer) = tokio::io::split(client_side);
            builder.era(EraChoice::Handshake).connect_pipe(reader, writer).await
        })
    })
}

#[tokio::test]
async fn an_upstreams_json_rpc_error_reaches_the_caller_as_that_error() {
    for deferred in [false, true] {
        let mut builder = Server::builder().inventory(false).tool(native());
        if deferred {
            builder = builder.defer_tools(mcp_tools::deferred::DeferredTools::new());
        }
        let server = builder.mount("pay", refusing_upstream()).connect().await.unwrap();
        for era in [EraChoice::Handshake, EraChoice::Stateless] {
            let client = server.connect(Client::builder().era(era)).await.unwrap();
            let called = if deferred {
                client.call_tool("call_tool", json!({"name": "pay_charge", "arguments": {}})).await
            } else {
                client.call_tool("pay_charge", json!({})).await
            };
            match called {
                Err(mcp_tools::client::ClientError::Rpc { code, message, data }) => {
                    assert_eq!(code, -32042, "{deferred} {era:?}");
                    assert_eq!(message, "This request requires more information.");
                    assert_eq!(data.unwrap()["elicitations"][0]["url"], "https://pay.example/confirm");
                }
                other => panic!("deferred {deferred}, {era:?}: {other:?}"),
            }
            // The server goes on serving.
            assert_eq!(client.call_tool("ping", json!({})).await.unwrap().text(), "pong", "{era:?}");
        }
    }
}

/// Counts the calls a layer sees, by tool.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<HashMap<String, usize>>>);

#[tokio::test]
async fn layers_and_transformations_apply_to_mounted_tools_like_native_ones() {
    let server = Server::builder()
        .inventory(false)
        .tool(native())
        .mount("math", Upstream::server(upstream("math-server")))
        .transform("ping", ToolTransform::new().title("Ping").argument("nothing", ArgTransform::new()))
        .connect()
        .await;
    // A transformation that does not fit its tool is a start-up error.
    let error = server.unwrap_err().to_string();
    assert!(
        error.contains("transform of `ping`: it has no argument `nothing` (its arguments: none)"),
        "{error}"
    );

    let seen = Seen::default();
    let server = Server::builder()
        .inventory(false)
        .tool(native())
        .mount("math", Upstream::server(upstream("math-server")))
        .layer(AccessLog::new())
        .layer(tower::layer::layer_fn({
            let counter = seen.clone();
            move |inner: mcp_tools::middleware::ToolService| {
                let counter = counter.clone();
                tower::service_fn(move |call: mcp_tools::middleware::ToolCall| {
                    *counter.0.lock().unwrap().entry(call.name().to_owned()).or_default() += 1;
                    let mut inner = inner.clone();
                    async move { tower::Service::call(&mut inner, call).await }
                })
            }
        }))
        .transform(
            "math_add",
            ToolTransform::new()
                .rename("increment")
                .description("Add one to a number.")
                .argument("a", ArgTransform::new().rename("n"))
                .argument("b", ArgTransform::new().hide_with(1)),
        )
        .transform("math_forever", ToolTransform::new().hide())
        .connect()
        .await
        .unwrap();
    for client in callers(&server).await {
        let tools = client.list_tools().await.unwrap();
        assert!(!tools.iter().any(|t| t["name"] == "math_forever" || t["name"] == "math_add"));
        let increment = tools.iter().find(|t| t["name"] == "increment").expect("listed");
        assert_eq!(increment["description"], "Add one to a number.");
        assert_eq!(increment["inputSchema"]["properties"], json!({"n": {"type": "integer"}}));
        assert_eq!(increment["inputSchema"]["required"], json!(["n"]));
        assert_eq!(client.call_tool("increment", json!({"n": 41})).await.unwrap().text(), "42");
        // Validated against the new schema: `n` is required, and an integer.
        let wrong = client.call_tool("increment", json!({"a": 41})).await.unwrap();
        assert!(
            wrong.is_error() && wrong.text().contains("\"n\" is a required property"),
            "{}",
            wrong.text()
        );
        assert!(client.call_tool("increment", json!({"n": "x"})).await.unwrap().is_error());
        assert_eq!(client.call_tool("ping", json!({})).await.unwrap().text(), "pong");
    }
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(seen.get("increment"), Some(&6), "{seen:?}");
    assert_eq!(seen.get("ping"), Some(&2), "{seen:?}");
}

#[tokio::test]
async fn an_upstreams_resource_updates_reach_the_subscribed_callers() {
    let math = upstream("math-server");
    let server = Server::builder()
        .inventory(false)
        .mount("math", Upstream::server(math.clone()))
        .connect()
        .await
        .unwrap();
    let [session, stateless] = callers(&server).await;
    let mut session_notes = session.notifications();
    let mut stateless_notes = stateless.notifications();
    session.subscribe("notes://math/one").await.unwrap();
    let _listening = stateless.listen(json!({"resourceSubscriptions": ["notes://math/one"]})).await.unwrap();
    // The gateway follows the upstream's resources as soon as it has listed them.
    tokio::time::sleep(Duration::from_millis(200)).await;
    math.notify_resource_updated("notes://one");
    let updated = ServerNotification::ResourceUpdated { uri: "notes://math/one".into() };
    wait_for(&mut session_notes, updated.clone()).await;
    wait_for(&mut stateless_notes, updated).await;
}

// ---------------------------------------------------------------------------------------------
// Credentials: an upstream over HTTP gets its own, and the caller's only when asked for.

const GATEWAY_TOKEN: &str = "gateway-token-0123456789abcdef0123456789";
const ALICE_TOKEN: &str = "alice-token-0123456789abcdef0123456789ab";

/// `server` on a free local port over HTTP, accepting `tokens` (token, subject); its URL.
async fn serve_guarded(server: Server, tokens: &[(&str, &str)]) -> String {
    let tokens: Vec<_> =
        tokens.iter().map(|(token, subject)| (*token, mcp_tools::AuthInfo::new(*subject))).collect();
    serve_authorizing(server, tokens).await
}

/// `server` on a free local port over HTTP, accepting `tokens`, each for its identity; its URL.
async fn serve_authorizing(server: Server, tokens: Vec<(&str, mcp_tools::AuthInfo)>) -> String {
    use mcp_tools::auth::{Authorization, StaticTokens};
    let mut verifier = StaticTokens::new();
    for (token, identity) in tokens {
        verifier = verifier.token(token, identity).unwrap();
    }
    let options = mcp_tools::HttpOptions::new()
        .authorization(Authorization::new("http://localhost/mcp", verifier).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { server.serve_http_on(listener, options, std::future::pending()).await });
    format!("http://{addr}/mcp")
}

/// An upstream that says who called it.
fn whoami_upstream() -> Server {
    Server::builder()
        .name("guarded")
        .inventory(false)
        .tool(Tool::new(
            "whoami",
            "Who is calling.",
            json!({"type": "object"}),
            |_, ctx: Context| async move {
                let who = ctx.auth().and_then(|a| a.principal()).unwrap_or("nobody").to_owned();
                Ok(ToolResult::new().text(who))
            },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_upstream_gets_its_own_credentials_and_the_callers_token_only_when_asked() {
    // The upstream accepts the gateway's token and, sharing its authorization server, Alice's.
    let upstream =
        serve_guarded(whoami_upstream(), &[(GATEWAY_TOKEN, "gateway"), (ALICE_TOKEN, "alice")]).await;
    let own = || Upstream::http(&upstream).auth(mcp_tools::client::BearerToken::new(GATEWAY_TOKEN));
    let gateway = Server::builder()
        .name("gateway")
        .inventory(false)
        .mount("own", own())
        .mount("passed", own().pass_caller_token())
        .mount("passed25", own().era(EraChoice::Handshake).pass_caller_token())
        .connect()
        .await
        .unwrap();
    let front = serve_guarded(gateway.clone(), &[(ALICE_TOKEN, "alice")]).await;
    for era in [EraChoice::Handshake, EraChoice::Stateless] {
        let alice = caller()
            .era(era)
            .auth(mcp_tools::client::BearerToken::new(ALICE_TOKEN))
            .connect_http(&front)
            .await
            .unwrap();
        // By default the upstream sees the gateway: Alice's token stays here.
        let own = alice.call_tool("own_whoami", json!({})).await.unwrap();
        assert_eq!(own.text(), "gateway", "{era:?}");
        // Asked for, Alice's token is what the upstream sees.
        let passed = alice.call_tool("passed_whoami", json!({})).await.unwrap();
        assert_eq!(passed.text(), "alice", "{era:?}");
        // Not in a 2025-11-25 session, opened with the gateway's token: refused here, and the
        // session goes on serving the gateway.
        let refused = alice.call_tool("passed25_whoami", json!({})).await.unwrap();
        assert!(
            refused.is_error() && refused.text().contains("only a 2026-07-28 server"),
            "{}",
            refused.text()
        );
    }
    // A caller that has no token (in process) is refused before anything goes upstream; the
    // gateway's own credentials are not lent to it.
    let anonymous = gateway.connect(caller()).await.unwrap();
    let refused = anonymous.call_tool("passed_whoami", json!({})).await.unwrap();
    assert!(refused.is_error(), "{refused:?}");
    assert!(refused.text().contains("takes the caller's own access token"), "{}", refused.text());
    assert_eq!(anonymous.call_tool("own_whoami", json!({})).await.unwrap().text(), "gateway");
}

// ---------------------------------------------------------------------------------------------
// A slow upstream, and one that never answers, hold up no other.

/// Lets the slow upstream's `nap` end.
static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[tokio::test]
async fn a_slow_or_silent_http_upstream_blocks_no_other() {
    // Slow: a call that takes until the test says so.
    let slow = Server::builder()
        .name("slow")
        .inventory(false)
        .tool(Tool::new("nap", "Sleep until woken.", json!({"type": "object"}), |_, _| async {
            WAKE.notified().await;
            Ok(ToolResult::new().text("rested"))
        }))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slow_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        slow.serve_http_on(listener, mcp_tools::HttpOptions::new(), std::future::pending()).await
    });
    // Silent: takes connections and never says a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let started = std::time::Instant::now();
    let server = Server::builder()
        .inventory(false)
        .mount("math", Upstream::server(upstream("math-server")))
        .mount("slow", Upstream::http(&slow_url))
        .mount_with(Mount::new("silent", Upstream::http(&silent_url)).startup_timeout(Duration::from_secs(1)))
        .connect()
        .await
        .unwrap();
    // The silent one costs the start its own time-out, no more.
    assert!(started.elapsed() < Duration::from_secs(5), "started in {:?}", started.elapsed());
    let [session, stateless] = callers(&server).await;
    for client in [&session, &stateless] {
        let nap = tokio::spawn({
            let client = client.clone();
            async move { client.call_tool("slow_nap", json!({})).await }
        });
        // While the slow upstream works, the others answer (the silent one: at once, that it
        // is not there).
        for _ in 0..5 {
            let sum = tokio::time::timeout(
                Duration::from_secs(5),
                client.call_tool("math_add", json!({"a": 1, "b": 2})),
            )
            .await
            .expect("math answers while slow works")
            .unwrap();
            assert_eq!(sum.text(), "3");
        }
        let names = names(&client.list_tools().await.unwrap(), "name");
        assert!(
            names.contains(&"slow_nap".to_owned()) && !names.iter().any(|n| n.starts_with("silent")),
            "{names:?}"
        );
        assert!(!nap.is_finished(), "the nap is still going");
        WAKE.notify_one();
        assert_eq!(nap.await.unwrap().unwrap().text(), "rested");
    }
}

#[tokio::test]
async fn a_mounts_scopes_guard_its_tools_resources_and_prompts_like_native_ones() {
    const BOB_TOKEN: &str = "bob-token-0123456789abcdef0123456789abcde";
    let gateway = Server::builder()
        .inventory(false)
        .tool(native())
        .mount_with(Mount::new("math", Upstream::server(upstream("math-server"))).scopes(["math:use"]))
        .connect()
        .await
        .unwrap();
    let front = serve_authorizing(
        gateway,
        vec![
            (ALICE_TOKEN, mcp_tools::AuthInfo::new("alice").scopes(["math:use"])),
            (BOB_TOKEN, mcp_tools::AuthInfo::new("bob")),
        ],
    )
    .await;
    for era in [EraChoice::Handshake, EraChoice::Stateless] {
        let connect = |token: &'static str| {
            caller().era(era).auth(mcp_tools::client::BearerToken::new(token)).connect_http(&front)
        };
        let (alice, bob) = (connect(ALICE_TOKEN).await.unwrap(), connect(BOB_TOKEN).await.unwrap());
        // Alice has the mount's scope: she sees and uses it all.
        let tools = names(&alice.list_tools().await.unwrap(), "name");
        assert!(tools.contains(&"math_add".to_owned()) && tools.contains(&"ping".to_owned()), "{tools:?}");
        assert_eq!(alice.call_tool("math_add", json!({"a": 2, "b": 3})).await.unwrap().text(), "5");
        assert!(!alice.list_prompts().await.unwrap().is_empty());
        assert!(!alice.list_resources().await.unwrap().is_empty());
        // Bob has not: the mounted tools are not his to see, and a call is refused with the
        // scope it needs, as for a native tool; the native tool is his.
        let tools = names(&bob.list_tools().await.unwrap(), "name");
        assert_eq!(tools, ["ping"], "{era:?}");
        match bob.call_tool("math_add", json!({"a": 2, "b": 3})).await {
            Err(mcp_tools::client::ClientError::Unauthorized(text)) => {
                assert!(text.contains("403") && text.contains("math:use"), "{era:?}: {text}")
            }
            other => panic!("{era:?}: bob's call of math_add: {other:?}"),
        }
        assert!(bob.list_prompts().await.unwrap().is_empty(), "{era:?}");
        assert!(bob.list_resources().await.unwrap().is_empty(), "{era:?}");
        assert_eq!(bob.call_tool("ping", json!({})).await.unwrap().text(), "pong");
    }
}

#[tokio::test]
async fn an_upstream_that_can_never_connect_fails_the_start() {
    for (upstream, expected) in [
        (
            Upstream::http("ftp://example.com/mcp"),
            "a Streamable HTTP endpoint is an http or https URL, not ftp:",
        ),
        (Upstream::http("localhost:8080/mcp"), "not localhost:"),
        (Upstream::http("not a url"), "which is not a URL"),
        (Upstream::command(" ", Vec::<String>::new()), "the command of mount `bad` is empty"),
    ] {
        let error = Server::builder()
            .inventory(false)
            .mount("bad", upstream)
            .connect()
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{error}");
    }
}

#[tokio::test]
async fn an_upstream_that_keeps_failing_soon_after_each_start_is_retried_ever_more_slowly() {
    let cuttable = Cuttable::default();
    let _server = Server::builder()
        .inventory(false)
        .mount("math", cuttable.upstream(upstream("math-server")))
        .connect()
        .await
        .unwrap();
    // Each connection is cut as soon as it is made, for four seconds: waits of 0.5, 1 and 2 s
    // (jittered) allow four connections at most; a back-off reset by each short-lived success
    // would allow eight.
    let until = tokio::time::Instant::now() + Duration::from_secs(4);
    let mut seen = cuttable.made.load(Ordering::SeqCst);
    cuttable.cut();
    while tokio::time::Instant::now() < until {
        let made = cuttable.made.load(Ordering::SeqCst);
        if made != seen {
            seen = made;
            tokio::time::sleep(Duration::from_millis(100)).await;
            cuttable.cut();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let made = cuttable.made.load(Ordering::SeqCst);
    assert!((3..=5).contains(&made), "{made} connections in 4 s");
}

// ---------------------------------------------------------------------------------------------
// Tasks (2026-07-28): a mounted call becomes a task when its upstream's does.

static TASKS_ENDED: AtomicUsize = AtomicUsize::new(0);

/// An upstream whose tools may (or must) become tasks: a nap, questions through the request
/// then work, two questions at once in a task, a panic.
fn tasks_upstream() -> Server {
    use mcp_tools::TaskSupport;
    let yes = |answer: &Value| answer["content"]["yes"] == json!(true);
    Server::builder()
        .name("tasks-upstream")
        .inventory(false)
        .task_poll_interval(Duration::from_millis(20))
        .tool(
            Tool::new("nap", "Sleep, then answer.", json!({"type": "object"}), |args, _| async move {
                struct Counted;
                impl Drop for Counted {
                    fn drop(&mut self) {
                        TASKS_ENDED.fetch_add(1, Ordering::SeqCst);
                    }
                }
                let _counted = Counted;
                let millis = args["millis"].as_u64().unwrap_or_default();
                if millis > 0 {
                    tokio::time::sleep(Duration::from_millis(millis)).await;
                }
                Ok(ToolResult::new().text(format!("slept {millis} ms")))
            })
            .task(TaskSupport::Optional),
        )
        .tool(
            Tool::new(
                "ask_then_work",
                "Ask, then work as a task.",
                json!({"type": "object"}),
                move |_, ctx: Context| async move {
                    let schema = json!({"type": "object", "properties": {"yes": {"type": "boolean"}}});
                    let go = ctx
                        .input_key("go")
                        .elicit_with_schema("Go?", schema)
                        .await
                        .map_err(|e| ToolError::new(e.to_string()))?;
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    Ok(ToolResult::new()
                        .text(format!("went: {}", go.content.is_some_and(|c| c["yes"] == json!(true)))))
                },
            )
            .task(TaskSupport::Required),
        )
        .tool(
            Tool::new(
                "ask_twice",
                "Work, then ask two questions at once.",
                json!({"type": "object"}),
                move |_, ctx: Context| async move {
                    tokio::task::yield_now().await;
                    let schema = json!({"type": "object", "properties": {"yes": {"type": "boolean"}}});
                    let (a, b) = tokio::join!(
                        ctx.input_key("a").elicit_with_schema("A?", schema.clone()),
                        ctx.input_key("b").elicit_with_schema("B?", schema),
                    );
                    let said = |e: Result<mcp_tools::ElicitationResponse, mcp_tools::ClientError>| {
                        e.ok().and_then(|r| r.content).is_some_and(|c| yes(&json!({"content": c})))
                    };
                    Ok(ToolResult::new().text(format!("a={} b={}", said(a), said(b))))
                },
            )
            .task(TaskSupport::Optional),
        )
        .tool(
            Tool::new("crashes", "Panic after a while.", json!({"type": "object"}), |_, _| async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                panic!("boom")
            })
            .task(TaskSupport::Optional),
        )
        .build()
        .unwrap()
}

/// A gateway serving `tasks_upstream` under its own names.
async fn tasks_gateway() -> Server {
    Server::builder()
        .name("gateway")
        .inventory(false)
        .mount("", Upstream::server(tasks_upstream()))
        .connect()
        .await
        .unwrap()
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Polls `tasks/get` until the task has `status` ("terminal": any end), at most 5 s.
async fn wait_for_task(client: &mcp_tools::testing::TestClient, task_id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
        let now = task["status"].as_str().unwrap().to_owned();
        if now == status
            || (status == "terminal" && ["completed", "failed", "cancelled"].contains(&now.as_str()))
        {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {task_id} never reached {status}");
}

#[tokio::test]
async fn a_mounted_call_becomes_a_task_when_its_upstreams_does() {
    use mcp_tools::testing::TestClient;
    let gateway = tasks_gateway().await;
    let yes = |_: &str, _: &Value| Ok(json!({"action": "accept", "content": {"yes": true}}));
    let client = TestClient::connect_stateless_with(&gateway, with_tasks(), yes);
    // Finished at once upstream: answered at once here.
    let quick = client.call("nap", json!({"millis": 0})).await.unwrap();
    assert_eq!(
        (quick.json()["resultType"].as_str(), quick.text().as_str()),
        (Some("complete"), "slept 0 ms")
    );
    // A task upstream: a task here, whose result is read with tasks/get.
    let created = client.call("nap", json!({"millis": 100})).await.unwrap().json().clone();
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created["ttlMs"].is_u64() && created["createdAt"].is_string(), "{created}");
    let done = wait_for_task(&client, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 100 ms", "{done}");
    // Asked through the request first (as upstream), then a task (as upstream).
    let first =
        client.answer(client.send_request("tools/call", json!({"name": "ask_then_work"}))).await.unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first["inputRequests"].get("go").is_some() && first.get("taskId").is_none(), "{first}");
    let created = client.call("ask_then_work", json!({})).await.unwrap().json().clone();
    assert_eq!(created["resultType"], "task", "{created}");
    let done = wait_for_task(&client, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "went: true", "{done}");
    // The upstream task's questions are this task's, answered one by one with tasks/update.
    let created = client.call("ask_twice", json!({})).await.unwrap().json().clone();
    let task_id = created["taskId"].as_str().expect("a task").to_owned();
    let mut waiting = wait_for_task(&client, &task_id, "input_required").await;
    for _ in 0..100 {
        if waiting["inputRequests"].as_object().is_some_and(|asked| asked.len() == 2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        waiting = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
    }
    let keys: Vec<&String> = waiting["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b"], "{waiting}");
    let accept = json!({"action": "accept", "content": {"yes": true}});
    client
        .request("tasks/update", json!({"taskId": task_id, "inputResponses": {"a": accept}}))
        .await
        .unwrap();
    let still = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(still["status"], "input_required", "{still}");
    assert!(
        still["inputRequests"].get("a").is_none() && still["inputRequests"].get("b").is_some(),
        "{still}"
    );
    client
        .request("tasks/update", json!({"taskId": task_id, "inputResponses": {"b": accept}}))
        .await
        .unwrap();
    let done = wait_for_task(&client, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "a=true b=true", "{done}");
    // The upstream's task failed: so does this one, with its error.
    let created = client.call("crashes", json!({})).await.unwrap().json().clone();
    let failed = wait_for_task(&client, created["taskId"].as_str().expect("a task"), "terminal").await;
    assert_eq!(
        (failed["status"].as_str(), failed["error"]["code"].as_i64()),
        (Some("failed"), Some(-32603)),
        "{failed}"
    );
    assert!(failed.get("result").is_none(), "{failed}");
}

#[tokio::test]
async fn a_mounted_task_only_tool_needs_the_callers_tasks_in_2026_and_runs_as_a_call_in_2025() {
    let gateway = tasks_gateway().await;
    // What this server declares upstream is the caller's: without the extension, the upstream
    // refuses, and so does this server, naming the extension.
    let accept = || async { Ok(json!({"action": "accept", "content": {"yes": true}})) };
    let plain =
        gateway.connect(Client::builder().era(EraChoice::Stateless).on_elicitation(move |_| accept()));
    let plain = plain.await.unwrap();
    match plain.call_tool("ask_then_work", json!({})).await {
        Err(mcp_tools::client::ClientError::Rpc { code, data, .. }) => {
            assert_eq!(code, -32021);
            let required = data.map(|d| d["requiredCapabilities"].clone()).unwrap_or_default();
            assert_eq!(required, json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
        }
        other => panic!("refused for want of the tasks extension: {other:?}"),
    }
    // An optional one runs as an ordinary call.
    assert_eq!(plain.call_tool("nap", json!({"millis": 30})).await.unwrap().text(), "slept 30 ms");
    // A 2025-11-25 session knows no tasks: the call is answered once the upstream's task ended,
    // its questions asked in the session.
    let session =
        gateway.connect(Client::builder().era(EraChoice::Handshake).on_elicitation(move |_| accept()));
    let session = session.await.unwrap();
    assert_eq!(session.call_tool("ask_then_work", json!({})).await.unwrap().text(), "went: true");
}

#[tokio::test]
async fn cancelling_a_mounted_task_cancels_the_upstreams() {
    use mcp_tools::testing::TestClient;
    let gateway = tasks_gateway().await;
    let client = TestClient::connect_stateless_with(&gateway, with_tasks(), |_, _| unreachable!());
    let before = TASKS_ENDED.load(Ordering::SeqCst);
    let created = client.call("nap", json!({"millis": 60_000})).await.unwrap().json().clone();
    let task_id = created["taskId"].as_str().expect("a task").to_owned();
    let ack = client.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(ack, json!({"resultType": "complete"}));
    assert_eq!(wait_for_task(&client, &task_id, "terminal").await["status"], "cancelled");
    for _ in 0..300 {
        if TASKS_ENDED.load(Ordering::SeqCst) > before {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the upstream's task was not cancelled");
}

/// The caller's own `_meta` entries (a `traceparent`, say) travel upstream, under the
/// gateway's envelope (not the caller's), in both eras.
#[tokio::test]
async fn a_callers_own_meta_travels_upstream_under_the_gateways_envelope() {
    let echo = Server::builder()
        .name("echo-server")
        .inventory(false)
        .tool(Tool::new(
            "meta",
            "Echo the request's _meta.",
            json!({"type": "object"}),
            |_, ctx: Context| async move {
                Ok(ToolResult::new().text(Value::Object(ctx.meta().clone()).to_string()))
            },
        ))
        .build()
        .unwrap();
    let server = Server::builder()
        .name("gateway")
        .inventory(false)
        .mount("e", Upstream::server(echo))
        .connect()
        .await
        .unwrap();
    for client in callers(&server).await {
        let era = client.era();
        let mut meta = Map::new();
        meta.insert("traceparent".into(), json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        meta.insert("vendor/flag".into(), json!({"on": true}));
        let (tx, _progress) = tokio::sync::mpsc::unbounded_channel();
        let options = CallOptions::new().meta(meta).progress(tx);
        let result = client.call_tool_with("e_meta", json!({}), options).await.unwrap();
        let seen: Value = serde_json::from_str(&result.text()).unwrap();
        assert_eq!(
            seen["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "{era:?}: {seen}"
        );
        assert_eq!(seen["vendor/flag"], json!({"on": true}), "{era:?}: {seen}");
        // The gateway's own envelope (it speaks 2026-07-28 upstream), not the caller's.
        assert_eq!(
            seen["io.modelcontextprotocol/clientInfo"]["name"], "gateway (mounting)",
            "{era:?}: {seen}"
        );
        assert_eq!(seen["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{era:?}: {seen}");
    }
}
