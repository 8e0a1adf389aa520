use mcp_tools::tool;

#[tool(nme = "hello", title = 5, annotations(read_only, destructive), tags = [""])]
async fn hello<T>(#[tool(rename = "who")] name: &str, #[tool(rename = "who")] other: String) -> String {
    format!("Hello, {name} and {other}!")
}

fn main() {}
