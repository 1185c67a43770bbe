//! Warm starting: applying a constraint's impulses carried over from the
//! last substep before its passes, on the path its spin and products
//! allow.

use super::*;

/// Applies one constraint's accumulated impulses (warm starting a
/// substep; the walk over the solve order is `lanes::warm_start`).
#[inline(always)]
pub(in crate::solver) fn warm_start_alone<const TWO: bool, M: Motion>(
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
