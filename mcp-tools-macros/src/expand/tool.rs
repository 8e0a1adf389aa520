//! `#[tool]`: the argument decoder, the input and output schema functions, the handler and the
//! `ToolRegistration`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr};

use super::{Params, assertion, call, opt, paths, registered, result_assertions};
use crate::attr::ToolAttr;
use crate::docs;
use crate::signature::{ParamKind, Return, Signature};

pub fn expand(
    attr: &ToolAttr,
    item: &ItemFn,
    sig: &Signature,
    name: &str,
    description: TokenStream,
) -> TokenStream {
    let (krate, p) = paths(attr.krate.get());
    let serde = quote!(#p::serde);

    // Parameters. Each type is asserted once, spanned on the user's type; every other use goes
    // through `Check`, which adds no second error for an unsuitable type.
    let mut params = Params::default();
    let mut fields = Vec::new(); // (binding, ty, wire name)
    let mut schema_props = Vec::new();
    let mut defaults = Vec::new();
    let mut fallbacks = Vec::new();
    let mut whole = None;
    for (index, param) in sig.params.iter().enumerate() {
        let binding = &param.binding;
        let ty = &param.ty;
        match &param.kind {
            ParamKind::Extractor => params.extractor(&p, "assert_from_context", index, param),
            ParamKind::WholeArgs { inner } => {
                params.asserts.push(assertion(quote!(#p::assert_arg), quote!(#inner), inner));
                whole = Some((binding, inner));
            }
            ParamKind::Arg { wire_name, doc, default, .. } => {
                params.asserts.push(assertion(quote!(#p::assert_arg), quote!(#ty), ty));
                let doc = opt(docs::description(doc));
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
    params.bind.push(quote!(let _ = &__mcp_ctx;));

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
    let call = call(&p, item, &sig.params);
    let (finish, output_schema) = match &sig.ret {
        Return::Unit => (
            quote!({ #call; #krate::ToolResult::new() }),
            quote!(#p::Check::<()>::new().output_schema(__mcp_gen)),
        ),
        Return::Value(ty) => {
            let check = Ident::new(output_check(Some(ty)), Span::call_site());
            params.asserts.push(assertion(quote!(#p::#check), quote!(#ty), ty));
            (
                quote!(#p::Check::<#ty>::new().finish(#call, __mcp_plan)),
                quote!(#p::Check::<#ty>::new().output_schema(__mcp_gen)),
            )
        }
        Return::Result { ty, ok, .. } => {
            let checks = ["assert_result", output_check(ok.as_deref()), "assert_error"];
            params.asserts.push(result_assertions(&p, &sig.ret, checks));
            (
                quote!(#p::Check::<#ty>::new().finish_result(#call, __mcp_plan, #name)),
                quote!(#p::Check::<#ty>::new().output_schema_of_result(__mcp_gen)),
            )
        }
    };

    // Registration.
    let title = opt(attr.title.get());
    let summary = opt(attr.summary.get());
    let tags = attr.tags.get().cloned().unwrap_or_default();
    let scopes = attr.scopes.get().cloned().unwrap_or_default();
    let icons = attr.icons.get().cloned().unwrap_or_default();
    let defer = opt(attr.defer.get());
    let task = match attr.task.get().map(LitStr::value).as_deref() {
        Some("required") => quote!(#p::TaskSupport::Required),
        Some(_) => quote!(#p::TaskSupport::Optional),
        None => quote!(#p::TaskSupport::Forbidden),
    };
    let timeout = match attr.timeout.get() {
        Some(d) => {
            let millis = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            quote!(::core::option::Option::Some(::core::time::Duration::from_millis(#millis)))
        }
        None => quote!(::core::option::Option::None),
    };
    let widget = match attr.widget.get() {
        Some(w) => {
            let name = w.name.as_ref().expect("checked: a widget has a name");
            let path = format!("/{}", crate::check::widget_html_path(w).expect("a widget has a path"));
            let (invoking, invoked) = (opt(w.invoking.as_ref()), opt(w.invoked.as_ref()));
            let (accessible, border) = (opt(w.accessible.as_ref()), opt(w.prefers_border.as_ref()));
            let (visibility, connect, resources) = (&w.visibility, &w.connect, &w.resources);
            quote!(::core::option::Option::Some(#p::StaticWidget {
                name: #name,
                html: ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #path)),
                invoking: #invoking,
                invoked: #invoked,
                accessible: #accessible,
                visibility: &[#(#visibility),*],
                connect: &[#(#connect),*],
                resources: &[#(#resources),*],
                prefers_border: #border,
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    let annotations = match &attr.annotations {
        Some(a) => {
            let (t, r, d, i, o) = (
                opt(a.title.get()),
                opt(a.read_only.get()),
                opt(a.destructive.get()),
                opt(a.idempotent.get()),
                opt(a.open_world.get()),
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

    let bind = &params.bind;
    let reaches_client = &params.reaches_client;
    let items = quote! {
        #args_type
        #meta_fn

        fn __mcp_reaches_client() -> bool {
            false #(|| #reaches_client)*
        }

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
                #(#bind)*
                #finish
            }))
        }
    };
    let fields = quote! {
        name: #name,
        title: #title,
        description: #description,
        summary: #summary,
        tags: &[#(#tags),*],
        scopes: &[#(#scopes),*],
        annotations: #annotations,
        icons: &[#(#icons),*],
        defer: #defer,
        task: #task,
        timeout: #timeout,
        widget: #widget,
        meta: #meta,
        input_schema: __mcp_input_schema,
        output_schema: __mcp_output_schema,
        reaches_client: __mcp_reaches_client,
        handler: __mcp_handler,
    };
    registered(&p, params, items, "ToolRegistration", fields)
}

/// The assertion of a tool's output type: the types with an output of their own (`ToolResult`,
/// `Widget`, text) are checked as `ToolOutput`s; any other type separately for each thing it
/// needs (`Serialize`, `JsonSchema`, `Send`), so the error names what is missing.
fn output_check(ty: Option<&syn::Type>) -> &'static str {
    let special = match ty {
        Some(syn::Type::Path(path)) => path
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "ToolResult" | "Widget" | "String")),
        Some(syn::Type::Reference(_) | syn::Type::Tuple(_)) | None => true,
        Some(_) => false,
    };
    if special { "assert_output" } else { "assert_output_parts" }
}
