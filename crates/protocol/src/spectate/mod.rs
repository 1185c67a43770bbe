//! Spectators: people who watch a match without a seat. One seat's peer acts
//! as the [`Relay`] for its spectators; each spectator runs a [`SpectatorSession`].
//!
//! The relay sends a new spectator the exact state of a frame every seat
//! agreed on (the same chunked, verified transfer a resync uses), then
//! streams every released frame: all seats' inputs, redundantly until acked
//! ([`Feed`](crate::packet::Feed)), with the short checksums the seats
//! settled on. The spectator steps the same frames and checks the same
//! checksums. It never sends inputs: its packets to the relay are a
//! handshake, acks and a "send me the state again", and the relay keeps
//! them away from its [`Session`](crate::Session) entirely, so a spectator
//! cannot speak for a seat. N spectators cost the players at most one
//! stream each from the relay, and nothing from the other seats.
//!
//! Addresses stay the app's business, as in the session: the app gives each
//! spectator's address a [`SpectatorId`] (a datagram of kind
//! [`Kind::SpectateHello`](crate::packet::Kind::SpectateHello) from an unknown
//! address is a new spectator) and maps it back when sending.
//!
//! - `relay.rs`: the relay's side, one slot per spectator;
//! - `spectator.rs`: the spectator's side.

mod relay;
mod spectator;

pub use relay::{Relay, RelayEvent, RelayStats, SpectatorLeft};
pub use spectator::{SpectatorSession, SpectatorSessionEvent, SpectatorSessionStats};

use crate::time::MICROS_PER_MILLI;

/// The app's name for one spectator's address, chosen by the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SpectatorId(pub u32);

/// A datagram for one spectator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpectatorTransmit {
    /// The spectator to send it to.
    pub to: SpectatorId,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Settings shared by the relay and the spectator; both must agree on
/// `seats` and `tick_micros` (the handshake checks them with the input
/// schema). [`SpectateConfig::new`] gives the defaults.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpectateConfig {
    /// Seats in the match, `2..=8`.
    pub seats: u8,
    /// Tick length in microseconds: the relay sends a feed each tick, the
    /// spectator an ack each tick it received something.
    pub tick_micros: u64,
    /// Handshake resend interval (100 ms).
    pub hello_interval_micros: u64,
    /// Silence after which the other side is taken as gone (3 s).
    pub timeout_micros: u64,
    /// State chunks sent per tick at most (16), and their retransmission
    /// timeout (200 ms).
    pub chunks_per_tick: u32,
    /// Retransmission timeout of a state chunk.
    pub chunk_rto_micros: u64,
    /// Frames a spectator may lag behind the relay's newest before the
    /// relay drops it (1 800, 30 s at 60 Hz): the relay keeps every frame
    /// its slowest spectator has not acked, so this bounds its memory.
    pub max_lag_frames: u32,
    /// Spectators one relay serves at most (8).
    pub max_spectators: u32,
}

impl Default for SpectateConfig {
    /// [`SpectateConfig::new`] for two seats at 60 Hz.
    fn default() -> SpectateConfig {
        SpectateConfig::new(2, 16_667)
    }
}

impl SpectateConfig {
    /// Defaults for a match of `seats` seats with a `tick_micros` tick.
    pub fn new(seats: u8, tick_micros: u64) -> SpectateConfig {
        SpectateConfig {
            seats,
            tick_micros,
            hello_interval_micros: 100 * MICROS_PER_MILLI,
            timeout_micros: 3_000 * MICROS_PER_MILLI,
            chunks_per_tick: 16,
            chunk_rto_micros: 200 * MICROS_PER_MILLI,
            max_lag_frames: 1_800,
            max_spectators: 8,
        }
    }
}
