//! The rules a `#[tool]` must satisfy, each reported at the offending token with the fix.

use std::collections::HashMap;

use syn::ItemFn;

use crate::attr::ToolAttr;
use crate::ctxt::Ctxt;
use crate::signature::{ParamKind, Signature};

/// Checks the function item itself (what kind of function it is).
pub fn function(cx: &Ctxt, item: &ItemFn) {
    let sig = &item.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "#[tool] functions cannot be generic: the schemas are derived from concrete types; remove the parameters and name the types",
        );
    }
    if let Some(t) = &sig.unsafety {
        cx.error_spanned_by(
            t,
            "#[tool] functions cannot be `unsafe`: remove it and use an `unsafe { ... }` block inside",
        );
    }
    if let Some(t) = &sig.constness {
        cx.error_spanned_by(t, "#[tool] functions cannot be `const`: remove it");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "#[tool] functions cannot be `extern`: remove the ABI");
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "#[tool] functions cannot be variadic");
    }
}

/// The tool's name: 1–128 characters of `[A-Za-z0-9_.-]`.
pub fn tool_name(cx: &Ctxt, attr: &ToolAttr, item: &ItemFn) -> String {
    let (name, span) = match attr.name.get() {
        Some(lit) => (lit.value(), lit.span()),
        None => {
            use syn::ext::IdentExt;
            (item.sig.ident.unraw().to_string(), item.sig.ident.span())
        }
    };
    if name.is_empty() {
        cx.error_at(span, "a tool name cannot be empty");
    } else if name.chars().count() > 128 {
        let length = name.chars().count();
        cx.error_at(span, format!("this tool name is {length} characters long; the limit is 128"));
    } else if let Some(c) =
        name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        let fix = if attr.name.get().is_some() { "" } else { " (set one with `name = \"...\"`)" };
        cx.error_at(
            span,
            format!(
                "tool name {name:?} contains {c:?}; tool names use only A-Z, a-z, 0-9, `_`, `.` and `-`{fix}"
            ),
        );
    }
    name
}

/// Cross-argument rules of the attribute.
pub fn attribute(cx: &Ctxt, attr: &ToolAttr) {
    if let Some(a) = &attr.annotations
        && a.read_only.get() == Some(&true)
        && a.destructive.get() == Some(&true)
    {
        let span = a.destructive.span().expect("set");
        cx.error_at(span, "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing; remove one of them");
    }
    for lit in attr.tags.get().into_iter().flatten() {
        if lit.value().trim().is_empty() {
            cx.error_spanned_by(lit, "a tag cannot be empty: remove it or write a word");
        }
    }
    let texts = [
        (
            attr.description.get(),
            "`description` cannot be empty: say what the tool does, or remove it to use the doc comment",
        ),
        (attr.title.get(), "`title` cannot be empty: write a display title or remove it"),
        (
            attr.summary.get(),
            "`summary` cannot be empty: write one line or remove it to use the description's first line",
        ),
    ];
    for (lit, message) in texts {
        if let Some(lit) = lit
            && lit.value().trim().is_empty()
        {
            cx.error_spanned_by(lit, message);
        }
    }
    if let Some(s) = attr.summary.get()
        && s.value().contains('\n')
    {
        cx.error_spanned_by(s, "`summary` is one line; put longer text in the description");
    }
    if let Some(span) = attr.widget.span() {
        cx.error_at(
            span,
            "`widget` is reserved for MCP Apps views, which this version of mcp-tools does not serve yet; remove it for now",
        );
    }
}

/// Rules between parameters: at most one `Args<T>`, never with other arguments; distinct names.
pub fn parameters(cx: &Ctxt, sig: &Signature) {
    let whole: Vec<_> = sig.params.iter().filter(|p| matches!(p.kind, ParamKind::WholeArgs { .. })).collect();
    let singles = sig.params.iter().filter(|p| matches!(p.kind, ParamKind::Arg { .. })).count();
    if whole.len() > 1 {
        cx.error_spanned_by(
            &whole[1].ty,
            "only one `Args<T>` parameter is allowed: it supplies the whole argument object",
        );
    } else if whole.len() == 1 && singles > 0 {
        cx.error_spanned_by(
            &whole[0].ty,
            "`Args<T>` supplies the whole argument object and cannot be combined with other arguments: move them into the struct",
        );
    }
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for p in &sig.params {
        if let ParamKind::Arg { wire_name, name_span, .. } = &p.kind
            && seen.insert(wire_name, ()).is_some()
        {
            cx.error_at(
                *name_span,
                format!("two arguments are named `{wire_name}`: give one another name with `#[tool(rename = \"...\")]`"),
            );
        }
    }
}
