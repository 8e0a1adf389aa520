//! # mcp-tools
//!
//! Write [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust with as little
//! code as possible: annotate an `async fn` with [`#[tool]`](macro@tool), and the ready-made
//! command line serves it over stdio.
//!
//! ```no_run
//! use mcp_tools::{tool, ToolError};
//!
//! /// Add two numbers.
//! #[tool(annotations(read_only, idempotent))]
//! async fn add(/// the first term
//!              a: i64,
//!              /// the second term
//!              b: i64) -> Result<i64, ToolError> {
//!     a.checked_add(b).ok_or_else(|| ToolError::new("the sum overflows"))
//! }
//!
//! mcp_tools::main!();
//! ```
//!
//! The attribute derives the input schema from the parameters and the output schema from the
//! return type, checks the declaration at compile time, and registers the tool; the runtime
//! collects every `#[tool]` of the binary (through [`inventory`](https://docs.rs/inventory)),
//! validates the catalog at start-up and speaks JSON-RPC on stdin/stdout.
//!
//! * [`#[tool]`](macro@tool): the attribute reference, with what it expands to.
//! * [`#[resource]`](macro@resource) and [`#[prompt]`](macro@prompt): resources (and resource
//!   templates) clients read by URI, and prompts users pick; [`Resource`], [`ResourceTemplate`]
//!   and [`Prompt`] build them at run time.
//! * [`Server`] / [`ServerBuilder`]: server options, shared state, runtime tools, the command line.
//! * [`Tool`]: a tool built at run time from a JSON schema and a closure.
//! * [`Context`] / [`State`]: what a handler can ask of its request (progress, logging,
//!   cancellation, client info, shared state).
//! * [`ToolResult`], [`ToolError`], [`ToolOutput`]: what a handler returns.
//! * [`testing::TestClient`]: call tools in-process from your own tests.
//! * [`deferred`]: catalogs of thousands of tools behind search / describe / call meta-tools.
//! * [`HttpOptions`]: the Streamable HTTP transport (`--http`, or mount it in an axum router).
//! * [`middleware`]: tower layers around every tool call (and list filters), built-in ones.
//! * [`skills`](mod@skills): Agent Skills (`SKILL.md` folders) served as the Skills extension
//!   says, from a folder or embedded with [`skills!`]; [`extensions`] names the extensions served.
//!
//! * `auth` (feature): OAuth 2.1 authorization for the HTTP transport, per-tool scopes.
//! * `openapi` (feature): an HTTP API described by OpenAPI 3.0/3.1, one tool per operation.
//!
//! ```toml
//! [dependencies]
//! # Not on crates.io yet (`mcp-tools` there is another project): a clone of the repository, by path.
//! # Features: "auth", "openapi", "client", "otel", "rate-limit", "cache", "embeddings", "redis".
//! mcp-tools-rs = { path = "../mcp-tools/mcp-tools" }  # once published: mcp-tools-rs = "0.1"
//! serde = { version = "1", features = ["derive"] }    # the same major versions as mcp-tools
//! schemars = "1"                                      # (not 0.8)
//! ```
//!
//! Cargo features: `http` (default) is the Streamable HTTP transport; `skills` (default) serves
//! Agent Skills (`ServerBuilder::skills`, `skills!`; YAML front matter); `auth` makes it an OAuth
//! resource server (`HttpOptions::authorization`, `#[tool(scopes = [...])]`); `openapi` serves
//! an OpenAPI document's operations as tools (`openapi::OpenApi`); `embeddings` adds
//! `deferred::SentenceEmbedder`, sentence embeddings on the CPU for
//! [`deferred::HybridRanker`] (deferred search by meaning as well as by words); `redis` keeps
//! tasks in Redis, shared by several instances (`store::Redis`, `--redis URL`). The legacy
//! HTTP+SSE transport of 2024-11-05 is not served.
//!
//! `#[tool]` functions in a library crate are served by a binary that names the library
//! (`mcp_tools::main!()` does for the package's own); otherwise the linker leaves them out and
//! the server warns that it has nothing to serve.

#![warn(missing_docs, missing_debug_implementations)]
// The documentation links to items of optional features (`HttpOptions`, `skills`, ...): they
// resolve in the documentation as published (docs.rs builds every feature, see Cargo.toml); a
// build without those features renders them as plain text rather than failing.
#![cfg_attr(not(all(feature = "http", feature = "skills")), allow(rustdoc::broken_intra_doc_links))]

// The layers, lowest first; a file imports only its own layer or lower (tests/layers.rs checks
// it). See ARCHITECTURE.md.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
#[cfg(feature = "auth")]
pub mod auth;
mod cli;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod compose;
mod context;
pub mod deferred;
mod dev;
mod dispatch;
#[cfg(any(feature = "auth", feature = "client", feature = "otel"))]
mod fetch_error;
pub mod middleware;
mod model;
#[cfg(feature = "openapi")]
pub mod openapi;
mod protocol;
mod registry;
mod server;
#[cfg(feature = "skills")]
pub mod skills;
#[cfg(feature = "redis")]
pub mod store;
pub mod testing;
pub mod transform;
mod transport;

pub use context::auth::{Auth, AuthInfo};
pub use context::link::ClientError;
pub use context::{Context, FromContext, HttpParts, State};
pub use dispatch::bus::{Bus, BusError, BusMessage, ListKind, LocalBus};
pub use model::apps::{APP_MIME_TYPE, AppView, SKYBRIDGE_MIME_TYPE, Widget};
pub use model::client_requests::{Elicitation, ElicitationResponse, Root, SamplingRequest, SamplingResponse};
pub use model::error::{BuildError, ToolError};
pub use model::limits::Limits;
pub use model::prompt::{IntoPromptResult, Prompt, PromptArgument, PromptMessage, PromptResult};
pub use model::resource::{IntoContents, Resource, ResourceContents, ResourceRequest, ResourceTemplate};
pub use model::result::{Content, EmbeddedResource, ToolOutput, ToolResult};
#[doc(inline)]
pub use model::schema;
#[doc(inline)]
pub use model::server_json;
pub use model::task::{MemoryTaskStore, TaskRecord, TaskStatus, TaskStore, TaskStoreError, TaskSupport};
pub use model::tool::{Annotations, Args, Icon, Tool};
pub use protocol::extensions;
pub use protocol::messages::LogLevel;
pub use protocol::{Era, Implementation, LATEST_PROTOCOL_VERSION, RequestId, SUPPORTED_PROTOCOL_VERSIONS};
pub use registry::catalog::{CompletionRef, CompletionRequest};
pub use server::{Server, ServerBuilder, ToolInfo};
#[cfg(feature = "http")]
pub use transport::http::options::HttpOptions;

/// The schemars (1.x) that mcp-tools derives schemas with. Argument and return types must derive
/// `JsonSchema` from this same major version: with `schemars = "0.8"` in your `Cargo.toml`,
/// `#[derive(JsonSchema)]` implements another crate's trait and the type is refused.
pub use schemars;
/// The serde (1.x) that mcp-tools decodes arguments and encodes results with.
pub use serde;
/// The serde_json that mcp-tools speaks JSON with.
pub use serde_json;

/// Turns an `async fn` into an MCP tool. See the [attribute reference](crate::docs::tool_attribute).
pub use mcp_tools_macros::tool;

/// Turns a function into an MCP resource (a fixed URI) or resource template (a URI with
/// `{variables}`, each a parameter of the function). See the
/// [attribute reference](crate::docs::resource_attribute).
///
/// ```
/// use mcp_tools::{resource, ToolError};
///
/// /// The release notes.
/// #[resource(uri = "docs://release-notes", mime_type = "text/markdown")]
/// async fn release_notes() -> &'static str {
///     "# 1.0\n\nFirst release."
/// }
///
/// /// One user's profile, as JSON.
/// #[resource(uri = "users://{id}/profile", mime_type = "application/json")]
/// async fn profile(id: u32) -> Result<String, ToolError> {
///     if id == 0 {
///         return Err(ToolError::new("user 0 does not exist"));
///     }
///     Ok(format!(r#"{{"id": {id}}}"#))
/// }
/// ```
pub use mcp_tools_macros::resource;

/// Turns a function into an MCP prompt whose arguments are the function's parameters. See the
/// [attribute reference](crate::docs::prompt_attribute).
///
/// ```
/// use mcp_tools::{prompt, PromptMessage};
///
/// /// Ask for a code review.
/// #[prompt(title = "Code review")]
/// async fn review(
///     /// The code to review.
///     code: String,
///     /// What to focus on (default: everything).
///     focus: Option<String>,
/// ) -> Vec<PromptMessage> {
///     let focus = focus.unwrap_or_else(|| "everything".to_owned());
///     vec![PromptMessage::user(format!("Review this code, focusing on {focus}:\n\n{code}"))]
/// }
/// ```
pub use mcp_tools_macros::prompt;

pub mod docs;

pub mod guide;

/// What Cargo says of the package being compiled, as a
/// [`CargoPackage`](server_json::CargoPackage) for
/// [`ServerBuilder::cargo_package`]: its name, version, description, repository, homepage and
/// licence (`CARGO_PKG_*`, read where the macro is written, so the server's package's and not
/// mcp-tools'). [`main!`] passes it; a `main` of your own does with
/// `.cargo_package(mcp_tools::cargo_package!())`.
///
/// ```
/// let package = mcp_tools::cargo_package!();
/// assert_eq!(package.version, env!("CARGO_PKG_VERSION"));
/// ```
#[macro_export]
macro_rules! cargo_package {
    () => {
        $crate::server_json::CargoPackage::__from_env([
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION"),
            ::core::env!("CARGO_PKG_DESCRIPTION"),
            ::core::env!("CARGO_PKG_REPOSITORY"),
            ::core::env!("CARGO_PKG_HOMEPAGE"),
            ::core::env!("CARGO_PKG_LICENSE"),
        ])
    };
}

/// The README's code blocks, compiled as doctests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// Defines `fn main()` for a server binary whose tools are all `#[tool]` functions.
///
/// ```no_run
/// # use mcp_tools::tool;
/// /// Say hello.
/// #[tool]
/// async fn hello(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// mcp_tools::main!();
/// ```
///
/// expands to
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     mcp_tools::Server::builder()
///         .cargo_package(mcp_tools::cargo_package!())
///         .run()
/// }
/// ```
///
/// which gives the binary the ready-made command line (`--help`, `list`, `call`, `server-json`,
/// and stdio serving with no arguments), named and versioned as its Cargo package. Write that `main` yourself to add shared state or runtime tools.
///
/// In a binary of a package that also has a library (`src/lib.rs`), it also names that library
/// (`extern crate my_library as _;`): `#[tool]` functions defined there are then linked in and
/// served. (A `main` you write yourself needs `use my_library as _;` for that, unless it uses
/// something of the library anyway.)
pub use mcp_tools_macros::main;

/// Embeds a folder of Agent Skills in the binary, for
/// [`ServerBuilder::skills`](crate::ServerBuilder::skills) (see [`skills`](mod@crate::skills)):
/// the path is relative to the crate's root (where its `Cargo.toml` is), like the HTML of
/// `#[tool(widget = ...)]`. Every `SKILL.md`'s front matter is checked at compile time: a
/// problem is a compile error naming the file and the field. The files are embedded with
/// `include_bytes!`, so editing one rebuilds the binary; adding or removing one does not by
/// itself (touch the file that calls `skills!`, or add `println!("cargo:rerun-if-changed=skills");`
/// to a build script).
///
/// ```rust,standalone_crate
/// # fn main() -> Result<(), mcp_tools::BuildError> {
/// // guide/skills/release-notes/SKILL.md, guide/skills/release-notes/references/style.md
/// let server = mcp_tools::Server::builder().skills(mcp_tools::skills!("guide/skills")).build()?;
/// assert!(server.resource_uris().contains(&"skill://release-notes/SKILL.md".to_owned()));
/// # Ok(()) }
/// ```
#[cfg(feature = "skills")]
pub use mcp_tools_macros::skills;
