use mcp_tools::prompt;

/// Ask for a code review.
#[prompt]
async fn review(#[prompt(default = "rust")] language: String) -> String {
    format!("Review this {language} code")
}

fn main() {}
