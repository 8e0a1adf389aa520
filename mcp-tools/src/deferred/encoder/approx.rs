//! GELU, `erf` and `exp` for the encoder's loops, written without branches, calls or
//! conversions between floats and integers, so that a loop over them is vectorised for whatever
//! vectors the function it is inlined into is compiled for.

/// GELU with `erf`: x · (1 + erf(x/√2)) / 2.
#[inline(always)]
pub(super) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `erf` to within 1e-6 (Abramowitz and Stegun, formula 7.1.26: 1.5e-7, plus f32 rounding),
/// without branches, calls or conversions between floats and integers, so that a loop over it is
/// vectorised even for SSE2.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [0.254_829_6, -0.284_496_74, 1.421_413_7, -1.453_152_1, 1.061_405_4];
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * exp_non_positive(-a * a);
    // y ≥ 0: the sign of x is its sign.
    f32::from_bits(y.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// eˣ for x ≤ 0 (relative error about 2e-7; tiny below −87), in the same style: x = n·ln 2 + r
/// with |r| ≤ ln 2 / 2, eʳ by its Taylor polynomial of degree 6, 2ⁿ built in the exponent bits.
#[inline(always)]
pub(super) fn exp_non_positive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding 1.5 · 2²³ rounds to an integer, which the float's low bits then hold.
    const ROUND: f32 = 12_582_912.0;
    let x = if x < -87.0 { -87.0 } else { x };
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let exponent = shifted.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127);
    p * f32::from_bits(exponent << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vectorised_erf_and_exp_are_within_a_millionth_of_exact_values() {
        let (mut worst_erf, mut worst_exp) = (0f32, 0f32);
        for i in -800_000..=800_000 {
            let x = i as f32 * 1e-5; // −8 to 8
            worst_erf = worst_erf.max((erf(x) - libm_erf(x)).abs());
            let y = -x.abs() * 10.0; // 0 to −80
            worst_exp = worst_exp.max(((exp_non_positive(y) - y.exp()) / y.exp()).abs());
        }
        assert!(worst_erf < 1e-6, "erf off by {worst_erf}");
        assert!(worst_exp < 5e-7, "exp off by {worst_exp} (relative)");
        assert!(exp_non_positive(-200.0) < 1e-37);
        assert!(erf(0.0).abs() < 1e-6);
        assert_eq!(gelu(0.0), 0.0);
        assert_eq!(erf(9.0), 1.0);
        assert_eq!(erf(-9.0), -1.0);
    }

    /// erf by its Taylor series in f64 (exact enough for |x| ≤ 3; 1 − tiny beyond).
    fn libm_erf(x: f32) -> f32 {
        let x = f64::from(x);
        if x.abs() > 4.0 {
            return x.signum() as f32;
        }
        let (mut term, mut sum, mut n) = (x, x, 0.0f64);
        while term.abs() > 1e-17 {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        (sum * 2.0 / std::f64::consts::PI.sqrt()) as f32
    }
}
