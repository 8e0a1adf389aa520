//! No code: this package holds the trybuild suite of the attributes (`tests/ui.rs`).
