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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

use super::analyze::{Piece, Splitter};
use super::corpus::{Corpus, Query, SearchDoc};
use super::rank::{Bm25fRanker, Candidate, Meaning, Ranker, Scorer};
use super::spell::Vocabulary;

/// The error of an [`Embedder`].
pub type EmbedError = Box<dyn std::error::Error + Send + Sync>;

/// Turns texts into vectors whose cosine similarity reflects how close their meanings are.
///
/// Every vector of one call must have the same length; they need not be normalised (the rankers
/// normalise them). Implementations should batch: [`Ranker::prepare`] passes every tool's text
/// to [`embed`](Embedder::embed) (in chunks), a search passes its request (and the request's
/// steps) to [`embed_queries`](Embedder::embed_queries) in one call.
pub trait Embedder: Send + Sync {
    /// One vector per text, in order: the tools' texts (documents) are embedded through this.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// One vector per search request, in order. The default is [`embed`](Embedder::embed);
    /// a model trained with a prompt before its queries (`query: `, `Represent this sentence
    /// for searching relevant passages: `) embeds them with it here.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }

    /// Identifies the model (and its version), so that vectors saved in a ranker's cache file
    /// ([`HybridRanker::cache_file`]) are reused only by the same model. The default, empty,
    /// trusts the file.
    fn model_id(&self) -> String {
        String::new()
    }

    /// The whole words of the language the model knows, most common first, used to correct
    /// a request's misspelt words (see [`Corpus::correct`]): a word neither the catalog nor
    /// this vocabulary knows is replaced by the catalog word one edit away. The default, `None`,
    /// corrects nothing.
    fn vocabulary(&self) -> Option<&Vocabulary> {
        None
    }
}

impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed_queries(texts)
    }

    fn model_id(&self) -> String {
        (**self).model_id()
    }

    fn vocabulary(&self) -> Option<&Vocabulary> {
        (**self).vocabulary()
    }
}

/// The text of a tool that [`HybridRanker`] embeds by default: its name as words, title, the
/// first sentence of its description (or of its summary), tags, and its parameters' names
/// (`get weather: Weather of a city. Parameters: city, unit.`).
///
/// Short on purpose: on the retrieval sets of `bench/retrieval.md`, this text ranks better
/// than the whole definition ([`full_embedding_text`]) on the two sets of real MCP tools and
/// GitHub's operations (hit@5 +0.03 to +0.05), within 0.006 of it on BFCL, and embeds 4 to 8
/// times faster (a sentence-embedding model weighs every token the same: long descriptions and
/// parameter documentation drown the tool's purpose). With the whole definition's vector added
/// at a smaller weight ([`HybridRanker::detail_weight`], which `HybridRanker::from_model` sets,
/// with the `embeddings` feature), it ranks better than either alone on every set.
pub fn embedding_text(doc: &SearchDoc) -> String {
    let description = if doc.description.is_empty() { &doc.summary } else { &doc.description };
    let short = SearchDoc {
        description: first_sentence(description).to_owned(),
        summary: String::new(),
        params: doc.params.iter().map(|(name, _)| (name.clone(), String::new())).collect(),
        ..doc.clone()
    };
    full_embedding_text(&short)
}

/// The text up to the end of its first sentence (a period followed by a space) or line.
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| c == '\n' || (c == '.' && text[i + 1..].starts_with(char::is_whitespace)))
        .map_or(text.len(), |(i, c)| i + c.len_utf8());
    text[..end].trim()
}

/// The whole definition of a tool as one text: its name as words, title, description (or
/// summary), tags, and its parameters' names and descriptions
/// (`get weather: Weather of a city. Parameters: city, unit. city: The city's name. …`).
/// Set it as [`HybridRanker::text`] to embed everything.
pub fn full_embedding_text(doc: &SearchDoc) -> String {
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

/// An [`Embedder`] with the vectors of the texts it last embedded kept (in memory, and in a
/// file if one is set), so that preparing a changed catalog, or the same catalog after a
/// restart, embeds only the tools that are new or changed.
struct Cached {
    embedder: Arc<dyn Embedder>,
    file: Option<PathBuf>,
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    vectors: HashMap<String, Arc<[f32]>>,
    /// Whether the file was read (it is read at the first preparation).
    loaded: bool,
}

impl Cached {
    fn new(embedder: Arc<dyn Embedder>, file: Option<PathBuf>) -> Arc<Cached> {
        Arc::new(Cached { embedder, file, state: Mutex::default() })
    }

    /// With the model's file in the user's cache folder, if it has a model id.
    fn with_default_file(embedder: Arc<dyn Embedder>) -> Arc<Cached> {
        let file = default_cache_file(&embedder.model_id());
        Cached::new(embedder, file)
    }

    /// The unit vectors of `texts` (one per document), or why there are none. Embeds what the
    /// cache lacks in chunks, giving up between two chunks once `abandoned` says so. The vectors
    /// of `keep` (the catalog's other texts) stay in the cache with those of `texts`.
    fn documents(
        &self,
        texts: &[String],
        keep: &[String],
        abandoned: &dyn Fn() -> bool,
        done: &str,
    ) -> Result<Vectors, EmbedError> {
        let started = std::time::Instant::now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *state;
        let model = self.embedder.model_id();
        if !state.loaded {
            state.loaded = true;
            if let Some(file) = &self.file {
                match read_vectors(file, &model) {
                    Ok(vectors) => state.vectors = vectors,
                    Err(error) => tracing::warn!(file = %file.display(), %error, "embedding cache not used"),
                }
            }
        }
        let cache = &mut state.vectors;
        // Twice at most: vectors of two lengths mean stale ones (from a file written by another
        // embedder under the same model id); the second round embeds everything anew.
        for second in [false, true] {
            let mut missing: Vec<&str> =
                texts.iter().map(String::as_str).filter(|t| !cache.contains_key(*t)).collect();
            missing.sort_unstable();
            missing.dedup();
            // Texts of similar lengths in the same chunk: the embedder pads a batch to its
            // longest text.
            missing.sort_by_key(|t| t.len());
            for chunk in missing.chunks(EMBED_CHUNK) {
                if abandoned() {
                    return Err("abandoned: the catalog was replaced or dropped".into());
                }
                let embedded = self.embed(chunk)?;
                if embedded.len() != chunk.len() {
                    let (n, m) = (embedded.len(), chunk.len());
                    return Err(format!("the embedder returned {n} vectors for {m} texts").into());
                }
                for (text, vector) in chunk.iter().zip(embedded) {
                    cache.insert((*text).to_owned(), normalized(vector)?);
                }
            }
            let wanted: HashSet<&str> = texts.iter().chain(keep).map(String::as_str).collect();
            let before = cache.len();
            // The file may be shared by several catalogs (the per-user default is one file per
            // model): others' vectors stay unless the cache grows past its bound.
            if cache.len() > MAX_CACHED {
                cache.retain(|text, _| wanted.contains(text.as_str()));
            }
            let dim = texts.first().map_or(0, |t| cache[t.as_str()].len());
            if let Some(other) = texts.iter().map(|t| cache[t.as_str()].len()).find(|&n| n != dim) {
                cache.retain(|text, _| !wanted.contains(text.as_str()));
                if second {
                    return Err(
                        format!("the embedder returned vectors of {dim} and {other} dimensions").into()
                    );
                }
                continue;
            }
            if let Some(file) = &self.file
                && (!missing.is_empty() || cache.len() != before || !file.exists())
                && let Err(error) = write_vectors(file, &model, cache)
            {
                tracing::warn!(file = %file.display(), %error, "could not save the embedding cache");
            }
            let mut data = Vec::with_capacity(dim * texts.len());
            for text in texts {
                data.extend_from_slice(&cache[text.as_str()]);
            }
            tracing::info!(
                tools = texts.len(),
                embedded = missing.len(),
                seconds = started.elapsed().as_secs_f64(),
                "{done}"
            );
            return Ok(Vectors { dim, data });
        }
        unreachable!("the second round returns")
    }

    /// The unit vectors of queries (one model call for all).
    fn queries(&self, texts: &[&str]) -> Result<Vec<Arc<[f32]>>, EmbedError> {
        let vectors = guarded(|| self.embedder.embed_queries(texts))?;
        if vectors.len() != texts.len() {
            return Err(format!(
                "the embedder returned {} vectors for {} queries",
                vectors.len(),
                texts.len()
            )
            .into());
        }
        vectors.into_iter().map(normalized).collect()
    }

    /// The embedder's vectors of documents, a panic in it being an error like any other.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        guarded(|| self.embedder.embed(texts))
    }
}

/// An embedder's answer, a panic in it being an error like any other.
fn guarded(embed: impl FnOnce() -> Result<Vec<Vec<f32>>, EmbedError>) -> Result<Vec<Vec<f32>>, EmbedError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(embed))
        .unwrap_or_else(|panic| Err(format!("the embedder panicked: {}", panic_message(&*panic)).into()))
}

/// The message of a caught panic.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// Texts embedded between two checks for abandonment.
const EMBED_CHUNK: usize = 128;

/// The most vectors a cache keeps; past it, only the current catalog's stay.
const MAX_CACHED: usize = 20_000;

/// The default cache file of a model: `mcp-tools/embeddings-<hash of the model id>.bin` in the
/// user's cache folder (`$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS,
/// `%LOCALAPPDATA%` on Windows); none for an embedder without a model id, or without a home.
pub(super) fn default_cache_file(model: &str) -> Option<PathBuf> {
    use sha2::Digest;
    if model.is_empty() {
        return None;
    }
    let digest = sha2::Sha256::digest(model.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Some(dirs::cache_dir()?.join("mcp-tools").join(format!("embeddings-{hex}.bin")))
}

/// The first line of a cache file.
const MAGIC: &[u8] = b"mcp-tools embedding cache 1\n";

/// Reads a cache file: the magic line, then little-endian `u32`-length-prefixed model id, and
/// for each entry its length-prefixed text and its length-prefixed vector of `f32`s.
fn read_vectors(path: &Path, model: &str) -> Result<HashMap<String, Arc<[f32]>>, EmbedError> {
    let mut bytes = Vec::new();
    match std::fs::File::open(path) {
        Ok(mut file) => file.read_to_end(&mut bytes)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(e.into()),
    };
    let mut rest = bytes.strip_prefix(MAGIC).ok_or("not an embedding cache file")?;
    fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], EmbedError> {
        if rest.len() < n {
            return Err("the file is truncated".into());
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Ok(head)
    }
    fn len(rest: &mut &[u8]) -> Result<usize, EmbedError> {
        Ok(u32::from_le_bytes(take(rest, 4)?.try_into().expect("4 bytes")) as usize)
    }
    let n = len(&mut rest)?;
    let id = take(&mut rest, n)?;
    if id != model.as_bytes() {
        return Err(format!("saved by model `{}`, not `{model}`", String::from_utf8_lossy(id)).into());
    }
    let mut vectors = HashMap::new();
    while !rest.is_empty() {
        let n = len(&mut rest)?;
        let text = std::str::from_utf8(take(&mut rest, n)?)?.to_owned();
        let n = len(&mut rest)?;
        let vector: Arc<[f32]> = take(&mut rest, n.checked_mul(4).ok_or("the file is corrupt")?)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        vectors.insert(text, vector);
    }
    Ok(vectors)
}

/// Writes a cache file (to a temporary file first, renamed over the old one).
fn write_vectors(path: &Path, model: &str, vectors: &HashMap<String, Arc<[f32]>>) -> std::io::Result<()> {
    let length = |n: usize| {
        u32::try_from(n).map(u32::to_le_bytes).map_err(|_| std::io::Error::other("an entry is too long"))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // A name of this process's own: two servers may save the same shared file at once.
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(name);
    let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
    out.write_all(MAGIC)?;
    out.write_all(&length(model.len())?)?;
    out.write_all(model.as_bytes())?;
    let mut entries: Vec<_> = vectors.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (text, vector) in entries {
        out.write_all(&length(text.len())?)?;
        out.write_all(text.as_bytes())?;
        out.write_all(&length(vector.len())?)?;
        for x in vector.iter() {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
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

/// The dot product, summed in 8 lanes so that the compiler can use SIMD (a sum in one
/// accumulator must keep its order and cannot be vectorised).
#[inline]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8.remainder().iter().zip(b8.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a8.zip(b8) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The documents' unit vectors, row by row.
struct Vectors {
    dim: usize,
    data: Vec<f32>,
}

/// How far the document vectors of one catalog are.
#[derive(Default)]
struct Progress {
    /// Set once: `Some` vectors, or `None` when embedding the catalog failed.
    vectors: OnceLock<Option<Vectors>>,
    /// Set once, after `vectors`, when the tools have second texts ([`Detail`]): the vectors
    /// with the second ones added, or `None` when embedding those failed (the first stay).
    refined: OnceLock<Option<Vectors>>,
    lock: Mutex<()>,
    done: Condvar,
}

impl Progress {
    fn finish(&self, vectors: Option<Vectors>) {
        let _ = self.vectors.set(vectors);
        self.notify();
    }

    fn refine(&self, vectors: Option<Vectors>) {
        let _ = self.refined.set(vectors);
        self.notify();
    }

    fn notify(&self) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.done.notify_all();
    }
}

/// Each tool's second text and the weight of its vector (see [`HybridRanker::detail_weight`]).
#[derive(Clone, Copy)]
struct Detail {
    text: fn(&SearchDoc) -> String,
    weight: f32,
}

impl Detail {
    /// `(1 − weight) · first + weight · second`, row by row, as unit vectors.
    fn mix(self, first: &Vectors, second: &Vectors) -> Result<Vectors, EmbedError> {
        if first.dim != second.dim || first.data.len() != second.data.len() {
            let (a, b) = (first.dim, second.dim);
            return Err(format!("the second texts' vectors have {b} dimensions, the first texts' {a}").into());
        }
        let mut data = Vec::with_capacity(first.data.len());
        let dim = first.dim.max(1);
        for (a, b) in first.data.chunks(dim).zip(second.data.chunks(dim)) {
            let row = a.iter().zip(b).map(|(a, b)| (1.0 - self.weight) * a + self.weight * b).collect();
            data.extend_from_slice(&normalized(row)?);
        }
        Ok(Vectors { dim: first.dim, data })
    }
}

/// The document vectors of one catalog (built on a thread of their own unless the ranker says
/// otherwise), and the embedder for queries.
struct Dense {
    cached: Arc<Cached>,
    progress: Arc<Progress>,
    /// Whether the tools have second texts to embed after the first.
    detailed: bool,
}

impl Dense {
    fn prepare(
        cached: &Arc<Cached>,
        corpus: &Corpus,
        background: bool,
        text: fn(&SearchDoc) -> String,
        detail: Option<Detail>,
    ) -> Dense {
        let texts: Vec<String> = corpus.docs().iter().map(text).collect();
        let detail = detail.filter(|_| !texts.is_empty());
        let details: Vec<String> = match detail {
            Some(detail) => corpus.docs().iter().map(detail.text).collect(),
            None => Vec::new(),
        };
        let progress = Arc::new(Progress::default());
        let detailed = detail.is_some();
        let empty = texts.is_empty();
        // The first texts, then the second ones (if any), each published as it is done: the
        // index ranks by the first vectors while the second are embedded. `alive` is the
        // progress, while anyone wants it.
        let build = move |cached: &Cached, alive: &dyn Fn() -> Option<Arc<Progress>>| {
            let abandoned = || alive().is_none();
            let first = match cached.documents(&texts, &[], &abandoned, "semantic search index ready") {
                Ok(vectors) => Some(vectors),
                Err(error) => {
                    tracing::error!(%error, "embedding the tool catalog failed; searching by words only");
                    None
                }
            };
            let failed = first.is_none();
            let Some(progress) = alive() else { return };
            progress.finish(first);
            let Some(detail) = detail.filter(|_| !failed) else { return };
            drop(progress);
            let second = cached.documents(
                &details,
                &texts,
                &abandoned,
                "semantic search index refined by the second texts",
            );
            let Some(progress) = alive() else { return };
            let Some(Some(first)) = progress.vectors.get() else { return };
            match second.and_then(|second| detail.mix(first, &second)) {
                Ok(vectors) => progress.refine(Some(vectors)),
                Err(error) => {
                    tracing::error!(%error, "embedding the tools' second texts failed; searching by their first");
                    progress.refine(None);
                }
            }
        };
        if !background || empty {
            let strong = progress.clone();
            build(cached, &|| Some(strong.clone()));
            return Dense { cached: cached.clone(), progress, detailed };
        }
        // The thread holds the progress weakly: once the index is dropped (a replaced catalog,
        // a stopped server) it stops at its next chunk.
        let weak: Weak<Progress> = Arc::downgrade(&progress);
        let thread_cached = cached.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-tools-embed".into())
            .spawn(move || build(&thread_cached, &|| weak.upgrade()));
        if let Err(error) = spawned {
            tracing::error!(%error, "could not start embedding the tool catalog; searching by words only");
            progress.finish(None);
        }
        Dense { cached: cached.clone(), progress, detailed }
    }

    /// The embedder's vocabulary, when spelling is to be corrected.
    fn vocabulary(&self, correct_spelling: bool) -> Option<&Vocabulary> {
        if correct_spelling { self.cached.embedder.vocabulary() } else { None }
    }

    /// The vectors, once built (`None` while building, or when building failed): with the
    /// second texts' added once they are, the first texts' alone until then.
    fn vectors(&self) -> Option<&Vectors> {
        let refined = self.progress.refined.get().and_then(Option::as_ref);
        refined.or_else(|| self.progress.vectors.get().and_then(Option::as_ref))
    }

    /// Whether building is over: every vector embedded, or building failed.
    fn is_ready(&self) -> bool {
        match self.progress.vectors.get() {
            None => false,
            Some(None) => true,
            Some(Some(_)) => !self.detailed || self.progress.refined.get().is_some(),
        }
    }

    fn wait_ready(&self) {
        let mut guard = self.progress.lock.lock().unwrap_or_else(|e| e.into_inner());
        while !self.is_ready() {
            guard = self.progress.done.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether queries rank by meaning: once the first vectors exist.
    fn meaning(&self) -> Meaning {
        match self.progress.vectors.get() {
            None => Meaning::Building,
            Some(None) => Meaning::Failed,
            Some(Some(_)) => Meaning::Ready,
        }
    }

    /// Waits at most `timeout` for the first vectors (or for building to fail).
    fn wait_for_meaning(&self, timeout: std::time::Duration) -> Meaning {
        let start = std::time::Instant::now();
        let mut guard = self.progress.lock.lock().unwrap_or_else(|e| e.into_inner());
        // `finish` sets the vectors, then notifies under the lock: checked under it, no wake-up
        // is missed.
        while self.progress.vectors.get().is_none() {
            let Some(left) = timeout.checked_sub(start.elapsed()).filter(|left| !left.is_zero()) else {
                break;
            };
            guard = match self.progress.done.wait_timeout(guard, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        drop(guard);
        self.meaning()
    }

    /// The cosine similarity of the query to each document, or `None` when there is no
    /// embedding (logged).
    fn similarities(&self, query: &Query<'_>, split: bool, drop_values: bool) -> Option<Vec<f32>> {
        let vectors = self.vectors()?;
        let clean = |t: &'_ str| if drop_values { without_values(t).into_owned() } else { t.to_owned() };
        let mut owned = vec![clean(query.text())];
        if split {
            let steps = steps(query.text());
            if steps.len() > 1 {
                owned.extend(steps.into_iter().map(clean));
            }
        }
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let queries = match self.cached.queries(&texts) {
            Ok(q) if q.iter().all(|q| q.len() == vectors.dim) => q,
            Ok(q) => {
                tracing::error!(query = q[0].len(), documents = vectors.dim, "embedding dimensions differ");
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
        // A task of several steps: each tool is as close as it is to the whole or to one step.
        Some(
            vectors
                .data
                .chunks_exact(vectors.dim)
                .map(|d| queries.iter().map(|q| dot(d, q)).fold(f32::MIN, f32::max))
                .collect(),
        )
    }
}

/// The most steps a query is split into.
const MAX_STEPS: usize = 6;

/// The steps of a request that asks for several things (`find the cheapest flight to Oslo, then
/// add it to my calendar` → `find the cheapest flight to Oslo`, `add it to my calendar`): split
/// at sentence ends, semicolons and line breaks, and before `then`, `after that`, `afterwards`,
/// `also`, `finally`, `additionally`, `as well as` and `and`. Parts of fewer than two words join
/// the step before, and so does a part that a bare `and` opens with fewer than two words after
/// it (`Tom and Jerry`). One step (or none) for a simple request; at most
/// six. (Splitting at `and` as well lifts the share of multi-step tasks with every needed tool
/// in the first 5 on the public sets of `bench/retrieval-loso.md`: MetaTool's from 0.46 to 0.52.)
pub fn steps(query: &str) -> Vec<&str> {
    const CONNECTORS: [&str; 10] = [
        "and then",
        "then",
        "after that",
        "afterwards",
        "and also",
        "also",
        "finally",
        "additionally",
        "as well as",
        "and",
    ];
    let bytes = query.as_bytes();
    let quoted = quoted(query);
    let mut cuts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        // Quoted text is a value (`send 'rooms and a stay' to Ann`), not a step.
        if let Some(&(_, end)) = quoted.iter().find(|(start, end)| (*start..*end).contains(&i)) {
            i = end;
            continue;
        }
        let c = bytes[i];
        let at_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let sentence_end = matches!(c, b'.' | b'?' | b'!' | b';' | b'\n')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        // `, and …`: the comma is ASCII, so the next byte starts a character.
        let comma_and = c == b',' && {
            let rest = query[i + 1..].trim_start().as_bytes();
            rest.len() > 4 && rest[..4].eq_ignore_ascii_case(b"and ")
        };
        if sentence_end || comma_and {
            cuts.push(i + 1);
        } else if at_word && c.is_ascii_alphabetic() {
            let rest = &query[i..];
            if let Some(connector) = CONNECTORS.iter().find(|k| {
                rest.len() >= k.len()
                    && rest.is_char_boundary(k.len())
                    && rest[..k.len()].eq_ignore_ascii_case(k)
                    && rest.as_bytes().get(k.len()).is_none_or(|n| !n.is_ascii_alphanumeric())
            }) {
                cuts.push(i);
                i += connector.len();
                continue;
            }
        }
        i += 1;
    }
    cuts.push(query.len());
    // Each step as a byte range of the query; a part too short to stand alone joins the step
    // before (or, first, the one after: its start stays).
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for &end in &cuts[1..] {
        let part = &query[start..end];
        let words = part.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count();
        // A bare `and` joins parts of one step as often as it starts another (`area and
        // perimeter`): it starts one only before two words or more.
        let mut lead = part.split_whitespace();
        let bare_and = lead.next().is_some_and(|w| w.eq_ignore_ascii_case("and"))
            && lead
                .next()
                .is_some_and(|w| !w.eq_ignore_ascii_case("then") && !w.eq_ignore_ascii_case("also"));
        if words >= 2 + usize::from(bare_and) {
            ranges.push((start, end));
            start = end;
        } else if let Some(last) = ranges.last_mut() {
            last.1 = end;
            start = end;
        }
    }
    let mut out: Vec<&str> =
        ranges.iter().map(|&(a, b)| query[a..b].trim().trim_end_matches([',', ';']).trim()).collect();
    out.retain(|s| !s.is_empty());
    out.truncate(MAX_STEPS);
    out
}

/// Where `part`, a slice of `whole`, starts in it (in bytes).
fn offset(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// The byte ranges of a request's quoted passages: from a quote that opens a word (`'`, `"`,
/// `‘`, `“`) to the first word after it that ends with the matching quote (before trailing
/// punctuation), as [`without_values`] finds them; an apostrophe inside a word opens nothing.
fn quoted(request: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let words: Vec<(usize, &str)> = request.split_whitespace().map(|w| (offset(request, w), w)).collect();
    let mut i = 0;
    while i < words.len() {
        let (at, word) = words[i];
        let open_at = word.len() - word.trim_start_matches('(').len();
        let Some(open) = word[open_at..].chars().next().filter(|c| matches!(c, '\'' | '"' | '‘' | '“'))
        else {
            i += 1;
            continue;
        };
        let close = match open {
            '‘' => '’',
            '“' => '”',
            c => c,
        };
        let ends = |j: usize| {
            let w = words[j].1.trim_end_matches(['?', '.', ',', '!', ':', ';', ')']);
            w.ends_with(close) && (j > i || w[open_at..].chars().count() > 1)
        };
        match (i..words.len()).find(|&j| ends(j)) {
            Some(end) => {
                spans.push((at + open_at, words[end].0 + words[end].1.len()));
                i = end + 1;
            }
            None => i += 1,
        }
    }
    spans
}

/// The words of a request without the values it carries, which say little about which tool
/// serves it: quoted text (`'Add OAuth login'`) and tokens such as `acme/api#88`, `v1.2.0`,
/// `abc1234`, `a@b.io` or `env=staging` (a slash, `#`, `@`, `=` or `_`, or digits mixed with
/// letters). Plain numbers and numbers with a short unit (`52`, `5m`, `22nd`) stay. When
/// nothing with a letter would be left, the request is returned whole. Rankers by meaning embed
/// this rather than the request (see [`HybridRanker::drop_values`]).
///
/// ```
/// use mcp_tools::deferred::without_values;
///
/// assert_eq!(without_values("close #42 in acme/api, it's fixed"), "close in it's fixed");
/// assert_eq!(without_values("add a todo 'go to gym tomorrow.'"), "add a todo");
/// assert_eq!(without_values("area of a triangle with base 5m"), "area of a triangle with base 5m");
/// assert_eq!(without_values("acme/api#88"), "acme/api#88");
/// ```
pub fn without_values(request: &str) -> Cow<'_, str> {
    let tokens: Vec<&str> = request.split_whitespace().collect();
    let quoted = quoted(request);
    let mut keep = vec![true; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        let at = offset(request, token);
        if quoted.iter().any(|&(start, end)| start <= at + token.len() && at < end) {
            keep[i] = false;
            continue;
        }
        let core = token.trim_matches(|c: char| !c.is_alphanumeric());
        let marked = token.contains(['/', '#', '@', '=']) || core.contains('_');
        let digits = core.chars().any(|c| c.is_ascii_digit());
        let unit = core.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',');
        let number = unit.chars().count() <= 3 && unit.chars().all(char::is_alphabetic);
        if marked || (digits && !number) {
            keep[i] = false;
        }
    }
    let kept: Vec<&str> = tokens.iter().zip(&keep).filter(|(_, k)| **k).map(|(t, _)| *t).collect();
    if keep.iter().all(|k| *k) || !kept.iter().any(|t| t.chars().any(char::is_alphabetic)) {
        return Cow::Borrowed(request);
    }
    Cow::Owned(kept.join(" "))
}

/// Ranks by the cosine similarity of embeddings alone: a document is a result when its
/// similarity to the query is at least [`min_similarity`](EmbeddingRanker::min_similarity).
///
/// Its results opt out of the index's term-coverage threshold (a match by meaning shares no
/// words). Mostly useful to compare with; [`HybridRanker`] ranks better than either part.
#[derive(Clone)]
pub struct EmbeddingRanker {
    cached: Arc<Cached>,
    background: bool,
    /// The least cosine similarity of a result (default 0.3).
    pub min_similarity: f32,
    /// Whether a request of several steps is also embedded step by step (see [`steps`]); a
    /// tool is then as close as it is to the whole request or to its closest step. Default
    /// `true`.
    pub split_steps: bool,
    /// Whether the request is embedded without its values (see [`without_values`]). Default
    /// `true`.
    pub drop_values: bool,
    /// Whether a request's misspelt words are corrected with the model's
    /// [`vocabulary`](Embedder::vocabulary) (see [`HybridRanker::correct_spelling`]). Default
    /// `true`.
    pub correct_spelling: bool,
    /// The text of a tool that is embedded (default [`embedding_text`]; or
    /// [`full_embedding_text`], or a function of your own).
    pub text: fn(&SearchDoc) -> String,
}

impl std::fmt::Debug for EmbeddingRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRanker")
            .field("min_similarity", &self.min_similarity)
            .field("split_steps", &self.split_steps)
            .field("drop_values", &self.drop_values)
            .field("correct_spelling", &self.correct_spelling)
            .finish_non_exhaustive()
    }
}

impl EmbeddingRanker {
    /// Ranks with `embedder`'s vectors, kept in the default cache file and built in the
    /// background (see [`HybridRanker::new`]).
    pub fn new(embedder: impl Embedder + 'static) -> EmbeddingRanker {
        EmbeddingRanker {
            cached: Cached::with_default_file(Arc::new(embedder)),
            background: true,
            min_similarity: 0.3,
            split_steps: true,
            drop_values: true,
            correct_spelling: true,
            text: embedding_text,
        }
    }

    /// Keeps the tools' vectors in `path`; see [`HybridRanker::cache_file`].
    pub fn cache_file(mut self, path: impl Into<PathBuf>) -> EmbeddingRanker {
        self.cached = Cached::new(self.cached.embedder.clone(), Some(path.into()));
        self
    }

    /// Keeps the vectors in memory only; see [`HybridRanker::no_cache_file`].
    pub fn no_cache_file(mut self) -> EmbeddingRanker {
        self.cached = Cached::new(self.cached.embedder.clone(), None);
        self
    }

    /// Whether preparing returns at once and embeds on a thread of its own (the default);
    /// see [`HybridRanker::background`].
    pub fn background(mut self, background: bool) -> EmbeddingRanker {
        self.background = background;
        self
    }
}

impl Ranker for EmbeddingRanker {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        Box::new(EmbeddingScorer {
            dense: Dense::prepare(&self.cached, corpus, self.background, self.text, None),
            min_similarity: self.min_similarity,
            split_steps: self.split_steps,
            drop_values: self.drop_values,
            correct_spelling: self.correct_spelling,
        })
    }
}

struct EmbeddingScorer {
    dense: Dense,
    min_similarity: f32,
    split_steps: bool,
    drop_values: bool,
    correct_spelling: bool,
}

impl Scorer for EmbeddingScorer {
    fn vocabulary(&self) -> Option<&Vocabulary> {
        self.dense.vocabulary(self.correct_spelling)
    }

    fn is_blocking(&self) -> bool {
        self.dense.vectors().is_some()
    }

    fn is_ready(&self) -> bool {
        self.dense.is_ready()
    }

    fn wait_ready(&self) {
        self.dense.wait_ready();
    }

    fn meaning(&self) -> Meaning {
        self.dense.meaning()
    }

    fn wait_for_meaning(&self, timeout: std::time::Duration) -> Meaning {
        self.dense.wait_for_meaning(timeout)
    }

    fn rank(&self, _: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let Some(similarities) = self.dense.similarities(query, self.split_steps, self.drop_values) else {
            return;
        };
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
/// answers by words alone. Preparing returns at once and embeds every tool on a thread of its own
/// ([`background`](HybridRanker::background)); the vectors are kept by text, in memory and in a
/// cache file (by default one per model in the user's cache folder), so a changed catalog or a
/// restarted server embeds only its new or changed tools. A query costs one model run (a few
/// milliseconds to a few tens for MiniLM on a CPU, more for a request of several
/// [`steps`](HybridRanker::split_steps)) plus one dot product per tool.
///
/// On the retrieval sets of `bench/retrieval.md`, all-MiniLM-L6-v2 as `from_model` sets it up
/// (two texts a tool, [`detail_weight`](Self::detail_weight)) lifts hit@5 over the lexical
/// ranker alone from 0.88 to 0.92 (BFCL), 0.64 to 0.78 (real MCP servers' tools, whole tasks)
/// and 0.59 to 0.77 (GitHub's REST operations).
#[derive(Clone)]
pub struct HybridRanker {
    cached: Arc<Cached>,
    background: bool,
    /// The lexical ranking.
    pub lexical: Bm25fRanker,
    /// The share of the lexical score in the sum (default 0.2); the cosine has the rest.
    pub lexical_weight: f32,
    /// The similarity at which a tool is a result whatever words it shares (default 0.25).
    pub min_similarity: f32,
    /// Whether a request of several steps (`find a flight to Oslo, then add it to my calendar`)
    /// is also embedded step by step (see [`steps`]): each tool's cosine is then its best over
    /// the whole request and its steps, so that every step's tools come up. Default `true`.
    pub split_steps: bool,
    /// Whether the request (and each step) is embedded without the values it carries
    /// (`close #42 in acme/api` → `close in`; see [`without_values`]): names, numbers and
    /// quoted text pull the vector away from what is asked. The words are still matched by
    /// the lexical ranker. Default `true`.
    pub drop_values: bool,
    /// Whether a misspelt word of the request (`lable`, `notifcations`) that neither the catalog
    /// nor the model's [`vocabulary`](Embedder::vocabulary) knows is searched as the word one
    /// edit away (`label`, `notifications`; see [`Corpus::correct`]). On the retrieval sets of
    /// `bench/retrieval.md` it brings back requests that found nothing. Default `true` (a model
    /// without a vocabulary corrects nothing).
    pub correct_spelling: bool,
    /// The text of a tool that is embedded (default [`embedding_text`]; or
    /// [`full_embedding_text`], or a function of your own).
    pub text: fn(&SearchDoc) -> String,
    /// The weight of each tool's second vector, that of its [`detail_text`](Self::detail_text),
    /// in the tool's vector: `(1 − w) · text's + w · detail's` (both unit vectors). 0, the
    /// default of [`new`](Self::new), embeds no second text; `from_model` (the `embeddings`
    /// feature) sets 0.5. The short [`text`](Self::text) keeps the tool's purpose in front, the whole
    /// definition adds what tells near-duplicate tools apart (their parameters' documentation):
    /// on the retrieval sets of `bench/retrieval.md`, 0.35 with texts cut at 96 tokens lifted
    /// BFCL's hit@5 from 0.910 to 0.916 and github-rest's MRR from 0.601 to 0.607, for twice the
    /// embedding; 0.5 is the weight chosen by leave-one-set-out on six sets, with the other
    /// weights (`bench/retrieval-loso.md`). The index ranks by
    /// meaning once the first texts are embedded; the second vectors refine it when they are
    /// ([`SearchIndex::wait_ready`](super::index::SearchIndex::wait_ready) waits for both).
    pub detail_weight: f32,
    /// The text of a tool's second vector (default [`full_embedding_text`]; see
    /// [`detail_weight`](Self::detail_weight)).
    pub detail_text: fn(&SearchDoc) -> String,
}

impl std::fmt::Debug for HybridRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridRanker")
            .field("lexical", &self.lexical)
            .field("lexical_weight", &self.lexical_weight)
            .field("min_similarity", &self.min_similarity)
            .field("split_steps", &self.split_steps)
            .field("drop_values", &self.drop_values)
            .field("correct_spelling", &self.correct_spelling)
            .field("detail_weight", &self.detail_weight)
            .finish_non_exhaustive()
    }
}

impl HybridRanker {
    /// [`Bm25fRanker::default`] fused with `embedder`'s vectors, at the default weights. The
    /// tools' vectors are kept in the model's file in the user's cache folder
    /// (`~/.cache/mcp-tools/embeddings-<model hash>.bin` on Linux; none for an embedder without
    /// a [`model_id`](Embedder::model_id)), and built in the [`background`](Self::background).
    pub fn new(embedder: impl Embedder + 'static) -> HybridRanker {
        HybridRanker {
            cached: Cached::with_default_file(Arc::new(embedder)),
            background: true,
            lexical: Bm25fRanker::default(),
            lexical_weight: 0.2,
            min_similarity: 0.25,
            split_steps: true,
            drop_values: true,
            correct_spelling: true,
            text: embedding_text,
            detail_weight: 0.0,
            detail_text: full_embedding_text,
        }
    }

    /// Keeps the tools' vectors in the file `path` (instead of the default one) as well as in
    /// memory: read at the first preparation, rewritten whenever the catalog's vectors change,
    /// so that a restarted server embeds only the tools that are new or changed. The file
    /// records the model's [`Embedder::model_id`]; vectors of another model are not used. It
    /// may be shared by several catalogs (up to 20,000 vectors in all). An unreadable or
    /// unwritable file is logged and otherwise ignored.
    pub fn cache_file(mut self, path: impl Into<PathBuf>) -> HybridRanker {
        self.cached = Cached::new(self.cached.embedder.clone(), Some(path.into()));
        self
    }

    /// Keeps the tools' vectors in memory only: a restarted server embeds every tool again.
    pub fn no_cache_file(mut self) -> HybridRanker {
        self.cached = Cached::new(self.cached.embedder.clone(), None);
        self
    }

    /// Whether preparing a catalog returns at once and embeds its tools on a thread of its own
    /// (`true`, the default), searching by words alone until the vectors are ready
    /// ([`SearchIndex::is_ready`](super::index::SearchIndex::is_ready),
    /// [`wait_ready`](super::index::SearchIndex::wait_ready)); with `false`, preparing embeds them
    /// first. A server answers `initialize` while its catalog is being embedded.
    pub fn background(mut self, background: bool) -> HybridRanker {
        self.background = background;
        self
    }

    /// The second texts' function and weight, when there are second texts.
    fn detail(&self) -> Option<Detail> {
        let weight = self.detail_weight.clamp(0.0, 1.0);
        (weight > 0.0).then_some(Detail { text: self.detail_text, weight })
    }
}

impl Ranker for HybridRanker {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        Box::new(HybridScorer {
            lexical: self.lexical.prepare(corpus),
            dense: Dense::prepare(&self.cached, corpus, self.background, self.text, self.detail()),
            lexical_weight: self.lexical_weight.clamp(0.0, 1.0),
            min_similarity: self.min_similarity,
            split_steps: self.split_steps,
            drop_values: self.drop_values,
            correct_spelling: self.correct_spelling,
        })
    }
}

struct HybridScorer {
    lexical: Box<dyn Scorer>,
    dense: Dense,
    lexical_weight: f32,
    min_similarity: f32,
    split_steps: bool,
    drop_values: bool,
    correct_spelling: bool,
}

impl Scorer for HybridScorer {
    fn vocabulary(&self) -> Option<&Vocabulary> {
        self.dense.vocabulary(self.correct_spelling)
    }

    fn is_blocking(&self) -> bool {
        self.dense.vectors().is_some()
    }

    fn is_ready(&self) -> bool {
        self.dense.is_ready()
    }

    fn wait_ready(&self) {
        self.dense.wait_ready();
    }

    fn meaning(&self) -> Meaning {
        self.dense.meaning()
    }

    fn wait_for_meaning(&self, timeout: std::time::Duration) -> Meaning {
        self.dense.wait_for_meaning(timeout)
    }

    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let start = out.len();
        self.lexical.rank(corpus, query, out);
        let Some(similarities) = self.dense.similarities(query, self.split_steps, self.drop_values) else {
            return;
        };
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
