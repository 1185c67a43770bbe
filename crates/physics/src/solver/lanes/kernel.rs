//! The lane kernels: one run of linear points solved, or warm started, on
//! any [`FxLanes`], operation for operation as `linear.rs` solves each
//! point alone; the run's points in structure-of-arrays form
//! ([`LaneRun`]); and [`kernels!`], which compiles the kernels for one
//! instruction set.
//!
//! Invariant: for any lanes `L` that give
//! [`Portable`](lockstep_fx::lanes::Portable)'s bits, a kernel
//! leaves exactly the velocities and impulses that solving the run's
//! points in turn leaves (the physics tests compare every frame of every
//! scene on every path).

use lockstep_fx::lanes::{FxLanes, LANES, Raw};
use lockstep_fx::{Fx, Vec3};

use super::super::linear::LinearPoint;
use super::super::{Displacement, Pass, Velocity, contact};

/// The kernels of one instruction set: [`solve_lanes`] and
/// [`warm_start_lanes`] on its lanes `$lanes`, compiled for `$feature`,
/// and the safe entry points `solve_run` and `warm_start_run` through
/// which the passes call them when the world's path is `$path`. Only the
/// architectures with a vector path (`avx2.rs`, `neon.rs`) have it.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! kernels {
    ($lanes:ty, $feature:literal, $path:expr) => {
        use crate::solver::lanes::kernel::LaneRun;
        use crate::solver::{Displacement, Pass, Velocity};

        #[target_feature(enable = $feature)]
        unsafe fn solve<const TWO: bool>(
            run: &mut LaneRun,
            v: &mut [Velocity],
            d: &[Displacement],
            pass: &Pass,
        ) {
            crate::solver::lanes::kernel::solve_lanes::<$lanes, TWO>(run, v, d, pass);
        }

        #[target_feature(enable = $feature)]
        unsafe fn warm_start<const TWO: bool>(run: &LaneRun, v: &mut [Velocity]) {
            crate::solver::lanes::kernel::warm_start_lanes::<$lanes, TWO>(run, v);
        }

        // SAFETY (both calls below): the world takes this path only when
        // it is available, i.e. the processor reports the instruction set
        // (`World::set_solver_path` and `SolverPath::set_default` refuse
        // it otherwise).

        pub(super) fn solve_run<const TWO: bool>(
            run: &mut LaneRun,
            v: &mut [Velocity],
            d: &[Displacement],
            pass: &Pass,
        ) {
            debug_assert!($path.is_available());
            unsafe { solve::<TWO>(run, v, d, pass) }
        }

        pub(super) fn warm_start_run<const TWO: bool>(run: &LaneRun, v: &mut [Velocity]) {
            debug_assert!($path.is_available());
            unsafe { warm_start::<TWO>(run, v) }
        }
    };
}
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) use kernels;

/// A lane run's linear points in structure-of-arrays form: each field
/// holds every lane's value, so a pass loads it into lanes at once instead
/// of gathering it point by point. [`plan`](super::plan) builds the runs
/// once a step; the passes read and write only them, and
/// [`finish`](super::finish) writes the impulses back. Lanes past the run
/// repeat its last point (its values and its bodies), and nothing of
/// theirs is written back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneRun {
    /// Where the run's points start among the linear points.
    pub(super) first: usize,
    /// Points in the run (2 to [`LANES`]).
    pub(super) len: usize,
    /// Solver indices of each lane's bodies (A's as `LinearPoint::a`).
    a: [u32; LANES],
    b: [u32; LANES],
    normal: [Raw; 3],
    inv_mass_a: Raw,
    inv_mass_b: Raw,
    mass: Raw,
    soft_mass: Raw,
    bias_rate: Raw,
    impulse_scale: Raw,
    base: Raw,
    pub(super) separation: Raw,
    pub(super) impulse: Raw,
}

impl LaneRun {
    /// The run of `points` (2 to [`LANES`] of them), the linear points
    /// from `first` on.
    pub(super) fn of(first: usize, points: &[LinearPoint]) -> LaneRun {
        let len = points.len();
        debug_assert!((2..=LANES).contains(&len));
        let p = |l: usize| &points[l.min(len - 1)];
        let raw =
            |f: fn(&LinearPoint) -> Fx| -> Raw { core::array::from_fn(|l| f(p(l)).to_bits()) };
        LaneRun {
            first,
            len,
            a: core::array::from_fn(|l| p(l).a),
            b: core::array::from_fn(|l| p(l).b),
            normal: [
                raw(|p| p.normal.x),
                raw(|p| p.normal.y),
                raw(|p| p.normal.z),
            ],
            inv_mass_a: raw(|p| p.inv_mass_a),
            inv_mass_b: raw(|p| p.inv_mass_b),
            mass: raw(|p| p.mass),
            soft_mass: raw(|p| p.soft_mass),
            bias_rate: raw(|p| p.bias_rate),
            impulse_scale: raw(|p| p.impulse_scale),
            base: raw(|p| p.base),
            separation: raw(|p| p.separation),
            impulse: raw(|p| p.impulse),
        }
    }
}

/// A vector of lanes: `[x, y, z]`.
type Lanes3<L> = [L; 3];

/// The raw components of lane vectors being gathered or written back.
#[derive(Clone, Copy, Default)]
struct Raw3([Raw; 3]);

impl Raw3 {
    #[inline(always)]
    fn put(&mut self, l: usize, v: Vec3) {
        self.0[0][l] = v.x.to_bits();
        self.0[1][l] = v.y.to_bits();
        self.0[2][l] = v.z.to_bits();
    }

    #[inline(always)]
    fn get(&self, l: usize) -> Vec3 {
        Vec3::new(
            Fx::from_bits(self.0[0][l]),
            Fx::from_bits(self.0[1][l]),
            Fx::from_bits(self.0[2][l]),
        )
    }

    #[inline(always)]
    fn lanes<L: FxLanes>(self) -> Lanes3<L> {
        self.0.map(L::from_raw)
    }

    #[inline(always)]
    fn of<L: FxLanes>(v: Lanes3<L>) -> Raw3 {
        Raw3(v.map(L::to_raw))
    }
}

#[inline(always)]
fn sub3<L: FxLanes>(a: Lanes3<L>, b: Lanes3<L>) -> Lanes3<L> {
    [a[0].sub(b[0]), a[1].sub(b[1]), a[2].sub(b[2])]
}

/// What every kernel reads of a run's points and bodies: the normals, the
/// bodies' linear velocities (A's zero when anchored) and inverse masses.
/// Lanes past the run repeat its last point.
struct Linear<L> {
    normal: Lanes3<L>,
    vb: Lanes3<L>,
    va: Lanes3<L>,
    inv_mass_a: L,
    inv_mass_b: L,
}

impl<L: FxLanes> Linear<L> {
    #[inline(always)]
    fn gather<const TWO: bool>(run: &LaneRun, v: &[Velocity]) -> Linear<L> {
        let (mut vb, mut va) = (Raw3::default(), Raw3::default());
        for l in 0..LANES {
            vb.put(l, v[run.b[l] as usize].linear);
            if TWO {
                va.put(l, v[run.a[l] as usize].linear);
            }
        }
        Linear {
            normal: run.normal.map(L::from_raw),
            vb: vb.lanes(),
            va: va.lanes(),
            inv_mass_a: L::from_raw(run.inv_mass_a),
            inv_mass_b: L::from_raw(run.inv_mass_b),
        }
    }

    /// Applies a normal impulse `lambda` to both bodies and writes their
    /// velocities back: `linear_impulse(λ, [0, 0])` (each component
    /// rounded once), then `vB += scale(linear, 1/mB)`,
    /// `vA −= scale(linear, 1/mA)`.
    #[inline(always)]
    fn push<const TWO: bool>(&self, lambda: L, run: &LaneRun, v: &mut [Velocity]) {
        let (mut new_b, mut new_a) = ([L::splat(0); 3], [L::splat(0); 3]);
        for i in 0..3 {
            let linear = self.normal[i].mul(lambda);
            new_b[i] = self.vb[i].add(linear.mul(self.inv_mass_b));
            if TWO {
                new_a[i] = self.va[i].sub(linear.mul(self.inv_mass_a));
            }
        }
        let (new_b, new_a) = (Raw3::of(new_b), Raw3::of(new_a));
        for l in 0..run.len {
            v[run.b[l] as usize].linear = new_b.get(l);
            if TWO {
                v[run.a[l] as usize].linear = new_a.get(l);
            }
        }
    }
}

/// [`linear::warm_start_alone`](super::super::linear::warm_start_alone) for a run of linear points: each point's
/// accumulated impulse applied again.
#[inline(always)]
pub(super) fn warm_start_lanes<L: FxLanes, const TWO: bool>(run: &LaneRun, v: &mut [Velocity]) {
    let bodies = Linear::<L>::gather::<TWO>(run, v);
    bodies.push::<TWO>(L::from_raw(run.impulse), run, v);
}

/// [`linear::solve_alone`](super::super::linear::solve_alone) for a run of linear points, each lane one
/// point, on lanes `L` (lanes past the run repeat its last point and are
/// not written back).
#[inline(always)]
pub(super) fn solve_lanes<L: FxLanes, const TWO: bool>(
    run: &mut LaneRun,
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    let bodies = Linear::<L>::gather::<TWO>(run, v);
    let normal = bodies.normal;
    let old = L::from_raw(run.impulse);
    let mut separation = L::from_raw(run.separation);
    if pass.refresh {
        let (mut db, mut da) = (Raw3::default(), Raw3::default());
        for l in 0..LANES {
            db.put(l, d[run.b[l] as usize].linear);
            if TWO {
                da.put(l, d[run.a[l] as usize].linear);
            }
        }
        let apart = L::dot(normal, sub3(db.lanes(), da.lanes()));
        separation = L::from_raw(run.base).add(apart);
    }
    let vn = L::dot(normal, sub3(bodies.vb, bodies.va));

    // The one normal row: ahead of contact, close the gap within the
    // substep; in contact, push out (soft) or hold (rigid).
    let zero = L::splat(0);
    let ahead = separation.positive();
    let rate = L::select(
        ahead,
        L::splat(pass.inv_h.to_bits()),
        L::from_raw(run.bias_rate),
    );
    let scaled = separation.mul(rate);
    let mass = L::from_raw(run.mass);
    let (target, row_mass, leak) = if pass.bias {
        let push = scaled.max(L::splat((-pass.max_push).to_bits()));
        (
            L::select(ahead, scaled, push),
            L::select(ahead, mass, L::from_raw(run.soft_mass)),
            L::select(ahead, zero, L::from_raw(run.impulse_scale).mul(old)),
        )
    } else {
        (L::select(ahead, scaled, zero), mass, zero)
    };
    let delta = zero.sub(row_mass.mul(vn.add(target))).sub(leak);
    let impulse = old.add(delta).max(zero);
    bodies.push::<TWO>(impulse.sub(old), run, v);
    run.separation = separation.to_raw();
    run.impulse = impulse.to_raw();
    for _ in 0..run.len {
        contact::count_linear();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use lockstep_fx::lanes::Portable;

    use super::*;

    /// Checks lanes `L` against [`Portable`], the reference, on 20 000
    /// random pairs of lane values (extremes, and values of every
    /// magnitude): every operation must give the portable bits. The test of
    /// each instruction set's lanes calls it.
    pub(in crate::solver::lanes) fn give_the_portable_bits<L: FxLanes>() {
        let mut rng = lockstep_fx::Rng::new(17, 4);
        let specials = [0, 1, -1, 1 << 31, -(1 << 31), 1 << 32, i64::MIN, i64::MAX];
        for _ in 0..20_000 {
            let mut r = || {
                let x = rng.next_u64() as i64;
                match rng.below(4) {
                    0 => specials[rng.below(8) as usize],
                    1 => x >> rng.below(63),
                    _ => x,
                }
            };
            let (a, b): (Raw, Raw) = ([r(), r(), r(), r()], [r(), r(), r(), r()]);
            let (p, q) = (Portable(a), Portable(b));
            let (x, y) = (L::from_raw(a), L::from_raw(b));
            assert_eq!(x.to_raw(), a);
            assert_eq!(L::splat(a[1]).to_raw(), [a[1]; LANES]);
            assert_eq!(x.mul(y).to_raw(), p.mul(q).0, "{a:?} * {b:?}");
            assert_eq!(x.add(y).to_raw(), p.add(q).0);
            assert_eq!(x.sub(y).to_raw(), p.sub(q).0);
            assert_eq!(x.max(y).to_raw(), p.max(q).0);
            assert_eq!(x.positive().to_raw(), p.positive().0);
            assert_eq!(
                L::select(x.positive(), x, y).to_raw(),
                Portable::select(p.positive(), p, q).0
            );
            assert_eq!(
                L::dot([x, y, x], [y, y, x]).to_raw(),
                Portable::dot([p, q, p], [q, q, p]).0
            );
        }
    }
}
