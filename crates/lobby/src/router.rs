//! [`Router`]: which address is which party of a node — the seats, the
//! spectators of its relay, the relay a spectator watches through — and
//! which datagrams belong to the match setup instead.
//!
//! Addresses prove nothing (UDP sources can be forged), so routing decides
//! only where a datagram is *tried*: the node then opens it under that
//! party's key. The one move the router makes on evidence is a seat's:
//! a dropped seat taken back by a new process (or a seat whose process
//! restarted elsewhere) moves to the address of the first handshake from
//! it that its node took ([`Route::Moving`], [`Router::move_seat`]).
//!
//! Invariants: a seat has at most one address and an address at most one
//! party; the router keeps no state for an address it cannot place (such
//! datagrams are counted as stray and dropped).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use lockstep_peer::Party;
use lockstep_protocol::packet::{Header, Kind};
use lockstep_protocol::spectate::SpectatorId;
use lockstep_protocol::{SeatId, SeatSet};

use crate::message::is_setup;

/// Where a datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A setup message: to the setup.
    Setup,
    /// A party's datagram.
    Party(Party),
    /// A handshake from an unknown address naming seat `.0`, which may
    /// move there: try it as that seat, and move the seat if it is taken.
    Moving(SeatId),
    /// Nobody's: drop it.
    Stray,
}

/// The address table of one node. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Router {
    seats: Vec<Option<SocketAddr>>,
    moving: SeatSet,
    spectators: BTreeMap<SocketAddr, SpectatorId>,
    relay: Option<SocketAddr>,
    stray: u64,
}

impl Router {
    /// A seat's table: every seat's address (its own `None`).
    pub fn seats(addresses: Vec<Option<SocketAddr>>) -> Router {
        Router {
            seats: addresses,
            ..Router::default()
        }
    }

    /// A spectator's table: the one relay at `relay`.
    pub fn relay(relay: SocketAddr) -> Router {
        Router {
            relay: Some(relay),
            ..Router::default()
        }
    }

    /// Datagrams no party could take.
    pub fn stray(&self) -> u64 {
        self.stray
    }

    /// Where the datagram `bytes` from `from` goes.
    pub fn route(&mut self, from: SocketAddr, bytes: &[u8]) -> Route {
        if is_setup(bytes) {
            return Route::Setup;
        }
        if let Some(seat) = self.seats.iter().position(|a| *a == Some(from)) {
            return Route::Party(Party::Seat(SeatId(seat as u8)));
        }
        if let Some(w) = self.spectators.get(&from) {
            return Route::Party(Party::Spectator(*w));
        }
        if self.relay == Some(from) {
            return Route::Party(Party::Relay);
        }
        match Header::peek(bytes) {
            Some(Header {
                kind: Kind::Hello,
                seat: Some(seat),
                ..
            }) if self.moving.contains(seat) => Route::Moving(seat),
            _ => {
                self.stray += 1;
                Route::Stray
            }
        }
    }

    /// Counts a datagram its party refused... or that went nowhere.
    pub fn count_stray(&mut self) {
        self.stray += 1;
    }

    /// The address of `party`, if known.
    pub fn address(&self, party: Party) -> Option<SocketAddr> {
        match party {
            Party::Seat(s) => self.seats.get(s.index()).copied().flatten(),
            Party::Spectator(w) => self
                .spectators
                .iter()
                .find(|(_, id)| **id == w)
                .map(|(a, _)| *a),
            Party::Relay => self.relay,
        }
    }

    /// Lets seat `seat` move: the next handshake naming it from an unknown
    /// address is tried as the seat ([`Route::Moving`]).
    pub fn allow_move(&mut self, seat: SeatId) {
        self.moving.insert(seat);
    }

    /// Seat `seat` is reached at `addr` from now on (and no longer moves).
    pub fn move_seat(&mut self, seat: SeatId, addr: SocketAddr) {
        self.spectators.remove(&addr);
        for a in &mut self.seats {
            if *a == Some(addr) {
                *a = None;
            }
        }
        if let Some(a) = self.seats.get_mut(seat.index()) {
            *a = Some(addr);
        }
        self.moving.0 &= !(1u8.checked_shl(u32::from(seat.0)).unwrap_or(0));
    }

    /// Spectator `spectator` is at `addr`.
    pub fn add_spectator(&mut self, spectator: SpectatorId, addr: SocketAddr) {
        if self.seats.contains(&Some(addr)) {
            return;
        }
        self.spectators.retain(|_, w| *w != spectator);
        self.spectators.insert(addr, spectator);
    }

    /// Forgets spectator `spectator`'s address.
    pub fn remove_spectator(&mut self, spectator: SpectatorId) {
        self.spectators.retain(|_, w| *w != spectator);
    }

    /// Spectators routed.
    pub fn spectators(&self) -> usize {
        self.spectators.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn addresses_go_to_their_parties_and_strangers_nowhere() {
        let mut r = Router::seats(vec![None, Some(a(1)), Some(a(2))]);
        r.add_spectator(SpectatorId(5), a(9));
        assert_eq!(
            r.route(a(2), &[0x21, 0, 0]),
            Route::Party(Party::Seat(SeatId(2)))
        );
        assert_eq!(
            r.route(a(9), &[0x21, 0, 0]),
            Route::Party(Party::Spectator(SpectatorId(5)))
        );
        assert_eq!(r.route(a(7), &[0x21, 0, 0]), Route::Stray);
        assert_eq!(r.route(a(7), b"LKSJ\x04"), Route::Setup);
        assert_eq!(r.address(Party::Seat(SeatId(1))), Some(a(1)));
        assert_eq!(r.address(Party::Spectator(SpectatorId(5))), Some(a(9)));
        assert_eq!(r.stray(), 1);
        r.remove_spectator(SpectatorId(5));
        assert_eq!(r.route(a(9), &[0x21, 0, 0]), Route::Stray);
    }

    #[test]
    fn a_seat_moves_only_when_allowed_and_then_only_once() {
        let mut r = Router::seats(vec![None, Some(a(1))]);
        // A Hello (kind 0) naming seat 1 from a new address.
        let hello = [0x00u8, 0, 0x10];
        assert_eq!(r.route(a(5), &hello), Route::Stray);
        r.allow_move(SeatId(1));
        assert_eq!(r.route(a(5), &hello), Route::Moving(SeatId(1)));
        r.move_seat(SeatId(1), a(5));
        assert_eq!(r.route(a(5), &hello), Route::Party(Party::Seat(SeatId(1))));
        assert_eq!(r.route(a(1), &hello), Route::Stray);
        assert_eq!(r.route(a(6), &hello), Route::Stray);
    }
}
