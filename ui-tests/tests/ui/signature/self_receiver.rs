use mcp_tools::tool;

struct Greeter {
    greeting: String,
}

impl Greeter {
    /// Say hello.
    #[tool]
    async fn hello(&self, name: String) -> String {
        format!("{}, {name}!", self.greeting)
    }
}

fn main() {}
