//! Capsule contacts: capsule–plane, –sphere, –capsule and –box.
//!
//! A capsule is the set of points within `radius` of its core segment, the
//! local y axis from `−half_height` to `+half_height`. Every contact with it
//! is a contact with that segment, moved out by the radius:
//! - *plane*: each end of the segment within the margin is a point (ids 0
//!   and 1, the −y and +y end), so a capsule lying on the ground has two;
//! - *sphere*: the sphere against the segment's point nearest its centre
//!   (id 0);
//! - *capsule*: the closest points of the two segments (Ericson, "Real-Time
//!   Collision Detection" §5.1.9), one point (id 0), or, when the segments
//!   are parallel within 10⁻⁶ and overlap along their axis, the two ends of
//!   the overlap (ids 1 and 2), so capsules lying side by side rest on a
//!   line instead of a point;
//! - *box*: the box against the segment as a box of zero width and depth
//!   ([`box_box()`]'s separating-axis test and clipping, which take degenerate
//!   boxes), with the margin widened by the radius; points at the same place
//!   (the zero-width box's faces coincide) are merged. The closest approach
//!   of the segment to the box is also found (a ternary search along the
//!   segment); when the face contact misses it (the segment passes by an
//!   edge or a corner of the box), that one point replaces it.
//!
//! Invariants: integer-only, pure functions of their arguments, never
//! panic; normals are unit vectors from A to B; every separation is at
//! most the margin.

use lockstep_fx::{Fx, Vec3};

use super::{ContactPoint, Manifold, Pose, box_box, plane, sphere_sphere, within};

/// A capsule's core segment in world space.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Centre.
    pub centre: Vec3,
    /// Unit axis (the capsule's local y in world space).
    pub axis: Vec3,
    /// Half the segment's length.
    pub half_height: Fx,
}

impl Segment {
    /// The segment of a capsule at `pose`.
    pub fn of(pose: &Pose, half_height: Fx) -> Segment {
        Segment {
            centre: pose.position,
            axis: pose.rotation.col(1),
            half_height,
        }
    }

    /// The point at `t` along the axis from the centre.
    fn at(&self, t: Fx) -> Vec3 {
        self.centre + self.axis * t
    }

    /// The parameter of the segment's point nearest `p`.
    fn nearest(&self, p: Vec3) -> Fx {
        self.axis
            .dot(p - self.centre)
            .clamp(-self.half_height, self.half_height)
    }
}

/// Segments closer to parallel than this (`1 − (a·b)²`) rest on a line.
const PARALLEL: Fx = Fx::lit("0.000001");

/// Contact between a plane (A: `normal · x = offset`, matter below) and a
/// capsule (B).
pub fn capsule_plane(normal: Vec3, offset: Fx, s: &Segment, radius: Fx, margin: Fx) -> Manifold {
    let mut m = Manifold {
        normal,
        ..Manifold::default()
    };
    for (id, t) in [(0u32, -s.half_height), (1, s.half_height)] {
        let end = s.at(t);
        let separation = plane::along(normal, end) - offset - radius;
        if within(separation, margin) {
            m.push(ContactPoint {
                position: end - plane::scaled(normal, radius + separation.scale_pow2(-1)),
                separation,
                id,
            });
        }
    }
    m
}

/// Contact between a sphere (A) and a capsule (B).
pub fn sphere_capsule(
    centre: Vec3,
    sphere_radius: Fx,
    s: &Segment,
    radius: Fx,
    margin: Fx,
) -> Manifold {
    let nearest = s.at(s.nearest(centre));
    sphere_sphere(centre, sphere_radius, nearest, radius, margin)
}

/// Contact between two capsules (A, B).
pub fn capsule_capsule(a: &Segment, ra: Fx, b: &Segment, rb: Fx, margin: Fx) -> Manifold {
    let d = b.centre - a.centre;
    let k = a.axis.dot(b.axis);
    let denom = Fx::ONE - k * k;
    if denom <= PARALLEL {
        // Parallel: the overlap of the two along A's axis.
        let tb = a.axis.dot(d);
        let lo = (tb - b.half_height).max(-a.half_height);
        let hi = (tb + b.half_height).min(a.half_height);
        if lo < hi {
            let across = d - a.axis * tb;
            let normal = across.try_normalize().unwrap_or_else(|| {
                let (t, _) = a.axis.any_orthonormal_pair();
                t
            });
            let mut m = Manifold {
                normal,
                ..Manifold::default()
            };
            for (id, t) in [(1u32, lo), (2, hi)] {
                let pa = a.at(t);
                let pb = b.at(b.nearest(pa));
                let separation = (pb - pa).dot(normal) - ra - rb;
                if within(separation, margin) {
                    m.push(ContactPoint {
                        position: pa + normal * (ra + separation.scale_pow2(-1)),
                        separation,
                        id,
                    });
                }
            }
            return m;
        }
    }
    // Closest points of the two segments (Ericson §5.1.9), in parameters
    // from each centre: minimise |d + b t_b − a t_a|.
    let (ea, eb) = (a.half_height, b.half_height);
    let c = a.axis.dot(d);
    let f = b.axis.dot(d);
    let mut ta = if denom.is_positive() {
        ((c - k * f) / denom).clamp(-ea, ea)
    } else {
        Fx::ZERO
    };
    let mut tb = (k * ta - f).clamp(-eb, eb);
    ta = (k * tb + c).clamp(-ea, ea);
    tb = (k * ta - f).clamp(-eb, eb);
    let mut m = sphere_sphere(a.at(ta), ra, b.at(tb), rb, margin);
    for p in &mut m.points[..usize::from(m.count)] {
        p.id = 0;
    }
    m
}

/// Contact between a box (A: pose, half extents) and a capsule (B).
pub fn box_capsule(
    a: &Pose,
    half: Vec3,
    b: &Pose,
    s: &Segment,
    radius: Fx,
    margin: Fx,
) -> Manifold {
    let core = Vec3::new(Fx::ZERO, s.half_height, Fx::ZERO);
    let mut m = box_box(a, half, b, core, margin + radius);
    let shift = m.normal * radius.scale_pow2(-1);
    let mut kept = Manifold {
        normal: m.normal,
        ..Manifold::default()
    };
    for p in &mut m.points[..usize::from(m.count)] {
        p.separation -= radius;
        p.position -= shift;
        let duplicate = kept
            .points()
            .iter()
            .any(|q| (q.position - p.position).abs().max_element() <= Fx::from_bits(1 << 8));
        if within(p.separation, margin) && !duplicate {
            kept.push(*p);
        }
    }
    // The separating axes may choose a face whose clipping leaves nothing,
    // or only the part of the segment above the face, while the segment
    // comes closest beyond its edge: then one point, at the closest
    // approach, replaces them.
    let corner = near_box_corner(a, half, s, radius, margin);
    let deepest = kept.points().iter().map(|p| p.separation).min();
    match (corner.points().first(), deepest) {
        (Some(c), Some(s)) if c.separation + CORNER_TOLERANCE < s => corner,
        (Some(_), None) => corner,
        _ => kept,
    }
}

/// How much closer the closest approach must be than the clipped face
/// contact to replace it (m).
const CORNER_TOLERANCE: Fx = Fx::lit("0.001");

/// Id of the single point of a capsule passing by a box's edge or corner.
const ID_CORNER: u32 = 1 << 28;

/// The closest approach of a segment to a box, found by a fixed 48-step
/// ternary search along the segment (the distance to a box is convex along
/// a line), as a one-point manifold if within the margin.
fn near_box_corner(a: &Pose, half: Vec3, s: &Segment, radius: Fx, margin: Fx) -> Manifold {
    let local = |p: Vec3| a.rotation.transpose_mul_vec3(p - a.position);
    let gap = |t: Fx| {
        let p = local(s.at(t));
        (p - p.max(-half).min(half)).length_squared()
    };
    let (mut lo, mut hi) = (-s.half_height, s.half_height);
    for _ in 0..48 {
        let third = (hi - lo).div_int(3);
        let (m1, m2) = (lo + third, hi - third);
        if gap(m1) <= gap(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let t = lo.scale_pow2(-1) + hi.scale_pow2(-1);
    let p = local(s.at(t));
    let on_box = p.max(-half).min(half);
    let Some((dir, distance)) = (p - on_box).normalize_and_length() else {
        return Manifold::default();
    };
    let separation = distance - radius;
    let mut m = Manifold::default();
    if within(separation, margin) {
        m.normal = a.rotation.mul_vec3(dir);
        let surface = a.position + a.rotation.mul_vec3(on_box);
        m.push(ContactPoint {
            position: surface + m.normal * separation.scale_pow2(-1),
            separation,
            id: ID_CORNER,
        });
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Mat3, Quat};

    fn fx(s: &str) -> Fx {
        s.parse().unwrap()
    }

    fn lying(at: Vec3) -> Segment {
        // Axis along x: a capsule lying on the ground.
        let pose = Pose {
            position: at,
            rotation: Mat3::from_quat(Quat::from_axis_angle(Vec3::Z, Fx::FRAC_PI_2)),
        };
        Segment::of(&pose, Fx::ONE)
    }

    #[test]
    fn lying_capsule_rests_on_two_points() {
        let s = lying(Vec3::new(Fx::ZERO, fx("0.49"), Fx::ZERO));
        let m = capsule_plane(Vec3::Y, Fx::ZERO, &s, fx("0.5"), fx("0.02"));
        assert_eq!(m.count, 2);
        for p in m.points() {
            assert!(
                (p.separation + fx("0.01")).abs() <= Fx::from_bits(64),
                "{p:?}"
            );
            assert!(
                (p.position.x.abs() - Fx::ONE).abs() <= Fx::from_bits(64),
                "{p:?}"
            );
        }
        // Standing on an end: one point.
        let up = Segment {
            centre: Vec3::new(Fx::ZERO, fx("1.5"), Fx::ZERO),
            axis: Vec3::Y,
            half_height: Fx::ONE,
        };
        let m = capsule_plane(Vec3::Y, Fx::ZERO, &up, fx("0.5"), fx("0.02"));
        assert_eq!(m.count, 1);
        assert_eq!(m.points[0].separation, Fx::ZERO);
    }

    #[test]
    fn capsules_side_by_side_and_crossed() {
        let r = fx("0.5");
        let a = lying(Vec3::ZERO);
        let b = lying(Vec3::new(fx("0.5"), fx("0.99"), Fx::ZERO));
        let m = capsule_capsule(&a, r, &b, r, fx("0.02"));
        assert_eq!(m.count, 2, "{m:?}");
        assert!((m.normal - Vec3::Y).abs().max_element() <= Fx::from_bits(64));
        for p in m.points() {
            assert!(
                (p.separation + fx("0.01")).abs() <= Fx::from_bits(64),
                "{p:?}"
            );
        }
        // Crossed at right angles: one point, at the crossing.
        let c = Segment {
            centre: Vec3::new(fx("0.3"), fx("0.95"), fx("0.4")),
            axis: Vec3::Z,
            half_height: Fx::ONE,
        };
        let m = capsule_capsule(&a, r, &c, r, fx("0.02"));
        assert_eq!(m.count, 1);
        let p = m.points[0];
        assert!(
            (p.separation + fx("0.05")).abs() <= Fx::from_bits(64),
            "{p:?}"
        );
        assert!(
            (p.position.x - fx("0.3")).abs() <= Fx::from_bits(64),
            "{p:?}"
        );
        // Apart beyond the margin: nothing.
        let far = lying(Vec3::new(Fx::ZERO, fx("1.1"), Fx::ZERO));
        assert_eq!(capsule_capsule(&a, r, &far, r, fx("0.05")).count, 0);
    }

    #[test]
    fn sphere_against_the_nearest_point_of_the_segment() {
        let s = lying(Vec3::ZERO);
        let m = sphere_capsule(
            Vec3::new(fx("0.5"), fx("0.9"), Fx::ZERO),
            fx("0.5"),
            &s,
            fx("0.5"),
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert_eq!(m.normal, -Vec3::Y);
        assert!((m.points[0].separation + fx("0.1")).abs() <= Fx::from_bits(64));
        // Beyond the end: the end's cap.
        let m = sphere_capsule(
            Vec3::new(fx("1.9"), Fx::ZERO, Fx::ZERO),
            fx("0.5"),
            &s,
            fx("0.5"),
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert!((m.normal + Vec3::X).abs().max_element() <= Fx::from_bits(64));
    }

    #[test]
    fn capsule_lying_on_a_box_has_two_points() {
        let boxed = Pose {
            position: Vec3::ZERO,
            rotation: Mat3::IDENTITY,
        };
        let pose = Pose {
            position: Vec3::new(Fx::ZERO, fx("1.49"), Fx::ZERO),
            rotation: Mat3::from_quat(Quat::from_axis_angle(Vec3::Z, Fx::FRAC_PI_2)),
        };
        let s = Segment::of(&pose, fx("0.5"));
        let m = box_capsule(&boxed, Vec3::ONE, &pose, &s, fx("0.5"), fx("0.02"));
        assert_eq!(m.count, 2, "{m:?}");
        assert!((m.normal - Vec3::Y).abs().max_element() <= Fx::from_bits(64));
        for p in m.points() {
            assert!(
                (p.separation + fx("0.01")).abs() <= Fx::from_bits(1 << 10),
                "{p:?}"
            );
            assert!(
                (p.position.y - fx("0.995")).abs() <= Fx::from_bits(1 << 10),
                "{p:?}"
            );
        }
        // Standing on its end on the box: one point.
        let upright = Pose {
            position: Vec3::new(fx("0.2"), fx("2.0"), Fx::ZERO),
            rotation: Mat3::IDENTITY,
        };
        let s = Segment::of(&upright, fx("0.5"));
        let m = box_capsule(&boxed, Vec3::ONE, &upright, &s, fx("0.5"), fx("0.02"));
        assert_eq!(m.count, 1, "{m:?}");
        assert!(m.points[0].separation.abs() <= Fx::from_bits(1 << 10));
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use lockstep_fx::{Mat3, Quat, Rng};

    fn random_pose(rng: &mut Rng) -> Pose {
        let mut c = || rng.fx_range(Fx::NEG_ONE, Fx::ONE);
        let q = Quat::from_wxyz(c(), c(), c(), c()).normalize();
        Pose {
            position: Vec3::new(c(), c(), c()) * Fx::TWO,
            rotation: Mat3::from_quat(q),
        }
    }

    /// Distance from `p` to a box (0 inside), by clamping in its frame.
    fn box_distance(pose: &Pose, half: Vec3, p: Vec3) -> Fx {
        let local = pose.rotation.transpose_mul_vec3(p - pose.position);
        let clamped = local.max(-half).min(half);
        (local - clamped).length()
    }

    /// The deepest point of a manifold against a sampled oracle: the
    /// separation found equals the true one (to 2 cm of the sampling) where
    /// the bodies touch or nearly do.
    #[test]
    fn separations_match_a_sampled_oracle() {
        let mut rng = Rng::new(0xcaf5, 9);
        let margin = Fx::lit("0.5");
        let samples = 200;
        for round in 0..400 {
            let (pa, pb) = (random_pose(&mut rng), random_pose(&mut rng));
            let (ha, hb) = (
                rng.fx_range(Fx::lit("0.1"), Fx::ONE),
                rng.fx_range(Fx::lit("0.1"), Fx::ONE),
            );
            let (ra, rb) = (
                rng.fx_range(Fx::lit("0.1"), Fx::HALF),
                rng.fx_range(Fx::lit("0.1"), Fx::HALF),
            );
            let (sa, sb) = (Segment::of(&pa, ha), Segment::of(&pb, hb));
            let along =
                |s: &Segment, k: i64| s.at(s.half_height.mul_int(2 * k - samples).div_int(samples));
            // Capsule–capsule: the closest pair of sampled points.
            let mut best = Fx::MAX;
            for i in 0..=samples {
                let p = along(&sa, i);
                let q = sb.at(sb.nearest(p));
                best = best.min((q - p).length() - ra - rb);
            }
            let m = capsule_capsule(&sa, ra, &sb, rb, margin);
            let found = m.points().iter().map(|p| p.separation).min();
            match found {
                Some(s) => assert!(
                    (s - best).abs() < Fx::lit("0.02"),
                    "round {round}: {s} vs {best}"
                ),
                None => assert!(
                    best > margin - Fx::lit("0.02"),
                    "round {round}: missed {best}"
                ),
            }
            // Box–capsule: the segment's sampled distance to the box.
            let half = Vec3::new(ha, hb, ra + Fx::lit("0.2"));
            let mut best = Fx::MAX;
            for i in 0..=samples {
                best = best.min(box_distance(&pa, half, along(&sb, i)) - rb);
            }
            let m = box_capsule(&pa, half, &pb, &sb, rb, margin);
            let found = m.points().iter().map(|p| p.separation).min();
            if best > Fx::ZERO {
                // Apart: the separating axes never overstate the gap.
                if let Some(s) = found {
                    assert!(s <= best + Fx::lit("0.02"), "round {round}: {s} vs {best}");
                } else {
                    assert!(
                        best > margin - Fx::lit("0.02"),
                        "round {round}: missed {best}"
                    );
                }
            } else {
                assert!(found.is_some(), "round {round}: overlap {best} missed");
            }
        }
    }
}
