//! [`Relay`]: one seat's service to its spectators. It keeps the frames
//! released since the oldest one any spectator still lacks, hands each new
//! spectator a settled state, and sends each one a [`Feed`] per tick.
//!
//! Invariants:
//! - Nothing a spectator sends reaches the seat's session or its inputs: the
//!   relay reads only handshakes, feed acks, state-transfer acks and
//!   goodbyes, each checked against the spectator's token and sequence
//!   window before it changes anything.
//! - The frames held are consecutive, `frames_from ..` up to the newest
//!   pushed; they reach back to the settled frame a new spectator's state
//!   is taken from and to every spectator's first missing frame (a spectator
//!   lagging more than `max_lag_frames` is dropped instead).
//! - A state is only ever sent to a spectator that echoed the relay's token
//!   (its address answered), and the relay's handshake reply is never
//!   larger than the handshake it answers.

use std::collections::{BTreeMap, VecDeque};

use lockstep_fx::Checksum;

use super::{SpectateConfig, SpectatorId, SpectatorTransmit};
use crate::inbound::{Opening, open_packet};
use crate::input::Input;
use crate::packet::{
    Feed, FeedAck, MAX_INPUTS_PER_PACKET, MAX_PACKET, MAX_SHORT_CHECKSUMS, Message, Packet,
    ResyncAck, Routed, ShortChecksums, SnapshotAck, SnapshotPart, SpectateHello,
};
use crate::seal::{Identity, Link, PairKeys, PublicKey, SealError};
use crate::seat::SeatId;
use crate::seq::{SeqWindow, unwrap_frame, wire_frame};
use crate::state_transfer::Outgoing;
use crate::stats::{Dropped, KindCount};
use crate::time::Instant;

/// Why a spectator's slot was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpectatorLeft {
    /// It said goodbye.
    Disconnected,
    /// Nothing from it for `timeout_micros`.
    TimedOut,
    /// It lagged more than `max_lag_frames` behind.
    TooSlow,
}

impl std::fmt::Display for SpectatorLeft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SpectatorLeft::Disconnected => "said goodbye",
            SpectatorLeft::TimedOut => "went silent",
            SpectatorLeft::TooSlow => "fell too far behind",
        })
    }
}

/// What the relay tells its app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayEvent {
    /// A spectator completed the handshake; its state transfer follows.
    Joined {
        /// Which.
        spectator: SpectatorId,
    },
    /// A spectator's slot was closed.
    Left {
        /// Which.
        spectator: SpectatorId,
        /// Why.
        reason: SpectatorLeft,
    },
    /// A spectator's handshake named another game, seat count or tick.
    Incompatible {
        /// Which.
        spectator: SpectatorId,
    },
    /// The arbiter answered [`Relay::ask`]: its short checksum of `frame`,
    /// or `None` when it did not step it.
    Arbiter {
        /// The frame asked about.
        frame: u32,
        /// Its checksum of it.
        short: Option<u64>,
    },
    /// A spectator watching snapshots acked one, asked for a new stream or
    /// ended it (answer with [`Relay::send_snapshot_part`]).
    SnapshotAck {
        /// Which.
        spectator: SpectatorId,
        /// Its ack.
        ack: SnapshotAck,
    },
}

/// The relay's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Datagrams sent to spectators.
    pub sent: KindCount,
    /// Datagrams received from spectators.
    pub received: KindCount,
    /// Datagrams refused, by reason.
    pub dropped: Dropped,
    /// States sent in full (acked to the last chunk).
    pub states_served: u64,
}

/// One spectator.
#[derive(Debug)]
struct Slot {
    /// The spectator's token: every packet to it carries it.
    their_token: u32,
    /// Ours for it: every packet from it must carry it.
    our_token: u32,
    /// It echoed our token: its address answers.
    validated: bool,
    /// It watches snapshots (no state, no feed).
    snapshots: bool,
    /// A handshake reply is due.
    hello_due: bool,
    /// The number of our next packet to it; the wire carries its low 16
    /// bits, a sealed packet uses it as its nonce.
    next_seq: u64,
    seen: SeqWindow,
    last_recv: Instant,
    /// It asked for a state and has not got one yet.
    wants_state: bool,
    /// The first frame after the state sent to it.
    from: u32,
    /// The first frame it lacks, as its newest ack says (the state's frame
    /// + 1 before any ack).
    next: Option<u32>,
    /// The state transfer under way, and the id of the last one.
    transfer: Option<Outgoing>,
    transfer_id: u8,
}

/// One seat's service to its spectators (sans-IO, like the session): feed
/// it the spectators' datagrams, the frames released and the frames
/// settled; send what [`Relay::poll_transmit`] gives.
#[derive(Debug)]
pub struct Relay<I> {
    cfg: SpectateConfig,
    seat: SeatId,
    token_seed: u32,
    tokens_issued: u32,
    frames_from: u32,
    frames: VecDeque<Vec<I>>,
    settled: VecDeque<(u32, u64)>,
    slots: BTreeMap<SpectatorId, Slot>,
    /// Sealed relays: our key pair, and the link to each spectator the app
    /// admitted with its public key.
    identity: Option<Identity>,
    links: BTreeMap<SpectatorId, Link>,
    next_feed_at: Instant,
    /// The spectator the app named the match's arbiter, if any.
    arbiter: Option<SpectatorId>,
    /// The frame whose checksum the arbiter is asked for, until it answers.
    ask: Option<u32>,
    events: VecDeque<RelayEvent>,
    out: VecDeque<SpectatorTransmit>,
    stats: RelayStats,
}

impl<I: Input> Relay<I> {
    /// A relay run by `seat`; `token_seed` makes the tokens it gives its
    /// spectators differ from another relay's (the seat's session token is a
    /// fine seed).
    pub fn new(cfg: SpectateConfig, seat: SeatId, token_seed: u32) -> Relay<I> {
        Relay {
            cfg,
            seat,
            token_seed,
            tokens_issued: 0,
            frames_from: 0,
            frames: VecDeque::new(),
            settled: VecDeque::new(),
            slots: BTreeMap::new(),
            identity: None,
            links: BTreeMap::new(),
            next_feed_at: Instant::ZERO,
            arbiter: None,
            ask: None,
            events: VecDeque::new(),
            out: VecDeque::new(),
            stats: RelayStats::default(),
        }
    }

    /// The same relay, sealing every packet with keys agreed from
    /// `identity` (the seat's key pair): a spectator's datagrams are then
    /// taken only once the app has [admitted](Relay::admit) its public key.
    pub fn sealed(mut self, identity: Identity) -> Relay<I> {
        self.identity = Some(identity);
        self
    }

    /// Admits spectator `spectator` (the app's id for its address) with the
    /// public key it gave at match setup. Needed, and only meaningful, for a
    /// sealed relay.
    pub fn admit(&mut self, spectator: SpectatorId, key: PublicKey) -> Result<(), SealError> {
        if let Some(identity) = &self.identity {
            let keys = PairKeys::agree(identity, &key)?;
            self.links.insert(spectator, Link::new(keys, 0));
        }
        Ok(())
    }

    /// Forgets spectator `spectator`: its key (an admitted spectator that
    /// never completed its handshake) and its slot, if it has one, without
    /// an event. Its datagrams are refused from then on.
    pub fn revoke(&mut self, spectator: SpectatorId) {
        self.links.remove(&spectator);
        self.slots.remove(&spectator);
        self.trim();
    }

    /// Names `spectator` the match's arbiter: the one spectator [`Relay::ask`]
    /// puts the seats' question to. The app decides who may be it (the
    /// match setup admits one arbiter, when the match has one).
    pub fn name_arbiter(&mut self, spectator: SpectatorId) {
        self.arbiter = Some(spectator);
    }

    /// Whether the arbiter is connected and stepping frames (it holds a
    /// state), so that a question to it can be answered.
    pub fn has_arbiter(&self) -> bool {
        self.arbiter
            .and_then(|id| self.slots.get(&id))
            .is_some_and(|s| s.validated && !s.snapshots && s.next.is_some())
    }

    /// Asks the arbiter for its checksum of `frame` in every feed until it
    /// answers ([`RelayEvent::Arbiter`]) or the question is withdrawn
    /// (`None`).
    pub fn ask(&mut self, frame: Option<u32>) {
        self.ask = frame;
    }

    /// The counters.
    pub fn stats(&self) -> &RelayStats {
        &self.stats
    }

    /// Spectators holding a slot (handshake done or not).
    pub fn spectators(&self) -> usize {
        self.slots.len()
    }

    /// The next thing that happened, in order.
    pub fn poll_event(&mut self) -> Option<RelayEvent> {
        self.events.pop_front()
    }

    /// Records frame `frame`'s inputs, every seat's. Frames come in order;
    /// one already held (a re-simulated frame) is ignored, and a gap (this
    /// seat loaded a state beyond the frames it held) starts over from
    /// `frame`.
    pub fn push_frame(&mut self, frame: u32, inputs: &[I]) {
        let next = self.frames_from + self.frames.len() as u32;
        if !self.frames.is_empty() && frame < next {
            return;
        }
        if self.frames.is_empty() || frame > next {
            self.frames.clear();
            self.frames_from = frame;
        }
        self.frames.push_back(inputs.to_vec());
    }

    /// Records that every frame through `frame` is settled (its checksum
    /// agreed), `checksum` being `frame`'s. Call it for each settled frame
    /// in order: the feed carries the newest few consecutive ones.
    pub fn settle(&mut self, frame: u32, checksum: Checksum) {
        match self.settled.back() {
            Some((f, _)) if *f >= frame => return,
            // The feed sends consecutive frames' checksums: start over
            // after a gap.
            Some((f, _)) if *f + 1 != frame => self.settled.clear(),
            _ => {}
        }
        self.settled.push_back((frame, checksum.short().0));
        while self.settled.len() > MAX_SHORT_CHECKSUMS as usize {
            self.settled.pop_front();
        }
        self.trim();
    }

    /// Whether a spectator is waiting for a state: answer with
    /// [`Relay::provide_state`] and the newest settled state.
    pub fn wants_state(&self) -> bool {
        self.slots.values().any(|s| s.validated && s.wants_state)
    }

    /// Starts sending `state`, the exact state after the settled frame
    /// `frame`, to every spectator waiting for one. Its frames follow from
    /// `frame + 1`, so the relay must hold them: a state older than the
    /// frames held is refused (`false`).
    pub fn provide_state(&mut self, now: Instant, frame: u32, state: &[u8]) -> bool {
        let held = frame + 1 >= self.frames_from
            && frame < self.frames_from + self.frames.len() as u32 + 1;
        if !held {
            return false;
        }
        for slot in self.slots.values_mut() {
            if slot.validated && slot.wants_state {
                slot.wants_state = false;
                slot.transfer_id = slot.transfer_id.wrapping_add(1);
                slot.transfer = Some(Outgoing::new(slot.transfer_id, frame, state, &[], now));
                slot.from = frame + 1;
                slot.next = Some(frame + 1);
            }
        }
        true
    }

    /// The spectators watching snapshots whose handshake completed.
    pub fn snapshot_spectators(&self) -> Vec<SpectatorId> {
        self.slots
            .iter()
            .filter(|(_, s)| s.validated && s.snapshots)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Sends `part` of a snapshot stream to spectator `to` (one watching
    /// snapshots); goes out at the next [`Relay::poll_transmit`]. `false`
    /// if `to` is not such a spectator.
    pub fn send_snapshot_part(&mut self, to: SpectatorId, part: SnapshotPart) -> bool {
        if !self
            .slots
            .get(&to)
            .is_some_and(|s| s.validated && s.snapshots)
        {
            return false;
        }
        self.send(to, Message::SnapshotPart(part));
        true
    }

    /// Feeds a datagram from spectator `from` (the app's id for its address).
    pub fn handle_datagram(&mut self, now: Instant, from: SpectatorId, bytes: &[u8]) {
        self.stats.received.packets += 1;
        self.stats.received.bytes += bytes.len() as u64;
        let opening = match self.identity {
            None => Opening::Plain,
            Some(_) => Opening::Sealed(self.links.get_mut(&from)),
        };
        let Some((packet, newest)) = open_packet::<I>(opening, bytes, &mut self.stats.dropped)
        else {
            return;
        };
        match packet {
            Packet::SpectateHello(_) if !newest => self.stats.dropped.duplicate += 1,
            Packet::SpectateHello(h) => self.on_hello(now, from, h),
            Packet::Routed(r) => self.on_routed(now, from, r),
            Packet::Hello(_) => self.stats.dropped.unexpected += 1,
        }
    }

    fn on_hello(&mut self, now: Instant, from: SpectatorId, h: SpectateHello) {
        if h.schema_hash != I::schema_hash()
            || h.seats != self.cfg.seats
            || u64::from(h.tick_micros) != self.cfg.tick_micros
        {
            self.stats.dropped.incompatible += 1;
            self.events
                .push_back(RelayEvent::Incompatible { spectator: from });
            return;
        }
        if h.token == 0 {
            self.stats.dropped.invalid += 1;
            return;
        }
        // Our reply is a SpectateHello too, one per SpectateHello received: every
        // SpectateHello has the same length (the encoding is canonical), so a
        // forged source address gets no more bytes than it sent.
        if !self.slots.contains_key(&from) {
            if self.slots.len() as u32 >= self.cfg.max_spectators {
                self.stats.dropped.unexpected += 1;
                return;
            }
            let our_token = self.issue_token();
            self.slots.insert(
                from,
                Slot {
                    their_token: h.token,
                    our_token,
                    validated: false,
                    snapshots: h.frame == SpectateHello::SNAPSHOTS,
                    hello_due: false,
                    next_seq: 0,
                    seen: SeqWindow::default(),
                    last_recv: now,
                    wants_state: false,
                    from: 0,
                    next: None,
                    transfer: None,
                    transfer_id: 0,
                },
            );
        }
        let Some(slot) = self.slots.get_mut(&from) else {
            return;
        };
        if h.token != slot.their_token {
            // Another process at the same address: start it over.
            slot.their_token = h.token;
            slot.snapshots = h.frame == SpectateHello::SNAPSHOTS;
            slot.validated = false;
            slot.next = None;
            slot.transfer = None;
        }
        slot.last_recv = now;
        if h.echo == slot.our_token {
            if !slot.validated {
                slot.validated = true;
                slot.wants_state = !slot.snapshots;
                self.events
                    .push_back(RelayEvent::Joined { spectator: from });
            }
        } else {
            slot.hello_due = true;
        }
    }

    fn on_routed(&mut self, now: Instant, from: SpectatorId, r: Routed<I>) {
        let Some(slot) = self.slots.get_mut(&from) else {
            self.stats.dropped.unknown_sender += 1;
            return;
        };
        if r.sender != self.seat {
            self.stats.dropped.unknown_sender += 1;
            return;
        }
        if r.token != slot.our_token || !slot.validated {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        if !self.stats.dropped.admit(slot.seen.check(r.seq, SEQ_JUMP)) {
            return;
        }
        let newest = self.frames_from + self.frames.len() as u32;
        let taken = match r.message {
            Message::FeedAck(ack) => {
                let asked = self.ask.filter(|_| self.arbiter == Some(from));
                if let (Some(frame), Some(answer)) = (asked, ack.answer) {
                    if answer.frame == wire_frame(frame) {
                        self.ask = None;
                        self.events.push_back(RelayEvent::Arbiter {
                            frame,
                            short: answer.short,
                        });
                    }
                }
                on_feed_ack(slot, ack, newest)
            }
            Message::ResyncAck(ack) => on_state_ack(now, slot, &ack, &mut self.stats),
            Message::SnapshotAck(ack) if slot.snapshots => {
                self.events.push_back(RelayEvent::SnapshotAck {
                    spectator: from,
                    ack,
                });
                Ok(())
            }
            Message::Disconnect(_) => {
                self.slots.remove(&from);
                self.events.push_back(RelayEvent::Left {
                    spectator: from,
                    reason: SpectatorLeft::Disconnected,
                });
                return;
            }
            _ => Err(()),
        };
        if taken.is_err() {
            self.stats.dropped.invalid += 1;
            return;
        }
        slot.seen.record(r.seq);
        slot.last_recv = now;
        self.trim();
    }

    /// Closes the slots of spectators silent for too long or lagging too
    /// far: call when `now` reaches [`Relay::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        let newest = self.frames_from + self.frames.len() as u32;
        let mut left = Vec::new();
        for (id, slot) in &self.slots {
            if now.since(slot.last_recv) > self.cfg.timeout_micros {
                left.push((*id, SpectatorLeft::TimedOut));
            } else if slot
                .next
                .is_some_and(|n| newest.saturating_sub(n) > self.cfg.max_lag_frames)
            {
                left.push((*id, SpectatorLeft::TooSlow));
            }
        }
        for (spectator, reason) in left {
            self.slots.remove(&spectator);
            self.events
                .push_back(RelayEvent::Left { spectator, reason });
        }
        self.trim();
    }

    /// When [`Relay::handle_timeout`] and [`Relay::poll_transmit`] next
    /// have something to do, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let oldest = self.slots.values().map(|s| s.last_recv).min()?;
        Some(
            oldest
                .plus(self.cfg.timeout_micros + 1)
                .min(self.next_feed_at),
        )
    }

    /// The next datagram for a spectator. Builds a round (handshake
    /// replies, a feed per spectator with a state, due state chunks) once
    /// per tick.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<SpectatorTransmit> {
        if self.out.is_empty() && now >= self.next_feed_at && !self.slots.is_empty() {
            self.next_feed_at = now.plus(self.cfg.tick_micros);
            self.build(now);
        }
        if self.out.is_empty() {
            // Handshake replies go out at once, not at the next tick.
            self.build_hellos();
        }
        let t = self.out.pop_front()?;
        self.stats.sent.packets += 1;
        self.stats.sent.bytes += t.bytes.len() as u64;
        Some(t)
    }

    fn build_hellos(&mut self) {
        let newest = (self.frames_from + self.frames.len() as u32).saturating_sub(1);
        for (id, slot) in &mut self.slots {
            if std::mem::take(&mut slot.hello_due) {
                let hello = SpectateHello {
                    seq: 0,
                    schema_hash: I::schema_hash(),
                    seats: self.cfg.seats,
                    tick_micros: self.cfg.tick_micros as u32,
                    token: slot.our_token,
                    echo: slot.their_token,
                    frame: newest,
                };
                let bytes = seal(slot, self.links.get(id), Packet::<I>::SpectateHello(hello));
                self.out.push_back(SpectatorTransmit { to: *id, bytes });
            }
        }
    }

    fn build(&mut self, now: Instant) {
        self.build_hellos();
        let mut budget = self.cfg.chunks_per_tick;
        let ids: Vec<SpectatorId> = self.slots.keys().copied().collect();
        for id in ids {
            let Some(slot) = self.slots.get(&id) else {
                continue;
            };
            let Some(next) = slot.next.filter(|_| slot.validated) else {
                continue;
            };
            let mut feed = self.feed_from(next);
            if self.arbiter == Some(id) {
                feed.ask = self.ask.map(wire_frame);
            }
            let mut chunks = Vec::new();
            if let Some(slot) = self.slots.get_mut(&id) {
                if let Some(t) = &mut slot.transfer {
                    chunks = t.due_chunks(now, self.cfg.chunk_rto_micros, budget);
                    budget -= chunks.len() as u32;
                }
            }
            for c in chunks {
                self.send(id, Message::ResyncChunk(c));
            }
            self.send(id, Message::Feed(feed));
        }
    }

    /// The feed for a spectator lacking frames `next ..`: as many of them as
    /// fit one datagram, and the settled checksums.
    fn feed_from(&self, next: u32) -> Feed<I> {
        let checksums = self.settled.back().map(|(newest, _)| ShortChecksums {
            epoch: 0,
            newest: wire_frame(*newest),
            shorts: self.settled.iter().map(|(_, s)| *s).collect(),
        });
        let end = self.frames_from + self.frames.len() as u32;
        let start = next.max(self.frames_from);
        let mut count = end.saturating_sub(start).min(MAX_INPUTS_PER_PACKET);
        loop {
            let skip = (start - self.frames_from) as usize;
            let inputs: Vec<Vec<I>> = (0..usize::from(self.cfg.seats))
                .map(|seat| {
                    self.frames
                        .iter()
                        .skip(skip)
                        .take(count as usize)
                        .map(|f| f.get(seat).cloned().unwrap_or_else(I::absent))
                        .collect()
                })
                .collect();
            let feed = Feed {
                seats: self.cfg.seats,
                first_frame: if count == 0 { 0 } else { wire_frame(start) },
                inputs,
                checksums: checksums.clone(),
                ask: None,
            };
            if count == 0 || fits(self.seat, &feed) {
                return feed;
            }
            count /= 2;
        }
    }

    fn send(&mut self, to: SpectatorId, message: Message<I>) {
        let Some(slot) = self.slots.get_mut(&to) else {
            return;
        };
        let packet = Packet::Routed(Routed {
            sender: self.seat,
            token: slot.their_token,
            seq: 0,
            message,
        });
        let bytes = seal(slot, self.links.get(&to), packet);
        self.out.push_back(SpectatorTransmit { to, bytes });
    }

    /// Forgets the frames neither a spectator nor a future state needs.
    fn trim(&mut self) {
        let settled = self.settled.back().map(|(f, _)| *f + 1);
        let needed = self
            .slots
            .values()
            .filter_map(|s| s.next)
            .chain(settled)
            .min();
        let Some(needed) = needed else {
            return;
        };
        while self.frames_from < needed && !self.frames.is_empty() {
            self.frames.pop_front();
            self.frames_from += 1;
        }
    }

    fn issue_token(&mut self) -> u32 {
        self.tokens_issued += 1;
        let mut seed = [0u8; 8];
        seed[..4].copy_from_slice(&self.token_seed.to_le_bytes());
        seed[4..].copy_from_slice(&self.tokens_issued.to_le_bytes());
        let t = Checksum::of(&seed).short().0 as u32;
        t.max(1)
    }
}

/// The most a genuine spectator's sequence can jump: it sends an ack or two
/// a tick, so 64 (the window) plus a few seconds of acks is generous.
const SEQ_JUMP: i32 = 64 + 512;

/// Whether `feed` fits one datagram once the header is added.
fn fits<I: Input>(seat: SeatId, feed: &Feed<I>) -> bool {
    let packet = Packet::Routed(Routed {
        sender: seat,
        token: 0,
        seq: 0,
        message: Message::Feed(feed.clone()),
    });
    packet.measure_bits().div_ceil(8) <= MAX_PACKET as u64
}

/// Numbers `packet` with the slot's next packet number, encodes it, and
/// seals it when the relay holds a link to the spectator.
fn seal<I: Input>(slot: &mut Slot, link: Option<&Link>, mut packet: Packet<I>) -> Vec<u8> {
    let seq = slot.next_seq;
    slot.next_seq = seq.wrapping_add(1);
    packet.set_seq(seq as u16);
    let mut bytes = packet.encode();
    if let Some(link) = link {
        // Sealing fails only for a packet with no header.
        let _ = link.seal(seq, &mut bytes);
    }
    bytes
}

fn on_feed_ack(slot: &mut Slot, ack: FeedAck, newest: u32) -> Result<(), ()> {
    let Some(next) = slot.next else {
        // No state sent yet: only a request for one makes sense.
        if ack.want_state {
            slot.wants_state = true;
        }
        return Ok(());
    };
    let Some(f) = unwrap_frame(ack.next_frame, next) else {
        return Err(());
    };
    if f > newest {
        return Err(());
    }
    // The newest ack rules, even when it is lower: a spectator that loaded
    // a new state needs the frames after it again. An ack reordered behind
    // a newer one only costs a few frames sent twice.
    if f >= slot.from {
        slot.next = Some(f);
    }
    if ack.want_state && slot.transfer.is_none() {
        slot.wants_state = true;
    }
    Ok(())
}

fn on_state_ack(
    now: Instant,
    slot: &mut Slot,
    ack: &ResyncAck,
    stats: &mut RelayStats,
) -> Result<(), ()> {
    let Some(t) = &mut slot.transfer else {
        // A late ack of a finished transfer.
        return Ok(());
    };
    if ack.id != t.id {
        return Ok(());
    }
    t.on_ack(now, ack);
    if t.done() {
        slot.transfer = None;
        stats.states_served += 1;
    }
    Ok(())
}
