//! `#[resource]`: the read handler (URI variables parsed, context parameters filled, the
//! returned value converted to contents) and the `ResourceRegistration`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use super::{Params, assertion, call, finish_call, handler, opt, paths, registered};
use crate::attr::ResourceAttr;
use crate::signature::{ParamKind, Signature};

pub fn expand(
    attr: &ResourceAttr,
    item: &ItemFn,
    sig: &Signature,
    name: &str,
    description: Option<TokenStream>,
) -> TokenStream {
    let (krate, p) = paths(attr.krate.get());
    let uri = attr.uri.get().expect("checked: a resource has a URI");
    let mime_type = opt(attr.mime_type.get());

    let mut params = Params::default();
    for (index, param) in sig.params.iter().enumerate() {
        let (binding, ty) = (&param.binding, &param.ty);
        match &param.kind {
            ParamKind::Extractor => params.extractor(&p, "assert_resource_context", index, param),
            ParamKind::Arg { wire_name, .. } => {
                params.asserts.push(assertion(quote!(#p::assert_variable), quote!(#ty), ty));
                params.bind.push(quote! {
                    let #binding = #p::Check::<#ty>::new().variable(&__mcp_request, #wire_name)?;
                });
            }
            // `signature::model` makes `Args<T>` parameters for tools only.
            ParamKind::WholeArgs { .. } => {}
        }
    }

    let finish = finish_call(
        &p,
        &sig.ret,
        &mut params.asserts,
        ["assert_resource_result", "assert_contents", "assert_resource_error"],
        ["contents", "contents_of_result"],
        call(&p, item, &sig.params),
        quote!(&__mcp_request.uri, #mime_type),
    );
    let read = handler(
        (&krate, &p),
        "__mcp_read",
        quote!(__mcp_request: #krate::ResourceRequest),
        quote!(::std::vec::Vec<#krate::ResourceContents>),
        &params.bind,
        finish,
    );
    let (title, description) = (opt(attr.title.get()), opt(description));
    let scopes = attr.scopes.get().cloned().unwrap_or_default();
    let fields = quote! {
        scopes: &[#(#scopes),*],
        uri: #uri,
        name: #name,
        title: #title,
        description: #description,
        mime_type: #mime_type,
        handler: __mcp_read,
    };
    registered(&p, params, read, "ResourceRegistration", fields)
}
