use mcp_tools::prompt;

/// Ask for a code review.
#[prompt]
async fn review(code: String) {
    let _ = code;
}

fn main() {}
