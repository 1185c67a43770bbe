//! Seats: [`SeatId`] (a place in the match, `0..8`, taken by one player's
//! process at a time) and [`SeatSet`] (a set of seats as a bitmask).
//!
//! Invariant: a session of `n` seats uses seats `0..n`, `2 <= n <= 8`; seat 0
//! is the host (the resync authority of a two-seat match).

use core::fmt;

/// The most seats a session holds.
pub const MAX_SEATS: u8 = 8;

/// A seat, `0..MAX_SEATS`.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct SeatId(pub u8);

impl SeatId {
    /// The seat as an index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for SeatId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0)
    }
}

impl fmt::Display for SeatId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// A set of seats.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeatSet(pub u8);

impl SeatSet {
    /// The empty set.
    pub const EMPTY: SeatSet = SeatSet(0);

    /// Whether `p` is in the set.
    pub const fn contains(self, p: SeatId) -> bool {
        p.0 < MAX_SEATS && self.0 & (1 << p.0) != 0
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: SeatId) {
        if p.0 < MAX_SEATS {
            self.0 |= 1 << p.0;
        }
    }

    /// How many seats are in the set.
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Seats `0..n` (at most [`MAX_SEATS`]).
    pub const fn first(n: u8) -> SeatSet {
        if n >= MAX_SEATS {
            SeatSet(u8::MAX)
        } else {
            SeatSet((1u8 << n) - 1)
        }
    }

    /// The set holding `p` alone.
    pub fn only(p: SeatId) -> SeatSet {
        let mut s = SeatSet::EMPTY;
        s.insert(p);
        s
    }

    /// Takes `p` out.
    pub fn remove(&mut self, p: SeatId) {
        if p.0 < MAX_SEATS {
            self.0 &= !(1 << p.0);
        }
    }

    /// The seats in both sets.
    pub const fn intersection(self, other: SeatSet) -> SeatSet {
        SeatSet(self.0 & other.0)
    }

    /// The seats of this set that are not in `other`.
    pub const fn without(self, other: SeatSet) -> SeatSet {
        SeatSet(self.0 & !other.0)
    }

    /// The lowest seat in the set.
    pub fn lowest(self) -> Option<SeatId> {
        self.iter().next()
    }

    /// The seats in increasing order.
    pub fn iter(self) -> impl Iterator<Item = SeatId> {
        (0..MAX_SEATS)
            .map(SeatId)
            .filter(move |p| self.contains(*p))
    }
}

impl fmt::Display for SeatSet {
    /// "seat 1, seat 3", or "no seat".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == SeatSet::EMPTY {
            return f.write_str("no seat");
        }
        for (i, seat) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{seat}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for SeatSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_of_seats_reads_as_their_names() {
        let mut s = SeatSet::EMPTY;
        assert_eq!(s.to_string(), "no seat");
        s.insert(SeatId(3));
        s.insert(SeatId(1));
        assert_eq!(s.to_string(), "seat 1, seat 3");
    }
}
