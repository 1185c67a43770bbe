//! The peers: each one's connection state, the handshake (Hellos until
//! both sides know each other's token), the intake of routed packets (the
//! sequence window, liveness) and goodbyes confirmed by silence.

use super::{Event, Phase, Session};
use crate::delay::SampleWindow;
use crate::input::Input;
use crate::packet::{Disconnect, Hello, Message, Routed};
use crate::player::PlayerId;
use crate::seq::{SeqVerdict, SeqWindow, unwrap_frame};
use crate::time::Instant;
use lockstep_fx::Checksum;

#[derive(Debug, Clone)]
pub(super) struct Peer {
    pub(super) token: Option<u32>,
    pub(super) knows_us: bool,
    pub(super) connected: bool,
    pub(super) gone: bool,
    pub(super) incompatible: bool,
    pub(super) next_seq: u16,
    pub(super) seen: SeqWindow,
    pub(super) leaving: Option<(Instant, u16)>,
    pub(super) last_recv: Instant,
    pub(super) next_hello_at: Instant,
    pub(super) hello_reply: bool,
    pub(super) acked: Option<u32>,
    pub(super) sent_through: Option<u32>,
    pub(super) inputs_due: bool,
    pub(super) full_due: Option<(u32, Checksum)>,
    pub(super) rtt: SampleWindow,
    pub(super) lateness: SampleWindow,
}

impl Peer {
    /// A peer we know nothing of yet; our packets to it start at `seq`.
    pub(super) fn new(seq: u16) -> Peer {
        Peer {
            token: None,
            knows_us: false,
            connected: false,
            gone: false,
            incompatible: false,
            next_seq: seq,
            seen: SeqWindow::default(),
            leaving: None,
            last_recv: Instant::ZERO,
            next_hello_at: Instant::ZERO,
            hello_reply: false,
            acked: None,
            sent_through: None,
            inputs_due: false,
            full_due: None,
            rtt: SampleWindow::new(64),
            lateness: SampleWindow::new(64),
        }
    }
}

impl<I: Input> Session<I> {
    pub(super) fn on_hello(&mut self, now: Instant, h: Hello) {
        let p = h.sender.index();
        let contradicts = h.schema_hash != I::schema_hash()
            || h.players != self.cfg.players
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
                    .push_back(Event::Incompatible { peer: h.sender });
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

    pub(super) fn update_connected(&mut self, now: Instant, who: PlayerId) {
        let peer = &mut self.peers[who.index()];
        if !peer.connected && peer.token.is_some() && peer.knows_us {
            peer.connected = true;
            self.events.push_back(Event::PeerConnected { peer: who });
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
        match self.peers[p].seen.check(r.seq, self.max_seq_jump(p, now)) {
            SeqVerdict::Fresh => {}
            SeqVerdict::Duplicate => {
                self.stats.dropped.duplicate += 1;
                return;
            }
            SeqVerdict::TooOld => {
                self.stats.dropped.too_old += 1;
                return;
            }
            SeqVerdict::TooFar => {
                self.stats.dropped.too_far += 1;
                return;
            }
        }
        // Our token proves the peer knows us, whatever the message holds.
        if !self.peers[p].knows_us {
            self.peers[p].knows_us = true;
            self.update_connected(now, who);
        }
        // The message is handled first; the sequence window and the
        // peer's liveness move only if it was accepted (a handler that
        // refuses a message counts it in `Stats::dropped`).
        let refused_before = self.stats.dropped.total();
        let goodbye = matches!(r.message, Message::Disconnect(_));
        match r.message {
            Message::Inputs(m) => self.on_inputs(now, who, m),
            Message::Checksum(m) => {
                let reference = self.playout.next_release();
                match unwrap_frame(m.frame, reference) {
                    Some(frame) => {
                        let v = self.book.record_full(who, m.epoch, frame, m.checksum);
                        self.on_verdict(now, v);
                    }
                    None => self.stats.dropped.invalid += 1,
                }
            }
            Message::ResyncRequest(m) => self.on_resync_request(who, m),
            Message::ResyncChunk(m) => self.on_resync_chunk(now, who, m),
            Message::ResyncAck(m) => self.on_resync_ack(who, m),
            Message::Disconnect(_) => {
                let deadline = now.plus(self.cfg.disconnect_grace_micros);
                self.peers[p].leaving = Some((deadline, r.seq));
            }
            Message::SeatDrop(m) => self.on_seat_drop(who, m),
            Message::SeatReturn(m) => self.on_seat_return(now, who, m),
        }
        if self.stats.dropped.total() != refused_before {
            return;
        }
        let peer = &mut self.peers[p];
        peer.seen.record(r.seq);
        peer.last_recv = now;
        if !goodbye
            && peer
                .leaving
                .is_some_and(|(_, seq)| crate::seq::seq_newer(r.seq, seq))
        {
            // It spoke after its goodbye: the goodbye was not its last word.
            peer.leaving = None;
        }
    }

    /// How far ahead of the newest sequence seen from peer `p` a genuine
    /// packet can be: the 64 the window spans, plus what the peer can have
    /// sent since its last accepted packet (an inputs packet, a checksum,
    /// resync chunks and requests, seat-drop reports: under
    /// `chunks_per_tick + 16` a tick). A packet beyond that is refused
    /// without moving the window, so one corrupted or forged sequence
    /// number cannot make every genuine packet after it "too old".
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
                    PlayerId(i as u8),
                    Message::Disconnect(Disconnect { reason: 0 }),
                );
            }
        }
        self.phase = Phase::Closed;
    }
}
