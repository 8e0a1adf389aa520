//! The rest of the catalog: resources, resource templates, prompts and the completer. Built
//! once with the server from `#[resource]`/`#[prompt]` functions and runtime values; immutable,
//! a change builds a new [`Catalog`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::__private::{PromptRegistration, ResourceRegistration, StateRequirement};
use crate::context::{Context, StateMap};
use crate::model::prompt::{Prompt, PromptArgument};
use crate::model::resource::{Resource, ResourceHandler, ResourceInfo, ResourceTemplate, UriTemplate};

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
                let handler: ResourceHandler = Arc::new(move |r, c| handler(r, c));
                let scopes: Arc<[String]> = reg.scopes.iter().map(|s| (*s).to_owned()).collect();
                if reg.uri.contains('{') {
                    let template = UriTemplate::parse(reg.uri);
                    templates.push(ResourceTemplate { template, info, scopes, handler, completer: None });
                } else {
                    resources.push(Resource { uri: reg.uri.to_owned(), info, scopes, handler });
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
                    scopes: reg.scopes.iter().map(|s| (*s).to_owned()).collect(),
                    handler: Arc::new(move |args, ctx| handler(args, ctx)),
                    completer: None,
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

fn check_state(requirements: &[StateRequirement], state: &StateMap, what: &str, problems: &mut Vec<String>) {
    for requirement in requirements {
        if let Some((id, type_name)) = requirement()
            && !state.contains(id)
        {
            problems.push(format!(
                "{what} takes `State<{type_name}>`, but no such state was registered; add `.state(...)` with a `{type_name}` to the server builder (with `mcp_tools::main!()`, write `fn main() -> ExitCode {{ Server::builder().state(...).run() }}` instead)"
            ));
        }
    }
}

/// A resource a URI names: how to read it, the template variables, the scopes it needs.
pub(crate) struct FoundResource {
    pub handler: ResourceHandler,
    pub params: HashMap<String, String>,
    pub scopes: Arc<[String]>,
}

/// Resources, templates and prompts to add to a catalog in one change ([`Catalog::swapped`]).
#[derive(Clone, Default)]
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) struct Items {
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

/// The URIs, URI templates and names of items a catalog change removes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) struct Keys {
    pub resources: HashSet<String>,
    pub templates: HashSet<String>,
    pub prompts: HashSet<String>,
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl Items {
    /// The keys of these items.
    pub fn keys(&self) -> Keys {
        Keys {
            resources: self.resources.iter().map(|r| r.uri.clone()).collect(),
            templates: self.templates.iter().map(|t| t.template.source.clone()).collect(),
            prompts: self.prompts.iter().map(|p| p.name.clone()).collect(),
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

    /// This catalog with the items `old` names removed and `new` added, in one change; the items
    /// of `new` whose key another item (not removed) already has are left out, and described in
    /// the list returned ("resource `x://a`").
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn swapped(&self, old: &Keys, new: Items) -> (Catalog, Vec<String>) {
        let mut clashes = Vec::new();
        let mut resources: Vec<Resource> =
            self.resources.iter().filter(|r| !old.resources.contains(&r.uri)).cloned().collect();
        let taken: HashSet<String> = resources.iter().map(|r| r.uri.clone()).collect();
        for resource in new.resources {
            if taken.contains(&resource.uri) {
                clashes.push(format!("resource `{}`", resource.uri));
            } else {
                resources.push(resource);
            }
        }
        let mut templates: Vec<ResourceTemplate> =
            self.templates.iter().filter(|t| !old.templates.contains(&t.template.source)).cloned().collect();
        let taken: HashSet<String> = templates.iter().map(|t| t.template.source.clone()).collect();
        for template in new.templates {
            if taken.contains(&template.template.source) {
                clashes.push(format!("resource template `{}`", template.template.source));
            } else {
                templates.push(template);
            }
        }
        let mut prompts: Vec<Prompt> =
            self.prompts.iter().filter(|p| !old.prompts.contains(&p.name)).cloned().collect();
        let taken: HashSet<String> = prompts.iter().map(|p| p.name.clone()).collect();
        for prompt in new.prompts {
            if taken.contains(&prompt.name) {
                clashes.push(format!("prompt `{}`", prompt.name));
            } else {
                prompts.push(prompt);
            }
        }
        (Catalog::from_parts(resources, templates, prompts, self.completer.clone()), clashes)
    }

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    fn has_completion(&self) -> bool {
        self.completer.is_some() || !self.prompts.is_empty() || !self.templates.is_empty()
    }

    /// Whether this catalog declares the capability `method` belongs to (`resources/…`,
    /// `prompts/…`, `completion/…`); methods of an undeclared capability are unknown.
    pub fn declares(&self, method: &str) -> bool {
        match method.split('/').next() {
            Some("resources") => self.has_resources(),
            Some("prompts") => !self.prompts.is_empty(),
            Some("completion") => self.has_completion(),
            _ => false,
        }
    }

    /// The fixed resources, sorted by URI.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The resource templates, sorted by URI template.
    pub fn templates(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// The prompts, sorted by name.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The handler that reads `uri`, with the template variables it matched and the scopes a
    /// caller needs (a fixed resource first, then the templates in order).
    pub fn find_resource(&self, uri: &str) -> Option<FoundResource> {
        match self.resource_index.get(uri) {
            Some(&i) => {
                let r = &self.resources[i];
                Some(FoundResource {
                    handler: r.handler.clone(),
                    params: HashMap::new(),
                    scopes: r.scopes.clone(),
                })
            }
            None => self.templates.iter().find_map(|t| {
                let params = t.template.matches(uri)?;
                Some(FoundResource { handler: t.handler.clone(), params, scopes: t.scopes.clone() })
            }),
        }
    }

    /// The completer, if the server has one.
    pub fn completer(&self) -> Option<&Completer> {
        self.completer.as_ref()
    }

    /// Adds the capabilities this catalog needs to `initialize`'s answer.
    pub fn declare(&self, capabilities: &mut Value) {
        if self.has_resources() {
            capabilities["resources"] = json!({"subscribe": true, "listChanged": true});
        }
        if !self.prompts.is_empty() {
            capabilities["prompts"] = json!({"listChanged": true});
        }
        if self.has_completion() {
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
