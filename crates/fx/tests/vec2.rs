//! `Vec2`: the same bounds as `Vec3` — products exact to the rounding of
//! one result, length and normalisation within 1 LSB (against an f64
//! oracle on values f64 holds exactly), saturation instead of wrapping, and
//! an exact canonical round trip.
#![allow(clippy::float_arithmetic)]

use lockstep_fx::{Canonical, Fx, Vec2};
use proptest::prelude::*;

fn f(x: Fx) -> f64 {
    x.to_f64_lossy()
}

fn lsb_error(got: Fx, exact: f64) -> f64 {
    (f(got) - exact).abs() * 4_294_967_296.0
}

/// Raw components up to 2^52 (|x| < 2^20), so f64 holds them exactly.
fn comp() -> impl Strategy<Value = Fx> {
    prop_oneof![
        (-(1i64 << 52)..(1i64 << 52)).prop_map(Fx::from_bits),
        (-(1i64 << 34)..(1i64 << 34)).prop_map(Fx::from_bits),
        (-(1i64 << 12)..(1i64 << 12)).prop_map(Fx::from_bits),
    ]
}

fn vec2() -> impl Strategy<Value = Vec2> {
    (comp(), comp()).prop_map(|(x, y)| Vec2::new(x, y))
}

#[test]
fn lengths_of_integer_triangles_are_exact() {
    assert_eq!(Vec2::from_ints(3, 4).length(), Fx::from_int(5));
    assert_eq!(Vec2::from_ints(-5, 12).length(), Fx::from_int(13));
    assert_eq!(Vec2::ZERO.length(), Fx::ZERO);
    assert_eq!(Vec2::ZERO.try_normalize(), None);
    assert_eq!(Vec2::from_ints(0, -7).try_normalize(), Some(-Vec2::Y));
    assert_eq!(
        Vec2::new(Fx::EPSILON, Fx::ZERO).try_normalize(),
        Some(Vec2::X)
    );
    // Saturating, never wrapping.
    assert_eq!(Vec2::splat(Fx::MAX).length(), Fx::MAX);
    assert_eq!(Vec2::splat(Fx::MAX).length_squared(), Fx::MAX);
    assert_eq!(Vec2::splat(Fx::MAX) + Vec2::ONE, Vec2::splat(Fx::MAX));
}

#[test]
fn perp_turns_a_quarter_counter_clockwise() {
    assert_eq!(Vec2::X.perp(), Vec2::Y);
    assert_eq!(Vec2::Y.perp(), -Vec2::X);
    assert_eq!(Vec2::X.perp_dot(Vec2::Y), Fx::ONE);
    assert_eq!(Vec2::Y.perp_dot(Vec2::X), -Fx::ONE);
    let v = Vec2::from_ints(3, -2);
    assert_eq!(v.dot(v.perp()), Fx::ZERO);
    assert_eq!(v.perp_dot(v), Fx::ZERO);
}

#[test]
fn a_vec2_encodes_as_its_two_components() {
    let v = Vec2::new(Fx::lit("1.5"), Fx::lit("-0.25"));
    let bytes = v.to_canonical();
    assert_eq!(bytes.len(), 16);
    assert_eq!(bytes[..8], Fx::lit("1.5").to_bits().to_le_bytes());
    assert_eq!(Vec2::from_canonical(&bytes), Ok(v));
    assert!(Vec2::from_canonical(&bytes[..15]).is_err());
}

proptest! {
    #[test]
    fn dot_and_perp_dot_are_exact(a in vec2(), b in vec2()) {
        let raw = |v: Fx| v.to_bits() as i128;
        let round = |p: i128| ((p + (1 << 31)) >> 32).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        prop_assert_eq!(a.dot(b).to_bits(), round(raw(a.x) * raw(b.x) + raw(a.y) * raw(b.y)));
        prop_assert_eq!(a.perp_dot(b).to_bits(), round(raw(a.x) * raw(b.y) - raw(a.y) * raw(b.x)));
    }

    #[test]
    fn length_within_one_lsb(v in vec2()) {
        let exact = (f(v.x).powi(2) + f(v.y).powi(2)).sqrt();
        prop_assert!(lsb_error(v.length(), exact) <= 1.0, "{v:?}: {} vs {exact}", v.length());
    }

    #[test]
    fn normalize_within_one_lsb(v in vec2()) {
        prop_assume!(v != Vec2::ZERO);
        let len = (f(v.x).powi(2) + f(v.y).powi(2)).sqrt();
        let n = v.try_normalize().unwrap();
        for (got, c) in [(n.x, v.x), (n.y, v.y)] {
            prop_assert!(lsb_error(got, f(c) / len) <= 1.0);
        }
        prop_assert!((n.length() - Fx::ONE).abs() <= Fx::from_bits(2));
        let (m, l) = v.normalize_and_length().unwrap();
        prop_assert_eq!(m, n);
        prop_assert_eq!(l, v.length());
    }

    #[test]
    fn canonical_bytes_round_trip(v in vec2()) {
        prop_assert_eq!(Vec2::from_canonical(&v.to_canonical()), Ok(v));
    }
}
