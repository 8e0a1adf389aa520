//! int8 matrix products for the encoder's linear layers. Weights and inputs are quantised in
//! groups of 32 values along the inner dimension, each group with its own scale (as ggml's
//! `Q8_0`): a scale per row alone loses retrieval quality on the sets of `bench/retrieval.md`,
//! groups of 32 give the same figures as f32. The weights are quantised once, when the model
//! loads; each input row's groups when it is multiplied.
//!
//! Two kernels compute the same numbers, bit for bit, so that search ranks alike on every
//! x86-64 CPU with AVX2: the integer sum of a group's products is exact in both, and the f32
//! steps after it (one fused multiply-subtract and one fused multiply-add per group, in the
//! same order) are the same instructions on 16 or 8 lanes.
//! - **AVX-512 VNNI**: one instruction multiplies and adds 64 pairs of bytes, four times the
//!   multiply-adds of an f32 instruction. VNNI multiplies unsigned by signed bytes, so an input
//!   group is stored as `q + 128` (`q` in −127..=127) and the product of a group is corrected
//!   by `128 · Σ w` of the weights' group, folded with the weights' scale into one
//!   multiply-subtract per group.
//! - **AVX2** (with FMA): the same weights, widened to 16 bits as they are loaded, and the
//!   inputs stored widened (`q + 128` in 16 bits); one `vpmaddwd` multiplies 16 pairs and adds
//!   them two by two into 32-bit sums (exact: `255 · 127 · 2` is far from 2³¹). A group's sums
//!   are then the VNNI kernel's, corrected and scaled the same way.
//!
//! Other CPUs keep f32 products.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

use super::approx::gelu;

/// Values sharing one scale, along the inner dimension.
const GROUP: usize = 32;
/// Output columns per vector of the VNNI kernel: 16 lanes of 32 bits.
const LANES: usize = 16;
/// Output columns per tile of the AVX2 kernel (half a block of [`LANES`] columns).
const HALF: usize = LANES / 2;
/// Input rows per tile of the product.
const TILE_ROWS: usize = 6;
/// Vectors of output columns per tile (32 columns) of the VNNI kernel.
const TILE_VECTORS: usize = 2;
/// Input rows per parallel task.
const TASK_ROWS: usize = 48;

/// The instructions an [`Int8Linear`] runs on; both give the same results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// AVX-512 F, BW and VNNI.
    Vnni,
    /// AVX2 and FMA.
    Avx2,
}

impl Kernel {
    /// The fastest kernel this CPU runs, if any.
    pub(super) fn detect() -> Option<Kernel> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
            {
                return Some(Kernel::Vnni);
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Some(Kernel::Avx2);
            }
        }
        None
    }

    /// Whether this CPU runs the kernel.
    fn runs_here(self) -> bool {
        match (self, Kernel::detect()) {
            (_, None) => false,
            (Kernel::Avx2, Some(_)) => true,
            (Kernel::Vnni, Some(best)) => best == Kernel::Vnni,
        }
    }
}

/// A linear layer `x · Wᵀ + b` with int8 weights, as a candle operation on `(…, inner)` f32
/// tensors. Built only where the CPU runs a [`Kernel`].
pub(super) struct Int8Linear {
    kernel: Kernel,
    outputs: usize,
    inner: usize,
    /// Per block of 16 output columns, per group, per 4 inner positions: the 16 columns'
    /// 4 weights (64 bytes, one VNNI vector; four AVX2 ones once widened, of 4 columns each).
    weights: Vec<i8>,
    /// Per block of 16 columns and group: the 16 columns' scales, then each scale times
    /// `128 · Σ w` of the column's group (the correction for the inputs' offset).
    scales: Vec<f32>,
    bias: Option<Vec<f32>>,
    /// GELU applied to each output (after the bias), while the tile is in the cache.
    gelu: bool,
}

impl Int8Linear {
    /// Quantises `weight` (`(outputs, inner)`) for this CPU's kernel; `None` if the shape does
    /// not suit the tiles (inner dimension a multiple of 32, outputs a multiple of 16) or the
    /// CPU runs no kernel. (The encoder calls [`with_kernel`](Self::with_kernel) with
    /// [`Kernel::detect`]'s.)
    #[cfg(test)]
    pub(super) fn new(weight: &Tensor, bias: Option<&Tensor>) -> Result<Option<Int8Linear>> {
        match Kernel::detect() {
            Some(kernel) => Int8Linear::with_kernel(weight, bias, kernel),
            None => Ok(None),
        }
    }

    /// [`new`](Self::new) with the given kernel; `None` also where the CPU does not run it.
    pub(super) fn with_kernel(
        weight: &Tensor,
        bias: Option<&Tensor>,
        kernel: Kernel,
    ) -> Result<Option<Int8Linear>> {
        let (outputs, inner) = weight.dims2()?;
        if !kernel.runs_here() || inner % GROUP != 0 || outputs % LANES != 0 || inner == 0 {
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
                // SAFETY: `runs_here()` (checked above): the CPU has AVX2 at least.
                return unsafe { quantise_row_avx2(row) };
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
        Ok(Some(Int8Linear { kernel, outputs, inner, weights, scales, bias, gelu: false }))
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

    /// The kernel the layer runs on.
    #[cfg(test)]
    pub(super) fn kernel(&self) -> Kernel {
        self.kernel
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
        quantised.quantise(input, self.inner, self.kernel);
        let quantised = &*quantised;
        let task = TASK_ROWS * self.outputs;
        out.par_chunks_mut(task).enumerate().for_each(|(n, out)| {
            let first = n * TASK_ROWS;
            let residual = residual.map(|r| &r[n * task..][..out.len()]);
            // SAFETY: `Int8Linear` exists only where its kernel `runs_here()`; the slices have
            // the sizes the tiles expect (rows of `inner` inputs, `outputs` outputs, the
            // residual as `out`), and `quantised` was just made for this kernel.
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

/// [`quantise_group`] over a row's groups, compiled for AVX2 (where rounding is one
/// instruction; plain x86-64 calls a function per value).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantise_row_avx2(row: &[f32]) -> Vec<(f32, [i8; GROUP])> {
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

/// Input rows quantised per group: each value as `q + 128` (in bytes for the VNNI kernel, in 16
/// bits for the AVX2 one), and each group's scale. Its buffers are kept from one product to
/// the next.
#[derive(Default)]
pub(super) struct Quantised {
    values: Vec<u8>,
    wide: Vec<u16>,
    scales: Vec<f32>,
}

impl Quantised {
    /// Quantises `input` (rows of `inner` values) for `kernel`, in place of what was held.
    fn quantise(&mut self, input: &[f32], inner: usize, kernel: Kernel) {
        let Quantised { values, wide, scales } = self;
        scales.resize(input.len() / GROUP, 0.0);
        let task = TASK_ROWS * inner;
        let scales = scales.par_chunks_mut(task / GROUP);
        #[cfg(target_arch = "x86_64")]
        match kernel {
            // SAFETY: the CPU has AVX-512 F (the VNNI kernel is only chosen where it runs).
            Kernel::Vnni => unsafe { quantise_groups(values, scales, input, task, quantise_input_group) },
            // SAFETY: the CPU has AVX2 (the AVX2 kernel is only chosen where it runs).
            Kernel::Avx2 => unsafe { quantise_groups(wide, scales, input, task, quantise_input_group_avx2) },
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("no int8 kernel outside x86-64: {kernel:?} {values:?} {wide:?} {scales:?}");
    }
}

/// `values` made as long as `input`, then `quantise(group, out)` on every group of `input` into
/// `values` and `scales`, `task` values to a parallel task.
///
/// # Safety
/// The CPU runs `quantise` (it has the instructions that function is compiled for).
#[cfg(target_arch = "x86_64")]
unsafe fn quantise_groups<T: Send + Clone + Default>(
    values: &mut Vec<T>,
    scales: rayon::slice::ChunksMut<'_, f32>,
    input: &[f32],
    task: usize,
    quantise: unsafe fn(&[f32], &mut [T]) -> f32,
) {
    values.resize(input.len(), T::default());
    values.par_chunks_mut(task).zip(scales).zip(input.par_chunks(task)).for_each(
        |((values, scales), input)| {
            for ((out, scale), group) in
                values.chunks_exact_mut(GROUP).zip(scales.iter_mut()).zip(input.chunks_exact(GROUP))
            {
                // SAFETY: as the caller promised; a group and its output are 32 values.
                *scale = unsafe { quantise(group, out) };
            }
        },
    );
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
    let (low, high) = group[..GROUP].split_at(LANES);
    // SAFETY: `low` holds 16 values (the slice above is bounds-checked).
    let low = unsafe { _mm512_loadu_ps(low.as_ptr()) };
    // SAFETY: `high` holds 16 values.
    let high = unsafe { _mm512_loadu_ps(high.as_ptr()) };
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
    let (low_out, high_out) = out[..GROUP].split_at_mut(LANES);
    // SAFETY: `low_out` holds 16 bytes (the slice above is bounds-checked), the store's width.
    unsafe { _mm_storeu_si128(low_out.as_mut_ptr().cast(), quantise(low)) };
    // SAFETY: `high_out` holds 16 bytes.
    unsafe { _mm_storeu_si128(high_out.as_mut_ptr().cast(), quantise(high)) };
    max / 127.0
}

/// The rows `first..` of the product that `out` holds (whole rows of outputs), tile by tile,
/// plus `residual` (the same rows) if given: tiles of up to 6 rows by 32 columns (VNNI) or 8
/// (AVX2).
///
/// # Safety
/// The CPU runs the layer's kernel; `out` holds at most the rows of `input` (quantised for
/// that kernel) from `first`, `residual` as many values as `out`.
#[cfg(target_arch = "x86_64")]
unsafe fn tiles(
    layer: &Int8Linear,
    input: &Quantised,
    first: usize,
    out: &mut [f32],
    residual: Option<&[f32]>,
) {
    let rows = out.len() / layer.outputs;
    // Units of columns (a VNNI vector's 16, or 8 for AVX2), and units per tile.
    let (width, per_tile) = match layer.kernel {
        Kernel::Vnni => (LANES, TILE_VECTORS),
        Kernel::Avx2 => (HALF, 1),
    };
    let units = layer.outputs / width;
    let mut unit = 0;
    while unit < units {
        let vectors = (units - unit).min(per_tile);
        let mut row = 0;
        while row < rows {
            let count = (rows - row).min(TILE_ROWS);
            let at = Tile { first: first + row, out_row: row, block: unit, residual };
            let kernel: TileKernel = match (layer.kernel, count, vectors) {
                (Kernel::Vnni, 6, 2) => tile::<6, 2>,
                (Kernel::Vnni, 5, 2) => tile::<5, 2>,
                (Kernel::Vnni, 4, 2) => tile::<4, 2>,
                (Kernel::Vnni, 3, 2) => tile::<3, 2>,
                (Kernel::Vnni, 2, 2) => tile::<2, 2>,
                (Kernel::Vnni, 1, 2) => tile::<1, 2>,
                (Kernel::Vnni, 6, _) => tile::<6, 1>,
                (Kernel::Vnni, 5, _) => tile::<5, 1>,
                (Kernel::Vnni, 4, _) => tile::<4, 1>,
                (Kernel::Vnni, 3, _) => tile::<3, 1>,
                (Kernel::Vnni, 2, _) => tile::<2, 1>,
                (Kernel::Vnni, _, _) => tile::<1, 1>,
                (Kernel::Avx2, 6, _) => tile_avx2::<6>,
                (Kernel::Avx2, 5, _) => tile_avx2::<5>,
                (Kernel::Avx2, 4, _) => tile_avx2::<4>,
                (Kernel::Avx2, 3, _) => tile_avx2::<3>,
                (Kernel::Avx2, 2, _) => tile_avx2::<2>,
                (Kernel::Avx2, _, _) => tile_avx2::<1>,
            };
            // SAFETY: as the caller of `tiles` promised, the CPU runs the layer's kernel and
            // `out` and the input hold the rows; this tile's `count` rows from `row` are among
            // them (`count` ≤ rows − row) and its `vectors` units from `unit` among the
            // layer's (`vectors` ≤ units − unit).
            unsafe { kernel(layer, input, &at, out) };
            row += count;
        }
        unit += vectors;
    }
}

/// A tile's kernel: [`tile`] or [`tile_avx2`] for one shape.
#[cfg(target_arch = "x86_64")]
type TileKernel = unsafe fn(&Int8Linear, &Quantised, &Tile<'_>, &mut [f32]);

/// Where a tile is: its first input row, the same row in `out`, its first unit of columns (a
/// block of 16, or 8 for AVX2); and the values to add to `out` (laid out as `out`), if any.
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
                let at_vector = weights.wrapping_add(vector).cast();
                // SAFETY: the 64 bytes from `vector` lie within the weights: the layer's blocks
                // hold `groups · 8` vectors of 64 bytes each, and the block is the layer's
                // (the caller's promise).
                *w = unsafe { _mm512_loadu_si512(at_vector) };
            }
            for (r, sums) in sums.iter_mut().enumerate() {
                let from = (at.first + r) * inner + g * GROUP + step * 4;
                let at_four = values.wrapping_add(from).cast::<i32>();
                // SAFETY: the four bytes from `from` are in the row's group, and the row is in
                // the input (the caller's promise).
                let four = unsafe { at_four.read_unaligned() };
                let four = _mm512_set1_epi32(four);
                for (sum, &w) in sums.iter_mut().zip(&w) {
                    *sum = _mm512_dpbusd_epi32(*sum, four, w);
                }
            }
        }
        for v in 0..V {
            let at_scales = ((at.block + v) * groups + g) * 2 * LANES;
            let (scales, corrections) = layer.scales[at_scales..at_scales + 2 * LANES].split_at(LANES);
            // SAFETY: `scales` holds the block's 16 scales for the group (bounds-checked slice).
            let scale = unsafe { _mm512_loadu_ps(scales.as_ptr()) };
            // SAFETY: `corrections` holds the block's 16 corrections for the group.
            let correction = unsafe { _mm512_loadu_ps(corrections.as_ptr()) };
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
                Some(bias) => {
                    let biases = &bias[column..column + LANES];
                    // SAFETY: `biases` holds 16 values (bounds-checked slice).
                    _mm512_add_ps(total, unsafe { _mm512_loadu_ps(biases.as_ptr()) })
                }
                None => total,
            };
            let stored = &mut out[row + column..row + column + LANES];
            // SAFETY: `stored` holds 16 values (bounds-checked slice).
            unsafe { _mm512_storeu_ps(stored.as_mut_ptr(), total) };
        }
        let columns = row + at.block * LANES..row + (at.block + V) * LANES;
        finish(layer, &mut out[columns.clone()], at.residual.map(|r| &r[columns]));
    }
}

/// The end of a tile's row, once stored with its bias: GELU (for a layer made with it), then
/// the residual, if any (laid out as `stored`).
#[inline(always)]
fn finish(layer: &Int8Linear, stored: &mut [f32], residual: Option<&[f32]>) {
    if layer.gelu {
        for x in stored.iter_mut() {
            *x = gelu(*x);
        }
    }
    if let Some(residual) = residual {
        for (x, r) in stored.iter_mut().zip(residual) {
            *x += r;
        }
    }
}

/// [`quantise_group`] for an input group, in AVX2 (rounding to nearest, ties to even, as
/// `round_ties_even`), each value stored as `q + 128` in 16 bits; returns the scale.
///
/// # Safety
/// The CPU has AVX2; `group` and `out` hold 32 values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantise_input_group_avx2(group: &[f32], out: &mut [u16]) -> f32 {
    use std::arch::x86_64::*;
    debug_assert!(group.len() == GROUP && out.len() == GROUP);
    let mut quarters = [_mm256_setzero_ps(); 4];
    for (n, quarter) in quarters.iter_mut().enumerate() {
        let eight = &group[n * 8..n * 8 + 8];
        // SAFETY: `eight` holds 8 values (bounds-checked slice).
        *quarter = unsafe { _mm256_loadu_ps(eight.as_ptr()) };
    }
    let sign = _mm256_set1_ps(-0.0);
    let largest =
        quarters.iter().fold(_mm256_setzero_ps(), |m, &q| _mm256_max_ps(m, _mm256_andnot_ps(sign, q)));
    let halves = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps::<1>(largest));
    let pairs = _mm_max_ps(halves, _mm_movehl_ps(halves, halves));
    let max = _mm_cvtss_f32(_mm_max_ss(pairs, _mm_shuffle_ps::<0b01>(pairs, pairs)));
    let inverse = _mm256_set1_ps(if max > 0.0 { 127.0 / max } else { 0.0 });
    let quantise = |v: __m256| {
        let rounded =
            _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(v, inverse));
        let clamped = _mm256_min_epi32(
            _mm256_max_epi32(_mm256_cvtps_epi32(rounded), _mm256_set1_epi32(-127)),
            _mm256_set1_epi32(127),
        );
        _mm256_add_epi32(clamped, _mm256_set1_epi32(128))
    };
    for n in 0..2 {
        // 16 values of 1..=255 in 16 bits; the pack interleaves 128-bit lanes, the permutation
        // puts them back in order.
        let packed = _mm256_packs_epi32(quantise(quarters[2 * n]), quantise(quarters[2 * n + 1]));
        let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(packed);
        let sixteen = &mut out[n * 16..n * 16 + 16];
        // SAFETY: `sixteen` holds 16 values of 16 bits (bounds-checked slice), the store's 32 bytes.
        unsafe { _mm256_storeu_si256(sixteen.as_mut_ptr().cast(), ordered) };
    }
    max / 127.0
}

/// `R` rows by 8 columns (`at.block` counts halves of blocks): per group and 4 inner positions,
/// each row's 4 inputs (16 bits) against 4 columns' 4 weights, widened, in two vectors
/// (`vpmaddwd`: two sums of two products per column); at the end of the group the pairs are
/// added into one 32-bit sum per column, the VNNI kernel's, then corrected, scaled and added to
/// the f32 sums as there; at the end the bias (and GELU), then the residual.
///
/// # Safety
/// The CPU has AVX2 and FMA; rows `at.first..at.first + R` exist in `input.wide`, rows
/// `at.out_row..+R` in `out` (and in `at.residual`), and columns `8 · at.block..+8` in the
/// layer.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_avx2<const R: usize>(layer: &Int8Linear, input: &Quantised, at: &Tile<'_>, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let inner = layer.inner;
    let groups = inner / GROUP;
    let (block, half) = (at.block / 2, at.block % 2);
    debug_assert!((at.first + R) * inner <= input.wide.len());
    debug_assert!((at.out_row + R) * layer.outputs <= out.len());
    debug_assert!((at.block + 1) * HALF <= layer.outputs);
    let mut totals = [_mm256_setzero_ps(); R];
    let values = input.wide.as_ptr();
    let weights = layer.weights.as_ptr();
    for g in 0..groups {
        let mut sums = [[_mm256_setzero_si256(); 2]; R];
        for step in 0..GROUP / 4 {
            // The 64-byte vector of the block's 16 columns; this half's 8 columns are its
            // bytes 32 · half.., 4 columns to 16 bytes.
            let vector = ((block * groups + g) * (GROUP / 4) + step) * 4 * LANES + half * 2 * LANES;
            let (first, second) = (weights.wrapping_add(vector), weights.wrapping_add(vector + LANES));
            // SAFETY: the 16 bytes from `vector` lie within the weights: the layer's blocks hold
            // `groups · 8` vectors of 64 bytes each, this half's 32 bytes start at `vector`,
            // and the columns are the layer's (the caller's promise).
            let first = unsafe { _mm_loadu_si128(first.cast()) };
            // SAFETY: the next 16 bytes, the half's other 16.
            let second = unsafe { _mm_loadu_si128(second.cast()) };
            let w = [_mm256_cvtepi8_epi16(first), _mm256_cvtepi8_epi16(second)];
            for (r, sums) in sums.iter_mut().enumerate() {
                let from = (at.first + r) * inner + g * GROUP + step * 4;
                let at_four = values.wrapping_add(from).cast::<i64>();
                // SAFETY: the four values (8 bytes) from `from` are in the row's group, and the
                // row is in the input (the caller's promise).
                let four = unsafe { at_four.read_unaligned() };
                let four = _mm256_set1_epi64x(four);
                for (sum, &w) in sums.iter_mut().zip(&w) {
                    *sum = _mm256_add_epi32(*sum, _mm256_madd_epi16(four, w));
                }
            }
        }
        let at_scales = (block * groups + g) * 2 * LANES + half * HALF;
        let scales = &layer.scales[at_scales..at_scales + HALF];
        let corrections = &layer.scales[at_scales + LANES..at_scales + LANES + HALF];
        // SAFETY: `scales` holds the 8 columns' scales for the group (bounds-checked slice).
        let scale = unsafe { _mm256_loadu_ps(scales.as_ptr()) };
        // SAFETY: `corrections` holds their 8 corrections.
        let correction = unsafe { _mm256_loadu_ps(corrections.as_ptr()) };
        for (r, (sums, total)) in sums.iter().zip(totals.iter_mut()).enumerate() {
            // Columns 0, 1, 4, 5 | 2, 3, 6, 7 from the pairs; the permutation puts them in order.
            let sum = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_hadd_epi32(sums[0], sums[1]));
            let corrected = _mm256_fmsub_ps(scale, _mm256_cvtepi32_ps(sum), correction);
            let input_scale = _mm256_set1_ps(input.scales[(at.first + r) * groups + g]);
            *total = _mm256_fmadd_ps(corrected, input_scale, *total);
        }
    }
    for (r, &total) in totals.iter().enumerate() {
        let row = (at.out_row + r) * layer.outputs;
        let column = at.block * HALF;
        let total = match &layer.bias {
            Some(bias) => {
                let biases = &bias[column..column + HALF];
                // SAFETY: `biases` holds 8 values (bounds-checked slice).
                _mm256_add_ps(total, unsafe { _mm256_loadu_ps(biases.as_ptr()) })
            }
            None => total,
        };
        let stored = &mut out[row + column..row + column + HALF];
        // SAFETY: `stored` holds 8 values (bounds-checked slice).
        unsafe { _mm256_storeu_ps(stored.as_mut_ptr(), total) };
        finish(layer, &mut out[row + column..][..HALF], at.residual.map(|r| &r[row + column..][..HALF]));
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
        for kernel in kernels_here() {
            product_matches(kernel);
        }
    }

    /// The kernels this CPU runs; the others are never built.
    fn kernels_here() -> Vec<Kernel> {
        let weight = Tensor::zeros((16, 32), candle_core::DType::F32, &Device::Cpu).unwrap();
        let here: Vec<Kernel> = [Kernel::Vnni, Kernel::Avx2].into_iter().filter(|k| k.runs_here()).collect();
        for kernel in [Kernel::Vnni, Kernel::Avx2] {
            let built = Int8Linear::with_kernel(&weight, None, kernel).unwrap();
            assert_eq!(built.map(|l| l.kernel()), here.contains(&kernel).then_some(kernel), "{kernel:?}");
        }
        // Without either, the layer is never built: the encoder keeps candle's f32 products.
        let default = Int8Linear::new(&weight, None).unwrap().map(|l| l.kernel());
        assert_eq!(default, here.first().copied(), "the fastest kernel by default");
        here
    }

    fn product_matches(kernel: Kernel) {
        // Rows and columns that leave partial tiles (7 rows of 6, 3 vectors of 2), and more
        // rows than one task.
        for (rows, outputs, inner) in [(7, 48, 64), (100, 64, 384), (13, 16, 1536)] {
            let w = values(outputs * inner, 1);
            let b = values(outputs, 2);
            let x = values(rows * inner, 3);
            let weight = Tensor::from_vec(w.clone(), (outputs, inner), &Device::Cpu).unwrap();
            let bias = Tensor::from_vec(b.clone(), outputs, &Device::Cpu).unwrap();
            let input = Tensor::from_vec(x.clone(), (1, rows, inner), &Device::Cpu).unwrap();
            let layer = Int8Linear::with_kernel(&weight, Some(&bias), kernel).unwrap().expect("runs here");
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
                "{kernel:?} {rows}x{inner}x{outputs}: {worst_ref} off the integer arithmetic"
            );
            assert!(
                worst_f32 <= 0.02 * norm,
                "{kernel:?} {rows}x{inner}x{outputs}: {worst_f32} off f32 (largest {norm})"
            );
            // Into a buffer, with a residual added, the quantised input's buffers reused from
            // the product before (of another shape).
            let residual = values(rows * outputs, 4);
            let mut into = vec![f32::NAN; rows * outputs];
            let mut quantised = Quantised::default();
            layer.product_into(&values(3 * inner, 5), &mut quantised, &mut into[..3 * outputs], None);
            layer.product_into(&x, &mut quantised, &mut into, Some(&residual));
            for ((o, e), r) in into.iter().zip(expected.iter().flatten()).zip(&residual) {
                assert!(
                    (o - (e + r)).abs() <= 1e-4 * norm,
                    "{kernel:?} {rows}x{inner}x{outputs}: {o} vs {e} + {r}"
                );
            }
            // The same with GELU on each tile: gelu(x · Wᵀ + b).
            let fused = Int8Linear::with_kernel(&weight, None, kernel)
                .unwrap()
                .unwrap()
                .with_bias_and_gelu(b.clone());
            let fused = input.apply_op1_no_bwd(&fused).unwrap().squeeze(0).unwrap().to_vec2::<f32>().unwrap();
            for (f, e) in fused.iter().flatten().zip(expected.iter().flatten()) {
                assert!(
                    (f - gelu(*e)).abs() <= 1e-4 * norm,
                    "{kernel:?} {rows}x{inner}x{outputs}: gelu {f} vs {}",
                    gelu(*e)
                );
            }
        }
    }

    /// The kernels' arithmetic, one value at a time: per group the exact integer sum of
    /// `(q + 128) · w`, then the same fused steps in f32 (`mul_add` rounds once, as the
    /// vectors' fused multiply-add and multiply-subtract), the bias, GELU if asked, the
    /// residual.
    fn kernel_arithmetic(
        w: &[Vec<f32>],
        bias: Option<&[f32]>,
        x: &[Vec<f32>],
        with_gelu: bool,
        residual: &[f32],
    ) -> Vec<f32> {
        let mut out = Vec::new();
        for x in x {
            for (n, w) in w.iter().enumerate() {
                let mut total = 0f32;
                for (x, w) in x.chunks_exact(GROUP).zip(w.chunks_exact(GROUP)) {
                    let ((sx, qx), (sw, qw)) = (quantise_group(x), quantise_group(w));
                    let correction = sw * 128.0 * qw.iter().map(|&q| i32::from(q)).sum::<i32>() as f32;
                    let sum: i32 =
                        qx.iter().zip(&qw).map(|(&a, &b)| (i32::from(a) + 128) * i32::from(b)).sum();
                    total = sw.mul_add(sum as f32, -correction).mul_add(sx, total);
                }
                let value = bias.map_or(total, |b| total + b[n]);
                out.push(if with_gelu { gelu(value) } else { value });
            }
        }
        for (o, r) in out.iter_mut().zip(residual) {
            *o += r;
        }
        out
    }

    #[test]
    fn every_kernel_computes_the_same_values_bit_for_bit() {
        for kernel in kernels_here() {
            for (rows, outputs, inner) in [(7, 48, 64), (100, 64, 384), (13, 16, 1536), (50, 32, 32)] {
                let w = values(outputs * inner, 11);
                let b = values(outputs, 12);
                let x = values(rows * inner, 13);
                let residual = values(rows * outputs, 14);
                let weight = Tensor::from_vec(w.clone(), (outputs, inner), &Device::Cpu).unwrap();
                let w_rows: Vec<Vec<f32>> = w.chunks(inner).map(<[f32]>::to_vec).collect();
                let x_rows: Vec<Vec<f32>> = x.chunks(inner).map(<[f32]>::to_vec).collect();
                let plain = Int8Linear::with_kernel(&weight, None, kernel).unwrap().unwrap();
                let fused = Int8Linear::with_kernel(&weight, None, kernel)
                    .unwrap()
                    .unwrap()
                    .with_bias_and_gelu(b.clone());
                let mut quantised = Quantised::default();
                let mut out = vec![f32::NAN; rows * outputs];
                fused.product_into(&x, &mut quantised, &mut out, None);
                let expected = kernel_arithmetic(&w_rows, Some(&b), &x_rows, true, &[]);
                // The first value that differs, if any (a whole vector would drown the report).
                let differing = |out: &[f32], expected: &[f32]| {
                    let first = out.iter().zip(expected).position(|(a, b)| a.to_bits() != b.to_bits());
                    first.map(|n| (n, out[n], expected[n]))
                };
                assert_eq!(
                    differing(&out, &expected),
                    None,
                    "{kernel:?} {rows}x{inner}x{outputs}, with GELU"
                );
                plain.product_into(&x, &mut quantised, &mut out, Some(&residual));
                let expected = kernel_arithmetic(&w_rows, None, &x_rows, false, &residual);
                assert_eq!(
                    differing(&out, &expected),
                    None,
                    "{kernel:?} {rows}x{inner}x{outputs}, with a residual"
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
