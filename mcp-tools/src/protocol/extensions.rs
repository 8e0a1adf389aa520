//! Protocol extensions (SEP-2133) on the wire: the identifiers of the official ones this crate
//! speaks, and what a peer declared under `capabilities.extensions`. Which extensions a server
//! offers, and the one check of a client's declaration, are `dispatch/extensions.rs`.

use serde_json::{Map, Value};

/// The tasks extension (SEP-2663, 2026-07-28): calls that keep running after their request is
/// answered with a task handle (`tasks/get`, `tasks/update`, `tasks/cancel`). A client declares
/// it to use them.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// MCP Apps (SEP-1865): interactive views (`ui://` resources, `text/html;profile=mcp-app`)
/// linked from tools. A host that renders them declares it with its `mimeTypes`.
pub const UI: &str = "io.modelcontextprotocol/ui";

/// The Skills extension (SEP-2640): Agent Skills served as `skill://` resources, with
/// `skills/list`, `skills/get` and `resources/directory/read`.
pub const SKILLS: &str = "io.modelcontextprotocol/skills";

/// The settings a peer declared for extension `id` in its capabilities (`{}` when it declared
/// the extension with none), or `None` when it did not declare it.
pub fn declared<'a>(capabilities: &'a Map<String, Value>, id: &str) -> Option<&'a Value> {
    capabilities.get("extensions").and_then(|extensions| extensions.get(id))
}
