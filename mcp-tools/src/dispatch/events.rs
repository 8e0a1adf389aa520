//! The changes every connected client may hear about, broadcast from the server to its sessions
//! and listen streams.

use std::sync::Arc;

use serde_json::{Map, Value};

/// A change every connected client hears about.
#[derive(Clone, Debug)]
pub(crate) enum ServerEvent {
    ToolsChanged,
    ResourcesChanged,
    PromptsChanged,
    ResourceUpdated(String),
    /// A task's state changed: its id and what `tasks/get` now answers.
    TaskChanged(String, Arc<Map<String, Value>>),
}
