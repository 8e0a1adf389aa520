//! Composition (feature `client`): other MCP servers' tools, resources, resource templates and
//! prompts served as this server's own, under a prefix ([`ServerBuilder::mount`]). Each
//! upstream is reached with the [client](crate::client): a command spawned over stdio, a
//! Streamable HTTP URL (2026-07-28, else a 2025-11-25 session), or a server in the same process.
//!
//! ```no_run
//! use mcp_tools::Server;
//! use mcp_tools::client::BearerToken;
//! use mcp_tools::compose::{Mount, Upstream};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .mount("files", Upstream::command("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]))
//!     .mount_with(
//!         Mount::new("docs", Upstream::http("https://docs.example.com/mcp").auth(BearerToken::new("…")))
//!             .scopes(["docs:read"]),
//!     )
//!     .connect()
//!     .await?;
//! // `files_read_text_file`, `docs_search`, resources `file://files//tmp/a.txt` …
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! **Names.** A tool or prompt `get` of the mount `files` is `files_get` (the separator is
//! [`Mount::separator`]; characters tool names do not allow become `_`); a resource or template
//! URI gets the prefix as its first segment (`mem://notes/1` → `mem://files/notes/1`); the URIs of
//! resource links and embedded resources in results, and the view a tool links (`_meta.ui`), are
//! rewritten the same way. Mounted tools carry the prefix as a tag, for deferred search. Two
//! items with one name (a mounted tool and a native one, two upstreams' prompts) fail
//! [`ServerBuilder::connect`] with an error naming both sides; after start-up, an upstream's new
//! item whose name is taken is left out and logged.
//!
//! **Calls.** A call of a mounted tool goes through this server's layers, scopes, timeouts and
//! transformations like a native one's, then to the upstream, which checks the arguments. Its
//! progress, its log messages (at the level the caller asked for) and its cancellation travel
//! both ways; the upstream's questions (sampling, elicitation, roots) are asked of the client
//! whose call caused them, in that client's revision: a request in a 2025-11-25 session, an
//! `input_required` round in 2026-07-28 (the call is then run again with the answer, as any
//! tool's). The call becomes a task (2026-07-28, the tasks extension) when the upstream's call
//! does, which it may only for a caller that declared the extension; its questions then come
//! through the task, its failure fails it, and cancelling it cancels the upstream's. A
//! 2025-11-25 caller's call is answered once the upstream's task ended. Over a pipe, a 2025-11-25 upstream's question names no call: with one call in
//! progress it is that call's; with several, it is refused. A resource read, a prompt and a
//! completion are forwarded the same way.
//!
//! **Changes.** An upstream's list changes (2025-11-25 notifications, a 2026-07-28 listen stream)
//! are followed: its items are listed again and this server's clients are told. An upstream that
//! cannot be reached is connected again with back-off (0.5 s, doubling to 30 s, and from 0.5 s
//! again once a connection has lasted 30 s); while it is down its tools are neither listed nor searched (a call fails at once, saying why and when the
//! next attempt is) and its resources and prompts are not listed.
//!
//! **Credentials, and the confused deputy.** An upstream's credentials are its own, configured
//! per upstream ([`Upstream::auth`], [`Upstream::header`], a command's environment). The token
//! a client presented to this server is not passed on unless asked for
//! ([`Upstream::pass_caller_token`]): it was issued for this server (its
//! audience), and a server that forwards it lends its callers' authority to whatever it calls. An
//! upstream that accepted it would be acting on a token not meant for it, and a caller could
//! reach through this server what it may not reach itself: the confused deputy. Which caller may
//! use which mounted tool is decided here, with [`Mount::scopes`] (and the layers); what the
//! upstream lets this server do is decided by the upstream's own credentials. To act on a user's
//! behalf upstream, give the upstream a token issued for it (token exchange, RFC 8693) in a
//! layer or an [`Authenticator`] of your own.
//!
//! [`ServerBuilder::mount`]: crate::ServerBuilder::mount
//! [`ServerBuilder::connect`]: crate::ServerBuilder::connect

pub(crate) mod mount;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::client::{Authenticator, Client, ClientBuilder, ClientError};

/// Makes the connection to an upstream (again, after it was lost).
pub(crate) type Connect =
    Arc<dyn Fn(ClientBuilder) -> BoxFuture<'static, Result<Client, ClientError>> + Send + Sync>;

/// Another MCP server, reached as a client: how to connect to it.
#[derive(Clone)]
pub struct Upstream {
    pub(crate) label: String,
    reach: Reach,
    /// Customizes the client of each connection (its name, timeouts…).
    pub(crate) client: Arc<dyn Fn(ClientBuilder) -> ClientBuilder + Send + Sync>,
    /// Callers' requests carry the caller's own token ([`Upstream::pass_caller_token`]).
    pub(crate) pass_caller_token: bool,
}

/// Where an upstream is.
#[derive(Clone)]
enum Reach {
    Command { program: String, args: Vec<String>, env: Vec<(String, String)>, dir: Option<PathBuf> },
    Http(String),
    Custom(Connect),
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream").field("label", &self.label).finish_non_exhaustive()
    }
}

impl Upstream {
    /// A server this process starts: `program` with `args`, speaking over its stdin and stdout
    /// (its stderr is this process's). Started again, with back-off, if it exits.
    pub fn command<I, S>(program: impl Into<String>, args: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let program: String = program.into();
        let args: Vec<String> = args.into_iter().map(Into::into).collect();
        let label =
            std::iter::once(program.clone()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ");
        Upstream {
            label,
            reach: Reach::Command { program, args, env: Vec::new(), dir: None },
            client: Arc::new(|builder| builder),
            pass_caller_token: false,
        }
    }

    /// A command's environment variable (on top of this process's environment).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Upstream {
        if let Reach::Command { env, .. } = &mut self.reach {
            env.push((name.into(), value.into()));
        }
        self
    }

    /// The directory a command runs in (default: this process's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Upstream {
        if let Reach::Command { dir: at, .. } = &mut self.reach {
            *at = Some(dir.into());
        }
        self
    }

    /// A server at a Streamable HTTP URL (2026-07-28 first, else a 2025-11-25 session).
    pub fn http(url: impl Into<String>) -> Upstream {
        let url: String = url.into();
        Upstream {
            label: url.clone(),
            reach: Reach::Http(url),
            client: Arc::new(|builder| builder),
            pass_caller_token: false,
        }
    }

    /// An upstream reached by `connect` (the client builder it gets is the mount's: its
    /// requests answer their callers' questions).
    pub fn custom(
        label: impl Into<String>,
        connect: impl Fn(ClientBuilder) -> BoxFuture<'static, Result<Client, ClientError>> + Send + Sync + 'static,
    ) -> Upstream {
        Upstream {
            label: label.into(),
            reach: Reach::Custom(Arc::new(connect)),
            client: Arc::new(|builder| builder),
            pass_caller_token: false,
        }
    }

    /// HTTP: the credentials this upstream's requests carry: its own (a [`BearerToken`], OAuth
    /// client credentials…). The token of the caller of this server is not passed on unless
    /// asked for with [`pass_caller_token`](Upstream::pass_caller_token) (see the module's
    /// documentation).
    ///
    /// [`BearerToken`]: crate::client::BearerToken
    pub fn auth(self, authenticator: impl Authenticator) -> Upstream {
        let authenticator: Arc<dyn Authenticator> = Arc::new(authenticator);
        self.with_client(move |builder| builder.auth_shared(authenticator.clone()))
    }

    /// HTTP: passes the access token this server's caller presented on to the upstream, on
    /// the requests made for that caller (tool calls, resource reads, prompts, and the task
    /// requests that follow them), in place of the upstream's own credentials, which then serve
    /// only this server's own requests (connecting, listing, following changes, and the
    /// argument completions it forwards, which carry no caller). A caller
    /// without a token (no authorization here, or over stdio) is refused before anything is
    /// sent upstream.
    ///
    /// Ask for this only when the upstream is meant to accept this server's tokens: it shares
    /// this server's authorization server and accepts this server's audience (its own checks
    /// then decide what each caller may do). Otherwise the upstream is a confused deputy's
    /// accomplice, or refuses every call: see the module's documentation, and prefer a token
    /// issued for the upstream (token exchange in an [`Authenticator`] or a layer, with
    /// [`AuthInfo::token`](crate::AuthInfo::token)). A 2025-11-25 upstream's session is opened
    /// with the upstream's own credentials; one that binds its sessions to the token that opened
    /// them refuses the callers' requests: such an upstream wants 2026-07-28. Over stdio and in
    /// process nothing carries a token, and this only refuses callers that have none.
    pub fn pass_caller_token(mut self) -> Upstream {
        self.pass_caller_token = true;
        self
    }

    /// HTTP: a header every request to this upstream carries.
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Upstream {
        let (name, value) = (name.into(), value.into());
        self.with_client(move |builder| builder.header(name.clone(), value.clone()))
    }

    /// How long a request to this upstream may take (default 5 minutes).
    pub fn request_timeout(self, timeout: Duration) -> Upstream {
        self.with_client(move |builder| builder.request_timeout(timeout))
    }

    /// Which revision to speak to this upstream (default: its newest).
    pub fn era(self, era: crate::client::EraChoice) -> Upstream {
        self.with_client(move |builder| builder.era(era))
    }

    fn with_client(mut self, f: impl Fn(ClientBuilder) -> ClientBuilder + Send + Sync + 'static) -> Upstream {
        let before = self.client.clone();
        self.client = Arc::new(move |builder| f(before(builder)));
        self
    }

    /// What it is, for logs and errors (the command line, or the URL).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Connects to it with `builder` (customized by this upstream's settings).
    pub(crate) fn connect(&self, builder: ClientBuilder) -> BoxFuture<'static, Result<Client, ClientError>> {
        let builder = (self.client)(builder);
        match &self.reach {
            Reach::Command { program, args, env, dir } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                if let Some(dir) = dir {
                    command.current_dir(dir);
                }
                Box::pin(builder.connect_stdio(command))
            }
            Reach::Http(url) => {
                let url = url.clone();
                Box::pin(async move { builder.connect_http(&url).await })
            }
            Reach::Custom(connect) => connect(builder),
        }
    }
}

/// One mounted upstream: its prefix and how its items are named and guarded.
#[derive(Clone, Debug)]
#[must_use]
pub struct Mount {
    pub(crate) prefix: String,
    pub(crate) upstream: Upstream,
    pub(crate) separator: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) required: bool,
    pub(crate) startup_timeout: Duration,
}

impl Mount {
    /// `upstream`'s items under `prefix`: tool `get` becomes `prefix_get`, prompt `p`
    /// `prefix_p`, resource `mem://a` `mem://prefix/a`. An empty prefix keeps the upstream's
    /// names.
    pub fn new(prefix: impl Into<String>, upstream: Upstream) -> Mount {
        Mount {
            prefix: prefix.into(),
            upstream,
            separator: "_".into(),
            scopes: Vec::new(),
            required: false,
            startup_timeout: Duration::from_secs(30),
        }
    }

    /// Whether the server may start without this upstream (default: it may; the upstream is
    /// then connected with back-off, and its items appear when it is). A required upstream that
    /// cannot be connected at start-up fails [`connect`](crate::ServerBuilder::connect).
    pub fn required(mut self, required: bool) -> Mount {
        self.required = required;
        self
    }

    /// How long [`connect`](crate::ServerBuilder::connect) waits for this upstream's first
    /// connection and listing (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Mount {
        self.startup_timeout = timeout;
        self
    }

    /// The problems of this mount's prefix and separator, if any.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.separator.chars().all(|c| matches!(c, '_' | '.' | '-')) || self.separator.is_empty() {
            problems.push(format!(
                "the separator of mount `{}` is {:?}: use `_`, `.` or `-` (the characters tool names allow)",
                self.prefix, self.separator
            ));
        }
        if let Some(c) =
            self.prefix.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            problems.push(format!(
                "mount prefix {:?} contains {c:?}: use only A-Z, a-z, 0-9, `_`, `.` and `-` (it starts tool names)",
                self.prefix
            ));
        }
        if self.prefix.len() > 64 {
            problems.push(format!("mount prefix {:?} is longer than 64 characters", self.prefix));
        }
        // What can never connect is a mistake now, not an upstream down for ever.
        match &self.upstream.reach {
            Reach::Http(url) => match reqwest::Url::parse(url) {
                Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => {}
                Ok(parsed) => problems.push(format!(
                    "the URL of mount `{}` is {url:?}: a Streamable HTTP endpoint is an http or https URL, not {}:",
                    self.prefix,
                    parsed.scheme()
                )),
                Err(e) => {
                    problems.push(format!("the URL of mount `{}` is {url:?}, which is not a URL: {e}", self.prefix))
                }
            },
            Reach::Command { program, .. } if program.trim().is_empty() => {
                problems.push(format!("the command of mount `{}` is empty", self.prefix));
            }
            _ => {}
        }
        problems
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What joins the prefix and a tool's or prompt's name (default `_`; `.` and `-` are the
    /// other characters tool names allow).
    pub fn separator(mut self, separator: impl Into<String>) -> Mount {
        self.separator = separator.into();
        self
    }

    /// Scopes a caller needs for every mounted tool, resource and prompt (over HTTP with
    /// authorization), on top of what the upstream itself checks.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Mount {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}
