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
//! only: one binary search per row of columns, then a scan (an area with
//! more rows than there are bodies scans them all instead). A game that
//! queries every frame rebuilds the grid every frame, so its order is
//! found by a counting pass over the cells wherever the bodies span no
//! more cells than a few per body, instead of a comparison sort of the
//! entries. A query reports each body once; `World::query_aabb` sorts them
//! by slot, so they are exactly the bodies a scan of every slot would
//! report, in the same order.
//!
//! Invariants: the index is a cache of the state (positions, rotations,
//! groups, containment) at the time it was built; every change to those
//! drops it (`World::forget_queries`). Building and querying read only the
//! state and integers, so the answer never depends on when it was built.

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

/// The grid of one world state.
#[derive(Debug, Default)]
pub(crate) struct QueryIndex {
    /// The two grid axes.
    axes: [u8; 2],
    /// log2 of the column side, in raw Q32.32 units.
    shift: u32,
    /// Bodies no wider than a column, sorted by (key, slot).
    entries: Vec<Entry>,
    /// Wider bodies, in slot order.
    large: Vec<Entry>,
}

/// Narrowest and widest column sides (raw Q32.32): 1/16 m and 1024 m.
const MIN_SHIFT: u32 = 28;
const MAX_SHIFT: u32 = 42;

impl QueryIndex {
    /// Indexes `(slot, groups, bounds)` of every body that queries can
    /// report, given in ascending slot order.
    pub fn build(bodies: impl Iterator<Item = (u32, u32, Aabb)>) -> QueryIndex {
        // One pass gathers the entries (keys come once the grid is known),
        // the spread of their centres and their mean size.
        let mut entries: Vec<Entry> = Vec::with_capacity(bodies.size_hint().1.unwrap_or(0));
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
            large: Vec::new(),
        };
        let mut large = Vec::new();
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
        sort_by_key_stable(&mut entries);
        index.entries = entries;
        index.large = large;
        index
    }

    /// The row and column of a key.
    fn unpack(key: u64) -> (u32, u32) {
        ((key >> 32) as u32, key as u32)
    }

    /// The column of a point along one grid axis.
    fn cell(&self, x: Fx) -> i64 {
        x.to_bits() >> self.shift
    }

    /// The key of the column holding `p`.
    fn key(&self, p: Vec3) -> u64 {
        Self::pack(
            self.cell(p.axis(self.axes[0])),
            self.cell(p.axis(self.axes[1])),
        )
    }

    fn pack(row: i64, col: i64) -> u64 {
        // Cells lie within ±2^(63 − MIN_SHIFT) < 2^31: offset into u32 halves.
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

/// Sorts entries by key, keeping the order of equal keys: one counting
/// pass over the cells of the grid the entries span when it has no more
/// cells than a few per entry, as a world's bodies spread over a map do
/// (keys order the cells row by row, so a cell's index orders them too);
/// a comparison sort otherwise (a world whose bodies lie far apart in a
/// few clusters). Both give the same order.
fn sort_by_key_stable(entries: &mut Vec<Entry>) {
    let n = entries.len();
    if n < 2 {
        return;
    }
    let (mut lo, mut hi) = ((u32::MAX, u32::MAX), (0u32, 0u32));
    for e in entries.iter() {
        let (r, c) = QueryIndex::unpack(e.key);
        lo = (lo.0.min(r), lo.1.min(c));
        hi = (hi.0.max(r), hi.1.max(c));
    }
    let cols = u64::from(hi.1 - lo.1) + 1;
    let cells = (u64::from(hi.0 - lo.0) + 1).saturating_mul(cols);
    if cells > 4 * n as u64 + 64 {
        entries.sort_by_key(|e| e.key);
        return;
    }
    let cell = |key: u64| {
        let (r, c) = QueryIndex::unpack(key);
        ((r - lo.0) as u64 * cols + u64::from(c - lo.1)) as usize
    };
    // Where each cell's entries start, then each entry's place.
    let mut starts = vec![0u32; cells as usize + 1];
    for e in entries.iter() {
        starts[cell(e.key) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut order = vec![0u32; n];
    for (i, e) in entries.iter().enumerate() {
        let at = &mut starts[cell(e.key)];
        order[*at as usize] = i as u32;
        *at += 1;
    }
    *entries = order.iter().map(|&i| entries[i as usize]).collect();
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
            sort_by_key_stable(&mut entries);
            let order = |v: &[Entry]| v.iter().map(|e| (e.key, e.slot)).collect::<Vec<_>>();
            assert_eq!(order(&entries), order(&expected), "span {span}");
        }
    }
}
