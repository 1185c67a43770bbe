//! The integrity sub-state: what the seats do about a desync that a
//! majority cannot simply heal, and how a match that can no longer prove
//! itself ends.
//!
//! - **Disputes.** A desync no strict majority decides (two seats, or a
//!   tie: [`Verdict::Disputed`](crate::checksum_book::Verdict::Disputed)) is settled by evidence, never by seat
//!   number. Every disputed seat steps the disputed frames again from the
//!   newest state compared clean ([`Event::Disputed`], answered with
//!   [`Session::report_self_check`]) and sends what it found (an
//!   [`Evidence`] message) to every other disputed seat until that seat's
//!   own Evidence says it heard it (and ours said we heard its). Once every
//!   disputed seat's finding is in — or the dispute outlasts its time
//!   limit, the missing findings then counting as no fault —
//!   [`attribute`] decides the same way on every seat: the seats whose
//!   re-run disagreed with their first run drifted and load the state of a
//!   self-consistent seat; when nothing attributes the fault nobody is
//!   overwritten and resync fails ([`ResyncFailure::Unattributed`]).
//! - **The arbiter.** A match with an arbiter
//!   ([`Config::arbiter`](super::Config::arbiter)) also hears a spectator
//!   that stepped the same confirmed inputs on its own: the seat whose relay
//!   serves it asks it for its checksum of the disputed frame
//!   ([`Session::arbiter_question`], answered with
//!   [`Session::arbiter_answer`]) and puts the seats it vouched for in its
//!   Evidence; every seat waits for that word (within the dispute's time
//!   limit), so all decide on the same evidence. That breaks the tie a
//!   self-check cannot: a bug that gives one machine other bits every run
//!   (an `f32`), consistently.
//! - **Recurring desyncs.** A seat that drifts
//!   [`Config::recurring_desyncs`](super::Config::recurring_desyncs) times
//!   within `recurring_window_frames` frames is not healed again: resync
//!   fails ([`ResyncFailure::Recurring`]).
//! - **The end.** When the app declares the match invalid
//!   ([`Session::invalidate`], after a resync failure its policy does not
//!   carry), or a peer says it is ([`Invalid`]), the session stops: it
//!   releases no frame, asks for no input and sends none; it sends every
//!   other live seat an Invalid at every tick until that seat sent one
//!   (and answers each one received with one of its own), and it still
//!   serves state requests, so the disputed seats can compare states for
//!   their report ([`Session::compare_with`]). A match whose policy plays
//!   on unchecked ([`Invalidation::play_on`]) does not stop: comparisons
//!   end and every frame from the first divergent one is unchecked.
//!
//! Invariants: at most one dispute at a time; findings about frames before
//! the current dispute's floor (the first frame not compared clean when it
//! began) are stale and ignored; a session is invalidated at most once
//! (a stop may follow a play-on, never the reverse); after the stop no
//! Inputs, Timing or Checksum message leaves it.

use std::collections::VecDeque;

use super::handshake::Refused;
use super::{CallError, Event, Invalidation, Phase, ResyncFailure, Session};
use crate::checksum_book::{SelfCheck, attribute};
use crate::input::Input;
use crate::packet::{Evidence, Finding, Invalid, Message};
use crate::seat::{SeatId, SeatSet};
use crate::seq::{unwrap_frame, wire_frame};
use crate::time::Instant;

/// A dispute awaiting evidence.
#[derive(Debug, Clone)]
pub(super) struct Dispute {
    /// The disputed frame, as this seat saw it.
    frame: u32,
    /// The disputed seats.
    seats: SeatSet,
    /// When it began: it is decided with what is in after its time limit.
    since: Instant,
}

/// Everything the session knows about disputes and the match's end.
#[derive(Debug, Clone)]
pub(super) struct Integrity {
    dispute: Option<Dispute>,
    /// Findings about frames before this one belong to an older dispute.
    floor: u32,
    /// Per seat, its newest finding heard (its own included) and the frame
    /// the finding is about.
    findings: Vec<Option<(u32, SelfCheck)>>,
    /// The seats our Evidence goes to, until each holds it.
    evidence_to: SeatSet,
    /// Seats whose Evidence said they hold ours.
    acked: SeatSet,
    /// Seats we sent an Evidence saying we hold theirs.
    told: SeatSet,
    evidence_due: bool,
    /// The arbiter's word on the current dispute, once the arbiter's seat
    /// has it: the disputed seats whose checksum equals the arbiter's.
    vouched: Option<SeatSet>,
    /// Frames of the desyncs this seat drifted in, within the window.
    recent: VecDeque<u32>,
    /// The newest desync verdict: its frame and the seats that drifted.
    current: Option<(u32, SeatSet)>,
    /// The match's invalidation, once decided or heard.
    invalid: Option<Invalidation>,
    /// Seats that sent us an Invalid: they know.
    informed: SeatSet,
    /// Seats owed an answer to the Invalid they sent.
    answer: SeatSet,
    invalid_due: bool,
    /// When a stopped session next repeats what it owes.
    next_at: Instant,
}

impl Integrity {
    pub(super) fn new(seats: usize) -> Integrity {
        Integrity {
            dispute: None,
            floor: 0,
            findings: vec![None; seats],
            evidence_to: SeatSet::EMPTY,
            acked: SeatSet::EMPTY,
            told: SeatSet::EMPTY,
            evidence_due: false,
            vouched: None,
            recent: VecDeque::new(),
            current: None,
            invalid: None,
            informed: SeatSet::EMPTY,
            answer: SeatSet::EMPTY,
            invalid_due: false,
            next_at: Instant::ZERO,
        }
    }

    /// Forgets the desyncs counted toward a recurring one (a retry after
    /// the snapshot fall-back starts the count afresh).
    pub(super) fn forget_desyncs(&mut self) {
        self.recent.clear();
    }

    /// The seats whose finding this seat holds for the current (or last)
    /// dispute, its own included.
    fn heard(&self, local: SeatId) -> SeatSet {
        let mut heard = SeatSet::EMPTY;
        for (i, f) in self.findings.iter().enumerate() {
            if f.is_some_and(|(frame, _)| frame >= self.floor) {
                heard.insert(SeatId(i as u8));
            }
        }
        heard.insert(local);
        heard
    }
}

impl<I: Input> Session<I> {
    /// Whether the match was found invalid and this session stopped.
    pub fn is_stopped(&self) -> bool {
        self.phase == Phase::Stopped
    }

    /// The match's invalidation, once this seat decided it or heard it.
    pub fn invalidation(&self) -> Option<&Invalidation> {
        self.integrity.invalid.as_ref()
    }

    /// The first frame of a match found invalid (playing on unchecked, or
    /// stopped): no frame from it on is proven to be every seat's.
    pub(super) fn invalid_from(&self) -> Option<u32> {
        self.integrity.invalid.map(|i| i.first_frame)
    }

    /// The dispute awaiting evidence, if any: its frame and seats.
    pub fn dispute(&self) -> Option<(u32, SeatSet)> {
        self.integrity.dispute.as_ref().map(|d| (d.frame, d.seats))
    }

    /// Answers [`Event::Disputed`]: what this seat found stepping the
    /// disputed frames again. Sent to every other disputed seat; once every
    /// finding is in, the dispute is decided.
    ///
    /// # Errors
    ///
    /// [`CallError::NotDisputed`] unless a dispute about `frame` awaits
    /// this seat's finding.
    pub fn report_self_check(
        &mut self,
        now: Instant,
        frame: u32,
        check: SelfCheck,
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        let local = self.cfg.local;
        let ours = self.integrity.findings[local.index()];
        let open = self
            .integrity
            .dispute
            .as_ref()
            .is_some_and(|d| d.frame == frame);
        if !open || ours.is_some_and(|(f, _)| f >= self.integrity.floor) {
            return Err(CallError::NotDisputed { frame });
        }
        self.integrity.findings[local.index()] = Some((frame, check));
        self.integrity.evidence_due = true;
        self.try_decide(now);
        Ok(())
    }

    /// The frame whose checksum this seat should ask the match's arbiter
    /// for: while a dispute awaits the arbiter's word and this seat's relay
    /// serves the arbiter ([`Config::arbiter`](super::Config::arbiter)).
    pub fn arbiter_question(&self) -> Option<u32> {
        if self.cfg.arbiter != Some(self.cfg.local) || self.integrity.vouched.is_some() {
            return None;
        }
        self.integrity.dispute.as_ref()?;
        self.book.dispute().map(|(frame, _)| *frame)
    }

    /// Answers [`Session::arbiter_question`]: the arbiter's short checksum
    /// of `frame`, or `None` when it has none (it did not step the frame,
    /// or no arbiter is connected). The disputed seats holding that
    /// checksum are vouched for in this seat's Evidence, and every seat
    /// decides with it.
    ///
    /// # Errors
    ///
    /// [`CallError::NotDisputed`] unless `frame` is the question asked.
    pub fn arbiter_answer(
        &mut self,
        now: Instant,
        frame: u32,
        short: Option<u64>,
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        if self.arbiter_question() != Some(frame) {
            return Err(CallError::NotDisputed { frame });
        }
        let mut vouched = SeatSet::EMPTY;
        if let (Some(short), Some((_, sums))) = (short, self.book.dispute()) {
            for (p, s) in sums {
                if *s == short {
                    vouched.insert(*p);
                }
            }
        }
        let i = &mut self.integrity;
        i.vouched = Some(vouched);
        // Every other disputed seat must hear it, even one that holds our
        // finding already.
        if let Some(d) = &i.dispute {
            i.evidence_to = d.seats;
            i.evidence_to.remove(self.cfg.local);
        }
        i.acked = SeatSet::EMPTY;
        i.evidence_due = true;
        self.try_decide(now);
        Ok(())
    }

    /// Declares the match invalid from `invalidation.first_frame` on (the
    /// app's policy after a resync failure it cannot carry): every other
    /// live seat is told, and unless it plays on unchecked this session
    /// stops (see the module documentation).
    ///
    /// # Errors
    ///
    /// [`CallError::Invalidated`] if it was invalidated already (a stop
    /// after a play-on is taken).
    pub fn invalidate(
        &mut self,
        now: Instant,
        invalidation: Invalidation,
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        let local = self.cfg.local;
        self.adopt_invalid(local, invalidation)
    }

    /// Takes `invalidation`, decided here (`by` = our seat) or heard from
    /// seat `by`.
    fn adopt_invalid(&mut self, by: SeatId, invalidation: Invalidation) -> Result<(), CallError> {
        let stop = !invalidation.play_on;
        match &mut self.integrity.invalid {
            Some(old) if !(stop && old.play_on) => {
                // Already invalid: the match is invalid from the earliest
                // frame any seat claims, the same on every seat that heard
                // every claim.
                old.first_frame = old.first_frame.min(invalidation.first_frame);
                return Err(CallError::Invalidated);
            }
            _ => {}
        }
        let first_frame = self
            .integrity
            .invalid
            .map_or(invalidation.first_frame, |old| {
                old.first_frame.min(invalidation.first_frame)
            });
        let invalidation = Invalidation {
            first_frame,
            ..invalidation
        };
        self.integrity.invalid = Some(invalidation);
        self.integrity.invalid_due = true;
        self.integrity.dispute = None;
        self.book.give_up();
        if stop {
            self.phase = Phase::Stopped;
            self.awaiting_input = None;
            self.integrity.next_at = self.now;
            // Nothing is loaded any more (a compare request goes on).
            if self
                .resync
                .requester
                .as_ref()
                .is_some_and(|r| r.purpose != crate::packet::Purpose::Compare)
            {
                self.resync.requester = None;
            }
            self.resync.held = None;
        }
        self.events
            .push_back(Event::Invalidated { by, invalidation });
        Ok(())
    }

    pub(super) fn on_invalid(&mut self, who: SeatId, m: Invalid) -> Result<(), Refused> {
        let reference = self.own_newest.unwrap_or(self.playout.next_release());
        let Some(first_frame) = unwrap_frame(m.first_frame, reference) else {
            return Err(Refused::Invalid);
        };
        self.integrity.informed.insert(who);
        self.integrity.answer.insert(who);
        self.integrity.invalid_due = true;
        // Our own verdict about the same seat's desync, while that seat has
        // not loaded a state since, may have seen it a frame earlier.
        let ours = self.integrity.current.filter(|(_, drifted)| {
            m.seat
                .is_some_and(|s| drifted.contains(s) && self.book.is_suspended(s))
        });
        let first_frame = ours.map_or(first_frame, |(f, _)| f.min(first_frame));
        let invalidation = Invalidation {
            first_frame,
            cause: m.cause,
            seat: m.seat,
            play_on: m.play_on,
        };
        // A repeat, or news that changes nothing here, is still taken.
        let _ = self.adopt_invalid(who, invalidation);
        Ok(())
    }

    /// A verdict of [`Verdict::Disputed`](crate::checksum_book::Verdict::Disputed): asks the app for its self-check.
    pub(super) fn begin_dispute(&mut self, now: Instant, frame: u32, seats: SeatSet) {
        let floor = self.book.newest_clean().map_or(0, |c| c + 1);
        let local = self.cfg.local;
        let i = &mut self.integrity;
        i.floor = floor;
        i.findings[local.index()] = None;
        i.dispute = Some(Dispute {
            frame,
            seats,
            since: now,
        });
        let mut to = seats;
        to.0 &= !(1 << local.0);
        i.evidence_to = to;
        i.acked = SeatSet::EMPTY;
        i.told = SeatSet::EMPTY;
        i.vouched = None;
        self.events.push_back(Event::Disputed { frame, seats });
    }

    pub(super) fn on_evidence(
        &mut self,
        now: Instant,
        who: SeatId,
        m: Evidence,
    ) -> Result<(), Refused> {
        let reference = self.own_newest.unwrap_or(self.playout.next_release());
        let Some(frame) = unwrap_frame(m.frame, reference) else {
            return Err(Refused::Invalid);
        };
        let check = match m.finding {
            Finding::Consistent => SelfCheck::Consistent,
            Finding::Unknown => SelfCheck::Unknown,
            Finding::Inconsistent { frame: at } => match unwrap_frame(at, frame) {
                Some(at) => SelfCheck::Inconsistent { frame: at },
                None => return Err(Refused::Invalid),
            },
        };
        let local = self.cfg.local;
        let i = &mut self.integrity;
        if frame >= i.floor {
            let newer = i.findings[who.index()].is_none_or(|(f, _)| f < i.floor || frame >= f);
            if newer {
                i.findings[who.index()] = Some((frame, check));
            }
            // The arbiter's seat, once it has the arbiter's word, counts
            // an Evidence as an ack only if it echoes that word.
            let echoes =
                self.cfg.arbiter != Some(local) || i.vouched.is_none() || m.arbiter.is_some();
            if m.heard.contains(local) && echoes {
                i.acked.insert(who);
            }
            if m.arbiter.is_some() && self.cfg.arbiter == Some(who) {
                if i.dispute.is_some() && i.vouched.is_none() {
                    i.vouched = m.arbiter;
                }
                // Say we hold it: the arbiter's seat repeats its Evidence
                // until our echo comes.
                i.evidence_to.insert(who);
                i.told.remove(who);
            }
            // It needs ours, or to learn that we hold its.
            i.evidence_due = true;
        }
        self.try_decide(now);
        Ok(())
    }

    /// Decides the dispute once every disputed seat's finding is in, or
    /// its time is up.
    fn try_decide(&mut self, now: Instant) {
        let Some(d) = self.integrity.dispute.clone() else {
            return;
        };
        let local = self.cfg.local;
        let floor = self.integrity.floor;
        let finding = |p: SeatId| self.integrity.findings[p.index()].filter(|(f, _)| *f >= floor);
        if finding(local).is_none() {
            return;
        }
        let live: Vec<SeatId> = d
            .seats
            .iter()
            .filter(|p| *p == local || !self.peers[p.index()].gone)
            .collect();
        let all_in = live.iter().all(|p| finding(*p).is_some());
        let awaits_arbiter =
            self.integrity.vouched.is_none() && self.cfg.arbiter.is_some_and(|a| live.contains(&a));
        if (!all_in || awaits_arbiter) && now.since(d.since) <= self.dispute_limit_micros() {
            return;
        }
        let sums: Vec<(SeatId, u64)> = self
            .book
            .dispute()
            .map(|(_, s)| {
                s.iter()
                    .filter(|(p, _)| live.contains(p))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        let findings: Vec<(SeatId, SelfCheck)> = live
            .iter()
            .filter_map(|p| Some((*p, finding(*p)?.1)))
            .collect();
        // Every seat's finding names the first frame it saw differ: the
        // earliest is the dispute's (a report lost on the way can make one
        // seat see the difference a frame late).
        let frame = live
            .iter()
            .filter_map(|p| finding(*p))
            .map(|(f, _)| f)
            .fold(d.frame, u32::min);
        self.integrity.dispute = None;
        let vouched = self.integrity.vouched.unwrap_or(SeatSet::EMPTY);
        let verdict = attribute(frame, &sums, &findings, vouched);
        match self.book.resolve(verdict) {
            Some(v) => self.on_verdict(now, Some(v)),
            None => self.events.push_back(Event::ResyncFailed {
                reason: ResyncFailure::Unattributed { frame },
            }),
        }
    }

    /// A verdict that `drifted` drifted at `frame`: kept to tell a peer's
    /// news about the same desync the earliest frame known.
    pub(super) fn note_desync(&mut self, frame: u32, drifted: SeatSet) {
        self.integrity.current = Some((frame, drifted));
    }

    /// How long a dispute may wait for findings: as long as a resync
    /// attempt.
    fn dispute_limit_micros(&self) -> u64 {
        self.cfg.resync_timeout_micros.max(4 * self.rto_micros())
    }

    /// Counts a desync this seat drifted in; `true` when it is one too many
    /// within the window (resync failed instead).
    pub(super) fn recurring(&mut self, frame: u32) -> bool {
        let k = self.cfg.recurring_desyncs;
        if k == 0 {
            return false;
        }
        let window = self.cfg.recurring_window_frames;
        let recent = &mut self.integrity.recent;
        recent.push_back(frame);
        while recent
            .front()
            .is_some_and(|f| frame.saturating_sub(*f) >= window)
        {
            recent.pop_front();
        }
        while recent.len() > k as usize {
            recent.pop_front();
        }
        if recent.len() < k as usize {
            return false;
        }
        let first_frame = recent.front().copied().unwrap_or(frame);
        self.book.give_up();
        self.resync.requester = None;
        self.events.push_back(Event::ResyncFailed {
            reason: ResyncFailure::Recurring {
                desyncs: k,
                first_frame,
            },
        });
        true
    }

    /// At a tick: decides a dispute whose time is up, and repeats what is
    /// owed.
    pub(super) fn integrity_tick(&mut self, now: Instant) {
        self.try_decide(now);
        let i = &mut self.integrity;
        if !i.evidence_to.is_empty() {
            i.evidence_due = true;
        }
        if i.invalid.is_some() {
            i.invalid_due = true;
        }
    }

    /// A stopped session's timers: repeat the Invalid owed and run the
    /// transfers still under way, once a tick.
    pub(super) fn stopped_timers(&mut self, now: Instant) {
        if now < self.integrity.next_at {
            return;
        }
        self.integrity.next_at = now.plus(self.cfg.tick_micros);
        self.integrity.invalid_due = true;
        self.resync.resync_tick = true;
        self.resync_timers(now);
    }

    /// Whether every live seat heard from lately has told this one that
    /// the match is invalid (and so its claim of the first invalid frame
    /// is in): the match's first invalid frame is then the one every seat
    /// that heard all claims holds.
    pub fn heard_every_claim(&self) -> bool {
        self.integrity.invalid.is_some() && self.uninformed().is_empty()
    }

    /// When a stopped session next needs its timers: while some live seat
    /// has not said it knows, or a transfer is under way.
    pub(super) fn stopped_timeout(&self) -> Option<Instant> {
        let busy = !self.uninformed().is_empty()
            || self.resync.requester.is_some()
            || !self.resync.serving.is_empty();
        busy.then_some(self.integrity.next_at)
    }

    /// Live seats that have not sent us an Invalid and were heard from
    /// recently (a stopped session does not time peers out, but stops
    /// talking to one silent that long).
    fn uninformed(&self) -> SeatSet {
        let mut out = SeatSet::EMPTY;
        if self.integrity.invalid.is_none() {
            return out;
        }
        for (i, p) in self.peers.iter().enumerate() {
            let seat = SeatId(i as u8);
            let silent = self.now.since(p.last_recv) > self.cfg.peer_timeout_micros;
            if seat != self.cfg.local
                && !p.gone
                && p.token.is_some()
                && !silent
                && !self.integrity.informed.contains(seat)
            {
                out.insert(seat);
            }
        }
        out
    }

    /// Queues the Evidence and Invalid messages due.
    pub(super) fn integrity_transmits(&mut self) {
        let local = self.cfg.local;
        if std::mem::take(&mut self.integrity.evidence_due) && self.phase == Phase::Running {
            let heard = self.integrity.heard(local);
            let own =
                self.integrity.findings[local.index()].filter(|(f, _)| *f >= self.integrity.floor);
            if let Some((frame, check)) = own {
                let finding = match check {
                    SelfCheck::Consistent => Finding::Consistent,
                    SelfCheck::Unknown => Finding::Unknown,
                    SelfCheck::Inconsistent { frame } => Finding::Inconsistent {
                        frame: wire_frame(frame),
                    },
                };
                let m = Evidence {
                    frame: wire_frame(frame),
                    finding,
                    heard,
                    arbiter: self.integrity.vouched,
                };
                let targets: Vec<SeatId> = self
                    .integrity
                    .evidence_to
                    .iter()
                    .filter(|p| !self.peers[p.index()].gone)
                    .filter(|p| {
                        let i = &self.integrity;
                        !i.acked.contains(*p) || (heard.contains(*p) && !i.told.contains(*p))
                    })
                    .collect();
                for p in targets {
                    if heard.contains(p) {
                        self.integrity.told.insert(p);
                    }
                    self.send_routed(p, Message::Evidence(m));
                }
                // Done with a seat once it holds ours and knows we hold
                // its.
                let (acked, told) = (self.integrity.acked, self.integrity.told);
                self.integrity.evidence_to.0 &= !(acked.0 & told.0);
            }
        }
        if std::mem::take(&mut self.integrity.invalid_due) {
            let Some(inv) = self.integrity.invalid else {
                return;
            };
            let m = Invalid {
                first_frame: wire_frame(inv.first_frame),
                cause: inv.cause,
                seat: inv.seat,
                play_on: inv.play_on,
            };
            let mut to = self.uninformed();
            to.0 |= std::mem::take(&mut self.integrity.answer).0;
            for p in to.iter() {
                if !self.peers[p.index()].gone {
                    self.send_routed(p, Message::Invalid(m));
                }
            }
        }
    }
}
