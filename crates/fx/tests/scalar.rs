//! `Fx` arithmetic: exact results against 128-bit integer references, the
//! saturation policy, literal parsing and formatting.

use lockstep_fx::{Fx, ParseFxError};
use proptest::prelude::*;

const ONE: i128 = 1 << 32;

fn clamp(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Exact a*b rounded to nearest, ties toward +inf, saturated.
fn ref_mul(a: i64, b: i64) -> i64 {
    clamp((a as i128 * b as i128 + (ONE / 2)).div_euclid(ONE))
}

/// Exact a/b truncated toward zero, saturated; b != 0.
fn ref_div(a: i64, b: i64) -> i64 {
    clamp((a as i128 * ONE) / b as i128)
}

#[test]
fn constants_are_exact() {
    assert_eq!(Fx::ONE.to_bits(), 1 << 32);
    assert_eq!(Fx::HALF + Fx::HALF, Fx::ONE);
    assert_eq!(Fx::from_int(-3).to_bits(), -3 << 32);
    assert_eq!(Fx::NEG_ONE, -Fx::ONE);
    // π constants are round(π · 2^32) (π·2^32 = 13493037704.52...).
    assert_eq!(Fx::PI.to_bits(), 13_493_037_705);
    assert_eq!(Fx::lit("3.14159265358979323846264338327950288"), Fx::PI);
    assert_eq!(
        Fx::lit("1.57079632679489661923132169163975144"),
        Fx::FRAC_PI_2
    );
    assert_eq!(
        Fx::lit("0.78539816339744830961566084581987572"),
        Fx::FRAC_PI_4
    );
    assert_eq!(Fx::lit("6.28318530717958647692528676655900577"), Fx::TAU);
}

#[test]
fn literals_round_to_nearest() {
    const G: Fx = Fx::lit("-9.81");
    assert_eq!(G, Fx::from_ratio(-981, 100));
    assert_eq!(Fx::lit("0.5"), Fx::HALF);
    assert_eq!(Fx::lit("+2"), Fx::TWO);
    assert_eq!(Fx::lit("2."), Fx::TWO);
    assert_eq!(Fx::lit(".25"), Fx::from_ratio(1, 4));
    // 0.1 · 2^32 = 429496729.6 → 429496730.
    assert_eq!(Fx::lit("0.1").to_bits(), 429_496_730);
    assert_eq!(Fx::lit("-0.1").to_bits(), -429_496_730);
    // Half an LSB is exactly 2^-33 = 0.000000000116415321826934814453125:
    // the tie rounds away from zero, and anything below it rounds down.
    assert_eq!(Fx::lit("0.000000000116415321826934814453125").to_bits(), 1);
    assert_eq!(
        Fx::lit("-0.000000000116415321826934814453125").to_bits(),
        -1
    );
    assert_eq!(
        Fx::lit("0.0000000001164153218269348144531250000001").to_bits(),
        1
    );
    assert_eq!(
        Fx::lit("0.0000000001164153218269348144531249999999").to_bits(),
        0
    );
    // 1.5 LSB rounds to 2.
    assert_eq!(Fx::lit("0.000000000349245965480804443359375").to_bits(), 2);
    assert_eq!(Fx::lit("-2147483648"), Fx::MIN);
    assert_eq!(
        Fx::lit("2147483647.99999999976716935634613037109375"),
        Fx::MAX
    );
}

#[test]
fn parse_rejects_bad_text() {
    assert_eq!("".parse::<Fx>(), Err(ParseFxError::Empty));
    assert_eq!("-".parse::<Fx>(), Err(ParseFxError::Empty));
    assert_eq!(".".parse::<Fx>(), Err(ParseFxError::Empty));
    assert_eq!(
        "1.2.3".parse::<Fx>(),
        Err(ParseFxError::InvalidDigit { position: 3 })
    );
    assert_eq!(
        "1e5".parse::<Fx>(),
        Err(ParseFxError::InvalidDigit { position: 1 })
    );
    assert_eq!("2147483648".parse::<Fx>(), Err(ParseFxError::OutOfRange));
    assert_eq!("-2147483648.1".parse::<Fx>(), Err(ParseFxError::OutOfRange));
    assert_eq!(
        "99999999999999999999999999999999".parse::<Fx>(),
        Err(ParseFxError::OutOfRange)
    );
}

#[test]
fn display_is_exact_decimal() {
    assert_eq!(Fx::from_int(-3).to_string(), "-3.0");
    assert_eq!(Fx::lit("1.25").to_string(), "1.25");
    assert_eq!(format!("{:.3}", Fx::PI), "3.142");
    assert_eq!(format!("{:.0}", Fx::lit("2.5")), "3");
    assert_eq!(Fx::EPSILON.to_string(), "0.0000000002");
    assert_eq!(Fx::MIN.to_string(), "-2147483648.0");
    assert_eq!(format!("{:.2}", Fx::lit("-0.001")), "0.00");
    // Every Fx is an exact 32-digit decimal; longer precisions pad zeros.
    assert_eq!(
        format!("{:.32}", Fx::EPSILON),
        "0.00000000023283064365386962890625"
    );
    assert_eq!(
        format!("{:.34}", -Fx::EPSILON),
        "-0.0000000002328306436538696289062500"
    );
    assert_eq!(format!("{:.25}", Fx::HALF), "0.5000000000000000000000000");
    assert_eq!(format!("{:.1}", Fx::lit("9.96")), "10.0");
    // Width, fill, alignment and sign flags work as for integers.
    assert_eq!(format!("[{:>8}]", Fx::ONE), "[     1.0]");
    assert_eq!(format!("[{:<6.1}]", Fx::HALF), "[0.5   ]");
    assert_eq!(format!("{:+}", Fx::TWO), "+2.0");
    assert_eq!(format!("{:08.2}", Fx::lit("-1.5")), "-0001.50");
}

#[test]
fn saturation_policy() {
    assert_eq!(Fx::MAX + Fx::ONE, Fx::MAX);
    assert_eq!(Fx::MIN - Fx::ONE, Fx::MIN);
    assert_eq!(-Fx::MIN, Fx::MAX);
    assert_eq!(Fx::MIN.abs(), Fx::MAX);
    assert_eq!(Fx::from_int(70_000) * Fx::from_int(70_000), Fx::MAX);
    assert_eq!(Fx::from_int(70_000) * Fx::from_int(-70_000), Fx::MIN);
    assert_eq!(Fx::ONE / Fx::ZERO, Fx::MAX);
    assert_eq!(-Fx::ONE / Fx::ZERO, Fx::MIN);
    assert_eq!(Fx::ZERO / Fx::ZERO, Fx::ZERO);
    assert_eq!(Fx::MAX / Fx::EPSILON, Fx::MAX);
    assert_eq!(Fx::MIN.div_int(-1), Fx::MAX);
    assert_eq!(Fx::ONE.div_int(0), Fx::MAX);
    assert_eq!(Fx::MAX.checked_add(Fx::EPSILON), None);
    assert_eq!(Fx::ONE.checked_div(Fx::ZERO), None);
    assert_eq!(Fx::MAX.wrapping_add(Fx::EPSILON), Fx::MIN);
    assert_eq!(Fx::ONE.scale_pow2(40), Fx::MAX);
    assert_eq!(Fx::from_int(-1).scale_pow2(-70), Fx::from_bits(-1));
}

#[test]
fn rounding_of_mul_and_div() {
    // 1 LSB × 0.5 = half an LSB: ties go toward +∞.
    assert_eq!(Fx::EPSILON * Fx::HALF, Fx::EPSILON);
    assert_eq!(-Fx::EPSILON * Fx::HALF, Fx::ZERO);
    // Division truncates toward zero.
    assert_eq!(Fx::ONE / Fx::from_int(3), Fx::from_bits(1_431_655_765));
    assert_eq!(-Fx::ONE / Fx::from_int(3), Fx::from_bits(-1_431_655_765));
    // Regression: -0.5 / -EPSILON hit i64::MIN / -1 in the 64-bit fast path
    // and panicked (in release too); it saturates.
    assert_eq!(Fx::from_bits(-(1 << 31)) / Fx::from_bits(-1), Fx::MAX);
    assert_eq!(Fx::MIN / Fx::from_bits(-1), Fx::MAX);
    // Fast and slow division paths agree around the 2^31 boundary.
    for bits in [
        (1i64 << 31) - 1,
        1 << 31,
        -(1 << 31),
        -(1 << 31) + 1,
        -(1 << 31) - 1,
    ] {
        for d in [3i64, -7, 1, -1, 2, -2, 1 << 20, -(1 << 40)] {
            assert_eq!(
                (Fx::from_bits(bits) / Fx::from_bits(d)).to_bits(),
                ref_div(bits, d)
            );
        }
    }
}

#[test]
fn floor_ceil_round() {
    let x = Fx::lit("-2.5");
    assert_eq!(x.floor(), Fx::from_int(-3));
    assert_eq!(x.ceil(), Fx::from_int(-2));
    assert_eq!(x.round(), Fx::from_int(-2));
    assert_eq!(x.fract(), Fx::HALF);
    assert_eq!(x.to_int_floor(), -3);
    assert_eq!(Fx::lit("2.5").to_int_round(), 3);
    // Above the largest integer, ceil and round stay at it (2^31 is out of range).
    assert_eq!(Fx::MAX.ceil(), Fx::from_int(i32::MAX));
    assert_eq!(Fx::MAX.round(), Fx::from_int(i32::MAX));
    assert_eq!(Fx::MIN.floor(), Fx::MIN);
}

#[test]
fn ratio_rounds_to_nearest() {
    assert_eq!(Fx::from_ratio(1, 3).to_bits(), 1_431_655_765);
    assert_eq!(Fx::from_ratio(2, 3).to_bits(), 2_863_311_531);
    assert_eq!(Fx::from_ratio(-2, 3).to_bits(), -2_863_311_531);
    assert_eq!(Fx::from_ratio(1, 0), Fx::MAX);
    assert_eq!(Fx::from_ratio(i64::MAX, 1), Fx::MAX);
}

fn any_fx() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -(1i64 << 40)..(1i64 << 40),
        -(1i64 << 33)..(1i64 << 33),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
    ]
}

proptest! {
    #[test]
    fn mul_matches_exact_reference(a in any_fx(), b in any_fx()) {
        prop_assert_eq!((Fx::from_bits(a) * Fx::from_bits(b)).to_bits(), ref_mul(a, b));
        prop_assert_eq!(Fx::from_bits(a) * Fx::from_bits(b), Fx::from_bits(b) * Fx::from_bits(a));
    }

    #[test]
    fn scale_pow2_matches_exact_reference(a in any_fx(), k in -70i32..70) {
        // Up: the value times 2^k in 128 bits, saturated; down: an
        // arithmetic shift (toward −∞), by at most 63.
        let exact = if k >= 0 {
            clamp((a as i128) << k.min(63))
        } else {
            a >> (-k).min(63)
        };
        prop_assert_eq!(Fx::from_bits(a).scale_pow2(k).to_bits(), exact);
    }

    #[test]
    fn div_matches_exact_reference(a in any_fx(), b in any_fx()) {
        prop_assume!(b != 0);
        prop_assert_eq!((Fx::from_bits(a) / Fx::from_bits(b)).to_bits(), ref_div(a, b));
    }

    #[test]
    fn add_sub_are_saturating_inverses(a in any_fx(), b in any_fx()) {
        let (x, y) = (Fx::from_bits(a), Fx::from_bits(b));
        prop_assert_eq!((x + y).to_bits(), a.saturating_add(b));
        prop_assert_eq!(x + y, y + x);
        if x.checked_add(y).is_some() {
            prop_assert_eq!((x + y) - y, x);
        }
    }

    #[test]
    fn distributivity_within_one_lsb(a in -(1i64 << 45)..(1i64 << 45), b in -(1i64 << 45)..(1i64 << 45), c in -(1i64 << 45)..(1i64 << 45)) {
        let (x, y, z) = (Fx::from_bits(a), Fx::from_bits(b), Fx::from_bits(c));
        let lhs = x * (y + z);
        let rhs = x * y + x * z;
        prop_assert!((lhs - rhs).abs() <= Fx::from_bits(1));
    }

    #[test]
    fn display_parse_round_trip(a in any_fx()) {
        let x = Fx::from_bits(a);
        // 19 decimal digits are enough to pin every Q32.32 value.
        let text = format!("{x:.19}");
        prop_assert_eq!(text.parse::<Fx>(), Ok(x));
    }

    #[test]
    fn mul_add_mul_is_exact_sum(a in any_fx(), b in any_fx(), c in any_fx(), d in any_fx()) {
        // The sum can reach 2^127 (MIN·MIN twice), one past i128: saturate.
        let p = (a as i128 * b as i128).saturating_add(c as i128 * d as i128);
        let expect = clamp(p.saturating_add(ONE / 2).div_euclid(ONE));
        let got = Fx::from_bits(a).mul_add_mul(Fx::from_bits(b), Fx::from_bits(c), Fx::from_bits(d));
        prop_assert_eq!(got.to_bits(), expect);
    }

    #[test]
    fn parse_never_panics(s in "\\PC{0,40}") {
        let _ = s.parse::<Fx>();
    }
}
