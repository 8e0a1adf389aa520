use mcp_tools::{PromptMessage, prompt};

/// Ask for a code review.
#[prompt]
async fn review(code: String) -> Result<PromptMessage, String> {
    if code.is_empty() {
        return Err("no code".to_owned());
    }
    Ok(PromptMessage::user(code))
}

fn main() {}
