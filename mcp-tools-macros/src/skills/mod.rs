//! `skills!("folder")`: embeds a folder of Agent Skills, each `SKILL.md`'s front matter checked
//! now by the runtime's own rules (`format.rs`, the same file as the runtime's).

mod format;

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;

/// How deep folders are followed (a symbolic link to a parent folder would loop forever).
const MAX_DEPTH: usize = 32;

pub fn expand(input: TokenStream) -> TokenStream {
    match embed(input) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

fn embed(input: TokenStream) -> syn::Result<TokenStream> {
    let folder: LitStr = syn::parse2(input).map_err(|e| {
        syn::Error::new(e.span(), "`skills!` takes the path of a folder of skills, relative to the crate's root: `skills!(\"skills\")`")
    })?;
    let span = folder.span();
    let written = folder.value();
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default().join(&written);
    let fail = |message: String| syn::Error::new(span, message);
    if !root.is_dir() {
        return Err(fail(format!(
            "`{written}` is not a folder (the path is relative to the crate's root, {})",
            root.parent().map_or_else(String::new, |p| p.display().to_string())
        )));
    }
    let name = std::fs::canonicalize(&root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut files = Vec::new();
    let mut problems = Vec::new();
    walk(&root, "", 0, &mut files, &mut problems);
    // A folder that is a skill itself is that skill, named by its folder.
    let own = files.iter().any(|(path, _)| path == "SKILL.md");
    let shown = written.trim_end_matches(['/', '\\']);
    let mut skills = 0;
    for (path, absolute) in &files {
        let folder_name = match path.strip_suffix("/SKILL.md") {
            Some(folder) => folder.rsplit('/').next().unwrap_or_default(),
            None if path == "SKILL.md" && own => name.as_str(),
            None => continue,
        };
        skills += 1;
        let file = format!("{shown}/{path}");
        match std::fs::read(absolute).map(String::from_utf8) {
            Ok(Ok(text)) => {
                if let Err(more) = format::front_matter(&text, folder_name) {
                    problems.extend(more.into_iter().map(|problem| format!("{file}: {problem}")));
                }
            }
            Ok(Err(_)) => problems.push(format!("{file}: it is not UTF-8 text")),
            Err(e) => problems.push(format!("{file}: cannot be read: {e}")),
        }
    }
    if skills == 0 && problems.is_empty() {
        problems.push(format!("{shown}: no skill found; a skill is a folder with a SKILL.md"));
    }
    if let Some(first) = problems.first() {
        let mut error = fail(first.clone());
        for problem in &problems[1..] {
            error.combine(fail(problem.clone()));
        }
        return Err(error);
    }
    let entries = files.iter().map(|(path, absolute)| {
        let absolute = absolute.to_string_lossy().into_owned();
        quote! { (#path, ::core::include_bytes!(#absolute)) }
    });
    let written = LitStr::new(&written, Span::call_site());
    Ok(quote! {{
        const FILES: &[(&str, &[u8])] = &[#(#entries),*];
        ::mcp_tools::skills::EmbeddedSkills::new(#written, #name, FILES)
    }})
}

/// The files under `folder` (its path under the root is `prefix`), in name order, as (path with
/// `/`, absolute path); hidden files and folders (a name starting with `.`) are left out, as the
/// runtime leaves them out of a folder it reads.
fn walk(
    folder: &Path,
    prefix: &str,
    depth: usize,
    files: &mut Vec<(String, PathBuf)>,
    problems: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        problems.push(format!(
            "{}: folders nested more than {MAX_DEPTH} deep (a link to a parent folder?)",
            folder.display()
        ));
        return;
    }
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) => return problems.push(format!("{}: cannot be read: {e}", folder.display())),
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            problems.push(format!("{}: its name is not UTF-8; rename it", path.display()));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, &relative, depth + 1, files, problems),
            Ok(_) => files.push((relative, path)),
            Err(e) => problems.push(format!("{}: cannot be read: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    fn messages(folder: &str) -> Vec<String> {
        super::embed(quote!(#folder)).unwrap_err().into_iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn each_problem_is_a_compile_error_naming_the_file_and_the_field() {
        assert_eq!(
            messages("tests/skills/invalid"),
            [
                "tests/skills/invalid/wrong/SKILL.md: front matter field `name`: `right` is not the skill's folder name `wrong`; they must be equal",
                "tests/skills/invalid/wrong/SKILL.md: front matter field `description`: missing; it is required (what the skill does and when to use it)",
                "tests/skills/invalid/wrong/SKILL.md: front matter field `metadata`: must be a mapping of text values, not a list",
            ]
        );
        assert_eq!(
            messages("tests/skills/none"),
            ["tests/skills/none: no skill found; a skill is a folder with a SKILL.md"]
        );
        let missing = messages("tests/skills/missing");
        assert!(missing[0].starts_with("`tests/skills/missing` is not a folder"), "{missing:?}");
        let not_a_path = super::embed(quote!(skills)).unwrap_err().to_string();
        assert!(not_a_path.starts_with("`skills!` takes the path of a folder"), "{not_a_path}");
    }

    #[test]
    fn valid_skills_become_an_embedded_list_of_their_files() {
        let tokens = super::embed(quote!("tests/skills/invalid/ok")).unwrap().to_string();
        assert!(tokens.contains("\"SKILL.md\"") && tokens.contains("include_bytes"), "{tokens}");
        assert!(tokens.contains("EmbeddedSkills :: new (\"tests/skills/invalid/ok\" , \"ok\""), "{tokens}");
    }
}
