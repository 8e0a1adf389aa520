use mcp_tools::prompt;

#[allow(dead_code)]
enum Option<T> {
    Given(T),
    Absent,
}

/// Ask for a code review.
#[prompt]
async fn review(code: Option<String>) -> String {
    match code {
        Option::Given(code) => code,
        Option::Absent => String::new(),
    }
}

fn main() {}
