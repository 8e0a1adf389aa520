//! `#[prompt]`: the handler (arguments parsed, context parameters filled, the returned value
//! converted to a `PromptResult`) and the `PromptRegistration` with its arguments.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use super::{Params, assertion, call, finish_call, handler, opt, paths, registered};
use crate::attr::PromptAttr;
use crate::docs;
use crate::signature::{self, ParamKind, Signature};

pub fn expand(
    attr: &PromptAttr,
    item: &ItemFn,
    sig: &Signature,
    name: &str,
    description: TokenStream,
) -> TokenStream {
    let (krate, p) = paths(attr.krate.get());

    let mut params = Params::default();
    let mut arguments = Vec::new();
    for (index, param) in sig.params.iter().enumerate() {
        let (binding, ty) = (&param.binding, &param.ty);
        match &param.kind {
            ParamKind::Extractor => params.extractor(&p, "assert_prompt_context", index, param),
            ParamKind::Arg { wire_name, doc, .. } => {
                // `Option<T>` is an optional argument; anything else is parsed from a required one.
                let (required, parse) = match signature::option_inner(ty) {
                    Some(inner) => {
                        params.asserts.push(assertion(quote!(#p::assert_option), quote!(#ty), ty));
                        params.asserts.push(assertion(quote!(#p::assert_prompt_arg), quote!(#inner), &inner));
                        (false, quote!(optional_prompt_arg))
                    }
                    None => {
                        params.asserts.push(assertion(quote!(#p::assert_prompt_arg), quote!(#ty), ty));
                        (true, quote!(prompt_arg))
                    }
                };
                params.bind.push(quote! {
                    let #binding = #p::Check::<#ty>::new().#parse(&mut __mcp_args, #wire_name)?;
                });
                let description = opt(docs::description(doc));
                arguments.push(quote! {
                    #p::StaticPromptArgument { name: #wire_name, description: #description, required: #required }
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
        ["assert_prompt_result", "assert_messages", "assert_prompt_error"],
        ["messages", "messages_of_result"],
        call(&p, item, &sig.params),
        TokenStream::new(),
    );
    let get = handler(
        (&krate, &p),
        "__mcp_get",
        quote!(mut __mcp_args: ::std::collections::HashMap<::std::string::String, ::std::string::String>),
        quote!(#krate::PromptResult),
        &params.bind,
        finish,
    );
    let title = opt(attr.title.get());
    let scopes = attr.scopes.get().cloned().unwrap_or_default();
    let fields = quote! {
        scopes: &[#(#scopes),*],
        name: #name,
        title: #title,
        description: #description,
        arguments: &[#(#arguments),*],
        handler: __mcp_get,
    };
    registered(&p, params, get, "PromptRegistration", fields)
}
