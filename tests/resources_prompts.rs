//! Resources, resource templates, prompts and completion: `#[resource]` and `#[prompt]`
//! functions beside runtime values, through the in-process test client.

use std::time::Duration;

use mcp_tools::testing::{RpcError, TestClient};
use mcp_tools::{
    CompletionRef, Content, Context, Prompt, PromptArgument, PromptMessage, PromptResult, Resource,
    ResourceContents, ResourceTemplate, Server, State, ToolError, prompt, resource,
};
use serde_json::{Value, json};

/// A 1×1 PNG's first bytes: enough to check the base64 round trip.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

struct Greeting {
    word: &'static str,
}

/// A fixed text.
#[resource(uri = "test://static-text", name = "static-text", title = "Static text", mime_type = "text/plain")]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A fixed image.
#[resource(uri = "test://static-binary", mime_type = "image/png")]
fn static_binary() -> Vec<u8> {
    PNG.to_vec()
}

/// One item's data, as JSON.
#[resource(uri = "test://template/{id}/data", mime_type = "application/json")]
async fn template_data(id: String) -> String {
    json!({"id": id, "content": format!("Data for item {id}")}).to_string()
}

/// A numbered page.
#[resource(uri = "test://pages/{number}")]
async fn page(number: u32, greeting: State<Greeting>) -> Result<String, ToolError> {
    if number == 0 {
        return Err(ToolError::new("pages start at 1"));
    }
    Ok(format!("{}, this is page {number}", greeting.word))
}

/// A resource clients subscribe to.
#[resource(uri = "test://watched-resource")]
async fn watched() -> String {
    "watched".to_owned()
}

/// A simple prompt without arguments.
#[prompt]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with a required and an optional argument.
#[prompt(title = "Prompt with arguments")]
async fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: Option<String>,
) -> Vec<PromptMessage> {
    let arg2 = arg2.unwrap_or_else(|| "(none)".to_owned());
    vec![PromptMessage::user(format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
}

/// A prompt that embeds a resource.
#[prompt]
async fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[prompt(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user_resource(ResourceContents::text(
            resource_uri,
            Some("text/plain"),
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
fn test_prompt_with_image() -> PromptResult {
    PromptResult::new(vec![
        PromptMessage::new("user", Content::image(PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ])
    .description("An image to analyze")
}

/// Repeat a word.
#[prompt]
async fn repeat(
    /// The word
    word: String,
    /// How many times
    times: u8,
    /// Separator (default: a space)
    separator: Option<char>,
    ctx: Context,
) -> Result<String, ToolError> {
    let _ = ctx.request_id();
    if times == 0 {
        return Err(ToolError::new("`times` must be at least 1"));
    }
    let separator = separator.unwrap_or(' ').to_string();
    Ok(vec![word; times.into()].join(&separator))
}

fn builder() -> mcp_tools::ServerBuilder {
    Server::builder()
        .state(Greeting { word: "Hello" })
        .resource(
            Resource::fixed(
                "test://runtime",
                "runtime",
                ResourceContents::text("test://runtime", Some("text/plain"), "built at run time"),
            )
            .description("A resource built at run time."),
        )
        .resource_template(ResourceTemplate::new("test://echo/{text}", "echo", |request, _ctx| async move {
            let text = request.param("text").unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), text)])
        }))
        .prompt(
            Prompt::new("runtime_prompt", "A prompt built at run time.", |args, _ctx| async move {
                let topic = args.get("topic").cloned().unwrap_or_default();
                Ok(PromptResult::new(vec![PromptMessage::user(format!("Tell me about {topic}"))]))
            })
            .argument(PromptArgument::required("topic", "The topic")),
        )
}

async fn client() -> TestClient {
    TestClient::connect(&builder().build().unwrap()).await
}

async fn read(client: &TestClient, uri: &str) -> Result<Value, RpcError> {
    client.request("resources/read", json!({"uri": uri})).await
}

async fn get_prompt(client: &TestClient, name: &str, arguments: Value) -> Result<Value, RpcError> {
    client.request("prompts/get", json!({"name": name, "arguments": arguments})).await
}

#[tokio::test]
async fn initialize_declares_resources_prompts_and_completions() {
    let server = builder().build().unwrap();
    let client = TestClient::connect_uninitialized(&server);
    let params = json!({
        "protocolVersion": mcp_tools::LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    });
    let result = client.request("initialize", params).await.unwrap();
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["resources"], json!({"subscribe": true, "listChanged": true}));
    assert!(capabilities["prompts"].is_object());
    assert!(capabilities["completions"].is_object());
}

#[tokio::test]
async fn server_lists_fixed_resources_and_prompts_sorted() {
    let server = builder().build().unwrap();
    assert_eq!(
        server.resource_uris(),
        ["test://runtime", "test://static-binary", "test://static-text", "test://watched-resource"]
    );
    assert_eq!(
        server.prompt_names(),
        [
            "repeat",
            "runtime_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt",
        ]
    );
}

#[tokio::test]
async fn resources_list_describes_each_fixed_resource() {
    let client = client().await;
    let list = client.request("resources/list", json!({})).await.unwrap();
    let resources = list["resources"].as_array().unwrap();
    let find = |uri: &str| resources.iter().find(|r| r["uri"] == uri).unwrap().clone();
    assert_eq!(
        find("test://static-text"),
        json!({
            "uri": "test://static-text",
            "name": "static-text",
            "title": "Static text",
            "description": "A fixed text.",
            "mimeType": "text/plain",
        })
    );
    assert_eq!(find("test://static-binary")["name"], "static_binary");
    assert_eq!(find("test://static-binary")["mimeType"], "image/png");
    assert_eq!(find("test://runtime")["description"], "A resource built at run time.");
    assert!(resources.iter().all(|r| r.get("uriTemplate").is_none()));
}

#[tokio::test]
async fn templates_list_shows_uri_templates() {
    let client = client().await;
    let list = client.request("resources/templates/list", json!({})).await.unwrap();
    let templates: Vec<&str> = list["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(templates, ["test://echo/{text}", "test://pages/{number}", "test://template/{id}/data"]);
    let data = &list["resourceTemplates"][2];
    assert_eq!(data["name"], "template_data");
    assert_eq!(data["description"], "One item's data, as JSON.");
    assert_eq!(data["mimeType"], "application/json");
}

#[tokio::test]
async fn reading_a_text_resource_returns_its_text() {
    let client = client().await;
    let result = read(&client, "test://static-text").await.unwrap();
    assert_eq!(
        result["contents"],
        json!([{
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }])
    );
}

#[tokio::test]
async fn reading_a_binary_resource_returns_a_base64_blob() {
    let client = client().await;
    let result = read(&client, "test://static-binary").await.unwrap();
    let contents = &result["contents"][0];
    assert_eq!(contents["mimeType"], "image/png");
    assert_eq!(contents["blob"], "iVBORw0KGgo=");
    assert!(contents.get("text").is_none());
}

#[tokio::test]
async fn reading_a_template_passes_the_variable() {
    let client = client().await;
    let result = read(&client, "test://template/42/data").await.unwrap();
    let contents = &result["contents"][0];
    assert_eq!(contents["uri"], "test://template/42/data");
    assert_eq!(contents["mimeType"], "application/json");
    let data: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(data["id"], "42");
}

#[tokio::test]
async fn a_typed_variable_is_parsed_and_a_bad_value_is_invalid_params() {
    let client = client().await;
    let result = read(&client, "test://pages/7").await.unwrap();
    assert_eq!(result["contents"][0]["text"], "Hello, this is page 7");

    let error = read(&client, "test://pages/seven").await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("`number`") && error.message.contains("\"seven\""), "{error}");
}

#[tokio::test]
async fn a_resource_error_is_a_json_rpc_error_with_its_message() {
    let client = client().await;
    let error = read(&client, "test://pages/0").await.unwrap_err();
    assert_eq!(error.message, "pages start at 1");
}

#[tokio::test]
async fn runtime_resources_and_templates_are_read_too() {
    let client = client().await;
    assert_eq!(read(&client, "test://runtime").await.unwrap()["contents"][0]["text"], "built at run time");
    assert_eq!(read(&client, "test://echo/hi").await.unwrap()["contents"][0]["text"], "hi");
}

#[tokio::test]
async fn reading_an_unknown_uri_is_resource_not_found() {
    let client = client().await;
    let error = read(&client, "test://nowhere").await.unwrap_err();
    assert_eq!(error.code, -32002);
}

async fn next_update(client: &TestClient) -> Value {
    let wait = client.notification("notifications/resources/updated");
    tokio::time::timeout(Duration::from_secs(5), wait).await.expect("an update notification")
}

#[tokio::test]
async fn subscribers_are_told_of_updates_until_they_unsubscribe() {
    let server = builder().build().unwrap();
    let client = TestClient::connect(&server).await;
    let subscribe = |uri: &'static str| client.request("resources/subscribe", json!({"uri": uri}));
    subscribe("test://watched-resource").await.unwrap();
    server.notify_resource_updated("test://watched-resource");
    let update = next_update(&client).await;
    assert_eq!(update["params"]["uri"], "test://watched-resource");

    client.request("resources/unsubscribe", json!({"uri": "test://watched-resource"})).await.unwrap();
    subscribe("test://static-text").await.unwrap();
    server.notify_resource_updated("test://watched-resource");
    server.notify_resource_updated("test://static-text");
    // Updates arrive in order: had the first been sent, it would come first.
    let update = next_update(&client).await;
    assert_eq!(update["params"]["uri"], "test://static-text");
}

#[tokio::test]
async fn prompts_list_shows_arguments_with_descriptions_and_required_flags() {
    let client = client().await;
    let list = client.request("prompts/list", json!({})).await.unwrap();
    let prompts = list["prompts"].as_array().unwrap();
    let find = |name: &str| prompts.iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!(
        find("test_prompt_with_arguments"),
        json!({
            "name": "test_prompt_with_arguments",
            "title": "Prompt with arguments",
            "description": "A prompt with a required and an optional argument.",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": false},
            ],
        })
    );
    assert_eq!(find("test_simple_prompt")["arguments"], json!([]));
    assert_eq!(find("test_prompt_with_embedded_resource")["arguments"][0]["name"], "resourceUri");
    let repeat: Vec<(Value, Value)> = find("repeat")["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].clone(), a["required"].clone()))
        .collect();
    assert_eq!(
        repeat,
        [(json!("word"), json!(true)), (json!("times"), json!(true)), (json!("separator"), json!(false))]
    );
    assert_eq!(find("runtime_prompt")["arguments"][0]["required"], true);
}

#[tokio::test]
async fn a_prompt_without_arguments_renders_one_user_message() {
    let client = client().await;
    let result = get_prompt(&client, "test_simple_prompt", json!({})).await.unwrap();
    assert_eq!(
        result["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
    );
}

#[tokio::test]
async fn prompt_arguments_are_passed_and_optional_ones_may_be_absent() {
    let client = client().await;
    let text = |result: Value| result["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    let both = get_prompt(&client, "test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"}));
    assert_eq!(text(both.await.unwrap()), "Prompt with arguments: arg1='a', arg2='b'");
    let one = get_prompt(&client, "test_prompt_with_arguments", json!({"arg1": "a"}));
    assert_eq!(text(one.await.unwrap()), "Prompt with arguments: arg1='a', arg2='(none)'");
    let typed = get_prompt(&client, "repeat", json!({"word": "go", "times": "3", "separator": "-"}));
    assert_eq!(text(typed.await.unwrap()), "go-go-go");
}

#[tokio::test]
async fn a_prompt_can_embed_a_resource() {
    let client = client().await;
    let arguments = json!({"resourceUri": "test://static-text"});
    let result = get_prompt(&client, "test_prompt_with_embedded_resource", arguments).await.unwrap();
    let first = &result["messages"][0];
    assert_eq!(first["role"], "user");
    assert_eq!(first["content"]["type"], "resource");
    assert_eq!(first["content"]["resource"]["uri"], "test://static-text");
    assert_eq!(first["content"]["resource"]["text"], "Embedded resource content for testing.");
}

#[tokio::test]
async fn a_prompt_can_show_an_image() {
    let client = client().await;
    let result = get_prompt(&client, "test_prompt_with_image", json!({})).await.unwrap();
    assert_eq!(result["description"], "An image to analyze");
    let image = &result["messages"][0]["content"];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(image["data"], "iVBORw0KGgo=");
}

#[tokio::test]
async fn runtime_prompts_render_too() {
    let client = client().await;
    let result = get_prompt(&client, "runtime_prompt", json!({"topic": "owls"})).await.unwrap();
    assert_eq!(result["messages"][0]["content"]["text"], "Tell me about owls");
}

#[tokio::test]
async fn a_missing_required_argument_is_invalid_params() {
    let client = client().await;
    let error = get_prompt(&client, "test_prompt_with_arguments", json!({"arg2": "b"})).await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("arg1"), "{error}");
}

#[tokio::test]
async fn an_argument_that_does_not_parse_is_invalid_params() {
    let client = client().await;
    let error = get_prompt(&client, "repeat", json!({"word": "go", "times": "many"})).await.unwrap_err();
    assert_eq!(error.code, -32602);
    assert_eq!(error.message, "the argument `times` is not a valid u8: \"many\"");
}

#[tokio::test]
async fn a_prompt_error_is_a_json_rpc_error_with_its_message() {
    let client = client().await;
    let error = get_prompt(&client, "repeat", json!({"word": "go", "times": "0"})).await.unwrap_err();
    assert_eq!(error.message, "`times` must be at least 1");
}

#[tokio::test]
async fn an_unknown_prompt_is_invalid_params() {
    let client = client().await;
    let error = get_prompt(&client, "no_such_prompt", json!({})).await.unwrap_err();
    assert_eq!(error.code, -32602);
}

fn completion_request(value: &str) -> Value {
    json!({
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": value},
    })
}

#[tokio::test]
async fn completion_asks_the_completer() {
    let server = builder()
        .completer(|request, _ctx| async move {
            match (&request.reference, request.argument.as_str()) {
                (CompletionRef::Prompt(name), "arg1") if name == "test_prompt_with_arguments" => {
                    ["paris", "park", "london"]
                        .into_iter()
                        .filter(|v| v.starts_with(&request.value))
                        .map(str::to_owned)
                        .collect()
                }
                _ => Vec::new(),
            }
        })
        .build()
        .unwrap();
    let client = TestClient::connect(&server).await;
    let result = client.request("completion/complete", completion_request("par")).await.unwrap();
    assert_eq!(result["completion"], json!({"values": ["paris", "park"], "total": 2, "hasMore": false}));
}

#[tokio::test]
async fn completion_without_a_completer_is_empty() {
    let client = client().await;
    let result = client.request("completion/complete", completion_request("par")).await.unwrap();
    assert_eq!(result["completion"]["values"], json!([]));
    assert_eq!(result["completion"]["hasMore"], false);
}

#[tokio::test]
async fn resources_and_prompts_added_or_removed_while_serving_are_announced() {
    let server = builder().build().unwrap();
    let client = TestClient::connect(&server).await;
    let wait = |method: &'static str| {
        let client = &client;
        async move {
            tokio::time::timeout(Duration::from_secs(5), client.notification(method))
                .await
                .expect("announced")
        }
    };

    server.add_resource(Resource::fixed(
        "test://late",
        "late",
        ResourceContents::text("test://late", Some("text/plain"), "added while serving"),
    ));
    wait("notifications/resources/list_changed").await;
    let read = client.request("resources/read", json!({"uri": "test://late"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "added while serving");

    assert!(server.remove_resource("test://late"));
    wait("notifications/resources/list_changed").await;
    let err = client.request("resources/read", json!({"uri": "test://late"})).await.unwrap_err();
    assert_eq!(err.code, -32002);
    assert!(!server.remove_resource("test://late"), "already gone");

    server.add_resource_template(ResourceTemplate::new("late://{x}", "late-template", |r, _| async move {
        Ok(vec![ResourceContents::text(r.uri.clone(), None, r.param("x").unwrap_or_default())])
    }));
    wait("notifications/resources/list_changed").await;
    let read = client.request("resources/read", json!({"uri": "late://abc"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "abc");
    assert!(server.remove_resource("late://{x}"));
    wait("notifications/resources/list_changed").await;

    server.add_prompt(Prompt::new("late_prompt", "Added while serving.", |_, _| async {
        Ok(PromptResult::new(vec![PromptMessage::user("late")]))
    }));
    wait("notifications/prompts/list_changed").await;
    assert!(server.prompt_names().contains(&"late_prompt".to_owned()));
    let got = client.request("prompts/get", json!({"name": "late_prompt"})).await.unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "late");
    assert!(server.remove_prompt("late_prompt"));
    wait("notifications/prompts/list_changed").await;
    assert!(!server.remove_prompt("late_prompt"));
}
