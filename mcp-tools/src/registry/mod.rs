//! The registry: what a server serves, built once and swapped whole on change. [`tools`]: the
//! tools, by name, with their `tools/list` pages; [`build`]: tool entries from `#[tool]`
//! functions and runtime tools; [`explain`]: invalid arguments walked against the advertised
//! schema and explained; [`catalog`]: resources, prompts and completion.

pub(crate) mod build;
pub(crate) mod catalog;
pub(crate) mod explain;
pub(crate) mod tools;
