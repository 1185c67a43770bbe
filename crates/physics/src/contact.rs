//! The contact cache: one entry per touching pair, kept from step to step.
//!
//! Entries are sorted by `(a, b)` body indices with `a < b`, so merging last
//! step's cache with this step's manifolds is a linear merge-join and the
//! order never depends on anything but the indices. An entry's feature ids
//! and accumulated impulses (normal per point, friction per manifold) are
//! simulation state (they warm-start the next
//! step and are encoded); its manifold geometry is recomputed every step for
//! pairs that move and is kept as it was for sleeping pairs.

use lockstep_fx::{Fx, Vec3};

use crate::body::BodyHandle;
use crate::narrowphase::{ContactPoint, Manifold};

/// A cached contact between bodies `a < b` (slot indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Contact {
    pub a: u32,
    pub b: u32,
    pub manifold: Manifold,
    /// Accumulated normal impulse per point.
    pub normal_impulses: [Fx; 4],
    /// Accumulated friction impulse of the manifold as a world vector (so it
    /// survives any change of tangent basis), and the twist impulse about the
    /// normal.
    pub friction_impulse: Vec3,
    pub twist_impulse: Fx,
    /// Whether the geometry was computed this step.
    pub fresh: bool,
}

impl Contact {
    /// Warm-start normal impulse for a new point: that of the old point with
    /// the same feature id, if any.
    pub fn impulse_for(&self, id: u32) -> Fx {
        self.manifold
            .points()
            .iter()
            .position(|p| p.id == id)
            .map_or(Fx::ZERO, |i| self.normal_impulses[i])
    }
}

/// A read-only view of a contact for game code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContactInfo<'a> {
    /// First body (lower slot index).
    pub a: BodyHandle,
    /// Second body.
    pub b: BodyHandle,
    /// Unit normal from `a` to `b`.
    pub normal: Vec3,
    /// Contact points (world positions, separations, feature ids).
    pub points: &'a [ContactPoint],
    /// Normal impulse applied at each point in the last step (N·s).
    pub normal_impulses: [Fx; 4],
}

/// Something that happened during a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Two bodies started touching.
    ContactBegan {
        /// First body (lower slot index).
        a: BodyHandle,
        /// Second body.
        b: BodyHandle,
    },
    /// Two bodies stopped touching (or one was removed).
    ContactEnded {
        /// First body (lower slot index).
        a: BodyHandle,
        /// Second body.
        b: BodyHandle,
    },
    /// A body's position or velocity left the world's valid range; it was
    /// frozen and taken out of the simulation (see
    /// [`Body::is_contained`](crate::Body::is_contained)).
    BodyContained(BodyHandle),
}
