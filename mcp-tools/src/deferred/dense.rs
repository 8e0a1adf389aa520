//! Ranking by meaning: the [`Embedder`] trait, [`EmbeddingRanker`] (embeddings alone) and
//! [`HybridRanker`] (embeddings fused with the lexical [`Bm25fRanker`]).
//!
//! Words fail when a request and a tool name the same thing differently (`accommodation` for a
//! hotel search, `therapist` for a psychologist finder); a sentence-embedding model places both
//! near each other. The lexical ranker stays the better judge of exact names and rare words, so
//! the hybrid adds the two: `lexical_weight · bm25f / best bm25f + (1 − lexical_weight) · cosine`.
//!
//! Any model can serve through [`Embedder`]; with the `embeddings` feature,
//! `SentenceEmbedder` runs a sentence-transformers BERT model
//! (e.g. all-MiniLM-L6-v2) on the CPU.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::analyze::{Piece, Splitter};
use super::corpus::{Corpus, Query, SearchDoc};
use super::rank::{Bm25fRanker, Candidate, Ranker, Scorer};

/// The error of an [`Embedder`].
pub type EmbedError = Box<dyn std::error::Error + Send + Sync>;

/// Turns texts into vectors whose cosine similarity reflects how close their meanings are.
///
/// Every vector of one call must have the same length; they need not be normalised (the rankers
/// normalise them). Implementations should batch: [`Ranker::prepare`] passes every tool's text
/// in one call, a search passes one query.
pub trait Embedder: Send + Sync {
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
}

/// The text of a tool that is embedded: its name as words, title, description (or summary),
/// tags, and its parameters' names and descriptions
/// (`get weather: Weather of a city. Parameters: city, unit. city: The city's name. …`).
pub fn embedding_text(doc: &SearchDoc) -> String {
    let mut text = String::new();
    let mut splitter = Splitter::default();
    let mut words = |s: &str, out: &mut String| {
        let start = out.len();
        splitter.split(s, |piece| {
            if let Piece::Part(part) = piece {
                if out.len() > start {
                    out.push(' ');
                }
                out.push_str(part);
            }
        });
    };
    words(&doc.name, &mut text);
    if let Some(title) = doc.title.as_deref().filter(|t| !t.is_empty()) {
        text.push_str(": ");
        text.push_str(title);
    }
    let description = if doc.description.is_empty() { &doc.summary } else { &doc.description };
    if !description.is_empty() {
        text.push_str(": ");
        text.push_str(description.trim());
    }
    if !doc.tags.is_empty() {
        text.push_str(" Tags: ");
        text.push_str(&doc.tags.join(", "));
        text.push('.');
    }
    if !doc.params.is_empty() {
        text.push_str(" Parameters: ");
        for (i, (name, _)) in doc.params.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            words(name, &mut text);
        }
        text.push('.');
        for (name, description) in &doc.params {
            if !description.is_empty() {
                text.push(' ');
                words(name, &mut text);
                text.push_str(": ");
                text.push_str(description.trim());
            }
        }
    }
    text
}

/// An [`Embedder`] with the vectors of the texts it last embedded kept, so that preparing a
/// changed catalog embeds only the tools that are new or changed.
struct Cached {
    embedder: Arc<dyn Embedder>,
    vectors: Mutex<HashMap<String, Arc<[f32]>>>,
}

impl Cached {
    fn new(embedder: Arc<dyn Embedder>) -> Arc<Cached> {
        Arc::new(Cached { embedder, vectors: Mutex::new(HashMap::new()) })
    }

    /// The unit vectors of every document of `corpus`, or why there are none.
    fn documents(&self, corpus: &Corpus) -> Result<Vectors, EmbedError> {
        let texts: Vec<String> = corpus.docs().iter().map(embedding_text).collect();
        let mut cache = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing: Vec<&str> =
            texts.iter().map(String::as_str).filter(|t| !cache.contains_key(*t)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let embedded = self.embed(&missing)?;
            if embedded.len() != missing.len() {
                return Err(format!(
                    "the embedder returned {} vectors for {} texts",
                    embedded.len(),
                    missing.len()
                )
                .into());
            }
            for (text, vector) in missing.iter().zip(embedded) {
                cache.insert((*text).to_owned(), normalized(vector)?);
            }
        }
        // Keep only this catalog's vectors.
        let wanted: std::collections::HashSet<&str> = texts.iter().map(String::as_str).collect();
        cache.retain(|text, _| wanted.contains(text.as_str()));
        let dim = texts.first().map_or(0, |t| cache[t.as_str()].len());
        let mut data = Vec::with_capacity(dim * texts.len());
        for text in &texts {
            let vector = &cache[text.as_str()];
            if vector.len() != dim {
                return Err(format!(
                    "the embedder returned vectors of {} and {} dimensions",
                    dim,
                    vector.len()
                )
                .into());
            }
            data.extend_from_slice(vector);
        }
        Ok(Vectors { dim, data })
    }

    /// The unit vector of a query.
    fn query(&self, text: &str) -> Result<Arc<[f32]>, EmbedError> {
        let vector = self.embed(&[text])?.pop().ok_or("the embedder returned no vector")?;
        normalized(vector)
    }

    /// The embedder's answer, a panic in it being an error like any other.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.embedder.embed(texts))).unwrap_or_else(
            |panic| Err(format!("the embedder panicked: {}", crate::call::panic_message(&*panic)).into()),
        )
    }
}

fn normalized(mut vector: Vec<f32>) -> Result<Arc<[f32]>, EmbedError> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || vector.is_empty() {
        return Err("the embedder returned an empty or non-finite vector".into());
    }
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(vector.into())
}

/// The documents' unit vectors, row by row.
struct Vectors {
    dim: usize,
    data: Vec<f32>,
}

/// The document vectors of one catalog, and the embedder for queries.
struct Dense {
    cached: Arc<Cached>,
    /// `None` when embedding the catalog failed (then only the lexical ranking answers).
    vectors: Option<Vectors>,
}

impl Dense {
    fn prepare(cached: &Arc<Cached>, corpus: &Corpus) -> Dense {
        let vectors = match cached.documents(corpus) {
            Ok(vectors) => Some(vectors),
            Err(error) => {
                tracing::error!(%error, "embedding the tool catalog failed; searching by words only");
                None
            }
        };
        Dense { cached: cached.clone(), vectors }
    }

    /// The cosine similarity of the query to each document, or `None` when there is no
    /// embedding (logged).
    fn similarities(&self, query: &Query<'_>) -> Option<Vec<f32>> {
        let vectors = self.vectors.as_ref()?;
        let q = match self.cached.query(query.text()) {
            Ok(q) if q.len() == vectors.dim => q,
            Ok(q) => {
                tracing::error!(query = q.len(), documents = vectors.dim, "embedding dimensions differ");
                return None;
            }
            Err(error) => {
                tracing::error!(%error, "embedding the query failed; searching by words only");
                return None;
            }
        };
        if vectors.dim == 0 {
            return Some(Vec::new());
        }
        Some(
            vectors
                .data
                .chunks_exact(vectors.dim)
                .map(|d| d.iter().zip(q.iter()).map(|(a, b)| a * b).sum())
                .collect(),
        )
    }
}

/// Ranks by the cosine similarity of embeddings alone: a document is a result when its
/// similarity to the query is at least [`min_similarity`](EmbeddingRanker::min_similarity).
///
/// Its results opt out of the index's term-coverage threshold (a match by meaning shares no
/// words). Mostly useful to compare with; [`HybridRanker`] ranks better than either part.
#[derive(Clone)]
pub struct EmbeddingRanker {
    cached: Arc<Cached>,
    /// The least cosine similarity of a result (default 0.3).
    pub min_similarity: f32,
}

impl std::fmt::Debug for EmbeddingRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRanker")
            .field("min_similarity", &self.min_similarity)
            .finish_non_exhaustive()
    }
}

impl EmbeddingRanker {
    /// Ranks with `embedder`'s vectors.
    pub fn new(embedder: impl Embedder + 'static) -> EmbeddingRanker {
        EmbeddingRanker { cached: Cached::new(Arc::new(embedder)), min_similarity: 0.3 }
    }
}

impl Ranker for EmbeddingRanker {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        Box::new(EmbeddingScorer {
            dense: Dense::prepare(&self.cached, corpus),
            min_similarity: self.min_similarity,
        })
    }
}

struct EmbeddingScorer {
    dense: Dense,
    min_similarity: f32,
}

impl Scorer for EmbeddingScorer {
    fn is_blocking(&self) -> bool {
        self.dense.vectors.is_some()
    }

    fn rank(&self, _: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let Some(similarities) = self.dense.similarities(query) else { return };
        let all = query.coverage_terms() as u32;
        for (doc, &similarity) in similarities.iter().enumerate() {
            if similarity >= self.min_similarity {
                out.push(Candidate { doc: doc as u32, score: similarity, matched: all, coverage: 1.0 });
            }
        }
    }
}

/// Lexical and semantic ranking together: each candidate scores
/// `lexical_weight · bm25f / best bm25f + (1 − lexical_weight) · cosine`, where `bm25f` is
/// [`lexical`](HybridRanker::lexical)'s score (0 when the tool shares no term with the query)
/// and `cosine` the similarity of the query's and the tool's embeddings
/// (of [`embedding_text`]).
///
/// The candidates are the lexical ranker's, plus every tool whose similarity reaches
/// [`min_similarity`](HybridRanker::min_similarity). Those close in meaning are exempt from the
/// index's term-coverage threshold; the others keep their lexical coverage, so a weak one-word
/// match that is not close in meaning is still dropped rather than padding the list.
///
/// If the embedder fails (at preparation or for one query), the error is logged and the search
/// answers by words alone. Preparing embeds every tool once; the vectors are kept by text, so a
/// changed catalog embeds only its new or changed tools. A query costs one embedding (a few
/// milliseconds for MiniLM on a CPU) plus one dot product per tool.
///
/// On the BFCL retrieval benchmark (`bench/retrieval.md`), all-MiniLM-L6-v2 with the defaults
/// (0.25, 0.3) lifts recall@5 from 0.88 to 0.91 and MRR from 0.77 to 0.81 over the lexical ranker
/// alone.
#[derive(Clone)]
pub struct HybridRanker {
    cached: Arc<Cached>,
    /// The lexical ranking.
    pub lexical: Bm25fRanker,
    /// The share of the lexical score in the sum (default 0.25); the cosine has the rest.
    pub lexical_weight: f32,
    /// The similarity at which a tool is a result whatever words it shares (default 0.3).
    pub min_similarity: f32,
}

impl std::fmt::Debug for HybridRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridRanker")
            .field("lexical", &self.lexical)
            .field("lexical_weight", &self.lexical_weight)
            .field("min_similarity", &self.min_similarity)
            .finish_non_exhaustive()
    }
}

impl HybridRanker {
    /// [`Bm25fRanker::default`] fused with `embedder`'s vectors, at the default weights.
    pub fn new(embedder: impl Embedder + 'static) -> HybridRanker {
        HybridRanker {
            cached: Cached::new(Arc::new(embedder)),
            lexical: Bm25fRanker::default(),
            lexical_weight: 0.25,
            min_similarity: 0.3,
        }
    }
}

impl Ranker for HybridRanker {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        Box::new(HybridScorer {
            lexical: self.lexical.prepare(corpus),
            dense: Dense::prepare(&self.cached, corpus),
            lexical_weight: self.lexical_weight.clamp(0.0, 1.0),
            min_similarity: self.min_similarity,
        })
    }
}

struct HybridScorer {
    lexical: Box<dyn Scorer>,
    dense: Dense,
    lexical_weight: f32,
    min_similarity: f32,
}

impl Scorer for HybridScorer {
    fn is_blocking(&self) -> bool {
        self.dense.vectors.is_some()
    }

    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let start = out.len();
        self.lexical.rank(corpus, query, out);
        let Some(similarities) = self.dense.similarities(query) else { return };
        let best = out[start..].iter().map(|c| c.score).fold(0f32, f32::max);
        let scale = if best > 0.0 { self.lexical_weight / best } else { 0.0 };
        let semantic = 1.0 - self.lexical_weight;
        let all = query.coverage_terms() as u32;
        let mut seen = vec![false; similarities.len()];
        for c in &mut out[start..] {
            let similarity = similarities[c.doc as usize];
            seen[c.doc as usize] = true;
            c.score = c.score * scale + semantic * similarity;
            if similarity >= self.min_similarity {
                c.matched = all;
                c.coverage = 1.0;
            }
        }
        for (doc, &similarity) in similarities.iter().enumerate() {
            if !seen[doc] && similarity >= self.min_similarity {
                out.push(Candidate {
                    doc: doc as u32,
                    score: semantic * similarity,
                    matched: all,
                    coverage: 1.0,
                });
            }
        }
    }
}
