//! The contact solver: soft sequential impulses with warm starting, friction,
//! restitution and relaxation.
//!
//! One step runs: [`prepare`] (Jacobians and effective masses from this
//! step's manifolds), [`warm_start`] (last step's impulses, matched by
//! feature id), `iterations × solve(bias)` (soft constraints that also push
//! overlapping bodies apart), position integration (by the world), then
//! `relax_iterations × solve(no bias)` (removes the push-out velocity, so
//! position correction adds no energy) and [`restitution`]. The soft-constraint
//! formulation is the one Erin Catto describes for Box2D v3 ("Solver2D",
//! 2024): a mass-spring-damper with a stiffness in hertz and a damping ratio,
//! which makes stacking stable at low iteration counts.
//!
//! Invariants: constraints are solved in slice order, which the world builds
//! shuffled with the frame's `Rng`; every operation is `Fx` arithmetic, so the
//! result is a pure function of the inputs. Accumulated normal impulses are
//! never negative; the two tangent impulses each stay within `±μ·Σ normal
//! impulses` (a box approximation of the friction cone) and the twist within
//! that times the points' mean lever arm. Each manifold solves friction first,
//! then its normal rows (as Box2D v2 does).

use lockstep_fx::wide::wrapping as hot;
use lockstep_fx::{Fx, Vec3};

/// A body as the solver sees it: velocities, and the displacement since the
/// start of the step (position, and rotation as a small-angle vector) from
/// which current separations are computed. Index 0 is the immovable "ground"
/// shared by static, sleeping and kinematic-at-rest bodies.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SolverBody {
    pub linear: Vec3,
    pub angular: Vec3,
    pub dp: Vec3,
    pub dtheta: Vec3,
}

/// Spring-damper parameters of a soft constraint for one time step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Softness {
    pub bias_rate: Fx,
    pub mass_scale: Fx,
    pub impulse_scale: Fx,
}

impl Softness {
    /// Softness for stiffness `hertz`, damping ratio `zeta` and step `h`.
    pub fn new(hertz: Fx, zeta: Fx, h: Fx) -> Softness {
        if hertz.is_zero() {
            return Softness {
                bias_rate: Fx::ZERO,
                mass_scale: Fx::ONE,
                impulse_scale: Fx::ZERO,
            };
        }
        let omega = Fx::TAU * hertz;
        let a1 = zeta.mul_int(2) + h * omega;
        let a2 = h * omega * a1;
        let a3 = Fx::ONE / (Fx::ONE + a2);
        Softness {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }
}

/// One scalar constraint row: `J·v` along a direction with angular parts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Row {
    /// `rA × d` and `rB × d`.
    ja: Vec3,
    jb: Vec3,
    /// `IA⁻¹ (rA × d)` and `IB⁻¹ (rB × d)`.
    ka: Vec3,
    kb: Vec3,
    /// Effective mass `1 / (J M⁻¹ Jᵀ)`.
    mass: Fx,
    /// Accumulated impulse.
    pub impulse: Fx,
}

impl Row {
    /// A row along `d` at offsets `ra`, `rb` from the bodies' centres.
    fn new(a: &BodyInfo, b: &BodyInfo, ra: Vec3, rb: Vec3, d: Vec3, impulse: Fx) -> Row {
        let ja = hot::cross(ra, d);
        let jb = hot::cross(rb, d);
        let ka = hot::mat_vec(&a.inv_inertia, ja);
        let kb = hot::mat_vec(&b.inv_inertia, jb);
        let k = hot::add(
            hot::add(a.inv_mass, b.inv_mass),
            hot::add(hot::dot(ja, ka), hot::dot(jb, kb)),
        );
        let mass = if k.is_positive() {
            Fx::ONE / k
        } else {
            Fx::ZERO
        };
        Row {
            ja,
            jb,
            ka,
            kb,
            mass,
            impulse,
        }
    }
}

/// The non-penetration row of one contact point.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PointConstraint {
    pub normal: Row,
    /// Separation at the start of the step (negative = overlap).
    separation: Fx,
    /// Normal relative velocity before solving, for restitution.
    approach: Fx,
}

/// Friction about the normal (twist): a purely angular row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TwistRow {
    ka: Vec3,
    kb: Vec3,
    mass: Fx,
    pub impulse: Fx,
}

/// A manifold's constraint: a normal row per point, and friction as two
/// tangent rows and a twist row at the points' centroid, bounded by the
/// friction coefficient times the manifold's total normal impulse (the
/// "friction anchor" of PhysX and Bullet, which needs 3 rows instead of 8
/// for a 4-point manifold).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContactConstraint {
    /// Solver body indices.
    pub a: u32,
    pub b: u32,
    inv_mass_a: Fx,
    inv_mass_b: Fx,
    normal: Vec3,
    tangents: [Vec3; 2],
    /// The normal and the tangents scaled by the inverse masses.
    linear: [Linear; 3],
    friction: Fx,
    /// Mean distance of the points from their centroid (twist lever arm).
    twist_radius: Fx,
    restitution: Fx,
    soft: Softness,
    pub count: u8,
    pub points: [PointConstraint; 4],
    pub tangent: [Row; 2],
    pub twist: TwistRow,
}

/// What [`prepare`] needs about one body.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyInfo {
    pub solver_index: u32,
    pub position: Vec3,
    pub inv_mass: Fx,
    pub inv_inertia: lockstep_fx::Mat3,
}

/// What [`prepare`] needs about one contact point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PointInput {
    pub position: Vec3,
    pub separation: Fx,
    /// Warm-start normal impulse.
    pub impulse: Fx,
}

/// Builds a constraint from a manifold; velocities are those before solving.
/// `friction_impulse` (a world vector, projected on this step's tangents) and
/// `twist_impulse` warm-start the friction rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare(
    a: &BodyInfo,
    b: &BodyInfo,
    normal: Vec3,
    points: &[PointInput],
    friction_impulse: Vec3,
    twist_impulse: Fx,
    friction: Fx,
    restitution: Fx,
    soft: Softness,
    velocities: &[SolverBody],
) -> ContactConstraint {
    let tangents = {
        let (t0, t1) = normal.any_orthonormal_pair();
        [t0, t1]
    };
    let va = velocities[a.solver_index as usize];
    let vb = velocities[b.solver_index as usize];
    let count = points.len().min(4);
    let mut c = ContactConstraint {
        a: a.solver_index,
        b: b.solver_index,
        inv_mass_a: a.inv_mass,
        inv_mass_b: b.inv_mass,
        normal,
        tangents,
        linear: [
            Linear::new(normal, a.inv_mass, b.inv_mass),
            Linear::new(tangents[0], a.inv_mass, b.inv_mass),
            Linear::new(tangents[1], a.inv_mass, b.inv_mass),
        ],
        friction,
        twist_radius: Fx::ZERO,
        restitution,
        soft,
        count: count as u8,
        points: [PointConstraint::default(); 4],
        tangent: [Row::default(); 2],
        twist: TwistRow::default(),
    };
    if count == 0 {
        return c;
    }
    let mut centre = Vec3::ZERO;
    for (pc, p) in c.points.iter_mut().zip(points) {
        let ra = p.position - a.position;
        let rb = p.position - b.position;
        pc.normal = Row::new(a, b, ra, rb, normal, p.impulse);
        pc.separation = p.separation;
        pc.approach = relative_velocity(&pc.normal, normal, &va, &vb);
        centre += p.position;
    }
    let n = count as i64;
    let centre = Vec3::new(
        centre.x.div_int(n),
        centre.y.div_int(n),
        centre.z.div_int(n),
    );
    let ra = centre - a.position;
    let rb = centre - b.position;
    c.tangent = [
        Row::new(a, b, ra, rb, tangents[0], friction_impulse.dot(tangents[0])),
        Row::new(a, b, ra, rb, tangents[1], friction_impulse.dot(tangents[1])),
    ];
    let spread: Fx = points[..count]
        .iter()
        .map(|p| (p.position - centre).length())
        .sum();
    c.twist_radius = spread.div_int(count as i64);
    let ka = a.inv_inertia.mul_vec3(normal);
    let kb = b.inv_inertia.mul_vec3(normal);
    let k = normal.dot(ka) + normal.dot(kb);
    let mass = if k.is_positive() {
        Fx::ONE / k
    } else {
        Fx::ZERO
    };
    c.twist = TwistRow {
        ka,
        kb,
        mass,
        impulse: twist_impulse,
    };
    c
}

impl ContactConstraint {
    /// The accumulated tangent impulse as a world vector.
    pub fn friction_impulse(&self) -> Vec3 {
        self.tangents[0] * self.tangent[0].impulse + self.tangents[1] * self.tangent[1].impulse
    }
}

/// Applies last step's impulses.
pub(crate) fn warm_start(constraints: &[ContactConstraint], v: &mut [SolverBody]) {
    for c in constraints {
        let (mut va, mut vb) = (v[c.a as usize], v[c.b as usize]);
        // Sum the rows' impulses first: one linear impulse and one angular
        // change per body.
        let mut linear = Vec3::ZERO;
        let mut turn_a = hot::scale(c.twist.ka, c.twist.impulse);
        let mut turn_b = hot::scale(c.twist.kb, c.twist.impulse);
        let rows = c.points[..usize::from(c.count)]
            .iter()
            .map(|p| (&p.normal, c.normal));
        for (row, d) in rows.chain(c.tangent.iter().zip(c.tangents)) {
            linear = hot::add3(linear, hot::scale(d, row.impulse));
            turn_a = hot::add3(turn_a, hot::scale(row.ka, row.impulse));
            turn_b = hot::add3(turn_b, hot::scale(row.kb, row.impulse));
        }
        va.linear = hot::sub3(va.linear, hot::scale(linear, c.inv_mass_a));
        va.angular = hot::sub3(va.angular, turn_a);
        vb.linear = hot::add3(vb.linear, hot::scale(linear, c.inv_mass_b));
        vb.angular = hot::add3(vb.angular, turn_b);
        v[c.a as usize] = va;
        v[c.b as usize] = vb;
    }
}

#[inline(always)]
fn apply(row: &Row, lin: &Linear, impulse: Fx, va: &mut SolverBody, vb: &mut SolverBody) {
    va.linear = hot::sub3(va.linear, hot::scale(lin.a, impulse));
    va.angular = hot::sub3(va.angular, hot::scale(row.ka, impulse));
    vb.linear = hot::add3(vb.linear, hot::scale(lin.b, impulse));
    vb.angular = hot::add3(vb.angular, hot::scale(row.kb, impulse));
}

/// A direction scaled by each body's inverse mass: the linear velocity
/// change per unit impulse along it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Linear {
    a: Vec3,
    b: Vec3,
}

impl Linear {
    fn new(d: Vec3, ma: Fx, mb: Fx) -> Linear {
        Linear {
            a: hot::scale(d, ma),
            b: hot::scale(d, mb),
        }
    }
}

/// The row's `J·x` for per-body (linear, angular) quantities: the relative
/// velocity of the anchors along `d` for velocities, and how far they moved
/// apart along `d` for displacements.
#[inline(always)]
fn along(row: &Row, d: Vec3, (la, aa): (Vec3, Vec3), (lb, ab): (Vec3, Vec3)) -> Fx {
    hot::sub(
        hot::add(hot::dot(d, hot::sub3(lb, la)), hot::dot(row.jb, ab)),
        hot::dot(row.ja, aa),
    )
}

#[inline(always)]
fn relative_velocity(row: &Row, d: Vec3, va: &SolverBody, vb: &SolverBody) -> Fx {
    along(row, d, (va.linear, va.angular), (vb.linear, vb.angular))
}

/// How far the anchors have moved apart along `d` since the step began.
#[inline(always)]
fn relative_displacement(row: &Row, d: Vec3, va: &SolverBody, vb: &SolverBody) -> Fx {
    along(row, d, (va.dp, va.dtheta), (vb.dp, vb.dtheta))
}

/// One pass over the constraints. With `use_bias`, overlap is pushed out
/// softly (at most `max_push` m/s); without it the rows are rigid and only
/// speculative gaps add a bias. `inv_h` is the step rate, `slop` the overlap
/// left uncorrected.
pub(crate) fn solve(
    constraints: &mut [ContactConstraint],
    v: &mut [SolverBody],
    use_bias: bool,
    inv_h: Fx,
    slop: Fx,
    max_push: Fx,
) {
    for c in constraints.iter_mut() {
        let (mut va, mut vb) = (v[c.a as usize], v[c.b as usize]);
        let count = usize::from(c.count);
        // Friction first, bounded by the normal impulses of the last pass:
        // the normal rows then go last, so non-penetration (what matters
        // most) is what each pass leaves exact.
        let total: Fx = c.points[..count].iter().map(|p| p.normal.impulse).sum();
        let limit = c.friction * total;
        for ((row, d), lin) in c.tangent.iter_mut().zip(c.tangents).zip(&c.linear[1..]) {
            let vt = relative_velocity(row, d, &va, &vb);
            let old = row.impulse;
            row.impulse = hot::sub(old, hot::mul(row.mass, vt)).clamp(-limit, limit);
            apply(row, lin, row.impulse - old, &mut va, &mut vb);
        }
        let twist_limit = limit * c.twist_radius;
        let t = &mut c.twist;
        let w = hot::dot(c.normal, hot::sub3(vb.angular, va.angular));
        let old = t.impulse;
        t.impulse = hot::sub(old, hot::mul(t.mass, w)).clamp(-twist_limit, twist_limit);
        let delta = t.impulse - old;
        va.angular = hot::sub3(va.angular, hot::scale(t.ka, delta));
        vb.angular = hot::add3(vb.angular, hot::scale(t.kb, delta));
        for p in &mut c.points[..count] {
            let row = &mut p.normal;
            let vn = relative_velocity(row, c.normal, &va, &vb);
            // Current separation: the step's value moved by the displacement
            // of the two anchor points since the step began.
            let s = hot::add(p.separation, relative_displacement(row, c.normal, &va, &vb));
            let (bias, mass_scale, impulse_scale) = if s.is_positive() {
                // Speculative: allow closing the gap within this step.
                (s * inv_h, Fx::ONE, Fx::ZERO)
            } else if use_bias {
                let push = (c.soft.bias_rate * (s + slop).min(Fx::ZERO)).max(-max_push);
                (push, c.soft.mass_scale, c.soft.impulse_scale)
            } else {
                (Fx::ZERO, Fx::ONE, Fx::ZERO)
            };
            let old = row.impulse;
            let delta = hot::sub(
                -hot::mul(hot::mul(row.mass, mass_scale), hot::add(vn, bias)),
                hot::mul(impulse_scale, old),
            );
            row.impulse = hot::add(old, delta).max(Fx::ZERO);
            apply(row, &c.linear[0], row.impulse - old, &mut va, &mut vb);
        }
        v[c.a as usize] = va;
        v[c.b as usize] = vb;
    }
}

/// Before each substep's solve: remembers the fastest approach of every
/// bouncy point, so a bounce starts from the speed of impact (gravity keeps
/// accelerating a falling body through the substeps before it touches).
pub(crate) fn track_approach(constraints: &mut [ContactConstraint], v: &[SolverBody]) {
    for c in constraints.iter_mut().filter(|c| !c.restitution.is_zero()) {
        let (va, vb) = (v[c.a as usize], v[c.b as usize]);
        for p in &mut c.points[..usize::from(c.count)] {
            p.approach = p
                .approach
                .min(relative_velocity(&p.normal, c.normal, &va, &vb));
        }
    }
}

/// Bounces: points that approached faster than `threshold` get a target
/// normal velocity of `-e ·` their approach speed.
pub(crate) fn restitution(
    constraints: &mut [ContactConstraint],
    v: &mut [SolverBody],
    threshold: Fx,
) {
    for c in constraints.iter_mut() {
        if c.restitution.is_zero() {
            continue;
        }
        let (mut va, mut vb) = (v[c.a as usize], v[c.b as usize]);
        for p in &mut c.points[..usize::from(c.count)] {
            if p.approach > -threshold || p.normal.impulse.is_zero() {
                continue;
            }
            let row = &mut p.normal;
            let vn = relative_velocity(row, c.normal, &va, &vb);
            let old = row.impulse;
            row.impulse = (old - row.mass * (vn + c.restitution * p.approach)).max(Fx::ZERO);
            apply(row, &c.linear[0], row.impulse - old, &mut va, &mut vb);
        }
        v[c.a as usize] = va;
        v[c.b as usize] = vb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softness_matches_the_closed_form() {
        // 15 Hz, ζ = 10, h = 1/60: ω = 94.25, a1 = 21.57, bias rate = 4.37.
        let s = Softness::new(Fx::from_int(15), Fx::from_int(10), Fx::from_ratio(1, 60));
        assert!(
            (s.bias_rate - Fx::lit("4.3694")).abs() < Fx::lit("0.001"),
            "{}",
            s.bias_rate
        );
        assert!((s.mass_scale + s.impulse_scale - Fx::ONE).abs() < Fx::lit("0.000001"));
    }
}
