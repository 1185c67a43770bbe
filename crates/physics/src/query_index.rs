//! The spatial index behind [`World::query_aabb`](crate::World::query_aabb):
//! a grid of square columns over the two axes along which the bodies
//! spread the most, built on the first query after the world changed.
//!
//! Every live, uncontained body that has bounds is an entry, keyed by the
//! column of its bounds' lowest corner; the column side `S` is a power of
//! two at least twice the bodies' mean size, and bodies wider than `S` are
//! kept in a short list that every query checks. A body no wider than `S`
//! overlaps a query area only if its lowest corner lies within `S` before
//! the area on each axis, so a query visits the columns of that range
//! only, row by row (an area with more rows than there are bodies scans
//! them all instead). A game that queries every frame rebuilds the grid
//! every frame, so wherever the bodies span no more cells than a few per
//! body, their order is found by a counting pass over the cells instead of
//! a comparison sort, and that pass leaves a table of where each column's
//! entries start and which layers (collision groups) they hold: a query
//! then reads each row's stretch of columns from it, passing over the
//! cells that hold none of the layers it asks for (an RTS unit looking
//! for enemies amid its own army reads few entries). Bodies far apart in
//! a few clusters are found by a binary search of each row instead; both
//! report the same bodies in the same order. A
//! query reports each body once; `World::query_aabb` sorts them by slot,
//! so they are exactly the bodies a scan of every slot would report, in
//! the same order.
//!
//! The world keeps the allocations of the index it drops ([`Buffers`]) and
//! the next build fills them again, so a game that queries every frame
//! does not allocate the grid anew each frame. (With the RTS's 8 192
//! units, fresh allocations made the system map about 200 pages a frame
//! over the first 250 frames or so of a match, until the allocator
//! settled: a one-thread run of 300 frames took 8% longer, one of 1 200
//! frames 3%.)
//!
//! Invariants: the index is a cache of the state (positions, rotations,
//! groups, containment) at the time it was built; every change to those
//! drops it (`World::forget_queries`). Building and querying read only the
//! state and integers, so the answer never depends on when it was built,
//! nor on what the reused allocations held.

use lockstep_fx::{Fx, Vec3};

use crate::aabb::Aabb;

/// One body in the index.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Column key: row (first axis) in the high half, column in the low.
    key: u64,
    slot: u32,
    groups: u32,
    bounds: Aabb,
}

/// The allocations of an index that no longer serves (the state changed),
/// handed to the next build (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    entries: Vec<Entry>,
    large: Vec<Entry>,
    starts: Vec<u32>,
    layers: Vec<u32>,
    /// The build's scratch: the entries before sorting, each cell's
    /// cursor, and the sorted order.
    unsorted: Vec<Entry>,
    fill: Vec<u32>,
    order: Vec<u32>,
}

/// The grid of one world state.
#[derive(Debug, Default)]
pub(crate) struct QueryIndex {
    /// The two grid axes.
    axes: [u8; 2],
    /// log2 of the column side, in raw Q32.32 units.
    shift: u32,
    /// Bodies no wider than a column, sorted by (key, slot).
    entries: Vec<Entry>,
    /// Where each column's entries start, when the entries span a compact
    /// block of columns (see [`Columns`]); `None` when they lie far apart,
    /// and a query then finds each row's entries by binary search.
    columns: Option<Columns>,
    /// Wider bodies, in slot order.
    large: Vec<Entry>,
    /// The build's scratch, kept for the next build (read by no query).
    scratch: Buffers,
}

/// The block of columns the entries span, row by row, and where each
/// column's entries start among the sorted entries (one more for the end):
/// a query reads a row's stretch of columns from it directly.
#[derive(Debug)]
struct Columns {
    /// The lowest row and column (unpacked from a key).
    low: (u32, u32),
    /// Rows and columns in the block.
    rows: u32,
    cols: u32,
    /// `starts[cell]` for each cell `row × cols + column` of the block,
    /// then the entries' count.
    starts: Vec<u32>,
    /// `layers[cell]`: the union of the layers (collision groups) of the
    /// cell's entries, so that a query skips a cell holding none of the
    /// layers it asks for without reading its entries (an RTS unit
    /// looking for enemies amid its own army).
    layers: Vec<u32>,
}

/// Narrowest and widest column sides (raw Q32.32): 1/16 m and 1024 m.
const MIN_SHIFT: u32 = 28;
const MAX_SHIFT: u32 = 42;

/// The outermost columns: a cell offset by 2^31 fills a `u32`, half a key.
const CELL_MIN: i64 = -(1 << 31);
const CELL_MAX: i64 = (1 << 31) - 1;

impl QueryIndex {
    /// Indexes `(slot, groups, bounds)` of every body that queries can
    /// report, given in ascending slot order, in the allocations of
    /// `buffers` (their contents do not matter).
    pub fn build(bodies: impl Iterator<Item = (u32, u32, Aabb)>, buffers: Buffers) -> QueryIndex {
        let Buffers {
            mut entries,
            mut large,
            starts,
            layers,
            unsorted,
            fill,
            order: sorted_order,
        } = buffers;
        entries.clear();
        large.clear();
        // One pass gathers the entries (keys come once the grid is known),
        // the spread of their centres and their mean size.
        let (mut lo, mut hi) = (Vec3::splat(Fx::MAX), Vec3::splat(Fx::MIN));
        let mut size_sum = 0u128;
        for (slot, groups, b) in bodies {
            debug_assert!(entries.last().is_none_or(|e| e.slot < slot), "slot order");
            let c = Vec3::new(
                b.min.x.scale_pow2(-1) + b.max.x.scale_pow2(-1),
                b.min.y.scale_pow2(-1) + b.max.y.scale_pow2(-1),
                b.min.z.scale_pow2(-1) + b.max.z.scale_pow2(-1),
            );
            lo = lo.min(c);
            hi = hi.max(c);
            let d = b.max - b.min;
            size_sum += d.max_element().to_bits().unsigned_abs() as u128;
            entries.push(Entry {
                key: 0,
                slot,
                groups,
                bounds: b,
            });
        }
        // The grid axes: the two along which the centres spread the most.
        let spread = hi - lo;
        let mut order = [0u8, 1, 2];
        order.sort_by_key(|&a| core::cmp::Reverse(spread.axis(a)));
        let mut axes = [order[0], order[1]];
        axes.sort_unstable();
        let mean = size_sum.checked_div(entries.len() as u128).unwrap_or(1);
        let mut shift = MIN_SHIFT;
        while shift < MAX_SHIFT && (1u128 << shift) < 2 * mean {
            shift += 1;
        }
        let mut index = QueryIndex {
            axes,
            shift,
            entries: Vec::new(),
            columns: None,
            large: Vec::new(),
            scratch: Buffers {
                starts,
                layers,
                unsorted,
                fill,
                order: sorted_order,
                ..Buffers::default()
            },
        };
        entries.retain_mut(|e| {
            e.key = index.key(e.bounds.min);
            let d = e.bounds.max - e.bounds.min;
            let wide = d.axis(axes[0]).to_bits() > 1i64 << shift
                || d.axis(axes[1]).to_bits() > 1i64 << shift;
            if wide {
                large.push(*e);
            }
            !wide
        });
        // The bodies came in slot order, so a stable sort by key alone
        // gives (key, slot) order.
        index.columns = sort_by_key_stable(&mut entries, &mut index.scratch);
        index.entries = entries;
        index.large = large;
        index
    }

    /// This index's allocations, for the next build.
    pub fn into_buffers(self) -> Buffers {
        let mut buffers = self.scratch;
        buffers.entries = self.entries;
        buffers.large = self.large;
        if let Some(columns) = self.columns {
            buffers.starts = columns.starts;
            buffers.layers = columns.layers;
        }
        buffers
    }

    /// The row and column of a key.
    fn unpack(key: u64) -> (u32, u32) {
        ((key >> 32) as u32, key as u32)
    }

    /// The column of a point along one grid axis. Columns past ±2^31 (a
    /// point more than 2^27 m out with the narrowest columns) are held in
    /// the outermost one, so that every column fits its half of a key: far
    /// bodies share that column, and the overlap test sorts them out.
    fn cell(&self, x: Fx) -> i64 {
        (x.to_bits() >> self.shift).clamp(CELL_MIN, CELL_MAX)
    }

    /// The key of the column holding `p`.
    fn key(&self, p: Vec3) -> u64 {
        Self::pack(
            self.cell(p.axis(self.axes[0])),
            self.cell(p.axis(self.axes[1])),
        )
    }

    fn pack(row: i64, col: i64) -> u64 {
        // `cell` keeps both within CELL_MIN..=CELL_MAX: offset into u32 halves.
        ((row + (1 << 31)) as u64) << 32 | (col + (1 << 31)) as u64
    }

    /// Calls `found` with the slot of each body in layers `mask` whose
    /// bounds overlap `area`, once per body, in the grid's order (row by
    /// row, then the wide bodies): fixed by the state, not slot order.
    pub fn query(&self, area: &Aabb, mask: u32, mut found: impl FnMut(u32)) {
        let hit = |e: &Entry| e.groups & mask != 0 && e.bounds.overlaps(area);
        let side = Fx::from_bits(1i64 << self.shift);
        let (a0, a1) = (self.axes[0], self.axes[1]);
        let (r0, r1) = (
            self.cell(area.min.axis(a0) - side),
            self.cell(area.max.axis(a0)),
        );
        let (c0, c1) = (
            self.cell(area.min.axis(a1) - side),
            self.cell(area.max.axis(a1)),
        );
        if r1 - r0 >= self.entries.len() as i64 {
            // More rows than bodies (a huge area): scanning is cheaper.
            self.entries
                .iter()
                .filter(|e| hit(e))
                .for_each(|e| found(e.slot));
        } else if let Some(columns) = &self.columns {
            for range in columns.ranges((r0, r1), (c0, c1), mask) {
                for e in &self.entries[range] {
                    if hit(e) {
                        found(e.slot);
                    }
                }
            }
        } else if r0 <= r1 && c0 <= c1 {
            for row in r0..=r1 {
                let (first, last) = (Self::pack(row, c0), Self::pack(row, c1));
                let from = self.entries.partition_point(|e| e.key < first);
                for e in self.entries[from..].iter().take_while(|e| e.key <= last) {
                    if hit(e) {
                        found(e.slot);
                    }
                }
            }
        }
        self.large
            .iter()
            .filter(|e| hit(e))
            .for_each(|e| found(e.slot));
    }
}

impl Columns {
    /// The cells of the block from the lowest row and column to the
    /// highest, if the entries' keys span no more than a few cells per
    /// entry (as a world's bodies spread over a map do), its tables in the
    /// allocations `starts` and `layers`; else both back.
    fn spanning(
        entries: &[Entry],
        (mut starts, mut layers): (Vec<u32>, Vec<u32>),
    ) -> Result<Columns, (Vec<u32>, Vec<u32>)> {
        if entries.is_empty() {
            return Err((starts, layers));
        }
        let (mut lo, mut hi) = ((u32::MAX, u32::MAX), (0u32, 0u32));
        for e in entries {
            let (r, c) = QueryIndex::unpack(e.key);
            lo = (lo.0.min(r), lo.1.min(c));
            hi = (hi.0.max(r), hi.1.max(c));
        }
        let (rows, cols) = (u64::from(hi.0 - lo.0) + 1, u64::from(hi.1 - lo.1) + 1);
        let cells = rows.saturating_mul(cols);
        if cells > 4 * entries.len() as u64 + 64 {
            return Err((starts, layers));
        }
        starts.clear();
        starts.resize(cells as usize + 1, 0);
        layers.clear();
        layers.resize(cells as usize, 0);
        Ok(Columns {
            low: lo,
            rows: rows as u32,
            cols: cols as u32,
            starts,
            layers,
        })
    }

    /// The cell of a key within the block (the key lies in it).
    fn cell(&self, key: u64) -> usize {
        let (r, c) = QueryIndex::unpack(key);
        (r - self.low.0) as usize * self.cols as usize + (c - self.low.1) as usize
    }

    /// For each row from `rows.0` to `rows.1` that the block holds, the
    /// entries of its columns `cols.0 ..= cols.1` (grid cells, as
    /// `QueryIndex::cell` gives them), clamped to the block, leaving out
    /// the cells that hold no entry in layers `mask`: in order, exactly
    /// the entries whose keys lie in that row between those columns, but
    /// for entries no query for `mask` reports. Neighbouring cells that
    /// are kept come as one range.
    fn ranges(
        &self,
        rows: (i64, i64),
        cols: (i64, i64),
        mask: u32,
    ) -> impl Iterator<Item = core::ops::Range<usize>> + '_ {
        // Into the block's own coordinates (cells as `pack` offsets them).
        let local = |x: i64, low: u32| x + (1 << 31) - i64::from(low);
        let (r0, r1) = (
            local(rows.0, self.low.0).max(0),
            local(rows.1, self.low.0).min(i64::from(self.rows) - 1),
        );
        let (c0, c1) = (
            local(cols.0, self.low.1).max(0),
            local(cols.1, self.low.1).min(i64::from(self.cols) - 1),
        );
        // The columns as a range of cells within a row (none held: empty).
        let (rows_held, c0, c1) = if c0 <= c1 {
            (r0..r1 + 1, c0 as usize, c1 as usize + 1)
        } else {
            (0..0, 0, 0)
        };
        rows_held.flat_map(move |r| {
            let row = r as usize * self.cols as usize;
            let layers = &self.layers[row + c0..row + c1];
            // Runs of kept cells: each starts at a kept cell after a
            // skipped one (or the row's first) and ends before the next
            // skipped one.
            let mut at = 0;
            core::iter::from_fn(move || {
                let first = at + layers[at..].iter().position(|&l| l & mask != 0)?;
                let end = layers[first..]
                    .iter()
                    .position(|&l| l & mask == 0)
                    .map_or(layers.len(), |n| first + n);
                at = end;
                let start = self.starts[row + c0 + first] as usize;
                Some(start..self.starts[row + c0 + end] as usize)
            })
        })
    }
}

/// Sorts entries by key, keeping the order of equal keys, and returns
/// where each column's entries start when they span a compact block of
/// columns: one counting pass over the block's cells then sorts them
/// (keys order the cells row by row, so a cell's index orders them too).
/// Entries far apart in a few clusters are sorted by comparison instead.
/// Both give the same order. The work uses the allocations of `scratch`
/// and leaves them in it.
fn sort_by_key_stable(entries: &mut Vec<Entry>, scratch: &mut Buffers) -> Option<Columns> {
    let buffers = (
        core::mem::take(&mut scratch.starts),
        core::mem::take(&mut scratch.layers),
    );
    let mut columns = match Columns::spanning(entries, buffers) {
        Ok(columns) => columns,
        Err((starts, layers)) => {
            scratch.starts = starts;
            scratch.layers = layers;
            entries.sort_by_key(|e| e.key);
            return None;
        }
    };
    // Each cell's count and layers, then where its entries start, then
    // each entry's place (a cursor per cell, over a copy of the starts).
    for e in entries.iter() {
        let cell = columns.cell(e.key);
        columns.starts[cell + 1] += 1;
        columns.layers[cell] |= e.groups;
    }
    for i in 1..columns.starts.len() {
        columns.starts[i] += columns.starts[i - 1];
    }
    let fill = &mut scratch.fill;
    fill.clear();
    fill.extend_from_slice(&columns.starts);
    let order = &mut scratch.order;
    order.clear();
    order.resize(entries.len(), 0);
    for (i, e) in entries.iter().enumerate() {
        let at = &mut fill[columns.cell(e.key)];
        order[*at as usize] = i as u32;
        *at += 1;
    }
    let unsorted = core::mem::replace(entries, core::mem::take(&mut scratch.unsorted));
    entries.clear();
    entries.extend(order.iter().map(|&i| unsorted[i as usize]));
    scratch.unsorted = unsorted;
    Some(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(row: i64, col: i64, slot: u32) -> Entry {
        Entry {
            key: QueryIndex::pack(row, col),
            slot,
            groups: 1,
            bounds: Aabb::from_corners(Vec3::ZERO, Vec3::ZERO),
        }
    }

    /// Both ways of sorting (a counting pass over a compact grid, a
    /// comparison sort over a sparse one) give the (key, slot) order,
    /// with negative cells and many entries per cell.
    #[test]
    fn entries_sort_by_key_then_slot() {
        let mut rng = lockstep_fx::Rng::new(0x51, 2);
        for span in [12u32, 1 << 28] {
            let mut entries: Vec<Entry> = (0..500u32)
                .map(|slot| {
                    let row = i64::from(rng.below(span)) - i64::from(span / 2);
                    entry(row, i64::from(rng.below(span)), slot)
                })
                .collect();
            let mut expected = entries.clone();
            expected.sort_unstable_by_key(|e| (e.key, e.slot));
            sort_by_key_stable(&mut entries, &mut Buffers::default());
            let order = |v: &[Entry]| v.iter().map(|e| (e.key, e.slot)).collect::<Vec<_>>();
            assert_eq!(order(&entries), order(&expected), "span {span}");
        }
    }

    /// A query reads a row's columns from the column table, skipping the
    /// cells with none of the mask's layers, and visits exactly the
    /// bodies, in exactly the order, that a binary search of each row
    /// visits: areas inside, across and outside the block of columns, with
    /// a mask, over bodies of several sizes, whose layers are mixed in the
    /// east and all the same in the west (an army among its own).
    #[test]
    fn the_column_table_visits_what_a_search_of_each_row_visits() {
        let mut rng = lockstep_fx::Rng::new(0xc01, 3);
        let bodies: Vec<(u32, u32, Aabb)> = (0..400u32)
            .map(|slot| {
                let c = Vec3::new(
                    rng.fx_range(Fx::from_int(-60), Fx::from_int(60)),
                    rng.fx_range(Fx::ZERO, Fx::from_int(3)),
                    rng.fx_range(Fx::from_int(-30), Fx::from_int(90)),
                );
                let half = Vec3::splat(rng.fx_range(Fx::lit("0.1"), Fx::from_int(2)));
                let layers = if c.x.is_negative() {
                    1
                } else {
                    1 << (slot % 3)
                };
                (slot, layers, Aabb::from_corners(c - half, c + half))
            })
            .collect();
        let index = QueryIndex::build(bodies.iter().copied(), Buffers::default());
        assert!(
            index.columns.is_some(),
            "bodies over a map: a compact block"
        );
        let searched = QueryIndex {
            axes: index.axes,
            shift: index.shift,
            entries: index.entries.clone(),
            columns: None,
            large: index.large.clone(),
            scratch: Buffers::default(),
        };
        let mut visited = 0;
        for round in 0..500 {
            let c = Vec3::new(
                rng.fx_range(Fx::from_int(-90), Fx::from_int(90)),
                rng.fx_range(Fx::from_int(-2), Fx::from_int(5)),
                rng.fx_range(Fx::from_int(-60), Fx::from_int(120)),
            );
            let half = Vec3::splat(rng.fx_range(Fx::ZERO, Fx::from_int(15)));
            let area = Aabb::from_corners(c - half, c + half);
            let mask = if round % 2 == 0 {
                u32::MAX
            } else {
                1 << (round % 3)
            };
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            index.query(&area, mask, |slot| fast.push(slot));
            searched.query(&area, mask, |slot| slow.push(slot));
            assert_eq!(fast, slow, "round {round}");
            visited += fast.len();
        }
        assert!(visited > 1000, "the areas found bodies ({visited})");
    }

    /// Bodies far out (2^30 m, where a narrow column's number no longer
    /// fits half a key) are found by the areas around them, as are the
    /// bodies near the origin beside them: every query reports exactly the
    /// bodies whose bounds overlap its area.
    #[test]
    fn far_bodies_are_found_where_they_are() {
        let mut rng = lockstep_fx::Rng::new(0xfa4, 5);
        let far = Fx::from_int(1 << 30);
        let mut centres: Vec<Vec3> = (0..200)
            .map(|_| {
                Vec3::new(
                    rng.fx_range(Fx::from_int(-40), Fx::from_int(40)),
                    Fx::ZERO,
                    rng.fx_range(Fx::from_int(-40), Fx::from_int(40)),
                )
            })
            .collect();
        for (x, z) in [
            (far, Fx::ZERO),
            (-far, Fx::ZERO),
            (far, far),
            (Fx::ZERO, -far),
        ] {
            centres.push(Vec3::new(x, Fx::ZERO, z));
            centres.push(Vec3::new(x + Fx::lit("0.25"), Fx::ZERO, z));
        }
        // Bodies of 1/64 m: the narrowest columns.
        let half = Vec3::splat(Fx::lit("0.0078125"));
        let bodies: Vec<(u32, u32, Aabb)> = (0u32..)
            .zip(&centres)
            .map(|(slot, &c)| (slot, 1, Aabb::from_corners(c - half, c + half)))
            .collect();
        let index = QueryIndex::build(bodies.iter().copied(), Buffers::default());
        assert_eq!(index.shift, MIN_SHIFT, "narrow columns");
        for (round, &c) in centres.iter().enumerate() {
            let reach = Vec3::splat(Fx::from_int(1 + (round % 5) as i32).scale_pow2(-3));
            let area = Aabb::from_corners(c - reach, c + reach);
            let mut found = Vec::new();
            index.query(&area, u32::MAX, |slot| found.push(slot));
            found.sort_unstable();
            let expected: Vec<u32> = bodies
                .iter()
                .filter(|(_, _, b)| b.overlaps(&area))
                .map(|&(slot, _, _)| slot)
                .collect();
            assert_eq!(found, expected, "around body {round} at {c:?}");
        }
    }

    /// An index built in the allocations of earlier ones (of more bodies,
    /// of fewer, of bodies over a compact block or far apart) is the index
    /// a fresh build gives.
    #[test]
    fn a_build_in_old_buffers_is_a_fresh_build() {
        let mut rng = lockstep_fx::Rng::new(0xb0f, 4);
        let mut buffers = Buffers::default();
        for (count, spread) in [(300u32, 40), (80, 40), (500, 1 << 20), (200, 10), (0, 10)] {
            let bodies: Vec<(u32, u32, Aabb)> = (0..count)
                .map(|slot| {
                    let c = Vec3::new(
                        rng.fx_range(Fx::from_int(-spread), Fx::from_int(spread)),
                        Fx::ZERO,
                        rng.fx_range(Fx::from_int(-spread), Fx::from_int(spread)),
                    );
                    // Every seventh body wider than a column.
                    let size = if slot % 7 == 0 { 40 } else { 1 };
                    let half = Vec3::splat(Fx::from_int(size));
                    (slot, 1, Aabb::from_corners(c - half, c + half))
                })
                .collect();
            let reused = QueryIndex::build(bodies.iter().copied(), buffers);
            let fresh = QueryIndex::build(bodies.iter().copied(), Buffers::default());
            let keys = |v: &[Entry]| v.iter().map(|e| (e.key, e.slot)).collect::<Vec<_>>();
            let table = |i: &QueryIndex| {
                i.columns
                    .as_ref()
                    .map(|c| (c.low, c.rows, c.cols, c.starts.clone(), c.layers.clone()))
            };
            assert_eq!((reused.axes, reused.shift), (fresh.axes, fresh.shift));
            assert_eq!(keys(&reused.entries), keys(&fresh.entries), "{count}");
            assert_eq!(keys(&reused.large), keys(&fresh.large), "{count}");
            assert_eq!(table(&reused), table(&fresh), "{count}");
            buffers = reused.into_buffers();
        }
    }
}
