//! Every request method this server answers, in one table ([`Method`]), and the bodies of those
//! that read the registry or the catalog, as functions of them. The session routes with one
//! `match` over [`Method`]; what belongs to the session itself (lifecycle, subscriptions, log
//! level, running calls) stays there.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::context::auth::{AuthInfo, permits};
use crate::model::error::ToolError;
use crate::model::resource::ResourceRequest;
use crate::protocol::jsonrpc::{ErrorObject, decode_params, shown};
use crate::protocol::messages::{CompleteParams, GetPromptParams, PaginatedParams, UriParams};
use crate::protocol::{Era, INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND};
use crate::registry::catalog::{Catalog, CompletionRef, CompletionRequest};
use crate::registry::tools::Registry;

/// A request method this server knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    ServerDiscover,
    SubscriptionsListen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    ToolsList,
    ToolsCall,
    SetLogLevel,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    PromptsList,
    PromptsGet,
    Complete,
    /// A method an extension the server offers answers (see `dispatch/extensions.rs`); not in
    /// [`METHODS`], which names the session's own.
    Extension,
}

/// Every method by its wire name.
const METHODS: &[(&str, Method)] = &[
    ("initialize", Method::Initialize),
    ("ping", Method::Ping),
    ("server/discover", Method::ServerDiscover),
    ("subscriptions/listen", Method::SubscriptionsListen),
    ("tasks/get", Method::TasksGet),
    ("tasks/update", Method::TasksUpdate),
    ("tasks/cancel", Method::TasksCancel),
    ("tools/list", Method::ToolsList),
    ("tools/call", Method::ToolsCall),
    ("logging/setLevel", Method::SetLogLevel),
    ("resources/list", Method::ResourcesList),
    ("resources/templates/list", Method::ResourceTemplatesList),
    ("resources/read", Method::ResourcesRead),
    ("resources/subscribe", Method::ResourcesSubscribe),
    ("resources/unsubscribe", Method::ResourcesUnsubscribe),
    ("prompts/list", Method::PromptsList),
    ("prompts/get", Method::PromptsGet),
    ("completion/complete", Method::Complete),
];

impl Method {
    /// The method named `name` on the wire.
    pub fn from_name(name: &str) -> Option<Method> {
        METHODS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// The method's wire name.
    pub fn name(self) -> &'static str {
        METHODS.iter().find(|(_, m)| *m == self).map(|(n, _)| *n).expect("every method has a name")
    }

    /// Whether the method belongs to a capability of the catalog (resources, prompts,
    /// completion), which the server may not declare.
    pub fn in_catalog(self) -> bool {
        use Method::*;
        matches!(
            self,
            ResourcesList
                | ResourceTemplatesList
                | ResourcesRead
                | ResourcesSubscribe
                | ResourcesUnsubscribe
                | PromptsList
                | PromptsGet
                | Complete
        )
    }

    /// Whether the method may come before `initialize`.
    pub fn before_initialize(self) -> bool {
        matches!(self, Method::Initialize | Method::Ping)
    }

    /// Whether the method exists in `era`: the handshake, `ping`, `logging/setLevel` and
    /// resource subscriptions are 2025-11-25 only; discovery and listening 2026-07-28 only.
    pub fn exists_in(self, era: Era) -> bool {
        use Method::*;
        match self {
            Initialize | Ping | SetLogLevel | ResourcesSubscribe | ResourcesUnsubscribe => {
                era == Era::Handshake
            }
            ServerDiscover | SubscriptionsListen | TasksGet | TasksUpdate | TasksCancel => {
                era == Era::Stateless
            }
            _ => true,
        }
    }

    /// Whether a 2026-07-28 request of this method may answer `input_required` (and so carries
    /// the answers of a previous round).
    pub fn takes_input(self) -> bool {
        matches!(self, Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead)
    }
}

/// The answer of a method that runs a handler.
pub(crate) type Answer = BoxFuture<'static, Result<Box<RawValue>, ErrorObject>>;

fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("JSON serializes")
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
            Ok(value) => Ok(raw(&value)),
            Err(e) => {
                let code = if e.is_invalid_params() { INVALID_PARAMS } else { INTERNAL_ERROR };
                Err(ErrorObject::new(code, e.message().to_owned()))
            }
        }
    })
}

/// `tools/list`: the page the cursor names, as clients of `era` see it (serialized when the
/// registry was built, unless the caller may not see every tool).
pub(crate) fn list_tools<'r>(
    registry: &'r Registry,
    params: Option<&RawValue>,
    era: Era,
    caller: Option<&AuthInfo>,
) -> Result<Cow<'r, RawValue>, ErrorObject> {
    let cursor = decode_params::<PaginatedParams>(params)?.cursor;
    registry.page(cursor.as_deref(), era, caller).ok_or_else(|| {
        ErrorObject::invalid_params(format!("invalid cursor {:?}", cursor.unwrap_or_default()))
    })
}

/// `tools/list` for a caller, as `keep` shows each tool (changed in place, or left out).
pub(crate) fn list_tools_shown(
    registry: &Registry,
    params: Option<&RawValue>,
    era: Era,
    caller: Option<&AuthInfo>,
    keep: impl Fn(&mut Map<String, Value>) -> bool,
) -> Result<Box<RawValue>, ErrorObject> {
    let cursor = decode_params::<PaginatedParams>(params)?.cursor;
    registry.page_shown(cursor.as_deref(), era, caller, keep).ok_or_else(|| {
        ErrorObject::invalid_params(format!("invalid cursor {:?}", cursor.unwrap_or_default()))
    })
}

/// An item of a list as `keep` shows it (changed in place), or `None` when it is left out.
fn filtered(item: Value, keep: &impl Fn(&mut Map<String, Value>) -> bool) -> Option<Value> {
    match item {
        Value::Object(mut fields) => keep(&mut fields).then_some(Value::Object(fields)),
        other => Some(other),
    }
}

/// The answer to a caller who lacks `scopes` for something.
fn check_scopes(caller: Option<&AuthInfo>, scopes: &[String]) -> Result<(), ErrorObject> {
    if permits(caller, scopes) { Ok(()) } else { Err(ErrorObject::insufficient_scope(scopes)) }
}

/// `resources/list`: those the caller may read.
pub(crate) fn list_resources(
    catalog: &Catalog,
    caller: Option<&AuthInfo>,
    keep: impl Fn(&mut Map<String, Value>) -> bool,
) -> Box<RawValue> {
    let resources: Vec<Value> = catalog
        .resources()
        .iter()
        .filter(|r| permits(caller, &r.scopes))
        .filter_map(|r| {
            let mut v = serde_json::to_value(&r.info).expect("serializes");
            v["uri"] = json!(r.uri);
            filtered(v, &keep)
        })
        .collect();
    raw(&json!({"resources": resources}))
}

/// `resources/templates/list`: those the caller may read.
pub(crate) fn list_resource_templates(
    catalog: &Catalog,
    caller: Option<&AuthInfo>,
    keep: impl Fn(&mut Map<String, Value>) -> bool,
) -> Box<RawValue> {
    let templates: Vec<Value> = catalog
        .templates()
        .iter()
        .filter(|t| permits(caller, &t.scopes))
        .filter_map(|t| {
            let mut v = serde_json::to_value(&t.info).expect("serializes");
            v["uriTemplate"] = json!(t.template.source);
            filtered(v, &keep)
        })
        .collect();
    raw(&json!({"resourceTemplates": templates}))
}

/// `resources/read`: the fixed resource or first template matching the URI reads it.
pub(crate) fn read_resource(
    catalog: &Catalog,
    params: Option<&RawValue>,
    ctx: Context,
) -> Result<Answer, ErrorObject> {
    let uri = decode_params::<UriParams>(params)?.uri;
    let Some(found) = catalog.find_resource(&uri) else {
        return Err(ErrorObject {
            code: RESOURCE_NOT_FOUND,
            message: format!("Resource not found: {}", shown(&uri)),
            data: Some(json!({"uri": uri})),
        });
    };
    check_scopes(ctx.auth(), &found.scopes)?;
    let read = (found.handler)(ResourceRequest { uri, params: found.params }, ctx);
    Ok(answer(async move { read.await.map(|contents| json!({"contents": contents})) }))
}

/// The URI of `resources/subscribe` or `resources/unsubscribe`.
pub(crate) fn subscription_uri(params: Option<&RawValue>) -> Result<String, ErrorObject> {
    match decode_params::<UriParams>(params)? {
        UriParams { uri } if !uri.is_empty() => Ok(uri),
        _ => Err(ErrorObject::invalid_params("`uri` is required")),
    }
}

/// `prompts/list`: those the caller may get.
pub(crate) fn list_prompts(
    catalog: &Catalog,
    caller: Option<&AuthInfo>,
    keep: impl Fn(&mut Map<String, Value>) -> bool,
) -> Box<RawValue> {
    let prompts: Vec<Value> = catalog
        .prompts()
        .iter()
        .filter(|p| permits(caller, &p.scopes))
        .filter_map(|p| filtered(p.definition(), &keep))
        .collect();
    raw(&json!({"prompts": prompts}))
}

/// `prompts/get`: checks the required arguments, then renders the prompt.
pub(crate) fn get_prompt(
    catalog: &Catalog,
    params: Option<&RawValue>,
    ctx: Context,
) -> Result<Answer, ErrorObject> {
    let request = decode_params::<GetPromptParams>(params)?;
    let Some(prompt) = catalog.prompt(&request.name) else {
        return Err(ErrorObject::invalid_params(format!("unknown prompt `{}`", shown(&request.name))));
    };
    check_scopes(ctx.auth(), &prompt.scopes)?;
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
        return Err(ErrorObject::invalid_params(format!(
            "prompt `{}` needs the argument(s) {}",
            prompt.name,
            missing.join(", ")
        )));
    }
    Ok(answer((prompt.handler)(arguments, ctx)))
}

/// `completion/complete`: the completer's suggestions, at most 100 of them.
pub(crate) fn complete(
    catalog: &Catalog,
    params: Option<&RawValue>,
    ctx: Context,
) -> Result<Answer, ErrorObject> {
    let request = decode_params::<CompleteParams>(params)?;
    let reference = match request.reference["type"].as_str() {
        Some("ref/prompt") => {
            CompletionRef::Prompt(request.reference["name"].as_str().unwrap_or_default().to_owned())
        }
        Some("ref/resource") => {
            CompletionRef::Resource(request.reference["uri"].as_str().unwrap_or_default().to_owned())
        }
        _ => return Err(ErrorObject::invalid_params("`ref` must be a ref/prompt or a ref/resource")),
    };
    // Nothing is completed for a prompt or resource the caller may not use.
    let scopes = match &reference {
        CompletionRef::Prompt(name) => catalog.prompt(name).map(|p| p.scopes.clone()),
        CompletionRef::Resource(uri) => {
            catalog.templates().iter().find(|t| t.template.source == *uri).map(|t| t.scopes.clone())
        }
    };
    check_scopes(ctx.auth(), scopes.as_deref().unwrap_or_default())?;
    // A prompt or template that completes its own arguments (a mounted upstream's) does.
    let own = match &reference {
        CompletionRef::Prompt(name) => catalog.prompt(name).and_then(|p| p.completer.clone()),
        CompletionRef::Resource(uri) => {
            catalog.templates().iter().find(|t| t.template.source == *uri).and_then(|t| t.completer.clone())
        }
    };
    let completer = catalog.completer().cloned();
    let request = CompletionRequest {
        reference,
        argument: request.argument.name,
        value: request.argument.value,
        context: request.context.map(|c| c.arguments).unwrap_or_default(),
    };
    Ok(Box::pin(async move {
        let mut values = match (own, completer) {
            (Some(own), _) => own(request.argument, request.value, request.context, ctx).await,
            (None, Some(completer)) => completer(request, ctx).await,
            (None, None) => Vec::new(),
        };
        let total = values.len();
        values.truncate(100);
        let completion = json!({"values": values, "total": total, "hasMore": total > 100});
        Ok(raw(&json!({"completion": completion})))
    }))
}
