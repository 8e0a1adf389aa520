//! The registry: what a server serves, built once and swapped whole on change. [`tools`]: the
//! tools, by name, with their `tools/list` pages; [`build`]: tool entries from `#[tool]`
//! functions and runtime tools; [`catalog`]: resources, prompts and completion.

pub(crate) mod build;
pub(crate) mod catalog;
pub(crate) mod tools;
