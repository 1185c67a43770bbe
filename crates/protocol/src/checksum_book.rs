//! The checksum book: this peer's per-frame state checksums and the ones its
//! peers report, compared frame by frame to detect a desync, and the verdict
//! that says who drifted and who is the resync authority — or that the
//! seats dispute it and evidence must decide ([`attribute`]).
//!
//! Invariants:
//! - Only confirmed frames are compared: a lockstep peer reports a checksum
//!   only for a frame it simulated with every player's real input, so two
//!   different checksums for one frame are a real desync, never a
//!   misprediction.
//! - Reports carry the sender's resync *epoch* (how many states it has
//!   loaded). A report from an older epoch than already seen is ignored; a
//!   newer epoch discards that peer's older reports, so checksums computed
//!   before a resync are never compared with ones computed after it.
//! - The verdict for a frame is a pure function of every player's checksum
//!   for that frame, so all peers reach the same one: the group of matching
//!   checksums holding a strict majority of the seats still in the match is
//!   right, its lowest seat is the authority, and every other seat has
//!   drifted. Without a strict majority (two seats, or a tie) no seat
//!   number decides: the verdict is [`Verdict::Disputed`], comparisons
//!   pause, and each disputed seat's evidence about itself decides
//!   ([`attribute`], [`ChecksumBook::resolve`]).
//! - After a verdict, the drifted peers' reports (and, on a drifted peer, all
//!   comparisons) are suspended until the drifted peer's new epoch (or the
//!   local state load) arrives.

use crate::seat::{SeatId, SeatSet};
use lockstep_fx::{Checksum, ShortChecksum};

/// Frames of checksums remembered per player.
pub const CHECKSUM_HISTORY: u32 = 256;

/// Frames of this peer's own full checksums remembered: a heal sends the
/// drifted seat the authority's checksums of every frame it may have got
/// wrong (see [`crate::packet::Purpose::Heal`]), which reach back to the
/// last frame compared clean, a few round trips.
pub const OWN_CHECKSUM_HISTORY: u32 = 2048;

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Checksums for `frame` differ; `drifted` must load the authority's state.
    Desync {
        /// The frame compared.
        frame: u32,
        /// The seat whose state is taken as right.
        authority: SeatId,
        /// The seats whose state differs from the authority's.
        drifted: SeatSet,
    },
    /// Checksums for `frame` differ and no group holds a strict majority
    /// (two seats, or a tie): the disputed seats' evidence decides.
    Disputed {
        /// The frame compared.
        frame: u32,
        /// Every seat that reported `frame`.
        seats: SeatSet,
    },
}

/// What a seat found stepping the disputed frames again (the session's
/// side of [`crate::packet::Finding`], with whole frames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfCheck {
    /// Every frame gave the same checksum again.
    Consistent,
    /// `frame` gave another checksum the second time: the seat is at fault.
    Inconsistent {
        /// The first frame that differed from the first run.
        frame: u32,
    },
    /// The seat could not step the frames again.
    Unknown,
}

/// Who drifted in a dispute, from the evidence: every seat whose own
/// re-run disagreed with its first run is at fault. When the match's
/// arbiter (a spectator stepping the same confirmed inputs on its own)
/// vouched for some of the disputed seats but not all — `arbiter` holds the
/// seats whose checksum equalled its own — the lowest vouched seat not at
/// fault is the authority and every other seat drifted. Otherwise, if the
/// seats left (the self-consistent ones, and those that could not check)
/// all hold one checksum, its lowest seat is the authority and every seat
/// holding another checksum drifted. Otherwise nothing attributes the fault
/// (`None`): nobody may be overwritten.
///
/// `sums` holds every disputed seat's short checksum of the disputed frame;
/// `findings` every disputed seat's finding (a seat missing from it counts
/// as not at fault). A pure function: every seat holding the same inputs
/// reaches the same verdict.
pub fn attribute(
    frame: u32,
    sums: &[(SeatId, u64)],
    findings: &[(SeatId, SelfCheck)],
    arbiter: SeatSet,
) -> Option<Verdict> {
    let faulty = |p: SeatId| {
        findings
            .iter()
            .any(|(q, f)| *q == p && matches!(f, SelfCheck::Inconsistent { .. }))
    };
    let splits = sums.iter().any(|(p, _)| arbiter.contains(*p))
        && sums.iter().any(|(p, _)| !arbiter.contains(*p));
    if splits {
        let vouched = sums
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| arbiter.contains(*p) && !faulty(*p))
            .min();
        if let Some(authority) = vouched {
            let mut drifted = SeatSet::EMPTY;
            for (p, _) in sums {
                if !arbiter.contains(*p) || faulty(*p) {
                    drifted.insert(*p);
                }
            }
            return Some(Verdict::Desync {
                frame,
                authority,
                drifted,
            });
        }
    }
    let mut honest = sums.iter().filter(|(p, _)| !faulty(*p));
    let &(authority, right) = honest.next()?;
    if honest.any(|(_, s)| *s != right) {
        return None;
    }
    let mut drifted = SeatSet::EMPTY;
    for (p, s) in sums {
        if *s != right {
            drifted.insert(*p);
        }
    }
    (!drifted.is_empty()).then_some(Verdict::Desync {
        frame,
        authority,
        drifted,
    })
}

#[derive(Debug, Clone)]
struct Ring {
    slots: Vec<Option<(u32, u64)>>,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            slots: vec![None; CHECKSUM_HISTORY as usize],
        }
    }
    fn put(&mut self, frame: u32, short: u64) {
        self.slots[(frame % CHECKSUM_HISTORY) as usize] = Some((frame, short));
    }
    fn get(&self, frame: u32) -> Option<u64> {
        match self.slots[(frame % CHECKSUM_HISTORY) as usize] {
            Some((f, s)) if f == frame => Some(s),
            _ => None,
        }
    }
    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }
}

#[derive(Debug, Clone)]
struct PeerReports {
    shorts: Ring,
    epoch: Option<u8>,
    suspended: bool,
    gone: bool,
    /// The newest frame whose checksum from this peer equalled ours.
    newest_match: Option<u32>,
}

/// Checksums by frame and player, and the desync detector.
#[derive(Debug, Clone)]
pub struct ChecksumBook {
    local: SeatId,
    own_full: Vec<Option<(u32, Checksum)>>,
    peers: Vec<PeerReports>,
    compare_from: u32,
    self_drifted: bool,
    gave_up: bool,
    pending: Option<u32>,
    newest_clean: Option<u32>,
    /// A dispute awaiting evidence: the frame and every disputed seat's
    /// short checksum of it. Nothing is compared meanwhile.
    disputed: Option<(u32, Vec<(SeatId, u64)>)>,
}

/// 8-bit epoch order: `a` newer than `b`.
fn epoch_newer(a: u8, b: u8) -> bool {
    let d = a.wrapping_sub(b);
    d != 0 && d < 0x80
}

impl ChecksumBook {
    /// An empty book for `seats` seats, this peer at `local`.
    pub fn new(seats: u8, local: SeatId) -> ChecksumBook {
        ChecksumBook {
            local,
            own_full: vec![None; OWN_CHECKSUM_HISTORY as usize],
            peers: (0..seats)
                .map(|_| PeerReports {
                    shorts: Ring::new(),
                    epoch: None,
                    suspended: false,
                    gone: false,
                    newest_match: None,
                })
                .collect(),
            compare_from: 0,
            self_drifted: false,
            gave_up: false,
            pending: None,
            newest_clean: None,
            disputed: None,
        }
    }

    /// This peer's full checksum of `frame`, if recorded.
    pub fn own(&self, frame: u32) -> Option<Checksum> {
        match self.own_full[(frame % OWN_CHECKSUM_HISTORY) as usize] {
            Some((f, c)) if f == frame => Some(c),
            _ => None,
        }
    }

    /// This peer's full checksums of the frames from `from` through `to`,
    /// oldest first, as far back as they are all recorded (the run ends at
    /// `to`; empty if `to` is not recorded).
    pub fn own_run(&self, from: u32, to: u32) -> Vec<Checksum> {
        let mut out = Vec::new();
        let mut f = to;
        while let Some(c) = self.own(f) {
            out.push(c);
            if f <= from || out.len() >= OWN_CHECKSUM_HISTORY as usize {
                break;
            }
            f -= 1;
        }
        out.reverse();
        out
    }

    /// The dispute awaiting evidence, if any: its frame and every disputed
    /// seat's short checksum of it.
    pub fn dispute(&self) -> Option<&(u32, Vec<(SeatId, u64)>)> {
        self.disputed.as_ref()
    }

    /// Ends the dispute: with `Some` verdict (the evidence attributed the
    /// fault) it applies as a majority's would; with `None` nobody could be
    /// blamed and every comparison stops, as after [`ChecksumBook::give_up`].
    pub fn resolve(&mut self, verdict: Option<Verdict>) -> Option<Verdict> {
        self.disputed = None;
        match verdict {
            Some(v @ Verdict::Desync { .. }) => self.apply(v),
            _ => {
                self.gave_up = true;
                None
            }
        }
    }

    /// The newest frame compared clean against every peer that reported it.
    pub fn newest_clean(&self) -> Option<u32> {
        self.newest_clean
    }

    /// The newest frame whose checksum from `seat` equalled ours (while
    /// `seat` is in the match: forgotten when it is dropped).
    pub fn newest_match(&self, seat: SeatId) -> Option<u32> {
        self.peers.get(seat.index())?.newest_match
    }

    /// `seat` left the match: its reports are no longer expected or taken,
    /// and the verdicts are decided among the seats that remain.
    pub fn drop_seat(&mut self, seat: SeatId) {
        if let Some(p) = self.peers.get_mut(seat.index()) {
            p.gone = true;
            p.suspended = true;
            p.shorts.clear();
            p.newest_match = None;
        }
        if let Some((_, sums)) = &mut self.disputed {
            sums.retain(|(p, _)| *p != seat);
        }
        if self.pending.is_some_and(|f| self.verdict(f).is_none()) {
            self.pending = None;
        }
    }

    /// `seat` came back (its restarted process rejoined): its reports are
    /// taken again, from a fresh epoch.
    pub fn return_seat(&mut self, seat: SeatId) {
        if let Some(p) = self.peers.get_mut(seat.index()) {
            p.gone = false;
            p.suspended = false;
            p.epoch = None;
            p.shorts.clear();
            p.newest_match = None;
        }
    }

    /// Whether `seat`'s reports are suspended (it is being resynced).
    pub fn is_suspended(&self, seat: SeatId) -> bool {
        self.peers.get(seat.index()).is_some_and(|p| p.suspended)
    }

    /// Records this peer's checksum of `frame` and compares it.
    pub fn record_own(&mut self, frame: u32, checksum: Checksum) -> Option<Verdict> {
        self.own_full[(frame % OWN_CHECKSUM_HISTORY) as usize] = Some((frame, checksum));
        let local = self.local.index();
        self.peers[local].shorts.put(frame, checksum.short().0);
        self.compare(frame)
    }

    /// Records `from`'s short checksum of `frame` (epoch `epoch`) and compares.
    pub fn record_short(
        &mut self,
        from: SeatId,
        epoch: u8,
        frame: u32,
        short: ShortChecksum,
    ) -> Option<Verdict> {
        if !self.accept_epoch(from, epoch) {
            return None;
        }
        self.peers[from.index()].shorts.put(frame, short.0);
        self.compare(frame)
    }

    /// Records `from`'s full checksum of `frame` and compares it with ours.
    pub fn record_full(
        &mut self,
        from: SeatId,
        epoch: u8,
        frame: u32,
        full: Checksum,
    ) -> Option<Verdict> {
        if !self.accept_epoch(from, epoch) {
            return None;
        }
        // A full checksum whose short form matches ours but whose other 24
        // bytes differ is a 2^-64 event, yet cheap to catch: store the short
        // form of a mismatching full checksum as its bitwise complement so
        // the comparison below sees the difference.
        let mut short = full.short().0;
        if self
            .own(frame)
            .is_some_and(|own| own != full && own.short() == full.short())
        {
            short = !short;
        }
        self.peers[from.index()].shorts.put(frame, short);
        self.compare(frame)
    }

    fn accept_epoch(&mut self, from: SeatId, epoch: u8) -> bool {
        let Some(p) = self.peers.get_mut(from.index()) else {
            return false;
        };
        if from == self.local || p.gone {
            return false;
        }
        match p.epoch {
            Some(e) if e == epoch => true,
            Some(e) if !epoch_newer(epoch, e) => false,
            _ => {
                if p.epoch.is_some() {
                    p.shorts.clear();
                    p.suspended = false;
                }
                p.epoch = Some(epoch);
                true
            }
        }
    }

    /// This peer loaded the authority's state after `frame` (checksum
    /// `checksum`): older comparisons end, its own other checksums are
    /// forgotten (the later ones will be recomputed), comparing resumes.
    pub fn on_loaded(&mut self, frame: u32, checksum: Checksum) {
        self.self_drifted = false;
        self.pending = None;
        self.compare_from = frame + 1;
        // Every other own checksum belongs to the drifted run: the ones
        // after `frame` will be recomputed, and the ones before it must not
        // travel under the new epoch (they would be taken for a new desync).
        let local = self.local.index();
        self.peers[local].shorts.clear();
        self.own_full.iter_mut().for_each(|s| *s = None);
        self.own_full[(frame % OWN_CHECKSUM_HISTORY) as usize] = Some((frame, checksum));
        self.peers[local].shorts.put(frame, checksum.short().0);
    }

    /// Stops every comparison (resync failed) until [`ChecksumBook::resume`].
    pub fn give_up(&mut self) {
        self.gave_up = true;
    }

    /// Whether comparisons stopped ([`ChecksumBook::give_up`]).
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// This peer asks for the authority's state again after giving up: it
    /// counts as drifted (nothing is compared) until the state is loaded
    /// ([`ChecksumBook::on_loaded`]), then comparisons resume.
    pub fn resume(&mut self) {
        self.gave_up = false;
        self.self_drifted = true;
        self.pending = None;
    }

    fn compare(&mut self, frame: u32) -> Option<Verdict> {
        if self.gave_up || self.self_drifted || self.disputed.is_some() || frame < self.compare_from
        {
            return None;
        }
        if let Some(p) = self.pending {
            // Waiting for a complete set of reports: try the pending frame,
            // then this one.
            if let Some(v) = self
                .verdict(p)
                .or_else(|| if frame > p { self.verdict(frame) } else { None })
            {
                return self.apply(v);
            }
            return None;
        }
        let own = self.peers[self.local.index()].shorts.get(frame)?;
        let mut differs = false;
        let mut compared = false;
        for (i, p) in self.peers.iter_mut().enumerate() {
            if i == self.local.index() || p.suspended {
                continue;
            }
            if let Some(s) = p.shorts.get(frame) {
                compared = true;
                differs |= s != own;
                if s == own {
                    p.newest_match = Some(p.newest_match.map_or(frame, |m| m.max(frame)));
                }
            }
        }
        if !differs {
            if compared {
                self.newest_clean = Some(self.newest_clean.map_or(frame, |c| c.max(frame)));
            }
            return None;
        }
        match self.verdict(frame) {
            Some(v) => self.apply(v),
            None => {
                self.pending = Some(frame);
                None
            }
        }
    }

    /// The verdict for `frame` once every non-suspended seat has reported it.
    fn verdict(&self, frame: u32) -> Option<Verdict> {
        let n = self.peers.iter().filter(|p| !p.gone).count();
        let mut sums: Vec<(SeatId, u64)> = Vec::with_capacity(n);
        for (i, p) in self.peers.iter().enumerate() {
            if p.suspended {
                continue;
            }
            sums.push((SeatId(i as u8), p.shorts.get(frame)?));
        }
        if sums.iter().all(|(_, s)| *s == sums[0].1) {
            return None;
        }
        // The largest group of equal checksums (seats are visited in order).
        let mut best: Option<(usize, u64)> = None;
        for (_, s) in &sums {
            let count = sums.iter().filter(|(_, t)| t == s).count();
            if best.is_none_or(|(c, _)| count > c) {
                best = Some((count, *s));
            }
        }
        let (count, right) = best?;
        if count * 2 <= n {
            // Two seats, or a tie: no seat number decides.
            let mut seats = SeatSet::EMPTY;
            for (p, _) in &sums {
                seats.insert(*p);
            }
            return Some(Verdict::Disputed { frame, seats });
        }
        let authority = sums.iter().find(|(_, s)| *s == right).map(|(p, _)| *p)?;
        let mut drifted = SeatSet::EMPTY;
        for (p, s) in &sums {
            if *s != right {
                drifted.insert(*p);
            }
        }
        Some(Verdict::Desync {
            frame,
            authority,
            drifted,
        })
    }

    fn apply(&mut self, v: Verdict) -> Option<Verdict> {
        self.pending = None;
        match v {
            Verdict::Desync { drifted, .. } => {
                for p in drifted.iter() {
                    if p == self.local {
                        self.self_drifted = true;
                    } else if let Some(r) = self.peers.get_mut(p.index()) {
                        r.suspended = true;
                    }
                }
            }
            Verdict::Disputed { frame, .. } => {
                let sums = self
                    .peers
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| !p.suspended)
                    .filter_map(|(i, p)| Some((SeatId(i as u8), p.shorts.get(frame)?)))
                    .collect();
                self.disputed = Some((frame, sums));
            }
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(b: u8) -> Checksum {
        Checksum::from_bytes([b; 32])
    }

    fn set(seats: &[u8]) -> SeatSet {
        let mut s = SeatSet::EMPTY;
        for &p in seats {
            s.insert(SeatId(p));
        }
        s
    }

    /// Two seats: no seat number decides. The verdict is a dispute,
    /// comparisons pause, and the evidence picks the drifted seat.
    #[test]
    fn two_players_dispute_and_evidence_decides() {
        let mut book = ChecksumBook::new(2, SeatId(1));
        assert_eq!(book.record_own(5, c(1)), None);
        assert_eq!(book.record_short(SeatId(0), 0, 5, c(1).short()), None);
        assert_eq!(book.newest_clean(), Some(5));
        book.record_own(6, c(2));
        let v = book.record_short(SeatId(0), 0, 6, c(3).short());
        assert_eq!(
            v,
            Some(Verdict::Disputed {
                frame: 6,
                seats: set(&[0, 1])
            })
        );
        // Nothing is compared while the dispute waits for evidence.
        book.record_own(7, c(4));
        assert_eq!(book.record_short(SeatId(0), 0, 7, c(5).short()), None);
        let (frame, sums) = book.dispute().cloned().unwrap();
        assert_eq!(frame, 6);
        // Seat 0 stepped the frames again and disagreed with itself.
        let findings = [
            (SeatId(0), SelfCheck::Inconsistent { frame: 6 }),
            (SeatId(1), SelfCheck::Consistent),
        ];
        let verdict = attribute(frame, &sums, &findings, SeatSet::EMPTY);
        assert_eq!(
            verdict,
            Some(Verdict::Desync {
                frame: 6,
                authority: SeatId(1),
                drifted: set(&[0])
            })
        );
        book.resolve(verdict);
        assert!(book.is_suspended(SeatId(0)));
        // Its new epoch resumes comparisons.
        book.record_own(8, c(4));
        assert_eq!(book.record_short(SeatId(0), 1, 8, c(4).short()), None);
        assert_eq!(book.newest_clean(), Some(8));
    }

    /// With no evidence against either seat nobody is overwritten.
    #[test]
    fn no_evidence_blames_nobody() {
        let sums = [(SeatId(0), 1), (SeatId(1), 2)];
        let both = [
            (SeatId(0), SelfCheck::Consistent),
            (SeatId(1), SelfCheck::Unknown),
        ];
        assert_eq!(attribute(9, &sums, &both, SeatSet::EMPTY), None);
        let neither = [
            (SeatId(0), SelfCheck::Inconsistent { frame: 9 }),
            (SeatId(1), SelfCheck::Inconsistent { frame: 8 }),
        ];
        assert_eq!(attribute(9, &sums, &neither, SeatSet::EMPTY), None);
        let mut book = ChecksumBook::new(2, SeatId(0));
        book.record_own(9, c(1));
        book.record_short(SeatId(1), 0, 9, c(2).short());
        assert_eq!(book.resolve(None), None);
        assert!(book.gave_up());
    }

    #[test]
    fn majority_names_the_drifted_peer() {
        let mut book = ChecksumBook::new(4, SeatId(0));
        book.record_own(3, c(1));
        assert_eq!(book.record_short(SeatId(2), 0, 3, c(7).short()), None);
        assert_eq!(book.record_short(SeatId(1), 0, 3, c(1).short()), None);
        let v = book.record_short(SeatId(3), 0, 3, c(1).short());
        let mut drifted = SeatSet::EMPTY;
        drifted.insert(SeatId(2));
        assert_eq!(
            v,
            Some(Verdict::Desync {
                frame: 3,
                authority: SeatId(0),
                drifted
            })
        );
        assert!(book.is_suspended(SeatId(2)));
        // Stale reports from the drifted peer's old epoch are ignored; its new
        // epoch resumes comparisons.
        book.record_own(4, c(5));
        assert_eq!(book.record_short(SeatId(2), 0, 4, c(8).short()), None);
        assert_eq!(book.record_short(SeatId(2), 1, 4, c(5).short()), None);
        assert!(!book.is_suspended(SeatId(2)));
        assert_eq!(book.record_short(SeatId(2), 0, 4, c(8).short()), None);
    }

    /// A tie among four seats is a dispute too; evidence against one side
    /// leaves the other's checksum standing.
    #[test]
    fn a_tie_is_disputed() {
        let mut book = ChecksumBook::new(4, SeatId(0));
        book.record_own(3, c(1));
        book.record_short(SeatId(1), 0, 3, c(1).short());
        book.record_short(SeatId(2), 0, 3, c(2).short());
        assert_eq!(
            book.record_short(SeatId(3), 0, 3, c(2).short()),
            Some(Verdict::Disputed {
                frame: 3,
                seats: set(&[0, 1, 2, 3])
            })
        );
        let (_, sums) = book.dispute().cloned().unwrap();
        let findings = [
            (SeatId(2), SelfCheck::Inconsistent { frame: 3 }),
            (SeatId(3), SelfCheck::Inconsistent { frame: 2 }),
        ];
        assert_eq!(
            attribute(3, &sums, &findings, SeatSet::EMPTY),
            Some(Verdict::Desync {
                frame: 3,
                authority: SeatId(0),
                drifted: set(&[2, 3])
            })
        );
        // One side self-consistent, the other split: nobody is blamed.
        let findings = [(SeatId(2), SelfCheck::Inconsistent { frame: 3 })];
        assert_eq!(attribute(3, &sums, &findings, SeatSet::EMPTY), None);
    }

    /// Two self-consistent seats: the arbiter's checksum decides, the
    /// vouched seat is the authority; an arbiter that vouches for both, or
    /// neither, says nothing.
    #[test]
    fn the_arbiter_breaks_a_tie_of_self_consistent_seats() {
        let sums = [(SeatId(0), 1), (SeatId(1), 2)];
        let both = [
            (SeatId(0), SelfCheck::Consistent),
            (SeatId(1), SelfCheck::Consistent),
        ];
        assert_eq!(
            attribute(9, &sums, &both, set(&[1])),
            Some(Verdict::Desync {
                frame: 9,
                authority: SeatId(1),
                drifted: set(&[0])
            })
        );
        assert_eq!(attribute(9, &sums, &both, set(&[0, 1])), None);
        assert_eq!(attribute(9, &sums, &both, SeatSet::EMPTY), None);
        // A seat that disagrees with itself is not saved by the arbiter.
        let split = [
            (SeatId(0), SelfCheck::Inconsistent { frame: 9 }),
            (SeatId(1), SelfCheck::Consistent),
        ];
        assert_eq!(
            attribute(9, &sums, &split, set(&[0])),
            Some(Verdict::Desync {
                frame: 9,
                authority: SeatId(1),
                drifted: set(&[0])
            })
        );
    }
}
