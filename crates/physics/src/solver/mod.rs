//! The contact solver: soft sequential impulses with warm starting,
//! relaxation, a friction cone and restitution (Box2D v3's "soft step").
//!
//! **What it owns.** The solver's view of the bodies ([`Velocity`],
//! [`Displacement`]) and of the contacts ([`Constraint`] and its
//! [`Point`]s, or the compact [`LinearPoint`]), and
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
//! moving bodies is a *pair*. Both are solved by the same code, with a
//! `const TWO: bool` parameter that drops body A's terms at compile time
//! for anchored ones. Anchored constraints are solved
//! before pairs in every pass, each kind in the order the world gives
//! (shuffled by the frame's `Rng`).
//!
//! **Bodies that cannot turn.** A general constraint whose bodies all have
//! zero inverse inertia (locked rotation) and no angular velocity is
//! solved by the same code compiled without its angular terms
//! (`const SPIN: bool`): each of them would add exactly zero, so the bits
//! are those of the full path, only cheaper. The one-point, frictionless
//! ones become linear points (below). A test forces every contact down the
//! full path and compares. The choice is made per constraint, in place,
//! so the order stays the same.
//!
//! **Linear points and lanes.** A one-point, frictionless contact between
//! bodies that cannot turn (every contact of an RTS unit) is kept as a
//! compact [`LinearPoint`] instead of a [`Constraint`] (a sixth of the
//! bytes, one normal row); [`Constraints`] keeps each kind's two forms and
//! the order they interleave in. Runs of consecutive linear points that
//! share no body commute, so they are solved up to four at a time in vector
//! lanes, on the path the world was given ([`SolverPath`]), with the bits of
//! solving them in turn ([`lanes`]).
//!
//! **Cost.** A manifold's rows are solved in their own space and the
//! bodies take one linear and one angular impulse per manifold and pass
//! (see `contact`). Separations are refreshed once per position
//! integration, by the first pass that follows it.
//!
//! **One island on several threads.** A batch is solved by one thread,
//! except a step's only batch, whose constraints are sorted by level (each
//! one above the earlier ones on its bodies), so that the constraints of a
//! level share no body and a pass can run level by level on every thread
//! with the bits of the solve order ([`levels`]). The kernels reach the bodies through
//! [`Motion`]: the batch's own arrays, or the shared ones of such a step.
//!
//! **Invariants.** Everything is integer arithmetic: `Fx` with the
//! wrapping policy of [`lockstep_fx::wide`] (the operands are bounded by
//! the speed limits and the masses, so the results are those of the
//! saturating operators without their checks), and for the passes over
//! constraints whose bodies turn, narrow 32-bit products at scales fixed
//! per constraint ([`products`]). The result is a pure function of the inputs and
//! their order; the constraints of one island touch only its own bodies,
//! so islands can be solved in any order, or at once on several threads,
//! with the same bits ([`partition`]).

mod block;
mod contact;
pub(crate) mod lanes;
mod levels;
mod linear;
pub(crate) mod partition;
mod products;
mod softness;

pub(crate) use contact::{BodyInfo, Constraint, ManifoldInput, Point, PointInput, prepare};
pub use lanes::SolverPath;
pub(crate) use levels::Levels;
pub(crate) use linear::{LinearPoint, is_linear};
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

impl Velocity {
    /// Adds gravity's change over one substep.
    #[inline(always)]
    pub fn fall(&mut self, gravity: Vec3) {
        self.linear = add3(self.linear, gravity);
    }
}

impl Displacement {
    /// Moves on by `v` over a substep of `h`.
    #[inline(always)]
    pub fn advance(&mut self, v: &Velocity, h: Fx) {
        self.linear = add3(self.linear, scale(v.linear, h));
        // A body that does not turn (every RTS unit) adds an exact zero:
        // skipped, with the same bits.
        if v.angular != Vec3::ZERO {
            self.angular = add3(self.angular, scale(v.angular, h));
        }
    }
}

/// Where the general constraints' kernels read and write the bodies'
/// velocities, and read their displacements: a batch's own arrays
/// ([`Arrays`]), or the shared ones of a batch whose levels are solved on
/// several threads ([`levels`]). The kernels' arithmetic is the same for
/// both, so are the bits.
pub(crate) trait Motion {
    /// Body `i`'s velocities.
    fn velocity(&self, i: u32) -> Velocity;
    /// Sets body `i`'s velocities.
    fn set_velocity(&mut self, i: u32, v: Velocity);
    /// Body `i`'s displacement since the step began.
    fn displacement(&self, i: u32) -> Displacement;
}

/// A batch's bodies in its own arrays, by batch index. A warm start reads
/// no displacement, and may give none.
pub(crate) struct Arrays<'a> {
    pub velocities: &'a mut [Velocity],
    pub displacements: &'a [Displacement],
}

impl Motion for Arrays<'_> {
    #[inline(always)]
    fn velocity(&self, i: u32) -> Velocity {
        self.velocities[i as usize]
    }
    #[inline(always)]
    fn set_velocity(&mut self, i: u32, v: Velocity) {
        self.velocities[i as usize] = v;
    }
    #[inline(always)]
    fn displacement(&self, i: u32) -> Displacement {
        self.displacements[i as usize]
    }
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

impl Pass {
    /// The next pass of a step: soft (`bias`) or rigid; it refreshes the
    /// separations if a position integration came since the last pass
    /// (`stale`, which it clears).
    pub fn next(p: &StepParams, bias: bool, stale: &mut bool) -> Pass {
        let refresh = core::mem::replace(stale, false);
        Pass {
            bias,
            refresh,
            inv_h: p.inv_h,
            max_push: p.max_push,
        }
    }
}

/// A batch of whole islands (see [`partition`]) with everything its solve
/// needs, solved by one thread (a step's only batch is prepared in
/// [`Prepared`] shares and solved by [`levels`] on several). Constraints
/// index the batch's own bodies.
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
    pub anchored: Constraints,
    /// Constraints between two moving bodies.
    pub pairs: Constraints,
    /// The general constraints' points (each constraint names its range).
    pub points: Vec<Point>,
    /// Contact index of each anchored constraint, in solve order, and
    /// whether its normal was flipped (the moving body was A).
    pub anchored_contacts: Vec<(u32, bool)>,
    /// Contact index of each pair constraint, in solve order.
    pub pair_contacts: Vec<u32>,
    /// The shares of a large batch's constraints while threads prepare
    /// them (kept for their allocations).
    pub shares: Vec<Prepared>,
    /// The levels of a batch solved on several threads ([`levels`]).
    pub levels: Levels,
}

/// A contiguous share of a batch's constraints of each kind, prepared on
/// one thread while others prepare the rest, then appended to the batch
/// ([`Batch::append`]).
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    pub anchored: Constraints,
    pub pairs: Constraints,
    /// The general constraints' points (numbered from this share's first).
    pub points: Vec<Point>,
}

impl Prepared {
    /// Empties the share, keeping its allocations.
    pub fn clear(&mut self) {
        self.anchored.clear();
        self.pairs.clear();
        self.points.clear();
    }
}

/// One kind of a batch's constraints (anchored, or pairs) in solve order,
/// in two forms: general [`Constraint`]s, and the compact
/// [`LinearPoint`]s. `order` says how the two interleave.
#[derive(Debug, Default)]
pub(crate) struct Constraints {
    /// The solve order: each step takes the next general constraint or
    /// the next linear points.
    pub order: Vec<Step>,
    /// The general constraints, in solve order.
    pub general: Vec<Constraint>,
    /// The linear points, in solve order.
    pub linear: Vec<LinearPoint>,
    /// The lane runs of the linear points, in solve order, built by
    /// [`lanes::plan`] (one per `Step::Linear(n)` with `n` ≥ 2).
    pub runs: Vec<lanes::LaneRun>,
}

/// One step of the walk over a kind's constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The next general constraint, solved alone.
    General,
    /// The next `n` linear points: alone when `n` is 1, else a lane run of
    /// points that share no body ([`lanes::plan`]).
    Linear(u8),
}

/// Where a [`Step`] finds its constraints: a general constraint's index,
/// or a range of linear points.
pub(crate) enum Place {
    General(usize),
    Linear(core::ops::Range<usize>),
}

/// The places of `order`'s steps, in order (each step takes the next
/// general constraint or the next linear points).
pub(crate) fn places(order: &[Step]) -> impl Iterator<Item = Place> + '_ {
    let (mut general, mut linear) = (0, 0);
    order.iter().map(move |step| match *step {
        Step::General => {
            general += 1;
            Place::General(general - 1)
        }
        Step::Linear(n) => {
            let run = linear..linear + usize::from(n);
            linear = run.end;
            Place::Linear(run)
        }
    })
}

impl Constraints {
    fn clear(&mut self) {
        self.order.clear();
        self.general.clear();
        self.linear.clear();
        self.runs.clear();
    }

    /// Appends a general constraint to the solve order.
    pub fn push_general(&mut self, c: Constraint) {
        self.order.push(Step::General);
        self.general.push(c);
    }

    /// Appends a linear point to the solve order.
    pub fn push_linear(&mut self, p: LinearPoint) {
        self.order.push(Step::Linear(1));
        self.linear.push(p);
    }

    /// Appends `other`'s constraints to the solve order, leaving it empty;
    /// its general constraints' points move `offset` places on (they
    /// follow these constraints' points). Before the lane runs are cut.
    /// Into empty constraints, the arrays change hands instead of being
    /// copied (the two keep each other's allocations).
    pub fn append(&mut self, other: &mut Constraints, offset: u32) {
        debug_assert!(self.runs.is_empty() && other.runs.is_empty());
        let start = self.general.len();
        if self.order.is_empty() {
            core::mem::swap(self, other);
        } else {
            self.order.append(&mut other.order);
            self.general.append(&mut other.general);
            self.linear.append(&mut other.linear);
        }
        if offset != 0 {
            self.general[start..]
                .iter_mut()
                .for_each(|c| c.first += offset);
        }
    }

    fn bounces(&self) -> bool {
        self.general.iter().any(Constraint::bounces)
    }
}

impl Batch {
    /// Appends a share's constraints to the batch's, after them in solve
    /// order, leaving the share empty. The first share's arrays change
    /// hands instead of being copied.
    pub fn append(&mut self, share: &mut Prepared) {
        let offset = self.points.len() as u32;
        self.anchored.append(&mut share.anchored, offset);
        self.pairs.append(&mut share.pairs, offset);
        if self.points.is_empty() {
            core::mem::swap(&mut self.points, &mut share.points);
        } else {
            self.points.append(&mut share.points);
        }
    }

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
        self.levels.clear();
    }

    /// Solves one step on `path`: cuts the linear points into lane runs,
    /// then the substeps, then restitution.
    pub fn step(&mut self, p: &StepParams, path: SolverPath) {
        lanes::plan::<false>(&mut self.anchored, path);
        lanes::plan::<true>(&mut self.pairs, path);
        let mut stale = false;
        let restitution = self.anchored.bounces() || self.pairs.bounces();
        for _ in 0..p.substeps.max(1) {
            for (v, g) in self.velocities.iter_mut().zip(&self.gravity) {
                v.fall(*g);
            }
            if restitution {
                let (anchored, pairs) = (&self.anchored.general, &self.pairs.general);
                let m = Arrays {
                    velocities: &mut self.velocities,
                    displacements: &self.displacements,
                };
                contact::track_approach::<false, _>(anchored, &mut self.points, &m);
                contact::track_approach::<true, _>(pairs, &mut self.points, &m);
            }
            let v = &mut self.velocities;
            lanes::warm_start::<false>(&self.anchored, path, &self.points, v);
            lanes::warm_start::<true>(&self.pairs, path, &self.points, v);
            for _ in 0..p.iterations {
                self.pass(p, path, true, &mut stale);
            }
            for (d, v) in self.displacements.iter_mut().zip(&self.velocities) {
                d.advance(v, p.h);
            }
            stale = true;
            for _ in 0..p.relax_iterations {
                self.pass(p, path, false, &mut stale);
            }
        }
        lanes::finish(&mut self.anchored);
        lanes::finish(&mut self.pairs);
        if restitution {
            let t = p.restitution_threshold;
            let pts = &mut self.points;
            let mut m = Arrays {
                velocities: &mut self.velocities,
                displacements: &self.displacements,
            };
            contact::restitution::<false, _>(&mut self.anchored.general, pts, &mut m, t);
            contact::restitution::<true, _>(&mut self.pairs.general, pts, &mut m, t);
        }
    }

    fn pass(&mut self, p: &StepParams, path: SolverPath, bias: bool, stale: &mut bool) {
        let pass = Pass::next(p, bias, stale);
        let (v, d, pts) = (&mut self.velocities, &self.displacements, &mut self.points);
        lanes::solve::<false>(&mut self.anchored, path, pts, v, d, &pass);
        lanes::solve::<true>(&mut self.pairs, path, pts, v, d, &pass);
    }
}
