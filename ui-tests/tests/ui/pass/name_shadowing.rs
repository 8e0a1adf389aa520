//! Local items named like what the generated code uses (`Result`, `Option`, `Some`, `serde`,
//! `schemars`, `core`, `std`, `mcp_tools`, `file!` …) do not break the expansion: it names only
//! absolute paths.

#![allow(dead_code, unused_macros, non_camel_case_types)]
// The shadowing traits below take the names the expansion could reach for, whatever clippy thinks of them.
#![allow(clippy::wrong_self_convention)]

/// The derived types live apart: schemars' own derive names `schemars::` relatively.
mod types {
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    pub struct Query {
        pub text: std::string::String,
    }
}

mod tools {
    use ::mcp_tools::{Args, ToolError, prompt, resource, tool};

    use crate::types::Query;

    #[derive(Debug)]
    pub struct MyError;
    impl ::std::fmt::Display for MyError {
        fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
            f.write_str("my error")
        }
    }
    impl ::std::error::Error for MyError {}

    type Result<T> = ::std::result::Result<T, MyError>;
    mod serde {}
    mod schemars {}
    mod serde_json {}
    mod inventory {}
    mod mcp_tools {}
    mod core {}
    mod std {}
    mod alloc {}
    mod __private {}
    struct Option;
    struct Some;
    struct None;
    struct Ok;
    struct Err;
    struct Box;
    struct Vec;
    struct String;
    struct Context;
    struct ToolResult;
    struct Deserialize;
    struct JsonSchema;
    struct HashMap;
    struct ResourceRequest;
    struct ResourceContents;
    struct PromptResult;
    struct FromStr;
    type Key = ();
    type __McpArgs = ();
    const __MCP_FIELDS: () = ();
    fn __mcp_handler() {}
    fn __mcp_input_schema() {}
    fn decode() {}
    fn finish() {}
    fn extract() {}
    macro_rules! file {
        () => {
            0
        };
    }
    macro_rules! line {
        () => {
            ""
        };
    }
    macro_rules! concat {
        () => {};
    }

    /// A blanket trait whose method names collide with those the generated code calls.
    trait Everywhere {
        fn as_str(&self) -> u8 {
            0
        }
        fn deserialize_map(&self) {}
        fn to_json(&self) {}
        fn write_str(&self) {}
        fn property(&self) {}
        fn finish(&self) {}
        fn next_arg(&self) {}
        fn missing(&self) {}
        fn extract(&self) {}
        fn required_state(&self) {}
        fn output_schema(&self) {}
        fn finish_result(&self) {}
        fn decode_args(&self) {}
        fn schema_of(&self) {}
        fn into_send(&self) {}
        fn into_meta(&self) {}
        fn into_result(&self) {}
        fn into_tool_error(&self) {}
        fn into_tool_result(&self) {}
        fn variable(&self) {}
        fn prompt_arg(&self) {}
        fn optional_prompt_arg(&self) {}
        fn contents(&self) {}
        fn contents_of_result(&self) {}
        fn messages(&self) {}
        fn messages_of_result(&self) {}
        fn into_contents(&self) {}
        fn into_prompt_result(&self) {}
        fn parse(&self) {}
    }
    impl<T: ?Sized> Everywhere for T {}

    /// A default value that does not serialize (the schema then shows no default).
    #[derive(::serde::Deserialize, ::schemars::JsonSchema)]
    #[schemars(crate = "::schemars")]
    pub struct Unit;

    /// Count words.
    #[tool(meta = ::serde_json::json!({"k": 1}))]
    pub async fn count(
        /// The text.
        text: ::std::string::String,
        #[tool(default = 3)] limit: u32,
        option: ::std::option::Option<u8>,
        #[tool(default = Unit)] unit: Unit,
        ctx: ::mcp_tools::Context,
        state: ::mcp_tools::State<u8>,
    ) -> Result<usize> {
        let _ = (limit, option, unit, ctx, state);
        ::std::result::Result::Ok(text.split_whitespace().count())
    }

    /// Echo a query.
    #[tool]
    pub fn echo(Args(query): Args<Query>) -> ::std::result::Result<Query, ToolError> {
        ::std::result::Result::Ok(query)
    }

    #[doc = "Add "]
    #[doc = ::core::concat!("two ", "numbers.")]
    #[tool(name = "add")]
    pub fn r#add(a: i64, b: i64) -> i64 {
        a + b
    }

    /// A row of a table.
    #[resource(uri = "db://{table}/{row}")]
    pub async fn row(
        table: ::std::string::String,
        row: u64,
        ctx: ::mcp_tools::Context,
        state: ::mcp_tools::State<u8>,
    ) -> Result<::std::string::String> {
        let _ = (ctx, state);
        ::std::result::Result::Ok(::std::format!("{table}/{row}"))
    }

    /// The tables.
    #[resource(uri = "db://tables", mime_type = "text/plain")]
    pub fn tables() -> &'static str {
        "users"
    }

    /// Describe a table.
    #[prompt]
    pub async fn r#describe(
        /// The table.
        table: ::std::string::String,
        limit: ::std::option::Option<u32>,
        ctx: ::mcp_tools::Context,
    ) -> ::std::result::Result<::mcp_tools::PromptMessage, ToolError> {
        let _ = (limit, ctx);
        ::std::result::Result::Ok(::mcp_tools::PromptMessage::user(table))
    }
}

fn main() {
    let server = mcp_tools::Server::builder().state(7_u8).build().unwrap();
    assert_eq!(server.tool_names(), ["add", "count", "echo"]);
    assert_eq!(server.resource_uris(), ["db://tables"]);
    assert_eq!(server.prompt_names(), ["describe"]);
    let count = server.tool("count").unwrap().input_schema;
    assert_eq!(count["properties"]["limit"]["default"], 3);
    assert!(count["properties"]["unit"].get("default").is_none());
    assert_eq!(count["required"], serde_json::json!(["text"]));
    assert_eq!(server.tool("add").unwrap().description, "Add \ntwo numbers.");
    let _ = (tools::count, tools::echo, tools::add, tools::row, tools::tables, tools::describe);
}
