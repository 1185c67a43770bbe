//! A [`Peer`]'s side of membership: stopping when its seat lost the
//! match's quorum, and saying when it plays alone ([`Peer::unchecked_from`]).
//!
//! When the session raises `LostQuorum` the peer keeps in its replay log
//! exactly the frames a quorum settled — the frames it stepped after them
//! may differ from what the majority plays, so they are forgotten, never
//! logged — and stops: it steps, samples and logs nothing more, and
//! [`Peer::stopped`] says why from then on
//! ([`StopReason::LostQuorum`]). Its process may take the seat back with a
//! new `Peer` (`rejoin`) once the others dropped it.
//!
//! Invariant: what is logged after a stop is what was settled before it;
//! nothing here holds memory that grows while the peer is stopped.

use std::io::Write;

use lockstep_protocol::SeatSet;
use lockstep_sim::Game;

use crate::peer::Peer;
use crate::stop::StopReason;

impl<G: Game, W: Write> Peer<G, W> {
    /// The first frame whose checksum nobody compares: while no other
    /// seat is left in the match and this one plays on alone
    /// (`play_on_alone` in the session settings), until a seat returns
    /// ([`SeatEvent::Returned`](crate::SeatEvent::Returned): checking starts again at its frame);
    /// or from the first divergent frame on, for good, when the match
    /// plays on after a desync it could not heal
    /// ([`DesyncPolicy::Continue`](crate::DesyncPolicy::Continue)).
    pub fn unchecked_from(&self) -> Option<u32> {
        self.session.unchecked_from()
    }

    /// The session lost its quorum (`live` the seats that counted, `heard`
    /// those it still heard): logs the frames settled, and stops.
    pub(crate) fn lose_quorum(&mut self, live: SeatSet, heard: SeatSet) {
        if self.stopped.is_some() {
            return;
        }
        let frame = self.settle_for_stop();
        self.stop(StopReason::LostQuorum { frame, live, heard });
    }
}
