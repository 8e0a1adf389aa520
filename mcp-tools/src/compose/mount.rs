//! A mount at run time: the connection to one upstream, kept up by a supervisor (connect, list,
//! publish, follow the upstream's list changes, reconnect with back-off when it is lost), and the
//! handlers of the upstream's tools, resources, templates and prompts, which forward calls with
//! their progress, logs, questions and cancellation.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Mount;
use crate::client::{CallOptions, Client, ClientError, Question, ServerNotification};
use crate::context::Context;
use crate::context::link::ClientError as LinkError;
use crate::model::error::ToolError;
use crate::model::prompt::{Prompt, PromptArgument, PromptMessage, PromptResult};
use crate::model::resource::{
    ItemCompleter, Resource, ResourceContents, ResourceRequest, ResourceTemplate, UriTemplate,
};
use crate::model::result::{Content, ToolResult};
use crate::model::task::TaskSupport;
use crate::model::tool::{Annotations, Icon, Tool, check_name};
use crate::protocol::extensions::TASKS;
use crate::protocol::messages::LogLevel;
use crate::protocol::stateless::{MISSING_CLIENT_CAPABILITY, SERVER_INFO_KEY};
use crate::protocol::{Era, Implementation};
use crate::registry::build::runtime_entry;
use crate::registry::catalog::{Items, Keys};
use crate::registry::tools::ToolEntry;
use crate::transform::{self, ToolTransform};

/// The first wait before connecting again, doubled after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a connection must last for the back-off to start again from [`FIRST_BACKOFF`].
const STABLE: Duration = Duration::from_secs(30);
/// How long list changes are gathered before the upstream is listed again.
const SETTLE: Duration = Duration::from_millis(50);
/// How long a call that failed with its connection waits for the supervisor to hide the
/// upstream's tools before it answers ([`Link::until_hidden`]): a bound, never reached unless the
/// server is going away.
const HIDE_WAIT: Duration = Duration::from_millis(500);

/// What a server lets its mounts change.
pub(crate) trait Target: Send + Sync + 'static {
    /// In one change: replaces the tools named in `tools.0` with `tools.1`, and the catalog
    /// items `items.0` names with `items.1` (`None`: that part is unchanged). Returns what was
    /// left out because another part of the server has its name ("tool `x`"), or `None` when
    /// the server is gone.
    fn swap(
        &self,
        tools: Option<(&HashSet<String>, Vec<Arc<ToolEntry>>)>,
        items: Option<(&Keys, Items)>,
    ) -> Option<Vec<String>>;
    /// Tells the server's clients subscribed to `uri` that it changed.
    fn resource_updated(&self, uri: String);
}

/// Who has which name among a server's mounts ("tool `x`" → "upstream `files` (npx …)"), to
/// name both sides of a clash.
pub(crate) type Owners = Arc<Mutex<HashMap<String, String>>>;

/// How a mount's first connection went.
#[derive(Debug)]
pub(crate) enum Started {
    /// Connected and published: the items left out because their names are taken (both sides
    /// named), and the local names of the upstream's tools before any transformation.
    Published { clashes: Vec<String>, tools: Vec<String> },
    /// Not connected (it is tried again with back-off).
    Failed(String),
}

/// The connection to one upstream, shared by the supervisor and the handlers.
pub(crate) struct Link {
    prefix: String,
    separator: String,
    label: String,
    client: ArcSwapOption<Client>,
    /// Why it is not connected, and when the next attempt is.
    down: Mutex<(String, Option<Instant>)>,
    /// Callers' requests carry the caller's own token ([`Upstream::pass_caller_token`]).
    ///
    /// [`Upstream::pass_caller_token`]: super::Upstream::pass_caller_token
    pass_caller_token: bool,
    /// How many lost connections the supervisor has taken out of the lists and the search
    /// ([`hidden`](Link::hidden)), and the waiters it tells each time.
    hides: AtomicU64,
    hid: tokio::sync::Notify,
}

impl Link {
    fn new(mount: &Mount) -> Link {
        Link {
            prefix: mount.prefix.clone(),
            separator: mount.separator.clone(),
            label: mount.upstream.label.clone(),
            client: ArcSwapOption::empty(),
            down: Mutex::new(("it has not connected yet".into(), None)),
            pass_caller_token: mount.upstream.pass_caller_token,
            hides: AtomicU64::new(0),
            hid: tokio::sync::Notify::new(),
        }
    }

    /// The supervisor has taken the lost connection's tools out of the lists and the search.
    fn hidden(&self) {
        self.hides.fetch_add(1, Ordering::AcqRel);
        self.hid.notify_waiters();
    }

    /// Waits (at most [`HIDE_WAIT`]) until the supervisor has hidden a connection lost since
    /// `hides` were counted: a call that failed with its connection then answers after its
    /// tools left, so that what its caller does next (a search, a listing) no longer finds them.
    async fn until_hidden(&self, hides: u64) {
        let notified = self.hid.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.hides.load(Ordering::Acquire) == hides {
            let _ = tokio::time::timeout(HIDE_WAIT, notified).await;
        }
    }

    /// How the upstream is named in messages: `files` (npx -y …).
    fn who(&self) -> String {
        if self.prefix.is_empty() {
            format!("upstream `{}`", self.label)
        } else {
            format!("upstream `{}` ({})", self.prefix, self.label)
        }
    }

    /// The connected client, or why there is none (a clear error for the caller).
    fn client(&self) -> Result<Arc<Client>, String> {
        if let Some(client) = self.client.load_full()
            && !client.is_closed()
        {
            return Ok(client);
        }
        let (why, next) = self.down.lock().expect("down lock").clone();
        let retry = match next.map(|at| at.saturating_duration_since(Instant::now())) {
            Some(wait) if !wait.is_zero() => format!("; reconnecting in {:.1} s", wait.as_secs_f64()),
            _ => "; reconnecting".to_owned(),
        };
        Err(format!("{} is not available: {why}{retry}", self.who()))
    }

    fn set_down(&self, why: String, next: Option<Instant>) {
        self.client.store(None);
        *self.down.lock().expect("down lock") = (why, next);
    }

    /// The local name of an upstream tool or prompt (`prefix_name`), with characters tool names
    /// do not allow made `_`.
    fn local_name(&self, name: &str) -> String {
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
            .collect();
        if self.prefix.is_empty() { clean } else { format!("{}{}{clean}", self.prefix, self.separator) }
    }

    /// The local URI of an upstream resource: the prefix as the first path segment
    /// (`file:///a` → `file://files//a`, `mem://x` → `mem://files/x`, `urn:a` → `urn:files/a`).
    pub(crate) fn local_uri(&self, uri: &str) -> String {
        local_uri(&self.prefix, uri)
    }

    /// The upstream URI of a local one, if it is under this mount.
    fn upstream_uri(&self, uri: &str) -> Option<String> {
        upstream_uri(&self.prefix, uri)
    }

    /// Calls an upstream tool for `ctx`'s caller: the caller's progress, logs, questions and
    /// cancellation go both ways. The call becomes a task here when it becomes one upstream
    /// (which it may only for a caller that supports tasks).
    async fn call_tool(&self, name: &str, arguments: Value, ctx: Context) -> Result<ToolResult, ToolError> {
        let hides = self.hides.load(Ordering::Acquire);
        let client = self.client().map_err(ToolError::new)?;
        let (progress_tx, mut progress) = mpsc::unbounded_channel();
        let (logs_tx, mut logs) = mpsc::unbounded_channel();
        // A 2025-11-25 caller knows no tasks, and calls a task-only tool as an ordinary one:
        // then this server follows the upstream's task for it.
        let tasks = match ctx.era() {
            Era::Handshake => true,
            Era::Stateless => ctx.client_extension(TASKS).is_some(),
        };
        let became_task = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let started = (ctx.clone(), became_task.clone());
        let mut options = self.options_for(&ctx, &client)?.logs(logs_tx).tasks(tasks).on_task(move || {
            started.1.store(true, std::sync::atomic::Ordering::Relaxed);
            started.0.become_task();
        });
        if ctx.wants_progress() {
            options = options.progress(progress_tx);
        } else {
            drop(progress_tx);
        }
        let call = client.call_tool_raw(name, arguments, options);
        tokio::pin!(call);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(p) = progress.recv() => ctx.report_progress(p.progress, p.total, p.message.as_deref()),
                Some(log) = logs.recv() => forward_log(&ctx, log),
                outcome = &mut call => break outcome,
                // Dropping the call tells the upstream (`notifications/cancelled`).
                () = ctx.cancelled() => return Err(ToolError::new("the call was cancelled")),
            }
        };
        while let Ok(log) = logs.try_recv() {
            forward_log(&ctx, log);
        }
        match outcome {
            Ok(result) => Ok(self.tool_result(&result)),
            // The upstream answered with a JSON-RPC error, or its task failed with one: the
            // caller gets the same error (its code and data: a 2025-11-25 URL elicitation
            // `-32042`, say), as the upstream's own client would.
            Err(ClientError::Rpc { code, message, data }) if code != i64::from(MISSING_CLIENT_CAPABILITY) => {
                let mut error = json!({"code": code, "message": message});
                if let Some(data) = data {
                    error["data"] = data;
                }
                let what =
                    if became_task.load(Ordering::Relaxed) { "failed the task" } else { "refused the call" };
                let said = format!("{} {what} ({code}): {message}", self.who());
                Ok(ToolResult::protocol_failure(said, error))
            }
            Err(e) => {
                if matches!(e, ClientError::Closed) {
                    self.until_hidden(hides).await;
                }
                let error = ToolError::new(self.failure("the call", &e));
                // The upstream needs a capability the caller did not declare (what this server
                // declares upstream is the caller's): the caller gets the protocol's error too.
                Err(match missing_capability(&e) {
                    Some(capability) => error.with_source(LinkError::MissingCapability(capability)),
                    None => error,
                })
            }
        }
    }

    /// Reads an upstream resource; the contents' URIs made local.
    async fn read(&self, request: ResourceRequest, ctx: Context) -> Result<Vec<ResourceContents>, ToolError> {
        let client = self.client().map_err(ToolError::new)?;
        let Some(uri) = self.upstream_uri(&request.uri) else {
            return Err(ToolError::new(format!("`{}` is not a resource of {}", request.uri, self.who())));
        };
        let options = self.options_for(&ctx, &client)?;
        let result = client
            .request_with("resources/read", json!({"uri": uri}), options)
            .await
            .map_err(|e| ToolError::new(self.failure("reading the resource", &e)))?;
        let contents = result["contents"].as_array().cloned().unwrap_or_default();
        Ok(contents
            .into_iter()
            .map(|c| {
                let uri = c["uri"].as_str().map_or_else(|| request.uri.clone(), |u| self.local_uri(u));
                let blob = c["blob"].as_str().map(str::to_owned);
                ResourceContents {
                    uri,
                    mime_type: c["mimeType"].as_str().map(str::to_owned),
                    text: if blob.is_some() {
                        None
                    } else {
                        Some(c["text"].as_str().unwrap_or_default().to_owned())
                    },
                    blob,
                    meta: c["_meta"].as_object().cloned(),
                }
            })
            .collect())
    }

    /// Gets an upstream prompt.
    async fn get_prompt(
        &self,
        name: &str,
        arguments: HashMap<String, String>,
        ctx: Context,
    ) -> Result<PromptResult, ToolError> {
        let client = self.client().map_err(ToolError::new)?;
        let options = self.options_for(&ctx, &client)?;
        let result = client
            .request_with("prompts/get", json!({"name": name, "arguments": arguments}), options)
            .await
            .map_err(|e| ToolError::new(self.failure("getting the prompt", &e)))?;
        let messages = result["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let mut content = m["content"].clone();
                self.localize_block(&mut content);
                PromptMessage::new(m["role"].as_str().unwrap_or("user"), Content::Json(content))
            })
            .collect();
        let mut prompt = PromptResult::new(messages);
        prompt.description = result["description"].as_str().map(str::to_owned);
        Ok(prompt)
    }

    /// The upstream's completion of an argument of `reference` (its own `ref/…`).
    async fn complete(
        &self,
        reference: Value,
        argument: String,
        value: String,
        context: HashMap<String, String>,
    ) -> Vec<String> {
        let Ok(client) = self.client() else { return Vec::new() };
        let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        if !context.is_empty() {
            params["context"] = json!({"arguments": context});
        }
        match client.request("completion/complete", params).await {
            Ok(result) => result["completion"]["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Err(e) => {
                tracing::debug!(upstream = %self.label, error = %e, "completion failed upstream");
                Vec::new()
            }
        }
    }

    /// The options of a request made upstream for `ctx`'s caller ([`options_for`]), with the
    /// caller's token when this upstream is to get it: a caller without one is refused here.
    fn options_for(&self, ctx: &Context, client: &Client) -> Result<CallOptions, ToolError> {
        let options = options_for(ctx, &self.prefix);
        if !self.pass_caller_token {
            return Ok(options);
        }
        // A 2025-11-25 session was opened with this server's own credentials: requests in it
        // with another's token would be refused (or end it), by a server that binds sessions.
        if client.era() == Era::Handshake {
            return Err(ToolError::new(format!(
                "{} takes the caller's own access token, which only a 2026-07-28 server can take \
                 on each request; it speaks {}",
                self.who(),
                client.protocol_version()
            )));
        }
        match ctx.auth().and_then(|auth| auth.token()) {
            Some(token) => Ok(options.authorization(format!("Bearer {token}"))),
            None => Err(ToolError::new(format!(
                "{} takes the caller's own access token, and this request came with none",
                self.who()
            ))),
        }
    }

    /// What a failed request to the upstream tells the caller.
    fn failure(&self, what: &str, error: &ClientError) -> String {
        match error {
            ClientError::Rpc { code, message, .. } => {
                format!("{} refused {what} ({code}): {message}", self.who())
            }
            ClientError::Closed => format!("{} closed the connection during {what}", self.who()),
            ClientError::Timeout(after) => format!("{} did not answer {what} within {after:?}", self.who()),
            other => format!("{what} failed at {}: {other}", self.who()),
        }
    }

    /// A result with the URIs of its resource links and embedded resources made local, and
    /// without the 2026-07-28 `resultType` (the server adds its own) or the upstream's
    /// `_meta["io.modelcontextprotocol/serverInfo"]`: the caller's answer comes from this server,
    /// which is not the upstream (and a 2025-11-25 caller's answers carry no such entry).
    ///
    /// A result with nothing to make local is passed on as it came, its blocks not read into
    /// values: one where no block can be a resource or a link to one (no `"resource` anywhere in
    /// its text, and no `\u` escape that could spell one), or any under an empty prefix, and
    /// which names no `serverInfo`.
    fn tool_result(&self, result: &RawValue) -> ToolResult {
        // Searchers made once: `memmem::find` makes one at every call.
        static RESOURCE: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new(b"\"resource"));
        static ESCAPE: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
        // The key's end, however its slash is written (`/` or `\/`).
        static SERVER_INFO: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new(b"serverInfo\""));
        let text = result.get().as_bytes();
        let plain = (self.prefix.is_empty()
            || (RESOURCE.find(text).is_none() && ESCAPE.find(text).is_none()))
            && SERVER_INFO.find(text).is_none();
        if plain && let Some(passed) = ToolResult::passed_on(result) {
            return passed;
        }
        match serde_json::from_str(result.get()) {
            Ok(value) => ToolResult::from_json(self.localize_result(value)),
            Err(_) => ToolResult::from_json(Value::Null),
        }
    }

    fn localize_result(&self, mut result: Value) -> Value {
        if let Some(fields) = result.as_object_mut() {
            fields.remove("resultType");
            if let Some(meta) = fields.get_mut("_meta").and_then(Value::as_object_mut)
                && meta.remove(SERVER_INFO_KEY).is_some()
                && meta.is_empty()
            {
                fields.remove("_meta");
            }
        }
        if let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) {
            for block in blocks {
                self.localize_block(block);
            }
        }
        result
    }

    fn localize_block(&self, block: &mut Value) {
        match block["type"].as_str() {
            Some("resource_link") => {
                if let Some(uri) = block["uri"].as_str() {
                    block["uri"] = json!(self.local_uri(uri));
                }
            }
            Some("resource") => {
                if let Some(uri) = block["resource"]["uri"].as_str() {
                    block["resource"]["uri"] = json!(self.local_uri(uri));
                }
            }
            _ => {}
        }
    }
}

/// The client capability an upstream's "missing required client capability" error names.
fn missing_capability(error: &ClientError) -> Option<String> {
    let ClientError::Rpc { code, data, .. } = error else { return None };
    if *code != i64::from(MISSING_CLIENT_CAPABILITY) {
        return None;
    }
    // An extension is named by its identifier (the tasks extension, say).
    let named = data.as_ref().and_then(|d| {
        let required = d["requiredCapabilities"].as_object()?;
        match required.get("extensions").and_then(Value::as_object) {
            Some(extensions) if !extensions.is_empty() => extensions.keys().next().cloned(),
            _ => required.keys().next().cloned(),
        }
    });
    Some(named.unwrap_or_else(|| "unknown".to_owned()))
}

/// `file:///a` → `file://p//a`, `mem://x` → `mem://p/x`, `urn:a` → `urn:p/a`, `x` → `p/x`.
pub(crate) fn local_uri(prefix: &str, uri: &str) -> String {
    if prefix.is_empty() {
        return uri.to_owned();
    }
    if let Some(at) = uri.find("://") {
        format!("{}://{prefix}/{}", &uri[..at], &uri[at + 3..])
    } else if let Some(at) = uri.find(':') {
        format!("{}:{prefix}/{}", &uri[..at], &uri[at + 1..])
    } else {
        format!("{prefix}/{uri}")
    }
}

/// The inverse of [`local_uri`]: `None` for a URI not under `prefix`.
pub(crate) fn upstream_uri(prefix: &str, uri: &str) -> Option<String> {
    if prefix.is_empty() {
        return Some(uri.to_owned());
    }
    let strip = |rest: &str| rest.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')).map(str::to_owned);
    if let Some(at) = uri.find("://") {
        Some(format!("{}://{}", &uri[..at], strip(&uri[at + 3..])?))
    } else if let Some(at) = uri.find(':') {
        Some(format!("{}:{}", &uri[..at], strip(&uri[at + 1..])?))
    } else {
        strip(uri)
    }
}

/// The options of a request made upstream for `ctx`'s caller: its `_meta` (all but its progress
/// token and the envelope, which the client makes: a `traceparent` travels on), the log level
/// it asked for (2026-07-28), the questions it can answer, and who asks them.
fn options_for(ctx: &Context, prefix: &str) -> CallOptions {
    let mut meta = ctx.meta_where(|k| k != "progressToken" && !k.starts_with("io.modelcontextprotocol/"));
    if let Some(level) = ctx.parts().peer.log_level() {
        meta.insert("io.modelcontextprotocol/logLevel".into(), json!(level));
    }
    let answers: Map<String, Value> = ctx
        .client_capabilities()
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "sampling" | "elicitation" | "roots"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    CallOptions::new().meta(meta).answers(answers).questions(asker(ctx, prefix))
}

/// Sends an upstream's log message of a call to the caller.
fn forward_log(ctx: &Context, log: ServerNotification) {
    if let ServerNotification::Log { level, logger, data } = log {
        let level = serde_json::from_value::<LogLevel>(json!(level)).unwrap_or(LogLevel::Info);
        ctx.log_as(level, logger.as_deref(), data);
    }
}

/// Asks the upstream's questions of the caller `ctx` (in its era: a 2025-11-25 request, a
/// 2026-07-28 input request under the upstream's key).
fn asker(
    ctx: &Context,
    prefix: &str,
) -> impl Fn(Question) -> futures_util::future::BoxFuture<'static, Result<Value, ClientError>>
+ Send
+ Sync
+ 'static {
    let (ctx, prefix) = (ctx.clone(), prefix.to_owned());
    move |question: Question| {
        let ctx = match &question.key {
            // Under an empty prefix the upstream's keys are kept, as its names are.
            Some(key) if prefix.is_empty() => ctx.input_key(key.clone()),
            Some(key) => ctx.input_key(format!("{prefix}:{key}")),
            None => ctx.clone(),
        };
        Box::pin(async move {
            let capability = match question.method.as_str() {
                "sampling/createMessage" => "sampling",
                "elicitation/create" => "elicitation",
                "roots/list" => "roots",
                other => {
                    return Err(ClientError::Rpc {
                        code: -32601,
                        message: format!("method not found: {other}"),
                        data: None,
                    });
                }
            };
            if !ctx.client_capabilities().contains_key(capability) {
                return Err(ClientError::Rpc {
                    code: -32601,
                    message: format!("the client this call came from did not declare `{capability}`"),
                    data: None,
                });
            }
            ctx.request_client(&question.method, question.params).await.map_err(|e| match e {
                crate::context::link::ClientError::Rejected { code, message } => {
                    ClientError::Rpc { code, message, data: None }
                }
                other => ClientError::Rpc { code: -32603, message: other.to_string(), data: None },
            })
        })
    }
}

/// What a mount has published, to replace it in the next change.
#[derive(Default)]
struct Published {
    tools: HashSet<String>,
    keys: Keys,
    /// The upstream's tool definitions last listed, to publish them hidden while it is down.
    definitions: Vec<Value>,
    /// The URIs of the upstream's resources last listed (its own).
    resources: Vec<String>,
}

/// The most resources of one upstream whose updates are followed.
const MAX_FOLLOWED: usize = 256;

/// What a mount follows of its upstream's changes.
#[derive(Default)]
struct Following {
    /// The resources whose updates the upstream sends (sorted: the listen stream's order).
    resources: std::collections::BTreeSet<String>,
    /// 2026-07-28: the listen stream that carries them, with the list changes.
    listening: Option<crate::client::Listening>,
}

/// Which lists to read again.
#[derive(Clone, Copy, Default)]
struct Stale {
    tools: bool,
    resources: bool,
    prompts: bool,
}

impl Stale {
    const ALL: Stale = Stale { tools: true, resources: true, prompts: true };
    fn any(self) -> bool {
        self.tools || self.resources || self.prompts
    }
}

/// The transformations of a server's tools, by the name a tool has before (a mounted one's:
/// its local name).
pub(crate) type Transforms = Arc<HashMap<String, ToolTransform>>;

/// What a server gives each of its mounts.
#[derive(Clone)]
pub(crate) struct Host {
    pub server: Implementation,
    pub target: Arc<dyn Target>,
    pub owners: Owners,
    pub transforms: Transforms,
    /// Cancelled when the server is gone.
    pub gone: CancellationToken,
}

/// Starts the supervisor of `mount`; the receiver gets how its first connection went.
pub(crate) fn start(mount: Mount, host: Host) -> oneshot::Receiver<Started> {
    let (first, started) = oneshot::channel();
    let Host { server, target, owners, transforms, gone } = host;
    let supervisor =
        Supervisor { link: Arc::new(Link::new(&mount)), mount, server, target, owners, transforms, gone };
    tokio::spawn(supervisor.run(first));
    started
}

struct Supervisor {
    link: Arc<Link>,
    mount: Mount,
    server: Implementation,
    target: Arc<dyn Target>,
    owners: Owners,
    transforms: Transforms,
    gone: CancellationToken,
}

impl Supervisor {
    async fn run(self, first: oneshot::Sender<Started>) {
        let mut first = Some(first);
        let mut published = Published::default();
        let mut backoff = FIRST_BACKOFF;
        loop {
            let builder = Client::builder()
                .name(format!("{} (mounting)", self.server.name))
                .version(self.server.version.clone())
                .tasks(true)
                .forward_questions();
            let connected = tokio::select! {
                connected = self.mount.upstream.connect(builder) => connected,
                () = self.gone.cancelled() => return,
            };
            let failure = match connected {
                Ok(client) => {
                    let client = Arc::new(client);
                    // A session's log messages all come: each caller gets those of its level.
                    if client.era() == Era::Handshake && client.server_capabilities().get("logging").is_some()
                    {
                        let _ = client.request("logging/setLevel", json!({"level": "debug"})).await;
                    }
                    self.link.client.store(Some(client.clone()));
                    match self.sync(&client, &mut published, Stale::ALL).await {
                        Some(Ok(clashes)) => {
                            if let Some(first) = first.take() {
                                let tools = published
                                    .definitions
                                    .iter()
                                    .filter_map(|d| d["name"].as_str())
                                    .map(|name| self.link.local_name(name))
                                    .collect();
                                let _ = first.send(Started::Published { clashes, tools });
                            }
                            tracing::info!(upstream = %self.link.label, prefix = %self.link.prefix, "mounted");
                            let up = Instant::now();
                            let why = match self.watch(&client, &mut published).await {
                                Some(why) => why,
                                None => return,
                            };
                            // An upstream that crashes soon after each start keeps backing off;
                            // one that served a while starts again from the shortest wait.
                            if up.elapsed() >= STABLE {
                                backoff = FIRST_BACKOFF;
                            }
                            why
                        }
                        Some(Err(e)) => {
                            client.close().await;
                            format!("listing its tools failed: {e}")
                        }
                        None => return,
                    }
                }
                Err(e) => format!("connecting failed: {e}"),
            };
            if self.gone.is_cancelled() {
                return;
            }
            let next = Instant::now() + backoff;
            self.link.set_down(failure.clone(), Some(next));
            tracing::warn!(upstream = %self.link.label, prefix = %self.link.prefix, why = %failure, "the upstream is down; reconnecting in {backoff:?}");
            if let Some(first) = first.take() {
                let _ = first.send(Started::Failed(failure));
            }
            // While it is down, its tools leave the lists and the search, and a call fails at once.
            if self.hide(&mut published).is_none() {
                return;
            }
            self.link.hidden();
            tokio::select! {
                () = tokio::time::sleep(jittered(backoff)) => {}
                () = self.gone.cancelled() => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Follows the upstream's changes until its connection ends (why), or the server is gone
    /// (`None`).
    async fn watch(&self, client: &Arc<Client>, published: &mut Published) -> Option<String> {
        let mut notes = client.notifications();
        let mut following = Following::default();
        self.follow(client, published, &mut following).await;
        loop {
            let mut stale = Stale::default();
            tokio::select! {
                () = self.gone.cancelled() => {
                    client.close().await;
                    return None;
                }
                () = client.closed() => return Some("the connection ended".into()),
                note = notes.recv() => self.note(note, &mut stale)?,
            }
            if !stale.any() {
                continue;
            }
            // Changes come in bursts: gather them, then list once.
            let settle = tokio::time::sleep(SETTLE);
            tokio::pin!(settle);
            loop {
                tokio::select! {
                    () = &mut settle => break,
                    note = notes.recv() => self.note(note, &mut stale)?,
                }
            }
            match self.sync(client, published, stale).await {
                Some(Ok(clashes)) => {
                    for clash in clashes {
                        tracing::error!(upstream = %self.link.label, "{clash}");
                    }
                    if stale.resources {
                        self.follow(client, published, &mut following).await;
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(upstream = %self.link.label, error = %e, "listing again after a change failed")
                }
                None => return None,
            }
        }
    }

    /// Asks the upstream for its changes: its list changes, and the updates of the resources it
    /// listed (the first [`MAX_FOLLOWED`], when it takes subscriptions), so that this server's
    /// clients subscribed to them hear of their updates. 2025-11-25: `resources/subscribe` for
    /// each resource not yet followed; 2026-07-28: a listen stream for all of it, opened again
    /// when the resources change.
    async fn follow(&self, client: &Arc<Client>, published: &Published, following: &mut Following) {
        let capabilities = client.server_capabilities();
        let subscribable = capabilities["resources"]["subscribe"] == json!(true);
        let wanted: Vec<String> = if subscribable {
            published.resources.iter().take(MAX_FOLLOWED).cloned().collect()
        } else {
            Vec::new()
        };
        if client.era() == Era::Handshake {
            for uri in wanted {
                if following.resources.insert(uri.clone())
                    && let Err(e) = client.subscribe(&uri).await
                {
                    tracing::debug!(upstream = %self.link.label, uri, error = %e, "subscribing failed");
                }
            }
            return;
        }
        if following.listening.is_some() && following.resources.iter().eq(wanted.iter()) {
            return;
        }
        let filter = json!({
            "toolsListChanged": true,
            "resourcesListChanged": capabilities.get("resources").is_some(),
            "promptsListChanged": capabilities.get("prompts").is_some(),
            "resourceSubscriptions": wanted,
        });
        // The new stream first, then the old one dropped: no change falls between the two.
        match client.listen(filter).await {
            Ok(listening) => {
                following.listening = Some(listening);
                following.resources = wanted.into_iter().collect();
            }
            Err(e) => {
                tracing::debug!(upstream = %self.link.label, error = %e, "no listen stream: its changes are not followed");
            }
        }
    }

    /// Notes one notification of the upstream's; `None` when its stream is closed.
    fn note(
        &self,
        note: Result<ServerNotification, broadcast::error::RecvError>,
        stale: &mut Stale,
    ) -> Option<()> {
        match note {
            Ok(ServerNotification::ToolsChanged) => stale.tools = true,
            Ok(ServerNotification::ResourcesChanged) => stale.resources = true,
            Ok(ServerNotification::PromptsChanged) => stale.prompts = true,
            Ok(ServerNotification::ResourceUpdated { uri }) => {
                self.target.resource_updated(self.link.local_uri(&uri))
            }
            Ok(ServerNotification::Log { level, logger, data }) => {
                tracing::info!(upstream = %self.link.label, level, logger, %data, "log message of the upstream");
            }
            Ok(ServerNotification::Other { .. }) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => *stale = Stale::ALL,
            Err(broadcast::error::RecvError::Closed) => return None,
        }
        Some(())
    }

    /// Lists what is `stale` and publishes it in one change: the clashes, an upstream error, or
    /// `None` when the server is gone.
    async fn sync(
        &self,
        client: &Arc<Client>,
        published: &mut Published,
        stale: Stale,
    ) -> Option<Result<Vec<String>, ClientError>> {
        let capabilities = client.server_capabilities().clone();
        // A list the upstream does not serve (it declared no prompts, or its last one went) is
        // empty: resources and prompts may come and go with the capabilities declared.
        let optional = |listed: Result<Vec<Value>, ClientError>| match listed {
            Err(ClientError::Rpc { .. }) => Ok(Vec::new()),
            other => other,
        };
        let listed = async {
            let tools = match (stale.tools, capabilities.get("tools").is_some()) {
                (true, true) => Some(client.list_tools().await?),
                (true, false) => Some(Vec::new()),
                (false, _) => None,
            };
            let items = if stale.resources || stale.prompts {
                let resources = optional(client.list_resources().await)?;
                let templates = optional(client.list_resource_templates().await)?;
                let prompts = optional(client.list_prompts().await)?;
                Some((resources, templates, prompts))
            } else {
                None
            };
            Ok::<_, ClientError>((tools, items))
        };
        let (tools, items) = match listed.await {
            Ok(listed) => listed,
            Err(e) => return Some(Err(e)),
        };
        let completes = capabilities.get("completions").is_some();
        let tools = tools.map(|definitions| {
            let entries = definitions.iter().filter_map(|d| self.tool_entry(d, false)).collect::<Vec<_>>();
            published.definitions = definitions;
            entries
        });
        let items = items.map(|(resources, templates, prompts)| {
            published.resources =
                resources.iter().filter_map(|r| r["uri"].as_str().map(str::to_owned)).collect();
            published.resources.sort();
            self.items(&resources, &templates, &prompts, completes)
        });
        self.publish(published, tools, items).map(Ok)
    }

    /// Publishes `tools` and `items` in place of what `published` holds, under the owners' lock;
    /// the clashes (naming both sides), or `None` when the server is gone.
    fn publish(
        &self,
        published: &mut Published,
        tools: Option<Vec<Arc<ToolEntry>>>,
        items: Option<Items>,
    ) -> Option<Vec<String>> {
        let mut owners = self.owners.lock().expect("owners lock");
        let me = self.link.who();
        let new_tools: Option<HashSet<String>> =
            tools.as_ref().map(|t| t.iter().map(|e| e.name.to_string()).collect());
        let new_keys = items.as_ref().map(Items::keys);
        let clashes =
            self.target.swap(tools.map(|t| (&published.tools, t)), items.map(|i| (&published.keys, i)))?;
        // What this mount now owns: what it published, less what clashed.
        let clashed = |key: String| clashes.contains(&key);
        let mut described = Vec::new();
        for clash in &clashes {
            let other = owners
                .get(clash)
                .filter(|o| **o != me)
                .cloned()
                .unwrap_or_else(|| "this server's own".into());
            described.push(format!("{clash} of {me} clashes with the {clash} of {other}: mount it under another prefix, or rename one"));
        }
        if let Some(names) = new_tools {
            for name in published.tools.drain() {
                owners.remove(&format!("tool `{name}`"));
            }
            published.tools = names.into_iter().filter(|n| !clashed(format!("tool `{n}`"))).collect();
            for name in &published.tools {
                owners.insert(format!("tool `{name}`"), me.clone());
            }
        }
        if let Some(keys) = new_keys {
            let old = std::mem::take(&mut published.keys);
            for key in keys_described(&old) {
                owners.remove(&key);
            }
            let kept = Keys {
                resources: keys
                    .resources
                    .into_iter()
                    .filter(|k| !clashed(format!("resource `{k}`")))
                    .collect(),
                templates: keys
                    .templates
                    .into_iter()
                    .filter(|k| !clashed(format!("resource template `{k}`")))
                    .collect(),
                prompts: keys.prompts.into_iter().filter(|k| !clashed(format!("prompt `{k}`"))).collect(),
            };
            for key in keys_described(&kept) {
                owners.insert(key, me.clone());
            }
            published.keys = kept;
        }
        Some(described)
    }

    /// Publishes the upstream's tools hidden (callable, failing at once with why) and removes
    /// its resources and prompts, while it is down. `None` when the server is gone.
    fn hide(&self, published: &mut Published) -> Option<()> {
        let hidden = published.definitions.iter().filter_map(|d| self.tool_entry(d, true)).collect();
        let _ = self.publish(published, Some(hidden), Some(Items::default()))?;
        Some(())
    }

    /// The local tool of an upstream tool's definition (`None`, logged, if it cannot be one).
    fn tool_entry(&self, definition: &Value, hidden: bool) -> Option<Arc<ToolEntry>> {
        let upstream_name = definition["name"].as_str()?.to_owned();
        let name = self.link.local_name(&upstream_name);
        if let Err(why) = check_name(&name) {
            tracing::warn!(upstream = %self.link.label, tool = %upstream_name, "left out: {why}");
            return None;
        }
        let mut schema = definition["inputSchema"].clone();
        if !schema.is_object() {
            schema = json!({"type": "object"});
        }
        if schema.get("type").is_none() {
            schema["type"] = json!("object");
        }
        let title = definition["title"].as_str().or_else(|| definition["annotations"]["title"].as_str());
        let description = match definition["description"].as_str().map(str::trim) {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => title.unwrap_or(&upstream_name).to_owned(),
        };
        let link = self.link.clone();
        let forwarded = upstream_name.clone();
        let mut tool = Tool::new(name, description, schema, move |arguments, ctx| {
            let (link, name) = (link.clone(), forwarded.clone());
            async move { link.call_tool(&name, arguments, ctx).await }
        })
        // The upstream checks its own arguments, and decides whether the call becomes a task
        // (which it does not list): this one becomes a task when the upstream's does.
        .validate_arguments(false)
        .task(TaskSupport::Optional)
        .scopes(self.mount.scopes.iter().cloned());
        if !self.link.prefix.is_empty() {
            tool = tool.tags([self.link.prefix.clone()]);
        }
        if let Some(title) = title {
            tool = tool.title(title);
        }
        if let Some(schema) = definition.get("outputSchema").filter(|s| s.is_object()) {
            tool = tool.output_schema(schema.clone());
        }
        if let Ok(annotations) = serde_json::from_value::<Annotations>(definition["annotations"].clone())
            && annotations.contradiction().is_none()
        {
            tool = tool.annotations(annotations);
        }
        if let Some(meta) = definition["_meta"].as_object() {
            for (key, value) in meta {
                tool = tool.meta(key.clone(), self.localize_meta(key, value.clone()));
            }
        }
        for icon in definition["icons"].as_array().into_iter().flatten() {
            if let Ok(icon) = serde_json::from_value::<Icon>(icon.clone()) {
                tool = tool.icon(icon);
            }
        }
        tool.hidden = hidden;
        tool.becomes_task_itself = true;
        let entry = match runtime_entry(&tool) {
            Ok(entry) => Arc::new(entry),
            Err(problems) => {
                tracing::warn!(upstream = %self.link.label, tool = %upstream_name, "left out: {}", problems.join("; "));
                return None;
            }
        };
        match self.transforms.get(&*entry.name) {
            None => Some(entry),
            Some(transform) => match transform::apply(entry, transform) {
                Ok(transformed) => transformed,
                Err(problems) => {
                    tracing::error!(upstream = %self.link.label, tool = %upstream_name, "left out: {}", problems.join("; "));
                    None
                }
            },
        }
    }

    /// A tool's `_meta` entry with the view it links made local (MCP Apps `ui.resourceUri`,
    /// `openai/outputTemplate`).
    fn localize_meta(&self, key: &str, mut value: Value) -> Value {
        match key {
            "ui" => {
                if let Some(uri) = value["resourceUri"].as_str() {
                    value["resourceUri"] = json!(self.link.local_uri(uri));
                }
            }
            "openai/outputTemplate" | "ui/resourceUri" => {
                if let Some(uri) = value.as_str() {
                    value = json!(self.link.local_uri(uri));
                }
            }
            _ => {}
        }
        value
    }

    /// The local resources, templates and prompts of the upstream's.
    fn items(&self, resources: &[Value], templates: &[Value], prompts: &[Value], completes: bool) -> Items {
        let scopes = self.mount.scopes.clone();
        let mut items = Items::default();
        for definition in resources {
            let Some(uri) = definition["uri"].as_str() else { continue };
            let link = self.link.clone();
            let name = definition["name"].as_str().unwrap_or(uri);
            let mut resource = Resource::new(self.link.local_uri(uri), name, move |request, ctx| {
                let link = link.clone();
                async move { link.read(request, ctx).await }
            })
            .scopes(scopes.iter().cloned());
            describe(&mut resource.info, definition);
            resource.info.size = definition["size"].as_u64();
            items.resources.push(resource);
        }
        for definition in templates {
            let Some(source) = definition["uriTemplate"].as_str() else { continue };
            let local = self.link.local_uri(source);
            // Every URI under the template's literal start goes to the upstream, which matches
            // its own template (whatever RFC 6570 operators it uses).
            let start = local.find('{').map_or(local.as_str(), |at| &local[..at]).to_owned();
            let link = self.link.clone();
            let name = definition["name"].as_str().unwrap_or(source);
            let mut template = ResourceTemplate::new(&local, name, move |request, ctx| {
                let link = link.clone();
                async move { link.read(request, ctx).await }
            })
            .scopes(scopes.iter().cloned());
            template.template = UriTemplate::under(&local, start);
            describe(&mut template.info, definition);
            if completes {
                template.completer = Some(self.completer(json!({"type": "ref/resource", "uri": source})));
            }
            items.templates.push(template);
        }
        for definition in prompts {
            let Some(upstream_name) = definition["name"].as_str() else { continue };
            let name = self.link.local_name(upstream_name);
            let link = self.link.clone();
            let forwarded = upstream_name.to_owned();
            let description = definition["description"].as_str().unwrap_or_default();
            let mut prompt = Prompt::new(name, description, move |arguments, ctx| {
                let (link, name) = (link.clone(), forwarded.clone());
                async move { link.get_prompt(&name, arguments, ctx).await }
            })
            .scopes(scopes.iter().cloned());
            prompt.title = definition["title"].as_str().map(str::to_owned);
            prompt.meta = definition["_meta"].as_object().cloned();
            prompt.arguments = definition["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| {
                    Some(PromptArgument {
                        name: a["name"].as_str()?.to_owned(),
                        description: a["description"].as_str().map(str::to_owned),
                        required: a["required"].as_bool().unwrap_or(false),
                    })
                })
                .collect();
            if completes {
                prompt.completer = Some(self.completer(json!({"type": "ref/prompt", "name": upstream_name})));
            }
            items.prompts.push(prompt);
        }
        items
    }

    /// Completes the arguments of the upstream's `reference` there.
    fn completer(&self, reference: Value) -> ItemCompleter {
        let link = self.link.clone();
        Arc::new(move |argument, value, context, _ctx| {
            let (link, reference) = (link.clone(), reference.clone());
            Box::pin(async move { link.complete(reference, argument, value, context).await })
        })
    }
}

/// Title, description, MIME type and `_meta` of a listed resource or template.
fn describe(info: &mut crate::model::resource::ResourceInfo, definition: &Value) {
    let text = |key: &str| definition[key].as_str().map(str::to_owned);
    info.title = text("title");
    info.description = text("description");
    info.mime_type = text("mimeType");
    info.meta = definition["_meta"].as_object().cloned();
}

/// The owners' keys of catalog items.
fn keys_described(keys: &Keys) -> Vec<String> {
    let resources = keys.resources.iter().map(|k| format!("resource `{k}`"));
    let templates = keys.templates.iter().map(|k| format!("resource template `{k}`"));
    let prompts = keys.prompts.iter().map(|k| format!("prompt `{k}`"));
    resources.chain(templates).chain(prompts).collect()
}

/// `wait`, give or take a fifth, so upstreams that fell together do not all come back at once.
fn jittered(wait: Duration) -> Duration {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let factor = 0.8 + f64::from(nanos % 1000) / 1000.0 * 0.4;
    wait.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_namespaced_and_back() {
        for (uri, local) in [
            ("file:///etc/hosts", "file://fs//etc/hosts"),
            ("mem://notes/1", "mem://fs/notes/1"),
            ("urn:isbn:1", "urn:fs/isbn:1"),
            ("plain", "fs/plain"),
        ] {
            assert_eq!(local_uri("fs", uri), local);
            assert_eq!(upstream_uri("fs", local).as_deref(), Some(uri));
        }
        assert_eq!(upstream_uri("fs", "mem://other/notes/1"), None);
        assert_eq!(upstream_uri("fs", "mem://fsx/notes/1"), None);
        assert_eq!(local_uri("", "mem://a"), "mem://a");
    }

    fn link(prefix: &str) -> Link {
        Link {
            prefix: prefix.to_owned(),
            separator: "_".to_owned(),
            label: "test".to_owned(),
            client: ArcSwapOption::empty(),
            down: Mutex::new((String::new(), None)),
            pass_caller_token: false,
            hides: AtomicU64::new(0),
            hid: tokio::sync::Notify::new(),
        }
    }

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    /// What the result was before results were passed on: read into a value, made local.
    fn read_whole(link: &Link, text: &str) -> String {
        let value = serde_json::from_str(text).unwrap();
        serde_json::to_string(&ToolResult::from_json(link.localize_result(value))).unwrap()
    }

    #[test]
    fn a_result_with_nothing_to_make_local_is_passed_on_as_it_came() {
        let link = link("fs");
        for text in [
            r#"{"resultType":"complete","content":[{"type":"text","text":"3.5"}]}"#,
            r#"{"content":[{"type":"text","text":"a \"quoted\" word"},{"type":"image","data":"AAA=","mimeType":"image/png"}],"structuredContent":{"sum":3.5,"list":[1,2]},"isError":true,"_meta":{"k":"v"},"resultType":"complete","extra":1}"#,
            r#"{"content":[],"isError":false}"#,
            r#"{"structuredContent":null}"#,
        ] {
            let passed = link.tool_result(&raw(text));
            // (No blocks: none to pass on.)
            assert_eq!(passed.is_passed_on(), text.contains(r#""content""#), "{text}");
            // The same result as read whole, to the byte.
            assert_eq!(serde_json::to_string(&passed).unwrap(), read_whole(&link, text), "{text}");
            // Its blocks read as values when asked for.
            let whole = ToolResult::from_json(serde_json::from_str(text).unwrap());
            assert_eq!(passed.content(), whole.content(), "{text}");
            assert_eq!(passed.is_error(), whole.is_error(), "{text}");
            assert_eq!(passed.structured_content(), whole.structured_content(), "{text}");
            assert_eq!(passed.meta_map(), whole.meta_map(), "{text}");
        }
        // The blocks are sent on as the upstream wrote them, spacing and all.
        let text = r#"{"content": [ {"type": "text",  "text": "a"} ], "resultType": "complete"}"#;
        let passed = serde_json::to_string(&link.tool_result(&raw(text))).unwrap();
        assert_eq!(passed, r#"{"content":[ {"type": "text",  "text": "a"} ]}"#);
        // Changed, a passed result is read whole first.
        let grown = link.tool_result(&raw(r#"{"content":[{"type":"text","text":"a"}]}"#)).text("b");
        assert_eq!(
            serde_json::to_string(&grown).unwrap(),
            r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#
        );
    }

    #[test]
    fn the_upstreams_identity_is_not_passed_on() {
        for prefix in ["fs", ""] {
            let link = super::Link { prefix: prefix.to_owned(), ..link("fs") };
            for (text, sent) in [
                (
                    r#"{"content":[{"type":"text","text":"a"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"k":"v"},"resultType":"complete"}"#,
                    r#"{"content":[{"type":"text","text":"a"}],"_meta":{"k":"v"}}"#,
                ),
                // The entry alone: no `_meta` is left.
                (
                    r#"{"content":[{"type":"text","text":"a"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}}"#,
                    r#"{"content":[{"type":"text","text":"a"}]}"#,
                ),
                // The same key with its slash escaped.
                (
                    r#"{"content":[],"_meta":{"io.modelcontextprotocol\/serverInfo":{"name":"up","version":"1"}}}"#,
                    r#"{"content":[]}"#,
                ),
                // The word in a block's text is not the entry: kept.
                (
                    r#"{"content":[{"type":"text","text":"serverInfo"}],"_meta":{}}"#,
                    r#"{"content":[{"type":"text","text":"serverInfo"}],"_meta":{}}"#,
                ),
            ] {
                let result = link.tool_result(&raw(text));
                assert_eq!(serde_json::to_string(&result).unwrap(), sent, "{prefix:?} {text}");
            }
        }
    }

    #[test]
    fn a_result_with_resources_is_made_local() {
        let link = link("fs");
        for (text, local) in [
            (
                r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"mem://x","text":"t"}}],"resultType":"complete"}"#,
                r#"{"content":[{"type":"resource_link","uri":"file://fs//a","name":"a"},{"type":"resource","resource":{"uri":"mem://fs/x","text":"t"}}]}"#,
            ),
            // A type spelled with an escape is one all the same.
            (
                r#"{"content":[{"type":"\u0072esource_link","uri":"mem://x","name":"x"}]}"#,
                r#"{"content":[{"type":"resource_link","uri":"mem://fs/x","name":"x"}]}"#,
            ),
        ] {
            let result = link.tool_result(&raw(text));
            assert!(!result.is_passed_on(), "{text}");
            assert_eq!(serde_json::to_string(&result).unwrap(), local);
        }
        // Under an empty prefix, nothing is ever made local: passed on.
        let text = r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#;
        let result = super::Link { prefix: String::new(), ..link };
        let passed = result.tool_result(&raw(text));
        assert!(passed.is_passed_on());
        assert_eq!(serde_json::to_string(&passed).unwrap(), text);
        // Not a result: an error result, as before.
        assert!(result.tool_result(&raw("[1]")).is_error());
    }
}
