//! [`PeerSettings`]: how a peer plays and records — its session, its
//! desync policy, what it records and how often it keeps a saved state.
//! A settings file may give any subset of the fields.
//!
//! Invariant: the defaults are what a match over the internet wants; every
//! seat of a match must agree on the fields the session checks.

use lockstep_protocol::spectate::SpectateConfig;
use lockstep_protocol::{Config, SeatId};
use lockstep_sim::Match;
use lockstep_sim::replay::RecordSettings;

use crate::stop::DesyncPolicy;

/// How a [`Peer`](crate::Peer) plays and records. With serde, a settings file may give
/// any subset of the fields (the rest keep [`PeerSettings::default`]'s).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PeerSettings {
    /// The protocol session's settings (seat, seat count, tick, delays).
    pub session: Config,
    /// The session token (random, never 0): identifies this peer on the wire.
    pub token: u32,
    /// The replay log's layout (checksum and keyframe intervals, chunking).
    pub record: RecordSettings,
    /// Unsettled frames held at most before the oldest is logged anyway
    /// (when no peer is left to compare checksums with). Also bounds how far
    /// back a desync can be diagnosed and corrected in the log. On slow
    /// paths the session's input history is longer
    /// ([`Session::history_frames`](lockstep_protocol::Session::history_frames),
    /// ten round trips), and then that bound is used instead.
    pub max_unsettled_frames: u32,
    /// The spectator relay's settings (`max_spectators = 0`: serve none).
    pub spectate: SpectateConfig,
    /// What the match does with a desync it cannot heal (`Stop`: every
    /// seat stops with [`StopReason::MatchInvalid`](crate::StopReason::MatchInvalid)). Every seat of a
    /// match must have the same.
    pub desync_policy: DesyncPolicy,
    /// The unsettled history keeps a full state after every this many
    /// frames (60: a second at 60 Hz; a divisor of the replay log's
    /// keyframe interval, so the log's keyframes are among them), besides
    /// the newest frames a rollback may return to, and steps the frames
    /// between them again when it needs another state. Larger: less
    /// memory, more stepping when a desync is diagnosed.
    pub state_every: u32,
}

impl Default for PeerSettings {
    /// [`PeerSettings::new`] for seat 0 of a two-seat match at 60 Hz.
    fn default() -> PeerSettings {
        let setup = Match {
            seats: 2,
            seed: 0,
            tick_rate: 60,
        };
        PeerSettings::new(&setup, SeatId(0), 1)
    }
}

impl PeerSettings {
    /// Defaults for seat `seat` of `setup`, with the session's tick taken
    /// from the match's tick rate.
    pub fn new(setup: &Match, seat: SeatId, token: u32) -> PeerSettings {
        let mut session = Config::new(setup.seats, seat);
        let rate = u64::from(setup.tick_rate.max(1));
        session.tick_micros = (1_000_000 + rate / 2) / rate;
        let tick_micros = session.tick_micros;
        PeerSettings {
            session,
            token,
            record: RecordSettings::default(),
            max_unsettled_frames: 600,
            spectate: SpectateConfig::new(setup.seats, tick_micros),
            desync_policy: DesyncPolicy::Stop,
            state_every: 60,
        }
    }
}
