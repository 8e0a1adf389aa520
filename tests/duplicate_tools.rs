//! Two `#[tool]` functions with one name are a start-up error naming both places.
//! (Its own test binary: every `#[tool]` linked into a binary is in its inventory.)

use mcp_tools::{Server, tool};

mod billing {
    /// Look up an invoice.
    #[mcp_tools::tool(name = "lookup")]
    pub async fn lookup_invoice(id: u64) -> String {
        format!("invoice {id}")
    }
}

/// Look up a customer.
#[tool(name = "lookup")]
async fn lookup_customer(id: u64) -> String {
    format!("customer {id}")
}

#[test]
fn duplicate_names_fail_the_build_with_both_locations() {
    let err = Server::builder().build().unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    let problem = &err.problems()[0];
    assert!(problem.contains("two tools are named `lookup`"), "{problem}");
    assert_eq!(problem.matches("tests/duplicate_tools.rs:").count(), 2, "both locations: {problem}");
    assert!(err.to_string().starts_with("the MCP server could not start"));
}

#[test]
fn the_ready_made_main_exits_with_code_2_and_says_why() {
    // `run` prints the error and returns exit code 2 instead of serving.
    let code = Server::builder().run();
    assert_eq!(code, std::process::ExitCode::from(2));
    // The functions stay callable as written.
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(lookup_customer(1)), "customer 1");
    assert_eq!(rt.block_on(billing::lookup_invoice(2)), "invoice 2");
}
