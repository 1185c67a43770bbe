//! The products of a general constraint's passes, in one of two
//! arithmetics: [`Exact`] (each product of two Q32.32 values summed in
//! Q64.64, rounded once) and [`Narrow`] (each operand cut to 32 bits at a
//! scale fixed when the constraint is built, the products summed in 64
//! bits, rounded once).
//!
//! **Why narrow.** A Q32.32 product needs 128 bits: on x86_64 a widening
//! `imul` pinned to two registers, with the moves around it and a 128-bit
//! add per term. A product of two 32-bit operands is one 64-bit `imul`
//! (and one lane of `pmuldq` or `smull`, for vector paths). The operands
//! of a contact's passes have physical bounds (the speed limits, the
//! constraint's masses and lever arms), so 32 bits at the right scale hold
//! them with room to spare.
//!
//! **Narrow operands.** A *variable* (a velocity, a displacement, an
//! impulse) drops its low 11 bits and keeps the 32 after them (`i32`):
//! 2⁻²¹ of its unit, within ±1 024 units. Velocities are in m/s and rad/s:
//! the speed limits are 240 and 60, so with lever arms below 2 m a
//! contact's relative velocity stays below 480 + 2·60·2·√3 ≈ 900 m/s.
//! Displacements are in m and rad. A narrow constraint keeps its impulses
//! in its own unit, `2^impulse` N·s ([`Scales`]): the least power of two
//! at least twice its largest effective mass, so that mass's impulse at
//! 1 024 m/s is within ±512 units. A *constant* is stored narrowed when
//! the constraint is built ([`Scales::new`]), scaled by a power of two per
//! family so that each family's products round by a fixed shift ([`UNIT`],
//! [`ARM`], [`MASS`], [`K`], [`RATIO`]): unit vectors and lever arms keep
//! 2⁻²⁸, ratios (friction, the soft leak) 2⁻²⁷; effective masses and
//! inverse masses and inertias take the scale their impulse unit gives
//! them. Every narrowed constant is below 2²⁹, so each term is below 2⁶⁰
//! and a sum of up to eight cannot wrap; a sum is rounded to Q32.32, half
//! up.
//!
//! **Which constraints.** A constraint takes [`Narrow`] products when one
//! of its bodies can turn, it does not bounce, and its constants fit the
//! fixed roundings: lever arms below 2 m, ratios below 4, and the widest
//! entry of `K` times the widest effective mass below 4 (up to 16,
//! depending on their binary digits). Any other keeps [`Exact`], and so
//! does a constraint of bodies that cannot turn: the arithmetic of its
//! compact linear form and of the lanes (`Constraint::narrow`). The choice
//! depends on the constraint alone, the same on every path and thread
//! count.
//!
//! **Invariants.** Both arithmetics are integer-only and total: any input
//! gives the same bits on every machine, and nothing panics. Outside its
//! domain a narrow variable wraps, by name (as `Fx` does in the passes,
//! whose operands the speed limits and masses bound). Keeping its low 32
//! bits is what a vector lane's 32-bit multiply reads, so lanes can give
//! these bits for any input. (Saturating instead cost as many instructions
//! as narrowing saved; the scenes and the cube game never leave the
//! domain.)

use lockstep_fx::wide::Wide;
use lockstep_fx::{Fx, Vec3};

/// The shift that rounds a [`Narrow`] sum of products back to Q32.32 (in
/// the unit of the result: a velocity, or the constraint's impulse unit).
/// Each family of constants has its own, the same for every constraint, so
/// that it compiles to a constant shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Round(u8);

/// Bits a variable drops: it keeps 2⁻²¹ of its unit (a velocity in m/s or
/// rad/s, a displacement in m or rad, an impulse in the constraint's unit).
const VARIABLE_DROP: i32 = 11;

/// The widest narrowed constant of a family stays below `2^CONSTANT_BITS`,
/// so that a term stays below 2⁶⁰ and eight of them cannot wrap.
const CONSTANT_BITS: u32 = 29;

/// The rounding of the unit vectors' products (the normal, the tangents).
pub(crate) const UNIT: Round = Round(17);
/// The rounding of the lever arms' products (and the twist radius's).
pub(crate) const ARM: Round = Round(17);
/// The rounding of the effective masses' products.
pub(crate) const MASS: Round = Round(19);
/// The rounding of the inverse masses' and inertias' products.
pub(crate) const K: Round = Round(13);
/// The rounding of the ratios' products (friction, the soft leak).
pub(crate) const RATIO: Round = Round(16);

impl Round {
    /// The exponent a constant is scaled by so that its products round by
    /// this shift, with variables in units such that the result's raw
    /// Q32.32 is `c·x·2^(unit − 32)` for raw `c` and `x`: the product of
    /// `c·2^e` and `x` without its `VARIABLE_DROP` low bits is that result
    /// times `2^(e − VARIABLE_DROP + 32 − unit)`.
    const fn exponent(self, unit: i32) -> i32 {
        self.0 as i32 - (32 - VARIABLE_DROP) + unit
    }
}

/// The widest of some constants: the bits of their raw magnitudes, or-ed
/// (the widest's bit count is that of the result).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Widest(u64);

impl Widest {
    /// Takes `v` into account.
    #[inline]
    pub fn take(&mut self, v: Fx) {
        self.0 |= v.to_bits().unsigned_abs();
    }

    /// Takes every component of `v` into account.
    #[inline]
    pub fn take3(&mut self, v: Vec3) {
        self.take(v.x);
        self.take(v.y);
        self.take(v.z);
    }

    /// The widest's bit count.
    fn bits(self) -> i32 {
        64 - self.0.leading_zeros() as i32
    }
}

/// A narrow constraint's scales: its impulse unit, and the exponents of
/// the two families that take their scale from it (the others' are
/// fixed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scales {
    /// Impulses are kept in units of `2^impulse` N·s (N·m·s for the twist):
    /// the smallest power of two at least twice the largest effective
    /// mass, so an impulse of that mass at 1 024 m/s is within ±512 units.
    pub impulse: i32,
    /// The exponent of the inverse masses and inertias.
    k: i32,
    /// The exponent of the effective masses.
    mass: i32,
}

impl Scales {
    /// The scales of a constraint whose lever arms, effective masses,
    /// inverse masses and inertias and ratios are as wide as given, or
    /// `None` when a family does not fit its rounding: lever arms of 2 m
    /// or more, a ratio of 4 or more, inverse masses too large for the
    /// effective masses (the raw bit lengths of `K`'s widest entry and of
    /// the widest effective mass add up to more than 68, as they do when
    /// their product is 16 or more, and may from 4), or no effective mass
    /// at all; the constraint then takes [`Exact`] products.
    pub fn new(arms: Widest, masses: Widest, ks: Widest, ratios: Widest) -> Option<Scales> {
        if masses.bits() == 0 {
            return None;
        }
        let impulse = masses.bits() - 31;
        let scales = Scales {
            impulse,
            k: K.exponent(impulse),
            mass: MASS.exponent(-impulse),
        };
        let fits = |w: Widest, exponent: i32| w.bits() + exponent <= CONSTANT_BITS as i32;
        let ok = fits(arms, ARM.exponent(0))
            && fits(ratios, RATIO.exponent(0))
            && fits(ks, scales.k)
            && fits(masses, scales.mass);
        ok.then_some(scales)
    }

    /// Narrows a unit vector.
    pub fn unit(&self, v: Vec3) -> Vec3 {
        scaled3(v, UNIT.exponent(0))
    }

    /// Narrows a lever arm.
    pub fn arm(&self, v: Vec3) -> Vec3 {
        scaled3(v, ARM.exponent(0))
    }

    /// Narrows a length of the arm family (the twist radius).
    pub fn arm1(&self, a: Fx) -> Fx {
        a.scale_pow2(ARM.exponent(0))
    }

    /// Narrows an effective mass.
    pub fn mass(&self, m: Fx) -> Fx {
        m.scale_pow2(self.mass)
    }

    /// Narrows an inverse mass or inertia vector.
    pub fn k(&self, v: Vec3) -> Vec3 {
        scaled3(v, self.k)
    }

    /// Narrows an inverse mass or an entry of `K`.
    pub fn k1(&self, k: Fx) -> Fx {
        k.scale_pow2(self.k)
    }

    /// Narrows a ratio.
    pub fn ratio(&self, r: Fx) -> Fx {
        r.scale_pow2(RATIO.exponent(0))
    }

    /// An impulse in newton-seconds in this constraint's unit.
    pub fn unit_impulse(&self, impulse: Fx) -> Fx {
        impulse.scale_pow2(-self.impulse)
    }

    /// An impulse in this constraint's unit in newton-seconds.
    pub fn newton_seconds(&self, impulse: Fx) -> Fx {
        impulse.scale_pow2(self.impulse)
    }
}

/// `v · 2^exponent`, each component by [`Fx::scale_pow2`]. Narrowing
/// never saturates: [`Scales::new`] refuses a constraint whose constants
/// would leave 2²⁹.
fn scaled3(v: Vec3, exponent: i32) -> Vec3 {
    Vec3::new(
        v.x.scale_pow2(exponent),
        v.y.scale_pow2(exponent),
        v.z.scale_pow2(exponent),
    )
}

/// What a narrowed unit vector stands for (its dropped bits zero): the
/// tangents of a narrow constraint's friction impulse.
pub(crate) fn widen_unit(v: Vec3) -> Vec3 {
    scaled3(v, -UNIT.exponent(0))
}

/// An arithmetic for the passes' products: a constant `c` times a
/// variable `x`, summed, rounded once to Q32.32.
pub(crate) trait Products {
    /// A sum of products before rounding.
    type Sum: Copy + Default;
    /// `c · x`.
    fn term(c: Fx, x: Fx) -> Self::Sum;
    /// `a + b`, wrapping.
    fn plus(a: Self::Sum, b: Self::Sum) -> Self::Sum;
    /// `a − b`, wrapping.
    fn minus(a: Self::Sum, b: Self::Sum) -> Self::Sum;
    /// The sum rounded to Q32.32.
    fn round(a: Self::Sum, r: Round) -> Fx;
}

/// Q32.32 products summed exactly in Q64.64 (no shift: constants and
/// impulses are in their own units).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Exact;

impl Products for Exact {
    type Sum = Wide;

    #[inline(always)]
    fn term(c: Fx, x: Fx) -> Wide {
        Wide::product(c, x)
    }

    #[inline(always)]
    fn plus(a: Wide, b: Wide) -> Wide {
        a.wrapping_add(b)
    }

    #[inline(always)]
    fn minus(a: Wide, b: Wide) -> Wide {
        a.wrapping_sub(b)
    }

    #[inline(always)]
    fn round(a: Wide, _: Round) -> Fx {
        a.round_wrapping()
    }
}

/// Narrowed constants times variables that drop their low 11 bits and
/// keep the 32 after them, summed in `i64`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Narrow;

impl Products for Narrow {
    type Sum = i64;

    #[inline(always)]
    fn term(c: Fx, x: Fx) -> i64 {
        c.to_bits()
            .wrapping_mul(i64::from((x.to_bits() >> VARIABLE_DROP) as i32))
    }

    #[inline(always)]
    fn plus(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }

    #[inline(always)]
    fn minus(a: i64, b: i64) -> i64 {
        a.wrapping_sub(b)
    }

    #[inline(always)]
    fn round(a: i64, r: Round) -> Fx {
        Fx::from_bits(a.wrapping_add(1 << (r.0 - 1)) >> r.0)
    }
}

/// `c · x`, rounded once.
#[inline(always)]
pub(crate) fn mul<P: Products>(c: Fx, x: Fx, r: Round) -> Fx {
    P::round(P::term(c, x), r)
}

/// `c · x` for vectors, before rounding.
#[inline(always)]
pub(crate) fn dot_sum<P: Products>(c: Vec3, x: Vec3) -> P::Sum {
    P::plus(
        P::plus(P::term(c.x, x.x), P::term(c.y, x.y)),
        P::term(c.z, x.z),
    )
}

/// `c · x` for vectors, rounded once.
#[inline(always)]
pub(crate) fn dot<P: Products>(c: Vec3, x: Vec3, r: Round) -> Fx {
    P::round(dot_sum::<P>(c, x), r)
}

/// A constant vector `c` scaled by a variable `x`, each component rounded
/// once.
#[inline(always)]
pub(crate) fn scale<P: Products>(c: Vec3, x: Fx, r: Round) -> Vec3 {
    Vec3::new(
        mul::<P>(c.x, x, r),
        mul::<P>(c.y, x, r),
        mul::<P>(c.z, x, r),
    )
}

/// A variable vector `x` scaled by a constant `c`, each component rounded
/// once.
#[inline(always)]
pub(crate) fn times<P: Products>(x: Vec3, c: Fx, r: Round) -> Vec3 {
    Vec3::new(
        mul::<P>(c, x.x, r),
        mul::<P>(c, x.y, r),
        mul::<P>(c, x.z, r),
    )
}

/// A vector sum of scaled vectors, each component rounded once.
pub(crate) struct Sum3<P: Products>([P::Sum; 3]);

impl<P: Products> Default for Sum3<P> {
    #[inline(always)]
    fn default() -> Sum3<P> {
        Sum3([P::Sum::default(); 3])
    }
}

impl<P: Products> Sum3<P> {
    /// Adds the constant `c` scaled by the variable `x`.
    #[inline(always)]
    pub fn add(&mut self, c: Vec3, x: Fx) {
        self.0[0] = P::plus(self.0[0], P::term(c.x, x));
        self.0[1] = P::plus(self.0[1], P::term(c.y, x));
        self.0[2] = P::plus(self.0[2], P::term(c.z, x));
    }

    /// The sum, rounded.
    #[inline(always)]
    pub fn round(self, r: Round) -> Vec3 {
        Vec3::new(
            P::round(self.0[0], r),
            P::round(self.0[1], r),
            P::round(self.0[2], r),
        )
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The width of one constant.
    fn widest(v: &str) -> Widest {
        let mut w = Widest::default();
        w.take(Fx::lit(v));
        w
    }

    /// The scales of a constraint of unit cubes of 1 kg: lever arms up to
    /// 0.9 m, effective masses up to 1 kg, `K` up to 6, friction 0.5.
    fn cube_scales() -> Scales {
        Scales::new(widest("0.9"), widest("1"), widest("6"), widest("0.5"))
            .expect("a unit cube's constraint is narrow")
    }

    fn fx(raw: i64) -> Fx {
        Fx::from_bits(raw)
    }

    proptest! {
        /// In its domain, each narrow product is the exact one to within
        /// the variable's dropped bits (2⁻²¹ of its unit, times the
        /// constant) and the constant's (its exponent's unit, times the
        /// variable), plus the rounding.
        #[test]
        fn narrow_products_are_the_exact_ones_within_their_dropped_bits(
            n in -(1i64 << 32)..=(1i64 << 32),
            arm in -(1i64 << 32)..(1i64 << 32),
            mass in 0i64..(1i64 << 32),
            v in -(1000i64 << 32)..(1000i64 << 32),
            w in -(60i64 << 32)..(60i64 << 32),
        ) {
            let s = cube_scales();
            let err = |exact: Fx, narrow: Fx, bound: &str| {
                let e = (exact - narrow).abs();
                prop_assert!(e <= Fx::lit(bound), "exact {exact}, narrow {narrow}, error {e}");
                Ok(())
            };
            // The normal times a relative velocity.
            let exact = mul::<Exact>(fx(n), fx(v), UNIT);
            err(exact, mul::<Narrow>(s.unit(Vec3::new(fx(n), Fx::ZERO, Fx::ZERO)).x, fx(v), UNIT), "0.00001")?;
            // A lever arm times an angular velocity.
            let exact = mul::<Exact>(fx(arm), fx(w), ARM);
            err(exact, mul::<Narrow>(s.arm1(fx(arm)), fx(w), ARM), "0.00001")?;
            // An effective mass times a velocity, in the impulse unit.
            let exact = s.unit_impulse(mul::<Exact>(fx(mass), fx(v), MASS));
            err(exact, mul::<Narrow>(s.mass(fx(mass)), fx(v), MASS), "0.00001")?;
        }

        /// Any operands at all: no panic, and the same result as the
        /// definition (a variable keeps the low 32 bits of its narrowed
        /// value; sums of up to eight terms of constants below 2²⁹ never
        /// wrap).
        #[test]
        fn narrow_products_are_total(c in -(1i64 << 29) + 1..(1i64 << 29), x in any::<i64>()) {
            let terms = [Narrow::term(fx(c), fx(x)); 8];
            let sum = terms.iter().fold(0i64, |s, &t| Narrow::plus(s, t));
            let wide = i128::from(c) * i128::from((x >> VARIABLE_DROP) as i32) * 8;
            prop_assert_eq!(i128::from(sum), wide);
            let _ = Narrow::round(sum, K);
        }
    }

    #[test]
    fn constraints_outside_the_fixed_roundings_keep_exact_products() {
        let (arms, masses, ks, ratios) = (widest("0.9"), widest("1"), widest("6"), widest("0.5"));
        assert!(Scales::new(arms, masses, ks, ratios).is_some());
        // A lever arm of 2 m or more.
        assert!(Scales::new(widest("2"), masses, ks, ratios).is_none());
        // Friction of 4 or more.
        assert!(Scales::new(arms, masses, ks, widest("4")).is_none());
        // `K` of 16 with an effective mass of 1 (a light body on a long
        // lever of a heavy one, say).
        assert!(Scales::new(arms, masses, widest("16"), ratios).is_none());
        // No effective mass at all.
        assert!(Scales::new(arms, Widest::default(), ks, ratios).is_none());
    }

    #[test]
    fn impulses_round_trip_through_the_unit() {
        let s = cube_scales();
        for l in ["0", "0.04", "-3.5", "250"] {
            let l = Fx::lit(l);
            assert_eq!(s.newton_seconds(s.unit_impulse(l)), l);
        }
    }
}
