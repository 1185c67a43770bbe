//! The reader: [`read`] turns untrusted bytes into a [`ReplayLog`] holding
//! every frame, keyframe and note of the log's valid prefix, and a [`LogEnd`]
//! saying whether the log was complete or exactly where (byte offset and
//! frame) and why its valid data ends.
//!
//! Invariants: a bad header, or one whose input schema hash is not `I`'s, is
//! an `Err` ([`LogError`]), since nothing after it can be trusted or decoded;
//! after the header, records are taken one at a time and a record is kept
//! whole or not at all. An invalid record (cut short, failing its check, not
//! decoding canonically, out of order) ends the valid data, unless it held
//! no frames: when its own length leads to an intact record (passing its
//! check) that continues at the log's current frame, the invalid record is
//! skipped and listed as [`Damage`], and reading goes on. So one bad byte in
//! a keyframe costs that keyframe, not every frame after it, and the log
//! still says it is damaged ([`ReplayLog::is_complete`] is false). Frames
//! are consecutive from 0;
//! keyframes are in strictly increasing frame order, each at the frame count
//! reached when it was written; notes (format version 2 on) are each at the
//! frame count reached when written, in the order written, and a
//! [`Note::Stopped`] is the last record before the end record. Nothing
//! panics, and nothing is allocated beyond what the bytes of a checked
//! record can hold: keyframes are kept as logged and checked in pieces
//! ([`Keyframe`]), so a log costs its own size in memory whatever its
//! keyframes would inflate to.

use lockstep_codec::Input;
use lockstep_fx::Checksum;

use super::header::{Header, LogError};
use super::keyframe::Keyframe;
use super::note::{Note, Noted, StopCause, decode_note};
use super::record::{
    self, KIND_END, KIND_FRAMES, KIND_KEYFRAME, KIND_NOTE, RECORD_CHECK, RECORD_PREFIX, decode_end,
    decode_frames,
};
use super::trunc::TruncReason;
use super::{FrameCheck, LogWriter};
use crate::game::Frame;

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

/// An invalid record that the reader skipped because the records after it
/// are intact and continue the log: it held no frames (in practice, a
/// damaged keyframe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset of the record from the start of the log.
    pub offset: u64,
    /// Frames before it.
    pub frame: Frame,
    /// What is wrong with it.
    pub reason: TruncReason,
}

impl core::fmt::Display for Damage {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the record at byte {} (after frame {}) is damaged and was skipped: {}",
            self.offset, self.frame, self.reason
        )
    }
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
    keyframes: Vec<Keyframe>,
    notes: Vec<Noted>,
    /// For each note, the keyframes read before it: where it goes among
    /// the keyframes of its frame when the log is written again.
    note_keyframes: Vec<usize>,
    damage: Vec<Damage>,
    end: LogEnd,
}

/// Reads a replay log of inputs `I`: `Err` if the header is bad or of
/// another input schema, otherwise every valid
/// record up to the first invalid one, and how the log ends. Keyframes may
/// hold states of up to [`MAX_STATE_BYTES`]; reading as the log's game
/// ([`read_as`](super::read_as)) allows only what its settings allow.
///
/// [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES
pub fn read<I: Input>(bytes: &[u8]) -> Result<ReplayLog<I>, LogError> {
    read_with(bytes, crate::MAX_STATE_BYTES)
}

/// [`read`], refusing as damage any keyframe whose state is longer than
/// `state_limit` bytes (or than [`MAX_STATE_BYTES`]) before inflating it.
///
/// [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES
pub fn read_with<I: Input>(bytes: &[u8], state_limit: u32) -> Result<ReplayLog<I>, LogError> {
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
        notes: Vec::new(),
        note_keyframes: Vec::new(),
        damage: Vec::new(),
        end: LogEnd::Complete,
    };
    let end = loop {
        let frame = log.frames();
        let rest = &bytes[pos..];
        if rest.is_empty() {
            break LogEnd::Truncated {
                offset: pos as u64,
                frame,
                reason: TruncReason::MissingEnd,
            };
        }
        match take_record(&mut log, header_check, state_limit, rest) {
            Ok(Taken::Record(len)) => pos += len,
            Ok(Taken::End) => break LogEnd::Complete,
            Ok(Taken::Trailing { len, extra }) => {
                break LogEnd::Truncated {
                    offset: (pos + len) as u64,
                    frame,
                    reason: TruncReason::TrailingBytes { extra },
                };
            }
            Err(reason) => match resume_after(&log.header, header_check, bytes, pos, frame) {
                Some(next) => {
                    log.damage.push(Damage {
                        offset: pos as u64,
                        frame,
                        reason,
                    });
                    pos = next;
                }
                None => {
                    break LogEnd::Truncated {
                        offset: pos as u64,
                        frame,
                        reason,
                    };
                }
            },
        }
    };
    log.end = end;
    Ok(log)
}

/// What [`take_record`] found at a record boundary.
enum Taken {
    /// A valid record of this many bytes, added to the log.
    Record(usize),
    /// The end record, with nothing after it.
    End,
    /// The end record (`len` bytes), followed by `extra` bytes.
    Trailing { len: usize, extra: u64 },
}

/// Reads the record at the start of `rest` into `log`, or says why it is
/// invalid (leaving `log` as it was).
fn take_record<I: Input>(
    log: &mut ReplayLog<I>,
    header_check: u64,
    state_limit: u32,
    rest: &[u8],
) -> Result<Taken, TruncReason> {
    let frame = log.frames();
    let (kind, body, len) = record::open(header_check, rest)?;
    if kind != KIND_END && log.stop().is_some() {
        return Err(TruncReason::AfterStop { frame });
    }
    match kind {
        KIND_FRAMES => {
            let frames = decode_frames::<I>(body, &log.header, frame)?;
            log.inputs.extend(frames.inputs);
            log.checks.extend(frames.checks);
            log.full.extend(frames.full);
        }
        KIND_KEYFRAME => {
            // The order is checked first: it costs nothing, and inflating
            // the data does.
            let found = body
                .get(..4)
                .map_or(frame, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let after_last = log.keyframes.last().is_none_or(|k| k.frame() < found);
            if found != frame || !after_last {
                return Err(TruncReason::KeyframeOrder {
                    expected: frame,
                    found,
                });
            }
            log.keyframes.push(Keyframe::decode(body, state_limit)?);
        }
        KIND_NOTE if log.header.allows_notes() => {
            let noted = decode_note(body, log.header.setup.seats)?;
            if noted.at != frame {
                return Err(TruncReason::NoteOrder {
                    expected: frame,
                    found: noted.at,
                });
            }
            log.notes.push(noted);
            log.note_keyframes.push(log.keyframes.len());
        }
        KIND_END => {
            let found = decode_end(body)?;
            if found != frame {
                return Err(TruncReason::EndFrames {
                    expected: frame,
                    found,
                });
            }
            let extra = rest.len() - len;
            return Ok(if extra > 0 {
                Taken::Trailing {
                    len,
                    extra: extra as u64,
                }
            } else {
                Taken::End
            });
        }
        other => return Err(TruncReason::UnknownKind(other)),
    }
    Ok(Taken::Record(len))
}

/// Where reading can go on after the invalid record at `pos`, if it can: the
/// record's own length must lead to a record that passes its check and
/// starts at frame `frame` (every record body starts with a `u32` frame: a
/// frames record's first frame, a keyframe's frame, a note's position, the
/// end record's count). Such a record proves the invalid one held no
/// frames, so skipping it loses none.
fn resume_after(
    header: &Header,
    header_check: u64,
    bytes: &[u8],
    pos: usize,
    frame: Frame,
) -> Option<usize> {
    let prefix = bytes.get(pos..pos.checked_add(RECORD_PREFIX)?)?;
    let len = u32::from_le_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]);
    let next = pos
        .checked_add(RECORD_PREFIX + RECORD_CHECK)?
        .checked_add(usize::try_from(len).ok()?)?;
    let (kind, body, _) = record::open(header_check, bytes.get(next..)?).ok()?;
    let starts = body.get(..4)?;
    let starts = u32::from_le_bytes([starts[0], starts[1], starts[2], starts[3]]);
    let known = matches!(kind, KIND_FRAMES | KIND_KEYFRAME | KIND_END)
        || (kind == KIND_NOTE && header.allows_notes());
    (known && starts == frame).then_some(next)
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

    /// Whether the log was read to its end record with nothing wrong: no
    /// record skipped, nothing cut short. A log that stopped early
    /// ([`ReplayLog::stop`]) is complete when its end record is intact: it
    /// holds fewer frames than the match, and says why.
    pub fn is_complete(&self) -> bool {
        self.end == LogEnd::Complete && self.damage.is_empty()
    }

    /// The invalid records skipped because the records after them are intact
    /// (in byte order). Each cost what it held (a keyframe), no frame.
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Frames in the log (frames `0..frames()`).
    pub fn frames(&self) -> Frame {
        // At most `u32::MAX` frames decode (see `decode_frames`).
        self.checks.len() as Frame
    }

    /// Every player's input for `frame`, by seat.
    pub fn inputs(&self, frame: Frame) -> Option<&[I]> {
        let seats = usize::from(self.header.setup.seats);
        let start = (frame as usize).checked_mul(seats)?;
        self.inputs.get(start..start.checked_add(seats)?)
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

    /// The keyframes, in frame order, as logged (each inflated only when
    /// asked: [`Keyframe::state`]).
    pub fn keyframes(&self) -> &[Keyframe] {
        &self.keyframes
    }

    /// The keyframe of `frame` (the state before it), if the log has one.
    pub fn keyframe(&self, frame: Frame) -> Option<&Keyframe> {
        let i = self
            .keyframes
            .binary_search_by_key(&frame, Keyframe::frame)
            .ok()?;
        self.keyframes.get(i)
    }

    /// The latest keyframe at or before `frame`.
    pub fn keyframe_at_or_before(&self, frame: Frame) -> Option<&Keyframe> {
        self.keyframes.iter().rev().find(|k| k.frame() <= frame)
    }

    /// The notes, in the order written (so in frame position order).
    pub fn notes(&self) -> &[Noted] {
        &self.notes
    }

    /// Why the log stopped early, if it says so: the reason of its
    /// [`Note::Stopped`], which is at [`ReplayLog::frames`] (the log holds
    /// every frame before the stop and none after).
    pub fn stop(&self) -> Option<&StopCause> {
        match self.notes.last() {
            Some(Noted {
                note: Note::Stopped { reason },
                ..
            }) => Some(reason),
            _ => None,
        }
    }

    /// Writes the log again, complete, in its format version, with
    /// `chunk_frames` frames per chunk (keyframes as they were logged).
    pub fn write<W: std::io::Write>(&self, out: W, chunk_frames: u32) -> std::io::Result<W> {
        let mut w = LogWriter::new(out, self.header.clone(), chunk_frames)?;
        let mut keyframes = self.keyframes.iter().enumerate().peekable();
        let mut notes = self.notes.iter().zip(&self.note_keyframes).peekable();
        for frame in 0..=self.frames() {
            // The keyframes and notes of this frame, in the order read.
            loop {
                let note = notes.next_if(|&(n, &before)| {
                    let after_keyframes = keyframes
                        .peek()
                        .is_none_or(|&(i, k)| k.frame() != frame || i >= before);
                    n.at == frame && after_keyframes
                });
                if let Some((n, _)) = note {
                    w.note(&n.note)?;
                } else if let Some((_, k)) = keyframes.next_if(|(_, k)| k.frame() == frame) {
                    w.logged_keyframe(k)?;
                } else {
                    break;
                }
            }
            if frame == self.frames() {
                break;
            }
            let inputs = self.inputs(frame).unwrap_or_default();
            let check = self.check(frame).unwrap_or_default();
            w.logged_frame(inputs, check, self.full_checksum(frame).as_ref())?;
        }
        w.finish()
    }

    /// [`ReplayLog::write`] into a new buffer, with the default chunk size.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.write(Vec::new(), super::DEFAULT_CHUNK_FRAMES)
            .unwrap_or_default()
    }
}
