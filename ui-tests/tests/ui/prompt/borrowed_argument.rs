use mcp_tools::prompt;

/// Ask for a code review.
#[prompt]
async fn review(code: Option<&str>) -> String {
    format!("Review this code:\n{}", code.unwrap_or_default())
}

fn main() {}
