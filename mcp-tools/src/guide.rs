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

/// One chapter: its Markdown file, after link definitions that send the chapters' links to
/// each other (`[auth]: auth.md` on GitHub) to these pages instead; the first definition of a
/// label wins, so the file's own are used only where these are absent.
macro_rules! chapter {
    ($(#[$attr:meta])* $name:ident, $file:literal) => {
        $(#[$attr])*
        #[doc = ""]
        #[doc = "[auth]: crate::guide::auth\n[eras]: crate::guide::eras\n[http]: crate::guide::http\n[publishing]: crate::guide::publishing\n"]
        #[cfg_attr(feature = "embeddings", doc = "[search-by-meaning]: crate::guide::search_by_meaning\n")]
        #[doc = ""]
        #[doc = include_str!($file)]
        pub mod $name {}
    };
}

chapter! {
    /// Tools, resources and prompts.
    tools, "../guide/tools.md"
}

chapter! {
    /// The command line every server gets.
    command_line, "../guide/command-line.md"
}

chapter! {
    /// Serving over HTTP.
    http, "../guide/http.md"
}

chapter! {
    /// Protecting a server (OAuth).
    auth, "../guide/auth.md"
}

chapter! {
    /// Middleware and observability.
    middleware, "../guide/middleware.md"
}

chapter! {
    /// Thousands of tools: deferred mode.
    deferred, "../guide/deferred.md"
}

chapter! {
    /// Search by meaning (feature `embeddings`).
    #[cfg(feature = "embeddings")]
    search_by_meaning, "../guide/search-by-meaning.md"
}

chapter! {
    /// Serving an OpenAPI document (feature `openapi`).
    #[cfg(feature = "openapi")]
    openapi, "../guide/openapi.md"
}

chapter! {
    /// Many servers behind one (feature `client`).
    #[cfg(feature = "client")]
    composition, "../guide/composition.md"
}

chapter! {
    /// Interactive views (MCP Apps).
    views, "../guide/views.md"
}

chapter! {
    /// Agent Skills (feature `skills`).
    #[cfg(feature = "skills")]
    skills, "../guide/skills.md"
}

chapter! {
    /// Publishing to the MCP registry.
    publishing, "../guide/publishing.md"
}

chapter! {
    /// Two protocol eras.
    eras, "../guide/eras.md"
}

chapter! {
    /// Limits, hostile clients and several instances.
    deploying, "../guide/deploying.md"
}

chapter! {
    /// Troubleshooting.
    troubleshooting, "../guide/troubleshooting.md"
}

chapter! {
    /// Performance.
    performance, "../guide/performance.md"
}

chapter! {
    /// The repository and CI.
    repository, "../guide/repository.md"
}
