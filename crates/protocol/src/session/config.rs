//! [`Config`]: a session's settings with their defaults, and
//! [`ConfigError`], why [`Session::new`](super::Session::new) refused them.

use crate::player::PlayerId;
use crate::seal::{Identity, PublicKey};
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

/// A session's settings. [`Config::new`] gives the defaults; change fields,
/// then [`Session::new`](super::Session::new) validates them.
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
    /// Tick-rate nudge for clock alignment, in permille (20 = 2%).
    pub nudge_permille: u32,
    /// Resync attempts before [`Event::ResyncFailed`](super::Event::ResyncFailed) (3).
    pub resync_max_attempts: u32,
    /// Time one resync attempt may take before it is retried (5 s).
    pub resync_timeout_micros: u64,
    /// Clean frames after a load that reset the attempt count (120).
    pub resync_stable_frames: u32,
    /// Released frames kept for re-simulation after a load (600).
    pub input_history_frames: u32,
    /// Resync chunks sent per tick at most (16).
    pub chunks_per_tick: u32,
    /// This process rejoins a running match in a seat that was dropped (its
    /// earlier process died): it does not start at frame 0 but waits for the
    /// host to name the frame its seat plays again from, loads the host's
    /// exact state and plays on from there.
    pub rejoin: bool,
    /// Whether every packet repeats all unacked inputs (the default). Set
    /// `false` only over a reliable, ordered transport (the TCP-like model,
    /// a TCP baseline): each input is then sent once and the unacked cap is
    /// not enforced.
    pub redundant_inputs: bool,
    /// Whether packets are sealed, and with which keys (default
    /// [`Security::Plain`]; the UDP runtime seals unless told not to).
    pub security: Security,
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
            rejoin: false,
            security: Security::Plain,
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
    /// Sealed, but the seat keys do not fit the match: not one per seat, or
    /// ours is not our identity's.
    #[error("sealed session: {0}")]
    Keys(&'static str),
    /// Sealed, but seat `0`'s public key is unusable (a low-order point).
    #[error("sealed session: seat {0}'s public key is unusable")]
    WeakKey(u8),
    /// A full window of inputs would not fit one datagram.
    #[error("{inputs} inputs of up to {bits} bits do not fit a {max}-byte datagram")]
    WindowTooLarge {
        /// `max_unacked_inputs`.
        inputs: u32,
        /// The input's `MAX_BITS`.
        bits: u32,
        /// [`MAX_PACKET`](crate::packet::MAX_PACKET).
        max: u32,
    },
}
