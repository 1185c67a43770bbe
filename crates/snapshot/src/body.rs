//! One body's exact visible state, as a game hands it to the snapshot
//! stream ([`crate::Bodies`]) and as a receiver gets it back from a
//! quantized body ([`crate::QuantBody::state`]).
//!
//! Invariant: plain fixed-point values, nothing derived; the orientation is
//! a unit quaternion.

use lockstep_fx::{Quat, Vec3};

/// One body's visible state, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyState {
    /// Centre of mass.
    pub position: Vec3,
    /// Orientation (unit quaternion).
    pub orientation: Quat,
    /// Linear velocity, m/s.
    pub linear_velocity: Vec3,
    /// Angular velocity, rad/s.
    pub angular_velocity: Vec3,
    /// Asleep: the simulation does not move it until something wakes it.
    pub at_rest: bool,
}
