use mcp_tools::prompt;

/// Ask for a code review.
#[prompt(titel = "Code review")]
async fn review(code: String) -> String {
    format!("Review this code:\n{code}")
}

fn main() {}
