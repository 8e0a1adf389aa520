//! What users build and return: errors, tool results and the [`ToolOutput`](result::ToolOutput)
//! conversion, the schema policy, tools, resources, prompts, app views, tasks, and the requests a
//! tool sends to its client. Values only: nothing here serves a request.

pub(crate) mod apps;
pub(crate) mod client_requests;
pub(crate) mod error;
pub(crate) mod limits;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod result;
pub mod schema;
pub(crate) mod task;
pub(crate) mod tool;
