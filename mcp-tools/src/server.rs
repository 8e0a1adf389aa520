//! [`ServerBuilder`] (identity, options, state, runtime tools) and [`Server`] (the built catalog,
//! ready to serve; the transports add their own `serve_*` methods, the command line `run`).
//! This is where the optional parts join the path: deferred mode decides what `tools/list` shows.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::__private::ToolRegistration;
#[cfg(feature = "client")]
use crate::compose::{Mount, Upstream};
use crate::context::{Context, StateMap};
use crate::deferred::DeferredTools;
use crate::dispatch::bus::{Bus, LocalBus};
use crate::dispatch::events::{Events, ServerEvent};
use crate::dispatch::extensions::{BOTH_ERAS, Extension, Extensions};
use crate::dispatch::observe::Observer;
use crate::dispatch::pipeline::{BoxError, ListFilter, Pipeline, ToolCall, ToolService, Wrap, wrap};
use crate::dispatch::quota::Quota;
#[cfg(feature = "http")]
use crate::dispatch::session_store::SessionStore;
use crate::dispatch::shared::Shared;
use crate::dispatch::stateless::random_key;
use crate::dispatch::tasks::{self, Backend, Tasks};
#[cfg(feature = "otel")]
use crate::middleware::Telemetry;
use crate::model::apps::AppView;
use crate::model::error::BuildError;
use crate::model::limits::Limits;
use crate::model::prompt::Prompt;
use crate::model::resource::{Resource, ResourceTemplate};
use crate::model::result::ToolResult;
use crate::model::server_json::{self, CargoPackage, ServerJson, ServerJsonError, Serving};
use crate::model::task::{MemoryTaskStore, TaskStore};
use crate::model::tool::{Annotations, Tool};
use crate::protocol::Era;
use crate::protocol::Implementation;
use crate::protocol::extensions::UI;
use crate::protocol::stateless::CacheHint;
use crate::registry::build::{build_entries, runtime_entry};
use crate::registry::catalog::{Catalog, CatalogBuilder, CompletionRequest};
#[cfg(feature = "client")]
use crate::registry::catalog::{Items, Keys};
use crate::registry::tools::{Paging, Registry, ToolEntry};
#[cfg(feature = "skills")]
use crate::skills::{SkillSet, SkillSource};
#[cfg(feature = "redis")]
use crate::store::redis::Redis;
use crate::transform::ToolTransform;

/// Default number of tools per `tools/list` page: large enough that most servers fit in one.
pub const DEFAULT_PAGE_SIZE: usize = 1000;

/// The tools as configured, from which the served [`Registry`] is rebuilt on change.
struct ToolSet {
    entries: Vec<Arc<ToolEntry>>,
    disabled: HashSet<String>,
}

/// What a running server changes its tools and catalog from.
struct Changes {
    tools: Mutex<ToolSet>,
    /// Serializes catalog changes so none is lost.
    catalog: Mutex<()>,
    paging: Paging,
    deferral: Option<Arc<DeferredTools>>,
    /// Cancelled when the served state is gone (what the server's mounts watch).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    gone: CancellationToken,
    /// What the server says of itself in the MCP registry, beyond `serverInfo`.
    listing: (Option<CargoPackage>, ServerJson),
}

/// The registry that serves `entries`: every tool listed, or, deferred, the meta-tools and the
/// pinned tools listed and the rest reachable through them.
fn registry_of(
    mut entries: Vec<Arc<ToolEntry>>,
    paging: Paging,
    deferral: Option<&Arc<DeferredTools>>,
) -> Registry {
    match deferral {
        None => Registry::listing_all(entries, paging),
        Some(deferral) => {
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            let (meta_tools, listed) = deferral.plan(&entries);
            entries.extend(meta_tools);
            Registry::new(entries, &listed, paging)
        }
    }
}

/// Builds a [`Server`]: its identity, options, shared state and runtime tools. Every `#[tool]`
/// function linked into the binary is included unless [`inventory(false)`](Self::inventory).
///
/// ```no_run
/// use mcp_tools::{Server, Tool, ToolResult};
/// use serde_json::json;
///
/// #[derive(Default)]
/// struct Db;
///
/// fn main() -> std::process::ExitCode {
///     Server::builder()
///         .name("notes")
///         .version(env!("CARGO_PKG_VERSION"))
///         .instructions("Keep the user's notes. Search before creating duplicates.")
///         .state(Db::default())
///         .tool(Tool::new("ping_db", "Check the database.", json!({"type": "object"}),
///             |_, _| async { Ok(ToolResult::new().text("ok")) }))
///         .run()
/// }
/// ```
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    use_inventory: bool,
    tools: Vec<Tool>,
    state: StateMap,
    catalog: CatalogBuilder,
    deferral: Option<DeferredTools>,
    views: Vec<AppView>,
    page_size: usize,
    list_ttl: Duration,
    state_key: Option<[u8; 32]>,
    only_era: Option<Era>,
    task_store: Option<Arc<dyn TaskStore>>,
    #[cfg(feature = "http")]
    session_store: Option<Arc<dyn SessionStore>>,
    bus: Option<Arc<dyn Bus>>,
    task_ttl: Option<Duration>,
    task_poll_interval: Duration,
    limits: Limits,
    shutdown_timeout: Duration,
    client_request_timeout: Duration,
    current_thread: bool,
    layers: Vec<Wrap>,
    tool_layers: Vec<(Arc<str>, Wrap)>,
    list_filters: Vec<Arc<dyn ListFilter>>,
    observer: Option<Arc<dyn Observer>>,
    transforms: HashMap<String, ToolTransform>,
    cargo: Option<CargoPackage>,
    server_json: ServerJson,
    #[cfg(feature = "client")]
    mounts: Vec<Mount>,
    #[cfg(feature = "skills")]
    skills: Vec<SkillSource>,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            info: Implementation::new("mcp-tools-server", env!("CARGO_PKG_VERSION")),
            instructions: None,
            use_inventory: true,
            tools: Vec::new(),
            state: StateMap::default(),
            catalog: CatalogBuilder::default(),
            deferral: None,
            views: Vec::new(),
            page_size: DEFAULT_PAGE_SIZE,
            list_ttl: Duration::ZERO,
            state_key: None,
            only_era: None,
            task_store: None,
            #[cfg(feature = "http")]
            session_store: None,
            bus: None,
            task_ttl: Some(Duration::from_secs(60 * 60)),
            task_poll_interval: Duration::from_millis(500),
            limits: Limits::default(),
            shutdown_timeout: Duration::from_secs(10),
            client_request_timeout: Duration::from_secs(300),
            current_thread: false,
            layers: Vec::new(),
            tool_layers: Vec::new(),
            list_filters: Vec::new(),
            observer: None,
            transforms: HashMap::new(),
            cargo: None,
            server_json: ServerJson::default(),
            #[cfg(feature = "client")]
            mounts: Vec::new(),
            #[cfg(feature = "skills")]
            skills: Vec::new(),
        }
    }
}

impl ServerBuilder {
    /// The server's name in `serverInfo` (default `mcp-tools-server`; [`main!`](crate::main!)
    /// uses the crate's name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }
    /// The server's version in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }
    /// What Cargo says of the server's package, from [`cargo_package!`](crate::cargo_package!)
    /// (which [`main!`](crate::main!) passes): its name and version become `serverInfo`'s (a
    /// [`name`](Self::name) or [`version`](Self::version) after this replaces them), and its
    /// description, repository, homepage and licence go into the registry entry that the
    /// `server-json` subcommand prints ([`Server::server_json`]).
    ///
    /// ```
    /// let builder = mcp_tools::Server::builder().cargo_package(mcp_tools::cargo_package!());
    /// ```
    pub fn cargo_package(mut self, package: CargoPackage) -> Self {
        self.info.name.clone_from(&package.name);
        self.info.version.clone_from(&package.version);
        self.cargo = Some(package);
        self
    }
    /// What the server's entry in the MCP registry says beyond what the binary knows: its
    /// reverse-DNS name there, its packages and remotes, the environment variables it reads.
    /// See [`server_json`](crate::server_json) and [`Server::server_json`].
    pub fn server_json(mut self, entry: ServerJson) -> Self {
        self.server_json = entry;
        self
    }
    /// A human-readable title in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }
    /// Instructions sent to the client on `initialize` (hosts add them to the model's prompt).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
    /// Whether the `#[tool]` functions linked into the binary are served (default: true).
    pub fn inventory(mut self, include: bool) -> Self {
        self.use_inventory = include;
        self
    }
    /// Adds runtime tools (each replacing one of the same name), e.g. those of an OpenAPI
    /// document.
    pub fn tools<I: IntoIterator<Item = Tool>>(self, tools: I) -> Self {
        tools.into_iter().fold(self, Self::tool)
    }
    /// Adds a runtime tool. A tool with the same name as an earlier one (runtime or `#[tool]`)
    /// replaces it.
    pub fn tool(mut self, tool: Tool) -> Self {
        // Replacement happens in `build` (the last of a name wins): adding thousands of tools
        // stays linear.
        self.tools.push(tool);
        self
    }
    /// Adds a runtime resource (replacing a `#[resource]` with the same URI).
    pub fn resource(mut self, resource: Resource) -> Self {
        self.catalog.resources.retain(|r| r.uri != resource.uri);
        self.catalog.resources.push(resource);
        self
    }
    /// Adds a runtime resource template (replacing one with the same URI template).
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.catalog.templates.retain(|t| t.template.source != template.template.source);
        self.catalog.templates.push(template);
        self
    }
    /// Adds a runtime prompt (replacing a `#[prompt]` with the same name).
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.catalog.prompts.retain(|p| p.name != prompt.name);
        self.catalog.prompts.push(prompt);
        self
    }
    /// Answers `completion/complete` (suggestions for prompt arguments and resource-template
    /// variables). Without one, every completion is empty.
    ///
    /// ```
    /// use mcp_tools::{CompletionRef, Server};
    /// let builder = Server::builder().completer(|request, _ctx| async move {
    ///     match (&request.reference, request.argument.as_str()) {
    ///         (CompletionRef::Prompt(name), "language") if name == "review" => ["rust", "python", "go"]
    ///             .iter()
    ///             .filter(|l| l.starts_with(&request.value))
    ///             .map(|l| l.to_string())
    ///             .collect(),
    ///         _ => Vec::new(),
    ///     }
    /// });
    /// ```
    pub fn completer<F, Fut>(mut self, completer: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.catalog.completer = Some(Arc::new(move |request, ctx| Box::pin(completer(request, ctx))));
        self
    }
    /// Registers shared state, available to tools as [`State<T>`](crate::State) or
    /// [`Context::state`](crate::Context::state). One value per type.
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }
    /// Registers shared state you keep a handle to.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert(value);
        self
    }
    /// Serves an app view (its `ui://widget/{name}.html` resource and the OpenAI twin); link
    /// tools to it with [`AppView::tool_meta`](crate::AppView::tool_meta). `#[tool(widget = ...)]`
    /// registers its view by itself.
    pub fn app_view(mut self, view: AppView) -> Self {
        self.views.push(view);
        self
    }
    /// Serves Agent Skills, as the Skills extension says (see [`skills`](mod@crate::skills)): a
    /// folder of skills (each a folder with a `SKILL.md`), read when the server is built, or
    /// the files [`skills!`](crate::skills!) embedded in the binary. Each file is served as a
    /// `skill://` resource; the server declares the extension and answers `skills/list`,
    /// `skills/get` and `resources/directory/read`. Every `SKILL.md`'s front matter is checked
    /// when the server is built: each problem names the file and the field. Call it again for
    /// more folders.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), mcp_tools::BuildError> {
    /// let server = mcp_tools::Server::builder().skills("skills").build()?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "skills")]
    pub fn skills(mut self, source: impl Into<SkillSource>) -> Self {
        self.skills.push(source.into());
        self
    }
    /// Serves the catalog deferred: `tools/list` shows search / describe / call meta-tools
    /// (and pinned tools) instead of every tool. For servers with many tools; see
    /// [`deferred`](crate::deferred).
    pub fn defer_tools(mut self, deferred: DeferredTools) -> Self {
        self.deferral = Some(deferred);
        self
    }
    /// Wraps every tool call in a tower [`Layer`](tower::Layer): calls of `#[tool]` functions,
    /// runtime [`Tool`]s, OpenAPI operations and the tools deferred mode's `call_tool` runs. The
    /// layer's service sees a [`ToolCall`](crate::middleware::ToolCall) (the tool, its raw
    /// arguments, the call's [`Context`]) and answers a [`ToolResult`](crate::ToolResult): it
    /// may answer on its own, change the arguments, or change the result. Each call of `layer`
    /// wraps the layers added before it (the last added is the outermost), and every layer
    /// wraps the tools' own ([`tool_layer`](Self::tool_layer)). A layer's error is answered as
    /// a tool error naming it, a panic in it like a panicking handler's. With no layer, calls
    /// run their tool directly.
    ///
    /// ```rust,standalone_crate
    /// use mcp_tools::Server;
    /// use mcp_tools::middleware::{AccessLog, ToolCall, ToolService};
    /// use std::time::Duration;
    ///
    /// let server = Server::builder()
    ///     .layer(AccessLog::new())
    ///     // Any tower layer whose service takes a ToolCall and answers a ToolResult:
    ///     .layer(tower::layer::layer_fn(|inner: ToolService| {
    ///         tower::service_fn(move |call: ToolCall| {
    ///             let inner = inner.clone();
    ///             async move {
    ///                 tracing::info!(tool = call.name(), "calling");
    ///                 tower::ServiceExt::oneshot(inner, call).await
    ///             }
    ///         })
    ///     }))
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<ToolService> + Send + Sync + 'static,
        L::Service: tower::Service<ToolCall, Response = ToolResult> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<ToolCall>>::Error: Into<BoxError>,
        <L::Service as tower::Service<ToolCall>>::Future: Send + 'static,
    {
        self.layers.push(wrap(layer));
        self
    }

    /// Wraps the calls of one tool in a layer (inside the server's
    /// [`layer`](Self::layer)s; each call wraps the tool's layers added before it). Naming a
    /// tool the server does not have is a start-up error. A concurrency limit or a timeout for
    /// one tool, say:
    ///
    /// ```rust,standalone_crate
    /// use mcp_tools::{tool, Server};
    /// use mcp_tools::middleware::ConcurrencyLimit;
    ///
    /// /// Render the month's report (slow and memory-hungry).
    /// #[tool]
    /// async fn render_report(month: String) -> String {
    ///     format!("the report of {month}")
    /// }
    ///
    /// let server = Server::builder()
    ///     .tool_layer("render_report", ConcurrencyLimit::new(2))
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn tool_layer<L>(mut self, tool: impl Into<String>, layer: L) -> Self
    where
        L: tower::Layer<ToolService> + Send + Sync + 'static,
        L::Service: tower::Service<ToolCall, Response = ToolResult> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<ToolCall>>::Error: Into<BoxError>,
        <L::Service as tower::Service<ToolCall>>::Future: Send + 'static,
    {
        self.tool_layers.push((tool.into().into(), wrap(layer)));
        self
    }

    /// Filters or rewrites what each caller is shown: the items of `tools/list` (and of deferred
    /// mode's search and describe), `resources/list`, `resources/templates/list` and
    /// `prompts/list` (see [`ListFilter`]). Filters apply in the order added; an item is shown
    /// when every one keeps it.
    pub fn list_filter(mut self, filter: impl ListFilter) -> Self {
        self.list_filters.push(Arc::new(filter));
        self
    }

    /// Telemetry (feature `otel`): every request becomes an OpenTelemetry span after the MCP
    /// semantic conventions, its handler's `tracing` spans its children, and is measured by the
    /// `mcp.server.operation.duration` metric (see [`Telemetry`]). The command line turns this
    /// on by itself (`--otel`, or `OTEL_EXPORTER_OTLP_ENDPOINT` set); set it here for providers
    /// of your own, or when you serve without the command line.
    #[cfg(feature = "otel")]
    pub fn telemetry(mut self, telemetry: Telemetry) -> Self {
        self.observer = Some(Arc::new(telemetry));
        self
    }

    /// The telemetry given to [`telemetry`](Self::telemetry), if any (the command line's).
    #[cfg(feature = "otel")]
    pub(crate) fn telemetry_given(&self) -> Option<&Telemetry> {
        self.observer.as_deref().and_then(Telemetry::of)
    }

    /// The server's name and version, as `serverInfo` will say (the command line's).
    pub(crate) fn identity(&self) -> &Implementation {
        &self.info
    }

    /// Tools per `tools/list` page (default 1000).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }
    /// Serves one era of the protocol only (default: both, each client in its own; see
    /// [`Era`]). Pinned to [`Era::Handshake`], the server behaves as a 2025-11-25 server:
    /// `server/discover` is an unknown method, so dual-era clients fall back to `initialize`.
    /// Pinned to [`Era::Stateless`], `initialize` is an unknown method.
    pub fn only_era(mut self, era: Era) -> Self {
        self.only_era = Some(era);
        self
    }
    /// Where tasks' states are kept (default: [`MemoryTaskStore`], in this process).
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }
    /// How the instances of one service reach each other (default: [`LocalBus`], none): with a
    /// store they share, `tasks/cancel` and `tasks/update` sent to any instance reach the task
    /// on the instance running it; and the changes each makes (tools, resources or prompts
    /// added or removed at run time, [`Server::notify_resource_updated`], tasks' states) are
    /// told to the listeners of every other instance, as if they were their own.
    pub fn bus(mut self, bus: impl Bus) -> Self {
        self.bus = Some(Arc::new(bus));
        self
    }
    /// Shares tasks, events and 2025-11-25 HTTP sessions with the other instances of this
    /// service through Redis: `redis` becomes the [`task_store`](Self::task_store), the
    /// [`bus`](Self::bus) and the store of the HTTP endpoint's sessions (a session created
    /// through one instance is accepted by every other). See [`store`](crate::store) for what
    /// is shared and how it fails. The command line's
    /// `--redis URL` does the same.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_tools::Server;
    /// use mcp_tools::store::Redis;
    ///
    /// let redis = Redis::connect("redis://127.0.0.1:6379/").await?;
    /// let server = Server::builder().redis(redis).build()?;
    /// # let _ = server; Ok(())
    /// # }
    /// ```
    #[cfg(feature = "redis")]
    #[cfg_attr(not(feature = "http"), allow(unused_mut))]
    pub fn redis(mut self, redis: Redis) -> Self {
        #[cfg(feature = "http")]
        {
            self.session_store = Some(Arc::new(redis.clone()));
        }
        self.task_store(redis.clone()).bus(redis)
    }
    /// How long a task is kept after its creation (default one hour; `None`: as long as its
    /// store keeps it).
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.task_ttl = ttl;
        self
    }
    /// How often clients are asked to poll a task (default 500 ms).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.task_poll_interval = interval;
        self
    }
    /// How long 2026-07-28 clients may reuse the results of `tools/list`, `prompts/list`,
    /// `resources/list` and `resources/templates/list` (their `ttlMs`; default 0: ask again every
    /// time). Set it when the catalog does not change while serving, or when clients listen for
    /// its changes.
    pub fn list_cache_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }
    /// The key that signs the `requestState` of 2026-07-28 requests that ask the client
    /// something (the state carries the answers so far, and the client must not alter it).
    /// Default: random, per process. Give every instance behind a load balancer the same
    /// secret, so a retry may reach any of them; it is hashed into the key.
    pub fn request_state_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        use sha2::Digest as _;
        self.state_key = Some(sha2::Sha256::digest(secret.as_ref()).into());
        self
    }
    /// The largest message accepted, in bytes (default 4 MiB; [`Limits::max_message_bytes`]). Larger ones are answered with
    /// an error and discarded; the connection stays open.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.limits = self.limits.max_message_size(bytes);
        self
    }
    /// Sets every bound on what clients send and keep (see [`Limits`] for each and its default).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// How long running calls may take to finish when the input ends (default 10 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Whether [`run`](Self::run) and [`Server::run`] serve on Tokio's single-threaded
    /// (current-thread) runtime instead of its multi-threaded one (default: false).
    ///
    /// On one thread, reading a request, running it and writing its answer need no hand-off
    /// between threads, which lowers latency where tools mostly wait: a gateway whose tools
    /// are other servers' (`examples/gateway.rs` sets it; `bench/gateway.md` has the figures).
    /// But every request then shares that thread: a handler that computes for long, or blocks,
    /// holds up every other request (and the reading of cancellations) until it yields. Leave
    /// it off for tools that compute, or run their work in `tokio::task::spawn_blocking`.
    pub fn current_thread(mut self, yes: bool) -> Self {
        self.current_thread = yes;
        self
    }

    /// How long a request to the client (sampling, elicitation, roots) may wait for its answer
    /// (default 5 minutes: a person may be answering).
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.client_request_timeout = timeout;
        self
    }

    /// Serves the tool `tool` (a `#[tool]`, runtime, OpenAPI or mounted tool, by the name it
    /// has before) transformed: renamed, described again, its arguments renamed, hidden or
    /// given defaults (see [`ToolTransform`]). A transformation that does not fit its tool, or
    /// names no tool, is a start-up error.
    pub fn transform(mut self, tool: impl Into<String>, transform: ToolTransform) -> Self {
        self.transforms.insert(tool.into(), transform);
        self
    }

    /// Mounts another MCP server: its tools, resources, resource templates and prompts are
    /// served as this server's own, under `prefix` (see [`compose`](crate::compose)). A server
    /// that mounts is built with [`connect`](Self::connect).
    #[cfg(feature = "client")]
    pub fn mount(self, prefix: impl Into<String>, upstream: Upstream) -> Self {
        self.mount_with(Mount::new(prefix, upstream))
    }

    /// Mounts another MCP server as `mount` says (its prefix, separator, scopes…).
    #[cfg(feature = "client")]
    pub fn mount_with(mut self, mount: Mount) -> Self {
        self.mounts.push(mount);
        self
    }

    /// Whether the command line serves on a current-thread runtime ([`Self::current_thread`]).
    pub(crate) fn wants_current_thread(&self) -> bool {
        self.current_thread
    }

    /// Whether this server mounts upstreams (and must be built with `connect`).
    pub(crate) fn mounts_any(&self) -> bool {
        #[cfg(feature = "client")]
        return !self.mounts.is_empty();
        #[cfg(not(feature = "client"))]
        false
    }

    /// Builds the server and connects its mounts: waits for each upstream's first connection
    /// and listing (at most its [`startup_timeout`](Mount::startup_timeout)), then checks the
    /// names. Two items with one name (a mounted tool and a native one, two upstreams' prompts…)
    /// fail the start-up with an error naming both sides, as do a required upstream that
    /// cannot be connected and a transformation or `tool_layer` naming no tool. An upstream
    /// that is not required may connect later; each is kept connected (reconnected with
    /// back-off) for as long as the server lives.
    #[cfg(feature = "client")]
    pub async fn connect(mut self) -> Result<Server, BuildError> {
        use crate::compose::mount::{Host, Started, start};
        let mounts = std::mem::take(&mut self.mounts);
        let mut problems: Vec<String> = mounts.iter().flat_map(Mount::problems).collect();
        let mut prefixes = HashSet::new();
        for mount in mounts.iter().filter(|m| !m.prefix().is_empty()) {
            if !prefixes.insert(mount.prefix()) {
                problems.push(format!("two upstreams are mounted under the prefix `{}`", mount.prefix()));
            }
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let layered: Vec<Arc<str>> = self.tool_layers.iter().map(|(name, _)| name.clone()).collect();
        let transforms = Arc::new(self.transforms.clone());
        let info = self.info.clone();
        let (server, unmatched) = self.assemble(!mounts.is_empty())?;
        if mounts.is_empty() {
            return Ok(server);
        }
        let host = Host {
            server: info,
            target: Arc::new(MountTarget {
                shared: Arc::downgrade(&server.shared),
                changes: server.changes.clone(),
            }),
            owners: Default::default(),
            transforms,
            gone: server.changes.gone.clone(),
        };
        let started: Vec<(Mount, _)> =
            mounts.into_iter().map(|m| (m.clone(), start(m, host.clone()))).collect();
        let mut mounted: HashSet<String> = HashSet::new();
        let mut complete = true;
        for (mount, first) in started {
            let who = format!("upstream `{}` ({})", mount.prefix(), mount.upstream.label());
            match tokio::time::timeout(mount.startup_timeout, first).await {
                Ok(Ok(Started::Published { clashes, tools })) => {
                    problems.extend(clashes);
                    mounted.extend(tools);
                }
                Ok(Ok(Started::Failed(why))) if mount.required => {
                    problems.push(format!("the required {who} could not be connected: {why}"));
                }
                Ok(Ok(Started::Failed(why))) => {
                    complete = false;
                    tracing::warn!("{who} could not be connected ({why}); its tools appear once it is");
                }
                Ok(Err(_)) => complete = false,
                Err(_) if mount.required => problems
                    .push(format!("the required {who} did not connect within {:?}", mount.startup_timeout)),
                Err(_) => {
                    complete = false;
                    tracing::warn!(
                        "{who} is still connecting after {:?}; its tools appear once it is",
                        mount.startup_timeout
                    );
                }
            }
        }
        // With every upstream listed, a name nothing has is a mistake.
        if complete {
            for name in unmatched.iter().filter(|n| !mounted.contains(*n)) {
                problems.push(format!(
                    "`transform` names `{name}`, which is not a tool of this server or its mounts"
                ));
            }
            let registry = server.shared.registry.load();
            for name in layered.iter().filter(|n| registry.get(n).is_none()) {
                problems.push(format!(
                    "`tool_layer` names `{name}`, which is not a tool of this server or its mounts (check its name)"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        Ok(server)
    }

    /// Checks the catalog (names, duplicates, schemas, state) and builds the server. All
    /// problems are reported at once. A server that mounts upstreams is built with `connect`
    /// (feature `client`) instead.
    pub fn build(self) -> Result<Server, BuildError> {
        if self.mounts_any() {
            return Err(BuildError::new(vec![
                "this server mounts upstreams: build it with `connect().await`, which connects them (or `run()`, which does)"
                    .into(),
            ]));
        }
        self.assemble(false).map(|(server, _)| server)
    }

    /// Builds the server; `mounting`: names of tools a mount may bring are not checked yet
    /// (the transformations that named no tool so far are returned).
    fn assemble(self, mounting: bool) -> Result<(Server, Vec<String>), BuildError> {
        let statics: Vec<&'static ToolRegistration> = if self.use_inventory {
            inventory::iter::<ToolRegistration>.into_iter().collect()
        } else {
            Vec::new()
        };
        let entries = build_entries(&statics, &self.tools, &self.state).map_err(BuildError::new)?;
        let (entries, unmatched) = transformed(entries, &self.transforms, mounting)?;
        // Views: those of #[tool(widget = ...)] functions, then runtime ones. One name, one view.
        let mut views: Vec<AppView> = Vec::new();
        let mut problems = Vec::new();
        let declared = statics.iter().filter_map(|r| r.widget.map(|w| w.view()));
        for view in declared.chain(self.views) {
            match views.iter().find(|v| v.name() == view.name()) {
                Some(existing) if existing.same_as(&view) => {}
                Some(_) => problems.push(format!(
                    "two different app views are named `{}`; give one another name",
                    view.name()
                )),
                None => views.push(view),
            }
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let mut catalog = self.catalog;
        for view in &views {
            for resource in view.resources() {
                catalog.resources.retain(|r| r.uri != resource.uri);
                catalog.resources.push(resource);
            }
        }
        // The extensions offered: tasks always (2026-07-28), MCP Apps with views, the skills'.
        let mut extensions = Extensions::default();
        extensions.offer(tasks::extension());
        if !views.is_empty() {
            extensions.offer(Extension::declared_only(UI, BOTH_ERAS));
        }
        #[cfg_attr(not(feature = "skills"), allow(unused_mut))]
        let mut deferral = self.deferral;
        #[cfg(feature = "skills")]
        if !self.skills.is_empty() {
            let skills = Arc::new(SkillSet::load(&self.skills).map_err(BuildError::new)?);
            for resource in skills.resources() {
                if catalog.resources.iter().any(|r| r.uri == resource.uri) {
                    problems.push(format!(
                        "two resources have the URI `{}`: a skill's file and another",
                        resource.uri
                    ));
                }
                catalog.resources.push(resource);
            }
            extensions.offer(skills.extension());
            let read = skills.clone();
            let shelf = crate::deferred::meta::SkillShelf {
                skills: skills.summaries(),
                read: Arc::new(move |uri: &str| read.read_for_model(uri)),
            };
            deferral = deferral.map(|d| d.with_skills(shelf));
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let catalog = catalog.build(&self.state, self.use_inventory).map_err(BuildError::new)?;
        let pipeline = Arc::new(Pipeline::new(&self.layers, &self.tool_layers, self.list_filters));
        let deferral = deferral.map(|d| Arc::new(d.with_pipeline(pipeline.clone())));
        let ttl_ms = u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX);
        let list_cache = CacheHint { ttl_ms, public: true };
        let paging = Paging { page_size: self.page_size, cache: list_cache };
        let registry = registry_of(entries.clone(), paging, deferral.as_ref());
        // A tool's layers name one of its tools (or a meta-tool of deferred mode); a mount's tools
        // are checked once it is connected.
        let unknown: Vec<String> = self
            .tool_layers
            .iter()
            .filter(|(name, _)| !mounting && registry.get(name).is_none())
            .map(|(name, _)| {
                format!("`tool_layer` names `{name}`, which is not a tool of this server (check its name)")
            })
            .collect();
        if !unknown.is_empty() {
            return Err(BuildError::new(unknown));
        }
        // A bus given means other instances to share events with; the default joins none.
        let events = Arc::new(Events::new(64, self.bus.clone()));
        let gone = CancellationToken::new();
        let server = Server {
            shared: Arc::new(Shared {
                info: self.info,
                instructions: self.instructions,
                registry: ArcSwap::from_pointee(registry),
                catalog: ArcSwap::from_pointee(catalog),
                state: Arc::new(self.state),
                events,
                running: std::sync::atomic::AtomicUsize::new(0),
                limits: self.limits.clone(),
                shutdown_timeout: self.shutdown_timeout,
                client_request_timeout: self.client_request_timeout,
                current_thread: self.current_thread,
                state_key: arc_swap::ArcSwap::from_pointee(self.state_key.unwrap_or_else(random_key)),
                state_key_given: self.state_key.is_some(),
                list_cache,
                only_era: self.only_era,
                tasks: Arc::new(Tasks::new(
                    Backend {
                        store: self.task_store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                        bus: self.bus.unwrap_or_else(|| Arc::new(LocalBus)),
                    },
                    self.task_ttl,
                    self.task_poll_interval,
                    Quota::new("running tasks", self.limits.max_tasks, self.limits.max_tasks_per_caller),
                )),
                extensions,
                envelopes: Default::default(),
                pipeline,
                observer: self.observer.map(std::sync::OnceLock::from).unwrap_or_default(),
                listens: Quota::new(
                    "listen streams",
                    self.limits.max_listen_streams,
                    self.limits.max_listen_streams_per_caller,
                ),
                #[cfg(feature = "http")]
                sessions: self.session_store.map(std::sync::OnceLock::from).unwrap_or_default(),
                _gone: gone.clone().drop_guard(),
            }),
            changes: Arc::new(Changes {
                tools: Mutex::new(ToolSet { entries, disabled: HashSet::new() }),
                catalog: Mutex::new(()),
                paging,
                deferral,
                gone,
                listing: (self.cargo, self.server_json),
            }),
        };
        Ok((server, unmatched))
    }
}

/// The tools with their transformations applied: a transformation naming no tool is an error
/// (unless `mounting`: it may name a mount's tool, and is returned), as are two tools left with
/// one name.
fn transformed(
    entries: Vec<Arc<ToolEntry>>,
    transforms: &HashMap<String, ToolTransform>,
    mounting: bool,
) -> Result<(Vec<Arc<ToolEntry>>, Vec<String>), BuildError> {
    if transforms.is_empty() {
        return Ok((entries, Vec::new()));
    }
    let mut problems = Vec::new();
    let mut unmatched: Vec<String> =
        transforms.keys().filter(|name| !entries.iter().any(|e| *e.name == ***name)).cloned().collect();
    unmatched.sort();
    if !mounting {
        problems.extend(
            unmatched
                .iter()
                .map(|name| format!("`transform` names `{name}`, which is not a tool of this server")),
        );
    }
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        match transforms.get(&*entry.name) {
            None => out.push(entry),
            Some(transform) => match crate::transform::apply(entry, transform) {
                Ok(Some(entry)) => out.push(entry),
                Ok(None) => {}
                Err(more) => problems.extend(more),
            },
        }
    }
    let mut seen = HashSet::new();
    for entry in &out {
        if !seen.insert(entry.name.clone()) {
            problems.push(format!("two tools are named `{}` once transformed; rename one", entry.name));
        }
    }
    if problems.is_empty() { Ok((out, unmatched)) } else { Err(BuildError::new(problems)) }
}

/// What a server's mounts change it through: its served state while it lives.
#[cfg(feature = "client")]
struct MountTarget {
    shared: std::sync::Weak<Shared>,
    changes: Arc<Changes>,
}

#[cfg(feature = "client")]
impl crate::compose::mount::Target for MountTarget {
    fn swap(
        &self,
        tools: Option<(&HashSet<String>, Vec<Arc<ToolEntry>>)>,
        items: Option<(&Keys, Items)>,
    ) -> Option<Vec<String>> {
        let shared = self.shared.upgrade()?;
        let server = Server { shared, changes: self.changes.clone() };
        let mut clashes = Vec::new();
        if let Some((old, new)) = tools {
            let mut set = self.changes.tools.lock().expect("tool set lock");
            set.entries.retain(|e| !old.contains(&*e.name));
            let mut taken: HashSet<Arc<str>> = set.entries.iter().map(|e| e.name.clone()).collect();
            for entry in new {
                if taken.insert(entry.name.clone()) {
                    set.entries.push(entry);
                } else {
                    clashes.push(format!("tool `{}`", entry.name));
                }
            }
            // A mount's tools: every instance mounts the upstream and hears its changes itself.
            server.publish_tools(&set, false);
        }
        if let Some((old, new)) = items {
            let _guard = self.changes.catalog.lock().expect("catalog lock");
            let (catalog, more) = server.shared.catalog.load().swapped(old, new);
            server.shared.catalog.store(Arc::new(catalog));
            server.shared.events.tell_here(ServerEvent::ResourcesChanged);
            server.shared.events.tell_here(ServerEvent::PromptsChanged);
            clashes.extend(more);
        }
        Some(clashes)
    }

    fn resource_updated(&self, uri: String) {
        if let Some(shared) = self.shared.upgrade() {
            shared.events.tell_here(ServerEvent::ResourceUpdated(uri));
        }
    }
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("inventory", &self.use_inventory)
            .field("tools", &self.tools.iter().map(Tool::name).collect::<Vec<_>>())
            .field("deferred", &self.deferral.is_some())
            .field("page_size", &self.page_size)
            .field("limits", &self.limits)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("client_request_timeout", &self.client_request_timeout)
            .field("current_thread", &self.current_thread)
            .finish_non_exhaustive()
    }
}

/// A snapshot of one tool's definition, from [`Server::tool`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolInfo {
    /// The tool's name.
    pub name: String,
    /// Its display title.
    pub title: Option<String>,
    /// Its full description.
    pub description: String,
    /// The one-line summary (default: the description's first line).
    pub summary: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The advertised input schema.
    pub input_schema: Value,
    /// The advertised output schema, if any.
    pub output_schema: Option<Value>,
    /// Its behaviour hints.
    pub annotations: Annotations,
}

/// A built MCP server: a checked catalog and its options. Cheap to clone.
#[derive(Clone)]
pub struct Server {
    /// What the sessions read (the transports open sessions on it).
    pub(crate) shared: Arc<Shared>,
    changes: Arc<Changes>,
}

impl Server {
    /// A builder that includes every `#[tool]` of the binary.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The server's `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.shared.info
    }

    /// The server's telemetry, if it has any (the command line's).
    #[cfg(feature = "otel")]
    pub(crate) fn telemetry(&self) -> Option<&Telemetry> {
        self.shared.observer.get().and_then(|observer| Telemetry::of(observer.as_ref()))
    }

    /// Gives a built server telemetry (the command line's `--otel`), unless it has some already.
    #[cfg(feature = "otel")]
    pub(crate) fn set_telemetry(&self, telemetry: Telemetry) {
        let _ = self.shared.observer.set(Arc::new(telemetry));
    }

    /// Signs `requestState` with a key made from `secret` from now on, unless the server was
    /// given its own ([`ServerBuilder::request_state_secret`]): the command line's `--redis`.
    #[cfg(feature = "redis")]
    pub(crate) fn share_request_state_secret(&self, secret: &[u8]) {
        use sha2::Digest as _;
        if !self.shared.state_key_given {
            self.shared.state_key.store(Arc::new(sha2::Sha256::digest(secret).into()));
        }
    }

    /// Keeps the server's tasks in Redis from now on (the command line's `--redis URL`, given
    /// before it serves): the store and bus of [`ServerBuilder::redis`].
    #[cfg(feature = "redis")]
    pub(crate) fn set_redis(&self, redis: Redis) {
        self.shared.events.set_bus(Arc::new(redis.clone()));
        #[cfg(feature = "http")]
        let _ = self.shared.sessions.set(Arc::new(redis.clone()));
        self.shared.tasks.set_backend(Backend { store: Arc::new(redis.clone()), bus: Arc::new(redis) });
    }

    /// The server's entry for the [MCP registry](https://registry.modelcontextprotocol.io), its
    /// `server.json` (schema [`server_json::SCHEMA`]), as the `server-json` subcommand prints it
    /// with no options: name, version and description from Cargo
    /// ([`ServerBuilder::cargo_package`]), the packages and remotes of
    /// [`ServerBuilder::server_json`], each package served over stdio, and the transports, tools
    /// and scopes in `_meta`. The error lists every missing or invalid part, with its fix.
    pub fn server_json(&self) -> Result<Value, ServerJsonError> {
        self.server_json_with(self.server_json_config(), &Serving::default()).map(|(entry, _)| entry)
    }

    /// The entry as `config` and `serving` say (the subcommand's options merged in), with its
    /// warnings.
    pub(crate) fn server_json_with(
        &self,
        config: &ServerJson,
        serving: &Serving,
    ) -> Result<(Value, Vec<String>), ServerJsonError> {
        let registry = self.shared.registry.load();
        let mut tools: Vec<String> = registry.tools().iter().map(|t| t.name.to_string()).collect();
        tools.sort();
        let mut scopes: Vec<String> =
            registry.tools().iter().flat_map(|t| t.scopes.iter().cloned()).collect();
        scopes.sort();
        scopes.dedup();
        let facts = server_json::Facts {
            info: &self.shared.info,
            cargo: self.changes.listing.0.as_ref(),
            tools,
            scopes,
        };
        server_json::render(config, &facts, serving)
    }

    /// The registry entry as configured on the builder.
    pub(crate) fn server_json_config(&self) -> &ServerJson {
        &self.changes.listing.1
    }

    /// The names of all served tools, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared.registry.load().tools().iter().map(|t| t.name.to_string()).collect()
    }

    /// Rebuilds the served tools from `set` and tells every client: this instance's, and, when
    /// `shared` (a change of this instance's own, not a mount's), the other instances'.
    fn publish_tools(&self, set: &ToolSet, shared: bool) {
        let served = set.entries.iter().filter(|e| !set.disabled.contains(&*e.name)).cloned().collect();
        let registry = registry_of(served, self.changes.paging, self.changes.deferral.as_ref());
        self.shared.registry.store(Arc::new(registry));
        if shared {
            self.shared.events.announce(ServerEvent::ToolsChanged);
        } else {
            self.shared.events.tell_here(ServerEvent::ToolsChanged);
        }
    }

    /// Adds a runtime tool while serving, replacing any tool of the same name; every connected
    /// client is sent `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: Tool) -> Result<(), BuildError> {
        let entry = Arc::new(runtime_entry(&tool).map_err(BuildError::new)?);
        let mut set = self.changes.tools.lock().expect("tool set lock");
        set.entries.retain(|e| e.name != entry.name);
        set.entries.push(entry);
        self.publish_tools(&set, true);
        Ok(())
    }

    /// Removes a tool while serving (a `#[tool]` or a runtime one); returns whether it existed.
    /// Clients are sent `notifications/tools/list_changed`.
    pub fn remove_tool(&self, name: &str) -> bool {
        let mut set = self.changes.tools.lock().expect("tool set lock");
        let before = set.entries.len();
        set.entries.retain(|e| &*e.name != name);
        let removed = set.entries.len() != before;
        if removed {
            self.publish_tools(&set, true);
        }
        removed
    }

    /// Hides (`false`) or shows again (`true`) a tool while serving: a disabled tool is not
    /// listed and cannot be called. Returns whether the tool exists. Clients are sent
    /// `notifications/tools/list_changed` when this changes anything.
    pub fn set_tool_enabled(&self, name: &str, enabled: bool) -> bool {
        let mut set = self.changes.tools.lock().expect("tool set lock");
        if !set.entries.iter().any(|e| &*e.name == name) {
            return false;
        }
        let changed = if enabled { set.disabled.remove(name) } else { set.disabled.insert(name.to_owned()) };
        if changed {
            self.publish_tools(&set, true);
        }
        true
    }

    fn edit_catalog(&self, edit: impl FnOnce(&Catalog) -> Option<Catalog>, event: ServerEvent) -> bool {
        let _guard = self.changes.catalog.lock().expect("catalog lock");
        let Some(changed) = edit(&self.shared.catalog.load()) else { return false };
        self.shared.catalog.store(Arc::new(changed));
        self.shared.events.announce(event);
        true
    }

    /// Adds a resource while serving (replacing one with the same URI); connected clients are
    /// sent `notifications/resources/list_changed`. (A server that had no resources at all when
    /// a client connected did not declare the `resources` capability to that client.)
    pub fn add_resource(&self, resource: Resource) {
        self.edit_catalog(|c| Some(c.with_resource(resource)), ServerEvent::ResourcesChanged);
    }

    /// Adds a resource template while serving (replacing one with the same URI template);
    /// clients are sent `notifications/resources/list_changed`.
    pub fn add_resource_template(&self, template: ResourceTemplate) {
        self.edit_catalog(|c| Some(c.with_template(template)), ServerEvent::ResourcesChanged);
    }

    /// Removes the resource (or resource template) at `uri` while serving; returns whether it
    /// existed. Clients are sent `notifications/resources/list_changed`.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.edit_catalog(|c| c.without_resource(uri), ServerEvent::ResourcesChanged)
    }

    /// Adds a prompt while serving (replacing one with the same name); clients are sent
    /// `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.edit_catalog(|c| Some(c.with_prompt(prompt)), ServerEvent::PromptsChanged);
    }

    /// Removes the prompt `name` while serving; returns whether it existed. Clients are sent
    /// `notifications/prompts/list_changed`.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.edit_catalog(|c| c.without_prompt(name), ServerEvent::PromptsChanged)
    }

    /// Tells the clients subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.shared.events.announce(ServerEvent::ResourceUpdated(uri.into()));
    }

    /// What the server knows of one tool (including what `tools/list` does not send: its
    /// summary and tags), or `None` if there is no such tool.
    pub fn tool(&self, name: &str) -> Option<ToolInfo> {
        let registry = self.shared.registry.load();
        let entry = registry.get(name)?;
        Some(ToolInfo {
            name: entry.name.to_string(),
            title: entry.title.clone(),
            description: entry.description.clone(),
            summary: entry.summary.clone(),
            tags: entry.tags.clone(),
            input_schema: (*entry.input_schema).clone(),
            output_schema: entry.output_schema.as_deref().cloned(),
            annotations: entry.annotations.clone(),
        })
    }

    /// The URIs of the fixed resources, sorted.
    pub fn resource_uris(&self) -> Vec<String> {
        self.shared.catalog.load().resource_uris()
    }

    /// The names of the prompts, sorted.
    pub fn prompt_names(&self) -> Vec<String> {
        self.shared.catalog.load().prompt_names()
    }

    /// The warning for a server that serves nothing: no tools, resources or prompts. The usual
    /// cause is `#[tool]` functions in a library crate the binary never names, which the linker
    /// then leaves out.
    /// `fix` says where the line that names the library goes.
    pub(crate) fn empty_catalog_warning(&self, fix: &str) -> Option<String> {
        let catalog = self.shared.catalog.load();
        let empty = self.shared.registry.load().tools().is_empty()
            && catalog.resources().is_empty()
            && catalog.templates().is_empty()
            && catalog.prompts().is_empty();
        empty.then(|| {
            format!(
                "this server has no tools, resources or prompts. If its #[tool] functions are in a \
                 library crate, the crate that builds the server must name it or the linker leaves \
                 them out: add `use my_library as _;` {fix}. See the guide's Troubleshooting \
                 (mcp_tools::guide::troubleshooting)."
            )
        })
    }

    /// What `tools/list` shows (every page), in one JSON value `{"tools": [...]}`. Deferred,
    /// that is the meta-tools and the pinned tools.
    pub fn tools_json(&self) -> Value {
        let registry = self.shared.registry.load();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        while let Some(page) = registry.page(cursor.as_deref(), Era::Handshake, None) {
            let mut page: Value = serde_json::from_str(page.get()).expect("pages are JSON");
            if let Some(Value::Array(listed)) = page.get_mut("tools").map(Value::take) {
                tools.extend(listed);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        serde_json::json!({ "tools": tools })
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.shared.info)
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}
