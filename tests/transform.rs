//! Tool transformation (`ServerBuilder::transform`) of a server's own tools: the transformed
//! tool is what clients list, search (deferred mode), describe and call, in both eras; the
//! original runs with its arguments mapped back.

use std::sync::{Arc, Mutex};

use mcp_tools::deferred::DeferredTools;
use mcp_tools::testing::TestClient;
use mcp_tools::transform::{ArgTransform, ToolTransform};
use mcp_tools::{Annotations, Server, Tool, ToolResult};
use serde_json::{Value, json};

/// `search_issues(repo, query, per_page)`, recording the arguments it ran with.
fn search_issues(seen: Arc<Mutex<Vec<Value>>>) -> Tool {
    Tool::new(
        "search_issues",
        "Search the issues of any repository.",
        json!({"type": "object", "properties": {
            "repo": {"type": "string"},
            "query": {"type": "string"},
            "per_page": {"type": "integer", "minimum": 1}
        }, "required": ["repo", "query"]}),
        move |args, _| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args);
                Ok(ToolResult::new().text("2 issues"))
            }
        },
    )
}

/// Another tool, for search to choose against.
fn send_email() -> Tool {
    Tool::new(
        "send_email",
        "Send an email message to a recipient.",
        json!({"type": "object", "properties": {"to": {"type": "string"}}}),
        |_, _| async { Ok(ToolResult::new().text("sent")) },
    )
}

fn find_bug() -> ToolTransform {
    ToolTransform::new()
        .rename("find_bug")
        .title("Find a bug")
        .description("Search the bugs of our project by the words they mention.")
        .argument("repo", ArgTransform::new().hide_with("acme/rocket"))
        .argument("query", ArgTransform::new().rename("text").description("Words the bug mentions"))
        .argument("per_page", ArgTransform::new().default(10))
        .tags(["bugs"])
        .annotations(Annotations::new().read_only(true))
}

#[tokio::test]
async fn a_transformed_tool_is_listed_and_called_as_transformed_in_both_eras() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder()
        .inventory(false)
        .tool(search_issues(seen.clone()))
        .tool(send_email())
        .transform("search_issues", find_bug())
        .build()
        .unwrap();
    for client in [TestClient::connect(&server).await, TestClient::connect_stateless(&server)] {
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["find_bug", "send_email"]);
        let tool = &tools[0];
        assert_eq!(tool["title"], "Find a bug");
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        assert_eq!(
            tool["inputSchema"]["properties"],
            json!({
                "text": {"type": "string", "description": "Words the bug mentions"},
                "per_page": {"type": "integer", "minimum": 1, "default": 10}
            })
        );
        assert_eq!(tool["inputSchema"]["required"], json!(["text"]));
        let found = client.call("find_bug", json!({"text": "crash on start"})).await.unwrap();
        assert_eq!(found.text(), "2 issues");
        // The original's checks still run after the new schema's: `per_page` must be ≥ 1.
        let wrong = client.call("find_bug", json!({"text": "x", "per_page": 0})).await.unwrap();
        assert!(wrong.is_error(), "{}", wrong.text());
        let missing = client.call("find_bug", json!({"query": "x"})).await.unwrap();
        assert!(
            missing.is_error() && missing.text().contains("\"text\" is a required property"),
            "{}",
            missing.text()
        );
        // The original's name is not served.
        assert!(client.call("search_issues", json!({"repo": "a/b", "query": "x"})).await.is_err());
    }
    // Whatever the callers sent, the original ran on the fixed repository with its default.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for args in seen {
        assert_eq!(args, json!({"repo": "acme/rocket", "query": "crash on start", "per_page": 10}));
    }
}

#[tokio::test]
async fn deferred_search_finds_describes_and_calls_the_transformed_tool() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder()
        .inventory(false)
        .tool(search_issues(seen.clone()))
        .tool(send_email())
        .transform("search_issues", find_bug())
        .defer_tools(DeferredTools::new())
        .build()
        .unwrap();
    let client = TestClient::connect(&server).await;
    let found =
        client.call("search_tools", json!({"query": "find the bug reports about a crash"})).await.unwrap();
    let found = found.structured().unwrap().clone();
    assert_eq!(found["tools"][0]["name"], "find_bug", "{found}");
    let tagged = client.call("search_tools", json!({"query": "", "tags": ["bugs"]})).await.unwrap();
    let tagged = tagged.structured().unwrap()["tools"].clone();
    assert_eq!(tagged.as_array().unwrap().len(), 1, "{tagged}");
    assert_eq!(tagged[0]["name"], "find_bug");
    let described = client.call("describe_tools", json!({"names": ["find_bug"]})).await.unwrap();
    let described = described.structured().unwrap().clone();
    assert!(described.to_string().contains("Words the bug mentions"), "{described}");
    // Read-only now: the read-only caller may run it.
    let ran = client
        .call("call_read_only_tool", json!({"name": "find_bug", "arguments": {"text": "crash"}}))
        .await
        .unwrap();
    assert_eq!(ran.text(), "2 issues", "{}", ran.text());
    assert_eq!(seen.lock().unwrap()[0]["repo"], "acme/rocket");
}
