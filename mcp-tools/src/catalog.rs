//! Resources, prompts and completion: what a server offers besides tools. Built once with the
//! server; `route` answers their methods.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::Context;
use crate::context::StateMap;
use crate::protocol::RpcError;
use crate::session::Session;

/// Resources, prompts and the completer, as configured on the builder.
#[derive(Default)]
pub(crate) struct CatalogBuilder {}

impl CatalogBuilder {
    pub fn build(self, _state: &StateMap) -> Result<Catalog, Vec<String>> {
        Ok(Catalog {})
    }
}

/// The built catalog.
pub(crate) struct Catalog {}

impl Catalog {
    /// Adds the capabilities this catalog needs to `initialize`'s answer.
    pub fn declare(&self, _capabilities: &mut Value) {}
}

/// The future answering `method`, or `None` when this server does not serve it.
pub(crate) fn route(
    _session: &Arc<Session>,
    _method: &str,
    _params: Option<Box<RawValue>>,
    _ctx: Context,
) -> Option<BoxFuture<'static, Result<Box<RawValue>, RpcError>>> {
    None
}
