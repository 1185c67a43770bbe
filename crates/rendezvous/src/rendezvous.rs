//! [`Rendezvous`]: the service that files a match under its codes and
//! introduces the processes that look it up, sans-IO.
//!
//! A host registers its match (`Register`: its codes' public parts, its
//! local addresses, its registration secret) and refreshes it every few
//! seconds; the rendezvous records the address it saw the request come
//! from (the host's address outside its NAT) beside the local ones. A
//! process that looks a code up (`Lookup`) becomes a member of the match:
//! it is answered with its ticket (for the relay), the match's key (for
//! probes) and every member it will talk to, and those members are told
//! about it at once (`Introduce`), so that both sides probe each other at
//! the same moment and open their NATs for each other (simultaneous open,
//! RFC 5128 §3.3). Members poll (`Poll`) to hear of later members and of
//! members whose address moved, and to renew their tickets.
//!
//! Call order: feed every datagram ([`Rendezvous::handle_datagram`]),
//! send what [`Rendezvous::poll_transmit`] gives, call
//! [`Rendezvous::handle_timeout`] once [`Rendezvous::poll_timeout`] is
//! reached. Time is the wall clock in microseconds since the UNIX epoch:
//! tickets carry an expiry another machine (the relay) checks.
//!
//! Its rules:
//! - no answer is larger than the request it answers (requests are padded
//!   to [`REQUEST_BYTES`](crate::wire::REQUEST_BYTES));
//! - every source (an IPv4 address, an IPv6 /64) has a budget of requests,
//!   and the table of sources is bounded ([`Sources`]);
//! - a match holds at most [`MAX_MEMBERS`] members (a silent one makes
//!   room), the store a bounded number of matches, and every record
//!   expires unless its host refreshes it;
//! - it never sees a code's secret: a code's public part files the match,
//!   and knowing it invites nobody (the host checks the secret itself).
//!
//! Invariants: nothing here panics on any datagram; every refusal is typed
//! ([`Refusal`]) and counted.

use std::collections::VecDeque;
use std::net::SocketAddr;

use crate::Transmit;
use crate::budget::{Rate, Sources};
use crate::draw::Draw;
use crate::ids::{MatchId, MatchKey, MemberId, Role};
use crate::message::{
    Answer, Entry, Lookup, MAX_CANDIDATES, MAX_ENTRIES, Message, Refusal, Register,
};
use crate::store::{MAX_MEMBERS, MatchRecord, Member, Store, StoreError};
use crate::ticket::{NO_RELAY, Ticket, TicketKey};
use crate::wire::{Kind, VERSION, WireError};

/// What a rendezvous is told to do. `Default` is what `lockstep
/// rendezvous` runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RendezvousConfig {
    /// The relay it hands out in tickets, if any.
    pub relay: Option<SocketAddr>,
    /// Seconds a registration lives after the host's last refresh.
    pub ttl_secs: u16,
    /// Seconds a ticket is good for.
    pub ticket_secs: u64,
    /// Microseconds after which a member that has not polled makes room
    /// in a full match.
    pub member_idle_micros: u64,
    /// Each source's budget of requests.
    pub requests: Rate,
    /// Sources tracked at once.
    pub sources: usize,
    /// Members told at once about a new or moved one.
    pub introductions: usize,
}

impl Default for RendezvousConfig {
    fn default() -> RendezvousConfig {
        RendezvousConfig {
            relay: None,
            ttl_secs: 30,
            ticket_secs: 600,
            member_idle_micros: 20_000_000,
            requests: Rate {
                per_second: 10,
                burst: 40,
            },
            sources: 65_536,
            introductions: 8,
        }
    }
}

/// Counters of a rendezvous.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RendezvousStats {
    /// What came in and went out, by kind.
    pub traffic: crate::traffic::Traffic,
    /// Matches registered (first time).
    pub registered: u64,
    /// Members enrolled by lookups.
    pub enrolled: u64,
    /// Refusals sent, by reason: unknown, taken, full, busy, bad ticket,
    /// version, gone.
    pub refused: [u64; 7],
    /// Requests the store failed.
    pub store_errors: u64,
}

/// The rendezvous. See the module documentation.
#[derive(Debug)]
pub struct Rendezvous<S: Store> {
    config: RendezvousConfig,
    tickets: TicketKey,
    draw: Draw,
    store: S,
    sources: Sources,
    out: VecDeque<Transmit>,
    stats: RendezvousStats,
}

/// What a change of a record found, for the answer.
enum Outcome {
    /// Nothing filed under that.
    Unknown,
    /// Another owner's.
    Taken,
    /// No room.
    Full,
    /// The record (a copy after the change) and the asker.
    Done(Box<MatchRecord>, MemberId, Option<Entry>),
}

/// Whether change `seq` comes after change `after` (counters wrap).
fn is_after(seq: u16, after: u16) -> bool {
    seq != after && seq.wrapping_sub(after) < 0x8000
}

/// `observed` first, then `locals` not equal to it, at most
/// [`MAX_CANDIDATES`].
fn candidates(observed: SocketAddr, locals: &[SocketAddr]) -> Vec<SocketAddr> {
    let mut out = vec![observed];
    for l in locals {
        if out.len() < MAX_CANDIDATES && !out.contains(l) {
            out.push(*l);
        }
    }
    out
}

impl<S: Store> Rendezvous<S> {
    /// A rendezvous keeping its matches in `store`, minting tickets with
    /// the key derived from `secret` (its relays' too), drawing match ids
    /// and keys from `seed`.
    pub fn new(config: RendezvousConfig, secret: &[u8; 32], seed: [u8; 32], store: S) -> Self {
        Rendezvous {
            sources: Sources::new(config.requests, config.sources),
            config,
            tickets: TicketKey::new(secret),
            draw: Draw::new(seed),
            store,
            out: VecDeque::new(),
            stats: RendezvousStats::default(),
        }
    }

    /// Its counters.
    pub fn stats(&self) -> &RendezvousStats {
        &self.stats
    }

    /// Its store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The next datagram to send.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }

    /// When [`Rendezvous::handle_timeout`] is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.store.next_sweep()
    }

    /// Forgets what expired.
    pub fn handle_timeout(&mut self, now: u64) {
        self.store.sweep(now);
    }

    fn answer(&mut self, kind: Kind, to: SocketAddr, message: &Message<'_>) {
        let bytes = message.encode();
        self.stats.traffic.answered(kind, bytes.len());
        self.out.push_back(Transmit { to, bytes });
    }

    fn refuse(&mut self, kind: Kind, to: SocketAddr, why: Refusal) {
        let slot = match why {
            Refusal::Unknown(_) => 0,
            Refusal::Taken(_) => 1,
            Refusal::Full => 2,
            Refusal::Busy => 3,
            Refusal::BadTicket => 4,
            Refusal::Version(_) => 5,
            Refusal::Gone => 6,
        };
        self.stats.refused[slot] += 1;
        self.answer(kind, to, &Message::RendezvousRefused(why));
    }

    /// Handles a datagram from `from` at `now`.
    pub fn handle_datagram(&mut self, now: u64, from: SocketAddr, bytes: &[u8]) {
        let kind = bytes.first().and_then(|b| Kind::from_byte(*b));
        self.stats.traffic.received(kind, bytes.len());
        let message = match Message::decode(bytes) {
            Ok(m) => m,
            Err(WireError::Version(_)) => {
                let kind = kind.unwrap_or(Kind::Register);
                let answer = Message::RendezvousRefused(Refusal::Version(VERSION));
                if matches!(kind, Kind::Register | Kind::Lookup | Kind::Poll)
                    && answer.encode().len() <= bytes.len()
                {
                    self.refuse(kind, from, Refusal::Version(VERSION));
                } else {
                    self.stats.traffic.dropped(kind);
                }
                return;
            }
            Err(_) => {
                if let Some(k) = kind {
                    self.stats.traffic.dropped(k);
                }
                return;
            }
        };
        let kind = message.kind();
        if !matches!(kind, Kind::Register | Kind::Lookup | Kind::Poll) {
            self.stats.traffic.dropped(kind);
            return;
        }
        if !self.sources.allow(now, from) {
            self.refuse(kind, from, Refusal::Busy);
            return;
        }
        let result = match message {
            Message::Register(reg) => self.register(now, from, &reg),
            Message::Lookup(l) => self.lookup(now, from, &l),
            Message::Poll { ticket, after } => self.poll(now, from, &ticket, after),
            _ => Ok(()),
        };
        if result.is_err() {
            self.stats.store_errors += 1;
            self.refuse(kind, from, Refusal::Busy);
        }
    }

    fn expires(&self, now: u64) -> u64 {
        now.saturating_add(u64::from(self.config.ttl_secs) * 1_000_000)
    }

    fn ticket(&self, now: u64, id: MatchId, member: MemberId, relay: Option<SocketAddr>) -> Ticket {
        let expires = now / 1_000_000 + self.config.ticket_secs;
        self.tickets
            .mint(id, member, relay.unwrap_or(NO_RELAY), expires)
    }

    fn register(&mut self, now: u64, from: SocketAddr, reg: &Register) -> Result<(), StoreError> {
        let mut codes = reg.codes.clone();
        codes.dedup();
        let candidates = candidates(from, &reg.locals);
        let expires = self.expires(now);
        let found = self.store.find(now, codes[0])?;
        let mut outcome = Outcome::Unknown;
        if let Some(id) = found {
            self.store.change(now, id, &mut |rec| {
                let Some(r) = rec else {
                    return false;
                };
                if r.owner != reg.owner {
                    outcome = Outcome::Taken;
                    return false;
                }
                r.expires = expires;
                r.codes.clone_from(&codes);
                let mut moved = None;
                if r.member_mut(MemberId::HOST)
                    .map(|h| h.entry.candidates != candidates)
                    == Some(true)
                {
                    let seq = r.bump();
                    if let Some(h) = r.member_mut(MemberId::HOST) {
                        h.entry.candidates.clone_from(&candidates);
                        h.entry.seq = seq;
                        moved = Some(h.entry.clone());
                    }
                }
                if let Some(h) = r.member_mut(MemberId::HOST) {
                    h.heard = now;
                }
                outcome = Outcome::Done(Box::new(r.clone()), MemberId::HOST, moved);
                true
            })?;
        }
        if let Outcome::Taken = outcome {
            self.refuse(Kind::Register, from, Refusal::Taken(codes[0]));
            return Ok(());
        }
        if let Outcome::Unknown = outcome {
            let id = MatchId(self.draw.u64());
            let record = MatchRecord {
                id,
                key: MatchKey(self.draw.sixteen()),
                owner: reg.owner,
                relay: self.config.relay,
                codes: codes.clone(),
                expires,
                seq: 1,
                next_member: 1,
                members: vec![Member {
                    entry: Entry {
                        member: MemberId::HOST,
                        role: Role::Host,
                        seq: 1,
                        candidates: candidates.clone(),
                    },
                    heard: now,
                }],
            };
            let made = record.clone();
            self.store.change(now, id, &mut |r| {
                *r = Some(made.clone());
                true
            })?;
            self.stats.registered += 1;
            outcome = Outcome::Done(Box::new(record), MemberId::HOST, None);
        }
        let Outcome::Done(record, _, moved) = outcome else {
            return Ok(());
        };
        for code in &codes {
            let holder = self.store.file(now, *code, record.id, expires)?;
            if holder != record.id {
                self.refuse(Kind::Register, from, Refusal::Taken(*code));
                return Ok(());
            }
        }
        if let Some(entry) = moved {
            self.introduce(Kind::Register, &record, &entry);
        }
        self.send_answer(
            Kind::Register,
            now,
            from,
            &record,
            MemberId::HOST,
            Some(reg.after),
        );
        Ok(())
    }

    fn lookup(&mut self, now: u64, from: SocketAddr, l: &Lookup) -> Result<(), StoreError> {
        let Some(id) = self.store.find(now, l.code)? else {
            self.refuse(Kind::Lookup, from, Refusal::Unknown(l.code));
            return Ok(());
        };
        let candidates = candidates(from, &l.locals);
        let idle = self.config.member_idle_micros;
        let code = l.code;
        let mut outcome = Outcome::Unknown;
        self.store.change(now, id, &mut |rec| {
            let Some(r) = rec else {
                return false;
            };
            let Some(role) = r.role_of(code) else {
                return false;
            };
            if r.members.len() >= MAX_MEMBERS {
                r.members.retain(|m| {
                    m.entry.member == MemberId::HOST || m.heard.saturating_add(idle) > now
                });
            }
            if r.members.len() >= MAX_MEMBERS || r.next_member == u16::MAX {
                outcome = Outcome::Full;
                return false;
            }
            let member = MemberId(r.next_member);
            r.next_member += 1;
            let seq = r.bump();
            let entry = Entry {
                member,
                role,
                seq,
                candidates: candidates.clone(),
            };
            r.members.push(Member {
                entry: entry.clone(),
                heard: now,
            });
            outcome = Outcome::Done(Box::new(r.clone()), member, Some(entry));
            true
        })?;
        match outcome {
            Outcome::Unknown => self.refuse(Kind::Lookup, from, Refusal::Unknown(code)),
            Outcome::Full | Outcome::Taken => self.refuse(Kind::Lookup, from, Refusal::Full),
            Outcome::Done(record, member, entry) => {
                self.stats.enrolled += 1;
                self.send_answer(Kind::Lookup, now, from, &record, member, None);
                if let Some(e) = entry {
                    self.introduce(Kind::Lookup, &record, &e);
                }
            }
        }
        Ok(())
    }

    fn poll(
        &mut self,
        now: u64,
        from: SocketAddr,
        ticket: &Ticket,
        after: u16,
    ) -> Result<(), StoreError> {
        if !self.tickets.is_genuine(ticket) || ticket.expires <= now / 1_000_000 {
            self.refuse(Kind::Poll, from, Refusal::BadTicket);
            return Ok(());
        }
        let mut outcome = Outcome::Unknown;
        self.store.change(now, ticket.match_id, &mut |rec| {
            let Some(r) = rec else {
                return false;
            };
            let Some(m) = r.member_mut(ticket.member) else {
                return false;
            };
            m.heard = now;
            let mut moved = None;
            if m.entry.candidates.first() != Some(&from) {
                let seq = r.bump();
                if let Some(m) = r.member_mut(ticket.member) {
                    m.entry.candidates[0] = from;
                    m.entry.seq = seq;
                    moved = Some(m.entry.clone());
                }
            }
            outcome = Outcome::Done(Box::new(r.clone()), ticket.member, moved);
            true
        })?;
        match outcome {
            Outcome::Done(record, member, moved) => {
                if let Some(e) = moved {
                    self.introduce(Kind::Poll, &record, &e);
                }
                self.send_answer(Kind::Poll, now, from, &record, member, Some(after));
            }
            _ => self.refuse(Kind::Poll, from, Refusal::Gone),
        }
        Ok(())
    }

    /// Answers `member` of `record` at `to` with its ticket and the members
    /// it talks to that changed after `after` (all of them without).
    fn send_answer(
        &mut self,
        kind: Kind,
        now: u64,
        to: SocketAddr,
        record: &MatchRecord,
        member: MemberId,
        after: Option<u16>,
    ) {
        let role = record
            .members
            .iter()
            .find(|m| m.entry.member == member)
            .map_or(Role::Seat, |m| m.entry.role);
        let mut changed: Vec<&Entry> = record
            .members
            .iter()
            .map(|m| &m.entry)
            .filter(|e| e.member != member && role.talks_to(e.role))
            .filter(|e| after.is_none_or(|a| is_after(e.seq, a)))
            .collect();
        let base = after.unwrap_or(record.seq.wrapping_add(1));
        changed.sort_by_key(|e| e.seq.wrapping_sub(base));
        let more = changed.len() > MAX_ENTRIES;
        changed.truncate(MAX_ENTRIES);
        let next = match (more, changed.last()) {
            (true, Some(last)) => last.seq,
            _ => record.seq,
        };
        let answer = Answer {
            ticket: self.ticket(now, record.id, member, record.relay),
            role,
            key: record.key,
            observed: to,
            ttl_secs: self.config.ttl_secs,
            next,
            more,
            entries: changed.into_iter().cloned().collect(),
        };
        self.answer(kind, to, &Message::Answer(answer));
    }

    /// Tells the members of `record` that `entry` talks to about it, at
    /// the address each was last seen at (the host first, at most
    /// `introductions` of them).
    fn introduce(&mut self, kind: Kind, record: &MatchRecord, entry: &Entry) {
        let bytes = Message::Introduce {
            match_id: record.id,
            next: record.seq,
            entries: vec![entry.clone()],
        }
        .encode();
        let targets = record
            .members
            .iter()
            .filter(|m| m.entry.member != entry.member && entry.role.talks_to(m.entry.role))
            .take(self.config.introductions)
            .filter_map(|m| m.entry.candidates.first().copied());
        for to in targets.collect::<Vec<_>>() {
            self.stats.traffic.caused(kind, bytes.len());
            self.out.push_back(Transmit {
                to,
                bytes: bytes.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::CodeId;
    use crate::ids::Owner;
    use crate::store::MemoryStore;
    #[cfg(feature = "redis")]
    use crate::store::RedisStore;
    #[cfg(feature = "redis")]
    use crate::store::redis::tests::RedisServer;

    const T0: u64 = 1_800_000_000_000_000;

    fn config() -> RendezvousConfig {
        RendezvousConfig {
            relay: Some("1.0.0.2:7701".parse().unwrap()),
            ..RendezvousConfig::default()
        }
    }

    fn rendezvous<S: Store>(store: S) -> Rendezvous<S> {
        Rendezvous::new(config(), &[1; 32], [2; 32], store)
    }

    fn addr(n: u8) -> SocketAddr {
        SocketAddr::from(([2, 0, 0, n], 5000))
    }

    fn code(n: u32) -> CodeId {
        CodeId::new(n).unwrap()
    }

    fn register(owner: u8, codes: Vec<CodeId>) -> Vec<u8> {
        Message::Register(Register {
            owner: Owner([owner; 16]),
            codes,
            locals: vec![],
            after: 0,
        })
        .encode()
    }

    fn lookup(c: CodeId) -> Vec<u8> {
        Message::Lookup(Lookup {
            code: c,
            locals: vec![],
        })
        .encode()
    }

    /// Every datagram sent, decoded, with its destination.
    fn drain<S: Store>(r: &mut Rendezvous<S>) -> Vec<(SocketAddr, Message<'static>)> {
        let mut out = Vec::new();
        while let Some(t) = r.poll_transmit() {
            let m = Message::decode(&t.bytes).unwrap();
            // Owned again (no borrowed payloads in rendezvous messages).
            let m = match m {
                Message::Answer(a) => Message::Answer(a),
                Message::Introduce {
                    match_id,
                    next,
                    entries,
                } => Message::Introduce {
                    match_id,
                    next,
                    entries,
                },
                Message::RendezvousRefused(r) => Message::RendezvousRefused(r),
                other => panic!("unexpected {other:?}"),
            };
            out.push((t.to, m));
        }
        out
    }

    fn answer<'a>(out: &'a [(SocketAddr, Message<'static>)]) -> &'a Answer {
        out.iter()
            .find_map(|(_, m)| match m {
                Message::Answer(a) => Some(a),
                _ => None,
            })
            .expect("an answer")
    }

    fn a_registration_is_refreshed_by_its_owner_alone_and_expires_without<S: Store>(
        store: impl FnOnce() -> S,
    ) {
        let mut r = rendezvous(store());
        r.handle_datagram(T0, addr(1), &register(7, vec![code(1), code(2)]));
        let first = answer(&drain(&mut r)).clone();
        assert_eq!(first.role, Role::Host);
        assert_eq!(first.ticket.member, MemberId::HOST);
        r.handle_datagram(
            T0 + 1_000_000,
            addr(1),
            &register(7, vec![code(1), code(2)]),
        );
        let again = answer(&drain(&mut r)).clone();
        assert_eq!(again.ticket.match_id, first.ticket.match_id);
        // Another owner is refused either code.
        r.handle_datagram(T0 + 2_000_000, addr(2), &register(8, vec![code(1)]));
        assert_eq!(
            drain(&mut r),
            vec![(addr(2), Message::RendezvousRefused(Refusal::Taken(code(1))))]
        );
        r.handle_datagram(
            T0 + 2_000_000,
            addr(2),
            &register(8, vec![code(3), code(2)]),
        );
        assert_eq!(
            drain(&mut r),
            vec![(addr(2), Message::RendezvousRefused(Refusal::Taken(code(2))))]
        );
        // Unrefreshed for its lifetime, the match is gone and its codes free.
        let later = T0 + 1_000_000 + 30_000_000;
        r.handle_timeout(later);
        r.handle_datagram(later, addr(3), &lookup(code(1)));
        assert_eq!(
            drain(&mut r),
            vec![(
                addr(3),
                Message::RendezvousRefused(Refusal::Unknown(code(1)))
            )]
        );
        r.handle_datagram(later, addr(2), &register(8, vec![code(1)]));
        assert_eq!(answer(&drain(&mut r)).role, Role::Host);
    }

    fn a_lookup_enrolls_a_member_and_introduces_it_to_whom_it_talks_to<S: Store>(
        store: impl FnOnce() -> S,
    ) {
        let mut r = rendezvous(store());
        r.handle_datagram(T0, addr(1), &register(7, vec![code(1), code(2)]));
        drain(&mut r);
        r.handle_datagram(T0, addr(2), &lookup(code(1)));
        let out = drain(&mut r);
        let a = answer(&out);
        assert_eq!((a.ticket.member, a.role), (MemberId(1), Role::Seat));
        assert_eq!(a.entries.len(), 1);
        assert_eq!(a.entries[0].candidates, vec![addr(1)]);
        assert_eq!(a.observed, addr(2));
        // The host hears of the seat at the address it registered from.
        assert!(
            out.iter()
                .any(|(to, m)| *to == addr(1) && matches!(m, Message::Introduce { .. }))
        );
        // A spectator: introduced to the host alone, and told of it alone.
        r.handle_datagram(T0, addr(3), &lookup(code(2)));
        let out = drain(&mut r);
        let s = answer(&out);
        assert_eq!(s.role, Role::Spectator);
        assert_eq!(
            s.entries.iter().map(|e| e.member).collect::<Vec<_>>(),
            vec![MemberId::HOST]
        );
        let told: Vec<SocketAddr> = out
            .iter()
            .filter(|(_, m)| matches!(m, Message::Introduce { .. }))
            .map(|(to, _)| *to)
            .collect();
        assert_eq!(told, vec![addr(1)]);
        // A second seat hears of the host and the first seat, not the spectator.
        r.handle_datagram(T0, addr(4), &lookup(code(1)));
        let out = drain(&mut r);
        let b = answer(&out);
        let members: Vec<MemberId> = b.entries.iter().map(|e| e.member).collect();
        assert_eq!(members, vec![MemberId::HOST, MemberId(1)]);
    }

    fn a_poll_moves_a_member_that_moved_and_refuses_a_forged_ticket<S: Store>(
        store: impl FnOnce() -> S,
    ) {
        let mut r = rendezvous(store());
        r.handle_datagram(T0, addr(1), &register(7, vec![code(1)]));
        drain(&mut r);
        r.handle_datagram(T0, addr(2), &lookup(code(1)));
        let joined = answer(&drain(&mut r)).clone();
        let poll = |ticket, after| Message::Poll { ticket, after }.encode();
        // The joiner's NAT gave it a new port: the host is told.
        let moved: SocketAddr = SocketAddr::from(([2, 0, 0, 2], 6000));
        r.handle_datagram(T0 + 1, moved, &poll(joined.ticket, joined.next));
        let out = drain(&mut r);
        let intro = out
            .iter()
            .find_map(|(to, m)| match m {
                Message::Introduce { entries, .. } if *to == addr(1) => Some(entries.clone()),
                _ => None,
            })
            .expect("the host told");
        assert_eq!(intro[0].candidates[0], moved);
        assert_eq!(answer(&out).observed, moved);
        let mut forged = joined.ticket;
        forged.member = MemberId(0);
        r.handle_datagram(T0 + 2, moved, &poll(forged, 0));
        assert_eq!(
            drain(&mut r),
            vec![(moved, Message::RendezvousRefused(Refusal::BadTicket))]
        );
    }

    fn a_source_that_asks_too_often_is_told_busy<S: Store>(store: impl FnOnce() -> S) {
        let mut r = rendezvous(store());
        let burst = RendezvousConfig::default().requests.burst;
        for _ in 0..burst {
            r.handle_datagram(T0, addr(9), &lookup(code(5)));
        }
        drain(&mut r);
        r.handle_datagram(T0, addr(9), &lookup(code(5)));
        assert_eq!(
            drain(&mut r),
            vec![(addr(9), Message::RendezvousRefused(Refusal::Busy))]
        );
        // Another source is unaffected.
        r.handle_datagram(T0, addr(8), &lookup(code(5)));
        assert_eq!(
            drain(&mut r),
            vec![(
                addr(8),
                Message::RendezvousRefused(Refusal::Unknown(code(5)))
            )]
        );
    }

    fn a_match_holds_a_bounded_number_of_members_and_silent_ones_make_room<S: Store>(
        store: impl FnOnce() -> S,
    ) {
        let mut r = rendezvous(store());
        r.handle_datagram(T0, addr(1), &register(7, vec![code(1)]));
        drain(&mut r);
        for i in 1..MAX_MEMBERS {
            let from = SocketAddr::from(([3, 0, (i / 200) as u8, (i % 200) as u8], 1));
            r.handle_datagram(T0, from, &lookup(code(1)));
        }
        drain(&mut r);
        let late = SocketAddr::from(([4, 0, 0, 1], 1));
        r.handle_datagram(T0, late, &lookup(code(1)));
        assert_eq!(
            drain(&mut r),
            vec![(late, Message::RendezvousRefused(Refusal::Full))]
        );
        // The host keeps refreshing; the members went silent.
        let later = T0 + 25_000_000;
        r.handle_datagram(later - 1_000_000, addr(1), &register(7, vec![code(1)]));
        drain(&mut r);
        r.handle_datagram(later, late, &lookup(code(1)));
        assert_eq!(answer(&drain(&mut r)).role, Role::Seat);
    }

    #[test]
    fn changes_come_in_order_across_the_counter_wrap() {
        assert!(is_after(5, 4));
        assert!(!is_after(4, 4));
        assert!(!is_after(3, 4));
        assert!(is_after(2, 65_530));
        assert!(!is_after(65_530, 2));
    }

    /// Runs each behaviour above against the memory store, and against a
    /// Redis store on a `redis-server` of the test's own (with the `redis`
    /// feature): the same rendezvous, the same answers.
    macro_rules! against_every_store {
        ($($name:ident),* $(,)?) => {
            mod memory {
                $(
                    #[test]
                    fn $name() {
                        super::$name(|| super::MemoryStore::new(8));
                    }
                )*
            }
            #[cfg(feature = "redis")]
            mod redis {
                $(
                    #[test]
                    fn $name() {
                        let Some(server) = super::RedisServer::start() else {
                            return;
                        };
                        super::$name(|| super::RedisStore::open(&server.url, stringify!($name)).unwrap());
                    }
                )*
            }
        };
    }

    against_every_store!(
        a_registration_is_refreshed_by_its_owner_alone_and_expires_without,
        a_lookup_enrolls_a_member_and_introduces_it_to_whom_it_talks_to,
        a_poll_moves_a_member_that_moved_and_refuses_a_forged_ticket,
        a_source_that_asks_too_often_is_told_busy,
        a_match_holds_a_bounded_number_of_members_and_silent_ones_make_room,
    );

    /// Two rendezvous processes sharing one Redis: a code registered at one
    /// is found at the other, which introduces the joiner to the host at
    /// once; the host also hears of it at its next refresh from the first
    /// (where the other's introduction cannot reach it); a ticket either
    /// minted is good at both.
    #[cfg(feature = "redis")]
    #[test]
    fn two_rendezvous_sharing_redis_resolve_each_others_codes() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let shared = || RedisStore::open(&server.url, "shared").unwrap();
        let mut a = Rendezvous::new(config(), &[1; 32], [2; 32], shared());
        let mut b = Rendezvous::new(config(), &[1; 32], [3; 32], shared());
        a.handle_datagram(T0, addr(1), &register(7, vec![code(1), code(2)]));
        let host = answer(&drain(&mut a)).clone();
        b.handle_datagram(T0 + 1, addr(2), &lookup(code(1)));
        let out = drain(&mut b);
        let joined = answer(&out).clone();
        assert_eq!(joined.ticket.match_id, host.ticket.match_id);
        assert_eq!(joined.ticket.member, MemberId(1));
        assert_eq!(joined.entries[0].candidates, vec![addr(1)]);
        assert!(
            out.iter()
                .any(|(to, m)| *to == addr(1) && matches!(m, Message::Introduce { .. }))
        );
        // The host's refresh at a brings the joiner too.
        let refresh = Message::Register(Register {
            owner: Owner([7; 16]),
            codes: vec![code(1), code(2)],
            locals: vec![],
            after: host.next,
        })
        .encode();
        a.handle_datagram(T0 + 2, addr(1), &refresh);
        let seen = answer(&drain(&mut a)).clone();
        assert_eq!(
            seen.entries.iter().map(|e| e.member).collect::<Vec<_>>(),
            vec![MemberId(1)]
        );
        // A ticket b minted polls at a; another host cannot take the code at b.
        let poll = Message::Poll {
            ticket: joined.ticket,
            after: joined.next,
        }
        .encode();
        a.handle_datagram(T0 + 3, addr(2), &poll);
        assert_eq!(answer(&drain(&mut a)).ticket.member, MemberId(1));
        b.handle_datagram(T0 + 3, addr(3), &register(8, vec![code(1)]));
        assert_eq!(
            drain(&mut b),
            vec![(addr(3), Message::RendezvousRefused(Refusal::Taken(code(1))))]
        );
    }
}
