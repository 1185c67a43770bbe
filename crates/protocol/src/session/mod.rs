//! [`Session`]: one peer's sans-IO lockstep state machine, tying the other
//! modules together — handshake, redundant inputs and acks, the playout
//! buffer and its adaptive delay, the frame clock, checksum exchange,
//! resync and seat drops. One file per sub-state, the way `quinn-proto`
//! splits its connection:
//!
//! - `config.rs`: [`Config`] and its validation errors;
//! - `event.rs`: [`Event`] and the other types the app sees;
//! - `handshake.rs`: per-peer state, the handshake, routed-packet intake
//!   (sequence window, liveness) and goodbyes;
//! - `inputs.rs`: local inputs, redundant sends and acks;
//! - `release.rs`: which frames the app steps when — confirmed, predicted,
//!   rolled back;
//! - `timing.rs`: clock synchronization and frame-clock balancing, and the
//!   agreed input delay of rollback mode;
//! - `checksums.rs`: reporting checksums and acting on verdicts;
//! - `integrity.rs`: disputes settled by evidence, recurring desyncs, and
//!   the end of a match found invalid;
//! - `resync.rs`: the resync sub-state (requesting, serving, loading,
//!   comparing);
//! - `seats.rs`: dropping a seat that left, and taking back one that
//!   returns;
//! - `membership.rs`: the quorum rule as the session applies it — who
//!   still counts, stopping a seat left in a minority, telling a dropped
//!   seat so, playing on alone;
//! - `snapshots.rs`: carrying a snapshot stream between two seats, and
//!   trying resync again after it failed;
//! - `transmit.rs`: building the datagrams to send.
//!
//! Invariants:
//! - No I/O, no clock, no threads, no hash-map iteration: datagrams and time
//!   come in as arguments, datagrams and [`Event`]s go out through the poll
//!   methods, and the same calls in the same order give the same output.
//! - The session never steps a game: it hands out [`Event::Frame`] in frame
//!   order, and the app steps, reports the checksum, and answers
//!   [`Event::InputNeeded`] and [`Event::StateRequested`].
//! - Untrusted bytes never panic; every refused datagram is counted in
//!   [`Stats::dropped`].
//!
//! See the crate documentation for the call order.

mod checksums;
mod config;
mod event;
mod handshake;
mod inputs;
mod integrity;
mod membership;
mod release;
mod resync;
mod seats;
mod snapshots;
mod timing;
mod transmit;

pub use config::{Config, ConfigError, InputDelay, MAX_TURN_FRAMES, Mode, Rollback, Security};
pub use event::{
    CallError, Event, Invalidation, LeaveReason, ResyncFailure, SeatEvent, TimeoutReason, Transmit,
};

use crate::checksum_book::ChecksumBook;
use crate::clock::FrameClock;
use crate::delay::{DelaySettings, PlayoutDelay};
use crate::inbound::{Opening, open_packet};
use crate::input::Input;
use crate::pace::StepCosts;
use crate::packet::{MAX_INPUTS_PER_PACKET, MAX_PACKET, MAX_SHORT_CHECKSUMS, Packet};
use crate::playout::PlayoutBuffer;
use crate::prediction::Predictions;
use crate::schedule::Schedule;
use crate::seal::{Identity, Link, PairKeys, PublicKey, SealError};
use crate::seat::{MAX_SEATS, SeatId, SeatSet};
use crate::seat_drop::SeatDrops;
use crate::send_window::SendWindow;
use crate::stats::Stats;
use crate::time::Instant;
use handshake::{Farewell, Peer};
use integrity::Integrity;
use resync::Resync;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Connecting,
    Running,
    /// The match was found invalid: nothing is stepped or sent but what
    /// the integrity and resync sub-states still owe.
    Stopped,
    Closed,
}

/// A sealed session's keys: ours, and every seat's public key as now bound
/// (a returning seat's new process brings a new one).
#[derive(Debug, Clone)]
struct Keys {
    identity: Identity,
    seats: Vec<PublicKey>,
}

impl Keys {
    /// The link to `seat`, whose packets are numbered from `first`.
    fn link(&self, seat: usize, first: u16) -> Result<Link, SealError> {
        let keys = PairKeys::agree(&self.identity, &self.seats[seat])?;
        Ok(Link::new(keys, u64::from(first)))
    }
}

/// The largest prediction window, in frames.
pub const MAX_PREDICTION: u32 = 64;

/// The largest input delay, in frames (it travels as a `u8`).
pub const MAX_INPUT_DELAY: u32 = 255;

/// One peer's lockstep session.
#[derive(Debug)]
pub struct Session<I: Input> {
    cfg: Config,
    keys: Option<Keys>,
    token: u32,
    phase: Phase,
    now: Instant,
    peers: Vec<Peer>,
    window: SendWindow<I>,
    playout: PlayoutBuffer<I>,
    delay: PlayoutDelay,
    clock: FrameClock,
    book: ChecksumBook,
    awaiting_input: Option<u32>,
    /// The last frame of the turn being sampled ([`Config::samples_turns`]).
    sample_through: u32,
    release_budget: u32,
    last_released: Option<u32>,
    /// The next frame the app steps.
    next_step: u32,
    /// Frames stepped past the confirmed ones (rollback mode).
    predictions: Predictions<I>,
    /// A rollback the sync test asks of the next release.
    forced_rollback: Option<u32>,
    /// The input delay in force and the host's plans (rollback mode).
    input_delay: Schedule,
    /// The input delay this peer asks the host for (rollback, adaptive).
    wanted_delay: u32,
    /// The pace in force, in pace steps, and the host's plans.
    pace: Schedule,
    /// What stepping a frame cost this seat lately, as the app reported.
    step_costs: StepCosts,
    own_newest: Option<u32>,
    epoch: u8,
    resync: Resync,
    integrity: Integrity,
    drops: SeatDrops,
    drop_reports_due: bool,
    /// The seats in the match as agreed: a seat leaves it once its last
    /// frame is agreed, and comes back when its new process returns.
    live: SeatSet,
    /// Dropped seats whose packets still arrive: each is told once per
    /// packet (at most once per transmit round) that it was dropped.
    notices: SeatSet,
    /// While no other seat is left: the first frame compared with nobody.
    alone_since: Option<u32>,
    /// The newest frame a quorum had compared clean when last looked at
    /// (kept: the seats that vouched for it may leave since).
    vouched: Option<u32>,
    /// The newest frame whose inputs may be stand-ins, never received: a
    /// returning process's frames before its first, a loaded state's
    /// frames. They are never reported as held when a seat is dropped.
    filled_through: Option<u32>,
    returns: Vec<seats::Return>,
    echoes: Vec<(SeatId, crate::packet::SeatReturn)>,
    awaiting_state: bool,
    events: VecDeque<Event<I>>,
    out: VecDeque<Transmit>,
    stats: Stats,
}

/// The bits an inputs message leaves for its run of inputs: the packet less
/// its header, ack, count, first frame and the short checksums it may carry
/// (56 + 17 + 8 + 16 + 1 + 26 + 64 per short checksum). A drop report's
/// fixed part is smaller, so its runs use the same budget. Runs longer than
/// this are cut ([`run_that_fits`](crate::input::run_that_fits)) and sent
/// over several packets; with small inputs the whole send window fits, as
/// the redundancy wants.
pub(crate) fn input_budget_bits(cfg: &Config) -> u64 {
    let fixed = 56 + 17 + 8 + 16 + 1 + 26 + 64 * u64::from(cfg.checksum_redundancy);
    (MAX_PACKET as u64 * 8).saturating_sub(fixed)
}

impl<I: Input> Session<I> {
    /// A session for `cfg`, identified on the wire by `token` (random, never
    /// 0; the app draws it, e.g. from a seeded `lockstep_fx::Rng`).
    pub fn new(cfg: Config, token: u32) -> Result<Session<I>, ConfigError> {
        if !(2..=MAX_SEATS).contains(&cfg.seats) {
            return Err(ConfigError::Seats(cfg.seats));
        }
        if cfg.local.0 >= cfg.seats {
            return Err(ConfigError::LocalSeat(cfg.local.0));
        }
        if token == 0 {
            return Err(ConfigError::ZeroToken);
        }
        for (ok, what) in [
            (cfg.arbiter.is_none_or(|a| a.0 < cfg.seats), "arbiter"),
            (
                cfg.tick_micros > 0 && cfg.tick_micros <= u64::from(u32::MAX),
                "tick_micros",
            ),
            (
                (1..=MAX_INPUTS_PER_PACKET).contains(&cfg.max_unacked_inputs),
                "max_unacked_inputs",
            ),
            (
                (1..=MAX_SHORT_CHECKSUMS).contains(&cfg.checksum_redundancy),
                "checksum_redundancy",
            ),
            (cfg.max_catch_up > 0, "max_catch_up"),
            (cfg.full_checksum_every > 0, "full_checksum_every"),
            (cfg.delay_window > 0, "delay_window"),
            (cfg.max_delay_frames > 0, "max_delay_frames"),
            (cfg.input_history_frames > 0, "input_history_frames"),
            (cfg.chunks_per_tick > 0, "chunks_per_tick"),
            (cfg.timing_interval_micros > 0, "timing_interval_micros"),
            (
                (1..=MAX_TURN_FRAMES).contains(&cfg.turn_frames),
                "turn_frames",
            ),
            (
                match cfg.mode {
                    Mode::Lockstep => true,
                    Mode::Rollback(r) => {
                        (1..=MAX_PREDICTION).contains(&r.max_prediction)
                            && match r.input_delay {
                                InputDelay::Fixed(d) => d <= MAX_INPUT_DELAY,
                                InputDelay::Adaptive { min, max } => {
                                    min <= max && max <= MAX_INPUT_DELAY
                                }
                            }
                    }
                },
                "rollback settings",
            ),
        ] {
            if !ok {
                return Err(ConfigError::Range(what));
            }
        }
        // A packet carries as many unacked inputs as fit (see
        // `input_budget_bits`); at least one always must.
        if u64::from(I::MAX_BITS) > input_budget_bits(&cfg) {
            return Err(ConfigError::InputTooLarge {
                bits: I::MAX_BITS,
                max: MAX_PACKET as u32,
            });
        }
        let n = usize::from(cfg.seats);
        let mut peers = vec![Peer::new(cfg.initial_seq); n];
        let keys = match &cfg.security {
            Security::Plain => None,
            Security::Sealed { identity, seats } => {
                if seats.len() != n {
                    return Err(ConfigError::Keys("not one public key per seat"));
                }
                if seats[cfg.local.index()] != identity.public() {
                    return Err(ConfigError::Keys("our seat's key is not our identity's"));
                }
                let keys = Keys {
                    identity: identity.clone(),
                    seats: seats.clone(),
                };
                for (i, p) in peers.iter_mut().enumerate() {
                    if i != cfg.local.index() {
                        let link = keys
                            .link(i, cfg.initial_seq)
                            .map_err(|_| ConfigError::WeakKey(i as u8))?;
                        p.link = Some(link);
                    }
                }
                Some(keys)
            }
        };
        let delay = PlayoutDelay::new(DelaySettings {
            tick_micros: cfg.tick_micros,
            initial_micros: cfg.initial_delay_micros,
            adaptive: cfg.adaptive_delay,
            quantile_permille: cfg.delay_quantile_permille,
            // A lost packet of a turn sampled at once costs a whole turn,
            // which no margin of a frame or two covers: the delay there
            // only covers the trip.
            margin_frames: if cfg.samples_turns() {
                0
            } else {
                cfg.delay_margin_frames
            },
            window: cfg.delay_window,
            min_frames: 1,
            max_frames: cfg.max_delay_frames,
            shrink_every: cfg.delay_shrink_every,
        });
        let initial_input_delay = match cfg.mode {
            Mode::Rollback(Rollback {
                input_delay: InputDelay::Fixed(d),
                ..
            }) => d,
            Mode::Rollback(Rollback {
                input_delay: InputDelay::Adaptive { min, .. },
                ..
            }) => min,
            Mode::Lockstep => 0,
        };
        let first_delay = match cfg.mode {
            Mode::Lockstep => delay.frames(),
            Mode::Rollback(_) => initial_input_delay,
        };
        let stats = Stats {
            delay_frames: first_delay,
            max_delay_frames: first_delay,
            ..Stats::default()
        };
        Ok(Session {
            token,
            keys,
            phase: Phase::Connecting,
            now: Instant::ZERO,
            peers,
            window: SendWindow::new(),
            playout: PlayoutBuffer::new(n, cfg.input_history_frames),
            delay,
            clock: FrameClock::new(cfg.tick_micros, cfg.nudge_permille),
            book: ChecksumBook::new(cfg.seats, cfg.local),
            awaiting_input: None,
            sample_through: 0,
            release_budget: 0,
            last_released: None,
            next_step: 0,
            predictions: Predictions::new(0),
            forced_rollback: None,
            input_delay: Schedule::new(initial_input_delay),
            wanted_delay: initial_input_delay,
            pace: Schedule::new(0),
            step_costs: StepCosts::default(),
            own_newest: None,
            epoch: 0,
            resync: Resync::new(n),
            integrity: Integrity::new(n),
            drops: SeatDrops::new(cfg.local),
            drop_reports_due: false,
            live: SeatSet::first(cfg.seats),
            notices: SeatSet::EMPTY,
            alone_since: None,
            vouched: None,
            filled_through: None,
            returns: Vec::new(),
            echoes: Vec::new(),
            awaiting_state: false,
            events: VecDeque::new(),
            out: VecDeque::new(),
            stats,
            cfg,
        })
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The datagrams the other seats sent this one since it first heard
    /// each, by their sequence numbers, and how many of them never arrived:
    /// the loss the network caused on the way here (a datagram refused
    /// as forged or malformed counts as lost).
    pub fn measured_loss(&self) -> (u64, u64) {
        self.peers.iter().fold((0, 0), |(sent, lost), p| {
            let (s, l) = p.seen.lost();
            (sent + s, lost + l)
        })
    }

    /// The delay now, in frames, between sampling a frame and stepping it:
    /// the playout delay in lockstep, the input delay in rollback.
    pub fn delay_frames(&self) -> u32 {
        self.step_delay()
    }

    /// The newest frame released to the game.
    pub fn last_released(&self) -> Option<u32> {
        self.last_released
    }

    /// The oldest frame not confirmed: every frame before it was released
    /// with every player's real input (in lockstep, every frame released;
    /// in rollback, the frames before the oldest prediction).
    pub fn confirmed_before(&self) -> u32 {
        self.playout.next_release()
    }

    /// The next frame the app will step.
    pub fn next_step(&self) -> u32 {
        self.next_step
    }

    /// The newest frame whose checksum entered the comparison (the frame
    /// whose state answers [`Event::StateRequested`]).
    pub fn newest_reported(&self) -> Option<u32> {
        self.own_newest
    }

    /// Released frames whose inputs are kept for re-simulation after a
    /// resync: [`Config::input_history_frames`], or
    /// [`Session::HISTORY_ROUND_TRIPS`] round trips of the slowest peer
    /// when that is longer. A state that arrives after its frame's
    /// successors were forgotten cannot be loaded, so on slow paths the
    /// history follows the round trip; it never shrinks during a match. An
    /// app keeping per-frame history of its own (the `Peer` does) keeps at
    /// least this many frames.
    pub fn history_frames(&self) -> u32 {
        self.playout.history()
    }

    /// Round trips of history [`Session::history_frames`] covers at least:
    /// a resync on a path losing a quarter of its datagrams takes about
    /// one to detect, one to request and deliver, and a few more rounds of
    /// resent chunks.
    pub const HISTORY_ROUND_TRIPS: u64 = 10;

    /// The slowest peer's median round trip in microseconds (0 before any
    /// was measured).
    pub(super) fn worst_rtt_micros(&self) -> u64 {
        self.peers
            .iter()
            .filter_map(|p| p.rtt.quantile(500))
            .max()
            .unwrap_or(0)
            .max(0) as u64
    }

    fn history_wanted(&self) -> u32 {
        let rtt = self.worst_rtt_micros();
        let frames = Self::HISTORY_ROUND_TRIPS * rtt / self.cfg.tick_micros.max(1);
        u32::try_from(frames)
            .unwrap_or(u32::MAX)
            .max(self.cfg.input_history_frames)
    }

    /// The newest frame settled: compared clean against every peer that
    /// reported it, and equal at seats making, with this one, a quorum of
    /// the seats in the match (the quorum rule, `quorum.rs`), now or at any time
    /// before (it never decreases). Frames up to it are settled history
    /// (what a replay log records as the match): no later decision of the
    /// majority can play them otherwise.
    pub fn newest_clean(&self) -> Option<u32> {
        self.vouched.max(self.vouched_now())
    }

    /// The next frame the local clock will tick.
    pub fn next_local_frame(&self) -> u32 {
        self.clock.next_frame()
    }

    /// The next frame whose local input the session will ask for: the
    /// clock's next frame, or later while a turn sampled at once runs
    /// ahead of the clock ([`Config::turn_frames`]).
    pub fn next_input_frame(&self) -> u32 {
        self.window.next_frame()
    }

    /// Whether the handshake is complete and the frame clock runs.
    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// Whether the match is over for this peer: it has a length
    /// ([`Config::match_frames`]), every frame of it is confirmed here, and
    /// the last one was compared clean against every peer that reported it
    /// (or no peer is left to compare with).
    pub fn is_finished(&self) -> bool {
        let Some(n) = self.cfg.match_frames else {
            return false;
        };
        let alone = self.remaining().len() <= 1;
        self.confirmed_before() >= n
            && (n == 0 || alone || self.book.newest_clean().is_some_and(|c| c + 1 >= n))
    }

    /// How many resync epochs (state loads) this peer has been through, mod 256.
    pub fn epoch(&self) -> u8 {
        self.epoch
    }

    /// The median round trip to `peer` in microseconds (from sending an
    /// input to its ack), once measured.
    pub fn rtt_micros(&self, peer: SeatId) -> Option<u64> {
        let p = self.peers.get(peer.index())?;
        p.rtt.quantile(500).map(|v| v.max(0) as u64)
    }

    /// Feeds one received datagram from `from` (the seat the app's address
    /// table maps its source address to). Returns whether it was a packet
    /// from that seat: it decoded and, in a sealed session, opened under
    /// the seat's key (so a runtime may move the seat to the address it
    /// came from); what the session then made of it is in its counters.
    pub fn handle_datagram(&mut self, now: Instant, from: SeatId, bytes: &[u8]) -> bool {
        self.now = self.now.max(now);
        self.stats.received.packets += 1;
        self.stats.received.bytes += bytes.len() as u64;
        if self.phase == Phase::Closed {
            self.stats.dropped.from_gone += 1;
            return false;
        }
        let opening = match self.keys {
            None => Opening::Plain,
            Some(_) => Opening::Sealed(
                self.peers
                    .get_mut(from.index())
                    .filter(|_| from != self.cfg.local)
                    .and_then(|p| p.link.as_mut()),
            ),
        };
        let Some((packet, newest)) = open_packet::<I>(opening, bytes, &mut self.stats.dropped)
        else {
            return false;
        };
        if !newest && matches!(packet, Packet::Hello(_)) {
            // A sealed handshake older than a packet already opened from
            // its sender: replayed or stale.
            self.stats.dropped.duplicate += 1;
            return false;
        }
        let Some(sender) = packet.seat() else {
            // Spectators speak to a relay, never to the session.
            self.stats.dropped.unexpected += 1;
            return false;
        };
        if sender != from || sender == self.cfg.local || sender.0 >= self.cfg.seats {
            self.stats.dropped.unknown_sender += 1;
            return false;
        }
        if self.peers[sender.index()].gone {
            // A Hello from a dropped seat may be its restarted process
            // asking to rejoin; everything else from a gone peer is dropped.
            match packet {
                Packet::Hello(h) => self.on_rejoin_hello(now, h),
                Packet::Routed(r) => {
                    self.stats.dropped.from_gone += 1;
                    // A goodbye or a notice needs no answer (two seats that
                    // dropped each other must not trade notices forever).
                    let last_word = match &r.message {
                        crate::packet::Message::Disconnect(_) => true,
                        crate::packet::Message::SeatDrop(m) => m.seat == self.cfg.local,
                        _ => false,
                    };
                    if !last_word {
                        self.notice_due(sender);
                    }
                }
                Packet::SpectateHello(_) => self.stats.dropped.from_gone += 1,
            }
            return true;
        }
        match packet {
            Packet::Hello(h) => self.on_hello(now, h),
            Packet::Routed(r) => self.on_routed(now, r),
            Packet::SpectateHello(_) => self.stats.dropped.unexpected += 1,
        }
        true
    }

    /// Binds `seat`, which this session dropped, to the public key of the
    /// process that will take it back (the match setup hears it first, from
    /// a restarted process asking to rejoin): its handshake then opens, and
    /// the host passes the key on to the other peers with the seat's
    /// return. Only for a sealed session and a dropped seat.
    pub fn expect_return(&mut self, seat: SeatId, key: PublicKey) -> Result<(), CallError> {
        let p = seat.index();
        let gone = seat != self.cfg.local && self.peers.get(p).is_some_and(|p| p.gone);
        let Some(keys) = self.keys.as_mut().filter(|_| gone) else {
            return Err(CallError::NotDropped { seat });
        };
        let old = std::mem::replace(&mut keys.seats[p], key);
        match keys.link(p, self.cfg.initial_seq) {
            Ok(link) => {
                self.peers[p].link = Some(link);
                Ok(())
            }
            Err(_) => {
                keys.seats[p] = old;
                Err(CallError::WeakKey { seat })
            }
        }
    }

    /// `seat`'s public key as now bound, in a sealed session.
    pub fn seat_key(&self, seat: SeatId) -> Option<PublicKey> {
        self.keys.as_ref()?.seats.get(seat.index()).copied()
    }

    /// Runs the timers: call when `now` reaches [`Session::poll_timeout`].
    /// At each tick it releases due frames and asks for the next local input.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        if self.phase == Phase::Stopped {
            self.stopped_timers(now);
            return;
        }
        if self.phase != Phase::Running {
            return;
        }
        let local = self.cfg.local;
        let mut silent = Vec::new();
        for (i, p) in self.peers.iter().enumerate() {
            if i != local.index()
                && !p.gone
                && now.since(p.last_recv) > self.cfg.peer_timeout_micros
            {
                silent.push(SeatId(i as u8));
            }
        }
        for peer in silent {
            if self.phase != Phase::Running {
                break;
            }
            self.events.push_back(Event::Seat(SeatEvent::Left {
                seat: peer,
                reason: LeaveReason::TimedOut(TimeoutReason::Silent),
            }));
            self.drop_seat(peer);
        }
        let grace = self.cfg.disconnect_grace_micros;
        let mut left = Vec::new();
        for (i, p) in self.peers.iter_mut().enumerate() {
            if !p.gone && p.leaves_at(grace).is_some_and(|at| now >= at) {
                if let Some((_, _, why)) = p.leaving.take() {
                    p.left = why == Farewell::Goodbye;
                    left.push((SeatId(i as u8), why));
                }
            }
        }
        for (peer, why) in left {
            if self.phase != Phase::Running {
                break;
            }
            let reason = match why {
                Farewell::Goodbye => LeaveReason::Disconnected,
                Farewell::DroppedUs => LeaveReason::TimedOut(TimeoutReason::DroppedUs),
            };
            self.events
                .push_back(Event::Seat(SeatEvent::Left { seat: peer, reason }));
            self.drop_seat(peer);
        }
        if self.phase == Phase::Running {
            self.drops_joined(now);
        }
        if self.phase != Phase::Running
            || self.awaiting_input.is_some()
            || now < self.clock.next_tick_at()
        {
            // A lost quorum above closed the session.
            return;
        }
        self.plan_input_delay();
        self.plan_pace();
        let steps = self.pace.on_tick(self.clock.next_frame());
        self.clock
            .set_nominal(crate::pace::tick_micros(self.cfg.tick_micros, steps));
        self.stats.pace_steps = steps;
        let frame = self.clock.advance();
        self.input_delay.on_tick(frame);
        self.release_budget = self.cfg.max_catch_up;
        self.delay.on_tick();
        self.balance_clock();
        // A turn's inputs travel together: in lockstep at the turn's first
        // tick, which samples the whole turn; in rollback at its last tick
        // (every tick for turns of one frame).
        let turn = self.cfg.turn_frames.max(1);
        let sends = if self.cfg.samples_turns() {
            frame % turn == 0
        } else {
            (frame + 1) % turn == 0
        };
        for p in &mut self.peers {
            p.inputs_due |= sends;
        }
        self.drop_reports_due = true;
        self.resync.resync_tick = true;
        let history = self.history_wanted();
        self.playout.keep_at_least(history);
        self.resync_timers(now);
        self.integrity_tick(now);
        if self.phase != Phase::Running {
            // A dispute decided at this tick may have ended the match.
            return;
        }
        self.force_sync_test_rollback();
        self.try_release();
        if self.stalled() {
            self.stats.stall_ticks += 1;
            if self.cfg.mode == Mode::Lockstep && !self.cfg.samples_turns() {
                self.delay.on_underrun();
            }
        }
        let delay = self.step_delay();
        self.stats.delay_frames = delay;
        self.stats.max_delay_frames = self.stats.max_delay_frames.max(delay);
        if self.cfg.samples_turns() {
            // The frames of this tick's turn not sampled yet (all of them at
            // the turn's first tick; a rejoining process starting inside a
            // turn samples the rest of it at once).
            self.sample_through = frame - frame % turn + turn - 1;
            self.ask_next_input();
        } else if self.cfg.match_frames.is_none_or(|n| frame < n) {
            self.awaiting_input = Some(frame);
            self.events.push_back(Event::InputNeeded { frame });
        }
    }

    /// Asks the app for the next local input of the turn being sampled,
    /// if any is left (and the match is not over).
    pub(super) fn ask_next_input(&mut self) {
        let next = self.window.next_frame();
        if self.awaiting_input.is_none()
            && next <= self.sample_through
            && self.cfg.match_frames.is_none_or(|n| next < n)
        {
            self.awaiting_input = Some(next);
            self.events.push_back(Event::InputNeeded { frame: next });
        }
    }

    /// The next event, in the order they happened.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event<I>> {
        self.events.pop_front()
    }

    /// When [`Session::handle_timeout`] next needs calling, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t: Option<Instant> = None;
        let mut at = |x: Instant| t = Some(t.map_or(x, |y| y.min(x)));
        match self.phase {
            Phase::Closed => return None,
            Phase::Stopped => return self.stopped_timeout(),
            Phase::Connecting => {}
            Phase::Running => {
                if self.awaiting_input.is_none() {
                    at(self.clock.next_tick_at());
                }
                // Goodbyes are confirmed by `handle_timeout`, which acts
                // only while running (a deadline reported before the start
                // would be due forever).
                for p in self.peers.iter().filter(|p| !p.gone) {
                    if let Some(leaves) = p.leaves_at(self.cfg.disconnect_grace_micros) {
                        at(leaves);
                    }
                }
            }
        }
        for (i, p) in self.peers.iter().enumerate() {
            if i != self.cfg.local.index() && !p.gone && (!p.connected || p.hello_reply) {
                at(if p.hello_reply {
                    self.now
                } else {
                    p.next_hello_at
                });
            }
        }
        t
    }
}
