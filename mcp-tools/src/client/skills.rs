//! The Skills extension (`io.modelcontextprotocol/skills`) from the client's side: a server's
//! skills (`skills/list`, `skills/get`), their folders (`resources/directory/read`), and their
//! files read and verified as the extension requires of a host: each against the size and
//! SHA-256 digest its skill's entry lists, and a `SKILL.md`'s front matter against the entry's.

use serde_json::{Value, json};
use sha2::Digest as _;

use super::Client;
use super::error::ClientError;
use super::skill::{Skill, SkillResources};
use crate::protocol::extensions::SKILLS;
use crate::skills::format;

impl Client {
    /// Whether the server declared the Skills extension.
    pub fn serves_skills(&self) -> bool {
        self.server_capabilities()["extensions"].get(SKILLS).is_some()
    }

    fn needs_skills(&self) -> Result<(), ClientError> {
        if self.serves_skills() {
            Ok(())
        } else {
            Err(ClientError::Protocol(format!("the server does not declare the Skills extension ({SKILLS})")))
        }
    }

    /// Every skill the server lists (`skills/list`, every page). A server may list only some of
    /// its skills: [`get_skill`](Self::get_skill) reaches the others by URI.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        self.needs_skills()?;
        self.list_all("skills/list", "skills").await?.iter().map(Skill::from_entry).collect()
    }

    /// The skill whose `SKILL.md` is at `uri` (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, ClientError> {
        self.needs_skills()?;
        let result = self.request("skills/get", json!({"uri": uri})).await?;
        Skill::from_entry(&result["skill"])
    }

    /// The files and folders directly in a folder of the server (`resources/directory/read`,
    /// every page), as `Resource` objects: a folder's `mimeType` is `inode/directory`.
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Value>, ClientError> {
        self.needs_skills()?;
        if self.server_capabilities()["extensions"][SKILLS]["directoryRead"] != json!(true) {
            return Err(ClientError::Protocol("the server does not declare `directoryRead`".into()));
        }
        let mut children = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..10_000 {
            let mut params = json!({"uri": uri});
            if let Some(cursor) = &cursor {
                params["cursor"] = json!(cursor);
            }
            let page = self.request("resources/directory/read", params).await?;
            children.extend(page["resources"].as_array().cloned().unwrap_or_default());
            match page["nextCursor"].as_str() {
                Some(next) if !next.is_empty() && Some(next) != cursor.as_deref() => {
                    cursor = Some(next.to_owned())
                }
                _ => return Ok(children),
            }
        }
        Err(ClientError::Protocol("`resources/directory/read` did not end after 10,000 pages".into()))
    }

    /// Reads one file of `skill` (`resources/read`) and verifies it against the skill's entry:
    /// a file the entry does not list, or whose size or digest differs, is an
    /// [`Unverified`](ClientError::Unverified) error, and its content is not returned. A skill
    /// whose files are `dynamic` has nothing to verify against: its files are returned as read.
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<Vec<u8>, ClientError> {
        let listed = match &skill.resources {
            SkillResources::Dynamic => None,
            SkillResources::Files(_) => Some(skill.file(uri).ok_or_else(|| {
                ClientError::Unverified(format!(
                    "{uri} is not a file of the skill {} (its entry does not list it)",
                    skill.uri
                ))
            })?),
        };
        let result = self.read_resource(uri).await?;
        let contents = result["contents"]
            .as_array()
            .and_then(|contents| contents.iter().find(|c| c["uri"] == json!(uri)).or(contents.first()))
            .ok_or_else(|| ClientError::Protocol(format!("resources/read of {uri} returned no contents")))?;
        let bytes = match (contents["text"].as_str(), contents["blob"].as_str()) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(blob)) => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.decode(blob).map_err(|e| {
                    ClientError::Protocol(format!("resources/read of {uri}: invalid base64: {e}"))
                })?
            }
            (None, None) => {
                return Err(ClientError::Protocol(format!("resources/read of {uri}: neither text nor blob")));
            }
        };
        if let Some(file) = listed {
            if bytes.len() as u64 != file.size {
                return Err(ClientError::Unverified(format!(
                    "{uri} has {} bytes; its skill's entry says {}",
                    bytes.len(),
                    file.size
                )));
            }
            let hash = sha2::Sha256::digest(&bytes);
            let digest: String = std::iter::once("sha256:".to_owned())
                .chain(hash.iter().map(|b| format!("{b:02x}")))
                .collect();
            if digest != file.digest {
                return Err(ClientError::Unverified(format!(
                    "{uri} does not match the digest its skill's entry lists ({digest}, not {})",
                    file.digest
                )));
            }
        }
        Ok(bytes)
    }

    /// Loads a skill: reads its `SKILL.md`, verified as [`read_skill_file`](Self::read_skill_file)
    /// does, then checks that its front matter is the entry's, field by field; returns its text.
    /// Read the skill's other files with [`read_skill_file`](Self::read_skill_file) when its
    /// instructions need them, not before.
    pub async fn load_skill(&self, skill: &Skill) -> Result<String, ClientError> {
        let bytes = self.read_skill_file(skill, &skill.uri).await?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ClientError::Unverified(format!("{} is not UTF-8 text", skill.uri)))?;
        let fields =
            format::parse(&text).map_err(|why| ClientError::Unverified(format!("{}: {why}", skill.uri)))?;
        if fields != skill.frontmatter {
            return Err(ClientError::Unverified(format!(
                "the front matter of {} differs from its skill's entry",
                skill.uri
            )));
        }
        Ok(text)
    }
}
