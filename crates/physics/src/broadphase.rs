//! Broadphase: which bounding boxes overlap, by sort and sweep on one axis.
//!
//! Deterministic by construction: proxies are sorted by the key
//! `(min on the sweep axis, body index)`, a total order, so the sorted result
//! does not depend on the order kept from the previous step (which is kept
//! only to make the insertion sort nearly free); the output pairs are sorted
//! `(lower index, higher index)` by [`sort_pairs`], a counting sort. The
//! sweep axis is the one along which the proxies' centres spread the most;
//! the previous step's axis is kept unless another spreads an eighth more
//! (so that a symmetric scene does not flip axes, and re-sort, every step).
//! The axis and the kept order only make the search faster: the pairs found
//! are the same for any of them.

use lockstep_fx::Fx;

use crate::aabb::Aabb;

/// One body's bounds as the broadphase sees them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proxy {
    pub aabb: Aabb,
    /// Body slot index.
    pub body: u32,
    /// Whether the body moves this step; pairs of two inactive proxies are
    /// not reported.
    pub active: bool,
    /// Collision layers (membership, filter).
    pub groups: u32,
    pub mask: u32,
}

/// Finds overlapping pairs; keeps its sorted order between calls for speed.
#[derive(Default, Debug)]
pub(crate) struct Broadphase {
    order: Vec<u32>,
    keys: Vec<(Fx, u32)>,
    /// The sweep axis of the last call.
    axis: u8,
    /// Scratch of [`sort_pairs`].
    counts: Vec<u32>,
    sorted: Vec<(u32, u32)>,
    /// The proxies in sweep order, and each thread's pairs.
    sorted_proxies: Vec<Proxy>,
    runs: Vec<Vec<(u32, u32)>>,
}

/// Below this many proxies the sweep runs on one thread.
const PARALLEL_PROXIES: usize = 2048;

impl Broadphase {
    /// Overlapping pairs `(a, b)` with `a < b` (body indices), at least one
    /// active and their collision layers agreeing, in no particular order
    /// (see [`Broadphase::sort_pairs`]).
    pub fn pairs(&mut self, proxies: &[Proxy], threads: usize, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let n = proxies.len();
        if n < 2 {
            return;
        }
        let axis = sweep_axis(proxies, self.axis);
        if axis != self.axis {
            self.axis = axis;
            self.order.clear();
        }
        // Positions in `proxies` sorted by (min on axis, body).
        if self.order.len() != n || self.order.iter().any(|&i| i as usize >= n) {
            self.order = (0..n as u32).collect();
        }
        self.keys.clear();
        self.keys.extend(self.order.iter().map(|&i| {
            let p = &proxies[i as usize];
            (p.aabb.min.axis(axis), p.body)
        }));
        // Insertion sort: linear when little moved since the last step; past
        // a budget of swaps (a fresh or scrambled order) a full sort is
        // cheaper. Both give the one order of the total key.
        let mut budget = 8 * n;
        'insertion: for i in 1..n {
            let mut j = i;
            while j > 0 && self.keys[j - 1] > self.keys[j] {
                self.keys.swap(j - 1, j);
                self.order.swap(j - 1, j);
                j -= 1;
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    let mut both: Vec<((Fx, u32), u32)> = self
                        .keys
                        .iter()
                        .copied()
                        .zip(self.order.iter().copied())
                        .collect();
                    both.sort_unstable();
                    for (k, (key, idx)) in both.into_iter().enumerate() {
                        self.keys[k] = key;
                        self.order[k] = idx;
                    }
                    break 'insertion;
                }
            }
        }
        // The proxies in sweep order, then a sweep: each proxy meets the
        // ones after it whose interval starts before its own ends. Runs of
        // the sorted proxies are independent: with `threads` > 1 and enough
        // proxies, each thread sweeps one run (against everything after it)
        // into its own list.
        self.sorted_proxies.clear();
        self.sorted_proxies
            .extend(self.order.iter().map(|&i| proxies[i as usize]));
        let keys = &self.keys;
        let sorted = &self.sorted_proxies;
        let sweep = |from: usize, to: usize, out: &mut Vec<(u32, u32)>| {
            for i in from..to {
                let a = &sorted[i];
                let a_max = a.aabb.max.axis(axis);
                for (k, b) in keys[i + 1..].iter().zip(&sorted[i + 1..]) {
                    if k.0 > a_max {
                        break;
                    }
                    if (a.active || b.active)
                        && a.groups & b.mask != 0
                        && b.groups & a.mask != 0
                        && a.aabb.overlaps(&b.aabb)
                    {
                        out.push(if a.body < b.body {
                            (a.body, b.body)
                        } else {
                            (b.body, a.body)
                        });
                    }
                }
            }
        };
        let threads = if n >= PARALLEL_PROXIES {
            threads.max(1)
        } else {
            1
        };
        if threads == 1 {
            sweep(0, n, out);
            return;
        }
        self.runs.resize_with(threads, Vec::new);
        let runs = &mut self.runs[..threads];
        let chunk = n.div_ceil(threads);
        std::thread::scope(|s| {
            let mut jobs = runs.iter_mut().enumerate();
            let first = jobs.next();
            for (t, run) in jobs {
                s.spawn(move || {
                    run.clear();
                    sweep((t * chunk).min(n), ((t + 1) * chunk).min(n), run);
                });
            }
            if let Some((_, run)) = first {
                run.clear();
                sweep(0, chunk.min(n), run);
            }
        });
        for run in runs.iter() {
            out.extend_from_slice(run);
        }
    }

    /// Sorts pairs `(a, b)` of body indices below `bodies` ascending, in
    /// time linear in pairs and bodies: a counting sort on `a`, then each run
    /// of one `a` (a body's few neighbours) by `b`.
    pub fn sort_pairs(&mut self, pairs: &mut Vec<(u32, u32)>, bodies: usize) {
        let counts = &mut self.counts;
        counts.clear();
        counts.resize(bodies + 1, 0);
        for &(a, _) in pairs.iter() {
            counts[a as usize + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let sorted = &mut self.sorted;
        sorted.clear();
        sorted.resize(pairs.len(), (0, 0));
        for &(a, b) in pairs.iter() {
            let slot = &mut counts[a as usize];
            sorted[*slot as usize] = (a, b);
            *slot += 1;
        }
        // Runs of one `a` are short: insertion sort by `b`.
        for i in 1..sorted.len() {
            let mut j = i;
            while j > 0 && sorted[j - 1] > sorted[j] {
                sorted.swap(j - 1, j);
                j -= 1;
            }
        }
        std::mem::swap(pairs, sorted);
    }
}

/// The axis along which the proxies' centres spread the most, keeping
/// `current` unless another spreads an eighth more.
fn sweep_axis(proxies: &[Proxy], current: u8) -> u8 {
    let mut spreads = [Fx::ZERO; 3];
    for (axis, spread) in (0..3u8).zip(spreads.iter_mut()) {
        let (mut lo, mut hi) = (Fx::MAX, Fx::MIN);
        for p in proxies {
            // min + max is twice the centre; enough for comparing spreads.
            let c = p.aabb.min.axis(axis).scale_pow2(-1) + p.aabb.max.axis(axis).scale_pow2(-1);
            lo = lo.min(c);
            hi = hi.max(c);
        }
        *spread = hi - lo;
    }
    let current = current.min(2);
    let mut best = current;
    for axis in 0..3u8 {
        let bar = spreads[usize::from(best)];
        if spreads[usize::from(axis)] > bar + bar.scale_pow2(-3) {
            best = axis;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Rng, Vec3};

    fn brute(proxies: &[Proxy]) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (i, a) in proxies.iter().enumerate() {
            for b in &proxies[i + 1..] {
                if (a.active || b.active) && a.aabb.overlaps(&b.aabb) {
                    out.push((a.body.min(b.body), a.body.max(b.body)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn matches_brute_force_across_steps() {
        let mut rng = Rng::new(7, 1);
        let mut bp = Broadphase::default();
        let mut proxies: Vec<Proxy> = (0..300u32)
            .map(|i| {
                let c = Vec3::new(
                    rng.fx_range(Fx::ZERO, Fx::from_int(20)),
                    rng.fx_range(Fx::ZERO, Fx::from_int(5)),
                    rng.fx_range(Fx::ZERO, Fx::from_int(20)),
                );
                let h = Vec3::splat(rng.fx_range(Fx::from_ratio(1, 10), Fx::ONE));
                Proxy {
                    aabb: Aabb {
                        min: c - h,
                        max: c + h,
                    },
                    body: 1000 - i * 3,
                    active: rng.chance(1, 2),
                    groups: 1,
                    mask: 1,
                }
            })
            .collect();
        let mut pairs = Vec::new();
        for _ in 0..5 {
            bp.pairs(&proxies, 1, &mut pairs);
            bp.sort_pairs(&mut pairs, 1001);
            assert_eq!(pairs, brute(&proxies));
            for p in &mut proxies {
                let d = Vec3::new(
                    rng.fx_range(-Fx::ONE, Fx::ONE),
                    Fx::ZERO,
                    rng.fx_range(-Fx::ONE, Fx::ONE),
                );
                p.aabb = Aabb {
                    min: p.aabb.min + d,
                    max: p.aabb.max + d,
                };
            }
        }
        // A fresh broadphase gives the same answer as the warmed one.
        let mut fresh = Broadphase::default();
        let mut again = Vec::new();
        fresh.pairs(&proxies, 3, &mut again);
        fresh.sort_pairs(&mut again, 1001);
        bp.pairs(&proxies, 2, &mut pairs);
        bp.sort_pairs(&mut pairs, 1001);
        assert_eq!(pairs, again);
    }
}
