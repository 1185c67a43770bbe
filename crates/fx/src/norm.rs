//! Euclidean length and normalisation of small `Fx` vectors (the 3 components
//! of a [`Vec3`](crate::Vec3), the 4 of a [`Quat`](crate::Quat)) at full
//! precision.
//!
//! Squaring a Q32.32 number in Q32.32 loses everything below 2^-32 of the
//! square, which ruins the length of short vectors and overflows for long
//! ones. Instead the raw components are scaled by a power of two so the
//! largest lies in `[2^45, 2^46)`; their squares then sum exactly in a `u128`
//! below 2^95, whose correctly rounded root the `sqrt` kernel gives. Scaling
//! up is exact. Scaling down (components of 2^14 and more) keeps 46
//! significant bits, which is plenty for a direction; the length of such a
//! vector is then recomputed from the exact 128-bit sum of squares.
//!
//! Invariant: every length is within 1 LSB of the true one, and each component
//! of a normalised vector is within 1 LSB of the exact quotient (tested in
//! `tests/linalg.rs`).

use crate::Fx;
use crate::sqrt::sqrt_round_u128;

/// Components scaled for an exact sum of squares.
pub(crate) struct Scaled<const N: usize> {
    /// The original raw components.
    raw: [i64; N],
    /// The scaled raw components, each at most 2^46 in magnitude.
    comps: [i64; N],
    /// Raw component ≈ scaled component × 2^shift.
    shift: i32,
    /// `round(sqrt(Σ comps²))`, in `[2^45, 2^47]`.
    len: u64,
}

impl<const N: usize> Scaled<N> {
    /// Scales `comps`; `None` if all are zero.
    #[inline]
    pub(crate) fn new(comps: [Fx; N]) -> Option<Scaled<N>> {
        let raw = comps.map(Fx::to_bits);
        let max = raw.iter().fold(0u64, |m, c| m.max(c.unsigned_abs()));
        if max == 0 {
            return None;
        }
        // max lies in [2^(63 - lz), 2^(64 - lz)); bring it to [2^45, 2^46).
        let shift = 18 - max.leading_zeros() as i32;
        let scaled = raw.map(|bits| {
            if shift > 0 {
                // Round to nearest; i128 keeps i64::MIN from overflowing.
                (((bits as i128) + (1i128 << (shift - 1))) >> shift) as i64
            } else {
                bits << -shift
            }
        });
        // |c| <= 2^46, so N <= 4 squares sum below 2^95.
        let sum: u128 = scaled
            .iter()
            .map(|c| c.unsigned_abs() as u128 * c.unsigned_abs() as u128)
            .sum();
        let len = sqrt_round_u128(sum);
        Some(Scaled {
            raw,
            comps: scaled,
            shift,
            len,
        })
    }

    /// The length of the original vector, rounded to nearest, saturating.
    #[inline]
    pub(crate) fn length(&self) -> Fx {
        if self.shift > 0 {
            // Long vector: recompute from the exact sum of the raw squares,
            // saturating (only four components of i64::MIN reach 2^128).
            let sum = self.raw.iter().fold(0u128, |s, c| {
                s.saturating_add(c.unsigned_abs() as u128 * c.unsigned_abs() as u128)
            });
            return Fx::from_bits(isqrt_round(sum).min(i64::MAX as u64) as i64);
        }
        let k = -self.shift;
        if k == 0 {
            return Fx::from_bits(self.len as i64);
        }
        Fx::from_bits(((self.len + (1u64 << (k - 1))) >> k) as i64)
    }

    /// The components divided by the length, each rounded to nearest.
    #[inline]
    pub(crate) fn unit(&self) -> [Fx; N] {
        // c / len in Q32.32 = c * 2^32 / len = c * (2^96 / len) / 2^64.
        // len >= 2^45, so the reciprocal is at most 2^51 and c * r below 2^97.
        let r = ((1u128 << 96) / self.len as u128) as i128;
        self.comps
            .map(|c| Fx::from_bits(((c as i128 * r + (1i128 << 63)) >> 64) as i64))
    }
}

/// `sqrt(n)` rounded to nearest, for any `u128` (the `sqrt` kernel stops at
/// 2^96).
fn isqrt_round(n: u128) -> u64 {
    if n == 0 {
        return 0;
    }
    if n < 1 << 96 {
        return sqrt_round_u128(n);
    }
    // A guess from the top bits (an even shift keeps the root exact up to a
    // power of two, with 47 good bits), one Newton step for more than 64, and
    // an exact fix of the last unit.
    let k = (128 - n.leading_zeros() - 94) & !1;
    let mut r = (sqrt_round_u128(n >> k) as u128) << (k / 2);
    r = (r + n / r) / 2;
    while r.checked_mul(r).is_none_or(|sq| sq > n) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= n) {
        r += 1;
    }
    // Round: n > r² + r  ⇔  n >= (r + 1/2)² for integers.
    if n - r * r > r {
        r += 1;
    }
    r.min(u64::MAX as u128) as u64
}
