//! Procedural macros of [mcp-tools](https://docs.rs/mcp-tools). This crate is an implementation
//! detail: use the macros through `mcp_tools` (`use mcp_tools::tool;`), whose documentation is
//! the reference. The two crates are released in lockstep.

mod attr;
mod check;
mod ctxt;
mod docs;
mod expand;
mod signature;
mod symbol;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool. Documented in `mcp_tools::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}
