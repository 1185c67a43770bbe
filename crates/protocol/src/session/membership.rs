//! The quorum rule ([`crate::quorum`]) as the session applies it: which
//! seats count, what happens when this seat's side stops being a quorum,
//! telling a dropped seat that it was dropped, and playing on alone.
//!
//! - A seat is *live* until the remaining seats agree on its last frame
//!   (`settle_drops`), and again once its new process returns
//!   (`apply_return`). The *voters* are the live seats less those whose
//!   goodbye was confirmed. The *side* is the voters not gone here: a peer
//!   is gone from the moment it is timed out, says goodbye or says it
//!   dropped us, before any agreement.
//! - Each time a peer goes, the side must still be a quorum of the voters
//!   (and hold two seats, unless [`Config::play_on_alone`]); otherwise the
//!   session raises [`Event::LostQuorum`], says goodbye to the seats it
//!   still hears and closes: nothing more is sampled, stepped or sent.
//! - A report that a peer dropped a higher seat is joined at once; one that
//!   a peer dropped a lower seat this one has not timed out is joined only
//!   once the reporters are a quorum of the voters or this seat times the
//!   seat out too (`joins_drop`): of two seats that lost each other, the
//!   lower one's word is taken. A seat whose own drop of a seat stays unjoined for
//!   three quarters of the peer timeout while a peer it waits for is still
//!   heard has lost the match in the same way: it raises
//!   [`Event::LostQuorum`] (`drops_joined`). The seat that cut off is the
//!   one that leaves, so a link that fails between two seats costs one of
//!   them, not the whole match.
//! - A dropped seat whose packets still arrive once its drop is agreed is
//!   told so with a *notice*, a SeatDrop naming itself; the dropped seat
//!   takes a notice like a goodbye from the sender (confirmed by the grace
//!   period's silence), which for it means one voter fewer on its side.
//! - Once no other seat is live the frames are compared with nobody's:
//!   [`Event::PlayingAlone`] says from which frame, until a seat returns.
//!
//! Invariants: the live set only shrinks by an agreed drop and only grows
//! by a return; a closed session raises nothing more; nothing here grows
//! while peers are silent (the sets are bitmasks of at most 8 seats).
//!
//! [`Config::play_on_alone`]: super::Config::play_on_alone

use super::{Event, Phase, Session};
use crate::input::Input;
use crate::packet::{Disconnect, Message, SeatDrop};
use crate::quorum;
use crate::seat::{SeatId, SeatSet};
use crate::time::Instant;

/// Disconnect reason: the session gave up (here: it lost its quorum).
const GAVE_UP: u8 = 1;

impl<I: Input> Session<I> {
    /// The seats in the match as agreed here (this one included): those
    /// not dropped, or dropped and returned. A seat being dropped stays
    /// live until its last frame is agreed.
    pub fn live(&self) -> SeatSet {
        self.live
    }

    /// The first frame whose checksum nobody compares: while no other
    /// seat is left in the match and this one plays on alone
    /// ([`Config::play_on_alone`](super::Config::play_on_alone)), or once
    /// the match plays on unchecked after a desync it could not heal
    /// ([`Session::invalidate`] with `play_on`).
    pub fn unchecked_from(&self) -> Option<u32> {
        match (self.alone_since, self.invalid_from()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The newest frame compared clean by seats making, with this one, a
    /// quorum of the voters as they are now.
    pub(super) fn vouched_now(&self) -> Option<u32> {
        let matched: Vec<(SeatId, Option<u32>)> = self
            .remaining()
            .iter()
            .filter(|&p| p != self.cfg.local)
            .map(|p| (p, self.book.newest_match(p)))
            .collect();
        quorum::vouched_through(
            self.cfg.local,
            self.voters(),
            &matched,
            self.book.newest_clean(),
        )
    }

    /// Keeps what a quorum vouched for before the seats that did change.
    pub(super) fn remember_vouched(&mut self) {
        self.vouched = self.newest_clean();
    }

    /// The seats that count toward a quorum: live, and not gone by goodbye.
    pub(super) fn voters(&self) -> SeatSet {
        let mut gone_by_goodbye = SeatSet::EMPTY;
        for (i, p) in self.peers.iter().enumerate() {
            if p.left {
                gone_by_goodbye.insert(SeatId(i as u8));
            }
        }
        self.live.without(gone_by_goodbye)
    }

    /// Whether the seats this one still hears may drop the others.
    fn holds_quorum(&self) -> bool {
        let voters = self.voters();
        let side = self.remaining().intersection(voters);
        quorum::is_quorum(side, voters) && (side.len() >= 2 || self.cfg.play_on_alone)
    }

    /// A peer has just gone (timed out, said goodbye, dropped us): unless
    /// the seats still heard are a quorum, this seat stops here. Returns
    /// whether the session plays on.
    pub(super) fn check_quorum(&mut self) -> bool {
        if self.phase != Phase::Running {
            return false;
        }
        if self.holds_quorum() {
            return true;
        }
        self.lose_quorum(self.remaining());
        false
    }

    /// This seat's side, `side`, is not a quorum: it says so, says goodbye
    /// to the seats it still hears and closes.
    fn lose_quorum(&mut self, side: SeatSet) {
        self.events.push_back(Event::LostQuorum {
            frame: self.next_step,
            live: self.voters(),
            heard: side,
        });
        let local = self.cfg.local;
        for p in self.remaining().iter().filter(|&p| p != local) {
            self.send_routed(p, Message::Disconnect(Disconnect { reason: GAVE_UP }));
        }
        self.phase = Phase::Closed;
    }

    /// Whether `seat` was heard within a quarter of the peer timeout.
    fn heard_lately(&self, seat: SeatId) -> bool {
        let last = self.peers[seat.index()].last_recv;
        self.now.since(last) <= self.cfg.peer_timeout_micros / 4
    }

    /// Whether this seat joins `from`'s drop of `seat`: at once if it
    /// dropped the seat too or `from` is the lower of the two seats (of
    /// two seats that lost each other, the lower one's word is taken, the
    /// tie-break every seat applies alike), else once the seats reporting
    /// the drop are a quorum of the voters (the report is kept until then;
    /// its sender repeats it).
    pub(super) fn joins_drop(&mut self, from: SeatId, seat: SeatId) -> bool {
        if self.peers[seat.index()].gone || self.drops.is_dropping(seat) || from < seat {
            return true;
        }
        let reporters = self
            .drops
            .suspect(from, seat)
            .intersection(self.remaining());
        quorum::is_quorum(reporters, self.voters())
    }

    /// Gives up the match when a drop this seat began has waited three
    /// quarters of the peer timeout for a peer that is still heard: that
    /// peer hears the dropped seat and would not join, so this seat is the
    /// one cut off.
    pub(super) fn drops_joined(&mut self, now: Instant) {
        let limit = self.cfg.peer_timeout_micros * 3 / 4;
        let remaining = self.remaining();
        let unjoined = self.drops.pending().find(|&(seat, began)| {
            now.since(began) > limit
                && self
                    .drops
                    .missing(seat, remaining)
                    .iter()
                    .any(|p| self.heard_lately(p))
        });
        if let Some((seat, _)) = unjoined {
            let side = self.drops.heard(seat).intersection(remaining);
            self.lose_quorum(side);
        }
    }

    /// `seat`'s last frame was agreed: it leaves the live set, and if no
    /// other seat is left this one now plays alone.
    pub(super) fn seat_settled(&mut self, seat: SeatId) {
        self.live.remove(seat);
        if self.live == SeatSet::only(self.cfg.local) && self.alone_since.is_none() {
            let from = self.newest_clean().map_or(0, |c| c + 1);
            self.alone_since = Some(from);
            self.events.push_back(Event::PlayingAlone { from });
        }
    }

    /// `seat` came back: it is live again and checks our frames again.
    pub(super) fn seat_back(&mut self, seat: SeatId) {
        self.live.insert(seat);
        self.alone_since = None;
    }

    /// A packet from `seat`, which this session dropped, arrived: once its
    /// drop is agreed it is told so (it may not know yet, e.g. a paused
    /// process that just woke up).
    pub(super) fn notice_due(&mut self, seat: SeatId) {
        if self.drops.agreed(seat).is_some() {
            self.notices.insert(seat);
        }
    }

    /// The notices owed, one datagram each: a SeatDrop naming the receiver.
    pub(super) fn send_notices(&mut self) {
        let owed = std::mem::take(&mut self.notices);
        for seat in owed.iter() {
            self.send_routed(
                seat,
                Message::SeatDrop(SeatDrop {
                    seat,
                    token: self.peers[seat.index()].token.unwrap_or(0),
                    heard: SeatSet::EMPTY,
                    first_frame: 0,
                    inputs: Vec::new(),
                }),
            );
        }
    }
}
