//! Hand-computed manifolds, symmetry and id stability, and fuzzing of the
//! whole box–box path with random and extreme inputs.

use super::sqrt_upper;
use super::{KIND_EDGE, box_box};
use crate::narrowphase::{ContactPoint, Manifold, Pose};
use lockstep_fx::{Fx, Vec3};
use lockstep_fx::{Mat3, Quat, Rng};

fn pose(position: Vec3, rotation: Mat3) -> Pose {
    Pose { position, rotation }
}

fn at(x: &str, y: &str, z: &str) -> Vec3 {
    Vec3::new(Fx::lit(x), Fx::lit(y), Fx::lit(z))
}

fn rot(axis: Vec3, angle: Fx) -> Mat3 {
    Mat3::from_quat(Quat::from_axis_angle(axis, angle))
}

fn near(a: Fx, b: Fx, tol: &str) -> bool {
    (a - b).abs() <= Fx::lit(tol)
}

fn near_v(a: Vec3, b: Vec3, tol: &str) -> bool {
    near(a.x, b.x, tol) && near(a.y, b.y, tol) && near(a.z, b.z, tol)
}

fn points(m: &Manifold) -> &[ContactPoint] {
    &m.points[..m.count as usize]
}

fn ids_distinct(m: &Manifold) -> bool {
    let p = points(m);
    (0..p.len()).all(|i| (i + 1..p.len()).all(|j| p[i].id != p[j].id))
}

fn unit_normal(m: &Manifold) -> bool {
    near(m.normal.length_squared(), Fx::ONE, "0.000001")
}

/// Same normal up to sign flip and the same point positions and
/// separations (as sets, within `tol`).
fn mirrored(ab: &Manifold, ba: &Manifold, tol: &str) -> bool {
    ab.count == ba.count
        && near_v(ab.normal, -ba.normal, tol)
        && points(ab).iter().all(|p| {
            points(ba).iter().any(|q| {
                near_v(p.position, q.position, tol) && near(p.separation, q.separation, tol)
            })
        })
}

const UNIT: Vec3 = Vec3::ONE;
const SMALL_MARGIN: Fx = Fx::lit("0.02");

/// Small box resting on a big one, offset: hand-computed manifold.
#[test]
fn resting_face_contact_matches_hand_computation() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let b = pose(at("0.2", "1.4", "-0.1"), Mat3::IDENTITY);
    let m = box_box(&a, UNIT, &b, Vec3::splat(Fx::HALF), SMALL_MARGIN);
    assert_eq!(m.count, 4);
    assert_eq!(m.normal, Vec3::Y);
    // Reference face +y of A (2), incident face −y of B (3); the incident
    // face's tangent axes are z then x, so v0 = (+z, +x), v1 = (−z, +x), ...
    let base = 2 << 16 | 3 << 8;
    let expected = [
        (at("0.7", "0.95", "0.4"), base),
        (at("0.7", "0.95", "-0.6"), base | 1),
        (at("-0.3", "0.95", "-0.6"), base | 2),
        (at("-0.3", "0.95", "0.4"), base | 3),
    ];
    for (p, (pos, id)) in points(&m).iter().zip(expected) {
        assert!(near_v(p.position, pos, "0.000000001"), "{p:?} vs {pos:?}");
        assert!(near(p.separation, Fx::lit("-0.1"), "0.000000001"), "{p:?}");
        assert_eq!(p.id, id);
    }
    assert!(ids_distinct(&m));
}

/// Equal boxes face to face: four corners, separation = −overlap.
#[test]
fn equal_boxes_stacked() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let b = pose(at("0", "1.99", "0"), Mat3::IDENTITY);
    let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
    assert_eq!(m.count, 4);
    assert_eq!(m.normal, Vec3::Y);
    for p in points(&m) {
        assert_eq!(p.separation, Fx::lit("-0.01"));
        assert!(near(p.position.y, Fx::lit("0.995"), "0.000000001"));
        assert_eq!(p.position.x.abs(), Fx::ONE);
        assert_eq!(p.position.z.abs(), Fx::ONE);
    }
    assert!(ids_distinct(&m));
}

/// A box turned 45° about y on another: the contact octagon is reduced to a
/// well-spread quad.
#[test]
fn rotated_box_on_box_is_clipped_and_reduced() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let b = pose(at("0", "1.99", "0"), rot(Vec3::Y, Fx::FRAC_PI_4));
    let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
    assert_eq!(m.count, 4);
    assert_eq!(m.normal, Vec3::Y);
    assert!(ids_distinct(&m));
    let sqrt2 = Fx::TWO.sqrt();
    for p in points(&m) {
        assert!(near(p.separation, Fx::lit("-0.01"), "0.000001"), "{p:?}");
        assert!(near(p.position.y, Fx::lit("0.995"), "0.000001"));
        // Inside A's top face and inside B's rotated bottom face.
        let (x, z) = (p.position.x.abs(), p.position.z.abs());
        assert!(
            x <= Fx::lit("1.000001") && z <= Fx::lit("1.000001"),
            "{p:?}"
        );
        assert!(x + z <= sqrt2 + Fx::lit("0.000001"), "{p:?}");
        // Every octagon vertex is made by clipping (no original corner).
        assert!(p.id & 0xff >= 4, "{p:?}");
    }
    // The quad covers most of the octagon (area 4 − 4·(2 − √2)²/2 ≈ 3.31).
    let q = points(&m);
    let mut area2 = Fx::ZERO;
    for i in 0..4 {
        let (p, r) = (q[i].position, q[(i + 1) % 4].position);
        area2 += p.x.mul_add_mul(r.z, -r.x, p.z);
    }
    assert!(area2.abs() >= Fx::from_int(4), "twice the area: {area2:?}");
}

/// A slightly tilted box on another (a wobbling stack) still gets a face
/// contact on A's face, not an edge contact.
#[test]
fn tilted_stack_prefers_face_axis() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let tilt = rot(Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO), Fx::lit("0.01"));
    let b = pose(at("0.1", "1.995", "0"), tilt);
    let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
    assert!(m.count >= 2, "{m:?}");
    assert_eq!(m.normal, Vec3::Y);
    assert_eq!(m.points[0].id >> 16, 2, "reference face +y of A");
}

/// Two boxes balanced on edges crossing at right angles: one point in the
/// middle, normal up.
#[test]
fn edge_on_edge_crossing() {
    let sqrt2 = Fx::TWO.sqrt();
    // A's top is a ridge along x at y = √2; B's bottom a ridge along z.
    let a = pose(Vec3::ZERO, rot(Vec3::X, Fx::FRAC_PI_4));
    let y_b = sqrt2 + sqrt2 - Fx::lit("0.02");
    let b = pose(
        Vec3::new(Fx::ZERO, y_b, Fx::ZERO),
        rot(Vec3::Z, Fx::FRAC_PI_4),
    );
    let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
    assert_eq!(m.count, 1, "{m:?}");
    assert!(near_v(m.normal, Vec3::Y, "0.000001"), "{m:?}");
    assert!(unit_normal(&m));
    let p = m.points[0];
    assert!(near(p.separation, Fx::lit("-0.02"), "0.000001"), "{p:?}");
    let expected = Vec3::new(Fx::ZERO, sqrt2 - Fx::lit("0.01"), Fx::ZERO);
    assert!(near_v(p.position, expected, "0.000001"), "{p:?}");
    // A's edge along x (axis 0) on the +y, −z side of its frame: 0 + 2;
    // B's edge along z (axis 2) on the −x, −y side of its frame: 8 + 1 + 2.
    assert_eq!(p.id, KIND_EDGE | 2 << 8 | 11);
    let ba = box_box(&b, UNIT, &a, UNIT, SMALL_MARGIN);
    assert!(mirrored(&m, &ba, "0.000001"), "{m:?}\n{ba:?}");
    assert_eq!(ba.points[0].id, KIND_EDGE | 11 << 8 | 2);
}

#[test]
fn separated_beyond_margin_is_empty() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let b = pose(at("0", "2.2", "0"), Mat3::IDENTITY);
    assert_eq!(box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1")).count, 0);
    // Separated along an edge axis only (face axes overlap).
    let a = pose(Vec3::ZERO, rot(Vec3::X, Fx::FRAC_PI_4));
    let y_b = Fx::TWO.sqrt().mul_int(2) + Fx::lit("0.05");
    let b = pose(
        Vec3::new(Fx::ZERO, y_b, Fx::ZERO),
        rot(Vec3::Z, Fx::FRAC_PI_4),
    );
    assert_eq!(box_box(&a, UNIT, &b, UNIT, Fx::lit("0.02")).count, 0);
    let m = box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1"));
    assert_eq!(m.count, 1);
    assert!(near(m.points[0].separation, Fx::lit("0.05"), "0.000001"));
}

#[test]
fn within_margin_gives_speculative_points() {
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    let b = pose(at("0.3", "2.05", "0"), Mat3::IDENTITY);
    let m = box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1"));
    assert_eq!(m.count, 4);
    assert_eq!(m.normal, Vec3::Y);
    for p in points(&m) {
        assert_eq!(p.separation, Fx::lit("0.05"));
        assert!(near(p.position.y, Fx::lit("1.025"), "0.000000001"));
    }
    // B's bottom face clipped by A's side plane x = 1.
    assert!(points(&m).iter().any(|p| p.id & 0xff >= 4));
    assert!(ids_distinct(&m));
}

#[test]
fn swapping_a_and_b_negates_the_normal_and_keeps_the_points() {
    let cases = [
        (
            pose(Vec3::ZERO, Mat3::IDENTITY),
            UNIT,
            pose(at("0.2", "1.4", "-0.1"), Mat3::IDENTITY),
            Vec3::splat(Fx::HALF),
        ),
        (
            pose(Vec3::ZERO, Mat3::IDENTITY),
            at("2", "0.5", "1"),
            pose(at("-0.5", "0.2", "1.9"), rot(Vec3::Y, Fx::lit("0.3"))),
            at("0.5", "0.25", "1"),
        ),
    ];
    for (a, ha, b, hb) in cases {
        let ab = box_box(&a, ha, &b, hb, SMALL_MARGIN);
        let ba = box_box(&b, hb, &a, ha, SMALL_MARGIN);
        assert!(ab.count > 0);
        assert!(mirrored(&ab, &ba, "0.000001"), "{ab:?}\n{ba:?}");
    }
}

#[test]
fn ids_are_stable_under_small_motion() {
    let cases = [
        (
            at("0.2", "1.4", "-0.1"),
            Mat3::IDENTITY,
            Vec3::splat(Fx::HALF),
        ),
        (at("0", "1.99", "0"), rot(Vec3::Y, Fx::FRAC_PI_4), UNIT),
        (at("0.3", "2.005", "0"), Mat3::IDENTITY, UNIT),
    ];
    let a = pose(Vec3::ZERO, Mat3::IDENTITY);
    for (pos, r, hb) in cases {
        let m0 = box_box(&a, UNIT, &pose(pos, r), hb, SMALL_MARGIN);
        let moved = pos + at("0.0001", "-0.00002", "0.0002");
        let m1 = box_box(&a, UNIT, &pose(moved, r), hb, SMALL_MARGIN);
        assert!(m0.count > 0);
        assert_eq!(m0.count, m1.count, "{m0:?}\n{m1:?}");
        for (p, q) in points(&m0).iter().zip(points(&m1)) {
            assert_eq!(p.id, q.id, "{m0:?}\n{m1:?}");
        }
    }
}

#[test]
fn identical_poses_and_degenerate_sizes() {
    let r = rot(Vec3::Y, Fx::lit("0.7"));
    let p = pose(at("3", "-2", "1"), r);
    let m = box_box(&p, UNIT, &p, UNIT, SMALL_MARGIN);
    assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
    let m = box_box(&p, Vec3::ZERO, &p, Vec3::ZERO, SMALL_MARGIN);
    assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
    let m = box_box(&p, UNIT, &p, -UNIT, Fx::ZERO);
    assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
}

fn random_rotation(rng: &mut Rng) -> Mat3 {
    let mut c = || rng.fx_range(Fx::NEG_ONE, Fx::ONE);
    Mat3::from_quat(Quat::from_wxyz(c(), c(), c(), c()).normalize())
}

fn random_vec(rng: &mut Rng, lo: Fx, hi: Fx) -> Vec3 {
    Vec3::new(
        rng.fx_range(lo, hi),
        rng.fx_range(lo, hi),
        rng.fx_range(lo, hi),
    )
}

#[test]
fn sqrt_upper_bounds_the_root() {
    let mut rng = Rng::new(5, 5);
    for _ in 0..10_000 {
        let shift = rng.below(62);
        let x = (rng.next_u64() >> 1 >> shift).max(1) as i64;
        let exact = Fx::from_bits(x).sqrt().to_bits();
        let upper = sqrt_upper(x);
        // Correctly rounded root <= bound, and the bound is within 7%.
        assert!(exact <= upper, "{x}");
        assert!(upper as i128 <= exact as i128 * 107 / 100 + 2, "{x}");
    }
}

/// Random boxes: never panics, at most four points, unit normal, distinct
/// ids, separations within the margin, and a contact whenever B's centre
/// is inside A.
#[test]
fn fuzz_random_boxes() {
    let mut rng = Rng::new(0x0b0c_b0c5, 7);
    for round in 0..20_000 {
        let a = pose(
            random_vec(&mut rng, Fx::from_int(-3), Fx::from_int(3)),
            random_rotation(&mut rng),
        );
        let b = pose(
            random_vec(&mut rng, Fx::from_int(-3), Fx::from_int(3)),
            random_rotation(&mut rng),
        );
        let half = |rng: &mut Rng| {
            let mut h = random_vec(rng, Fx::ZERO, Fx::TWO);
            if rng.chance(1, 10) {
                h.x = Fx::ZERO;
            }
            if rng.chance(1, 20) {
                h = Vec3::ZERO;
            }
            h
        };
        let (ha, hb) = (half(&mut rng), half(&mut rng));
        let margin = rng.fx_range(Fx::ZERO, Fx::lit("0.2"));
        let m = box_box(&a, ha, &b, hb, margin);
        assert!(m.count <= 4, "round {round}: {m:?}");
        assert!(ids_distinct(&m), "round {round}: {m:?}");
        if m.count > 0 {
            assert!(unit_normal(&m), "round {round}: {m:?}");
        }
        for p in points(&m) {
            assert!(p.separation <= margin, "round {round}: {m:?}");
            // The two surface points, half a separation either side of
            // the contact position, lie on (within a tolerance of) A and
            // B.
            let half_gap = m.normal * p.separation.scale_pow2(-1);
            for (pose, h, q) in [
                (&a, ha, p.position - half_gap),
                (&b, hb, p.position + half_gap),
            ] {
                let local = pose.rotation.transpose_mul_vec3(q - pose.position).abs();
                let slack = h + Vec3::splat(Fx::lit("0.01"));
                let ok = local.x <= slack.x && local.y <= slack.y && local.z <= slack.z;
                // A speculative edge pair's supporting edges may end before
                // their lines' closest points (the axis gap is then only a
                // lower bound of the distance): not checked.
                let speculative_edge = p.id & KIND_EDGE != 0 && p.separation.is_positive();
                assert!(
                    ok || speculative_edge,
                    "round {round}: {p:?} not on {pose:?} {h:?}: {m:?}"
                );
            }
        }
        let local = a.rotation.transpose_mul_vec3(b.position - a.position);
        if local.abs().x < ha.x && local.abs().y < ha.y && local.abs().z < ha.z {
            assert!(m.count > 0, "round {round}: centre inside but {m:?}");
        }
        assert_eq!(m, box_box(&a, ha, &b, hb, margin));
    }
}

/// Extreme inputs: huge coordinates and extents, garbage matrices, any
/// margin. Only the structural guarantees are checked.
#[test]
fn fuzz_extreme_inputs_never_panic() {
    let mut rng = Rng::new(0xdead_beef, 3);
    let huge = Fx::from_int(1 << 30);
    for round in 0..20_000 {
        let scale = match round % 4 {
            0 => Fx::MAX,
            1 => huge,
            2 => Fx::from_int(10),
            _ => Fx::lit("0.001"),
        };
        let matrix = |rng: &mut Rng| {
            if rng.chance(1, 2) {
                random_rotation(rng)
            } else {
                Mat3::from_rows(
                    random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                    random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                    random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                )
            }
        };
        let a = pose(random_vec(&mut rng, -scale, scale), matrix(&mut rng));
        let b = pose(random_vec(&mut rng, -scale, scale), matrix(&mut rng));
        let ha = random_vec(&mut rng, -scale, scale);
        let hb = random_vec(&mut rng, -scale, scale);
        let margin = rng.fx_range(-scale, scale);
        let m = box_box(&a, ha, &b, hb, margin);
        assert!(m.count <= 4, "round {round}: {m:?}");
        assert!(ids_distinct(&m), "round {round}: {m:?}");
    }
    let all = [Fx::MIN, Fx::MAX, Fx::ZERO];
    for &x in &all {
        for &h in &all {
            let p = pose(Vec3::splat(x), Mat3::IDENTITY);
            let q = pose(
                Vec3::splat(-x),
                Mat3::from_rows(Vec3::splat(h), Vec3::ZERO, Vec3::splat(x)),
            );
            let m = box_box(&p, Vec3::splat(h), &q, Vec3::splat(x), h);
            assert!(m.count <= 4);
        }
    }
}
