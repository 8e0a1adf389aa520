//! A notes server protected by OAuth: every request needs an access token with `notes:read`,
//! adding a note needs `notes:write`, purging them `notes:admin` (a caller without them does
//! not see those tools, and calling one gets the 403 step-up challenge). `whoami` shows the
//! identity a tool receives. scripts/interop.sh runs it against a real authorization server.
//!
//! ```sh
//! cargo run --example protected -- --http 127.0.0.1:8080 \
//!   --auth-issuer https://login.example.com --auth-audience http://127.0.0.1:8080/mcp \
//!   --auth-scopes notes:read
//! cargo run --example protected -- call whoami    # over stdio, scopes are not enforced
//! ```

use std::process::ExitCode;
use std::sync::Mutex;

use mcp_tools::{Auth, Server, State, ToolError, tool};
use schemars::JsonSchema;
use serde::Serialize;

/// Every note, in the order they were added.
#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<Note>>,
}

/// A note.
#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    /// Its text.
    text: String,
    /// Who added it (the token's subject; absent over stdio).
    author: Option<String>,
}

/// What `list_notes` answers.
#[derive(Serialize, JsonSchema)]
struct NoteList {
    notes: Vec<Note>,
}

/// Who is calling.
#[derive(Serialize, JsonSchema)]
struct Caller {
    /// The token's subject (`sub`).
    subject: Option<String>,
    /// The OAuth client the token was issued to.
    client_id: Option<String>,
    /// The granted scopes.
    scopes: Vec<String>,
    /// The token's issuer (`iss`).
    issuer: Option<String>,
}

/// List the notes.
#[tool(annotations(read_only, idempotent, open_world = false))]
async fn list_notes(notes: State<Notes>) -> NoteList {
    NoteList { notes: notes.notes.lock().expect("notes lock").clone() }
}

/// Add a note (needs the `notes:write` scope).
#[tool(scopes = ["notes:write"], annotations(destructive = false, open_world = false))]
async fn add_note(
    /// The note's text.
    text: String,
    notes: State<Notes>,
    auth: Auth,
) -> Result<Note, ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::new("the note is empty"));
    }
    let note = Note { text, author: auth.subject().map(str::to_owned) };
    notes.notes.lock().expect("notes lock").push(note.clone());
    Ok(note)
}

/// Delete every note (needs the `notes:admin` scope).
#[tool(scopes = ["notes:admin"], annotations(destructive, idempotent, open_world = false))]
async fn purge_notes(notes: State<Notes>) -> String {
    let purged = std::mem::take(&mut *notes.notes.lock().expect("notes lock")).len();
    format!("Purged {purged} notes.")
}

/// Who am I? The identity the access token carries.
#[tool(annotations(read_only, idempotent, open_world = false))]
async fn whoami(auth: Auth) -> Caller {
    let info = auth.info();
    Caller {
        subject: info.and_then(|i| i.subject.clone()),
        client_id: info.and_then(|i| i.client_id.clone()),
        scopes: info.map(|i| i.scopes.iter().cloned().collect()).unwrap_or_default(),
        issuer: info.and_then(|i| i.claims.get("iss")).and_then(|v| v.as_str()).map(str::to_owned),
    }
}

fn main() -> ExitCode {
    Server::builder()
        // Cargo's version and description (`protected server-json` lists them), another name.
        .cargo_package(mcp_tools::cargo_package!())
        .name("protected-notes")
        .instructions("A shared notes store. Adding needs notes:write, purging notes:admin.")
        .state(Notes::default())
        .run()
}
