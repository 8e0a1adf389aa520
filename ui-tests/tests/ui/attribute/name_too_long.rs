use mcp_tools::tool;

/// Say hello.
#[tool(
    name = "a_very_long_tool_name_that_goes_on_and_on_and_on_well_past_the_limit_of_one_hundred_and_twenty_eight_characters_that_the_mcp_specification_allows"
)]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
