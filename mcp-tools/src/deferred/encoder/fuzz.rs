//! The own encoder against `candle_transformers`' `BertModel`, the library's implementation of
//! the same function, on inputs nobody chose:
//!
//! * [`random_models`]: random BERT models (1 or 2 layers, 1 to 4 heads of 8 to 64 dimensions,
//!   intermediate layers of 1 to 4 times the width, some not a multiple of the int8 groups, GELU
//!   or another activation), with random weights, on random batches of random token sequences
//!   (so with padding), through every way the encoder multiplies: f32 products and int8 ones on
//!   each kernel the CPU runs;
//! * [`the_real_model`]: the real model (`MCP_TOOLS_MODEL`, as `scripts/test-embeddings.sh`
//!   sets it) on random batches of random token sequences of up to 96 tokens.
//!
//! Each text's token vectors from the batch are compared with the library's for the text
//! alone, unpadded. `cargo test` runs a fixed-seed batch of cases; `scripts/fuzz.sh 300 encoder`
//! runs fresh seeds for 300 s (`FUZZ_SECONDS`), and a failure prints the seed that
//! reproduces it (`PROPTEST_RNG_SEED`) with the shrunk case. Both tests were checked to fail
//! on planted mistakes: padding attended as if it were tokens (f32 products), and a tile of
//! five rows computed as four (the AVX2 int8 kernel).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, HiddenAct};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngSeed, TestCaseError, TestRunner};

use super::bert::{Bert, Products, Scratch};
use super::int8::Kernel;

/// The vocabulary and the positions of the random models.
const VOCAB: usize = 64;
const POSITIONS: usize = 32;

/// f32 products: the largest difference of any token vector's value from the library's (the
/// values are layer-normed, about 1 in size; the own `erf` and `exp` are within 1e-6). In
/// 107,159 token vectors of 30 s of fuzzing the largest was 7.2e-6 (median 7.2e-7).
const EXACT_APART: f32 = 1e-4;
/// int8 products: the smallest cosine of a token vector with the library's (random models; in
/// 196,236 of them the smallest was 0.99977, the median 0.999985) and of a mean-pooled text
/// vector (the real model: 0.99891 at the least in 193 random texts of up to 96 tokens;
/// `tests/sentence_embedder.rs` holds real texts to the same 0.998).
const INT8_TOKEN_COSINE: f32 = 0.999;
const INT8_TEXT_COSINE: f32 = 0.998;

/// A random BERT's shape and the seed of its weights.
#[derive(Clone, Debug)]
pub(super) struct Shape {
    pub(super) layers: usize,
    pub(super) heads: usize,
    pub(super) head_size: usize,
    pub(super) intermediate: usize,
    pub(super) activation: HiddenAct,
    pub(super) seed: u64,
}

impl Shape {
    pub(super) fn config(&self) -> Config {
        Config {
            vocab_size: VOCAB,
            hidden_size: self.heads * self.head_size,
            num_hidden_layers: self.layers,
            num_attention_heads: self.heads,
            intermediate_size: self.intermediate,
            hidden_act: self.activation,
            max_position_embeddings: POSITIONS,
            ..Config::default()
        }
    }

    /// The model's tensors, named as a checkpoint names them, filled from the seed.
    pub(super) fn tensors(&self) -> HashMap<String, Tensor> {
        let (hidden, inner) = (self.heads * self.head_size, self.intermediate);
        let mut state = self.seed;
        let mut tensors = HashMap::new();
        let mut add = |name: String, shape: &[usize], center: f32, spread: f32| {
            let values: Vec<f32> = (0..shape.iter().product())
                .map(|_| {
                    // splitmix64: a uniform value in [center − spread, center + spread].
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    let unit = ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32;
                    center + spread * (2.0 * unit - 1.0)
                })
                .collect();
            tensors.insert(name, Tensor::from_vec(values, shape, &Device::Cpu).expect("the shape fits"));
        };
        // Weights of products about as large as trained ones: outputs of unit size.
        let weight = |inputs: usize| 1.7 / (inputs as f32).sqrt();
        add("embeddings.word_embeddings.weight".into(), &[VOCAB, hidden], 0.0, 1.0);
        add("embeddings.position_embeddings.weight".into(), &[POSITIONS, hidden], 0.0, 0.3);
        add("embeddings.token_type_embeddings.weight".into(), &[2, hidden], 0.0, 0.1);
        let mut norms = vec!["embeddings".to_owned()];
        for layer in 0..self.layers {
            let at = |name: &str| format!("encoder.layer.{layer}.{name}");
            for part in [
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
            ] {
                add(at(&format!("{part}.weight")), &[hidden, hidden], 0.0, weight(hidden));
                add(at(&format!("{part}.bias")), &[hidden], 0.0, 0.1);
            }
            add(at("intermediate.dense.weight"), &[inner, hidden], 0.0, weight(hidden));
            add(at("intermediate.dense.bias"), &[inner], 0.0, 0.1);
            add(at("output.dense.weight"), &[hidden, inner], 0.0, weight(inner));
            add(at("output.dense.bias"), &[hidden], 0.0, 0.1);
            norms.extend([at("attention.output"), at("output")]);
        }
        for norm in norms {
            add(format!("{norm}.LayerNorm.weight"), &[hidden], 1.0, 0.2);
            add(format!("{norm}.LayerNorm.bias"), &[hidden], 0.0, 0.1);
        }
        tensors
    }
}

fn shapes() -> impl Strategy<Value = Shape> {
    let activation = prop_oneof![
        4 => Just(HiddenAct::Gelu),
        1 => Just(HiddenAct::GeluApproximate),
        1 => Just(HiddenAct::Relu),
    ];
    (
        1..=2usize,
        1..=4usize,
        prop::sample::select(vec![8usize, 16, 24, 32, 48, 64]),
        1..=4usize,
        prop::bool::ANY,
    )
        .prop_flat_map(move |(layers, heads, head_size, times, odd)| {
            // An intermediate layer 16 wider than a multiple of the width: its output product's
            // inner dimension is no multiple of the int8 groups of 32 (the layer stays f32).
            let intermediate = heads * head_size * times + if odd { 16 } else { 0 };
            (activation.clone(), any::<u64>()).prop_map(move |(activation, seed)| Shape {
                layers,
                heads,
                head_size,
                intermediate,
                activation,
                seed,
            })
        })
}

/// A batch of texts: token ids below `vocab`, 1 to `longest` tokens each.
fn batches(vocab: u32, longest: usize, texts: usize) -> impl Strategy<Value = Vec<Vec<u32>>> {
    prop::collection::vec(prop::collection::vec(0..vocab, 1..=longest), 1..=texts)
}

/// Every way the encoder multiplies on this CPU: f32, and int8 on each kernel it runs.
fn products() -> Vec<Products> {
    let kernels = match Kernel::detect() {
        Some(Kernel::Vnni) => vec![Kernel::Vnni, Kernel::Avx2],
        Some(Kernel::Avx2) => vec![Kernel::Avx2],
        None => vec![],
    };
    std::iter::once(Products::Exact).chain(kernels.into_iter().map(Products::Int8On)).collect()
}

/// `texts` padded into one batch (ids and mask, `(texts, longest)`).
fn padded(texts: &[Vec<u32>]) -> (Tensor, Tensor) {
    let width = texts.iter().map(Vec::len).max().unwrap_or(0);
    let (mut ids, mut mask) = (Vec::new(), Vec::new());
    for text in texts {
        ids.extend(text.iter().copied().chain(std::iter::repeat_n(0, width - text.len())));
        mask.extend(std::iter::repeat_n(1u32, text.len()).chain(std::iter::repeat_n(0, width - text.len())));
    }
    let shape = (texts.len(), width);
    (
        Tensor::from_vec(ids, shape, &Device::Cpu).expect("the shape fits"),
        Tensor::from_vec(mask, shape, &Device::Cpu).expect("the shape fits"),
    )
}

/// The library's token vectors of `text` alone, `(tokens, hidden)` row by row.
fn library_tokens(library: &BertModel, text: &[u32]) -> Result<Vec<Vec<f32>>, TestCaseError> {
    let run = || -> candle_core::Result<Vec<Vec<f32>>> {
        let ids = Tensor::new(text, &Device::Cpu)?.unsqueeze(0)?;
        library.forward(&ids, &ids.zeros_like()?, None)?.squeeze(0)?.to_vec2::<f32>()
    };
    run().map_err(|e| TestCaseError::fail(format!("the library's model failed: {e}")))
}

/// The own encoder's token vectors of each text of `texts`, run as one padded batch.
fn own_tokens(
    bert: &Bert,
    texts: &[Vec<u32>],
    scratch: &mut Scratch,
) -> Result<Vec<Vec<Vec<f32>>>, TestCaseError> {
    let (ids, mask) = padded(texts);
    let out = bert
        .forward(&ids, &mask, scratch)
        .and_then(|out| out.to_vec3::<f32>())
        .map_err(|e| TestCaseError::fail(format!("the own encoder failed: {e}")))?;
    Ok(out.into_iter().zip(texts).map(|(rows, text)| rows.into_iter().take(text.len()).collect()).collect())
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b)).max(f32::MIN_POSITIVE)
}

/// Each text's token vectors against the library's: within [`EXACT_APART`] with f32
/// products, a cosine of at least [`INT8_TOKEN_COSINE`] with int8 ones.
fn agree(products: Products, ours: &[Vec<Vec<f32>>], library: &[Vec<Vec<f32>>]) -> Result<(), TestCaseError> {
    for (text, (ours, library)) in ours.iter().zip(library).enumerate() {
        prop_assert_eq!(ours.len(), library.len(), "text {}: token count", text);
        for (token, (a, b)) in ours.iter().zip(library).enumerate() {
            prop_assert!(
                a.iter().all(|x| x.is_finite()),
                "{:?}: text {} token {}: not finite",
                products,
                text,
                token
            );
            if products == Products::Exact {
                let apart = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
                prop_assert!(
                    apart < EXACT_APART,
                    "{:?}: text {} token {}: {} apart",
                    products,
                    text,
                    token,
                    apart
                );
            } else {
                let similarity = cosine(a, b);
                prop_assert!(
                    similarity > INT8_TOKEN_COSINE,
                    "{:?}: text {} token {}: cosine {}",
                    products,
                    text,
                    token,
                    similarity
                );
            }
        }
    }
    Ok(())
}

/// Runs `check` on values of `strategy`: `cases` of a fixed seed, or, with `FUZZ_SECONDS`
/// set, rounds of `cases` on fresh seeds until that many seconds have passed.
fn run<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let deadline = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(|s| Instant::now() + Duration::from_secs(s));
    let fixed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse::<u64>().ok());
    let mut ran = 0u64;
    for round in 0u64.. {
        let seed = fixed.unwrap_or(match deadline {
            None => 0x0065_6e63_6f64_6572,
            Some(_) => {
                let now =
                    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                (now.as_nanos() as u64) ^ round.wrapping_mul(0x2545_f491_4f6c_dd1d)
            }
        });
        let config = RunnerConfig {
            cases,
            rng_seed: RngSeed::Fixed(seed),
            failure_persistence: None,
            ..RunnerConfig::default()
        };
        if let Err(failure) = TestRunner::new(config).run(&strategy, &check) {
            panic!("{name}: {failure}\nreproduce: PROPTEST_RNG_SEED={seed} scripts/fuzz.sh 1 encoder");
        }
        ran += u64::from(cases);
        if deadline.is_none_or(|deadline| Instant::now() >= deadline) {
            break;
        }
    }
    if deadline.is_some() {
        println!("{name}: {ran} cases, no failure");
    }
}

#[test]
fn random_models() {
    let strategy = (shapes(), batches(VOCAB as u32, POSITIONS, 5));
    run("random_models", 24, strategy, |(shape, texts)| {
        let config = shape.config();
        let tensors = shape.tensors();
        let vb = VarBuilder::from_tensors(tensors.clone(), DType::F32, &Device::Cpu);
        let library = BertModel::load(vb, &config).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let expected =
            texts.iter().map(|text| library_tokens(&library, text)).collect::<Result<Vec<_>, _>>()?;
        for products in products() {
            let vb = VarBuilder::from_tensors(tensors.clone(), DType::F32, &Device::Cpu);
            let bert = Bert::load(vb, &config, products).map_err(|e| TestCaseError::fail(e.to_string()))?;
            // Twice on the same buffers: a second batch must not see the first's leftovers.
            let mut scratch = Scratch::default();
            for _ in 0..2 {
                agree(products, &own_tokens(&bert, &texts, &mut scratch)?, &expected)?;
            }
        }
        Ok(())
    });
}

/// The real model's folder: `MCP_TOOLS_MODEL`, else where `scripts/fetch-model.sh` puts it.
fn model_dir() -> PathBuf {
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../.cache/models/all-MiniLM-L6-v2");
    let dir = std::env::var_os("MCP_TOOLS_MODEL").map_or_else(|| PathBuf::from(default), PathBuf::from);
    let found = dir.join("model.safetensors").is_file();
    assert!(found, "{}: no model.safetensors; `bash scripts/fetch-model.sh` fetches it", dir.display());
    dir
}

/// The real model, loaded once: the library's, and the own encoder with each of [`products`].
struct Real {
    config: Config,
    library: BertModel,
    own: Vec<(Products, Bert)>,
}

fn real() -> &'static Real {
    static REAL: OnceLock<Real> = OnceLock::new();
    REAL.get_or_init(|| {
        let dir = model_dir();
        let config: Config =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).expect("config.json"))
                .expect("a BERT configuration");
        let weights = dir.join("model.safetensors");
        let vb = || {
            // SAFETY: the model's file is not changed while the tests run.
            unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
                .expect("the weights load")
        };
        let library = BertModel::load(vb(), &config).expect("the library's model loads");
        let own = products()
            .into_iter()
            .map(|products| (products, Bert::load(vb(), &config, products).expect("the own encoder loads")))
            .collect();
        Real { config, library, own }
    })
}

/// Mean of a text's token vectors, as the embedder pools them.
fn mean(tokens: &[Vec<f32>]) -> Vec<f32> {
    let mut sum = vec![0f32; tokens.first().map_or(0, Vec::len)];
    for token in tokens {
        sum.iter_mut().zip(token).for_each(|(s, x)| *s += x);
    }
    sum.iter().map(|s| s / tokens.len() as f32).collect()
}

#[test]
fn the_real_model() {
    let real = real();
    let vocab = real.config.vocab_size as u32;
    // Batches of up to 8 texts of up to 96 tokens when fuzzing; smaller ones in `cargo test`,
    // whose debug build runs a real model's batch slowly. BERT's own ids for the start and the
    // end of a text ([CLS] and [SEP]) go around random ones.
    let (longest, texts) = if std::env::var_os("FUZZ_SECONDS").is_some() { (94, 8) } else { (30, 3) };
    let texts = batches(vocab, longest, texts)
        .prop_map(|texts| texts.into_iter().map(|t| [vec![101], t, vec![102]].concat()).collect::<Vec<_>>());
    run("the_real_model", 2, texts, |texts| {
        let expected =
            texts.iter().map(|text| library_tokens(&real.library, text)).collect::<Result<Vec<_>, _>>()?;
        for (products, bert) in &real.own {
            let ours = own_tokens(bert, &texts, &mut Scratch::default())?;
            if *products == Products::Exact {
                agree(*products, &ours, &expected)?;
            }
            for (text, (ours, library)) in ours.iter().zip(&expected).enumerate() {
                let similarity = cosine(&mean(ours), &mean(library));
                let floor = if *products == Products::Exact { 0.99999 } else { INT8_TEXT_COSINE };
                prop_assert!(similarity > floor, "{:?}: text {}: cosine {}", products, text, similarity);
            }
        }
        Ok(())
    });
}
