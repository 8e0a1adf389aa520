//! The runtime's layering, checked on its source files (see ARCHITECTURE.md): every file imports
//! only its own layer or lower, naming the module that defines an item (never a crate-root
//! re-export), the files import each other without cycles, and only the files beside the path
//! (deferred mode itself, the server facade, transports, the test client and the command line)
//! know deferred mode.
//!
//! An import is any path in code (not comments or strings) that starts with `crate::`, `super::`
//! or `self::`, every path of a `use` tree, and, in a file that declares child modules, a path
//! starting with a child's name. `mod` declarations are structure, not imports. Inline
//! `#[cfg(test)] mod tests { … }` blocks and `tests.rs` files are test code and not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first, by top-level module; the crate root's files (`lib.rs`, `docs.rs`)
/// sit above them all.
const LAYERS: &[(&str, u8)] = &[
    ("protocol", 0),
    ("fetch_error", 0),
    ("context", 1),
    ("model", 2),
    ("__private", 3),
    ("registry", 4),
    ("dispatch", 5),
    ("deferred", 6),
    ("middleware", 6),
    ("auth", 6),
    ("openapi", 6),
    ("client", 6),
    ("compose", 6),
    ("transform", 6),
    ("skills", 6),
    ("store", 6),
    ("server", 7),
    ("transport", 8),
    ("testing", 9),
    ("cli", 9),
    ("dev", 9),
    ("docs", 10),
    ("guide", 10),
];
const ROOT_LAYER: u8 = 10;

/// Top-level modules that may import `deferred`, besides `deferred` itself and the root.
const MAY_IMPORT_DEFERRED: &[&str] = &["server", "transport", "cli", "testing"];

#[test]
fn the_runtime_keeps_its_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &src, &mut files);
    assert!(files.len() > 20, "found only {} source files under {}", files.len(), src.display());
    let problems = check(&files);
    assert!(problems.is_empty(), "the layering is broken:\n  {}", problems.join("\n  "));
}

#[test]
fn an_import_of_a_higher_layer_is_reported() {
    let problems = check(&tree(&[
        ("lib.rs", "mod protocol; mod dispatch;"),
        ("protocol/mod.rs", "use crate::dispatch::session::Session;"),
        ("dispatch/mod.rs", "pub(crate) mod session;"),
        ("dispatch/session.rs", "pub struct Session;"),
    ]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("protocol/mod.rs (layer 0) imports dispatch/session.rs (layer 5)"),
        "{problems:?}"
    );
}

#[test]
fn an_import_through_the_crate_root_is_reported() {
    let problems = check(&tree(&[
        ("lib.rs", "mod protocol; mod model; pub use protocol::RequestId;"),
        ("protocol/mod.rs", "pub struct RequestId;"),
        ("model/mod.rs", "fn f(_: crate::RequestId) {}"),
    ]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("model/mod.rs imports `crate::RequestId` through the crate root"),
        "{problems:?}"
    );
}

#[test]
fn an_import_cycle_is_reported() {
    let problems = check(&tree(&[
        ("lib.rs", "mod model;"),
        ("model/mod.rs", "mod a; mod b;"),
        ("model/a.rs", "use super::b::B; pub struct A;"),
        ("model/b.rs", "pub struct B(crate::model::a::A);"),
    ]));
    assert_eq!(problems, ["import cycle: model/a.rs → model/b.rs → model/a.rs"]);
}

#[test]
fn deferred_mode_in_the_core_is_reported_and_comments_are_not_imports() {
    let problems = check(&tree(&[
        ("lib.rs", "mod registry; pub mod deferred; mod dispatch;"),
        ("registry/mod.rs", "// use crate::deferred::Plan;\nconst S: &str = \"crate::deferred\";"),
        ("dispatch/mod.rs", "fn f() { let _ = crate::deferred::plan(); }"),
        ("deferred/mod.rs", "pub fn plan() {}"),
    ]));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|p| p.starts_with("dispatch/mod.rs")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("knows deferred mode")), "{problems:?}");
}

fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files.iter().map(|(p, s)| ((*p).to_owned(), (*s).to_owned())).collect()
}

/// Every `.rs` file under `dir`, as (path relative to `src`, contents).
fn collect(src: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).expect("under src").to_string_lossy().replace('\\', "/");
            out.push((relative, std::fs::read_to_string(&path).expect("readable source file")));
        }
    }
}

/// Every broken rule, one sentence each.
fn check(files: &[(String, String)]) -> Vec<String> {
    let files: Vec<&(String, String)> =
        files.iter().filter(|(path, _)| !path.ends_with("tests.rs")).collect();
    let lib = files.iter().find(|(p, _)| p == "lib.rs").map(|(_, s)| s.as_str()).unwrap_or_default();
    let renamed = path_attributes(lib);
    // The module each file defines, and the reverse.
    let modules: BTreeMap<&str, Vec<String>> =
        files.iter().map(|(path, _)| (path.as_str(), module_of(path, &renamed))).collect();
    let by_module: BTreeMap<&Vec<String>, &str> = modules.iter().map(|(f, m)| (m, *f)).collect();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (path, source) in &files {
        let module = &modules[path.as_str()];
        let layer = layer_of(module);
        if layer.is_none() {
            problems
                .push(format!("{path}: top-level module `{}` has no layer in tests/layers.rs", module[0]));
        }
        let layer = layer.unwrap_or(ROOT_LAYER);
        for (written, target) in imports(&code_of(source), module) {
            // The longest prefix of the path that is a module with a file.
            let Some(file) = (0..=target.len()).rev().find_map(|n| by_module.get(&target[..n].to_vec()))
            else {
                continue;
            };
            if *file == path.as_str() {
                continue;
            }
            let target_module = &modules[file];
            let target_layer = layer_of(target_module).unwrap_or(ROOT_LAYER);
            if target_module.is_empty() {
                problems.push(format!(
                    "{path} imports `{written}` through the crate root; name the module that defines it"
                ));
            } else if target_layer > layer {
                problems.push(format!(
                    "{path} (layer {layer}) imports {file} (layer {target_layer}) with `{written}`"
                ));
            }
            let top = module.first().map(String::as_str).unwrap_or_default();
            let knows_deferred = target_module.first().is_some_and(|t| t == "deferred");
            if knows_deferred
                && !module.is_empty()
                && top != "deferred"
                && !MAY_IMPORT_DEFERRED.contains(&top)
            {
                problems.push(format!("{path} knows deferred mode (`{written}`); only deferred/, server.rs, transport/, cli.rs, testing.rs and lib.rs may"));
            }
            edges.entry(path.as_str()).or_default().insert(file);
        }
    }
    problems.extend(cycles(&edges).into_iter().map(|cycle| format!("import cycle: {}", cycle.join(" → "))));
    problems
}

fn layer_of(module: &[String]) -> Option<u8> {
    match module.first() {
        None => Some(ROOT_LAYER),
        Some(top) => LAYERS.iter().find(|(name, _)| name == top).map(|(_, layer)| *layer),
    }
}

/// `#[path = "file.rs"] mod name;` in the crate root: file name → module name.
fn path_attributes(lib: &str) -> BTreeMap<String, String> {
    let mut renamed = BTreeMap::new();
    let mut rest = lib;
    while let Some(at) = rest.find("#[path = \"") {
        rest = &rest[at + 10..];
        let file = rest[..rest.find('"').unwrap_or(0)].to_owned();
        let after = &rest[rest.find("mod ").map_or(rest.len(), |i| i + 4)..];
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        renamed.insert(file, name);
    }
    renamed
}

/// `a/b.rs` → [a, b]; `a/mod.rs` → [a]; `lib.rs` → [].
fn module_of(path: &str, renamed: &BTreeMap<String, String>) -> Vec<String> {
    let mut parts: Vec<String> = path.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if parts.len() == 1
        && let Some(name) = renamed.get(path)
    {
        return vec![name.clone()];
    }
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The source without comments, string and character literals, and inline test modules.
fn code_of(source: &str) -> String {
    let source = match source.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &source[..at],
        None => source,
    };
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !is_ident(chars.get(i.wrapping_sub(1)))
        {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len()
                && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|&h| h == '#'))
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Every import of `code` (a file of module `module`): the path as written, and as an absolute
/// module path.
fn imports(code: &str, module: &[String]) -> Vec<(String, Vec<String>)> {
    let children: BTreeSet<String> = words_after(code, "mod ").into_iter().collect();
    let mut paths = Vec::new();
    // `use` trees, expanded.
    let mut rest = code;
    while let Some(at) = find_word(rest, "use ") {
        let tree = &rest[at + 4..];
        let end = tree.find(';').unwrap_or(tree.len());
        expand(tree[..end].trim(), String::new(), &mut paths);
        rest = &tree[end..];
    }
    // Paths elsewhere in the code.
    let tokens: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).collect();
    for token in tokens {
        let first = token.split("::").next().unwrap_or_default();
        if token.contains("::") && (["crate", "super", "self"].contains(&first) || children.contains(first)) {
            paths.push(token.trim_end_matches(':').to_owned());
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|written| {
            let mut segments: Vec<&str> = written.split("::").filter(|s| !s.is_empty()).collect();
            let mut absolute: Vec<String> = match segments.first().copied() {
                Some("crate") => {
                    segments.remove(0);
                    Vec::new()
                }
                Some("super") => {
                    let mut base = module.to_vec();
                    while segments.first() == Some(&"super") {
                        segments.remove(0);
                        base.pop();
                    }
                    base
                }
                Some("self") => {
                    segments.remove(0);
                    module.to_vec()
                }
                Some(first) if children.contains(first) => module.to_vec(),
                _ => return None,
            };
            absolute.extend(segments.iter().map(|s| (*s).to_owned()));
            Some((written, absolute))
        })
        .collect()
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (`self` inside braces names the prefix).
fn expand(tree: &str, prefix: String, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default().trim();
        let path =
            if path == "self" { prefix.trim_end_matches("::").to_owned() } else { format!("{prefix}{path}") };
        if !path.is_empty() && !path.ends_with('*') {
            out.push(path);
        } else if path.ends_with('*') {
            out.push(path.trim_end_matches("::*").to_owned());
        }
        return;
    };
    let inner_prefix = format!("{prefix}{}", &tree[..open]);
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand(&body[start..i], inner_prefix.clone(), out);
                start = i + 1;
            }
            _ => {}
        }
    }
    expand(&body[start..], inner_prefix, out);
}

/// Where `word` starts in `text` as a whole word.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let at = from + at;
        if !is_ident(text[..at].chars().last().as_ref()) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The identifiers right after each whole-word `keyword` (e.g. the names of `mod` items).
fn words_after(text: &str, keyword: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = text;
    while let Some(at) = find_word(rest, keyword) {
        rest = &rest[at + keyword.len()..];
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// The import cycles of the graph, each as a closed path of files.
fn cycles<'a>(edges: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut found: Vec<Vec<&str>> = Vec::new();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    for &start in edges.keys() {
        let mut stack: Vec<&str> = Vec::new();
        visit(start, edges, &mut stack, &mut done, &mut found);
    }
    found
}

fn visit<'a>(
    node: &'a str,
    edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    stack: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
    found: &mut Vec<Vec<&'a str>>,
) {
    if let Some(at) = stack.iter().position(|&n| n == node) {
        let mut cycle = stack[at..].to_vec();
        cycle.push(node);
        found.push(cycle);
        return;
    }
    if done.contains(node) {
        return;
    }
    stack.push(node);
    for &next in edges.get(node).into_iter().flatten() {
        visit(next, edges, stack, done, found);
    }
    stack.pop();
    done.insert(node);
}
