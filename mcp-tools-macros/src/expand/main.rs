//! `mcp_tools::main!()`: `fn main()` running the ready-made command line, and, in a binary of a
//! package that also has a library, a reference to that library, so the linker keeps the
//! `#[tool]` functions registered there (nothing else in the binary may name them).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

pub fn main(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(
            Span::call_site(),
            "`mcp_tools::main!()` takes no arguments; write `fn main` yourself (`Server::builder()…run()`) to add state or runtime tools",
        )
        .to_compile_error();
    }
    // Not in the library itself: a binary (named like the library, often), or any other crate.
    let in_binary = std::env::var_os("CARGO_BIN_NAME").is_some();
    let crate_name = std::env::var("CARGO_CRATE_NAME").ok();
    let library = package_library().filter(|lib| in_binary || crate_name.as_deref() != Some(lib.as_str()));
    let link = library.map(|lib| {
        let lib = Ident::new(&lib, Span::call_site());
        quote! {
            // The package's library holds #[tool] functions too, maybe: name it so they are linked.
            #[allow(unused_extern_crates)]
            extern crate #lib as _;
        }
    });
    quote! {
        #link
        fn main() -> ::std::process::ExitCode {
            ::mcp_tools::Server::builder()
                .cargo_package(::mcp_tools::cargo_package!())
                .run()
        }
    }
}

/// The crate name of the library target of the package being compiled, if it has one: the
/// `name` of its `[lib]` section, else the package name when `src/lib.rs` exists or `[lib]` is
/// declared.
fn package_library() -> Option<String> {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let package = std::env::var("CARGO_PKG_NAME").ok()?;
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let lib_section = section(&manifest, "lib");
    let declared = lib_section.as_deref().and_then(|s| value_of(s, "name"));
    let name = match (declared, lib_section.is_some() || dir.join("src/lib.rs").is_file()) {
        (Some(name), _) => name,
        (None, true) => package,
        (None, false) => return None,
    };
    Some(name.replace('-', "_"))
}

/// The lines of a TOML `[name]` section.
fn section(manifest: &str, name: &str) -> Option<String> {
    let header = format!("[{name}]");
    let mut lines = manifest.lines().skip_while(|l| l.trim() != header);
    lines.next()?;
    Some(lines.take_while(|l| !l.trim_start().starts_with('[')).collect::<Vec<_>>().join("\n"))
}

/// The string value of `key = "…"` in a section's lines.
fn value_of(section: &str, key: &str) -> Option<String> {
    section.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}
