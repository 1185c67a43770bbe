//! [`StopReason`]: why a [`Peer`](crate::Peer) stopped stepping before the
//! match's last frame, and [`DesyncPolicy`]: what a match does with a
//! desync it cannot heal. A match never lies: a seat that can no longer
//! prove it plays the same match as the others stops, says why once
//! ([`PeerEvent::Stopped`](crate::PeerEvent::Stopped)), and its replay log
//! ends where the seats last agreed.
//!
//! Invariants: a peer stops at most once; after it stopped it steps no
//! frame, logs no frame and sends no input (it may still answer a state
//! request or say goodbye); [`Peer::stopped`](crate::Peer::stopped) gives
//! the reason from then on.

use lockstep_protocol::SeatSet;
use lockstep_sim::desync::Diagnosis;

/// What a match does when a desync cannot be healed: a seat's resync
/// fails, a seat keeps drifting (its game is not deterministic), or the
/// seats disagree and no evidence says which one drifted. Every seat of a
/// match has the same policy (the match setup carries it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DesyncPolicy {
    /// Every seat stops with [`StopReason::MatchInvalid`] (the default):
    /// no seat plays on in a match it can no longer prove.
    #[default]
    Stop,
    /// The drifted seat shows the authority's snapshots instead of its own
    /// simulation and keeps playing ([`Peer::enable_snapshots`](crate::Peer::enable_snapshots),
    /// a game exposing its bodies). Without the snapshots, or when no seat
    /// could be blamed (there is no authority to follow), as `Stop`.
    Snapshots,
    /// Every seat plays on, unchecked: from the first divergent frame on
    /// nothing is compared, and every frame is marked unchecked
    /// ([`Peer::unchecked_from`](crate::Peer::unchecked_from)).
    Continue,
}

/// Why a peer stopped before the end of the match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// This seat no longer hears a quorum of the seats still in the match
    /// (a majority of them, or exactly half when that half holds the
    /// lowest live seat): it is in a minority and must not play on alone
    /// as if the match were its own. The app may try to take the seat back
    /// (rejoin) or end the match for this process.
    LostQuorum {
        /// The first frame this seat does not vouch for: its log ends just
        /// before it (the frames it stepped from there on were never
        /// compared clean by a quorum, and may differ from what the
        /// majority played).
        frame: u32,
        /// The seats still in the match as this seat last knew them.
        live: SeatSet,
        /// The seats it still heard from (itself included).
        heard: SeatSet,
    },
    /// A desync that could not be healed ended the match (the `Stop`
    /// desync policy): every seat stops with the first frame whose
    /// checksums differed and, where one could be made, the report. Why,
    /// and which seat was at fault, is [`Peer::invalidation`](crate::Peer::invalidation).
    MatchInvalid {
        /// The first frame of the divergence nobody healed: every frame
        /// before it is agreed by every seat (compared clean, or healed),
        /// and no frame from it on is. Earlier desyncs that were healed
        /// come before it, so for a seat that kept drifting it is the
        /// frame of its last drift, not its first. Every seat says the
        /// same frame: the earliest any seat claimed (seats tell each
        /// other theirs before they stop).
        first_frame: u32,
        /// The desync report and both states (`None` only when the match
        /// ended before this seat could make one). A seat that kept
        /// drifting says which fields kept differing; every other seat
        /// compares its own state with a seat's on the other side of the
        /// divergence, and says what it could not compare and why
        /// ([`DesyncReport::not_compared`](lockstep_sim::desync::DesyncReport::not_compared))
        /// when that state did not come.
        report: Option<Box<Diagnosis>>,
    },
}

impl StopReason {
    /// The first frame not stepped (or not trusted) because of the stop.
    pub fn frame(&self) -> u32 {
        match self {
            StopReason::LostQuorum { frame, .. } => *frame,
            StopReason::MatchInvalid { first_frame, .. } => *first_frame,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::LostQuorum { frame, heard, live } => write!(
                f,
                "stopped at frame {frame}: this seat lost the quorum (it heard {} of the {} seats still in the match)",
                heard.len(),
                live.len()
            ),
            StopReason::MatchInvalid { first_frame, .. } => write!(
                f,
                "stopped: the match is invalid from frame {first_frame} (a desync that could not be healed)"
            ),
        }
    }
}
