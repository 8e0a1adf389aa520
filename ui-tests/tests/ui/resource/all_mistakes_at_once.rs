use mcp_tools::resource;

#[resource(uri = "users://{id}/{post", nme = "user", mime_type = "")]
async fn user<T>(name: &str) {
    let _ = name;
}

fn main() {}
