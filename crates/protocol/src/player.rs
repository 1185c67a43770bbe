//! Player identities: [`PlayerId`] (a seat, `0..8`) and [`PlayerSet`] (a set
//! of seats as a bitmask).
//!
//! Invariant: a session of `n` players uses seats `0..n`, `2 <= n <= 8`; seat 0
//! is the host (the resync authority of a two-player match).

use core::fmt;

/// The most players a session holds.
pub const MAX_PLAYERS: u8 = 8;

/// A player's seat, `0..MAX_PLAYERS`.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct PlayerId(pub u8);

impl PlayerId {
    /// The seat as an index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0)
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "player {}", self.0)
    }
}

/// A set of seats.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PlayerSet(pub u8);

impl PlayerSet {
    /// The empty set.
    pub const EMPTY: PlayerSet = PlayerSet(0);

    /// Whether `p` is in the set.
    pub const fn contains(self, p: PlayerId) -> bool {
        p.0 < MAX_PLAYERS && self.0 & (1 << p.0) != 0
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: PlayerId) {
        if p.0 < MAX_PLAYERS {
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

    /// Seats `0..n` (at most [`MAX_PLAYERS`]).
    pub const fn first(n: u8) -> PlayerSet {
        if n >= MAX_PLAYERS {
            PlayerSet(u8::MAX)
        } else {
            PlayerSet((1u8 << n) - 1)
        }
    }

    /// The set holding `p` alone.
    pub fn only(p: PlayerId) -> PlayerSet {
        let mut s = PlayerSet::EMPTY;
        s.insert(p);
        s
    }

    /// Takes `p` out.
    pub fn remove(&mut self, p: PlayerId) {
        if p.0 < MAX_PLAYERS {
            self.0 &= !(1 << p.0);
        }
    }

    /// The seats in both sets.
    pub const fn intersection(self, other: PlayerSet) -> PlayerSet {
        PlayerSet(self.0 & other.0)
    }

    /// The seats of this set that are not in `other`.
    pub const fn without(self, other: PlayerSet) -> PlayerSet {
        PlayerSet(self.0 & !other.0)
    }

    /// The lowest seat in the set.
    pub fn lowest(self) -> Option<PlayerId> {
        self.iter().next()
    }

    /// The seats in increasing order.
    pub fn iter(self) -> impl Iterator<Item = PlayerId> {
        (0..MAX_PLAYERS)
            .map(PlayerId)
            .filter(move |p| self.contains(*p))
    }
}

impl fmt::Debug for PlayerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
