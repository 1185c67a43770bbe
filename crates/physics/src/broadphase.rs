//! Broadphase: which bounding boxes overlap, by sort and sweep on one axis
//! within strips across a second.
//!
//! Bodies spread over a plane (an RTS's units) overlap on any one axis with
//! a whole column of others, so a plain sweep tests each against dozens;
//! dealing the sorted proxies into strips across the next axis first (a
//! proxy goes into every strip it crosses, and a pair is reported only in
//! the strip of the larger of its two lowest ends) cuts that to the few in
//! its own strip.
//!
//! Deterministic by construction: proxies are sorted by the key
//! `(min on the sweep axis, body index)`, a total order, so the sorted result
//! does not depend on the order kept from the previous step (which is kept,
//! by body, only to make the insertion sort nearly free, also when bodies
//! come and go); the output pairs are sorted
//! `(lower index, higher index)` by [`Broadphase::sort_pairs`], a counting sort. The
//! sweep axis is the one along which the proxies' centres spread the most;
//! the previous step's axis is kept unless another spreads an eighth more
//! (so that a symmetric scene does not flip axes, and re-sort, every step).
//! The axis and the kept order only make the search faster: the pairs found
//! are the same for any of them.

use lockstep_fx::{Fx, fork_join};

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

impl Proxy {
    /// Whether each body's groups meet the other's mask: the layers test
    /// of every pair the broadphase reports.
    #[inline]
    pub fn layers_agree(&self, o: &Proxy) -> bool {
        self.groups & o.mask != 0 && o.groups & self.mask != 0
    }
}

/// A proxy in one strip: what the sweep's inner loop reads before a pair
/// overlaps, packed to stay in cache.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// Its interval on the sweep axis.
    start: Fx,
    end: Fx,
    /// Its bounds on the other two axes: `[min, max, min, max]`.
    across: [Fx; 4],
    /// The first strip it lies in.
    first: u32,
    /// Its position in sweep order.
    proxy: u32,
}

/// Strips of equal width across one of the two other axes (the one the
/// proxies' lowest ends spread over more), over the span of those ends:
/// about one per 128 proxies, at most [`MAX_STRIPS`]. Pure integer arithmetic on the bounds, so every machine
/// deals the same proxies into the same strips (and the strips only make
/// the search faster: the pairs found are the same for any count).
struct Strips {
    axis: u8,
    low: i64,
    /// Width of a strip, raw Q32.32 (≥ 1).
    width: i64,
    count: usize,
}

/// Most strips a sweep uses.
const MAX_STRIPS: usize = 64;

impl Strips {
    fn new(proxies: &[Proxy], sweep_axis: u8) -> Strips {
        let count = (proxies.len() / 128).clamp(1, MAX_STRIPS);
        // Across whichever other axis the lowest ends spread over more.
        let range = |axis: u8| {
            let (mut low, mut high) = (i64::MAX, i64::MIN);
            for p in proxies {
                let m = p.aabb.min.axis(axis).to_bits();
                low = low.min(m);
                high = high.max(m);
            }
            (low, (i128::from(high) - i128::from(low)).max(0))
        };
        let (u, v) = ((sweep_axis + 1) % 3, (sweep_axis + 2) % 3);
        let ((low_u, span_u), (low_v, span_v)) = (range(u), range(v));
        let (axis, low, span) = if span_v > span_u {
            (v, low_v, span_v)
        } else {
            (u, low_u, span_u)
        };
        let width = (span / count as i128 + 1).min(i128::from(i64::MAX)) as i64;
        Strips {
            axis,
            low,
            width,
            count,
        }
    }

    /// The strip of a coordinate (raw), clamped to the strips.
    fn of(&self, at: Fx) -> usize {
        // `at − low` clamped at zero lies in [0, 2^64): a u64 division.
        let d = (i128::from(at.to_bits()) - i128::from(self.low)).max(0) as u64;
        (d / self.width as u64).min(self.count as u64 - 1) as usize
    }

    /// The first and last strips a proxy's bounds cross.
    fn span(&self, p: &Proxy) -> (u32, u32) {
        (
            self.of(p.aabb.min.axis(self.axis)) as u32,
            self.of(p.aabb.max.axis(self.axis)) as u32,
        )
    }
}

/// Finds overlapping pairs; keeps its sorted order between calls for speed.
#[derive(Default, Debug)]
pub(crate) struct Broadphase {
    /// The bodies in the last call's sweep order.
    last: Vec<u32>,
    /// Each body's position in this call's proxies (`u32::MAX` for none).
    position_of: Vec<u32>,
    /// This call's proxies (positions), in sweep order once sorted.
    order: Vec<u32>,
    keys: Vec<(Fx, u32)>,
    /// The sweep axis of the last call.
    axis: u8,
    /// Scratch of [`Broadphase::sort_pairs`].
    counts: Vec<u32>,
    sorted: Vec<(u32, u32)>,
    /// The proxies in sweep order, and each thread's pairs.
    sorted_proxies: Vec<Proxy>,
    /// The strips' entries, strip after strip, each strip in sweep order;
    /// where each strip starts in them (and the end); a cursor per strip;
    /// the first and last strip of each proxy, in sweep order.
    entries: Vec<Entry>,
    spans: Vec<(u32, u32)>,
    starts: Vec<u32>,
    fill: Vec<u32>,
    runs: Vec<Vec<(u32, u32)>>,
}

/// Below this many proxies the sweep runs on one thread.
const PARALLEL_PROXIES: usize = 512;

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
            self.last.clear();
        }
        // Positions in `proxies` sorted by (min on axis, body), starting
        // from the last call's order of the bodies still here (so that
        // removing or adding a few bodies keeps the sort nearly free), the
        // new ones after them.
        let bodies = proxies
            .iter()
            .map(|p| p.body as usize + 1)
            .max()
            .unwrap_or(0);
        self.position_of.clear();
        self.position_of.resize(bodies, u32::MAX);
        for (i, p) in proxies.iter().enumerate() {
            self.position_of[p.body as usize] = i as u32;
        }
        self.order.clear();
        for &body in &self.last {
            if let Some(at) = self.position_of.get_mut(body as usize) {
                if *at != u32::MAX {
                    self.order.push(*at);
                    *at = u32::MAX;
                }
            }
        }
        for (i, p) in proxies.iter().enumerate() {
            if self.position_of[p.body as usize] != u32::MAX {
                self.order.push(i as u32);
            }
        }
        debug_assert_eq!(self.order.len(), n, "one proxy per body");
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
        self.last.clear();
        self.last
            .extend(self.order.iter().map(|&i| proxies[i as usize].body));
        // The proxies in sweep order, dealt into strips across a second
        // axis (each into every strip its bounds cross), keeping the sweep
        // order within each strip.
        self.sorted_proxies.clear();
        self.sorted_proxies
            .extend(self.order.iter().map(|&i| proxies[i as usize]));
        let mut strips = Strips::new(&self.sorted_proxies, axis);
        self.spans.clear();
        self.spans
            .extend(self.sorted_proxies.iter().map(|p| strips.span(p)));
        // Proxies as wide as many strips would be swept again in each: past
        // three entries a proxy, one strip (a plain sweep) it is.
        let entries: usize = self
            .spans
            .iter()
            .map(|&(first, last)| (last - first) as usize + 1)
            .sum();
        if entries > 3 * n {
            strips.count = 1;
            self.spans.fill((0, 0));
        }
        self.starts.clear();
        self.starts.resize(strips.count + 1, 0);
        for &(first, last) in &self.spans {
            for s in first..=last {
                self.starts[s as usize + 1] += 1;
            }
        }
        for s in 0..strips.count {
            self.starts[s + 1] += self.starts[s];
        }
        let total = self.starts[strips.count] as usize;
        self.entries.clear();
        self.entries.resize(total, Entry::default());
        self.fill.clear();
        self.fill.extend_from_slice(&self.starts[..strips.count]);
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for (i, (p, &(first, last))) in self.sorted_proxies.iter().zip(&self.spans).enumerate() {
            let (lo, hi) = (p.aabb.min, p.aabb.max);
            let entry = Entry {
                start: lo.axis(axis),
                end: hi.axis(axis),
                across: [lo.axis(u), hi.axis(u), lo.axis(v), hi.axis(v)],
                first,
                proxy: i as u32,
            };
            for s in first as usize..=last as usize {
                self.entries[self.fill[s] as usize] = entry;
                self.fill[s] += 1;
            }
        }
        // A sweep of each strip: an entry meets the ones after it whose
        // interval on the sweep axis starts before its own ends (they start
        // at or after its start), then the other two axes are compared,
        // then the layers. A pair crossing several strips is reported only
        // in the strip of the larger of its two lowest ends (a strip both
        // cross), so once.
        let sorted = &self.sorted_proxies;
        let (entries, starts) = (&self.entries, &self.starts);
        let sweep = |strip: usize, out: &mut Vec<(u32, u32)>| {
            let run = &entries[starts[strip] as usize..starts[strip + 1] as usize];
            for (i, a) in run.iter().enumerate() {
                for b in &run[i + 1..] {
                    if b.start > a.end {
                        break;
                    }
                    let (x, y) = (&a.across, &b.across);
                    if x[0] <= y[1]
                        && y[0] <= x[1]
                        && x[2] <= y[3]
                        && y[2] <= x[3]
                        && a.first.max(b.first) as usize == strip
                    {
                        let (pa, pb) = (&sorted[a.proxy as usize], &sorted[b.proxy as usize]);
                        if (pa.active || pb.active) && pa.layers_agree(pb) {
                            out.push(if pa.body < pb.body {
                                (pa.body, pb.body)
                            } else {
                                (pb.body, pa.body)
                            });
                        }
                    }
                }
            }
        };
        let threads = if n >= PARALLEL_PROXIES {
            threads.max(1).min(strips.count)
        } else {
            1
        };
        if threads == 1 {
            for strip in 0..strips.count {
                sweep(strip, out);
            }
            return;
        }
        // Each thread sweeps a run of strips holding about its share of the
        // entries, into its own list.
        self.runs.resize_with(threads, Vec::new);
        let runs = &mut self.runs[..threads];
        let mut bounds = Vec::with_capacity(threads + 1);
        bounds.push(0);
        for t in 1..threads {
            let target = (total * t / threads) as u32;
            let at = starts.partition_point(|&e| e < target).min(strips.count);
            bounds.push(at.max(bounds[t - 1]));
        }
        bounds.push(strips.count);
        fork_join(runs.iter_mut().enumerate().collect(), |(t, run)| {
            run.clear();
            for strip in bounds[t]..bounds[t + 1] {
                sweep(strip, run);
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
        for round in 0..5u32 {
            bp.pairs(&proxies, 1, &mut pairs);
            bp.sort_pairs(&mut pairs, 1001);
            assert_eq!(pairs, brute(&proxies));
            if round % 2 == 1 {
                // Bodies leave and others arrive (units die, are trained):
                // the kept order holds bodies that are gone and misses new
                // ones.
                let mut k = 0;
                proxies.retain(|_| {
                    k += 1;
                    k % 7 != 0
                });
                for i in 0..20u32 {
                    let mut p = proxies[(i as usize * 13) % proxies.len()];
                    p.body = 2 + 3 * (round * 20 + i);
                    proxies.push(p);
                }
            }
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

    /// Thousands of small proxies over a plane (many strips), walls that
    /// cross every strip, layers that keep some apart, swept on one to
    /// three threads.
    #[test]
    fn strips_find_every_pair_once_on_any_thread_count() {
        let mut rng = Rng::new(11, 3);
        let mut proxies: Vec<Proxy> = (0..4000u32)
            .map(|i| {
                let c = Vec3::new(
                    rng.fx_range(Fx::from_int(-80), Fx::from_int(80)),
                    Fx::HALF,
                    rng.fx_range(Fx::from_int(-80), Fx::from_int(80)),
                );
                let h = Vec3::splat(rng.fx_range(Fx::from_ratio(1, 4), Fx::from_int(2)));
                let group = 1 << rng.below(3);
                Proxy {
                    aabb: Aabb {
                        min: c - h,
                        max: c + h,
                    },
                    body: i,
                    active: rng.chance(3, 4),
                    groups: group,
                    mask: if group == 4 { 4 } else { 3 | 8 },
                }
            })
            .collect();
        for (k, (x, z)) in [(0, 81), (0, -81), (81, 0), (-81, 0)]
            .into_iter()
            .enumerate()
        {
            let c = Vec3::new(Fx::from_int(x), Fx::ONE, Fx::from_int(z));
            let h = if x == 0 {
                Vec3::new(Fx::from_int(82), Fx::ONE, Fx::ONE)
            } else {
                Vec3::new(Fx::ONE, Fx::ONE, Fx::from_int(82))
            };
            proxies.push(Proxy {
                aabb: Aabb {
                    min: c - h,
                    max: c + h,
                },
                body: 4000 + k as u32,
                active: false,
                groups: 8,
                mask: u32::MAX,
            });
        }
        let brute: Vec<_> = {
            let mut out = Vec::new();
            for (i, a) in proxies.iter().enumerate() {
                for b in &proxies[i + 1..] {
                    if (a.active || b.active)
                        && a.groups & b.mask != 0
                        && b.groups & a.mask != 0
                        && a.aabb.overlaps(&b.aabb)
                    {
                        out.push((a.body.min(b.body), a.body.max(b.body)));
                    }
                }
            }
            out.sort_unstable();
            out
        };
        assert!(brute.len() > 1000);
        for threads in 1..=3 {
            let mut bp = Broadphase::default();
            let mut pairs = Vec::new();
            bp.pairs(&proxies, threads, &mut pairs);
            assert_eq!(pairs.len(), brute.len(), "each pair once");
            bp.sort_pairs(&mut pairs, 4004);
            assert_eq!(pairs, brute);
        }
    }
}
