//! The peers: each one's connection state, the handshake (Hellos until
//! both sides know each other's token), the intake of routed packets (the
//! sequence window, liveness) and goodbyes confirmed by silence.

use super::{Event, Phase, SeatEvent, Session};
use crate::clock_sync::OffsetEstimator;
use crate::delay::SampleWindow;
use crate::input::Input;
use crate::packet::{Disconnect, Hello, Message, Routed};
use crate::seal::Link;
use crate::seat::SeatId;
use crate::seq::{SeqWindow, unwrap_frame};
use crate::time::Instant;
use lockstep_fx::Checksum;

/// Clock samples kept per peer (32: six seconds of pings).
const CLOCK_SAMPLES: u32 = 32;

#[derive(Debug, Clone)]
pub(super) struct Peer {
    pub(super) token: Option<u32>,
    pub(super) knows_us: bool,
    pub(super) connected: bool,
    pub(super) gone: bool,
    pub(super) incompatible: bool,
    /// The number of our next packet to it (handshakes included); the
    /// wire carries its low 16 bits, a sealed packet uses it as its nonce.
    pub(super) next_seq: u64,
    /// The keys of a sealed session toward it.
    pub(super) link: Option<Link>,
    pub(super) seen: SeqWindow,
    /// A farewell not confirmed yet: when it arrived, its sequence, and
    /// whether it was a goodbye or a notice that it dropped us.
    pub(super) leaving: Option<(Instant, u16, Farewell)>,
    /// It said goodbye (confirmed): it plays no more whatever the others
    /// decide, so it no longer counts toward a quorum.
    pub(super) left: bool,
    /// The frame its seat came back at, when its process returned.
    pub(super) back_from: Option<u32>,
    pub(super) last_recv: Instant,
    pub(super) next_hello_at: Instant,
    pub(super) hello_reply: bool,
    pub(super) acked: Option<u32>,
    pub(super) sent_through: Option<u32>,
    pub(super) inputs_due: bool,
    pub(super) full_due: Option<(u32, Checksum)>,
    pub(super) rtt: SampleWindow,
    /// Its clock's offset from ours, from timestamped round trips.
    pub(super) offsets: OffsetEstimator,
    /// The newest [`Timing`](crate::packet::Timing) time heard from it,
    /// and when it arrived (echoed in ours).
    pub(super) heard_time: Option<(u64, Instant)>,
    /// The newest of our times it echoed that became a clock sample.
    pub(super) echo_used: Option<u64>,
    /// Its newest tick: the frame and its clock's time then.
    pub(super) tick: Option<(u32, u64)>,
    /// The input delay it wants (rollback, adaptive).
    pub(super) wanted_delay: u32,
    /// What stepping a frame costs it, in microseconds, as it reported.
    pub(super) step_cost: u32,
    /// When our next Timing to it is due.
    pub(super) next_timing_at: Instant,
}

impl Peer {
    /// When an unconfirmed goodbye becomes final: `grace` after the
    /// goodbye or after the newest packet accepted since, whichever is
    /// later (the peer must stay silent for the whole grace period).
    pub(super) fn leaves_at(&self, grace: u64) -> Option<Instant> {
        self.leaving
            .map(|(said, _, _)| said.max(self.last_recv).plus(grace))
    }

    /// A peer we know nothing of yet; our packets to it start at `seq`.
    pub(super) fn new(seq: u16) -> Peer {
        Peer {
            token: None,
            knows_us: false,
            connected: false,
            gone: false,
            incompatible: false,
            next_seq: u64::from(seq),
            link: None,
            seen: SeqWindow::default(),
            leaving: None,
            left: false,
            back_from: None,
            last_recv: Instant::ZERO,
            next_hello_at: Instant::ZERO,
            hello_reply: false,
            acked: None,
            sent_through: None,
            inputs_due: false,
            full_due: None,
            rtt: SampleWindow::new(64),
            offsets: OffsetEstimator::new(CLOCK_SAMPLES),
            heard_time: None,
            echo_used: None,
            tick: None,
            wanted_delay: 0,
            step_cost: 0,
            next_timing_at: Instant::ZERO,
        }
    }
}

/// How a peer said it is no longer with us: both end the same way (the
/// peer is dropped once the goodbye grace passes in silence), but only a
/// goodbye takes it out of the quorum count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Farewell {
    /// It leaves the match (Disconnect).
    Goodbye,
    /// It dropped our seat and plays on without us (a SeatDrop naming us).
    DroppedUs,
}

/// Why a routed message was refused; the packet is then counted in
/// `Stats::dropped` and moves neither the sequence window nor the peer's
/// liveness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Well-formed but impossible in context (counted as `invalid`).
    Invalid,
    /// Belongs to nothing going on (counted as `unexpected`).
    Unexpected,
}

impl<I: Input> Session<I> {
    pub(super) fn on_hello(&mut self, now: Instant, h: Hello) {
        let p = h.sender.index();
        let contradicts = h.schema_hash != I::schema_hash()
            || h.seats != self.cfg.seats
            || u64::from(h.tick_micros) != self.cfg.tick_micros;
        if contradicts && self.phase != Phase::Connecting && self.peers[p].connected {
            // The match was agreed at the handshake: a later Hello that
            // contradicts it is stale, corrupted or forged, never a reason
            // to give up on a connected peer.
            self.stats.dropped.contradicting += 1;
            return;
        }
        if contradicts {
            self.stats.dropped.incompatible += 1;
            if !self.peers[p].incompatible {
                self.peers[p].incompatible = true;
                self.events
                    .push_back(Event::Seat(SeatEvent::Incompatible { seat: h.sender }));
            }
            return;
        }
        if h.token == 0 || self.peers[p].token.is_some_and(|t| t != h.token) {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        let peer = &mut self.peers[p];
        peer.token = Some(h.token);
        peer.last_recv = now;
        peer.hello_reply |= !h.ready;
        if h.echo == self.token {
            peer.knows_us = true;
        }
        self.update_connected(now, h.sender);
    }

    pub(super) fn update_connected(&mut self, now: Instant, who: SeatId) {
        let peer = &mut self.peers[who.index()];
        if !peer.connected && peer.token.is_some() && peer.knows_us {
            peer.connected = true;
            self.events
                .push_back(Event::Seat(SeatEvent::Connected { seat: who }));
        }
        let local = self.cfg.local.index();
        let all = self
            .peers
            .iter()
            .enumerate()
            .all(|(i, p)| i == local || p.connected);
        if self.phase == Phase::Connecting && all && !self.cfg.rejoin {
            self.phase = Phase::Running;
            self.clock.start(now);
            // Silence is measured from the start, not from the handshake.
            for p in &mut self.peers {
                p.last_recv = now;
            }
            self.events.push_back(Event::Started);
        }
    }

    pub(super) fn on_routed(&mut self, now: Instant, r: Routed<I>) {
        let who = r.sender;
        let p = who.index();
        if r.token != self.token {
            self.stats.dropped.wrong_token += 1;
            return;
        }
        if !self
            .stats
            .dropped
            .admit(self.peers[p].seen.check(r.seq, self.max_seq_jump(p, now)))
        {
            return;
        }
        // Our token proves the peer knows us, whatever the message holds.
        if !self.peers[p].knows_us {
            self.peers[p].knows_us = true;
            self.update_connected(now, who);
        }
        // Each handler validates its message before acting on it and says
        // whether it took it; only then do the sequence window and the
        // peer's liveness move, so a refused packet changes nothing.
        let stopped = self.phase == Phase::Stopped;
        let taken = match r.message {
            // A stopped session steps and compares nothing more: the
            // peer's packet is taken (it is alive) and its content left.
            Message::Inputs(_)
            | Message::Checksum(_)
            | Message::Timing(_)
            | Message::Evidence(_)
            | Message::SeatDrop(_)
            | Message::SeatReturn(_)
            | Message::SnapshotPart(_)
            | Message::SnapshotAck(_)
                if stopped =>
            {
                Ok(())
            }
            Message::Inputs(m) => self.on_inputs(now, who, m),
            Message::Checksum(m) => {
                let reference = self.playout.next_release();
                match unwrap_frame(m.frame, reference) {
                    Some(frame) => {
                        let v = self.book.record_full(who, m.epoch, frame, m.checksum);
                        self.on_verdict(now, v);
                        Ok(())
                    }
                    None => Err(Refused::Invalid),
                }
            }
            Message::ResyncRequest(m) => self.on_resync_request(who, m),
            Message::ResyncChunk(m) => self.on_resync_chunk(now, who, m),
            Message::ResyncAck(m) => self.on_resync_ack(who, m),
            Message::Disconnect(_) => {
                if self.on_farewell(now, p, r.seq, Farewell::Goodbye).is_err() {
                    self.stats.dropped.invalid += 1;
                }
                return;
            }
            Message::SeatDrop(m) if m.seat == self.cfg.local => {
                // A notice that the sender dropped us: like a goodbye, it
                // is its last word to us, and moves neither the window nor
                // its liveness.
                let taken = if m.token != self.token {
                    // About another process of our seat.
                    Err(Refused::Unexpected)
                } else if m.inputs.is_empty() {
                    self.on_farewell(now, p, r.seq, Farewell::DroppedUs)
                } else {
                    Err(Refused::Invalid)
                };
                if taken.is_err() {
                    self.stats.dropped.invalid += 1;
                }
                return;
            }
            Message::SeatDrop(m) => self.on_seat_drop(who, m),
            Message::SeatReturn(m) => self.on_seat_return(now, who, m),
            // A spectator's feed travels between a relay and its spectator.
            Message::Feed(_) | Message::FeedAck(_) => Err(Refused::Unexpected),
            Message::SnapshotPart(part) => {
                self.events
                    .push_back(Event::SnapshotPart { from: who, part });
                Ok(())
            }
            Message::SnapshotAck(ack) => {
                self.events.push_back(Event::SnapshotAck { from: who, ack });
                Ok(())
            }
            Message::Timing(m) => self.on_timing(now, who, m),
            Message::Evidence(m) => self.on_evidence(now, who, m),
            Message::Invalid(m) => self.on_invalid(who, m),
        };
        match taken {
            Ok(()) => {}
            Err(Refused::Invalid) => {
                self.stats.dropped.invalid += 1;
                return;
            }
            Err(Refused::Unexpected) => {
                self.stats.dropped.unexpected += 1;
                return;
            }
        }
        let peer = &mut self.peers[p];
        peer.seen.record(r.seq);
        peer.last_recv = now;
        if peer
            .leaving
            .is_some_and(|(_, seq, _)| crate::seq::seq_newer(r.seq, seq))
        {
            // It spoke after its farewell: the farewell was forged or stale.
            peer.leaving = None;
        }
    }

    /// A farewell from peer `p` with sequence `seq`: a Disconnect, or a
    /// SeatDrop naming our seat (it dropped us). It only starts the grace
    /// period (see [`Peer::leaves_at`]): any packet newer than it cancels
    /// it, and one older (sent before it, or genuine traffic after a forged
    /// farewell whose sequence was pushed ahead) postpones it.
    ///
    /// A farewell is the last kind of packet its sender sends us, so one
    /// older than a packet already accepted from that peer is stale or
    /// forged and refused. It does not move the sequence window (a forged
    /// one pushed ahead would otherwise make genuine packets `too_old`); a
    /// repeated farewell keeps the first one's time. Once a notice that it
    /// dropped us has arrived, the peer counts as dropping us, even if a
    /// goodbye follows: it still plays, so it still has a say.
    fn on_farewell(
        &mut self,
        now: Instant,
        p: usize,
        seq: u16,
        why: Farewell,
    ) -> Result<(), Refused> {
        let peer = &mut self.peers[p];
        if peer
            .seen
            .newest()
            .is_some_and(|n| !crate::seq::seq_newer(seq, n))
        {
            return Err(Refused::Invalid);
        }
        let merged = |was: Farewell| {
            if was == Farewell::DroppedUs || why == Farewell::DroppedUs {
                Farewell::DroppedUs
            } else {
                Farewell::Goodbye
            }
        };
        peer.leaving = match peer.leaving {
            Some((said, first, was)) if !crate::seq::seq_newer(seq, first) => {
                Some((said, first, merged(was)))
            }
            Some((said, _, was)) => Some((said, seq, merged(was))),
            None => Some((now, seq, why)),
        };
        Ok(())
    }

    /// How far ahead of the newest sequence seen from peer `p` a genuine
    /// packet can be: the 64 the window spans, plus what the peer can have
    /// sent since its last accepted packet (an inputs packet, a checksum,
    /// resync chunks and requests, seat-drop reports: under
    /// `chunks_per_tick + 16` a tick). A packet beyond that is refused
    /// without moving the window, so one corrupted or forged sequence
    /// number cannot make every genuine packet after it "too old".
    ///
    /// The bound counts ticks since the last accepted packet, so loss and
    /// latency only widen it: at 25% loss or a 2 s round trip the packets
    /// lost in between were sent over about as many ticks as have passed
    /// here (the clocks run at the same rate), and the 64 of slack absorb
    /// the difference jitter makes (half a second of it at two packets a
    /// tick). A steady peer sends a few packets a tick, far below the 96
    /// the bound allows after one tick.
    pub(super) fn max_seq_jump(&self, p: usize, now: Instant) -> i32 {
        let ticks = now.since(self.peers[p].last_recv) / self.cfg.tick_micros.max(1) + 1;
        let per_tick = u64::from(self.cfg.chunks_per_tick) + 16;
        (SeqWindow::SPAN as u64 + per_tick.saturating_mul(ticks)).min(32_767) as i32
    }

    /// Says goodbye to every peer and closes the session.
    pub fn disconnect(&mut self, now: Instant) {
        self.now = self.now.max(now);
        for i in 0..self.peers.len() {
            if i != self.cfg.local.index() && !self.peers[i].gone && self.peers[i].token.is_some() {
                self.send_routed(
                    SeatId(i as u8),
                    Message::Disconnect(Disconnect { reason: 0 }),
                );
            }
        }
        self.phase = Phase::Closed;
    }
}
