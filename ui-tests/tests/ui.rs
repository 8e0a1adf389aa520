//! Compile-time diagnostics of `#[tool]`, `#[resource]` and `#[prompt]`, one case per user mistake
//! (`tests/ui/<topic>/*.rs`, each with the `.stderr` the user sees). The cases that must compile
//! warning-free and run (`tests/ui/pass/`) are test targets of their own (Cargo.toml): with none
//! here, trybuild checks all the cases in one `cargo check` instead of building each.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p mcp-tools-ui-tests --test ui`.

/// The rustc flags of trybuild's build of the cases (trybuild 1.0's `rustflags::toml` plus the
/// `--diagnostic-width=140` its `build_all_tests` adds).
const CASE_FLAGS: [&str; 6] = ["--cfg", "trybuild", "--verbose", "-A", "dead_code", "--diagnostic-width=140"];

#[test]
fn ui() {
    // trybuild runs cargo twice: once for the dependencies, once for the cases, the second time
    // with one rustc flag more (`--diagnostic-width=140`), so cargo checks every dependency again
    // (107 crates, about 16 s on 2 cores when they were never checked). CARGO_ENCODED_RUSTFLAGS
    // comes first in cargo's order, before the `build.rustflags` trybuild passes: set to the
    // cases' flags, it gives both runs the same ones, and the dependencies are checked once.
    // Left alone when the caller sets flags of its own (coverage, ...): trybuild's handling then.
    if std::env::var_os("RUSTFLAGS").is_none() && std::env::var_os("CARGO_ENCODED_RUSTFLAGS").is_none() {
        // SAFETY: the binary's one test, before it starts anything that reads the environment.
        unsafe { std::env::set_var("CARGO_ENCODED_RUSTFLAGS", CASE_FLAGS.join("\x1f")) };
    }
    let t = trybuild::TestCases::new();
    for topic in ["attribute", "signature", "description", "types", "item", "recovery", "resource", "prompt"]
    {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
}
