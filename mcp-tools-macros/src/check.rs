//! The rules a `#[tool]`, `#[resource]` or `#[prompt]` must satisfy, each reported at the
//! offending token with the fix.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::{ItemFn, LitStr, ReturnType};

use crate::attr::{Attr, PromptAttr, ResourceAttr, ToolAttr, closest};
use crate::ctxt::Ctxt;
use crate::docs;
use crate::kind::Kind;
use crate::signature::{ParamKind, Signature};

/// Checks the function item itself (what kind of function it is).
pub fn function(cx: &Ctxt, kind: Kind, item: &ItemFn) {
    let sig = &item.sig;
    let attr = kind.attr();
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            format!("{attr} functions cannot be generic: {}", kind.why_concrete()),
        );
    }
    if let Some(t) = &sig.unsafety {
        cx.error_spanned_by(
            t,
            format!(
                "{attr} functions cannot be `unsafe`: remove it and use an `unsafe {{ ... }}` block inside"
            ),
        );
    }
    if let Some(t) = &sig.constness {
        cx.error_spanned_by(t, format!("{attr} functions cannot be `const`: remove it"));
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, format!("{attr} functions cannot be `extern`: remove the ABI"));
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, format!("{attr} functions cannot be variadic"));
    }
}

/// The description: `description = "..."`, else the doc comment. `None` when there is neither,
/// which is an error for the kinds that clients require a description of (tools and prompts).
pub fn description(cx: &Ctxt, kind: Kind, set: &Attr<LitStr>, item: &ItemFn) -> Option<TokenStream> {
    let description = match set.get() {
        Some(lit) => Some(quote!(#lit)),
        None => docs::description(&docs::doc_exprs(&item.attrs)),
    };
    if description.is_none() && kind != Kind::Resource {
        let name = kind.name();
        let message = if item.attrs.iter().any(|a| a.path().is_ident("doc")) {
            format!(
                "the doc comment is blank, and a {name} needs a description, which clients require: say {} in it or in `#[{name}(description = \"...\")]`",
                kind.purpose()
            )
        } else {
            format!(
                "a {name} needs a description, which clients require: add a doc comment (`/// What it does.`) or `#[{name}(description = \"...\")]`"
            )
        };
        cx.error_spanned_by(&item.sig.ident, message);
    }
    description
}

/// `description = ""` and `title = ""` say nothing: an error, with what to write instead.
fn not_blank(cx: &Ctxt, kind: Kind, description: &Attr<LitStr>, title: &Attr<LitStr>) {
    let texts = [
        (
            description.get(),
            format!(
                "`description` cannot be empty: say {}, or remove it to use the doc comment",
                kind.purpose()
            ),
        ),
        (title.get(), "`title` cannot be empty: write a display title or remove it".to_owned()),
    ];
    for (lit, message) in texts {
        if let Some(lit) = lit
            && lit.value().trim().is_empty()
        {
            cx.error_spanned_by(lit, message);
        }
    }
}

/// The name of a resource or prompt: `name = "..."`, else the function's name. Not empty.
pub fn name(cx: &Ctxt, set: &Attr<LitStr>, item: &ItemFn) -> String {
    match set.get() {
        Some(lit) if lit.value().trim().is_empty() => {
            cx.error_spanned_by(
                lit,
                "`name` cannot be empty: write a name or remove it to use the function's name",
            );
            lit.value()
        }
        Some(lit) => lit.value(),
        None => item.sig.ident.unraw().to_string(),
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
    not_blank(cx, Kind::Tool, &attr.description, &attr.title);
    if let Some(s) = attr.summary.get()
        && s.value().trim().is_empty()
    {
        cx.error_spanned_by(
            s,
            "`summary` cannot be empty: write one line or remove it to use the description's first line",
        );
    }
    if let Some(s) = attr.summary.get()
        && s.value().contains('\n')
    {
        cx.error_spanned_by(s, "`summary` is one line; put longer text in the description");
    }
    if let Some(widget) = attr.widget.get() {
        check_widget(cx, widget);
    }
}

/// The HTML file of a widget, relative to the crate root: `html`, or `widgets/{name}.html`.
pub fn widget_html_path(widget: &crate::attr::Widget) -> Option<String> {
    match (&widget.html, &widget.name) {
        (Some(html), _) => Some(html.value()),
        (None, Some(name)) => Some(format!("widgets/{}.html", name.value())),
        (None, None) => None,
    }
}

fn check_widget(cx: &Ctxt, widget: &crate::attr::Widget) {
    if let Some(name) = &widget.name {
        let value = name.value();
        if value.is_empty()
            || !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            cx.error_spanned_by(
                name,
                format!("widget name {value:?} becomes the URI `ui://widget/{value}.html`: use letters, digits, `-`, `_` and `.` only"),
            );
            return;
        }
    }
    let (Some(path), Some(at)) = (widget_html_path(widget), widget.html.as_ref().or(widget.name.as_ref()))
    else {
        return;
    };
    // Paths are relative to the crate being compiled, as `include_str!` with
    // `CARGO_MANIFEST_DIR` resolves them in the expansion.
    let Ok(root) = std::env::var("CARGO_MANIFEST_DIR") else { return };
    // (`root` is not named in the message: it differs between machines and test runs.)
    let full = std::path::Path::new(&root).join(&path);
    if !full.is_file() {
        let how = if widget.html.is_some() {
            "fix the path".to_owned()
        } else {
            "create it, or name another file with `widget(name = \"...\", html = \"path/to/view.html\")`"
                .to_owned()
        };
        cx.error_spanned_by(
            at,
            format!("the widget's HTML file `{path}` does not exist (paths are relative to the crate root, beside Cargo.toml): {how}"),
        );
    }
}

/// Rules between parameters: at most one `Args<T>`, never with other arguments; distinct names.
pub fn parameters(cx: &Ctxt, kind: Kind, sig: &Signature) {
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
                format!(
                    "two {} are named `{wire_name}`: give one another name with `#[{}(rename = \"...\")]`",
                    kind.parameters(),
                    kind.name()
                ),
            );
        }
    }
}

/// Rules of `#[resource(...)]` on its own: a URI, and no blank texts.
pub fn resource_attribute(cx: &Ctxt, attr: &ResourceAttr) {
    if !attr.uri_written {
        cx.error_at(
            Span::call_site(),
            "#[resource] needs `uri = \"...\"`: the URI clients read it by, e.g. `uri = \"file:///notes.txt\"`, or a template such as `uri = \"notes://{id}\"`",
        );
    }
    not_blank(cx, Kind::Resource, &attr.description, &attr.title);
    if let Some(lit) = attr.mime_type.get() {
        let value = lit.value();
        let parts: Vec<&str> = value.split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.trim().is_empty() || p.contains(char::is_whitespace)) {
            cx.error_spanned_by(
                lit,
                format!("{value:?} is not a MIME type: write `type/subtype`, e.g. \"text/plain\" or \"application/json\""),
            );
        }
    }
}

/// Rules of `#[prompt(...)]` on its own.
pub fn prompt_attribute(cx: &Ctxt, attr: &PromptAttr) {
    not_blank(cx, Kind::Prompt, &attr.description, &attr.title);
}

/// A resource returns contents and a prompt messages: an error when there is no return type.
pub fn returns_something(cx: &Ctxt, kind: Kind, item: &ItemFn) {
    if let ReturnType::Default = item.sig.output {
        let what = match kind {
            Kind::Prompt => {
                "the prompt's messages: add a return type such as `-> String` or `-> Vec<PromptMessage>`"
            }
            _ => {
                "the resource's contents: add a return type such as `-> String` (text) or `-> Vec<u8>` (binary)"
            }
        };
        cx.error_spanned_by(&item.sig.ident, format!("a {} function returns {what}", kind.attr()));
    }
}

/// The variables of a `#[resource]` URI (none for a fixed URI), after checking its form: not
/// empty, a scheme, balanced braces, identifier variables, each once, never two in a row.
/// `None` when the form is wrong: the parameters cannot be matched against it.
pub fn uri_variables(cx: &Ctxt, lit: &LitStr) -> Option<Vec<String>> {
    let uri = lit.value();
    if uri.trim().is_empty() {
        cx.error_spanned_by(
            lit,
            "a resource URI cannot be empty: write one such as \"file:///notes.txt\" or \"notes://{id}\"",
        );
        return None;
    }
    let mut valid = true;
    let mut error = |message: String| {
        cx.error_spanned_by(lit, message);
        valid = false;
    };
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme);
    let valid_scheme = scheme.is_some_and(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if !valid_scheme {
        error(format!(
            "the resource URI {uri:?} has no scheme: start it with one, such as `file:///`, `https://` or `myapp://`"
        ));
    }
    let mut variables: Vec<String> = Vec::new();
    let mut rest = uri.as_str();
    let mut after_variable = false;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            error(format!("unbalanced `}}` in the resource URI {uri:?}: a variable is written `{{name}}`"));
            return None;
        }
        let Some(close) =
            rest[open + 1..].find(['{', '}']).map(|i| open + 1 + i).filter(|&i| rest[i..].starts_with('}'))
        else {
            error(format!(
                "unbalanced `{{` in the resource URI {uri:?}: close each variable with `}}`, as in `{{id}}`"
            ));
            return None;
        };
        let written = &rest[open + 1..close];
        // `{+name}`: RFC 6570 reserved expansion, a value that may span `/`-separated segments.
        let name = written.strip_prefix('+').unwrap_or(written);
        if name.is_empty() {
            error("empty `{}` in the resource URI: name the variable, as in `{id}`".to_owned());
        } else if !is_identifier(name) {
            error(format!(
                "`{{{written}}}` in the resource URI is not a variable name: write `{{name}}` (one path segment) or `{{+name}}` (any number of segments) with letters, digits and `_`; other RFC 6570 operators are not supported"
            ));
        } else if variables.iter().any(|v| v == name) {
            error(format!("the URI variable `{{{name}}}` appears twice: give each variable its own name"));
        } else {
            if let Some(before) = variables.last().filter(|_| after_variable && open == 0) {
                error(format!(
                    "the URI variables `{{{before}}}` and `{{{name}}}` are adjacent, so a URI cannot be split between them: put text between them, e.g. `{{{before}}}/{{{name}}}`"
                ));
            }
            variables.push(name.to_owned());
        }
        after_variable = true;
        rest = &rest[close + 1..];
    }
    valid.then_some(variables)
}

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Each URI variable is one parameter, and each argument parameter is one URI variable.
pub fn resource_parameters(cx: &Ctxt, sig: &Signature, uri: &LitStr, variables: &[String]) {
    let mut received = HashSet::new();
    for p in &sig.params {
        let ParamKind::Arg { wire_name, name_span, .. } = &p.kind else { continue };
        if variables.contains(wire_name) {
            received.insert(wire_name.as_str());
        } else if variables.is_empty() {
            cx.error_at(
                *name_span,
                format!("`{wire_name}` is not a URI variable: a fixed #[resource] (no `{{variables}}` in its URI) takes only `Context` and `State<T>` parameters; remove it, or make the URI a template with `{{{wire_name}}}`"),
            );
        } else {
            let candidates: Vec<&str> = variables.iter().map(String::as_str).collect();
            let hint = closest(wire_name, &candidates)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            cx.error_at(
                *name_span,
                format!(
                    "`{wire_name}` is not a variable of the URI template {:?}{hint}: a #[resource] function takes the template's variables ({}) and `Context`/`State<T>` parameters",
                    uri.value(),
                    one_of_braced(&candidates),
                ),
            );
        }
    }
    for variable in variables.iter().filter(|v| !received.contains(v.as_str())) {
        cx.error_spanned_by(
            uri,
            format!("the URI variable `{{{variable}}}` has no parameter: add `{variable}: String` (or another type implementing `FromStr`) to the function"),
        );
    }
}

/// "`{a}`, `{b}`", for messages.
fn one_of_braced(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{{{n}}}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variables(uri: &str) -> Option<Vec<String>> {
        let cx = Ctxt::new();
        let variables = uri_variables(&cx, &LitStr::new(uri, Span::call_site()));
        let errors = cx.check().err().map_or(0, |e| e.len());
        assert_eq!(errors == 0, variables.is_some(), "{uri}: errors iff no variables");
        variables
    }

    #[test]
    fn uri_variables_are_read_in_order() {
        assert_eq!(variables("file:///notes.txt"), Some(vec![]));
        assert_eq!(variables("db://{table}/rows/{row_id}"), Some(vec!["table".into(), "row_id".into()]));
        assert_eq!(variables("test://template/{id}/data"), Some(vec!["id".into()]));
        assert_eq!(variables("files://{+path}"), Some(vec!["path".into()]));
    }

    #[test]
    fn malformed_uris_are_rejected() {
        for uri in [
            "",
            "notes.txt",
            "://x",
            "9p://x",
            "a://{id",
            "a://id}",
            "a://{}",
            "a://{#p}",
            "a://{+}",
            "a://{x}{y}",
            "a://{x}/{x}",
        ] {
            assert_eq!(variables(uri), None, "{uri}");
        }
    }
}
