use mcp_tools::prompt;

#[prompt]
async fn review(code: String) -> String {
    format!("Review this code:\n{code}")
}

fn main() {}
