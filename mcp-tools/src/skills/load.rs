//! Where skills come from: a folder read when the server is built, or files embedded at compile
//! time by `skills!`. Both give the same list of files, checked the same way by `set.rs`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where a server's skills come from, for
/// [`ServerBuilder::skills`](crate::ServerBuilder::skills): a folder (a path, read when the
/// server is built) or the files [`skills!`](crate::skills!) embedded in the binary.
///
/// The folder holds skills, each a folder with a `SKILL.md` (`skills/pdf-processing/SKILL.md`),
/// possibly under folders of their own (`skills/acme/billing/refunds/SKILL.md`); or it is one
/// skill itself (it has a `SKILL.md`).
#[derive(Clone, Debug)]
pub struct SkillSource(pub(crate) Source);

#[derive(Clone, Debug)]
pub(crate) enum Source {
    Folder(PathBuf),
    Embedded(EmbeddedSkills),
}

impl From<&str> for SkillSource {
    fn from(folder: &str) -> Self {
        SkillSource(Source::Folder(folder.into()))
    }
}

impl From<String> for SkillSource {
    fn from(folder: String) -> Self {
        SkillSource(Source::Folder(folder.into()))
    }
}

impl From<&Path> for SkillSource {
    fn from(folder: &Path) -> Self {
        SkillSource(Source::Folder(folder.into()))
    }
}

impl From<&PathBuf> for SkillSource {
    fn from(folder: &PathBuf) -> Self {
        SkillSource(Source::Folder(folder.clone()))
    }
}

impl From<PathBuf> for SkillSource {
    fn from(folder: PathBuf) -> Self {
        SkillSource(Source::Folder(folder))
    }
}

impl From<EmbeddedSkills> for SkillSource {
    fn from(embedded: EmbeddedSkills) -> Self {
        SkillSource(Source::Embedded(embedded))
    }
}

/// A folder of skills embedded in the binary by [`skills!`](crate::skills!): its files, by
/// their paths under the folder.
#[derive(Clone, Copy)]
pub struct EmbeddedSkills {
    folder: &'static str,
    name: &'static str,
    files: &'static [(&'static str, &'static [u8])],
}

impl EmbeddedSkills {
    /// What `skills!` expands to: the folder as written, its own name, and its files (paths
    /// with `/`, relative to the folder).
    #[doc(hidden)]
    pub const fn new(
        folder: &'static str,
        name: &'static str,
        files: &'static [(&'static str, &'static [u8])],
    ) -> Self {
        EmbeddedSkills { folder, name, files }
    }

    /// The folder, as `skills!` was given it.
    pub fn folder(&self) -> &'static str {
        self.folder
    }

    /// The embedded files: each one's path under the folder (with `/`) and its bytes.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &'static [u8])> {
        self.files.iter().copied()
    }
}

impl std::fmt::Debug for EmbeddedSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let paths: Vec<&str> = self.files.iter().map(|(path, _)| *path).collect();
        f.debug_struct("EmbeddedSkills").field("folder", &self.folder).field("files", &paths).finish()
    }
}

/// The files of one source: its folder as shown in messages, the folder's own name (a source
/// that is one skill is that skill), and each file's path under it with `/` and its bytes.
pub(crate) struct Loaded {
    pub shown: String,
    pub name: String,
    pub files: Vec<(String, Cow<'static, [u8]>)>,
}

/// How deep folders are followed (a symbolic link to a parent folder would loop forever).
const MAX_DEPTH: usize = 32;

impl Source {
    /// The files of this source, read now for a folder.
    pub fn load(&self) -> Result<Loaded, Vec<String>> {
        match self {
            Source::Embedded(embedded) => Ok(Loaded {
                shown: embedded.folder.to_owned(),
                name: embedded.name.to_owned(),
                files: embedded
                    .files
                    .iter()
                    .map(|(path, bytes)| ((*path).to_owned(), Cow::Borrowed(*bytes)))
                    .collect(),
            }),
            Source::Folder(folder) => {
                let shown = folder.display().to_string();
                let name = std::fs::canonicalize(folder)
                    .ok()
                    .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                let mut files = Vec::new();
                let mut problems = Vec::new();
                walk(folder, "", 0, &mut files, &mut problems);
                if problems.is_empty() { Ok(Loaded { shown, name, files }) } else { Err(problems) }
            }
        }
    }
}

/// Reads the files under `folder` (its path under the source is `prefix`), in name order; hidden
/// files and folders (a name starting with `.`) are left out.
fn walk(
    folder: &Path,
    prefix: &str,
    depth: usize,
    files: &mut Vec<(String, Cow<'static, [u8]>)>,
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
        Err(e) => {
            return problems.push(format!("{}: cannot be read as a folder of skills: {e}", folder.display()));
        }
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
        // Symbolic links are followed.
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, &relative, depth + 1, files, problems),
            Ok(_) => match std::fs::read(&path) {
                Ok(bytes) => files.push((relative, Cow::Owned(bytes))),
                Err(e) => problems.push(format!("{}: cannot be read: {e}", path.display())),
            },
            Err(e) => problems.push(format!("{}: cannot be read: {e}", path.display())),
        }
    }
}
