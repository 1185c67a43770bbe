//! Bounces: the fastest approach of each bouncy point, tracked before each
//! substep's passes, and the target velocity it gives after them.

use super::*;

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
