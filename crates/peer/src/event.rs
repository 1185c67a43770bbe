//! [`PeerEvent`]: what a [`Peer`](crate::Peer) tells the app, in the order
//! it happened. Every session event the peer answers itself (input
//! requests, frames to step, state requests and loads) becomes at most one
//! of these, so the app only watches and shows.

use lockstep_fx::Checksum;
use lockstep_protocol::spectate::{SpectatorId, SpectatorLeft};
use lockstep_protocol::{ResyncFailure, SeatEvent, SeatId, SeatSet};
use lockstep_sim::desync::Diagnosis;

use crate::stop::StopReason;

/// Why a peer shows snapshots instead of its own simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackReason {
    /// Resync could not bring it back.
    ResyncFailed(ResyncFailure),
    /// It is configured as a viewer.
    Viewer,
}

/// Something that happened to a [`Peer`](crate::Peer); drain with
/// [`Peer::poll_event`](crate::Peer::poll_event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerEvent {
    /// Who is in the match changed (the session's own event, passed on).
    Seat(SeatEvent),
    /// Every seat is connected: frame 0 starts.
    Started,
    /// The game stepped `frame`; `checksum` is the state after it.
    Stepped {
        /// The frame.
        frame: u32,
        /// BLAKE3 of the state after it.
        checksum: Checksum,
        /// `true` when the frame was stepped again, after loading the
        /// authority's state or after a rollback (draw no new effects for
        /// it, or replace the ones drawn: see [`PeerEvent::RolledBack`]).
        resimulated: bool,
        /// `true` when some player's input was predicted (rollback mode):
        /// the frame may yet be rolled back.
        predicted: bool,
    },
    /// Rollback mode: a predicted input turned out wrong, so the game went
    /// back to the state before `frame`; the `frames` frames from it on
    /// are stepped again (`resimulated: true`). Effects started in those
    /// frames may have to be cancelled or corrected.
    RolledBack {
        /// The first frame stepped again.
        frame: u32,
        /// How many frames were undone.
        frames: u32,
    },
    /// A frame stepped again from the same state with the same inputs gave
    /// another checksum: the game reads something other than its state and
    /// inputs (a clock, a hash map's order, a float), or its encoding misses
    /// part of its state. Never raised for a sound game.
    NotDeterministic {
        /// The frame.
        frame: u32,
        /// Its checksum the first time.
        first: Checksum,
        /// Its checksum now.
        again: Checksum,
    },
    /// The peers' checksums of `frame` differ.
    Desync {
        /// The first frame found to differ.
        frame: u32,
        /// The seat whose state is taken as right, if one could be chosen.
        authority: Option<SeatId>,
        /// The seats that drifted.
        drifted: SeatSet,
        /// Whether this peer drifted (it is being healed).
        local_drifted: bool,
    },
    /// This peer loaded the authority's exact state after `frame` and is
    /// back in step. `diagnosis` says which frame, entities and fields
    /// this peer got wrong (when it held enough history to tell).
    Healed {
        /// The frame of the loaded state.
        frame: u32,
        /// Size of the loaded state in bytes.
        state_bytes: u64,
        /// The live desync report and both states.
        diagnosis: Option<Box<Diagnosis>>,
    },
    /// Resync cannot bring this peer back; its checksums are no longer
    /// compared.
    ResyncFailed {
        /// Why.
        reason: ResyncFailure,
    },
    /// The replay log can no longer follow the match (an I/O error, or a
    /// state load that skipped frames this peer never stepped); nothing
    /// more is written to it.
    RecordingStopped {
        /// The first frame not recorded.
        frame: u32,
        /// Why.
        reason: String,
    },
    /// A spectator completed its handshake with this peer's relay; the
    /// relay sends it a settled state, then every frame.
    SpectatorJoined {
        /// The app's id for the spectator's address.
        spectator: SpectatorId,
    },
    /// A spectator's slot was closed.
    SpectatorLeft {
        /// Which.
        spectator: SpectatorId,
        /// Why.
        reason: SpectatorLeft,
    },
    /// A spectator's handshake names another game, seat count or tick.
    SpectatorIncompatible {
        /// Which.
        spectator: SpectatorId,
    },
    /// This peer now shows a compressed snapshot stream from `authority`
    /// instead of its own simulation (draw
    /// [`Peer::snapshot_view`](crate::Peer::snapshot_view)); it keeps
    /// sending its inputs and stepping its game.
    SwitchedToSnapshots {
        /// The seat the snapshots come from.
        authority: SeatId,
        /// Why.
        reason: FallbackReason,
    },
    /// A resync held after the fall-back: this peer's checksums agree
    /// again through `frame`, and it shows its own simulation again.
    BackToLockstep {
        /// The newest frame compared clean.
        frame: u32,
    },
    /// This peer stopped before the match's last frame and steps no more
    /// (raised once; see [`StopReason`]).
    Stopped(StopReason),
}

impl std::fmt::Display for FallbackReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FallbackReason::ResyncFailed(why) => write!(f, "resync failed: {why}"),
            FallbackReason::Viewer => write!(f, "configured as a viewer"),
        }
    }
}

impl std::fmt::Display for PeerEvent {
    /// One line for a person: what a log of the match or a status pane
    /// shows. Every front end uses this text, so it is written once.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerEvent::Seat(e) => write!(f, "{e}"),
            PeerEvent::Started => write!(f, "every seat is connected: frame 0 starts"),
            PeerEvent::Stepped { frame, .. } => write!(f, "stepped frame {frame}"),
            PeerEvent::RolledBack { frame, frames } => {
                write!(
                    f,
                    "rolled back to frame {frame} ({frames} frames stepped again)"
                )
            }
            PeerEvent::NotDeterministic { frame, .. } => write!(
                f,
                "frame {frame} stepped again with the same inputs gave another checksum: the game is not deterministic"
            ),
            PeerEvent::Desync {
                frame,
                drifted,
                local_drifted,
                ..
            } => write!(
                f,
                "desync at frame {frame}: {} drifted{}",
                drifted,
                if *local_drifted { " (this seat)" } else { "" }
            ),
            PeerEvent::Healed {
                frame, state_bytes, ..
            } => write!(
                f,
                "loaded the state after frame {frame} ({state_bytes} bytes)"
            ),
            PeerEvent::ResyncFailed { reason } => write!(f, "resync failed: {reason}"),
            PeerEvent::RecordingStopped { frame, reason } => {
                write!(f, "the replay log stopped at frame {frame}: {reason}")
            }
            PeerEvent::SpectatorJoined { spectator } => {
                write!(f, "spectator {} joined", spectator.0)
            }
            PeerEvent::SpectatorLeft { spectator, reason } => {
                write!(f, "spectator {} left ({reason})", spectator.0)
            }
            PeerEvent::SpectatorIncompatible { spectator } => {
                write!(f, "spectator {} plays another game", spectator.0)
            }
            PeerEvent::SwitchedToSnapshots { authority, reason } => {
                write!(f, "showing {authority}'s snapshots ({reason})")
            }
            PeerEvent::BackToLockstep { frame } => {
                write!(f, "back in lockstep (clean through frame {frame})")
            }
            PeerEvent::Stopped(reason) => write!(f, "{reason}"),
        }
    }
}
