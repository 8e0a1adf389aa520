//! The encoder that runs a sentence-embedding model of the BERT family for
//! [`SentenceEmbedder`](crate::deferred::SentenceEmbedder): this crate's own kernels, kept apart
//! from the rest of the search.
//!
//! `candle_transformers`' `BertModel` computes the same function (and still runs it, on
//! request: [`SentenceEmbedder::reference`](crate::deferred::SentenceEmbedder::reference)). The
//! own encoder stays because it embeds a served catalog about three times faster on the
//! machines this project is measured on: `bench/encoder.md`
//! compares the three encoders' first starts of the same catalog side by side in one run (int8
//! products, this encoder's f32 products, the library's model), with the retrieval figures each
//! gives. What makes the difference:
//!
//! * [`int8`]: int8 matrix products in groups of 32 (AVX-512 VNNI or AVX2 kernels giving the same
//!   numbers bit for bit), where the library multiplies in f32;
//! * [`bert`]: the layers run in fewer passes (one product for query, key and value; the
//!   attention of every text and head in one parallel pass; bias, GELU and the residual added as
//!   products finish) on buffers kept from layer to layer;
//! * [`approx`]: `erf` and `exp` written so that the compiler vectorises the loops over them.
//!
//! **`unsafe`.** Every `unsafe` block here is one operation (a SIMD load or store, a call of a
//! function compiled for instructions the CPU was checked to have) with a `SAFETY:` comment that
//! says why that operation is sound; clippy enforces both for this module
//! (`undocumented_unsafe_blocks`, `multiple_unsafe_ops_per_block`), and every `unsafe fn` states
//! its contract under `# Safety`. Nothing outside this module holds `unsafe` code of the encoder.
//!
//! **Checked against the library.** Unit tests compare each kernel with its definition and each
//! layer with the same layer in candle's operations; `tests/sentence_embedder.rs` compares
//! real texts' vectors with the library's model on the real weights; and [`fuzz`] compares the
//! whole encoder (int8 and f32 products) with `candle_transformers`' `BertModel` on random
//! models (random shapes and weights) and random batches of random token sequences, and on the
//! real model when there is one: a fixed-seed batch in every `cargo test`, fresh seeds for as
//! long as asked by `scripts/fuzz.sh encoder` (record: `bench/fuzz.md`).

#![deny(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc
)]

mod approx;
mod bert;
#[cfg(test)]
mod fuzz;
mod int8;

pub(super) use bert::{Bert, Products, Scratch};
