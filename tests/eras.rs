//! The two eras of the protocol, at the message level: stateless 2026-07-28 requests (the
//! envelope and its errors, `server/discover`, `resultType` and cache hints, multi-round-trip
//! requests, listening) beside 2025-11-25 sessions, from the same tools; and no field of one era
//! in the other's answers.

use std::collections::BTreeSet;

use mcp_tools::testing::TestClient;
use mcp_tools::{
    Context, Elicitation, Era, LogLevel, Prompt, PromptMessage, PromptResult, Resource, ResourceContents,
    SamplingRequest, Server, Tool, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

/// Greet the user, asking for their name.
#[tool]
async fn greet(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("user_name").elicit::<Name>("What is your name?").await? {
        Elicitation::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Ask two questions, one after the other.
#[tool]
async fn two_steps(ctx: Context) -> Result<String, ToolError> {
    let Elicitation::Accept(Name { name }) = ctx.elicit::<Name>("Step 1: your name?").await? else {
        return Ok("no name".into());
    };
    let Elicitation::Accept(Color { color }) = ctx.elicit::<Color>("Step 2: your colour?").await? else {
        return Ok("no colour".into());
    };
    Ok(format!("{name} likes {color}"))
}

/// Ask three things at once.
#[tool]
async fn three_at_once(ctx: Context) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit::<Name>("Your name?"),
        ctx.sample(SamplingRequest::new(20).user("Say hello")),
        ctx.list_roots(),
    );
    let name = match name? {
        Elicitation::Accept(Name { name }) => name,
        _ => "?".into(),
    };
    Ok(format!("{name}: {} ({} roots)", greeting?.text().unwrap_or_default(), roots?.len()))
}

/// Ask the client's model; needs the `sampling` capability.
#[tool]
async fn ask(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx.sample(SamplingRequest::new(20).user("2 + 2?")).await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// Numbers up to n (not an object: wrapped for 2025-11-25 clients only).
#[tool]
async fn upto(n: u8) -> Vec<u8> {
    (1..=n).collect()
}

/// Log at every level, then report progress.
#[tool]
async fn chatty(ctx: Context) -> String {
    ctx.log(LogLevel::Debug, "debug detail");
    ctx.log(LogLevel::Warning, "a warning");
    ctx.report_progress(1.0, Some(2.0), None);
    "done".into()
}

fn server() -> Server {
    Server::builder()
        .name("eras")
        .version("1.0.0")
        .resource(Resource::fixed(
            "test://a",
            "a",
            ResourceContents::text("test://a", Some("text/plain"), "A"),
        ))
        .prompt(Prompt::new("topic", "Ask for a topic first.", |_, ctx: Context| async move {
            let Elicitation::Accept(Name { name }) =
                ctx.elicit::<Name>("Which topic?").await.map_err(ToolError::from)?
            else {
                return Ok(PromptResult::new(vec![]));
            };
            Ok(PromptResult::new(vec![PromptMessage::user(format!("Tell me about {name}"))]))
        }))
        .build()
        .unwrap()
}

fn elicit_answers(content: Value) -> impl Fn(&str, &Value) -> Result<Value, mcp_tools::testing::RpcError> {
    move |method, _| match method {
        "elicitation/create" => Ok(json!({"action": "accept", "content": content})),
        "sampling/createMessage" => {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}))
        }
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///r"}]})),
        other => panic!("unexpected {other}"),
    }
}

fn envelope(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A raw request on a fresh, unclassified connection.
async fn raw(server: &Server, method: &str, params: Value) -> Value {
    let client = TestClient::connect_uninitialized(server);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    client.send_raw(&message.to_string()).await
}

/// Every key of every object in `value`, however deep.
fn keys(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.insert(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

fn all_keys(value: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    keys(value, &mut out);
    out
}

#[tokio::test]
async fn discover_names_the_versions_capabilities_and_identity() {
    let client = TestClient::connect_stateless(&server());
    assert_eq!(client.era(), Era::Stateless);
    let result = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(result["resultType"], "complete");
    let versions = result["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")), "{result}");
    assert_eq!(result["capabilities"]["tools"], json!({"listChanged": true}));
    assert!(result["capabilities"]["resources"].is_object() && result["capabilities"]["prompts"].is_object());
    assert_eq!((result["ttlMs"].as_u64(), result["cacheScope"].as_str()), (Some(0), Some("private")));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "eras", "version": "1.0.0"})
    );
    assert!(result.get("serverInfo").is_none() && result.get("protocolVersion").is_none(), "{result}");
}

#[tokio::test]
async fn a_request_without_its_envelope_is_invalid_params_naming_what_is_missing() {
    let server = server();
    let answer = raw(&server, "server/discover", json!({"_meta": {}})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["id"], 1);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("protocolVersion") && message.contains("clientCapabilities"), "{message}");
    let no_capabilities = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let answer = raw(&server, "tools/list", no_capabilities).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(!answer["error"]["message"].as_str().unwrap().contains("protocolVersion"), "{answer}");
    // Client info is optional.
    let answer = raw(&server, "server/discover", json!({"_meta": envelope(json!({}))})).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
}

#[tokio::test]
async fn a_malformed_part_of_the_envelope_is_invalid_params_naming_it() {
    let server = server();
    let with = |key: &str, value: Value| {
        let mut meta = envelope(json!({}));
        meta[key] = value;
        json!({"name": "upto", "arguments": {"n": 2}, "_meta": meta})
    };
    for (key, value) in [
        ("io.modelcontextprotocol/clientCapabilities", json!(["sampling"])),
        ("io.modelcontextprotocol/clientInfo", json!({"name": "no version"})),
        ("io.modelcontextprotocol/logLevel", json!("loud")),
    ] {
        let answer = raw(&server, "tools/call", with(key, value.clone())).await;
        assert_eq!(answer["error"]["code"], -32602, "{key}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(key), "{key}: {answer}");
    }
    // The tool's name and arguments are read in the same pass as the envelope.
    let mut wrong_name = with("io.modelcontextprotocol/clientInfo", json!({"name": "t", "version": "1"}));
    wrong_name["name"] = json!(7);
    let answer = raw(&server, "tools/call", wrong_name).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("invalid type"), "{answer}");
    let answer = raw(&server, "tools/call", json!({"arguments": {}, "_meta": envelope(json!({}))})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("`name`"), "{answer}");
    // On a connection in the stateless era, params that are not an object.
    let client = TestClient::connect_stateless(&server);
    client.request("tools/list", json!({})).await.unwrap();
    let answer = client.send_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":["upto"]}"#).await;
    assert!(answer["error"]["message"].as_str().unwrap().contains("must be an object"), "{answer}");
    let fine = with("io.modelcontextprotocol/clientInfo", json!({"name": "t", "version": "1"}));
    let answer = raw(&server, "tools/call", fine).await;
    assert_eq!(answer["result"]["structuredContent"], json!([1, 2]), "{answer}");
}

#[tokio::test]
async fn an_unsupported_revision_is_answered_with_the_supported_ones() {
    let params = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    let answer = raw(&server(), "server/discover", params).await;
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    assert_eq!(answer["error"]["data"]["requested"], "v999.0.0");
    assert!(answer["error"]["data"]["supported"].as_array().unwrap().contains(&json!("2026-07-28")));
}

#[tokio::test]
async fn the_handshake_methods_do_not_exist_in_the_stateless_era() {
    let client = TestClient::connect_stateless(&server());
    for method in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let error = client.request(method, json!({"uri": "test://a", "level": "info"})).await.unwrap_err();
        assert_eq!(error.code, -32601, "{method}: {error}");
        assert!(error.message.contains("2026-07-28"), "{method}: {error}");
    }
    let error = client.request("no/such/method", json!({})).await.unwrap_err();
    assert_eq!(error.code, -32601);
}

#[tokio::test]
async fn every_stateless_result_is_complete_and_lists_carry_cache_hints() {
    let client = TestClient::connect_stateless(&server());
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let result = client.request(method, json!({})).await.unwrap();
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(result["ttlMs"].is_u64() && result["cacheScope"] == "public", "{method}: {result}");
    }
    let read = client.request("resources/read", json!({"uri": "test://a"})).await.unwrap();
    assert_eq!(
        (read["resultType"].as_str(), read["cacheScope"].as_str()),
        (Some("complete"), Some("private"))
    );
    assert_eq!(read["contents"][0]["text"], "A");
    let call = client.request("tools/call", json!({"name": "upto", "arguments": {"n": 2}})).await.unwrap();
    assert_eq!(call["resultType"], "complete", "{call}");
    assert!(call.get("ttlMs").is_none(), "a call result is not cacheable: {call}");
}

#[tokio::test]
async fn no_field_of_one_era_leaks_into_the_other() {
    let server = server();
    let stateless_only = ["resultType", "ttlMs", "cacheScope", "inputRequests", "requestState"];
    let session = TestClient::connect(&server).await;
    for (method, params) in [
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "upto", "arguments": {"n": 2}})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        ("prompts/list", json!({})),
        ("ping", json!({})),
    ] {
        let result = session.request(method, params).await.unwrap();
        let found: Vec<&str> =
            stateless_only.iter().copied().filter(|k| all_keys(&result).contains(*k)).collect();
        assert!(found.is_empty(), "2025-11-25 {method} carries {found:?}: {result}");
    }
    assert_eq!(session.request("ping", json!({})).await.unwrap(), json!({}));
    let stateless = TestClient::connect_stateless(&server);
    let discovered = stateless.request("server/discover", json!({})).await.unwrap();
    for key in ["protocolVersion", "serverInfo"] {
        assert!(discovered.get(key).is_none(), "2026-07-28 discover carries {key}");
    }
    // A 2026-07-28 request gets no session notifications: nothing was initialized.
    server
        .add_tool(Tool::new("late", "Added later.", json!({"type": "object"}), |_, _| async {
            Ok(ToolResult::new().text("late"))
        }))
        .unwrap();
    let _ = stateless.request("tools/list", json!({})).await.unwrap();
    assert!(stateless.take_notifications().await.is_empty());
    assert!(!session.notification("notifications/tools/list_changed").await.is_null());
}

#[tokio::test]
async fn a_non_object_output_is_bare_in_2026_and_wrapped_in_2025() {
    let server = server();
    let find = |tools: Vec<Value>| tools.into_iter().find(|t| t["name"] == "upto").unwrap();
    let session = TestClient::connect(&server).await;
    let listed = find(session.list_tools().await.unwrap());
    assert_eq!(listed["outputSchema"]["type"], "object");
    assert_eq!(listed["outputSchema"]["properties"]["result"]["type"], "array");
    let result = session.call("upto", json!({"n": 3})).await.unwrap();
    assert_eq!(result.structured(), Some(&json!({"result": [1, 2, 3]})));

    let stateless = TestClient::connect_stateless(&server);
    let listed = find(stateless.list_tools().await.unwrap());
    assert_eq!(listed["outputSchema"]["type"], "array", "{listed}");
    let result = stateless.call("upto", json!({"n": 3})).await.unwrap();
    assert_eq!(result.structured(), Some(&json!([1, 2, 3])));
}

#[tokio::test]
async fn a_runtime_tool_with_a_non_object_output_schema_is_wrapped_for_2025_clients_only() {
    let tool = Tool::new("count", "Count.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().with_structured(json!(3)).text("3"))
    })
    .output_schema(json!({"type": "integer"}));
    let server = Server::builder().inventory(false).tool(tool).build().unwrap();
    let session = TestClient::connect(&server).await;
    assert_eq!(
        session.list_tools().await.unwrap()[0]["outputSchema"]["properties"]["result"],
        json!({"type": "integer"})
    );
    assert_eq!(session.call("count", json!({})).await.unwrap().structured(), Some(&json!({"result": 3})));
    let stateless = TestClient::connect_stateless(&server);
    assert_eq!(stateless.list_tools().await.unwrap()[0]["outputSchema"], json!({"type": "integer"}));
    assert_eq!(stateless.call("count", json!({})).await.unwrap().structured(), Some(&json!(3)));
}

#[tokio::test]
async fn an_elicitation_is_an_input_required_result_then_a_retry() {
    let client =
        TestClient::connect_stateless_with(&server(), json!({"elicitation": {}}), |_, _| unreachable!());
    let id = client.send_request("tools/call", json!({"name": "greet", "arguments": {}}));
    let first = client.answer(id).await.unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let question = &first["inputRequests"]["user_name"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert_eq!(question["params"]["message"], "What is your name?");
    assert_eq!(question["params"]["requestedSchema"]["properties"]["name"]["type"], "string");
    assert!(first["requestState"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(first.get("content").is_none() && first.get("ttlMs").is_none(), "{first}");

    // The answer alone is enough; extra keys are ignored.
    let retry = json!({"name": "greet", "arguments": {}, "inputResponses": {
        "user_name": {"action": "accept", "content": {"name": "Ada"}},
        "unexpected": {"action": "decline"},
    }});
    let done = client.answer(client.send_request("tools/call", retry)).await.unwrap();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["content"][0]["text"], "Hello, Ada!", "{done}");

    // A wrong key, or an answer that is not an object, asks again.
    for responses in [
        json!({"wrong_key": {"action": "accept", "content": {"name": "x"}}}),
        json!({"user_name": 12345}),
        Value::Null,
    ] {
        let retry = json!({"name": "greet", "arguments": {}, "inputResponses": responses});
        let again = client.answer(client.send_request("tools/call", retry)).await.unwrap();
        assert_eq!(again["resultType"], "input_required", "{responses}: {again}");
        assert!(again["inputRequests"]["user_name"].is_object());
    }
}

#[tokio::test]
async fn a_tampered_or_misapplied_request_state_is_refused() {
    let client =
        TestClient::connect_stateless_with(&server(), json!({"elicitation": {}}), |_, _| unreachable!());
    let first = client
        .answer(client.send_request("tools/call", json!({"name": "greet", "arguments": {}})))
        .await
        .unwrap();
    let state = first["requestState"].as_str().unwrap();
    let answer = json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    let tampered = json!({"name": "greet", "arguments": {}, "inputResponses": answer, "requestState": format!("{state}-TAMPERED")});
    let error = client.answer(client.send_request("tools/call", tampered)).await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("requestState"), "{error}");
    let elsewhere =
        json!({"name": "two_steps", "arguments": {}, "inputResponses": answer, "requestState": state});
    assert_eq!(client.answer(client.send_request("tools/call", elsewhere)).await.unwrap_err().code, -32602);
    // A tool that cannot ask (no `Context`) keeps no round, but checks a state all the same.
    let foreign =
        json!({"name": "upto", "arguments": {"n": 2}, "inputResponses": answer, "requestState": state});
    let error = client.answer(client.send_request("tools/call", foreign)).await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("requestState"), "{error}");
    let answers_only = json!({"name": "upto", "arguments": {"n": 2}, "inputResponses": answer});
    let done = client.answer(client.send_request("tools/call", answers_only)).await.unwrap();
    assert_eq!(
        (done["resultType"].as_str(), &done["structuredContent"]),
        (Some("complete"), &json!([1, 2])),
        "{done}"
    );
}

#[tokio::test]
async fn answers_sealed_in_the_state_carry_over_rounds() {
    let client =
        TestClient::connect_stateless_with(&server(), json!({"elicitation": {}}), |_, _| unreachable!());
    let call = |extra: Value| {
        let mut params = json!({"name": "two_steps", "arguments": {}});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        client.answer(client.send_request("tools/call", params))
    };
    let r1 = call(json!({})).await.unwrap();
    let (key1, q1) = r1["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(q1["params"]["message"], "Step 1: your name?");
    let r2 = call(json!({"inputResponses": {key1: {"action": "accept", "content": {"name": "Ada"}}}, "requestState": r1["requestState"]}))
        .await
        .unwrap();
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    assert_ne!(r2["requestState"], r1["requestState"]);
    let (key2, q2) = r2["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(q2["params"]["message"], "Step 2: your colour?");
    let r3 = call(json!({"inputResponses": {key2: {"action": "accept", "content": {"color": "blue"}}}, "requestState": r2["requestState"]}))
        .await
        .unwrap();
    assert_eq!(r3["content"][0]["text"], "Ada likes blue", "{r3}");
}

#[tokio::test]
async fn questions_asked_together_come_in_one_round_and_the_tool_code_serves_both_eras() {
    let server = server();
    let capabilities = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let client = TestClient::connect_stateless(&server);
    let id = client.send_request(
        "tools/call",
        json!({"name": "three_at_once", "arguments": {}, "_meta": envelope(capabilities.clone())}),
    );
    let first = client.answer(id).await.unwrap();
    let methods: BTreeSet<&str> =
        first["inputRequests"].as_object().unwrap().values().map(|q| q["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        BTreeSet::from(["elicitation/create", "roots/list", "sampling/createMessage"]),
        "{first}"
    );

    let stateless = TestClient::connect_stateless_with(
        &server,
        capabilities.clone(),
        elicit_answers(json!({"name": "Ada"})),
    );
    let session =
        TestClient::connect_with(&server, capabilities, elicit_answers(json!({"name": "Ada"}))).await;
    for client in [stateless, session] {
        let result = client.call("three_at_once", json!({})).await.unwrap();
        assert_eq!(result.text(), "Ada: 4 (1 roots)", "{:?}: {:?}", client.era(), result);
    }
}

#[tokio::test]
async fn a_missing_client_capability_is_the_protocol_error_in_2026_and_an_error_result_in_2025() {
    let server = server();
    let error = TestClient::connect_stateless(&server).call("ask", json!({})).await.unwrap_err();
    assert_eq!(error.code, -32021, "{error}");
    let session = TestClient::connect(&server).await;
    let result = session.call("ask", json!({})).await.unwrap();
    assert!(result.is_error() && result.text().contains("`sampling`"), "{}", result.text());
    // Declared, it is asked for.
    let client =
        TestClient::connect_stateless_with(&server, json!({"sampling": {}}), elicit_answers(json!({})));
    assert_eq!(client.call("ask", json!({})).await.unwrap().text(), "4");
}

#[tokio::test]
async fn a_prompt_may_ask_for_input_too() {
    let client = TestClient::connect_stateless_with(
        &server(),
        json!({"elicitation": {}}),
        elicit_answers(json!({"name": "rust"})),
    );
    let result = client.request("prompts/get", json!({"name": "topic"})).await.unwrap();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["messages"][0]["content"]["text"], "Tell me about rust", "{result}");
}

#[tokio::test]
async fn logs_are_sent_only_when_a_stateless_request_asks_at_its_level() {
    let server = server();
    let client = TestClient::connect_stateless(&server);
    client.call("chatty", json!({})).await.unwrap();
    assert!(client.take_notifications().await.iter().all(|n| n["method"] != "notifications/message"));

    let mut meta = envelope(json!({}));
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    meta["progressToken"] = json!("p1");
    client.request("tools/call", json!({"name": "chatty", "arguments": {}, "_meta": meta})).await.unwrap();
    let notifications = client.take_notifications().await;
    let logs: Vec<&Value> = notifications.iter().filter(|n| n["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 1, "{notifications:?}");
    assert_eq!(logs[0]["params"]["level"], "warning");
    assert!(
        notifications
            .iter()
            .any(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "p1")
    );

    meta["io.modelcontextprotocol/logLevel"] = json!("loud");
    let error = client.request("tools/call", json!({"name": "chatty", "_meta": meta})).await.unwrap_err();
    assert_eq!(error.code, -32602);
}

#[tokio::test]
async fn an_unknown_resource_is_invalid_params_in_2026_and_resource_not_found_in_2025() {
    let server = server();
    let uri = json!({"uri": "test://missing"});
    let error =
        TestClient::connect_stateless(&server).request("resources/read", uri.clone()).await.unwrap_err();
    assert_eq!(error.code, -32602);
    let error = TestClient::connect(&server).await.request("resources/read", uri).await.unwrap_err();
    assert_eq!(error.code, -32002);
}

#[tokio::test]
async fn listening_acknowledges_then_forwards_only_the_changes_asked_for() {
    let server = server();
    let client = TestClient::connect_stateless(&server);
    let tools =
        client.send_request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let ack = client.notification("notifications/subscriptions/acknowledged").await;
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], tools);
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    let prompts =
        client.send_request("subscriptions/listen", json!({"notifications": {"promptsListChanged": true}}));
    client.notification("notifications/subscriptions/acknowledged").await;

    server.add_prompt(Prompt::new("p2", "Another.", |_, _| async { Ok(PromptResult::new(vec![])) }));
    let changed = client.notification("notifications/prompts/list_changed").await;
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], prompts);
    server.remove_tool("upto");
    let changed = client.notification("notifications/tools/list_changed").await;
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], tools);
    let rest = client.take_notifications().await;
    assert!(rest.is_empty(), "only one notification per stream and change: {rest:?}");
}

#[tokio::test]
async fn a_connection_keeps_the_era_its_first_request_chose() {
    let server = server();
    let stateless = TestClient::connect_uninitialized(&server);
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope(json!({}))}});
    assert_eq!(stateless.send_raw(&discover.to_string()).await["result"]["resultType"], "complete");
    let initialize = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    assert_eq!(stateless.send_raw(&initialize.to_string()).await["error"]["code"], -32601);

    let session = TestClient::connect(&server).await;
    // An envelope means nothing to a 2025-11-25 session: the request is served in its era.
    let listed = session.request("tools/list", json!({"_meta": envelope(json!({}))})).await.unwrap();
    assert!(listed.get("resultType").is_none(), "{listed}");
    assert_eq!(
        session.request("server/discover", json!({"_meta": envelope(json!({}))})).await.unwrap_err().code,
        -32601
    );
}

#[tokio::test]
async fn a_server_can_be_pinned_to_one_era() {
    let handshake_only = Server::builder().only_era(Era::Handshake).build().unwrap();
    let answer = raw(&handshake_only, "server/discover", json!({"_meta": envelope(json!({}))})).await;
    assert_eq!(answer["error"]["code"], -32601, "dual-era clients fall back to initialize: {answer}");
    let session = TestClient::connect(&handshake_only).await;
    assert!(
        session
            .request("tools/list", json!({"_meta": envelope(json!({}))}))
            .await
            .unwrap()
            .get("resultType")
            .is_none()
    );

    let stateless_only = Server::builder().only_era(Era::Stateless).build().unwrap();
    let initialize = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    let answer = raw(&stateless_only, "initialize", initialize).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let answer = raw(&stateless_only, "tools/list", json!({})).await;
    assert_eq!(answer["error"]["code"], -32602, "a request without its envelope: {answer}");
    let result =
        TestClient::connect_stateless(&stateless_only).request("tools/list", json!({})).await.unwrap();
    assert_eq!(result["resultType"], "complete");
}
