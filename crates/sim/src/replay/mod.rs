//! Replay logs: a match's inputs and checksums, written as a stream while it
//! is played and read back up to the last valid byte, so a tournament or QA
//! team can re-run it and prove every frame. The format is drawn byte by byte
//! in `fixtures/replays/SPEC.md`, beside the recorded logs that serve as its
//! test vectors.
//!
//! A log is a [`Header`] (magic, format version, game id and version, input
//! schema hash, the game's config stored canonically with its BLAKE3 hash,
//! seed, tick rate, seats, checksum and keyframe intervals) followed by
//! self-delimiting, integrity-checked *records*: chunks of bit-packed frames
//! (every player's input with the 1-bit "same as previous" encoding, a 16-bit
//! [`FrameCheck`] every frame, the full 32-byte [`Checksum`] every
//! `full_checksum_interval` frames), keyframes (exact [`SavedState`]s, deflated
//! when that is smaller) for seeking, [`Note`]s saying what happened to the
//! log (healed and unchecked spans, seats dropped and back, where and why it
//! stopped early), and an end record written by [`LogWriter::finish`].
//!
//! The parts, one file each:
//! - [`header`](Header): the header, its encoding and check;
//! - `record`: record framing and the frame bit packing shared by the
//!   writer and the reader;
//! - [`Keyframe`]: a keyframe as logged, its codec, checked in pieces and
//!   inflated only when a seek loads it;
//! - [`note`](Note): the notes and their codec;
//! - [`LogWriter`]: the streaming writer (a chunk written and flushed every
//!   N frames), and [`Recorder`], an [`Engine`](crate::Engine) that logs what
//!   it steps;
//! - [`read`]: the reader, which keeps every complete valid record, skips a
//!   damaged record that held no frames ([`Damage`]) and says where and why
//!   the valid data ends ([`LogEnd`]);
//! - [`run`](run()): re-runs a log through an engine and verifies every
//!   checksum, from the start or from a keyframe, and hands on the notes it
//!   passed.
//!
//! Invariants: nothing here reads a clock, starts a thread or uses a float;
//! no `usize` reaches the encoded bytes; the reader and the runner never
//! panic on any bytes (every length is checked against what remains before
//! anything is allocated); a log in memory takes about its own bytes, and no
//! keyframe inflates past the state limit of the log's game
//! ([`Game::state_limit`](crate::Game::state_limit), read with
//! [`read_as`]) or [`MAX_STATE_BYTES`](crate::MAX_STATE_BYTES).
//!
//! [`Checksum`]: lockstep_fx::Checksum
//! [`SavedState`]: crate::SavedState

mod header;
mod keyframe;
mod note;
mod reader;
mod record;
mod recorder;
mod run;
mod trunc;
mod writer;

use core::fmt;

use lockstep_fx::Checksum;

pub use header::{Header, LogError, MAX_GAME_ID};
pub use keyframe::Keyframe;
pub use note::{Detail, MAX_DETAIL, Note, Noted, StopCause, UncheckedCause};
pub use reader::{Damage, LogEnd, Logged, ReplayLog, read, read_with};
pub use recorder::{RecordError, RecordSettings, Recorder};
pub use run::{Mismatch, Outcome, RunError, RunOptions, check_game, read_as, run, run_with_state};
pub use trunc::TruncReason;
pub use writer::LogWriter;

/// The first 8 bytes of every replay log.
pub const MAGIC: [u8; 8] = *b"LSREPLAY";

/// The version of the log layout this build writes (and the newest it
/// reads): 2, which added notes.
pub const FORMAT_VERSION: u16 = 2;

/// The oldest version of the log layout this build reads (and writes back
/// as it was): 1, without notes.
pub const OLDEST_FORMAT_VERSION: u16 = 1;

/// Frames per chunk a [`LogWriter`] writes by default: one second at 60 Hz,
/// so a crash loses at most a second of a match.
pub const DEFAULT_CHUNK_FRAMES: u32 = 60;

/// The per-frame short checksum of a replay log: the first two bytes of the
/// frame's BLAKE3 [`Checksum`], little-endian.
///
/// Why 16 bits: a replay only needs a per-frame check to *locate* a
/// divergence; proving a replay right is the job of the full checksum logged
/// every `full_checksum_interval` frames. A diverged state stays diverged, so
/// the chance that a divergence goes unseen for `n` frames is `2^-16n`; 16
/// bits cost 2 bytes a frame (8 would miss 1 divergence in 256 for a frame,
/// 32 or the 64-bit network form would double or quadruple the largest part
/// of a log for no gain in what is proved).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FrameCheck(pub u16);

impl FrameCheck {
    /// The short check of `checksum`.
    pub fn of(checksum: &Checksum) -> FrameCheck {
        let b = checksum.as_bytes();
        FrameCheck(u16::from_le_bytes([b[0], b[1]]))
    }
}

impl fmt::Display for FrameCheck {
    /// 4 lowercase hex digits: the first 4 of the full checksum's hex form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0.to_le_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for FrameCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FrameCheck({self})")
    }
}
