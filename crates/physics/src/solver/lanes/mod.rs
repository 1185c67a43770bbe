//! Linear points solved four at a time, with the bits of solving them one
//! after another.
//!
//! **The same order.** A pass solves the constraints in the step's shuffled
//! order ([`solve`] and [`warm_start`] walk it). Two constraints that share
//! no body commute: each reads and writes only its own bodies' velocities
//! and its own impulses. So a run of consecutive constraints that share no
//! body, taken together, leaves exactly what taking them one by one leaves.
//! [`plan`] cuts each step's stretches of consecutive linear points into
//! such runs of up to [`LANES`] (greedily, in order); a pass solves each run
//! in lanes and every other constraint alone. In a crowd of thousands of
//! bodies, consecutive constraints in a shuffled order rarely share a body,
//! so most runs are full.
//!
//! **What goes in lanes.** Linear points
//! ([`LinearPoint`](linear::LinearPoint)): the one-point, frictionless
//! contacts of bodies that cannot turn, every contact of an RTS unit.
//! Their warm start and their pass (one normal row) are mirrored in
//! `kernel.rs` on [`FxLanes`](lockstep_fx::lanes::FxLanes), operation for
//! operation with `linear.rs`'s `warm_start_alone` and `solve_alone` (a
//! test compares every frame of a crowded scene on every path, and would
//! see one unit of difference in one impulse).
//!
//! **Structure of arrays.** A step solves its constraints in many passes
//! (a warm start and the soft and rigid passes of every substep), and
//! every pass of a run reads the same constants of its points. So [`plan`]
//! copies each run once a step into a [`LaneRun`], whose fields hold all
//! four lanes' values side by side: a pass loads each one into lanes with
//! one instruction, gathers only the bodies' velocities, and keeps the
//! run's impulses and separations there; [`finish`] writes them back to
//! the linear points for the next step's warm start. Only where the values
//! are kept changed: the operations, and so the bits, are the same.
//!
//! **Paths.** [`SolverPath`] says which code runs the passes. It is a
//! machine setting, like the thread count: every path gives the same bits.
//! `Avx2` runs the kernels on `avx2::Avx2` lanes, one 256-bit register each
//! (four 32 × 32 → 64-bit products per instruction), in functions compiled
//! for AVX2; it is chosen at run time when the processor has it, and it
//! and `Neon` are the crate's only unsafe code. `Portable` runs the same
//! kernels on [`Portable`] lanes, plain Rust: on x86_64 without AVX2 it
//! costs about 70% more instructions than solving each linear point alone
//! (`crowd`, 300 frames), so it is never the default; it is the kernels'
//! reference, which the cross check runs on every architecture. `Neon`
//! runs them on `neon::Neon` lanes, two 128-bit registers (two
//! 32 × 32 → 64-bit products per instruction), on aarch64. With exact
//! Q32.32 products four lanes cost about what four scalar rows do (neither
//! instruction set has a 64 × 64-bit vector multiply); what the lanes save
//! is the walk around the products, so the AVX2 path runs about 5% fewer
//! instructions than the sequential one on `crowd` (300 frames) and on the
//! RTS at 8 × 1 024 units (60 frames). An aarch64 processor forms a scalar
//! 128-bit product in two instructions (`mul`, `smulh`), where a NEON
//! product of four lanes takes eight `umull`s and the halves' narrowing
//! around them (counted under qemu, `crowd` runs 1.33 times the
//! sequential path's instructions on NEON), so there the default stays
//! `Sequential` until the NEON path is timed on such a processor. The cross check runs every path of each
//! architecture, NEON included, against the portable lanes.
//!
//! **General constraints stay out of lanes (measured).** Runs of four
//! consecutive face contacts that share no body are easy to find: they
//! hold 99% of the general constraints of `pyramid-15`, `cubes-1000` and
//! `many-pyramids` (of the cube game's pairs, 12%: half of them have fewer
//! than four points, and its piles' contacts share bodies). Such runs were
//! solved in lanes with exact Q32.32 products, operation for operation
//! (each lane's block solve and friction cap on its own), with the same
//! bits on every path. On AVX2 they ran about as many instructions as the
//! sequential code (1.5% fewer on `pyramid-15`, 1.3% fewer on
//! `many-pyramids`) but took 1.32 and 1.67 times as long (medians of
//! paired runs). The arithmetic was not the cause: in a loop that stays in
//! the first-level cache, an exact lane product costs 0.51 ns against
//! 0.65 ns for a scalar one. The time went to loads that missed the
//! cache, because the lanes read each constraint twice: its constants from
//! the copy made for the lanes, and its impulses and block factors from
//! the constraint itself. The sequential code streams each constraint
//! once, at more than three instructions a cycle.
//!
//! Narrow products cost one multiply for four (0.10 ns a product in the
//! same loop), and general constraints whose bodies turn now take them
//! (`products.rs`): every operand of their passes' products is 32 bits by
//! definition, what `pmuldq` and `smull` lanes compute. In lanes (a
//! throwaway build, narrowed in each product) `pyramid-15` ran 17% fewer
//! instructions and took about as long as the sequential code (1.05). So
//! lanes would pay only where a constraint has one home, in lanes, read
//! once a pass: prepared straight into it, impulses and block factors
//! included. Sequentially, narrow products as they stand save 8% of
//! `pyramid-15`'s instructions; three ways to narrow were measured before
//! that one:
//! - narrowing each operand where it is used, at scales chosen per
//!   constraint, costs more than it saves: a shift by a count held in a
//!   register (x86_64 without BMI2 takes it in `cl` only) and a sign
//!   extension per operand made `pyramid-15` run 9.6% *more* instructions.
//!   The constants are narrowed once, when the constraint is built, and
//!   every rounding is a fixed shift;
//! - narrowing only the products with lever arms and unit vectors (the
//!   cheapest half) saved 2.7%;
//! - a variable domain of ±256 m/s (2⁻²³) was too narrow: two bodies close
//!   at up to 480 m/s within the speed limits, and a wrapped variable blew
//!   the cube game apart within 1 000 frames. Saturating each variable
//!   instead costs as much as narrowing saves (2.8% left); a domain of
//!   ±1 024 at 2⁻²¹ with lever arms below 2 m is never left in the
//!   scenes or the cube game, and keeps the quality rows (±8 192 at 2⁻¹⁸
//!   tilts the top of `tower-20` by 4.6 mm).

use lockstep_fx::Fx;
use lockstep_fx::lanes::{LANES, Portable};

use super::linear;
use super::{
    Arrays, Constraints, Displacement, Pass, Place, Point, Step, Velocity, contact, places,
};

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2;
mod kernel;
#[cfg(target_arch = "aarch64")]
#[allow(unsafe_code)]
mod neon;
mod path;

pub use path::SolverPath;

pub(crate) use kernel::LaneRun;
use kernel::{solve_lanes, warm_start_lanes};

/// Cuts the linear points of `constraints` into lane runs, in place: each
/// stretch of consecutive `Step::Linear(1)` becomes runs of up to
/// [`LANES`] points that share no body (greedily, in order; a point left
/// alone stays `Linear(1)`), and copies each run into a [`LaneRun`]. On
/// the sequential path every point stays alone.
pub(crate) fn plan<const TWO: bool>(constraints: &mut Constraints, path: SolverPath) {
    if path == SolverPath::Sequential {
        return;
    }
    let linear = &constraints.linear;
    let bodies = |l: usize| {
        let p = &linear[l];
        (if TWO { p.a } else { u32::MAX }, p.b)
    };
    cut(&mut constraints.order, bodies);
    constraints.runs.clear();
    for place in places(&constraints.order) {
        if let Place::Linear(run) = place {
            if run.len() > 1 {
                let first = run.start;
                constraints
                    .runs
                    .push(LaneRun::of(first, &constraints.linear[run]));
            }
        }
    }
}

/// Writes each lane run's impulses and separations back to its linear
/// points, once the passes are done (the contacts' warm start reads them
/// there).
pub(crate) fn finish(constraints: &mut Constraints) {
    for run in &constraints.runs {
        let points = &mut constraints.linear[run.first..run.first + run.len];
        for (l, p) in points.iter_mut().enumerate() {
            p.impulse = Fx::from_bits(run.impulse[l]);
            p.separation = Fx::from_bits(run.separation[l]);
        }
    }
}

/// [`plan`]'s cut of `order`, given each linear point's bodies
/// (`u32::MAX` for no body).
fn cut(order: &mut Vec<Step>, bodies_of: impl Fn(usize) -> (u32, u32)) {
    let (mut read, mut write, mut l) = (0, 0, 0);
    while read < order.len() {
        if order[read] != Step::Linear(1) {
            if let Step::Linear(k) = order[read] {
                // A run cut before: its points are passed over.
                l += usize::from(k);
            }
            order[write] = order[read];
            read += 1;
            write += 1;
            continue;
        }
        let mut taken = [u32::MAX; 2 * LANES];
        let mut k = 0;
        while k < LANES && order.get(read + k) == Some(&Step::Linear(1)) {
            let (a, b) = bodies_of(l + k);
            let clash = |x: u32| x != u32::MAX && taken[..2 * k].contains(&x);
            if clash(a) || clash(b) {
                break;
            }
            taken[2 * k] = a;
            taken[2 * k + 1] = b;
            k += 1;
        }
        // `k` is at least 1: a point never clashes with an empty run.
        order[write] = Step::Linear(k as u8);
        read += k;
        write += 1;
        l += k;
    }
    order.truncate(write);
}

/// One pass over `constraints` in their order: each lane run on `path`,
/// every other constraint alone.
pub(crate) fn solve<const TWO: bool>(
    constraints: &mut Constraints,
    path: SolverPath,
    points: &mut [Point],
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    let mut runs = constraints.runs.iter_mut();
    for place in places(&constraints.order) {
        match place {
            Place::General(i) => {
                let c = &mut constraints.general[i];
                let pts = c.points_mut(points);
                let mut m = Arrays {
                    velocities: &mut *v,
                    displacements: d,
                };
                contact::solve_alone::<TWO, _>(c, pts, &mut m, pass);
            }
            Place::Linear(run) if run.len() == 1 => {
                linear::solve_alone::<TWO>(&mut constraints.linear[run.start], v, d, pass);
            }
            Place::Linear(_) => {
                let run = runs.next().expect("plan made a lane run for every run");
                solve_run::<TWO>(path, run, v, d, pass);
            }
        }
    }
}

/// Warm starts `constraints` in their order, runs in lanes as [`solve`]
/// solves them.
pub(crate) fn warm_start<const TWO: bool>(
    constraints: &Constraints,
    path: SolverPath,
    points: &[Point],
    v: &mut [Velocity],
) {
    let mut runs = constraints.runs.iter();
    for place in places(&constraints.order) {
        match place {
            Place::General(i) => {
                let c = &constraints.general[i];
                let mut m = Arrays {
                    velocities: &mut *v,
                    displacements: &[],
                };
                contact::warm_start_alone::<TWO, _>(c, c.points(points), &mut m);
            }
            Place::Linear(run) if run.len() == 1 => {
                linear::warm_start_alone::<TWO>(&constraints.linear[run.start], v);
            }
            Place::Linear(_) => {
                let run = runs.next().expect("plan made a lane run for every run");
                warm_start_run::<TWO>(path, run, v);
            }
        }
    }
}

/// Solves one run of 2 to [`LANES`] linear points (see [`plan`]) on `path`.
fn solve_run<const TWO: bool>(
    path: SolverPath,
    run: &mut LaneRun,
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    match path {
        #[cfg(target_arch = "x86_64")]
        SolverPath::Avx2 => avx2::solve_run::<TWO>(run, v, d, pass),
        #[cfg(target_arch = "aarch64")]
        SolverPath::Neon => neon::solve_run::<TWO>(run, v, d, pass),
        _ => solve_lanes::<Portable, TWO>(run, v, d, pass),
    }
}

/// Warm starts one run of 2 to [`LANES`] linear points on `path`.
fn warm_start_run<const TWO: bool>(path: SolverPath, run: &LaneRun, v: &mut [Velocity]) {
    match path {
        #[cfg(target_arch = "x86_64")]
        SolverPath::Avx2 => avx2::warm_start_run::<TWO>(run, v),
        #[cfg(target_arch = "aarch64")]
        SolverPath::Neon => neon::warm_start_run::<TWO>(run, v),
        _ => warm_start_lanes::<Portable, TWO>(run, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut of linear points with these bodies (`None`: a general
    /// constraint), as the steps it leaves.
    fn runs_of(constraints: &[Option<(u32, u32)>]) -> Vec<Step> {
        let mut order: Vec<Step> = constraints
            .iter()
            .map(|c| c.map_or(Step::General, |_| Step::Linear(1)))
            .collect();
        let linear: Vec<(u32, u32)> = constraints.iter().flatten().copied().collect();
        cut(&mut order, |l| linear[l]);
        order
    }

    #[test]
    fn runs_are_consecutive_body_disjoint_linear_points() {
        use Step::{General as G, Linear as L};
        let none = u32::MAX;
        // Six disjoint pairs: a run of four, then one of two.
        let disjoint: Vec<_> = (0..6).map(|i| Some((2 * i, 2 * i + 1))).collect();
        assert_eq!(runs_of(&disjoint), [L(4), L(2)]);
        // A shared body ends a run; a point left alone is solved alone.
        let shared = [
            Some((0, 1)),
            Some((2, 3)),
            Some((3, 4)),
            Some((5, 6)),
            Some((5, 7)),
        ];
        assert_eq!(runs_of(&shared), [L(2), L(2), L(1)]);
        // General constraints break runs.
        let mixed = [
            Some((0, 1)),
            None,
            Some((2, 3)),
            Some((4, 5)),
            None,
            Some((6, 7)),
        ];
        assert_eq!(runs_of(&mixed), [L(1), G, L(2), G, L(1)]);
        // Anchored points have no body A: only B can clash.
        let anchored = [
            Some((none, 1)),
            Some((none, 2)),
            Some((none, 1)),
            Some((none, 3)),
        ];
        assert_eq!(runs_of(&anchored), [L(2), L(2)]);
        assert!(runs_of(&[]).is_empty());
    }
}
