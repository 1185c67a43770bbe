//! The resync sub-state: a drifted peer requesting the authority's exact
//! state, the authority serving it in acked chunks (a heal's followed by
//! the authority's checksums of the frames the drifted peer may have got
//! wrong), and the load that re-simulates the held frames after it; and a
//! disputed seat asking for another's state after a given frame only to
//! compare it with its own. The transfer itself (chunking, bounded
//! inflate, checksum check) is `crate::state_transfer`.

use super::handshake::Refused;
use super::{CallError, Event, Phase, ResyncFailure, Session};
use crate::input::Input;
use crate::packet::{Purpose, ResyncAck, ResyncChunk, ResyncRequest};
use crate::seat::SeatId;
use crate::seq::{unwrap_frame, wire_frame};
use crate::state_transfer::{Incoming, Outgoing, Received, ResyncError};
use crate::time::{Instant, MICROS_PER_MILLI};
use lockstep_fx::Checksum;

#[derive(Debug, Clone)]
pub(super) struct Requester {
    pub(super) authority: SeatId,
    pub(super) desync_frame: u32,
    /// What the state is for (a compare request's state is not loaded).
    pub(super) purpose: Purpose,
    /// When the request began or a chunk last arrived: an attempt that
    /// hears nothing for long is abandoned.
    pub(super) heard: Instant,
    /// When the request (before the first chunk) or the ack (after it) is
    /// next repeated.
    pub(super) next_repeat_at: Instant,
    pub(super) request_due: bool,
    pub(super) incoming: Incoming,
    pub(super) ack_due: bool,
}

/// Everything the session knows about resyncs, in one place.
#[derive(Debug, Clone)]
pub(super) struct Resync {
    /// Our own request, while this peer is drifted.
    pub(super) requester: Option<Requester>,
    /// The transfer that last completed, kept to ack its late chunks.
    pub(super) finished_incoming: Option<(SeatId, Incoming, bool)>,
    /// The id of our next request.
    pub(super) next_request_id: u8,
    /// Attempts since the last stable stretch.
    pub(super) attempts: u32,
    /// The frame of the last state loaded, until enough clean frames follow.
    pub(super) load_frame: Option<u32>,
    /// Transfers we are serving.
    pub(super) serving: Vec<(SeatId, Outgoing)>,
    /// Per peer, the request id last served to completion.
    pub(super) served: Vec<Option<u8>>,
    /// Requests waiting for the app's state, at most one per seat.
    pub(super) pending_requests: Vec<Pending>,
    /// `Event::StateRequested` raised and not yet answered.
    pub(super) state_requested: bool,
    /// Chunks may go out at the next transmit.
    pub(super) resync_tick: bool,
    /// A verified state for a frame this peer has not yet stepped and
    /// confirmed, held until it has (see [`Session::load_when_reached`]).
    pub(super) held: Option<Received>,
}

/// A state request waiting for the app's state.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) who: SeatId,
    pub(super) id: u8,
    /// The oldest frame whose state answers it (a returning seat needs the
    /// state after the frame before its first), or the only one (a compare
    /// request's).
    pub(super) frame: u32,
    /// Whether only the state after exactly `frame` answers it.
    pub(super) exact: bool,
    /// A heal's: the first frame whose checksum follows the state.
    pub(super) checks_from: Option<u32>,
}

impl Resync {
    /// Nothing going on, for `seats` seats.
    pub(super) fn new(seats: usize) -> Resync {
        Resync {
            requester: None,
            finished_incoming: None,
            next_request_id: 0,
            attempts: 0,
            load_frame: None,
            serving: Vec::new(),
            served: vec![None; seats],
            pending_requests: Vec::new(),
            state_requested: false,
            resync_tick: false,
            held: None,
        }
    }
}

impl<I: Input> Session<I> {
    /// `state` is what this seat checksummed after `frame` (when it still
    /// holds that checksum): the state it hands out is the one it played.
    fn check_own_state(&self, frame: u32, state: &[u8]) -> Result<(), CallError> {
        if self
            .book
            .own(frame)
            .is_some_and(|c| c != Checksum::of(state))
        {
            return Err(CallError::StateChecksum { frame });
        }
        Ok(())
    }

    pub(super) fn begin_resync(&mut self, now: Instant, authority: SeatId, desync_frame: u32) {
        if self.phase == Phase::Stopped {
            return;
        }
        self.resync.attempts += 1;
        if self.resync.attempts > self.cfg.resync_max_attempts {
            self.resync.requester = None;
            self.book.give_up();
            self.events.push_back(Event::ResyncFailed {
                reason: ResyncFailure::TooManyAttempts {
                    attempts: self.resync.attempts - 1,
                },
            });
            return;
        }
        self.resync.next_request_id = self.resync.next_request_id.wrapping_add(1);
        // A drifted seat wants the authority's checksums of every frame it
        // may have got wrong: those after the newest compared clean. A
        // returning seat records nothing.
        let purpose = if self.awaiting_state {
            Purpose::Load
        } else {
            Purpose::Heal {
                checks_from: wire_frame(self.book.newest_clean().map_or(0, |c| c + 1)),
            }
        };
        self.resync.requester = Some(Requester {
            authority,
            desync_frame,
            purpose,
            heard: now,
            next_repeat_at: now,
            request_due: true,
            incoming: Incoming::new(self.resync.next_request_id),
            ack_due: false,
        });
    }

    /// Asks `seat` for its exact state after `frame`, to compare it with
    /// this seat's own for a report (it is not loaded): it arrives as
    /// [`Event::CompareState`], or [`Event::CompareFailed`] once one
    /// attempt heard nothing for as long as a resync attempt may (a seat
    /// that no longer holds the state does not answer). Allowed once the
    /// match is invalid (the other seats still answer).
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] unless `seat` is another seat still in
    /// the match; [`CallError::ResyncNotFailed`] while this seat's own
    /// resync is under way.
    pub fn compare_with(
        &mut self,
        now: Instant,
        seat: SeatId,
        frame: u32,
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        let ok = seat != self.cfg.local
            && self
                .peers
                .get(seat.index())
                .is_some_and(|p| !p.gone && p.token.is_some());
        if !ok {
            return Err(CallError::NotConnected { peer: seat });
        }
        if self
            .resync
            .requester
            .as_ref()
            .is_some_and(|r| r.purpose != Purpose::Compare)
        {
            return Err(CallError::ResyncNotFailed);
        }
        self.resync.next_request_id = self.resync.next_request_id.wrapping_add(1);
        self.resync.requester = Some(Requester {
            authority: seat,
            desync_frame: frame,
            purpose: Purpose::Compare,
            heard: now,
            next_repeat_at: now,
            request_due: true,
            incoming: Incoming::new(self.resync.next_request_id),
            ack_due: false,
        });
        Ok(())
    }

    /// `seat` was dropped: if it was the authority our request waits on,
    /// the request goes (as a new attempt) to the lowest seat still heard
    /// whose state is not in doubt. With none, the attempt runs out as any
    /// unanswered one does.
    pub(super) fn authority_dropped(&mut self, seat: SeatId) {
        let Some(req) = &self.resync.requester else {
            return;
        };
        if req.authority != seat {
            return;
        }
        if req.purpose == Purpose::Compare {
            // A state to compare comes from that seat or not at all.
            self.resync.requester = None;
            self.events.push_back(Event::CompareFailed { from: seat });
            return;
        }
        let frame = req.desync_frame;
        let local = self.cfg.local;
        let next = self
            .remaining()
            .iter()
            .find(|&p| p != local && !self.book.is_suspended(p));
        if let Some(authority) = next {
            let now = self.now;
            self.begin_resync(now, authority, frame);
        }
    }

    /// `seat`'s process was replaced (it returned): what we were serving
    /// its earlier process, or had served, is forgotten, so its new
    /// process's first request (whose id may repeat an old one) is served
    /// afresh and no old chunk reaches it.
    pub(super) fn forget_transfers(&mut self, seat: SeatId) {
        self.resync.serving.retain(|(to, _)| *to != seat);
        self.resync.pending_requests.retain(|r| r.who != seat);
        if let Some(s) = self.resync.served.get_mut(seat.index()) {
            *s = None;
        }
    }

    pub(super) fn on_resync_request(
        &mut self,
        who: SeatId,
        m: ResyncRequest,
    ) -> Result<(), Refused> {
        let p = who.index();
        let busy = self
            .resync
            .serving
            .iter()
            .any(|(to, o)| *to == who && o.id == m.id)
            || self.resync.served[p] == Some(m.id)
            || self
                .resync
                .pending_requests
                .iter()
                .any(|r| r.who == who && r.id == m.id);
        if self
            .resync
            .requester
            .as_ref()
            .is_some_and(|r| r.purpose != Purpose::Compare)
        {
            // Our own state is in doubt: we serve nobody.
            return Err(Refused::Unexpected);
        }
        if busy {
            // A repeat of a request already taken.
            return Ok(());
        }
        let reference = self.own_newest.unwrap_or(0);
        let Some(frame) = unwrap_frame(m.desync_frame, reference) else {
            return Err(Refused::Invalid);
        };
        let (exact, checks_from) = match m.purpose {
            Purpose::Load => (false, None),
            Purpose::Heal { checks_from } => match unwrap_frame(checks_from, frame) {
                Some(from) if from <= frame.saturating_add(1) => (false, Some(from)),
                _ => return Err(Refused::Invalid),
            },
            Purpose::Compare => (true, None),
        };
        if !exact && self.phase == Phase::Stopped {
            // Nothing is healed in a match found invalid.
            return Err(Refused::Unexpected);
        }
        // A seat's newer request replaces its older one: at most one
        // request a seat waits for the app's state.
        self.resync.pending_requests.retain(|r| r.who != who);
        self.resync.pending_requests.push(Pending {
            who,
            id: m.id,
            frame,
            exact,
            checks_from,
        });
        if exact {
            self.events.push_back(Event::StateWanted { frame });
        } else {
            self.raise_state_request();
        }
        Ok(())
    }

    /// Raises [`Event::StateRequested`] once some pending request can be
    /// answered with the state after the newest frame stepped.
    pub(super) fn raise_state_request(&mut self) {
        let Some(newest) = self.own_newest else {
            return;
        };
        if !self.resync.state_requested
            && self
                .resync
                .pending_requests
                .iter()
                .any(|r| !r.exact && r.frame <= newest)
        {
            self.resync.state_requested = true;
            self.events.push_back(Event::StateRequested);
        }
    }

    pub(super) fn on_resync_chunk(
        &mut self,
        now: Instant,
        who: SeatId,
        chunk: ResyncChunk,
    ) -> Result<(), Refused> {
        if let Some((auth, done, ack_due)) = &mut self.resync.finished_incoming {
            if *auth == who && done.id == chunk.id {
                *ack_due = true;
                return Ok(());
            }
        }
        let reference = self.playout.next_release();
        let repeat = self.repeat_micros();
        let Some(req) = &mut self.resync.requester else {
            return Err(Refused::Unexpected);
        };
        if who != req.authority || chunk.id != req.incoming.id {
            return Err(Refused::Unexpected);
        }
        let Some(frame) = unwrap_frame(chunk.frame, reference) else {
            return Err(Refused::Invalid);
        };
        if frame < req.desync_frame {
            // The authority serves a state at least as new as the frame
            // asked for: an older one is a stale transfer's.
            return Err(Refused::Invalid);
        }
        if req.incoming.on_chunk(chunk, frame).is_err() {
            return Err(Refused::Invalid);
        }
        req.ack_due = true;
        req.request_due = false;
        req.heard = now;
        req.next_repeat_at = now.plus(repeat);
        match req.incoming.finish() {
            None => {}
            Some(Ok(received)) => {
                let Some(req) = self.resync.requester.take() else {
                    return Ok(());
                };
                let compare = req.purpose == Purpose::Compare;
                self.resync.finished_incoming = Some((req.authority, req.incoming, true));
                if compare {
                    self.events.push_back(Event::CompareState {
                        from: req.authority,
                        frame: received.frame,
                        state: received.state,
                    });
                    return Ok(());
                }
                self.resync.held = Some(received);
                if !self.load_when_reached() {
                    // Hand out the frames up to the state's.
                    self.try_release();
                }
            }
            Some(Err(ResyncError::ChecksumMismatch | ResyncError::Decompress { .. }))
            | Some(Err(_)) => {
                let (authority, frame) = (req.authority, req.desync_frame);
                self.retry_request(now, authority, frame);
            }
        }
        Ok(())
    }

    /// The current request failed or went unanswered: asks again (a load
    /// counts an attempt); a compare request, only for a report, gives up.
    fn retry_request(&mut self, now: Instant, authority: SeatId, frame: u32) {
        let compare = self
            .resync
            .requester
            .as_ref()
            .is_some_and(|r| r.purpose == Purpose::Compare);
        if compare {
            self.resync.requester = None;
            self.events
                .push_back(Event::CompareFailed { from: authority });
        } else {
            self.begin_resync(now, authority, frame);
        }
    }

    /// Loads the held state once this peer has stepped, confirmed and
    /// reported its frame (at once for a rejoining process, which steps
    /// nothing before). Returns whether it did.
    ///
    /// The authority usually runs a few frames ahead: loading its state
    /// before reaching that frame would skip frames this peer never stepped,
    /// leaving its wrong ones uncorrected in its history and log. So the
    /// frames up to it are stepped first (wrongly), nothing after it is
    /// handed out meanwhile (see `try_release`), and the load replaces the
    /// frame's result once its checksum is in — the app can then compare
    /// and correct what it stepped.
    pub(super) fn load_when_reached(&mut self) -> bool {
        let Some(Received { frame, .. }) = &self.resync.held else {
            return false;
        };
        let reached =
            self.own_newest.is_some_and(|n| n >= *frame) && *frame < self.playout.next_release();
        if !(reached || self.awaiting_state) {
            return false;
        }
        let Some(Received {
            frame,
            checksum,
            state,
            checks,
        }) = self.resync.held.take()
        else {
            return false;
        };
        let authority = self.resync.finished_incoming.as_ref().map(|(a, _, _)| *a);
        if let Some(authority) = authority.filter(|_| self.too_old_to_load(frame)) {
            // The transfer outlasted the input history: the frames after the
            // state can no longer be stepped again. Ask again; the authority
            // answers with its state after its newest frame.
            self.begin_resync(self.now, authority, frame);
            return false;
        }
        self.load(frame, checksum, state, checks);
        true
    }

    /// Whether the inputs of the frames after `frame` that were already
    /// released are forgotten (released frames form one run, so the first
    /// one decides).
    fn too_old_to_load(&self, frame: u32) -> bool {
        let first = frame.wrapping_add(1);
        first < self.playout.next_release() && self.playout.frame_inputs(first).is_none()
    }

    fn load(&mut self, frame: u32, checksum: Checksum, state: Vec<u8>, checks: Vec<Checksum>) {
        self.awaiting_state = false;
        self.epoch = self.epoch.wrapping_add(1);
        self.events.push_back(Event::LoadState {
            frame,
            state,
            checks,
        });
        self.book.on_loaded(frame, checksum);
        self.own_newest = Some(frame);
        self.resync.load_frame = Some(frame);
        self.stats.resyncs_completed += 1;
        // Predictions were stepped from the state being replaced.
        self.predictions.reset(self.playout.next_release());
        self.forced_rollback = None;
        let next = self.playout.next_release();
        if next <= frame {
            self.playout.skip_to(frame + 1, I::default());
            self.filled(frame);
            self.last_released = Some(frame);
            self.next_step = frame + 1;
            self.predictions.reset(frame + 1);
            return;
        }
        for f in frame + 1..next {
            match self.playout.frame_inputs(f) {
                Some(inputs) => {
                    self.stats.frames_resimulated += 1;
                    self.events.push_back(Event::Frame {
                        frame: f,
                        inputs,
                        resimulated: true,
                        predicted: false,
                    });
                }
                None => {
                    self.book.give_up();
                    self.events.push_back(Event::ResyncFailed {
                        reason: ResyncFailure::HistoryTooShort { frame },
                    });
                    return;
                }
            }
        }
        self.next_step = next;
        self.last_released = Some(next - 1);
    }

    pub(super) fn on_resync_ack(&mut self, who: SeatId, ack: ResyncAck) -> Result<(), Refused> {
        let Some(i) = self
            .resync
            .serving
            .iter()
            .position(|(to, o)| *to == who && o.id == ack.id)
        else {
            return Err(Refused::Unexpected);
        };
        self.resync.serving[i].1.on_ack(self.now, &ack);
        if self.resync.serving[i].1.done() {
            let (_, o) = self.resync.serving.remove(i);
            self.resync.served[who.index()] = Some(o.id);
            self.stats.resyncs_served += 1;
        }
        Ok(())
    }

    pub(super) fn resync_timers(&mut self, now: Instant) {
        let rto = self.rto_micros();
        // An attempt may take a few round trips however slow the path: a
        // transfer restarted from scratch would never finish.
        let attempt_limit = self.cfg.resync_timeout_micros.max(4 * rto);
        let repeat = self.repeat_micros();
        if let Some(req) = &mut self.resync.requester {
            if now.since(req.heard) > attempt_limit {
                let (authority, frame) = (req.authority, req.desync_frame);
                self.retry_request(now, authority, frame);
            } else if now >= req.next_repeat_at {
                // Until the first chunk arrives the request is repeated, and
                // after it the ack: both are a few bytes, and waiting a
                // whole timeout for each lost one stretched transfers on
                // slow, lossy paths past the input history.
                if req.incoming.frame.is_none() {
                    req.request_due = true;
                } else {
                    req.ack_due = true;
                }
                req.next_repeat_at = now.plus(repeat);
            }
        }
        let limit = 2 * attempt_limit;
        self.resync
            .serving
            .retain(|(_, o)| now.since(o.heard) <= limit);
        if let Some(load) = self.resync.load_frame {
            if self
                .book
                .newest_clean()
                .is_some_and(|c| c >= load + self.cfg.resync_stable_frames)
            {
                self.resync.attempts = 0;
                self.resync.load_frame = None;
            }
        }
    }

    /// How often a drifted peer repeats its request or its ack while a
    /// transfer is under way: a quarter round trip, at least one tick.
    fn repeat_micros(&self) -> u64 {
        (self.rto_micros() / 8).max(self.cfg.tick_micros)
    }

    /// When a sent chunk still unacked is sent again: one and a half round
    /// trips, since the receiver acks every chunk and repeats its ack every
    /// quarter round trip.
    pub(super) fn chunk_rto_micros(&self) -> u64 {
        self.rto_micros() * 3 / 4
    }

    /// A retransmission timeout: twice the worst peer's median round trip,
    /// at least 100 ms.
    pub(super) fn rto_micros(&self) -> u64 {
        (2 * self.worst_rtt_micros()).max(100 * MICROS_PER_MILLI)
    }

    /// The snapshot after `frame`, answering [`Event::StateRequested`].
    ///
    /// `frame` must be the newest frame whose checksum this peer has
    /// reported (the last frame the app stepped, or the frame of the last
    /// [`Event::LoadState`]); it may be older than
    /// [`Session::last_released`] when [`Event::Frame`]s are still queued
    /// behind the request. `state` must hash (BLAKE3) to the checksum
    /// reported for `frame`. The request stays pending until answered, so an
    /// app that steps first and answers later passes its then-newest frame.
    /// Every pending request that this state can serve is served with it; a
    /// drifted peer loads it and re-simulates the frames after it.
    ///
    /// # Errors
    ///
    /// [`CallError::StateNotRequested`] when no request is pending or
    /// `frame` is not the newest reported; [`CallError::StateChecksum`] when
    /// `state` does not hash to the checksum reported for `frame`.
    pub fn provide_state(
        &mut self,
        now: Instant,
        frame: u32,
        state: &[u8],
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        if !self.resync.state_requested || self.own_newest != Some(frame) {
            return Err(CallError::StateNotRequested { frame });
        }
        self.check_own_state(frame, state)?;
        self.resync.state_requested = false;
        let (answered, waiting) = std::mem::take(&mut self.resync.pending_requests)
            .into_iter()
            .partition(|r| !r.exact && r.frame <= frame);
        self.resync.pending_requests = waiting;
        for r in answered {
            let checks = match r.checks_from {
                Some(from) => self.book.own_run(from, frame),
                None => Vec::new(),
            };
            self.serve(r.who, Outgoing::new(r.id, frame, state, &checks, now));
        }
        Ok(())
    }

    /// The snapshot after exactly `frame`, answering [`Event::StateWanted`]
    /// (a disputed seat compares it with its own; nobody loads it). The
    /// state must hash to the checksum this seat reported for `frame`, if
    /// it still holds that checksum.
    ///
    /// # Errors
    ///
    /// [`CallError::StateNotRequested`] when no request wants `frame`;
    /// [`CallError::StateChecksum`] when `state` does not hash to the
    /// checksum reported for `frame`.
    pub fn provide_state_at(
        &mut self,
        now: Instant,
        frame: u32,
        state: &[u8],
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        if !self
            .resync
            .pending_requests
            .iter()
            .any(|r| r.exact && r.frame == frame)
        {
            return Err(CallError::StateNotRequested { frame });
        }
        self.check_own_state(frame, state)?;
        let (answered, waiting) = std::mem::take(&mut self.resync.pending_requests)
            .into_iter()
            .partition(|r| r.exact && r.frame == frame);
        self.resync.pending_requests = waiting;
        for r in answered {
            self.serve(r.who, Outgoing::new(r.id, frame, state, &[], now));
        }
        Ok(())
    }

    fn serve(&mut self, who: SeatId, out: Outgoing) {
        self.resync.serving.retain(|(to, _)| *to != who);
        self.resync.serving.push((who, out));
        self.resync.resync_tick = true;
    }
}
