//! Sphere contacts: sphere–sphere and sphere–box, one point each.
//!
//! A sphere touches anything convex in at most one point, so these manifolds
//! have one point with feature id 0 (sphere–sphere) or the id of the box
//! feature nearest to the sphere's centre (sphere–box: face, edge or vertex
//! region), so warm starting survives a sphere rolling over an edge only as
//! long as the feature is the same.

use lockstep_fx::{Fx, Vec3};

use super::{ContactPoint, Manifold, Pose, within};

/// Contact between sphere A (centre, radius) and sphere B. Concentric spheres
/// get the up axis as their normal.
pub fn sphere_sphere(a: Vec3, a_radius: Fx, b: Vec3, b_radius: Fx, margin: Fx) -> Manifold {
    let mut m = Manifold::default();
    let d = b - a;
    if surely_apart(d, a_radius, b_radius, margin) {
        return m;
    }
    let (normal, distance) = d.normalize_and_length().unwrap_or((Vec3::Y, Fx::ZERO));
    let separation = distance - a_radius - b_radius;
    if !within(separation, margin) {
        return m;
    }
    let on_a = a + normal * a_radius;
    let position = on_a + normal * separation.scale_pow2(-1);
    m.normal = normal;
    m.push(ContactPoint {
        position,
        separation,
        id: 0,
    });
    m
}

/// Whether centres `d` apart are so far that the separation
/// [`sphere_sphere`] would compute exceeds `margin`, decided on the exact
/// squared distance without its square root: a pair a broadphase reports
/// only because the corners of its boxes overlap costs three products.
///
/// The computed length is within 1 LSB of the true one (`lockstep_fx`'s
/// norm), so a true length above `radii + margin + 2 LSB` computes above
/// `radii + margin`, and the separation then exceeds the margin; the answer
/// is exactly the one the full computation gives.
#[inline]
fn surely_apart(d: Vec3, a_radius: Fx, b_radius: Fx, margin: Fx) -> bool {
    let reach = i128::from(a_radius.to_bits())
        + i128::from(b_radius.to_bits())
        + i128::from(margin.to_bits())
        + 2;
    if reach < 0 {
        return false;
    }
    let square = |c: Fx| u128::from(c.to_bits().unsigned_abs()).pow(2);
    let distance2 = square(d.x)
        .saturating_add(square(d.y))
        .saturating_add(square(d.z));
    (reach as u128)
        .checked_mul(reach as u128)
        .is_some_and(|reach2| distance2 > reach2)
}

/// Contact between sphere A (centre, radius) and box B (pose, half extents).
/// The normal points from the sphere to the box. A centre inside the box is
/// pushed out through the nearest face (lowest axis on ties).
pub fn sphere_box(a: Vec3, a_radius: Fx, b: &Pose, b_half: Vec3, margin: Fx) -> Manifold {
    let mut m = Manifold::default();
    let local = b.rotation.transpose_mul_vec3(a - b.position);
    let closest = local.max(-b_half).min(b_half);
    let (outward_local, separation, surface_local, id) = if closest != local {
        // Outside: the nearest point is on the surface; its region (which
        // coordinates were clamped, and to which side) is the feature id.
        let d = local - closest;
        let (n, dist) = match d.normalize_and_length() {
            Some(v) => v,
            None => return m,
        };
        let mut id = 0u32;
        for axis in 0..3u8 {
            let c = local.axis(axis);
            let h = b_half.axis(axis);
            let region = if c > h {
                2
            } else if c < -h {
                1
            } else {
                0
            };
            id = id * 3 + region;
        }
        (n, dist - a_radius, closest, id)
    } else {
        // Inside: leave through the face with the least depth.
        let mut best_axis = 0u8;
        let mut best_depth = Fx::MAX;
        for axis in 0..3u8 {
            let depth = b_half.axis(axis) - local.axis(axis).abs();
            if depth < best_depth {
                best_depth = depth;
                best_axis = axis;
            }
        }
        let sign = if local.axis(best_axis).is_negative() {
            Fx::NEG_ONE
        } else {
            Fx::ONE
        };
        let mut n = [Fx::ZERO; 3];
        n[usize::from(best_axis)] = sign;
        let mut s = local.to_array();
        s[usize::from(best_axis)] = b_half.axis(best_axis) * sign;
        let id = 27 + u32::from(best_axis) * 2 + u32::from(sign.is_negative());
        (
            Vec3::from_array(n),
            -best_depth - a_radius,
            Vec3::from_array(s),
            id,
        )
    };
    if !within(separation, margin) {
        return m;
    }
    // `outward_local` points from the box surface towards the sphere centre.
    let outward = b.rotation.mul_vec3(outward_local);
    let on_box = b.position + b.rotation.mul_vec3(surface_local);
    m.normal = -outward;
    m.push(ContactPoint {
        position: on_box + outward * separation.scale_pow2(-1),
        separation,
        id,
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::Mat3;

    fn fx(s: &str) -> Fx {
        s.parse().unwrap()
    }

    /// The early answer for spheres far apart is the full computation's,
    /// at and around the edge of the margin and far from it.
    #[test]
    fn spheres_surely_apart_give_what_the_full_computation_gives() {
        let full = |a: Vec3, ra: Fx, b: Vec3, rb: Fx, margin: Fx| {
            let mut m = Manifold::default();
            let (normal, distance) = (b - a)
                .normalize_and_length()
                .unwrap_or((Vec3::Y, Fx::ZERO));
            let separation = distance - ra - rb;
            if within(separation, margin) {
                m.normal = normal;
                m.push(ContactPoint {
                    position: a + normal * ra + normal * separation.scale_pow2(-1),
                    separation,
                    id: 0,
                });
            }
            m
        };
        let mut rng = lockstep_fx::Rng::new(0x5f, 1);
        let mut early = 0;
        for round in 0..20_000 {
            let ra = rng.fx_range(fx("0.01"), fx("3"));
            let rb = rng.fx_range(fx("0.01"), fx("3"));
            let margin = rng.fx_range(Fx::ZERO, fx("0.5"));
            let a = Vec3::new(
                rng.fx_range(fx("-50"), fx("50")),
                rng.fx_range(fx("-50"), fx("50")),
                rng.fx_range(fx("-50"), fx("50")),
            );
            let dir = Vec3::new(
                rng.fx_range(fx("-1"), fx("1")),
                rng.fx_range(fx("-1"), fx("1")),
                rng.fx_range(fx("-1"), fx("1")),
            )
            .normalize_or_zero();
            // Distances spread over the edge `ra + rb + margin`, some within
            // a few LSB of it, some far beyond.
            let edge = ra + rb + margin;
            let distance = match round % 3 {
                0 => edge + Fx::from_bits(i64::from(rng.below(9)) - 4),
                1 => rng.fx_range(Fx::ZERO, edge * Fx::from_int(2)),
                _ => rng.fx_range(edge, Fx::from_int(1000)),
            };
            let b = a + dir * distance;
            early += usize::from(surely_apart(b - a, ra, rb, margin));
            assert_eq!(
                sphere_sphere(a, ra, b, rb, margin),
                full(a, ra, b, rb, margin),
                "round {round}"
            );
        }
        assert!(early > 5_000, "the early answer was taken ({early})");
    }

    #[test]
    fn spheres_touching_and_apart() {
        let m = sphere_sphere(
            Vec3::ZERO,
            Fx::ONE,
            Vec3::from_ints(0, 0, 2) - Vec3::new(Fx::ZERO, Fx::ZERO, fx("0.25")),
            Fx::ONE,
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert_eq!(m.normal, Vec3::Z);
        assert_eq!(m.points[0].separation, fx("-0.25"));
        assert_eq!(
            m.points[0].position,
            Vec3::new(Fx::ZERO, Fx::ZERO, fx("0.875"))
        );
        let far = sphere_sphere(
            Vec3::ZERO,
            Fx::ONE,
            Vec3::from_ints(3, 0, 0),
            Fx::ONE,
            fx("0.5"),
        );
        assert_eq!(far.count, 0);
        let near = sphere_sphere(
            Vec3::ZERO,
            Fx::ONE,
            Vec3::from_ints(3, 0, 0),
            Fx::ONE,
            Fx::ONE,
        );
        assert_eq!((near.count, near.points[0].separation), (1, Fx::ONE));
    }

    #[test]
    fn sphere_on_box_face_edge_and_inside() {
        let pose = Pose {
            position: Vec3::ZERO,
            rotation: Mat3::IDENTITY,
        };
        let half = Vec3::splat(Fx::ONE);
        // Sphere above the top face, sinking 0.1.
        let m = sphere_box(
            Vec3::new(Fx::ZERO, fx("1.4"), Fx::ZERO),
            fx("0.5"),
            &pose,
            half,
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert_eq!(m.normal, -Vec3::Y);
        assert_eq!(m.points[0].separation, fx("-0.1"));
        // Centre inside, nearest the +x face.
        let m = sphere_box(
            Vec3::new(fx("0.9"), Fx::ZERO, Fx::ZERO),
            fx("0.5"),
            &pose,
            half,
            Fx::ZERO,
        );
        assert_eq!(m.normal, -Vec3::X);
        assert_eq!(m.points[0].separation, fx("-0.6"));
        // Over an edge: the normal is diagonal.
        let m = sphere_box(
            Vec3::new(fx("1.3"), fx("1.3"), Fx::ZERO),
            fx("0.5"),
            &pose,
            half,
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert!(m.normal.x.is_negative() && m.normal.y.is_negative() && m.normal.z == Fx::ZERO);
    }
}
