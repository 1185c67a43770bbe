//! Contacts against a static half-space (the ground): sphere–plane and
//! box–plane.
//!
//! A plane is the set `normal · x = offset` with solid matter on the side
//! `normal · x < offset`. The plane is always shape A, so manifold normals
//! equal the plane's normal. Box feature ids are vertex indices (bit k set
//! when the vertex lies on the + side of local axis k), so a box resting on
//! the ground keeps its ids while it slides.

use lockstep_fx::{Fx, Vec3};

use super::{ContactPoint, Manifold, Pose, within};

/// `normal · v`. For the upright ground (`normal` exactly +Y) the products
/// by 0 and 1 are exact and the sum is `v.y` bit for bit, so it is read
/// directly: every body on the ground meets the ground every step.
#[inline(always)]
pub(crate) fn along(normal: Vec3, v: Vec3) -> Fx {
    if normal == Vec3::Y {
        v.y
    } else {
        normal.dot(v)
    }
}

/// `normal · s`, read directly for +Y like [`along`] (each component's
/// product is exactly `0` or `s`).
#[inline(always)]
pub(crate) fn scaled(normal: Vec3, s: Fx) -> Vec3 {
    if normal == Vec3::Y {
        Vec3::new(Fx::ZERO, s, Fx::ZERO)
    } else {
        normal * s
    }
}

/// Contact between a plane (A) and a sphere (B).
pub fn sphere_plane(normal: Vec3, offset: Fx, centre: Vec3, radius: Fx, margin: Fx) -> Manifold {
    let mut m = Manifold::default();
    let separation = along(normal, centre) - offset - radius;
    if within(separation, margin) {
        m.normal = normal;
        let position = centre - scaled(normal, radius + separation.scale_pow2(-1));
        m.push(ContactPoint {
            position,
            separation,
            id: 0,
        });
    }
    m
}

/// Contact between a plane (A) and a box (B): the (up to four) deepest
/// vertices within `margin` of the plane, deepest first (lower vertex index on
/// ties).
pub fn box_plane(normal: Vec3, offset: Fx, b: &Pose, half: Vec3, margin: Fx) -> Manifold {
    let mut m = Manifold::default();
    // Separation of vertex v = centre + Σ ±half_k · axis_k is the centre's
    // separation plus Σ ±half_k (normal · axis_k): three dots cover all eight.
    let axes = [b.rotation.col(0), b.rotation.col(1), b.rotation.col(2)];
    let reach = [
        half.x * along(normal, axes[0]),
        half.y * along(normal, axes[1]),
        half.z * along(normal, axes[2]),
    ];
    let centre = along(normal, b.position) - offset;
    let lowest = centre - reach[0].abs() - reach[1].abs() - reach[2].abs();
    if !within(lowest, margin) {
        return m;
    }
    let mut candidates = [(Fx::ZERO, 0u32); 8];
    let mut n = 0;
    for v in 0..8u32 {
        let mut s = centre;
        for (k, r) in reach.iter().enumerate() {
            if v & (1 << k) != 0 {
                s += *r;
            } else {
                s -= *r;
            }
        }
        if within(s, margin) {
            candidates[n] = (s, v);
            n += 1;
        }
    }
    let candidates = &mut candidates[..n];
    candidates.sort_unstable();
    m.normal = normal;
    for &(separation, v) in candidates.iter().take(4) {
        let mut local = [Fx::ZERO; 3];
        for (k, l) in local.iter_mut().enumerate() {
            let h = half.axis(k as u8);
            *l = if v & (1 << k) != 0 { h } else { -h };
        }
        let vertex = b.position + b.rotation.mul_vec3(Vec3::from_array(local));
        let position = vertex - scaled(normal, separation.scale_pow2(-1));
        m.push(ContactPoint {
            position,
            separation,
            id: v,
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

    /// Reading the +Y ground's products directly gives the bits of the
    /// full dot and scaling, for any vector and scale, large or small.
    #[test]
    fn the_upright_ground_read_directly_gives_the_full_products() {
        let mut rng = lockstep_fx::Rng::new(0x6d, 1);
        for round in 0..10_000 {
            let big = Fx::from_int(if round % 2 == 0 { 100 } else { 1 << 30 });
            let v = Vec3::new(
                rng.fx_range(-big, big),
                rng.fx_range(-big, big),
                rng.fx_range(-big, big),
            );
            let s = rng.fx_range(-big, big);
            assert_eq!(along(Vec3::Y, v), Vec3::Y.dot(v), "{v:?}");
            assert_eq!(scaled(Vec3::Y, s), Vec3::Y * s, "{s:?}");
        }
        for extreme in [Fx::MIN, Fx::MAX, Fx::from_bits(1), Fx::from_bits(-1)] {
            let v = Vec3::splat(extreme);
            assert_eq!(along(Vec3::Y, v), Vec3::Y.dot(v));
            assert_eq!(scaled(Vec3::Y, extreme), Vec3::Y * extreme);
        }
    }

    #[test]
    fn resting_box_has_four_bottom_vertices() {
        let pose = Pose {
            position: Vec3::new(Fx::ZERO, fx("0.49"), Fx::ZERO),
            rotation: Mat3::IDENTITY,
        };
        let m = box_plane(Vec3::Y, Fx::ZERO, &pose, Vec3::splat(Fx::HALF), fx("0.02"));
        assert_eq!(m.count, 4);
        assert_eq!(m.normal, Vec3::Y);
        let ids: Vec<u32> = m.points().iter().map(|p| p.id).collect();
        assert_eq!(ids, vec![0, 1, 4, 5]);
        for p in m.points() {
            assert_eq!(p.separation, fx("-0.01"));
            assert_eq!(p.position.y, fx("-0.005"));
        }
    }

    #[test]
    fn tilted_box_touches_with_one_edge() {
        let q = Quat::from_axis_angle(Vec3::Z, Fx::FRAC_PI_4);
        let pose = Pose {
            position: Vec3::new(Fx::ZERO, fx("0.7"), Fx::ZERO),
            rotation: Mat3::from_quat(q),
        };
        let m = box_plane(Vec3::Y, Fx::ZERO, &pose, Vec3::splat(Fx::HALF), Fx::ZERO);
        assert_eq!(m.count, 2);
        let s = m.points[0].separation;
        assert!(
            s.is_negative() && s > fx("-0.0072") && s < fx("-0.0070"),
            "{s}"
        );
    }

    #[test]
    fn sphere_resting_on_plane() {
        let m = sphere_plane(
            Vec3::Y,
            Fx::ONE,
            Vec3::from_ints(3, 2, 0),
            fx("1.25"),
            Fx::ZERO,
        );
        assert_eq!(m.count, 1);
        assert_eq!(m.points[0].separation, fx("-0.25"));
        assert_eq!(
            m.points[0].position,
            Vec3::new(Fx::from_int(3), fx("0.875"), Fx::ZERO)
        );
        assert_eq!(
            sphere_plane(
                Vec3::Y,
                Fx::ZERO,
                Vec3::from_ints(0, 2, 0),
                Fx::ONE,
                Fx::ZERO
            )
            .count,
            0
        );
    }
}
