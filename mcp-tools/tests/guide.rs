//! The README stays a ten-minute read and the reference material lives in the guide, whose every
//! chapter is a rustdoc page (`src/guide.rs`), so its code blocks are compiled by `cargo test`.

use std::path::Path;

/// About ten minutes at an unhurried reading pace for technical prose with code.
const README_MAX_WORDS: usize = 2_500;

#[test]
fn the_readme_is_a_ten_minute_read() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let words = readme.split_whitespace().count();
    assert!(
        words <= README_MAX_WORDS,
        "the README has {words} words (at most {README_MAX_WORDS}): move reference material into \
         a chapter of mcp-tools/guide/"
    );
    for section in
        ["## Quick start", "## The `#[tool]` attribute", "## Testing your tools", "## Serving over HTTP"]
    {
        assert!(readme.contains(&format!("\n{section}\n")), "the README lost its section {section:?}");
    }
}

#[test]
fn every_guide_chapter_is_a_compiled_rustdoc_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide_rs = std::fs::read_to_string(root.join("src/guide.rs")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut chapters = 0;
    for entry in std::fs::read_dir(root.join("guide")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".md") {
            continue;
        }
        chapters += 1;
        let include = format!("\"../guide/{name}\"");
        assert!(
            guide_rs.contains(&include),
            "src/guide.rs does not include guide/{name}: its code is not compiled"
        );
        assert!(
            readme.contains(&format!("(mcp-tools/guide/{name}")),
            "the README does not lead to guide/{name}"
        );
    }
    assert!(chapters >= 10, "found only {chapters} chapters");
}
