//! The README's quick start, pasted as a newcomer pastes it: its `Cargo.toml` lines and its
//! `main.rs`, in a new crate beside a clone of this repository (the layout the README describes),
//! must build and serve the tool. The README's dependency line once named crates.io's
//! `mcp-tools`, another project: the quick start then failed with unresolved imports.
//! (scripts/check-dependency-lines.py, in CI, also asks crates.io about every such line.)

use std::path::Path;
use std::process::Command;

/// The first fenced block of `lang` after the heading `## Quick start`.
fn quick_start_block(readme: &str, lang: &str) -> String {
    let section = readme.split("\n## Quick start\n").nth(1).expect("the README has a Quick start section");
    let section = section.split("\n## ").next().unwrap();
    let start = section.find(&format!("```{lang}\n")).unwrap_or_else(|| panic!("no ```{lang} block"))
        + lang.len()
        + 4;
    let end = start + section[start..].find("\n```").unwrap();
    section[start..end].to_owned()
}

#[test]
fn the_readme_quick_start_builds_as_pasted_and_serves_its_tool() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dependencies = quick_start_block(&readme, "toml");
    let main = quick_start_block(&readme, "rust");
    assert!(dependencies.contains("[dependencies]"), "{dependencies}");

    // Under target/ (so cargo reads the workspace's .cargo/config.toml and shares its build):
    // `mcp-tools` is the clone (a link to this repository) and `quickstart` the newcomer's crate.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("readme-{}", std::process::id()));
    let krate = dir.join("quickstart");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::os::unix::fs::symlink(root, dir.join("mcp-tools")).unwrap();
    // The line's path, followed from the new crate through the link, must reach the runtime's
    // package. cargo is then given the path tests/dev_loop.rs gives: a package is known by its path, and
    // through the link it would be another package than the one tests/dev_loop.rs built, so a
    // build of mcp-tools of its own. For the same reason the crate takes `harness::shared_build`
    // (dependencies it does not use: the features of the workspace's build of the rest).
    let (_, after) =
        dependencies.split_once("mcp-tools-rs = { path = \"").expect("a path dependency on mcp-tools-rs");
    let path = &after[..after.find('"').unwrap()];
    let reached = krate.join(path).canonicalize().expect("the README's path exists in the documented layout");
    assert_eq!(
        reached,
        root.join("mcp-tools").canonicalize().unwrap(),
        "the README's path reaches mcp-tools-rs"
    );
    let dependencies = dependencies.replacen(path, &root.join("mcp-tools").display().to_string(), 1);
    let manifest = format!(
        "[package]\nname = \"quickstart\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{dependencies}\n\n[workspace]\n{}",
        harness::shared_build()
    );
    std::fs::write(krate.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file: the same versions, so the shared build cache serves.
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    std::fs::write(krate.join("src/main.rs"), main).unwrap();

    let target = root.join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "the README's quick start does not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let list = Command::new(target.join("debug/quickstart")).arg("list").output().unwrap();
    let tools = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && tools.contains("\"convert\""), "{tools}");
    std::fs::remove_dir_all(&dir).unwrap();
}
