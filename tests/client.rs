//! The MCP client (`mcp_tools::client`, feature `client`) over a pipe: a server in the same
//! process (`Server::connect`, the real stdio transport over an in-memory pipe) and a spawned
//! stdio server (the quickstart example), in both eras: lists, calls, errors, progress, the
//! server's questions (elicitation, sampling, roots), notifications, tasks, cancellation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::example_binary;
use mcp_tools::client::{
    CallOptions, Client, ClientBuilder, ClientError, EraChoice, Root, ServerNotification,
};
use mcp_tools::{
    Context, Elicitation, Era, Prompt, PromptMessage, PromptResult, Resource, ResourceContents, Server, Tool,
    ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Add two numbers.
#[tool(annotations(read_only, idempotent))]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Count to `n`, reporting progress.
#[tool]
async fn count(n: u32, ctx: Context) -> String {
    for i in 1..=n {
        ctx.report_progress(f64::from(i), Some(f64::from(n)), Some("counting"));
    }
    format!("counted to {n}")
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
    #[serde(default)]
    title: Option<String>,
}

/// Greet the user by the name they give.
#[tool]
async fn greet(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("who").elicit::<Name>("Who are you?").await? {
        Elicitation::Accept(Name { name, title }) => {
            Ok(format!("Hello, {}{name}!", title.map(|t| t + " ").unwrap_or_default()))
        }
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Ask the model for a haiku.
#[tool]
async fn haiku(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx.sample(mcp_tools::SamplingRequest::new(50).user("a haiku about rust")).await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// List the client's roots.
#[tool]
async fn where_am_i(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.list_roots().await?;
    Ok(roots.iter().map(|r| r.uri.clone()).collect::<Vec<_>>().join(","))
}

/// Runs until cancelled; counts the calls that ended so (their future dropped).
#[tool]
async fn forever() -> String {
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
        }
    }
    let _counted = Counted;
    std::future::pending::<String>().await
}

static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// A long job (a task for clients that follow tasks).
#[tool(task = "optional")]
async fn long_job() -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    "job done".into()
}

fn server() -> Server {
    Server::builder()
        .name("client-test")
        .instructions("Be nice.")
        .resource(Resource::fixed(
            "notes://one",
            "one",
            ResourceContents::text("notes://one", None, "the first note"),
        ))
        .prompt(Prompt::new("summarize", "Summarize.", |args, _| async move {
            let topic = args.get("topic").cloned().unwrap_or_default();
            Ok(PromptResult::new(vec![PromptMessage::user(format!("summarize {topic}"))]))
        }))
        .tool(Tool::new("fail", "Always fails.", json!({"type": "object"}), |_, _| async {
            Err::<ToolResult, _>(ToolError::new("it failed"))
        }))
        .build()
        .unwrap()
}

fn builder() -> ClientBuilder {
    Client::builder()
        .name("test-client")
        .on_elicitation(|params| async move {
            assert_eq!(params["message"], "Who are you?");
            // The title is left out: the schema has no default for it.
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
        .on_sampling(|_| async { Ok(json!({"role": "assistant", "content": {"type": "text", "text": "rust never sleeps"}, "model": "test"})) })
        .roots(vec![Root::new("file:///work").name("work")])
}

/// A client of each era, connected in process.
async fn clients(server: &Server) -> [Client; 2] {
    [
        server.connect(builder().era(EraChoice::Handshake)).await.unwrap(),
        server.connect(builder()).await.unwrap(),
    ]
}

#[tokio::test]
async fn a_client_connects_in_the_servers_newest_era_or_a_session_when_asked() {
    let server = server();
    let [session, stateless] = clients(&server).await;
    assert_eq!(session.era(), Era::Handshake);
    assert_eq!(session.protocol_version(), "2025-11-25");
    assert_eq!(stateless.era(), Era::Stateless);
    assert_eq!(stateless.protocol_version(), "2026-07-28");
    for client in [&session, &stateless] {
        assert_eq!(client.server_info().name, "client-test");
        assert_eq!(client.instructions(), Some("Be nice."));
        assert!(client.server_capabilities()["tools"].is_object());
        client.ping().await.unwrap();
    }
    // A server of the 2025-11-25 era only: the client falls back to a session.
    let old = Server::builder().only_era(Era::Handshake).build().unwrap();
    let client = old.connect(builder()).await.unwrap();
    assert_eq!(client.era(), Era::Handshake);
}

#[tokio::test]
async fn tools_are_listed_and_called_and_errors_say_what_went_wrong_in_both_eras() {
    let server = server();
    for client in clients(&server).await {
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        assert!(names.contains(&"add") && names.contains(&"fail"), "{names:?}");
        let added = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(added.text(), "5");
        assert!(!added.is_error());
        let failed = client.call_tool("fail", json!({})).await.unwrap();
        assert!(failed.is_error() && failed.text().contains("it failed"), "{failed:?}");
        let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(unknown.code(), Some(-32602), "{unknown}");
        let invalid = client.call_tool("add", json!({"a": "two"})).await.unwrap();
        assert!(invalid.is_error(), "an invalid argument is a tool error");
    }
}

#[tokio::test]
async fn progress_reaches_the_caller_in_both_eras() {
    let server = server();
    for client in clients(&server).await {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result =
            client.call_tool_with("count", json!({"n": 3}), CallOptions::new().progress(tx)).await.unwrap();
        assert_eq!(result.text(), "counted to 3");
        let mut seen = Vec::new();
        while let Ok(progress) = rx.try_recv() {
            seen.push((progress.progress, progress.total, progress.message));
        }
        assert_eq!(seen.len(), 3, "{:?}: {seen:?}", client.era());
        assert_eq!(seen[2], (3.0, Some(3.0), Some("counting".to_owned())));
    }
}

#[tokio::test]
async fn the_servers_questions_are_answered_by_the_clients_handlers_in_both_eras() {
    let server = server();
    for client in clients(&server).await {
        let greeted = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(greeted.text(), "Hello, Ada!", "{:?}", client.era());
        let haiku = client.call_tool("haiku", json!({})).await.unwrap();
        assert_eq!(haiku.text(), "rust never sleeps");
        let roots = client.call_tool("where_am_i", json!({})).await.unwrap();
        assert_eq!(roots.text(), "file:///work");
    }
    // Without handlers, the server is told the client cannot answer.
    let bare = server.connect(Client::builder().era(EraChoice::Handshake)).await.unwrap();
    let haiku = bare.call_tool("haiku", json!({})).await.unwrap();
    assert!(haiku.is_error(), "{haiku:?}");
}

#[tokio::test]
async fn resources_prompts_and_completion_in_both_eras() {
    let server = server();
    for client in clients(&server).await {
        let resources = client.list_resources().await.unwrap();
        assert_eq!(resources[0]["uri"], "notes://one");
        let read = client.read_resource("notes://one").await.unwrap();
        assert_eq!(read["contents"][0]["text"], "the first note");
        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts[0]["name"], "summarize");
        let mut arguments = Map::new();
        arguments.insert("topic".into(), json!("rust"));
        let prompt = client.get_prompt("summarize", arguments).await.unwrap();
        assert_eq!(prompt["messages"][0]["content"]["text"], "summarize rust");
        let missing = client.read_resource("notes://nope").await.unwrap_err();
        assert!(missing.code().is_some(), "{missing}");
    }
}

#[tokio::test]
async fn list_changes_reach_a_session_and_a_listen_stream() {
    let server = server();
    let [session, stateless] = clients(&server).await;
    let mut session_notes = session.notifications();
    let mut stateless_notes = stateless.notifications();
    let _listening = stateless.listen(json!({"toolsListChanged": true})).await.unwrap();
    server
        .add_tool(Tool::new("late", "Added later.", json!({"type": "object"}), |_, _| async {
            Ok(ToolResult::new().text("late"))
        }))
        .unwrap();
    for notes in [&mut session_notes, &mut stateless_notes] {
        let changed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                if notes.recv().await.unwrap() == ServerNotification::ToolsChanged {
                    return;
                }
            }
        });
        changed.await.expect("the tool list change arrives");
    }
    assert!(session.list_tools().await.unwrap().iter().any(|t| t["name"] == "late"));
}

#[tokio::test]
async fn a_call_the_client_stops_waiting_for_is_cancelled_on_the_server() {
    let server = server();
    for client in clients(&server).await {
        let before = CANCELLED.load(Ordering::SeqCst);
        let call = client.call_tool("forever", json!({}));
        assert!(tokio::time::timeout(Duration::from_millis(100), call).await.is_err(), "still running");
        for _ in 0..200 {
            if CANCELLED.load(Ordering::SeqCst) > before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            CANCELLED.load(Ordering::SeqCst) > before,
            "{:?}: the server saw the cancellation",
            client.era()
        );
        assert_eq!(client.call_tool("add", json!({"a": 1, "b": 1})).await.unwrap().text(), "2");
    }
}

#[tokio::test]
async fn a_client_that_follows_tasks_gets_the_tasks_result() {
    let server = server();
    let client = server.connect(builder().tasks(true)).await.unwrap();
    assert_eq!(client.era(), Era::Stateless);
    let done = client.call_tool("long_job", json!({})).await.unwrap();
    assert_eq!(done.text(), "job done");
}

#[tokio::test]
async fn a_spawned_stdio_server_is_a_client_away() {
    let command = tokio::process::Command::new(example_binary("quickstart"));
    let client = Client::builder().connect_stdio(command).await.unwrap();
    assert_eq!(client.server_info().name, "notes");
    let created =
        client.call_tool("create_note", json!({"title": "Milk", "body": "2 litres"})).await.unwrap();
    assert_eq!(created.structured().unwrap()["title"], "Milk");
    let found = client.call_tool("search_notes", json!({"query": "milk"})).await.unwrap();
    assert_eq!(found.structured().unwrap()["total"], 1);
    client.close().await;
    assert!(matches!(client.ping().await, Err(ClientError::Closed)));
    // A command that does not exist.
    let error = Client::builder()
        .connect_stdio(tokio::process::Command::new("/nonexistent/server"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cannot start"), "{error}");
}

/// A 2026-07-28 server over a pipe that answers `server/discover`, then meets
/// `subscriptions/listen` with `on_listen` (given the request's id and the pipe's writer).
async fn fake_listener(
    on_listen: impl FnOnce(
        Value,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Option<tokio::io::WriteHalf<tokio::io::DuplexStream>>
    + Send
    + 'static,
) -> Client {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_side);
        let mut writer = Some(writer);
        let mut on_listen = Some(on_listen);
        let mut lines = tokio::io::BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap();
            match message["method"].as_str() {
                Some("server/discover") => {
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                    }});
                    let w = writer.as_mut().unwrap();
                    w.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
                }
                Some("subscriptions/listen") => {
                    writer = (on_listen.take().unwrap())(message["id"].clone(), writer.take().unwrap());
                    if writer.is_none() {
                        return; // the connection is lost
                    }
                }
                _ => {}
            }
        }
    });
    let (reader, writer) = tokio::io::split(client_side);
    Client::builder().request_timeout(Duration::from_secs(60)).connect_pipe(reader, writer).await.unwrap()
}

#[tokio::test]
async fn a_listen_stream_refused_or_lost_before_its_acknowledgement_fails_at_once() {
    // Refused: the server's error, not a wait for the request time-out.
    let refusing = fake_listener(|id, writer| {
        let answer =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no listening here"}});
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut writer = writer;
            writer.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
            std::future::pending::<()>().await;
        });
        None
    })
    .await;
    let refused =
        tokio::time::timeout(Duration::from_secs(5), refusing.listen(json!({"toolsListChanged": true})))
            .await
            .expect("the refusal is seen at once");
    assert!(matches!(refused, Err(ClientError::Rpc { code: -32601, .. })), "{refused:?}");
    // Lost: the connection ends before the acknowledgement.
    let losing = fake_listener(|_, _| None).await;
    let lost = tokio::time::timeout(Duration::from_secs(5), losing.listen(json!({"toolsListChanged": true})))
        .await
        .expect("the loss is seen at once");
    assert!(matches!(lost, Err(ClientError::Closed)), "{lost:?}");
}
