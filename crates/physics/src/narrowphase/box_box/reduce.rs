//! Contact reduction: which four points of a clipped contact polygon to
//! keep (the deepest, the farthest from it, and the largest triangles on
//! either side of that segment).

use super::prod;
use lockstep_fx::Wide;

/// `(b − a) × (c − a)` (twice the signed triangle area), exact.
#[inline(always)]
fn area2(a: [i64; 2], b: [i64; 2], c: [i64; 2]) -> Wide {
    prod(b[0] - a[0], c[1] - a[1]).wrapping_sub(prod(b[1] - a[1], c[0] - a[0]))
}

/// Picks at most four of `sep.len()` (> 4) points, given their raw
/// coordinates in the reference face (`uv`, each within ±2^57) and
/// separations: the deepest, the farthest from it, and the largest-area
/// points on either side of that segment. Returns the indices in ascending
/// order and how many there are.
pub(super) fn reduce(uv: &[[i64; 2]], sep: &[i64]) -> ([usize; 4], usize) {
    let n = sep.len().min(uv.len());
    let mut i0 = 0;
    for i in 1..n {
        if sep[i] < sep[i0] {
            i0 = i;
        }
    }
    let p0 = uv[i0];
    let mut i1 = i0;
    let mut far = Wide::from_bits(-1);
    for (i, p) in uv.iter().enumerate().take(n) {
        let (dx, dy) = (p[0] - p0[0], p[1] - p0[1]);
        let d2 = prod(dx, dx).wrapping_add(prod(dy, dy));
        if i != i0 && d2 > far {
            far = d2;
            i1 = i;
        }
    }
    let p1 = uv[i1];
    let (mut pos, mut pos_area) = (None, Wide::ZERO);
    let (mut neg, mut neg_area) = (None, Wide::ZERO);
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
            let mut gain_best = Wide::ZERO;
            for (i, &q) in uv.iter().enumerate().take(n) {
                if i == i0 || i == i1 || i == i2 {
                    continue;
                }
                let (g1, g2) = (area2(p1, p2, q), area2(p2, p0, q));
                let gain = if ccw {
                    Wide::ZERO.wrapping_sub(g1).max(Wide::ZERO.wrapping_sub(g2))
                } else {
                    g1.max(g2)
                };
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
