//! Box–box narrowphase: the contact manifold of two oriented boxes, by the
//! separating-axis test and face clipping.
//!
//! **What it owns.** [`box_box`] turns two box poses and half extents into a
//! [`Manifold`] of at most four points, including speculative points separated
//! by up to a margin. It owns the choice of contact axis, the clipping and
//! reduction of the contact polygon and the layout of the feature ids; it
//! knows nothing about bodies, impulses or the broadphase.
//!
//! **Invariants.** Integer-only, no hashing, no allocation, no `usize` in the
//! result, never panics for any input (zero, negative or huge half extents,
//! huge coordinates, identical poses, non-orthonormal matrices). The result
//! is a pure function of the arguments: every tie is broken by a fixed rule
//! (the lower axis, face or point index wins). `count <= 4`; when `count > 0`
//! the normal is a unit vector (to a few LSB, for rotation-matrix inputs)
//! pointing from A to B, every point has `separation <= margin`, and the ids
//! in a manifold are distinct. `margin` is expected to be `>= 0`.
//!
//! **Arithmetic.** The hot path works on raw Q32.32 `i64` values and sums
//! products exactly in `i128`, rounding once per result (as [`Vec3::dot`]
//! does). Inputs are first capped so that nothing can overflow and no
//! saturation checks are needed: half extents at 2^24, rotation entries at
//! ±2, centre offsets (per local axis) at 2^27 — beyond that the boxes are
//! separated on a face axis anyway. Boxes with half extents above 2^24 units
//! are treated as if they were 2^24.
//!
//! **Method.** Everything is computed in A's local frame from the relative
//! rotation `C = Rᴬᵀ·Rᴮ` (`C[i][j] = aᵢ·bⱼ`, one rounding per entry) and the
//! centre offset in both frames. The 15 candidate axes are tested in a fixed
//! order: A's three face normals, B's three, then the nine edge pairs `aᵢ × bⱼ`
//! (`i` outer, `j` inner). Edge pairs with `|aᵢ·bⱼ| >= 0.9999995` (cross
//! product shorter than 10⁻³, edges within ~0.06° of parallel) are skipped:
//! the face axes cover them. An edge axis is normalised (one square root and
//! one division) only when its exact unnormalised separation could change
//! the outcome. If any axis separates the boxes by more than `margin`, the
//! manifold is empty. Otherwise the contact axis is chosen with a hysteresis
//! bias, for stable stacking: B's best face beats A's best face, and then the
//! best edge pair beats the chosen face, only if its separation exceeds the
//! incumbent's `s` by `0.05·|s| + 0.001`.
//!
//! - *Face contact*: the reference face is the face, on the chosen axis,
//!   facing the other box; the incident face is the other box's face most
//!   anti-parallel to it. In the reference box's frame the incident face's four
//!   vertices are clipped (Sutherland–Hodgman) against the reference face's
//!   four side planes (+u, −u, +v, −v, where `u`, `v` follow the face axis
//!   cyclically), each pushed out by a small slop (`min(0.001, h/16)`) so
//!   that flush sides keep stable vertex ids; intersections are placed exactly
//!   on the (pushed) plane, and the survivors are clamped back onto the
//!   reference face. Points separated from the reference face by more than
//!   `margin` are dropped. More
//!   than four are reduced to four: the deepest, the one farthest from it, and
//!   the two with the largest signed triangle area on either side of that
//!   segment (if one side is empty, the point adding the most area outside the
//!   triangle so far); the survivors keep their polygon order. A point's
//!   position is the midpoint of the clipped point and its projection on the
//!   reference face; its separation is its signed distance from that face.
//! - *Edge–edge contact*: one point, the midpoint of the closest points of the
//!   two supporting edges (clamped to the edges), with the edge-axis
//!   separation; the normal is the normalised cross product, oriented A → B.
//!
//! **Feature ids** (`u32`, distinct within a manifold, stable while the same
//! features touch). Face `f` of a box is `2·axis + (1 if it is the −axis
//! face)`; edge `e` is `4·axis + bit0 + bit1`, where bit0 (1) / bit1 (2) say the
//! edge lies on the negative side of the next / next-but-one axis.
//!
//! - Face contact: `ref_is_b << 20 | ref_face << 16 | inc_face << 8 | tag`,
//!   where `tag < 4` is incident vertex `tag` (the incident face's vertices
//!   `v0..v3` are `(+,+) (−,+) (−,−) (+,−)` along its two cyclic tangent axes,
//!   and edge `k` runs from `vk` to `v(k+1)`); otherwise `tag = 4 + 4·line +
//!   plane`, the point where `line` meets side plane `plane` (0..3), with
//!   `line` 0..3 an incident edge and `line` 4..7 side plane `line − 4` (a
//!   corner of the reference face).
//! - Edge contact: `1 << 24 | edge_a << 8 | edge_b`.

use super::{ContactPoint, Manifold, Pose};
use lockstep_fx::{Fx, Mat3, Vec3};

/// Relative part of the hysteresis that a challenger axis must beat.
const REL_TOL: Fx = Fx::lit("0.05");
/// Absolute part of the hysteresis that a challenger axis must beat.
const ABS_TOL: Fx = Fx::lit("0.001");
/// Edge pairs with `|aᵢ·bⱼ|` at or above this (`|aᵢ × bⱼ|² <= 10⁻⁶` for
/// unit axes) are treated as parallel and skipped.
const PARALLEL: i64 = Fx::lit("0.9999995").to_bits();
/// Edge axes shorter than this (squared) are skipped even when the matrices
/// are not orthonormal.
const EDGE_EPS2: i64 = Fx::lit("0.000001").to_bits();
/// How far the side planes are pushed out (at most, and at most 1/16 of the
/// face's half extent): an incident vertex that pokes past a side plane by
/// less than this is kept as it is, so that boxes whose sides are flush (a
/// column of equal boxes) keep stable vertex ids under jitter instead of
/// flickering between a vertex and a clipped point.
const CLIP_SLOP: i64 = Fx::lit("0.001").to_bits();
/// Id bit marking an edge–edge contact.
const KIND_EDGE: u32 = 1 << 24;
/// Id bit marking a face contact whose reference face belongs to B.
const REF_IS_B: u32 = 1 << 20;
/// Capacity of the clipping buffers: a convex quad clipped by four planes has
/// at most 8 vertices; the slack absorbs rounding, and pushes beyond it are
/// dropped rather than panicking.
const CLIP_CAP: usize = 12;
/// Largest half extent used, raw (2^24 units).
const H_MAX: u64 = 1 << 56;
/// Largest centre offset used along an axis, raw (2^27 units): farther boxes
/// are separated anyway, as `H_MAX` keeps every radius below `D_MAX / 2`.
const D_MAX: i64 = 1 << 59;
/// Largest rotation-matrix entry used, raw (2).
const R_MAX: i64 = 1 << 33;

/// A vector of raw Q32.32 values.
type V = [i64; 3];
/// A matrix of raw Q32.32 values, `m[row][col]`.
type M = [[i64; 3]; 3];

// The hot path works on raw `i64` Q32.32 values with sums of products in
// `i128`, rounded once. The clamps above bound every intermediate (products
// below 2^97, sums of at most six of them), so no `i128` operation can
// overflow and no saturation checks are needed.

/// The exact Q64.64 product of two raw values.
#[inline(always)]
fn prod(a: i64, b: i64) -> i128 {
    a as i128 * b as i128
}

/// A Q64.64 value rounded to nearest raw Q32.32 (ties toward +∞), saturating.
#[inline(always)]
fn round(x: i128) -> i64 {
    ((x + (1 << 31)) >> 32).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// A Q64.64 value rounded to nearest raw Q32.32 (ties toward +∞), for sums
/// that the input clamps keep below 2^94 in magnitude (so the result fits).
#[inline(always)]
fn round_fit(x: i128) -> i64 {
    ((x + (1 << 31)) >> 32) as i64
}

/// A raw Q32.32 value as Q64.64.
#[inline(always)]
fn widen(x: i64) -> i128 {
    (x as i128) << 32
}

/// The separation a challenger must exceed to replace an incumbent at `best`.
#[inline(always)]
fn beat(best: i64) -> i64 {
    let b = Fx::from_bits(best);
    (b + b.abs() * REL_TOL + ABS_TOL).to_bits()
}

/// Half extents as raw magnitudes no larger than `H_MAX`.
#[inline(always)]
fn half_raw(h: Vec3) -> V {
    [h.x, h.y, h.z].map(|c| c.to_bits().unsigned_abs().min(H_MAX) as i64)
}

/// A rotation's raw entries, clamped to `±R_MAX`.
#[inline(always)]
fn rot_raw(r: &Mat3) -> M {
    r.rows
        .map(|row| [row.x, row.y, row.z].map(|c| c.to_bits().clamp(-R_MAX, R_MAX)))
}

/// Column `c` of `m`.
#[inline(always)]
fn col(m: &M, c: usize) -> V {
    [m[0][c], m[1][c], m[2][c]]
}

/// The contact manifold between box A and box B, including points separated
/// by up to `margin` (speculative contacts); `count == 0` when they are
/// farther apart.
///
/// `a_half` and `b_half` are half extents (their absolute values are used,
/// capped at 2^24). The rotations should be proper rotation matrices (anything
/// else gives some result without panicking). The normal points from A to B.
/// See the module documentation for the method, the tie rules and the
/// feature-id layout.
pub fn box_box(a: &Pose, a_half: Vec3, b: &Pose, b_half: Vec3, margin: Fx) -> Manifold {
    let ha = half_raw(a_half);
    let hb = half_raw(b_half);
    let ra = rot_raw(&a.rotation);
    let rb = rot_raw(&b.rotation);
    let margin = margin.to_bits();
    let d = [
        b.position
            .x
            .to_bits()
            .saturating_sub(a.position.x.to_bits()),
        b.position
            .y
            .to_bits()
            .saturating_sub(a.position.y.to_bits()),
        b.position
            .z
            .to_bits()
            .saturating_sub(a.position.z.to_bits()),
    ];
    // B's centre in A's frame, A's centre in B's frame (negated), and the
    // relative rotation: column j of C is bⱼ in A's frame, row i is aᵢ in B's.
    let mut da = [0i64; 3];
    let mut db = [0i64; 3];
    let mut c: M = [[0; 3]; 3];
    let mut ac: M = [[0; 3]; 3];
    for i in 0..3 {
        da[i] = round(prod(ra[0][i], d[0]) + prod(ra[1][i], d[1]) + prod(ra[2][i], d[2]))
            .clamp(-D_MAX, D_MAX);
        db[i] = round(prod(rb[0][i], d[0]) + prod(rb[1][i], d[1]) + prod(rb[2][i], d[2]))
            .clamp(-D_MAX, D_MAX);
        for j in 0..3 {
            c[i][j] = round_fit(
                prod(ra[0][i], rb[0][j]) + prod(ra[1][i], rb[1][j]) + prod(ra[2][i], rb[2][j]),
            );
            ac[i][j] = c[i][j].abs();
        }
    }

    // A's face axes, then B's.
    let mut sep_a = i64::MIN;
    let mut axis_a = 0;
    for i in 0..3 {
        let r = round_fit(prod(hb[0], ac[i][0]) + prod(hb[1], ac[i][1]) + prod(hb[2], ac[i][2]));
        let s = da[i].abs() - ha[i] - r;
        if s > margin {
            return Manifold::default();
        }
        if s > sep_a {
            sep_a = s;
            axis_a = i;
        }
    }
    let mut sep_b = i64::MIN;
    let mut axis_b = 0;
    for j in 0..3 {
        let r = round_fit(prod(ha[0], ac[0][j]) + prod(ha[1], ac[1][j]) + prod(ha[2], ac[2][j]));
        let s = db[j].abs() - hb[j] - r;
        if s > margin {
            return Manifold::default();
        }
        if s > sep_b {
            sep_b = s;
            axis_b = j;
        }
    }
    let ref_is_b = sep_b > beat(sep_a);
    let face_sep = if ref_is_b { sep_b } else { sep_a };

    // Edge axes L = aᵢ × bⱼ in A's frame: component i is 0, component i1 is
    // −C[i2][j], component i2 is C[i1][j]; |L| <= 1. The unnormalised
    // separation `raw` (Q64.64, exact) only grows when normalised if positive
    // and only shrinks if negative, so the square root and division are
    // needed only when `raw` could beat the incumbent or exceed the margin:
    // a negative `raw` is first compared with the bar times 1, then times a
    // cheap upper bound of |L| (which matters for near-parallel edges).
    let margin_wide = widen(margin);
    let mut edge: Option<(usize, usize, Fx, Fx)> = None;
    let mut edge_best = beat(face_sep);
    let mut bar_raw = edge_best.min(0);
    let mut bar = widen(bar_raw);
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            if ac[i][j] >= PARALLEL {
                continue;
            }
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let proj = (prod(da[i2], c[i1][j]) - prod(da[i1], c[i2][j])).abs();
            let radii = prod(ha[i1], ac[i2][j])
                + prod(ha[i2], ac[i1][j])
                + prod(hb[j1], ac[i][j2])
                + prod(hb[j2], ac[i][j1]);
            let raw = proj - radii;
            if raw > margin_wide {
                return Manifold::default();
            }
            if raw <= bar {
                continue;
            }
            let len2 = round_fit(prod(c[i1][j], c[i1][j]) + prod(c[i2][j], c[i2][j]));
            if len2 < EDGE_EPS2 || raw <= prod(bar_raw, sqrt_upper(len2)) {
                continue;
            }
            let len2 = Fx::from_bits(len2);
            let s = Fx::from_bits(round(raw)) / len2.sqrt();
            if s.to_bits() > margin {
                return Manifold::default();
            }
            if s.to_bits() > edge_best {
                edge_best = s.to_bits();
                bar_raw = edge_best.min(0);
                bar = widen(bar_raw);
                edge = Some((i, j, s, len2));
            }
        }
    }

    if let Some((i, j, s, len2)) = edge {
        return edge_contact(a, &ha, &hb, &c, &da, (i, j), s, len2);
    }
    if ref_is_b {
        // Incident box A seen from B: its axes are the rows of C.
        let m: M = [col(&c, 0), col(&c, 1), col(&c, 2)];
        let centre = [-db[0], -db[1], -db[2]];
        face_contact(b, &rb, &hb, &ha, &m, &centre, axis_b, true, margin)
    } else {
        face_contact(a, &ra, &ha, &hb, &c, &da, axis_a, false, margin)
    }
}

/// A cheap upper bound of `sqrt(x)` (raw Q32.32, `x > 0`), at most ~6% high:
/// `(x + a²) / 2a >= sqrt(x)` with `a` the power of two nearest the root.
#[inline(always)]
fn sqrt_upper(x: i64) -> i64 {
    let wide = (x as u128) << 32;
    let k = (128 - wide.leading_zeros()) / 2;
    (((wide + (1u128 << (2 * k))) >> (k + 1)) + 1).min(i64::MAX as u128) as i64
}

/// Component `axis` (0, 1, 2) of `v`.
#[inline(always)]
fn comp(v: Vec3, axis: usize) -> Fx {
    match axis {
        0 => v.x,
        1 => v.y,
        _ => v.z,
    }
}

/// `v` with component `axis` replaced by `x`.
#[inline(always)]
fn with_comp(mut v: Vec3, axis: usize, x: Fx) -> Vec3 {
    match axis {
        0 => v.x = x,
        1 => v.y = x,
        _ => v.z = x,
    }
    v
}

/// Raw values as a `Vec3`.
#[inline(always)]
fn fx3(v: V) -> Vec3 {
    Vec3::new(
        Fx::from_bits(v[0]),
        Fx::from_bits(v[1]),
        Fx::from_bits(v[2]),
    )
}

/// The single-point manifold of an edge–edge contact on axis `aᵢ × bⱼ`
/// (`(i, j) = pair`) with normalised separation `s`; `len2 = |aᵢ × bⱼ|²`.
/// Rare, so written with plain saturating `Fx` arithmetic.
#[allow(clippy::too_many_arguments)]
fn edge_contact(
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

/// A vertex of the polygon being clipped.
#[derive(Clone, Copy, Default)]
struct ClipVertex {
    /// Raw position in the reference box's frame.
    p: V,
    /// Feature tag (see the module documentation).
    tag: u8,
    /// The line carrying the edge from this vertex to the next: 0..3 an
    /// incident edge, 4..7 side plane `edge − 4`.
    edge: u8,
}

/// A face contact with the reference face on axis `k` of the reference box
/// (`pose`, clamped rotation `rot`, half extents `rh`), facing the incident
/// box, whose centre is `centre` and whose axes are the columns of `m`, both
/// in the reference frame. `ref_is_b` says the reference box is B (the normal
/// is then flipped to point from A to B).
#[allow(clippy::too_many_arguments)]
fn face_contact(
    pose: &Pose,
    rot: &M,
    rh: &V,
    ih: &V,
    m: &M,
    centre: &V,
    k: usize,
    ref_is_b: bool,
    margin: i64,
) -> Manifold {
    let (u, v) = ((k + 1) % 3, (k + 2) % 3);
    let ref_neg = centre[k] < 0;
    let ref_face = 2 * k as u32 + ref_neg as u32;
    let hk = rh[k];
    let level = if ref_neg { -hk } else { hk };

    // Incident face: the incident axis most aligned with the reference normal,
    // on the side facing back at the reference face.
    let mut f = 0;
    for cand in 1..3 {
        if m[k][cand].abs() > m[k][f].abs() {
            f = cand;
        }
    }
    let inc_neg = (m[k][f] > 0) != ref_neg && m[k][f] != 0;
    let inc_face = 2 * f as u32 + inc_neg as u32;
    let (g1, g2) = ((f + 1) % 3, (f + 2) % 3);
    let hf = if inc_neg { -ih[f] } else { ih[f] };
    // Corners, each coordinate summed in Q64.64 and rounded once.
    let mut at = [0i128; 3];
    let mut e1 = [0i128; 3];
    let mut e2 = [0i128; 3];
    for r in 0..3 {
        at[r] = widen(centre[r]) + prod(hf, m[r][f]);
        e1[r] = prod(ih[g1], m[r][g1]);
        e2[r] = prod(ih[g2], m[r][g2]);
    }
    let mut poly = [[ClipVertex::default(); CLIP_CAP]; 2];
    let corners = [
        [0, 1, 2].map(|r| round_fit(at[r] + e1[r] + e2[r])),
        [0, 1, 2].map(|r| round_fit(at[r] - e1[r] + e2[r])),
        [0, 1, 2].map(|r| round_fit(at[r] - e1[r] - e2[r])),
        [0, 1, 2].map(|r| round_fit(at[r] + e1[r] - e2[r])),
    ];
    for (n, p) in corners.into_iter().enumerate() {
        poly[0][n] = ClipVertex {
            p,
            tag: n as u8,
            edge: n as u8,
        };
    }
    let mut n = 4;

    // Sutherland–Hodgman against the side planes ±u, ±v (inside: dist <= 0).
    for plane in 0..4u8 {
        let (src, dst) = if plane % 2 == 0 {
            let (s, d) = poly.split_at_mut(1);
            (&s[0], &mut d[0])
        } else {
            let (d, s) = poly.split_at_mut(1);
            (&s[0], &mut d[0])
        };
        let axis = if plane < 2 { u } else { v };
        let neg = plane & 1 == 1;
        let limit = rh[axis] + CLIP_SLOP.min(rh[axis] >> 4);
        let on_plane = if neg { -limit } else { limit };
        let dist = |p: &V| if neg { -p[axis] } else { p[axis] } - limit;
        let mut out = 0;
        for idx in 0..n {
            let cur = &src[idx];
            let nxt = &src[if idx + 1 == n { 0 } else { idx + 1 }];
            let (dc, dn) = (dist(&cur.p), dist(&nxt.p));
            let (cur_in, nxt_in) = (dc <= 0, dn <= 0);
            if cur_in && out < CLIP_CAP {
                dst[out] = *cur;
                out += 1;
            }
            if cur_in != nxt_in && out < CLIP_CAP {
                let t = crossing(dc, dn);
                let mut p = [0i64; 3];
                for (r, pr) in p.iter_mut().enumerate() {
                    let delta = nxt.p[r] as i128 - cur.p[r] as i128;
                    *pr = (cur.p[r] as i128 + ((delta * t as i128 + (1 << 31)) >> 32)) as i64;
                }
                p[axis] = on_plane;
                dst[out] = ClipVertex {
                    p,
                    tag: 4 + 4 * cur.edge + plane,
                    edge: if cur_in { 4 + plane } else { cur.edge },
                };
                out += 1;
            }
        }
        if out == 0 {
            return Manifold::default();
        }
        n = out;
    }

    // Keep the points within the margin (and the first of any repeated tag,
    // which only degenerate rounding could produce), pulled back from the slop
    // onto the reference face's exact bounds; compacted in place.
    let pts = &mut poly[0];
    let mut sep = [0i64; CLIP_CAP];
    let mut count = 0;
    for idx in 0..n {
        let cv = pts[idx];
        let s = if ref_neg { -cv.p[k] } else { cv.p[k] } - hk;
        if s > margin || pts[..count].iter().any(|o| o.tag == cv.tag) {
            continue;
        }
        let mut p = cv.p;
        p[u] = p[u].clamp(-rh[u], rh[u]);
        p[v] = p[v].clamp(-rh[v], rh[v]);
        pts[count] = ClipVertex { p, ..cv };
        sep[count] = s;
        count += 1;
    }
    if count == 0 {
        return Manifold::default();
    }
    let mut chosen = [0usize, 1, 2, 3];
    let mut chosen_n = count.min(4);
    if count > 4 {
        let mut uv = [[0i64; 2]; CLIP_CAP];
        for (dst, cv) in uv.iter_mut().zip(pts.iter()) {
            *dst = [cv.p[u], cv.p[v]];
        }
        (chosen, chosen_n) = reduce(&uv[..count], &sep[..count]);
    }

    let axis_k = fx3(col(rot, k));
    let normal = if ref_neg != ref_is_b { -axis_k } else { axis_k };
    let id_base = ((ref_is_b as u32) * REF_IS_B) | (ref_face << 16) | (inc_face << 8);
    let mut manifold = Manifold {
        normal,
        count: chosen_n as u8,
        ..Manifold::default()
    };
    for (slot, &idx) in chosen.iter().take(chosen_n).enumerate() {
        let cv = &pts[idx];
        // Midway between the incident point and its projection on the face.
        let mut mid = cv.p;
        mid[k] = ((mid[k] + level) >> 1).clamp(-D_MAX, D_MAX);
        let world = |r: usize| {
            let local = round_fit(
                prod(rot[r][0], mid[0]) + prod(rot[r][1], mid[1]) + prod(rot[r][2], mid[2]),
            );
            comp(pose.position, r).to_bits().saturating_add(local)
        };
        manifold.points[slot] = ContactPoint {
            position: fx3([world(0), world(1), world(2)]),
            separation: Fx::from_bits(sep[idx]),
            id: id_base | cv.tag as u32,
        };
    }
    manifold
}

/// Where an edge from distance `dc` to distance `dn` (opposite sides of a
/// plane, at most 2^63 apart) crosses it, as a Q32.32 fraction in `[0, 1]`:
/// both are shifted down to 31 significant bits so a 64-bit division does.
#[inline(always)]
fn crossing(dc: i64, dn: i64) -> u64 {
    let mut num = dc.unsigned_abs();
    let mut den = num + dn.unsigned_abs();
    let shift = (64 - den.leading_zeros()).saturating_sub(31);
    num >>= shift;
    den >>= shift;
    (num << 32).checked_div(den).unwrap_or(0)
}

/// `(b − a) × (c − a)` (twice the signed triangle area), exact.
#[inline(always)]
fn area2(a: [i64; 2], b: [i64; 2], c: [i64; 2]) -> i128 {
    prod(b[0] - a[0], c[1] - a[1]) - prod(b[1] - a[1], c[0] - a[0])
}

/// Picks at most four of `sep.len()` (> 4) points, given their raw
/// coordinates in the reference face (`uv`, each within ±2^57) and
/// separations: the deepest, the farthest from it, and the largest-area
/// points on either side of that segment. Returns the indices in ascending
/// order and how many there are.
fn reduce(uv: &[[i64; 2]], sep: &[i64]) -> ([usize; 4], usize) {
    let n = sep.len().min(uv.len());
    let mut i0 = 0;
    for i in 1..n {
        if sep[i] < sep[i0] {
            i0 = i;
        }
    }
    let p0 = uv[i0];
    let mut i1 = i0;
    let mut far = -1i128;
    for (i, p) in uv.iter().enumerate().take(n) {
        let (dx, dy) = (p[0] - p0[0], p[1] - p0[1]);
        let d2 = prod(dx, dx) + prod(dy, dy);
        if i != i0 && d2 > far {
            far = d2;
            i1 = i;
        }
    }
    let p1 = uv[i1];
    let (mut pos, mut pos_area) = (None, 0i128);
    let (mut neg, mut neg_area) = (None, 0i128);
    for (i, &p) in uv.iter().enumerate().take(n) {
        if i == i0 || i == i1 {
            continue;
        }
        let a = area2(p0, p1, p);
        if a > pos_area {
            pos_area = a;
            pos = Some(i);
        }
        if a < neg_area {
            neg_area = a;
            neg = Some(i);
        }
    }
    let mut picked = [i0, i1, 0, 0];
    let mut count = 2;
    match (pos, neg) {
        (Some(i2), Some(i3)) => {
            picked[2] = i2;
            picked[3] = i3;
            count = 4;
        }
        (Some(i2), None) | (None, Some(i2)) => {
            // Every other point is on one side: add the one that grows the
            // triangle (p0, p1, p2) the most, outside its edge p1→p2 or p2→p0.
            picked[2] = i2;
            count = 3;
            let p2 = uv[i2];
            let ccw = pos.is_some();
            let mut gain_best = 0i128;
            for (i, &q) in uv.iter().enumerate().take(n) {
                if i == i0 || i == i1 || i == i2 {
                    continue;
                }
                let (g1, g2) = (area2(p1, p2, q), area2(p2, p0, q));
                let gain = if ccw { (-g1).max(-g2) } else { g1.max(g2) };
                if gain > gain_best {
                    gain_best = gain;
                    picked[3] = i;
                    count = 4;
                }
            }
        }
        (None, None) => {}
    }
    picked[..count].sort_unstable();
    (picked, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Mat3, Quat, Rng};

    fn pose(position: Vec3, rotation: Mat3) -> Pose {
        Pose { position, rotation }
    }

    fn at(x: &str, y: &str, z: &str) -> Vec3 {
        Vec3::new(Fx::lit(x), Fx::lit(y), Fx::lit(z))
    }

    fn rot(axis: Vec3, angle: Fx) -> Mat3 {
        Mat3::from_quat(Quat::from_axis_angle(axis, angle))
    }

    fn near(a: Fx, b: Fx, tol: &str) -> bool {
        (a - b).abs() <= Fx::lit(tol)
    }

    fn near_v(a: Vec3, b: Vec3, tol: &str) -> bool {
        near(a.x, b.x, tol) && near(a.y, b.y, tol) && near(a.z, b.z, tol)
    }

    fn points(m: &Manifold) -> &[ContactPoint] {
        &m.points[..m.count as usize]
    }

    fn ids_distinct(m: &Manifold) -> bool {
        let p = points(m);
        (0..p.len()).all(|i| (i + 1..p.len()).all(|j| p[i].id != p[j].id))
    }

    fn unit_normal(m: &Manifold) -> bool {
        near(m.normal.length_squared(), Fx::ONE, "0.000001")
    }

    /// Same normal up to sign flip and the same point positions and
    /// separations (as sets, within `tol`).
    fn mirrored(ab: &Manifold, ba: &Manifold, tol: &str) -> bool {
        ab.count == ba.count
            && near_v(ab.normal, -ba.normal, tol)
            && points(ab).iter().all(|p| {
                points(ba).iter().any(|q| {
                    near_v(p.position, q.position, tol) && near(p.separation, q.separation, tol)
                })
            })
    }

    const UNIT: Vec3 = Vec3::ONE;
    const SMALL_MARGIN: Fx = Fx::lit("0.02");

    /// Small box resting on a big one, offset: hand-computed manifold.
    #[test]
    fn resting_face_contact_matches_hand_computation() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let b = pose(at("0.2", "1.4", "-0.1"), Mat3::IDENTITY);
        let m = box_box(&a, UNIT, &b, Vec3::splat(Fx::HALF), SMALL_MARGIN);
        assert_eq!(m.count, 4);
        assert_eq!(m.normal, Vec3::Y);
        // Reference face +y of A (2), incident face −y of B (3); the incident
        // face's tangent axes are z then x, so v0 = (+z, +x), v1 = (−z, +x), ...
        let base = 2 << 16 | 3 << 8;
        let expected = [
            (at("0.7", "0.95", "0.4"), base),
            (at("0.7", "0.95", "-0.6"), base | 1),
            (at("-0.3", "0.95", "-0.6"), base | 2),
            (at("-0.3", "0.95", "0.4"), base | 3),
        ];
        for (p, (pos, id)) in points(&m).iter().zip(expected) {
            assert!(near_v(p.position, pos, "0.000000001"), "{p:?} vs {pos:?}");
            assert!(near(p.separation, Fx::lit("-0.1"), "0.000000001"), "{p:?}");
            assert_eq!(p.id, id);
        }
        assert!(ids_distinct(&m));
    }

    /// Equal boxes face to face: four corners, separation = −overlap.
    #[test]
    fn equal_boxes_stacked() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let b = pose(at("0", "1.99", "0"), Mat3::IDENTITY);
        let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
        assert_eq!(m.count, 4);
        assert_eq!(m.normal, Vec3::Y);
        for p in points(&m) {
            assert_eq!(p.separation, Fx::lit("-0.01"));
            assert!(near(p.position.y, Fx::lit("0.995"), "0.000000001"));
            assert_eq!(p.position.x.abs(), Fx::ONE);
            assert_eq!(p.position.z.abs(), Fx::ONE);
        }
        assert!(ids_distinct(&m));
    }

    /// A box turned 45° about y on another: the contact octagon is reduced to a
    /// well-spread quad.
    #[test]
    fn rotated_box_on_box_is_clipped_and_reduced() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let b = pose(at("0", "1.99", "0"), rot(Vec3::Y, Fx::FRAC_PI_4));
        let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
        assert_eq!(m.count, 4);
        assert_eq!(m.normal, Vec3::Y);
        assert!(ids_distinct(&m));
        let sqrt2 = Fx::TWO.sqrt();
        for p in points(&m) {
            assert!(near(p.separation, Fx::lit("-0.01"), "0.000001"), "{p:?}");
            assert!(near(p.position.y, Fx::lit("0.995"), "0.000001"));
            // Inside A's top face and inside B's rotated bottom face.
            let (x, z) = (p.position.x.abs(), p.position.z.abs());
            assert!(
                x <= Fx::lit("1.000001") && z <= Fx::lit("1.000001"),
                "{p:?}"
            );
            assert!(x + z <= sqrt2 + Fx::lit("0.000001"), "{p:?}");
            // Every octagon vertex is made by clipping (no original corner).
            assert!(p.id & 0xff >= 4, "{p:?}");
        }
        // The quad covers most of the octagon (area 4 − 4·(2 − √2)²/2 ≈ 3.31).
        let q = points(&m);
        let mut area2 = Fx::ZERO;
        for i in 0..4 {
            let (p, r) = (q[i].position, q[(i + 1) % 4].position);
            area2 += p.x.mul_add_mul(r.z, -r.x, p.z);
        }
        assert!(area2.abs() >= Fx::from_int(4), "twice the area: {area2:?}");
    }

    /// A slightly tilted box on another (a wobbling stack) still gets a face
    /// contact on A's face, not an edge contact.
    #[test]
    fn tilted_stack_prefers_face_axis() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let tilt = rot(Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO), Fx::lit("0.01"));
        let b = pose(at("0.1", "1.995", "0"), tilt);
        let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
        assert!(m.count >= 2, "{m:?}");
        assert_eq!(m.normal, Vec3::Y);
        assert_eq!(m.points[0].id >> 16, 2, "reference face +y of A");
    }

    /// Two boxes balanced on edges crossing at right angles: one point in the
    /// middle, normal up.
    #[test]
    fn edge_on_edge_crossing() {
        let sqrt2 = Fx::TWO.sqrt();
        // A's top is a ridge along x at y = √2; B's bottom a ridge along z.
        let a = pose(Vec3::ZERO, rot(Vec3::X, Fx::FRAC_PI_4));
        let y_b = sqrt2 + sqrt2 - Fx::lit("0.02");
        let b = pose(
            Vec3::new(Fx::ZERO, y_b, Fx::ZERO),
            rot(Vec3::Z, Fx::FRAC_PI_4),
        );
        let m = box_box(&a, UNIT, &b, UNIT, SMALL_MARGIN);
        assert_eq!(m.count, 1, "{m:?}");
        assert!(near_v(m.normal, Vec3::Y, "0.000001"), "{m:?}");
        assert!(unit_normal(&m));
        let p = m.points[0];
        assert!(near(p.separation, Fx::lit("-0.02"), "0.000001"), "{p:?}");
        let expected = Vec3::new(Fx::ZERO, sqrt2 - Fx::lit("0.01"), Fx::ZERO);
        assert!(near_v(p.position, expected, "0.000001"), "{p:?}");
        // A's edge along x (axis 0) on the +y, −z side of its frame: 0 + 2;
        // B's edge along z (axis 2) on the −x, −y side of its frame: 8 + 1 + 2.
        assert_eq!(p.id, KIND_EDGE | 2 << 8 | 11);
        let ba = box_box(&b, UNIT, &a, UNIT, SMALL_MARGIN);
        assert!(mirrored(&m, &ba, "0.000001"), "{m:?}\n{ba:?}");
        assert_eq!(ba.points[0].id, KIND_EDGE | 11 << 8 | 2);
    }

    #[test]
    fn separated_beyond_margin_is_empty() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let b = pose(at("0", "2.2", "0"), Mat3::IDENTITY);
        assert_eq!(box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1")).count, 0);
        // Separated along an edge axis only (face axes overlap).
        let a = pose(Vec3::ZERO, rot(Vec3::X, Fx::FRAC_PI_4));
        let y_b = Fx::TWO.sqrt().mul_int(2) + Fx::lit("0.05");
        let b = pose(
            Vec3::new(Fx::ZERO, y_b, Fx::ZERO),
            rot(Vec3::Z, Fx::FRAC_PI_4),
        );
        assert_eq!(box_box(&a, UNIT, &b, UNIT, Fx::lit("0.02")).count, 0);
        let m = box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1"));
        assert_eq!(m.count, 1);
        assert!(near(m.points[0].separation, Fx::lit("0.05"), "0.000001"));
    }

    #[test]
    fn within_margin_gives_speculative_points() {
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        let b = pose(at("0.3", "2.05", "0"), Mat3::IDENTITY);
        let m = box_box(&a, UNIT, &b, UNIT, Fx::lit("0.1"));
        assert_eq!(m.count, 4);
        assert_eq!(m.normal, Vec3::Y);
        for p in points(&m) {
            assert_eq!(p.separation, Fx::lit("0.05"));
            assert!(near(p.position.y, Fx::lit("1.025"), "0.000000001"));
        }
        // B's bottom face clipped by A's side plane x = 1.
        assert!(points(&m).iter().any(|p| p.id & 0xff >= 4));
        assert!(ids_distinct(&m));
    }

    #[test]
    fn swapping_a_and_b_negates_the_normal_and_keeps_the_points() {
        let cases = [
            (
                pose(Vec3::ZERO, Mat3::IDENTITY),
                UNIT,
                pose(at("0.2", "1.4", "-0.1"), Mat3::IDENTITY),
                Vec3::splat(Fx::HALF),
            ),
            (
                pose(Vec3::ZERO, Mat3::IDENTITY),
                at("2", "0.5", "1"),
                pose(at("-0.5", "0.2", "1.9"), rot(Vec3::Y, Fx::lit("0.3"))),
                at("0.5", "0.25", "1"),
            ),
        ];
        for (a, ha, b, hb) in cases {
            let ab = box_box(&a, ha, &b, hb, SMALL_MARGIN);
            let ba = box_box(&b, hb, &a, ha, SMALL_MARGIN);
            assert!(ab.count > 0);
            assert!(mirrored(&ab, &ba, "0.000001"), "{ab:?}\n{ba:?}");
        }
    }

    #[test]
    fn ids_are_stable_under_small_motion() {
        let cases = [
            (
                at("0.2", "1.4", "-0.1"),
                Mat3::IDENTITY,
                Vec3::splat(Fx::HALF),
            ),
            (at("0", "1.99", "0"), rot(Vec3::Y, Fx::FRAC_PI_4), UNIT),
            (at("0.3", "2.005", "0"), Mat3::IDENTITY, UNIT),
        ];
        let a = pose(Vec3::ZERO, Mat3::IDENTITY);
        for (pos, r, hb) in cases {
            let m0 = box_box(&a, UNIT, &pose(pos, r), hb, SMALL_MARGIN);
            let moved = pos + at("0.0001", "-0.00002", "0.0002");
            let m1 = box_box(&a, UNIT, &pose(moved, r), hb, SMALL_MARGIN);
            assert!(m0.count > 0);
            assert_eq!(m0.count, m1.count, "{m0:?}\n{m1:?}");
            for (p, q) in points(&m0).iter().zip(points(&m1)) {
                assert_eq!(p.id, q.id, "{m0:?}\n{m1:?}");
            }
        }
    }

    #[test]
    fn identical_poses_and_degenerate_sizes() {
        let r = rot(Vec3::Y, Fx::lit("0.7"));
        let p = pose(at("3", "-2", "1"), r);
        let m = box_box(&p, UNIT, &p, UNIT, SMALL_MARGIN);
        assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
        let m = box_box(&p, Vec3::ZERO, &p, Vec3::ZERO, SMALL_MARGIN);
        assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
        let m = box_box(&p, UNIT, &p, -UNIT, Fx::ZERO);
        assert!(m.count > 0 && unit_normal(&m) && ids_distinct(&m));
    }

    fn random_rotation(rng: &mut Rng) -> Mat3 {
        let mut c = || rng.fx_range(Fx::NEG_ONE, Fx::ONE);
        Mat3::from_quat(Quat::from_wxyz(c(), c(), c(), c()).normalize())
    }

    fn random_vec(rng: &mut Rng, lo: Fx, hi: Fx) -> Vec3 {
        Vec3::new(
            rng.fx_range(lo, hi),
            rng.fx_range(lo, hi),
            rng.fx_range(lo, hi),
        )
    }

    #[test]
    fn sqrt_upper_bounds_the_root() {
        let mut rng = Rng::new(5, 5);
        for _ in 0..10_000 {
            let shift = rng.below(62);
            let x = (rng.next_u64() >> 1 >> shift).max(1) as i64;
            let exact = Fx::from_bits(x).sqrt().to_bits();
            let upper = sqrt_upper(x);
            // Correctly rounded root <= bound, and the bound is within 7%.
            assert!(exact <= upper, "{x}");
            assert!(upper as i128 <= exact as i128 * 107 / 100 + 2, "{x}");
        }
    }

    /// Random boxes: never panics, at most four points, unit normal, distinct
    /// ids, separations within the margin, and a contact whenever B's centre
    /// is inside A.
    #[test]
    fn fuzz_random_boxes() {
        let mut rng = Rng::new(0x0b0c_b0c5, 7);
        for round in 0..20_000 {
            let a = pose(
                random_vec(&mut rng, Fx::from_int(-3), Fx::from_int(3)),
                random_rotation(&mut rng),
            );
            let b = pose(
                random_vec(&mut rng, Fx::from_int(-3), Fx::from_int(3)),
                random_rotation(&mut rng),
            );
            let half = |rng: &mut Rng| {
                let mut h = random_vec(rng, Fx::ZERO, Fx::TWO);
                if rng.chance(1, 10) {
                    h.x = Fx::ZERO;
                }
                if rng.chance(1, 20) {
                    h = Vec3::ZERO;
                }
                h
            };
            let (ha, hb) = (half(&mut rng), half(&mut rng));
            let margin = rng.fx_range(Fx::ZERO, Fx::lit("0.2"));
            let m = box_box(&a, ha, &b, hb, margin);
            assert!(m.count <= 4, "round {round}: {m:?}");
            assert!(ids_distinct(&m), "round {round}: {m:?}");
            if m.count > 0 {
                assert!(unit_normal(&m), "round {round}: {m:?}");
            }
            for p in points(&m) {
                assert!(p.separation <= margin, "round {round}: {m:?}");
                // The two surface points, half a separation either side of
                // the contact position, lie on (within a tolerance of) A and
                // B.
                let half_gap = m.normal * p.separation.scale_pow2(-1);
                for (pose, h, q) in [
                    (&a, ha, p.position - half_gap),
                    (&b, hb, p.position + half_gap),
                ] {
                    let local = pose.rotation.transpose_mul_vec3(q - pose.position).abs();
                    let slack = h + Vec3::splat(Fx::lit("0.01"));
                    let ok = local.x <= slack.x && local.y <= slack.y && local.z <= slack.z;
                    // A speculative edge pair's supporting edges may end before
                    // their lines' closest points (the axis gap is then only a
                    // lower bound of the distance): not checked.
                    let speculative_edge = p.id & KIND_EDGE != 0 && p.separation.is_positive();
                    assert!(
                        ok || speculative_edge,
                        "round {round}: {p:?} not on {pose:?} {h:?}: {m:?}"
                    );
                }
            }
            let local = a.rotation.transpose_mul_vec3(b.position - a.position);
            if local.abs().x < ha.x && local.abs().y < ha.y && local.abs().z < ha.z {
                assert!(m.count > 0, "round {round}: centre inside but {m:?}");
            }
            assert_eq!(m, box_box(&a, ha, &b, hb, margin));
        }
    }

    /// Extreme inputs: huge coordinates and extents, garbage matrices, any
    /// margin. Only the structural guarantees are checked.
    #[test]
    fn fuzz_extreme_inputs_never_panic() {
        let mut rng = Rng::new(0xdead_beef, 3);
        let huge = Fx::from_int(1 << 30);
        for round in 0..20_000 {
            let scale = match round % 4 {
                0 => Fx::MAX,
                1 => huge,
                2 => Fx::from_int(10),
                _ => Fx::lit("0.001"),
            };
            let matrix = |rng: &mut Rng| {
                if rng.chance(1, 2) {
                    random_rotation(rng)
                } else {
                    Mat3::from_rows(
                        random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                        random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                        random_vec(rng, -Fx::from_int(4), Fx::from_int(4)),
                    )
                }
            };
            let a = pose(random_vec(&mut rng, -scale, scale), matrix(&mut rng));
            let b = pose(random_vec(&mut rng, -scale, scale), matrix(&mut rng));
            let ha = random_vec(&mut rng, -scale, scale);
            let hb = random_vec(&mut rng, -scale, scale);
            let margin = rng.fx_range(-scale, scale);
            let m = box_box(&a, ha, &b, hb, margin);
            assert!(m.count <= 4, "round {round}: {m:?}");
            assert!(ids_distinct(&m), "round {round}: {m:?}");
        }
        let all = [Fx::MIN, Fx::MAX, Fx::ZERO];
        for &x in &all {
            for &h in &all {
                let p = pose(Vec3::splat(x), Mat3::IDENTITY);
                let q = pose(
                    Vec3::splat(-x),
                    Mat3::from_rows(Vec3::splat(h), Vec3::ZERO, Vec3::splat(x)),
                );
                let m = box_box(&p, Vec3::splat(h), &q, Vec3::splat(x), h);
                assert!(m.count <= 4);
            }
        }
    }
}
