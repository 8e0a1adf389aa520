//! What users build and return: errors, tool results and the [`ToolOutput`](result::ToolOutput)
//! conversion, the schema policy, tools, resources, prompts, app views, tasks, the requests a
//! tool sends to its client, and the server's entry in the MCP registry (`server_json`). Values only: nothing here serves a request.

pub(crate) mod apps;
pub(crate) mod client_requests;
pub(crate) mod error;
pub(crate) mod limits;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod result;
pub mod schema;
pub mod server_json;
pub(crate) mod task;
pub(crate) mod tool;
