//! The extensions a server offers (SEP-2133), in one table: for each, its identifier, the
//! settings it declares under `capabilities.extensions`, the eras it exists in, the methods it
//! adds, and whether those methods need the client to have declared it. The server's
//! capabilities are declared from it ([`Extensions::declare`]); the session routes the methods
//! of an extension through it ([`Extensions::method`]) and checks a client's declaration here,
//! once ([`Extensions::check`]).
//!
//! Adding an extension is one [`Extension`] value, made where its feature lives (the tasks'
//! in `dispatch/tasks.rs`, the skills' in `skills/`) and offered by `server.rs`.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::stateless::missing_capability;
use crate::context::auth::AuthInfo;
use crate::protocol::Era;
use crate::protocol::extensions::declared;
use crate::protocol::jsonrpc::ErrorObject;

/// An extension a server offers.
pub(crate) struct Extension {
    /// Its identifier (`io.modelcontextprotocol/tasks`, …).
    pub id: &'static str,
    /// What the server declares under `capabilities.extensions[id]` (`{}`: no settings).
    pub settings: Value,
    /// The eras it is declared in, and its methods exist in.
    pub eras: &'static [Era],
    /// Whether a request of one of its methods needs the client to have declared it (a client
    /// that did not gets "missing required client capability").
    pub needs_client: bool,
    /// The methods it adds.
    pub methods: Vec<ExtensionMethod>,
}

/// A method an extension adds.
pub(crate) struct ExtensionMethod {
    pub name: &'static str,
    /// How it is answered; `None` for a method of the session's own table
    /// ([`Method`](super::methods::Method)), which routes it.
    pub handler: Option<MethodHandler>,
    /// Whether its 2026-07-28 result carries the list cache hints (`ttlMs`, `cacheScope`).
    pub cacheable: bool,
}

/// Answers one request of an extension's method.
pub(crate) type MethodHandler = Arc<dyn Fn(ExtensionRequest<'_>) -> Result<Value, ErrorObject> + Send + Sync>;

/// What an extension's method is asked (the era and the caller for the methods that depend on
/// them; the skills' do not).
#[allow(dead_code)]
pub(crate) struct ExtensionRequest<'a> {
    pub params: Option<&'a RawValue>,
    /// The request's era.
    pub era: Era,
    /// The caller's verified identity (over HTTP with authorization).
    pub caller: Option<&'a AuthInfo>,
}

impl Extension {
    /// An extension that only declares itself (its settings `{}`): the server's side of one
    /// whose exchanges happen elsewhere (MCP Apps: in tools' `_meta` and `ui://` resources).
    pub fn declared_only(id: &'static str, eras: &'static [Era]) -> Extension {
        Extension { id, settings: json!({}), eras, needs_client: false, methods: Vec::new() }
    }

    /// A method of the session's own table that belongs to this extension.
    pub fn routed(mut self, name: &'static str) -> Extension {
        self.methods.push(ExtensionMethod { name, handler: None, cacheable: false });
        self
    }

    /// A method this extension answers itself.
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub fn method(mut self, name: &'static str, cacheable: bool, handler: MethodHandler) -> Extension {
        self.methods.push(ExtensionMethod { name, handler: Some(handler), cacheable });
        self
    }

    fn in_era(&self, era: Era) -> bool {
        self.eras.contains(&era)
    }
}

/// Both eras.
pub(crate) const BOTH_ERAS: &[Era] = &[Era::Handshake, Era::Stateless];

/// The extensions a server offers, in the order offered.
#[derive(Default)]
pub(crate) struct Extensions {
    offered: Vec<Extension>,
}

impl Extensions {
    /// Offers `extension` (replacing an earlier one with its identifier).
    pub fn offer(&mut self, extension: Extension) {
        self.offered.retain(|e| e.id != extension.id);
        self.offered.push(extension);
    }

    /// Adds `capabilities.extensions` for the extensions of `era` (nothing when there are none).
    pub fn declare(&self, era: Era, capabilities: &mut Value) {
        let declared: Map<String, Value> = self
            .offered
            .iter()
            .filter(|e| e.in_era(era))
            .map(|e| (e.id.to_owned(), e.settings.clone()))
            .collect();
        if !declared.is_empty() {
            capabilities["extensions"] = Value::Object(declared);
        }
    }

    /// The method `name` an extension of `era` answers itself.
    pub fn method(&self, name: &str, era: Era) -> Option<&ExtensionMethod> {
        self.offered
            .iter()
            .filter(|e| e.in_era(era))
            .flat_map(|e| &e.methods)
            .find(|m| m.name == name && m.handler.is_some())
    }

    /// The one check of what a client declared: a request of method `name`, from a client that
    /// declared `client` capabilities, may go on unless the method belongs to an extension that
    /// needs the client's declaration and the client did not declare it.
    pub fn check(&self, name: &str, client: &Map<String, Value>) -> Result<(), ErrorObject> {
        let owner = self.offered.iter().find(|e| e.methods.iter().any(|m| m.name == name));
        match owner {
            Some(extension) if extension.needs_client => Self::require(extension.id, client),
            _ => Ok(()),
        }
    }

    /// The same check for a request that needs extension `id` for a reason of its own (a call of
    /// a tool that only runs as a task, a listen stream naming tasks): "missing required client
    /// capability" unless the client declared it.
    pub fn require(id: &str, client: &Map<String, Value>) -> Result<(), ErrorObject> {
        match Self::declares(id, client) {
            true => Ok(()),
            false => Err(missing_capability(id)),
        }
    }

    /// Whether the client declared extension `id` (what [`require`](Self::require) checks,
    /// without making the error).
    pub fn declares(id: &str, client: &Map<String, Value>) -> bool {
        declared(client, id).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::extensions::{SKILLS, TASKS, UI};

    fn table() -> Extensions {
        let mut extensions = Extensions::default();
        let mut tasks = Extension::declared_only(TASKS, &[Era::Stateless]).routed("tasks/get");
        tasks.needs_client = true;
        extensions.offer(tasks);
        extensions.offer(Extension::declared_only(UI, BOTH_ERAS));
        let answer: MethodHandler = Arc::new(|_| Ok(json!({"skills": []})));
        let skills = Extension::declared_only(SKILLS, BOTH_ERAS).method("skills/list", true, answer);
        extensions.offer(Extension { settings: json!({"directoryRead": true}), ..skills });
        extensions
    }

    #[test]
    fn each_era_declares_its_extensions_with_their_settings() {
        let extensions = table();
        let mut stateless = json!({});
        extensions.declare(Era::Stateless, &mut stateless);
        assert_eq!(stateless["extensions"], json!({TASKS: {}, UI: {}, SKILLS: {"directoryRead": true}}));
        let mut handshake = json!({});
        extensions.declare(Era::Handshake, &mut handshake);
        assert_eq!(handshake["extensions"], json!({UI: {}, SKILLS: {"directoryRead": true}}));
        let mut none = json!({});
        Extensions::default().declare(Era::Stateless, &mut none);
        assert!(none.get("extensions").is_none());
    }

    #[test]
    fn a_method_needs_the_clients_declaration_only_when_its_extension_says_so() {
        let extensions = table();
        let error = extensions.check("tasks/get", &Map::new()).unwrap_err();
        assert_eq!(error.code, -32021);
        assert_eq!(error.data, Some(json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})));
        let declared = json!({"extensions": {TASKS: {}}});
        assert!(extensions.check("tasks/get", declared.as_object().unwrap()).is_ok());
        assert!(extensions.check("skills/list", &Map::new()).is_ok());
        assert!(extensions.check("tools/call", &Map::new()).is_ok());
        assert!(extensions.method("skills/list", Era::Handshake).is_some());
        assert!(extensions.method("tasks/get", Era::Stateless).is_none(), "routed by the session");
    }
}
