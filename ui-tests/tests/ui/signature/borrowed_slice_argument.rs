use mcp_tools::tool;

/// Add numbers.
#[tool]
async fn sum(numbers: &[i64]) -> i64 {
    numbers.iter().sum()
}

fn main() {}
