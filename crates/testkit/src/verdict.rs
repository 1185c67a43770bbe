//! [`check`]: what a finished match must show. Every remaining peer's
//! checksums agree on every frame they all confirmed, and every replay log
//! recorded reads whole, replays, verifies against its own checksums and
//! holds the same checksums as every other log, frame for frame.
//!
//! Invariant: the verdict looks only at the [`Run`]'s outputs (checksum
//! streams and log bytes), never at a peer's internals, so it judges the
//! peers by what they would hand a user.

use core::fmt;

use lockstep_sim::Game;
use lockstep_sim::replay::{self, RunOptions};

use crate::mesh::Run;

/// Why a run failed its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Fewer frames than wanted were confirmed by every remaining peer.
    TooFewFrames {
        /// Frames all confirmed.
        common: u32,
        /// Frames wanted.
        wanted: u32,
    },
    /// Two remaining peers' final checksums of a confirmed frame differ (a
    /// desync that was never healed).
    Disagree {
        /// The first such frame.
        frame: u32,
    },
    /// A peer that should have recorded the match has no log (recording
    /// stopped).
    NoLog {
        /// The seat.
        seat: usize,
    },
    /// A log is damaged, does not replay or does not verify.
    BadLog {
        /// The seat.
        seat: usize,
        /// What went wrong.
        reason: String,
    },
    /// Two logs hold different checksums for a frame.
    LogsDiffer {
        /// The seat whose log differs from seat 0's.
        seat: usize,
        /// The first frame that differs.
        frame: u32,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::TooFewFrames { common, wanted } => {
                write!(
                    f,
                    "only {common} frames confirmed by every peer, {wanted} wanted"
                )
            }
            Failure::Disagree { frame } => {
                write!(f, "the peers' checksums of frame {frame} differ")
            }
            Failure::NoLog { seat } => write!(f, "seat {seat} stopped recording"),
            Failure::BadLog { seat, reason } => write!(f, "seat {seat}'s log: {reason}"),
            Failure::LogsDiffer { seat, frame } => {
                write!(
                    f,
                    "seat {seat}'s log differs from the first one's at frame {frame}"
                )
            }
        }
    }
}

/// Checks `run`: at least `frames` frames confirmed by every remaining
/// peer and agreed on, and a whole, verifying, identical log from every
/// seat in `recorders`.
pub fn check<G: Game>(
    run: &Run,
    frames: u32,
    recorders: impl IntoIterator<Item = usize>,
) -> Result<(), Failure> {
    let common = run.common_frames();
    if common < frames {
        return Err(Failure::TooFewFrames {
            common,
            wanted: frames,
        });
    }
    if let Some(frame) = run.first_disagreement() {
        return Err(Failure::Disagree { frame });
    }
    let mut logs: Vec<(usize, Vec<_>)> = Vec::new();
    for seat in recorders {
        let bad = |reason: String| Failure::BadLog { seat, reason };
        let bytes = run
            .peers
            .get(seat)
            .and_then(|p| p.log.as_ref())
            .ok_or(Failure::NoLog { seat })?;
        let log = replay::read::<G::Input>(bytes).map_err(|e| bad(e.to_string()))?;
        if !log.is_complete() {
            return Err(bad(format!("ends early: {:?}", log.end())));
        }
        if log.frames() + 1 < frames {
            return Err(bad(format!("holds only {} frames", log.frames())));
        }
        let outcome = replay::run::<G>(&log, &RunOptions::default(), |_| {})
            .map_err(|e| bad(e.to_string()))?;
        if !outcome.verified() {
            return Err(bad(format!(
                "does not verify: {:?}",
                outcome.first_mismatch
            )));
        }
        logs.push((seat, (0..log.frames()).map(|f| log.check(f)).collect()));
    }
    let Some(((_, first), rest)) = logs.split_first() else {
        return Ok(());
    };
    for (seat, other) in rest {
        let n = first.len().min(other.len());
        if let Some(frame) = (0..n).find(|&i| first[i] != other[i]) {
            return Err(Failure::LogsDiffer {
                seat: *seat,
                frame: frame as u32,
            });
        }
    }
    Ok(())
}
