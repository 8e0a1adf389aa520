use mcp_tools::prompt;

/// Ask for a code review.
#[prompt]
async fn review<T: std::str::FromStr>(code: T) -> String {
    let _ = code;
    String::new()
}

fn main() {}
