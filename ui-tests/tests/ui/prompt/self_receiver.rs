use mcp_tools::prompt;

struct Reviewer;

impl Reviewer {
    /// Ask for a code review.
    #[prompt]
    async fn review(&self, code: String) -> String {
        code
    }
}

fn main() {}
