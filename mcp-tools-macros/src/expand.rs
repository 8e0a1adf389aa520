//! Emits the user's function unchanged (minus parameter attributes) and, in a `const _` block,
//! the argument decoder, the schema function, the handler and the inventory registration.
//! Generated code names only `::mcp_tools::__private` paths (or `crate = "..."`'s).

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
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
            let error = not_a_function(&item).to_compile_error();
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
        let message = if item.attrs.iter().any(|a| a.path().is_ident("doc")) {
            "the doc comment is blank, and a tool needs a description, which clients require: say what the tool does in it or in `#[tool(description = \"...\")]`"
        } else {
            "a tool needs a description, which clients require: add a doc comment (`/// What it does.`) or `#[tool(description = \"...\")]`"
        };
        cx.error_spanned_by(&item.sig.ident, message);
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

/// The error for `#[tool]` on something other than a function, on the item's keyword.
fn not_a_function(item: &TokenStream) -> syn::Error {
    use syn::Item;
    let (span, what) = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(i)) => (i.struct_token.span, "a struct"),
        Ok(Item::Enum(i)) => (i.enum_token.span, "an enum"),
        Ok(Item::Union(i)) => (i.union_token.span, "a union"),
        Ok(Item::Mod(i)) => (i.mod_token.span, "a module"),
        Ok(Item::Impl(i)) => (i.impl_token.span, "an impl block"),
        Ok(Item::Trait(i)) => (i.trait_token.span, "a trait"),
        Ok(Item::Const(i)) => (i.const_token.span, "a const"),
        Ok(Item::Static(i)) => (i.static_token.span, "a static"),
        Ok(Item::Type(i)) => (i.type_token.span, "a type alias"),
        Ok(Item::Use(i)) => (i.use_token.span, "a `use`"),
        _ => (Span::call_site(), "this item"),
    };
    syn::Error::new(
        span,
        format!(
            "#[tool] goes on a function, not on {what}: `async fn name(arg: Type, ...) -> Output {{ ... }}`"
        ),
    )
}

/// The spans of the first and the last token of `shown`: an assertion spanned from one to the
/// other underlines the whole type the user wrote (a span cannot be joined on stable otherwise).
fn edges(shown: &dyn ToTokens) -> (Span, Span) {
    let tokens: Vec<TokenTree> = shown.to_token_stream().into_iter().collect();
    let edge = |t: &TokenTree, open: bool| match t {
        TokenTree::Group(g) if open => g.span_open(),
        TokenTree::Group(g) => g.span_close(),
        t => t.span(),
    };
    let first = tokens.first().map_or_else(Span::call_site, |t| edge(t, true));
    let last = tokens.last().map_or(first, |t| edge(t, false));
    (first, last)
}

/// `const _: () = #check::<#arg>();`, spanned over `shown` (see [`edges`]).
fn assertion(check: TokenStream, arg: TokenStream, shown: &dyn ToTokens) -> TokenStream {
    let call = assertion_call(check, arg, shown);
    quote!(const _: () = #call;)
}

/// `#check::<#arg>()`, spanned over `shown` (see [`edges`]).
fn assertion_call(check: TokenStream, arg: TokenStream, shown: &dyn ToTokens) -> TokenStream {
    let (first, last) = edges(shown);
    let mut close = Punct::new('>', Spacing::Alone);
    close.set_span(last);
    let head = quote_spanned!(first=> #check::<#arg);
    let call = quote_spanned!(last=> ());
    quote!(#head #close #call)
}

/// `<#ty as IsResult>::#assoc`, spanned over `shown`: rustc reports a projection's failure there.
fn projection(p: &TokenStream, ty: &syn::Type, assoc: &str, shown: &dyn ToTokens) -> TokenStream {
    let (first, last) = edges(shown);
    let head = quote_spanned!(first=> <#ty as #p::IsResult>::);
    let assoc = proc_macro2::Ident::new(assoc, last);
    quote!(#head #assoc)
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

    // Parameters. Each type is asserted once, spanned on the user's type; every other use goes
    // through `Check`, which adds no second error for an unsuitable type.
    let mut asserts = Vec::new();
    let mut extract = Vec::new();
    let mut state_fns = Vec::new();
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
                asserts.push(assertion(quote!(#p::assert_from_context), quote!(#ty), ty));
                extract.push(quote!(let #binding = #p::Check::<#ty>::new().extract(&__mcp_ctx);));
                let state_fn = format_ident!("__mcp_state_{}", index);
                state_fns.push(quote! {
                    fn #state_fn() -> ::core::option::Option<(::core::any::TypeId, &'static str)> {
                        #p::Check::<#ty>::new().required_state()
                    }
                });
                required_state.push(state_fn);
            }
            ParamKind::WholeArgs { inner } => {
                asserts.push(assertion(quote!(#p::assert_arg), quote!(#inner), inner));
                whole = Some((binding, inner));
            }
            ParamKind::Arg { wire_name, doc, default, .. } => {
                asserts.push(assertion(quote!(#p::assert_arg), quote!(#ty), ty));
                let doc = match docs::description(doc) {
                    Some(d) => quote!(::core::option::Option::Some(#d)),
                    None => quote!(::core::option::Option::None),
                };
                let (default_schema, fallback) = match default {
                    Some(expr) => {
                        let default_fn = format_ident!("__mcp_default_{}", index);
                        // The `let` makes a mistyped default point at the parameter's type.
                        defaults.push(quote_spanned!(expr.span()=>
                            fn #default_fn() -> #ty {
                                let __mcp_default: #ty = #expr;
                                __mcp_default
                            }
                        ));
                        (
                            quote!(::core::option::Option::Some({
                                #[allow(unused_imports)]
                                use #p::NoSerialize as _;
                                #p::DefaultValue(&#default_fn()).__mcp_default_json()
                            })),
                            quote!(#default_fn()),
                        )
                    }
                    None => (
                        quote!(::core::option::Option::None),
                        quote!(#p::Check::<#ty>::new().missing::<__M::Error>(#wire_name)?),
                    ),
                };
                schema_props.push(quote! {
                    #p::Check::<#ty>::new().property(&mut __mcp_schema, __mcp_gen, #wire_name, #doc, #default_schema);
                });
                fallbacks.push(fallback);
                fields.push((binding, ty, wire_name.as_str()));
            }
        }
    }
    extract.push(quote!(let _ = &__mcp_ctx;));

    // Decoding and input schema.
    let (decode, input_schema, args_type) = match whole {
        Some((binding, inner)) => (
            quote!(let #binding = #krate::Args(#p::Check::<#inner>::new().decode_args(__mcp_arguments)?);),
            quote!(#p::Check::<#inner>::new().schema_of(__mcp_gen)),
            TokenStream::new(),
        ),
        None => {
            let bindings: Vec<_> = fields.iter().map(|(b, _, _)| *b).collect();
            let tys: Vec<_> = fields.iter().map(|(_, t, _)| *t).collect();
            let wires: Vec<_> = fields.iter().map(|(_, _, w)| *w).collect();
            let next = fields
                .iter()
                .map(|(b, ty, w)| quote!(#w => #p::Check::<#ty>::new().next_arg(&mut __map, &mut #b, #w)?,));
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
                                ::core::fmt::Formatter::write_str(__f, "an object of arguments")
                            }
                            fn visit_map<__M: #serde::de::MapAccess<'de>>(self, mut __map: __M) -> ::core::result::Result<__McpArgs, __M::Error> {
                                #(let mut #bindings = ::core::option::Option::None;)*
                                while let ::core::option::Option::Some(__key) = #serde::de::MapAccess::next_key::<#p::Key<'de>>(&mut __map)? {
                                    match #p::Key::as_str(&__key) {
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
                        #serde::Deserializer::deserialize_map(__deserializer, __Visitor)
                    }
                }
            };
            (
                quote!(let __McpArgs { #(#bindings),* } = #p::decode::<__McpArgs>(__mcp_arguments)?;),
                quote! {{
                    let mut __mcp_schema = #p::ObjectSchema::new();
                    #(#schema_props)*
                    #p::ObjectSchema::finish(__mcp_schema)
                }},
                args_type,
            )
        }
    };

    // The call and its result.
    let call = if item.sig.asyncness.is_some() {
        let assert_send = quote_spanned!(fn_ident.span()=> #p::assert_send(&__mcp_future););
        quote!({
            let __mcp_future = #fn_ident(#(#call_args),*);
            #assert_send
            #p::SendFuture(__mcp_future).into_send().await
        })
    } else {
        quote!(#fn_ident(#(#call_args),*))
    };
    let (finish, output_schema) = match &sig.ret {
        Return::Unit => (
            quote!({ #call; #krate::ToolResult::new() }),
            quote!(#p::Check::<()>::new().output_schema(__mcp_gen)),
        ),
        Return::Value(ty) => {
            asserts.push(assertion(quote!(#p::assert_output), quote!(#ty), ty));
            (
                quote!(#p::Check::<#ty>::new().finish(#call, __mcp_plan)),
                quote!(#p::Check::<#ty>::new().output_schema(__mcp_gen)),
            )
        }
        Return::Result { ty, ok, err } => {
            // The `Ok` and `Err` checks point at those type arguments where they are written. One
            // body, so that rustc reports a `Result` that is not `std::result::Result` once.
            let is_result = assertion_call(quote!(#p::assert_result), quote!(#ty), ty);
            let ok_shown: &dyn ToTokens = ok.as_ref().map_or(ty, |t| t);
            let ok_ty = projection(&p, ty, "Ok", ok_shown);
            let ok = assertion_call(quote!(#p::assert_output), ok_ty, ok_shown);
            let err_shown: &dyn ToTokens = err.as_ref().map_or(ty, |t| t);
            let err_ty = projection(&p, ty, "Err", err_shown);
            let err = assertion_call(quote!(#p::assert_error), err_ty, err_shown);
            asserts.push(quote!(const _: () = { #is_result; #ok; #err; };));
            (
                quote!(#p::Check::<#ty>::new().finish_result(#call, __mcp_plan, #name)),
                quote!(#p::Check::<#ty>::new().output_schema_of_result(__mcp_gen)),
            )
        }
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
            quote_spanned!(expr.span()=> fn __mcp_meta() -> #p::serde_json::Value { #p::IntoMeta::into_meta(#expr) }),
            quote!(::core::option::Option::Some(__mcp_meta)),
        ),
        None => (TokenStream::new(), quote!(::core::option::Option::None)),
    };

    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, unused, clippy::all, clippy::pedantic)]
        const _: () = {
            #[allow(unused_imports)]
            use #p::{Unchecked as _, UncheckedSend as _};

            #(#asserts)*
            #args_type
            #meta_fn
            #(#state_fns)*

            fn __mcp_output_schema(__mcp_gen: &mut #p::schemars::SchemaGenerator) -> ::core::option::Option<#p::schemars::Schema> {
                #output_schema
            }

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
                    output_schema: __mcp_output_schema,
                    required_state: &[#(#required_state),*],
                    handler: __mcp_handler,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        };
    }
}
