//! Building what goes on the wire: Hellos until connected, one inputs
//! packet per peer per tick, Timing messages, full checksums, resync requests, chunks and
//! acks, seat-drop reports and notices, and the integrity messages
//! (evidence in a dispute, the match found invalid); every packet counted
//! by kind.

use super::{Phase, Session, Transmit};
use crate::input::Input;
use crate::packet::{ChecksumMsg, Hello, Kind, Message, Packet, ResyncRequest, Routed, SeatDrop};
use crate::seat::{SeatId, SeatSet};
use crate::seq::wire_frame;
use crate::time::Instant;

impl<I: Input> Session<I> {
    /// The next datagram to send.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.now = self.now.max(now);
        if self.out.is_empty() && self.phase != Phase::Closed {
            self.build_transmits(now);
        }
        self.out.pop_front()
    }

    pub(super) fn build_transmits(&mut self, now: Instant) {
        let local = self.cfg.local.index();
        for i in 0..self.peers.len() {
            if i == local || self.peers[i].gone || self.peers[i].incompatible {
                continue;
            }
            let to = SeatId(i as u8);
            let peer = &mut self.peers[i];
            if peer.hello_reply || (!peer.connected && now >= peer.next_hello_at) {
                peer.hello_reply = false;
                peer.next_hello_at = now.plus(self.cfg.hello_interval_micros);
                let hello = Hello {
                    seq: 0,
                    sender: self.cfg.local,
                    schema_hash: I::schema_hash(),
                    seats: self.cfg.seats,
                    tick_micros: self.cfg.tick_micros as u32,
                    token: self.token,
                    echo: peer.token.unwrap_or(0),
                    ready: peer.connected,
                };
                self.send(to, Packet::Hello(hello));
            }
            let peer = &mut self.peers[i];
            if peer.token.is_none() {
                continue;
            }
            if self.phase == Phase::Running && peer.inputs_due {
                peer.inputs_due = false;
                let msg = self.inputs_message(i);
                self.send_routed(to, Message::Inputs(msg));
            }
            if self.phase == Phase::Running && self.peers[i].connected {
                if let Some(m) = self.timing_due(now, i) {
                    self.send_routed(to, m);
                }
            }
            if let Some((frame, checksum)) = self.peers[i]
                .full_due
                .take()
                .filter(|_| self.phase == Phase::Running)
            {
                let msg = ChecksumMsg {
                    epoch: self.epoch,
                    frame: wire_frame(frame),
                    checksum,
                };
                self.send_routed(to, Message::Checksum(msg));
            }
        }
        self.send_notices();
        let (due, returns) = if std::mem::take(&mut self.drop_reports_due) {
            (self.drops.due(self.remaining()), self.due_returns())
        } else {
            (Vec::new(), Vec::new())
        };
        for (to, m) in returns {
            self.send_routed(to, Message::SeatReturn(m));
        }
        for (seat, to) in due {
            let (first, inputs) = self.report_tail(seat, self.cfg.max_unacked_inputs);
            let msg = SeatDrop {
                seat,
                token: self.peers[seat.index()].token.unwrap_or(0),
                heard: self.drops.heard(seat),
                first_frame: if inputs.is_empty() {
                    0
                } else {
                    wire_frame(first)
                },
                inputs,
            };
            self.send_routed(to, Message::SeatDrop(msg));
            self.drops.sent(seat, to);
            if let Some(theirs) = self.drops.lacking(seat, to) {
                // It holds fewer of the seat's inputs than we do: relay the
                // next run of them (a SeatDrop with `heard` empty).
                let from = theirs.map_or(0, |t| t + 1);
                let inputs = self.relay_run(seat, from, self.cfg.max_unacked_inputs);
                if !inputs.is_empty() {
                    let relay = SeatDrop {
                        seat,
                        token: self.peers[seat.index()].token.unwrap_or(0),
                        heard: SeatSet::EMPTY,
                        first_frame: wire_frame(from),
                        inputs,
                    };
                    self.send_routed(to, Message::SeatDrop(relay));
                }
            }
        }
        self.integrity_transmits();
        if let Some(req) = &mut self.resync.requester {
            let to = req.authority;
            let mut msgs = Vec::new();
            if std::mem::take(&mut req.request_due) {
                msgs.push(Message::ResyncRequest(ResyncRequest {
                    id: req.incoming.id,
                    desync_frame: wire_frame(req.desync_frame),
                    purpose: req.purpose,
                }));
            }
            if std::mem::take(&mut req.ack_due) {
                msgs.push(Message::ResyncAck(req.incoming.ack()));
            }
            for m in msgs {
                self.send_routed(to, m);
            }
        }
        if let Some((to, done, ack_due)) = &mut self.resync.finished_incoming {
            if std::mem::take(ack_due) {
                let (to, ack) = (*to, done.ack());
                self.send_routed(to, Message::ResyncAck(ack));
            }
        }
        if std::mem::take(&mut self.resync.resync_tick) && !self.resync.serving.is_empty() {
            let rto = self.chunk_rto_micros();
            let mut chunks = Vec::new();
            let mut budget = self.cfg.chunks_per_tick;
            for (to, o) in &mut self.resync.serving {
                let due = o.due_chunks(now, rto, budget);
                budget -= due.len() as u32;
                chunks.extend(due.into_iter().map(|c| (*to, c)));
            }
            for (to, c) in chunks {
                self.send_routed(to, Message::ResyncChunk(c));
            }
        }
    }

    pub(super) fn send_routed(&mut self, to: SeatId, message: Message<I>) {
        let Some(token) = self.peers[to.index()].token else {
            return;
        };
        self.send(
            to,
            Packet::Routed(Routed {
                sender: self.cfg.local,
                token,
                seq: 0,
                message,
            }),
        );
    }

    /// Numbers `packet` with the peer's next packet number, encodes it,
    /// seals it in a sealed session, and queues it.
    pub(super) fn send(&mut self, to: SeatId, mut packet: Packet<I>) {
        let kind: Kind = packet.kind();
        let peer = &mut self.peers[to.index()];
        let seq = peer.next_seq;
        peer.next_seq = seq.wrapping_add(1);
        packet.set_seq(seq as u16);
        let mut bytes = packet.encode();
        if let Some(link) = &peer.link {
            // Sealing fails only for a packet with no header, which the
            // session never builds.
            let _ = link.seal(seq, &mut bytes);
        }
        let c = &mut self.stats.sent[kind as usize];
        c.packets += 1;
        c.bytes += bytes.len() as u64;
        self.out.push_back(Transmit { to, bytes });
    }
}
