//! [`Ticket`]: what the rendezvous gives a member of a match to prove it
//! is one — to the rendezvous again (a member's poll) and to the relay (a
//! place in the match's allocation) — and [`TicketKey`], the key they
//! share to make and check it.
//!
//! A ticket is a keyed MAC (BLAKE3, keyed with a key derived from the
//! shared secret) over the match, the member, the relay it is good for and
//! its expiry, as netcode.io's connect tokens are: the relay keeps no
//! account database, and a ticket minted for one relay is refused by
//! another. Tickets travel in clear: they name a place, they are not a
//! secret (the seal of the session is what keeps a relayed payload).
//!
//! Invariants: a ticket verifies only under the key that made it, for the
//! relay it names, before its expiry; its wire form is exactly
//! [`TICKET_BYTES`] long.

use std::net::SocketAddr;

use lockstep_fx::{DecodeError, Sink, StateReader, StateWriter};

use crate::ids::{MatchId, MemberId};
use crate::wire::{ADDRESS_BYTES, read_address, read_array, write_address};

/// Bytes of a ticket's MAC.
pub const MAC_BYTES: usize = 16;

/// Bytes of a ticket on the wire.
pub const TICKET_BYTES: usize = 8 + 2 + ADDRESS_BYTES + 8 + MAC_BYTES;

/// The address a ticket names when the rendezvous hands out no relay.
pub const NO_RELAY: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 0);

/// A member's proof of membership. See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// The match.
    pub match_id: MatchId,
    /// The member.
    pub member: MemberId,
    /// The relay it is good for ([`NO_RELAY`]: none).
    pub relay: SocketAddr,
    /// When it stops being good, in seconds since the UNIX epoch.
    pub expires: u64,
    /// The MAC over the fields above.
    pub mac: [u8; MAC_BYTES],
}

/// Why a ticket is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TicketError {
    /// Its MAC does not verify: another key made it, or a field changed.
    #[error("the ticket does not verify")]
    Forged,
    /// It names another relay.
    #[error("the ticket is for the relay at {0}")]
    OtherRelay(SocketAddr),
    /// It expired.
    #[error("the ticket expired")]
    Expired,
}

/// The key the rendezvous and its relays share (each relay's operator gives
/// it the same secret).
#[derive(Clone)]
pub struct TicketKey {
    key: [u8; 32],
}

impl core::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TicketKey(..)")
    }
}

impl TicketKey {
    /// The key derived from the operator's secret.
    pub fn new(secret: &[u8; 32]) -> TicketKey {
        TicketKey {
            key: blake3::derive_key("lockstep reach v1 2026 ticket", secret),
        }
    }

    fn mac(
        &self,
        match_id: MatchId,
        member: MemberId,
        relay: SocketAddr,
        expires: u64,
    ) -> [u8; 16] {
        let mut w = StateWriter::buffer();
        w.write_u64(match_id.0);
        w.write_u16(member.0);
        write_address(&mut w, relay);
        w.write_u64(expires);
        let hash = blake3::keyed_hash(&self.key, w.bytes());
        let mut mac = [0u8; MAC_BYTES];
        mac.copy_from_slice(&hash.as_bytes()[..MAC_BYTES]);
        mac
    }

    /// A ticket for `member` of `match_id` at `relay`, good until `expires`
    /// (seconds since the UNIX epoch).
    pub fn mint(
        &self,
        match_id: MatchId,
        member: MemberId,
        relay: SocketAddr,
        expires: u64,
    ) -> Ticket {
        Ticket {
            match_id,
            member,
            relay,
            expires,
            mac: self.mac(match_id, member, relay, expires),
        }
    }

    /// Whether `ticket` was made with this key (in any relay's name,
    /// expired or not).
    pub fn is_genuine(&self, ticket: &Ticket) -> bool {
        let mac = self.mac(ticket.match_id, ticket.member, ticket.relay, ticket.expires);
        // Compared in full, without an early exit.
        mac.iter()
            .zip(ticket.mac.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }

    /// Checks `ticket` for use at the relay `relay` at `now_secs` (seconds
    /// since the UNIX epoch).
    pub fn verify(
        &self,
        ticket: &Ticket,
        relay: SocketAddr,
        now_secs: u64,
    ) -> Result<(), TicketError> {
        if !self.is_genuine(ticket) {
            return Err(TicketError::Forged);
        }
        if ticket.relay != relay {
            return Err(TicketError::OtherRelay(ticket.relay));
        }
        if ticket.expires <= now_secs {
            return Err(TicketError::Expired);
        }
        Ok(())
    }
}

impl Ticket {
    pub(crate) fn write<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_u64(self.match_id.0);
        w.write_u16(self.member.0);
        write_address(w, self.relay);
        w.write_u64(self.expires);
        w.write_raw(&self.mac);
    }

    pub(crate) fn read(r: &mut StateReader<'_>) -> Result<Ticket, DecodeError> {
        Ok(Ticket {
            match_id: MatchId(r.read_u64()?),
            member: MemberId(r.read_u16()?),
            relay: read_address(r)?,
            expires: r.read_u64()?,
            mac: read_array(r)?,
        })
    }

    /// The relay it names, if any.
    pub fn relay(&self) -> Option<SocketAddr> {
        (self.relay != NO_RELAY).then_some(self.relay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay() -> SocketAddr {
        "10.99.0.1:7701".parse().unwrap()
    }

    #[test]
    fn a_ticket_verifies_for_its_relay_until_it_expires() {
        let key = TicketKey::new(&[7; 32]);
        let t = key.mint(MatchId(42), MemberId(3), relay(), 1_000);
        assert_eq!(key.verify(&t, relay(), 999), Ok(()));
        assert_eq!(key.verify(&t, relay(), 1_000), Err(TicketError::Expired));
        let other: SocketAddr = "10.99.0.2:7701".parse().unwrap();
        assert_eq!(
            key.verify(&t, other, 0),
            Err(TicketError::OtherRelay(relay()))
        );
        let wrong = TicketKey::new(&[8; 32]);
        assert_eq!(wrong.verify(&t, relay(), 0), Err(TicketError::Forged));
        let mut changed = t;
        changed.member = MemberId(4);
        assert_eq!(key.verify(&changed, relay(), 0), Err(TicketError::Forged));
        let mut later = t;
        later.expires = 5_000;
        assert_eq!(key.verify(&later, relay(), 2_000), Err(TicketError::Forged));
    }

    #[test]
    fn a_ticket_round_trips_in_its_fixed_size() {
        let key = TicketKey::new(&[7; 32]);
        let t = key.mint(MatchId(u64::MAX), MemberId(65535), relay(), 77);
        let mut w = StateWriter::buffer();
        t.write(&mut w);
        assert_eq!(w.bytes().len(), TICKET_BYTES);
        let mut r = StateReader::new(w.bytes());
        assert_eq!(Ticket::read(&mut r).unwrap(), t);
        assert_eq!(t.relay(), Some(relay()));
        let none = key.mint(MatchId(1), MemberId(0), NO_RELAY, 77);
        assert_eq!(none.relay(), None);
    }
}
