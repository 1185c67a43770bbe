//! Broadphase: which bounding boxes overlap, found on a grid of cubic
//! cells.
//!
//! **The grid.** The cell side `S` is the least power of two (raw Q32.32,
//! 1/16 m or more) at least the proxies' mean width; a proxy no wider
//! than `S` on any axis is *small*, and is kept in the cell of its bounds'
//! lowest corner, the others (walls, buildings) in a short *large* list.
//! A counting pass orders the small proxies by cell (by row along x,
//! then column along y, then layer along z) and leaves a table of where
//! each cell's proxies start, so no proxy is compared with another to
//! order them (a sort along one axis re-sorted 8 192 moving RTS units
//! every step). The table spans
//! the block of cells from the lowest corner to the highest; where the
//! bodies lie so far apart that the block would hold over four cells a
//! proxy, `S` is doubled until it does not.
//!
//! **The search.** Two small proxies that overlap have their lowest
//! corners within `S` of each other on each axis, so each lies in the
//! other's cell or one of its 26 neighbours. Each small proxy looks only
//! *forward*, at the proxies after it in cell order: the rest of its own
//! cell and the 13 neighbours after it, where its bounds reach them, which
//! are runs of the ordered proxies (one run of layers per row and column).
//! So each pair is met once, by the earlier of the two. A large proxy
//! looks at the cells its bounds cover (widened by one cell below on each
//! axis, for the small proxies that reach into it), and the large proxies
//! meet each other by a sort and sweep of their own. Each meeting compares
//! the whole boxes, then whether one moves, then the layers.
//!
//! Deterministic by construction: the pairs found are exactly the
//! overlapping pairs (with one active proxy and agreeing layers), whatever
//! the grid; the output is sorted `(lower index, higher index)` by
//! [`Broadphase::sort_pairs`], a counting sort. The grid, the order of the
//! proxies and the thread count only make the search faster. The search
//! is shared between threads by contiguous runs of the ordered proxies.

use core::ops::Range;

use lockstep_fx::{Vec3, fork_join};

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

/// A small proxy in cell order: what the search reads before two boxes
/// overlap, packed to stay in cache.
#[derive(Clone, Copy, Debug)]
struct Entry {
    aabb: Aabb,
    /// Its cell within the block: row, column, layer.
    cell: [u32; 3],
    /// Its index in the proxies.
    proxy: u32,
}

/// A point's raw coordinates, indexable by axis.
#[inline(always)]
fn raw(p: Vec3) -> [i64; 3] {
    [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]
}

/// Where a proxy goes on a grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// In the cell of its lowest corner (row, column, layer, in all space).
    Cell([i64; 3]),
    /// In the large list.
    Large,
    /// Nowhere: its box is inverted on some axis (`min > max`), and the
    /// broadphase pairs it with nothing (no body's bounds are).
    Nowhere,
}

/// The grid: its cell side and the block of cells the small proxies'
/// lowest corners span.
#[derive(Clone, Copy, Debug)]
struct Grid {
    /// log2 of the cell side, in raw Q32.32 units.
    shift: u32,
    /// The block's lowest cell (in all space) and its size, per axis.
    low: [i64; 3],
    size: [u32; 3],
}

/// Narrowest cell side (raw Q32.32): 1/16 m. The widest is 2^62 units,
/// four cells across the whole range.
const MIN_SHIFT: u32 = 28;
const MAX_SHIFT: u32 = 62;

impl Grid {
    /// The cell side for `proxies` (not empty), with an empty block.
    fn new(proxies: &[Proxy]) -> Grid {
        let sum: u128 = proxies
            .iter()
            .map(|p| {
                let (lo, hi) = (raw(p.aabb.min), raw(p.aabb.max));
                // Zero for an inverted box: it goes nowhere.
                (0..3)
                    .map(|a| hi[a].saturating_sub(lo[a]).max(0) as u128)
                    .sum::<u128>()
            })
            .sum();
        let mean = sum / (3 * proxies.len() as u128);
        let mut shift = MIN_SHIFT;
        while shift < MAX_SHIFT && (1u128 << shift) < mean {
            shift += 1;
        }
        Grid {
            shift,
            low: [0; 3],
            size: [1; 3],
        }
    }

    /// Where a box goes.
    #[inline]
    fn place(&self, b: &Aabb) -> Place {
        let (lo, hi) = (raw(b.min), raw(b.max));
        if (0..3).any(|a| lo[a] > hi[a]) {
            return Place::Nowhere;
        }
        // Not inverted, so each width is the unsigned difference.
        let side = 1u64 << self.shift;
        if (0..3).any(|a| hi[a].wrapping_sub(lo[a]) as u64 > side) {
            return Place::Large;
        }
        Place::Cell(lo.map(|l| l >> self.shift))
    }

    /// The cells of the block whose lowest corners a box's bounds reach,
    /// per axis as an inclusive range, or `None` where there are none: from
    /// `below` cells before its own lowest corner's to its highest
    /// corner's.
    #[inline]
    fn reach(&self, b: &Aabb, below: i64) -> Option<[[u32; 2]; 3]> {
        let (min, max) = (raw(b.min), raw(b.max));
        let mut out = [[0; 2]; 3];
        for a in 0..3 {
            let lo = ((min[a] >> self.shift) - below - self.low[a]).max(0);
            let hi = ((max[a] >> self.shift) - self.low[a]).min(i64::from(self.size[a]) - 1);
            if lo > hi {
                return None;
            }
            out[a] = [lo as u32, hi as u32];
        }
        Some(out)
    }

    /// The index of a cell of the block in cell order.
    #[inline]
    fn index(&self, row: u32, col: u32, layer: u32) -> usize {
        let [_, cols, layers] = self.size.map(|n| n as usize);
        (row as usize * cols + col as usize) * layers + layer as usize
    }

    /// The entries of the cells from `(row, col, layers[0])` to
    /// `(row, col, layers[1])`, a run in cell order, given each cell's
    /// first entry at `starts`.
    #[inline]
    fn run(&self, starts: &[u32], row: u32, col: u32, layers: [u32; 2]) -> Range<usize> {
        starts[self.index(row, col, layers[0])] as usize
            ..starts[self.index(row, col, layers[1]) + 1] as usize
    }
}

/// Calls `visit` with every small proxy of `entries` (in cell order on
/// `grid`, each cell's first at `starts`) whose box overlaps `b`: a small
/// proxy that does has its lowest corner in a cell that `b` covers or one
/// below it on each axis, so only those cells are read (or every entry,
/// where those cells outnumber them).
fn small_overlapping<'e>(
    grid: &Grid,
    entries: &'e [Entry],
    starts: &[u32],
    b: &Aabb,
    mut visit: impl FnMut(&'e Entry),
) {
    let Some([rows, cols, layers]) = grid.reach(b, 1) else {
        return;
    };
    let mut meet = |from: usize, to: usize| {
        for e in &entries[from..to] {
            if e.aabb.overlaps(b) {
                visit(e);
            }
        }
    };
    let cells = [rows, cols, layers]
        .iter()
        .map(|r| (r[1] - r[0]) as usize + 1)
        .product::<usize>();
    if cells > entries.len() {
        meet(0, entries.len());
        return;
    }
    for row in rows[0]..=rows[1] {
        for col in cols[0]..=cols[1] {
            let r = grid.run(starts, row, col, layers);
            meet(r.start, r.end);
        }
    }
}

/// Finds overlapping pairs; keeps its allocations between calls.
#[derive(Default, Debug)]
pub(crate) struct Broadphase {
    /// Each proxy's place on this call's grid.
    places: Vec<Place>,
    /// The small proxies in cell order, and where each cell's start (one
    /// more for the end).
    entries: Vec<Entry>,
    starts: Vec<u32>,
    /// The large proxies (indices), sorted by their lowest x.
    large: Vec<u32>,
    /// The last search's grid (`None` when it had fewer than two proxies,
    /// and then no entries and no large ones): with `entries`, `starts`
    /// and `large`, what [`Broadphase::overlapping`] reads.
    grid: Option<Grid>,
    /// Each thread's pairs.
    runs: Vec<Vec<(u32, u32)>>,
    /// Scratch of [`Broadphase::sort_pairs`].
    counts: Vec<u32>,
    sorted: Vec<(u32, u32)>,
}

/// Below this many proxies the search runs on one thread.
const PARALLEL_PROXIES: usize = 512;

/// Pushes `(a, b)`, lower index first, if one of two overlapping boxes'
/// proxies moves and their layers agree.
#[inline]
fn meet(pa: &Proxy, pb: &Proxy, out: &mut Vec<(u32, u32)>) {
    if (pa.active || pb.active) && pa.layers_agree(pb) {
        out.push(if pa.body < pb.body {
            (pa.body, pb.body)
        } else {
            (pb.body, pa.body)
        });
    }
}

impl Broadphase {
    /// Overlapping pairs `(a, b)` with `a < b` (body indices), at least one
    /// active and their collision layers agreeing, in no particular order
    /// (see [`Broadphase::sort_pairs`]).
    pub fn pairs(&mut self, proxies: &[Proxy], threads: usize, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let n = proxies.len();
        if n < 2 {
            self.grid = None;
            self.entries.clear();
            self.large.clear();
            return;
        }
        let grid = self.place(proxies);
        self.grid = Some(grid);
        // Count each cell's small proxies, then place them in cell order.
        let cells: usize = grid.size.iter().map(|&n| n as usize).product();
        self.starts.clear();
        self.starts.resize(cells + 1, 0);
        let in_block = |cell: [i64; 3]| [0, 1, 2].map(|a| (cell[a] - grid.low[a]) as u32);
        for place in &self.places {
            if let Place::Cell(cell) = *place {
                let [r, c, l] = in_block(cell);
                self.starts[grid.index(r, c, l) + 1] += 1;
            }
        }
        for k in 1..self.starts.len() {
            self.starts[k] += self.starts[k - 1];
        }
        let small = self.starts[cells] as usize;
        self.entries.clear();
        let blank = Entry {
            aabb: proxies[0].aabb,
            cell: [0; 3],
            proxy: 0,
        };
        self.entries.resize(small, blank);
        // Each cell's start serves as its cursor while it fills, and then
        // holds its end, the next cell's start.
        for (i, (p, place)) in proxies.iter().zip(&self.places).enumerate() {
            if let Place::Cell(cell) = *place {
                let [r, c, l] = in_block(cell);
                let at = &mut self.starts[grid.index(r, c, l)];
                self.entries[*at as usize] = Entry {
                    aabb: p.aabb,
                    cell: [r, c, l],
                    proxy: i as u32,
                };
                *at += 1;
            }
        }
        self.starts.rotate_right(1);
        self.starts[0] = 0;
        self.large
            .sort_unstable_by_key(|&i| (proxies[i as usize].aabb.min.x, i));
        let (entries, starts, large) = (&self.entries, &self.starts, &self.large);
        let run = |row: u32, col: u32, layers: [u32; 2]| grid.run(starts, row, col, layers);
        // Each small proxy's forward search, for a run of them.
        let search = |mine: Range<usize>, out: &mut Vec<(u32, u32)>| {
            for i in mine {
                let e = &entries[i];
                let Some([rows, cols, layers]) = grid.reach(&e.aabb, 0) else {
                    continue;
                };
                let pa = &proxies[e.proxy as usize];
                let mut meet_run = |from: usize, to: usize| {
                    for b in &entries[from..to] {
                        if e.aabb.overlaps(&b.aabb) {
                            meet(pa, &proxies[b.proxy as usize], out);
                        }
                    }
                };
                let [row, col, layer] = e.cell;
                // Its own cell after it, and the next layer.
                meet_run(i + 1, run(row, col, layers).end);
                // The layers around its own, in the next column of its row
                // and in three columns of the next row.
                let around = [layer.saturating_sub(1), layers[1]];
                if cols[1] > col {
                    let r = run(row, col + 1, around);
                    meet_run(r.start, r.end);
                }
                if rows[1] > row {
                    for c in col.saturating_sub(1)..=cols[1] {
                        let r = run(row + 1, c, around);
                        meet_run(r.start, r.end);
                    }
                }
            }
        };
        // A large proxy meets the small ones whose lowest corners lie in
        // the cells it covers or one below (all the small ones, where those
        // cells outnumber them), and the large ones after it.
        let search_large = |out: &mut Vec<(u32, u32)>| {
            for (k, &i) in large.iter().enumerate() {
                let pa = &proxies[i as usize];
                small_overlapping(&grid, entries, starts, &pa.aabb, |b| {
                    meet(pa, &proxies[b.proxy as usize], out);
                });
                for &j in &large[k + 1..] {
                    let pb = &proxies[j as usize];
                    if pb.aabb.min.x > pa.aabb.max.x {
                        break;
                    }
                    if pa.aabb.overlaps(&pb.aabb) {
                        meet(pa, pb, out);
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
            search(0..small, out);
            search_large(out);
            return;
        }
        // Contiguous runs of the small proxies, one a thread; the last
        // thread also searches from the large ones.
        self.runs.resize_with(threads, Vec::new);
        let runs = &mut self.runs[..threads];
        fork_join(runs.iter_mut().enumerate().collect(), |(t, pairs)| {
            pairs.clear();
            search(small * t / threads..small * (t + 1) / threads, pairs);
            if t == threads - 1 {
                search_large(pairs);
            }
        });
        for pairs in runs.iter() {
            out.extend_from_slice(pairs);
        }
    }

    /// Calls `visit` with every proxy of the last search (its index in
    /// `proxies`, the proxies that search was given) whose box overlaps
    /// proxy `k`'s, `k` itself left out, in no particular order. It reads
    /// only the cells where such a proxy can lie (a small one's lowest
    /// corner is in the cells `k`'s box covers or one below them on each
    /// axis), and every large one.
    pub fn overlapping(&self, proxies: &[Proxy], k: u32, mut visit: impl FnMut(u32)) {
        let mine = &proxies[k as usize].aabb;
        if let Some(grid) = &self.grid {
            small_overlapping(grid, &self.entries, &self.starts, mine, |e| {
                if e.proxy != k {
                    visit(e.proxy);
                }
            });
        }
        for &j in &self.large {
            if j != k && proxies[j as usize].aabb.overlaps(mine) {
                visit(j);
            }
        }
    }

    /// This call's grid, each proxy's place on it (`places`) and the large
    /// ones (`large`): the block spans the small proxies' lowest corners,
    /// with a cell twice as wide while it would hold over four cells a
    /// proxy.
    fn place(&mut self, proxies: &[Proxy]) -> Grid {
        let mut grid = Grid::new(proxies);
        loop {
            self.places.clear();
            self.large.clear();
            let (mut low, mut high) = ([i64::MAX; 3], [i64::MIN; 3]);
            for (i, p) in proxies.iter().enumerate() {
                let place = grid.place(&p.aabb);
                match place {
                    Place::Cell(cell) => {
                        for a in 0..3 {
                            low[a] = low[a].min(cell[a]);
                            high[a] = high[a].max(cell[a]);
                        }
                    }
                    Place::Large => self.large.push(i as u32),
                    Place::Nowhere => {}
                }
                self.places.push(place);
            }
            if low[0] > high[0] {
                // No small proxy: an empty block of one cell.
                return grid;
            }
            let size = [0, 1, 2].map(|a| (high[a] - low[a]) as u128 + 1);
            if size[0] * size[1] * size[2] <= 4 * proxies.len() as u128 + 64
                || grid.shift == MAX_SHIFT
            {
                grid.low = low;
                grid.size = size.map(|n| n as u32);
                return grid;
            }
            grid.shift += 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Fx, Rng, Vec3};

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

    /// Thousands of small proxies over a plane (many cells), walls along
    /// its edges wider than any cell, layers that keep some apart, searched
    /// on one to three threads.
    #[test]
    fn a_plane_of_proxies_gives_every_pair_once_on_any_thread_count() {
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
        // The proxies that overlap one, looked up in the last search's
        // grid, are those a test against every proxy finds, each once
        // (small ones, and the walls wider than any cell).
        let mut bp = Broadphase::default();
        let mut pairs = Vec::new();
        bp.pairs(&proxies, 1, &mut pairs);
        for k in (0..proxies.len()).step_by(37).chain(4000..4004) {
            let mut found = Vec::new();
            bp.overlapping(&proxies, k as u32, |j| found.push(j));
            found.sort_unstable();
            let every: Vec<u32> = (0..proxies.len() as u32)
                .filter(|&j| j as usize != k && proxies[j as usize].aabb.overlaps(&proxies[k].aabb))
                .collect();
            assert_eq!(found, every, "proxy {k}");
        }
    }

    /// Scenes at the grid's edges, each checked against every pair on one
    /// and three threads: clusters so far apart that the cell grows,
    /// bodies at the ends of the number range, proxies wider than a cell
    /// (one over everything, one through far-apart clusters, others meeting
    /// each other), an inverted box, and bodies all at one point.
    #[test]
    fn grid_edges_find_every_pair() {
        let mut rng = Rng::new(3, 9);
        let mut cube = |at: Vec3, half: Fx, body: u32| {
            let h = Vec3::splat(half);
            Proxy {
                aabb: Aabb {
                    min: at - h,
                    max: at + h,
                },
                body,
                active: rng.chance(2, 3),
                groups: 1,
                mask: 1,
            }
        };
        let mut scenes: Vec<Vec<Proxy>> = Vec::new();
        // Two clusters a hundred kilometres apart, two at the ends of the
        // range.
        let mut clusters = Vec::new();
        for (k, x) in [0i32, 100_000, -(1 << 30), 1 << 30].into_iter().enumerate() {
            for i in 0..300u32 {
                let at = Vec3::new(
                    Fx::from_int(x) + Fx::from_ratio(i64::from(i % 17), 2),
                    Fx::ZERO,
                    Fx::from_ratio(i64::from(i / 17), 2),
                );
                clusters.push(cube(at, Fx::from_ratio(3, 10), k as u32 * 1000 + i));
            }
        }
        // A long box through all four, wider than the cells it covers
        // hold small proxies: it meets every small proxy in turn.
        let mut long = cube(
            Vec3::new(Fx::ZERO, Fx::ZERO, Fx::from_int(4)),
            Fx::ONE,
            3999,
        );
        long.aabb.min.x = Fx::from_int(-(1 << 30) - 10);
        long.aabb.max.x = Fx::from_int((1 << 30) + 10);
        clusters.push(long);
        scenes.push(clusters);
        // Small cubes on a plane, walls wider than a cell (some touching
        // each other), one box over everything, and an inverted box.
        let mut walls: Vec<Proxy> = (0..700u32)
            .map(|i| {
                let at = Vec3::new(
                    Fx::from_ratio(i64::from(i % 30), 1),
                    Fx::ZERO,
                    Fx::from_ratio(i64::from(i / 30), 1),
                );
                cube(at, Fx::from_ratio(6, 10), i)
            })
            .collect();
        for k in 0..12u32 {
            let mut wall = cube(
                Vec3::new(Fx::from_int(k as i32 * 3), Fx::ZERO, Fx::from_int(10)),
                Fx::from_int(4),
                800 + k,
            );
            wall.active = k % 3 == 0;
            walls.push(wall);
        }
        walls.push(cube(Vec3::splat(Fx::from_int(10)), Fx::from_int(100), 900));
        let mut inverted = cube(Vec3::ZERO, Fx::ONE, 901);
        core::mem::swap(&mut inverted.aabb.min.y, &mut inverted.aabb.max.y);
        walls.push(inverted);
        scenes.push(walls);
        // Every body at one point.
        scenes.push(
            (0..600u32)
                .map(|i| cube(Vec3::splat(Fx::from_int(5)), Fx::ONE, i))
                .collect(),
        );
        for proxies in &scenes {
            let expected: Vec<(u32, u32)> = brute(proxies)
                .into_iter()
                .filter(|&(a, b)| a != 901 && b != 901)
                .collect();
            assert!(!expected.is_empty());
            for threads in [1, 3] {
                let mut bp = Broadphase::default();
                let mut pairs = Vec::new();
                bp.pairs(proxies, threads, &mut pairs);
                assert_eq!(pairs.len(), expected.len(), "each pair once");
                bp.sort_pairs(&mut pairs, 1001 * 4);
                assert_eq!(pairs, expected);
            }
        }
    }
}
