//! Local inputs and the redundant input stream: sampling, sending every
//! unacked input with the 1-bit repeat coding, taking acks and filling the
//! playout buffer (what is released when is `release.rs`).

use super::handshake::Refused;
use super::{CallError, Event, LeaveReason, SeatEvent, Session, TimeoutReason, input_budget_bits};
use crate::bits::BitMeasurer;
use crate::input::{Input, run_that_fits};
use crate::packet::{InputsMsg, MAX_INPUTS_PER_PACKET, ShortChecksums};
use crate::seat::SeatId;
use crate::send_window::InputError;
use crate::seq::{unwrap_frame, wire_frame};
use crate::time::Instant;
use lockstep_fx::ShortChecksum;

impl<I: Input> Session<I> {
    /// Takes an inputs packet: its inputs into the playout buffer, its ack,
    /// its short checksums. Refused (and nothing taken) when the ack names
    /// a frame not sent yet or the inputs would leave a gap.
    pub(super) fn on_inputs(
        &mut self,
        now: Instant,
        who: SeatId,
        m: InputsMsg<I>,
    ) -> Result<(), Refused> {
        let p = who.index();
        let ack = match m.ack {
            None => None,
            Some(a) => {
                let next = self.window.next_frame();
                match unwrap_frame(a, next.saturating_sub(1)) {
                    // An ack of a frame not sent yet is impossible, except the
                    // one a returning seat starts from (it needs nothing before).
                    Some(f) if f < next || self.peers[p].acked == Some(f) => Some(f),
                    _ => return Err(Refused::Invalid),
                }
            }
        };
        if !m.inputs.is_empty() {
            let reference = self.playout.through(p).map_or(0, |t| t + 1);
            let Some(first) = unwrap_frame(m.first_frame, reference) else {
                return Err(Refused::Invalid);
            };
            // A peer never runs more than its window ahead of what we acked;
            // refuse to buffer further so a hostile peer cannot grow memory.
            let limit =
                reference.saturating_add(2 * self.cfg.max_unacked_inputs + MAX_INPUTS_PER_PACKET);
            let take = limit.saturating_sub(first).min(m.inputs.len() as u32) as usize;
            match self.playout.insert_run(p, first, &m.inputs[..take]) {
                Ok((new_first, added)) => {
                    // Lateness is measured against our own ticks: before our
                    // clock starts (or, rejoining, before its first frame)
                    // there are none to measure against.
                    for f in new_first..new_first + added {
                        if self.clock.ticked(f)
                            || (self.clock.started() && f >= self.clock.next_frame())
                        {
                            let late = now.signed_since(self.clock.tick_time(f));
                            self.delay.record(late);
                        }
                    }
                }
                Err(_) => return Err(Refused::Invalid),
            }
        }
        if let Some(f) = ack {
            let peer = &mut self.peers[p];
            if peer.acked.is_none_or(|x| f > x) {
                peer.acked = Some(f);
                // A returning process never ticked the frames before its
                // first: an ack of one measures nothing.
                if self.clock.ticked(f) {
                    peer.rtt.push(now.since(self.clock.tick_time(f)) as i64);
                }
            }
        }
        if let Some(c) = m.checksums {
            if let Some(newest) = unwrap_frame(c.newest, self.playout.next_release()) {
                let n = c.shorts.len() as u32;
                for (i, s) in c.shorts.iter().enumerate() {
                    let Some(frame) = (newest + 1 + i as u32).checked_sub(n) else {
                        continue;
                    };
                    let v = self
                        .book
                        .record_short(who, c.epoch, frame, ShortChecksum(*s));
                    self.on_verdict(now, v);
                }
            }
        }
        self.try_release();
        Ok(())
    }

    /// The local player's input for `frame`, answering [`Event::InputNeeded`].
    pub fn add_local_input(&mut self, frame: u32, input: I) -> Result<(), CallError> {
        if self.awaiting_input != Some(frame) {
            return Err(InputError::UnexpectedFrame {
                got: frame,
                expected: self.awaiting_input,
            }
            .into());
        }
        self.window.push(frame, input.clone())?;
        let _ = self
            .playout
            .insert_run(self.cfg.local.index(), frame, &[input]);
        self.awaiting_input = None;
        let local = self.cfg.local.index();
        let mut min_acked: Option<Option<u32>> = None;
        let mut behind = Vec::new();
        for (i, p) in self.peers.iter().enumerate() {
            if i == local || p.gone {
                continue;
            }
            let (first, mut count) = self.window.unacked_span(p.acked);
            if let Some(limit) = self.send_limit(i) {
                // Inputs held back until the peer echoes a seat's return are
                // not the peer's to ack yet.
                count = count.min((limit + 1).saturating_sub(first));
            }
            // A peer we cannot send to yet (a returning process still
            // learning its peers' tokens) is not behind: its silence times
            // it out instead.
            let reachable = p.connected && p.token.is_some();
            if self.cfg.redundant_inputs && reachable && count > self.cfg.max_unacked_inputs {
                behind.push(SeatId(i as u8));
                continue;
            }
            min_acked = Some(match min_acked {
                None => p.acked,
                Some(m) => m.min(p.acked),
            });
        }
        for peer in behind {
            self.events.push_back(Event::Seat(SeatEvent::Left {
                seat: peer,
                reason: LeaveReason::TimedOut(TimeoutReason::TooManyUnacked),
            }));
            self.drop_seat(peer);
        }
        if let Some(Some(through)) = min_acked {
            self.window.trim_through(through);
        }
        self.try_release();
        if self.cfg.samples_turns() {
            self.ask_next_input();
        }
        Ok(())
    }

    pub(super) fn inputs_message(&mut self, i: usize) -> InputsMsg<I> {
        let peer = &self.peers[i];
        let from = if self.cfg.redundant_inputs {
            peer.acked
        } else {
            peer.acked.max(peer.sent_through)
        };
        let (first, mut count) = self.window.unacked_span(from);
        if let Some(limit) = self.send_limit(i) {
            count = count.min((limit + 1).saturating_sub(first));
        }
        let mut inputs = self
            .window
            .inputs_from(first, count.min(MAX_INPUTS_PER_PACKET));
        inputs.truncate(run_that_fits(&inputs, input_budget_bits(&self.cfg)));
        if !inputs.is_empty() {
            self.peers[i].sent_through = Some(first + inputs.len() as u32 - 1);
        }
        let mut msg = InputsMsg {
            ack: self.playout.through(i).map(wire_frame),
            first_frame: if inputs.is_empty() {
                0
            } else {
                wire_frame(first)
            },
            inputs,
            checksums: None,
        };
        let mut m = BitMeasurer::new();
        let _ = msg.serialize(&mut m);
        // The measured bits include the one "no checksums" flag.
        self.stats.input_bits += m.bits().saturating_sub(1);
        self.stats.inputs_carried += msg.inputs.len() as u64;
        self.stats.max_inputs_per_packet = self
            .stats
            .max_inputs_per_packet
            .max(msg.inputs.len() as u32);
        msg.checksums = self.short_report();
        msg
    }

    pub(super) fn short_report(&self) -> Option<ShortChecksums> {
        let newest = self.own_newest?;
        let mut shorts = Vec::new();
        let mut f = newest;
        while (shorts.len() as u32) < self.cfg.checksum_redundancy {
            match self.book.own(f) {
                Some(c) => shorts.push(c.short().0),
                None => break,
            }
            match f.checked_sub(1) {
                Some(g) => f = g,
                None => break,
            }
        }
        if shorts.is_empty() {
            return None;
        }
        shorts.reverse();
        Some(ShortChecksums {
            epoch: self.epoch,
            newest: wire_frame(newest),
            shorts,
        })
    }
}
