//! Exact wide products: the one home of the Q64.64 arithmetic behind every
//! rounded product in the engine.
//!
//! The product of two Q32.32 values is exact in Q64.64, an `i128`: [`Wide`]
//! holds such a product, or a short sum of them, and rounds it back to
//! Q32.32 once. `Fx`'s `*`, [`Vec3::dot`], [`Vec3::cross`], the quaternion
//! product and `Mat3`'s products all go through it, and so do the physics
//! solver's inner loops and the box–box narrowphase, which is why a dot
//! product computed anywhere in the engine rounds the same way.
//!
//! **Rounding.** To nearest, ties toward +∞: add half a Q32.32 unit
//! (2^31 in Q64.64), then shift right arithmetically by 32.
//!
//! **Two overflow policies**, chosen by name, the same in debug and release:
//! - *saturating* (`saturating_*`, [`Wide::round_saturating`]): sums clamp at
//!   the `i128` range and the rounded result clamps at the `Fx` range. A
//!   product is at most 2^126 in magnitude, so a sum of two never saturates
//!   and the result is exact whenever it is representable. `Fx`, `Vec3`,
//!   `Quat` and `Mat3` use this policy.
//! - *wrapping* (`wrapping_*`, [`Wide::round_wrapping`]): two's-complement
//!   arithmetic without checks. Callers use it where their operands are
//!   bounded (velocities by a speed limit, box sizes by a clamp): there it
//!   gives bit for bit the saturating result, without the checks that keep a
//!   hot loop from running at full speed. It never panics.

use crate::{Fx, Vec3};

/// Half a Q32.32 unit in Q64.64: the rounding offset.
const HALF: i128 = 1 << 31;

/// An exact Q64.64 value: a product of two [`Fx`], or a sum of a few.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Wide(i128);

impl Wide {
    /// Zero.
    pub const ZERO: Wide = Wide(0);

    /// The Q64.64 value whose raw representation is `bits`.
    #[inline(always)]
    pub const fn from_bits(bits: i128) -> Wide {
        Wide(bits)
    }

    /// The raw Q64.64 representation.
    #[inline(always)]
    pub const fn to_bits(self) -> i128 {
        self.0
    }

    /// The exact product `a · b`.
    #[inline(always)]
    pub const fn product(a: Fx, b: Fx) -> Wide {
        Wide::raw_product(a.to_bits(), b.to_bits())
    }

    /// The exact product of two raw Q32.32 values.
    #[inline(always)]
    pub const fn raw_product(a: i64, b: i64) -> Wide {
        Wide(a as i128 * b as i128)
    }

    /// `x` exactly, widened to Q64.64.
    #[inline(always)]
    pub const fn from_fx(x: Fx) -> Wide {
        Wide::from_raw(x.to_bits())
    }

    /// A raw Q32.32 value exactly, widened to Q64.64.
    #[inline(always)]
    pub const fn from_raw(x: i64) -> Wide {
        Wide((x as i128) << 32)
    }

    /// Sum, clamped at the `i128` range.
    #[inline(always)]
    pub const fn saturating_add(self, o: Wide) -> Wide {
        Wide(self.0.saturating_add(o.0))
    }

    /// Difference, clamped at the `i128` range.
    #[inline(always)]
    pub const fn saturating_sub(self, o: Wide) -> Wide {
        Wide(self.0.saturating_sub(o.0))
    }

    /// Two's-complement sum.
    #[inline(always)]
    pub const fn wrapping_add(self, o: Wide) -> Wide {
        Wide(self.0.wrapping_add(o.0))
    }

    /// Two's-complement difference.
    #[inline(always)]
    pub const fn wrapping_sub(self, o: Wide) -> Wide {
        Wide(self.0.wrapping_sub(o.0))
    }

    /// Absolute value, saturating.
    #[inline(always)]
    pub const fn abs(self) -> Wide {
        Wide(self.0.saturating_abs())
    }

    /// Whether strictly below zero.
    #[inline(always)]
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// Rounded to nearest Q32.32 (ties toward +∞), clamped at the `Fx` range.
    #[inline(always)]
    pub const fn round_saturating(self) -> Fx {
        let v = self.0.saturating_add(HALF) >> 32;
        Fx::from_bits(if v > i64::MAX as i128 {
            i64::MAX
        } else if v < i64::MIN as i128 {
            i64::MIN
        } else {
            v as i64
        })
    }

    /// Rounded to nearest Q32.32 (ties toward +∞), two's-complement: equal to
    /// [`Wide::round_saturating`] whenever the result is in range.
    #[inline(always)]
    pub const fn round_wrapping(self) -> Fx {
        Fx::from_bits((self.0.wrapping_add(HALF) >> 32) as i64)
    }

    /// `a · b` summed exactly, saturating (never saturates below 2^126 per
    /// product pair, so exact unless the true sum is out of `i128` range).
    #[inline(always)]
    pub fn dot_saturating(a: Vec3, b: Vec3) -> Wide {
        Wide::product(a.x, b.x)
            .saturating_add(Wide::product(a.y, b.y))
            .saturating_add(Wide::product(a.z, b.z))
    }

    /// `a · b` summed exactly, wrapping: equal to [`Wide::dot_saturating`]
    /// whenever the partial sums stay below 2^127 in magnitude (always, for
    /// components below 2^31 in raw magnitude, i.e. |x| < 0.5).
    #[inline(always)]
    pub fn dot_wrapping(a: Vec3, b: Vec3) -> Wide {
        Wide::product(a.x, b.x)
            .wrapping_add(Wide::product(a.y, b.y))
            .wrapping_add(Wide::product(a.z, b.z))
    }
}

/// Products of bounded operands rounded once, wrapping: the arithmetic of hot
/// loops (see the module documentation). Each function equals its
/// saturating `Fx`/`Vec3` counterpart whenever nothing leaves the range.
pub mod wrapping {
    use super::Wide;
    use crate::{Fx, Mat3, Vec3};

    /// `a · b` rounded once.
    #[inline(always)]
    pub fn mul(a: Fx, b: Fx) -> Fx {
        Wide::product(a, b).round_wrapping()
    }

    /// `a + b`.
    #[inline(always)]
    pub fn add(a: Fx, b: Fx) -> Fx {
        a.wrapping_add(b)
    }

    /// `a − b`.
    #[inline(always)]
    pub fn sub(a: Fx, b: Fx) -> Fx {
        a.wrapping_sub(b)
    }

    /// The dot product, rounded once.
    #[inline(always)]
    pub fn dot(a: Vec3, b: Vec3) -> Fx {
        Wide::dot_wrapping(a, b).round_wrapping()
    }

    /// The cross product, each component rounded once.
    #[inline(always)]
    pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
        let c = |p: Fx, q: Fx, r: Fx, s: Fx| {
            Wide::product(p, q)
                .wrapping_sub(Wide::product(r, s))
                .round_wrapping()
        };
        Vec3::new(
            c(a.y, b.z, a.z, b.y),
            c(a.z, b.x, a.x, b.z),
            c(a.x, b.y, a.y, b.x),
        )
    }

    /// `m · v`, each component rounded once.
    #[inline(always)]
    pub fn mat_vec(m: &Mat3, v: Vec3) -> Vec3 {
        Vec3::new(dot(m.rows[0], v), dot(m.rows[1], v), dot(m.rows[2], v))
    }

    /// `a + b`, componentwise.
    #[inline(always)]
    pub fn add3(a: Vec3, b: Vec3) -> Vec3 {
        Vec3::new(add(a.x, b.x), add(a.y, b.y), add(a.z, b.z))
    }

    /// `a − b`, componentwise.
    #[inline(always)]
    pub fn sub3(a: Vec3, b: Vec3) -> Vec3 {
        Vec3::new(sub(a.x, b.x), sub(a.y, b.y), sub(a.z, b.z))
    }

    /// `v · s`, each component rounded once.
    #[inline(always)]
    pub fn scale(v: Vec3, s: Fx) -> Vec3 {
        Vec3::new(mul(v.x, s), mul(v.y, s), mul(v.z, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest_ties_up() {
        // 0.5 LSB rounds up, −0.5 LSB rounds up to zero, just below rounds down.
        assert_eq!(Wide::from_bits(1 << 31).round_saturating(), Fx::EPSILON);
        assert_eq!(Wide::from_bits(-(1 << 31)).round_saturating(), Fx::ZERO);
        assert_eq!(Wide::from_bits((1 << 31) - 1).round_saturating(), Fx::ZERO);
        assert_eq!(
            Wide::from_bits(-(1 << 31) - 1).round_wrapping(),
            -Fx::EPSILON
        );
    }

    #[test]
    fn policies_agree_in_range_and_differ_out_of_it() {
        let (a, b) = (Fx::from_int(3), Fx::lit("-2.5"));
        let p = Wide::product(a, b);
        assert_eq!(p.round_saturating(), Fx::lit("-7.5"));
        assert_eq!(p.round_wrapping(), Fx::lit("-7.5"));
        let big = Wide::product(Fx::MAX, Fx::MAX);
        assert_eq!(big.round_saturating(), Fx::MAX);
        assert_ne!(big.round_wrapping(), Fx::MAX);
        assert_eq!(
            Wide::from_fx(Fx::lit("1.25")).round_saturating(),
            Fx::lit("1.25")
        );
        let v = Vec3::new(Fx::ONE, Fx::TWO, Fx::lit("0.5"));
        assert_eq!(Wide::dot_wrapping(v, v), Wide::dot_saturating(v, v));
        assert_eq!(wrapping::dot(v, v), v.dot(v));
        assert_eq!(wrapping::cross(v, Vec3::X), v.cross(Vec3::X));
    }
}
