//! Axis-aligned bounding boxes in world space.
//!
//! An [`Aabb`] is `min ≤ max` componentwise (an inverted box is empty and
//! overlaps nothing). Overlap tests are closed: touching boxes overlap.

use lockstep_fx::{Fx, Mat3, Vec3};

/// An axis-aligned box, `min ≤ max` on each axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aabb {
    /// Lowest corner.
    pub min: Vec3,
    /// Highest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The box spanning two corners given in any order.
    pub fn from_corners(a: Vec3, b: Vec3) -> Aabb {
        Aabb {
            min: a.min(b),
            max: a.max(b),
        }
    }

    /// The box around a rotated box (centre, rotation, half extents).
    pub fn of_box(centre: Vec3, rotation: &Mat3, half: Vec3) -> Aabb {
        // Extent on world axis i is Σ_k |R_ik| · half_k.
        let r = &rotation.rows;
        let e = |row: Vec3| row.abs().dot(half);
        let extent = Vec3::new(e(r[0]), e(r[1]), e(r[2]));
        Aabb {
            min: centre - extent,
            max: centre + extent,
        }
    }

    /// The box around a sphere.
    pub fn of_sphere(centre: Vec3, radius: Fx) -> Aabb {
        let r = Vec3::splat(radius);
        Aabb {
            min: centre - r,
            max: centre + r,
        }
    }

    /// Grown by `margin` on every side.
    pub fn expanded(self, margin: Vec3) -> Aabb {
        Aabb {
            min: self.min - margin,
            max: self.max + margin,
        }
    }

    /// Whether the two boxes overlap or touch.
    #[inline]
    pub fn overlaps(&self, o: &Aabb) -> bool {
        self.min.x <= o.max.x
            && o.min.x <= self.max.x
            && self.min.y <= o.max.y
            && o.min.y <= self.max.y
            && self.min.z <= o.max.z
            && o.min.z <= self.max.z
    }

    /// Whether the point lies inside or on the boundary.
    pub fn contains(&self, p: Vec3) -> bool {
        self.min.x <= p.x
            && p.x <= self.max.x
            && self.min.y <= p.y
            && p.y <= self.max.y
            && self.min.z <= p.z
            && p.z <= self.max.z
    }
}
