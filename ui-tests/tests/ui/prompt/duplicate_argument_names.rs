use mcp_tools::prompt;

/// Compare two pieces of code.
#[prompt]
async fn compare(#[prompt(rename = "code")] left: String, #[prompt(rename = "code")] right: String) -> String {
    format!("Compare:\n{left}\n---\n{right}")
}

fn main() {}
