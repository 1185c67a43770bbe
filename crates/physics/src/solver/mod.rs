//! The contact solver: soft sequential impulses with warm starting,
//! relaxation, a friction cone and restitution (Box2D v3's "soft step").
//!
//! **What it owns.** The solver's view of the bodies ([`Velocity`],
//! [`Displacement`]) and of the contacts ([`Constraint`], [`Point`]), and
//! one step of solving them: [`Batch::step`] runs, per substep, gravity,
//! warm starting, `iterations` soft passes (which push overlapping bodies
//! apart), position integration, and `relax_iterations` rigid passes
//! (which remove the push-out velocity, so position correction adds no
//! energy); then restitution. The world builds the inputs and writes the
//! results back (`pipeline/solve.rs`).
//!
//! **Two kinds of constraint.** A manifold between a moving body and an
//! immovable one (static, or the ground) is *anchored*: it carries only
//! the moving body's side, the one named `b`. A manifold between two
//! moving bodies is a *pair*. Both are the same [`Constraint`] solved by the
//! same code, with a `const TWO: bool` parameter that drops body A's terms
//! at compile time for anchored ones. Anchored constraints are solved
//! before pairs in every pass, each kind in the order the world gives
//! (shuffled by the frame's `Rng`).
//!
//! **Bodies that cannot turn.** A constraint whose bodies all have zero
//! inverse inertia (locked rotation) and no angular velocity is solved by
//! the same code compiled without its angular terms (`const SPIN: bool`):
//! each of them would add exactly zero, so the bits are those of the full
//! path, only cheaper (a test forces the full path and compares). The
//! choice is made per constraint, in place, so the order stays the same.
//!
//! **Lanes.** Runs of consecutive constraints that share no body commute,
//! so the one-point contacts of bodies that cannot turn, without friction,
//! are solved up to four at a time in vector lanes, on the path the world
//! was given ([`SolverPath`]), with the bits of solving them in turn
//! ([`lanes`]).
//!
//! **Cost.** A manifold's rows are solved in their own space and the
//! bodies take one linear and one angular impulse per manifold and pass
//! (see `contact.rs`). Separations are refreshed once per position
//! integration, by the first pass that follows it.
//!
//! **Invariants.** Everything is `Fx` arithmetic with the wrapping policy of
//! [`lockstep_fx::wide`]: the operands are bounded by the speed limits and
//! the masses, so the results are those of the saturating operators
//! without their checks. The result is a pure function of the inputs and
//! their order; the constraints of one island touch only its own bodies,
//! so islands can be solved in any order, or at once on several threads,
//! with the same bits ([`partition`]).

mod contact;
pub(crate) mod lanes;
pub(crate) mod partition;
mod softness;

pub(crate) use contact::{BodyInfo, Constraint, ManifoldInput, Point, PointInput, prepare};
pub use lanes::SolverPath;
pub(crate) use softness::Softness;

use lockstep_fx::wide::wrapping::{add3, scale};
use lockstep_fx::{Fx, Mat3, Vec3};

/// A solver body's velocities, read and written by every pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Velocity {
    /// Linear velocity of the centre (m/s).
    pub linear: Vec3,
    /// Angular velocity (rad/s, world frame).
    pub angular: Vec3,
}

/// How far a solver body has moved since the start of the step: its centre,
/// and its rotation as a small-angle vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Displacement {
    /// Displacement of the centre (m).
    pub linear: Vec3,
    /// Rotation (rad, world frame).
    pub angular: Vec3,
}

/// Constants of one step's solve.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepParams {
    /// Substeps per step.
    pub substeps: u8,
    /// Soft (biased) passes per substep.
    pub iterations: u8,
    /// Rigid relaxation passes per substep.
    pub relax_iterations: u8,
    /// Substep length (s).
    pub h: Fx,
    /// Substep rate (1/s).
    pub inv_h: Fx,
    /// Fastest push-out (m/s).
    pub max_push: Fx,
    /// Approach speed above which restitution applies (m/s).
    pub restitution_threshold: Fx,
}

/// What one pass over the constraints does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pass {
    /// Soft pass: push overlapping points apart (else rigid, relaxing).
    pub bias: bool,
    /// Recompute the separations from the displacements first.
    pub refresh: bool,
    /// Substep rate (1/s).
    pub inv_h: Fx,
    /// Fastest push-out (m/s).
    pub max_push: Fx,
}

/// A batch of whole islands (see [`partition`]) with everything its solve
/// needs, solved by one thread. Constraints index the batch's own bodies.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Slot of each body, in slot order.
    pub bodies: Vec<u32>,
    /// Velocities, by batch index.
    pub velocities: Vec<Velocity>,
    /// Displacements since the step began, by batch index.
    pub displacements: Vec<Displacement>,
    /// Gravity's velocity change per substep, by batch index.
    pub gravity: Vec<Vec3>,
    /// World inverse inertia, by batch index.
    pub inertia: Vec<Mat3>,
    /// Each body's arm frame (`Body::arm_frame`), by batch index.
    pub arm_frames: Vec<Option<Mat3>>,
    /// Constraints against immovable bodies.
    pub anchored: Vec<Constraint>,
    /// Constraints between two moving bodies.
    pub pairs: Vec<Constraint>,
    /// The constraints' points (each constraint names its range).
    pub points: Vec<Point>,
    /// Contact index of each anchored constraint, and whether its normal
    /// was flipped (the moving body was A).
    pub anchored_contacts: Vec<(u32, bool)>,
    /// Contact index of each pair constraint.
    pub pair_contacts: Vec<u32>,
    /// [`lanes::plan`]'s runs of `anchored` and of `pairs`.
    pub anchored_runs: Vec<u8>,
    pub pair_runs: Vec<u8>,
}

impl Batch {
    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        self.bodies.clear();
        self.velocities.clear();
        self.displacements.clear();
        self.gravity.clear();
        self.inertia.clear();
        self.arm_frames.clear();
        self.anchored.clear();
        self.pairs.clear();
        self.points.clear();
        self.anchored_contacts.clear();
        self.pair_contacts.clear();
        self.anchored_runs.clear();
        self.pair_runs.clear();
    }

    /// Solves one step on `path`: cuts the prepared constraints into lane
    /// runs, then the substeps, then restitution.
    pub fn step(&mut self, p: &StepParams, path: SolverPath) {
        lanes::plan::<false>(&self.anchored, path, &mut self.anchored_runs);
        lanes::plan::<true>(&self.pairs, path, &mut self.pair_runs);
        let mut stale = false;
        let restitution = self.anchored.iter().any(Constraint::bounces)
            || self.pairs.iter().any(Constraint::bounces);
        for _ in 0..p.substeps.max(1) {
            for (v, g) in self.velocities.iter_mut().zip(&self.gravity) {
                v.linear = add3(v.linear, *g);
            }
            if restitution {
                contact::track_approach::<false>(
                    &self.anchored,
                    &mut self.points,
                    &self.velocities,
                );
                contact::track_approach::<true>(&self.pairs, &mut self.points, &self.velocities);
            }
            let v = &mut self.velocities;
            lanes::warm_start::<false>(&self.anchored, &self.anchored_runs, path, &self.points, v);
            lanes::warm_start::<true>(&self.pairs, &self.pair_runs, path, &self.points, v);
            for _ in 0..p.iterations {
                self.pass(p, path, true, &mut stale);
            }
            for (d, v) in self.displacements.iter_mut().zip(&self.velocities) {
                d.linear = add3(d.linear, scale(v.linear, p.h));
                d.angular = add3(d.angular, scale(v.angular, p.h));
            }
            stale = true;
            for _ in 0..p.relax_iterations {
                self.pass(p, path, false, &mut stale);
            }
        }
        if restitution {
            let t = p.restitution_threshold;
            contact::restitution::<false>(
                &mut self.anchored,
                &mut self.points,
                &mut self.velocities,
                t,
            );
            contact::restitution::<true>(
                &mut self.pairs,
                &mut self.points,
                &mut self.velocities,
                t,
            );
        }
    }

    fn pass(&mut self, p: &StepParams, path: SolverPath, bias: bool, stale: &mut bool) {
        let pass = Pass {
            bias,
            refresh: *stale,
            inv_h: p.inv_h,
            max_push: p.max_push,
        };
        *stale = false;
        let (v, d, pts) = (&mut self.velocities, &self.displacements, &mut self.points);
        lanes::solve::<false>(
            &mut self.anchored,
            &self.anchored_runs,
            path,
            pts,
            v,
            d,
            &pass,
        );
        lanes::solve::<true>(&mut self.pairs, &self.pair_runs, path, pts, v, d, &pass);
    }
}
