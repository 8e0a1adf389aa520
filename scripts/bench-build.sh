#!/usr/bin/env bash
# Build cost of a 500-tool server (issue #13), ours against rmcp: two generated crates with the
# same 500 tools (add-like bodies, one doc line each), ours as `#[tool]` functions and
# `mcp_tools::main!()`, rmcp's as `#[tool]` methods of one `#[tool_router]` impl with
# `#[tool_handler]`, each taking its own `Parameters<ArgsN>` struct (as ours derives one per
# tool). For each: a release build of the crate alone (its dependencies built
# before, then `cargo clean -p`), a dev build, then the dev rebuild after editing one tool's
# body (incremental). Medians of 3. Writes bench/build.md.
#
#   scripts/bench-build.sh           # about 15 minutes on 2 cores
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
gen="$root/.cache/bench/build"
export CARGO_TARGET_DIR="$gen/target"
mkdir -p "$gen"
rmcp_version="$(python3 -c 'import re;t=open("bench/Cargo.toml").read();print(re.search(r"rmcp = \{ version = \"([^\"]+)\"",t).group(1))')"
python3 - "$gen" "$root" "$rmcp_version" <<'PY'
import os, sys
gen, root, rmcp = sys.argv[1], sys.argv[2], sys.argv[3]
N = 500
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path) or open(path).read() != text:
        open(path, "w").write(text)
ws = '[workspace]\nmembers = ["ours", "rmcp"]\nresolver = "3"\n'
write(f"{gen}/Cargo.toml", ws)
def manifest(name, dependencies):
    """A generated crate's Cargo.toml."""
    return f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
{dependencies}'''
write(f"{gen}/ours/Cargo.toml", manifest("gen-ours", f'''mcp-tools = {{ path = "{root}/mcp-tools" }}
'''))
body = "\n".join(f'''/// Tool number {i}: adds two numbers and {i}.
#[mcp_tools::tool]
async fn tool_{i}(a: f64, b: f64) -> String {{
    (a + b + {i}.0).to_string()
}}
''' for i in range(N))
write(f"{gen}/ours/src/main.rs", body + "\nmcp_tools::main!();\n")
write(f"{gen}/rmcp/Cargo.toml", manifest("gen-rmcp", f'''rmcp = {{ version = "{rmcp}", default-features = false, features = ["server", "macros", "transport-io"] }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"
tokio = {{ version = "1", features = ["rt-multi-thread", "macros", "io-std"] }}
'''))
structs = "\n".join(f'''#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args{i} {{
    a: f64,
    b: f64,
}}
''' for i in range(N))
methods = "\n".join(f'''    #[tool(description = "Tool number {i}: adds two numbers and {i}.")]
    async fn tool_{i}(&self, Parameters(Args{i} {{ a, b }}): Parameters<Args{i}>) -> String {{
        (a + b + {i}.0).to_string()
    }}
''' for i in range(N))
write(f"{gen}/rmcp/src/main.rs", f'''use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{{ServerCapabilities, ServerConfig}};
use rmcp::{{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router}};

{structs}
#[derive(Clone)]
struct Bench {{
    #[allow(dead_code)]
    tool_router: ToolRouter<Bench>,
}}

#[tool_router]
impl Bench {{
    fn new() -> Self {{
        Bench {{ tool_router: Self::tool_router() }}
    }}

{methods}}}

#[tool_handler]
impl ServerHandler for Bench {{
    fn get_info(&self) -> ServerConfig {{
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }}
}}

#[tokio::main]
async fn main() {{
    Bench::new().serve(rmcp::transport::stdio()).await.expect("serve").waiting().await.expect("run");
}}
''')
PY
cp -f Cargo.lock "$gen/Cargo.lock" 2>/dev/null || true
cd "$gen"
timed() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); python3 -c "print(f'{$end-$start:.1f}')"; }
edit() { # change tool_7's body in $1/src/main.rs (alternating, so every edit is a change)
  python3 - "$1/src/main.rs" <<'PY'
import re, sys
p = sys.argv[1]; t = open(p).read()
t = t.replace("+ 7.0)", "+ 7.5)", 1) if "+ 7.0)" in t else t.replace("+ 7.5)", "+ 7.0)", 1)
open(p, "w").write(t)
PY
}
echo "building dependencies (not timed)…" >&2
cargo build --release -q -p gen-ours -p gen-rmcp
cargo build -q -p gen-ours -p gen-rmcp
declare -A result
for crate in ours rmcp; do
  rel=(); dev=(); inc=()
  for run in 1 2 3; do
    cargo clean -q --release -p "gen-$crate"
    rel+=("$(timed cargo build --release -p "gen-$crate")")
    cargo clean -q -p "gen-$crate"
    dev+=("$(timed cargo build -p "gen-$crate")")
    edit "$crate"
    inc+=("$(timed cargo build -p "gen-$crate")")
    echo "  $crate run $run: release ${rel[-1]} s, dev ${dev[-1]} s, edit ${inc[-1]} s" >&2
  done
  result[$crate]="$(python3 -c "import statistics as s,sys; a=sys.argv[1:]; print(' | '.join(f'{s.median(map(float,a[i:i+3])):.1f} s' for i in (0,3,6)))" "${rel[@]}" "${dev[@]}" "${inc[@]}")"
done
cd "$root"
{
  echo "# Build cost of a 500-tool server: mcp-tools against rmcp"
  echo
  echo "Written by \`scripts/bench-build.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD), $(nproc) cores,"
  echo "rustc $(rustc --version | cut -d' ' -f2), rmcp $rmcp_version. The generated crates are in .cache/bench/build/."
  echo "Medians of 3: the crate alone (dependencies built before)."
  echo
  echo "| 500 tools | release build | dev build | dev rebuild after editing one body |"
  echo "|---|---|---|---|"
  echo "| mcp-tools (\`#[tool]\` functions, \`main!()\`) | ${result[ours]} |"
  echo "| rmcp (\`#[tool]\` methods, \`#[tool_router]\`) | ${result[rmcp]} |"
} > bench/build.md
cat bench/build.md
