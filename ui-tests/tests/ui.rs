//! Compile-time diagnostics of `#[tool]`, `#[resource]` and `#[prompt]`, one case per user mistake
//! (`tests/ui/<topic>/*.rs`, each with the `.stderr` the user sees). The cases that must compile
//! warning-free and run (`tests/ui/pass/`) are test targets of their own (Cargo.toml): with none
//! here, trybuild checks all the cases in one `cargo check` instead of building each.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p mcp-tools-ui-tests --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for topic in ["attribute", "signature", "description", "types", "item", "recovery", "resource", "prompt"]
    {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
}
