//! [`PeerError`]: why a peer (or a spectator) could not start.
//!
//! Invariant: every variant names what was refused and carries its cause.

use lockstep_protocol::ConfigError;
use lockstep_protocol::seal::SealError;
use lockstep_sim::SetupError;

/// Why a [`Peer`](crate::Peer) could not start.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The game refused the match setup.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The session refused its settings.
    #[error("session settings: {0}")]
    Config(#[from] ConfigError),
    /// The relay's public key is unusable (a low-order point).
    #[error("sealed spectator: {0}")]
    Seal(#[from] SealError),
    /// The session's seat count is not the match's.
    #[error("the session has {session} seats but the match {setup} seats")]
    Seats {
        /// Seats in the session settings.
        session: u8,
        /// Seats in the match.
        setup: u8,
    },
    /// Writing the replay log's header failed.
    #[error("writing the replay log header: {0}")]
    Io(#[from] std::io::Error),
    /// The game's own initial state does not decode (a bug in the game).
    #[error("the game's initial state: {0}")]
    InitialState(#[from] lockstep_sim::StateError),
}
