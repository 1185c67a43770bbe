//! One pass over one constraint: friction (the 2×2 tangent block capped to
//! the cone, then the twist), then the normal rows, by the block where it
//! applies, swept otherwise; on the path its spin and products allow.

use super::*;

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
pub(in crate::solver) fn solve_alone<const TWO: bool, M: Motion>(
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
pub(in crate::solver) fn count_linear() {
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
