use mcp_tools::prompt;

struct Focus;

/// Ask for a code review.
#[prompt]
async fn review(code: String, focus: Option<Focus>) -> String {
    let _ = focus;
    format!("Review this code:\n{code}")
}

fn main() {}
