//! Exact Q32.32 arithmetic on four lanes at once, giving bit for bit what
//! [`wide::wrapping`](crate::wide::wrapping) gives one value at a time.
//!
//! **Why.** A rounded Q32.32 product needs the 128-bit product of two
//! 64-bit values, which x86's and ARM's vector units cannot form. They can
//! form 32 × 32 → 64-bit products, four at a time with AVX2
//! (`vpmuludq`). Splitting each operand into a signed high and an unsigned
//! low half, `a = aₕ·2³² + aₗ`, the product is
//! `aₕbₕ·2⁶⁴ + (aₕbₗ + aₗbₕ)·2³² + aₗbₗ`, and the wrapping policy only
//! keeps bits 32 to 95 of a sum of such products (plus the rounding half).
//! Those bits are computed from four unsigned 32-bit products per product,
//! with two corrections for the signed high halves, all in 64-bit wrapping
//! arithmetic: nothing is approximated, so any code that uses these lanes
//! gives the same bits as the scalar code it mirrors, on every machine.
//!
//! **How it is used.** Code written once against the [`FxLanes`] trait
//! runs on any implementation of it: [`Portable`], plain Rust over four
//! `i64` (always inlined, so the compiler may vectorise it for the calling
//! function), or one written with a processor's vector instructions (the
//! physics solver's AVX2 lanes). The bits never depend on which.
//!
//! Invariant: for every input, each lane of [`FxLanes::mul`],
//! [`FxLanes::dot`] and [`FxLanes::round`] equals `wrapping::mul`,
//! `wrapping::dot` and `Wide::round_wrapping` of that lane's values (tests
//! compare them).

/// Values per lane group.
pub const LANES: usize = 4;

/// Four raw Q32.32 values (`Fx::to_bits`), one per lane.
pub type Raw = [i64; LANES];

/// Four Q32.32 values and the wrapping arithmetic of
/// [`wide::wrapping`](crate::wide::wrapping) on them, lane by lane.
///
/// Every implementation gives the same bits ([`Portable`] is the
/// reference; an implementation for one instruction set is tested against
/// it). A *mask* is a value whose lanes are all ones (true) or zero.
pub trait FxLanes: Copy {
    /// Four exact sums of products.
    type Sum: Copy;

    /// The lanes holding `raw`.
    fn from_raw(raw: Raw) -> Self;
    /// The lanes' raw values.
    fn to_raw(self) -> Raw;
    /// `raw` in every lane.
    fn splat(raw: i64) -> Self;
    /// `self + o`, wrapping.
    fn add(self, o: Self) -> Self;
    /// `self − o`, wrapping.
    fn sub(self, o: Self) -> Self;
    /// The larger of `self` and `o` (`Fx::max`).
    fn max(self, o: Self) -> Self;
    /// A mask of the lanes above zero.
    fn positive(self) -> Self;
    /// `yes` in the lanes of `mask`, `no` elsewhere.
    fn select(mask: Self, yes: Self, no: Self) -> Self;
    /// Four zero sums.
    fn sum_zero() -> Self::Sum;
    /// Adds the exact product `a · b` to each lane's sum.
    fn add_product(sum: &mut Self::Sum, a: Self, b: Self);
    /// Each lane's sum rounded as `Wide::round_wrapping` rounds.
    fn round(sum: Self::Sum) -> Self;

    /// `self · o`, rounded once (`wrapping::mul`).
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let mut s = Self::sum_zero();
        Self::add_product(&mut s, self, o);
        Self::round(s)
    }

    /// The dot product of two vectors of lanes (`[x, y, z]`), rounded once
    /// (`wrapping::dot`).
    #[inline(always)]
    fn dot(a: [Self; 3], b: [Self; 3]) -> Self {
        let mut s = Self::sum_zero();
        Self::add_product(&mut s, a[0], b[0]);
        Self::add_product(&mut s, a[1], b[1]);
        Self::add_product(&mut s, a[2], b[2]);
        Self::round(s)
    }
}

/// The reference [`FxLanes`]: plain Rust on four `i64`, which the compiler
/// may vectorise for the function it is inlined into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Portable(pub Raw);

/// [`Portable`]'s sums: the part of each sum that survives rounding
/// (`hi`, bits 32 and up, wrapping) and the low 32 bits of each product
/// added apart (`lo`, which cannot overflow for fewer than 2³¹ products).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortableSum {
    hi: [u64; LANES],
    lo: [u64; LANES],
}

const LOW: u64 = 0xffff_ffff;

impl FxLanes for Portable {
    type Sum = PortableSum;

    #[inline(always)]
    fn from_raw(raw: Raw) -> Portable {
        Portable(raw)
    }

    #[inline(always)]
    fn to_raw(self) -> Raw {
        self.0
    }

    #[inline(always)]
    fn splat(raw: i64) -> Portable {
        Portable([raw; LANES])
    }

    #[inline(always)]
    fn add(self, o: Portable) -> Portable {
        Portable(core::array::from_fn(|i| self.0[i].wrapping_add(o.0[i])))
    }

    #[inline(always)]
    fn sub(self, o: Portable) -> Portable {
        Portable(core::array::from_fn(|i| self.0[i].wrapping_sub(o.0[i])))
    }

    #[inline(always)]
    fn max(self, o: Portable) -> Portable {
        Portable(core::array::from_fn(|i| self.0[i].max(o.0[i])))
    }

    #[inline(always)]
    fn positive(self) -> Portable {
        Portable(core::array::from_fn(|i| -i64::from(self.0[i] > 0)))
    }

    #[inline(always)]
    fn select(mask: Portable, yes: Portable, no: Portable) -> Portable {
        Portable(core::array::from_fn(|i| {
            (yes.0[i] & mask.0[i]) | (no.0[i] & !mask.0[i])
        }))
    }

    #[inline(always)]
    fn sum_zero() -> PortableSum {
        PortableSum::default()
    }

    #[inline(always)]
    fn add_product(sum: &mut PortableSum, a: Portable, b: Portable) {
        for i in 0..LANES {
            let (x, y) = (a.0[i], b.0[i]);
            let (xh, xl) = ((x as u64) >> 32, x as u64 & LOW);
            let (yh, yl) = ((y as u64) >> 32, y as u64 & LOW);
            // Only the low 32 bits of the high halves' product survive.
            let hh = (xh * yh) << 32;
            // A negative half is its unsigned value less 2³²: take back
            // 2³² times the other half (an all-ones mask when negative).
            let hl = (xh * yl).wrapping_sub(((x >> 63) as u64) & (yl << 32));
            let lh = (xl * yh).wrapping_sub(((y >> 63) as u64) & (xl << 32));
            let ll = xl * yl;
            sum.hi[i] = sum.hi[i]
                .wrapping_add(hh)
                .wrapping_add(hl)
                .wrapping_add(lh)
                .wrapping_add(ll >> 32);
            sum.lo[i] += ll & LOW;
        }
    }

    #[inline(always)]
    fn round(sum: PortableSum) -> Portable {
        Portable(core::array::from_fn(|i| {
            sum.hi[i].wrapping_add((sum.lo[i] + (1 << 31)) >> 32) as i64
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wide::wrapping;
    use crate::{Fx, Rng, Vec3};
    use proptest::prelude::*;

    fn fx(x: i64) -> Fx {
        Fx::from_bits(x)
    }

    /// Raw values of every magnitude, including the extremes.
    fn raw() -> impl Strategy<Value = i64> {
        prop_oneof![
            any::<i64>(),
            (any::<i64>(), 0u32..63).prop_map(|(x, s)| x >> s),
            Just(i64::MIN),
            Just(i64::MAX),
            Just(-1i64),
            Just(1i64 << 31),
            Just(-(1i64 << 31)),
        ]
    }

    proptest! {
        #[test]
        fn mul_is_the_scalar_product(a in prop::array::uniform4(raw()), b in prop::array::uniform4(raw())) {
            let got = Portable(a).mul(Portable(b)).0;
            for i in 0..LANES {
                prop_assert_eq!(got[i], wrapping::mul(fx(a[i]), fx(b[i])).to_bits());
            }
        }

        #[test]
        fn dot_is_the_scalar_dot(a in prop::array::uniform3(prop::array::uniform4(raw())),
                                 b in prop::array::uniform3(prop::array::uniform4(raw()))) {
            let got = Portable::dot(a.map(Portable), b.map(Portable)).0;
            for i in 0..LANES {
                let v = |m: &[Raw; 3]| Vec3::new(fx(m[0][i]), fx(m[1][i]), fx(m[2][i]));
                prop_assert_eq!(got[i], wrapping::dot(v(&a), v(&b)).to_bits());
            }
        }
    }

    #[test]
    fn max_select_and_positive_are_lane_wise() {
        let a = Portable([5, -3, 0, i64::MIN]);
        let b = Portable([-5, 7, 0, i64::MAX]);
        assert_eq!(a.max(b).0, [5, 7, 0, i64::MAX]);
        assert_eq!(a.positive().0, [-1, 0, 0, 0]);
        assert_eq!(Portable::select(a.positive(), a, b).0, [5, 7, 0, i64::MAX]);
        assert_eq!(a.add(b).0, [0, 4, 0, -1]);
        assert_eq!(a.sub(b).0, [10, -10, 0, 1]);
    }

    #[test]
    fn rounding_ties_and_wrapping_match_the_scalar() {
        // Products whose low 32 bits are exactly half a unit, just below
        // and just above, of both signs; and products that wrap.
        let mut rng = Rng::new(5, 1);
        let specials = [
            0i64,
            1,
            -1,
            1 << 31,
            -(1 << 31),
            (1 << 32) + 1,
            i64::MIN,
            i64::MAX,
        ];
        for &x in &specials {
            for &y in &specials {
                let r = rng.next_u64() as i64;
                let a = [x, y, r, x ^ r];
                let b = [y, x, x, y];
                let got = Portable(a).mul(Portable(b)).0;
                for i in 0..LANES {
                    assert_eq!(got[i], wrapping::mul(fx(a[i]), fx(b[i])).to_bits());
                }
            }
        }
    }
}
