use mcp_tools::resource;

/// A pair of equal ids.
#[resource(uri = "pairs://{id}/{id}")]
async fn pair(id: String) -> String {
    id
}

fn main() {}
