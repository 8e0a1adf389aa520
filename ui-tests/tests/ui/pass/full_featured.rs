//! Every feature of the attribute at once; `main` builds the server and checks what it serves.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tools::{Args, Context, Server, State, ToolError, ToolResult, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Default)]
struct Hits {
    count: AtomicU64,
}

#[derive(Serialize, JsonSchema)]
struct Page {
    rows: Vec<String>,
    next: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Range {
    /// First value.
    start: i64,
    /// Last value (inclusive).
    end: i64,
}

/// Query the database.
///
/// Returns at most `limit` rows.
#[tool(
    name = "db.query",
    title = "Query the database",
    summary = "Run a read-only SQL query",
    tags = ["database", "sql"],
    annotations(read_only, destructive = false, idempotent, open_world = false, title = "Query"),
    meta = json!({"example.com/owner": "data-team"}),
    icons = ["https://example.com/db.png"],
    timeout = "30s",
    scopes = ["db:read"],
)]
async fn query(
    /// The SQL text.
    sql: String,
    /// Rows per page.
    #[tool(default = 50)]
    limit: u32,
    /// Where to start (absent = the beginning).
    cursor: Option<String>,
    /// The kind of rows.
    r#type: Option<String>,
    #[tool(rename = "dryRun", default = false)] dry_run: bool,
    hits: State<Hits>,
    ctx: Context,
    caller: mcp_tools::Auth,
) -> Result<Page, ToolError> {
    hits.count.fetch_add(1, Ordering::Relaxed);
    let _ = (sql, limit, cursor, r#type, dry_run, ctx.tool_name(), caller.subject());
    Ok(Page { rows: Vec::new(), next: None })
}

/// Parse a number; a `String` error is the message the model sees.
#[tool]
async fn parse_number(text: String) -> Result<i64, String> {
    text.parse().map_err(|_| format!("not a number: {text}"))
}

/// Sum a range.
#[tool(description = "Add the integers of a range.")]
fn sum(Args(range): Args<Range>) -> i64 {
    (range.start..=range.end).sum()
}

#[doc = concat!("Forget ", "everything.")]
#[tool(annotations(destructive))]
async fn forget() {}

/// Read a file.
#[tool]
fn read_file(path: String) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

/// A picture and a caption.
#[tool]
async fn picture() -> ToolResult {
    ToolResult::new().text("a dot").image([0x89, b'P', b'N', b'G'], "image/png")
}

/// Unit with an explicit return type.
#[tool]
#[allow(clippy::unused_unit)] // the case: `-> ()` written out
fn nothing() -> () {}

fn main() {
    let server = Server::builder().state(Hits::default()).build().expect("the catalog is valid");
    assert_eq!(
        server.tool_names(),
        ["db.query", "forget", "nothing", "parse_number", "picture", "read_file", "sum"],
    );

    let query = server.tool("db.query").expect("db.query is served");
    assert_eq!(query.title.as_deref(), Some("Query the database"));
    assert_eq!(query.description, "Query the database.\n\nReturns at most `limit` rows.");
    assert_eq!(query.summary, "Run a read-only SQL query");
    assert_eq!(query.tags, ["database", "sql"]);
    assert_eq!(query.annotations.read_only_hint, Some(true));
    assert_eq!(query.annotations.destructive_hint, Some(false));
    assert_eq!(query.annotations.title.as_deref(), Some("Query"));
    let schema = &query.input_schema;
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["sql", "limit", "cursor", "type", "dryRun"]);
    assert_eq!(schema["required"], json!(["sql"]));
    assert_eq!(schema["properties"]["limit"]["default"], json!(50));
    assert_eq!(schema["properties"]["sql"]["description"], json!("The SQL text."));
    assert!(query.output_schema.is_some());

    let sum = server.tool("sum").unwrap();
    assert_eq!(sum.description, "Add the integers of a range.");
    assert_eq!(sum.input_schema["required"], json!(["start", "end"]));
    assert_eq!(server.tool("forget").unwrap().description, "Forget everything.");
    assert_eq!(server.tool("read_file").unwrap().output_schema, None);
    assert_eq!(server.tool("picture").unwrap().output_schema, None);

    let list = server.tools_json();
    let query = list["tools"].as_array().unwrap().iter().find(|t| t["name"] == "db.query").unwrap();
    assert_eq!(query["_meta"]["example.com/owner"], "data-team");
    assert_eq!(query["icons"][0]["src"], "https://example.com/db.png");
}
