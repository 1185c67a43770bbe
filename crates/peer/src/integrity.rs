//! What a [`Peer`] does about desyncs a majority cannot simply heal: it
//! gives its evidence in a dispute, applies the match's [`DesyncPolicy`]
//! when resync fails, and stops — once, with a report — when the match is
//! found invalid, on every seat.
//!
//! - A dispute ([`Event::Disputed`](lockstep_protocol::Event::Disputed)): the peer steps the disputed frames
//!   again from the last agreed state ([`self_check`]) and reports what it
//!   found; a second run that disagrees with the first (with no change by
//!   the app to explain it) is also a [`PeerEvent::NotDeterministic`].
//! - The arbiter: a seat whose relay serves the match's arbiter puts the
//!   session's question (its checksum of the disputed frame) to it and
//!   brings the answer back ([`Peer::arbitrate`]); with no arbiter
//!   connected the answer is "none" at once, so nobody waits for it.
//! - Resync failed ([`Event::ResyncFailed`](lockstep_protocol::Event::ResyncFailed)): under `Stop` the peer
//!   declares the match invalid ([`Session::invalidate`](lockstep_protocol::Session::invalidate)),
//!   which every other seat learns; after a dispute nobody could be blamed
//!   for it first asks the other disputed seat for its state after the
//!   disputed frame, to put both states in its report; under `Snapshots`
//!   a drifted seat with an authority to follow falls back to its
//!   snapshots; under `Continue` the match plays on unchecked.
//! - The match found invalid ([`Event::Invalidated`](lockstep_protocol::Event::Invalidated), decided here or
//!   heard from a peer): unless it plays on, the peer stops with
//!   [`StopReason::MatchInvalid`] and a report. The seat that kept drifting
//!   says which fields kept differing; every other seat compares its own
//!   state after the match's first invalid frame with the state of a seat
//!   on the other side (the one at fault, or the one that told it), and
//!   says what it could not compare and why when that state does not come.
//!
//! Invariants: [`PeerEvent::Stopped`] is raised at most once, and a stop
//! for an invalid match always carries a report; a peer waiting for a
//! state to compare raises it when the state arrives, the request gives
//! up, or the app stops waiting ([`Peer::stop_waiting`]), never later;
//! the stop's `first_frame` is the session's (the earliest any seat
//! claimed and this one heard) at the moment of the stop.

use std::io::Write;

use lockstep_protocol::{Cause, Instant, Invalidation, ResyncFailure, SeatId, SeatSet, SelfCheck};
use lockstep_sim::Game;
use lockstep_sim::desync::{DesyncReport, Diagnosis, SideState};
use lockstep_sim::replay::{Note, StopCause, UncheckedCause};

use crate::diagnose::{compare, self_check, touched_through};
use crate::event::PeerEvent;
use crate::peer::Peer;
use crate::stop::{DesyncPolicy, StopReason};

impl<G: Game, W: Write> Peer<G, W> {
    /// Puts the session's question for the arbiter to it through the relay
    /// (or withdraws it), and gives the session the arbiter's answer once
    /// the relay brought it. `true` when the session got an answer (it may
    /// have decided its dispute).
    pub(crate) fn arbitrate(&mut self, now: Instant) -> bool {
        let question = self.session.arbiter_question();
        let said = self.arbiter_said.take();
        let answer = match (question, said) {
            (Some(q), Some((frame, short))) if frame == q => Some(short),
            (Some(_), _) if !self.relay.has_arbiter() => Some(None),
            _ => None,
        };
        match (question, answer) {
            (Some(q), Some(short)) => {
                self.relay.ask(None);
                self.session.arbiter_answer(now, q, short).is_ok()
            }
            (question, _) => {
                self.relay.ask(question);
                false
            }
        }
    }

    /// The match's invalidation, once this seat decided it or heard it:
    /// why it is invalid, from which frame, the seat at fault if one was
    /// found, and whether it plays on unchecked.
    pub fn invalidation(&self) -> Option<&Invalidation> {
        self.session.invalidation()
    }

    pub(crate) fn on_disputed(&mut self, now: Instant, frame: u32, seats: SeatSet) {
        let found = self_check(&self.history, frame);
        if let (SelfCheck::Inconsistent { frame: f }, Some((first, again))) =
            (found.check, found.again)
        {
            if touched_through(&self.history, frame).is_none() {
                self.stats.nondeterministic_frames += 1;
                self.events.push_back(PeerEvent::NotDeterministic {
                    frame: f,
                    first,
                    again,
                });
            }
        }
        self.dispute = Some((frame, seats));
        if self
            .session
            .report_self_check(now, frame, found.check)
            .is_err()
        {
            self.stats.refused_calls += 1;
        }
    }

    /// Resync gave up: the policy decides.
    pub(crate) fn on_resync_failed(&mut self, now: Instant, reason: ResyncFailure) {
        let local = self.seat();
        let desync = self.desync.map(|(f, _)| f).or(self.last_desync);
        // The disputed frame, which every disputed seat still holds.
        let disputed = match reason {
            ResyncFailure::Unattributed { frame } => Some(frame),
            _ => None,
        };
        let (cause, seat, first_frame) = match reason {
            ResyncFailure::Unattributed { frame } => (Cause::Unattributed, None, frame),
            // The match is invalid from the desync that was not healed;
            // the earlier ones were, and the frames they touched agree.
            ResyncFailure::Recurring { first_frame, .. } => (
                Cause::Nondeterministic,
                Some(local),
                desync.unwrap_or(first_frame),
            ),
            ResyncFailure::TooManyAttempts { .. } | ResyncFailure::HistoryTooShort { .. } => (
                Cause::Unhealable,
                Some(local),
                desync.unwrap_or_else(|| self.engine.frame()),
            ),
        };
        // Invalid from the first frame not proven agreed: a difference
        // seen at a frame whose earlier frames' reports were lost may have
        // begun before it.
        let proven = self.session.newest_clean().map_or(0, |c| c + 1);
        let first_frame = first_frame.min(proven);
        let follow = cause != Cause::Unattributed && self.snapshots.is_some();
        match self.policy {
            DesyncPolicy::Snapshots if follow => {
                let was_on = self.is_on_snapshots();
                let authority = self
                    .desync
                    .and_then(|(_, a)| a)
                    .unwrap_or_else(|| self.default_authority());
                if let Some(s) = &mut self.snapshots {
                    s.on_resync_failed(now, authority, reason, &mut self.events);
                }
                if !was_on && self.is_on_snapshots() {
                    // Its frames are no longer compared: what it logs is
                    // its own, unchecked, until it is back.
                    self.note(&Note::Unchecked {
                        from: first_frame,
                        cause: UncheckedCause::Snapshots,
                    });
                }
                return;
            }
            DesyncPolicy::Continue => {
                self.invalidate(now, first_frame, cause, seat, true);
                return;
            }
            DesyncPolicy::Snapshots | DesyncPolicy::Stop => {}
        }
        self.final_report = match cause {
            Cause::Nondeterministic => self.heals.recurring_report(first_frame),
            Cause::Unhealable => self.heals.last().cloned(),
            Cause::Unattributed => None,
        };
        if cause == Cause::Unattributed {
            // Both states in the report: ask the lowest other disputed
            // seat for its state after the disputed frame.
            let other = self
                .dispute
                .and_then(|(_, seats)| seats.iter().find(|p| *p != local));
            if let (Some(other), Some(frame)) = (other, disputed) {
                self.ask_to_compare(now, other, frame);
            }
        }
        self.invalidate(now, first_frame, cause, seat, false);
    }

    fn invalidate(
        &mut self,
        now: Instant,
        first_frame: u32,
        cause: Cause,
        seat: Option<SeatId>,
        play_on: bool,
    ) {
        let invalidation = Invalidation {
            first_frame,
            cause,
            seat,
            play_on,
        };
        // Refused only when the match was found invalid already.
        let _ = self.session.invalidate(now, invalidation);
    }

    /// Asks seat `other` for its state after `frame`, to put beside this
    /// seat's in the report (the stop waits for it).
    fn ask_to_compare(&mut self, now: Instant, other: SeatId, frame: u32) {
        if self.session.compare_with(now, other, frame).is_ok() {
            self.awaiting_compare = Some((other, frame));
        }
    }

    /// The match was found invalid, here or by seat `by`.
    pub(crate) fn on_invalidated(&mut self, now: Instant, by: SeatId, invalidation: Invalidation) {
        if invalidation.play_on {
            // The log says from which frame nothing was compared.
            self.note(&Note::Unchecked {
                from: invalidation.first_frame,
                cause: UncheckedCause::PlayedOn,
            });
            return;
        }
        if self.awaiting_compare.is_some() {
            // Stops once the state to compare arrives (or does not).
            return;
        }
        if self.final_report.is_none() {
            // No report of its own: compare this seat's state after the
            // first invalid frame with a seat's on the other side of it.
            let local = self.seat();
            let other = invalidation
                .seat
                .filter(|s| *s != local)
                .or(Some(by).filter(|s| *s != local));
            if let Some(other) = other {
                self.ask_to_compare(now, other, invalidation.first_frame);
                if self.awaiting_compare.is_some() {
                    return;
                }
            }
            self.final_report = Some(self.own_side_only(
                invalidation.first_frame,
                "no other seat to ask for its state",
            ));
        }
        self.stop_when_claims_are_in();
    }

    /// The state asked for to compare arrived.
    pub(crate) fn on_compare_state(&mut self, from: SeatId, frame: u32, state: &[u8]) {
        if self.awaiting_compare.take().is_none() {
            return;
        }
        self.final_report = Some(compare(&self.history, self.seat(), from, frame, Ok(state)));
        self.stop_when_claims_are_in();
    }

    /// The state asked for to compare will not come: `why`.
    pub(crate) fn on_compare_failed(&mut self, why: &str) {
        let Some((from, frame)) = self.awaiting_compare.take() else {
            return;
        };
        self.final_report = Some(compare(&self.history, self.seat(), from, frame, Err(why)));
        self.stop_when_claims_are_in();
    }

    /// Stops waiting for another seat's state to compare (the app's
    /// bound on the wait): the peer stops now, its report saying that the
    /// other seat's state did not come. Does nothing when it is not
    /// waiting.
    pub fn stop_waiting(&mut self) {
        self.on_compare_failed("it did not answer before this seat stopped waiting");
        if std::mem::take(&mut self.awaiting_claims) {
            self.stop_invalid();
        }
    }

    /// Whether the match was found invalid and this peer waits, before it
    /// stops, for another seat's state to compare or for every live
    /// seat's claim of the first invalid frame ([`Peer::stop_waiting`]
    /// ends the wait).
    pub fn is_waiting_to_stop(&self) -> bool {
        self.awaiting_compare.is_some() || self.awaiting_claims
    }

    /// A report with this seat's side only: its checksum and state after
    /// `frame`, and why the other side is missing.
    fn own_side_only(&self, frame: u32, why: &str) -> Diagnosis {
        let own = self.history.state_after(frame);
        let checksum = self.history.get(frame).map(|s| s.checksum);
        let shown = checksum.map_or_else(|| "not known here".to_string(), |c| c.to_string());
        let mut report = DesyncReport::new(
            G::ID,
            [
                format!("seat {} (this seat)", self.seat().0),
                "the other seats".into(),
            ],
            frame,
            [shown, "not known here".into()],
            Vec::new(),
        );
        let bytes: Result<&[u8], &str> = match &own {
            Some(o) => Ok(&o.state),
            None => Err("this seat no longer holds it"),
        };
        report.compare_after::<G>([
            SideState {
                bytes,
                checksummed: checksum,
            },
            SideState {
                bytes: Err(why),
                checksummed: None,
            },
        ]);
        let saved = lockstep_sim::SavedState {
            frame: frame + 1,
            bytes: own.map(|o| o.state).unwrap_or_default(),
        };
        Diagnosis {
            report,
            states: [saved.clone(), saved],
        }
    }

    /// Stops once every live seat's claim of the first invalid frame is
    /// in, so every seat stops with the same frame (at once if it is).
    fn stop_when_claims_are_in(&mut self) {
        if self.session.heard_every_claim() {
            self.stop_invalid();
        } else {
            self.awaiting_claims = true;
        }
    }

    pub(crate) fn stop_invalid(&mut self) {
        let first_frame = self.session.invalidation().map_or(0, |i| i.first_frame);
        let report = self.final_report.take().map(Box::new);
        self.stop(StopReason::MatchInvalid {
            first_frame,
            report,
        });
    }

    /// A seat asks for this peer's state after exactly `frame`, to compare.
    pub(crate) fn on_state_wanted(&mut self, now: Instant, frame: u32) {
        let Some(state) = self.history.state_after(frame) else {
            return;
        };
        if self
            .session
            .provide_state_at(now, frame, &state.state)
            .is_err()
        {
            // A state this seat cannot rebuild as it had it: nothing to
            // compare; the other seat's request gives up.
            self.stats.refused_calls += u64::from(state.faithful);
        }
    }

    /// Logs what a quorum vouched for — the frames compared clean, and no
    /// unsettled frame pushed out by the unsettled bound any more — before
    /// a stop; gives the frame the log then ends at.
    pub(crate) fn settle_for_stop(&mut self) -> u32 {
        let through = self.session.newest_clean();
        let confirmed = self.session.confirmed_before();
        let before = self.history.base_frame();
        let settled = self
            .history
            .settle(through, usize::MAX, confirmed, self.recording.as_mut());
        if let Err(e) = settled {
            self.stop_recording(e);
        }
        let frame = self.history.base_frame();
        if self.recording.is_some() {
            self.stats.frames_logged += u64::from(frame - before);
        }
        frame
    }

    /// Stops, once: logs the frames the seats agreed on, notes where and
    /// why the log stops (its last entry), and says so.
    pub(crate) fn stop(&mut self, reason: StopReason) {
        if self.stopped.is_some() {
            return;
        }
        self.settle_for_stop();
        let cause = match &reason {
            StopReason::MatchInvalid { first_frame, .. } => StopCause::MatchInvalid {
                first_frame: *first_frame,
            },
            StopReason::LostQuorum { .. } => StopCause::LostQuorum,
        };
        self.note(&Note::Stopped { reason: cause });
        self.stopped = Some(reason.clone());
        self.events.push_back(PeerEvent::Stopped(reason));
    }
}
