//! The quorum rule: which side of a split match may drop the other seats
//! and play on, and which frames a seat may take as settled.
//!
//! The *voters* are the seats live in the match as this seat knows it — a
//! seat leaves the live set once the remaining seats agreed on its last
//! frame and comes back when its restarted process returns — less the
//! seats that said goodbye (they stop playing whatever the rest decide, so
//! they have no say). A seat's *side* is the voters it still hears, itself
//! included. A side is a **quorum** when it holds more than half of the
//! voters, or exactly half and the lowest voter: every seat breaks the tie
//! the same way, so of two disjoint sides at most one is a quorum, and any
//! two quorums of one set of voters share a seat.
//!
//! A side may drop the voters it no longer hears only while it is a quorum
//! ([`is_quorum`]); a seat whose side is not one has lost the match and
//! stops stepping. That alone does not keep two logs from parting: before
//! a minority learns it is one it may step, and compare among itself,
//! frames that the majority then plays with a dropped seat's absent input.
//! So a frame is settled (logged, fed to spectators) only once a quorum has
//! compared it clean ([`vouched_through`]): some seat of that quorum is in
//! every later majority, stepped the frame with the seat's real input, and
//! so reports holding it when the seat's last frame is agreed.
//!
//! Invariants: pure functions of sets of at most 8 seats; no allocation.

use crate::seat::{SeatId, SeatSet};

/// Whether `side` is a quorum of `voters`: more than half of them, or
/// exactly half holding the lowest voter. Seats of `side` outside `voters`
/// do not count; no voters at all make no quorum.
pub fn is_quorum(side: SeatSet, voters: SeatSet) -> bool {
    let side = side.intersection(voters);
    let (held, of) = (side.len(), voters.len());
    of > 0
        && (2 * held > of || (2 * held == of && voters.lowest().is_some_and(|l| side.contains(l))))
}

/// The newest frame `local` may take as settled: the newest frame compared
/// clean (`clean`) that seats making, with `local`, a quorum of `voters`
/// have compared equal. `matched` gives, for each other voter still heard,
/// the newest frame whose checksum from it equalled ours.
///
/// When `local` alone is a quorum (it holds the tie-break of two, or is the
/// only voter) no other seat's match is needed and `clean` is the bound.
pub fn vouched_through(
    local: SeatId,
    voters: SeatSet,
    matched: &[(SeatId, Option<u32>)],
    clean: Option<u32>,
) -> Option<u32> {
    let own = SeatSet::only(local);
    if is_quorum(own, voters) {
        return clean;
    }
    // The seats matching through a frame F are those whose newest match is
    // at least F: taking the others by newest match, newest first, each
    // prefix is the largest set matching through its oldest member's
    // frame. The first prefix that makes a quorum gives the newest frame.
    let mut by_match: Vec<(u32, SeatId)> = matched
        .iter()
        .filter(|(p, _)| *p != local && voters.contains(*p))
        .filter_map(|(p, m)| m.map(|m| (m, *p)))
        .collect();
    by_match.sort_unstable_by(|a, b| b.cmp(a));
    let mut side = own;
    for (frame, p) in by_match {
        side.insert(p);
        if is_quorum(side, voters) {
            return clean.map(|c| c.min(frame));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(seats: &[u8]) -> SeatSet {
        let mut s = SeatSet::EMPTY;
        for &p in seats {
            s.insert(SeatId(p));
        }
        s
    }

    #[test]
    fn more_than_half_is_a_quorum() {
        let all = set(&[0, 1, 2, 3, 4]);
        assert!(is_quorum(set(&[2, 3, 4]), all));
        assert!(
            !is_quorum(set(&[0, 1]), all),
            "the lowest seat does not help a minority"
        );
        assert!(is_quorum(set(&[1, 2]), set(&[0, 1, 2])));
        assert!(!is_quorum(set(&[0]), set(&[0, 1, 2])));
    }

    #[test]
    fn a_tie_goes_to_the_half_holding_the_lowest_live_seat() {
        let four = set(&[0, 1, 2, 3]);
        assert!(is_quorum(set(&[0, 1]), four));
        assert!(is_quorum(set(&[0, 3]), four));
        assert!(!is_quorum(set(&[2, 3]), four));
        assert!(!is_quorum(set(&[1, 2]), four));
        // Two seats: the lower one plays on, the other stops.
        assert!(is_quorum(set(&[0]), set(&[0, 1])));
        assert!(!is_quorum(set(&[1]), set(&[0, 1])));
        // Once seat 0 has left, the lowest live seat is 1.
        assert!(is_quorum(set(&[1]), set(&[1, 3])));
        assert!(!is_quorum(set(&[3]), set(&[1, 3])));
    }

    #[test]
    fn of_two_disjoint_sides_at_most_one_is_a_quorum() {
        for voters in 1..=u8::MAX {
            let voters = SeatSet(voters);
            for a in 0..=u8::MAX {
                let a = SeatSet(a).intersection(voters);
                let b = voters.without(a);
                assert!(
                    !(is_quorum(a, voters) && is_quorum(b, voters)),
                    "{a:?} and {b:?} of {voters:?}"
                );
                // One of them always is: a split never strands everyone.
                assert!(is_quorum(a, voters) || is_quorum(b, voters));
            }
        }
    }

    #[test]
    fn successive_drops_count_against_the_seats_live_before_each() {
        // 5 seats; 4 is dropped by the other four, then 3 by {0, 1, 2},
        // then 2 by {0, 1}: each side was a quorum of the seats live before
        // its drop, though {0, 1} is not one of the first five.
        let mut live = set(&[0, 1, 2, 3, 4]);
        for (side, gone) in [
            (set(&[0, 1, 2, 3]), 4),
            (set(&[0, 1, 2]), 3),
            (set(&[0, 1]), 2),
        ] {
            assert!(is_quorum(side, live), "{side:?} of {live:?}");
            live.remove(SeatId(gone));
        }
        assert!(!is_quorum(set(&[0, 1]), set(&[0, 1, 2, 3, 4])));
        // And the seats cut off each time never were one.
        assert!(!is_quorum(set(&[4]), set(&[0, 1, 2, 3, 4])));
        assert!(!is_quorum(set(&[3]), set(&[0, 1, 2, 3])));
        assert!(!is_quorum(set(&[2]), set(&[0, 1, 2])));
    }

    #[test]
    fn nobody_is_a_quorum_of_nobody() {
        assert!(!is_quorum(SeatSet::EMPTY, SeatSet::EMPTY));
        assert!(!is_quorum(set(&[0]), SeatSet::EMPTY));
        assert!(is_quorum(set(&[2]), set(&[2])), "the last voter");
    }

    #[test]
    fn a_frame_is_vouched_for_once_a_quorum_compared_it_clean() {
        let four = set(&[0, 1, 2, 3]);
        let m = |a: Option<u32>, b: Option<u32>, c: Option<u32>| {
            vec![(SeatId(0), a), (SeatId(1), b), (SeatId(3), c)]
        };
        // Seat 2 with seat 3 only is half without the lowest seat.
        assert_eq!(
            vouched_through(SeatId(2), four, &m(None, None, Some(90)), Some(90)),
            None
        );
        // With seat 0 it is a quorum.
        assert_eq!(
            vouched_through(SeatId(2), four, &m(Some(70), None, Some(90)), Some(90)),
            Some(70)
        );
        // Seats 1 and 3 together also do, through the older of their matches.
        assert_eq!(
            vouched_through(SeatId(2), four, &m(None, Some(80), Some(90)), Some(90)),
            Some(80)
        );
        // Never past what was compared clean.
        assert_eq!(
            vouched_through(SeatId(2), four, &m(Some(95), None, None), Some(90)),
            Some(90)
        );
        // A seat outside the voters (dropped) vouches for nothing.
        let three = set(&[0, 2, 3]);
        assert_eq!(
            vouched_through(SeatId(2), three, &m(None, Some(80), None), Some(90)),
            None
        );
    }

    #[test]
    fn the_tie_breaker_of_two_needs_no_other_seat() {
        let two = set(&[0, 1]);
        assert_eq!(
            vouched_through(SeatId(0), two, &[(SeatId(1), None)], Some(9)),
            Some(9)
        );
        assert_eq!(
            vouched_through(SeatId(1), two, &[(SeatId(0), None)], Some(9)),
            None
        );
        assert_eq!(
            vouched_through(SeatId(1), two, &[(SeatId(0), Some(7))], Some(9)),
            Some(7)
        );
    }
}
