//! The client of the official MCP conformance suite (npm `@modelcontextprotocol/conformance`):
//! one program for every client scenario, built on `mcp_tools::client`. The suite starts a test
//! server per scenario and runs this program with the server's URL as its last argument and the
//! scenario in the environment: `MCP_CONFORMANCE_SCENARIO` (its name),
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision to speak: `2026-07-28` is the stateless
//! era, anything else a 2025-11-25 session) and `MCP_CONFORMANCE_CONTEXT` (JSON: pre-registered
//! credentials, the arguments of the calls to make…). It does what the scenario asks (lists and
//! calls tools, answers elicitations with their defaults, authorizes with OAuth…); the suite
//! checks the client's behaviour on the wire.
//!
//! ```sh
//! cargo build --example conformance_client
//! conformance client --command target/debug/examples/conformance_client --requirements 2025-11-25
//! conformance client --command target/debug/examples/conformance_client --requirements 2026-07-28
//! ```
//!
//! (scripts/interop.sh, section 1, runs both requirement sets; `--scenario NAME` runs one.)

use std::process::ExitCode;

use mcp_tools::client::{Client, ClientBuilder, ClientCredentials, ClientError, EraChoice, OAuth};
use serde_json::{Map, Value, json};

/// The Client ID Metadata Document URL the suite's authorization servers accept.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).next_back() else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=NAME conformance_client SERVER_URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    match run(&scenario, &context, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, context: &Value, url: &str) -> Result<(), ClientError> {
    let era = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => EraChoice::Stateless,
        _ => EraChoice::Handshake,
    };
    let builder = Client::builder().name("mcp-tools-conformance").version("1.0.0").era(era);
    match scenario {
        // Connect, list the tools (and call the first one with the suite's numbers).
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => {
            let client = builder.connect_http(url).await?;
            client.list_tools().await?;
            client.close().await;
        }
        "tools_call" => {
            let client = builder.connect_http(url).await?;
            let tools = client.list_tools().await?;
            let name = tools.first().and_then(|t| t["name"].as_str()).unwrap_or("add_numbers");
            let result = client.call_tool(name, json!({"a": 2, "b": 3})).await?;
            eprintln!("{name}: {}", result.text());
            client.close().await;
        }
        // Accepts with nothing filled in: the client adds the requested schema's defaults.
        "elicitation-sep1034-client-defaults" => {
            let client = builder
                .on_elicitation(|_| async { Ok(json!({"action": "accept", "content": {}})) })
                .connect_http(url)
                .await?;
            client.list_tools().await?;
            let result = client.call_tool("test_client_elicitation_defaults", json!({})).await?;
            eprintln!("{}", result.text());
            client.close().await;
        }
        // The call's stream ends before its result, which comes on the resumed stream.
        "sse-retry" => {
            let client = builder.connect_http(url).await?;
            client.list_tools().await?;
            let result = client.call_tool("test_reconnection", json!({})).await?;
            eprintln!("{}", result.text());
            client.close().await;
        }
        // Input-required rounds (SEP-2322): the elicitation is answered, and meanwhile an
        // unrelated call goes out, which must carry nothing of the other call's rounds.
        "sep-2322-client-request-state" => {
            let client = builder
                .on_elicitation(|_| async { Ok(json!({"action": "accept", "content": {"confirmed": true}})) })
                .connect_http(url)
                .await?;
            client.list_tools().await?;
            let during = client.clone();
            let options = mcp_tools::client::CallOptions::new().questions(move |_| {
                let client = during.clone();
                async move {
                    client.call_tool("test_mrtr_unrelated", json!({})).await?;
                    Ok(json!({"action": "accept", "content": {"confirmed": true}}))
                }
            });
            client.call_tool_with("test_mrtr_echo_state", json!({}), options).await?;
            for tool in ["test_mrtr_no_state", "test_mrtr_no_result_type"] {
                client.call_tool(tool, json!({})).await?;
            }
            client.close().await;
        }
        // Every request carries Mcp-Method (and Mcp-Name): list and use everything.
        "http-standard-headers" => {
            let client = builder.connect_http(url).await?;
            for tool in client.list_tools().await? {
                client.call_tool(tool["name"].as_str().unwrap_or_default(), json!({})).await?;
            }
            for resource in client.list_resources().await? {
                client.read_resource(resource["uri"].as_str().unwrap_or_default()).await?;
            }
            for prompt in client.list_prompts().await? {
                client.get_prompt(prompt["name"].as_str().unwrap_or_default(), Map::new()).await?;
            }
            client.close().await;
        }
        // The calls the context gives, whose `x-mcp-header` arguments the client mirrors.
        "http-custom-headers" => {
            let client = builder.connect_http(url).await?;
            client.list_tools().await?;
            for call in context["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, call["arguments"].clone()).await?;
            }
            client.close().await;
        }
        // The client leaves out the tools with invalid `x-mcp-header`s: call what it lists.
        "http-invalid-tool-headers" => {
            let client = builder.connect_http(url).await?;
            for tool in client.list_tools().await? {
                let arguments = placeholder_arguments(&tool["inputSchema"]);
                client.call_tool(tool["name"].as_str().unwrap_or_default(), arguments).await?;
            }
            client.close().await;
        }
        // The schema the client lists is the server's, keyword for keyword: echo it back.
        "json-schema-2020-12-preservation" => {
            let client = builder.connect_http(url).await?;
            let tools = client.list_tools().await?;
            let Some(tool) = tools.iter().find(|t| t["name"] == "json_schema_2020_12_tool") else {
                return Err(ClientError::Protocol("json_schema_2020_12_tool is not listed".into()));
            };
            client.call_tool("json_schema_echo", json!({"schema": tool["inputSchema"]})).await?;
            client.close().await;
        }
        // Authorization: the client's OAuth (or client credentials) on a 401, then a call.
        _ if scenario.starts_with("auth/") => {
            let client = authorized(builder, scenario, context)?.connect_http(url).await?;
            client.list_tools().await?;
            let result = client.call_tool("test-tool", json!({})).await?;
            eprintln!("{scenario}: {}", result.text());
            client.close().await;
        }
        other => return Err(ClientError::Protocol(format!("unknown scenario {other:?}"))),
    }
    Ok(())
}

/// The builder with the authorization a scenario asks for: client credentials (a secret, or a
/// signed JWT with the context's key) or `OAuth` (the suite's Client ID Metadata Document URL,
/// and the context's pre-registered client, if any).
fn authorized(builder: ClientBuilder, scenario: &str, context: &Value) -> Result<ClientBuilder, ClientError> {
    let (id, secret) = (context["client_id"].as_str(), context["client_secret"].as_str());
    if let Some(pem) = context["private_key_pem"].as_str() {
        let key = jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes())
            .map_err(|e| ClientError::Unauthorized(format!("the context's private key: {e}")))?;
        let sign = move |claims: &Value| {
            jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256), claims, &key)
                .map_err(|e| ClientError::Unauthorized(e.to_string()))
        };
        return Ok(builder.auth(ClientCredentials::private_key_jwt(id.unwrap_or_default(), sign)));
    }
    if scenario.starts_with("auth/client-credentials") {
        return Ok(builder.auth(ClientCredentials::new(id.unwrap_or_default(), secret.unwrap_or_default())));
    }
    let mut oauth = OAuth::new().client_name("mcp-tools-conformance").client_metadata_url(CIMD_URL);
    if let Some(id) = id {
        oauth = oauth.client_id(id);
    }
    if let Some(secret) = secret {
        oauth = oauth.client_secret(secret);
    }
    Ok(builder.auth(oauth))
}

/// Arguments for a tool's required parameters: a placeholder of each one's type.
fn placeholder_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("x"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
