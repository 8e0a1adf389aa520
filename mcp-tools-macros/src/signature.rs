//! Models the annotated function: its parameters (arguments, context extractors, or one
//! `Args<T>`), their docs and defaults, and its return type. Records what cannot be modelled.
//! A `#[resource]`'s arguments are its URI variables; a `#[prompt]`'s, its prompt arguments.

use proc_macro2::Ident;
use syn::ext::IdentExt;
use syn::{Expr, FnArg, GenericArgument, ItemFn, LitStr, Pat, PathArguments, ReturnType, Type};

use crate::attr::{Attr, ParamAttr, parse_param_attr};
use crate::ctxt::Ctxt;
use crate::docs;
use crate::kind::Kind;
use crate::symbol::{DEFAULT, RENAME};

pub enum ParamKind {
    /// A property of the argument object (a URI variable, a prompt argument).
    Arg { wire_name: String, name_span: proc_macro2::Span, doc: Vec<Expr>, default: Option<Expr> },
    /// `Context`, `State<T>`: filled from the call's context.
    Extractor,
    /// `Args<T>`: `T` is the whole argument object.
    WholeArgs { inner: Type },
}

pub struct Param {
    pub kind: ParamKind,
    /// The binding used in the generated call (`__mcp_arg_N`).
    pub binding: Ident,
    pub ty: Type,
}

pub enum Return {
    Unit,
    /// The last path segment is `Result`; `ok` and `err` are its type arguments as written
    /// (`None` when they are not, as `io::Result<T>`'s error type).
    Result {
        ty: Type,
        ok: Option<Box<Type>>,
        err: Option<Box<Type>>,
    },
    Value(Type),
}

pub struct Signature {
    pub params: Vec<Param>,
    pub ret: Return,
}

/// The last path segment of a type (`a::b::Context<..>` → `Context`).
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The type arguments of a path segment (`Result<T, E>` → `T`, `E`).
fn type_args(seg: &syn::PathSegment) -> impl Iterator<Item = &Type> {
    let args = match &seg.arguments {
        PathArguments::AngleBracketed(a) => Some(a.args.iter()),
        _ => None,
    };
    args.into_iter().flatten().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

fn single_generic(seg: &syn::PathSegment) -> Option<Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `T` of a type written `Option<T>`.
pub fn option_inner(ty: &Type) -> Option<Type> {
    last_segment(ty).filter(|s| s.ident == "Option").and_then(single_generic)
}

/// Models `item`'s signature and strips the attributes rustc would reject on parameters
/// (doc comments, `#[tool(...)]`) from it, so the function can be emitted as written.
pub fn model(cx: &Ctxt, kind: Kind, item: &mut ItemFn) -> Signature {
    let mut params = Vec::new();
    for (index, input) in item.sig.inputs.iter_mut().enumerate() {
        let binding = quote::format_ident!("__mcp_arg_{}", index);
        let pat_type = match input {
            FnArg::Receiver(r) => {
                cx.error_spanned_by(&*r, format!("{} functions cannot take `self`: write a free function and put shared data in `State<T>` (registered with `ServerBuilder::state`)", kind.attr()));
                continue;
            }
            FnArg::Typed(p) => p,
        };
        let mut param_attr = ParamAttr { default: Attr::none(DEFAULT), rename: Attr::none(RENAME) };
        let mut doc_attrs = Vec::new();
        pat_type.attrs.retain(|a| {
            if a.path().is_ident(kind.name()) {
                parse_param_attr(cx, kind, a, &mut param_attr);
                false
            } else if a.path().is_ident("doc") {
                doc_attrs.push(a.clone());
                false
            } else {
                true
            }
        });
        let ty = (*pat_type.ty).clone();
        let segment = last_segment(&ty);
        let segment_name = segment.map(|s| s.ident.to_string());
        let set = [(DEFAULT, param_attr.default.span()), (RENAME, param_attr.rename.span())];
        let set = set.into_iter().filter_map(|(key, span)| Some((key, span?)));
        let param_kind = match segment_name.as_deref() {
            Some(context @ ("Context" | "State" | "Auth")) => {
                for (key, span) in set {
                    cx.error_at(span, format!("`{key}` applies to arguments; a `{context}` parameter is filled from the call's context: remove it"));
                }
                ParamKind::Extractor
            }
            Some("Args") if kind == Kind::Tool => match segment.and_then(single_generic) {
                Some(inner) => {
                    for (key, span) in set {
                        let serde =
                            if key == DEFAULT { "#[serde(default)]" } else { "#[serde(rename = \"...\")]" };
                        cx.error_at(span, format!("`{key}` applies to single arguments; for `Args<T>`, put `{serde}` on the struct's fields"));
                    }
                    ParamKind::WholeArgs { inner }
                }
                None => {
                    cx.error_spanned_by(&ty, "`Args` takes one type: `Args<MyArguments>`");
                    continue;
                }
            },
            _ => {
                let ident = match &*pat_type.pat {
                    Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
                    other => {
                        cx.error_spanned_by(other, kind.param_example());
                        continue;
                    }
                };
                let rename = param_attr.rename.get().cloned();
                let wire_name = rename.as_ref().map_or_else(|| ident.unraw().to_string(), LitStr::value);
                ParamKind::Arg {
                    wire_name,
                    name_span: rename.as_ref().map_or(ident.span(), |r| r.span()),
                    doc: docs::doc_exprs(&doc_attrs),
                    default: param_attr.default.get().cloned(),
                }
            }
        };
        if let ParamKind::Arg { .. } = param_kind {
            check_arg_type(cx, kind, &ty);
        }
        params.push(Param { kind: param_kind, binding, ty });
    }

    let ret = match &item.sig.output {
        ReturnType::Default => Return::Unit,
        ReturnType::Type(_, ty) => {
            if let Type::ImplTrait(_) = &**ty {
                let message = format!(
                    "{} functions cannot return `impl Trait`: name the type (e.g. {})",
                    kind.attr(),
                    kind.returns()
                );
                cx.error_spanned_by(ty, message);
            }
            match last_segment(ty) {
                Some(seg) if seg.ident == "Result" => {
                    let mut args = type_args(seg).cloned().map(Box::new);
                    let (ok, err) = (args.next(), args.next());
                    Return::Result { ty: (**ty).clone(), ok, err }
                }
                _ => Return::Value((**ty).clone()),
            }
        }
    };
    Signature { params, ret }
}

/// Argument types are decoded into owned values: no references (also inside `Option<&str>` and
/// the like), no `impl Trait`.
fn check_arg_type(cx: &Ctxt, kind: Kind, ty: &Type) {
    let inputs = kind.inputs();
    match ty {
        Type::Reference(r) => {
            let fix = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => "use `String` instead of `&str`".to_owned(),
                Type::Slice(_) => "use `Vec<T>` instead of a slice".to_owned(),
                _ if r.mutability.is_some() => "take it by value: remove the `&mut`".to_owned(),
                _ => "take it by value: remove the `&`".to_owned(),
            };
            cx.error_spanned_by(ty, format!("{inputs} are {} into owned values: {fix}", kind.made()));
        }
        Type::ImplTrait(_) => {
            cx.error_spanned_by(ty, format!("{inputs} cannot be `impl Trait`: name a concrete type"))
        }
        Type::Infer(_) => cx.error_spanned_by(ty, format!("{inputs} need a concrete type")),
        Type::Path(p) => {
            for seg in &p.path.segments {
                type_args(seg).for_each(|t| check_arg_type(cx, kind, t));
            }
        }
        Type::Tuple(t) => t.elems.iter().for_each(|t| check_arg_type(cx, kind, t)),
        Type::Array(a) => check_arg_type(cx, kind, &a.elem),
        Type::Slice(s) => check_arg_type(cx, kind, &s.elem),
        Type::Paren(p) => check_arg_type(cx, kind, &p.elem),
        Type::Group(g) => check_arg_type(cx, kind, &g.elem),
        _ => {}
    }
}
