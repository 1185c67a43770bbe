//! [`TruncReason`]: why the valid data of a recorded log ends before its
//! end record — the one vocabulary the reader, the record decoder and the
//! note decoder report damage in.
//!
//! Invariant: every reason names what was found where (a kind, a frame, a
//! byte count), so a damaged log's report says exactly what broke.

use crate::game::Frame;
use lockstep_codec::BitError;

#[cfg(doc)]
use super::LogWriter;

/// Why the valid data of a log ends before its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TruncReason {
    /// The bytes end at a record boundary, without the end record that
    /// [`LogWriter::finish`] writes: the writer stopped (a crash, a kill, a
    /// copy of a live log).
    #[error("the log ends without an end record (the recording did not finish)")]
    MissingEnd,
    /// The bytes end inside a record.
    #[error("record cut short: {needed} more byte(s) needed")]
    Incomplete {
        /// Bytes the record still needs.
        needed: u64,
    },
    /// A record's bytes do not match its check.
    #[error("record check mismatch: the record is corrupted")]
    Check,
    /// A record of a kind this format version does not have (a note in a
    /// version 1 log is one).
    #[error("unknown record kind {0}")]
    UnknownKind(u8),
    /// A frames record that does not continue the frames before it.
    #[error("frames record starts at frame {found}, expected frame {expected}")]
    FrameOrder {
        /// The next frame of the log.
        expected: Frame,
        /// The record's first frame.
        found: Frame,
    },
    /// A keyframe that is not at the log's current frame, or not after the
    /// previous keyframe.
    #[error("keyframe of frame {found} where the log is at frame {expected}")]
    KeyframeOrder {
        /// The next frame of the log.
        expected: Frame,
        /// The keyframe's frame.
        found: Frame,
    },
    /// A note that is not at the log's current frame.
    #[error("note at frame {found} where the log is at frame {expected}")]
    NoteOrder {
        /// The next frame of the log.
        expected: Frame,
        /// The note's position.
        found: Frame,
    },
    /// A note that does not decode, or cannot be in this log.
    #[error("note at frame {at}: malformed {what}")]
    Note {
        /// The note's position.
        at: Frame,
        /// What is wrong.
        what: &'static str,
    },
    /// A record other than the end record after the note saying the log
    /// stopped.
    #[error("a record after the log stopped at frame {frame} (only the end record may follow)")]
    AfterStop {
        /// Where the log stopped.
        frame: Frame,
    },
    /// An end record whose frame count is not the log's.
    #[error("end record says {found} frames, the log holds {expected}")]
    EndFrames {
        /// Frames read.
        expected: Frame,
        /// Frames the end record says.
        found: Frame,
    },
    /// The bits of a frame do not decode.
    #[error("undecodable frame {frame}: {error}")]
    Frames {
        /// The frame.
        frame: Frame,
        /// Where and why decoding stopped (bit offsets from the first frame
        /// of the record).
        error: BitError,
    },
    /// An input flagged as changed that equals the previous one.
    #[error("frame {frame}: seat {seat}'s input is flagged changed but is the same")]
    NonCanonical {
        /// The frame.
        frame: Frame,
        /// The seat.
        seat: u8,
    },
    /// A frame whose short check is not the prefix of its full checksum.
    #[error("frame {frame}: short checksum is not the prefix of its full checksum")]
    Inconsistent {
        /// The frame.
        frame: Frame,
    },
    /// A keyframe whose data does not give its saved state.
    #[error("keyframe of frame {frame}: {what}")]
    Keyframe {
        /// The keyframe's frame.
        frame: Frame,
        /// What is wrong.
        what: &'static str,
    },
    /// A keyframe announcing a longer state than the log's game allows for
    /// its settings (or than [`MAX_STATE_BYTES`]): refused before a byte
    /// of it is inflated.
    ///
    /// [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES
    #[error(
        "keyframe of frame {frame}: a state of {len} bytes, more than the {limit} this log's game allows"
    )]
    KeyframeTooLong {
        /// The keyframe's frame.
        frame: Frame,
        /// The state length it announces.
        len: u32,
        /// The most a state of this log may take.
        limit: u32,
    },
    /// A record field out of its range.
    #[error("malformed {what}")]
    Malformed {
        /// Which field.
        what: &'static str,
    },
    /// Bytes after the end record.
    #[error("{extra} trailing byte(s) after the end record")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
}
