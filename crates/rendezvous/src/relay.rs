//! [`Relay`]: forwards datagrams between the members of a match that no
//! direct path joins, sans-IO, as a TURN server does (RFC 8656) but with
//! no accounts: a member's place is authorised by the [`Ticket`] the
//! rendezvous minted, which the relay checks with the key they share.
//!
//! A member asks for its place with `Allocate` (its ticket); an address the
//! relay has not proven gets a cookie back (`RelayChallenge`, a keyed MAC
//! over the address, the ticket's match and member and a 10-second slot,
//! kept nowhere) and the place only once the cookie returns, so a forged
//! source address can take no place and receive no forwarded datagram.
//! Then every `Send` from the member's address goes, as a `Deliver` of
//! the same length naming the sender, to the member it names in the same
//! match. The relay never reads a payload: the session seals it end to
//! end, and the relay could not open or forge it.
//!
//! Bounds: allocations and members per allocation; each member's packets
//! and bytes a second (token buckets); a place not heard from for
//! `idle_micros` is freed (an allocation with no member with it). A relay
//! that restarts forgets every place: a member's next `Send` is answered
//! `NoAllocation` (3 bytes, no longer than the smallest `Send`), and it
//! allocates again with its ticket.
//!
//! Call order as the rendezvous's; time is the wall clock in microseconds
//! since the UNIX epoch (tickets expire).
//!
//! Invariants: no answer is longer than the datagram it answers; a
//! delivered datagram is exactly as long as the `Send` it came in; nothing
//! here panics on any datagram.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use crate::Transmit;
use crate::budget::{Budget, Rate};
use crate::ids::{MatchId, MemberId};
use crate::message::{COOKIE_BYTES, Message, RelayRefusal};
use crate::ticket::{Ticket, TicketKey};
use crate::traffic::{Count, Traffic};
use crate::wire::{DATA_HEADER_BYTES, Kind, VERSION, WireError, write_address};

/// What a relay is told to do. `RelayConfig::new(public)` is what `lockstep
/// relay` runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// The address its tickets name (where members reach it).
    pub public: SocketAddr,
    /// Allocations (matches) held at once.
    pub max_allocations: usize,
    /// Members of one allocation.
    pub max_members: usize,
    /// Each member's datagrams a second.
    pub packets: Rate,
    /// Each member's bytes a second.
    pub bytes: Rate,
    /// Microseconds a place lives without a datagram from its member.
    pub idle_micros: u64,
}

impl RelayConfig {
    /// The defaults for a relay reached at `public`: a million
    /// allocations, 32 members each, 1 000 datagrams and 1 MiB a second per
    /// member (a seat of an 8-seat match at 60 frames a second sends 420),
    /// places freed after 30 s of silence.
    pub fn new(public: SocketAddr) -> RelayConfig {
        RelayConfig {
            public,
            max_allocations: 1_000_000,
            max_members: 32,
            packets: Rate {
                per_second: 1_000,
                burst: 2_000,
            },
            bytes: Rate {
                per_second: 1 << 20,
                burst: 2 << 20,
            },
            idle_micros: 30_000_000,
        }
    }
}

/// Counters of a relay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// What came in and went out, by kind.
    pub traffic: Traffic,
    /// Datagrams forwarded (and their bytes).
    pub forwarded: Count,
    /// Datagrams dropped for a member over its budget.
    pub throttled: u64,
    /// Datagrams for a member without a place.
    pub no_member: u64,
    /// Places made (first allocations and moves to a new address).
    pub placed: u64,
    /// Places freed for silence.
    pub expired: u64,
    /// Refusals sent: no allocation, bad ticket, full, version.
    pub refused: [u64; 4],
}

/// A member's place in an allocation.
#[derive(Debug, Clone)]
struct Place {
    member: MemberId,
    address: SocketAddr,
    heard: u64,
    packets: Budget,
    bytes: Budget,
}

/// The relay. See the module documentation.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    tickets: TicketKey,
    cookie_key: [u8; 32],
    allocations: HashMap<MatchId, Vec<Place>>,
    by_address: HashMap<SocketAddr, (MatchId, MemberId)>,
    out: VecDeque<Transmit>,
    next_sweep: u64,
    stats: RelayStats,
}

/// Cookies are good in their 10-second slot and the next.
const SLOT_MICROS: u64 = 10_000_000;

impl Relay {
    /// A relay checking tickets with the key derived from `secret` (the
    /// rendezvous's), its cookies keyed from `seed`.
    pub fn new(config: RelayConfig, secret: &[u8; 32], seed: [u8; 32]) -> Relay {
        Relay {
            config,
            tickets: TicketKey::new(secret),
            cookie_key: blake3::derive_key("lockstep reach v1 2026 relay cookie", &seed),
            allocations: HashMap::new(),
            by_address: HashMap::new(),
            out: VecDeque::new(),
            next_sweep: 0,
            stats: RelayStats::default(),
        }
    }

    /// Its counters.
    pub fn stats(&self) -> &RelayStats {
        &self.stats
    }

    /// Allocations held now.
    pub fn allocations(&self) -> usize {
        self.allocations.len()
    }

    /// Places (members) held now.
    pub fn places(&self) -> usize {
        self.by_address.len()
    }

    /// The next datagram to send.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }

    /// When [`Relay::handle_timeout`] is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        (!self.by_address.is_empty()).then_some(self.next_sweep)
    }

    /// Frees the places whose member has been silent too long.
    pub fn handle_timeout(&mut self, now: u64) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add(self.config.idle_micros / 8);
        let idle = self.config.idle_micros;
        let mut freed = Vec::new();
        self.allocations.retain(|_, places| {
            places.retain(|p| {
                let live = p.heard.saturating_add(idle) > now;
                if !live {
                    freed.push(p.address);
                }
                live
            });
            !places.is_empty()
        });
        self.stats.expired += freed.len() as u64;
        for a in freed {
            self.by_address.remove(&a);
        }
    }

    fn cookie(&self, slot: u32, from: SocketAddr, ticket: &Ticket) -> [u8; COOKIE_BYTES] {
        let mut w = lockstep_fx::StateWriter::buffer();
        w.write_u32(slot);
        write_address(&mut w, from);
        w.write_u64(ticket.match_id.0);
        w.write_u16(ticket.member.0);
        let hash = blake3::keyed_hash(&self.cookie_key, w.bytes());
        let mut out = [0u8; COOKIE_BYTES];
        out[..4].copy_from_slice(&slot.to_le_bytes());
        out[4..].copy_from_slice(&hash.as_bytes()[..COOKIE_BYTES - 4]);
        out
    }

    fn cookie_holds(
        &self,
        now: u64,
        cookie: &[u8; COOKIE_BYTES],
        from: SocketAddr,
        ticket: &Ticket,
    ) -> bool {
        let slot = u32::from_le_bytes([cookie[0], cookie[1], cookie[2], cookie[3]]);
        let current = (now / SLOT_MICROS) as u32;
        if slot != current && slot.wrapping_add(1) != current {
            return false;
        }
        let expected = self.cookie(slot, from, ticket);
        expected
            .iter()
            .zip(cookie.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }

    fn answer(&mut self, kind: Kind, to: SocketAddr, message: &Message<'_>) {
        let bytes = message.encode();
        self.stats.traffic.answered(kind, bytes.len());
        self.out.push_back(Transmit { to, bytes });
    }

    fn refuse(&mut self, kind: Kind, to: SocketAddr, why: RelayRefusal) {
        let slot = match why {
            RelayRefusal::NoAllocation => 0,
            RelayRefusal::BadTicket => 1,
            RelayRefusal::Full => 2,
            RelayRefusal::Version(_) => 3,
        };
        self.stats.refused[slot] += 1;
        self.answer(kind, to, &Message::RelayRefused(why));
    }

    /// Handles a datagram from `from` at `now`.
    pub fn handle_datagram(&mut self, now: u64, from: SocketAddr, bytes: &[u8]) {
        let kind = bytes.first().and_then(|b| Kind::from_byte(*b));
        self.stats.traffic.received(kind, bytes.len());
        if kind == Some(Kind::Send) {
            self.forward(now, from, bytes);
            return;
        }
        match Message::decode(bytes) {
            Ok(Message::Allocate { ticket, cookie }) => self.allocate(now, from, &ticket, cookie),
            Ok(m) => self.stats.traffic.dropped(m.kind()),
            Err(WireError::Version(_)) if kind == Some(Kind::Allocate) => {
                // Told which version this relay speaks, unless that would
                // take more bytes than the request did.
                let refusal = RelayRefusal::Version(VERSION);
                if Message::RelayRefused(refusal).encode().len() <= bytes.len() {
                    self.refuse(Kind::Allocate, from, refusal);
                } else {
                    self.stats.traffic.dropped(Kind::Allocate);
                }
            }
            Err(_) => {
                if let Some(k) = kind {
                    self.stats.traffic.dropped(k);
                }
            }
        }
    }

    /// A `Send`: to the member it names, as a `Deliver` from the sender.
    fn forward(&mut self, now: u64, from: SocketAddr, bytes: &[u8]) {
        let (Some(&lo), Some(&hi)) = (bytes.get(1), bytes.get(2)) else {
            self.stats.traffic.dropped(Kind::Send);
            return;
        };
        if bytes.len() > crate::wire::MAX_FRAME {
            self.stats.traffic.dropped(Kind::Send);
            return;
        }
        let to = MemberId(u16::from_le_bytes([lo, hi]));
        let Some(&(match_id, me)) = self.by_address.get(&from) else {
            self.refuse(Kind::Send, from, RelayRefusal::NoAllocation);
            return;
        };
        let (packets, byte_rate) = (self.config.packets, self.config.bytes);
        let Some(places) = self.allocations.get_mut(&match_id) else {
            self.refuse(Kind::Send, from, RelayRefusal::NoAllocation);
            return;
        };
        let Some(sender) = places.iter_mut().find(|p| p.member == me) else {
            self.refuse(Kind::Send, from, RelayRefusal::NoAllocation);
            return;
        };
        sender.heard = now;
        if !sender.packets.spend(packets, now, 1)
            || !sender.bytes.spend(byte_rate, now, bytes.len() as u64)
        {
            self.stats.throttled += 1;
            return;
        }
        let Some(target) = places.iter().find(|p| p.member == to && to != me) else {
            self.stats.no_member += 1;
            return;
        };
        let mut out = bytes.to_vec();
        out[0] = Kind::Deliver.byte();
        out[1..DATA_HEADER_BYTES].copy_from_slice(&me.0.to_le_bytes());
        let to = target.address;
        self.stats.forwarded.datagrams += 1;
        self.stats.forwarded.bytes += out.len() as u64;
        self.stats.traffic.caused(Kind::Send, out.len());
        self.out.push_back(Transmit { to, bytes: out });
    }

    fn allocate(
        &mut self,
        now: u64,
        from: SocketAddr,
        ticket: &Ticket,
        cookie: Option<[u8; COOKIE_BYTES]>,
    ) {
        if self
            .tickets
            .verify(ticket, self.config.public, now / 1_000_000)
            .is_err()
        {
            // A place already held at this address is kept by a ticket this
            // key made even past its expiry: the rendezvous may be away.
            let held = self.by_address.get(&from) == Some(&(ticket.match_id, ticket.member));
            if !(held && self.tickets.is_genuine(ticket)) {
                self.refuse(Kind::Allocate, from, RelayRefusal::BadTicket);
                return;
            }
        }
        let key = (ticket.match_id, ticket.member);
        if self.by_address.get(&from) == Some(&key) {
            if let Some(p) = self
                .allocations
                .get_mut(&ticket.match_id)
                .and_then(|ps| ps.iter_mut().find(|p| p.member == ticket.member))
            {
                p.heard = now;
            }
            self.allocated(from);
            return;
        }
        let proven = cookie.is_some_and(|c| self.cookie_holds(now, &c, from, ticket));
        if !proven {
            let slot = (now / SLOT_MICROS) as u32;
            let cookie = self.cookie(slot, from, ticket);
            self.answer(Kind::Allocate, from, &Message::RelayChallenge { cookie });
            return;
        }
        let new_allocation = !self.allocations.contains_key(&ticket.match_id);
        if new_allocation && self.allocations.len() >= self.config.max_allocations {
            self.refuse(Kind::Allocate, from, RelayRefusal::Full);
            return;
        }
        let max_members = self.config.max_members;
        let places = self.allocations.entry(ticket.match_id).or_default();
        let existing = places.iter().position(|p| p.member == ticket.member);
        if existing.is_none() && places.len() >= max_members {
            if places.is_empty() {
                self.allocations.remove(&ticket.match_id);
            }
            self.refuse(Kind::Allocate, from, RelayRefusal::Full);
            return;
        }
        // The address leaves whatever place it held; the member leaves its
        // old address (a rebinding NAT, a restarted process).
        if let Some(old) = self.by_address.remove(&from) {
            if let Some(ps) = self.allocations.get_mut(&old.0) {
                ps.retain(|p| p.member != old.1);
            }
        }
        let places = self.allocations.entry(ticket.match_id).or_default();
        let place = Place {
            member: ticket.member,
            address: from,
            heard: now,
            packets: Budget::full(self.config.packets, now),
            bytes: Budget::full(self.config.bytes, now),
        };
        match places.iter_mut().find(|p| p.member == ticket.member) {
            Some(p) => {
                let old = p.address;
                *p = place;
                self.by_address.remove(&old);
            }
            None => places.push(place),
        }
        self.by_address.insert(from, key);
        self.stats.placed += 1;
        if self.next_sweep == 0 {
            self.next_sweep = now.saturating_add(self.config.idle_micros / 8);
        }
        self.allocated(from);
    }

    fn allocated(&mut self, to: SocketAddr) {
        let idle_secs = (self.config.idle_micros / 1_000_000).min(u64::from(u16::MAX)) as u16;
        self.answer(
            Kind::Allocate,
            to,
            &Message::Allocated {
                observed: to,
                idle_secs,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_800_000_000_000_000;

    fn public() -> SocketAddr {
        "1.0.0.2:7701".parse().unwrap()
    }

    fn addr(n: u8) -> SocketAddr {
        SocketAddr::from(([2, 0, 0, n], 5000))
    }

    fn relay() -> Relay {
        Relay::new(RelayConfig::new(public()), &[1; 32], [2; 32])
    }

    fn ticket(member: u16) -> Ticket {
        TicketKey::new(&[1; 32]).mint(MatchId(7), MemberId(member), public(), T0 / 1_000_000 + 60)
    }

    fn sent(r: &mut Relay) -> Vec<Transmit> {
        std::iter::from_fn(|| r.poll_transmit()).collect()
    }

    /// Places `member` at `from` through the challenge.
    fn place(r: &mut Relay, now: u64, member: u16, from: SocketAddr) {
        let ask = Message::Allocate {
            ticket: ticket(member),
            cookie: None,
        };
        r.handle_datagram(now, from, &ask.encode());
        let out = sent(r);
        let Ok(Message::RelayChallenge { cookie }) = Message::decode(&out[0].bytes) else {
            panic!("a challenge first: {out:?}");
        };
        let again = Message::Allocate {
            ticket: ticket(member),
            cookie: Some(cookie),
        };
        r.handle_datagram(now, from, &again.encode());
        let out = sent(r);
        assert!(
            matches!(Message::decode(&out[0].bytes), Ok(Message::Allocated { observed, .. }) if observed == from)
        );
    }

    fn send(to: u16, payload: &[u8]) -> Vec<u8> {
        Message::Send {
            to: MemberId(to),
            payload,
        }
        .encode()
    }

    #[test]
    fn members_placed_with_their_tickets_exchange_datagrams_of_the_same_length() {
        let mut r = relay();
        place(&mut r, T0, 0, addr(1));
        place(&mut r, T0, 1, addr(2));
        let frame = send(1, b"sealed bytes");
        r.handle_datagram(T0, addr(1), &frame);
        let out = sent(&mut r);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].to, addr(2));
        assert_eq!(out[0].bytes.len(), frame.len());
        assert_eq!(
            Message::decode(&out[0].bytes),
            Ok(Message::Deliver {
                from: MemberId(0),
                payload: b"sealed bytes"
            })
        );
        // To a member without a place, or to itself: nothing.
        r.handle_datagram(T0, addr(1), &send(5, b"x"));
        r.handle_datagram(T0, addr(1), &send(0, b"x"));
        assert!(sent(&mut r).is_empty());
        assert_eq!(r.stats().no_member, 2);
    }

    #[test]
    fn an_unproven_address_gets_a_cookie_and_nothing_more() {
        let mut r = relay();
        let ask = Message::Allocate {
            ticket: ticket(0),
            cookie: Some([0; COOKIE_BYTES]),
        };
        let bytes = ask.encode();
        r.handle_datagram(T0, addr(1), &bytes);
        let out = sent(&mut r);
        assert!(matches!(
            Message::decode(&out[0].bytes),
            Ok(Message::RelayChallenge { .. })
        ));
        assert!(out[0].bytes.len() < bytes.len());
        assert_eq!(r.places(), 0);
        // A datagram from an address without a place: told so, in 3 bytes.
        r.handle_datagram(T0, addr(3), &send(0, b""));
        let out = sent(&mut r);
        assert_eq!(out[0].bytes.len(), 3);
        assert_eq!(
            Message::decode(&out[0].bytes),
            Ok(Message::RelayRefused(RelayRefusal::NoAllocation))
        );
        // A ticket for another relay, or forged, is refused.
        let other =
            TicketKey::new(&[1; 32]).mint(MatchId(7), MemberId(0), addr(9), T0 / 1_000_000 + 60);
        let mut forged = ticket(0);
        forged.member = MemberId(3);
        for t in [other, forged] {
            let m = Message::Allocate {
                ticket: t,
                cookie: None,
            };
            r.handle_datagram(T0, addr(1), &m.encode());
            assert_eq!(
                Message::decode(&sent(&mut r)[0].bytes),
                Ok(Message::RelayRefused(RelayRefusal::BadTicket))
            );
        }
    }

    #[test]
    fn a_member_over_its_budget_is_throttled() {
        let mut r = relay();
        place(&mut r, T0, 0, addr(1));
        place(&mut r, T0, 1, addr(2));
        let burst = RelayConfig::new(public()).packets.burst;
        for _ in 0..burst + 10 {
            r.handle_datagram(T0, addr(1), &send(1, b"x"));
        }
        assert_eq!(sent(&mut r).len() as u64, burst);
        assert_eq!(r.stats().throttled, 10);
        // A second later it has earned its rate again.
        r.handle_datagram(T0 + 1_000_000, addr(1), &send(1, b"x"));
        assert_eq!(sent(&mut r).len(), 1);
    }

    #[test]
    fn silent_places_are_freed_and_a_moved_member_takes_its_place_along() {
        let mut r = relay();
        place(&mut r, T0, 0, addr(1));
        place(&mut r, T0, 1, addr(2));
        // Member 1's NAT gave it a new address: it proves it and moves.
        place(&mut r, T0 + 1, 1, addr(3));
        assert_eq!(r.places(), 2);
        r.handle_datagram(T0 + 2, addr(1), &send(1, b"x"));
        assert_eq!(sent(&mut r)[0].to, addr(3));
        let idle = RelayConfig::new(public()).idle_micros;
        // Member 0 keeps talking; member 1 falls silent.
        r.handle_datagram(T0 + idle - 1, addr(1), &send(1, b"x"));
        sent(&mut r);
        r.handle_timeout(T0 + idle + 10);
        assert_eq!(r.places(), 1);
        r.handle_timeout(T0 + 3 * idle);
        assert_eq!((r.places(), r.allocations()), (0, 0));
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn a_short_request_of_another_version_is_not_answered_with_more() {
        // Found by the reach_nodes fuzz target: 3 bytes, an Allocate of
        // version 0xe3.
        let mut r = relay();
        r.handle_datagram(T0, addr(1), &[0x8f, 0xe3, 0x8f]);
        assert!(sent(&mut r).is_empty());
        r.handle_datagram(T0, addr(1), &[0x8f, 0xe3, 0x8f, 0]);
        let out = sent(&mut r);
        assert_eq!(out[0].bytes.len(), 4);
        assert_eq!(
            Message::decode(&out[0].bytes),
            Ok(Message::RelayRefused(RelayRefusal::Version(VERSION)))
        );
    }

    #[test]
    fn allocations_are_bounded() {
        let mut config = RelayConfig::new(public());
        config.max_allocations = 1;
        config.max_members = 1;
        let mut r = Relay::new(config, &[1; 32], [2; 32]);
        place(&mut r, T0, 0, addr(1));
        // A second member of the same match, and a second match: full.
        let other =
            TicketKey::new(&[1; 32]).mint(MatchId(8), MemberId(0), public(), T0 / 1_000_000 + 60);
        for (t, from) in [(ticket(1), addr(2)), (other, addr(3))] {
            let ask = Message::Allocate {
                ticket: t,
                cookie: None,
            };
            r.handle_datagram(T0, from, &ask.encode());
            let Ok(Message::RelayChallenge { cookie }) = Message::decode(&sent(&mut r)[0].bytes)
            else {
                panic!("a challenge");
            };
            let again = Message::Allocate {
                ticket: t,
                cookie: Some(cookie),
            };
            r.handle_datagram(T0, from, &again.encode());
            assert_eq!(
                Message::decode(&sent(&mut r)[0].bytes),
                Ok(Message::RelayRefused(RelayRefusal::Full))
            );
        }
        assert_eq!((r.places(), r.allocations()), (1, 1));
    }
}
