//! Agent Skills, served as the Skills extension says (`io.modelcontextprotocol/skills`,
//! SEP-2640): a skill is a folder with a `SKILL.md` (YAML front matter with its `name` and
//! `description`, then instructions) and the files it refers to. Give the server a folder of
//! skills with [`ServerBuilder::skills`](crate::ServerBuilder::skills), read when it starts, or
//! embed one in the binary with [`skills!`](crate::skills!):
//!
//! ```no_run
//! # fn main() -> std::process::ExitCode {
//! mcp_tools::Server::builder()
//!     .skills("skills")                            // skills/pdf-processing/SKILL.md, …
//!     // .skills(mcp_tools::skills!("skills"))     // the same, embedded at compile time
//!     .run()
//! # }
//! ```
//!
//! Every file of a skill becomes a resource, `skill://<skill-path>/<file-path>`
//! (`skill://pdf-processing/SKILL.md`, `skill://pdf-processing/references/FORMS.md`; a skill in
//! `skills/acme/billing/refunds/` is `skill://acme/billing/refunds/SKILL.md`), listed and read
//! like any other. The server declares the extension in its capabilities (with
//! `directoryRead: true`), in both protocol eras, and answers its methods:
//!
//! * `skills/list`: every skill's entry: the `uri` of its `SKILL.md`, its front matter as JSON
//!   (`frontmatter`), and every file with its SHA-256 `digest` and `size` (`resources`), which a
//!   host checks what it reads against;
//! * `skills/get` (`{"uri": "skill://…/SKILL.md"}`): one skill's entry;
//! * `resources/directory/read` (`{"uri": "skill://pdf-processing/references"}`): the files and
//!   folders in a folder.
//!
//! The front matter is checked when the server is built (at compile time too, for
//! [`skills!`](crate::skills!)), each problem naming the file and the field: `name` (1 to 64
//! lowercase letters, digits and hyphens, no hyphen first, last or doubled) must be the skill's
//! folder name, `description` (up to 1024 characters) is required, `compatibility` has at most
//! 500 characters, `metadata` maps keys to text, `license` and `allowed-tools` are text. A skill
//! may have at most 512 files and 16 MiB. Files and folders whose name starts with `.` are left
//! out. The files are read once, when the server starts: what it serves matches the digests it
//! announced until it restarts.
//!
//! In deferred mode ([`defer_tools`](crate::ServerBuilder::defer_tools)), `search_tools` finds
//! skills too, and a `read_skill` meta-tool reads their files: a model whose host knows nothing of
//! the extension still finds and follows them.

pub(crate) mod format;
mod load;
mod set;

pub use load::{EmbeddedSkills, SkillSource};
pub(crate) use set::SkillSet;
