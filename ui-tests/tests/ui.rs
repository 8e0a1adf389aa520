//! Compile-time diagnostics of `#[tool]`, `#[resource]` and `#[prompt]`, one case per user mistake
//! (`tests/ui/<topic>/*.rs`, each with the `.stderr` the user sees), and `pass/` cases that must
//! compile warning-free and run.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p mcp-tools-ui-tests --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for topic in ["attribute", "signature", "description", "types", "item", "recovery", "resource", "prompt"]
    {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
    t.pass("tests/ui/pass/*.rs");
}
