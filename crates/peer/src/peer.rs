//! [`Peer`]: a [`Session`] and an [`Engine`] joined — the part of a lockstep
//! engine that every embedding would otherwise write itself.
//!
//! The peer answers every session event on its own: it samples the local
//! input (the input the app holds, or its bot's), steps each released frame
//! and reports the checksum, rolls back to its own saved state when a
//! prediction was wrong (rollback mode), serves its exact state when a
//! drifted peer asks for it, and, when it drifted itself, diagnoses the
//! desync against the authority's state, loads that state and re-simulates
//! the frames it holds since; in a dispute it gives its evidence about
//! itself, and when a desync cannot be healed it applies the match's
//! [`DesyncPolicy`] (see [`crate::integrity`]). It records the match as it
//! goes (see [`crate::history`]): confirmed frames only, so a replay log
//! never holds a prediction, and a healed seat's log holds the match's
//! trajectory, not the frames it got wrong. The app moves datagrams and
//! time in and out, and reads [`PeerEvent`]s.
//!
//! Invariants: like the session, a peer reads no clock and owns no socket:
//! the same calls give the same results on every run. Session events are
//! answered in the order they come; a state request is answered only after
//! every frame released before it has been stepped, with the state after
//! the newest frame whose checksum entered the comparison (the newest
//! confirmed one), which the session verifies against that checksum.
//! Spectators are fed confirmed frames only.

use std::collections::VecDeque;
use std::io::Write;

use lockstep_fx::Checksum;
use lockstep_protocol::seal::{PublicKey, SealError};
use lockstep_protocol::spectate::{Relay, RelayEvent, SpectatorId, SpectatorTransmit};
use lockstep_protocol::{
    CallError, Commanded, Event, Input, Instant, Mode, SeatId, SeatSet, Security, Session, Stats,
    Transmit,
};
use lockstep_sim::desync::Diagnosis;
use lockstep_sim::replay::{Header, LogWriter, Note};
use lockstep_sim::{Bot, Engine, EngineSettings, Game, Match};

use crate::error::PeerError;
use crate::event::PeerEvent;
use crate::heals::Heals;
use crate::history::{History, HistorySettings, Recording, RecordingError, Stepped};
use crate::settings::PeerSettings;
use crate::snapshot_server::Receiver;
use crate::snapshots::Snapshots;
use crate::stats::PeerStats;
use crate::stop::{DesyncPolicy, StopReason};

/// One seat of a match: plays `G` through the lockstep protocol and records
/// it to a replay log written to `W`.
pub struct Peer<G: Game, W: Write> {
    pub(crate) session: Session<G::Input>,
    pub(crate) relay: Relay<G::Input>,
    pub(crate) engine: Engine<G>,
    pub(crate) history: History<G>,
    pub(crate) recording: Option<Recording<W, G::Input>>,
    bot: Option<Box<dyn Bot<G>>>,
    input: G::Input,
    pub(crate) touched: bool,
    /// Time the app spent in this peer's calls not yet spread over frames
    /// stepped ([`Peer::spent`]), and the frames stepped at the last report.
    spent: (u64, u64),
    pub(crate) state_requested: bool,
    pub(crate) desync: Option<(u32, Option<SeatId>)>,
    /// The frame of the newest desync this seat drifted in.
    pub(crate) last_desync: Option<u32>,
    /// The dispute this seat gave evidence in, last: its frame and seats.
    pub(crate) dispute: Option<(u32, SeatSet)>,
    /// The arbiter's answer the relay brought: the frame and its checksum.
    pub(crate) arbiter_said: Option<(u32, Option<u64>)>,
    /// What the newest heals' reports said.
    pub(crate) heals: Heals,
    /// The report the coming stop carries.
    pub(crate) final_report: Option<Diagnosis>,
    /// A stop waiting for another seat's state to compare: the seat
    /// asked, and the frame whose state it was asked for.
    pub(crate) awaiting_compare: Option<(SeatId, u32)>,
    /// A stop with its report ready, waiting to hear every live seat's
    /// claim of the first invalid frame (or for those seats to fall silent).
    pub(crate) awaiting_claims: bool,
    /// The first frame the last heal corrected, and the checksums from it
    /// through the loaded frame.
    pub(crate) healed: Option<(u32, Vec<Checksum>)>,
    pub(crate) policy: DesyncPolicy,
    max_unsettled: usize,
    /// Frames before this one were passed to the spectator relay.
    confirmed_before: u32,
    pub(crate) events: VecDeque<PeerEvent>,
    pub(crate) stats: PeerStats,
    /// The state before frame 0 (the snapshot streams' initial baseline).
    pub(crate) initial_state: Vec<u8>,
    /// Snapshot streams and the fall-back, once enabled.
    pub(crate) snapshots: Option<Snapshots<G>>,
    /// Why this peer stopped before the match's end, once it has.
    pub(crate) stopped: Option<StopReason>,
}

impl<G: Game, W: Write> core::fmt::Debug for Peer<G, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Peer")
            .field("seat", &self.seat())
            .field("frame", &self.engine.frame())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<G: Game, W: Write> Peer<G, W> {
    /// A peer for a match of `G` with `config` and `setup`, recording to
    /// `log` (the log's header is written at once; pass `std::io::sink()`
    /// to record nothing).
    ///
    /// With `settings.session.rejoin`, this is a restarted process taking
    /// its dropped seat back in a running match: it loads the host's state
    /// and plays on from there. It records nothing (a replay log starts at
    /// frame 0, which it never saw); the other peers' logs hold the match.
    pub fn new(
        config: &G::Config,
        setup: Match,
        settings: PeerSettings,
        log: W,
    ) -> Result<Peer<G, W>, PeerError> {
        if settings.session.seats != setup.seats {
            return Err(PeerError::Seats {
                session: settings.session.seats,
                setup: setup.seats,
            });
        }
        let game = G::new(config, &setup)?;
        let seat = settings.session.local;
        let relay = Relay::new(settings.spectate, seat, settings.token);
        // A sealed session's spectators are sealed with the same key pair.
        let relay = match &settings.session.security {
            Security::Sealed { identity, .. } => relay.sealed(identity.clone()),
            Security::Plain => relay,
        };
        let session = Session::new(settings.session, settings.token)?;
        let rec = settings.record;
        let header = Header::new::<G>(
            config,
            setup,
            rec.full_checksum_interval,
            rec.keyframe_interval,
        );
        let writer = LogWriter::new(log, header, rec.chunk_frames)?;
        let initial = game.save();
        let recording = (!session.config().rejoin).then_some(Recording {
            writer,
            keyframe_interval: rec.keyframe_interval,
        });
        let initial_state = initial.clone();
        // The states a rollback returns to (the prediction window, the sync
        // test's reach) and the newest confirmed one a resync serves.
        let reach = match session.config().mode {
            Mode::Lockstep => 0,
            Mode::Rollback(r) => r.max_prediction + r.sync_test_frames,
        };
        let history_settings = HistorySettings {
            state_every: settings.state_every.max(1),
            recent: reach + 2,
        };
        Ok(Peer {
            session,
            relay,
            engine: Engine::new(game, EngineSettings::NONE),
            history: History::new(0, initial, history_settings),
            recording,
            bot: None,
            input: G::Input::default(),
            touched: false,
            spent: (0, 0),
            state_requested: false,
            desync: None,
            last_desync: None,
            dispute: None,
            arbiter_said: None,
            heals: Heals::default(),
            final_report: None,
            awaiting_compare: None,
            awaiting_claims: false,
            healed: None,
            policy: settings.desync_policy,
            max_unsettled: settings.max_unsettled_frames as usize,
            confirmed_before: 0,
            events: VecDeque::new(),
            stats: PeerStats::default(),
            initial_state,
            snapshots: None,
            stopped: None,
        })
    }

    /// This peer's seat.
    pub fn seat(&self) -> SeatId {
        self.session.config().local
    }

    /// Lets each frame this peer steps use up to `threads` threads (at
    /// least 1): the game's step and the hashing of its state, here and
    /// when it steps frames again (a rollback, a rebuilt state, a
    /// diagnosis). A setting of this machine, as [`Engine::set_threads`]:
    /// the states and checksums are the same for any count, so the seats
    /// of one match may choose differently.
    pub fn set_threads(&mut self, threads: usize) {
        self.engine.set_threads(threads);
        self.history.set_threads(threads);
    }

    /// The threads each frame may use.
    pub fn threads(&self) -> usize {
        self.engine.threads()
    }

    /// Starts the engine again from `game`, the state before `frame`, on
    /// the same threads.
    pub(crate) fn restart_engine(&mut self, game: G, frame: u32) {
        let threads = self.engine.threads();
        self.engine = Engine::at(game, frame, *self.engine.settings());
        self.engine.set_threads(threads);
    }

    /// Lets `bot` choose the local input from now on (headless play).
    pub fn set_bot(&mut self, bot: Box<dyn Bot<G>>) {
        self.bot = Some(bot);
    }

    /// Sets the input the local player holds now (the controls' state); it
    /// is sampled once per frame, whenever the session asks. Stops any bot.
    pub fn set_input(&mut self, input: G::Input) {
        self.bot = None;
        self.input = input;
    }

    /// Feeds a datagram received from seat `from` (the app maps source
    /// addresses to seats), then answers what it caused.
    ///
    /// Returns whether it was a packet from that seat (it decoded and, in a
    /// sealed session, opened under the seat's key): see
    /// [`Session::handle_datagram`].
    pub fn handle_datagram(&mut self, now: Instant, from: SeatId, bytes: &[u8]) -> bool {
        let taken = self.session.handle_datagram(now, from, bytes);
        self.answer(now);
        taken
    }

    /// Binds dropped seat `seat` to the public key of the process that asks
    /// to take it back (heard at match setup), so its sealed handshake
    /// opens; see [`Session::expect_return`].
    pub fn expect_return(&mut self, seat: SeatId, key: PublicKey) -> Result<(), CallError> {
        self.session.expect_return(seat, key)
    }

    /// Admits spectator `spectator` with the public key it gave at match
    /// setup: a sealed peer's relay takes nothing from it before.
    pub fn admit_spectator(
        &mut self,
        spectator: SpectatorId,
        key: PublicKey,
    ) -> Result<(), SealError> {
        self.relay.admit(spectator, key)
    }

    /// Names spectator `spectator` the match's arbiter: in a dispute this
    /// seat (the match's [`Config::arbiter`](lockstep_protocol::Config::arbiter))
    /// asks it for its checksum of the disputed frame.
    pub fn name_arbiter(&mut self, spectator: SpectatorId) {
        self.relay.name_arbiter(spectator);
    }

    /// Forgets spectator `spectator` (admitted, but its handshake never came,
    /// or its address is gone): the relay drops its key and slot.
    pub fn revoke_spectator(&mut self, spectator: SpectatorId) {
        self.relay.revoke(spectator);
    }

    /// Feeds a datagram received from spectator `from` (the app's id for
    /// a spectator's address; a [`SpectateHello`](lockstep_protocol::packet::SpectateHello)
    /// from an unknown address is a new one). It reaches only this peer's
    /// spectator relay, never the session: a spectator cannot send inputs.
    pub fn handle_spectator_datagram(&mut self, now: Instant, from: SpectatorId, bytes: &[u8]) {
        self.relay.handle_datagram(now, from, bytes);
        self.answer(now);
    }

    /// Runs the timers once `now` reaches [`Peer::poll_timeout`], then
    /// answers what they caused (at each tick: sample the input, step the
    /// frames due).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        if self.relay.poll_timeout().is_some_and(|t| t <= now) {
            self.relay.handle_timeout(now);
        }
        self.answer(now);
    }

    /// Tells the peer how long the app spent in its calls (by the app's
    /// own clock, or a simulated cost), stepping frames included. Spread
    /// over the frames stepped since the last report, it becomes the step
    /// cost the match's pace is set by: a seat whose steps take longer
    /// than a tick slows every seat down together instead of stalling
    /// them (see `lockstep_protocol::Session::report_step_cost`). Time
    /// spent while no frame was stepped waits for the next frame.
    pub fn spent(&mut self, micros: u64) {
        let stepped = self.stats.frames_stepped;
        self.spent.0 = self.spent.0.saturating_add(micros);
        let frames = stepped.saturating_sub(self.spent.1);
        if let Some(cost) = self.spent.0.checked_div(frames) {
            self.session.report_step_cost(cost);
            self.spent = (0, stepped);
        }
    }

    /// The next datagram to send to a seat.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.session.poll_transmit(now)
    }

    /// The next datagram to send to a spectator.
    #[must_use]
    pub fn poll_spectator_transmit(&mut self, now: Instant) -> Option<SpectatorTransmit> {
        self.relay.poll_transmit(now)
    }

    /// When [`Peer::handle_timeout`] next needs calling, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.session.poll_timeout(), self.relay.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next thing that happened, in order.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<PeerEvent> {
        self.events.pop_front()
    }

    /// The game now (after the newest frame stepped), for drawing.
    pub fn game(&self) -> &G {
        self.engine.game()
    }

    /// The game, to change it outside the simulation: an editor, or a test
    /// that corrupts it. Such a change is not an input: the other peers do
    /// not see it, so it shows up as a desync that is diagnosed and healed.
    /// In rollback mode, a change made while frames are predicted is lost
    /// when a rollback goes back behind it (the frames are stepped again
    /// from the state saved before).
    pub fn game_mut(&mut self) -> &mut G {
        self.touched = true;
        self.engine.game_mut()
    }

    /// Why this peer stopped before the match's end, once it has (it then
    /// steps no more frames).
    pub fn stopped(&self) -> Option<&StopReason> {
        self.stopped.as_ref()
    }

    /// The next frame to step.
    pub fn frame(&self) -> u32 {
        self.engine.frame()
    }

    /// The checksum of the newest frame stepped, with that frame.
    pub fn newest_checksum(&self) -> Option<(u32, Checksum)> {
        let f = self.engine.frame().checked_sub(1)?;
        match self.history.newest() {
            Some((g, c)) if g == f => Some((f, c)),
            _ => self
                .history
                .state_after(f)
                .map(|r| (f, Checksum::of(&r.state))),
        }
    }

    /// Bytes of game states the unsettled history holds now (the live
    /// state bytes; the peak is [`PeerStats::peak_state_bytes`]).
    pub fn state_bytes(&self) -> u64 {
        self.history.state_bytes()
    }

    /// The protocol session (delays, counters).
    pub fn session(&self) -> &Session<G::Input> {
        &self.session
    }

    /// The session's counters.
    pub fn session_stats(&self) -> &Stats {
        self.session.stats()
    }

    /// The spectator relay (spectators, counters).
    pub fn relay(&self) -> &Relay<G::Input> {
        &self.relay
    }

    /// The peer's counters.
    pub fn stats(&self) -> &PeerStats {
        &self.stats
    }

    /// Says goodbye to every peer.
    pub fn disconnect(&mut self, now: Instant) {
        self.session.disconnect(now);
    }

    /// Ends the match: logs every frame stepped (settled or not), ends the
    /// replay log and gives back its output (`None` if recording stopped).
    /// A peer that [stopped](Peer::stopped) early logs nothing more: its log
    /// ends where it stopped (with the frames the seats agreed on, and a
    /// note saying why).
    pub fn finish(mut self) -> std::io::Result<Option<W>> {
        let Some(mut rec) = self.recording.take() else {
            return Ok(None);
        };
        let confirmed = self.session.confirmed_before();
        if self.stopped.is_some() {
            // Nothing after the stop is vouched for.
        } else if let Err(e) = self.history.settle_all(confirmed, Some(&mut rec)) {
            return Err(std::io::Error::other(e.reason));
        }
        rec.writer.finish().map(Some)
    }

    fn answer(&mut self, now: Instant) {
        self.drain(now);
        if self.arbitrate(now) {
            self.drain(now);
        }
        if self.awaiting_claims && self.session.heard_every_claim() {
            self.awaiting_claims = false;
            self.stop_invalid();
        }
    }

    /// Acts on every event the session raised.
    fn drain(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            match event {
                Event::InputNeeded { frame } => self.sample(frame),
                Event::Frame {
                    frame,
                    inputs,
                    resimulated,
                    predicted,
                } => self.step(now, frame, inputs, resimulated, predicted),
                Event::Rollback { frame } => self.rollback(frame),
                Event::StateRequested => self.state_requested = true,
                Event::LoadState {
                    frame,
                    state,
                    checks,
                } => self.load(frame, state, &checks),
                Event::StateWanted { frame } => self.on_state_wanted(now, frame),
                Event::CompareState { from, frame, state } => {
                    self.on_compare_state(from, frame, &state)
                }
                Event::CompareFailed { .. } => self.on_compare_failed(
                    "it did not send it in time (it left, or no longer holds it)",
                ),
                Event::Invalidated { invalidation, by } => {
                    self.on_invalidated(now, by, invalidation)
                }
                Event::Disputed { frame, seats } => self.on_disputed(now, frame, seats),
                Event::Desync {
                    frame,
                    authority,
                    drifted,
                    local_drifted,
                } => {
                    if local_drifted {
                        self.desync = Some((frame, authority));
                        self.last_desync = Some(frame);
                    }
                    self.events.push_back(PeerEvent::Desync {
                        frame,
                        authority,
                        drifted,
                        local_drifted,
                    });
                }
                Event::ResyncFailed { reason } => {
                    self.events.push_back(PeerEvent::ResyncFailed { reason });
                    self.on_resync_failed(now, reason);
                }
                Event::Seat(e) => self.events.push_back(PeerEvent::Seat(e)),
                Event::Started => {
                    self.events.push_back(PeerEvent::Started);
                    let authority = self.default_authority();
                    if let Some(s) = &mut self.snapshots {
                        s.on_started(now, authority, &mut self.events);
                    }
                }
                Event::LostQuorum { live, heard, .. } => self.lose_quorum(live, heard),
                // Shown by `Peer::unchecked_from` while it lasts. Once replay
                // logs carry notes, the note of the unchecked span is written
                // here (it ends at the next `SeatReturned`).
                Event::PlayingAlone { .. } => {}
                Event::SnapshotPart { from, part } => {
                    if let Some(s) = &mut self.snapshots {
                        s.on_part(now, from, part, self.engine.frame());
                    }
                }
                Event::SnapshotAck { from, ack } => {
                    if let Some(s) = &mut self.snapshots {
                        s.on_ack(now, Receiver::Seat(from), ack, self.engine.frame());
                    }
                }
            }
        }
        if self.state_requested {
            self.serve_state(now);
        }
        self.confirm();
        self.settle();
        self.serve_spectators(now);
        let back = match &mut self.snapshots {
            Some(s) => s.poll(now, &mut self.session, &mut self.relay, &mut self.events),
            None => false,
        };
        if back {
            // Its checksums are compared again: the log says from where.
            let from = self.session.newest_clean().unwrap_or(0);
            self.note(&Note::Checked { from });
        }
        self.stats.peak_state_bytes = self.history.peak_state_bytes();
    }

    /// Gives the relay the settled frames, a state for new spectators, and
    /// passes its events on.
    fn serve_spectators(&mut self, now: Instant) {
        for &(frame, checksum) in self.history.recently_settled() {
            self.relay.settle(frame, checksum);
        }
        if let Some(&(frame, _)) = self.history.recently_settled().back() {
            if self.relay.wants_state() {
                if let Some(base) = self.history.base_state() {
                    self.relay.provide_state(now, frame, &base.state);
                }
            }
        }
        while let Some(e) = self.relay.poll_event() {
            let event = match e {
                RelayEvent::Joined { spectator } => {
                    let for_snapshots = self.relay.snapshot_spectators().contains(&spectator);
                    if let Some(s) = &mut self.snapshots {
                        s.on_spectator(now, spectator, true, for_snapshots);
                    }
                    PeerEvent::SpectatorJoined { spectator }
                }
                RelayEvent::Left { spectator, reason } => {
                    if let Some(s) = &mut self.snapshots {
                        s.on_spectator(now, spectator, false, false);
                    }
                    PeerEvent::SpectatorLeft { spectator, reason }
                }
                RelayEvent::Incompatible { spectator } => {
                    PeerEvent::SpectatorIncompatible { spectator }
                }
                RelayEvent::Arbiter { frame, short } => {
                    self.arbiter_said = Some((frame, short));
                    continue;
                }
                RelayEvent::SnapshotAck { spectator, ack } => {
                    if let Some(s) = &mut self.snapshots {
                        s.on_ack(
                            now,
                            Receiver::Spectator(spectator),
                            ack,
                            self.engine.frame(),
                        );
                    }
                    continue;
                }
            };
            self.events.push_back(event);
        }
    }

    fn sample(&mut self, frame: u32) {
        if self.stopped.is_some() {
            return;
        }
        let input = match &mut self.bot {
            Some(bot) => bot.input(self.engine.game(), frame),
            None => {
                // The commands issued since the last sample go with this
                // frame only; what is held stays held.
                let next = self.input.repeat();
                std::mem::replace(&mut self.input, next)
            }
        };
        if self.session.add_local_input(frame, input).is_err() {
            self.stats.refused_calls += 1;
        }
    }

    fn step(
        &mut self,
        now: Instant,
        frame: u32,
        inputs: Vec<G::Input>,
        resimulated: bool,
        predicted: bool,
    ) {
        if self.stopped.is_some() {
            // Frames released before the stop and still queued: a stopped
            // peer steps nothing.
            return;
        }
        if frame != self.engine.frame() {
            // The session releases frames in order from the engine's next
            // one; anything else would step the wrong state.
            self.stats.refused_calls += 1;
            return;
        }
        let touched = std::mem::take(&mut self.touched).then(|| self.engine.save().bytes);
        let (checksum, after) = self.engine.advance_saving(&inputs);
        if resimulated {
            if let Some(first) = self.history.check_again(frame, &inputs, checksum) {
                self.stats.nondeterministic_frames += 1;
                self.events.push_back(PeerEvent::NotDeterministic {
                    frame,
                    first,
                    again: checksum,
                });
            }
        } else if let Some(s) = &mut self.snapshots {
            let last = self
                .session
                .config()
                .match_frames
                .is_some_and(|n| frame + 1 == n);
            s.on_frame(now, frame, last, self.engine.game());
        }
        if resimulated {
            self.stats.frames_resimulated += 1;
        } else {
            self.stats.frames_stepped += 1;
            if predicted {
                self.stats.frames_predicted += 1;
            }
        }
        self.history
            .push(Stepped::new(frame, inputs, checksum, after.bytes), touched);
        if self.session.report_checksum(frame, checksum).is_err() {
            self.stats.refused_calls += 1;
        }
        self.events.push_back(PeerEvent::Stepped {
            frame,
            checksum,
            resimulated,
            predicted,
        });
    }

    /// Rollback mode: a prediction was wrong. Restores the state before
    /// `frame` from the history; the session steps the frames since again.
    fn rollback(&mut self, frame: u32) {
        let from = self.engine.frame();
        let Some((state, touched)) = self.history.rewind(frame) else {
            self.stats.refused_calls += 1;
            return;
        };
        let game = match G::decode(&state) {
            Ok(g) => g,
            Err(_) => {
                // Our own saved state: it decoded when it was stepped.
                self.stats.refused_calls += 1;
                return;
            }
        };
        self.restart_engine(game, frame);
        // A state the app changed outside the simulation stays changed.
        self.touched = touched;
        self.stats.rollbacks += 1;
        self.stats.frames_rolled_back += u64::from(from.saturating_sub(frame));
        self.events.push_back(PeerEvent::RolledBack {
            frame,
            frames: from.saturating_sub(frame),
        });
    }

    /// Passes the frames confirmed since the last call to the spectator
    /// relay (a spectator is fed real inputs only).
    fn confirm(&mut self) {
        let confirmed = self.session.confirmed_before();
        if confirmed <= self.confirmed_before {
            return;
        }
        for s in self.history.open() {
            if (self.confirmed_before..confirmed).contains(&s.frame) {
                self.relay.push_frame(s.frame, &s.inputs);
            }
        }
        self.confirmed_before = confirmed;
    }

    fn settle(&mut self) {
        if self.stopped.is_some() {
            return;
        }
        let through = self.session.newest_clean();
        let before = self.history.base_frame();
        let confirmed = self.session.confirmed_before();
        let max_unsettled = self
            .max_unsettled
            .max(self.session.history_frames() as usize);
        if let Err(e) =
            self.history
                .settle(through, max_unsettled, confirmed, self.recording.as_mut())
        {
            self.stop_recording(e);
        }
        if self.recording.is_some() {
            self.stats.frames_logged += u64::from(self.history.base_frame() - before);
        }
    }

    /// Writes `note` into the replay log at the frame it has reached (the
    /// one place a peer writes notes); a log that cannot take it stops
    /// recording.
    pub(crate) fn note(&mut self, note: &Note) {
        let Some(rec) = self.recording.as_mut() else {
            return;
        };
        if let Err(e) = rec.writer.note(note) {
            let frame = rec.writer.frames();
            self.stop_recording(RecordingError {
                frame,
                reason: format!("writing a note: {e}"),
            });
        }
    }

    pub(crate) fn stop_recording(&mut self, e: RecordingError) {
        if self.recording.take().is_some() {
            self.events.push_back(PeerEvent::RecordingStopped {
                frame: e.frame,
                reason: e.reason,
            });
        }
    }
}

/// Orders: a game whose input is [`Orders`](lockstep_protocol::Orders) (a
/// held part and one-shot commands) takes commands at any moment.
impl<G: Game, W: Write> Peer<G, W>
where
    G::Input: Commanded,
{
    /// Issues `command`: it goes with the next frame this seat samples (the
    /// frame its input delay or turn schedules), reaches every seat with
    /// that frame's input, and is applied once, on that frame, by all of
    /// them. Gives the command back when this frame holds
    /// [`MAX_COMMANDS`](lockstep_protocol::orders::MAX_COMMANDS) already
    /// (issue it again next frame). Stops any bot.
    pub fn issue(
        &mut self,
        command: <G::Input as Commanded>::Command,
    ) -> Result<(), <G::Input as Commanded>::Command> {
        self.bot = None;
        self.input.push_command(command)
    }

    /// Sets the held part of the input, keeping the commands issued since
    /// the last sample. Stops any bot.
    pub fn set_held(&mut self, held: <G::Input as Commanded>::Held) {
        self.bot = None;
        *self.input.held_mut() = held;
    }
}
