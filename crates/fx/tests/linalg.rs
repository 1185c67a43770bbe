//! `Vec3`, `Quat` and `Mat3`: exactness of products, error bounds of length
//! and normalisation (against an f64 oracle on values f64 holds exactly), and
//! the algebraic identities a rigid-body solver relies on.
#![allow(clippy::float_arithmetic)]

use lockstep_fx::{Fx, Mat3, Quat, Vec3};
use proptest::prelude::*;

fn f(x: Fx) -> f64 {
    x.to_f64_lossy()
}

fn lsb_error(got: Fx, exact: f64) -> f64 {
    (f(got) - exact).abs() * 4_294_967_296.0
}

/// Raw components up to 2^52 (|x| < 2^20) so that f64 holds inputs exactly.
/// Its own rounding of a length near 2^20 is up to 2^-33 · 2^20 ... about 1/8
/// LSB per operation, so the f64 checks below are a sanity bound; exact
/// rounding is checked against an integer oracle in
/// `long_vector_length_is_exactly_rounded`.
fn comp() -> impl Strategy<Value = Fx> {
    prop_oneof![
        (-(1i64 << 52)..(1i64 << 52)).prop_map(Fx::from_bits),
        (-(1i64 << 34)..(1i64 << 34)).prop_map(Fx::from_bits),
        (-(1i64 << 12)..(1i64 << 12)).prop_map(Fx::from_bits),
    ]
}

fn vec3() -> impl Strategy<Value = Vec3> {
    (comp(), comp(), comp()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn unit_quat() -> impl Strategy<Value = Quat> {
    (
        -(1i64 << 33)..(1i64 << 33),
        -(1i64 << 33)..(1i64 << 33),
        -(1i64 << 33)..(1i64 << 33),
        -(1i64 << 33)..(1i64 << 33),
    )
        .prop_filter("non-zero", |(w, x, y, z)| (*w, *x, *y, *z) != (0, 0, 0, 0))
        .prop_map(|(w, x, y, z)| {
            Quat::from_wxyz(
                Fx::from_bits(w),
                Fx::from_bits(x),
                Fx::from_bits(y),
                Fx::from_bits(z),
            )
            .normalize()
        })
}

fn close(a: Vec3, b: Vec3, lsb: i64) -> bool {
    let d = (a - b).abs();
    d.max_element() <= Fx::from_bits(lsb)
}

#[test]
fn pythagorean_lengths_are_exact() {
    assert_eq!(Vec3::from_ints(3, 0, 4).length(), Fx::from_int(5));
    assert_eq!(Vec3::from_ints(2, 3, 6).length(), Fx::from_int(7));
    assert_eq!(Vec3::from_ints(-1, 4, -8).length(), Fx::from_int(9));
    assert_eq!(Vec3::ZERO.length(), Fx::ZERO);
    assert_eq!(Vec3::ZERO.try_normalize(), None);
    assert_eq!(Vec3::from_ints(0, -7, 0).try_normalize(), Some(-Vec3::Y));
    // Tiny vectors keep full precision: one LSB long, length one LSB.
    assert_eq!(
        Vec3::new(Fx::EPSILON, Fx::ZERO, Fx::ZERO).length(),
        Fx::EPSILON
    );
    assert_eq!(
        Vec3::new(Fx::EPSILON, Fx::ZERO, Fx::ZERO).try_normalize(),
        Some(Vec3::X)
    );
    // Huge vectors saturate instead of wrapping.
    assert_eq!(Vec3::splat(Fx::MAX).length(), Fx::MAX);
    assert_eq!(
        Vec3::splat(Fx::MIN)
            .try_normalize()
            .map(|v| v.x.is_negative()),
        Some(true)
    );
}

#[test]
fn matrix_inverse_and_rotation() {
    let m = Mat3::from_rows(
        Vec3::from_ints(2, 0, 1),
        Vec3::from_ints(1, 3, 0),
        Vec3::from_ints(0, 1, 4),
    );
    let inv = m.inverse().expect("invertible");
    let id = m * inv;
    for (row, unit) in id.rows.iter().zip([Vec3::X, Vec3::Y, Vec3::Z]) {
        assert!(close(*row, unit, 4), "{row:?}");
    }
    assert_eq!(Mat3::ZERO.inverse(), None);
    // Regression: a determinant of -1 LSB made inverse() divide -0.5 by
    // -EPSILON, which panicked; entries now saturate.
    let tiny = Mat3::from_diagonal(Vec3::new(Fx::from_bits(2), Fx::lit("-0.5"), Fx::ONE));
    assert!(tiny.inverse().is_some());
    assert_eq!(
        Mat3::skew(Vec3::from_ints(1, 2, 3)) * Vec3::from_ints(4, 5, 6),
        Vec3::from_ints(1, 2, 3).cross(Vec3::from_ints(4, 5, 6))
    );
    // A quarter turn about y maps z to x.
    let q = Quat::from_axis_angle(Vec3::Y, Fx::FRAC_PI_2);
    assert!(close(q.rotate(Vec3::Z), Vec3::X, 8));
    assert!(close(Mat3::from_quat(q) * Vec3::Z, Vec3::X, 8));
}

proptest! {
    #[test]
    fn dot_and_cross_are_exact(a in vec3(), b in vec3()) {
        // Raw products summed exactly, then rounded once to nearest.
        let raw = |v: Fx| v.to_bits() as i128;
        let round = |p: i128| ((p + (1 << 31)) >> 32).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let dot = raw(a.x) * raw(b.x) + raw(a.y) * raw(b.y) + raw(a.z) * raw(b.z);
        prop_assert_eq!(a.dot(b).to_bits(), round(dot));
        let c = a.cross(b);
        prop_assert_eq!(c.x.to_bits(), round(raw(a.y) * raw(b.z) - raw(a.z) * raw(b.y)));
        prop_assert_eq!(c.y.to_bits(), round(raw(a.z) * raw(b.x) - raw(a.x) * raw(b.z)));
        prop_assert_eq!(c.z.to_bits(), round(raw(a.x) * raw(b.y) - raw(a.y) * raw(b.x)));
    }

    #[test]
    fn length_within_one_lsb(v in vec3()) {
        let exact = (f(v.x).powi(2) + f(v.y).powi(2) + f(v.z).powi(2)).sqrt();
        prop_assert!(lsb_error(v.length(), exact) <= 1.0, "{v:?}: {} vs {exact}", v.length());
    }

    #[test]
    fn normalize_within_one_lsb(v in vec3()) {
        prop_assume!(v != Vec3::ZERO);
        let len = (f(v.x).powi(2) + f(v.y).powi(2) + f(v.z).powi(2)).sqrt();
        let n = v.try_normalize().unwrap();
        for (got, c) in [(n.x, v.x), (n.y, v.y), (n.z, v.z)] {
            prop_assert!(lsb_error(got, f(c) / len) <= 1.0);
        }
        prop_assert!((n.length() - Fx::ONE).abs() <= Fx::from_bits(2));
    }

    #[test]
    fn rotation_preserves_length_and_matches_matrix(q in unit_quat(), v in (-(1i64 << 36)..(1i64 << 36), -(1i64 << 36)..(1i64 << 36), -(1i64 << 36)..(1i64 << 36))) {
        let v = Vec3::new(Fx::from_bits(v.0), Fx::from_bits(v.1), Fx::from_bits(v.2));
        let r = q.rotate(v);
        // A unit quaternion is exact to ~1 LSB per component, so a rotation
        // scales by 1 ± 2^-30 at most: allow 8 LSB per unit of length.
        let tol = 8 * (v.length().to_int_floor() as i64 + 1) + 8;
        prop_assert!((r.length() - v.length()).abs() <= Fx::from_bits(tol));
        prop_assert!(close(Mat3::from_quat(q) * v, r, tol));
        prop_assert!(close(q.inverse_rotate(r), v, 2 * tol));
        prop_assert!(close(Mat3::from_quat(q).transpose_mul_vec3(r), v, 2 * tol));
        prop_assert_eq!(Mat3::from_quat(q).transpose_mul_vec3(r), Mat3::from_quat(q).transpose() * r);
    }

    #[test]
    fn quaternion_product_composes_rotations(a in unit_quat(), b in unit_quat()) {
        let v = Vec3::from_ints(1, -2, 3);
        prop_assert!(close((a * b).rotate(v), a.rotate(b.rotate(v)), 64));
        let id = a * a.conjugate();
        prop_assert!((id.w - Fx::ONE).abs() <= Fx::from_bits(8));
        prop_assert!(id.vector().abs().max_element() <= Fx::from_bits(8));
        prop_assert!((a.length() - Fx::ONE).abs() <= Fx::from_bits(3));
    }

    #[test]
    fn integration_stays_unit_and_turns_the_right_way(q in unit_quat(), w in -(1i64 << 35)..(1i64 << 35)) {
        let omega = Vec3::new(Fx::ZERO, Fx::from_bits(w), Fx::ZERO);
        let dt = Fx::from_ratio(1, 60);
        let next = q.integrate(omega, dt);
        prop_assert!((next.length() - Fx::ONE).abs() <= Fx::from_bits(3));
        // The small rotation dq = next · q⁻¹ has its axis along +y scaled by ω.
        let dq = next * q.conjugate();
        let expect = (f(omega.y) * f(dt) / 2.0).sin();
        prop_assert!((f(dq.y) - expect).abs() < 1e-3, "{} vs {expect}", f(dq.y));
    }

    #[test]
    fn rotated_diagonal_equals_full_product(q in unit_quat(), d in (0i64..(1i64 << 36), 0i64..(1i64 << 36), 0i64..(1i64 << 36))) {
        let r = Mat3::from_quat(q);
        let d = Vec3::new(Fx::from_bits(d.0), Fx::from_bits(d.1), Fx::from_bits(d.2));
        let fast = r.rotate_diagonal(d);
        let slow = r * Mat3::from_diagonal(d) * r.transpose();
        prop_assert_eq!(fast, fast.transpose());
        for i in 0..3 {
            prop_assert!(close(fast.rows[i], slow.rows[i], 16));
        }
    }

    #[test]
    fn tangent_basis_is_orthonormal(v in vec3()) {
        prop_assume!(v != Vec3::ZERO);
        let n = v.try_normalize().unwrap();
        let (t1, t2) = n.any_orthonormal_pair();
        for (a, b) in [(n, t1), (n, t2), (t1, t2)] {
            prop_assert!(a.dot(b).abs() <= Fx::from_bits(8));
        }
        prop_assert!((t1.length() - Fx::ONE).abs() <= Fx::from_bits(8));
        prop_assert!((t2.length() - Fx::ONE).abs() <= Fx::from_bits(8));
        prop_assert!((n.cross(t1) - t2).abs().max_element() <= Fx::from_bits(8));
    }
}

proptest! {
    /// Long vectors (beyond what f64 holds exactly) against an exact integer
    /// oracle: |v|² is bracketed by the squares of length ± 1/2 LSB.
    #[test]
    fn long_vector_length_is_exactly_rounded(x in any::<i64>(), y in any::<i64>(), z in any::<i64>()) {
        let v = Vec3::new(Fx::from_bits(x / 2), Fx::from_bits(y / 2), Fx::from_bits(z / 2));
        let sum: u128 = [x / 2, y / 2, z / 2].iter().map(|c| c.unsigned_abs() as u128 * c.unsigned_abs() as u128).sum();
        let len = v.length().to_bits() as u128;
        // (2 len - 1)² <= 4 sum <= (2 len + 1)²  (computed in halves to stay in u128)
        let lo = len.saturating_sub(1) * len; // ≈ (len - 1/2)², exact: len² - len
        let hi = len * len + len; // (len + 1/2)² - 1/4
        prop_assert!(sum >= lo && sum <= hi, "{v:?} len {len}");
    }
}
