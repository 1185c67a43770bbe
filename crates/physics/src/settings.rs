//! World settings: the constants of a simulation.
//!
//! Settings are part of the simulated state (they are encoded with it), so
//! two peers with different settings get different checksums at once instead
//! of drifting apart later.

use lockstep_fx::{Fx, Vec3};

/// Tunable constants of a [`World`](crate::World). `Default` is 60 Hz, Earth
/// gravity along −y, 4 substeps of one soft iteration and one relaxation pass, sleeping
/// and the per-frame shuffle on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldSettings {
    /// Gravity (m/s²).
    pub gravity: Vec3,
    /// Steps per second; the time step is exactly `1 / tick_rate` rounded to
    /// Q32.32.
    pub tick_rate: u32,
    /// Seed of the per-frame constraint shuffle.
    pub seed: u64,
    /// Shuffle the constraint order every frame with `Rng::for_frame(seed,
    /// frame)` (ODE's `dSetRandomSeed` technique); off solves in pair order.
    pub shuffle: bool,
    /// Substeps per step: the solver integrates gravity and positions this
    /// many times per step, against contacts found once per step (Box2D v3's
    /// "soft step"; rapier's solver iterations work the same way).
    pub substeps: u8,
    /// Soft solver iterations per substep (with position correction).
    pub iterations: u8,
    /// Rigid relaxation iterations per substep (remove push-out velocity).
    pub relax_iterations: u8,
    /// Contact stiffness (Hz) and damping ratio of the soft contacts.
    pub contact_hertz: Fx,
    /// Damping ratio of the soft contacts.
    pub contact_damping_ratio: Fx,
    /// Fastest push-out of overlapping bodies (m/s).
    pub max_push_velocity: Fx,
    /// Distance at which contacts are created before touching (m).
    pub speculative_distance: Fx,
    /// How far a body may turn (rad) before the lever arms of its contacts
    /// turn with it: until then the solver takes them in the body's arm
    /// orientation, which keeps tall stacks from buckling (see
    /// `Body::arm_frame`). Zero turns them with the body every step.
    pub arm_turn: Fx,
    /// Approach speed above which restitution applies (m/s).
    pub restitution_threshold: Fx,
    /// Let bodies at rest sleep.
    pub sleeping: bool,
    /// Speed below which a body counts as still (m/s; angular speed is
    /// scaled by the body's size).
    pub sleep_speed: Fx,
    /// Frames a whole island must stay still before it sleeps.
    pub sleep_frames: u32,
    /// Fastest linear speed (m/s); faster bodies are slowed to it.
    pub max_linear_speed: Fx,
    /// Fastest angular speed (rad/s).
    pub max_angular_speed: Fx,
    /// Bodies farther than this from the origin on any axis (m) are contained.
    pub bounds: Fx,
}

impl Default for WorldSettings {
    fn default() -> Self {
        WorldSettings {
            gravity: Vec3::new(Fx::ZERO, Fx::lit("-9.81"), Fx::ZERO),
            tick_rate: 60,
            seed: 0,
            shuffle: true,
            substeps: 4,
            iterations: 1,
            relax_iterations: 1,
            contact_hertz: Fx::from_int(36),
            contact_damping_ratio: Fx::from_int(5),
            max_push_velocity: Fx::from_int(3),
            speculative_distance: Fx::lit("0.02"),
            arm_turn: Fx::lit("0.02"),
            restitution_threshold: Fx::ONE,
            sleeping: true,
            sleep_speed: Fx::lit("0.1"),
            sleep_frames: 30,
            max_linear_speed: Fx::from_int(240),
            max_angular_speed: Fx::from_int(60),
            bounds: Fx::from_int(1 << 20),
        }
    }
}

impl WorldSettings {
    /// The time step `1 / tick_rate` (s).
    pub fn dt(&self) -> Fx {
        Fx::from_ratio(1, i64::from(self.tick_rate.max(1)))
    }
}
