//! Ranking: the [`Ranker`] trait and the default lexical ranker, [`Bm25fRanker`].

use std::cell::RefCell;

use super::corpus::{Corpus, Field, Query};
use super::spell::Vocabulary;

/// One scored document, as a ranker returns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The document's position in [`Corpus::docs`].
    pub doc: u32,
    /// Higher is better. Must be finite.
    pub score: f32,
    /// How many of the query's coverage terms ([`Query::coverage_terms`]) the document contains.
    /// The index drops candidates under its coverage threshold; a ranker matching by meaning
    /// rather than by words may report `query.coverage_terms()` to opt out of it.
    pub matched: u32,
    /// The share of the query's information the document contains: the IDF of the coverage
    /// terms it contains over the IDF of all of them (a term no document contains counts at the
    /// highest IDF), from 0 to 1. The index keeps a candidate under the term-count threshold when
    /// this share is close to the best candidate's (see
    /// [`SearchOptions::relative`](super::SearchOptions::relative)); a ranker opting out of the
    /// threshold reports 1.
    pub coverage: f32,
}

/// A way of ranking documents for queries.
///
/// [`SearchIndex::build`](super::SearchIndex::build) calls [`prepare`](Ranker::prepare) once with
/// the analyzed [`Corpus`] (documents, vocabulary, postings, field lengths); the [`Scorer`] it
/// returns then answers every query of that index. A ranker is configuration: keep one (e.g. in an
/// `Arc<dyn Ranker>`) and prepare it again for each new catalog. The rankers by meaning,
/// [`HybridRanker`](super::HybridRanker) and [`EmbeddingRanker`](super::EmbeddingRanker), embed
/// each document in `prepare` and the query text ([`Query::text`]) in [`Scorer::rank`].
pub trait Ranker: Send + Sync {
    /// Precomputes what scoring needs for this corpus.
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer>;
}

/// A [`Ranker`] prepared for one corpus.
pub trait Scorer: Send + Sync {
    /// Pushes onto `out` the documents that match `query`, with scores, in any order. The index
    /// then applies the coverage threshold and the tag filter, sorts (score descending, then name)
    /// and pages.
    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>);

    /// Whether a query takes long enough (milliseconds: running a model) that the server should
    /// search on a blocking thread rather than on its async workers. Default `false`.
    fn is_blocking(&self) -> bool {
        false
    }

    /// Whether the scorer ranks as well as it will: `false` while a model is still embedding
    /// the catalog in the background (meanwhile it ranks by words). Default `true`.
    fn is_ready(&self) -> bool {
        true
    }

    /// Blocks until [`is_ready`](Scorer::is_ready). Default: returns at once.
    fn wait_ready(&self) {}

    /// Whether queries are ranked by meaning now ([`Meaning`]). Default
    /// [`Meaning::NotUsed`]: a ranker by words alone.
    fn meaning(&self) -> Meaning {
        Meaning::NotUsed
    }

    /// Waits at most `timeout` while the scorer is [`Meaning::Building`] (before a model's first
    /// vectors of the catalog exist), then says how queries rank. Default: returns at once.
    fn wait_for_meaning(&self, timeout: std::time::Duration) -> Meaning {
        let _ = timeout;
        self.meaning()
    }

    /// The vocabulary with which the index corrects a query's misspelt words before ranking
    /// (see [`Corpus::correct`]); `None` (the default) corrects nothing.
    fn vocabulary(&self) -> Option<&Vocabulary> {
        None
    }
}

/// Whether a [`Scorer`] ranks queries by meaning ([`Scorer::meaning`]); deferred search says in
/// its result when a ranker by meaning ranked by words instead (`rankedBy: "words"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Meaning {
    /// The scorer ranks by words alone, by design (as [`Bm25fRanker`] does).
    NotUsed,
    /// A model is embedding the catalog: until its first vectors exist, queries rank by words.
    Building,
    /// Queries rank by meaning.
    Ready,
    /// Embedding the catalog failed (the reason is logged): queries rank by words.
    Failed,
}

/// BM25F: BM25 over several fields, each with its own weight and length normalisation, the
/// weighted term frequencies summed before saturation (Robertson & Zaragoza's "simple BM25F").
///
/// For a query term `t` and a document `d`:
/// `tf~ = Σ_f weight_f · tf_f(t, d) / (1 − b_f + b_f · len_f(d) / avglen_f)`, and the document
/// scores `Σ_t qw_t · idf(t) · tf~ / (k1 + tf~)` with `idf(t) = ln(1 + (N − df + ½) / (df + ½))`
/// and `qw_t` 1 for a part term, [`whole_weight`](Bm25fRanker::whole_weight) for the whole form of
/// a multi-part word (`get_weather`). The sum is multiplied by
/// `(matched / coverage_terms) ^ coordination`, favouring documents that contain more of the
/// query's distinct terms.
///
/// Everything per (term, document) is precomputed by [`Ranker::prepare`]: a query costs one pass
/// over the postings of its terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Bm25fRanker {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Each field's weight, by `Field as usize`.
    pub weights: [f32; Field::COUNT],
    /// Each field's length normalisation (0: none, 1: full), by `Field as usize`.
    pub b: [f32; Field::COUNT],
    /// The query weight of a whole form (`get_weather` in a query), relative to a part term's 1.
    pub whole_weight: f32,
    /// The exponent of the coverage factor `matched / coverage_terms`; 0 turns it off.
    pub coordination: f32,
}

impl Default for Bm25fRanker {
    /// Parameters tuned on the BFCL pooled retrieval benchmark (`bench/retrieval.md`).
    fn default() -> Self {
        Bm25fRanker {
            k1: 1.6,
            //         name title summ  desc  tags  pname pdesc value
            weights: [3.0, 2.0, 0.2, 1.0, 1.5, 1.0, 0.4, 3.0],
            b: [0.7, 0.5, 0.75, 1.0, 0.5, 0.5, 0.35, 0.1],
            whole_weight: 2.0,
            coordination: 0.35,
        }
    }
}

impl Bm25fRanker {
    /// Sets one field's weight.
    pub fn with_weight(mut self, field: Field, weight: f32) -> Self {
        self.weights[field as usize] = weight;
        self
    }

    /// Sets one field's length normalisation.
    pub fn with_b(mut self, field: Field, b: f32) -> Self {
        self.b[field as usize] = b;
        self
    }
}

impl Ranker for Bm25fRanker {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        let n = corpus.len();
        let vocabulary = corpus.vocabulary_len();
        // Per document and field: weight / (1 − b + b·len/avg).
        let mut norms = Vec::with_capacity(n);
        for d in 0..n {
            let mut row = [0f32; Field::COUNT];
            for field in Field::ALL {
                let f = field as usize;
                let avg = corpus.avg_field_len(field);
                let ratio = if avg > 0.0 { corpus.field_len(d, field) as f32 / avg } else { 1.0 };
                // A field of length 0 holds no term, so its norm is never used; keep it finite.
                let ratio = ratio.max(1e-3);
                row[f] = self.weights[f] / (1.0 - self.b[f] + self.b[f] * ratio);
            }
            norms.push(row);
        }
        let mut offsets = Vec::with_capacity(vocabulary + 1);
        let mut entries = Vec::with_capacity(corpus.postings_len());
        offsets.push(0u32);
        for t in 0..vocabulary as u32 {
            let postings = corpus.postings(t);
            let idf = idf(n, postings.len());
            for p in postings {
                let norm = &norms[p.doc as usize];
                let mut tf = 0f32;
                for (&count, &norm) in p.tf.iter().zip(norm) {
                    if count > 0 {
                        tf += count as f32 * norm;
                    }
                }
                if tf > 0.0 {
                    entries.push(Entry { doc: p.doc, weight: idf * tf / (self.k1 + tf) });
                }
            }
            offsets.push(entries.len() as u32);
        }
        let idfs = (0..vocabulary as u32).map(|t| idf(n, corpus.doc_freq(t))).collect();
        Box::new(Bm25fScorer { params: self.clone(), offsets, entries, idf: idfs, unknown_idf: idf(n, 0) })
    }
}

/// `ln(1 + (N − df + ½) / (df + ½))`.
fn idf(n: usize, df: usize) -> f32 {
    let (n, df) = (n as f32, df as f32);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

#[derive(Clone, Copy)]
struct Entry {
    doc: u32,
    /// `idf · tf~ / (k1 + tf~)`.
    weight: f32,
}

struct Bm25fScorer {
    params: Bm25fRanker,
    /// The entries of term `t`: `entries[offsets[t]..offsets[t + 1]]`.
    offsets: Vec<u32>,
    entries: Vec<Entry>,
    /// Each term's IDF, and that of a term no document contains.
    idf: Vec<f32>,
    unknown_idf: f32,
}

/// Per-thread accumulators, reused across queries (and indexes): a document's slot is valid
/// only when its stamp is the current query's.
#[derive(Default)]
struct Scratch {
    stamp: u32,
    stamps: Vec<u32>,
    scores: Vec<f32>,
    matched: Vec<u32>,
    /// The IDF of the coverage terms matched.
    information: Vec<f32>,
    touched: Vec<u32>,
}

impl Scratch {
    /// Starts a query over `n` documents.
    fn begin(&mut self, n: usize) {
        if self.stamps.len() < n {
            self.stamps.resize(n, 0);
            self.scores.resize(n, 0.0);
            self.matched.resize(n, 0);
            self.information.resize(n, 0.0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.fill(0);
            self.stamp = 1;
        }
        self.touched.clear();
    }

    #[inline]
    fn add(&mut self, doc: u32, score: f32, matched: u32, information: f32) {
        let d = doc as usize;
        if self.stamps[d] != self.stamp {
            self.stamps[d] = self.stamp;
            self.scores[d] = score;
            self.matched[d] = matched;
            self.information[d] = information;
            self.touched.push(doc);
        } else {
            self.scores[d] += score;
            self.matched[d] += matched;
            self.information[d] += information;
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Scorer for Bm25fScorer {
    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let p = &self.params;
        let coverage = query.coverage_terms().max(1) as f32;
        let total: f32 = query
            .terms()
            .iter()
            .filter(|t| !t.whole)
            .map(|t| t.id.map_or(self.unknown_idf, |id| self.idf[id as usize]))
            .sum();
        let total = total.max(f32::MIN_POSITIVE);
        // The coordination factor for each count of matched terms a document can reach, computed
        // once per query rather than once per document (`powf` was a fifth of a search).
        let reachable = query.terms().iter().filter(|t| !t.whole && t.id.is_some()).count();
        let factor = |matched: u32| (matched as f32 / coverage).powf(p.coordination);
        let factors: Vec<f32> =
            if p.coordination > 0.0 { (0..=reachable as u32).map(factor).collect() } else { Vec::new() };
        SCRATCH.with_borrow_mut(|scratch| {
            scratch.begin(corpus.len());
            for term in query.terms() {
                let Some(id) = term.id else { continue };
                let qw = if term.whole { p.whole_weight } else { 1.0 };
                let matched = u32::from(!term.whole);
                let t = id as usize;
                let information = if term.whole { 0.0 } else { self.idf[t] };
                for e in &self.entries[self.offsets[t] as usize..self.offsets[t + 1] as usize] {
                    scratch.add(e.doc, qw * e.weight, matched, information);
                }
            }
            out.reserve(scratch.touched.len());
            for &doc in &scratch.touched {
                let d = doc as usize;
                let matched = scratch.matched[d];
                let mut score = scratch.scores[d];
                if p.coordination > 0.0 {
                    score *= factors.get(matched as usize).copied().unwrap_or_else(|| factor(matched));
                }
                let coverage = (scratch.information[d] / total).min(1.0);
                out.push(Candidate { doc, score, matched, coverage });
            }
        });
    }
}
