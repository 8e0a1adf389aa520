//! Runs each attribute's stages (parse → model → check) and emits the user's function unchanged
//! (minus parameter attributes) beside, in a `const _` block, what registers it: one submodule
//! per attribute, and here the pieces they share. Generated code names only
//! `::mcp_tools::__private` paths (or `crate = "..."`'s).

mod main;
mod prompt;
mod resource;
mod tool;

pub use main::main;

use proc_macro2::{Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ItemFn;

use crate::attr::{parse_prompt_attr, parse_resource_attr, parse_tool_attr};
use crate::check;
use crate::ctxt::Ctxt;
use crate::kind::Kind;
use crate::signature::{self, Param, Return};

pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = match function(Kind::Tool, item) {
        Ok(item) => item,
        Err(tokens) => return tokens,
    };
    let cx = Ctxt::new();
    let attr = parse_tool_attr(&cx, args);
    check::function(&cx, Kind::Tool, &item);
    let sig = signature::model(&cx, Kind::Tool, &mut item);
    check::attribute(&cx, &attr);
    check::parameters(&cx, Kind::Tool, &sig);
    let name = check::tool_name(&cx, &attr, &item);
    let description = check::description(&cx, Kind::Tool, &attr.description, &item);
    finish(cx, item, |item| tool::expand(&attr, item, &sig, &name, description.expect("checked")))
}

pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = match function(Kind::Resource, item) {
        Ok(item) => item,
        Err(tokens) => return tokens,
    };
    let cx = Ctxt::new();
    let attr = parse_resource_attr(&cx, args);
    check::function(&cx, Kind::Resource, &item);
    let sig = signature::model(&cx, Kind::Resource, &mut item);
    check::resource_attribute(&cx, &attr);
    check::parameters(&cx, Kind::Resource, &sig);
    if let Some(uri) = attr.uri.get()
        && let Some(variables) = check::uri_variables(&cx, uri)
    {
        check::resource_parameters(&cx, &sig, uri, &variables);
    }
    check::returns_something(&cx, Kind::Resource, &item);
    let name = check::name(&cx, &attr.name, &item);
    let description = check::description(&cx, Kind::Resource, &attr.description, &item);
    finish(cx, item, |item| resource::expand(&attr, item, &sig, &name, description))
}

pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = match function(Kind::Prompt, item) {
        Ok(item) => item,
        Err(tokens) => return tokens,
    };
    let cx = Ctxt::new();
    let attr = parse_prompt_attr(&cx, args);
    check::function(&cx, Kind::Prompt, &item);
    let sig = signature::model(&cx, Kind::Prompt, &mut item);
    check::prompt_attribute(&cx, &attr);
    check::parameters(&cx, Kind::Prompt, &sig);
    check::returns_something(&cx, Kind::Prompt, &item);
    let name = check::name(&cx, &attr.name, &item);
    let description = check::description(&cx, Kind::Prompt, &attr.description, &item);
    finish(cx, item, |item| prompt::expand(&attr, item, &sig, &name, description.expect("checked")))
}

/// The annotated item as a function, or (for any other item) the item and the error.
fn function(kind: Kind, item: TokenStream) -> Result<ItemFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|_| {
        let error = not_a_function(kind, &item).to_compile_error();
        quote!(#error #item)
    })
}

/// The function with the generated items, or with every recorded error: never the errors alone,
/// so the rest of the crate still type-checks against the function.
fn finish(cx: Ctxt, mut item: ItemFn, generate: impl FnOnce(&ItemFn) -> TokenStream) -> TokenStream {
    match cx.check() {
        Ok(()) => {
            let generated = generate(&item);
            // The parameters are a schema's properties or a prompt's arguments; many is normal.
            item.attrs.push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
            quote!(#item #generated)
        }
        Err(errors) => {
            let errors = errors.iter().map(syn::Error::to_compile_error);
            quote!(#item #(#errors)*)
        }
    }
}

/// The error for an attribute on something other than a function, on the item's keyword.
fn not_a_function(kind: Kind, item: &TokenStream) -> syn::Error {
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
    syn::Error::new(span, format!("{} goes on a function, not on {what}: {}", kind.attr(), kind.example()))
}

/// `::mcp_tools` (or the `crate = "..."` path) and its `__private` module.
fn paths(krate: Option<&syn::Path>) -> (TokenStream, TokenStream) {
    let krate = match krate {
        Some(path) => quote!(#path),
        None => quote!(::mcp_tools),
    };
    let private = quote!(#krate::__private);
    (krate, private)
}

/// The anonymous `const _` block holding the generated items. Inside, `Check::<T>` methods fall
/// back to the `Unchecked` ones for unsuitable types (see `__private::Check`).
fn hidden(p: &TokenStream, items: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, unused, clippy::all, clippy::pedantic)]
        const _: () = {
            #[allow(unused_imports)]
            use #p::{Unchecked as _, UncheckedSend as _};

            #items
        };
    }
}

/// The `const _` block of one attribute: the parameters' assertions and state functions,
/// `items` (the handler, schema functions, …) and the inventory registration
/// `#registration { #fields required_state, file, line }`.
fn registered(
    p: &TokenStream,
    params: Params,
    items: TokenStream,
    registration: &str,
    fields: TokenStream,
) -> TokenStream {
    let Params { asserts, state_fns, required_state, .. } = params;
    let registration = Ident::new(registration, Span::call_site());
    hidden(
        p,
        quote! {
            #(#asserts)*
            #(#state_fns)*
            #items

            #p::inventory::submit! {
                #p::#registration {
                    #fields
                    required_state: &[#(#required_state),*],
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        },
    )
}

/// The handler of a resource or prompt: `fn #name(#input, __mcp_ctx: Context) ->
/// BoxFuture<Result<#output, ToolError>>`, which binds the parameters (`?` returns a parsing
/// error) and returns `finish`.
fn handler(
    (krate, p): (&TokenStream, &TokenStream),
    name: &str,
    input: TokenStream,
    output: TokenStream,
    bind: &[TokenStream],
    finish: TokenStream,
) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote! {
        fn #name(
            #input,
            __mcp_ctx: #krate::Context,
        ) -> #p::BoxFuture<'static, ::core::result::Result<#output, #krate::ToolError>> {
            ::std::boxed::Box::pin(async move {
                #(#bind)*
                let _ = &__mcp_ctx;
                #finish
            })
        }
    }
}

/// What the generated code does with the parameters: assertions on their types, statements
/// binding them in the handler, the `required_state` functions of the context parameters, and
/// whether each of those can reach the client.
#[derive(Default)]
struct Params {
    asserts: Vec<TokenStream>,
    bind: Vec<TokenStream>,
    state_fns: Vec<TokenStream>,
    required_state: Vec<Ident>,
    reaches_client: Vec<TokenStream>,
}

impl Params {
    /// A `Context`/`State<T>` parameter, checked by `assert`, filled from `__mcp_ctx`.
    fn extractor(&mut self, p: &TokenStream, assert: &str, index: usize, param: &Param) {
        let (binding, ty) = (&param.binding, &param.ty);
        let assert = Ident::new(assert, Span::call_site());
        self.asserts.push(assertion(quote!(#p::#assert), quote!(#ty), ty));
        self.bind.push(quote!(let #binding = #p::Check::<#ty>::new().extract(&__mcp_ctx);));
        let state_fn = format_ident!("__mcp_state_{}", index);
        self.state_fns.push(quote! {
            fn #state_fn() -> ::core::option::Option<(::core::any::TypeId, &'static str)> {
                #p::Check::<#ty>::new().required_state()
            }
        });
        self.required_state.push(state_fn);
        self.reaches_client.push(quote!(#p::Check::<#ty>::new().reaches_client()));
    }
}

/// Calls the user's function with the bindings; an `async fn`'s future must be `Send`, which
/// `assert_send` reports on the function's name.
fn call(p: &TokenStream, item: &ItemFn, params: &[Param]) -> TokenStream {
    let fn_ident = &item.sig.ident;
    let args = params.iter().map(|param| &param.binding);
    if item.sig.asyncness.is_some() {
        let assert_send = quote_spanned!(fn_ident.span()=> #p::assert_send(&__mcp_future););
        quote!({
            let __mcp_future = #fn_ident(#(#args),*);
            #assert_send
            #p::SendFuture(__mcp_future).into_send().await
        })
    } else {
        quote!(#fn_ident(#(#args),*))
    }
}

/// The assertions on a return type named `Result`, on the `Ok` and `Err` type arguments where
/// they are written. One body, so that rustc reports a `Result` that is not
/// `std::result::Result` once. `checks` names the `assert_*` of the result, `Ok` and `Err`.
fn result_assertions(p: &TokenStream, ret: &Return, checks: [&str; 3]) -> TokenStream {
    let Return::Result { ty, ok, err } = ret else { return TokenStream::new() };
    let [is_result, output, error] = checks.map(|c| Ident::new(c, Span::call_site()));
    let is_result = assertion_call(quote!(#p::#is_result), quote!(#ty), ty);
    let ok_shown: &dyn ToTokens = ok.as_ref().map_or(ty, |t| t);
    let ok_ty = projection(p, ty, "Ok", ok_shown);
    let ok = assertion_call(quote!(#p::#output), ok_ty, ok_shown);
    let err_shown: &dyn ToTokens = err.as_ref().map_or(ty, |t| t);
    let err_ty = projection(p, ty, "Err", err_shown);
    let err = assertion_call(quote!(#p::#error), err_ty, err_shown);
    quote!(const _: () = { #is_result; #ok; #err; };)
}

/// The return type's assertions, and the expression finishing the call through `Check`:
/// `methods[0]` for a value (checked by `checks[1]`), `methods[1]` for a `Result` (checked by
/// all of `checks`, see [`result_assertions`]). `args` follow the call's value.
fn finish_call(
    p: &TokenStream,
    ret: &Return,
    asserts: &mut Vec<TokenStream>,
    checks: [&str; 3],
    methods: [&str; 2],
    call: TokenStream,
    args: TokenStream,
) -> TokenStream {
    let [value, of_result] = methods.map(|m| Ident::new(m, Span::call_site()));
    let args = if args.is_empty() { args } else { quote!(, #args) };
    match ret {
        Return::Result { ty, .. } => {
            asserts.push(result_assertions(p, ret, checks));
            quote!(#p::Check::<#ty>::new().#of_result(#call #args))
        }
        Return::Value(ty) => {
            let check = Ident::new(checks[1], Span::call_site());
            asserts.push(assertion(quote!(#p::#check), quote!(#ty), ty));
            quote!(#p::Check::<#ty>::new().#value(#call #args))
        }
        Return::Unit => quote!(#p::Check::<()>::new().#value({ #call; } #args)),
    }
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
    let assoc = Ident::new(assoc, last);
    quote!(#head #assoc)
}

fn opt<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}
