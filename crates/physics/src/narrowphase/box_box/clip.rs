//! Face contact: the incident face clipped against the reference face's side
//! planes (Sutherland–Hodgman), kept within the margin and reduced to four
//! points (see the parent module for the id layout and tie rules).

use super::reduce::reduce;
use super::{CLIP_CAP, CLIP_SLOP, D_MAX, M, REF_IS_B, V, col, comp, fx3, prod};
use crate::narrowphase::{ContactPoint, Manifold, Pose};
use lockstep_fx::{Fx, Wide};

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
pub(super) fn face_contact(
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
    // The corners `at ± e1 ± e2`, in the order of the incident vertices
    // (+,+) (−,+) (−,−) (+,−), each coordinate summed in Q64.64 and
    // rounded once.
    let mut at = [Wide::ZERO; 3];
    let mut e1 = [Wide::ZERO; 3];
    let mut e2 = [Wide::ZERO; 3];
    for r in 0..3 {
        at[r] = Wide::from_raw(centre[r]).wrapping_add(prod(hf, m[r][f]));
        e1[r] = prod(ih[g1], m[r][g1]);
        e2[r] = prod(ih[g2], m[r][g2]);
    }
    let mut corners = [[0i64; 3]; 4];
    for r in 0..3 {
        let (plus, minus) = (at[r].wrapping_add(e1[r]), at[r].wrapping_sub(e1[r]));
        corners[0][r] = plus.wrapping_add(e2[r]).round_wrapping().to_bits();
        corners[1][r] = minus.wrapping_add(e2[r]).round_wrapping().to_bits();
        corners[2][r] = minus.wrapping_sub(e2[r]).round_wrapping().to_bits();
        corners[3][r] = plus.wrapping_sub(e2[r]).round_wrapping().to_bits();
    }
    let mut poly = [[ClipVertex::default(); CLIP_CAP]; 2];
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
                    // Corners lie within ±2^61, so the difference fits.
                    let delta = nxt.p[r].wrapping_sub(cur.p[r]);
                    *pr = cur.p[r].wrapping_add(prod(delta, t as i64).round_wrapping().to_bits());
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
            let local = super::dot3(rot[r], mid).round_wrapping().to_bits();
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
