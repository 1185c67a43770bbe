//! Edge–edge contact: the single point where two boxes' supporting edges
//! come closest, on the edge-pair axis the separating-axis test chose.

use super::{KIND_EDGE, M, V, col, comp, fx3, with_comp};
use crate::narrowphase::{ContactPoint, Manifold, Pose};
use lockstep_fx::{Fx, Vec3};

/// The single-point manifold of an edge–edge contact on axis `aᵢ × bⱼ`
/// (`(i, j) = pair`) with normalised separation `s`; `len2 = |aᵢ × bⱼ|²`.
/// Rare, so written with plain saturating `Fx` arithmetic.
#[allow(clippy::too_many_arguments)]
pub(super) fn edge_contact(
    a: &Pose,
    ha: &V,
    hb: &V,
    c: &M,
    da: &V,
    (i, j): (usize, usize),
    s: Fx,
    len2: Fx,
) -> Manifold {
    let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
    let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
    let cf = |r: usize, k: usize| Fx::from_bits(c[r][k]);
    let bcol = |k: usize| fx3(col(c, k));
    let da = fx3(*da);
    let mut l = with_comp(Vec3::ZERO, i1, -cf(i2, j));
    l = with_comp(l, i2, cf(i1, j));
    if l.dot(da).is_negative() {
        l = -l;
    }
    // A's supporting edge: along aᵢ, on the side of L in the other two axes.
    let mut pa = Vec3::ZERO;
    let mut edge_a = 4 * i as u32;
    for (bit, k) in [(1u32, i1), (2u32, i2)] {
        let h = Fx::from_bits(ha[k]);
        if comp(l, k).is_negative() {
            pa = with_comp(pa, k, -h);
            edge_a |= bit;
        } else {
            pa = with_comp(pa, k, h);
        }
    }
    // B's supporting edge: along bⱼ, on the side of −L in the other two axes.
    let mut pb = da;
    let mut edge_b = 4 * j as u32;
    for (bit, m) in [(1u32, j1), (2u32, j2)] {
        let axis = bcol(m);
        let h = Fx::from_bits(hb[m]);
        if l.dot(axis).is_positive() {
            pb -= axis * h;
            edge_b |= bit;
        } else {
            pb += axis * h;
        }
    }
    // Closest points of the two edge lines, clamped to the edges:
    // t = (q1 − k q2) / (1 − k²), u = (k q1 − q2) / (1 − k²), 1 − k² = len2.
    let bj = bcol(j);
    let p = pb - pa;
    let k = cf(i, j);
    let q1 = comp(p, i);
    let q2 = bj.dot(p);
    let (hai, hbj) = (Fx::from_bits(ha[i]), Fx::from_bits(hb[j]));
    let t = (q1.mul_add_mul(Fx::ONE, -k, q2) / len2).clamp(-hai, hai);
    let u = (k.mul_add_mul(q1, Fx::NEG_ONE, q2) / len2).clamp(-hbj, hbj);
    let on_a = with_comp(pa, i, t);
    let on_b = pb + bj * u;
    let mid = Vec3::new(
        (on_a.x + on_b.x).scale_pow2(-1),
        (on_a.y + on_b.y).scale_pow2(-1),
        (on_a.z + on_b.z).scale_pow2(-1),
    );
    let Some(normal) = a.rotation.mul_vec3(l).try_normalize() else {
        return Manifold::default();
    };
    let mut out = Manifold {
        normal,
        count: 1,
        ..Manifold::default()
    };
    out.points[0] = ContactPoint {
        position: a.position + a.rotation.mul_vec3(mid),
        separation: s,
        id: KIND_EDGE | (edge_a << 8) | edge_b,
    };
    out
}
