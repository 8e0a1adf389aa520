//! The BERT encoder [`SentenceEmbedder`](crate::deferred::SentenceEmbedder) runs: matrix products (int8
//! ones of [`Int8Linear`] on x86-64 CPUs with AVX2 and FMA or with AVX-512 VNNI, the same
//! numbers on either; f32 ones by gemm, as candle's, on other CPUs or on request),
//! with the work between them done in fewer, parallel passes than `candle_transformers`' model
//! (which computes the same function: a test checks the vectors' cosine with it is above 0.99999
//! with f32 products, 0.998 with int8 ones):
//! the query, key and value projections are one product (the attention's scaling folded into
//! the query's weights); the attention of every text and head is one pass over that product's
//! output, texts split across cores, its sums computed in blocks held in vector registers,
//! instead of many tiny products with copies to and from the heads' layout around them; and the
//! intermediate layer's bias and GELU are one in-place pass on every core with an `erf` the
//! compiler vectorises (candle's GELU alone took a fifth of the time, on one core), or, with
//! int8 products, part of the product. These loops are also compiled for AVX2, used where the
//! CPU has it (the build targets plain x86-64, whose vectors are SSE2's). Every layer (with GELU,
//! as BERT's) runs on buffers kept from layer to layer and batch to batch ([`Scratch`]): the
//! products write into them (gemm's f32 products, as candle's, or the int8 ones), the bias and
//! the residual are added as the products finish (on each tile as it is stored, for int8), and
//! the norms run in place. Fresh buffers for each step, as candle's operations allocate them,
//! were handed back to the system by the allocator and faulted in again, page by page. A batch
//! of 32 texts of 40 tokens, timed back to back in one process: int8 products 79–95 ms against
//! 132–138 through candle's operations with the same products; f32 products 170–207 against
//! 212–242 (candle's own `BertModel`, about 1.8 times our f32 figure, the last time it was
//! measured). In a served catalog's start-up (one thread embedding batches of varied lengths)
//! the gain is smaller: within the noise of `bench/retrieval.md`'s machine.

use candle_core::{CpuStorage, CustomOp1, DType, InplaceOp1, Layout, Module, Result, Shape, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, layer_norm};
use candle_transformers::models::bert::{Config, HiddenAct};
use rayon::prelude::*;

use super::approx::{exp_non_positive, gelu};
use super::int8::{Int8Linear, Kernel, Quantised, contiguous_f32};

/// A BERT encoder (absolute positions), loaded from a checkpoint with the usual names
/// (`embeddings.*`, `encoder.layer.N.*`, with or without the model type as prefix).
pub(crate) struct Bert {
    words: Embedding,
    positions: Tensor,
    /// Every token is of type 0: its embedding row, added to all.
    token_type: Tensor,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

struct Layer {
    /// Query, key and value in one product; the query's rows are scaled by 1/√(head size).
    qkv: Product,
    attention_out: Product,
    attention_norm: LayerNorm,
    /// The intermediate product, without its bias where `activation` adds it.
    intermediate: Product,
    activation: Activation,
    output: Product,
    output_norm: LayerNorm,
    /// The two norms' weights, for layers run on [`Scratch`] buffers (with GELU).
    norms: Option<[RowNorm; 2]>,
}

/// A layer norm's weights, applied row by row in place ([`RowNorm::apply`]).
struct RowNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl RowNorm {
    fn load(vb: VarBuilder, size: usize, eps: f64) -> Result<RowNorm> {
        Ok(RowNorm {
            weight: vb.get(size, "weight")?.to_vec1()?,
            bias: vb.get(size, "bias")?.to_vec1()?,
            eps: eps as f32,
        })
    }

    /// Normalises each row of `rows` (mean 0, variance 1), then scales and shifts it by the
    /// weights: rows split across cores.
    fn apply(&self, rows: &mut [f32]) {
        let width = self.weight.len();
        let per_task = (16 * 1024 / width).max(1);
        rows.par_chunks_mut(per_task * width).for_each(|chunk| {
            for row in chunk.chunks_exact_mut(width) {
                let n = width as f32;
                let mean = row.iter().sum::<f32>() / n;
                let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
                let inverse = 1.0 / (variance + self.eps).sqrt();
                for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                    *v = (*v - mean) * inverse * w + b;
                }
            }
        });
    }
}

/// The buffers of the layers run on scratch (f32 or int8 products), kept from one layer and one
/// batch to the next by whoever embeds (a batch's ~20 MB allocated anew at each step were handed
/// back to the system by the allocator and faulted in again, page by page).
#[derive(Default)]
pub(crate) struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    attended: Vec<f32>,
    inner: Vec<f32>,
    quantised: Quantised,
}

/// `buffer` with `len` values (contents unspecified), reusing its memory.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    buffer.resize(len, 0.0);
    &mut buffer[..len]
}

/// How the linear layers multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Products {
    /// f32, as the model was trained (candle's products).
    Exact,
    /// int8 weights and inputs in groups of 32 ([`Int8Linear`]) where the CPU runs one of its
    /// kernels (AVX2 and FMA, or AVX-512 VNNI) and the layer's shape suits it, f32 otherwise.
    Int8,
    /// [`Int8`](Self::Int8) on the given kernel (the fastest the CPU runs is the default), for
    /// tests of each kernel the CPU runs.
    #[cfg(test)]
    Int8On(Kernel),
}

/// A linear layer, multiplied in f32 or int8.
enum Product {
    Exact(Linear),
    Int8(Int8Linear),
}

impl Product {
    fn new(weight: Tensor, bias: Option<Tensor>, products: Products) -> Result<Product> {
        let kernel = match products {
            Products::Exact => None,
            Products::Int8 => Kernel::detect(),
            #[cfg(test)]
            Products::Int8On(kernel) => Some(kernel),
        };
        if let Some(kernel) = kernel
            && let Some(layer) = Int8Linear::with_kernel(&weight, bias.as_ref(), kernel)?
        {
            return Ok(Product::Int8(layer));
        }
        Ok(Product::Exact(Linear::new(weight, bias)))
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Product::Exact(linear) => linear.forward(x),
            Product::Int8(layer) => x.contiguous()?.apply_op1_no_bwd(layer),
        }
    }

    fn is_int8(&self) -> bool {
        matches!(self, Product::Int8(_))
    }

    fn outputs(&self) -> Result<usize> {
        match self {
            Product::Exact(linear) => linear.weight().dim(0),
            Product::Int8(layer) => Ok(layer.outputs()),
        }
    }

    /// `input` (rows of the layer's inputs) times the weights into `out` (overwritten), plus
    /// the bias (and GELU, for an int8 layer made with it) and `residual` (shaped as `out`).
    /// f32: gemm's product (as candle's, which allocates its output), then one pass for the
    /// bias and the residual.
    fn product_into(
        &self,
        input: &[f32],
        quantised: &mut Quantised,
        out: &mut [f32],
        residual: Option<&[f32]>,
    ) -> Result<()> {
        match self {
            Product::Int8(layer) => layer.product_into(input, quantised, out, residual),
            Product::Exact(linear) => {
                f32_product(linear.weight(), input, out)?;
                match linear.bias() {
                    Some(bias) => with_values(bias, |bias| add_rows(out, Some(bias), residual))?,
                    None => add_rows(out, None, residual),
                }
            }
        }
        Ok(())
    }
}

/// `out` (`rows × outputs`) = `input` (`rows × inner`) · `weight`ᵀ (`weight`: `(outputs,
/// inner)`), with gemm as candle multiplies f32 (on every core).
fn f32_product(weight: &Tensor, input: &[f32], out: &mut [f32]) -> Result<()> {
    let (outputs, inner) = weight.dims2()?;
    let rows = input.len() / inner.max(1);
    if input.len() != rows * inner || out.len() != rows * outputs {
        candle_core::bail!(
            "f32 product: {} inputs and {} outputs for rows of {inner} and {outputs}",
            input.len(),
            out.len()
        );
    }
    let threads = rayon::current_num_threads();
    let parallelism = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
    with_values(weight, |weight| {
        // SAFETY: `out` holds rows × outputs values (row stride `outputs`), `input` rows × inner
        // (row stride `inner`), `weight` outputs × inner: read as its transpose, inner × outputs
        // (column stride `inner`); `read_dst` is false, so `out`'s contents are not read.
        unsafe {
            gemm::gemm(
                rows,
                outputs,
                inner,
                out.as_mut_ptr(),
                1,
                outputs as isize,
                false,
                input.as_ptr(),
                1,
                inner as isize,
                weight.as_ptr(),
                inner as isize,
                1,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            )
        }
    })
}

/// Runs `f` on the values of `tensor`, which must be a contiguous f32 tensor in memory.
fn with_values<R>(tensor: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    let (storage, layout) = tensor.storage_and_layout();
    let candle_core::Storage::Cpu(storage) = &*storage else {
        candle_core::bail!("a tensor in memory is expected");
    };
    Ok(f(contiguous_f32(storage, layout, "bert")?))
}

/// Adds `bias` (one per column) and then `residual` (shaped as `rows`) to `rows`, as candle
/// adds them one after the other; rows split across cores.
fn add_rows(rows: &mut [f32], bias: Option<&[f32]>, residual: Option<&[f32]>) {
    if bias.is_none() && residual.is_none() {
        return;
    }
    // Chunks of about 64 KB (whole rows when there is a bias).
    let width = bias.map_or(1, <[f32]>::len).max(1);
    let chunk = (16 * 1024 / width).max(1) * width;
    rows.par_chunks_mut(chunk).enumerate().for_each(|(n, rows)| {
        if let Some(bias) = bias {
            for row in rows.chunks_exact_mut(width) {
                for (x, b) in row.iter_mut().zip(bias) {
                    *x += b;
                }
            }
        }
        if let Some(residual) = residual {
            for (x, r) in rows.iter_mut().zip(&residual[n * chunk..]) {
                *x += r;
            }
        }
    });
}

enum Activation {
    /// Bias and GELU computed by the intermediate product (int8, on each tile it stores).
    InProduct,
    /// GELU with `erf`, fused with the intermediate bias.
    Gelu(GeluWithBias),
    /// Another activation, after the bias.
    Other(HiddenAct, Tensor),
}

impl Bert {
    pub(crate) fn load(vb: VarBuilder, config: &Config, products: Products) -> Result<Bert> {
        match Bert::load_under(vb.clone(), config, products) {
            Ok(bert) => Ok(bert),
            Err(first) => match &config.model_type {
                Some(prefix) => Bert::load_under(vb.pp(prefix), config, products).map_err(|_| first),
                None => Err(first),
            },
        }
    }

    fn load_under(vb: VarBuilder, config: &Config, products: Products) -> Result<Bert> {
        let hidden = config.hidden_size;
        let eps = config.layer_norm_eps;
        let embeddings = vb.pp("embeddings");
        let words = candle_nn::embedding(config.vocab_size, hidden, embeddings.pp("word_embeddings"))?;
        let positions =
            embeddings.pp("position_embeddings").get((config.max_position_embeddings, hidden), "weight")?;
        let token_type = embeddings
            .pp("token_type_embeddings")
            .get((config.type_vocab_size, hidden), "weight")?
            .narrow(0, 0, 1)?
            .squeeze(0)?;
        let norm = layer_norm(hidden, eps, embeddings.pp("LayerNorm"))?;
        let heads = config.num_attention_heads;
        let scale = 1.0 / ((hidden / heads) as f64).sqrt();
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let vb = vb.pp(format!("encoder.layer.{i}"));
                let attention = vb.pp("attention");
                let part = |name: &str| -> Result<(Tensor, Tensor)> {
                    let vb = attention.pp("self").pp(name);
                    Ok((vb.get((hidden, hidden), "weight")?, vb.get(hidden, "bias")?))
                };
                let ((qw, qb), (kw, kb), (vw, vb_)) = (part("query")?, part("key")?, part("value")?);
                let qkv = Product::new(
                    Tensor::cat(&[(qw * scale)?, kw, vw], 0)?,
                    Some(Tensor::cat(&[(qb * scale)?, kb, vb_], 0)?),
                    products,
                )?;
                let dense = |vb: VarBuilder, inputs: usize, outputs: usize| {
                    let weight = vb.get((outputs, inputs), "weight")?;
                    Product::new(weight, Some(vb.get(outputs, "bias")?), products)
                };
                let intermediate = vb.pp("intermediate").pp("dense");
                let weight = intermediate.get((config.intermediate_size, hidden), "weight")?;
                let bias = intermediate.get(config.intermediate_size, "bias")?;
                let (intermediate, activation) =
                    match (Product::new(weight, None, products)?, config.hidden_act) {
                        (Product::Int8(layer), HiddenAct::Gelu) => {
                            (Product::Int8(layer.with_bias_and_gelu(bias.to_vec1()?)), Activation::InProduct)
                        }
                        (product, HiddenAct::Gelu) => {
                            (product, Activation::Gelu(GeluWithBias { bias: bias.to_vec1()? }))
                        }
                        (product, other) => (product, Activation::Other(other, bias)),
                    };
                let attention_out = dense(attention.pp("output").pp("dense"), hidden, hidden)?;
                let output = dense(vb.pp("output").pp("dense"), config.intermediate_size, hidden)?;
                let norms = if matches!(activation, Activation::InProduct | Activation::Gelu(_)) {
                    Some([
                        RowNorm::load(attention.pp("output").pp("LayerNorm"), hidden, eps)?,
                        RowNorm::load(vb.pp("output").pp("LayerNorm"), hidden, eps)?,
                    ])
                } else {
                    None
                };
                Ok(Layer {
                    qkv,
                    attention_out,
                    attention_norm: layer_norm(hidden, eps, attention.pp("output").pp("LayerNorm"))?,
                    intermediate,
                    activation,
                    output,
                    output_norm: layer_norm(hidden, eps, vb.pp("output").pp("LayerNorm"))?,
                    norms,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert { words, positions, token_type, norm, layers, heads })
    }

    /// Whether the linear layers run int8 products.
    pub(crate) fn is_int8(&self) -> bool {
        self.layers
            .iter()
            .any(|l| [&l.qkv, &l.attention_out, &l.intermediate, &l.output].iter().any(|p| p.is_int8()))
    }

    /// The last layer's token vectors, `(batch, tokens, hidden)`, for `ids` and `mask`
    /// (`(batch, tokens)`, 1 for a token, 0 for padding). Layers with int8 products run on the
    /// buffers of `scratch`.
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor, scratch: &mut Scratch) -> Result<Tensor> {
        self.forward_on(ids, mask, Some(scratch))
    }

    /// [`forward`](Self::forward); without a scratch, every layer runs through candle's
    /// operations (with the same products).
    fn forward_on(&self, ids: &Tensor, mask: &Tensor, scratch: Option<&mut Scratch>) -> Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.narrow(0, 0, tokens)?.broadcast_add(&self.token_type)?)?;
        let mut x = self.norm.forward(&x)?;
        // Each text's tokens (padding is attended by nothing).
        let keys = mask
            .to_dtype(DType::U32)?
            .to_vec2::<u32>()?
            .into_iter()
            .map(|row| {
                let keys: Vec<u32> = (0..row.len() as u32).filter(|&j| row[j as usize] != 0).collect();
                // No token at all (never from a tokenizer): every position, as a softmax over
                // equal scores would.
                if keys.is_empty() { (0..row.len() as u32).collect() } else { keys }
            })
            .collect();
        let attention = Attention { keys, heads: self.heads };
        if let Some(scratch) = scratch
            && self.layers.iter().all(|l| l.norms.is_some())
        {
            let hidden = x.dim(2)?;
            let mut rows = x.flatten_all()?.to_vec1::<f32>()?;
            for layer in &self.layers {
                layer.forward_on_scratch(&mut rows, &attention, tokens, scratch)?;
            }
            return Tensor::from_vec(rows, (batch, tokens, hidden), x.device());
        }
        for layer in &self.layers {
            x = layer.forward(&x, &attention)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(&self, x: &Tensor, attention: &Attention) -> Result<Tensor> {
        let context = self.qkv.forward(x)?.apply_op1_no_bwd(attention)?;
        let x = self.attention_norm.forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward(&x)?;
        let inner = match &self.activation {
            Activation::InProduct => inner,
            Activation::Gelu(gelu) => {
                inner.inplace_op1(gelu)?;
                inner
            }
            Activation::Other(act, bias) => {
                let inner = inner.broadcast_add(bias)?;
                match act {
                    HiddenAct::GeluApproximate => inner.gelu()?,
                    HiddenAct::Relu => inner.relu()?,
                    HiddenAct::Gelu => inner.gelu_erf()?,
                }
            }
        };
        let output = self.output.forward(&inner)?;
        self.output_norm.forward(&(output + x)?)
    }

    /// [`forward`](Self::forward) on `rows` (`tokens` per text, `hidden` values each), in
    /// place: the residuals are added as the products are finished, the norms run in place,
    /// and every other buffer is the scratch's.
    fn forward_on_scratch(
        &self,
        rows: &mut [f32],
        attention: &Attention,
        tokens: usize,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let Some([attention_norm, output_norm]) = &self.norms else {
            candle_core::bail!("this layer's activation runs through candle's operations only");
        };
        let hidden = attention_norm.weight.len();
        let count = rows.len() / hidden;
        let Scratch { qkv, context, attended, inner, quantised } = scratch;
        let qkv = sized(qkv, count * self.qkv.outputs()?);
        self.qkv.product_into(rows, quantised, qkv, None)?;
        let context = sized(context, count * hidden);
        context.fill(0.0);
        attention.attend(qkv, context, tokens, hidden);
        let attended = sized(attended, count * hidden);
        self.attention_out.product_into(context, quantised, attended, Some(rows))?;
        attention_norm.apply(attended);
        let inner = sized(inner, count * self.intermediate.outputs()?);
        self.intermediate.product_into(attended, quantised, inner, None)?;
        if let Activation::Gelu(gelu) = &self.activation {
            gelu.apply(inner);
        }
        self.output.product_into(inner, quantised, rows, Some(attended))?;
        output_norm.apply(rows);
        Ok(())
    }
}

/// Self-attention over `(batch, tokens, 3 · hidden)` (each token's query, key and value, the
/// query already scaled), giving `(batch, tokens, hidden)`: per text and head, each token's
/// softmax over its scores with the text's tokens, and the mean of their values so weighted.
/// One pass, texts split across cores, read and written where they lie (candle's products for
/// this are many tiny ones, with copies to and from the heads' layout around them).
struct Attention {
    /// Per text, the positions that are tokens (not padding).
    keys: Vec<Vec<u32>>,
    heads: usize,
}

impl CustomOp1 for Attention {
    fn name(&self) -> &'static str {
        "bert-attention"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let input = contiguous_f32(storage, layout, "bert-attention")?;
        let &[batch, tokens, width] = layout.dims() else {
            candle_core::bail!("bert-attention: (batch, tokens, 3 * hidden) expected");
        };
        let hidden = width / 3;
        if self.keys.len() != batch || hidden * 3 != width || hidden % self.heads != 0 {
            candle_core::bail!("bert-attention: the shape does not match the batch or the heads");
        }
        let mut output = vec![0f32; batch * tokens * hidden];
        self.attend(input, &mut output, tokens, hidden);
        Ok((CpuStorage::F32(output), Shape::from((batch, tokens, hidden))))
    }
}

impl Attention {
    /// The attention of `input` (`(batch, tokens, 3 · hidden)`) into `output` (`(batch,
    /// tokens, hidden)`, zeros), texts split across cores.
    fn attend(&self, input: &[f32], output: &mut [f32], tokens: usize, hidden: usize) {
        let width = 3 * hidden;
        let wide = wide_vectors();
        output.par_chunks_mut(tokens * hidden).enumerate().for_each(|(text, out)| {
            let qkv = &input[text * tokens * width..][..tokens * width];
            let shape = TextShape { tokens, hidden, heads: self.heads, keys: &self.keys[text] };
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX2 and FMA (`wide_vectors`).
                return unsafe { attend_text_avx2(qkv, out, &shape) };
            }
            let _ = wide;
            attend_text(qkv, out, &shape);
        });
    }
}

/// One text's place in the attention's input and output.
struct TextShape<'a> {
    tokens: usize,
    hidden: usize,
    heads: usize,
    /// Its positions that are tokens.
    keys: &'a [u32],
}

/// Keys scored at once: one AVX2 vector of sums per query.
const KEYS_AT_ONCE: usize = 8;
/// Queries scored at once: their sums are independent, so their multiply-adds overlap.
const QUERIES_AT_ONCE: usize = 4;
/// Dimensions of a context summed at once (four AVX2 vectors, independent sums).
const DIMS_AT_ONCE: usize = 32;

/// One text's attention: `qkv` is `(tokens, 3 · hidden)`, `out` `(tokens, hidden)` (zeros).
/// The head's keys are laid out dimension by dimension (padded with zero keys to a multiple of
/// [`KEYS_AT_ONCE`]), so that scores are summed along the keys, [`QUERIES_AT_ONCE`] queries by
/// [`KEYS_AT_ONCE`] keys at a time, and a context [`DIMS_AT_ONCE`] dimensions at a time: sums
/// that stay in vector registers (the same sums, in the same order, as one query, key and
/// dimension at a time).
#[inline(always)]
fn attend_text(qkv: &[f32], out: &mut [f32], shape: &TextShape<'_>) {
    let TextShape { tokens, hidden, heads, keys } = *shape;
    let (width, size, count) = (3 * hidden, hidden / heads, keys.len());
    let padded = count.div_ceil(KEYS_AT_ONCE) * KEYS_AT_ONCE;
    let mut keys_t = vec![0f32; size * padded];
    let mut queries = vec![0f32; QUERIES_AT_ONCE * size];
    let mut scores = vec![0f32; QUERIES_AT_ONCE * padded];
    for head in 0..heads {
        let at = |token: usize, part: usize| {
            let from = token * width + part * hidden + head * size;
            &qkv[from..from + size]
        };
        for (j, &key) in keys.iter().enumerate() {
            for (d, &k) in at(key as usize, 1).iter().enumerate() {
                keys_t[d * padded + j] = k;
            }
        }
        for first in (0..tokens).step_by(QUERIES_AT_ONCE) {
            let n = (tokens - first).min(QUERIES_AT_ONCE);
            for (t, query) in queries.chunks_exact_mut(size).enumerate() {
                if t < n {
                    query.copy_from_slice(at(first + t, 0));
                } else {
                    query.fill(0.0);
                }
            }
            score(&queries, &keys_t, &mut scores, padded);
            for t in 0..n {
                let weights = &mut scores[t * padded..][..count];
                let max = weights.iter().fold(f32::MIN, |m, &w| m.max(w));
                for w in weights.iter_mut() {
                    *w = exp_non_positive(*w - max);
                }
                let total: f32 = weights.iter().sum();
                for w in weights.iter_mut() {
                    *w /= total;
                }
                let context = &mut out[(first + t) * hidden + head * size..][..size];
                mix(weights, keys, |key| at(key as usize, 2), context);
            }
        }
    }
}

/// The scores of [`QUERIES_AT_ONCE`] queries (`queries`, one after another) with every key
/// (`keys_t`: dimension by dimension, `padded` keys each), into `scores` (`padded` per query).
#[inline(always)]
fn score(queries: &[f32], keys_t: &[f32], scores: &mut [f32], padded: usize) {
    let size = queries.len() / QUERIES_AT_ONCE;
    for block in (0..padded).step_by(KEYS_AT_ONCE) {
        let mut sums = [[0f32; KEYS_AT_ONCE]; QUERIES_AT_ONCE];
        for d in 0..size {
            let k: &[f32; KEYS_AT_ONCE] =
                keys_t[d * padded + block..][..KEYS_AT_ONCE].try_into().expect("a block of keys");
            for (t, sums) in sums.iter_mut().enumerate() {
                let q = queries[t * size + d];
                for (s, &k) in sums.iter_mut().zip(k) {
                    *s += q * k;
                }
            }
        }
        for (t, sums) in sums.iter().enumerate() {
            scores[t * padded + block..][..KEYS_AT_ONCE].copy_from_slice(sums);
        }
    }
}

/// Adds to `context` the values of `keys` (`value(key)`), weighted by `weights`.
#[inline(always)]
fn mix<'a>(weights: &[f32], keys: &[u32], value: impl Fn(u32) -> &'a [f32], context: &mut [f32]) {
    if !context.len().is_multiple_of(DIMS_AT_ONCE) {
        for (&w, &key) in weights.iter().zip(keys) {
            for (c, &v) in context.iter_mut().zip(value(key)) {
                *c += w * v;
            }
        }
        return;
    }
    for (start, context) in context.chunks_exact_mut(DIMS_AT_ONCE).enumerate() {
        let mut sums: [f32; DIMS_AT_ONCE] = context.try_into().expect("a chunk of the context");
        for (&w, &key) in weights.iter().zip(keys) {
            let v: &[f32; DIMS_AT_ONCE] =
                value(key)[start * DIMS_AT_ONCE..][..DIMS_AT_ONCE].try_into().expect("a chunk of a value");
            for (s, &v) in sums.iter_mut().zip(v) {
                *s += w * v;
            }
        }
        context.copy_from_slice(&sums);
    }
}

/// [`attend_text`] compiled for AVX2 (eight lanes instead of SSE2's four).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn attend_text_avx2(qkv: &[f32], out: &mut [f32], shape: &TextShape<'_>) {
    attend_text(qkv, out, shape);
}

/// Whether this CPU runs the AVX2 versions of the loops here (the build targets plain x86-64,
/// whose vectors are SSE2's).
fn wide_vectors() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `gelu(x + bias)` over the last dimension, with `erf`: one pass, rows split across cores.
struct GeluWithBias {
    bias: Vec<f32>,
}

impl InplaceOp1 for GeluWithBias {
    fn name(&self) -> &'static str {
        "gelu-with-bias"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let width = self.bias.len();
        let (CpuStorage::F32(data), Some((start, end))) = (storage, layout.contiguous_offsets()) else {
            candle_core::bail!("gelu-with-bias: a contiguous f32 tensor is expected");
        };
        if layout.dims().last() != Some(&width) {
            candle_core::bail!("gelu-with-bias: the last dimension must be {width}");
        }
        self.apply(&mut data[start..end]);
        Ok(())
    }
}

impl GeluWithBias {
    /// `gelu(x + bias)` on rows of `bias.len()` values, in place.
    fn apply(&self, data: &mut [f32]) {
        let width = self.bias.len();
        // Rows in chunks of about 64 KB: enough work per task, and every core gets some.
        let rows = (16 * 1024 / width).max(1);
        let wide = wide_vectors();
        data.par_chunks_mut(rows * width).for_each(|chunk| {
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX2 and FMA (`wide_vectors`).
                return unsafe { gelu_rows_avx2(chunk, &self.bias) };
            }
            let _ = wide;
            gelu_rows(chunk, &self.bias);
        });
    }
}

/// `gelu(x + bias)` on each row of `rows`, in place.
#[inline(always)]
fn gelu_rows(rows: &mut [f32], bias: &[f32]) {
    for row in rows.chunks_exact_mut(bias.len()) {
        for (x, &b) in row.iter_mut().zip(bias) {
            *x = gelu(*x + b);
        }
    }
}

/// [`gelu_rows`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gelu_rows_avx2(rows: &mut [f32], bias: &[f32]) {
    gelu_rows(rows, bias);
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::D;

    /// Attention one query, key and dimension at a time, in f64.
    fn attention_reference(qkv: &[f32], shape: &TextShape<'_>) -> Vec<f32> {
        let TextShape { tokens, hidden, heads, keys } = *shape;
        let size = hidden / heads;
        let at = |token: usize, part: usize, head: usize, d: usize| {
            f64::from(qkv[token * 3 * hidden + part * hidden + head * size + d])
        };
        let mut out = vec![0f32; tokens * hidden];
        for head in 0..heads {
            for token in 0..tokens {
                let scores: Vec<f64> = keys
                    .iter()
                    .map(|&key| (0..size).map(|d| at(token, 0, head, d) * at(key as usize, 1, head, d)).sum())
                    .collect();
                let max = scores.iter().copied().fold(f64::MIN, f64::max);
                let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let total: f64 = weights.iter().sum();
                for d in 0..size {
                    let value: f64 = weights
                        .iter()
                        .zip(keys)
                        .map(|(w, &key)| w / total * at(key as usize, 2, head, d))
                        .sum();
                    out[token * hidden + head * size + d] = value as f32;
                }
            }
        }
        out
    }

    #[test]
    fn layers_on_scratch_buffers_match_the_same_layers_in_candle_operations() {
        let device = candle_core::Device::Cpu;
        // Weights as the fuzz target makes them (checkpoint names, random values of trained
        // sizes).
        let shape = super::super::fuzz::Shape {
            layers: 2,
            heads: 4,
            head_size: 16,
            intermediate: 128,
            activation: HiddenAct::Gelu,
            seed: 1,
        };
        let (config, tensors) = (shape.config(), shape.tensors());
        for products in [Products::Exact, Products::Int8] {
            let vb = VarBuilder::from_tensors(tensors.clone(), DType::F32, &device);
            let bert = Bert::load(vb, &config, products).unwrap();
            // Without an int8 kernel (AVX2 at least), int8 products are f32 ones.
            assert_eq!(bert.is_int8(), products == Products::Int8 && Kernel::detect().is_some());
            assert!(
                bert.layers.iter().all(|l| l.norms.is_some()),
                "GELU: every layer runs on scratch buffers"
            );
            compare_scratch_and_candle(&bert, &config, &format!("{products:?}"));
        }
    }

    /// [`Bert::forward`] on scratch buffers against the same layers through candle's
    /// operations.
    fn compare_scratch_and_candle(bert: &Bert, config: &Config, label: &str) {
        let (device, hidden) = (candle_core::Device::Cpu, config.hidden_size);
        let mut scratch = Scratch::default();
        // A larger batch, then a smaller one on the same buffers; padding in both.
        for (texts, tokens) in [(5, 11), (2, 6)] {
            let ids: Vec<u32> = (0..texts * tokens).map(|i| (i * 7 % config.vocab_size) as u32).collect();
            let mask: Vec<u32> =
                (0..texts * tokens).map(|i| u32::from(i / tokens != 1 || i % tokens < 3)).collect();
            let ids = Tensor::from_vec(ids, (texts, tokens), &device).unwrap();
            let mask = Tensor::from_vec(mask, (texts, tokens), &device).unwrap();
            let on_scratch = bert.forward(&ids, &mask, &mut scratch).unwrap();
            let in_candle = bert.forward_on(&ids, &mask, None).unwrap();
            assert_eq!(on_scratch.dims(), &[texts, tokens, hidden]);
            let (a, b) = (
                on_scratch.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                in_candle.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            );
            let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
            assert!(worst < 1e-3, "{label}: {texts} texts of {tokens} tokens: {worst} apart");
        }
    }

    #[test]
    fn attention_matches_the_definition() {
        for (tokens, hidden, heads, keys) in
            [(11, 128, 4, (0..11).filter(|k| k % 5 != 3).collect::<Vec<u32>>()), (6, 64, 4, vec![0, 1, 2, 4])]
        {
            let values: Vec<f32> =
                (0..3 * hidden * tokens).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
            let shape = TextShape { tokens, hidden, heads, keys: &keys };
            let mut ours = vec![0f32; tokens * hidden];
            attend_text(&values, &mut ours, &shape);
            let expected = attention_reference(&values, &shape);
            for (a, b) in ours.iter().zip(&expected) {
                assert!((a - b).abs() < 1e-5, "{hidden}/{heads}: {a} against {b}");
            }
        }
    }

    /// The plain (SSE2) loops, which CPUs without AVX2 run, give what the AVX2 ones give.
    #[test]
    fn the_plain_and_the_avx2_loops_agree() {
        let values: Vec<f32> = (0..3 * 64 * 6).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
        let shape = TextShape { tokens: 6, hidden: 64, heads: 4, keys: &[0, 1, 2, 4] };
        let mut plain = vec![0f32; 6 * 64];
        attend_text(&values, &mut plain, &shape);
        let mut bias_plain = values.clone();
        gelu_rows(&mut bias_plain, &values[..64]);
        assert!(plain.iter().any(|&x| x != 0.0));
        #[cfg(target_arch = "x86_64")]
        if wide_vectors() {
            let mut wide = vec![0f32; 6 * 64];
            // SAFETY: the CPU has AVX2 and FMA.
            unsafe { attend_text_avx2(&values, &mut wide, &shape) };
            let mut bias_wide = values.clone();
            // SAFETY: as above.
            unsafe { gelu_rows_avx2(&mut bias_wide, &values[..64]) };
            for (a, b) in plain.iter().zip(&wide).chain(bias_plain.iter().zip(&bias_wide)) {
                assert!((a - b).abs() < 1e-5, "{a} against {b}");
            }
        }
    }

    #[test]
    fn gelu_with_bias_adds_the_bias_per_column_and_keeps_the_shape() {
        let device = candle_core::Device::Cpu;
        let x = Tensor::new(&[[0.5f32, -1.0, 2.0], [0.0, 3.0, -4.0]], &device).unwrap();
        let op = GeluWithBias { bias: vec![0.5, 1.0, -2.0] };
        let y = x.copy().unwrap();
        y.inplace_op1(&op).unwrap();
        let expected = x.broadcast_add(&Tensor::new(&[0.5f32, 1.0, -2.0], &device).unwrap()).unwrap();
        let expected = expected.gelu_erf().unwrap();
        let diff = (y - expected).unwrap().abs().unwrap().max_keepdim(D::Minus1).unwrap();
        for row in diff.to_vec2::<f32>().unwrap() {
            assert!(row[0] < 1e-6, "{row:?}");
        }
    }
}
