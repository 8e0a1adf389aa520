//! The fixture of the official MCP conformance suite: every tool, resource and prompt its
//! scenarios call, with the names and texts they expect, for both protocol eras (2025-11-25 and
//! 2026-07-28: the same tools answer both), and the skills of `examples/skills/` (the Skills
//! extension's scenarios).
//!
//! ```sh
//! cargo run --example everything -- --http 127.0.0.1:3000 --sse --resumable
//! # then: conformance server --url http://localhost:3000/mcp --requirements 2026-07-28
//! ```
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set (or `--otel`), every request is also an OpenTelemetry
//! span exported to that OTLP collector (`scripts/otel-e2e.sh` checks it with a real one).

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_tools::{
    Args, ClientError, Context, Elicitation, EmbeddedResource, LogLevel, Prompt, PromptMessage, PromptResult,
    ResourceContents, SamplingRequest, Server, State, Tool, ToolError, ToolResult, prompt, resource, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A 1×1 red PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
    0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05,
    0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
    0x60, 0x82,
];

/// A minimal WAV file.
const WAV: &[u8] = &[
    0x52, 0x49, 0x46, 0x46, 0x26, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20, 0x10,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x40, 0x1f, 0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x02, 0x00,
    0x10, 0x00, 0x64, 0x61, 0x74, 0x61, 0x02, 0x00, 0x00, 0x00,
];

// ===== Tools =====

/// Tests simple text content response
#[tool]
async fn test_simple_text() -> &'static str {
    // A span of the handler's own: with telemetry on (`--otel`, or OTEL_EXPORTER_OTLP_ENDPOINT
    // set), a child of the request's span (scripts/otel-e2e.sh finds it in a real collector).
    let _span = tracing::info_span!("compose_text", fixture = "conformance").entered();
    tracing::info!("composing the simple text");
    "This is a simple text response for testing."
}

/// Tests image content response
#[tool]
async fn test_image_content() -> ToolResult {
    ToolResult::new().image(PNG, "image/png")
}

/// Tests audio content response
#[tool]
async fn test_audio_content() -> ToolResult {
    ToolResult::new().audio(WAV, "audio/wav")
}

/// Tests embedded resource content response
#[tool]
async fn test_embedded_resource() -> ToolResult {
    ToolResult::new().resource(EmbeddedResource::text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    ))
}

/// Tests response with multiple content types (text, image, resource)
#[tool]
async fn test_multiple_content_types() -> ToolResult {
    ToolResult::new().text("Multiple content types test:").image(PNG, "image/png").resource(
        EmbeddedResource::text(
            "test://mixed-content-resource",
            Some("application/json"),
            json!({"test": "data", "value": 123}).to_string(),
        ),
    )
}

/// Tests tool that emits log messages during execution
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    for (i, message) in
        ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(LogLevel::Info, *message);
    }
    "Tool with logging executed successfully"
}

/// Tests tool that reports progress notifications
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(step, Some(100.0), Some(&format!("Completed step {step} of 100")));
    }
    "Progress reported: 0, 50, 100 of 100"
}

/// Tests error response handling
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the
/// stream mid-call and send the result after client reconnects.
#[tool]
async fn test_reconnection(ctx: Context) -> &'static str {
    // Needs `--resumable`; otherwise there is no stream to close and the call just answers.
    ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
}

/// Tests server-initiated sampling (LLM completion request)
#[tool]
async fn test_sampling(
    /// The prompt to send to the LLM
    prompt: String,
    ctx: Context,
) -> String {
    match ctx.sample(SamplingRequest::new(100).user(prompt)).await {
        Ok(answer) => format!("LLM response: {}", answer.text().unwrap_or("No response")),
        Err(e) => format!("Sampling not supported or error: {e}"),
    }
}

/// Tests server-initiated elicitation (user input request)
#[tool]
async fn test_elicitation(
    /// The message to show the user
    message: String,
    ctx: Context,
) -> String {
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"]
    });
    match ctx.elicit_with_schema(message, schema).await {
        Ok(answer) => format!(
            "User response: action={}, content={}",
            answer.action,
            answer.content.unwrap_or_else(|| json!({}))
        ),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

/// The SEP-1034 form: every primitive type, each with a default.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
struct Profile {
    /// User name
    name: String,
    /// User age
    age: i64,
    /// User score
    score: f64,
    /// User status
    status: Status,
    /// Verification status
    verified: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

impl Default for Profile {
    fn default() -> Self {
        Profile { name: "John Doe".into(), age: 30, score: 95.5, status: Status::Active, verified: true }
    }
}

/// Tests elicitation with default values per SEP-1034
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> String {
    match ctx.elicit::<Profile>("Please review and update the form fields with defaults").await {
        Ok(Elicitation::Accept(profile)) => {
            format!("Elicitation completed: action=accept, content={profile:?}")
        }
        Ok(Elicitation::Decline) => "Elicitation completed: action=decline".into(),
        Ok(Elicitation::Cancel) => "Elicitation completed: action=cancel".into(),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> String {
    // The five enum forms of SEP-1330, written out: the exact wire forms are the point.
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
        },
        "required": []
    });
    match ctx.elicit_with_schema("Please select options from the enum fields", schema).await {
        Ok(answer) => format!(
            "Elicitation completed: action={}, content={}",
            answer.action,
            answer.content.unwrap_or_else(|| json!({}))
        ),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

/// SEP-1613: a hand-written JSON Schema 2020-12 input schema, advertised verbatim (`$schema`,
/// `$defs`, `additionalProperties` kept): the one place a runtime `Tool` is the point.
fn json_schema_2020_12_tool() -> Tool {
    Tool::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }),
        |args, _ctx| async move {
            Ok(ToolResult::new().text(format!("JSON Schema 2020-12 tool called with: {args}")))
        },
    )
}

// ===== 2026-07-28: multi-round-trip requests, capabilities, listening, headers =====

/// What the trigger tools change: the running server (set once it is built).
#[derive(Default)]
struct Running {
    server: OnceLock<Server>,
}

/// Tests that the server rejects a request whose client lacks the sampling capability
#[tool]
async fn test_missing_capability(ctx: Context) -> Result<&'static str, ToolError> {
    if !ctx.client_capabilities().contains_key("sampling") {
        return Err(ClientError::MissingCapability("sampling".into()).into());
    }
    Ok("Required capability declared")
}

/// Asks the user for a value while the call runs (an input request, never a request on the stream)
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, ToolError> {
    let schema =
        json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]});
    let answer = ctx.input_key("streaming_elicitation").elicit_with_schema("Provide a value", schema).await?;
    Ok(format!("Received: action={}", answer.action))
}

/// Logs only when the request asked for log messages, then answers
#[tool]
async fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.log(LogLevel::Info, "test_logging_tool ran");
    "Logging tool completed"
}

/// Changes the tool list, so that listening clients are told
#[tool]
async fn test_trigger_tool_change(running: State<Running>) -> &'static str {
    if let Some(server) = running.server.get() {
        let _ = server.add_tool(dynamic_tool());
    }
    "Tool list changed"
}

/// Changes the prompt list, so that listening clients are told
#[tool]
async fn test_trigger_prompt_change(running: State<Running>) -> &'static str {
    if let Some(server) = running.server.get() {
        server.add_prompt(dynamic_prompt());
    }
    "Prompt list changed"
}

/// A tool the trigger replaces.
fn dynamic_tool() -> Tool {
    Tool::new(
        "test_dynamic_tool",
        "A tool the list-change trigger replaces",
        json!({"type": "object"}),
        |_, _| async { Ok(ToolResult::new().text("dynamic")) },
    )
}

/// A prompt the trigger replaces.
fn dynamic_prompt() -> Prompt {
    Prompt::new("test_dynamic_prompt", "A prompt the list-change trigger replaces", |_, _| async {
        Ok(PromptResult::new(vec![PromptMessage::user("dynamic")]))
    })
}

#[derive(Deserialize, JsonSchema)]
struct UserName {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Confirmation {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct FavoriteColor {
    color: String,
}

#[derive(Deserialize, JsonSchema)]
struct PromptContext {
    context: String,
}

/// Asks the user's name (key `user_name`), then greets them
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("user_name").elicit::<UserName>("What is your name?").await? {
        Elicitation::Accept(UserName { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, anonymous!".into()),
    }
}

/// Asks the client's model a question, then answers with its reply
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ToolError> {
    let request = SamplingRequest::new(100).user("What is the capital of France?");
    let answer = ctx.input_key("capital_question").sample(request).await?;
    Ok(format!("The model said: {}", answer.text().unwrap_or_default()))
}

/// Asks for the client's roots, then counts them
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.input_key("client_roots").list_roots().await?;
    Ok(format!("Found {} root(s)", roots.len()))
}

/// Asks for a confirmation, the answers so far travelling in the request state
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("confirm").elicit::<Confirmation>("Please confirm").await? {
        Elicitation::Accept(Confirmation { ok: true }) => Ok("Confirmed: state-ok".into()),
        _ => Ok("Not confirmed: state-ok".into()),
    }
}

/// Asks three things at once: a name, a greeting from the model, the roots
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.input_key("user_name").elicit::<UserName>("What is your name?"),
        ctx.input_key("greeting").sample(SamplingRequest::new(50).user("Generate a greeting")),
        ctx.input_key("client_roots").list_roots(),
    );
    let name = match name? {
        Elicitation::Accept(UserName { name }) => name,
        _ => "anonymous".into(),
    };
    let greeting = greeting?;
    Ok(format!("{name}: {} ({} root(s))", greeting.text().unwrap_or_default(), roots?.len()))
}

/// Asks two questions in two rounds: a name, then a favorite color
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, ToolError> {
    let Elicitation::Accept(UserName { name }) =
        ctx.input_key("step1").elicit::<UserName>("Step 1: What is your name?").await?
    else {
        return Ok("No name given".into());
    };
    let Elicitation::Accept(FavoriteColor { color }) =
        ctx.input_key("step2").elicit::<FavoriteColor>("Step 2: What is your favorite color?").await?
    else {
        return Ok(format!("{name} gave no color"));
    };
    Ok(format!("{name}'s favorite color is {color}"))
}

/// Asks for a confirmation; a retry whose request state was altered is refused
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, ToolError> {
    match ctx.input_key("confirm").elicit::<Confirmation>("Please confirm").await? {
        Elicitation::Accept(_) => Ok("Confirmed".into()),
        _ => Ok("Not confirmed".into()),
    }
}

/// Asks only what the client declared it can answer (sampling; elicitation and roots if declared)
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, ToolError> {
    let declared = ctx.client_capabilities();
    let (elicit, roots) = (declared.contains_key("elicitation"), declared.contains_key("roots"));
    let sample = ctx.input_key("sampling_request").sample(SamplingRequest::new(20).user("Say hello"));
    let name = async {
        if elicit {
            Some(ctx.input_key("user_name").elicit::<UserName>("What is your name?").await)
        } else {
            None
        }
    };
    let listed = async { if roots { Some(ctx.input_key("client_roots").list_roots().await) } else { None } };
    let (sampled, name, listed) = tokio::join!(sample, name, listed);
    let mut answer = format!("Sampled: {}", sampled?.text().unwrap_or_default());
    if let Some(Elicitation::Accept(UserName { name })) = name.transpose()? {
        answer.push_str(&format!("; name: {name}"));
    }
    if let Some(roots) = listed.transpose()? {
        answer.push_str(&format!("; {} root(s)", roots.len()));
    }
    Ok(answer)
}

// ===== 2026-07-28 tasks extension (io.modelcontextprotocol/tasks) =====

/// Greets someone at once (never a task)
#[tool]
async fn greet(
    /// Who to greet
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Computes for a number of seconds (a task for clients that support tasks)
#[tool(task = "optional")]
async fn slow_compute(
    /// How long to compute
    seconds: f64,
    /// A label for the result
    label: String,
) -> String {
    if seconds > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    }
    format!("slow_compute({label}) done after {seconds}s")
}

/// Works for a second, then reports a tool error (only ever a task)
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("failing_job: intentional tool error"))
}

/// Works briefly, then fails at the protocol level (its handler panics)
#[tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job: intentional protocol-level failure")
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Answer {
    answer: String,
}

/// Looks the file up, then asks the user to confirm its deletion (a task for clients that support tasks)
#[tool(task = "optional")]
async fn confirm_delete(
    /// The file to delete
    filename: String,
    ctx: Context,
) -> Result<String, ToolError> {
    // Looking the file up is work: a task-supporting call becomes a task here, so the question
    // below reaches the client through the task.
    tokio::task::yield_now().await;
    match ctx.input_key("confirm").elicit::<Confirm>(format!("Delete {filename}?")).await? {
        Elicitation::Accept(Confirm { confirm: true }) => Ok(format!("Deleted {filename}")),
        _ => Ok(format!("Kept {filename}")),
    }
}

/// Asks two questions at once while running as a task
#[tool(task = "optional")]
async fn multi_input(ctx: Context) -> Result<String, ToolError> {
    tokio::task::yield_now().await;
    let (a, b) = tokio::join!(
        ctx.input_key("input-a").elicit::<Answer>("First answer?"),
        ctx.input_key("input-b").elicit::<Answer>("Second answer?"),
    );
    let text = |e: Elicitation<Answer>| match e {
        Elicitation::Accept(Answer { answer }) => answer,
        _ => "-".into(),
    };
    Ok(format!("a={}, b={}", text(a?), text(b?)))
}

/// Asks the user's name through the request, then works on as a task (only ever a task)
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, ToolError> {
    let name = match ctx.input_key("user_name").elicit::<UserName>("What is your name?").await? {
        Elicitation::Accept(UserName { name }) => name,
        _ => "anonymous".into(),
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!("Hello, {name}! (async)"))
}

/// A value a 2026-07-28 HTTP client mirrors in the `Mcp-Param-Value` header.
#[derive(Deserialize, JsonSchema)]
struct HeaderValue {
    /// The value, also sent as the `Mcp-Param-Value` header
    #[schemars(extend("x-mcp-header" = "Value"))]
    value: String,
}

/// Validates SEP-2243 custom parameter headers
#[tool]
async fn test_custom_header(Args(HeaderValue { value }): Args<HeaderValue>) -> String {
    value
}

/// Asks for the context to use (key `user_context`), then renders the prompt
#[prompt(title = "Input Required Prompt")]
async fn test_input_required_result_prompt(ctx: Context) -> Result<Vec<PromptMessage>, ToolError> {
    let context = match ctx
        .input_key("user_context")
        .elicit::<PromptContext>("What context should the prompt use?")
        .await?
    {
        Elicitation::Accept(PromptContext { context }) => context,
        _ => "none".into(),
    };
    Ok(vec![PromptMessage::user(format!("Use this context: {context}"))])
}

// ===== Resources =====

/// A static text resource for testing
#[resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing
#[resource(
    uri = "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
async fn static_binary() -> Vec<u8> {
    PNG.to_vec()
}

/// A resource template with parameter substitution
#[resource(
    uri = "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
async fn template(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// A resource that subscribers hear about every 3 seconds
#[resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> &'static str {
    "Watched resource content"
}

// ===== Prompts =====

/// A simple prompt without arguments
#[prompt(title = "Simple Test Prompt")]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with required arguments
#[prompt(title = "Prompt With Arguments")]
async fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that includes an embedded resource
#[prompt(title = "Prompt With Embedded Resource")]
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

/// A prompt that includes image content
#[prompt(title = "Prompt With Image")]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new("user", mcp_tools::Content::image(PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

fn main() -> ExitCode {
    let running = Arc::new(Running::default());
    let builder = Server::builder()
        .name("mcp-conformance-test-server")
        .version("1.0.0")
        .state_arc(running.clone())
        .tool(json_schema_2020_12_tool())
        .tool(dynamic_tool())
        .prompt(dynamic_prompt())
        .completer(|_, _| async { Vec::new() })
        // The Skills extension's scenarios (sep-2640-*): two skills, one under folders of its
        // own (skill://acme/billing/refunds/SKILL.md), embedded in the binary.
        .skills(mcp_tools::skills!("examples/skills"));
    let server = match builder.build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let _ = running.server.set(server.clone());
    // The watched resource "changes" every 3 seconds; subscribers are told.
    let ticker = server.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(3));
            ticker.notify_resource_updated("test://watched-resource");
        }
    });
    server.run()
}
