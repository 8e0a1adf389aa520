//! A server's skills, checked and ready to serve: the skills' entries (their `SKILL.md` URI,
//! front matter and files with digests), every file as a resource, the folders for
//! `resources/directory/read`, and the extension that answers `skills/list`, `skills/get` and
//! `resources/directory/read` from them.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::format::front_matter;
use super::load::{Loaded, SkillSource};
use crate::dispatch::extensions::{BOTH_ERAS, Extension, ExtensionRequest, MethodHandler};
use crate::model::resource::{Resource, ResourceContents};
use crate::protocol::extensions::SKILLS;
use crate::protocol::jsonrpc::{ErrorObject, decode_params};
use crate::protocol::messages::{PaginatedParams, UriParams};

/// The most files a skill may have, `SKILL.md` included (the extension's limit).
const MAX_FILES: usize = 512;
/// The most bytes a skill's files may have in all (the extension's limit: 16 MiB).
const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Skills per `skills/list` page.
const PAGE: usize = 100;
/// The MIME type of a folder (`resources/directory/read`).
const FOLDER_MIME: &str = "inode/directory";

/// One served file.
struct File {
    uri: String,
    /// Its path in the skill namespace (`pdf-processing/references/FORMS.md`).
    path: String,
    mime: &'static str,
    bytes: Cow<'static, [u8]>,
    digest: String,
    /// Sent as text (UTF-8 of a textual type), else as a base64 blob.
    text: bool,
}

/// One skill.
struct Skill {
    name: String,
    description: String,
    /// The URI of its `SKILL.md`.
    uri: String,
    /// Its entry, as `skills/list` and `skills/get` send it.
    entry: Value,
    /// Its files' URIs, `SKILL.md` first.
    files: Vec<String>,
}

/// A server's skills, checked.
#[derive(Default)]
pub(crate) struct SkillSet {
    /// By `SKILL.md` URI.
    skills: BTreeMap<String, Skill>,
    files: BTreeMap<String, File>,
    /// Every folder's children: (URI, name, is a folder).
    folders: BTreeMap<String, BTreeSet<(String, String, bool)>>,
}

impl SkillSet {
    /// Reads and checks the skills of `sources`; every problem, each naming its file (and
    /// field), when some are wrong.
    pub fn load(sources: &[SkillSource]) -> Result<SkillSet, Vec<String>> {
        let mut set = SkillSet::default();
        let mut problems = Vec::new();
        let mut origins: HashMap<String, String> = HashMap::new();
        for source in sources {
            match source.0.load() {
                Ok(loaded) => set.add(loaded, &mut origins, &mut problems),
                Err(more) => problems.extend(more),
            }
        }
        if problems.is_empty() { Ok(set) } else { Err(problems) }
    }

    fn add(&mut self, loaded: Loaded, origins: &mut HashMap<String, String>, problems: &mut Vec<String>) {
        let Loaded { shown, name, files } = loaded;
        // A source that is a skill itself is that skill, named by its folder.
        let own = files.iter().any(|(path, _)| path == "SKILL.md");
        if own && name.is_empty() {
            problems.push(format!("{shown}: a skill folder needs a name; give its path by name"));
            return;
        }
        let in_namespace = |path: &str| if own { format!("{name}/{path}") } else { path.to_owned() };
        let shown_file = |path: &str| format!("{}/{path}", shown.trim_end_matches(['/', '\\']));
        let files: Vec<(String, String, Cow<'static, [u8]>)> =
            files.into_iter().map(|(path, bytes)| (in_namespace(&path), shown_file(&path), bytes)).collect();
        let skill_folders: Vec<String> = files
            .iter()
            .filter_map(|(path, _, _)| path.strip_suffix("/SKILL.md"))
            .map(str::to_owned)
            .collect();
        if skill_folders.is_empty() {
            problems.push(format!("{shown}: no skill found; a skill is a folder with a SKILL.md"));
            return;
        }
        let in_a_skill = |path: &str| {
            skill_folders
                .iter()
                .any(|folder| path.starts_with(folder.as_str()) && path[folder.len()..].starts_with('/'))
        };
        let mut shown_of: HashMap<String, String> = HashMap::new();
        for (path, shown, bytes) in files {
            if !in_a_skill(&path) {
                tracing::debug!(file = %shown, "not in a skill folder (no SKILL.md above it): not served");
                continue;
            }
            let uri = uri_of(&path);
            if let Some(first) = origins.insert(uri.clone(), shown.clone()) {
                problems.push(format!("{shown}: {uri} is served already, from {first}"));
                continue;
            }
            let mime = mime_of(&path, &bytes);
            let text = std::str::from_utf8(&bytes).is_ok() && textual(mime);
            let digest = digest_of(&bytes);
            shown_of.insert(path.clone(), shown);
            // Its folders, up to the namespace's top, each a child of the one above.
            let segments: Vec<&str> = path.split('/').collect();
            for depth in 1..segments.len() {
                let parent = uri_of(&segments[..depth].join("/"));
                let child = segments[..=depth].join("/");
                let is_folder = depth + 1 < segments.len();
                self.folders.entry(parent).or_default().insert((
                    uri_of(&child),
                    segments[depth].to_owned(),
                    is_folder,
                ));
            }
            self.files.insert(uri.clone(), File { uri, path, mime, bytes, digest, text });
        }
        for folder in skill_folders {
            let skill_md = uri_of(&format!("{folder}/SKILL.md"));
            let Some(file) = self.files.get(&skill_md) else { continue };
            let shown = shown_of.get(&file.path).cloned().unwrap_or_default();
            let name = folder.rsplit('/').next().unwrap_or_default();
            let Ok(text) = std::str::from_utf8(&file.bytes) else {
                problems.push(format!("{shown}: it is not UTF-8 text"));
                continue;
            };
            let fields = match front_matter(text, name) {
                Ok(fields) => fields,
                Err(more) => {
                    problems.extend(more.into_iter().map(|problem| format!("{shown}: {problem}")));
                    continue;
                }
            };
            let prefix = format!("{}/", uri_of(&folder));
            let mut uris: Vec<String> = vec![skill_md.clone()];
            uris.extend(
                self.files.keys().filter(|uri| uri.starts_with(&prefix) && **uri != skill_md).cloned(),
            );
            let total: u64 = uris.iter().map(|uri| self.files[uri].bytes.len() as u64).sum();
            let shown_folder = shown.strip_suffix("/SKILL.md").unwrap_or(&shown);
            if uris.len() > MAX_FILES {
                problems.push(format!(
                    "{shown_folder}: the skill has {} files; a skill may have at most {MAX_FILES} (the Skills extension's limit)",
                    uris.len()
                ));
                continue;
            }
            if total > MAX_BYTES {
                problems.push(format!(
                    "{shown_folder}: the skill's files have {total} bytes in all; at most {MAX_BYTES} (16 MiB, the Skills extension's limit)"
                ));
                continue;
            }
            let resources: Vec<Value> = uris
                .iter()
                .map(|uri| {
                    let file = &self.files[uri];
                    json!({"uri": uri, "digest": file.digest, "size": file.bytes.len()})
                })
                .collect();
            let description =
                fields.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
            let entry = json!({"uri": skill_md, "frontmatter": fields, "resources": resources});
            let skill =
                Skill { name: name.to_owned(), description, uri: skill_md.clone(), entry, files: uris };
            self.skills.insert(skill_md, skill);
        }
    }

    /// Every file as a resource: a `SKILL.md` named and described by its front matter
    /// (`text/markdown`), the others by their path.
    pub fn resources(&self) -> Vec<Resource> {
        let skill_md: HashMap<&str, &Skill> = self.skills.values().map(|s| (s.uri.as_str(), s)).collect();
        self.files
            .values()
            .map(|file| {
                let contents = if file.text {
                    let text = String::from_utf8_lossy(&file.bytes).into_owned();
                    ResourceContents::text(&file.uri, Some(file.mime), text)
                } else {
                    ResourceContents::blob(&file.uri, Some(file.mime), &file.bytes)
                };
                let size = file.bytes.len() as u64;
                match skill_md.get(file.uri.as_str()) {
                    Some(skill) => {
                        Resource::fixed(&file.uri, &skill.name, contents).description(&skill.description)
                    }
                    None => Resource::fixed(&file.uri, &file.path, contents),
                }
                .mime_type(file.mime)
                .size(size)
            })
            .collect()
    }

    /// The Skills extension over these skills: declared with `directoryRead`, in both eras, for
    /// every client; `skills/list`, `skills/get`, `resources/directory/read`.
    pub fn extension(self: &Arc<Self>) -> Extension {
        let list: MethodHandler = {
            let set = self.clone();
            Arc::new(move |request| set.list(request))
        };
        let get: MethodHandler = {
            let set = self.clone();
            Arc::new(move |request| set.get(request))
        };
        let directory: MethodHandler = {
            let set = self.clone();
            Arc::new(move |request| set.read_directory(request))
        };
        Extension { settings: json!({"directoryRead": true}), ..Extension::declared_only(SKILLS, BOTH_ERAS) }
            .method("skills/list", true, list)
            .method("skills/get", true, get)
            .method("resources/directory/read", false, directory)
    }

    /// `skills/list`: a page of entries (every skill, a hundred a page).
    fn list(&self, request: ExtensionRequest<'_>) -> Result<Value, ErrorObject> {
        let cursor = decode_params::<PaginatedParams>(request.params)?.cursor;
        let start = match cursor.as_deref() {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start < self.skills.len())
                .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor {cursor:?}")))?,
        };
        let skills: Vec<&Value> = self.skills.values().skip(start).take(PAGE).map(|s| &s.entry).collect();
        let mut result = json!({"skills": skills});
        if start + PAGE < self.skills.len() {
            result["nextCursor"] = json!((start + PAGE).to_string());
        }
        Ok(result)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    fn get(&self, request: ExtensionRequest<'_>) -> Result<Value, ErrorObject> {
        let uri = decode_params::<UriParams>(request.params)?.uri;
        match self.skills.get(&uri) {
            Some(skill) => Ok(json!({"skill": skill.entry})),
            None if uri.is_empty() => {
                Err(ErrorObject::invalid_params("`uri` is required: the URI of a skill's SKILL.md"))
            }
            None => Err(ErrorObject {
                data: Some(json!({"uri": uri})),
                ..ErrorObject::invalid_params(format!("No skill is served at {uri}"))
            }),
        }
    }

    /// `resources/directory/read`: the files and folders directly in a folder.
    fn read_directory(&self, request: ExtensionRequest<'_>) -> Result<Value, ErrorObject> {
        #[derive(Deserialize, Default)]
        struct Params {
            #[serde(default)]
            uri: String,
            #[serde(default)]
            cursor: Option<String>,
        }
        let params = decode_params::<Params>(request.params)?;
        let Some(children) = self.folders.get(&params.uri) else {
            return Err(ErrorObject {
                data: Some(json!({"uri": params.uri})),
                ..ErrorObject::invalid_params(format!(
                    "{} is not a directory resource of this server",
                    params.uri
                ))
            });
        };
        if let Some(cursor) = params.cursor {
            return Err(ErrorObject::invalid_params(format!("invalid cursor {cursor:?}")));
        }
        let resources: Vec<Value> = children
            .iter()
            .map(|(uri, name, folder)| match (folder, self.files.get(uri)) {
                (false, Some(file)) => {
                    json!({"uri": uri, "name": name, "mimeType": file.mime, "size": file.bytes.len()})
                }
                _ => json!({"uri": uri, "name": name, "mimeType": FOLDER_MIME}),
            })
            .collect();
        Ok(json!({"resources": resources}))
    }

    /// Every skill: its name, the URI of its `SKILL.md`, its description.
    pub fn summaries(&self) -> Vec<(String, String, String)> {
        self.skills.values().map(|s| (s.name.clone(), s.uri.clone(), s.description.clone())).collect()
    }

    /// A skill file's text for a model (deferred mode's `read_skill`): a `SKILL.md` is followed by
    /// the list of its skill's other files; a binary file is described, not shown.
    pub fn read_for_model(&self, uri: &str) -> Result<String, String> {
        let Some(file) = self.files.get(uri) else {
            let hint = match self.skills.values().next() {
                Some(skill) => format!(" (a skill's SKILL.md, such as {}, or a file it lists)", skill.uri),
                None => String::new(),
            };
            return Err(format!("No skill file is served at {uri}; give the URI of a skill file{hint}."));
        };
        let mut text = if file.text {
            String::from_utf8_lossy(&file.bytes).into_owned()
        } else {
            format!(
                "{uri} is a binary file ({}, {} bytes); it is not shown here.",
                file.mime,
                file.bytes.len()
            )
        };
        if let Some(skill) = self.skills.get(uri)
            && skill.files.len() > 1
        {
            text.push_str("\n\n---\nThe files of this skill (read them with the same tool, by URI):\n");
            for other in &skill.files[1..] {
                text.push_str(&format!("- {other}\n"));
            }
        }
        Ok(text)
    }
}

/// The URI of a path in the skill namespace: `skill://` and its segments, percent-encoded where
/// a URI needs it (the first is the authority).
fn uri_of(path: &str) -> String {
    let mut uri = String::from("skill://");
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            uri.push('/');
        }
        for byte in segment.bytes() {
            let keep = byte.is_ascii_alphanumeric()
                || b"-._~!$&'()*+,;=".contains(&byte)
                || (i > 0 && matches!(byte, b':' | b'@'));
            if keep {
                uri.push(byte as char);
            } else {
                uri.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    uri
}

/// `sha256:` and the SHA-256 of `bytes` in lowercase hexadecimal.
fn digest_of(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    let mut digest = String::with_capacity(7 + 64);
    digest.push_str("sha256:");
    for byte in hash {
        digest.push_str(&format!("{byte:02x}"));
    }
    digest
}

/// The MIME type of a file, by its extension (text of an unknown kind is `text/plain`).
fn mime_of(path: &str, bytes: &[u8]) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Whether contents of `mime` are sent as text (when they are UTF-8).
fn textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/yaml"
                | "application/toml"
                | "application/xml"
                | "image/svg+xml"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_a_uri_cannot_hold() {
        assert_eq!(uri_of("pdf-processing/SKILL.md"), "skill://pdf-processing/SKILL.md");
        assert_eq!(uri_of("acme/billing/refunds"), "skill://acme/billing/refunds");
        assert_eq!(uri_of("a b/c d/ü.md"), "skill://a%20b/c%20d/%C3%BC.md");
        assert_eq!(uri_of("x:y/p:q@r"), "skill://x%3Ay/p:q@r");
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(digest_of(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn mime_types_follow_the_extension_and_text_is_sent_as_text() {
        assert_eq!(mime_of("a/SKILL.md", b"x"), "text/markdown");
        assert_eq!(mime_of("a/run.py", b"x"), "text/x-python");
        assert_eq!(mime_of("a/LICENSE", b"MIT"), "text/plain");
        assert_eq!(mime_of("a/blob", &[0xff, 0xfe]), "application/octet-stream");
        assert!(textual("application/json") && !textual("image/png"));
    }
}
