//! The keywords `#[tool(...)]`, `#[resource(...)]` and `#[prompt(...)]` understand, in one place.

pub const NAME: &str = "name";
pub const TITLE: &str = "title";
pub const DESCRIPTION: &str = "description";
pub const SUMMARY: &str = "summary";
pub const TAGS: &str = "tags";
pub const ANNOTATIONS: &str = "annotations";
pub const META: &str = "meta";
pub const ICONS: &str = "icons";
pub const CRATE: &str = "crate";
pub const WIDGET: &str = "widget";
pub const DEFER: &str = "defer";
pub const TASK: &str = "task";
pub const TIMEOUT: &str = "timeout";
pub const SCOPES: &str = "scopes";
pub const URI: &str = "uri";
pub const MIME_TYPE: &str = "mime_type";

pub const TOOL_ARGS: &[&str] = &[
    NAME,
    TITLE,
    DESCRIPTION,
    SUMMARY,
    TAGS,
    ANNOTATIONS,
    META,
    ICONS,
    DEFER,
    TASK,
    TIMEOUT,
    SCOPES,
    CRATE,
    WIDGET,
];

/// The values of `task = "..."`.
pub const TASK_VALUES: &[&str] = &["optional", "required"];
pub const RESOURCE_ARGS: &[&str] = &[URI, NAME, TITLE, DESCRIPTION, MIME_TYPE, SCOPES, CRATE];
pub const PROMPT_ARGS: &[&str] = &[NAME, TITLE, DESCRIPTION, SCOPES, CRATE];

pub const READ_ONLY: &str = "read_only";
pub const DESTRUCTIVE: &str = "destructive";
pub const IDEMPOTENT: &str = "idempotent";
pub const OPEN_WORLD: &str = "open_world";

pub const ANNOTATION_ARGS: &[&str] = &[READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, TITLE];

pub const HTML: &str = "html";
pub const INVOKING: &str = "invoking";
pub const INVOKED: &str = "invoked";
pub const ACCESSIBLE: &str = "accessible";
pub const VISIBILITY: &str = "visibility";
pub const CSP: &str = "csp";
pub const PREFERS_BORDER: &str = "prefers_border";
pub const CONNECT: &str = "connect";
pub const RESOURCES: &str = "resources";

pub const WIDGET_ARGS: &[&str] =
    &[NAME, HTML, INVOKING, INVOKED, ACCESSIBLE, VISIBILITY, CSP, PREFERS_BORDER];
pub const CSP_ARGS: &[&str] = &[CONNECT, RESOURCES];

pub const DEFAULT: &str = "default";
pub const RENAME: &str = "rename";
pub const PARAM_ARGS: &[&str] = &[DEFAULT, RENAME];

/// "`a`, `b` or `c`", for messages.
pub fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
