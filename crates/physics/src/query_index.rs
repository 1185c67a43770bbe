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
//! more rows than there are bodies scans them all instead). Results are
//! sorted by slot, so they are exactly the bodies a scan of every slot
//! would report, in the same order.
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
    /// report.
    pub fn build(bodies: impl Iterator<Item = (u32, u32, Aabb)> + Clone) -> QueryIndex {
        // The grid axes: the two along which the centres spread the most.
        let (mut lo, mut hi) = (Vec3::splat(Fx::MAX), Vec3::splat(Fx::MIN));
        let (mut size_sum, mut count) = (0u128, 0u128);
        for (_, _, b) in bodies.clone() {
            let c = Vec3::new(
                b.min.x.scale_pow2(-1) + b.max.x.scale_pow2(-1),
                b.min.y.scale_pow2(-1) + b.max.y.scale_pow2(-1),
                b.min.z.scale_pow2(-1) + b.max.z.scale_pow2(-1),
            );
            lo = lo.min(c);
            hi = hi.max(c);
            let d = b.max - b.min;
            size_sum += d.max_element().to_bits().unsigned_abs() as u128;
            count += 1;
        }
        let spread = hi - lo;
        let mut order = [0u8, 1, 2];
        order.sort_by_key(|&a| core::cmp::Reverse(spread.axis(a)));
        let mut axes = [order[0], order[1]];
        axes.sort_unstable();
        let mean = size_sum.checked_div(count).unwrap_or(1);
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
        for (slot, groups, bounds) in bodies {
            let e = Entry {
                key: index.key(bounds.min),
                slot,
                groups,
                bounds,
            };
            let d = bounds.max - bounds.min;
            let wide = d.axis(axes[0]).to_bits() > 1i64 << shift
                || d.axis(axes[1]).to_bits() > 1i64 << shift;
            if wide {
                index.large.push(e);
            } else {
                index.entries.push(e);
            }
        }
        index.entries.sort_unstable_by_key(|e| (e.key, e.slot));
        index
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

    /// Slots of the bodies in layers `mask` whose bounds overlap `area`,
    /// ascending, appended to `out`.
    pub fn query(&self, area: &Aabb, mask: u32, out: &mut Vec<u32>) {
        let start = out.len();
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
            out.extend(self.entries.iter().filter(|e| hit(e)).map(|e| e.slot));
        } else if r0 <= r1 && c0 <= c1 {
            for row in r0..=r1 {
                let (first, last) = (Self::pack(row, c0), Self::pack(row, c1));
                let from = self.entries.partition_point(|e| e.key < first);
                for e in self.entries[from..].iter().take_while(|e| e.key <= last) {
                    if hit(e) {
                        out.push(e.slot);
                    }
                }
            }
        }
        out.extend(self.large.iter().filter(|e| hit(e)).map(|e| e.slot));
        out[start..].sort_unstable();
    }
}
