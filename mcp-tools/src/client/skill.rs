//! A skill as a server's `skills/list` and `skills/get` describe it (the Skills extension): the
//! URI of its `SKILL.md`, its front matter, and its files with their digests and sizes.

use serde_json::{Map, Value};

use super::error::ClientError;

/// A skill a server serves: its entry in `skills/list` or `skills/get`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its `SKILL.md` front matter, as JSON (`name`, `description`, and whatever else it has).
    pub frontmatter: Map<String, Value>,
    /// Its files.
    pub resources: SkillResources,
}

/// The files of a [`Skill`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file (its `SKILL.md` included), each with its digest and size.
    Files(Vec<SkillFile>),
    /// Generated content: no list of files, and nothing to verify them against.
    Dynamic,
}

/// One file of a [`Skill`], as its entry lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// Its URI.
    pub uri: String,
    /// `sha256:` and the SHA-256 of its bytes, in lowercase hexadecimal.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

impl Skill {
    /// Its name (`frontmatter.name`).
    pub fn name(&self) -> &str {
        self.frontmatter.get("name").and_then(Value::as_str).unwrap_or_default()
    }

    /// What it does and when to use it (`frontmatter.description`).
    pub fn description(&self) -> &str {
        self.frontmatter.get("description").and_then(Value::as_str).unwrap_or_default()
    }

    /// The file at `uri`, if the entry lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }

    pub(super) fn from_entry(entry: &Value) -> Result<Skill, ClientError> {
        let invalid = |why: &str| ClientError::Protocol(format!("invalid skill entry ({why}): {entry}"));
        let uri = entry["uri"].as_str().ok_or_else(|| invalid("no `uri`"))?.to_owned();
        let frontmatter =
            entry["frontmatter"].as_object().ok_or_else(|| invalid("no `frontmatter` object"))?.clone();
        let resources = match &entry["resources"] {
            Value::String(dynamic) if dynamic == "dynamic" => SkillResources::Dynamic,
            Value::Array(files) => SkillResources::Files(
                files
                    .iter()
                    .map(|file| {
                        Ok(SkillFile {
                            uri: file["uri"]
                                .as_str()
                                .ok_or_else(|| invalid("a file without `uri`"))?
                                .to_owned(),
                            digest: file["digest"]
                                .as_str()
                                .ok_or_else(|| invalid("a file without `digest`"))?
                                .to_owned(),
                            size: file["size"].as_u64().ok_or_else(|| invalid("a file without `size`"))?,
                        })
                    })
                    .collect::<Result<_, ClientError>>()?,
            ),
            _ => return Err(invalid("`resources` is neither a list nor \"dynamic\"")),
        };
        Ok(Skill { uri, frontmatter, resources })
    }
}
