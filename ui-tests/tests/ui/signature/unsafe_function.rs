use mcp_tools::tool;

/// Read memory.
#[tool]
async unsafe fn peek(address: usize) -> u8 {
    unsafe { *(address as *const u8) }
}

fn main() {}
