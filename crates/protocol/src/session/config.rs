//! [`Config`]: a session's settings with their defaults, and
//! [`ConfigError`], why [`Session::new`](super::Session::new) refused them.

use crate::seal::{Identity, PublicKey};
use crate::seat::SeatId;
use crate::time::MICROS_PER_MILLI;

/// How a session protects its packets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Security {
    /// Packets travel in clear, guarded only by session tokens and sequence
    /// windows, which anyone who sees one packet can get past: for tests on
    /// a trusted network and for comparisons with other transports.
    #[default]
    Plain,
    /// Every packet, handshakes included, is sealed (see [`crate::seal`])
    /// with keys agreed between `identity` and each seat's public key.
    Sealed {
        /// This peer's key pair for the match.
        identity: Identity,
        /// Every seat's public key, ours included (it must be
        /// `identity`'s), as the match setup bound them: index = seat.
        seats: Vec<PublicKey>,
    },
}

/// When frames are stepped: only once every player's input is here
/// (lockstep), or at once with the missing inputs predicted, rolled back and
/// stepped again when a prediction turns out wrong (rollback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Frame n is stepped once every player's input for n is here, a
    /// playout delay after it was sampled (adaptive by default: see
    /// [`Config::adaptive_delay`]). Nothing is ever predicted.
    #[default]
    Lockstep,
    /// Frame n is stepped an input delay after it was sampled, whether or
    /// not the other players' inputs are here: a missing input is predicted
    /// to repeat that player's newest one. When the real input arrives and
    /// differs, the session rolls back to the first wrong frame
    /// ([`Event::Rollback`](super::Event::Rollback)) and steps the frames
    /// since again. Checksums are compared, and frames recorded, only once
    /// confirmed (stepped with every real input).
    Rollback(Rollback),
}

impl Mode {
    /// Rollback with its defaults: 8 frames of prediction, adaptive input
    /// delay.
    pub const ROLLBACK: Mode = Mode::Rollback(Rollback::DEFAULT);

    /// Frames that may be stepped ahead of the newest confirmed one (0 in
    /// lockstep).
    pub fn max_prediction(&self) -> u32 {
        match self {
            Mode::Lockstep => 0,
            Mode::Rollback(r) => r.max_prediction,
        }
    }
}

/// The settings of [`Mode::Rollback`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rollback {
    /// Frames that may be stepped past the newest confirmed frame, `1..=64`
    /// (8, as GGRS): a peer whose inputs are later than that waits for them.
    pub max_prediction: u32,
    /// Frames between sampling a local input and stepping its frame.
    pub input_delay: InputDelay,
    /// Tests only (0 = off): at every tick, roll back this many frames
    /// (within the frames not yet settled) and step them again with the
    /// same inputs, so every frame is stepped several times and any
    /// difference between the runs is caught (GGRS's sync test, on the
    /// real rollback path).
    pub sync_test_frames: u32,
}

impl Rollback {
    /// 8 frames of prediction, an adaptive input delay of 0 to 8 frames, no
    /// sync test.
    pub const DEFAULT: Rollback = Rollback {
        max_prediction: 8,
        input_delay: InputDelay::Adaptive { min: 0, max: 8 },
        sync_test_frames: 0,
    };
}

impl Default for Rollback {
    fn default() -> Rollback {
        Rollback::DEFAULT
    }
}

/// A rollback session's input delay: frames between sampling a local input
/// and stepping its frame. Since every input travels labelled with its
/// frame, the delay only decides *when* frames are stepped, never what they
/// hold: peers with different delays still step the same frames with the
/// same inputs, and no change of delay can cause a desync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputDelay {
    /// Always this many frames.
    Fixed(u32),
    /// Chosen from the measured lateness of remote inputs (one-way latency
    /// plus jitter), so that the median input arrives within half the
    /// prediction window and the 98th percentile within the whole window;
    /// kept in `min..=max`. The host (the lowest seat still playing) takes
    /// the largest delay any peer asks for and names the frame it applies
    /// from, so every player has the same delay from the same frame.
    Adaptive {
        /// The smallest delay.
        min: u32,
        /// The largest delay.
        max: u32,
    },
}

/// A session's settings. [`Config::new`] gives the defaults; change fields,
/// then [`Session::new`](super::Session::new) validates them. With serde, a
/// settings file may give any subset of the fields (the rest keep
/// [`Config::default`]'s values); the keys (`security`) never travel in one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Seats in the match, `2..=8`.
    pub seats: u8,
    /// This peer's seat.
    pub local: SeatId,
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
    /// 60 Hz), at most [`MAX_INPUTS_PER_PACKET`](crate::packet::MAX_INPUTS_PER_PACKET).
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
    /// Tick-length change that keeps the frame clock aligned with the
    /// peers' while it is off by less than `clock::BALANCE_DEADBAND_FRAMES`, in
    /// permille (20 = 2%); beyond that the tick stretches up to 10%
    /// (see `clock.rs`).
    ///
    pub nudge_permille: u32,
    /// Resync attempts before [`Event::ResyncFailed`](super::Event::ResyncFailed) (3).
    pub resync_max_attempts: u32,
    /// Time one resync attempt may go without a new chunk before it is
    /// retried (5 s, or four retransmission timeouts — eight round trips —
    /// when that is longer).
    pub resync_timeout_micros: u64,
    /// Clean frames after a load that reset the attempt count (120).
    pub resync_stable_frames: u32,
    /// Desyncs this seat may drift in within
    /// [`Config::recurring_window_frames`] before it is taken as not
    /// deterministic (3): the one that reaches the count is not healed but
    /// raises [`ResyncFailure::Recurring`](super::ResyncFailure::Recurring).
    /// A one-off corruption heals; a game that keeps drifting ends the
    /// match (under the default policy) within a few of its desyncs.
    pub recurring_desyncs: u32,
    /// The window of [`Config::recurring_desyncs`], in frames (3 600, a
    /// minute at 60 Hz).
    pub recurring_window_frames: u32,
    /// Released frames kept for re-simulation after a load (600; longer on
    /// slow paths, see `Session::history_frames`).
    pub input_history_frames: u32,
    /// Resync chunks sent per tick at most (16).
    pub chunks_per_tick: u32,
    /// This process rejoins a running match in a seat that was dropped (its
    /// earlier process died): it does not start at frame 0 but waits for the
    /// host to name the frame its seat plays again from, loads the host's
    /// exact state and plays on from there.
    pub rejoin: bool,
    /// Whether a seat left alone in the match may play on (the default).
    ///
    /// A seat whose side of a split is not a quorum of the seats still in
    /// the match stops ([`Event::LostQuorum`](super::Event::LostQuorum));
    /// of two seats that lost each other the lower one holds the tie-break
    /// and is the side that may play on. With `true` it does, against the
    /// other seat's absent input, and says that its frames from then on are
    /// unchecked ([`Event::PlayingAlone`](super::Event::PlayingAlone)): no
    /// seat compares its checksums until one returns. That is what lets a
    /// two-seat match survive a crash (the restarted process takes its seat
    /// back from the seat that played on) and never splits the match (the
    /// other seat stops). With `false` a quorum needs two seats, so a seat
    /// left alone stops too: a match where every frame must be checked.
    pub play_on_alone: bool,
    /// The seat whose relay serves the match's arbiter, if the match has
    /// one (default `None`): a spectator that steps the confirmed inputs on
    /// its own and, asked during a dispute, says whose checksum it shares.
    /// Every seat then waits for that seat's word (bounded by the dispute's
    /// time limit) before deciding a dispute; see
    /// `checksums::attribute`.
    pub arbiter: Option<SeatId>,
    /// Whether every packet repeats all unacked inputs (the default). Set
    /// `false` only over a reliable, ordered transport (the TCP-like model,
    /// a TCP baseline): each input is then sent once and the unacked cap is
    /// not enforced.
    pub redundant_inputs: bool,
    /// Whether packets are sealed, and with which keys (default
    /// [`Security::Plain`]; the UDP runtime seals unless told not to).
    #[serde(skip)]
    pub security: Security,
    /// Lockstep (the default) or rollback.
    pub mode: Mode,
    /// How often a timestamped ping goes to each peer for clock
    /// synchronization (200 ms).
    pub timing_interval_micros: u64,
    /// Frames in a communication turn (1, at most [`MAX_TURN_FRAMES`]):
    /// the inputs of a turn's frames travel together, one inputs packet per
    /// peer per turn (with every unacked input before them, as always),
    /// instead of one at every tick. Longer turns send fewer packets (the
    /// headers and the seal's tag are paid per packet) at the price of
    /// latency. How a turn is sampled depends on the mode:
    /// - lockstep ([`Config::samples_turns`]): at the turn's first tick the
    ///   session asks for every frame of the turn, one
    ///   [`Event::InputNeeded`](super::Event::InputNeeded) after another,
    ///   and sends them at once. A command waits for the next turn's first
    ///   tick (half a turn on average), then only for the trip: the
    ///   playout delay covers the trip and jitter, without
    ///   [`Config::delay_margin_frames`] (a lost packet costs a turn, which
    ///   a margin of a frame or two would not cover), and an underrun does
    ///   not grow it beyond what the lateness calls for;
    /// - rollback: every frame is sampled at its own tick, as it is stepped
    ///   locally after the input delay, and the turn travels at its last
    ///   tick.
    ///
    /// The host's value is every seat's (it travels in the match settings).
    pub turn_frames: u32,
    /// The match's length: frames `0..n` are played and nothing after them
    /// is asked for, released or stepped, so every seat's match (and log)
    /// ends at the same frame; the session keeps running (acks, checksums,
    /// resync) until the app closes it. `None` (the default): the match
    /// runs until the app ends it.
    pub match_frames: Option<u32>,
}

impl Default for Config {
    /// [`Config::new`] for seat 0 of two seats.
    fn default() -> Config {
        Config::new(2, SeatId(0))
    }
}

impl Config {
    /// Defaults for `seats` seats at 60 Hz, this peer at `local`.
    pub fn new(seats: u8, local: SeatId) -> Config {
        Config {
            seats,
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
            recurring_desyncs: 3,
            recurring_window_frames: 3600,
            input_history_frames: 600,
            chunks_per_tick: 16,
            redundant_inputs: true,
            rejoin: false,
            play_on_alone: true,
            arbiter: None,
            security: Security::Plain,
            mode: Mode::Lockstep,
            timing_interval_micros: 200 * MICROS_PER_MILLI,
            turn_frames: 1,
            match_frames: None,
        }
    }
}

impl Config {
    /// Whether local inputs are sampled a whole turn at a time, at the
    /// turn's first tick: lockstep with turns longer than one frame (see
    /// [`Config::turn_frames`]).
    pub fn samples_turns(&self) -> bool {
        self.mode == Mode::Lockstep && self.turn_frames > 1
    }
}

/// The longest communication turn, in frames ([`Config::turn_frames`]):
/// 500 ms at 60 Hz.
pub const MAX_TURN_FRAMES: u32 = 30;

/// Why a [`Config`] (or token) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `seats` is not in `2..=8`.
    #[error("{0} seats: a session holds 2 to 8")]
    Seats(u8),
    /// `local` is not a seat of the match.
    #[error("local seat {0} is not below the seat count")]
    LocalSeat(u8),
    /// The session token is 0, which means "unknown" on the wire.
    #[error("the session token must not be 0")]
    ZeroToken,
    /// A field is zero or out of its range.
    #[error("{0} is out of range")]
    Range(&'static str),
    /// Sealed, but the seat keys do not fit the match: not one per seat, or
    /// ours is not our identity's.
    #[error("sealed session: {0}")]
    Keys(&'static str),
    /// Sealed, but seat `0`'s public key is unusable (a low-order point).
    #[error("sealed session: seat {0}'s public key is unusable")]
    WeakKey(u8),
    /// Not even one input of the largest size fits a datagram with the
    /// rest of its message.
    #[error("an input of up to {bits} bits does not fit a {max}-byte datagram with its message")]
    InputTooLarge {
        /// The input's `MAX_BITS`.
        bits: u32,
        /// [`MAX_PACKET`](crate::packet::MAX_PACKET).
        max: u32,
    },
}
