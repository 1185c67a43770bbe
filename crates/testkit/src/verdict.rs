//! [`check`]: what a finished match must show. Every remaining peer's
//! checksums agree on every frame they all confirmed, and every replay log
//! recorded reads whole, replays, verifies against its own checksums and
//! holds the same checksums as every other log, frame for frame.
//! [`check_invalid`]: what a match found invalid must show instead: every
//! remaining peer stopped with it, they agree on every frame before the
//! first divergent one, and every log verifies, the same in every log.
//!
//! Invariant: the verdict looks only at the [`Run`]'s outputs (checksum
//! streams and log bytes), never at a peer's internals, so it judges the
//! peers by what they would hand a user.

use core::fmt;

use lockstep_peer::StopReason;
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
    /// A match found invalid where a seat did not stop (or stopped for
    /// another reason, or at another first frame).
    NotStopped {
        /// The seat.
        seat: usize,
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
            Failure::NotStopped { seat } => {
                write!(f, "seat {seat} did not stop with the match found invalid")
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
    check_logs::<G>(run, frames.saturating_sub(1), recorders)
}

/// Checks a match found invalid: every remaining peer stopped with
/// `MatchInvalid`, they agree on every frame they all confirmed before the
/// earliest first divergent frame any of them names, and every log of
/// `recorders` is whole, verifies and matches the others (a log may hold
/// frames from the first divergent one on that a majority agreed on
/// before the seat that drifted reported them).
pub fn check_invalid<G: Game>(
    run: &Run,
    recorders: impl IntoIterator<Item = usize>,
) -> Result<(), Failure> {
    // Each seat names the first divergent frame it knows of; a seat whose
    // report of that frame was lost may name a later one.
    let mut first: Option<u32> = None;
    for (seat, p) in run.peers.iter().enumerate() {
        if run.vanished.is_some_and(|v| v.index() == seat) {
            continue;
        }
        let Some(StopReason::MatchInvalid { first_frame, .. }) = p.stopped else {
            return Err(Failure::NotStopped { seat });
        };
        first = Some(first.map_or(first_frame, |f| f.min(first_frame)));
    }
    let Some(first) = first else {
        return Ok(());
    };
    if let Some(frame) = run.first_disagreement().filter(|f| *f < first) {
        return Err(Failure::Disagree { frame });
    }
    check_logs::<G>(run, 0, recorders)
}

/// Every log of `recorders` whole (at least `frames` frames), replaying,
/// verifying, and holding the same checksums as the others.
fn check_logs<G: Game>(
    run: &Run,
    frames: u32,
    recorders: impl IntoIterator<Item = usize>,
) -> Result<(), Failure> {
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
        if log.frames() < frames {
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
