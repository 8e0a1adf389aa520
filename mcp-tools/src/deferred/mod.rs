//! Search over a tool catalog, for deferred mode: instead of listing thousands of tools, a server
//! lets the model search them (`search_tools`), read the few it picked (`describe_tools`) and call
//! one (`call_tool`). This module is the search part.
//!
//! * [`SearchDoc`]: what is indexed of a tool (name, title, summary, description, tags, the
//!   names and descriptions of its parameters, read from its input schema, and whether its
//!   annotations say it only reads).
//! * [`SearchIndex`]: built once per catalog; [`search`](SearchIndex::search) ranks with a
//!   query-term coverage threshold (no padding with one-word matches), filters by tag, pages, and
//!   breaks ties by name; [`suggest`](SearchIndex::suggest) answers "did you mean".
//! * [`Ranker`] / [`Scorer`]: pluggable ranking; the default is [`Bm25fRanker`].
//! * [`HybridRanker`]: the lexical ranking fused with sentence embeddings from any [`Embedder`]
//!   (ranks by meaning as well as by words); `SentenceEmbedder` (feature `embeddings`) runs a
//!   sentence-transformers model such as all-MiniLM-L6-v2 on the CPU.
//!
//! Text is split into words, names into parts (`getUserByID2` → get, user, by, id, 2), stop words
//! are dropped and the rest stemmed (Snowball English); see [`terms`]. Matching is by whole terms
//! only: `the` never matches `theme`. An abbreviation in capitals in a request is searched with
//! the phrase the catalog spells out beside it (`PR` → `PR (pull request)`; see
//! [`Corpus::rewrite`]). With a sentence-embedding model, a misspelt word that neither the
//! catalog nor the model's vocabulary knows is corrected to the word one edit away (`lable` →
//! `label`; see [`Corpus::correct`]). A request that asks for information (`what …`, `list …`)
//! ranks tools annotated as changing things lower, and one that asks for a change (`add …`)
//! ranks read-only tools lower (see [`asks_to_read`] and [`SearchOptions::intent_penalty`]).
//!
//! ```
//! use mcp_tools::deferred::{Bm25fRanker, SearchDoc, SearchIndex};
//!
//! let index = SearchIndex::build(
//!     vec![
//!         SearchDoc::new("get_weather", "Current weather and forecast for a city."),
//!         SearchDoc::new("set_theme", "Switch the editor's colour theme."),
//!     ],
//!     &Bm25fRanker::default(),
//! );
//! let page = index.search("weather in Paris", None, 10, 0);
//! assert_eq!(page.hits[0].name.as_ref(), "get_weather");
//! assert_eq!(page.total, 1);
//! assert_eq!(index.suggest("get_wether", 3)[0].as_ref(), "get_weather");
//! ```
//!
//! Retrieval quality and speed are measured by `scripts/bench-retrieval.sh` and
//! `cargo run --release --example bench_search` (results in `bench/`).

mod analyze;
mod corpus;
mod dense;
#[cfg(feature = "embeddings")]
mod encoder;
mod index;
mod intent;
pub(crate) mod meta;
mod rank;
mod rewrite;
#[cfg(feature = "embeddings")]
mod sentence;
mod spell;
#[cfg(test)]
mod tests;

pub use analyze::terms;
pub use corpus::{Corpus, Field, Posting, Query, QueryTerm, SearchDoc, TermId};
pub use dense::{
    EmbedError, Embedder, EmbeddingRanker, HybridRanker, embedding_text, full_embedding_text, steps,
    without_values,
};
pub use index::{Hit, SearchIndex, SearchOptions, SearchPage};
pub use intent::asks_to_read;
pub use meta::DeferredTools;
pub use rank::{Bm25fRanker, Candidate, Meaning, Ranker, Scorer};
#[cfg(feature = "embeddings")]
pub use sentence::SentenceEmbedder;
pub use spell::Vocabulary;
