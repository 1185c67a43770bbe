//! Narrowphase: exact contact manifolds between two shapes at given poses.
//!
//! Every function here is a pure function of its arguments (shapes, poses and
//! the speculative margin), integer-only, and never panics. A [`Manifold`]
//! holds up to four points sharing one unit normal that points from shape A to
//! shape B; each point carries a feature id that stays the same from frame to
//! frame while the same features touch, so the solver can carry its
//! warm-start impulses across frames.

mod box_box;
mod capsule;
mod plane;
mod sphere;

pub use box_box::box_box;
pub use capsule::{Segment, box_capsule, capsule_capsule, capsule_plane, sphere_capsule};
pub(crate) use plane::along;
pub use plane::{box_plane, sphere_plane};
pub use sphere::{sphere_box, sphere_sphere};

use lockstep_fx::{Fx, Mat3, Vec3};

/// Where a shape is: world position of its centre and its rotation matrix
/// (world = rotation · local; the columns are the shape's local axes in world
/// space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pose {
    /// World position of the shape's centre.
    pub position: Vec3,
    /// Rotation from local to world space.
    pub rotation: Mat3,
}

/// One contact point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ContactPoint {
    /// World position: midway between the two surfaces.
    pub position: Vec3,
    /// Signed distance along the normal: negative when overlapping.
    pub separation: Fx,
    /// Feature id: identifies the pair of features (faces, edges, vertices)
    /// that produced this point, stable from frame to frame while they stay in
    /// contact; unique within a manifold.
    pub id: u32,
}

/// Up to four contact points sharing one normal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Manifold {
    /// Unit normal pointing from shape A to shape B.
    pub normal: Vec3,
    /// The points; only the first `count` are meaningful.
    pub points: [ContactPoint; 4],
    /// Number of points (0 = no contact).
    pub count: u8,
}

impl Manifold {
    /// The meaningful points.
    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..usize::from(self.count.min(4))]
    }

    /// Adds a point if there is room; returns whether it was added.
    pub(crate) fn push(&mut self, point: ContactPoint) -> bool {
        if self.count >= 4 {
            return false;
        }
        self.points[usize::from(self.count)] = point;
        self.count += 1;
        true
    }

    /// The same contact seen from the other shape: normal negated.
    pub fn flipped(mut self) -> Manifold {
        self.normal = -self.normal;
        self
    }
}

/// A margin below which separations count as touching: `Fx` saturates, so
/// every comparison with it is safe.
pub(crate) fn within(separation: Fx, margin: Fx) -> bool {
    separation <= margin
}
