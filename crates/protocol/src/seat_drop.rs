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
//! A report carries at most the newest inputs that fit; a peer that holds
//! far fewer of the seat's inputs than a reporter (it lagged) records the
//! report all the same, and the reporter *relays* it the inputs it lacks,
//! a run at a time from the frame after the one its report names, until it
//! holds as many.
//!
//! Of two seats that lost each other the lower one's word is taken: a
//! report on a higher seat is joined at once. A peer that has not timed out
//! a seat lower than the reporter does not join its drop on one report: the
//! reporter lost the seat, not the match. It joins once the reporters are a
//! quorum of the voters (see [`crate::quorum`]) or it times the seat out
//! too; until then it keeps the report as a *suspicion* (the reporter
//! repeats it) and sends nothing. A peer whose own drop no heard
//! peer joins gives up its seat (see `session/membership.rs`): of two seats
//! that lost each other, the one the rest no longer hear leaves, not both
//! sides of the rest.
//!
//! Invariants: a report is sent to a peer until that peer's own report says
//! it has heard ours and holds as far as we do; the agreement waits for the
//! report of every remaining peer that has not left in turn; the agreed
//! frame is a pure function of the reports, so all remaining peers reach
//! the same one; a report's frame only grows.

use crate::seat::{MAX_SEATS, SeatId, SeatSet};
use crate::time::Instant;

/// One seat being dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Drop {
    seat: SeatId,
    /// Each reporter's newest frame held of the seat's inputs (`None`:
    /// none), once its report has arrived and been taken.
    reports: [Option<Option<u32>>; MAX_SEATS as usize],
    /// The peers whose reports say they heard ours.
    heard_ours: SeatSet,
    /// The peers we sent a report that says we heard theirs.
    told_heard: SeatSet,
    /// The peers with no part in this drop (their process came back after
    /// it began): nothing is sent to them about it.
    outsiders: SeatSet,
    /// The agreed last frame, once known.
    agreed: Option<Option<u32>>,
    /// When this peer began it (it joined, or reported first).
    began: Instant,
}

/// The seats being dropped, and what each remaining peer said about them.
#[derive(Debug, Clone)]
pub struct SeatDrops {
    local: SeatId,
    drops: Vec<Drop>,
    /// Per seat not being dropped here, the peers whose reports on it this
    /// peer declined (it still heard the seat).
    suspicions: [SeatSet; MAX_SEATS as usize],
}

impl SeatDrops {
    /// No drops yet; this peer is `local`.
    pub fn new(local: SeatId) -> SeatDrops {
        SeatDrops {
            local,
            drops: Vec::new(),
            suspicions: [SeatSet::EMPTY; MAX_SEATS as usize],
        }
    }

    /// Starts dropping `seat` at `now` with this peer holding its inputs
    /// through `held`. Does nothing if already started.
    pub fn begin(&mut self, seat: SeatId, held: Option<u32>, now: Instant) {
        if self.is_dropping(seat) {
            return;
        }
        self.suspicions[seat.index()] = SeatSet::EMPTY;
        let mut reports = [None; MAX_SEATS as usize];
        reports[self.local.index()] = Some(held);
        self.drops.push(Drop {
            seat,
            reports,
            heard_ours: SeatSet::EMPTY,
            told_heard: SeatSet::EMPTY,
            outsiders: SeatSet::EMPTY,
            agreed: None,
            began: now,
        });
    }

    /// The drops not yet agreed, each with when this peer began it.
    pub fn pending(&self) -> impl Iterator<Item = (SeatId, Instant)> + '_ {
        self.drops
            .iter()
            .filter(|d| d.agreed.is_none())
            .map(|d| (d.seat, d.began))
    }

    /// `from` reported dropping `seat` and this peer, still hearing the
    /// seat, did not join: returns every peer that has so reported.
    pub fn suspect(&mut self, from: SeatId, seat: SeatId) -> SeatSet {
        let s = &mut self.suspicions[seat.index()];
        s.insert(from);
        *s
    }

    /// The peers that `seat`'s report, once it arrives, is still missing
    /// from: those in `remaining` (but the seat) whose report on it has not
    /// arrived. Empty once the drop is agreed.
    pub fn missing(&self, seat: SeatId, remaining: SeatSet) -> SeatSet {
        match self.drops.iter().find(|d| d.seat == seat) {
            Some(d) if d.agreed.is_none() => remaining
                .without(self.heard(seat))
                .without(SeatSet::only(seat)),
            _ => SeatSet::EMPTY,
        }
    }

    /// Whether `seat` is being (or has been) dropped.
    pub fn is_dropping(&self, seat: SeatId) -> bool {
        self.drops.iter().any(|d| d.seat == seat)
    }

    /// Records `from`'s report on `seat`: it holds the seat's inputs
    /// through `held`, and has heard the reports of `heard`. Returns
    /// whether that is news (not a repeat of what was known).
    pub fn on_report(
        &mut self,
        from: SeatId,
        seat: SeatId,
        held: Option<u32>,
        heard: SeatSet,
    ) -> bool {
        let Some(d) = self.drops.iter_mut().find(|d| d.seat == seat) else {
            return false;
        };
        let mut news = false;
        if let Some(r) = d.reports.get_mut(from.index()) {
            // What a peer holds only grows (reports may arrive reordered).
            let now = Some(r.map_or(held, |was| was.max(held)));
            news |= *r != now;
            *r = now;
        }
        if heard.contains(self.local) && !d.heard_ours.contains(from) {
            d.heard_ours.insert(from);
            news = true;
        }
        news
    }

    /// This peer now holds `seat`'s inputs through `held` (relayed inputs
    /// arrived): its report says so from now on.
    pub fn now_holding(&mut self, seat: SeatId, held: Option<u32>) {
        let local = self.local.index();
        if let Some(d) = self.drops.iter_mut().find(|d| d.seat == seat) {
            let r = &mut d.reports[local];
            *r = Some(r.map_or(held, |was| was.max(held)));
        }
    }

    /// How far `peer`'s report on `seat` says it holds the seat's inputs,
    /// when that is less than this peer holds: the inputs to relay it.
    pub fn lacking(&self, seat: SeatId, peer: SeatId) -> Option<Option<u32>> {
        let d = self.drops.iter().find(|d| d.seat == seat)?;
        let theirs = d.reports.get(peer.index()).copied().flatten()?;
        let ours = d.reports[self.local.index()].flatten();
        (theirs < ours).then_some(theirs)
    }

    /// The reporters whose report on `seat` has arrived (ourselves included).
    pub fn heard(&self, seat: SeatId) -> SeatSet {
        let mut set = SeatSet::EMPTY;
        if let Some(d) = self.drops.iter().find(|d| d.seat == seat) {
            for (i, r) in d.reports.iter().enumerate() {
                if r.is_some() {
                    set.insert(SeatId(i as u8));
                }
            }
        }
        set
    }

    /// The (seat, peer) pairs our report still has to reach, among the
    /// peers in `remaining`: a peer that has not heard ours, or whose report
    /// we have not yet said we heard.
    pub fn due(&self, remaining: SeatSet) -> Vec<(SeatId, SeatId)> {
        let mut out = Vec::new();
        for d in &self.drops {
            let ours = d.reports[self.local.index()].flatten();
            for p in remaining.iter().filter(|&p| p != self.local) {
                let theirs = d.reports[p.index()];
                let unanswered = theirs.is_some() && !d.told_heard.contains(p);
                let lags = theirs.is_some_and(|t| t < ours);
                let outsider = d.outsiders.contains(p);
                if p != d.seat && !outsider && (!d.heard_ours.contains(p) || unanswered || lags) {
                    out.push((d.seat, p));
                }
            }
        }
        out
    }

    /// Our report on `seat` was sent to `to`.
    pub fn sent(&mut self, seat: SeatId, to: SeatId) {
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
    pub fn decide(&self, remaining: SeatSet) -> Vec<(SeatId, Option<u32>)> {
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

    /// Forgets `seat`'s drop (it came back), so it can be dropped again,
    /// and what its earlier process reported or was suspected of.
    pub fn forget(&mut self, seat: SeatId) {
        self.drops.retain(|d| d.seat != seat);
        for s in &mut self.suspicions {
            s.remove(seat);
        }
        self.suspicions[seat.index()] = SeatSet::EMPTY;
    }

    /// Records that `seat` ended after `last`.
    pub fn settle(&mut self, seat: SeatId, last: Option<u32>) {
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
    pub fn newcomer(&mut self, seat: SeatId) {
        for d in self.drops.iter_mut().filter(|d| d.seat != seat) {
            d.outsiders.insert(seat);
            if let Some(r) = d.reports.get_mut(seat.index()) {
                r.get_or_insert(None);
            }
        }
    }

    /// Records that `seat` ended after `last` by an agreement this peer was
    /// no part of (a process returning to the match learns it from the
    /// host): nothing is reported on it, since the others settled it long
    /// ago and a late report would have them drop it anew.
    pub fn settled_elsewhere(&mut self, seat: SeatId, last: Option<u32>) {
        self.forget(seat);
        let mut reports = [None; MAX_SEATS as usize];
        reports[self.local.index()] = Some(last);
        self.drops.push(Drop {
            seat,
            reports,
            heard_ours: SeatSet::EMPTY,
            told_heard: SeatSet::EMPTY,
            outsiders: SeatSet(u8::MAX),
            agreed: Some(last),
            began: Instant::ZERO,
        });
    }

    /// The agreed last frame of `seat`, once decided.
    pub fn agreed(&self, seat: SeatId) -> Option<Option<u32>> {
        self.drops.iter().find(|d| d.seat == seat)?.agreed
    }
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
    fn the_newest_frame_any_remaining_peer_holds_is_agreed() {
        let (me, gone) = (SeatId(0), SeatId(3));
        let mut d = SeatDrops::new(me);
        d.begin(gone, Some(598), Instant::ZERO);
        let remaining = set(&[0, 1, 2]);
        assert!(d.decide(remaining).is_empty(), "waits for every report");
        assert_eq!(d.due(remaining), vec![(gone, SeatId(1)), (gone, SeatId(2))]);
        d.on_report(SeatId(1), gone, Some(601), set(&[1]));
        d.on_report(SeatId(2), gone, Some(599), set(&[0, 2]));
        // Peer 1 has not heard ours; peer 2 has, but must hear that we
        // heard its report.
        assert_eq!(d.due(remaining), vec![(gone, SeatId(1)), (gone, SeatId(2))]);
        d.sent(gone, SeatId(2));
        assert_eq!(d.due(remaining), vec![(gone, SeatId(1))]);
        assert_eq!(d.decide(remaining), vec![(gone, Some(601))]);
        d.settle(gone, Some(601));
        assert_eq!(d.agreed(gone), Some(Some(601)));
        assert!(d.decide(remaining).is_empty(), "decided once");
    }

    #[test]
    fn a_peer_that_holds_fewer_inputs_stays_due_until_it_catches_up() {
        let (me, gone) = (SeatId(0), SeatId(3));
        let mut d = SeatDrops::new(me);
        d.begin(gone, Some(1068), Instant::ZERO);
        assert!(d.on_report(SeatId(1), gone, Some(874), set(&[0, 1])));
        assert!(
            !d.on_report(SeatId(1), gone, Some(874), set(&[0, 1])),
            "a repeat"
        );
        d.sent(gone, SeatId(1));
        let remaining = set(&[0, 1]);
        assert_eq!(d.lacking(gone, SeatId(1)), Some(Some(874)));
        assert_eq!(d.due(remaining), vec![(gone, SeatId(1))], "it lags");
        // A reordered older report does not take back what it holds.
        d.on_report(SeatId(1), gone, Some(700), set(&[0, 1]));
        assert_eq!(d.lacking(gone, SeatId(1)), Some(Some(874)));
        assert!(d.on_report(SeatId(1), gone, Some(1068), set(&[0, 1])));
        assert_eq!(d.lacking(gone, SeatId(1)), None);
        assert!(d.due(remaining).is_empty());
        assert_eq!(d.decide(remaining), vec![(gone, Some(1068))]);
    }

    #[test]
    fn relayed_inputs_raise_what_this_peer_reports() {
        let (me, gone) = (SeatId(0), SeatId(3));
        let mut d = SeatDrops::new(me);
        d.begin(gone, Some(874), Instant::ZERO);
        d.on_report(SeatId(1), gone, Some(1068), set(&[0, 1]));
        assert_eq!(d.decide(set(&[0, 1])), vec![(gone, Some(1068))]);
        d.now_holding(gone, Some(1068));
        assert_eq!(d.lacking(gone, SeatId(1)), None);
    }

    #[test]
    fn a_drop_settled_elsewhere_is_never_reported() {
        let mut d = SeatDrops::new(SeatId(2));
        d.settled_elsewhere(SeatId(3), Some(451));
        assert_eq!(d.agreed(SeatId(3)), Some(Some(451)));
        assert!(!d.any_pending());
        d.on_report(SeatId(0), SeatId(3), Some(449), set(&[0]));
        assert!(d.due(set(&[0, 1, 2])).is_empty());
        assert!(d.decide(set(&[0, 1, 2])).is_empty());
    }

    #[test]
    fn a_returned_seat_is_not_told_of_older_drops_nor_waited_for() {
        let mut d = SeatDrops::new(SeatId(0));
        d.begin(SeatId(3), Some(450), Instant::ZERO);
        d.settle(SeatId(3), Some(450));
        d.begin(SeatId(1), Some(700), Instant::ZERO);
        let remaining = set(&[0, 2]);
        assert!(d.decide(remaining).is_empty(), "waits for seat 2");
        d.newcomer(SeatId(2));
        assert!(d.due(remaining).is_empty());
        assert_eq!(d.decide(remaining), vec![(SeatId(1), Some(700))]);
    }

    #[test]
    fn suspicions_gather_until_forgotten_and_a_begun_drop_clears_them() {
        let mut d = SeatDrops::new(SeatId(0));
        assert_eq!(d.suspect(SeatId(1), SeatId(3)), set(&[1]));
        assert_eq!(d.suspect(SeatId(2), SeatId(3)), set(&[1, 2]));
        d.forget(SeatId(2));
        assert_eq!(
            d.suspect(SeatId(1), SeatId(3)),
            set(&[1]),
            "a returned reporter's word is gone"
        );
        d.begin(SeatId(3), Some(40), Instant::ZERO);
        assert_eq!(d.missing(SeatId(3), set(&[0, 1, 2])), set(&[1, 2]));
        d.on_report(SeatId(1), SeatId(3), Some(41), set(&[0, 1]));
        assert_eq!(d.missing(SeatId(3), set(&[0, 1, 2])), set(&[2]));
        d.settle(SeatId(3), Some(41));
        assert!(d.missing(SeatId(3), set(&[0, 1, 2])).is_empty());
        d.forget(SeatId(3));
        assert_eq!(d.suspect(SeatId(2), SeatId(3)), set(&[2]), "begun afresh");
    }

    #[test]
    fn a_peer_that_leaves_in_turn_is_not_waited_for() {
        let me = SeatId(1);
        let mut d = SeatDrops::new(me);
        d.begin(SeatId(0), None, Instant::ZERO);
        d.on_report(SeatId(2), SeatId(0), None, set(&[1, 2]));
        assert!(d.decide(set(&[1, 2, 3])).is_empty());
        assert_eq!(d.decide(set(&[1, 2])), vec![(SeatId(0), None)]);
    }
}
