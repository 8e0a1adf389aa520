use mcp_tools::prompt;

/// Ask for a review of several files.
#[prompt]
async fn review(files: Vec<String>) -> String {
    format!("Review these files: {}", files.join(", "))
}

fn main() {}
