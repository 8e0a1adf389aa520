//! The most common layout of a real project, built as a user builds it: `#[tool]` functions in
//! the package's library (`src/lib.rs`) and `mcp_tools::main!()` in its binary. The tools must be
//! served (the linker leaves a library out unless the binary names it; `main!` does), and a
//! binary that serves nothing must say why.

use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = r#"use mcp_tools::tool;

/// Say hello from the library.
#[tool]
pub async fn hello_from_lib(name: String) -> String {
    format!("hello {name}")
}
"#;

/// A package `libtools` in a temporary folder: a library with one tool, and `main`.
fn package(main: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Under target/ (cargo's folder for tests' files), so that cargo reads the workspace's
    // .cargo/config.toml there too: built with the same profile. mcp-tools with its default
    // features, as tests/dev_loop.rs and the README's quick start (tests/readme_quickstart.rs)
    // take it: the three packages share one build of mcp-tools, and the workspace's build of its
    // dependencies (`harness::shared_build`).
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-tools-libtools-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"libtools\"\nversion = \"0.1.0\"\nedition = \"2024\"\ndescription = \"Tools from a library.\"\nrepository = \"https://github.com/octo/libtools\"\n\n[dependencies]\nmcp-tools-rs = {{ path = {:?} }}\n\n[workspace]\n{}",
        root.join("mcp-tools"),
        harness::shared_build()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file: the same versions, so the shared build cache serves.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    dir
}

/// Builds the package in the workspace's target folder (its dependencies are built already)
/// and runs `libtools list`: (stdout, stderr).
fn build_and_list(dir: &Path) -> (String, String) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let list = Command::new(target.join("debug/libtools")).arg("list").output().unwrap();
    assert!(list.status.success());
    (String::from_utf8_lossy(&list.stdout).into_owned(), String::from_utf8_lossy(&list.stderr).into_owned())
}

#[test]
fn tools_of_the_package_library_are_served_and_an_empty_server_says_why() {
    let dir = package("mcp_tools::main!();\n");
    let (tools, _) = build_and_list(&dir);
    assert!(tools.contains("\"hello_from_lib\""), "main!() links the library's tools: {tools}");
    // main!() captures the package's Cargo facts where it expands: its registry entry has them.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let entry = Command::new(target.join("debug/libtools")).arg("server-json").output().unwrap();
    let entry: serde_json::Value = serde_json::from_slice(&entry.stdout).expect("server-json prints JSON");
    assert_eq!(entry["name"], "io.github.octo/libtools", "derived from the repository");
    assert_eq!(entry["version"], "0.1.0");
    assert_eq!(entry["description"], "Tools from a library.");
    assert_eq!(
        entry["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["tools"]["names"][0],
        "hello_from_lib"
    );

    // A main written by hand that never names the library serves nothing, and says why.
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() -> std::process::ExitCode {\n    mcp_tools::Server::builder().run()\n}\n",
    )
    .unwrap();
    let (tools, warning) = build_and_list(&dir);
    assert!(!tools.contains("hello_from_lib"), "{tools}");
    assert!(warning.contains("this server has no tools, resources or prompts"), "{warning}");
    assert!(warning.contains("use my_library as _;"), "{warning}");
    std::fs::remove_dir_all(&dir).unwrap();
}
