use mcp_tools::tool;

struct Calculator;

impl Calculator {
    /// Add two numbers.
    #[tool]
    async fn add(a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
