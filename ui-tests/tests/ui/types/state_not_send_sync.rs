use std::cell::Cell;

use mcp_tools::{State, tool};

struct Counter {
    hits: Cell<u64>,
}

/// Count calls.
#[tool]
async fn hit(counter: State<Counter>) -> u64 {
    counter.hits.set(counter.hits.get() + 1);
    counter.hits.get()
}

fn main() {}
