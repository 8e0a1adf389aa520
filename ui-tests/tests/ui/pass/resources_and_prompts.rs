//! `#[resource]` and `#[prompt]` in every form they take, warning-free under strict lints;
//! `main` builds the server and checks what it serves.

#![deny(warnings, missing_docs, unused, unused_qualifications, unused_results, rust_2018_idioms)]
#![deny(unreachable_pub, single_use_lifetimes, trivial_casts, trivial_numeric_casts)]
#![deny(elided_lifetimes_in_paths, missing_debug_implementations, non_ascii_idents)]

use mcp_tools::{
    Context, PromptMessage, PromptResult, ResourceContents, Server, State, ToolError, prompt, resource,
};

/// Shared state.
#[derive(Debug)]
pub struct Library {
    /// Book titles.
    pub titles: Vec<String>,
}

/// The catalog, one title a line.
#[resource(uri = "library://catalog", title = "Catalog", mime_type = "text/plain")]
pub async fn catalog(library: State<Library>) -> String {
    library.titles.join("\n")
}

/// The cover of the library's guide.
#[resource(uri = "library://cover.png", name = "cover", mime_type = "image/png")]
fn cover() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

#[resource(uri = "library://about", description = "What the library is.")]
fn about() -> &'static str {
    "A small library."
}

/// One book, by its number (from 1).
#[resource(uri = "library://books/{number}", mime_type = "application/json")]
async fn book(number: usize, library: State<Library>, ctx: Context) -> Result<String, ToolError> {
    let _ = ctx.request_id();
    let title = library.titles.get(number.wrapping_sub(1)).ok_or_else(|| ToolError::new("no such book"))?;
    Ok(format!("{{\"title\": {title:?}}}"))
}

/// A page of a book.
#[resource(uri = "library://books/{book}/pages/{page}")]
fn page(#[resource(rename = "book")] book_number: u32, page: u16) -> std::io::Result<Vec<ResourceContents>> {
    let uri = format!("library://books/{book_number}/pages/{page}");
    Ok(vec![ResourceContents::text(uri, None, "…")])
}

/// A file of the library's shelf, at any depth.
#[resource(uri = "library://shelf/{+path}", mime_type = "text/plain", scopes = ["library:read"])]
fn shelf(path: String, auth: mcp_tools::Auth) -> String {
    let _ = auth.subject();
    path
}

/// Summarise a book.
#[prompt(title = "Summary")]
pub async fn summarise(
    /// The book's title.
    title: String,
    /// How many sentences (default 3).
    sentences: Option<u8>,
    library: State<Library>,
) -> Vec<PromptMessage> {
    let known = library.titles.contains(&title);
    let sentences = sentences.unwrap_or(3);
    vec![
        PromptMessage::user(format!("Summarise {title} in {sentences} sentences.")),
        PromptMessage::assistant(if known { "I know it." } else { "I will look it up." }),
    ]
}

/// Recommend a book.
#[prompt(name = "recommend")]
fn recommendation(
    #[prompt(rename = "genre")] kind: Option<String>,
    ctx: Context,
) -> Result<PromptResult, ToolError> {
    let _ = ctx.request_id();
    let kind = kind.unwrap_or_else(|| "any".to_owned());
    Ok(PromptResult::new(vec![PromptMessage::user(format!("Recommend a {kind} book."))])
        .description("A recommendation"))
}

/// A chapter; a `String` error is the message the client gets.
#[resource(uri = "library://chapters/{number}")]
fn chapter(number: u32) -> Result<String, String> {
    if number == 0 { Err("chapters start at 1".to_owned()) } else { Ok(format!("chapter {number}")) }
}

/// Quote a book; a `String` error is the message the client gets.
#[prompt]
fn quote(title: String) -> Result<String, String> {
    if title.is_empty() { Err("name a book".to_owned()) } else { Ok(format!("Quote {title}.")) }
}

#[prompt(description = "Say hello.")]
fn hello() -> &'static str {
    "Hello!"
}

mod reexported {
    pub(crate) mod framework {
        pub(crate) use ::mcp_tools;
    }

    use framework::mcp_tools::{prompt, resource};

    /// Through a re-export.
    #[resource(uri = "library://reexported", crate = "crate::reexported::framework::mcp_tools")]
    pub(crate) fn reexported() -> String {
        String::new()
    }

    /// Through a re-export.
    #[prompt(crate = "crate::reexported::framework::mcp_tools")]
    pub(crate) fn reexported_prompt() -> String {
        String::new()
    }
}

fn main() {
    let library = Library { titles: vec!["Dune".to_owned()] };
    let server = Server::builder().state(library).build().expect("the catalog is valid");
    assert_eq!(
        server.resource_uris(),
        ["library://about", "library://catalog", "library://cover.png", "library://reexported"]
    );
    assert_eq!(server.prompt_names(), ["hello", "quote", "recommend", "reexported_prompt", "summarise"]);
    // The functions stay callable as written.
    assert_eq!(about(), "A small library.");
    assert_eq!(cover().len(), 4);
    assert_eq!(hello(), "Hello!");
    assert_eq!(shelf("a/b.txt".to_owned(), mcp_tools::Auth::default()), "a/b.txt");
    assert_eq!(chapter(0), Err("chapters start at 1".to_owned()));
    assert_eq!(quote(String::new()), Err("name a book".to_owned()));
    let _ = (catalog, book, page, summarise, recommendation);
    let _ = (reexported::reexported(), reexported::reexported_prompt());
}
