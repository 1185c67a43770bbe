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

use lockstep_fx::wide::wrapping::{add, add3, cross, dot, mat_vec, mul, sub, sub3};
use lockstep_fx::{Fx, Mat3, Vec3, Wide};

use super::block::{Block, RowTarget};
use super::products::{
    self, ARM, Exact, K, MASS, Narrow, Products, RATIO, Scales, Sum3, UNIT, Widest,
};
use super::{Displacement, Motion, Pass, Softness, Velocity};

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

/// Builds a constraint from a manifold, appending its points to `points`;
/// `velocities` are those before solving (for restitution). Anchored
/// constraints (`TWO == false`) ignore `a`.
pub(crate) fn prepare<const TWO: bool>(
    a: &BodyInfo,
    b: &BodyInfo,
    m: &ManifoldInput<'_>,
    velocities: &[super::Velocity],
    points: &mut Vec<Point>,
) -> Constraint {
    let n = m.normal;
    // A frictionless contact that carries no friction impulse never has
    // one: its tangents only ever meet zero impulses, so any will do, and
    // its friction block is never solved (every pass finds it idle).
    let frictionless = m.friction.is_zero() && m.friction_impulse == Vec3::ZERO;
    let (t0, t1) = if frictionless {
        (Vec3::ZERO, Vec3::ZERO)
    } else {
        n.any_orthonormal_pair()
    };
    let (ima, ia) = if TWO {
        (a.inv_mass, a.inv_inertia)
    } else {
        (Fx::ZERO, Mat3::ZERO)
    };
    let (imb, ib) = (b.inv_mass, b.inv_inertia);
    let va = if TWO {
        velocities[a.index as usize]
    } else {
        Velocity::default()
    };
    let vb = velocities[b.index as usize];
    let turns = turns::<TWO>(a, b, velocities);
    let spin = turns || probe::full_path_forced();
    let count = m.points.len().min(4);
    let first = points.len() as u32;
    let inv_mass_sum = ima + imb;
    let (mut centre, mut arms_a, mut arms_b) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
    for p in &m.points[..count] {
        // Without spin the lever arms meet only zero inertia and zero
        // angular velocities: leaving them zero changes no result.
        let (ja, ka) = if TWO && spin {
            let ja = cross(p.arm_a, n);
            (ja, mat_vec(&ia, ja))
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        let (jb, kb) = if spin {
            let jb = cross(p.arm_b, n);
            (jb, mat_vec(&ib, jb))
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        let diagonal = inv_mass_sum + dot(ja, ka) + dot(jb, kb);
        let mass = inverse(diagonal);
        let approach = if m.restitution.is_zero() {
            Fx::ZERO
        } else {
            dot(n, vb.linear - va.linear)
                + angular::<TWO, Exact>(ja, va.angular, jb, vb.angular, ARM)
        };
        points.push(Point {
            diagonal,
            ja,
            jb,
            ka,
            kb,
            mass,
            soft_mass: mass * m.soft.mass_scale,
            impulse: p.impulse,
            base: p.separation,
            separation: p.separation,
            approach,
        });
        centre += p.position;
        arms_a += p.arm_a;
        arms_b += p.arm_b;
    }
    let mut coupling = [Fx::ZERO; 6];
    {
        let pts = &points[first as usize..];
        for (slot, (i, j)) in PAIRS.iter().enumerate() {
            if *j < count {
                let (p, q) = (&pts[*i], &pts[*j]);
                coupling[slot] = inv_mass_sum + dot(p.ja, q.ka) + dot(p.jb, q.kb);
            }
        }
    }
    let mut diagonals = [Fx::ZERO; 4];
    for (d, p) in diagonals.iter_mut().zip(&points[first as usize..]) {
        *d = p.diagonal;
    }
    let block = Block::new(count, diagonals, coupling, m.soft);
    let k = count.max(1) as i64;
    let mean = |v: Vec3| Vec3::new(v.x.div_int(k), v.y.div_int(k), v.z.div_int(k));
    // Friction acts at the points' centroid, through their mean arms.
    let (centre, arm_a, arm_b) = (mean(centre), mean(arms_a), mean(arms_b));
    let tangents = [t0, t1];
    let mut tja = [Vec3::ZERO; 2];
    let mut tka = [Vec3::ZERO; 2];
    let mut tjb = [Vec3::ZERO; 2];
    let mut tkb = [Vec3::ZERO; 2];
    for (i, t) in tangents.into_iter().enumerate().filter(|_| spin) {
        if TWO {
            tja[i] = cross(arm_a, t);
            tka[i] = mat_vec(&ia, tja[i]);
        }
        tjb[i] = cross(arm_b, t);
        tkb[i] = mat_vec(&ib, tjb[i]);
    }
    // K⁻¹ of the tangent block (t0 ⊥ t1, so the linear part is
    // diagonal); a frictionless block is never solved.
    let tangent_inverse = if frictionless {
        [Fx::ZERO; 3]
    } else {
        let k00 = inv_mass_sum + dot(tja[0], tka[0]) + dot(tjb[0], tkb[0]);
        let k11 = inv_mass_sum + dot(tja[1], tka[1]) + dot(tjb[1], tkb[1]);
        let k01 = dot(tja[0], tka[1]) + dot(tjb[0], tkb[1]);
        let det = k00.mul_add_mul(k11, -k01, k01);
        if det.is_positive() {
            [k11 / det, -k01 / det, k00 / det]
        } else {
            [Fx::ZERO; 3]
        }
    };
    // The twist lever arm: the points' root-mean-square distance from the
    // centroid (one square root per manifold).
    let spread = m.points[..count]
        .iter()
        .fold(Fx::ZERO, |s, p| s + (p.position - centre).length_squared());
    let (twist_ka, twist_kb) = if count > 1 {
        (mat_vec(&ia, n), mat_vec(&ib, n))
    } else {
        (Vec3::ZERO, Vec3::ZERO)
    };
    let twist_mass = inverse(n.dot(twist_ka) + n.dot(twist_kb));
    let twist_radius = spread.div_int(k).sqrt();
    let mut c = Constraint {
        a: a.index,
        b: b.index,
        first,
        count: count as u8,
        coupling,
        inv_mass_a: ima,
        inv_mass_b: imb,
        normal: n,
        tangents,
        tja,
        tjb,
        tka,
        tkb,
        tangent_inverse,
        tangent_impulse: [m.friction_impulse.dot(t0), m.friction_impulse.dot(t1)],
        twist_ka,
        twist_kb,
        twist_mass,
        twist_impulse: if count > 1 { m.twist_impulse } else { Fx::ZERO },
        friction: m.friction,
        twist_radius,
        restitution: m.restitution,
        soft: m.soft,
        block,
        spin,
        narrow: false,
        scales: Scales::default(),
    };
    if turns && m.restitution.is_zero() {
        c.make_narrow(&mut points[first as usize..]);
    }
    c
}

impl Constraint {
    /// Turns a constraint just built into its narrow form, when its
    /// constants fit (see `products.rs`): the constants the passes read
    /// narrowed, the impulses (and the block's factors) in its impulse
    /// unit. Only a constraint that does not bounce is made narrow:
    /// restitution reads the constants as they are.
    fn make_narrow(&mut self, pts: &mut [Point]) {
        let [mut arms, mut masses, mut ks, mut ratios] = [Widest::default(); 4];
        for p in pts.iter() {
            arms.take3(p.ja);
            arms.take3(p.jb);
            ks.take3(p.ka);
            ks.take3(p.kb);
            ks.take(p.diagonal);
            masses.take(p.mass);
            masses.take(p.soft_mass);
        }
        for i in 0..2 {
            arms.take3(self.tja[i]);
            arms.take3(self.tjb[i]);
            ks.take3(self.tka[i]);
            ks.take3(self.tkb[i]);
        }
        arms.take(self.twist_radius);
        self.coupling.iter().for_each(|&e| ks.take(e));
        ks.take3(self.twist_ka);
        ks.take3(self.twist_kb);
        ks.take(self.inv_mass_a);
        ks.take(self.inv_mass_b);
        self.tangent_inverse.iter().for_each(|&e| masses.take(e));
        masses.take(self.twist_mass);
        ratios.take(self.friction);
        ratios.take(self.soft.impulse_scale);
        let Some(f) = Scales::new(arms, masses, ks, ratios) else {
            return;
        };
        for p in pts.iter_mut() {
            p.ja = f.arm(p.ja);
            p.jb = f.arm(p.jb);
            p.ka = f.k(p.ka);
            p.kb = f.k(p.kb);
            p.diagonal = f.k1(p.diagonal);
            p.mass = f.mass(p.mass);
            p.soft_mass = f.mass(p.soft_mass);
            p.impulse = f.unit_impulse(p.impulse);
        }
        self.coupling = self.coupling.map(|e| f.k1(e));
        self.inv_mass_a = f.k1(self.inv_mass_a);
        self.inv_mass_b = f.k1(self.inv_mass_b);
        self.normal = f.unit(self.normal);
        self.tangents = self.tangents.map(|t| f.unit(t));
        self.tja = self.tja.map(|v| f.arm(v));
        self.tjb = self.tjb.map(|v| f.arm(v));
        self.tka = self.tka.map(|v| f.k(v));
        self.tkb = self.tkb.map(|v| f.k(v));
        self.tangent_inverse = self.tangent_inverse.map(|m| f.mass(m));
        self.tangent_impulse = self.tangent_impulse.map(|l| f.unit_impulse(l));
        self.twist_ka = f.k(self.twist_ka);
        self.twist_kb = f.k(self.twist_kb);
        self.twist_mass = f.mass(self.twist_mass);
        self.twist_impulse = f.unit_impulse(self.twist_impulse);
        self.friction = f.ratio(self.friction);
        self.twist_radius = f.arm1(self.twist_radius);
        self.soft.impulse_scale = f.ratio(self.soft.impulse_scale);
        self.block.rescale_impulses(f.impulse);
        self.scales = f;
        self.narrow = true;
    }

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

/// Applies one constraint's accumulated impulses (warm starting a
/// substep; the walk over the solve order is `lanes::warm_start`).
#[inline(always)]
pub(super) fn warm_start_alone<const TWO: bool, M: Motion>(
    c: &Constraint,
    pts: &[Point],
    m: &mut M,
) {
    match (c.spin, c.narrow) {
        (true, true) => warm_start_one::<TWO, true, Narrow, M>(c, pts, m),
        (true, false) => warm_start_one::<TWO, true, Exact, M>(c, pts, m),
        (false, _) => warm_start_one::<TWO, false, Exact, M>(c, pts, m),
    }
}

#[inline(always)]
fn warm_start_one<const TWO: bool, const SPIN: bool, P: Products, M: Motion>(
    c: &Constraint,
    pts: &[Point],
    m: &mut M,
) {
    let (mut va, mut vb) = load::<TWO, M>(c, m);
    let mut turn_a = Sum3::<P>::default();
    let mut turn_b = Sum3::<P>::default();
    let mut normal = Fx::ZERO;
    for p in pts {
        normal = add(normal, p.impulse);
        if TWO && SPIN {
            turn_a.add(p.ka, p.impulse);
        }
        if SPIN {
            turn_b.add(p.kb, p.impulse);
        }
    }
    for k in (0..2).filter(|_| SPIN) {
        if TWO {
            turn_a.add(c.tka[k], c.tangent_impulse[k]);
        }
        turn_b.add(c.tkb[k], c.tangent_impulse[k]);
    }
    if SPIN && c.count > 1 {
        turn_b.add(c.twist_kb, c.twist_impulse);
        if TWO {
            turn_a.add(c.twist_ka, c.twist_impulse);
        }
    }
    let linear = c.linear_impulse::<P>(normal, c.tangent_impulse);
    if TWO {
        va.linear = sub3(va.linear, products::times::<P>(linear, c.inv_mass_a, K));
        if SPIN {
            va.angular = sub3(va.angular, turn_a.round(K));
        }
    }
    vb.linear = add3(vb.linear, products::times::<P>(linear, c.inv_mass_b, K));
    if SPIN {
        vb.angular = add3(vb.angular, turn_b.round(K));
    }
    store::<TWO, M>(c, m, va, vb);
}

/// Clamps a 2D impulse to the disc of radius `limit` (≥ 0).
#[inline(always)]
fn cap(x: Fx, y: Fx, limit: Fx) -> [Fx; 2] {
    if limit.is_zero() {
        // What the scaling below gives, without its square root.
        return [Fx::ZERO; 2];
    }
    let len2 = Wide::product(x, x).wrapping_add(Wide::product(y, y));
    if len2 <= Wide::product(limit, limit) {
        return [x, y];
    }
    let len = Vec3::new(x, y, Fx::ZERO).length();
    if !len.is_positive() {
        return [Fx::ZERO; 2];
    }
    let f = (limit / len).min(Fx::ONE);
    [mul(x, f), mul(y, f)]
}

/// One general constraint of a pass, on the path its spin allows (the
/// pass's walk over the solve order is `lanes::solve`).
#[inline(always)]
pub(super) fn solve_alone<const TWO: bool, M: Motion>(
    c: &mut Constraint,
    pts: &mut [Point],
    m: &mut M,
    pass: &Pass,
) {
    match (c.spin, c.narrow) {
        (true, true) => solve_one::<TWO, true, Narrow, M>(c, pts, m, pass),
        (true, false) => solve_one::<TWO, true, Exact, M>(c, pts, m, pass),
        (false, _) => {
            probe::count_linear();
            solve_one::<TWO, false, Exact, M>(c, pts, m, pass);
        }
    }
}

/// Counts a constraint solved without its angular terms (tests only).
#[inline(always)]
pub(super) fn count_linear() {
    probe::count_linear();
}

/// One constraint of a pass; without `SPIN` every angular term is left out
/// (see [`Constraint::spin`]).
#[inline(always)]
fn solve_one<const TWO: bool, const SPIN: bool, P: Products, M: Motion>(
    c: &mut Constraint,
    pts: &mut [Point],
    m: &mut M,
    pass: &Pass,
) {
    let (mut va, mut vb) = load::<TWO, M>(c, m);
    let dv = sub3(vb.linear, va.linear);
    let (mut wa, mut wb) = (va.angular, vb.angular);

    // Friction, bounded by the normal impulses of the pass before.
    let total = pts.iter().fold(Fx::ZERO, |s, p| add(s, p.impulse));
    let limit = products::mul::<P>(c.friction, total, RATIO);
    let old = c.tangent_impulse;
    // No friction to apply and none to take back (frictionless, or no
    // normal impulse yet): the block below would change nothing.
    let idle = limit.is_zero() && old == [Fx::ZERO; 2];
    let dt = if idle {
        [Fx::ZERO; 2]
    } else {
        let vt = [
            add(
                products::dot::<P>(c.tangents[0], dv, UNIT),
                turning::<TWO, SPIN, P>(c.tja[0], wa, c.tjb[0], wb, ARM),
            ),
            add(
                products::dot::<P>(c.tangents[1], dv, UNIT),
                turning::<TWO, SPIN, P>(c.tja[1], wa, c.tjb[1], wb, ARM),
            ),
        ];
        let inv = c.tangent_inverse;
        let step = |i0: Fx, i1: Fx| P::round(P::plus(P::term(i0, vt[0]), P::term(i1, vt[1])), MASS);
        let new = cap(
            sub(old[0], step(inv[0], inv[1])),
            sub(old[1], step(inv[1], inv[2])),
            limit,
        );
        let dt = [sub(new[0], old[0]), sub(new[1], old[1])];
        c.tangent_impulse = new;
        if SPIN {
            let mut turn_b = Sum3::<P>::default();
            turn_b.add(c.tkb[0], dt[0]);
            turn_b.add(c.tkb[1], dt[1]);
            wb = add3(wb, turn_b.round(K));
            if TWO {
                let mut turn_a = Sum3::<P>::default();
                turn_a.add(c.tka[0], dt[0]);
                turn_a.add(c.tka[1], dt[1]);
                wa = sub3(wa, turn_a.round(K));
            }
        }
        dt
    };
    // Twist (a single point has no lever arm to resist it). Without
    // spin nothing turns, but the impulse still follows its limit.
    if c.count > 1 {
        let twist_limit = products::mul::<P>(c.twist_radius, limit, ARM);
        if SPIN {
            let spin = products::dot::<P>(c.normal, sub3(wb, wa), UNIT);
            let old = c.twist_impulse;
            let push = products::mul::<P>(c.twist_mass, spin, MASS);
            c.twist_impulse = sub(old, push).clamp(-twist_limit, twist_limit);
            let dw = sub(c.twist_impulse, old);
            wb = add3(wb, products::scale::<P>(c.twist_kb, dw, K));
            if TWO {
                wa = sub3(wa, products::scale::<P>(c.twist_ka, dw, K));
            }
        } else {
            c.twist_impulse = c.twist_impulse.clamp(-twist_limit, twist_limit);
        }
    }

    // Normal rows.
    if pass.refresh {
        let db = m.displacement(c.b);
        let da = if TWO {
            m.displacement(c.a)
        } else {
            Displacement::default()
        };
        let apart = products::dot::<P>(c.normal, sub3(db.linear, da.linear), UNIT);
        for p in pts.iter_mut() {
            let turn = turning::<TWO, SPIN, P>(p.ja, da.angular, p.jb, db.angular, ARM);
            p.separation = add(p.base, add(apart, turn));
        }
    }
    // The points' normal velocities, then Gauss–Seidel sweeps in the
    // rows' space (each impulse moves the others' velocities through
    // `K`); the bodies take the sum of the changes at the end.
    let linear_part = products::dot::<P>(c.normal, dv, UNIT);
    let n = pts.len();
    let mut vn = [Fx::ZERO; 4];
    for (v, p) in vn.iter_mut().zip(pts.iter()) {
        *v = add(
            linear_part,
            turning::<TWO, SPIN, P>(p.ja, wa, p.jb, wb, ARM),
        );
    }
    let mut change = [Fx::ZERO; 4];
    if let Some(next) = block_impulses(c, pass, pts, &vn) {
        for ((p, d), next) in pts.iter_mut().zip(&mut change).zip(next) {
            *d = sub(next, p.impulse);
            p.impulse = next;
        }
    } else {
        // A single row has no coupling to converge: one sweep.
        let sweeps = if n > 1 { SWEEPS } else { 1 };
        for _sweep in 1..sweeps {
            for i in 0..n {
                row::<false, P>(c, pass, pts, i, &mut vn, &mut change);
            }
        }
        for i in 0..n {
            row::<true, P>(c, pass, pts, i, &mut vn, &mut change);
        }
    }
    let mut turn_b = Sum3::<P>::default();
    let mut turn_a = Sum3::<P>::default();
    let mut dn = Fx::ZERO;
    for (p, &d) in pts.iter().zip(&change) {
        dn = add(dn, d);
        if SPIN {
            turn_b.add(p.kb, d);
            if TWO {
                turn_a.add(p.ka, d);
            }
        }
    }
    if SPIN {
        wb = add3(wb, turn_b.round(K));
        if TWO {
            wa = sub3(wa, turn_a.round(K));
        }
    }

    let linear = c.linear_impulse::<P>(dn, dt);
    vb.linear = add3(vb.linear, products::times::<P>(linear, c.inv_mass_b, K));
    vb.angular = wb;
    if TWO {
        va.linear = sub3(va.linear, products::times::<P>(linear, c.inv_mass_a, K));
        va.angular = wa;
    }
    store::<TWO, M>(c, m, va, vb);
}

/// The rows' new impulses from the constraint's [`Block`], if it takes
/// them (never a single row: there is nothing to couple).
#[inline(always)]
fn block_impulses(c: &Constraint, pass: &Pass, pts: &[Point], vn: &[Fx; 4]) -> Option<[Fx; 4]> {
    if pts.len() < 2 {
        return None;
    }
    let mut rows = [RowTarget {
        target: Fx::ZERO,
        soft: false,
    }; 4];
    let mut impulses = [Fx::ZERO; 4];
    for (i, p) in pts.iter().enumerate() {
        rows[i] = row_target(c, pass, p.separation);
        impulses[i] = p.impulse;
    }
    c.block.solve(pts.len(), vn, &rows, &impulses)
}

/// What a normal row with separation `s` aims at in `pass`.
#[inline(always)]
fn row_target(c: &Constraint, pass: &Pass, s: Fx) -> RowTarget {
    if s.is_positive() {
        // Speculative: allow closing the gap within this substep.
        RowTarget {
            target: mul(s, pass.inv_h),
            soft: false,
        }
    } else if pass.bias {
        // No dead zone: a loaded contact would settle at its edge.
        RowTarget {
            target: mul(c.soft.bias_rate, s).max(-pass.max_push),
            soft: true,
        }
    } else {
        RowTarget {
            target: Fx::ZERO,
            soft: false,
        }
    }
}

/// One normal row of a Gauss–Seidel sweep: point `i`'s impulse change,
/// added to `change[i]` and passed on to the points' normal velocities
/// `vn` through `K`. In the `LAST` sweep a velocity is read only by the
/// rows after the one that moves it, so only those are updated.
#[inline(always)]
fn row<const LAST: bool, P: Products>(
    c: &Constraint,
    pass: &Pass,
    pts: &mut [Point],
    i: usize,
    vn: &mut [Fx; 4],
    change: &mut [Fx; 4],
) {
    let n = pts.len();
    let p = &mut pts[i];
    let old = p.impulse;
    let RowTarget { target, soft } = row_target(c, pass, p.separation);
    let (mass, leak) = if soft {
        let leak = products::mul::<P>(c.soft.impulse_scale, old, RATIO);
        (p.soft_mass, leak)
    } else {
        (p.mass, Fx::ZERO)
    };
    let push = products::mul::<P>(mass, add(vn[i], target), MASS);
    let delta = sub(sub(Fx::ZERO, push), leak);
    p.impulse = add(old, delta).max(Fx::ZERO);
    let dl = sub(p.impulse, old);
    if dl.is_zero() {
        return;
    }
    change[i] = add(change[i], dl);
    if !LAST {
        vn[i] = add(vn[i], products::mul::<P>(p.diagonal, dl, K));
    }
    for &(slot, j) in &OTHERS[i] {
        let j = usize::from(j);
        if j < n && (!LAST || j > i) {
            let k = c.coupling[usize::from(slot)];
            vn[j] = add(vn[j], products::mul::<P>(k, dl, K));
        }
    }
}

/// Before each substep's passes: remembers the fastest approach of every
/// bouncy point, so a bounce starts from the speed of impact (gravity keeps
/// accelerating a falling body through the substeps before it touches).
pub(crate) fn track_approach<const TWO: bool, M: Motion>(
    constraints: &[Constraint],
    points: &mut [Point],
    m: &M,
) {
    for c in constraints.iter().filter(|c| c.bounces()) {
        let (va, vb) = load::<TWO, M>(c, m);
        let linear = dot(c.normal, sub3(vb.linear, va.linear));
        let pts = &mut points[c.first as usize..][..usize::from(c.count)];
        for p in pts {
            let vn = add(
                linear,
                angular::<TWO, Exact>(p.ja, va.angular, p.jb, vb.angular, ARM),
            );
            p.approach = p.approach.min(vn);
        }
    }
}

/// Bounces: points that approached faster than `threshold` and pushed get
/// a target normal velocity of `−e ·` their approach speed.
pub(crate) fn restitution<const TWO: bool, M: Motion>(
    constraints: &mut [Constraint],
    points: &mut [Point],
    m: &mut M,
    threshold: Fx,
) {
    for c in constraints.iter_mut().filter(|c| c.bounces()) {
        let (mut va, mut vb) = load::<TWO, M>(c, m);
        let pts = &mut points[c.first as usize..][..usize::from(c.count)];
        for p in pts {
            if p.approach > -threshold || p.impulse.is_zero() {
                continue;
            }
            let vn = dot(c.normal, vb.linear - va.linear)
                + angular::<TWO, Exact>(p.ja, va.angular, p.jb, vb.angular, ARM);
            let old = p.impulse;
            p.impulse = (old - p.mass * (vn + c.restitution * p.approach)).max(Fx::ZERO);
            let dl = p.impulse - old;
            let linear = c.normal * dl;
            vb.linear += linear * c.inv_mass_b;
            vb.angular += p.kb * dl;
            if TWO {
                va.linear -= linear * c.inv_mass_a;
                va.angular -= p.ka * dl;
            }
        }
        store::<TWO, M>(c, m, va, vb);
    }
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
