//! Dropping a seat that left: the session's side of
//! [`crate::seat_drop`] — freezing the seat, taking the other peers'
//! reports and their relayed inputs, and ending the seat at the agreed
//! frame.

use super::{Event, Session};
use crate::input::Input;
use crate::packet::SeatDrop;
use crate::player::{PlayerId, PlayerSet};
use crate::seq::unwrap_frame;

impl<I: Input> Session<I> {
    /// The seats still in the match: ours and every peer not gone.
    pub(super) fn remaining(&self) -> PlayerSet {
        let mut set = PlayerSet::EMPTY;
        for (i, p) in self.peers.iter().enumerate() {
            if i == self.cfg.local.index() || !p.gone {
                set.insert(PlayerId(i as u8));
            }
        }
        set
    }

    /// Stops taking anything from `seat` and starts agreeing with the
    /// remaining peers on its last frame (see [`crate::seat_drop`]).
    pub(super) fn drop_seat(&mut self, seat: PlayerId) {
        if seat == self.cfg.local || self.drops.is_dropping(seat) {
            return;
        }
        self.peers[seat.index()].gone = true;
        self.book.drop_seat(seat);
        let held = self.playout.through(seat.index());
        self.drops.begin(seat, held);
        self.drop_reports_due = true;
        self.settle_drops();
    }

    pub(super) fn on_seat_drop(&mut self, who: PlayerId, m: SeatDrop<I>) {
        let seat = m.seat;
        if seat == self.cfg.local || seat.0 >= self.cfg.players || seat == who {
            // Our own seat dropped by others: they have stopped sending to
            // us, and we will time them out in turn.
            self.stats.dropped.unexpected += 1;
            return;
        }
        self.drop_seat(seat);
        let p = seat.index();
        let mut held = None;
        if !m.inputs.is_empty() {
            let reference = self.playout.through(p).map_or(0, |t| t + 1);
            let Some(first) = unwrap_frame(m.first_frame, reference) else {
                self.stats.dropped.invalid += 1;
                return;
            };
            if self.playout.insert_run(p, first, &m.inputs).is_err() {
                self.stats.dropped.invalid += 1;
                return;
            }
            held = Some(first + m.inputs.len() as u32 - 1);
        }
        self.drops.on_report(who, seat, held, m.heard);
        // Answer at once, so the sender learns we heard it.
        self.drop_reports_due = true;
        self.settle_drops();
    }

    /// Ends every dropped seat whose last frame is agreed and held.
    pub(super) fn settle_drops(&mut self) {
        for (seat, last) in self.drops.decide(self.remaining()) {
            if self.playout.end_seat(seat.index(), last, I::absent()) {
                self.drops.settle(seat, last);
                self.events.push_back(Event::SeatDropped {
                    seat,
                    last_frame: last,
                });
            }
        }
        self.try_release();
    }
}
