//! [`Place`]: a member's place at its match's relay, from its side — asked
//! for with the newest ticket, proven with the relay's cookie, refreshed
//! before the relay forgets it, and asked for again whenever the relay
//! says it holds none (it restarted, or the member's NAT gave it a new
//! address).
//!
//! Invariants: at most one `Allocate` in flight per `retry` while asking;
//! a refresh every `refresh` once placed; a refusal never ends the asking
//! (a newer ticket may be good).

use std::net::SocketAddr;

/// Where the place stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceState {
    /// No relay, or no ticket yet.
    Unknown,
    /// Asking; the next `Allocate` goes at `next`.
    Asking { next: u64 },
    /// Placed; the relay sees this member at `observed`.
    Placed {
        observed: SocketAddr,
        refreshed: u64,
    },
}

/// A member's place at its relay. See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) relay: Option<SocketAddr>,
    pub(crate) cookie: Option<[u8; crate::message::COOKIE_BYTES]>,
    pub(crate) state: PlaceState,
}

impl Place {
    pub(crate) fn new() -> Place {
        Place {
            relay: None,
            cookie: None,
            state: PlaceState::Unknown,
        }
    }

    /// Whether datagrams can go through the relay now.
    pub(crate) fn is_placed(&self) -> bool {
        matches!(self.state, PlaceState::Placed { .. })
    }

    /// The relay's address, if the match has one.
    pub(crate) fn relay(&self) -> Option<SocketAddr> {
        self.relay
    }

    /// The relay named by a new ticket: ask for a place at once if none.
    pub(crate) fn use_relay(&mut self, relay: Option<SocketAddr>, now: u64) {
        if relay != self.relay {
            self.relay = relay;
            self.cookie = None;
            self.state = match relay {
                Some(_) => PlaceState::Asking { next: now },
                None => PlaceState::Unknown,
            };
        }
    }

    /// The relay holds no place for us: ask again (at once, unless asking
    /// already).
    pub(crate) fn lost(&mut self, now: u64) {
        if self.relay.is_some() && !matches!(self.state, PlaceState::Asking { .. }) {
            self.state = PlaceState::Asking { next: now };
        }
    }

    /// When an `Allocate` is due next.
    pub(crate) fn due(&self, refresh: u64) -> Option<u64> {
        match self.state {
            PlaceState::Unknown => None,
            PlaceState::Asking { next } => Some(next),
            PlaceState::Placed { refreshed, .. } => Some(refreshed.saturating_add(refresh)),
        }
    }
}
