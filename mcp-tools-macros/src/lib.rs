//! Procedural macros of [mcp-tools](https://docs.rs/mcp-tools). This crate is an implementation
//! detail: use the macros through `mcp_tools` (`use mcp_tools::{prompt, resource, tool};`),
//! whose documentation is the reference. The two crates are released in lockstep.

mod attr;
mod check;
mod ctxt;
mod docs;
mod expand;
mod kind;
mod signature;
#[cfg(feature = "skills")]
mod skills;
mod symbol;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool. Documented in `mcp_tools::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Turns a function into an MCP resource or resource template. Documented in
/// `mcp_tools::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::resource(args.into(), item.into()).into()
}

/// Turns a function into an MCP prompt. Documented in `mcp_tools::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::prompt(args.into(), item.into()).into()
}

/// Defines `fn main()` for a server binary. Documented in `mcp_tools::main`.
#[proc_macro]
pub fn main(input: TokenStream) -> TokenStream {
    expand::main(input.into()).into()
}

/// Embeds a folder of Agent Skills, checking each `SKILL.md`'s front matter. Documented in
/// `mcp_tools::skills!`.
#[cfg(feature = "skills")]
#[proc_macro]
pub fn skills(input: TokenStream) -> TokenStream {
    skills::expand(input.into()).into()
}
