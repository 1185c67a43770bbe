//! One manifold's constraint: a normal row per point, a 2×2 friction block
//! and a twist row at the points' centroid, and the passes that solve them.
//!
//! **Rows.** Each point resists penetration along the normal `n` (its
//! accumulated impulse is never negative). Friction acts at the centroid
//! of the points (the "friction anchor" of PhysX and Bullet: 3 rows instead
//! of 8 for a 4-point manifold): the two tangent rows are solved together
//! as one 2×2 block (`Δλ = −K⁻¹·v`, exact for an anisotropic effective mass)
//! and their impulse is clamped to the disc of radius `μ·Σλₙ`, a true
//! friction cone, so a box slides at the same slope whatever its heading;
//! the twist about the normal is clamped to that limit times the points'
//! root-mean-square distance from the centroid. Each pass solves friction
//! first, with the normal impulses of the pass before, then the normal
//! rows, so that non-penetration is what each pass leaves exact. (Solving
//! friction in the relaxing passes only, as rapier does by default, costs
//! a sixth less but lets `cubes-1000` slide and jitter for 150 frames more
//! before it sleeps.)
//!
//! **Normal rows in their own space.** The points' normal velocities are
//! computed once per pass. Two to four rows are then solved exactly, as one
//! block factored when the constraint is built ([`Block`], `block.rs`):
//! each row gets the impulse it would settle at if the manifold were swept
//! until nothing changed, and a face's corners share a symmetric load
//! equally. Where the block does not apply (one row, a corner that would
//! pull) the rows are swept twice instead: each point's impulse moves every
//! point's normal velocity through `K` (the points' effective-mass matrix,
//! its off-diagonal kept per manifold), each sweep a full soft iteration.
//! One sweep gives the first corner of a face the largest share of an
//! impact, which tips a cube landing flat (0.88 rad/s after a 3 m/s
//! landing); two bring the shares close (0.002 rad/s), but not close
//! enough for a column of resting cubes, which the leftover tips a little
//! every step. The bodies take the sum of the changes at the end: the
//! normal and tangent rows are mutually perpendicular, so one linear and one
//! angular impulse per body and manifold replace one per row.
//!
//! **Lever arms.** Each point brings its arms from both bodies' centres
//! (`PointInput`), taken in each body's arm orientation, which follows the
//! body only once it has turned more than `arm_turn`: that is what keeps
//! tall stacks standing (see `Body::arm_frame`). Friction uses the points'
//! mean arms.
//!
//! **Separation.** A point's separation is its value at the start of the
//! step plus how far the anchors moved apart along `n` since then
//! (`n·(ΔpB − ΔpA) + jB·ΔθB − jA·ΔθA`, to first order in the rotation),
//! refreshed by the first pass after each position integration.
//!
//! **Arithmetic.** The passes' products are [`Exact`] (Q64.64 sums) for
//! a constraint of bodies that cannot turn, the same as its compact
//! linear form, and [`Narrow`] (32-bit operands at scales fixed when the
//! constraint is built) for one whose bodies turn: `products.rs` says
//! which, and why. Building a constraint, the block solve and the
//! friction cap are exact for both.
//!
//! **Where.** This module holds a constraint's data and what every pass
//! reads of it; each pass has a module of its own: `prepare` (building a
//! constraint), `warm_start`, `solve` (one pass over one constraint) and
//! `restitution` (bounces).

use lockstep_fx::wide::wrapping::{add, add3, cross, dot, mat_vec, mul, sub, sub3};
use lockstep_fx::{Fx, Mat3, Vec3, Wide};

use super::block::{Block, RowTarget};
use super::products::{
    self, ARM, Exact, K, MASS, Narrow, Products, RATIO, Scales, Sum3, UNIT, Widest,
};
use super::{Displacement, Motion, Pass, Softness, Velocity};

mod prepare;
mod restitution;
mod solve;
mod warm_start;

pub(crate) use prepare::prepare;
pub(crate) use restitution::{restitution, track_approach};
pub(super) use solve::{count_linear, solve_alone};
pub(super) use warm_start::warm_start_alone;

/// A normal row: one contact point.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Point {
    /// `rA × n` and `rB × n`.
    ja: Vec3,
    jb: Vec3,
    /// `IA⁻¹ ja` and `IB⁻¹ jb`.
    ka: Vec3,
    kb: Vec3,
    /// `J M⁻¹ Jᵀ`: how the point's own impulse changes its normal velocity.
    diagonal: Fx,
    /// Effective mass `1 / (J M⁻¹ Jᵀ)`.
    pub(super) mass: Fx,
    /// The effective mass scaled by the constraint's softness.
    pub(super) soft_mass: Fx,
    /// Accumulated impulse (≥ 0).
    pub impulse: Fx,
    /// Separation at the start of the step (negative = overlap).
    pub(super) base: Fx,
    /// Separation now.
    pub(super) separation: Fx,
    /// Most negative relative normal velocity seen this step, for restitution.
    approach: Fx,
}

/// A manifold's constraint. Points `first .. first + count` of the island's
/// point array are its normal rows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Constraint {
    /// Solver index of body A (unused when anchored).
    pub a: u32,
    /// Solver index of body B.
    pub b: u32,
    /// First point.
    pub first: u32,
    /// Number of points (1 to 4).
    pub count: u8,
    /// How an impulse at point `i` changes the normal velocity at point
    /// `j` (the off-diagonal of the points' effective-mass matrix `K`), for
    /// the pairs `(0,1) (0,2) (0,3) (1,2) (1,3) (2,3)`.
    coupling: [Fx; 6],
    pub(super) inv_mass_a: Fx,
    pub(super) inv_mass_b: Fx,
    pub(super) normal: Vec3,
    tangents: [Vec3; 2],
    /// Tangent rows at the centroid: `rA × t`, `rB × t`, `IA⁻¹(rA × t)`,
    /// `IB⁻¹(rB × t)`.
    tja: [Vec3; 2],
    tjb: [Vec3; 2],
    tka: [Vec3; 2],
    tkb: [Vec3; 2],
    /// `K⁻¹` of the tangent block: entries (0,0), (0,1) = (1,0), (1,1).
    tangent_inverse: [Fx; 3],
    /// Accumulated tangent impulses.
    pub tangent_impulse: [Fx; 2],
    /// Twist row: `IA⁻¹n`, `IB⁻¹n`, its effective mass, its impulse.
    twist_ka: Vec3,
    twist_kb: Vec3,
    twist_mass: Fx,
    /// Accumulated twist impulse.
    pub twist_impulse: Fx,
    pub(super) friction: Fx,
    /// Root-mean-square distance of the points from their centroid.
    twist_radius: Fx,
    restitution: Fx,
    pub(super) soft: Softness,
    /// The normal rows factored for an exact solve ([`Block`]).
    block: Block,
    /// Whether an angular term can be non-zero: a body that takes part can
    /// turn (non-zero inverse inertia) or is turning. When neither can, the
    /// passes skip every angular term (each would add exactly zero).
    pub(super) spin: bool,
    /// Whether the passes take [`Narrow`] products (see `products.rs`):
    /// only when a body that takes part can turn or is turning (as `spin`,
    /// but never forced by the tests' switch), so a constraint of bodies
    /// that cannot turn computes what its compact linear form does. A
    /// narrow constraint holds the constants the passes read narrowed, and
    /// its impulses (and its block's factors) in its impulse unit: read
    /// them through [`Constraint::normal_impulse`],
    /// [`Constraint::friction_impulse`] and [`Constraint::twist`].
    narrow: bool,
    /// The scales of a narrow constraint.
    scales: Scales,
}

/// What [`prepare`] needs about one body.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyInfo {
    /// Solver index.
    pub index: u32,
    /// Inverse mass (0 for kinematic bodies).
    pub inv_mass: Fx,
    /// World inverse inertia.
    pub inv_inertia: Mat3,
}

/// What [`prepare`] needs about one contact point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PointInput {
    /// World position.
    pub position: Vec3,
    /// Separation along the normal.
    pub separation: Fx,
    /// Warm-start normal impulse.
    pub impulse: Fx,
    /// Lever arm from A's centre, in A's arm orientation
    /// (`Body::arm_frame`).
    pub arm_a: Vec3,
    /// Lever arm from B's centre.
    pub arm_b: Vec3,
}

/// What [`prepare`] needs about one manifold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ManifoldInput<'a> {
    /// Unit normal from A to B.
    pub normal: Vec3,
    /// The points (1 to 4).
    pub points: &'a [PointInput],
    /// Warm-start friction impulse as a world vector (projected on this
    /// step's tangents).
    pub friction_impulse: Vec3,
    /// Warm-start twist impulse.
    pub twist_impulse: Fx,
    /// Combined friction coefficient.
    pub friction: Fx,
    /// Combined restitution.
    pub restitution: Fx,
    /// Softness of the soft passes.
    pub soft: Softness,
}

/// The point pairs of [`Constraint::coupling`], in order.
const PAIRS: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];

/// For each point, its coupling slots with the other three: `(slot, point)`.
const OTHERS: [[(u8, u8); 3]; 4] = [
    [(0, 1), (1, 2), (2, 3)],
    [(0, 0), (3, 2), (4, 3)],
    [(1, 0), (3, 1), (5, 3)],
    [(2, 0), (4, 1), (5, 2)],
];

/// Passes over a manifold's normal rows within each solver pass, when
/// they are not solved as a block: the rows are coupled through the
/// bodies' rotation, and a single Gauss–Seidel sweep gives the first corner
/// of a face the largest share of an impact (a symmetric landing then tips
/// the body); a second sweep, done in the rows' own space with `K`, brings
/// the shares close to the exact ones.
const SWEEPS: usize = 2;

/// `1 / k`, or zero for a non-positive `k` (an immovable direction).
pub(super) fn inverse(k: Fx) -> Fx {
    if k.is_positive() {
        Fx::ONE / k
    } else {
        Fx::ZERO
    }
}

/// `jb·wB − ja·wA` (only `jb·wB` when anchored), rounded once.
#[inline(always)]
fn angular<const TWO: bool, P: Products>(
    ja: Vec3,
    wa: Vec3,
    jb: Vec3,
    wb: Vec3,
    r: products::Round,
) -> Fx {
    let b = products::dot_sum::<P>(jb, wb);
    if TWO {
        P::round(P::minus(b, products::dot_sum::<P>(ja, wa)), r)
    } else {
        P::round(b, r)
    }
}

/// [`angular`] where a body may turn; zero (exactly what it would give)
/// where none does.
#[inline(always)]
fn turning<const TWO: bool, const SPIN: bool, P: Products>(
    ja: Vec3,
    wa: Vec3,
    jb: Vec3,
    wb: Vec3,
    r: products::Round,
) -> Fx {
    if SPIN {
        angular::<TWO, P>(ja, wa, jb, wb, r)
    } else {
        Fx::ZERO
    }
}

/// Whether a constraint between `a` and `b` (only `b` when anchored) has
/// angular terms that can be non-zero ([`Constraint::spin`]): a body can
/// turn, or is turning in `velocities` (those before solving). No impulse
/// can turn a body with zero inverse inertia, so one that is not turning
/// at the start stays so through the step.
pub(super) fn spins<const TWO: bool>(a: &BodyInfo, b: &BodyInfo, velocities: &[Velocity]) -> bool {
    turns::<TWO>(a, b, velocities) || probe::full_path_forced()
}

/// Whether a body of a constraint between `a` and `b` (only `b` when
/// anchored) can turn or is turning ([`spins`] without the tests' switch).
fn turns<const TWO: bool>(a: &BodyInfo, b: &BodyInfo, velocities: &[Velocity]) -> bool {
    let turns = |body: &BodyInfo| {
        body.inv_inertia != Mat3::ZERO || velocities[body.index as usize].angular != Vec3::ZERO
    };
    (TWO && turns(a)) || turns(b)
}

impl Constraint {
    /// Point `p`'s accumulated normal impulse (N·s).
    pub fn normal_impulse(&self, p: &Point) -> Fx {
        if self.narrow {
            self.scales.newton_seconds(p.impulse)
        } else {
            p.impulse
        }
    }

    /// The accumulated twist impulse (N·m·s).
    pub fn twist(&self) -> Fx {
        if self.narrow {
            self.scales.newton_seconds(self.twist_impulse)
        } else {
            self.twist_impulse
        }
    }

    /// Whether the constraint bounces (restitution above zero).
    pub fn bounces(&self) -> bool {
        !self.restitution.is_zero()
    }

    /// The accumulated tangent impulse as a world vector.
    pub fn friction_impulse(&self) -> Vec3 {
        if self.narrow {
            let [t0, t1] = self.tangents.map(products::widen_unit);
            let [l0, l1] = self.tangent_impulse.map(|l| self.scales.newton_seconds(l));
            t0 * l0 + t1 * l1
        } else {
            self.tangents[0] * self.tangent_impulse[0] + self.tangents[1] * self.tangent_impulse[1]
        }
    }

    /// The constraint's points within the island's point array.
    pub fn points<'p>(&self, points: &'p [Point]) -> &'p [Point] {
        &points[self.first as usize..][..usize::from(self.count)]
    }

    /// The constraint's points, to change them.
    #[inline(always)]
    pub fn points_mut<'p>(&self, points: &'p mut [Point]) -> &'p mut [Point] {
        &mut points[self.first as usize..][..usize::from(self.count)]
    }

    /// The linear impulse `n·Λn + t₀·Λ₀ + t₁·Λ₁`, each component rounded once.
    #[inline(always)]
    fn linear_impulse<P: Products>(&self, normal: Fx, tangent: [Fx; 2]) -> Vec3 {
        let mut s = Sum3::<P>::default();
        s.add(self.normal, normal);
        // Zero tangent impulses add exact zeros (a frictionless contact).
        if tangent != [Fx::ZERO; 2] {
            s.add(self.tangents[0], tangent[0]);
            s.add(self.tangents[1], tangent[1]);
        }
        s.round(UNIT)
    }
}

/// The two bodies' velocities (A's zero when anchored).
#[inline(always)]
fn load<const TWO: bool, M: Motion>(c: &Constraint, m: &M) -> (Velocity, Velocity) {
    let vb = m.velocity(c.b);
    let va = if TWO {
        m.velocity(c.a)
    } else {
        Velocity::default()
    };
    (va, vb)
}

#[inline(always)]
fn store<const TWO: bool, M: Motion>(c: &Constraint, m: &mut M, va: Velocity, vb: Velocity) {
    if TWO {
        m.set_velocity(c.a, va);
    }
    m.set_velocity(c.b, vb);
}

/// A switch that sends every constraint down the full (spinning) path, and
/// a count of those solved without, so a test can show that leaving the
/// angular terms out changes no bit. Outside tests both compile to nothing.
#[cfg(not(test))]
mod probe {
    #[inline(always)]
    pub(super) fn full_path_forced() -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn count_linear() {}
}

#[cfg(test)]
mod probe {
    use std::cell::Cell;

    use lockstep_fx::{Checksum, Fx, Quat, Vec3};

    use crate::{BodyBuilder, Shape, World, WorldSettings};

    thread_local! {
        static FORCED: Cell<bool> = const { Cell::new(false) };
        static LINEAR: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn full_path_forced() -> bool {
        FORCED.with(Cell::get)
    }

    pub(super) fn count_linear() {
        LINEAR.with(|c| c.set(c.get() + 1));
    }

    /// Locked boxes and spheres thrown onto the ground, against each other
    /// and against free cubes, with friction: anchored and pair
    /// constraints, one to four points, with and without spin.
    fn mixed_world() -> World {
        let mut world = World::new(WorldSettings::default());
        world
            .add_body(BodyBuilder::fixed(Shape::HalfSpace))
            .unwrap();
        let tilt = Quat::from_axis_angle(Vec3::new(Fx::ONE, Fx::ZERO, Fx::HALF), Fx::lit("0.3"));
        for i in 0..6i32 {
            let x = Fx::from_int(i - 3).scale_pow2(-1);
            let locked_box = BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::HALF)))
                .lock_rotation()
                .orientation(tilt)
                .position(Vec3::new(x, Fx::from_int(1 + i), Fx::ZERO))
                .linear_velocity(Vec3::new(Fx::ONE, Fx::ZERO, Fx::HALF));
            world.add_body(locked_box).unwrap();
            let ball = BodyBuilder::dynamic(Shape::Sphere {
                radius: Fx::lit("0.3"),
            })
            .lock_rotation()
            .position(Vec3::new(x, Fx::lit("0.3"), Fx::from_int(2)))
            .linear_velocity(Vec3::new(Fx::ZERO, Fx::ZERO, -Fx::from_int(3 + i)));
            world.add_body(ball).unwrap();
            let free = BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::HALF)))
                .position(Vec3::new(x, Fx::lit("0.25"), -Fx::ONE));
            world.add_body(free).unwrap();
        }
        world
    }

    /// Steps `world` for `frames` frames, with every contact sent down the
    /// full path or not: every frame's checksum, and how many constraints
    /// were solved without angular terms.
    fn run(mut world: World, frames: usize, forced: bool) -> (Vec<Checksum>, u64) {
        FORCED.with(|f| f.set(forced));
        LINEAR.with(|c| c.set(0));
        let checksums = (0..frames)
            .map(|_| {
                world.step();
                world.checksum()
            })
            .collect();
        FORCED.with(|f| f.set(false));
        (checksums, LINEAR.with(Cell::get))
    }

    #[test]
    fn leaving_out_the_angular_terms_of_bodies_that_cannot_turn_changes_no_bit() {
        let (fast, linear) = run(mixed_world(), 240, false);
        let (full, none) = run(mixed_world(), 240, true);
        assert!(linear > 1000, "the linear path ran {linear} times");
        assert_eq!(none, 0);
        assert_eq!(fast, full);
    }

    /// A crowd of locked, frictionless spheres: nearly every contact is a
    /// linear point, solved in its compact form; forced down the general
    /// path, every frame must come out the same.
    #[test]
    fn linear_points_give_the_bits_of_general_constraints() {
        let crowd = || crate::scenes::crowd().build();
        let (compact, linear) = run(crowd(), 60, false);
        let (general, none) = run(crowd(), 60, true);
        assert!(linear > 100_000, "linear points solved {linear} times");
        assert_eq!(none, 0);
        assert_eq!(compact, general);
    }

    #[test]
    fn a_locked_body_never_turns() {
        let mut world = mixed_world();
        let start: Vec<_> = world.bodies().map(|(h, b)| (h, b.orientation())).collect();
        for _ in 0..240 {
            world.step();
        }
        let mut locked = 0;
        for (h, orientation) in start {
            let b = world.body(h).unwrap();
            if b.kind() == crate::BodyKind::Dynamic && !b.can_turn() {
                locked += 1;
                assert_eq!(b.orientation(), orientation);
                assert_eq!(b.angular_velocity(), Vec3::ZERO);
            }
        }
        assert_eq!(locked, 12);
    }
}
