//! What an endpoint tells its app: [`MatchEvent`] (every event of the
//! setup and of the node, wrapped, never re-declared or turned into text),
//! [`LinkStatus`] (the numbers a status line shows) and [`MatchEnd`] (how
//! the match ended for this process, and why).

use lockstep_fx::ShortChecksum;
use lockstep_peer::{PeerEvent, SeatEvent, SnapshotSpectatorEvent, SpectatorEvent, StopReason};
use lockstep_protocol::SeatId;

use crate::host_setup::HostEvent;
use crate::join_setup::{JoinEvent, JoinFailure};
use crate::message::Abort;

/// Something that happened to an endpoint, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchEvent {
    /// The host's setup: seats offered and freed, rosters sent, rejoins,
    /// spectators admitted.
    Host(HostEvent),
    /// A joiner's setup: challenged, waiting, the roster, asked to retry.
    Join(JoinEvent),
    /// The seat's `Peer`: frames stepped, rollbacks, desyncs with their
    /// full report, heals, seats dropped and returning, stops.
    Peer(PeerEvent),
    /// A spectator's node.
    Spectator(SpectatorEvent),
    /// A spectator's node that shows snapshots.
    SnapshotSpectator(SnapshotSpectatorEvent),
    /// The link now (raised by the runtime that drives the endpoint).
    Status(LinkStatus),
    /// The match is over for this process (raised once, last).
    Ended(MatchEnd),
}

impl MatchEvent {
    /// Events raised every frame or by every handshake (frames stepped and
    /// rolled back, connections, the roster, status lines) that a
    /// log of what happened leaves out; the rest are worth a line.
    pub fn is_routine(&self) -> bool {
        match self {
            MatchEvent::Peer(e) => matches!(
                e,
                PeerEvent::Stepped { .. }
                    | PeerEvent::RolledBack { .. }
                    | PeerEvent::Started
                    | PeerEvent::Seat(SeatEvent::Connected { .. })
            ),
            MatchEvent::Join(e) => matches!(e, JoinEvent::Challenged | JoinEvent::Roster(_)),
            MatchEvent::Spectator(e) => matches!(e, SpectatorEvent::Stepped { .. }),
            MatchEvent::SnapshotSpectator(e) => {
                matches!(e, SnapshotSpectatorEvent::Snapshot { .. })
            }
            MatchEvent::Host(_) | MatchEvent::Ended(_) => false,
            MatchEvent::Status(_) => true,
        }
    }
}

impl core::fmt::Display for MatchEvent {
    /// The wrapped event's own text; a status line as its numbers; the end
    /// as how the match ended.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MatchEvent::Host(e) => write!(f, "{e}"),
            MatchEvent::Join(e) => write!(f, "{e}"),
            MatchEvent::Peer(e) => write!(f, "{e}"),
            MatchEvent::Spectator(e) => write!(f, "{e}"),
            MatchEvent::SnapshotSpectator(e) => write!(f, "{e}"),
            MatchEvent::Status(s) => write!(f, "frame {}", s.frame),
            MatchEvent::Ended(end) => write!(f, "match over: {end}"),
        }
    }
}

impl From<SpectatorEvent> for MatchEvent {
    fn from(e: SpectatorEvent) -> MatchEvent {
        MatchEvent::Spectator(e)
    }
}

impl From<SnapshotSpectatorEvent> for MatchEvent {
    fn from(e: SnapshotSpectatorEvent) -> MatchEvent {
        MatchEvent::SnapshotSpectator(e)
    }
}

/// How the match ended for this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchEnd {
    /// Every frame of the match was played and compared with the other
    /// seats (or no seat was left to compare with); a spectator saw the
    /// last frame.
    Finished {
        /// The match's length in frames.
        frames: u32,
    },
    /// The app left before the end (the player closed the window).
    Left {
        /// The next frame it would have stepped.
        frame: u32,
    },
    /// The seat stopped: it lost the quorum (and could not take its seat
    /// back), or the match was found invalid.
    Stopped(StopReason),
    /// Joining failed: no answer, a refusal, an abort, a roster this
    /// process cannot play.
    SetupFailed(JoinFailure),
    /// The host called the match off (this process is the host).
    Aborted(Abort),
    /// The host went silent between its roster and the first frame.
    HostVanished,
    /// A spectator's relay went away before the end.
    RelayLost {
        /// The last frame seen.
        frame: u32,
    },
    /// The host plays another game, seat count or tick (a spectator).
    Incompatible,
    /// Nothing moved for too long (no frame stepped).
    Stuck {
        /// The frame it stuck at.
        frame: u32,
    },
}

impl MatchEnd {
    /// Whether the match ran to its end for this process (or the app chose
    /// to leave): anything else lost part of the match.
    pub fn is_success(&self) -> bool {
        matches!(self, MatchEnd::Finished { .. } | MatchEnd::Left { .. })
    }
}

impl core::fmt::Display for MatchEnd {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MatchEnd::Finished { frames } => write!(f, "finished ({frames} frames)"),
            MatchEnd::Left { frame } => write!(f, "left at frame {frame}"),
            MatchEnd::Stopped(reason) => write!(f, "{reason}"),
            MatchEnd::SetupFailed(why) => write!(f, "{why}"),
            MatchEnd::Aborted(why) => write!(f, "the match was called off: {why}"),
            MatchEnd::HostVanished => write!(f, "the host went silent before the first frame"),
            MatchEnd::RelayLost { frame } => write!(f, "the host went away at frame {frame}"),
            MatchEnd::Incompatible => write!(f, "the host plays another game"),
            MatchEnd::Stuck { frame } => {
                write!(f, "no frame stepped for too long (at frame {frame})")
            }
        }
    }
}

/// The numbers a status line shows. The endpoint fills what it knows; the
/// runtime that drives it adds the traffic (`up_bps`, `down_bps`) and what
/// its link conditioner dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStatus {
    /// The seat (`None`: a spectator).
    pub seat: Option<SeatId>,
    /// The next frame to step (a spectator: the newest frame seen).
    pub frame: u32,
    /// The largest median round trip to a peer, in microseconds.
    pub rtt_micros: Option<u64>,
    /// The delay in frames: the playout delay in lockstep, the input delay
    /// in rollback; a spectator's interpolation delay.
    pub delay_frames: u32,
    /// Frames stepped again after rollbacks.
    pub rolled_back: u64,
    /// Stall ticks.
    pub stalls: u64,
    /// Desyncs seen.
    pub desyncs: u64,
    /// States loaded to heal a desync.
    pub healed: u64,
    /// A spectator's checksums compared with the seats'.
    pub checked: u64,
    /// The newest frame's short checksum.
    pub checksum: Option<ShortChecksum>,
    /// Datagrams refused by the node, and ones no party could take.
    pub dropped: u64,
    /// Spectators watching through this seat.
    pub spectators: u64,
    /// Bits per second sent over the last period.
    pub up_bps: u64,
    /// Bits per second received over the last period.
    pub down_bps: u64,
    /// Datagrams the runtime's link conditioner dropped on purpose, per
    /// mille: the loss injected (0 on a real network).
    pub loss_permille: u64,
    /// Datagrams the other seats sent this one that never arrived, per
    /// mille of those their sequence numbers say they sent, over the match
    /// so far: the loss measured, whatever caused it.
    pub lost_permille: u64,
}
