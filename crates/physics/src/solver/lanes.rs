//! Constraints solved four at a time, with the bits of solving them one
//! after another.
//!
//! **The same order.** A pass solves the constraints in the step's shuffled
//! order ([`solve`] and [`warm_start`] walk it). Two constraints that share no body commute: each reads and writes
//! only its own bodies' velocities and its own impulses. So a run of
//! consecutive constraints that share no body, taken together, leaves
//! exactly what taking them one by one leaves. [`plan`] cuts each step's
//! constraint lists into such runs of up to [`LANES`] (greedily, in order);
//! a pass solves each run in lanes and every other constraint alone. In a
//! crowd of thousands of bodies, consecutive constraints in a shuffled order
//! rarely share a body, so most runs are full.
//!
//! **What goes in lanes.** A *linear point*: a constraint that cannot turn
//! its bodies (no spin, see [`Constraint::spin`]), with one point and no
//! friction impulse now or to come. That is every contact of an RTS unit
//! (a sphere that cannot turn, frictionless) with the ground, a building or
//! another unit. Its warm start and its pass (one normal row) are mirrored
//! here on [`FxLanes`], operation for operation with `contact.rs`'s
//! `warm_start_one` and `solve_one` without spin (a test compares every
//! frame of a crowded scene on every path, and would see one unit of
//! difference in one impulse).
//!
//! **Paths.** [`SolverPath`] says which code runs the passes. It is a
//! machine setting, like the thread count: every path gives the same bits.
//! `Avx2` runs the kernels on `avx2::Avx2` lanes, one 256-bit register each
//! (four 32 × 32 → 64-bit products per instruction), in functions compiled
//! for AVX2; it is chosen at run time when the processor has it, and is the
//! crate's only unsafe code. `Portable` runs the same kernels on
//! [`Portable`] lanes, plain Rust: on x86_64 without AVX2 it costs about a
//! third more instructions than solving each constraint alone, so it is
//! never the default; it is the kernels' reference, which the cross check
//! runs on every architecture. Elsewhere the default is `Sequential` (a
//! NEON path for aarch64 would come next).

use std::sync::atomic::{AtomicU8, Ordering};

use lockstep_fx::lanes::{FxLanes, LANES, Portable, Raw};
use lockstep_fx::{Fx, Vec3};

use super::contact::{self, Constraint, Point};
use super::{Displacement, Pass, Velocity};

/// Which code solves the passes. Every path gives the same bits; the
/// choice is a machine setting, not state (see [`World::set_solver_path`](crate::World::set_solver_path)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum SolverPath {
    /// Every constraint alone (the reference).
    Sequential = 0,
    /// Runs of linear points in lanes of plain Rust, for the baseline
    /// instruction set of the target: the lane kernels' reference, run on
    /// every architecture by the tests and the cross check (slower than
    /// `Sequential`).
    Portable = 1,
    /// As `Portable`, compiled for AVX2 (x86_64 processors that have it).
    Avx2 = 2,
}

impl SolverPath {
    /// Whether this machine can run the path.
    pub fn is_available(self) -> bool {
        match self {
            SolverPath::Sequential | SolverPath::Portable => true,
            SolverPath::Avx2 => avx2_detected(),
        }
    }

    /// Every path this machine can run, the reference first.
    pub fn available() -> Vec<SolverPath> {
        [
            SolverPath::Sequential,
            SolverPath::Portable,
            SolverPath::Avx2,
        ]
        .into_iter()
        .filter(|p| p.is_available())
        .collect()
    }

    /// The fastest path this machine can run: AVX2 where the processor
    /// has it, else the sequential one (the portable lanes cost more
    /// instructions than solving each constraint alone: they are the lane
    /// kernels' reference, not a speed-up).
    pub fn best() -> SolverPath {
        if SolverPath::Avx2.is_available() {
            SolverPath::Avx2
        } else {
            SolverPath::Sequential
        }
    }

    /// The path a new world starts with: the last one given to
    /// [`SolverPath::set_default`] in this process, else [`SolverPath::best`].
    pub fn default_for_new_worlds() -> SolverPath {
        match DEFAULT.load(Ordering::Relaxed) {
            0 => SolverPath::Sequential,
            1 => SolverPath::Portable,
            2 => SolverPath::Avx2,
            _ => SolverPath::best(),
        }
    }

    /// Makes `path` the path of every world created from now on in this
    /// process (a machine setting for a whole program, e.g. to compare the
    /// paths' speed), if this machine can run it; returns whether it did.
    pub fn set_default(path: SolverPath) -> bool {
        let ok = path.is_available();
        if ok {
            DEFAULT.store(path as u8, Ordering::Relaxed);
        }
        ok
    }
}

/// [`SolverPath::set_default`]'s choice (`u8::MAX`: none, take the best).
static DEFAULT: AtomicU8 = AtomicU8::new(u8::MAX);

#[cfg(target_arch = "x86_64")]
fn avx2_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_detected() -> bool {
    false
}

/// Whether `c` is a linear point (see the module documentation).
fn is_linear_point(c: &Constraint) -> bool {
    !c.spin && c.count == 1 && c.friction.is_zero() && c.tangent_impulse == [Fx::ZERO; 2]
}

/// Cuts `constraints` (in solve order) into runs: `runs[i]` is the length
/// of the lane run that starts at `i` (2 to [`LANES`]), or 0 where
/// constraint `i` is solved alone or inside a run. Empty when there is no
/// run (and always on the sequential path).
pub(crate) fn plan<const TWO: bool>(
    constraints: &[Constraint],
    path: SolverPath,
    runs: &mut Vec<u8>,
) {
    runs.clear();
    if path != SolverPath::Sequential {
        cut(
            constraints.len(),
            |i| {
                let c = &constraints[i];
                is_linear_point(c).then_some((if TWO { c.a } else { u32::MAX }, c.b))
            },
            runs,
        );
    }
}

/// [`plan`]'s cut of `n` constraints, given each one's bodies if it is a
/// linear point (`u32::MAX` for no body): greedily, in order, each run as
/// long as it can be while its constraints share no body; `runs` is left
/// empty if there is none.
fn cut(n: usize, bodies_of: impl Fn(usize) -> Option<(u32, u32)>, runs: &mut Vec<u8>) {
    runs.clear();
    runs.resize(n, 0);
    let mut found = false;
    let mut i = 0;
    while i < n {
        let mut taken = [u32::MAX; 2 * LANES];
        let mut k = 0;
        while k < LANES && i + k < n {
            let Some((a, b)) = bodies_of(i + k) else {
                break;
            };
            let clash = |x: u32| x != u32::MAX && taken[..2 * k].contains(&x);
            if clash(a) || clash(b) {
                break;
            }
            taken[2 * k] = a;
            taken[2 * k + 1] = b;
            k += 1;
        }
        if k >= 2 {
            runs[i] = k as u8;
            i += k;
            found = true;
        } else {
            i += 1;
        }
    }
    if !found {
        runs.clear();
    }
}

/// One pass over `constraints` in their order: each run of `runs`
/// ([`plan`]'s cut, empty for none) in lanes on `path`, every other
/// constraint alone.
pub(crate) fn solve<const TWO: bool>(
    constraints: &mut [Constraint],
    runs: &[u8],
    path: SolverPath,
    points: &mut [Point],
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    let mut i = 0;
    while i < constraints.len() {
        let k = runs.get(i).map_or(0, |&k| usize::from(k));
        if k > 1 {
            solve_run::<TWO>(path, &mut constraints[i..i + k], points, v, d, pass);
            i += k;
        } else {
            contact::solve_alone::<TWO>(&mut constraints[i], points, v, d, pass);
            i += 1;
        }
    }
}

/// Warm starts `constraints` in their order, runs in lanes as [`solve`]
/// solves them.
pub(crate) fn warm_start<const TWO: bool>(
    constraints: &[Constraint],
    runs: &[u8],
    path: SolverPath,
    points: &[Point],
    v: &mut [Velocity],
) {
    let mut i = 0;
    while i < constraints.len() {
        let k = runs.get(i).map_or(0, |&k| usize::from(k));
        if k > 1 {
            warm_start_run::<TWO>(path, &constraints[i..i + k], points, v);
            i += k;
        } else {
            contact::warm_start_alone::<TWO>(&constraints[i], points, v);
            i += 1;
        }
    }
}

/// Solves one run of 2 to [`LANES`] linear points (see [`plan`]) on `path`.
fn solve_run<const TWO: bool>(
    path: SolverPath,
    run: &mut [Constraint],
    points: &mut [Point],
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    match path {
        #[cfg(target_arch = "x86_64")]
        SolverPath::Avx2 => avx2::solve_run::<TWO>(run, points, v, d, pass),
        _ => solve_lanes::<Portable, TWO>(run, points, v, d, pass),
    }
}

/// Warm starts one run of 2 to [`LANES`] linear points on `path`.
fn warm_start_run<const TWO: bool>(
    path: SolverPath,
    run: &[Constraint],
    points: &[Point],
    v: &mut [Velocity],
) {
    match path {
        #[cfg(target_arch = "x86_64")]
        SolverPath::Avx2 => avx2::warm_start_run::<TWO>(run, points, v),
        _ => warm_start_lanes::<Portable, TWO>(run, points, v),
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

/// What every kernel reads of a run's constraints and bodies: the normals,
/// the bodies' linear velocities (A's zero when anchored) and inverse
/// masses. Lanes past the run repeat its last constraint.
struct Linear<L> {
    normal: Lanes3<L>,
    vb: Lanes3<L>,
    va: Lanes3<L>,
    inv_mass_a: L,
    inv_mass_b: L,
}

impl<L: FxLanes> Linear<L> {
    #[inline(always)]
    fn gather<const TWO: bool>(run: &[Constraint], v: &[Velocity]) -> Linear<L> {
        let k = run.len();
        debug_assert!((2..=LANES).contains(&k));
        let (mut normal, mut vb, mut va) = (Raw3::default(), Raw3::default(), Raw3::default());
        let (mut inv_mass_a, mut inv_mass_b) = ([0; LANES], [0; LANES]);
        for l in 0..LANES {
            let c = &run[l.min(k - 1)];
            normal.put(l, c.normal);
            vb.put(l, v[c.b as usize].linear);
            if TWO {
                va.put(l, v[c.a as usize].linear);
            }
            inv_mass_a[l] = c.inv_mass_a.to_bits();
            inv_mass_b[l] = c.inv_mass_b.to_bits();
        }
        Linear {
            normal: normal.lanes(),
            vb: vb.lanes(),
            va: va.lanes(),
            inv_mass_a: L::from_raw(inv_mass_a),
            inv_mass_b: L::from_raw(inv_mass_b),
        }
    }

    /// Applies a normal impulse `lambda` to both bodies and writes their
    /// velocities back: `linear_impulse(λ, [0, 0])` (each component
    /// rounded once), then `vB += scale(linear, 1/mB)`,
    /// `vA −= scale(linear, 1/mA)`.
    #[inline(always)]
    fn push<const TWO: bool>(&self, lambda: L, run: &[Constraint], v: &mut [Velocity]) {
        let (mut new_b, mut new_a) = ([L::splat(0); 3], [L::splat(0); 3]);
        for i in 0..3 {
            let linear = self.normal[i].mul(lambda);
            new_b[i] = self.vb[i].add(linear.mul(self.inv_mass_b));
            if TWO {
                new_a[i] = self.va[i].sub(linear.mul(self.inv_mass_a));
            }
        }
        let (new_b, new_a) = (Raw3::of(new_b), Raw3::of(new_a));
        for (l, c) in run.iter().enumerate() {
            v[c.b as usize].linear = new_b.get(l);
            if TWO {
                v[c.a as usize].linear = new_a.get(l);
            }
        }
    }
}

/// `contact::warm_start_one::<TWO, false>` for a run of linear points: each
/// point's accumulated impulse applied again.
#[inline(always)]
fn warm_start_lanes<L: FxLanes, const TWO: bool>(
    run: &[Constraint],
    points: &[Point],
    v: &mut [Velocity],
) {
    let bodies = Linear::<L>::gather::<TWO>(run, v);
    let k = run.len();
    let impulse: Raw =
        core::array::from_fn(|l| points[run[l.min(k - 1)].first as usize].impulse.to_bits());
    bodies.push::<TWO>(L::from_raw(impulse), run, v);
}

/// The pass of `contact::solve_one::<TWO, false>` for a run of linear
/// points, each lane one constraint, on lanes `L` (lanes past the run
/// repeat its last constraint and are not written back).
#[inline(always)]
fn solve_lanes<L: FxLanes, const TWO: bool>(
    run: &mut [Constraint],
    points: &mut [Point],
    v: &mut [Velocity],
    d: &[Displacement],
    pass: &Pass,
) {
    let k = run.len();
    let bodies = Linear::<L>::gather::<TWO>(run, v);
    let (mut db, mut da) = (Raw3::default(), Raw3::default());
    let [mut base, mut separation, mut old, mut mass, mut soft_mass]: [Raw; 5] = Default::default();
    let [mut bias_rate, mut impulse_scale]: [Raw; 2] = Default::default();
    for l in 0..LANES {
        let c = &run[l.min(k - 1)];
        if pass.refresh {
            db.put(l, d[c.b as usize].linear);
            if TWO {
                da.put(l, d[c.a as usize].linear);
            }
        }
        let p = &points[c.first as usize];
        base[l] = p.base.to_bits();
        separation[l] = p.separation.to_bits();
        old[l] = p.impulse.to_bits();
        mass[l] = p.mass.to_bits();
        soft_mass[l] = p.soft_mass.to_bits();
        bias_rate[l] = c.soft.bias_rate.to_bits();
        impulse_scale[l] = c.soft.impulse_scale.to_bits();
    }
    let normal = bodies.normal;
    let old = L::from_raw(old);
    let mut separation = L::from_raw(separation);
    if pass.refresh {
        // `add(base, add(apart, 0))`: no turning term without spin.
        let apart = L::dot(normal, sub3(db.lanes(), da.lanes()));
        separation = L::from_raw(base).add(apart);
    }
    let vn = L::dot(normal, sub3(bodies.vb, bodies.va));

    // The one normal row (`contact::row`): ahead of contact, close the gap
    // within the substep; in contact, push out (soft) or hold (rigid).
    let zero = L::splat(0);
    let ahead = separation.positive();
    let rate = L::select(
        ahead,
        L::splat(pass.inv_h.to_bits()),
        L::from_raw(bias_rate),
    );
    let scaled = separation.mul(rate);
    let mass = L::from_raw(mass);
    let (target, row_mass, leak) = if pass.bias {
        let push = scaled.max(L::splat((-pass.max_push).to_bits()));
        (
            L::select(ahead, scaled, push),
            L::select(ahead, mass, L::from_raw(soft_mass)),
            L::select(ahead, zero, L::from_raw(impulse_scale).mul(old)),
        )
    } else {
        (L::select(ahead, scaled, zero), mass, zero)
    };
    let delta = zero.sub(row_mass.mul(vn.add(target))).sub(leak);
    let impulse = old.add(delta).max(zero);
    bodies.push::<TWO>(impulse.sub(old), run, v);

    let (separation, impulse) = (separation.to_raw(), impulse.to_raw());
    for (l, c) in run.iter().enumerate() {
        let p = &mut points[c.first as usize];
        p.separation = Fx::from_bits(separation[l]);
        p.impulse = Fx::from_bits(impulse[l]);
        contact::count_linear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(constraints: &[Option<(u32, u32)>]) -> Vec<u8> {
        let mut runs = vec![9; 3];
        cut(constraints.len(), |i| constraints[i], &mut runs);
        runs
    }

    #[test]
    fn runs_are_consecutive_body_disjoint_linear_points() {
        let none = u32::MAX;
        // Six disjoint pairs: a run of four, then one of two.
        let disjoint: Vec<_> = (0..6).map(|i| Some((2 * i, 2 * i + 1))).collect();
        assert_eq!(runs_of(&disjoint), [4, 0, 0, 0, 2, 0]);
        // A shared body ends a run; a constraint left alone is solved alone.
        let shared = [
            Some((0, 1)),
            Some((2, 3)),
            Some((3, 4)),
            Some((5, 6)),
            Some((5, 7)),
        ];
        assert_eq!(runs_of(&shared), [2, 0, 2, 0, 0]);
        // Constraints that are not linear points break runs.
        let mixed = [
            Some((0, 1)),
            None,
            Some((2, 3)),
            Some((4, 5)),
            None,
            Some((6, 7)),
        ];
        assert_eq!(runs_of(&mixed), [0, 0, 2, 0, 0, 0]);
        // No run at all: nothing to look up.
        assert!(runs_of(&[Some((0, 1)), None, Some((1, 2)), Some((2, 3))]).is_empty());
        // Anchored constraints have no body A: only B can clash.
        let anchored = [
            Some((none, 1)),
            Some((none, 2)),
            Some((none, 1)),
            Some((none, 3)),
        ];
        assert_eq!(runs_of(&anchored), [2, 0, 2, 0]);
        assert!(runs_of(&[]).is_empty());
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    //! The lane kernel on AVX2: [`FxLanes`] for four `i64` in one 256-bit
    //! register, and the kernel compiled for AVX2. This is the physics
    //! crate's only unsafe code: vector intrinsics, and the call into a
    //! function compiled for an instruction set the processor was checked
    //! to have. Nothing here is reachable unless `SolverPath::Avx2` was
    //! found available.

    use core::arch::x86_64::{
        __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_blend_epi32, _mm256_blendv_epi8,
        _mm256_cmpgt_epi64, _mm256_loadu_si256, _mm256_mul_epu32, _mm256_set1_epi64x,
        _mm256_setzero_si256, _mm256_slli_epi64, _mm256_srli_epi64, _mm256_storeu_si256,
        _mm256_sub_epi64,
    };

    use lockstep_fx::lanes::{FxLanes, LANES, Raw};

    use super::{Constraint, Displacement, Pass, Point, Velocity};

    /// Four lanes in one AVX2 register.
    #[derive(Clone, Copy)]
    pub(super) struct Avx2(__m256i);

    /// Four sums: the part that survives rounding and the low halves (as
    /// `Portable`'s sums).
    #[derive(Clone, Copy)]
    pub(super) struct Avx2Sum {
        hi: __m256i,
        lo: __m256i,
    }

    // SAFETY (every block below): an `Avx2` value exists only inside
    // the two kernels below, which run only on a processor with AVX2.
    impl FxLanes for Avx2 {
        type Sum = Avx2Sum;

        #[inline(always)]
        fn from_raw(raw: Raw) -> Avx2 {
            Avx2(unsafe { _mm256_loadu_si256(raw.as_ptr().cast()) })
        }

        #[inline(always)]
        fn to_raw(self) -> Raw {
            let mut out = [0; LANES];
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) };
            out
        }

        #[inline(always)]
        fn splat(raw: i64) -> Avx2 {
            Avx2(unsafe { _mm256_set1_epi64x(raw) })
        }

        #[inline(always)]
        fn add(self, o: Avx2) -> Avx2 {
            Avx2(unsafe { _mm256_add_epi64(self.0, o.0) })
        }

        #[inline(always)]
        fn sub(self, o: Avx2) -> Avx2 {
            Avx2(unsafe { _mm256_sub_epi64(self.0, o.0) })
        }

        #[inline(always)]
        fn max(self, o: Avx2) -> Avx2 {
            Avx2::select(o.sub_gt(self), o, self)
        }

        #[inline(always)]
        fn positive(self) -> Avx2 {
            self.sub_gt(Avx2::splat(0))
        }

        #[inline(always)]
        fn select(mask: Avx2, yes: Avx2, no: Avx2) -> Avx2 {
            Avx2(unsafe { _mm256_blendv_epi8(no.0, yes.0, mask.0) })
        }

        #[inline(always)]
        fn sum_zero() -> Avx2Sum {
            let z = unsafe { _mm256_setzero_si256() };
            Avx2Sum { hi: z, lo: z }
        }

        #[inline(always)]
        fn add_product(sum: &mut Avx2Sum, a: Avx2, b: Avx2) {
            // `Portable::add_product`, four lanes per instruction.
            unsafe {
                let (x, y) = (a.0, b.0);
                let z = _mm256_setzero_si256();
                let (xh, yh) = (_mm256_srli_epi64(x, 32), _mm256_srli_epi64(y, 32));
                let hh = _mm256_slli_epi64(_mm256_mul_epu32(xh, yh), 32);
                let x_negative = _mm256_cmpgt_epi64(z, x);
                let y_negative = _mm256_cmpgt_epi64(z, y);
                let hl = _mm256_sub_epi64(
                    _mm256_mul_epu32(xh, y),
                    _mm256_and_si256(x_negative, _mm256_slli_epi64(y, 32)),
                );
                let lh = _mm256_sub_epi64(
                    _mm256_mul_epu32(x, yh),
                    _mm256_and_si256(y_negative, _mm256_slli_epi64(x, 32)),
                );
                let ll = _mm256_mul_epu32(x, y);
                let high = _mm256_add_epi64(
                    _mm256_add_epi64(hh, hl),
                    _mm256_add_epi64(lh, _mm256_srli_epi64(ll, 32)),
                );
                sum.hi = _mm256_add_epi64(sum.hi, high);
                // The low 32 bits of each 64-bit lane of `ll`.
                sum.lo = _mm256_add_epi64(sum.lo, _mm256_blend_epi32(ll, z, 0b1010_1010));
            }
        }

        #[inline(always)]
        fn round(sum: Avx2Sum) -> Avx2 {
            unsafe {
                let half = _mm256_set1_epi64x(1 << 31);
                let carry = _mm256_srli_epi64(_mm256_add_epi64(sum.lo, half), 32);
                Avx2(_mm256_add_epi64(sum.hi, carry))
            }
        }
    }

    impl Avx2 {
        /// A mask of the lanes where `self > o`.
        #[inline(always)]
        fn sub_gt(self, o: Avx2) -> Avx2 {
            Avx2(unsafe { _mm256_cmpgt_epi64(self.0, o.0) })
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn solve<const TWO: bool>(
        run: &mut [Constraint],
        points: &mut [Point],
        v: &mut [Velocity],
        d: &[Displacement],
        pass: &Pass,
    ) {
        super::solve_lanes::<Avx2, TWO>(run, points, v, d, pass);
    }

    #[target_feature(enable = "avx2")]
    unsafe fn warm_start<const TWO: bool>(
        run: &[Constraint],
        points: &[Point],
        v: &mut [Velocity],
    ) {
        super::warm_start_lanes::<Avx2, TWO>(run, points, v);
    }

    // SAFETY (both calls below): the world takes this path only when
    // `SolverPath::Avx2` is available, i.e. the processor reports AVX2
    // (`World::set_solver_path` and `SolverPath::set_default` refuse it
    // otherwise).

    pub(super) fn solve_run<const TWO: bool>(
        run: &mut [Constraint],
        points: &mut [Point],
        v: &mut [Velocity],
        d: &[Displacement],
        pass: &Pass,
    ) {
        debug_assert!(super::avx2_detected());
        unsafe { solve::<TWO>(run, points, v, d, pass) }
    }

    pub(super) fn warm_start_run<const TWO: bool>(
        run: &[Constraint],
        points: &[Point],
        v: &mut [Velocity],
    ) {
        debug_assert!(super::avx2_detected());
        unsafe { warm_start::<TWO>(run, points, v) }
    }

    #[cfg(test)]
    mod tests {
        use lockstep_fx::lanes::{FxLanes, Portable, Raw};

        use super::Avx2;

        /// Runs `f` on both implementations (when the processor has AVX2)
        /// and compares the results.
        fn same(a: Raw, b: Raw) {
            if !super::super::avx2_detected() {
                return;
            }
            let (p, q) = (Portable(a), Portable(b));
            let (x, y) = (Avx2::from_raw(a), Avx2::from_raw(b));
            assert_eq!(x.mul(y).to_raw(), p.mul(q).0, "{a:?} * {b:?}");
            assert_eq!(x.add(y).to_raw(), p.add(q).0);
            assert_eq!(x.sub(y).to_raw(), p.sub(q).0);
            assert_eq!(x.max(y).to_raw(), p.max(q).0);
            assert_eq!(x.positive().to_raw(), p.positive().0);
            assert_eq!(
                Avx2::select(x.positive(), x, y).to_raw(),
                Portable::select(p.positive(), p, q).0
            );
            assert_eq!(
                Avx2::dot([x, y, x], [y, y, x]).to_raw(),
                Portable::dot([p, q, p], [q, q, p]).0
            );
        }

        #[test]
        fn avx2_lanes_give_the_portable_bits() {
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
                same([r(), r(), r(), r()], [r(), r(), r(), r()]);
            }
        }
    }
}
