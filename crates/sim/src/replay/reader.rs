//! The reader: [`read`] turns untrusted bytes into a [`ReplayLog`] holding
//! every frame and keyframe of the log's valid prefix, and a [`LogEnd`]
//! saying whether the log was complete or exactly where (byte offset and
//! frame) and why its valid data ends.
//!
//! Invariants: a bad header, or one whose input schema hash is not `I`'s, is
//! an `Err` ([`LogError`]), since nothing after it can be trusted or decoded; after the header, records are taken one at a time and
//! a record is kept whole or not at all, so the log holds exactly the
//! records before the first one that is cut short, fails its check, does not
//! decode canonically or is out of order. Frames are consecutive from 0;
//! keyframes are in strictly increasing frame order, each at the frame count
//! reached when it was written. Nothing panics, and nothing is allocated
//! beyond what the bytes of a checked record can hold.

use lockstep_codec::{BitError, Input};
use lockstep_fx::Checksum;

use super::header::{Header, LogError};
use super::record::{
    self, KIND_END, KIND_FRAMES, KIND_KEYFRAME, decode_end, decode_frames, decode_keyframe,
};
use super::{FrameCheck, LogWriter};
use crate::engine::Snapshot;
use crate::game::Frame;

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
    /// A record of a kind this format version does not have.
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
    #[error("frame {frame}: player {player}'s input is flagged changed but is the same")]
    NonCanonical {
        /// The frame.
        frame: Frame,
        /// The seat.
        player: u8,
    },
    /// A frame whose short check is not the prefix of its full checksum.
    #[error("frame {frame}: short checksum is not the prefix of its full checksum")]
    Inconsistent {
        /// The frame.
        frame: Frame,
    },
    /// A keyframe whose data does not give its snapshot.
    #[error("keyframe of frame {frame}: {what}")]
    Keyframe {
        /// The keyframe's frame.
        frame: Frame,
        /// What is wrong.
        what: &'static str,
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

/// How a log's valid data ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEnd {
    /// Every record is valid and the last is the end record.
    Complete,
    /// The valid data ends at byte `offset` (the start of the first record
    /// not kept, or the end of the end record), after `frame` frames.
    Truncated {
        /// Byte offset from the start of the log.
        offset: u64,
        /// Frames kept: the first frame not in the log.
        frame: Frame,
        /// Why.
        reason: TruncReason,
    },
}

/// What a log says about the checksum of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    /// The 16-bit short check (every frame).
    Short(FrameCheck),
    /// The full checksum (every `full_checksum_interval` frames).
    Full(Checksum),
}

impl Logged {
    /// Whether `checksum` agrees with what was logged.
    pub fn matches(&self, checksum: &Checksum) -> bool {
        match self {
            Logged::Short(check) => FrameCheck::of(checksum) == *check,
            Logged::Full(full) => full == checksum,
        }
    }
}

impl core::fmt::Display for Logged {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Logged::Short(check) => write!(f, "{check}…"),
            Logged::Full(full) => write!(f, "{full}"),
        }
    }
}

/// The valid prefix of a replay log, read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayLog<I> {
    header: Header,
    inputs: Vec<I>,
    checks: Vec<FrameCheck>,
    full: Vec<(Frame, Checksum)>,
    keyframes: Vec<Snapshot>,
    end: LogEnd,
}

/// Reads a replay log of inputs `I`: `Err` if the header is bad or of
/// another input schema, otherwise every valid
/// record up to the first invalid one, and how the log ends.
pub fn read<I: Input>(bytes: &[u8]) -> Result<ReplayLog<I>, LogError> {
    let (header, mut pos, header_check) = Header::parse(bytes)?;
    if header.schema_hash != I::schema_hash() {
        return Err(LogError::Schema {
            found: header.schema_hash,
            expected: I::schema_hash(),
        });
    }
    let mut log = ReplayLog {
        header,
        inputs: Vec::new(),
        checks: Vec::new(),
        full: Vec::new(),
        keyframes: Vec::new(),
        end: LogEnd::Complete,
    };
    let end = loop {
        let frame = log.frames();
        let truncated = |offset: usize, reason| LogEnd::Truncated {
            offset: offset as u64,
            frame,
            reason,
        };
        let rest = &bytes[pos..];
        if rest.is_empty() {
            break truncated(pos, TruncReason::MissingEnd);
        }
        let (kind, body, len) = match record::open(header_check, rest) {
            Ok(record) => record,
            Err(reason) => break truncated(pos, reason),
        };
        match kind {
            KIND_FRAMES => match decode_frames::<I>(body, &log.header, frame) {
                Ok(frames) => {
                    log.inputs.extend(frames.inputs);
                    log.checks.extend(frames.checks);
                    log.full.extend(frames.full);
                }
                Err(reason) => break truncated(pos, reason),
            },
            KIND_KEYFRAME => match decode_keyframe(body) {
                Ok(snapshot) => {
                    let after_last = log
                        .keyframes
                        .last()
                        .is_none_or(|k| k.frame < snapshot.frame);
                    if snapshot.frame != frame || !after_last {
                        break truncated(
                            pos,
                            TruncReason::KeyframeOrder {
                                expected: frame,
                                found: snapshot.frame,
                            },
                        );
                    }
                    log.keyframes.push(snapshot);
                }
                Err(reason) => break truncated(pos, reason),
            },
            KIND_END => match decode_end(body) {
                Ok(found) if found != frame => {
                    break truncated(
                        pos,
                        TruncReason::EndFrames {
                            expected: frame,
                            found,
                        },
                    );
                }
                Ok(_) => {
                    let extra = rest.len() - len;
                    if extra > 0 {
                        break truncated(
                            pos + len,
                            TruncReason::TrailingBytes {
                                extra: extra as u64,
                            },
                        );
                    }
                    break LogEnd::Complete;
                }
                Err(reason) => break truncated(pos, reason),
            },
            other => break truncated(pos, TruncReason::UnknownKind(other)),
        }
        pos += len;
    };
    log.end = end;
    Ok(log)
}

impl<I: Input> ReplayLog<I> {
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// How the log ends.
    pub fn end(&self) -> &LogEnd {
        &self.end
    }

    /// Whether the log was read to its end record with nothing wrong.
    pub fn is_complete(&self) -> bool {
        self.end == LogEnd::Complete
    }

    /// Frames in the log (frames `0..frames()`).
    pub fn frames(&self) -> Frame {
        // At most `u32::MAX` frames decode (see `decode_frames`).
        self.checks.len() as Frame
    }

    /// Every player's input for `frame`, by seat.
    pub fn inputs(&self, frame: Frame) -> Option<&[I]> {
        let players = usize::from(self.header.setup.players);
        let start = (frame as usize).checked_mul(players)?;
        self.inputs.get(start..start.checked_add(players)?)
    }

    /// The short check logged for `frame`.
    pub fn check(&self, frame: Frame) -> Option<FrameCheck> {
        self.checks.get(frame as usize).copied()
    }

    /// The full checksum logged for `frame`, if it has one.
    pub fn full_checksum(&self, frame: Frame) -> Option<Checksum> {
        let i = self.full.binary_search_by_key(&frame, |&(f, _)| f).ok()?;
        Some(self.full[i].1)
    }

    /// Every full checksum, in frame order.
    pub fn full_checksums(&self) -> &[(Frame, Checksum)] {
        &self.full
    }

    /// The strongest checksum logged for `frame`: the full one if there is
    /// one, else the short check.
    pub fn logged(&self, frame: Frame) -> Option<Logged> {
        match self.full_checksum(frame) {
            Some(full) => Some(Logged::Full(full)),
            None => self.check(frame).map(Logged::Short),
        }
    }

    /// The keyframes, in frame order.
    pub fn keyframes(&self) -> &[Snapshot] {
        &self.keyframes
    }

    /// The latest keyframe at or before `frame`.
    pub fn keyframe_at_or_before(&self, frame: Frame) -> Option<&Snapshot> {
        self.keyframes.iter().rev().find(|k| k.frame <= frame)
    }

    /// Writes the log again, complete, with `chunk_frames` frames per chunk
    /// (keyframes may be deflated differently, so the bytes can differ from
    /// the ones read; what they read back to does not).
    pub fn write<W: std::io::Write>(&self, out: W, chunk_frames: u32) -> std::io::Result<W> {
        let mut w = LogWriter::new(out, self.header.clone(), chunk_frames)?;
        let mut keyframes = self.keyframes.iter().peekable();
        for frame in 0..self.frames() {
            while let Some(k) = keyframes.next_if(|k| k.frame == frame) {
                w.keyframe(k)?;
            }
            let inputs = self.inputs(frame).unwrap_or_default();
            let check = self.check(frame).unwrap_or_default();
            w.logged_frame(inputs, check, self.full_checksum(frame).as_ref())?;
        }
        for k in keyframes {
            w.keyframe(k)?;
        }
        w.finish()
    }

    /// [`ReplayLog::write`] into a new buffer, with the default chunk size.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.write(Vec::new(), super::DEFAULT_CHUNK_FRAMES)
            .unwrap_or_default()
    }
}
