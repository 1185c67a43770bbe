//! [`Reach`]: a process's way to the other members of its match, found by
//! a code, sans-IO. It sits between the socket and whatever plays the
//! match (the match setup, the session): every datagram in and out passes
//! through it.
//!
//! What it does, in order:
//! - asks the rendezvous: a host registers its codes' public parts (and
//!   refreshes them while it plays, or they expire), a joiner looks its
//!   code up; the answer makes it a member of the match, with a ticket for
//!   the relay and the match's key for probes, and lists the members it
//!   talks to (a spectator: the host alone);
//! - takes a place at the relay with its ticket (`place.rs`), so that every
//!   member can be reached from the first moment, and again whenever a
//!   direct path fails;
//! - punches: probes every candidate address of every member it talks to,
//!   paced, for a bounded time, while they do the same (`contact.rs`); the
//!   first candidate whose probe comes back answered is the direct path,
//!   and it carries the traffic from then on (direct wins);
//! - maps: the process above names each member by one made-up address
//!   ([`mapped`]), and the reach layer sends what goes to it on the
//!   member's direct path, or through the relay, and hands up what comes
//!   from either under that address. A path that dies (a NAT that rebound,
//!   a route that broke) falls back to the relay and punching starts again
//!   — the session sees the same address throughout, so a path change
//!   costs a few late datagrams, never a desync or a lost frame (inputs are
//!   redundant until acked);
//! - polls the rendezvous every few seconds: new members, members whose
//!   address moved (a rebinding NAT shows up there), a fresh ticket.
//!
//! Datagrams to and from an address that is not a mapped one pass through
//! unchanged (a joiner on the same LAN that joined by address, say).
//!
//! Call order, as every sans-IO part of lockstep: feed each datagram
//! received to [`Reach::handle_datagram`] and hand up what it gives back;
//! pass each datagram to send through [`Reach::send`]; call
//! [`Reach::handle_timeout`] when [`Reach::poll_timeout`] is due; drain
//! [`Reach::poll_transmit`] and [`Reach::poll_event`]. Time is any
//! monotonic clock in microseconds.
//!
//! Invariants: bounded state (contacts by the rendezvous's member bound,
//! candidates per contact, queued datagrams); every wait bounded
//! ([`ReachTiming`]); nothing here reads a clock, owns a socket or panics
//! on any datagram.

mod contact;
mod mapped;
mod place;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

pub use contact::{Contact, MAX_KNOWN, Path};
pub use mapped::{mapped, member_of};

use crate::Transmit;
use crate::code::CodeId;
use crate::ids::{MatchId, MatchKey, MemberId, Owner, Role};
use crate::message::{
    Answer, Entry, Lookup, MAX_LOCALS, Message, Probe, Refusal, Register, RelayRefusal,
};
use crate::ticket::Ticket;
use crate::wire::{DATA_HEADER_BYTES, Kind, is_reach};
use contact::Direct;
use place::{Place, PlaceState};

/// Datagrams held for members no path reaches yet.
pub const MAX_PENDING: usize = 32;
/// Events held for the app (the oldest go first when it does not read them).
pub const MAX_EVENTS: usize = 64;

/// The reach layer's waits, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReachTiming {
    /// A registration or lookup is asked again this often until answered.
    pub ask_every: u64,
    /// ...this many times, then [`ReachEvent::NoAnswer`].
    pub ask_attempts: u32,
    /// A member polls the rendezvous (a host refreshes its registration)
    /// this often.
    pub poll_every: u64,
    /// A punching round (a probe to every candidate) this often.
    pub probe_every: u64,
    /// Punching lasts this long without finding a path; 0 turns direct
    /// paths off (no probe sent or answered: every member through the
    /// relay).
    pub punch_micros: u64,
    /// A probe goes on a direct path when nothing else went for this long.
    pub keepalive: u64,
    /// A direct path that brought nothing for this long is given up.
    pub dead: u64,
    /// An unanswered `Allocate` is sent again after this long.
    pub relay_retry: u64,
    /// A place at the relay is refreshed this often.
    pub relay_refresh: u64,
}

impl Default for ReachTiming {
    fn default() -> ReachTiming {
        ReachTiming {
            ask_every: 400_000,
            ask_attempts: 12,
            poll_every: 2_000_000,
            probe_every: 100_000,
            punch_micros: 6_000_000,
            keepalive: 250_000,
            dead: 1_000_000,
            relay_retry: 300_000,
            relay_refresh: 10_000_000,
        }
    }
}

/// What a process asks the rendezvous for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// To file its match under these codes' public parts (the seat code's
    /// first), refreshed with `owner`.
    Host {
        /// The registration secret.
        owner: Owner,
        /// The codes' public parts.
        codes: Vec<CodeId>,
    },
    /// The match filed under this code's public part.
    Join {
        /// The code's public part.
        code: CodeId,
    },
}

/// What happened, for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReachEvent {
    /// The rendezvous answered for the first time: this process is
    /// `member` of `match_id` (a host: its match is registered).
    Joined {
        /// Its match.
        match_id: MatchId,
        /// Its number.
        member: MemberId,
        /// Its role.
        role: Role,
        /// Where the rendezvous sees it.
        observed: SocketAddr,
    },
    /// The rendezvous refused (before the first answer this ends the
    /// asking: a code nobody filed, a code another match holds...).
    Refused(Refusal),
    /// The rendezvous never answered.
    NoAnswer,
    /// A member to talk to appeared.
    Member {
        /// Who.
        member: MemberId,
        /// Its role.
        role: Role,
    },
    /// A member is reached another way now (direct wins; the relay when
    /// punching found nothing or a direct path died).
    Path {
        /// Who.
        member: MemberId,
        /// How.
        path: Path,
    },
    /// The relay holds this process's place (again).
    Relay {
        /// Where the relay sees this process.
        observed: SocketAddr,
    },
}

impl core::fmt::Display for ReachEvent {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReachEvent::Joined {
                member,
                role: Role::Host,
                observed,
                ..
            } => write!(
                f,
                "registered at the rendezvous as {member}; it sees this host at {observed}"
            ),
            ReachEvent::Joined {
                member,
                role,
                observed,
                ..
            } => write!(
                f,
                "found the match at the rendezvous: {member} ({}); it sees this process at {observed}",
                role_word(*role)
            ),
            ReachEvent::Refused(r) => write!(f, "the rendezvous refused: {r}"),
            ReachEvent::NoAnswer => f.write_str("the rendezvous does not answer"),
            ReachEvent::Member { member, role } => {
                write!(f, "{member} ({}) is in the match", role_word(*role))
            }
            ReachEvent::Path {
                member,
                path: Path::Direct(addr),
            } => write!(f, "{member}: direct path to {addr}"),
            ReachEvent::Path {
                member,
                path: Path::Relayed,
            } => write!(f, "{member}: through the relay"),
            ReachEvent::Relay { observed } => {
                write!(
                    f,
                    "the relay holds this process's place (it sees it at {observed})"
                )
            }
        }
    }
}

/// A role in a line for a person.
pub fn role_word(role: Role) -> &'static str {
    match role {
        Role::Host => "host",
        Role::Seat => "seat",
        Role::Spectator => "spectator",
    }
}

/// What a datagram received turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inbound<'a> {
    /// The reach layer's own (a probe, the rendezvous, the relay's
    /// answers): nothing to hand up.
    Own,
    /// For the process above, as coming from `from` (a member's mapped
    /// address when it is a member's).
    Pass {
        /// Who it is from.
        from: SocketAddr,
        /// Its bytes.
        bytes: &'a [u8],
    },
}

/// Counters of the reach layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReachStats {
    /// Datagrams sent to members on direct paths.
    pub direct_sent: u64,
    /// Datagrams sent to members through the relay.
    pub relayed_sent: u64,
    /// Datagrams from members on direct paths.
    pub direct_received: u64,
    /// Datagrams from members through the relay.
    pub relayed_received: u64,
    /// Datagrams dropped: no path and the queue full.
    pub dropped: u64,
    /// Probes sent (punching and keepalives).
    pub probes_sent: u64,
    /// Reach messages refused (bad tag, wrong sender, undecodable).
    pub refused: u64,
}

/// Queues `event`, the oldest going first past [`MAX_EVENTS`].
fn raise(events: &mut VecDeque<ReachEvent>, event: ReachEvent) {
    if events.len() >= MAX_EVENTS {
        events.pop_front();
    }
    events.push_back(event);
}

/// This process's place in its match, once the rendezvous answered.
#[derive(Debug, Clone, Copy)]
struct Me {
    member: MemberId,
    role: Role,
    ticket: Ticket,
    key: MatchKey,
    observed: SocketAddr,
    /// Whether the match is gone from the rendezvous (polling stopped).
    gone: bool,
}

/// A process's way to the other members. See the module documentation.
#[derive(Debug)]
pub struct Reach {
    timing: ReachTiming,
    rendezvous: SocketAddr,
    locals: Vec<SocketAddr>,
    ask: Ask,
    /// Before the first answer: attempts made, when the next goes.
    asking: Option<(u32, u64)>,
    failed: bool,
    me: Option<Me>,
    after: u16,
    next_poll: u64,
    place: Place,
    contacts: BTreeMap<MemberId, Contact>,
    pending: VecDeque<(MemberId, Vec<u8>)>,
    nonce: u32,
    out: VecDeque<Transmit>,
    events: VecDeque<ReachEvent>,
    stats: ReachStats,
}

impl Reach {
    /// A host filing its match under `codes`' public parts (the seat
    /// code's first) at `rendezvous`, offering `locals` as its local
    /// addresses.
    pub fn host(
        now: u64,
        rendezvous: SocketAddr,
        locals: Vec<SocketAddr>,
        owner: Owner,
        codes: Vec<CodeId>,
        timing: ReachTiming,
    ) -> Reach {
        Reach::new(now, rendezvous, locals, Ask::Host { owner, codes }, timing)
    }

    /// A process looking up the match filed under `code` at `rendezvous`.
    pub fn join(
        now: u64,
        rendezvous: SocketAddr,
        locals: Vec<SocketAddr>,
        code: CodeId,
        timing: ReachTiming,
    ) -> Reach {
        Reach::new(now, rendezvous, locals, Ask::Join { code }, timing)
    }

    fn new(
        now: u64,
        rendezvous: SocketAddr,
        mut locals: Vec<SocketAddr>,
        ask: Ask,
        timing: ReachTiming,
    ) -> Reach {
        locals.truncate(MAX_LOCALS);
        Reach {
            timing,
            rendezvous,
            locals,
            ask,
            asking: Some((0, now)),
            failed: false,
            me: None,
            after: 0,
            next_poll: now,
            place: Place::new(),
            contacts: BTreeMap::new(),
            pending: VecDeque::new(),
            nonce: 0,
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: ReachStats::default(),
        }
    }

    /// The address the host goes by (for a joiner's setup).
    pub fn host_address(&self) -> SocketAddr {
        mapped(MemberId::HOST)
    }

    /// This process's number and role, once the rendezvous answered.
    pub fn me(&self) -> Option<(MemberId, Role)> {
        self.me.map(|m| (m.member, m.role))
    }

    /// Where the rendezvous saw this process last.
    pub fn observed(&self) -> Option<SocketAddr> {
        self.me.map(|m| m.observed)
    }

    /// The match, once the rendezvous answered.
    pub fn match_id(&self) -> Option<MatchId> {
        self.me.map(|m| m.ticket.match_id)
    }

    /// Whether the asking failed (refused, or no answer): nothing more will
    /// happen.
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    /// How `member` is reached now, if it is a contact.
    pub fn path(&self, member: MemberId) -> Option<Path> {
        self.contacts.get(&member).map(Contact::path)
    }

    /// The members this process talks to.
    pub fn contacts(&self) -> impl Iterator<Item = &Contact> {
        self.contacts.values()
    }

    /// The relay, and whether it holds this process's place now.
    pub fn relay(&self) -> (Option<SocketAddr>, bool) {
        (self.place.relay(), self.place.is_placed())
    }

    /// Its counters.
    pub fn stats(&self) -> ReachStats {
        self.stats
    }

    /// The next datagram of its own to send.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }

    /// The next thing that happened.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ReachEvent> {
        self.events.pop_front()
    }

    fn raise(&mut self, event: ReachEvent) {
        raise(&mut self.events, event);
    }

    /// When [`Reach::handle_timeout`] is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.failed {
            return None;
        }
        let mut next = Vec::with_capacity(4 + self.contacts.len());
        if let Some((_, at)) = self.asking {
            next.push(at);
        }
        if self.me.is_some_and(|m| !m.gone) {
            next.push(self.next_poll);
        }
        if self.me.is_some() {
            next.extend(self.place.due(self.timing.relay_refresh));
        }
        for c in self.contacts.values() {
            if let Some(d) = c.direct {
                next.push(d.heard.saturating_add(self.timing.dead));
                next.push(d.sent.saturating_add(self.timing.keepalive));
            }
            if let Some(p) = c.punch {
                next.push(p.next.min(p.until));
            }
        }
        next.into_iter().min()
    }

    fn request(&self) -> Message<'static> {
        match (&self.ask, &self.me) {
            (Ask::Host { owner, codes }, _) => Message::Register(Register {
                owner: *owner,
                codes: codes.clone(),
                locals: self.locals.clone(),
                after: self.after,
            }),
            (Ask::Join { .. }, Some(me)) => Message::Poll {
                ticket: me.ticket,
                after: self.after,
            },
            (Ask::Join { code }, None) => Message::Lookup(Lookup {
                code: *code,
                locals: self.locals.clone(),
            }),
        }
    }

    fn send_own(&mut self, to: SocketAddr, message: &Message<'_>) {
        self.out.push_back(Transmit {
            to,
            bytes: message.encode(),
        });
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.failed {
            return;
        }
        if let Some((attempts, at)) = self.asking {
            if at <= now {
                if attempts >= self.timing.ask_attempts {
                    self.asking = None;
                    self.failed = true;
                    self.raise(ReachEvent::NoAnswer);
                    return;
                }
                let m = self.request();
                self.send_own(self.rendezvous, &m);
                self.asking = Some((attempts + 1, now.saturating_add(self.timing.ask_every)));
            }
        }
        if self.me.is_some_and(|m| !m.gone) && self.next_poll <= now {
            let m = self.request();
            self.send_own(self.rendezvous, &m);
            self.next_poll = now.saturating_add(self.timing.poll_every);
        }
        self.place_timers(now);
        self.contact_timers(now);
    }

    fn place_timers(&mut self, now: u64) {
        let (Some(me), Some(relay)) = (self.me, self.place.relay()) else {
            return;
        };
        if self
            .place
            .due(self.timing.relay_refresh)
            .is_none_or(|t| t > now)
        {
            return;
        }
        let allocate = Message::Allocate {
            ticket: me.ticket,
            cookie: self.place.cookie,
        };
        self.send_own(relay, &allocate);
        match &mut self.place.state {
            PlaceState::Asking { next } => *next = now.saturating_add(self.timing.relay_retry),
            PlaceState::Placed { refreshed, .. } => *refreshed = now,
            PlaceState::Unknown => {}
        }
    }

    fn contact_timers(&mut self, now: u64) {
        let Some(me) = self.me else {
            return;
        };
        let timing = self.timing;
        let mut probes = Vec::new();
        let mut events = Vec::new();
        for c in self.contacts.values_mut() {
            if let Some(d) = &mut c.direct {
                if now.saturating_sub(d.heard) >= timing.dead {
                    c.direct = None;
                    events.push(ReachEvent::Path {
                        member: c.member,
                        path: Path::Relayed,
                    });
                    c.punch(now, timing.punch_micros);
                } else if now.saturating_sub(d.sent) >= timing.keepalive {
                    d.sent = now;
                    probes.push((c.member, d.address));
                }
            }
            if let Some(p) = &mut c.punch {
                if now >= p.until {
                    c.punch = None;
                    if c.direct.is_none() && !c.failed {
                        c.failed = true;
                        events.push(ReachEvent::Path {
                            member: c.member,
                            path: Path::Relayed,
                        });
                    }
                } else if p.next <= now {
                    p.next = now.saturating_add(timing.probe_every);
                    probes.extend(c.candidates.iter().map(|a| (c.member, *a)));
                }
            }
        }
        for e in events {
            self.raise(e);
        }
        for (to, address) in probes {
            self.probe(me, to, address);
        }
    }

    fn probe(&mut self, me: Me, to: MemberId, address: SocketAddr) {
        self.nonce = self.nonce.wrapping_add(1);
        let p = Probe::tagged(&me.key, false, me.member, to, self.nonce, address);
        self.stats.probes_sent += 1;
        self.send_own(address, &Message::Probe(p));
    }

    /// A datagram from `from` at `now`: the reach layer's own, or what to
    /// hand up (see [`Inbound`]).
    pub fn handle_datagram<'a>(
        &mut self,
        now: u64,
        from: SocketAddr,
        bytes: &'a [u8],
    ) -> Inbound<'a> {
        if !is_reach(bytes) {
            let owner = self.contacts.values_mut().find(|c| c.owns(from));
            return match owner {
                Some(c) => {
                    if let Some(d) = &mut c.direct {
                        if d.address == from {
                            d.heard = now;
                        }
                    }
                    self.stats.direct_received += 1;
                    Inbound::Pass {
                        from: mapped(c.member),
                        bytes,
                    }
                }
                None => Inbound::Pass { from, bytes },
            };
        }
        let message = match Message::decode(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.stats.refused += 1;
                return Inbound::Own;
            }
        };
        let from_rendezvous = from == self.rendezvous;
        let from_relay = self.place.relay() == Some(from);
        match message {
            Message::Probe(p) => self.on_probe(now, from, &p),
            Message::ProbeAck(p) => self.on_probe_ack(now, from, &p),
            Message::Answer(a) if from_rendezvous => self.on_answer(now, a),
            Message::Introduce {
                match_id, entries, ..
            } if from_rendezvous => {
                if self.me.is_some_and(|m| m.ticket.match_id == match_id) {
                    self.apply(now, &entries);
                }
            }
            Message::RendezvousRefused(r) if from_rendezvous => self.on_refused(r),
            Message::RelayChallenge { cookie } if from_relay => {
                self.place.cookie = Some(cookie);
                if let Some(me) = self.me {
                    self.send_own(
                        from,
                        &Message::Allocate {
                            ticket: me.ticket,
                            cookie: Some(cookie),
                        },
                    );
                }
            }
            Message::Allocated { observed, .. } if from_relay => {
                if !self.place.is_placed() {
                    self.raise(ReachEvent::Relay { observed });
                }
                let refreshed = match self.place.state {
                    PlaceState::Placed { refreshed, .. } => refreshed,
                    _ => now,
                };
                self.place.state = PlaceState::Placed {
                    observed,
                    refreshed,
                };
                self.flush_pending();
            }
            Message::RelayRefused(RelayRefusal::NoAllocation) if from_relay => {
                self.place.lost(now);
            }
            Message::RelayRefused(_) if from_relay => {
                // A ticket the relay refused: the next poll brings a newer one.
                self.place.state = PlaceState::Asking {
                    next: now.saturating_add(self.timing.poll_every),
                };
            }
            Message::Deliver {
                from: member,
                payload,
            } if from_relay && !is_reach(payload) => {
                self.stats.relayed_received += 1;
                return Inbound::Pass {
                    from: mapped(member),
                    bytes: payload,
                };
            }
            _ => self.stats.refused += 1,
        }
        Inbound::Own
    }

    fn on_answer(&mut self, now: u64, a: Answer) {
        let first = self.me.is_none();
        if first {
            self.asking = None;
            self.raise(ReachEvent::Joined {
                match_id: a.ticket.match_id,
                member: a.ticket.member,
                role: a.role,
                observed: a.observed,
            });
            self.next_poll = now.saturating_add(self.timing.poll_every);
        } else if self
            .me
            .is_some_and(|m| m.ticket.match_id != a.ticket.match_id)
        {
            // An answer about another match (a registration that expired
            // and was filed anew): start over with it.
            self.contacts.clear();
            self.after = 0;
        }
        self.me = Some(Me {
            member: a.ticket.member,
            role: a.role,
            ticket: a.ticket,
            key: a.key,
            observed: a.observed,
            gone: false,
        });
        self.place.use_relay(a.ticket.relay(), now);
        self.apply(now, &a.entries);
        self.after = a.next;
        if a.more {
            self.next_poll = now;
        }
    }

    fn on_refused(&mut self, r: Refusal) {
        match (self.me.is_some(), r) {
            (false, Refusal::Busy) => {}
            (false, r) => {
                self.asking = None;
                self.failed = true;
                self.raise(ReachEvent::Refused(r));
            }
            (true, Refusal::Gone) => {
                if let Some(me) = &mut self.me {
                    if !me.gone {
                        me.gone = true;
                        self.raise(ReachEvent::Refused(Refusal::Gone));
                    }
                }
            }
            (true, _) => {}
        }
    }

    /// Takes in what the rendezvous says about other members.
    fn apply(&mut self, now: u64, entries: &[Entry]) {
        let Some(me) = self.me else {
            return;
        };
        for e in entries {
            if e.member == me.member || !me.role.talks_to(e.role) {
                continue;
            }
            let known = self.contacts.contains_key(&e.member);
            if !known && self.contacts.len() >= crate::store::MAX_MEMBERS {
                continue;
            }
            let c = self
                .contacts
                .entry(e.member)
                .or_insert_with(|| Contact::new(e.member, Some(e.role)));
            if !known || c.role.is_none() {
                c.role = Some(e.role);
                raise(
                    &mut self.events,
                    ReachEvent::Member {
                        member: e.member,
                        role: e.role,
                    },
                );
            }
            if c.seq == Some(e.seq) {
                continue;
            }
            c.seq = Some(e.seq);
            let mut new = false;
            for a in &e.candidates {
                new |= c.learn(*a);
            }
            if (new || !known) && c.direct.is_none() {
                c.punch(now, self.timing.punch_micros);
            }
        }
    }

    fn on_probe(&mut self, now: u64, from: SocketAddr, p: &Probe) {
        let Some(me) = self.me else {
            return;
        };
        if self.timing.punch_micros == 0 {
            return;
        }
        if p.to != me.member || p.from == me.member || !me.key.verifies(false, p) {
            self.stats.refused += 1;
            return;
        }
        let ack = Probe::tagged(&me.key, true, me.member, p.from, p.nonce, from);
        self.send_own(from, &Message::ProbeAck(ack));
        if !self.contacts.contains_key(&p.from) && self.contacts.len() >= crate::store::MAX_MEMBERS
        {
            return;
        }
        let c = self
            .contacts
            .entry(p.from)
            .or_insert_with(|| Contact::new(p.from, None));
        c.saw(from);
        let answer_back = match &mut c.direct {
            Some(d) if d.address == from => {
                d.heard = now;
                false
            }
            Some(_) => false,
            None => {
                c.learn(from);
                true
            }
        };
        if answer_back {
            // The other side reached us: probe it back at once, through the
            // opening its probe just made (a triggered check).
            self.probe(me, p.from, from);
        }
    }

    fn on_probe_ack(&mut self, now: u64, from: SocketAddr, p: &Probe) {
        let Some(me) = self.me else {
            return;
        };
        if self.timing.punch_micros == 0 {
            return;
        }
        if p.to != me.member || p.from == me.member || !me.key.verifies(true, p) {
            self.stats.refused += 1;
            return;
        }
        let Some(c) = self.contacts.get_mut(&p.from) else {
            return;
        };
        c.saw(from);
        match &mut c.direct {
            Some(d) => {
                if d.address == from {
                    d.heard = now;
                }
            }
            None => {
                c.direct = Some(Direct {
                    address: from,
                    heard: now,
                    sent: now,
                });
                c.punch = None;
                c.failed = false;
                self.raise(ReachEvent::Path {
                    member: p.from,
                    path: Path::Direct(from),
                });
                self.flush_pending();
            }
        }
    }

    /// Where a datagram for `to` goes now, if anywhere.
    fn route(&mut self, now: u64, member: MemberId, bytes: Vec<u8>) -> Result<Transmit, Vec<u8>> {
        if let Some(d) = self
            .contacts
            .get_mut(&member)
            .and_then(|c| c.direct.as_mut())
        {
            d.sent = now;
            self.stats.direct_sent += 1;
            return Ok(Transmit {
                to: d.address,
                bytes,
            });
        }
        match self.place.relay() {
            Some(relay) if self.place.is_placed() => {
                let mut framed = Vec::with_capacity(DATA_HEADER_BYTES + bytes.len());
                framed.push(Kind::Send.byte());
                framed.extend_from_slice(&member.0.to_le_bytes());
                framed.extend_from_slice(&bytes);
                self.stats.relayed_sent += 1;
                Ok(Transmit {
                    to: relay,
                    bytes: framed,
                })
            }
            _ => Err(bytes),
        }
    }

    /// A datagram the process above sends to `to` at `now`: where it goes
    /// now (`None`: held until a path to the member opens, or dropped if
    /// too many wait).
    pub fn send(&mut self, now: u64, to: SocketAddr, bytes: Vec<u8>) -> Option<Transmit> {
        let Some(member) = member_of(to) else {
            return Some(Transmit { to, bytes });
        };
        match self.route(now, member, bytes) {
            Ok(t) => Some(t),
            Err(bytes) => {
                if self.pending.len() >= MAX_PENDING {
                    self.pending.pop_front();
                    self.stats.dropped += 1;
                }
                self.pending.push_back((member, bytes));
                None
            }
        }
    }

    /// Sends what waited for a path that now exists.
    fn flush_pending(&mut self) {
        let waiting = std::mem::take(&mut self.pending);
        for (member, bytes) in waiting {
            // The clock only matters for a direct path's liveness, which a
            // later send refreshes.
            let now = self
                .contacts
                .get(&member)
                .and_then(|c| c.direct)
                .map_or(0, |d| d.sent);
            match self.route(now, member, bytes) {
                Ok(t) => self.out.push_back(t),
                Err(bytes) => self.pending.push_back((member, bytes)),
            }
        }
    }
}
