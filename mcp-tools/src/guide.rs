//! The guide: the chapters behind the README, one page each. They are Markdown files in the
//! repository's `mcp-tools/guide/` folder (read them there on GitHub, or here), included in
//! these pages so that every Rust block in them is compiled, and run unless marked `no_run`, by
//! `cargo test` (chapters about an optional feature are compiled with that feature; the
//! workspace's tests turn all but `embeddings` on, and `scripts/test-embeddings.sh` that one).
//!
//! * [`tools`]: context, state, runtime tools, asking the client, resources, prompts.
//! * [`command_line`]: the command line every server gets, hosts, and the development loop.
//! * [`http`]: Streamable HTTP, its defaults and limits, your own axum router.
//! * [`auth`]: an OAuth 2.1 resource server, scopes, token verifiers.
//! * [`middleware`]: tower layers around every call; access log, limits, cache, OpenTelemetry.
//! * [`deferred`]: thousands of tools behind search / describe / call;
//!   `search_by_meaning` (feature `embeddings`): ranking by sentence embeddings.
//! * `openapi` (feature `openapi`): an OpenAPI document served as tools.
//! * `composition` (feature `client`): the gateway, mounting, transforming tools, the client.
//! * [`views`]: interactive views (MCP Apps).
//! * `skills` (feature `skills`): Agent Skills.
//! * [`publishing`]: `server.json` for the MCP registry.
//! * [`eras`]: the two protocol eras, tasks, error codes.
//! * [`deploying`]: limits, hostile clients, several instances behind a load balancer.
//! * [`troubleshooting`]: the usual first-hour problems.
//! * [`performance`]: what the benchmarks measure and found.
//! * [`repository`]: the repository's layout and what CI runs.

/// Tools, resources and prompts.
#[doc = include_str!("../guide/tools.md")]
pub mod tools {}

/// The command line every server gets.
#[doc = include_str!("../guide/command-line.md")]
pub mod command_line {}

/// Serving over HTTP.
#[doc = include_str!("../guide/http.md")]
pub mod http {}

/// Protecting a server (OAuth).
#[doc = include_str!("../guide/auth.md")]
pub mod auth {}

/// Middleware and observability.
#[doc = include_str!("../guide/middleware.md")]
pub mod middleware {}

/// Thousands of tools: deferred mode.
#[doc = include_str!("../guide/deferred.md")]
pub mod deferred {}

/// Search by meaning (feature `embeddings`).
#[cfg(feature = "embeddings")]
#[doc = include_str!("../guide/search-by-meaning.md")]
pub mod search_by_meaning {}

/// Serving an OpenAPI document (feature `openapi`).
#[cfg(feature = "openapi")]
#[doc = include_str!("../guide/openapi.md")]
pub mod openapi {}

/// Many servers behind one (feature `client`).
#[cfg(feature = "client")]
#[doc = include_str!("../guide/composition.md")]
pub mod composition {}

/// Interactive views (MCP Apps).
#[doc = include_str!("../guide/views.md")]
pub mod views {}

/// Agent Skills (feature `skills`).
#[cfg(feature = "skills")]
#[doc = include_str!("../guide/skills.md")]
pub mod skills {}

/// Publishing to the MCP registry.
#[doc = include_str!("../guide/publishing.md")]
pub mod publishing {}

/// Two protocol eras.
#[doc = include_str!("../guide/eras.md")]
pub mod eras {}

/// Limits, hostile clients and several instances.
#[doc = include_str!("../guide/deploying.md")]
pub mod deploying {}

/// Troubleshooting.
#[doc = include_str!("../guide/troubleshooting.md")]
pub mod troubleshooting {}

/// Performance.
#[doc = include_str!("../guide/performance.md")]
pub mod performance {}

/// The repository and CI.
#[doc = include_str!("../guide/repository.md")]
pub mod repository {}
