//! [`Session`]: one peer's sans-IO lockstep state machine, tying the other
//! modules together — handshake, redundant inputs and acks, the playout
//! buffer and its adaptive delay, the frame clock, checksum exchange and
//! resync.
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

use crate::bits::BitMeasurer;
use crate::checksums::{ChecksumBook, Verdict};
use crate::clock::FrameClock;
use crate::delay::{DelaySettings, PlayoutDelay, SampleWindow};
use crate::input::Input;
use crate::packet::{
    ChecksumMsg, Disconnect, Hello, InputsMsg, Kind, MAX_DATAGRAM, MAX_INPUTS_PER_PACKET,
    MAX_SHORT_CHECKSUMS, Message, Packet, ResyncAck, ResyncChunk, ResyncRequest, Routed,
    SeatDrop, ShortChecksums,
};
use crate::player::{MAX_PLAYERS, PlayerId, PlayerSet};
use crate::playout::PlayoutBuffer;
use crate::seat_drop::SeatDrops;
use crate::resync::{Incoming, Outgoing, ResyncError};
use crate::seq::{SeqWindow, SeqVerdict, unwrap_frame, wire_frame};
use crate::stats::Stats;
use crate::time::{Instant, MICROS_PER_MILLI};
use crate::window::{InputError, InputWindow};
use lockstep_fx::{Checksum, ShortChecksum};
use std::collections::VecDeque;

/// A session's settings. [`Config::new`] gives the defaults; change fields,
/// then [`Session::new`] validates them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Players in the match, `2..=8`.
    pub players: u8,
    /// This peer's seat.
    pub local: PlayerId,
    /// Tick length in microseconds (16 667 for 60 Hz).
    pub tick_micros: u64,
    /// The first packet sequence number toward each peer.
    pub initial_seq: u16,
    /// Playout delay before any arrival was measured (100 ms).
    pub initial_delay_micros: u64,
    /// Whether the playout delay adapts to measured lateness.
    pub adaptive_delay: bool,
    /// The lateness quantile the delay targets, in permille (980).
    pub delay_quantile_permille: u32,
    /// Frames of margin on top of the quantile (3).
    pub delay_margin_frames: u32,
    /// Lateness samples in the sliding window (256).
    pub delay_window: u32,
    /// Ticks the target must stay lower before the delay drops a frame (30).
    pub delay_shrink_every: u32,
    /// The largest playout delay in frames (300).
    pub max_delay_frames: u32,
    /// Frames released per tick at most while catching up (4).
    pub max_catch_up: u32,
    /// Unacked local inputs beyond which a peer is timed out (180, 3 s at
    /// 60 Hz), at most [`MAX_INPUTS_PER_PACKET`].
    pub max_unacked_inputs: u32,
    /// Silence after which a peer is timed out (2 s, as GGRS).
    pub peer_timeout_micros: u64,
    /// How long a peer that said goodbye must stay silent before it is
    /// taken as gone (250 ms): a newer packet from it cancels the goodbye,
    /// so one forged or stale Disconnect cannot end a match.
    pub disconnect_grace_micros: u64,
    /// Handshake resend interval (100 ms).
    pub hello_interval_micros: u64,
    /// Short checksums per packet, `1..=4` (2): each frame's checksum rides
    /// in that many consecutive packets.
    pub checksum_redundancy: u32,
    /// Every this many frames the full 32-byte checksum is sent too (60).
    pub full_checksum_every: u32,
    /// Tick-rate nudge for clock alignment, in permille (20 = 2%).
    pub nudge_permille: u32,
    /// Resync attempts before [`Event::ResyncFailed`] (3).
    pub resync_max_attempts: u32,
    /// Time one resync attempt may take before it is retried (5 s).
    pub resync_timeout_micros: u64,
    /// Clean frames after a load that reset the attempt count (120).
    pub resync_stable_frames: u32,
    /// Released frames kept for re-simulation after a load (600).
    pub input_history_frames: u32,
    /// Resync chunks sent per tick at most (16).
    pub chunks_per_tick: u32,
    /// Whether every packet repeats all unacked inputs (the default). Set
    /// `false` only over a reliable, ordered transport (the TCP-like model,
    /// a TCP baseline): each input is then sent once and the unacked cap is
    /// not enforced.
    pub redundant_inputs: bool,
}

impl Config {
    /// Defaults for `players` players at 60 Hz, this peer at `local`.
    pub fn new(players: u8, local: PlayerId) -> Config {
        Config {
            players,
            local,
            tick_micros: 16_667,
            initial_seq: 0,
            initial_delay_micros: 100 * MICROS_PER_MILLI,
            adaptive_delay: true,
            delay_quantile_permille: 980,
            delay_margin_frames: 3,
            delay_window: 256,
            delay_shrink_every: 30,
            max_delay_frames: 300,
            max_catch_up: 4,
            max_unacked_inputs: 180,
            peer_timeout_micros: 2_000 * MICROS_PER_MILLI,
            disconnect_grace_micros: 250 * MICROS_PER_MILLI,
            hello_interval_micros: 100 * MICROS_PER_MILLI,
            checksum_redundancy: 2,
            full_checksum_every: 60,
            nudge_permille: 20,
            resync_max_attempts: 3,
            resync_timeout_micros: 5_000 * MICROS_PER_MILLI,
            resync_stable_frames: 120,
            input_history_frames: 600,
            chunks_per_tick: 16,
            redundant_inputs: true,
        }
    }
}

/// Why a [`Config`] (or token) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `players` is not in `2..=8`.
    #[error("{0} players: a session holds 2 to 8")]
    Players(u8),
    /// `local` is not a seat of the match.
    #[error("local seat {0} is not below the player count")]
    LocalSeat(u8),
    /// The session token is 0, which means "unknown" on the wire.
    #[error("the session token must not be 0")]
    ZeroToken,
    /// A field is zero or out of its range.
    #[error("{0} is out of range")]
    Range(&'static str),
    /// A full window of inputs would not fit one datagram.
    #[error("{inputs} inputs of up to {bits} bits do not fit a {max}-byte datagram")]
    WindowTooLarge {
        /// `max_unacked_inputs`.
        inputs: u32,
        /// The input's `MAX_BITS`.
        bits: u32,
        /// [`MAX_DATAGRAM`].
        max: u32,
    },
}

/// Why an app call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// A local input for a frame the session did not ask for.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A checksum or state for a frame not released yet.
    #[error("frame {frame} has not been released (last released {released:?})")]
    NotReleased {
        /// The frame passed.
        frame: u32,
        /// The newest frame released.
        released: Option<u32>,
    },
    /// A state nobody asked for, or for another frame than the last released.
    #[error("no state was requested for frame {frame}")]
    StateNotRequested {
        /// The frame passed.
        frame: u32,
    },
    /// The state's BLAKE3 is not the checksum reported for its frame: the
    /// app's checksum must be the hash of exactly its snapshot bytes.
    #[error("state for frame {frame} does not hash to its reported checksum")]
    StateChecksum {
        /// The frame passed.
        frame: u32,
    },
}

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The peer to send it to.
    pub to: PlayerId,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Why a peer was timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutReason {
    /// Nothing valid arrived from it for `peer_timeout_micros`.
    Silent,
    /// It left more than `max_unacked_inputs` of our inputs unacked.
    TooManyUnacked,
}

/// Why resync gave up. A later issue turns this into a fall back to
/// snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResyncFailure {
    /// Three or more players and no strict majority of equal checksums.
    NoMajority {
        /// The frame compared.
        frame: u32,
    },
    /// The state was loaded, or its transfer tried, too often.
    TooManyAttempts {
        /// Attempts made.
        attempts: u32,
    },
    /// A loaded state is older than the input history kept for replay.
    HistoryTooShort {
        /// The state's frame.
        frame: u32,
    },
}

/// What the session tells the app; drain with [`Session::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<I> {
    /// The handshake with `peer` completed.
    PeerConnected {
        /// The peer.
        peer: PlayerId,
    },
    /// Every peer is connected; the frame clock runs from frame 0.
    Started,
    /// Sample the local input for `frame` and pass it to
    /// [`Session::add_local_input`] before the next `handle_timeout`.
    InputNeeded {
        /// The frame.
        frame: u32,
    },
    /// Step the game through `frame` with every player's input (indexed by
    /// seat), then [`Session::report_checksum`].
    Frame {
        /// The frame.
        frame: u32,
        /// Every player's input for it.
        inputs: Vec<I>,
        /// `true` when re-simulating after [`Event::LoadState`].
        resimulated: bool,
    },
    /// Checksums for `frame` differ.
    Desync {
        /// The first frame found to differ.
        frame: u32,
        /// The seat whose state is right, if one could be chosen.
        authority: Option<PlayerId>,
        /// The seats that drifted.
        drifted: PlayerSet,
        /// Whether this peer is one of them (it will resync).
        local_drifted: bool,
    },
    /// A drifted peer needs our state: call [`Session::provide_state`] with
    /// the snapshot after the newest frame stepped and reported — now, or
    /// after stepping the frames queued behind this event.
    StateRequested,
    /// Replace the game state with `state`, the authority's exact snapshot
    /// after `frame`; the [`Event::Frame`]s that follow (with `replay`)
    /// re-simulate the frames after it.
    LoadState {
        /// The state's frame.
        frame: u32,
        /// The snapshot bytes.
        state: Vec<u8>,
    },
    /// Resync cannot bring this peer back.
    ResyncFailed {
        /// Why.
        reason: ResyncFailure,
    },
    /// `peer` was timed out; nothing more is sent to it.
    PeerTimedOut {
        /// The peer.
        peer: PlayerId,
        /// Why.
        reason: TimeoutReason,
    },
    /// `peer` said it leaves.
    PeerDisconnected {
        /// The peer.
        peer: PlayerId,
    },
    /// The remaining peers agreed that `seat`, which timed out or left,
    /// played its last frame at `last_frame` (`None`: it played none); from
    /// the frame after it, its input is the game's absent input
    /// ([`Input::absent`]).
    SeatDropped {
        /// The seat.
        seat: PlayerId,
        /// Its last frame.
        last_frame: Option<u32>,
    },
    /// `peer`'s handshake names another input schema, player count or tick.
    Incompatible {
        /// The peer.
        peer: PlayerId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Connecting,
    Running,
    Closed,
}

#[derive(Debug, Clone)]
struct Peer {
    token: Option<u32>,
    knows_us: bool,
    connected: bool,
    gone: bool,
    incompatible: bool,
    next_seq: u16,
    seen: SeqWindow,
    leaving: Option<(Instant, u16)>,
    last_recv: Instant,
    next_hello_at: Instant,
    hello_reply: bool,
    acked: Option<u32>,
    sent_through: Option<u32>,
    inputs_due: bool,
    full_due: Option<(u32, Checksum)>,
    rtt: SampleWindow,
    lateness: SampleWindow,
}

#[derive(Debug, Clone)]
struct Requester {
    authority: PlayerId,
    desync_frame: u32,
    started: Instant,
    next_request_at: Instant,
    request_due: bool,
    incoming: Incoming,
    ack_due: bool,
}

/// One peer's lockstep session.
#[derive(Debug)]
pub struct Session<I: Input> {
    cfg: Config,
    token: u32,
    phase: Phase,
    now: Instant,
    peers: Vec<Peer>,
    window: InputWindow<I>,
    playout: PlayoutBuffer<I>,
    delay: PlayoutDelay,
    clock: FrameClock,
    book: ChecksumBook,
    awaiting_input: Option<u32>,
    release_budget: u32,
    last_released: Option<u32>,
    own_newest: Option<u32>,
    epoch: u8,
    requester: Option<Requester>,
    finished_incoming: Option<(PlayerId, Incoming, bool)>,
    next_request_id: u8,
    attempts: u32,
    load_frame: Option<u32>,
    serving: Vec<Outgoing>,
    served: Vec<Option<u8>>,
    pending_requests: Vec<(PlayerId, u8)>,
    state_requested: bool,
    drops: SeatDrops,
    drop_reports_due: bool,
    resync_tick: bool,
    events: VecDeque<Event<I>>,
    out: VecDeque<Transmit>,
    stats: Stats,
}

impl<I: Input> Session<I> {
    /// A session for `cfg`, identified on the wire by `token` (random, never
    /// 0; the app draws it, e.g. from a seeded `lockstep_fx::Rng`).
    pub fn new(cfg: Config, token: u32) -> Result<Session<I>, ConfigError> {
        if !(2..=MAX_PLAYERS).contains(&cfg.players) {
            return Err(ConfigError::Players(cfg.players));
        }
        if cfg.local.0 >= cfg.players {
            return Err(ConfigError::LocalSeat(cfg.local.0));
        }
        if token == 0 {
            return Err(ConfigError::ZeroToken);
        }
        for (ok, what) in [
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
        ] {
            if !ok {
                return Err(ConfigError::Range(what));
            }
        }
        // Header, ack, count, first frame, checksums: 54 + 17 + 8 + 16 + 1 +
        // 26 + 4 × 64 bits; then the inputs.
        let fixed = 54 + 17 + 8 + 16 + 1 + 26 + 64 * u64::from(MAX_SHORT_CHECKSUMS);
        let window = u64::from(cfg.max_unacked_inputs) * (u64::from(I::MAX_BITS) + 1);
        if fixed + window > MAX_DATAGRAM as u64 * 8 {
            return Err(ConfigError::WindowTooLarge {
                inputs: cfg.max_unacked_inputs,
                bits: I::MAX_BITS,
                max: MAX_DATAGRAM as u32,
            });
        }
        let delay = PlayoutDelay::new(DelaySettings {
            tick_micros: cfg.tick_micros,
            initial_micros: cfg.initial_delay_micros,
            adaptive: cfg.adaptive_delay,
            quantile_permille: cfg.delay_quantile_permille,
            margin_frames: cfg.delay_margin_frames,
            window: cfg.delay_window,
            min_frames: 1,
            max_frames: cfg.max_delay_frames,
            shrink_every: cfg.delay_shrink_every,
        });
        let peer = Peer {
            token: None,
            knows_us: false,
            connected: false,
            gone: false,
            incompatible: false,
            next_seq: cfg.initial_seq,
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
        };
        let n = usize::from(cfg.players);
        let stats = Stats {
            delay_frames: delay.frames(),
            max_delay_frames: delay.frames(),
            ..Stats::default()
        };
        Ok(Session {
            token,
            phase: Phase::Connecting,
            now: Instant::ZERO,
            peers: vec![peer; n],
            window: InputWindow::new(),
            playout: PlayoutBuffer::new(n, cfg.input_history_frames),
            delay,
            clock: FrameClock::new(cfg.tick_micros, cfg.nudge_permille),
            book: ChecksumBook::new(cfg.players, cfg.local),
            awaiting_input: None,
            release_budget: 0,
            last_released: None,
            own_newest: None,
            epoch: 0,
            requester: None,
            finished_incoming: None,
            next_request_id: 0,
            attempts: 0,
            load_frame: None,
            serving: Vec::new(),
            served: vec![None; n],
            pending_requests: Vec::new(),
            state_requested: false,
            drops: SeatDrops::new(cfg.local),
            drop_reports_due: false,
            resync_tick: false,
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

    /// The playout delay now, in frames.
    pub fn delay_frames(&self) -> u32 {
        self.delay.frames()
    }

    /// The newest frame released to the game.
    pub fn last_released(&self) -> Option<u32> {
        self.last_released
    }

    /// The newest frame whose checksum was compared clean against every
    /// peer that reported it: frames up to it are settled history (what a
    /// replay log records as the match).
    pub fn newest_clean(&self) -> Option<u32> {
        self.book.newest_clean()
    }

    /// The next frame the local clock will sample.
    pub fn next_local_frame(&self) -> u32 {
        self.clock.next_frame()
    }

    /// Whether the handshake is complete and the frame clock runs.
    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// How many resync epochs (state loads) this peer has been through, mod 256.
    pub fn epoch(&self) -> u8 {
        self.epoch
    }

    /// Feeds one received datagram from `from` (the seat the app's address
    /// table maps its source address to).
    pub fn handle_datagram(&mut self, now: Instant, from: PlayerId, bytes: &[u8]) {
        self.now = self.now.max(now);
        self.stats.received.packets += 1;
        self.stats.received.bytes += bytes.len() as u64;
        if self.phase == Phase::Closed {
            self.stats.dropped.from_gone += 1;
            return;
        }
        let packet = match Packet::<I>::decode(bytes) {
            Ok(p) => p,
            Err(e) => {
                self.stats.dropped.count(&e);
                return;
            }
        };
        let sender = packet.sender();
        if sender != from || sender == self.cfg.local || sender.0 >= self.cfg.players {
            self.stats.dropped.unknown_sender += 1;
            return;
        }
        if self.peers[sender.index()].gone {
            self.stats.dropped.from_gone += 1;
            return;
        }
        match packet {
            Packet::Hello(h) => self.on_hello(now, h),
            Packet::Routed(r) => self.on_routed(now, r),
        }
    }

    fn on_hello(&mut self, now: Instant, h: Hello) {
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

    fn update_connected(&mut self, now: Instant, who: PlayerId) {
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
        if self.phase == Phase::Connecting && all {
            self.phase = Phase::Running;
            self.clock.start(now);
            // Silence is measured from the start, not from the handshake.
            for p in &mut self.peers {
                p.last_recv = now;
            }
            self.events.push_back(Event::Started);
        }
    }

    fn on_routed(&mut self, now: Instant, r: Routed<I>) {
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
    fn max_seq_jump(&self, p: usize, now: Instant) -> i32 {
        let ticks = now.since(self.peers[p].last_recv) / self.cfg.tick_micros.max(1) + 1;
        let per_tick = u64::from(self.cfg.chunks_per_tick) + 16;
        (SeqWindow::SPAN as u64 + per_tick.saturating_mul(ticks)).min(32_767) as i32
    }

    /// The seats still in the match: ours and every peer not gone.
    fn remaining(&self) -> PlayerSet {
        let mut set = PlayerSet::EMPTY;
        for (i, p) in self.peers.iter().enumerate() {
            if i == self.cfg.local.index() || !p.gone {
                set.insert(PlayerId(i as u8));
            }
        }
        set
    }

    /// Stops taking anything from `seat` and starts agreeing with the
    /// remaining peers on its last frame (see [`crate::seat_drop`]).
    fn drop_seat(&mut self, seat: PlayerId) {
        if seat == self.cfg.local || self.drops.is_dropping(seat) {
            return;
        }
        self.peers[seat.index()].gone = true;
        self.book.drop_seat(seat);
        let held = self.playout.through(seat.index());
        self.drops.begin(seat, held);
        self.drop_reports_due = true;
        self.settle_drops();
    }

    fn on_seat_drop(&mut self, who: PlayerId, m: SeatDrop<I>) {
        let seat = m.seat;
        if seat == self.cfg.local || seat.0 >= self.cfg.players || seat == who {
            // Our own seat dropped by others: they have stopped sending to
            // us, and we will time them out in turn.
            self.stats.dropped.unexpected += 1;
            return;
        }
        self.drop_seat(seat);
        let p = seat.index();
        let mut held = None;
        if !m.inputs.is_empty() {
            let reference = self.playout.through(p).map_or(0, |t| t + 1);
            let Some(first) = unwrap_frame(m.first_frame, reference) else {
                self.stats.dropped.invalid += 1;
                return;
            };
            if self.playout.insert_run(p, first, &m.inputs).is_err() {
                self.stats.dropped.invalid += 1;
                return;
            }
            held = Some(first + m.inputs.len() as u32 - 1);
        }
        self.drops.on_report(who, seat, held, m.heard);
        // Answer at once, so the sender learns we heard it.
        self.drop_reports_due = true;
        self.settle_drops();
    }

    /// Ends every dropped seat whose last frame is agreed and held.
    fn settle_drops(&mut self) {
        for (seat, last) in self.drops.decide(self.remaining()) {
            if self
                .playout
                .end_seat(seat.index(), last, I::absent())
            {
                self.drops.settle(seat, last);
                self.events.push_back(Event::SeatDropped {
                    seat,
                    last_frame: last,
                });
            }
        }
        self.try_release();
    }

    fn on_inputs(&mut self, now: Instant, who: PlayerId, m: InputsMsg<I>) {
        let p = who.index();
        if let Some(a) = m.ack {
            let next = self.window.next_frame();
            match unwrap_frame(a, next.saturating_sub(1)) {
                Some(f) if f < next => {
                    let peer = &mut self.peers[p];
                    if peer.acked.is_none_or(|x| f > x) {
                        peer.acked = Some(f);
                        peer.rtt.push(now.since(self.clock.tick_time(f)) as i64);
                    }
                }
                _ => {
                    self.stats.dropped.invalid += 1;
                    return;
                }
            }
        }
        if !m.inputs.is_empty() {
            let reference = self.playout.through(p).map_or(0, |t| t + 1);
            let Some(first) = unwrap_frame(m.first_frame, reference) else {
                self.stats.dropped.invalid += 1;
                return;
            };
            // A peer never runs more than its window ahead of what we acked;
            // refuse to buffer further so a hostile peer cannot grow memory.
            let limit =
                reference.saturating_add(2 * self.cfg.max_unacked_inputs + MAX_INPUTS_PER_PACKET);
            let take = limit.saturating_sub(first).min(m.inputs.len() as u32) as usize;
            match self.playout.insert_run(p, first, &m.inputs[..take]) {
                Ok((new_first, added)) => {
                    for f in new_first..new_first + added {
                        let late = now.signed_since(self.clock.tick_time(f));
                        self.delay.record(late);
                        self.peers[p].lateness.push(late);
                    }
                }
                Err(_) => {
                    self.stats.dropped.invalid += 1;
                    return;
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
    }

    fn on_verdict(&mut self, now: Instant, v: Option<Verdict>) {
        match v {
            None => {}
            Some(Verdict::Desync {
                frame,
                authority,
                drifted,
            }) => {
                let local_drifted = drifted.contains(self.cfg.local);
                self.events.push_back(Event::Desync {
                    frame,
                    authority: Some(authority),
                    drifted,
                    local_drifted,
                });
                if local_drifted {
                    self.begin_resync(now, authority, frame);
                }
            }
            Some(Verdict::NoMajority { frame }) => {
                self.events.push_back(Event::Desync {
                    frame,
                    authority: None,
                    drifted: PlayerSet::EMPTY,
                    local_drifted: false,
                });
                self.events.push_back(Event::ResyncFailed {
                    reason: ResyncFailure::NoMajority { frame },
                });
            }
        }
    }

    fn begin_resync(&mut self, now: Instant, authority: PlayerId, desync_frame: u32) {
        self.attempts += 1;
        if self.attempts > self.cfg.resync_max_attempts {
            self.requester = None;
            self.book.give_up();
            self.events.push_back(Event::ResyncFailed {
                reason: ResyncFailure::TooManyAttempts {
                    attempts: self.attempts - 1,
                },
            });
            return;
        }
        self.next_request_id = self.next_request_id.wrapping_add(1);
        self.requester = Some(Requester {
            authority,
            desync_frame,
            started: now,
            next_request_at: now,
            request_due: true,
            incoming: Incoming::new(self.next_request_id),
            ack_due: false,
        });
    }

    fn on_resync_request(&mut self, who: PlayerId, m: ResyncRequest) {
        let p = who.index();
        let busy = self.serving.iter().any(|o| o.to == who && o.id == m.id)
            || self.served[p] == Some(m.id)
            || self.pending_requests.contains(&(who, m.id));
        if busy || self.requester.is_some() {
            // Already answered, or our own state is in doubt.
            self.stats.dropped.unexpected += u64::from(self.requester.is_some());
            return;
        }
        self.pending_requests.push((who, m.id));
        if !self.state_requested {
            self.state_requested = true;
            self.events.push_back(Event::StateRequested);
        }
    }

    fn on_resync_chunk(&mut self, now: Instant, who: PlayerId, chunk: ResyncChunk) {
        if let Some((auth, done, ack_due)) = &mut self.finished_incoming {
            if *auth == who && done.id == chunk.id {
                *ack_due = true;
                return;
            }
        }
        let reference = self.playout.next_release();
        let Some(req) = &mut self.requester else {
            self.stats.dropped.unexpected += 1;
            return;
        };
        if who != req.authority || chunk.id != req.incoming.id {
            self.stats.dropped.unexpected += 1;
            return;
        }
        let Some(frame) = unwrap_frame(chunk.frame, reference) else {
            self.stats.dropped.invalid += 1;
            return;
        };
        if req.incoming.on_chunk(chunk, frame).is_err() {
            self.stats.dropped.invalid += 1;
            return;
        }
        req.ack_due = true;
        req.request_due = false;
        match req.incoming.finish() {
            None => {}
            Some(Ok((frame, checksum, state))) => {
                if let Some(req) = self.requester.take() {
                    self.finished_incoming = Some((req.authority, req.incoming, true));
                }
                self.load(frame, checksum, state);
            }
            Some(Err(ResyncError::ChecksumMismatch | ResyncError::Decompress { .. }))
            | Some(Err(_)) => {
                let (authority, frame) = (req.authority, req.desync_frame);
                self.begin_resync(now, authority, frame);
            }
        }
    }

    fn load(&mut self, frame: u32, checksum: Checksum, state: Vec<u8>) {
        self.epoch = self.epoch.wrapping_add(1);
        self.events.push_back(Event::LoadState { frame, state });
        self.book.on_loaded(frame, checksum);
        self.own_newest = Some(frame);
        self.load_frame = Some(frame);
        self.stats.resyncs_completed += 1;
        let next = self.playout.next_release();
        if next <= frame {
            self.playout.skip_to(frame + 1);
            self.last_released = Some(frame);
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
    }

    fn on_resync_ack(&mut self, who: PlayerId, ack: ResyncAck) {
        let Some(i) = self
            .serving
            .iter()
            .position(|o| o.to == who && o.id == ack.id)
        else {
            self.stats.dropped.unexpected += 1;
            return;
        };
        self.serving[i].on_ack(&ack);
        if self.serving[i].done() {
            let o = self.serving.remove(i);
            self.served[who.index()] = Some(o.id);
            self.stats.resyncs_served += 1;
        }
    }

    /// Runs the timers: call when `now` reaches [`Session::poll_timeout`].
    /// At each tick it releases due frames and asks for the next local input.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
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
                silent.push(PlayerId(i as u8));
            }
        }
        for peer in silent {
            self.events.push_back(Event::PeerTimedOut {
                peer,
                reason: TimeoutReason::Silent,
            });
            self.drop_seat(peer);
        }
        let mut left = Vec::new();
        for (i, p) in self.peers.iter_mut().enumerate() {
            if !p.gone && p.leaving.is_some_and(|(at, _)| now >= at) {
                p.leaving = None;
                left.push(PlayerId(i as u8));
            }
        }
        for peer in left {
            self.events.push_back(Event::PeerDisconnected { peer });
            self.drop_seat(peer);
        }
        if self.awaiting_input.is_some() || now < self.clock.next_tick_at() {
            return;
        }
        let frame = self.clock.advance();
        self.release_budget = self.cfg.max_catch_up;
        self.delay.on_tick();
        self.time_sync();
        for p in &mut self.peers {
            p.inputs_due = true;
        }
        self.drop_reports_due = true;
        self.resync_tick = true;
        self.resync_timers(now);
        self.try_release();
        if let Some(due) = self.due_frame() {
            let next = self.playout.next_release();
            if next <= due && !self.playout.is_complete(next) {
                self.stats.stall_ticks += 1;
                self.delay.on_underrun();
            }
        }
        self.stats.delay_frames = self.delay.frames();
        self.stats.max_delay_frames = self.stats.max_delay_frames.max(self.delay.frames());
        self.awaiting_input = Some(frame);
        self.events.push_back(Event::InputNeeded { frame });
    }

    fn time_sync(&mut self) {
        let half_tick = (self.cfg.tick_micros / 2) as i64;
        let mut sum = 0i64;
        let mut n = 0i64;
        for (i, p) in self.peers.iter().enumerate() {
            if i == self.cfg.local.index() || p.gone {
                continue;
            }
            if let (Some(late), Some(rtt)) = (p.lateness.quantile(500), p.rtt.quantile(500)) {
                // The ack waits up to one tick for the peer's next packet.
                sum += late - (rtt - half_tick).max(0) / 2;
                n += 1;
            }
        }
        if n > 0 {
            self.clock.nudge(sum / n);
            if self.clock.rate() != 0 {
                self.stats.nudged_ticks += 1;
            }
        }
    }

    fn resync_timers(&mut self, now: Instant) {
        let rto = self.rto_micros();
        if let Some(req) = &mut self.requester {
            if now.since(req.started) > self.cfg.resync_timeout_micros {
                let (authority, frame) = (req.authority, req.desync_frame);
                self.begin_resync(now, authority, frame);
            } else if req.incoming.frame.is_none() && now >= req.next_request_at {
                req.request_due = true;
                req.next_request_at = now.plus(rto);
            }
        }
        let limit = 2 * self.cfg.resync_timeout_micros;
        self.serving.retain(|o| now.since(o.started) <= limit);
        if let Some(load) = self.load_frame {
            if self
                .book
                .newest_clean()
                .is_some_and(|c| c >= load + self.cfg.resync_stable_frames)
            {
                self.attempts = 0;
                self.load_frame = None;
            }
        }
    }

    /// A retransmission timeout: twice the worst peer's median round trip,
    /// at least 100 ms.
    fn rto_micros(&self) -> u64 {
        let rtt = self
            .peers
            .iter()
            .filter_map(|p| p.rtt.quantile(500))
            .max()
            .unwrap_or(0)
            .max(0) as u64;
        (2 * rtt).max(100 * MICROS_PER_MILLI)
    }

    fn due_frame(&self) -> Option<u32> {
        let newest = self.clock.next_frame().checked_sub(1)?;
        newest.checked_sub(self.delay.frames())
    }

    fn try_release(&mut self) {
        let Some(due) = self.due_frame() else {
            return;
        };
        while self.release_budget > 0 && self.playout.next_release() <= due {
            let Some((frame, inputs)) = self.playout.release() else {
                break;
            };
            self.release_budget -= 1;
            self.last_released = Some(frame);
            self.stats.frames_released += 1;
            self.events.push_back(Event::Frame {
                frame,
                inputs,
                resimulated: false,
            });
        }
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
            let (_, count) = self.window.unacked_span(p.acked);
            if self.cfg.redundant_inputs && count > self.cfg.max_unacked_inputs {
                behind.push(PlayerId(i as u8));
                continue;
            }
            min_acked = Some(match min_acked {
                None => p.acked,
                Some(m) => m.min(p.acked),
            });
        }
        for peer in behind {
            self.events.push_back(Event::PeerTimedOut {
                peer,
                reason: TimeoutReason::TooManyUnacked,
            });
            self.drop_seat(peer);
        }
        if let Some(Some(through)) = min_acked {
            self.window.trim_through(through);
        }
        self.try_release();
        Ok(())
    }

    /// This peer's checksum of the state after `frame`, once stepped. It must
    /// be BLAKE3 of the exact snapshot bytes (as `lockstep_fx::StateWriter`
    /// produces), so a resync can verify a transferred state.
    pub fn report_checksum(&mut self, frame: u32, checksum: Checksum) -> Result<(), CallError> {
        if self.last_released.is_none_or(|r| frame > r) {
            return Err(CallError::NotReleased {
                frame,
                released: self.last_released,
            });
        }
        self.own_newest = Some(self.own_newest.map_or(frame, |n| n.max(frame)));
        if frame % self.cfg.full_checksum_every == 0 {
            for p in &mut self.peers {
                p.full_due = Some((frame, checksum));
            }
        }
        let v = self.book.record_own(frame, checksum);
        let now = self.now;
        self.on_verdict(now, v);
        Ok(())
    }

    /// The snapshot after `frame`, answering [`Event::StateRequested`]:
    /// `frame` is the newest frame whose checksum this peer has reported
    /// (the last frame it stepped), which may be older than the newest frame
    /// released if `Event::Frame`s are still queued behind the request. The
    /// request stays pending until answered, so a late answer works too;
    /// a drifted peer loads the state and re-simulates the frames after it.
    pub fn provide_state(
        &mut self,
        now: Instant,
        frame: u32,
        state: &[u8],
    ) -> Result<(), CallError> {
        self.now = self.now.max(now);
        if !self.state_requested || self.own_newest != Some(frame) {
            return Err(CallError::StateNotRequested { frame });
        }
        if self
            .book
            .own(frame)
            .is_some_and(|c| c != Checksum::of(state))
        {
            return Err(CallError::StateChecksum { frame });
        }
        self.state_requested = false;
        for (who, id) in std::mem::take(&mut self.pending_requests) {
            self.serving.retain(|o| o.to != who);
            self.serving.push(Outgoing::new(who, id, frame, state, now));
        }
        self.resync_tick = true;
        Ok(())
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

    /// The next event, in the order they happened.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event<I>> {
        self.events.pop_front()
    }

    /// The next datagram to send.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.now = self.now.max(now);
        if self.out.is_empty() && self.phase != Phase::Closed {
            self.build_transmits(now);
        }
        self.out.pop_front()
    }

    /// When [`Session::handle_timeout`] next needs calling, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t: Option<Instant> = None;
        let mut at = |x: Instant| t = Some(t.map_or(x, |y| y.min(x)));
        match self.phase {
            Phase::Closed => return None,
            Phase::Connecting => {}
            Phase::Running => {
                if self.awaiting_input.is_none() {
                    at(self.clock.next_tick_at());
                }
            }
        }
        for p in self.peers.iter().filter(|p| !p.gone) {
            if let Some((at_leave, _)) = p.leaving {
                at(at_leave);
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

    fn build_transmits(&mut self, now: Instant) {
        let local = self.cfg.local.index();
        for i in 0..self.peers.len() {
            if i == local || self.peers[i].gone || self.peers[i].incompatible {
                continue;
            }
            let to = PlayerId(i as u8);
            let peer = &mut self.peers[i];
            if peer.hello_reply || (!peer.connected && now >= peer.next_hello_at) {
                peer.hello_reply = false;
                peer.next_hello_at = now.plus(self.cfg.hello_interval_micros);
                let hello = Hello {
                    sender: self.cfg.local,
                    schema_hash: I::schema_hash(),
                    players: self.cfg.players,
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
            if let Some((frame, checksum)) = self.peers[i].full_due.take() {
                let msg = ChecksumMsg {
                    epoch: self.epoch,
                    frame: wire_frame(frame),
                    checksum,
                };
                self.send_routed(to, Message::Checksum(msg));
            }
        }
        let due = if std::mem::take(&mut self.drop_reports_due) {
            self.drops.due(self.remaining())
        } else {
            Vec::new()
        };
        for (seat, to) in due {
            let (first, inputs) = self
                .playout
                .tail(seat.index(), self.cfg.max_unacked_inputs);
            let msg = SeatDrop {
                seat,
                heard: self.drops.heard(seat),
                first_frame: if inputs.is_empty() { 0 } else { wire_frame(first) },
                inputs,
            };
            self.send_routed(to, Message::SeatDrop(msg));
            self.drops.sent(seat, to);
        }
        if let Some(req) = &mut self.requester {
            let to = req.authority;
            let mut msgs = Vec::new();
            if std::mem::take(&mut req.request_due) {
                msgs.push(Message::ResyncRequest(ResyncRequest {
                    id: req.incoming.id,
                    desync_frame: wire_frame(req.desync_frame),
                }));
            }
            if std::mem::take(&mut req.ack_due) {
                msgs.push(Message::ResyncAck(req.incoming.ack()));
            }
            for m in msgs {
                self.send_routed(to, m);
            }
        }
        if let Some((to, done, ack_due)) = &mut self.finished_incoming {
            if std::mem::take(ack_due) {
                let (to, ack) = (*to, done.ack());
                self.send_routed(to, Message::ResyncAck(ack));
            }
        }
        if std::mem::take(&mut self.resync_tick) && !self.serving.is_empty() {
            let rto = self.rto_micros();
            let mut chunks = Vec::new();
            let mut budget = self.cfg.chunks_per_tick;
            for o in &mut self.serving {
                let due = o.due_chunks(now, rto, budget);
                budget -= due.len() as u32;
                chunks.extend(due.into_iter().map(|c| (o.to, c)));
            }
            for (to, c) in chunks {
                self.send_routed(to, Message::ResyncChunk(c));
            }
        }
    }

    fn inputs_message(&mut self, i: usize) -> InputsMsg<I> {
        let peer = &self.peers[i];
        let from = if self.cfg.redundant_inputs {
            peer.acked
        } else {
            peer.acked.max(peer.sent_through)
        };
        let (first, count) = self.window.unacked_span(from);
        let inputs = self
            .window
            .inputs_from(first, count.min(MAX_INPUTS_PER_PACKET));
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

    fn short_report(&self) -> Option<ShortChecksums> {
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

    fn send_routed(&mut self, to: PlayerId, message: Message<I>) {
        let peer = &mut self.peers[to.index()];
        let Some(token) = peer.token else {
            return;
        };
        let seq = peer.next_seq;
        peer.next_seq = seq.wrapping_add(1);
        self.send(
            to,
            Packet::Routed(Routed {
                sender: self.cfg.local,
                token,
                seq,
                message,
            }),
        );
    }

    fn send(&mut self, to: PlayerId, packet: Packet<I>) {
        let kind: Kind = packet.kind();
        let bytes = packet.encode();
        let c = &mut self.stats.sent[kind as usize];
        c.packets += 1;
        c.bytes += bytes.len() as u64;
        self.out.push_back(Transmit { to, bytes });
    }
}
