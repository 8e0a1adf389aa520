//! Resources, prompts and completion: what a server offers besides tools. Built once with the
//! server from `#[resource]`/`#[prompt]` functions and runtime values; `route` answers their
//! methods.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::__private::{PromptRegistration, ResourceRegistration};
use crate::context::StateMap;
use crate::prompt::{Prompt, PromptArgument};
use crate::protocol::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use crate::resource::{Resource, ResourceInfo, ResourceRequest, ResourceTemplate, UriTemplate};
use crate::session::{Session, decode_params};
use crate::{Context, ToolError};

/// What `completion/complete` asks: which prompt or resource template, which argument, what
/// the user typed so far, and the other arguments already filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt or resource template being filled in.
    pub reference: CompletionRef,
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values of the other arguments, when the client sent them.
    pub context: HashMap<String, String>,
}

/// What a completion is for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionRef {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by URI template.
    Resource(String),
}

pub(crate) type Completer =
    Arc<dyn Fn(CompletionRequest, Context) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// Resources, prompts and the completer, as configured on the builder.
#[derive(Default)]
pub(crate) struct CatalogBuilder {
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
    pub completer: Option<Completer>,
}

impl CatalogBuilder {
    /// Adds the inventory's `#[resource]`/`#[prompt]` functions (before runtime values, which
    /// replace them by URI or name) and checks everything.
    pub fn build(self, state: &StateMap, use_inventory: bool) -> Result<Catalog, Vec<String>> {
        let mut problems = Vec::new();
        let mut resources: Vec<Resource> = Vec::new();
        let mut templates: Vec<ResourceTemplate> = Vec::new();
        let mut prompts: Vec<Prompt> = Vec::new();
        let mut origins: HashMap<String, String> = HashMap::new();
        if use_inventory {
            for reg in inventory::iter::<ResourceRegistration> {
                let origin = format!("#[resource] at {}:{}", reg.file, reg.line);
                check_state(
                    reg.required_state,
                    state,
                    &format!("resource `{}` ({origin})", reg.uri),
                    &mut problems,
                );
                if let Some(first) = origins.insert(format!("resource {}", reg.uri), origin.clone()) {
                    problems.push(format!("two resources have the URI `{}`: {first} and {origin}", reg.uri));
                }
                let info = ResourceInfo {
                    name: reg.name.to_owned(),
                    title: reg.title.map(str::to_owned),
                    description: reg.description.map(str::to_owned),
                    mime_type: reg.mime_type.map(str::to_owned),
                    ..ResourceInfo::default()
                };
                let handler = reg.handler;
                let handler: crate::resource::ResourceHandler = Arc::new(move |r, c| handler(r, c));
                if reg.uri.contains('{') {
                    templates.push(ResourceTemplate { template: UriTemplate::parse(reg.uri), info, handler });
                } else {
                    resources.push(Resource { uri: reg.uri.to_owned(), info, handler });
                }
            }
            for reg in inventory::iter::<PromptRegistration> {
                let origin = format!("#[prompt] at {}:{}", reg.file, reg.line);
                check_state(
                    reg.required_state,
                    state,
                    &format!("prompt `{}` ({origin})", reg.name),
                    &mut problems,
                );
                if let Some(first) = origins.insert(format!("prompt {}", reg.name), origin.clone()) {
                    problems.push(format!("two prompts are named `{}`: {first} and {origin}", reg.name));
                }
                let handler = reg.handler;
                prompts.push(Prompt {
                    name: reg.name.to_owned(),
                    title: reg.title.map(str::to_owned),
                    description: reg.description.to_owned(),
                    arguments: reg
                        .arguments
                        .iter()
                        .map(|a| PromptArgument {
                            name: a.name.to_owned(),
                            description: a.description.map(str::to_owned),
                            required: a.required,
                        })
                        .collect(),
                    meta: None,
                    handler: Arc::new(move |args, ctx| handler(args, ctx)),
                });
            }
        }
        for resource in self.resources {
            resources.retain(|r| r.uri != resource.uri);
            resources.push(resource);
        }
        for template in self.templates {
            templates.retain(|t| t.template.source != template.template.source);
            templates.push(template);
        }
        for prompt in self.prompts {
            if prompt.description.trim().is_empty() {
                problems.push(format!("prompt `{}` has no description; clients require one", prompt.name));
            }
            prompts.retain(|p| p.name != prompt.name);
            prompts.push(prompt);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Catalog::from_parts(resources, templates, prompts, self.completer))
    }
}

fn check_state(
    requirements: &[crate::__private::StateRequirement],
    state: &StateMap,
    what: &str,
    problems: &mut Vec<String>,
) {
    for requirement in requirements {
        if let Some((id, type_name)) = requirement()
            && !state.contains(id)
        {
            problems.push(format!(
                "{what} takes `State<{type_name}>`, but no such state was registered; add `.state(...)` with a `{type_name}` to the server builder"
            ));
        }
    }
}

/// The built catalog. Immutable: a change builds a new one.
#[derive(Clone)]
pub(crate) struct Catalog {
    resources: Vec<Resource>,
    resource_index: HashMap<String, usize>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    prompt_index: HashMap<String, usize>,
    completer: Option<Completer>,
}

impl Catalog {
    fn from_parts(
        mut resources: Vec<Resource>,
        mut templates: Vec<ResourceTemplate>,
        mut prompts: Vec<Prompt>,
        completer: Option<Completer>,
    ) -> Catalog {
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        templates.sort_by(|a, b| a.template.source.cmp(&b.template.source));
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        let prompt_index = prompts.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        let resource_index = resources.iter().enumerate().map(|(i, r)| (r.uri.clone(), i)).collect();
        Catalog { resources, resource_index, templates, prompts, prompt_index, completer }
    }

    /// This catalog with a resource added (replacing one with the same URI).
    pub fn with_resource(&self, resource: Resource) -> Catalog {
        let mut resources = self.resources.clone();
        resources.retain(|r| r.uri != resource.uri);
        resources.push(resource);
        Catalog::from_parts(resources, self.templates.clone(), self.prompts.clone(), self.completer.clone())
    }

    /// This catalog with a template added (replacing one with the same URI template).
    pub fn with_template(&self, template: ResourceTemplate) -> Catalog {
        let mut templates = self.templates.clone();
        templates.retain(|t| t.template.source != template.template.source);
        templates.push(template);
        Catalog::from_parts(self.resources.clone(), templates, self.prompts.clone(), self.completer.clone())
    }

    /// This catalog without the resource or template at `uri`, if there was one.
    pub fn without_resource(&self, uri: &str) -> Option<Catalog> {
        let mut resources = self.resources.clone();
        let mut templates = self.templates.clone();
        let before = resources.len() + templates.len();
        resources.retain(|r| r.uri != uri);
        templates.retain(|t| t.template.source != uri);
        (resources.len() + templates.len() != before)
            .then(|| Catalog::from_parts(resources, templates, self.prompts.clone(), self.completer.clone()))
    }

    /// This catalog with a prompt added (replacing one with the same name).
    pub fn with_prompt(&self, prompt: Prompt) -> Catalog {
        let mut prompts = self.prompts.clone();
        prompts.retain(|p| p.name != prompt.name);
        prompts.push(prompt);
        Catalog::from_parts(self.resources.clone(), self.templates.clone(), prompts, self.completer.clone())
    }

    /// This catalog without the prompt `name`, if there was one.
    pub fn without_prompt(&self, name: &str) -> Option<Catalog> {
        let mut prompts = self.prompts.clone();
        let before = prompts.len();
        prompts.retain(|p| p.name != name);
        (prompts.len() != before).then(|| {
            Catalog::from_parts(
                self.resources.clone(),
                self.templates.clone(),
                prompts,
                self.completer.clone(),
            )
        })
    }

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Adds the capabilities this catalog needs to `initialize`'s answer.
    pub fn declare(&self, capabilities: &mut Value) {
        if self.has_resources() {
            capabilities["resources"] = json!({"subscribe": true, "listChanged": true});
        }
        if !self.prompts.is_empty() {
            capabilities["prompts"] = json!({"listChanged": true});
        }
        if self.completer.is_some() || !self.prompts.is_empty() || !self.templates.is_empty() {
            capabilities["completions"] = json!({});
        }
    }

    pub fn resource_uris(&self) -> Vec<String> {
        self.resources.iter().map(|r| r.uri.clone()).collect()
    }

    pub fn prompt_names(&self) -> Vec<String> {
        self.prompts.iter().map(|p| p.name.clone()).collect()
    }
}

type Answer = BoxFuture<'static, Result<Box<RawValue>, RpcError>>;

fn ready(value: Value) -> Answer {
    Box::pin(async move { Ok(serde_json::value::to_raw_value(&value).expect("JSON serializes")) })
}

fn failed(error: RpcError) -> Answer {
    Box::pin(async move { Err(error) })
}

/// Turns a handler's outcome into an answer: a `ToolError` becomes a JSON-RPC error ("invalid
/// params" when the generated code could not parse a URI variable or a prompt argument).
fn answer<F, T>(future: F) -> Answer
where
    F: Future<Output = Result<T, ToolError>> + Send + 'static,
    T: serde::Serialize,
{
    Box::pin(async move {
        match future.await {
            Ok(value) => Ok(serde_json::value::to_raw_value(&value).expect("JSON serializes")),
            Err(e) => {
                let code = if e.is_invalid_params() { INVALID_PARAMS } else { INTERNAL_ERROR };
                Err(RpcError::new(code, e.message().to_owned()))
            }
        }
    })
}

#[derive(Deserialize, Default)]
struct UriParams {
    #[serde(default)]
    uri: String,
}

#[derive(Deserialize, Default)]
struct GetPromptParams {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: HashMap<String, Value>,
}

#[derive(Deserialize, Default)]
struct CompleteParams {
    #[serde(rename = "ref", default)]
    reference: Value,
    #[serde(default)]
    argument: CompleteArgument,
    #[serde(default)]
    context: Option<CompleteContext>,
}

#[derive(Deserialize, Default)]
struct CompleteArgument {
    #[serde(default)]
    name: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize, Default)]
struct CompleteContext {
    #[serde(default)]
    arguments: HashMap<String, String>,
}

/// `resources/read` for an unknown URI (the specification's code).
const RESOURCE_NOT_FOUND: i32 = -32002;

/// The future answering `method`, or `None` when this server does not serve it.
pub(crate) fn route(
    session: &Arc<Session>,
    method: &str,
    params: Option<Box<RawValue>>,
    ctx: Context,
) -> Option<Answer> {
    let catalog = session.server.catalog.load_full();
    let params = params.as_deref();
    // Methods of a capability this server did not declare are unknown to it.
    let declared = match method.split('/').next() {
        Some("resources") => catalog.has_resources(),
        Some("prompts") => !catalog.prompts.is_empty(),
        Some("completion") => {
            catalog.completer.is_some() || !catalog.prompts.is_empty() || !catalog.templates.is_empty()
        }
        _ => false,
    };
    if !declared {
        return None;
    }
    Some(match method {
        "resources/list" => {
            let resources: Vec<Value> = catalog
                .resources
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(&r.info).expect("serializes");
                    v["uri"] = json!(r.uri);
                    v
                })
                .collect();
            ready(json!({"resources": resources}))
        }
        "resources/templates/list" => {
            let templates: Vec<Value> = catalog
                .templates
                .iter()
                .map(|t| {
                    let mut v = serde_json::to_value(&t.info).expect("serializes");
                    v["uriTemplate"] = json!(t.template.source);
                    v
                })
                .collect();
            ready(json!({"resourceTemplates": templates}))
        }
        "resources/read" => {
            let uri = match decode_params::<UriParams>(params) {
                Ok(p) => p.uri,
                Err(e) => return Some(failed(e)),
            };
            let found = match catalog.resource_index.get(&uri) {
                Some(&i) => Some((catalog.resources[i].handler.clone(), HashMap::new())),
                None => catalog
                    .templates
                    .iter()
                    .find_map(|t| t.template.matches(&uri).map(|params| (t.handler.clone(), params))),
            };
            let Some((handler, params)) = found else {
                return Some(failed(RpcError {
                    code: RESOURCE_NOT_FOUND,
                    message: format!("Resource not found: {uri}"),
                    data: Some(json!({"uri": uri})),
                }));
            };
            let read = handler(ResourceRequest { uri, params }, ctx);
            answer(async move { read.await.map(|contents| json!({"contents": contents})) })
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = match decode_params::<UriParams>(params) {
                Ok(p) if !p.uri.is_empty() => p.uri,
                Ok(_) => return Some(failed(RpcError::invalid_params("`uri` is required"))),
                Err(e) => return Some(failed(e)),
            };
            let mut subscriptions = session.subscriptions.lock().expect("subscriptions lock");
            if method == "resources/subscribe" {
                subscriptions.insert(uri);
            } else {
                subscriptions.remove(&uri);
            }
            ready(json!({}))
        }
        "prompts/list" => {
            let prompts: Vec<Value> = catalog.prompts.iter().map(Prompt::definition).collect();
            ready(json!({"prompts": prompts}))
        }
        "prompts/get" => {
            let request = match decode_params::<GetPromptParams>(params) {
                Ok(p) => p,
                Err(e) => return Some(failed(e)),
            };
            let Some(&index) = catalog.prompt_index.get(&request.name) else {
                return Some(failed(RpcError::invalid_params(format!("unknown prompt `{}`", request.name))));
            };
            let prompt = &catalog.prompts[index];
            let arguments: HashMap<String, String> = request
                .arguments
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect();
            let missing: Vec<&str> = prompt
                .arguments
                .iter()
                .filter(|a| a.required && !arguments.contains_key(&a.name))
                .map(|a| a.name.as_str())
                .collect();
            if !missing.is_empty() {
                return Some(failed(RpcError::invalid_params(format!(
                    "prompt `{}` needs the argument(s) {}",
                    prompt.name,
                    missing.join(", ")
                ))));
            }
            answer((prompt.handler)(arguments, ctx))
        }
        "completion/complete" => {
            let request = match decode_params::<CompleteParams>(params) {
                Ok(p) => p,
                Err(e) => return Some(failed(e)),
            };
            let reference = match request.reference["type"].as_str() {
                Some("ref/prompt") => {
                    CompletionRef::Prompt(request.reference["name"].as_str().unwrap_or_default().to_owned())
                }
                Some("ref/resource") => {
                    CompletionRef::Resource(request.reference["uri"].as_str().unwrap_or_default().to_owned())
                }
                _ => {
                    return Some(failed(RpcError::invalid_params(
                        "`ref` must be a ref/prompt or a ref/resource",
                    )));
                }
            };
            let completer = catalog.completer.clone();
            let request = CompletionRequest {
                reference,
                argument: request.argument.name,
                value: request.argument.value,
                context: request.context.map(|c| c.arguments).unwrap_or_default(),
            };
            Box::pin(async move {
                let mut values = match completer {
                    Some(completer) => completer(request, ctx).await,
                    None => Vec::new(),
                };
                let total = values.len();
                values.truncate(100);
                let completion = json!({"values": values, "total": total, "hasMore": total > 100});
                Ok(serde_json::value::to_raw_value(&json!({"completion": completion})).expect("serializes"))
            })
        }
        _ => return None,
    })
}
