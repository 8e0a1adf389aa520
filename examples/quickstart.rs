//! A small notes server: create, search, list and delete notes.
//!
//! ```sh
//! cargo run --example quickstart                       # serve MCP over stdio
//! cargo run --example quickstart -- list               # print the tools
//! cargo run --example quickstart -- call create_note '{"title":"Milk","body":"2 litres"}'
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Mutex;

use mcp_tools::{Context, LogLevel, Server, State, ToolError, tool};
use schemars::JsonSchema;
use serde::Serialize;

/// The server's shared state: every note, by id.
#[derive(Default)]
struct NoteStore {
    inner: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    next_id: u64,
    notes: BTreeMap<u64, Note>,
}

/// A note.
#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    /// Its id, for `delete_note`.
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

/// What `search_notes` found.
#[derive(Serialize, JsonSchema)]
struct SearchResults {
    /// The matching notes, best first.
    notes: Vec<Note>,
    /// How many notes matched in all (more than shown when `limit` cut the list).
    total: usize,
}

/// Create a note.
///
/// Returns the stored note with its id.
#[tool(annotations(destructive = false, open_world = false))]
async fn create_note(
    /// A short title.
    title: String,
    /// The note's text (Markdown).
    body: String,
    /// Labels to find the note by.
    #[tool(default = Vec::new())]
    tags: Vec<String>,
    store: State<NoteStore>,
) -> Result<Note, ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::new("the title is empty: give the note a short title"));
    }
    let mut store = store.inner.lock().expect("store lock");
    store.next_id += 1;
    let note = Note { id: store.next_id, title, body, tags };
    store.notes.insert(note.id, note.clone());
    Ok(note)
}

/// Search notes for words in their title or body, optionally only those with a tag.
#[tool(annotations(read_only, idempotent, open_world = false))]
async fn search_notes(
    /// Words to look for (case-insensitive); empty matches every note.
    query: String,
    /// Only notes with this tag.
    tag: Option<String>,
    /// At most this many notes.
    #[tool(default = 10)]
    limit: usize,
    store: State<NoteStore>,
) -> SearchResults {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let store = store.inner.lock().expect("store lock");
    let mut scored: Vec<(usize, &Note)> = store
        .notes
        .values()
        .filter(|n| tag.as_ref().is_none_or(|t| n.tags.contains(t)))
        .filter_map(|n| {
            let text = format!("{} {}", n.title, n.body).to_lowercase();
            let hits = words.iter().filter(|w| text.contains(w.as_str())).count();
            (words.is_empty() || hits > 0).then_some((hits, n))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    SearchResults {
        total: scored.len(),
        notes: scored.into_iter().take(limit).map(|(_, n)| n.clone()).collect(),
    }
}

/// Delete a note by id. Deleting a note that does not exist is an error.
#[tool(annotations(destructive, idempotent, open_world = false))]
async fn delete_note(
    /// The note's id.
    id: u64,
    store: State<NoteStore>,
    ctx: Context,
) -> Result<String, ToolError> {
    let removed = store.inner.lock().expect("store lock").notes.remove(&id);
    match removed {
        Some(note) => {
            ctx.log(LogLevel::Info, format!("deleted note {id}"));
            Ok(format!("Deleted note {id} ({}).", note.title))
        }
        None => Err(ToolError::new(format!("no note with id {id}; search_notes lists the ids"))),
    }
}

fn main() -> ExitCode {
    Server::builder()
        .name("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("A notes store. Search before creating a note that may already exist.")
        .state(NoteStore::default())
        .run()
}
