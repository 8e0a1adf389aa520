//! Errors: [`ToolError`] (a tool call failed; the model is told) and [`BuildError`] (the server's
//! catalog is wrong; reported once at start-up).

use std::borrow::Cow;
use std::fmt;

/// A failed tool call. It becomes a result with `isError: true` whose text is the
/// [message](ToolError::message): what the model reads and can act on. Internal detail (the
/// [source](ToolError::source_error)) is logged on the server's stderr, never sent.
///
/// ```
/// use mcp_tools::ToolError;
/// // The model sees "no note with id 7"; nothing else.
/// let e = ToolError::new("no note with id 7");
/// assert_eq!(e.message(), "no note with id 7");
///
/// // `?` on any std error converts it; its Display is what the model sees.
/// fn parse(s: &str) -> Result<u32, ToolError> { Ok(s.parse::<u32>()?) }
/// assert_eq!(parse("x").unwrap_err().message(), "invalid digit found in string");
///
/// // Hide the detail from the model, keep it in the logs.
/// let io = std::io::Error::other("disk /dev/sda1 failed");
/// let e = ToolError::internal(io);
/// assert_eq!(e.message(), "the tool failed with an internal error");
/// assert!(e.source_error().unwrap().to_string().contains("sda1"));
/// ```
pub struct ToolError {
    message: Cow<'static, str>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    /// The client sent something unusable (a URI variable, a prompt argument that does not
    /// parse): answered as JSON-RPC "invalid params" where there is no `isError` result.
    invalid_params: bool,
    /// The caller lacks these scopes: answered with the authorization step-up (HTTP 403).
    required_scopes: Option<Vec<String>>,
}

impl ToolError {
    /// An error whose message the model sees.
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        ToolError { message: message.into(), source: None, invalid_params: false, required_scopes: None }
    }

    /// An internal failure: the model sees a generic message, the detail is only logged.
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        ToolError {
            message: Cow::Borrowed("the tool failed with an internal error"),
            source: Some(source.into()),
            invalid_params: false,
            required_scopes: None,
        }
    }

    /// The caller's access token lacks scopes this call needs (decided from its arguments, say:
    /// deleting another user's note needs `notes:admin`). Over HTTP with authorization the
    /// request is answered 403 with the step-up challenge naming `scopes` (all the call needs),
    /// so the client can obtain them and retry; elsewhere it is an ordinary failed call.
    ///
    /// ```
    /// use mcp_tools::ToolError;
    /// let e = ToolError::insufficient_scope(["notes:admin"]);
    /// assert_eq!(e.required_scopes(), Some(&["notes:admin".to_owned()][..]));
    /// ```
    pub fn insufficient_scope<I: IntoIterator<Item = S>, S: Into<String>>(scopes: I) -> Self {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        let message = format!("this call needs the scopes `{}`", scopes.join(" "));
        ToolError { required_scopes: Some(scopes), ..Self::new(message) }
    }

    /// The scopes of an [`insufficient_scope`](Self::insufficient_scope) error.
    pub fn required_scopes(&self) -> Option<&[String]> {
        self.required_scopes.as_deref()
    }

    /// An error in what the client sent (see the `invalid_params` field).
    pub(crate) fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        ToolError { invalid_params: true, ..Self::new(message) }
    }

    pub(crate) fn is_invalid_params(&self) -> bool {
        self.invalid_params
    }

    /// Attaches internal detail (logged, not sent) to an error.
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        self.source = Some(source.into());
        self
    }

    /// The message the model sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The internal detail, if any.
    pub fn source_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

/// Any error type converts (with `?`): every `std::error::Error + Send + Sync`, `anyhow::Error`
/// and `eyre::Report` (both convert into a boxed error), a `Box<dyn Error + Send + Sync>`, and a
/// `String` or `&str` message. The message is the error and its causes, outermost first
/// (`reading config.toml: No such file or directory`), like anyhow's `{:#}`.
impl<E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>> From<E> for ToolError {
    fn from(error: E) -> Self {
        let error: Box<dyn std::error::Error + Send + Sync + 'static> = error.into();
        ToolError {
            message: Cow::Owned(chain(&*error)),
            source: Some(error),
            invalid_params: false,
            required_scopes: None,
        }
    }
}

/// An error's message followed by its causes' (each once: a cause whose text the message
/// already ends with is not repeated).
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !text.is_empty() && !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    message
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolError");
        d.field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", source);
        }
        d.finish()
    }
}

/// Conversion of a `#[tool]` function's error type into a [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a #[tool] function",
    label = "this error type",
    note = "return `Result<T, mcp_tools::ToolError>` (for a message: `Err(ToolError::new(\"...\"))`), or use an error type implementing `std::error::Error + Send + Sync + 'static`, `anyhow::Error`, or anything else that converts into `Box<dyn std::error::Error + Send + Sync>`"
)]
pub trait IntoToolError {
    /// Converts the error.
    fn into_tool_error(self) -> ToolError;
}

// `do_not_recommend`: an unsuitable type is reported with `IntoToolError`'s message rather than
// with whatever `From` impl rustc tried last (e.g. "`dyn Error` has no size" for a boxed error).
#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// A mistake in the server's catalog or configuration, found when the server is built.
/// All problems are collected, so one start-up shows every one of them.
#[derive(Debug, thiserror::Error)]
#[error("the MCP server could not start:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    pub(crate) fn new(problems: Vec<String>) -> Self {
        BuildError { problems }
    }
    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}
