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
//! products exactly in [`Wide`] (Q64.64), rounding once per result (as
//! [`Vec3::dot`] does), with the wrapping policy of [`lockstep_fx::wide`]. Inputs are first capped so that nothing can overflow and no
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
//!
//! **Files.** This one chooses the contact axis (the separating-axis test);
//! `clip.rs` builds a face contact by clipping, `reduce.rs` keeps four of
//! its points, `edge.rs` builds an edge–edge contact; `tests.rs` holds the
//! hand-computed cases and the fuzzing of all of them together.

mod clip;
mod edge;
mod reduce;
#[cfg(test)]
mod tests;

use super::{Manifold, Pose};
use lockstep_fx::{Fx, Mat3, Vec3, Wide};

/// Relative part of the hysteresis that a challenger axis must beat.
pub(super) const REL_TOL: Fx = Fx::lit("0.05");
/// Absolute part of the hysteresis that a challenger axis must beat.
pub(super) const ABS_TOL: Fx = Fx::lit("0.001");
/// Edge pairs with `|aᵢ·bⱼ|` at or above this (`|aᵢ × bⱼ|² <= 10⁻⁶` for
/// unit axes) are treated as parallel and skipped.
pub(super) const PARALLEL: i64 = Fx::lit("0.9999995").to_bits();
/// Edge axes shorter than this (squared) are skipped even when the matrices
/// are not orthonormal.
pub(super) const EDGE_EPS2: i64 = Fx::lit("0.000001").to_bits();
/// How far the side planes are pushed out (at most, and at most 1/16 of the
/// face's half extent): an incident vertex that pokes past a side plane by
/// less than this is kept as it is, so that boxes whose sides are flush (a
/// column of equal boxes) keep stable vertex ids under jitter instead of
/// flickering between a vertex and a clipped point.
pub(super) const CLIP_SLOP: i64 = Fx::lit("0.001").to_bits();
/// Id bit marking an edge–edge contact.
pub(super) const KIND_EDGE: u32 = 1 << 24;
/// Id bit marking a face contact whose reference face belongs to B.
pub(super) const REF_IS_B: u32 = 1 << 20;
/// Capacity of the clipping buffers: a convex quad clipped by four planes has
/// at most 8 vertices; the slack absorbs rounding, and pushes beyond it are
/// dropped rather than panicking.
pub(super) const CLIP_CAP: usize = 12;
/// Largest half extent used, raw (2^24 units).
pub(super) const H_MAX: u64 = 1 << 56;
/// Largest centre offset used along an axis, raw (2^27 units): farther boxes
/// are separated anyway, as `H_MAX` keeps every radius below `D_MAX / 2`.
pub(super) const D_MAX: i64 = 1 << 59;
/// Largest rotation-matrix entry used, raw (2).
pub(super) const R_MAX: i64 = 1 << 33;

/// A vector of raw Q32.32 values.
pub(super) type V = [i64; 3];
/// A matrix of raw Q32.32 values, `m[row][col]`.
pub(super) type M = [[i64; 3]; 3];

// The hot path works on raw `i64` Q32.32 values with sums of products in
// `Wide` (Q64.64), rounded once. The clamps above bound every intermediate
// (products below 2^97, sums of at most six of them), so wrapping sums are
// exact and no saturation checks are needed.

/// The exact product of two raw values.
#[inline(always)]
pub(super) fn prod(a: i64, b: i64) -> Wide {
    Wide::raw_product(a, b)
}

/// `a₀b₀ + a₁b₁ + a₂b₂`, exact.
#[inline(always)]
fn dot3(a: [i64; 3], b: [i64; 3]) -> Wide {
    prod(a[0], b[0])
        .wrapping_add(prod(a[1], b[1]))
        .wrapping_add(prod(a[2], b[2]))
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
pub(super) fn col(m: &M, c: usize) -> V {
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
        da[i] = dot3(col(&ra, i), d)
            .round_saturating()
            .to_bits()
            .clamp(-D_MAX, D_MAX);
        db[i] = dot3(col(&rb, i), d)
            .round_saturating()
            .to_bits()
            .clamp(-D_MAX, D_MAX);
        for j in 0..3 {
            c[i][j] = dot3(col(&ra, i), col(&rb, j)).round_wrapping().to_bits();
            ac[i][j] = c[i][j].abs();
        }
    }

    // A's face axes, then B's.
    let mut sep_a = i64::MIN;
    let mut axis_a = 0;
    for i in 0..3 {
        let r = dot3(hb, ac[i]).round_wrapping().to_bits();
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
        let r = dot3(ha, col(&ac, j)).round_wrapping().to_bits();
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
    let margin_wide = Wide::from_raw(margin);
    let mut edge: Option<(usize, usize, Fx, Fx)> = None;
    let mut edge_best = beat(face_sep);
    let mut bar_raw = edge_best.min(0);
    let mut bar = Wide::from_raw(bar_raw);
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            if ac[i][j] >= PARALLEL {
                continue;
            }
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let proj = prod(da[i2], c[i1][j])
                .wrapping_sub(prod(da[i1], c[i2][j]))
                .abs();
            let radii = prod(ha[i1], ac[i2][j])
                .wrapping_add(prod(ha[i2], ac[i1][j]))
                .wrapping_add(prod(hb[j1], ac[i][j2]))
                .wrapping_add(prod(hb[j2], ac[i][j1]));
            let raw = proj.wrapping_sub(radii);
            if raw > margin_wide {
                return Manifold::default();
            }
            if raw <= bar {
                continue;
            }
            let len2 = prod(c[i1][j], c[i1][j])
                .wrapping_add(prod(c[i2][j], c[i2][j]))
                .round_wrapping()
                .to_bits();
            if len2 < EDGE_EPS2 || raw <= prod(bar_raw, sqrt_upper(len2)) {
                continue;
            }
            let len2 = Fx::from_bits(len2);
            let s = raw.round_saturating() / len2.sqrt();
            if s.to_bits() > margin {
                return Manifold::default();
            }
            if s.to_bits() > edge_best {
                edge_best = s.to_bits();
                bar_raw = edge_best.min(0);
                bar = Wide::from_raw(bar_raw);
                edge = Some((i, j, s, len2));
            }
        }
    }

    if let Some((i, j, s, len2)) = edge {
        return edge::edge_contact(a, &ha, &hb, &c, &da, (i, j), s, len2);
    }
    if ref_is_b {
        // Incident box A seen from B: its axes are the rows of C.
        let m: M = [col(&c, 0), col(&c, 1), col(&c, 2)];
        let centre = [-db[0], -db[1], -db[2]];
        clip::face_contact(b, &rb, &hb, &ha, &m, &centre, axis_b, true, margin)
    } else {
        clip::face_contact(a, &ra, &ha, &hb, &c, &da, axis_a, false, margin)
    }
}

/// Component `axis` (0, 1, 2) of `v`.
#[inline(always)]
pub(super) fn comp(v: Vec3, axis: usize) -> Fx {
    match axis {
        0 => v.x,
        1 => v.y,
        _ => v.z,
    }
}

/// `v` with component `axis` replaced by `x`.
#[inline(always)]
pub(super) fn with_comp(mut v: Vec3, axis: usize, x: Fx) -> Vec3 {
    match axis {
        0 => v.x = x,
        1 => v.y = x,
        _ => v.z = x,
    }
    v
}

/// Raw values as a `Vec3`.
#[inline(always)]
pub(super) fn fx3(v: V) -> Vec3 {
    Vec3::new(
        Fx::from_bits(v[0]),
        Fx::from_bits(v[1]),
        Fx::from_bits(v[2]),
    )
}

/// A cheap upper bound of `sqrt(x)` (raw Q32.32, `x > 0`), at most ~6% high:
/// `(x + a²) / 2a >= sqrt(x)` with `a` the power of two nearest the root.
#[inline(always)]
pub(super) fn sqrt_upper(x: i64) -> i64 {
    let wide = (x as u128) << 32;
    let k = (128 - wide.leading_zeros()) / 2;
    (((wide + (1u128 << (2 * k))) >> (k + 1)) + 1).min(i64::MAX as u128) as i64
}
