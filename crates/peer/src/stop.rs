//! [`StopReason`]: why a [`Peer`](crate::Peer) stopped stepping before the
//! match's last frame. A match never lies: a seat that can no longer prove
//! it plays the same match as the others stops, says why once
//! ([`PeerEvent::Stopped`](crate::PeerEvent::Stopped)), and its replay log
//! ends with a note saying where and why.
//!
//! Invariants: a peer stops at most once; after it stopped it steps no
//! frame, logs no frame and sends no input (it may still answer a state
//! request or say goodbye); [`Peer::stopped`](crate::Peer::stopped) gives
//! the reason from then on.

use lockstep_protocol::PlayerSet;
use lockstep_sim::desync::Diagnosis;

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
        live: PlayerSet,
        /// The seats it still heard from (itself included).
        heard: PlayerSet,
    },
    /// A desync that could not be healed ended the match (the `Stop`
    /// desync policy): every seat stops with the first frame whose
    /// checksums differed and, where one could be made, the report.
    MatchInvalid {
        /// The first frame whose checksums differ.
        first_frame: u32,
        /// The live desync report and both states, when this seat could
        /// make one.
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
