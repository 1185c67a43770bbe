//! Linear points: the contacts that need only one normal row and no turn,
//! kept in a compact form of their own.
//!
//! **What they are.** A contact with one point, no friction coefficient and
//! no friction impulse carried over, no restitution, between bodies that
//! cannot turn and are not turning (zero inverse inertia, zero angular
//! velocity: see `Constraint::spin`). That is every contact of an RTS unit
//! (a locked, frictionless sphere) with the ground, a building or another
//! unit. Such a contact's [`Constraint`](super::Constraint) would carry
//! only zeros in its angular, tangent and twist terms, and its pass would
//! reduce to one normal row; a [`LinearPoint`] keeps what that row reads
//! (104 bytes, against about 670 for a `Constraint` and its `Point`), so
//! building, walking
//! and writing back a crowd's contacts moves far fewer bytes.
//!
//! **Same bits.** [`warm_start_alone`] and [`solve_alone`] are
//! `contact`'s `warm_start_one` and `solve_one` without spin, for one
//! point, operation for operation with the terms that add exact zeros left
//! out; the lane kernels ([`lanes`](super::lanes)) mirror these two. A
//! contact that is a linear point gives the same impulses and velocities
//! whichever form it is solved in: a test in `contact` solves a crowd
//! with every contact forced into the general form and compares every
//! frame, and the per-path test in `tests/determinism.rs` compares the
//! scalar walk with the lanes.

use lockstep_fx::wide::wrapping::{add, add3, dot, mul, scale, sub, sub3};
use lockstep_fx::{Fx, Vec3};

use super::contact::{BodyInfo, inverse};
use super::{Displacement, Pass, Softness, Velocity};

/// One linear point: the normal row of a one-point contact between bodies
/// that cannot turn (B moving; A moving too in a pair, else immovable).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinearPoint {
    /// Solver index of body A (unused when anchored).
    pub a: u32,
    /// Solver index of body B.
    pub b: u32,
    pub inv_mass_a: Fx,
    pub inv_mass_b: Fx,
    /// Unit normal from A to B.
    pub normal: Vec3,
    /// Effective mass `1 / (1/mA + 1/mB)`.
    pub mass: Fx,
    /// The effective mass scaled by the softness.
    pub soft_mass: Fx,
    /// Accumulated impulse (≥ 0).
    pub impulse: Fx,
    /// Separation at the start of the step.
    pub base: Fx,
    /// Separation now.
    pub separation: Fx,
    /// The softness's feedback rate and leak.
    pub bias_rate: Fx,
    pub impulse_scale: Fx,
}

/// Whether a contact of `count` points between `a` and `b` (A ignored when
/// anchored) is a linear point, given its combined friction and
/// restitution and its carried friction impulse; `velocities` are those
/// before solving.
pub(crate) fn is_linear<const TWO: bool>(
    a: &BodyInfo,
    b: &BodyInfo,
    count: u8,
    friction: Fx,
    friction_impulse: Vec3,
    restitution: Fx,
    velocities: &[Velocity],
) -> bool {
    count == 1
        && friction.is_zero()
        && friction_impulse == Vec3::ZERO
        && restitution.is_zero()
        && !super::contact::spins::<TWO>(a, b, velocities)
}

impl LinearPoint {
    /// The linear point of a contact [`is_linear`] accepted: what
    /// `contact::prepare` computes for it, without the terms that are zero.
    pub fn new<const TWO: bool>(
        a: &BodyInfo,
        b: &BodyInfo,
        normal: Vec3,
        separation: Fx,
        impulse: Fx,
        soft: Softness,
    ) -> LinearPoint {
        let inv_mass_a = if TWO { a.inv_mass } else { Fx::ZERO };
        // `prepare`'s diagonal: the angular terms it adds are zero.
        let diagonal = inv_mass_a + b.inv_mass + Fx::ZERO + Fx::ZERO;
        let mass = inverse(diagonal);
        LinearPoint {
            a: if TWO { a.index } else { b.index },
            b: b.index,
            inv_mass_a,
            inv_mass_b: b.inv_mass,
            normal,
            mass,
            soft_mass: mass * soft.mass_scale,
            impulse,
            base: separation,
            separation,
            bias_rate: soft.bias_rate,
            impulse_scale: soft.impulse_scale,
        }
    }

    /// Pushes the two bodies apart by the normal impulse `lambda`:
    /// `linear_impulse(λ, [0, 0])`, each component one rounded product.
    #[inline(always)]
    fn push<const TWO: bool>(&self, lambda: Fx, v: &mut [Velocity]) {
        let linear = scale(self.normal, lambda);
        let vb = &mut v[self.b as usize].linear;
        *vb = add3(*vb, scale(linear, self.inv_mass_b));
        if TWO {
            let va = &mut v[self.a as usize].linear;
            *va = sub3(*va, scale(linear, self.inv_mass_a));
        }
    }
}

/// Applies one linear point's accumulated impulse (warm starting).
#[inline(always)]
pub(super) fn warm_start_alone<const TWO: bool>(p: &LinearPoint, v: &mut [Velocity]) {
    // `add(0, impulse)` of the one point.
    p.push::<TWO>(p.impulse, v);
}

/// One linear point's pass: its separation refreshed if the pass asks,
/// then its normal row (`contact::row` for one point).
#[inline(always)]
pub(super) fn solve_alone<const TWO: bool>(
    p: &mut LinearPoint,
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    super::contact::count_linear();
    let vb = v[p.b as usize].linear;
    let va = if TWO {
        v[p.a as usize].linear
    } else {
        Vec3::ZERO
    };
    if pass.refresh {
        let db = d[p.b as usize].linear;
        let da = if TWO {
            d[p.a as usize].linear
        } else {
            Vec3::ZERO
        };
        p.separation = add(p.base, dot(p.normal, sub3(db, da)));
    }
    let vn = dot(p.normal, sub3(vb, va));
    let s = p.separation;
    let old = p.impulse;
    let (target, mass, leak) = if s.is_positive() {
        (mul(s, pass.inv_h), p.mass, Fx::ZERO)
    } else if pass.bias {
        let push = mul(p.bias_rate, s);
        (
            push.max(-pass.max_push),
            p.soft_mass,
            mul(p.impulse_scale, old),
        )
    } else {
        (Fx::ZERO, p.mass, Fx::ZERO)
    };
    let delta = sub(sub(Fx::ZERO, mul(mass, add(vn, target))), leak);
    p.impulse = add(old, delta).max(Fx::ZERO);
    let dl = sub(p.impulse, old);
    if !dl.is_zero() {
        p.push::<TWO>(dl, v);
    }
}
