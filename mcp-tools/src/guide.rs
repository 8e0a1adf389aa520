//! The guide: the chapters behind the README, one page each. They live as Markdown in the
//! repository's `mcp-tools/guide/` folder (readable on GitHub) and are included here, so every
//! Rust block in them is compiled (and run, unless marked `no_run`) by `cargo test --doc`.

/// Publishing to the MCP registry: `server.json` from the command line.
#[doc = include_str!("../guide/publishing.md")]
pub mod publishing {}

/// Agent Skills: serving a folder of skills, and reading them as a client.
#[cfg(feature = "skills")]
#[doc = include_str!("../guide/skills.md")]
pub mod skills {}
