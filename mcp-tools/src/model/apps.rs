//! MCP Apps views: an HTML document a host renders in a sandboxed iframe, fed with a tool's
//! structured result. A view is served as the resource `ui://widget/{name}.html` (mime
//! `text/html;profile=mcp-app`, plus a `text/html+skybridge` twin for older ChatGPT hosts) and
//! linked from its tool's `_meta`. `#[tool(widget = ...)]` does all of it; [`AppView`] does it
//! at run time.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::resource::{Resource, ResourceContents};
use crate::model::result::{OutputPlan, ToolOutput, ToolResult};

/// The MIME type of an MCP Apps view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The MIME type of the OpenAI Apps SDK twin.
pub const SKYBRIDGE_MIME_TYPE: &str = "text/html+skybridge";

/// An interactive view for one or more tools, built at run time. Register it with
/// [`ServerBuilder::app_view`](crate::ServerBuilder::app_view) and attach
/// [`tool_meta`](AppView::tool_meta) to the tools that show it.
///
/// ```
/// use mcp_tools::{AppView, Server, Tool, ToolResult};
/// use serde_json::json;
///
/// let view = AppView::new("weather-card", "<!doctype html><html><body>…</body></html>")
///     .connect_domains(["https://api.weather.example"])
///     .prefers_border(true);
/// let tool = Tool::new("weather", "Show the weather.", json!({"type": "object"}), |_, _| async {
///     Ok(ToolResult::new().with_structured(json!({"temp": 21})))
/// })
/// .view(&view);
/// let server = Server::builder().inventory(false).app_view(view).tool(tool).build().unwrap();
/// assert!(server.resource_uris().contains(&"ui://widget/weather-card.html".to_owned()));
/// ```
#[derive(Clone, Debug)]
pub struct AppView {
    name: String,
    html: Cow<'static, str>,
    invoking: Option<String>,
    invoked: Option<String>,
    accessible: bool,
    visibility: Option<Vec<String>>,
    connect_domains: Vec<String>,
    resource_domains: Vec<String>,
    prefers_border: Option<bool>,
    domain: Option<String>,
    skybridge: bool,
}

impl AppView {
    /// A view named `name` (its URI is `ui://widget/{name}.html`) showing this HTML document.
    pub fn new(name: impl Into<String>, html: impl Into<Cow<'static, str>>) -> Self {
        AppView {
            name: name.into(),
            html: html.into(),
            invoking: None,
            invoked: None,
            accessible: true,
            visibility: None,
            connect_domains: Vec::new(),
            resource_domains: Vec::new(),
            prefers_border: None,
            domain: None,
            skybridge: true,
        }
    }
    /// The status text while the tool runs (default `Loading {name}...`; ≤ 64 characters).
    pub fn invoking(mut self, text: impl Into<String>) -> Self {
        self.invoking = Some(text.into());
        self
    }
    /// The status text once it ran (default `{name} ready`; ≤ 64 characters).
    pub fn invoked(mut self, text: impl Into<String>) -> Self {
        self.invoked = Some(text.into());
        self
    }
    /// Whether the view may call tools itself (`openai/widgetAccessible`, default true).
    pub fn accessible(mut self, accessible: bool) -> Self {
        self.accessible = accessible;
        self
    }
    /// Who may call the linked tool: `["model", "app"]` (default, unset) or `["app"]` for a
    /// tool only the view calls (hidden from the model and from deferred search).
    pub fn visibility<I: IntoIterator<Item = S>, S: Into<String>>(mut self, who: I) -> Self {
        self.visibility = Some(who.into_iter().map(Into::into).collect());
        self
    }
    /// Origins the view may fetch from (CSP `connect-src`).
    pub fn connect_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.connect_domains.extend(origins.into_iter().map(Into::into));
        self
    }
    /// Origins the view may load scripts, styles, images and fonts from.
    pub fn resource_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.resource_domains.extend(origins.into_iter().map(Into::into));
        self
    }
    /// Whether the host should draw a border around the view.
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.prefers_border = Some(border);
        self
    }
    /// A dedicated origin for the view, for hosts that support it.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }
    /// Whether to also serve the `text/html+skybridge` twin for older ChatGPT hosts (default true).
    pub fn skybridge(mut self, serve: bool) -> Self {
        self.skybridge = serve;
        self
    }

    /// The view's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `ui://widget/{name}.html`.
    pub fn uri(&self) -> String {
        format!("ui://widget/{}.html", self.name)
    }
    fn skybridge_uri(&self) -> String {
        format!("ui://widget/{}.skybridge.html", self.name)
    }

    /// The `_meta` entries that link a tool to this view, for hosts of both MCP Apps and the
    /// OpenAI Apps SDK.
    pub fn tool_meta(&self) -> Map<String, Value> {
        let mut ui = Map::new();
        ui.insert("resourceUri".into(), json!(self.uri()));
        if let Some(visibility) = &self.visibility {
            ui.insert("visibility".into(), json!(visibility));
        }
        let mut meta = Map::new();
        meta.insert("ui".into(), Value::Object(ui));
        meta.insert("ui/resourceUri".into(), json!(self.uri()));
        let template = if self.skybridge { self.skybridge_uri() } else { self.uri() };
        meta.insert("openai/outputTemplate".into(), json!(template));
        let invoking = self.invoking.clone().unwrap_or_else(|| format!("Loading {}...", self.name));
        let invoked = self.invoked.clone().unwrap_or_else(|| format!("{} ready", self.name));
        meta.insert("openai/toolInvocation/invoking".into(), json!(invoking));
        meta.insert("openai/toolInvocation/invoked".into(), json!(invoked));
        meta.insert("openai/widgetAccessible".into(), json!(self.accessible));
        meta.insert("openai/resultCanProduceWidget".into(), json!(true));
        meta
    }

    /// The view's `_meta.ui` on its resource: CSP, border, domain.
    fn resource_ui_meta(&self) -> Value {
        let mut ui = Map::new();
        if !self.connect_domains.is_empty() || !self.resource_domains.is_empty() {
            ui.insert(
                "csp".into(),
                json!({"connectDomains": self.connect_domains, "resourceDomains": self.resource_domains}),
            );
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), json!(border));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), json!(domain));
        }
        Value::Object(ui)
    }

    /// The resources that serve this view.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        let ui = self.resource_ui_meta();
        let contents = ResourceContents::text(self.uri(), Some(APP_MIME_TYPE), self.html.to_string())
            .with_meta("ui", ui.clone());
        let mut out = vec![
            Resource::fixed(self.uri(), self.name.clone(), contents)
                .mime_type(APP_MIME_TYPE)
                .description(format!("The `{}` view (MCP Apps).", self.name))
                .meta("ui", ui),
        ];
        if self.skybridge {
            let mut twin = ResourceContents::text(
                self.skybridge_uri(),
                Some(SKYBRIDGE_MIME_TYPE),
                self.html.to_string(),
            );
            if !self.connect_domains.is_empty() || !self.resource_domains.is_empty() {
                twin = twin.with_meta(
                    "openai/widgetCSP",
                    json!({"connect_domains": self.connect_domains, "resource_domains": self.resource_domains}),
                );
            }
            if let Some(border) = self.prefers_border {
                twin = twin.with_meta("openai/widgetPrefersBorder", json!(border));
            }
            out.push(
                Resource::fixed(self.skybridge_uri(), format!("{}-skybridge", self.name), twin)
                    .mime_type(SKYBRIDGE_MIME_TYPE)
                    .description(format!("The `{}` view (OpenAI Apps SDK).", self.name)),
            );
        }
        out
    }

    /// The same view with the same HTML: registering it twice is harmless.
    pub(crate) fn same_as(&self, other: &AppView) -> bool {
        self.name == other.name && self.html == other.html
    }
}

/// Merges `ours` into a tool's `_meta` without clobbering the user's keys; a user `ui` object is
/// merged key by key.
pub(crate) fn merge_meta(user: Option<Map<String, Value>>, ours: Map<String, Value>) -> Map<String, Value> {
    let mut merged = user.unwrap_or_default();
    for (key, value) in ours {
        match (merged.get_mut(&key), value) {
            (None, value) => {
                merged.insert(key, value);
            }
            (Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.entry(k).or_insert(v);
                }
            }
            (Some(_), _) => {}
        }
    }
    merged
}

/// The view name a tool's `_meta` links to (`ui://widget/{name}.html`), if any.
pub(crate) fn linked_view(meta: Option<&Map<String, Value>>) -> Option<String> {
    let uri = meta?.get("ui")?.get("resourceUri")?.as_str()?;
    uri.strip_prefix("ui://widget/")?.strip_suffix(".html").map(str::to_owned)
}

/// Whether a tool's `_meta` links it to a view (`ui.resourceUri`, or the flat `ui/resourceUri`).
pub(crate) fn has_view(meta: Option<&Map<String, Value>>) -> bool {
    meta.is_some_and(|m| {
        m.get("ui").and_then(|ui| ui.get("resourceUri")).is_some() || m.contains_key("ui/resourceUri")
    })
}

/// Whether a tool is meant for its view only (`_meta.ui.visibility` without `"model"`): never
/// offered to the model.
pub(crate) fn is_app_only(meta: Option<&Map<String, Value>>) -> bool {
    let visibility = meta.and_then(|m| m.get("ui")).and_then(|ui| ui.get("visibility"));
    visibility.and_then(Value::as_array).is_some_and(|v| !v.iter().any(|x| x == "model"))
}

/// A tool result for a view: `props` become the structured content the view renders, `text`
/// is what the model reads (when empty, `Displaying {name}` is sent).
///
/// ```
/// use mcp_tools::Widget;
/// use serde::Serialize;
///
/// #[derive(Serialize)]
/// struct Card { city: String, temp: f64 }
///
/// // The body of a `#[tool(widget = "weather-card")]` function returning `Widget<Card>`:
/// let city = "Paris".to_owned();
/// let result = Widget::new(Card { city: city.clone(), temp: 21.5 }).text(format!("21.5 °C in {city}"));
/// ```
#[derive(Clone, Debug)]
pub struct Widget<T> {
    props: T,
    text: String,
}

impl<T: Serialize> Widget<T> {
    /// A result whose view props are `props` (a struct or map: a JSON object).
    pub fn new(props: T) -> Self {
        Widget { props, text: String::new() }
    }
    /// The text the model reads.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }
}

#[diagnostic::do_not_recommend]
impl<T: Serialize + Send> ToolOutput for Widget<T> {
    fn output_schema(_: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
    fn into_tool_result(self, _: OutputPlan) -> ToolResult {
        match serde_json::to_value(&self.props) {
            Ok(props @ Value::Object(_)) => {
                let result = ToolResult::new().with_structured(props);
                if self.text.is_empty() { result } else { result.text(self.text) }
            }
            Ok(other) => ToolResult::error(format!("a widget's props must be a JSON object, not {other}")),
            Err(e) => ToolResult::error(format!("the widget's props could not be serialized: {e}")),
        }
    }
}

/// Backfills the text a model reads for a view's result when the tool gave none.
pub(crate) fn backfill_text(result: ToolResult, view: &str) -> ToolResult {
    if result.is_error() || result.content().iter().any(|c| c.as_text().is_some_and(|t| !t.is_empty())) {
        return result;
    }
    result.text(format!("Displaying {view}"))
}
