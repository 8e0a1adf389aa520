//! `BIN server-json`: the server's entry for the MCP registry, printed by real example binaries
//! and validated against the registry's published schema (tests/data/server-json/, fetched by
//! scripts/fetch-server-json-schema.sh), then read field by field; and the refusals, each
//! saying what to do.

use std::process::{Command, Output};

use harness::example_binary;
use serde_json::Value;

const SHA: &str = "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce";

fn run(example: &str, args: &[&str]) -> Output {
    Command::new(example_binary(example)).args(args).output().expect("run the example")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The entry `example server-json ARGS` prints, checked against the schema.
fn entry(example: &str, args: &[&str]) -> Value {
    let mut all = vec!["server-json"];
    all.extend_from_slice(args);
    let output = run(example, &all);
    assert!(output.status.success(), "{example} {all:?} failed: {}", stderr(&output));
    let entry: Value = serde_json::from_slice(&output.stdout).expect("server-json prints JSON");
    let problems = schema_problems(&entry);
    assert!(
        problems.is_empty(),
        "{example} {all:?} is not a valid server.json:\n{}\n{entry:#}",
        problems.join("\n")
    );
    entry
}

/// What the registry's JSON schema (revision 2025-12-11) finds wrong with `entry`, formats too.
fn schema_problems(entry: &Value) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/server-json/server.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the stored schema")).unwrap();
    assert_eq!(schema["$id"], "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the registry's schema compiles");
    validator.iter_errors(entry).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn tool_names(example: &str) -> Vec<String> {
    let output = run(example, &["list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let tools: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut names: Vec<String> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

fn env_names(package: &Value) -> Vec<&str> {
    package["environmentVariables"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect()
}

/// The argument of a package named (named) or valued (positional) `key`.
fn argument<'a>(package: &'a Value, key: &str) -> &'a Value {
    package["packageArguments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == key || a["value"] == key)
        .unwrap_or_else(|| panic!("no argument {key} in {package:#}"))
}

#[test]
fn everything_describes_its_packages_remotes_transports_and_tools() {
    let entry = entry(
        "everything",
        &[
            "--name",
            "io.github.example/everything",
            "--description",
            "Every feature of MCP, for conformance tests.",
            "--package",
            "oci=ghcr.io/example/everything:{version}",
            "--package=mcpb=https://github.com/example/everything/releases/download/v1.0.0/everything.mcpb",
            "--sha256",
            SHA,
            "--remote",
            "https://mcp.example.com/mcp",
        ],
    );
    assert_eq!(
        entry["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    assert_eq!(entry["name"], "io.github.example/everything");
    assert_eq!(entry["version"], "1.0.0", "serverInfo's version");
    assert_eq!(entry["description"], "Every feature of MCP, for conformance tests.");
    // No Cargo package given to the builder: no repository, no website.
    assert!(entry.get("repository").is_none() && entry.get("websiteUrl").is_none(), "{entry:#}");

    let packages = entry["packages"].as_array().unwrap();
    assert_eq!(packages.len(), 2);
    let oci = &packages[0];
    assert_eq!(oci["registryType"], "oci");
    assert_eq!(oci["identifier"], "ghcr.io/example/everything:1.0.0", "{{version}} is the server's");
    assert!(oci.get("version").is_none(), "an image's version is its tag");
    assert_eq!(oci["transport"], serde_json::json!({"type": "stdio"}));
    assert!(oci.get("packageArguments").is_none(), "stdio serving takes no arguments");
    let mcpb = &packages[1];
    assert_eq!(mcpb["registryType"], "mcpb");
    assert_eq!(mcpb["version"], "1.0.0");
    assert_eq!(mcpb["fileSha256"], SHA);
    for package in packages {
        // The runtime's own variables (the examples are built with `otel`).
        assert_eq!(env_names(package), ["RUST_LOG", "OTEL_EXPORTER_OTLP_ENDPOINT"], "{package:#}");
    }
    assert_eq!(
        entry["remotes"],
        serde_json::json!([{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}])
    );

    let meta = &entry["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
    assert_eq!(meta["transports"], serde_json::json!(["stdio", "streamable-http"]));
    let names = tool_names("everything");
    assert!(names.len() > 5, "{names:?}");
    assert_eq!(meta["tools"]["count"], names.len());
    assert_eq!(meta["tools"]["names"], serde_json::json!(names));
    assert_eq!(meta["serverInfo"]["name"], "mcp-conformance-test-server");
    assert!(meta["generator"]["name"].as_str().unwrap().starts_with("mcp-tools"), "{meta:#}");
    assert!(serde_json::to_vec(meta).unwrap().len() <= 4096, "the registry keeps 4 KB of it");
    assert!(meta.get("scopes").is_none(), "no tool needs a scope");
}

#[test]
fn protected_served_over_http_asks_for_its_auth_options() {
    let entry = entry(
        "protected",
        &[
            "--name",
            "io.github.example/protected-notes",
            "--package",
            "oci=ghcr.io/example/protected-notes:{version}",
            "--http",
            "0.0.0.0:8080",
            "--allow-any-host",
            "--auth-issuer",
            "https://login.example.com",
            "--auth-scopes=notes:read",
            "--remote",
            "https://notes.example.com/mcp",
        ],
    );
    // Name and version from `mcp_tools::cargo_package!()`: the example's package's, which this
    // test shares; the serverInfo name set after it.
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(entry["description"], env!("CARGO_PKG_DESCRIPTION"));
    let meta = &entry["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
    assert_eq!(meta["serverInfo"]["name"], "protected-notes");
    assert_eq!(meta["crate"]["name"], env!("CARGO_PKG_NAME"));
    assert_eq!(meta["crate"]["license"], env!("CARGO_PKG_LICENSE"));
    assert_eq!(meta["scopes"], serde_json::json!(["notes:admin", "notes:write"]));
    assert_eq!(meta["tools"]["names"], serde_json::json!(tool_names("protected")));

    let package = &entry["packages"][0];
    assert_eq!(
        package["transport"],
        serde_json::json!({"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp"})
    );
    let arguments = package["packageArguments"].as_array().unwrap();
    assert_eq!(arguments[0], serde_json::json!({"type": "positional", "value": "--http"}));
    assert_eq!(arguments[1], serde_json::json!({"type": "positional", "value": "0.0.0.0:8080"}));
    assert_eq!(argument(package, "--allow-any-host")["type"], "positional");
    let audience = argument(package, "--auth-audience");
    assert_eq!(audience["type"], "named");
    assert_eq!(audience["isRequired"], true, "tools with scopes need authorization");
    assert!(audience.get("default").is_none() && audience.get("value").is_none(), "the user's to give");
    assert_eq!(argument(package, "--auth-issuer")["default"], "https://login.example.com");
    assert_eq!(argument(package, "--auth-scopes")["default"], "notes:read");
    assert_eq!(argument(package, "--auth-token-file")["format"], "filepath");
    // OAuth: a client finds the authorization server through the server's metadata.
    assert!(entry["remotes"][0].get("headers").is_none(), "{entry:#}");
}

#[test]
fn a_port_is_the_users_to_choose_and_static_tokens_are_asked_for() {
    let entry = entry(
        "protected",
        &[
            "--name",
            "io.github.example/protected-notes",
            "--package",
            "npm=@example/protected-notes",
            "--http",
            "8080",
            "--path",
            "/notes",
            "--auth-token-file",
            "tokens.txt",
            "--remote",
            "https://notes.example.com/notes",
        ],
    );
    let package = &entry["packages"][0];
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(package["transport"]["url"], "http://127.0.0.1:{port}/notes");
    let port = &package["packageArguments"][1];
    assert_eq!(port["valueHint"], "port", "the URL's {{port}}");
    assert_eq!(port["default"], "8080");
    assert_eq!(argument(package, "--path")["value"], "/notes");
    assert_eq!(argument(package, "--auth-token-file")["default"], "tokens.txt");
    let header = &entry["remotes"][0]["headers"][0];
    assert_eq!(header["name"], "Authorization");
    assert_eq!(header["value"], "Bearer {token}");
    assert_eq!(header["isSecret"], true);
}

#[test]
fn the_schema_copy_refuses_what_the_registry_refuses() {
    // The validator is not vacuous: a name without a namespace, a long description and an
    // unknown transport are each refused.
    let good = entry(
        "everything",
        &["--name", "io.github.example/everything", "--description", "Every feature of MCP."],
    );
    for (pointer, bad) in [
        ("/name", Value::from("everything")),
        ("/description", Value::from("x".repeat(101))),
        ("/$schema", Value::from("not a uri")),
    ] {
        let mut entry = good.clone();
        *entry.pointer_mut(pointer).unwrap() = bad;
        assert!(!schema_problems(&entry).is_empty(), "{pointer} should be refused");
    }
}

/// `server-json ARGS` of `example` fails with exit code 2, saying each of `expected`.
fn refused(example: &str, args: &[&str], expected: &[&str]) {
    let mut all = vec!["server-json"];
    all.extend_from_slice(args);
    let output = run(example, &all);
    assert_eq!(output.status.code(), Some(2), "{example} {all:?} should fail");
    assert!(output.stdout.is_empty(), "nothing on stdout when it fails");
    let stderr = stderr(&output);
    for expected in expected {
        assert!(stderr.contains(expected), "{example} {all:?}: expected {expected:?} in:\n{stderr}");
    }
}

#[test]
fn missing_or_invalid_inputs_are_refused_with_the_fix() {
    // Nothing to go on: no name (no github.com repository) and no description.
    refused(
        "everything",
        &[],
        &[
            "server's name in the MCP registry is not set",
            "--name NAME",
            "io.github.USER/",
            "no description",
            "--description",
        ],
    );
    refused(
        "everything",
        &["--name", "everything", "--description", "x"],
        &["has no slash", "com.example/SERVER"],
    );
    refused("everything", &["--name", "example/everything", "--description", "x"], &["not reverse-DNS"]);
    let long = "x".repeat(101);
    refused(
        "protected",
        &["--name", "io.github.example/p", "--description", &long],
        &["101 characters", "at most 100"],
    );
    refused(
        "protected",
        &["--name", "io.github.example/p", "--package", "cargo=protected-notes"],
        &["crates.io is not a package registry", "mcpb=URL", "oci=IMAGE:TAG", "--remote"],
    );
    refused(
        "protected",
        &[
            "--name",
            "io.github.example/p",
            "--package",
            "mcpb=https://github.com/e/p/releases/download/v1/p.mcpb",
        ],
        &["--sha256 HEX"],
    );
    refused(
        "protected",
        &["--name", "io.github.example/p", "--package", "oci=ghcr.io/example/p"],
        &["tag or digest"],
    );
    refused("protected", &["--name", "io.github.example/p", "--stateless"], &["give --http ADDR before it"]);
    refused("protected", &["--sha256", SHA], &["goes after the --package"]);
    refused("protected", &["--frobnicate"], &["unknown option \"--frobnicate\""]);
}

#[test]
fn no_package_and_no_remote_is_a_warning() {
    let output = run("protected", &["server-json", "--name", "io.github.example/protected-notes"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("no package and no remote"), "{}", stderr(&output));
    let entry: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(schema_problems(&entry).is_empty());
}

#[test]
fn http_options_take_their_value_after_an_equals_sign_too() {
    // As the registry's named arguments may be written (`--flag=value`): the value reaches the
    // option (here refused by its check, before anything is served).
    let output = run("protected", &["--http", "127.0.0.1:0", "--path=/a//b"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--path \"/a//b\""), "{}", stderr(&output));
}

#[test]
fn the_name_is_derived_from_a_github_repository_and_long_tool_lists_are_counted() {
    use mcp_tools::server_json::{EnvVar, ServerJson};
    use mcp_tools::{Server, Tool, ToolResult};
    // 200 tools of 40-character names: their names do not fit the registry's 4 KB of _meta.
    let tools = (0..200).map(|i| {
        Tool::new(
            format!("tool_{i:03}_{}", "x".repeat(31)),
            "A tool.",
            serde_json::json!({"type": "object"}),
            |_, _| async { Ok(ToolResult::new().text("ok")) },
        )
    });
    let server = Server::builder()
        .inventory(false)
        .name("many-tools")
        .version("2.1.0")
        .tools(tools)
        .server_json(
            ServerJson::new()
                .repository("https://github.com/octo-org/many-tools.git")
                .description("Two hundred tools.")
                .package(mcp_tools::server_json::Package::pypi("many-tools"))
                .env_var(EnvVar::new("MANY_KEY", "The API key").required().secret()),
        )
        .build()
        .unwrap();
    let entry = server.server_json().unwrap();
    assert!(schema_problems(&entry).is_empty(), "{entry:#}");
    assert_eq!(entry["name"], "io.github.octo-org/many-tools");
    assert_eq!(
        entry["repository"],
        serde_json::json!({"url": "https://github.com/octo-org/many-tools", "source": "github"})
    );
    let package = &entry["packages"][0];
    assert_eq!(package["version"], "2.1.0");
    assert_eq!(
        package["environmentVariables"][0],
        serde_json::json!({"name": "MANY_KEY", "description": "The API key", "isRequired": true, "isSecret": true})
    );
    let tools = &entry["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["tools"];
    assert_eq!(tools["count"], 200);
    assert_eq!(tools["namesOmitted"], true);
    assert!(tools.get("names").is_none());

    let refused = Server::builder().inventory(false).build().unwrap().server_json().unwrap_err();
    assert_eq!(refused.problems().len(), 2, "{refused}");
    assert!(refused.to_string().contains("cargo_package!()"), "{refused}");
}
