//! Seats leaving and coming back. Dropping: the session's side of
//! [`crate::seat_drop`] — freezing the seat, taking the other peers'
//! reports and their relayed inputs, and ending the seat at the agreed
//! frame. Returning: a dropped seat's restarted process says Hello; the host
//! (the lowest remaining seat), once no drop is still being agreed, names
//! the frame it plays again from and announces it to every peer, holding
//! back its own inputs for that frame until each has echoed the
//! announcement; the returning process starts its clock there, ends the
//! seats the host names as absent then (so it waits for nobody who is not
//! coming), and takes the host's exact state.

use super::handshake::{Peer, Refused};
use super::{Event, Phase, SeatEvent, Session, input_budget_bits};
use crate::input::{Input, run_that_fits};
use crate::packet::{Hello, SeatDrop, SeatReturn};
use crate::seal::PublicKey;
use crate::seat::{SeatId, SeatSet};
use crate::send_window::SendWindow;
use crate::seq::{unwrap_frame, wire_frame};
use crate::time::Instant;

impl<I: Input> Session<I> {
    /// The seats still in the match: ours and every peer not gone.
    pub(super) fn remaining(&self) -> SeatSet {
        let mut set = SeatSet::EMPTY;
        for (i, p) in self.peers.iter().enumerate() {
            if i == self.cfg.local.index() || !p.gone {
                set.insert(SeatId(i as u8));
            }
        }
        set
    }

    /// Stops taking anything from `seat` and starts agreeing with the
    /// remaining peers on its last frame (see [`crate::seat_drop`]) — if
    /// the seats still heard are a quorum; otherwise this seat stops (see
    /// `membership.rs`).
    pub(super) fn drop_seat(&mut self, seat: SeatId) {
        if seat == self.cfg.local || self.drops.is_dropping(seat) || self.phase != Phase::Running {
            return;
        }
        self.remember_vouched();
        self.peers[seat.index()].gone = true;
        if !self.check_quorum() {
            return;
        }
        self.book.drop_seat(seat);
        self.authority_dropped(seat);
        let held = self.held_for_report(seat);
        self.drops.begin(seat, held, self.now);
        self.drop_reports_due = true;
        self.settle_drops();
    }

    pub(super) fn on_seat_drop(&mut self, who: SeatId, m: SeatDrop<I>) -> Result<(), Refused> {
        let seat = m.seat;
        if seat.0 >= self.cfg.seats || seat == who {
            return Err(Refused::Unexpected);
        }
        if m.heard.is_empty() {
            return self.on_relayed(seat, m);
        }
        let p = seat.index();
        let first = if m.inputs.is_empty() {
            None
        } else {
            let reference = self.playout.through(p).map_or(0, |t| t + 1);
            match unwrap_frame(m.first_frame, reference) {
                Some(first) => Some(first),
                None => return Err(Refused::Invalid),
            }
        };
        if self.peers[p].token.unwrap_or(0) != m.token {
            // A report on another process of the seat than the one we know:
            // an earlier one, which left before the seat came back (or a
            // later one we have not heard of yet: the report is repeated).
            return Err(Refused::Unexpected);
        }
        if !self.joins_drop(who, seat) {
            // We still hear the seat: the reporter lost it, not (yet) the
            // match. Its report is kept as a suspicion and repeated.
            return Ok(());
        }
        let held = first.map(|f| f + m.inputs.len() as u32 - 1);
        self.drop_seat(seat);
        if let Some(first) = first {
            // A run that starts past what we hold (we lagged) is recorded
            // all the same: the reporter relays the inputs we lack.
            if self.playout.insert_run(p, first, &m.inputs).is_ok() {
                let now = self.held_for_report(seat);
                self.drops.now_holding(seat, now);
            }
        }
        // Answer at once when the report told us something, so the sender
        // learns we heard it (a repeat waits for the next tick: answering
        // every repeat at once would keep ever more reports in flight).
        if self.drops.on_report(who, seat, held, m.heard) {
            self.drop_reports_due = true;
        }
        self.settle_drops();
        Ok(())
    }

    /// The inputs through `frame` may be stand-ins (see `filled_through`).
    pub(super) fn filled(&mut self, frame: u32) {
        self.filled_through = Some(self.filled_through.map_or(frame, |f| f.max(frame)));
    }

    /// How far this peer holds `seat`'s inputs, as a drop report says it:
    /// stand-ins are not held (a returning process's filler must not push
    /// the agreed last frame past what the seat really sent, nor its
    /// inputs replace the real ones).
    pub(super) fn held_for_report(&self, seat: SeatId) -> Option<u32> {
        let through = self.playout.through(seat.index())?;
        self.filled_through
            .is_none_or(|f| through > f)
            .then_some(through)
    }

    /// `seat`'s inputs received from frame `from` on, at most `max` (a run
    /// relayed to a peer that lacks them).
    pub(super) fn relay_run(&self, seat: SeatId, from: u32, max: u32) -> Vec<I> {
        let Some(held) = self.held_for_report(seat) else {
            return Vec::new();
        };
        let start = from.max(self.filled_through.map_or(0, |f| f + 1));
        if start != from {
            // What it lacks we hold only as stand-ins.
            return Vec::new();
        }
        let mut run = Vec::new();
        let mut f = start;
        while f <= held && (run.len() as u32) < max {
            match self.playout.input(seat.index(), f) {
                Some(i) => run.push(i),
                None => break,
            }
            f += 1;
        }
        run.truncate(run_that_fits(&run, input_budget_bits(&self.cfg)));
        run
    }

    /// `seat`'s newest inputs for a drop report, at most `max`: only those
    /// received, with the frame of the first.
    pub(super) fn report_tail(&self, seat: SeatId, max: u32) -> (u32, Vec<I>) {
        let (first, inputs) = self.playout.tail(seat.index(), max);
        // The newest inputs that fit one packet.
        let budget = input_budget_bits(&self.cfg);
        let mut skip = 0;
        while run_that_fits(&inputs[skip..], budget) < inputs.len() - skip {
            skip += 1;
        }
        let (first, mut inputs) = (first + skip as u32, inputs[skip..].to_vec());
        let Some(f) = self.filled_through else {
            return (first, inputs);
        };
        if first > f {
            return (first, inputs);
        }
        let cut = ((f + 1 - first) as usize).min(inputs.len());
        inputs.drain(..cut);
        (f + 1, inputs)
    }

    /// Inputs of `seat` a peer relays because our report said we held fewer
    /// than it does (a SeatDrop with `heard` empty): taken if they follow on
    /// from what we hold.
    fn on_relayed(&mut self, seat: SeatId, m: SeatDrop<I>) -> Result<(), Refused> {
        let p = seat.index();
        if self.peers[p].token.unwrap_or(0) != m.token || !self.drops.is_dropping(seat) {
            return Err(Refused::Unexpected);
        }
        if m.inputs.is_empty() {
            return Err(Refused::Invalid);
        }
        let reference = self.playout.through(p).map_or(0, |t| t + 1);
        let Some(first) = unwrap_frame(m.first_frame, reference) else {
            return Err(Refused::Invalid);
        };
        if self.playout.insert_run(p, first, &m.inputs).is_ok() {
            let now = self.held_for_report(seat);
            self.drops.now_holding(seat, now);
            self.drop_reports_due = true;
            self.settle_drops();
        }
        Ok(())
    }

    /// Ends every dropped seat whose last frame is agreed and held.
    pub(super) fn settle_drops(&mut self) {
        for (seat, last) in self.drops.decide(self.remaining()) {
            if self.playout.end_seat(seat.index(), last, I::absent()) {
                self.drops.settle(seat, last);
                self.events.push_back(Event::Seat(SeatEvent::Dropped {
                    seat,
                    last_frame: last,
                }));
                self.seat_settled(seat);
            }
        }
        self.try_release();
    }
}

/// A dropped seat coming back, as the host tracks it until every peer (and
/// the returning process) has echoed the announcement.
#[derive(Debug, Clone)]
pub(super) struct Return {
    pub(super) seat: SeatId,
    pub(super) frame: u32,
    pub(super) token: u32,
    /// The other seats absent at `frame`.
    pub(super) absent: SeatSet,
    /// The returning process's public key, in a sealed session.
    pub(super) key: Option<PublicKey>,
    pub(super) acked: SeatSet,
}

/// Frames of margin, beyond a round trip, between the host's newest sampled
/// frame and the frame a returning seat plays again: no peer may have
/// sampled that frame yet when it learns of the return (their clocks are
/// kept within a few frames of each other).
const RETURN_MARGIN_FRAMES: u32 = 30;

impl<I: Input> Session<I> {
    /// The host: the lowest seat still in the match. It decides returns and
    /// relays nothing else.
    pub(super) fn host(&self) -> SeatId {
        self.remaining().iter().next().unwrap_or(self.cfg.local)
    }

    /// A Hello from a seat this session dropped: its restarted process asks
    /// to rejoin. The host names the frame it plays again from; the other
    /// peers wait for the host's announcement.
    pub(super) fn on_rejoin_hello(&mut self, now: Instant, h: Hello) {
        let seat = h.sender;
        let compatible = h.schema_hash == I::schema_hash()
            && h.seats == self.cfg.seats
            && u64::from(h.tick_micros) == self.cfg.tick_micros;
        let settled = self.drops.agreed(seat).is_some();
        if !compatible || !settled || h.token == 0 || self.host() != self.cfg.local {
            self.stats.dropped.from_gone += 1;
            return;
        }
        if self.drops.any_pending() {
            // Which seats will be absent is not known yet; the process
            // greets again at every Hello interval.
            return;
        }
        if self.returns.iter().any(|r| r.seat == seat) {
            // Already announced; the announcement is resent every tick.
            return;
        }
        let tick = self.cfg.tick_micros.max(1);
        let worst_rtt = self
            .peers
            .iter()
            .filter(|p| !p.gone)
            .filter_map(|p| p.rtt.quantile(500))
            .max()
            .unwrap_or(0)
            .max(0) as u64;
        let round_trip = (worst_rtt / tick) as u32 + 1;
        // No earlier return starts after this one (announced here, or by
        // an earlier host): the seats absent at its frame are then exactly
        // the seats not live.
        let frame = self
            .returns
            .iter()
            .map(|r| r.frame)
            .chain(self.peers.iter().filter_map(|p| p.back_from))
            .fold(
                self.clock.next_frame() + round_trip + RETURN_MARGIN_FRAMES,
                u32::max,
            );
        if self.cfg.match_frames.is_some_and(|n| frame >= n) {
            // The match is over before the seat could play a frame: no
            // return (the process gives up on its own timeouts).
            self.stats.dropped.from_gone += 1;
            return;
        }
        let mut absent = SeatSet::first(self.cfg.seats).without(self.live);
        absent.remove(seat);
        // In a sealed session the Hello opened under the key the app bound
        // with `expect_return`: that is the key the others must learn.
        let key = self.seat_key(seat);
        if self.apply_return(now, seat, frame, h.token, key) {
            self.returns.push(Return {
                seat,
                frame,
                token: h.token,
                absent,
                key,
                acked: SeatSet::EMPTY,
            });
            self.drop_reports_due = true;
        }
    }

    /// Takes `seat` back from `frame` on, with its new process's `token`
    /// (and, sealed, its public key). `false` if it had not been dropped
    /// here, `frame` is already past, or a sealed session gets no usable key.
    fn apply_return(
        &mut self,
        now: Instant,
        seat: SeatId,
        frame: u32,
        token: u32,
        key: Option<PublicKey>,
    ) -> bool {
        let p = seat.index();
        if !self.peers[p].gone || frame == 0 {
            return false;
        }
        self.remember_vouched();
        let link = match (&mut self.keys, key) {
            (None, _) => None,
            (Some(_), None) => return false,
            (Some(keys), Some(key)) => {
                let old = std::mem::replace(&mut keys.seats[p], key);
                match keys.link(p, self.cfg.initial_seq) {
                    Ok(link) => Some(link),
                    Err(_) => {
                        keys.seats[p] = old;
                        return false;
                    }
                }
            }
        };
        if !self.playout.reopen_seat(p, frame) {
            return false;
        }
        let peer = &mut self.peers[p];
        *peer = Peer::new(self.cfg.initial_seq);
        peer.link = link;
        peer.token = Some(token);
        peer.connected = true;
        peer.last_recv = now;
        peer.next_hello_at = now;
        peer.hello_reply = true;
        // It needs our inputs from its first frame on, no earlier.
        peer.acked = Some(frame - 1);
        peer.back_from = Some(frame);
        self.book.return_seat(seat);
        self.forget_transfers(seat);
        self.drops.forget(seat);
        // Its new process had no part in the drops agreed before, nor in
        // the returns announced before (it came back after them): it is
        // sent no report or announcement of them, and not waited for.
        self.drops.newcomer(seat);
        for r in &mut self.returns {
            r.acked.insert(seat);
        }
        self.seat_back(seat);
        self.events
            .push_back(Event::Seat(SeatEvent::Returned { seat, frame }));
        true
    }

    pub(super) fn on_seat_return(
        &mut self,
        now: Instant,
        who: SeatId,
        m: SeatReturn,
    ) -> Result<(), Refused> {
        let Some(frame) = unwrap_frame(m.frame, self.clock.next_frame()) else {
            return Err(Refused::Invalid);
        };
        if m.seat == self.cfg.local {
            // We are the returning process.
            if !self.cfg.rejoin || m.token != self.token {
                return Err(Refused::Unexpected);
            }
            if m.absent.contains(m.seat) {
                return Err(Refused::Invalid);
            }
            let absent = m.absent;
            self.echoes.push((who, m));
            self.drop_reports_due = true;
            if self.phase == Phase::Connecting {
                self.begin_rejoin(now, who, frame, absent);
            }
            return Ok(());
        }
        if m.seat.0 >= self.cfg.seats {
            return Err(Refused::Invalid);
        }
        if let Some(r) = self
            .returns
            .iter_mut()
            .find(|r| r.seat == m.seat && r.frame == frame)
        {
            // An echo of our own announcement.
            r.acked.insert(who);
            return Ok(());
        }
        let p = m.seat.index();
        if !self.peers[p].gone && self.peers[p].token == Some(m.token) {
            // A return already applied here (announced again, or by an
            // earlier host to a process that came back after it): echoed.
            self.echoes.push((who, m));
            self.drop_reports_due = true;
            return Ok(());
        }
        if who != self.host() {
            return Err(Refused::Unexpected);
        }
        if self.keys.is_some() && m.key.is_none() {
            // A sealed return must bring the returning process's key.
            return Err(Refused::Invalid);
        }
        // Applied once; a repeated announcement is echoed again.
        self.apply_return(now, m.seat, frame, m.token, m.key);
        self.echoes.push((who, m));
        self.drop_reports_due = true;
        Ok(())
    }

    /// The returning process learned its first frame from the host: its
    /// clock, input window and playout buffer start there, the seats absent
    /// then are ended before it (dropped, as the host's side agreed), and
    /// it asks the host for the exact state after the frame before (any
    /// later state will do: it holds every input from `frame` on).
    fn begin_rejoin(&mut self, now: Instant, host: SeatId, frame: u32, absent: SeatSet) {
        self.phase = Phase::Running;
        self.clock.start_at(now, frame);
        self.window = SendWindow::starting_at(frame);
        self.playout.skip_to(frame, I::default());
        let before = frame.checked_sub(1);
        if let Some(b) = before {
            self.filled(b);
        }
        for seat in absent.iter().filter(|s| s.0 < self.cfg.seats) {
            let p = seat.index();
            if seat == self.cfg.local || !self.playout.end_seat(p, before, I::absent()) {
                continue;
            }
            self.peers[p].gone = true;
            self.book.drop_seat(seat);
            self.drops.settled_elsewhere(seat, before);
            self.live.remove(seat);
        }
        self.awaiting_state = true;
        for p in &mut self.peers {
            p.last_recv = now;
        }
        self.events.push_back(Event::Seat(SeatEvent::Returned {
            seat: self.cfg.local,
            frame,
        }));
        self.begin_resync(now, host, frame - 1);
    }

    /// The announcements the host still owes, and the echoes we owe: one
    /// datagram each.
    pub(super) fn due_returns(&mut self) -> Vec<(SeatId, SeatReturn)> {
        let mut out = std::mem::take(&mut self.echoes);
        let remaining = self.remaining();
        let local = self.cfg.local;
        self.returns
            .retain(|r| !remaining.iter().all(|p| p == local || r.acked.contains(p)));
        for r in &self.returns {
            let m = SeatReturn {
                seat: r.seat,
                frame: wire_frame(r.frame),
                token: r.token,
                absent: r.absent,
                key: r.key,
            };
            for p in remaining.iter() {
                if p != self.cfg.local && !r.acked.contains(p) {
                    out.push((p, m.clone()));
                }
            }
        }
        out
    }

    /// The newest frame we may send to `peer`: a frame at or after a
    /// return's first frame only once the peer has acked that return, so no
    /// peer releases it before it knows the seat is back.
    pub(super) fn send_limit(&self, peer: usize) -> Option<u32> {
        self.returns
            .iter()
            .filter(|r| r.seat.index() != peer && !r.acked.contains(SeatId(peer as u8)))
            .map(|r| r.frame - 1)
            .min()
    }
}
