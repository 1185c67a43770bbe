//! Square root of [`Fx`], integer-only and correctly rounded.
//!
//! This module owns [`Fx::sqrt`](crate::Fx::sqrt), [`Fx::checked_sqrt`](crate::Fx::checked_sqrt)
//! and the crate-internal kernel [`sqrt_round_u128`] that `trig` reuses for
//! `asin`/`acos`.
//!
//! Invariants:
//! - The result is a pure function of the input bits: `round(sqrt(bits · 2^32))`
//!   to nearest, exactly (halfway cases cannot occur for an integer radicand).
//!   The Newton iterations only produce a *guess*; an exact integer correction
//!   step then moves the guess to the unique correctly rounded value, so the
//!   bits never depend on the accuracy of the estimate, only the speed does.
//! - No floating point, no division, no platform-dependent width: every
//!   intermediate is a `u64`/`u128`/`i128` whose range is stated next to it, and
//!   every operation is either provably in range or an explicit `wrapping_*`.

use crate::Fx;

/// Number of intervals of [`RSQRT_TABLE`]: one per value of the top 8 bits of
/// a normalized mantissa `m ∈ [2^62, 2^64)`, i.e. `i ∈ 64..256`.
const RSQRT_INTERVALS: usize = 192;

/// Knots for the reciprocal square root seed, built at compile time.
///
/// Entry `k` is `1/sqrt(a)` at `a = i/256`, `i = k + 64` (so `a ∈ [1/4, 1]`),
/// in Q2.30 and floored: `2^30 / sqrt(i/256) = sqrt(2^68 / i)`, i.e.
/// `isqrt(2^68 / i)`. Linear interpolation between neighbouring knots gives
/// `1/sqrt(a)` within a relative 2^-15.4 (the chord error `h²/8 · max|y''/y|`
/// with `h = 2^-8`, `y''/y = 3/(4a²) ≤ 12`), which one Newton step takes to
/// about 2^-30.
const RSQRT_TABLE: [u32; RSQRT_INTERVALS + 1] = build_rsqrt_table();

/// `floor(sqrt(n))` by the classic bit-by-bit method. Compile-time use only.
const fn isqrt_u128_floor(n: u128) -> u128 {
    let mut rem = n;
    let mut root = 0u128;
    let mut bit = 1u128 << 126;
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}

const fn build_rsqrt_table() -> [u32; RSQRT_INTERVALS + 1] {
    let mut t = [0u32; RSQRT_INTERVALS + 1];
    let mut k = 0;
    while k <= RSQRT_INTERVALS {
        let i = (k + 64) as u128;
        t[k] = isqrt_u128_floor((1u128 << 68) / i) as u32; // ≤ 2^31 (at i = 64)
        k += 1;
    }
    t
}

/// High 64 bits of the 128-bit product.
#[inline(always)]
const fn mul_hi(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// One Newton step for `y ≈ 1/sqrt(a)`, `y' = y + y·(1 - a·y²)/2`.
///
/// `m` is `a ∈ [1/4, 1)` in Q0.64 and `y ∈ (0, 2]` in Q2.62. The step roughly
/// squares the relative error and, from any `y` within 10 % of the root, lands
/// at or below the root (so `y' ≤ 2`, i.e. `≤ 2^63` in Q2.62).
#[inline(always)]
const fn rsqrt_newton(m: u64, y: u64) -> u64 {
    let y2 = mul_hi(y, y); // y² in Q4.60, ≤ 2^62
    let my2 = mul_hi(m, y2); // a·y² in Q4.60, < 2^62
    let e = (1i64 << 60) - my2 as i64; // 1 - a·y² in Q60, |e| < 2^62
    // y·e/2 in Q62: (Q62 · Q60) >> 61. |y·e| < 2^63 · 2^62 fits an i128.
    let corr = ((y as i128 * e as i128) >> 61) as i64;
    y.wrapping_add_signed(corr)
}

/// `round(sqrt(n))` to nearest for `0 < n < 2^96`; the result is `< 2^48`.
///
/// Method: normalize `n` by an even shift so its top 64 bits `m` lie in
/// `[2^62, 2^64)`; seed `1/sqrt(m/2^64)` by linear interpolation in
/// [`RSQRT_TABLE`]; refine with one Newton step (relative error ≈ 2^-30); form
/// `r0 ≈ sqrt(n)`; apply one residual correction
/// `r1 = r0 + (n - r0²)/(2·sqrt(n))` (the division replaced by the reciprocal
/// square root already at hand; error now well under one unit); then move `r1`
/// by exact integer comparisons until `r² - r < n ≤ r² + r`, which is exactly
/// `|sqrt(n) - r| < 1/2`.
#[inline]
pub(crate) const fn sqrt_round_u128(n: u128) -> u64 {
    // s is even and ≥ 32 because n < 2^96; half ∈ [16, 63].
    let s = n.leading_zeros() & !1;
    let half = s / 2;
    let m = ((n << s) >> 64) as u64; // ∈ [2^62, 2^64)
    // Seed: interpolate between the knots around the top 8 bits of m, with the
    // next 32 bits as the fraction. Knots decrease, so the drop is ≥ 0.
    let k = (m >> 56) as usize - 64; // top 8 bits ∈ [64, 256)
    let (y_left, y_right) = (RSQRT_TABLE[k], RSQRT_TABLE[k + 1]);
    let frac = (m >> 24) as u32 as u64;
    let drop = ((y_left - y_right) as u64 * frac) >> 32;
    let y = (y_left as u64 - drop) << 32; // Q2.30 → Q2.62, ≤ 2^63
    let y = rsqrt_newton(m, y);
    // sqrt(n << s) ≈ m·y / 2^62 = mul_hi(m, y)·4, so sqrt(n) ≈ mul_hi(m, y) >> (half - 2).
    let r0 = (mul_hi(m, y) >> (half - 2)) as i128; // < 2^48
    // Residual step. 1/sqrt(n) = y · 2^(half - 64); with y32 = y·2^32,
    // (n - r0²)/(2·sqrt(n)) = (d · y32) >> (97 - half). |d| < 2^69 (r0 is
    // within 2^-29 relative), y32 ≤ 2^33: the product fits an i128.
    let d = n as i128 - r0 * r0;
    let y32 = (y >> 30) as i128;
    // Rounded (not floored) so that r already is the answer in all but rare
    // cases near a rounding boundary, keeping the loops below not-taken.
    let sh = 97 - half;
    let mut r = r0 + ((d * y32 + (1i128 << (sh - 1))) >> sh);
    // Exact correction to round-to-nearest. Invariant: d == n - r². r ≥ 1 is
    // kept because n ≥ 1 (r = 1 with d ≤ -1 would mean n ≤ 0).
    let mut d = n as i128 - r * r;
    while d > r {
        d -= 2 * r + 1;
        r += 1;
    }
    while d <= -r {
        d += 2 * r - 1;
        r -= 1;
    }
    r as u64
}

impl Fx {
    /// Square root, correctly rounded to nearest.
    ///
    /// - Domain: `[0, Fx::MAX]`, the whole non-negative range, including
    ///   `EPSILON` (→ `2^-16`) and `MAX` (→ `≈ 46340.95`).
    /// - A **negative input returns `Fx::ZERO`** (a clamp, never a panic); use
    ///   [`Fx::checked_sqrt`] to detect it. `sqrt(0) = 0`.
    /// - Error: the result is `round(sqrt(x))` exactly, so at most **0.5 LSB**
    ///   (1 LSB = 2^-32); `tests/math_accuracy.rs` checks it against an exact
    ///   integer square root (max measured 0.5 LSB, never a wrong rounding).
    ///   Perfect squares are exact: `Fx::from_int(9).sqrt() == Fx::from_int(3)`.
    /// - Method: integer-only. The answer is `round(sqrt(bits · 2^32))`: a seed
    ///   for `1/sqrt` interpolated in a 193-knot table computed at compile
    ///   time, one Newton step on 64×64→128-bit products, one residual
    ///   correction, then an exact comparison of `r² ± r` against the 95-bit
    ///   radicand. No division.
    #[inline]
    pub const fn sqrt(self) -> Fx {
        let bits = self.to_bits();
        if bits <= 0 {
            return Fx::ZERO;
        }
        // bits < 2^63, so the radicand is < 2^95 and the root < 2^48.
        Fx::from_bits(sqrt_round_u128((bits as u128) << 32) as i64)
    }

    /// Square root, or `None` for a negative input. Otherwise identical to
    /// [`Fx::sqrt`] (correctly rounded, ≤ 0.5 LSB error).
    #[inline]
    pub const fn checked_sqrt(self) -> Option<Fx> {
        if self.is_negative() {
            None
        } else {
            Some(self.sqrt())
        }
    }
}
