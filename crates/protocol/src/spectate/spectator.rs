//! [`SpectatorSession`]: a spectator's side of the relay stream. It shakes hands
//! with the relay, receives and verifies a settled state, then releases the
//! match's frames in order, each with every seat's inputs, and passes on
//! the checksums the seats settled on.
//!
//! Invariants:
//! - Only packets carrying this spectator's token, from the relay's seat,
//!   inside the sequence window, change anything.
//! - A state is handed over only if its BLAKE3 equals the checksum the relay
//!   announced (the resync transfer's check), and frames are released only
//!   after a state, consecutively from the frame after it.
//! - Frames held ahead of the next one are bounded by `max_lag_frames`.

use std::collections::{BTreeMap, VecDeque};

use super::SpectateConfig;
use crate::inbound::{Opening, open_packet};
use crate::input::Input;
use crate::packet::{
    ArbiterAnswer, Feed, FeedAck, Message, Packet, ResyncAck, ResyncChunk, Routed, SnapshotAck,
    SnapshotPart, SpectateHello,
};
use crate::seal::{Identity, Link, PairKeys, PublicKey, SealError};
use crate::seat::SeatId;
use crate::seq::{SeqWindow, unwrap_frame, wire_frame};
use crate::state_transfer::Incoming;
use crate::stats::{Dropped, KindCount};
use crate::time::Instant;

/// What the spectator's app must act on, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpectatorSessionEvent<I> {
    /// The relay answered the handshake.
    Connected,
    /// Replace the game state with `state`, the exact state after `frame`
    /// (verified against the relay's checksum); frames from `frame + 1`
    /// follow.
    LoadState {
        /// The state's frame.
        frame: u32,
        /// Its bytes.
        state: Vec<u8>,
    },
    /// Step `frame` with every seat's input.
    Frame {
        /// The frame.
        frame: u32,
        /// Every seat's input for it.
        inputs: Vec<I>,
    },
    /// The seats agreed that `frame`'s state has this short checksum.
    Settled {
        /// The frame.
        frame: u32,
        /// The first 8 bytes of its checksum ([`Checksum::short`](lockstep_fx::Checksum::short)).
        short: u64,
    },
    /// The relay plays another game, seat count or tick.
    Incompatible,
    /// The relay said goodbye or went silent: the stream is over.
    RelayLost,
    /// A part of a snapshot (a spectator watching snapshots: see
    /// [`SpectatorSession::snapshots`]); ack with [`SpectatorSession::send_snapshot_ack`].
    SnapshotPart(SnapshotPart),
    /// The relay asks this spectator, the match's arbiter, for its
    /// checksum of `frame` (the seats dispute it): answer with
    /// [`SpectatorSession::answer`] once the frame is stepped, or with `None` if it
    /// never will be.
    Asked {
        /// The disputed frame.
        frame: u32,
    },
}

/// The spectator's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpectatorSessionStats {
    /// Datagrams sent.
    pub sent: KindCount,
    /// Datagrams received.
    pub received: KindCount,
    /// Datagrams refused, by reason.
    pub dropped: Dropped,
    /// Frames released.
    pub frames_released: u64,
    /// States loaded, and their bytes.
    pub states_loaded: u64,
    /// Bytes of the states loaded (uncompressed).
    pub state_bytes: u64,
}

/// A spectator's connection to its relay (sans-IO).
#[derive(Debug)]
pub struct SpectatorSession<I> {
    cfg: SpectateConfig,
    token: u32,
    /// It watches snapshots instead of simulating.
    snapshots: bool,
    relay_token: Option<u32>,
    relay_seat: Option<SeatId>,
    /// The relay holds our echo: its routed packets arrive.
    confirmed: bool,
    closed: bool,
    reference: u32,
    next_hello_at: Instant,
    /// The number of our next packet to the relay; the wire carries its
    /// low 16 bits, a sealed packet uses it as its nonce.
    next_seq: u64,
    /// The keys toward the relay, when sealed.
    link: Option<Link>,
    seen: SeqWindow,
    last_recv: Instant,
    incoming: Option<Incoming>,
    /// The frame of the state loaded, while it is current.
    loaded: Option<u32>,
    want_state: bool,
    next: u32,
    pending: BTreeMap<u32, Vec<I>>,
    newest_settled: Option<u32>,
    /// The frame the relay asks our checksum of, while it asks.
    asked: Option<u32>,
    /// Our answer to it, repeated in every ack while it is asked.
    answer: Option<ArbiterAnswer>,
    ack_due: bool,
    /// The state-transfer ack to send next.
    state_ack: Option<ResyncAck>,
    /// The id of the transfer whose state is loaded.
    loaded_id: Option<u8>,
    /// When the due acks go out: a moment after the first packet of a
    /// burst, so one ack answers the whole burst.
    ack_at: Option<Instant>,
    events: VecDeque<SpectatorSessionEvent<I>>,
    out: VecDeque<Vec<u8>>,
    stats: SpectatorSessionStats,
}

impl<I: Input> SpectatorSession<I> {
    /// A spectator with session token `token` (never 0), starting at `now`;
    /// it greets its relay at the first [`SpectatorSession::poll_transmit`].
    pub fn new(cfg: SpectateConfig, token: u32, now: Instant) -> SpectatorSession<I> {
        SpectatorSession {
            cfg,
            token: token.max(1),
            snapshots: false,
            relay_token: None,
            relay_seat: None,
            confirmed: false,
            closed: false,
            reference: 0,
            next_hello_at: now,
            next_seq: 0,
            link: None,
            seen: SeqWindow::default(),
            last_recv: now,
            incoming: None,
            loaded: None,
            want_state: false,
            next: 0,
            pending: BTreeMap::new(),
            newest_settled: None,
            asked: None,
            answer: None,
            ack_due: false,
            state_ack: None,
            loaded_id: None,
            ack_at: None,
            events: VecDeque::new(),
            out: VecDeque::new(),
            stats: SpectatorSessionStats::default(),
        }
    }

    /// The same spectator, sealing every packet with keys agreed between
    /// `identity` (its key pair) and the relay's public key `relay`, as the
    /// match setup gave it.
    pub fn sealed(
        mut self,
        identity: &Identity,
        relay: PublicKey,
    ) -> Result<SpectatorSession<I>, SealError> {
        self.link = Some(Link::new(PairKeys::agree(identity, &relay)?, 0));
        Ok(self)
    }

    /// A spectator that watches snapshots: its handshake asks the relay for
    /// a snapshot stream instead of the inputs and a state; parts arrive as
    /// [`SpectatorSessionEvent::SnapshotPart`], and nothing else is released.
    pub fn snapshots(cfg: SpectateConfig, token: u32, now: Instant) -> SpectatorSession<I> {
        SpectatorSession {
            snapshots: true,
            ..SpectatorSession::new(cfg, token, now)
        }
    }

    /// Sends `ack` of the snapshot stream to the relay (once the relay's
    /// first part told its seat; `false` before).
    pub fn send_snapshot_ack(&mut self, ack: SnapshotAck) -> bool {
        if !self.snapshots || self.closed || self.relay_seat.is_none() {
            return false;
        }
        self.send(Message::SnapshotAck(ack));
        true
    }

    /// The counters.
    pub fn stats(&self) -> &SpectatorSessionStats {
        &self.stats
    }

    /// A frame near the relay's: the newest it named or released here (to
    /// restore 16-bit frames against).
    pub fn reference_frame(&self) -> u32 {
        self.reference.max(self.next)
    }

    /// The next frame to release (the one after the newest released).
    pub fn next_frame(&self) -> u32 {
        self.next
    }

    /// Whether the stream is over ([`SpectatorSessionEvent::RelayLost`] or
    /// [`SpectatorSessionEvent::Incompatible`] was raised).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The next thing that happened, in order.
    pub fn poll_event(&mut self) -> Option<SpectatorSessionEvent<I>> {
        self.events.pop_front()
    }

    /// Asks the relay for its state again (the app's state disagreed with
    /// a settled checksum): no frame is released until it has arrived.
    pub fn request_state(&mut self) {
        self.want_state = true;
        self.loaded = None;
        self.ack_due = true;
        self.ack_at = Some(self.last_recv);
    }

    /// Feeds a datagram received from the relay's address.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.stats.received.packets += 1;
        self.stats.received.bytes += bytes.len() as u64;
        if self.closed {
            self.stats.dropped.from_gone += 1;
            return;
        }
        let opening = match self.link.as_mut() {
            None => Opening::Plain,
            Some(link) => Opening::Sealed(Some(link)),
        };
        let Some((packet, newest)) = open_packet::<I>(opening, bytes, &mut self.stats.dropped)
        else {
            return;
        };
        match packet {
            Packet::SpectateHello(_) if !newest => self.stats.dropped.duplicate += 1,
            Packet::SpectateHello(h) => self.on_hello(now, h),
            Packet::Routed(r) => self.on_routed(now, r),
            Packet::Hello(_) => self.stats.dropped.unexpected += 1,
        }
    }

    fn on_hello(&mut self, now: Instant, h: SpectateHello) {
        if h.schema_hash != I::schema_hash()
            || h.seats != self.cfg.seats
            || u64::from(h.tick_micros) != self.cfg.tick_micros
        {
            self.stats.dropped.incompatible += 1;
            self.closed = true;
            self.events.push_back(SpectatorSessionEvent::Incompatible);
            return;
        }
        if h.echo != self.token || h.token == 0 {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        if self.relay_token.is_none() {
            self.relay_token = Some(h.token);
            self.reference = h.frame;
            self.next_hello_at = now;
            self.events.push_back(SpectatorSessionEvent::Connected);
        } else if self.relay_token != Some(h.token) {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        self.last_recv = now;
    }

    fn on_routed(&mut self, now: Instant, r: Routed<I>) {
        if self.relay_token.is_none() || r.token != self.token {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        if self.relay_seat.is_some_and(|s| s != r.sender) {
            self.stats.dropped.unknown_sender += 1;
            return;
        }
        if !self.stats.dropped.admit(self.seen.check(r.seq, SEQ_JUMP)) {
            return;
        }
        let taken = match r.message {
            Message::SnapshotPart(part) if self.snapshots => {
                self.events
                    .push_back(SpectatorSessionEvent::SnapshotPart(part));
                Ok(())
            }
            Message::Feed(feed) if !self.snapshots => self.on_feed(feed),
            Message::ResyncChunk(chunk) if !self.snapshots => self.on_chunk(chunk),
            Message::Disconnect(_) => {
                self.close();
                return;
            }
            _ => Err(()),
        };
        if taken.is_err() {
            self.stats.dropped.invalid += 1;
            return;
        }
        self.relay_seat = Some(r.sender);
        self.confirmed = true;
        self.seen.record(r.seq);
        self.last_recv = now;
        if self.ack_at.is_none() {
            self.ack_at = Some(now.plus(ACK_DELAY_MICROS));
        }
        self.release();
    }

    fn on_chunk(&mut self, chunk: ResyncChunk) -> Result<(), ()> {
        let frame = unwrap_frame(chunk.frame, self.reference).ok_or(())?;
        let waiting = self.loaded.is_none() || self.want_state;
        let current = self.incoming.as_ref().map(|i| i.id);
        if self.loaded_id == Some(chunk.id) || (!waiting && current != Some(chunk.id)) {
            // A chunk of the transfer already loaded (resent before our ack
            // arrived), or of one no longer wanted: ack it whole, so the
            // relay stops sending it.
            self.state_ack = Some(whole(&chunk));
            return Ok(());
        }
        if current != Some(chunk.id) {
            self.incoming = Some(Incoming::new(chunk.id));
        }
        let Some(incoming) = &mut self.incoming else {
            return Err(());
        };
        let id = chunk.id;
        let all = whole(&chunk);
        incoming.on_chunk(chunk, frame).map_err(|_| ())?;
        self.state_ack = Some(incoming.ack());
        match incoming.finish() {
            None => {}
            Some(Ok(crate::state_transfer::Received { frame, state, .. })) => {
                self.incoming = None;
                self.loaded_id = Some(id);
                self.state_ack = Some(all);
                self.want_state = false;
                self.loaded = Some(frame);
                self.next = frame + 1;
                self.reference = self.reference.max(frame);
                self.pending = self.pending.split_off(&self.next);
                self.stats.states_loaded += 1;
                self.stats.state_bytes += state.len() as u64;
                self.ack_due = true;
                self.events
                    .push_back(SpectatorSessionEvent::LoadState { frame, state });
            }
            Some(Err(_)) => {
                // The relay's bytes do not match its own checksum: ask again.
                self.incoming = None;
                self.want_state = true;
                self.ack_due = true;
                return Err(());
            }
        }
        Ok(())
    }

    fn on_feed(&mut self, feed: Feed<I>) -> Result<(), ()> {
        if feed.seats != self.cfg.seats {
            return Err(());
        }
        let reference = self.reference.max(self.next);
        let count = feed.frames();
        if count > 0 {
            let first = unwrap_frame(feed.first_frame, reference).ok_or(())?;
            // Frames held ahead of the next one to step are bounded by the
            // lag the relay allows.
            let limit = self.next + self.cfg.max_lag_frames;
            for i in 0..count {
                let frame = first + i;
                if frame < self.next || frame > limit || self.pending.contains_key(&frame) {
                    continue;
                }
                let inputs = feed
                    .inputs
                    .iter()
                    .map(|run| run.get(i as usize).cloned().unwrap_or_else(I::absent))
                    .collect();
                self.pending.insert(frame, inputs);
            }
        }
        if let Some(c) = feed.checksums {
            let newest = unwrap_frame(c.newest, reference).ok_or(())?;
            let n = c.shorts.len() as u32;
            for (i, short) in c.shorts.into_iter().enumerate() {
                let Some(frame) = (newest + 1 + i as u32).checked_sub(n) else {
                    continue;
                };
                if self.newest_settled.is_none_or(|s| frame > s) {
                    self.newest_settled = Some(frame);
                    self.events
                        .push_back(SpectatorSessionEvent::Settled { frame, short });
                }
            }
        }
        match feed.ask {
            Some(f) => {
                let frame = unwrap_frame(f, reference).ok_or(())?;
                // A feed reordered behind the question's end asks again:
                // the answer given stands.
                let answered = self.answer.is_some_and(|a| a.frame == f);
                if self.asked != Some(frame) && !answered {
                    self.answer = None;
                    self.events
                        .push_back(SpectatorSessionEvent::Asked { frame });
                }
                self.asked = Some(frame);
            }
            None => self.asked = None,
        }
        self.ack_due = true;
        Ok(())
    }

    /// Answers [`SpectatorSessionEvent::Asked`]: this spectator's short checksum of
    /// `frame`, or `None` when it did not (and will not) step it. Sent in
    /// every feed ack while the relay asks; an answer about a frame no
    /// longer asked is dropped.
    pub fn answer(&mut self, frame: u32, short: Option<u64>) {
        if self.asked == Some(frame) {
            self.answer = Some(ArbiterAnswer {
                frame: wire_frame(frame),
                short,
            });
        }
    }

    fn release(&mut self) {
        if self.loaded.is_none() {
            return;
        }
        while let Some(inputs) = self.pending.remove(&self.next) {
            self.events.push_back(SpectatorSessionEvent::Frame {
                frame: self.next,
                inputs,
            });
            self.next += 1;
            self.stats.frames_released += 1;
        }
        self.reference = self.reference.max(self.next);
    }

    fn close(&mut self) {
        if !self.closed {
            self.closed = true;
            self.events.push_back(SpectatorSessionEvent::RelayLost);
        }
    }

    /// Times the relay out after `timeout_micros` of silence: call when
    /// `now` reaches [`SpectatorSession::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        if !self.closed && now.since(self.last_recv) > self.cfg.timeout_micros {
            self.close();
        }
    }

    /// When [`SpectatorSession::handle_timeout`] or [`SpectatorSession::poll_transmit`] next
    /// have something to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        let lost = self.last_recv.plus(self.cfg.timeout_micros + 1);
        let mut at = lost.min(self.ack_at.unwrap_or(lost));
        if !self.confirmed {
            at = at.min(self.next_hello_at);
        }
        Some(at)
    }

    /// The next datagram for the relay.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.out.is_empty() && !self.closed {
            self.build(now);
        }
        let bytes = self.out.pop_front()?;
        self.stats.sent.packets += 1;
        self.stats.sent.bytes += bytes.len() as u64;
        Some(bytes)
    }

    /// Says goodbye to the relay (it frees the slot at once).
    pub fn disconnect(&mut self) {
        if self.confirmed && !self.closed {
            self.send(Message::Disconnect(crate::packet::Disconnect { reason: 0 }));
            self.closed = true;
        }
    }

    fn build(&mut self, now: Instant) {
        if !self.confirmed && now >= self.next_hello_at {
            self.next_hello_at = now.plus(self.cfg.hello_interval_micros);
            let hello = SpectateHello {
                seq: 0,
                schema_hash: I::schema_hash(),
                seats: self.cfg.seats,
                tick_micros: self.cfg.tick_micros as u32,
                token: self.token,
                echo: self.relay_token.unwrap_or(0),
                frame: if self.snapshots {
                    SpectateHello::SNAPSHOTS
                } else {
                    SpectateHello::INPUTS
                },
            };
            self.push(Packet::SpectateHello(hello));
        }
        if !self.confirmed || self.ack_at.is_none_or(|at| now < at) {
            return;
        }
        self.ack_at = None;
        if let Some(ack) = self.state_ack.take() {
            self.send(Message::ResyncAck(ack));
        }
        if std::mem::take(&mut self.ack_due) {
            let ack = FeedAck {
                next_frame: wire_frame(self.next),
                want_state: self.want_state,
                answer: self.answer.filter(|_| self.asked.is_some()),
            };
            self.send(Message::FeedAck(ack));
        }
    }

    fn send(&mut self, message: Message<I>) {
        let (Some(token), Some(seat)) = (self.relay_token, self.relay_seat) else {
            return;
        };
        self.push(Packet::Routed(Routed {
            sender: seat,
            token,
            seq: 0,
            message,
        }));
    }

    /// Numbers `packet` with our next packet number, encodes it, seals it
    /// when sealed, and queues it.
    fn push(&mut self, mut packet: Packet<I>) {
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        packet.set_seq(seq as u16);
        let mut bytes = packet.encode();
        if let Some(link) = &self.link {
            // Sealing fails only for a packet with no header.
            let _ = link.seal(seq, &mut bytes);
        }
        self.out.push_back(bytes);
    }
}

/// An ack of every chunk of `chunk`'s transfer.
fn whole(chunk: &ResyncChunk) -> ResyncAck {
    ResyncAck {
        id: chunk.id,
        next_missing: chunk.chunk_count() as u16,
        received: 0,
    }
}

/// How long acks wait for the rest of a burst (1 ms).
const ACK_DELAY_MICROS: u64 = 1_000;

/// The most the relay's sequence can jump: a feed and up to
/// `chunks_per_tick` chunks a tick, so the window plus a few seconds' worth.
const SEQ_JUMP: i32 = 64 + 2_048;
