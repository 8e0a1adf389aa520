//! Emits the user's function unchanged (minus parameter attributes) and, in a `const _` block,
//! the argument decoder, the schema function, the handler and the inventory registration.
//! Generated code names only `::mcp_tools::__private` paths (or `crate = "..."`'s).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr};

use crate::attr::{ToolAttr, parse_tool_attr};
use crate::ctxt::Ctxt;
use crate::signature::{self, ParamKind, Return, Signature};
use crate::{check, docs};

pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "#[tool] goes on a function: `async fn name(arg: Type, ...) -> Output { ... }`",
            )
            .to_compile_error();
            return quote!(#error #item);
        }
    };
    let cx = Ctxt::new();
    let attr = parse_tool_attr(&cx, args);
    check::function(&cx, &item);
    let sig = signature::model(&cx, &mut item);
    check::attribute(&cx, &attr);
    check::parameters(&cx, &sig);
    let name = check::tool_name(&cx, &attr, &item);
    let description = match attr.description.get() {
        Some(lit) => Some(quote!(#lit)),
        None => docs::description(&docs::doc_exprs(&item.attrs)),
    };
    if description.is_none() {
        cx.error_spanned_by(
            &item.sig.ident,
            "a tool needs a description, which clients require: add a doc comment (`/// What it does.`) or `#[tool(description = \"...\")]`",
        );
    }
    match cx.check() {
        Ok(()) => {
            let generated = expand(&attr, &item, &sig, &name, description.expect("checked"));
            // A tool's parameters are its schema's properties; many of them is normal.
            item.attrs.push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
            quote!(#item #generated)
        }
        Err(errors) => {
            let errors = errors.iter().map(syn::Error::to_compile_error);
            quote!(#item #(#errors)*)
        }
    }
}

fn opt_str(lit: Option<&LitStr>) -> TokenStream {
    match lit {
        Some(l) => quote!(::core::option::Option::Some(#l)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_bool(v: Option<&bool>) -> TokenStream {
    match v {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    }
}

fn expand(
    attr: &ToolAttr,
    item: &ItemFn,
    sig: &Signature,
    name: &str,
    description: TokenStream,
) -> TokenStream {
    let krate = match attr.krate.get() {
        Some(path) => quote!(#path),
        None => quote!(::mcp_tools),
    };
    let p = quote!(#krate::__private);
    let serde = quote!(#p::serde);
    let fn_ident = &item.sig.ident;

    // Parameters.
    let mut extract = Vec::new();
    let mut required_state = Vec::new();
    let mut call_args = Vec::new();
    let mut fields = Vec::new(); // (binding, ty, wire name)
    let mut schema_props = Vec::new();
    let mut defaults = Vec::new();
    let mut fallbacks = Vec::new();
    let mut whole = None;
    for (index, param) in sig.params.iter().enumerate() {
        let binding = &param.binding;
        let ty = &param.ty;
        call_args.push(quote!(#binding));
        match &param.kind {
            ParamKind::Extractor => {
                extract.push(quote_spanned!(ty.span()=> let #binding = #p::extract::<#ty>(&__mcp_ctx);));
                required_state.push(quote_spanned!(ty.span()=> #p::required_state::<#ty>));
            }
            ParamKind::WholeArgs { inner } => whole = Some((binding, inner)),
            ParamKind::Arg { wire_name, doc, default, .. } => {
                let doc = match docs::description(doc) {
                    Some(d) => quote!(::core::option::Option::Some(#d)),
                    None => quote!(::core::option::Option::None),
                };
                let (default_schema, fallback) = match default {
                    Some(expr) => {
                        let default_fn = format_ident!("__mcp_default_{}", index);
                        defaults.push(quote_spanned!(expr.span()=> fn #default_fn() -> #ty { #expr }));
                        (
                            quote!(::core::option::Option::Some({
                                #[allow(unused_imports)]
                                use #p::NoSerialize as _;
                                #p::DefaultValue(&#default_fn()).to_json()
                            })),
                            quote!(#default_fn()),
                        )
                    }
                    None => (
                        quote!(::core::option::Option::None),
                        quote_spanned!(ty.span()=> #p::missing::<#ty, __M::Error>(#wire_name)?),
                    ),
                };
                schema_props.push(quote_spanned!(ty.span()=>
                    __mcp_schema.property::<#ty>(__mcp_gen, #wire_name, #doc, #default_schema);
                ));
                fallbacks.push(fallback);
                fields.push((binding, ty, wire_name.as_str()));
            }
        }
    }
    extract.push(quote!(let _ = &__mcp_ctx;));

    // Decoding and input schema.
    let (decode, input_schema, args_type) = match whole {
        Some((binding, inner)) => (
            quote_spanned!(inner.span()=> let #binding = #krate::Args(#p::decode_args::<#inner>(__mcp_arguments)?);),
            quote_spanned!(inner.span()=> #p::schema_of::<#inner>(__mcp_gen)),
            TokenStream::new(),
        ),
        None => {
            let bindings: Vec<_> = fields.iter().map(|(b, _, _)| *b).collect();
            let tys: Vec<_> = fields.iter().map(|(_, t, _)| *t).collect();
            let wires: Vec<_> = fields.iter().map(|(_, _, w)| *w).collect();
            let next = fields.iter().map(|(b, ty, w)| {
                quote_spanned!(ty.span()=> #w => #p::next_arg::<#ty, __M>(&mut __map, &mut #b, #w)?,)
            });
            let args_type = quote! {
                struct __McpArgs { #(#bindings: #tys,)* }
                const __MCP_FIELDS: &[&str] = &[#(#wires),*];
                #(#defaults)*
                impl<'de> #serde::Deserialize<'de> for __McpArgs {
                    fn deserialize<__D: #serde::Deserializer<'de>>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error> {
                        struct __Visitor;
                        impl<'de> #serde::de::Visitor<'de> for __Visitor {
                            type Value = __McpArgs;
                            fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                                __f.write_str("an object of arguments")
                            }
                            fn visit_map<__M: #serde::de::MapAccess<'de>>(self, mut __map: __M) -> ::core::result::Result<__McpArgs, __M::Error> {
                                #(let mut #bindings = ::core::option::Option::None;)*
                                while let ::core::option::Option::Some(__key) = #serde::de::MapAccess::next_key::<#p::Key<'de>>(&mut __map)? {
                                    match __key.as_str() {
                                        #(#next)*
                                        __other => return ::core::result::Result::Err(#p::unknown_arg(__other, __MCP_FIELDS)),
                                    }
                                }
                                ::core::result::Result::Ok(__McpArgs {
                                    #(#bindings: match #bindings {
                                        ::core::option::Option::Some(__v) => __v,
                                        ::core::option::Option::None => #fallbacks,
                                    },)*
                                })
                            }
                        }
                        __deserializer.deserialize_map(__Visitor)
                    }
                }
            };
            (
                quote!(let __McpArgs { #(#bindings),* } = #p::decode::<__McpArgs>(__mcp_arguments)?;),
                quote! {{
                    let mut __mcp_schema = #p::ObjectSchema::new();
                    #(#schema_props)*
                    __mcp_schema.finish()
                }},
                args_type,
            )
        }
    };

    // The call and its result.
    let call = if item.sig.asyncness.is_some() {
        quote!(#fn_ident(#(#call_args),*).await)
    } else {
        quote!(#fn_ident(#(#call_args),*))
    };
    let (finish, output_schema) = match &sig.ret {
        Return::Unit => (quote!({ #call; #krate::ToolResult::new() }), quote!(#p::output_schema::<()>)),
        Return::Value(ty) => (
            quote_spanned!(ty.span()=> #p::finish::<#ty>(#call, __mcp_plan)),
            quote_spanned!(ty.span()=> #p::output_schema::<#ty>),
        ),
        Return::Result(ty) => (
            quote_spanned!(ty.span()=> #p::finish_result::<#ty>(#call, __mcp_plan, #name)),
            quote_spanned!(ty.span()=> #p::output_schema_of_result::<#ty>),
        ),
    };

    // Registration.
    let title = opt_str(attr.title.get());
    let summary = opt_str(attr.summary.get());
    let tags = attr.tags.get().cloned().unwrap_or_default();
    let icons = attr.icons.get().cloned().unwrap_or_default();
    let annotations = match &attr.annotations {
        Some(a) => {
            let (t, r, d, i, o) = (
                opt_str(a.title.get()),
                opt_bool(a.read_only.get()),
                opt_bool(a.destructive.get()),
                opt_bool(a.idempotent.get()),
                opt_bool(a.open_world.get()),
            );
            quote!(#p::StaticAnnotations { title: #t, read_only: #r, destructive: #d, idempotent: #i, open_world: #o })
        }
        None => quote!(#p::StaticAnnotations {
            title: ::core::option::Option::None,
            read_only: ::core::option::Option::None,
            destructive: ::core::option::Option::None,
            idempotent: ::core::option::Option::None,
            open_world: ::core::option::Option::None,
        }),
    };
    let (meta_fn, meta) = match attr.meta.get() {
        Some(expr) => (
            quote_spanned!(expr.span()=> fn __mcp_meta() -> #p::serde_json::Value { ::core::convert::Into::into(#expr) }),
            quote!(::core::option::Option::Some(__mcp_meta)),
        ),
        None => (TokenStream::new(), quote!(::core::option::Option::None)),
    };

    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, unused, clippy::all, clippy::pedantic)]
        const _: () = {
            #args_type
            #meta_fn

            fn __mcp_input_schema(__mcp_gen: &mut #p::schemars::SchemaGenerator) -> #p::schemars::Schema {
                #input_schema
            }

            fn __mcp_handler(
                __mcp_arguments: &#p::serde_json::value::RawValue,
                __mcp_ctx: #krate::Context,
                __mcp_plan: #p::OutputPlan,
            ) -> ::core::result::Result<#p::BoxFuture<'static, #krate::ToolResult>, #p::ArgumentError> {
                #decode
                ::core::result::Result::Ok(::std::boxed::Box::pin(async move {
                    #(#extract)*
                    #finish
                }))
            }

            #p::inventory::submit! {
                #p::ToolRegistration {
                    name: #name,
                    title: #title,
                    description: #description,
                    summary: #summary,
                    tags: &[#(#tags),*],
                    annotations: #annotations,
                    icons: &[#(#icons),*],
                    meta: #meta,
                    input_schema: __mcp_input_schema,
                    output_schema: #output_schema,
                    required_state: &[#(#required_state),*],
                    handler: __mcp_handler,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        };
    }
}
