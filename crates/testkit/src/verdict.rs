//! [`check`]: what a finished match must show. No two processes part
//! without saying so: every pair of processes agrees on every frame both
//! confirmed (a process that stopped vouches only for the frames before its
//! stop), every replay log recorded reads whole, replays and verifies
//! against its own checksums, every pair of logs holds the same checksums
//! on every frame both hold, and a log shorter than the match belongs to a
//! process that stopped and said why (until replay logs carry notes, the
//! stop reason the run recorded for it). The seats still playing at the
//! end have confirmed the frames wanted. A match found invalid
//! (`MatchInvalid`) vouches for no frame from its first divergent one on,
//! but a log may hold such frames where they were compared clean between
//! seats before the divergence was seen (every log still verifies and
//! agrees with every other).
//!
//! Invariant: the verdict looks only at the [`Run`]'s outputs (checksum
//! streams, stop reasons and log bytes), never at a peer's internals, so it
//! judges the peers by what they would hand a user.

use core::fmt;

use lockstep_peer::StopReason;
use lockstep_protocol::SeatId;
use lockstep_sim::Game;
use lockstep_sim::replay::{self, RunOptions};

use crate::mesh::Run;

/// Why a run failed its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Fewer frames than wanted were confirmed by a seat still playing.
    TooFewFrames {
        /// The fewest frames a playing seat confirmed.
        common: u32,
        /// Frames wanted.
        wanted: u32,
    },
    /// Two processes' final checksums of a frame both vouch for differ (a
    /// desync never healed, or a split match).
    Disagree {
        /// The first such frame.
        frame: u32,
        /// The two seats.
        seats: (SeatId, SeatId),
    },
    /// A process that played from the start and did not die has no log
    /// (recording stopped).
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
    /// A log ends before the match without its process having stopped, or
    /// runs past the frame it stopped at.
    Unannounced {
        /// The seat.
        seat: usize,
        /// Frames the log holds.
        frames: u32,
    },
    /// Two logs hold different checksums for a frame.
    LogsDiffer {
        /// The two seats.
        seats: (usize, usize),
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
                    "only {common} frames confirmed by a seat playing to the end, {wanted} wanted"
                )
            }
            Failure::Disagree { frame, seats } => {
                write!(
                    f,
                    "seats {} and {} hold different checksums of frame {frame}",
                    seats.0.0, seats.1.0
                )
            }
            Failure::NoLog { seat } => write!(f, "seat {seat} stopped recording"),
            Failure::BadLog { seat, reason } => write!(f, "seat {seat}'s log: {reason}"),
            Failure::Unannounced { seat, frames } => write!(
                f,
                "seat {seat}'s log holds {frames} frames and does not say why it ends there"
            ),
            Failure::LogsDiffer { seats, frame } => {
                write!(
                    f,
                    "the logs of seats {} and {} part at frame {frame}",
                    seats.0, seats.1
                )
            }
        }
    }
}

/// Checks `run`: at least `frames` frames confirmed by every seat playing
/// to the end; no two processes parting on a frame both vouch for; and from
/// every process that played from frame 0 and did not die, a whole,
/// verifying log, agreeing with every other log, that holds the match or
/// ends where its process stopped.
pub fn check<G: Game>(run: &Run, frames: u32) -> Result<(), Failure> {
    if let Some(common) = run.remaining().map(|p| p.confirmed_before).min() {
        if common < frames {
            return Err(Failure::TooFewFrames {
                common,
                wanted: frames,
            });
        }
    }
    if let Some((frame, a, b)) = run.first_parting() {
        return Err(Failure::Disagree {
            frame,
            seats: (a, b),
        });
    }
    let mut logs: Vec<(usize, Vec<_>)> = Vec::new();
    for (seat, p) in run.processes() {
        let seat = seat.index();
        if p.vanished || p.rejoined {
            // A dead process leaves no finished log; a rejoined one records
            // none (it never saw frame 0).
            continue;
        }
        let bad = |reason: String| Failure::BadLog { seat, reason };
        let bytes = p.log.as_ref().ok_or(Failure::NoLog { seat })?;
        let log = replay::read::<G::Input>(bytes).map_err(|e| bad(e.to_string()))?;
        if !log.is_complete() {
            return Err(bad(format!("ends early: {:?}", log.end())));
        }
        let held = log.frames();
        let said = match &p.stopped {
            // Frames a majority compared clean before the divergence was
            // seen: logged, and checked against the other logs below.
            Some(StopReason::MatchInvalid { .. }) => true,
            // The log ends where the stop says, and holds nothing after it.
            Some(reason) => held <= reason.frame(),
            None => held + 1 >= frames,
        };
        if !said {
            return Err(Failure::Unannounced { seat, frames: held });
        }
        let outcome = replay::run::<G>(&log, &RunOptions::default(), |_| {})
            .map_err(|e| bad(e.to_string()))?;
        if !outcome.verified() {
            return Err(bad(format!(
                "does not verify: {:?}",
                outcome.first_mismatch
            )));
        }
        logs.push((seat, (0..held).map(|f| log.check(f)).collect()));
    }
    for (i, (a, first)) in logs.iter().enumerate() {
        for (b, other) in &logs[i + 1..] {
            let n = first.len().min(other.len());
            if let Some(frame) = (0..n).find(|&f| first[f] != other[f]) {
                return Err(Failure::LogsDiffer {
                    seats: (*a, *b),
                    frame: frame as u32,
                });
            }
        }
    }
    Ok(())
}
