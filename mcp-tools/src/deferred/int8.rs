//! int8 matrix products for the encoder's linear layers, on CPUs with AVX-512 VNNI (one
//! instruction multiplies and adds 64 pairs of bytes, four times the multiply-adds of an f32
//! instruction). Weights and inputs are quantised in groups of 32 values along the inner
//! dimension, each group with its own scale (as ggml's `Q8_0`): a scale per row alone loses
//! retrieval quality on the sets of `bench/retrieval.md`, groups of 32 give the same figures
//! as f32. The weights are quantised once, when the model loads; each input row's groups when
//! it is multiplied.
//!
//! VNNI multiplies unsigned by signed bytes, so an input group is stored as `q + 128` (`q` in
//! −127..=127) and the product of a group is corrected by `128 · Σ w` of the weights' group,
//! folded with the weights' scale into one multiply-subtract per group.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

use super::approx::gelu;

/// Values sharing one scale, along the inner dimension.
const GROUP: usize = 32;
/// Output columns per vector: 16 lanes of 32 bits.
const LANES: usize = 16;
/// Input rows per tile of the product.
const TILE_ROWS: usize = 6;
/// Vectors of output columns per tile (32 columns).
const TILE_VECTORS: usize = 2;
/// Input rows per parallel task.
const TASK_ROWS: usize = 48;

/// Whether this CPU runs [`Int8Linear`] (AVX-512 with VNNI).
pub(super) fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A linear layer `x · Wᵀ + b` with int8 weights, as a candle operation on `(…, inner)` f32
/// tensors. Built only where [`supported`].
pub(super) struct Int8Linear {
    outputs: usize,
    inner: usize,
    /// Per block of 16 output columns, per group, per 4 inner positions: the 16 columns'
    /// 4 weights (64 bytes, one vector).
    weights: Vec<i8>,
    /// Per block of 16 columns and group: the 16 columns' scales, then each scale times
    /// `128 · Σ w` of the column's group (the correction for the inputs' offset).
    scales: Vec<f32>,
    bias: Option<Vec<f32>>,
    /// GELU applied to each output (after the bias), while the tile is in the cache.
    gelu: bool,
}

impl Int8Linear {
    /// Quantises `weight` (`(outputs, inner)`); `None` if the shape does not suit the tiles
    /// (inner dimension a multiple of 32, outputs a multiple of 16) or the CPU lacks VNNI.
    pub(super) fn new(weight: &Tensor, bias: Option<&Tensor>) -> Result<Option<Int8Linear>> {
        let (outputs, inner) = weight.dims2()?;
        if !supported() || inner % GROUP != 0 || outputs % LANES != 0 || inner == 0 {
            return Ok(None);
        }
        let rows = weight.to_vec2::<f32>()?;
        let groups = inner / GROUP;
        let mut weights = vec![0i8; outputs * inner];
        let mut scales = vec![0f32; outputs / LANES * groups * 2 * LANES];
        let quantised: Vec<Vec<(f32, [i8; GROUP])>> = rows
            .par_iter()
            .map(|row| {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `supported()` (checked above): the CPU has AVX-512 F.
                return unsafe { quantise_row_avx512(row) };
                #[cfg(not(target_arch = "x86_64"))]
                row.chunks_exact(GROUP).map(quantise_group).collect()
            })
            .collect();
        for (n, row) in quantised.iter().enumerate() {
            let (block, lane) = (n / LANES, n % LANES);
            for (g, &(scale, quantised)) in row.iter().enumerate() {
                let at = (block * groups + g) * 2 * LANES;
                let sum: i32 = quantised.iter().map(|&q| i32::from(q)).sum();
                scales[at + lane] = scale;
                scales[at + LANES + lane] = scale * 128.0 * sum as f32;
                for (i, &q) in quantised.iter().enumerate() {
                    let vector = ((block * groups + g) * (GROUP / 4) + i / 4) * 4 * LANES;
                    weights[vector + lane * 4 + i % 4] = q;
                }
            }
        }
        let bias = bias.map(|b| b.to_vec1::<f32>()).transpose()?;
        Ok(Some(Int8Linear { outputs, inner, weights, scales, bias, gelu: false }))
    }

    /// The same layer with `bias` (one per output), followed by GELU (with `erf`), both
    /// computed on each tile as it is stored.
    pub(super) fn with_bias_and_gelu(self, bias: Vec<f32>) -> Int8Linear {
        assert_eq!(bias.len(), self.outputs, "one bias per output");
        Int8Linear { bias: Some(bias), gelu: true, ..self }
    }

    /// The number of outputs (columns of the product).
    pub(super) fn outputs(&self) -> usize {
        self.outputs
    }

    /// `input` (`rows × inner`, row-major) times the weights, plus the bias.
    fn product(&self, input: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; input.len() / self.inner * self.outputs];
        self.product_into(input, &mut Quantised::default(), &mut out, None);
        out
    }

    /// [`product`](Self::product) into `out` (`rows × outputs`, overwritten), plus `residual`
    /// (the same shape as `out`) if given, added on each tile as it is stored; `quantised`
    /// holds the quantised input (its buffers are reused from call to call).
    pub(super) fn product_into(
        &self,
        input: &[f32],
        quantised: &mut Quantised,
        out: &mut [f32],
        residual: Option<&[f32]>,
    ) {
        let rows = input.len() / self.inner;
        assert!(
            input.len() == rows * self.inner && out.len() == rows * self.outputs,
            "int8-linear: {} inputs and {} outputs for rows of {} and {}",
            input.len(),
            out.len(),
            self.inner,
            self.outputs
        );
        assert!(residual.is_none_or(|r| r.len() == out.len()), "int8-linear: the residual's shape differs");
        quantised.quantise(input, self.inner);
        let quantised = &*quantised;
        let task = TASK_ROWS * self.outputs;
        out.par_chunks_mut(task).enumerate().for_each(|(n, out)| {
            let first = n * TASK_ROWS;
            let residual = residual.map(|r| &r[n * task..][..out.len()]);
            // SAFETY: `Int8Linear` exists only where `supported()`; the slices have the sizes
            // `tiles` expects (rows of `inner` inputs, `outputs` outputs, the residual as `out`).
            #[cfg(target_arch = "x86_64")]
            unsafe {
                tiles(self, quantised, first, out, residual)
            };
            #[cfg(not(target_arch = "x86_64"))]
            let _ = (first, quantised, residual);
        });
    }
}

impl CustomOp1 for Int8Linear {
    fn name(&self) -> &'static str {
        "int8-linear"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let input = contiguous_f32(storage, layout, "int8-linear")?;
        let mut dims = layout.dims().to_vec();
        if dims.last() != Some(&self.inner) {
            candle_core::bail!("int8-linear: the last dimension must be {}", self.inner);
        }
        *dims.last_mut().expect("checked above") = self.outputs;
        Ok((CpuStorage::F32(self.product(input)), Shape::from(dims)))
    }
}

/// The values of a contiguous f32 tensor's storage, or an error naming `op`.
pub(super) fn contiguous_f32<'a>(storage: &'a CpuStorage, layout: &Layout, op: &str) -> Result<&'a [f32]> {
    match (storage, layout.contiguous_offsets()) {
        (CpuStorage::F32(data), Some((start, end))) => Ok(&data[start..end]),
        _ => candle_core::bail!("{op}: a contiguous f32 tensor is expected"),
    }
}

/// [`quantise_group`] over a row's groups, compiled for AVX-512 (where rounding is one
/// instruction; plain x86-64 calls a function per value).
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn quantise_row_avx512(row: &[f32]) -> Vec<(f32, [i8; GROUP])> {
    row.chunks_exact(GROUP).map(quantise_group).collect()
}

/// The scale of a group (largest magnitude / 127) and its values divided by it, rounded.
#[inline(always)]
fn quantise_group(values: &[f32]) -> (f32, [i8; GROUP]) {
    let max = values.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = max / 127.0;
    let inverse = if max > 0.0 { 127.0 / max } else { 0.0 };
    let mut out = [0i8; GROUP];
    for (q, v) in out.iter_mut().zip(values) {
        *q = (v * inverse).round_ties_even().clamp(-127.0, 127.0) as i8;
    }
    (scale, out)
}

/// Input rows quantised per group: each value as `q + 128`, and each group's scale. Its
/// buffers are kept from one product to the next.
#[derive(Default)]
pub(super) struct Quantised {
    values: Vec<u8>,
    scales: Vec<f32>,
}

impl Quantised {
    /// Quantises `input` (rows of `inner` values) in place of what was held.
    fn quantise(&mut self, input: &[f32], inner: usize) {
        let Quantised { values, scales } = self;
        values.resize(input.len(), 0);
        scales.resize(input.len() / GROUP, 0.0);
        values
            .par_chunks_mut(TASK_ROWS * inner)
            .zip(scales.par_chunks_mut(TASK_ROWS * inner / GROUP))
            .zip(input.par_chunks(TASK_ROWS * inner))
            .for_each(|((values, scales), input)| {
                for ((out, scale), group) in
                    values.chunks_exact_mut(GROUP).zip(scales.iter_mut()).zip(input.chunks_exact(GROUP))
                {
                    #[cfg(target_arch = "x86_64")]
                    {
                        // SAFETY: `Quantised` is made only for `Int8Linear`, which exists only
                        // where `supported()`; the group and its output are 32 values.
                        *scale = unsafe { quantise_input_group(group, out) };
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    {
                        let (s, q) = quantise_group(group);
                        *scale = s;
                        for (o, q) in out.iter_mut().zip(q) {
                            *o = (i16::from(q) + 128) as u8;
                        }
                    }
                }
            });
    }
}

/// [`quantise_group`] for an input group, in AVX-512 (rounding to nearest, ties to even, as
/// `round_ties_even`), each value stored as `q + 128`; returns the scale.
///
/// # Safety
/// The CPU has AVX-512 F; `group` and `out` hold 32 values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn quantise_input_group(group: &[f32], out: &mut [u8]) -> f32 {
    use std::arch::x86_64::*;
    debug_assert!(group.len() == GROUP && out.len() == GROUP);
    // SAFETY: 32 values in `group`.
    let (low, high) =
        unsafe { (_mm512_loadu_ps(group.as_ptr()), _mm512_loadu_ps(group.as_ptr().add(LANES))) };
    let max = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(low), _mm512_abs_ps(high)));
    let inverse = _mm512_set1_ps(if max > 0.0 { 127.0 / max } else { 0.0 });
    let offset = _mm512_set1_epi32(128);
    let quantise = |v: __m512| {
        let rounded = _mm512_cvt_roundps_epi32::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_mul_ps(v, inverse),
        );
        let clamped =
            _mm512_min_epi32(_mm512_max_epi32(rounded, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
        _mm512_cvtepi32_epi8(_mm512_add_epi32(clamped, offset))
    };
    // SAFETY: 32 bytes in `out`.
    unsafe {
        _mm_storeu_si128(out.as_mut_ptr().cast(), quantise(low));
        _mm_storeu_si128(out.as_mut_ptr().add(LANES).cast(), quantise(high));
    }
    max / 127.0
}

/// The rows `first..` of the product that `out` holds (whole rows of outputs), tile by tile,
/// plus `residual` (the same rows) if given.
///
/// # Safety
/// The CPU has AVX-512 F, BW and VNNI; `out` holds at most the rows of `input` from `first`,
/// `residual` as many values as `out`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tiles(
    layer: &Int8Linear,
    input: &Quantised,
    first: usize,
    out: &mut [f32],
    residual: Option<&[f32]>,
) {
    let rows = out.len() / layer.outputs;
    let blocks = layer.outputs / LANES;
    let mut block = 0;
    while block < blocks {
        let vectors = (blocks - block).min(TILE_VECTORS);
        let mut row = 0;
        while row < rows {
            let count = (rows - row).min(TILE_ROWS);
            let at = Tile { first: first + row, out_row: row, block, residual };
            // SAFETY: as for `tiles`; the tile lies within `out` and the input.
            unsafe {
                match (count, vectors) {
                    (6, 2) => tile::<6, 2>(layer, input, &at, out),
                    (5, 2) => tile::<5, 2>(layer, input, &at, out),
                    (4, 2) => tile::<4, 2>(layer, input, &at, out),
                    (3, 2) => tile::<3, 2>(layer, input, &at, out),
                    (2, 2) => tile::<2, 2>(layer, input, &at, out),
                    (1, 2) => tile::<1, 2>(layer, input, &at, out),
                    (6, _) => tile::<6, 1>(layer, input, &at, out),
                    (5, _) => tile::<5, 1>(layer, input, &at, out),
                    (4, _) => tile::<4, 1>(layer, input, &at, out),
                    (3, _) => tile::<3, 1>(layer, input, &at, out),
                    (2, _) => tile::<2, 1>(layer, input, &at, out),
                    _ => tile::<1, 1>(layer, input, &at, out),
                }
            }
            row += count;
        }
        block += vectors;
    }
}

/// Where a tile is: its first input row, the same row in `out`, its first block of columns;
/// and the values to add to `out` (laid out as `out`), if any.
struct Tile<'a> {
    first: usize,
    out_row: usize,
    block: usize,
    residual: Option<&'a [f32]>,
}

/// `R` rows by `V` vectors of 16 columns: per group, the byte products summed in 32-bit
/// lanes, then corrected, scaled and added to the f32 sums; at the end the bias (and GELU), then
/// the residual.
///
/// # Safety
/// The CPU has AVX-512 F, BW and VNNI; rows `at.first..at.first + R` exist in `input`, rows
/// `at.out_row..+R` in `out` (and in `at.residual`), and blocks `at.block..at.block + V` in the
/// layer.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile<const R: usize, const V: usize>(
    layer: &Int8Linear,
    input: &Quantised,
    at: &Tile<'_>,
    out: &mut [f32],
) {
    use std::arch::x86_64::*;
    let inner = layer.inner;
    let groups = inner / GROUP;
    debug_assert!((at.first + R) * inner <= input.values.len());
    debug_assert!((at.out_row + R) * layer.outputs <= out.len());
    debug_assert!((at.block + V) * LANES <= layer.outputs);
    let mut totals = [[_mm512_setzero_ps(); V]; R];
    let values = input.values.as_ptr();
    let weights = layer.weights.as_ptr();
    for g in 0..groups {
        let mut sums = [[_mm512_setzero_si512(); V]; R];
        for step in 0..GROUP / 4 {
            let mut w = [_mm512_setzero_si512(); V];
            for (v, w) in w.iter_mut().enumerate() {
                let vector = (((at.block + v) * groups + g) * (GROUP / 4) + step) * 4 * LANES;
                // SAFETY: the vector lies within the weights (blocks checked above).
                *w = unsafe { _mm512_loadu_si512(weights.add(vector).cast()) };
            }
            for (r, sums) in sums.iter_mut().enumerate() {
                let from = (at.first + r) * inner + g * GROUP + step * 4;
                // SAFETY: four bytes of the row's group.
                let four = unsafe { values.add(from).cast::<i32>().read_unaligned() };
                let four = _mm512_set1_epi32(four);
                for (sum, &w) in sums.iter_mut().zip(&w) {
                    *sum = _mm512_dpbusd_epi32(*sum, four, w);
                }
            }
        }
        for v in 0..V {
            let at_scales = ((at.block + v) * groups + g) * 2 * LANES;
            // SAFETY: the block's scales and corrections for the group.
            let (scale, correction) = unsafe {
                (
                    _mm512_loadu_ps(layer.scales.as_ptr().add(at_scales)),
                    _mm512_loadu_ps(layer.scales.as_ptr().add(at_scales + LANES)),
                )
            };
            for r in 0..R {
                let corrected = _mm512_fmsub_ps(scale, _mm512_cvtepi32_ps(sums[r][v]), correction);
                let input_scale = _mm512_set1_ps(input.scales[(at.first + r) * groups + g]);
                totals[r][v] = _mm512_fmadd_ps(corrected, input_scale, totals[r][v]);
            }
        }
    }
    for (r, totals) in totals.iter().enumerate() {
        let row = (at.out_row + r) * layer.outputs;
        for (v, &total) in totals.iter().enumerate() {
            let column = (at.block + v) * LANES;
            let total = match &layer.bias {
                // SAFETY: 16 biases of the block.
                Some(bias) => _mm512_add_ps(total, unsafe { _mm512_loadu_ps(bias.as_ptr().add(column)) }),
                None => total,
            };
            // SAFETY: 16 outputs of the row, within `out`.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(row + column), total) };
        }
        let stored = &mut out[row + at.block * LANES..][..V * LANES];
        if layer.gelu {
            for x in stored.iter_mut() {
                *x = gelu(*x);
            }
        }
        if let Some(residual) = at.residual {
            for (x, r) in stored.iter_mut().zip(&residual[row + at.block * LANES..][..V * LANES]) {
                *x += r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Module, Tensor};

    use super::*;

    /// The same product computed from the quantised values one by one (integer sums).
    fn reference(layer_weight: &[Vec<f32>], bias: &[f32], input: &[Vec<f32>]) -> Vec<Vec<f32>> {
        input
            .iter()
            .map(|x| {
                layer_weight
                    .iter()
                    .zip(bias)
                    .map(|(w, b)| {
                        let groups = x.chunks_exact(GROUP).zip(w.chunks_exact(GROUP));
                        let sum: f64 = groups
                            .map(|(x, w)| {
                                let ((sx, qx), (sw, qw)) = (quantise_group(x), quantise_group(w));
                                let dot: i32 =
                                    qx.iter().zip(&qw).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
                                f64::from(sx) * f64::from(sw) * f64::from(dot)
                            })
                            .sum();
                        (sum + f64::from(*b)) as f32
                    })
                    .collect()
            })
            .collect()
    }

    /// Deterministic values of varied magnitudes, with an outlier now and then.
    fn values(count: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        (0..count)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let unit = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                if i % 97 == 0 { unit * 40.0 } else { unit * 2.0 }
            })
            .collect()
    }

    #[test]
    fn groups_are_quantised_to_127_steps_of_their_largest_magnitude() {
        let mut group = [0.0f32; GROUP];
        group[0] = -2.54;
        group[1] = 1.0;
        group[2] = 0.01;
        let (scale, q) = quantise_group(&group);
        assert!((scale - 0.02).abs() < 1e-6, "{scale}");
        assert_eq!((q[0], q[1], q[2], q[3]), (-127, 50, 0, 0));
        let (scale, q) = quantise_group(&[0.0; GROUP]);
        assert_eq!((scale, q), (0.0, [0; GROUP]), "a group of zeros stays zeros, with no division by zero");
    }

    #[test]
    fn the_product_matches_the_quantised_arithmetic_and_the_f32_product() {
        if !supported() {
            // Without VNNI the layer is never built: the encoder keeps candle's f32 products.
            let weight = Tensor::zeros((16, 32), candle_core::DType::F32, &Device::Cpu).unwrap();
            assert!(Int8Linear::new(&weight, None).unwrap().is_none());
            return;
        }
        // Rows and columns that leave partial tiles (7 rows of 6, 3 vectors of 2), and more
        // rows than one task.
        for (rows, outputs, inner) in [(7, 48, 64), (100, 64, 384), (13, 16, 1536)] {
            let w = values(outputs * inner, 1);
            let b = values(outputs, 2);
            let x = values(rows * inner, 3);
            let weight = Tensor::from_vec(w.clone(), (outputs, inner), &Device::Cpu).unwrap();
            let bias = Tensor::from_vec(b.clone(), outputs, &Device::Cpu).unwrap();
            let input = Tensor::from_vec(x.clone(), (1, rows, inner), &Device::Cpu).unwrap();
            let layer = Int8Linear::new(&weight, Some(&bias)).unwrap().expect("the CPU has VNNI");
            let ours = input.apply_op1_no_bwd(&layer).unwrap();
            assert_eq!(ours.dims(), &[1, rows, outputs]);
            let ours = ours.squeeze(0).unwrap().to_vec2::<f32>().unwrap();
            let w_rows: Vec<Vec<f32>> = w.chunks(inner).map(<[f32]>::to_vec).collect();
            let x_rows: Vec<Vec<f32>> = x.chunks(inner).map(<[f32]>::to_vec).collect();
            let expected = reference(&w_rows, &b, &x_rows);
            let exact = candle_nn::Linear::new(weight.clone(), Some(bias))
                .forward(&input)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec2::<f32>()
                .unwrap();
            let (mut worst_ref, mut worst_f32, mut norm) = (0f32, 0f32, 0f32);
            for ((o, e), f) in
                ours.iter().flatten().zip(expected.iter().flatten()).zip(exact.iter().flatten())
            {
                worst_ref = worst_ref.max((o - e).abs());
                worst_f32 = worst_f32.max((o - f).abs());
                norm = norm.max(f.abs());
            }
            assert!(
                worst_ref <= 1e-4 * norm,
                "{rows}x{inner}x{outputs}: {worst_ref} off the integer arithmetic"
            );
            assert!(
                worst_f32 <= 0.02 * norm,
                "{rows}x{inner}x{outputs}: {worst_f32} off f32 (largest {norm})"
            );
            // Into a buffer, with a residual added, the quantised input's buffers reused from
            // the product before (of another shape).
            let residual = values(rows * outputs, 4);
            let mut into = vec![f32::NAN; rows * outputs];
            let mut quantised = Quantised::default();
            layer.product_into(&values(3 * inner, 5), &mut quantised, &mut into[..3 * outputs], None);
            layer.product_into(&x, &mut quantised, &mut into, Some(&residual));
            for ((o, e), r) in into.iter().zip(expected.iter().flatten()).zip(&residual) {
                assert!((o - (e + r)).abs() <= 1e-4 * norm, "{rows}x{inner}x{outputs}: {o} vs {e} + {r}");
            }
            // The same with GELU on each tile: gelu(x · Wᵀ + b).
            let fused = Int8Linear::new(&weight, None).unwrap().unwrap().with_bias_and_gelu(b.clone());
            let fused = input.apply_op1_no_bwd(&fused).unwrap().squeeze(0).unwrap().to_vec2::<f32>().unwrap();
            for (f, e) in fused.iter().flatten().zip(expected.iter().flatten()) {
                assert!(
                    (f - gelu(*e)).abs() <= 1e-4 * norm,
                    "{rows}x{inner}x{outputs}: gelu {f} vs {}",
                    gelu(*e)
                );
            }
        }
    }

    #[test]
    fn shapes_that_do_not_suit_the_tiles_are_left_to_f32() {
        for (outputs, inner) in [(16, 48), (24, 64)] {
            let weight = Tensor::ones((outputs, inner), candle_core::DType::F32, &Device::Cpu).unwrap();
            assert!(Int8Linear::new(&weight, None).unwrap().is_none(), "{outputs}x{inner}");
        }
    }
}
