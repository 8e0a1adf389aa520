//! Parses `#[tool(...)]`, `#[resource(...)]` and `#[prompt(...)]` (on the function and on its
//! parameters) into spanned values.
//! Parsing never emits tokens; a bad argument is recorded and skipped so parsing goes on.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, ExprArray, ExprLit, Lit, LitBool, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::kind::Kind;
use crate::symbol::*;

/// One argument's value; a second occurrence is an error at the second one.
pub struct Attr<T> {
    name: &'static str,
    value: Option<(Span, T)>,
}

impl<T> Attr<T> {
    pub fn none(name: &'static str) -> Self {
        Attr { name, value: None }
    }
    pub fn set(&mut self, cx: &Ctxt, span: Span, value: T) {
        if self.value.is_some() {
            cx.error_at(span, format!("duplicate `{}` argument: remove one of them", self.name));
        } else {
            self.value = Some((span, value));
        }
    }
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(_, v)| v)
    }
    pub fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(s, _)| *s)
    }
}

/// `annotations(...)`.
pub struct Annotations {
    pub read_only: Attr<bool>,
    pub destructive: Attr<bool>,
    pub idempotent: Attr<bool>,
    pub open_world: Attr<bool>,
    pub title: Attr<LitStr>,
}

/// `widget = "name"` or `widget(...)`: parsed now so the grammar is stable.
pub struct Widget {
    /// The view's name: `ui://widget/{name}.html`.
    pub name: Option<LitStr>,
    /// The HTML file, relative to the crate root (default `widgets/{name}.html`).
    pub html: Option<LitStr>,
    pub invoking: Option<LitStr>,
    pub invoked: Option<LitStr>,
    pub accessible: Option<bool>,
    pub visibility: Vec<LitStr>,
    pub connect: Vec<LitStr>,
    pub resources: Vec<LitStr>,
    pub prefers_border: Option<bool>,
}

/// Everything `#[tool(...)]` on the function says.
pub struct ToolAttr {
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub description: Attr<LitStr>,
    pub summary: Attr<LitStr>,
    pub tags: Attr<Vec<LitStr>>,
    pub annotations: Option<Annotations>,
    pub meta: Attr<Expr>,
    pub icons: Attr<Vec<LitStr>>,
    pub krate: Attr<syn::Path>,
    pub widget: Attr<Widget>,
    /// `defer = false` keeps the tool listed when the server defers its catalog.
    pub defer: Attr<bool>,
    /// `task = "optional" | "required"`: the tool may (must) run as a task.
    pub task: Attr<LitStr>,
    /// `timeout = "30s"`: how long a call may run, checked and converted here.
    pub timeout: Attr<std::time::Duration>,
    /// `scopes = ["..."]`: the OAuth scopes a caller needs.
    pub scopes: Attr<Vec<LitStr>>,
}

pub fn parse_tool_attr(cx: &Ctxt, args: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr {
        name: Attr::none(NAME),
        title: Attr::none(TITLE),
        description: Attr::none(DESCRIPTION),
        summary: Attr::none(SUMMARY),
        tags: Attr::none(TAGS),
        annotations: None,
        meta: Attr::none(META),
        icons: Attr::none(ICONS),
        krate: Attr::none(CRATE),
        widget: Attr::none(WIDGET),
        defer: Attr::none(DEFER),
        task: Attr::none(TASK),
        timeout: Attr::none(TIMEOUT),
        scopes: Attr::none(SCOPES),
    };
    parse_args(cx, args, |meta, key| {
        let span = span_of(meta);
        match key {
            NAME => set_str(cx, meta, &mut attr.name),
            TITLE => set_str(cx, meta, &mut attr.title),
            DESCRIPTION => set_str(cx, meta, &mut attr.description),
            SUMMARY => set_str(cx, meta, &mut attr.summary),
            TAGS => {
                if let Some(v) = str_list(cx, meta, TAGS) {
                    attr.tags.set(cx, span, v);
                }
            }
            ICONS => {
                if let Some(v) = str_list(cx, meta, ICONS) {
                    attr.icons.set(cx, span, v);
                }
            }
            META => {
                let form = "`meta = <expression>` (e.g. `meta = serde_json::json!({...})`)";
                if let Some(e) = value_expr(cx, meta, form) {
                    attr.meta.set(cx, span, e);
                }
            }
            CRATE => set_crate(cx, meta, &mut attr.krate),
            ANNOTATIONS => {
                if attr.annotations.is_some() {
                    cx.error_at(
                        span,
                        "duplicate `annotations` argument: put all hints in one `annotations(...)`",
                    );
                }
                let parsed = parse_annotations(cx, meta);
                if attr.annotations.is_none() {
                    attr.annotations = parsed;
                }
            }
            WIDGET => {
                if let Some(w) = parse_widget(cx, meta) {
                    attr.widget.set(cx, span, w);
                }
            }
            DEFER => {
                if let Some(v) = flag(cx, meta, DEFER) {
                    attr.defer.set(cx, span, v);
                }
            }
            TASK => {
                if let Some(v) = str_value(cx, meta, TASK) {
                    if TASK_VALUES.contains(&v.value().as_str()) {
                        attr.task.set(cx, span, v);
                    } else {
                        let hint = closest(&v.value(), TASK_VALUES)
                            .map(|c| format!(" (did you mean `\"{c}\"`?)"))
                            .unwrap_or_default();
                        cx.error_spanned_by(
                            &v,
                            format!("`task` takes \"optional\" or \"required\"{hint}: whether the tool may, or must, run as a task"),
                        );
                    }
                }
            }
            SCOPES => set_scopes(cx, meta, &mut attr.scopes),
            TIMEOUT => {
                if let Some(v) = str_value(cx, meta, TIMEOUT) {
                    match humantime::parse_duration(&v.value()) {
                        Ok(d) if d.as_millis() > 0 => attr.timeout.set(cx, span, d),
                        Ok(_) => cx.error_spanned_by(&v, "`timeout` must be at least 1ms"),
                        Err(e) => cx.error_spanned_by(
                            &v,
                            format!("`timeout` takes a duration such as \"30s\", \"500ms\" or \"2m\": {e}"),
                        ),
                    }
                }
            }
            other => match annotation_named(other) {
                // A hint written where the tool's arguments go.
                Some(hint) => {
                    cx.error_spanned_by(
                        &meta.path,
                        format!("`{other}` is an annotation: write it inside `annotations(...)`, as in `#[tool(annotations({hint}))]`"),
                    );
                    skip_value(meta);
                }
                None => unknown(cx, meta, "`#[tool]` argument", TOOL_ARGS),
            },
        }
    });
    attr
}

/// Everything `#[resource(...)]` on the function says.
pub struct ResourceAttr {
    pub uri: Attr<LitStr>,
    /// `uri` was written, even if its value was not a string (which is reported on its own).
    pub uri_written: bool,
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub description: Attr<LitStr>,
    pub mime_type: Attr<LitStr>,
    pub scopes: Attr<Vec<LitStr>>,
    pub krate: Attr<syn::Path>,
}

pub fn parse_resource_attr(cx: &Ctxt, args: TokenStream) -> ResourceAttr {
    let mut attr = ResourceAttr {
        uri: Attr::none(URI),
        uri_written: false,
        name: Attr::none(NAME),
        title: Attr::none(TITLE),
        description: Attr::none(DESCRIPTION),
        mime_type: Attr::none(MIME_TYPE),
        scopes: Attr::none(SCOPES),
        krate: Attr::none(CRATE),
    };
    parse_args(cx, args, |meta, key| match key {
        URI => {
            attr.uri_written = true;
            set_str(cx, meta, &mut attr.uri);
        }
        NAME => set_str(cx, meta, &mut attr.name),
        TITLE => set_str(cx, meta, &mut attr.title),
        DESCRIPTION => set_str(cx, meta, &mut attr.description),
        MIME_TYPE => set_str(cx, meta, &mut attr.mime_type),
        SCOPES => set_scopes(cx, meta, &mut attr.scopes),
        CRATE => set_crate(cx, meta, &mut attr.krate),
        _ => unknown(cx, meta, "`#[resource]` argument", RESOURCE_ARGS),
    });
    attr
}

/// Everything `#[prompt(...)]` on the function says.
pub struct PromptAttr {
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub description: Attr<LitStr>,
    pub scopes: Attr<Vec<LitStr>>,
    pub krate: Attr<syn::Path>,
}

pub fn parse_prompt_attr(cx: &Ctxt, args: TokenStream) -> PromptAttr {
    let mut attr = PromptAttr {
        name: Attr::none(NAME),
        title: Attr::none(TITLE),
        description: Attr::none(DESCRIPTION),
        scopes: Attr::none(SCOPES),
        krate: Attr::none(CRATE),
    };
    parse_args(cx, args, |meta, key| match key {
        NAME => set_str(cx, meta, &mut attr.name),
        TITLE => set_str(cx, meta, &mut attr.title),
        DESCRIPTION => set_str(cx, meta, &mut attr.description),
        SCOPES => set_scopes(cx, meta, &mut attr.scopes),
        CRATE => set_crate(cx, meta, &mut attr.krate),
        _ => unknown(cx, meta, "`#[prompt]` argument", PROMPT_ARGS),
    });
    attr
}

/// Runs `each` on every `key = value` / `key(...)` / `key` of an attribute's arguments. A
/// malformed list is recorded; `each` records its own errors and skips bad values.
fn parse_args(cx: &Ctxt, args: TokenStream, mut each: impl FnMut(&ParseNestedMeta<'_>, &str)) {
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        each(&meta, &key);
        Ok(())
    });
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
}

/// `crate = "path::to::mcp_tools"`.
fn set_crate(cx: &Ctxt, meta: &ParseNestedMeta<'_>, attr: &mut Attr<syn::Path>) {
    let span = span_of(meta);
    if let Some(s) = str_value(cx, meta, CRATE) {
        match s.parse::<syn::Path>() {
            Ok(path) => attr.set(cx, span, path),
            Err(_) => {
                cx.error_spanned_by(&s, "`crate` must be a path, e.g. `crate = \"my_crate::mcp_tools\"`")
            }
        }
    }
}

/// `#[tool(default = expr, rename = "...")]` on a parameter (`#[resource(rename = "...")]`,
/// `#[prompt(rename = "...")]`: `default` is the tool's only).
pub struct ParamAttr {
    pub default: Attr<Expr>,
    pub rename: Attr<LitStr>,
}

pub fn parse_param_attr(cx: &Ctxt, kind: Kind, attr: &syn::Attribute, into: &mut ParamAttr) {
    let result = attr.parse_nested_meta(|meta| {
        let span = span_of(&meta);
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match key.as_str() {
            DEFAULT if kind == Kind::Tool => {
                let form = "`default = <expression>` (e.g. `default = 10` or `default = Default::default()`)";
                if let Some(e) = value_expr(cx, &meta, form) {
                    into.default.set(cx, span, e);
                }
            }
            RENAME => set_str(cx, &meta, &mut into.rename),
            DESCRIPTION => {
                cx.error_spanned_by(
                    &meta.path,
                    "an argument's description is its doc comment: write `/// ...` above the parameter",
                );
                skip_value(&meta);
            }
            _ => unknown(cx, &meta, &format!("`{}` parameter argument", kind.attr()), kind.param_args()),
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
}

fn span_of(meta: &ParseNestedMeta<'_>) -> Span {
    meta.path.segments.first().map_or_else(Span::call_site, |s| s.ident.span())
}

/// Records an unknown argument and skips its value.
fn unknown(cx: &Ctxt, meta: &ParseNestedMeta<'_>, what: &str, expected: &[&str]) {
    let name = quote::ToTokens::to_token_stream(&meta.path).to_string().replace(' ', "");
    let hint = closest(&name, expected).map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default();
    cx.error_spanned_by(&meta.path, format!("unknown {what} `{name}`{hint}; expected {}", one_of(expected)));
    skip_value(meta);
}

fn skip_value(meta: &ParseNestedMeta<'_>) {
    if meta.input.peek(Token![=]) {
        let _ = meta.value().and_then(|v| v.parse::<Expr>());
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|inner| {
            skip_value(&inner);
            Ok(())
        });
    }
}

/// The hint `name` spells some other way: the MCP wire name (`readOnlyHint`), snake case with
/// the suffix (`idempotent_hint`), camel case (`openWorld`).
fn annotation_named(name: &str) -> Option<&'static str> {
    let plain: String = name.chars().filter(|c| *c != '_').collect::<String>().to_ascii_lowercase();
    let plain = plain.strip_suffix("hint").unwrap_or(&plain);
    match plain {
        "readonly" => Some(READ_ONLY),
        "destructive" => Some(DESTRUCTIVE),
        "idempotent" => Some(IDEMPOTENT),
        "openworld" => Some(OPEN_WORLD),
        _ => None,
    }
}

/// A hint's name in the protocol (`readOnlyHint`).
fn wire_name(hint: &str) -> String {
    let mut out = String::new();
    for (i, part) in hint.split('_').enumerate() {
        let mut chars = part.chars();
        match (i, chars.next()) {
            (0, Some(c)) => out.push(c),
            (_, Some(c)) => out.push(c.to_ascii_uppercase()),
            _ => {}
        }
        out.extend(chars);
    }
    out + "Hint"
}

/// The known name nearest to a typo, if it is close: one the typo starts (`mime` for
/// `mime_type`), else the nearest by edit distance.
pub fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let prefix = candidates.iter().find(|c| name.len() >= 3 && c.starts_with(name));
    prefix.copied().or_else(|| {
        candidates
            .iter()
            .map(|c| (edit_distance(name, c), *c))
            .filter(|(d, c)| *d <= 2.max(c.len() / 3))
            .min()
            .map(|(_, c)| c)
    })
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

fn value_expr(cx: &Ctxt, meta: &ParseNestedMeta<'_>, form: &str) -> Option<Expr> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(&meta.path, format!("expected {form}"));
        skip_value(meta);
        return None;
    }
    match meta.value().and_then(|v| v.parse::<Expr>()) {
        Ok(e) => Some(e),
        Err(e) => {
            cx.syn_error(e);
            None
        }
    }
}

fn str_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> Option<LitStr> {
    let expr = value_expr(cx, meta, &format!("`{key} = \"...\"`"))?;
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s),
        other => {
            cx.error_spanned_by(&other, format!("`{key}` takes a string literal: `{key} = \"...\"`"));
            None
        }
    }
}

fn set_str(cx: &Ctxt, meta: &ParseNestedMeta<'_>, attr: &mut Attr<LitStr>) {
    let span = span_of(meta);
    if let Some(s) = str_value(cx, meta, attr.name) {
        attr.set(cx, span, s);
    }
}

/// `scopes = ["a", "b:c"]`: each an OAuth scope token (RFC 6749 §3.3: printable ASCII other
/// than space, `"` and `\`), at least one.
fn set_scopes(cx: &Ctxt, meta: &ParseNestedMeta<'_>, attr: &mut Attr<Vec<LitStr>>) {
    let span = span_of(meta);
    let Some(scopes) = str_list(cx, meta, SCOPES) else { return };
    let mut valid = true;
    for scope in &scopes {
        let value = scope.value();
        let token = |c: char| c.is_ascii_graphic() && c != '"' && c != '\\';
        if value.is_empty() || !value.chars().all(token) {
            cx.error_spanned_by(
                scope,
                format!("{value:?} is not an OAuth scope: use printable ASCII without spaces, `\"` or `\\` (e.g. \"notes:write\")"),
            );
            valid = false;
        }
    }
    if scopes.is_empty() {
        cx.error_at(
            span,
            "`scopes` lists at least one scope: `scopes = [\"notes:write\"]`; leave it out for none",
        );
    } else if valid {
        attr.set(cx, span, scopes);
    }
}

fn str_list(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> Option<Vec<LitStr>> {
    let form = format!("`{key} = [\"...\", ...]`");
    let expr = value_expr(cx, meta, &form)?;
    let Expr::Array(ExprArray { elems, .. }) = expr else {
        cx.error_spanned_by(&expr, format!("`{key}` takes a list of string literals: {form}"));
        return None;
    };
    let mut out = Vec::new();
    for e in elems {
        match e {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => out.push(s),
            other => cx.error_spanned_by(&other, format!("`{key}` takes string literals only")),
        }
    }
    Some(out)
}

/// `flag` alone means true; `flag = bool` is explicit.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> Option<bool> {
    if !meta.input.peek(Token![=]) {
        return Some(true);
    }
    match meta.value().and_then(|v| v.parse::<Expr>()) {
        Ok(Expr::Lit(ExprLit { lit: Lit::Bool(LitBool { value, .. }), .. })) => Some(value),
        Ok(other) => {
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes `true` or `false` (or nothing, meaning true)"),
            );
            None
        }
        Err(e) => {
            cx.syn_error(e);
            None
        }
    }
}

fn parse_annotations(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> Option<Annotations> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, "expected `annotations(read_only, destructive = false, idempotent, open_world = false, title = \"...\")`");
        skip_value(meta);
        return None;
    }
    let mut a = Annotations {
        read_only: Attr::none(READ_ONLY),
        destructive: Attr::none(DESTRUCTIVE),
        idempotent: Attr::none(IDEMPOTENT),
        open_world: Attr::none(OPEN_WORLD),
        title: Attr::none(TITLE),
    };
    let result = meta.parse_nested_meta(|inner| {
        let span = span_of(&inner);
        let key = inner.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        let slot = match key.as_str() {
            READ_ONLY => &mut a.read_only,
            DESTRUCTIVE => &mut a.destructive,
            IDEMPOTENT => &mut a.idempotent,
            OPEN_WORLD => &mut a.open_world,
            TITLE => {
                set_str(cx, &inner, &mut a.title);
                return Ok(());
            }
            other => {
                match annotation_named(other) {
                    // The wire name (`readOnlyHint`) or another spelling of a hint.
                    Some(hint) => {
                        cx.error_spanned_by(
                            &inner.path,
                            format!(
                                "unknown annotation `{other}` (did you mean `{hint}`? MCP's wire name `{}` is written `{hint}` here); expected {}",
                                wire_name(hint),
                                one_of(ANNOTATION_ARGS)
                            ),
                        );
                        skip_value(&inner);
                    }
                    None => unknown(cx, &inner, "annotation", ANNOTATION_ARGS),
                }
                return Ok(());
            }
        };
        if let Some(v) = flag(cx, &inner, &key) {
            slot.set(cx, span, v);
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
    Some(a)
}

fn parse_widget(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> Option<Widget> {
    let mut widget = Widget {
        name: None,
        html: None,
        invoking: None,
        invoked: None,
        accessible: None,
        visibility: Vec::new(),
        connect: Vec::new(),
        resources: Vec::new(),
        prefers_border: None,
    };
    if meta.input.peek(Token![=]) {
        widget.name = Some(str_value(cx, meta, WIDGET)?);
        return Some(widget);
    }
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            "expected `widget = \"name\"` or `widget(name = \"...\", html = \"...\", ...)`",
        );
        return None;
    }
    let mut seen: Vec<String> = Vec::new();
    let result = meta.parse_nested_meta(|inner| {
        let key = inner.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if seen.contains(&key) {
            cx.error_spanned_by(&inner.path, format!("duplicate `{key}` argument: remove one of them"));
        }
        seen.push(key.clone());
        match key.as_str() {
            NAME => widget.name = str_value(cx, &inner, &key),
            HTML => widget.html = str_value(cx, &inner, &key),
            INVOKING | INVOKED => {
                let text = str_value(cx, &inner, &key);
                if let Some(t) = &text
                    && t.value().chars().count() > 64
                {
                    cx.error_spanned_by(
                        t,
                        format!("`{key}` is shown as a status line: at most 64 characters"),
                    );
                }
                if key == INVOKING {
                    widget.invoking = text;
                } else {
                    widget.invoked = text;
                }
            }
            ACCESSIBLE => widget.accessible = flag(cx, &inner, &key),
            PREFERS_BORDER => widget.prefers_border = flag(cx, &inner, &key),
            VISIBILITY => {
                for v in str_list(cx, &inner, VISIBILITY).unwrap_or_default() {
                    if v.value() != "model" && v.value() != "app" {
                        cx.error_spanned_by(&v, "`visibility` entries are \"model\" or \"app\"");
                    }
                    widget.visibility.push(v);
                }
            }
            CSP => {
                let r = inner.parse_nested_meta(|c| {
                    let k = c.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                    if k == CONNECT {
                        widget.connect.extend(str_list(cx, &c, &k).unwrap_or_default());
                    } else if k == RESOURCES {
                        widget.resources.extend(str_list(cx, &c, &k).unwrap_or_default());
                    } else {
                        unknown(cx, &c, "`csp(...)` argument", CSP_ARGS);
                    }
                    Ok(())
                });
                if let Err(e) = r {
                    cx.syn_error(e);
                }
            }
            _ => unknown(cx, &inner, "`widget(...)` argument", WIDGET_ARGS),
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
    if !seen.iter().any(|k| k == NAME) {
        cx.error_spanned_by(&meta.path, "`widget(...)` needs `name = \"...\"`");
    }
    Some(widget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_argument() {
        assert_eq!(closest("nme", TOOL_ARGS), Some("name"));
        assert_eq!(closest("anotations", TOOL_ARGS), Some("annotations"));
        assert_eq!(closest("zzzzzz", TOOL_ARGS), None);
        assert_eq!(closest("mime", RESOURCE_ARGS), Some("mime_type"));
    }
}
