//! Requests from tools to the client (sampling, elicitation, roots) and list-change
//! notifications, through the in-process test client.

use mcp_tools::testing::{RpcError, TestClient};
use mcp_tools::{Context, Elicitation, SamplingRequest, Server, Tool, ToolError, ToolResult, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Ask the client's model a question.
#[tool]
async fn ask(question: String, ctx: Context) -> Result<String, ToolError> {
    let answer = ctx.sample(SamplingRequest::new(64).system_prompt("Be brief.").user(question)).await?;
    Ok(format!("{} (by {})", answer.text().unwrap_or_default(), answer.model))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    /// Small (250 ml)
    Small,
    /// Large (500 ml)
    Large,
}

/// A coffee order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    /// Your name, for the cup.
    name: String,
    size: Size,
    /// Sugar cubes.
    #[serde(default)]
    sugar: u8,
}

/// Take a coffee order from the user.
#[tool]
async fn order_coffee(ctx: Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Order>("What would you like?").await? {
        Elicitation::Accept(order) => {
            format!("{} wants {:?} with {} sugar", order.name, order.size, order.sugar)
        }
        Elicitation::Decline => "declined".into(),
        Elicitation::Cancel => "cancelled".into(),
    })
}

/// List the client's roots.
#[tool]
async fn roots(ctx: Context) -> Result<Vec<String>, ToolError> {
    Ok(ctx.list_roots().await?.into_iter().map(|r| r.uri).collect())
}

fn server() -> Server {
    Server::builder().build().unwrap()
}

#[tokio::test]
async fn sampling_round_trips_through_the_client() {
    let client = TestClient::connect_with(&server(), json!({"sampling": {}}), |method, params| {
        assert_eq!(method, "sampling/createMessage");
        assert_eq!(params["maxTokens"], 64);
        assert_eq!(params["systemPrompt"], "Be brief.");
        assert_eq!(
            params["messages"][0],
            json!({"role": "user", "content": {"type": "text", "text": "2+2?"}})
        );
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "tiny-1"}))
    })
    .await;
    let result = client.call("ask", json!({"question": "2+2?"})).await.unwrap();
    assert_eq!(result.text(), "4 (by tiny-1)");
}

#[tokio::test]
async fn a_missing_capability_is_a_clear_tool_error() {
    let client = TestClient::connect(&server()).await;
    let result = client.call("ask", json!({"question": "?"})).await.unwrap();
    assert!(result.is_error());
    assert!(result.text().contains("did not declare the `sampling` capability"), "{}", result.text());
    let result = client.call("order_coffee", json!({})).await.unwrap();
    assert!(result.text().contains("`elicitation`"), "{}", result.text());
}

#[tokio::test]
async fn a_client_error_answer_becomes_the_tool_error() {
    let client = TestClient::connect_with(&server(), json!({"sampling": {}}), |_, _| {
        Err(RpcError { code: -1, message: "user rejected sampling".into() })
    })
    .await;
    let result = client.call("ask", json!({"question": "?"})).await.unwrap();
    assert!(result.is_error());
    assert!(result.text().contains("user rejected sampling"), "{}", result.text());
}

#[tokio::test]
async fn elicitation_derives_a_titled_schema_and_decodes_the_answer() {
    let client = TestClient::connect_with(&server(), json!({"elicitation": {}}), |method, params| {
        assert_eq!(method, "elicitation/create");
        assert_eq!(params["message"], "What would you like?");
        let schema = &params["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name", "size"]));
        assert_eq!(
            schema["properties"]["size"]["oneOf"],
            json!([{"const": "small", "title": "Small (250 ml)"}, {"const": "large", "title": "Large (500 ml)"}])
        );
        assert_eq!(schema["properties"]["sugar"]["default"], 0);
        Ok(json!({"action": "accept", "content": {"name": "Ada", "size": "large"}}))
    })
    .await;
    let result = client.call("order_coffee", json!({})).await.unwrap();
    assert_eq!(result.text(), "Ada wants Large with 0 sugar");
}

#[tokio::test]
async fn elicitation_decline_and_cancel() {
    for (action, expected) in [("decline", "declined"), ("cancel", "cancelled")] {
        let client = TestClient::connect_with(&server(), json!({"elicitation": {}}), move |_, _| {
            Ok(json!({"action": action}))
        })
        .await;
        assert_eq!(client.call("order_coffee", json!({})).await.unwrap().text(), expected);
    }
}

#[tokio::test]
async fn roots_are_listed() {
    let client = TestClient::connect_with(&server(), json!({"roots": {"listChanged": true}}), |method, _| {
        assert_eq!(method, "roots/list");
        Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}, {"uri": "file:///tmp"}]}))
    })
    .await;
    let result = client.call("roots", json!({})).await.unwrap();
    assert_eq!(result.structured(), Some(&json!({"result": ["file:///work", "file:///tmp"]})));
}

#[tokio::test]
async fn tool_list_changes_are_announced_to_connected_clients() {
    let server = server();
    let client = TestClient::connect(&server).await;
    let capabilities = client
        .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}))
        .await;
    assert!(capabilities.is_err(), "already initialized");

    let echo = Tool::new("echo", "Echo.", json!({"type": "object"}), |args, _| async move {
        ToolResult::structured(args)
    });
    server.add_tool(echo).unwrap();
    assert!(server.tool_names().contains(&"echo".to_owned()));
    assert_eq!(client.call("echo", json!({"a": 1})).await.unwrap().structured(), Some(&json!({"a": 1})));

    assert!(server.set_tool_enabled("ask", false));
    assert_eq!(client.call("ask", json!({"question": "?"})).await.unwrap_err().code, -32602);
    let listed: Vec<Value> = client.list_tools().await.unwrap();
    assert!(listed.iter().all(|t| t["name"] != "ask"), "a disabled tool is not listed");
    assert!(server.set_tool_enabled("ask", true));
    assert!(server.remove_tool("echo"));
    assert!(!server.remove_tool("echo"), "already gone");
    assert!(!server.set_tool_enabled("nope", false));

    // add, disable, enable, remove: four announcements, and no more.
    for _ in 0..4 {
        let n = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            client.notification("notifications/tools/list_changed"),
        )
        .await
        .expect("announced");
        assert_eq!(n["params"], json!({}));
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let more = client.take_notifications().await;
    assert!(more.iter().all(|n| n["method"] != "notifications/tools/list_changed"), "{more:?}");
}

/// Nested forms cannot be elicited.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // only its shape matters: the elicitation is refused before any answer
struct Nested {
    inner: Order,
}

/// Ask for a nested form (not allowed).
#[tool]
async fn ask_nested(ctx: Context) -> Result<String, ToolError> {
    ctx.elicit::<Nested>("?").await?;
    Ok("unreachable".into())
}

#[tokio::test]
async fn elicitation_refuses_nested_forms_before_asking() {
    let client = TestClient::connect_with(&server(), json!({"elicitation": {}}), |_, _| {
        panic!("the client must not be asked");
    })
    .await;
    let result = client.call("ask_nested", json!({})).await.unwrap();
    assert!(result.is_error());
    assert!(result.text().contains("flat: field `inner`"), "{}", result.text());
}
