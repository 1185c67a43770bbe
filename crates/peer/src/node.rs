//! [`Node`]: the one shape every sans-IO participant of a match has — a
//! seat's [`Peer`], a [`Spectator`], a [`SnapshotSpectator`] — so that one
//! loop (the UDP runtime, the testkit's simulated network) drives any of
//! them. Datagrams come from and go to a [`Party`]: the node's name for the
//! other end; the driver keeps the table from parties to addresses.
//!
//! Invariants: a node reads no clock and owns no socket; the call order is
//! the session's (datagrams in, timers when due, drain events, drain
//! transmits, wait); a datagram from a party the node has no use for is
//! refused (`false`) and changes nothing.

use std::io::Write;

use lockstep_protocol::spectate::SpectatorId;
use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::Game;

use crate::{
    Bodies, Peer, PeerEvent, SnapshotSpectator, SnapshotSpectatorEvent, Spectator, SpectatorEvent,
};

/// The other end of a datagram, as a node names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Party {
    /// A seat of the match.
    Seat(SeatId),
    /// A spectator watching through this seat's relay (the driver's id for
    /// its address).
    Spectator(SpectatorId),
    /// The seat a spectator watches through.
    Relay,
}

/// A sans-IO participant of a match. See the module documentation.
pub trait Node {
    /// What it tells its app.
    type Event;

    /// Feeds a datagram from `from`; returns whether the node took it (it
    /// decoded and, sealed, opened under `from`'s key), which lets a driver
    /// move a party to the address a datagram came from.
    fn handle_datagram(&mut self, now: Instant, from: Party, bytes: &[u8]) -> bool;

    /// Runs the timers; call once `now` reaches [`Node::poll_timeout`].
    fn handle_timeout(&mut self, now: Instant);

    /// When [`Node::handle_timeout`] is next due, if ever.
    fn poll_timeout(&self) -> Option<Instant>;

    /// The next datagram to send, and to whom.
    fn poll_transmit(&mut self, now: Instant) -> Option<(Party, Vec<u8>)>;

    /// The next thing that happened, in order.
    fn poll_event(&mut self) -> Option<Self::Event>;
}

impl<G: Game, W: Write> Node for Peer<G, W> {
    type Event = PeerEvent;

    fn handle_datagram(&mut self, now: Instant, from: Party, bytes: &[u8]) -> bool {
        match from {
            Party::Seat(seat) => Peer::handle_datagram(self, now, seat, bytes),
            Party::Spectator(w) => {
                self.handle_spectator_datagram(now, w, bytes);
                true
            }
            Party::Relay => false,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        Peer::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        Peer::poll_timeout(self)
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<(Party, Vec<u8>)> {
        if let Some(t) = Peer::poll_transmit(self, now) {
            return Some((Party::Seat(t.to), t.bytes));
        }
        let t = self.poll_spectator_transmit(now)?;
        Some((Party::Spectator(t.to), t.bytes))
    }

    fn poll_event(&mut self) -> Option<PeerEvent> {
        Peer::poll_event(self)
    }
}

impl<G: Game> Node for Spectator<G> {
    type Event = SpectatorEvent;

    fn handle_datagram(&mut self, now: Instant, from: Party, bytes: &[u8]) -> bool {
        if from != Party::Relay {
            return false;
        }
        Spectator::handle_datagram(self, now, bytes);
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        Spectator::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        Spectator::poll_timeout(self)
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<(Party, Vec<u8>)> {
        Spectator::poll_transmit(self, now).map(|b| (Party::Relay, b))
    }

    fn poll_event(&mut self) -> Option<SpectatorEvent> {
        Spectator::poll_event(self)
    }
}

impl<G: Game + Bodies> Node for SnapshotSpectator<G> {
    type Event = SnapshotSpectatorEvent;

    fn handle_datagram(&mut self, now: Instant, from: Party, bytes: &[u8]) -> bool {
        if from != Party::Relay {
            return false;
        }
        SnapshotSpectator::handle_datagram(self, now, bytes);
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        SnapshotSpectator::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        SnapshotSpectator::poll_timeout(self)
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<(Party, Vec<u8>)> {
        SnapshotSpectator::poll_transmit(self, now).map(|b| (Party::Relay, b))
    }

    fn poll_event(&mut self) -> Option<SnapshotSpectatorEvent> {
        SnapshotSpectator::poll_event(self)
    }
}
