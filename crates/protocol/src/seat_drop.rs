//! Dropping a seat: when a peer goes silent or leaves, the remaining peers
//! agree on the last frame it played, so every one of them steps the same
//! frames with the same inputs from then on.
//!
//! Each remaining peer freezes what it holds of the seat's inputs (it takes
//! no more from that seat) and reports to every other remaining peer how far
//! it holds them, with its newest ones. The seat's last frame is the newest
//! frame any remaining peer holds: no peer can have stepped a frame past it
//! (stepping a frame needs every seat's input for it), and the inputs the
//! reports carry let every peer reach it. From the frame after it, the
//! seat's input is the game's absent input ([`crate::Input::absent`]).
//!
//! Invariants: a report is sent to a peer until that peer's own report says
//! it has heard ours; the agreement waits for the report of every remaining
//! peer that has not left in turn; the agreed frame is a pure function of
//! the reports, so all remaining peers reach the same one.

use crate::player::{MAX_PLAYERS, PlayerId, PlayerSet};

/// One seat being dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Drop {
    seat: PlayerId,
    /// Each reporter's newest frame held of the seat's inputs (`None`:
    /// none), once its report has arrived and been taken.
    reports: [Option<Option<u32>>; MAX_PLAYERS as usize],
    /// The peers whose reports say they heard ours.
    heard_ours: PlayerSet,
    /// The peers we sent a report that says we heard theirs.
    told_heard: PlayerSet,
    /// The agreed last frame, once known.
    agreed: Option<Option<u32>>,
}

/// The seats being dropped, and what each remaining peer said about them.
#[derive(Debug, Clone)]
pub struct SeatDrops {
    local: PlayerId,
    drops: Vec<Drop>,
}

impl SeatDrops {
    /// No drops yet; this peer is `local`.
    pub fn new(local: PlayerId) -> SeatDrops {
        SeatDrops {
            local,
            drops: Vec::new(),
        }
    }

    /// Starts dropping `seat` with this peer holding its inputs through
    /// `held`. Does nothing if already started.
    pub fn begin(&mut self, seat: PlayerId, held: Option<u32>) {
        if self.is_dropping(seat) {
            return;
        }
        let mut reports = [None; MAX_PLAYERS as usize];
        reports[self.local.index()] = Some(held);
        self.drops.push(Drop {
            seat,
            reports,
            heard_ours: PlayerSet::EMPTY,
            told_heard: PlayerSet::EMPTY,
            agreed: None,
        });
    }

    /// Whether `seat` is being (or has been) dropped.
    pub fn is_dropping(&self, seat: PlayerId) -> bool {
        self.drops.iter().any(|d| d.seat == seat)
    }

    /// Records `from`'s report on `seat`: it holds the seat's inputs
    /// through `held`, and has heard the reports of `heard`.
    pub fn on_report(
        &mut self,
        from: PlayerId,
        seat: PlayerId,
        held: Option<u32>,
        heard: PlayerSet,
    ) {
        let Some(d) = self.drops.iter_mut().find(|d| d.seat == seat) else {
            return;
        };
        if let Some(r) = d.reports.get_mut(from.index()) {
            *r = Some(held);
        }
        if heard.contains(self.local) {
            d.heard_ours.insert(from);
        }
    }

    /// The reporters whose report on `seat` has arrived (ourselves included).
    pub fn heard(&self, seat: PlayerId) -> PlayerSet {
        let mut set = PlayerSet::EMPTY;
        if let Some(d) = self.drops.iter().find(|d| d.seat == seat) {
            for (i, r) in d.reports.iter().enumerate() {
                if r.is_some() {
                    set.insert(PlayerId(i as u8));
                }
            }
        }
        set
    }

    /// The (seat, peer) pairs our report still has to reach, among the
    /// peers in `remaining`: a peer that has not heard ours, or whose report
    /// we have not yet said we heard.
    pub fn due(&self, remaining: PlayerSet) -> Vec<(PlayerId, PlayerId)> {
        let mut out = Vec::new();
        for d in &self.drops {
            for p in remaining.iter().filter(|&p| p != self.local) {
                let unanswered = d.reports[p.index()].is_some() && !d.told_heard.contains(p);
                if p != d.seat && (!d.heard_ours.contains(p) || unanswered) {
                    out.push((d.seat, p));
                }
            }
        }
        out
    }

    /// Our report on `seat` was sent to `to`.
    pub fn sent(&mut self, seat: PlayerId, to: PlayerId) {
        if let Some(d) = self.drops.iter_mut().find(|d| d.seat == seat) {
            if d.reports[to.index()].is_some() {
                d.told_heard.insert(to);
            }
        }
    }

    /// The drops not yet settled whose reports are all in, `remaining` being
    /// the peers still in the match (ourselves included), with the last
    /// frame the reports agree on (`None`: the seat played no frame). Settle
    /// each with [`SeatDrops::settle`] once the seat is ended.
    pub fn decide(&self, remaining: PlayerSet) -> Vec<(PlayerId, Option<u32>)> {
        let mut out = Vec::new();
        for d in &self.drops {
            if d.agreed.is_some() {
                continue;
            }
            let mut newest: Option<Option<u32>> = Some(None);
            for p in remaining.iter().filter(|&p| p != d.seat) {
                match d.reports[p.index()] {
                    Some(held) => newest = newest.map(|n| n.max(held)),
                    None => newest = None,
                }
            }
            if let Some(last) = newest {
                out.push((d.seat, last));
            }
        }
        out
    }

    /// Forgets `seat`'s drop (it came back), so it can be dropped again.
    pub fn forget(&mut self, seat: PlayerId) {
        self.drops.retain(|d| d.seat != seat);
    }

    /// Records that `seat` ended after `last`.
    pub fn settle(&mut self, seat: PlayerId, last: Option<u32>) {
        if let Some(d) = self.drops.iter_mut().find(|d| d.seat == seat) {
            d.agreed = Some(last);
        }
    }

    /// Whether some drop still waits for its last frame to be agreed.
    pub fn any_pending(&self) -> bool {
        self.drops.iter().any(|d| d.agreed.is_none())
    }

    /// `seat`'s process is new (it returned to the match): it has no part in
    /// any drop under way or agreed before — none is reported to it, and
    /// none waits for its report (it holds none of their inputs).
    pub fn newcomer(&mut self, seat: PlayerId) {
        for d in self.drops.iter_mut().filter(|d| d.seat != seat) {
            d.heard_ours.insert(seat);
            d.told_heard.insert(seat);
            if let Some(r) = d.reports.get_mut(seat.index()) {
                r.get_or_insert(None);
            }
        }
    }

    /// Records that `seat` ended after `last` by an agreement this peer was
    /// no part of (a process returning to the match learns it from the
    /// host): nothing is reported on it, since the others settled it long
    /// ago and a late report would have them drop it anew.
    pub fn settled_elsewhere(&mut self, seat: PlayerId, last: Option<u32>) {
        self.forget(seat);
        let mut reports = [None; MAX_PLAYERS as usize];
        reports[self.local.index()] = Some(last);
        self.drops.push(Drop {
            seat,
            reports,
            heard_ours: PlayerSet(u8::MAX),
            told_heard: PlayerSet(u8::MAX),
            agreed: Some(last),
        });
    }

    /// The agreed last frame of `seat`, once decided.
    pub fn agreed(&self, seat: PlayerId) -> Option<Option<u32>> {
        self.drops.iter().find(|d| d.seat == seat)?.agreed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(seats: &[u8]) -> PlayerSet {
        let mut s = PlayerSet::EMPTY;
        for &p in seats {
            s.insert(PlayerId(p));
        }
        s
    }

    #[test]
    fn the_newest_frame_any_remaining_peer_holds_is_agreed() {
        let (me, gone) = (PlayerId(0), PlayerId(3));
        let mut d = SeatDrops::new(me);
        d.begin(gone, Some(598));
        let remaining = set(&[0, 1, 2]);
        assert!(d.decide(remaining).is_empty(), "waits for every report");
        assert_eq!(
            d.due(remaining),
            vec![(gone, PlayerId(1)), (gone, PlayerId(2))]
        );
        d.on_report(PlayerId(1), gone, Some(601), set(&[1]));
        d.on_report(PlayerId(2), gone, Some(599), set(&[0, 2]));
        // Peer 1 has not heard ours; peer 2 has, but must hear that we
        // heard its report.
        assert_eq!(
            d.due(remaining),
            vec![(gone, PlayerId(1)), (gone, PlayerId(2))]
        );
        d.sent(gone, PlayerId(2));
        assert_eq!(d.due(remaining), vec![(gone, PlayerId(1))]);
        assert_eq!(d.decide(remaining), vec![(gone, Some(601))]);
        d.settle(gone, Some(601));
        assert_eq!(d.agreed(gone), Some(Some(601)));
        assert!(d.decide(remaining).is_empty(), "decided once");
    }

    #[test]
    fn a_drop_settled_elsewhere_is_never_reported() {
        let mut d = SeatDrops::new(PlayerId(2));
        d.settled_elsewhere(PlayerId(3), Some(451));
        assert_eq!(d.agreed(PlayerId(3)), Some(Some(451)));
        assert!(!d.any_pending());
        d.on_report(PlayerId(0), PlayerId(3), Some(449), set(&[0]));
        assert!(d.due(set(&[0, 1, 2])).is_empty());
        assert!(d.decide(set(&[0, 1, 2])).is_empty());
    }

    #[test]
    fn a_returned_seat_is_not_told_of_older_drops_nor_waited_for() {
        let mut d = SeatDrops::new(PlayerId(0));
        d.begin(PlayerId(3), Some(450));
        d.settle(PlayerId(3), Some(450));
        d.begin(PlayerId(1), Some(700));
        let remaining = set(&[0, 2]);
        assert!(d.decide(remaining).is_empty(), "waits for seat 2");
        d.newcomer(PlayerId(2));
        assert!(d.due(remaining).is_empty());
        assert_eq!(d.decide(remaining), vec![(PlayerId(1), Some(700))]);
    }

    #[test]
    fn a_peer_that_leaves_in_turn_is_not_waited_for() {
        let me = PlayerId(1);
        let mut d = SeatDrops::new(me);
        d.begin(PlayerId(0), None);
        d.on_report(PlayerId(2), PlayerId(0), None, set(&[1, 2]));
        assert!(d.decide(set(&[1, 2, 3])).is_empty());
        assert_eq!(d.decide(set(&[1, 2])), vec![(PlayerId(0), None)]);
    }
}
