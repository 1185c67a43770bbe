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

/// Contact between a plane (A) and a sphere (B).
pub fn sphere_plane(normal: Vec3, offset: Fx, centre: Vec3, radius: Fx, margin: Fx) -> Manifold {
    let mut m = Manifold::default();
    let separation = normal.dot(centre) - offset - radius;
    if within(separation, margin) {
        m.normal = normal;
        let position = centre - normal * (radius + separation.scale_pow2(-1));
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
        half.x * normal.dot(axes[0]),
        half.y * normal.dot(axes[1]),
        half.z * normal.dot(axes[2]),
    ];
    let centre = normal.dot(b.position) - offset;
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
        let position = vertex - normal * separation.scale_pow2(-1);
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
