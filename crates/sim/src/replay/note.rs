//! Notes: what happened to a log, written into it where it happened. A log
//! that only held frames could not say that its seat was healed, played
//! unchecked, saw a seat leave and come back, or stopped early and why; a
//! [`Note`] says each of these as a typed fact, recorded at a frame
//! position ([`Noted::at`]: the number of frames before it, as with a
//! keyframe).
//!
//! A note's own frame fields say which frames it is about; they may lie
//! after its position (a peer learns of a heal or a drop before it has
//! written the frames concerned) or before it. The exception is
//! [`Note::Stopped`]: its position *is* where the log stops, and no record
//! but the end record may follow it.
//!
//! Body of a note record (kind 4, `fixtures/replays/SPEC.md` §6):
//! `at u32 | note u8 | fields`, each note's fields fixed but for a
//! [`Detail`], `length u8 | UTF-8`.
//!
//! Invariants: every note has exactly one encoding and decoding is
//! canonical (known kinds and causes only, a flag is 0 or 1, no byte
//! trails); a seat is below the log's seat count; a healed span does not
//! end before it starts; a [`Detail`] is at most [`MAX_DETAIL`] bytes of
//! UTF-8 without control characters, so a note is at most
//! [`MAX_NOTE_BODY`] bytes and prints on one line.

use core::fmt;

use super::trunc::TruncReason;
use crate::game::Frame;

/// The longest [`Detail`], in bytes.
pub const MAX_DETAIL: usize = 160;

/// The longest note record body: position, kind, cause, detail length and
/// detail.
pub(crate) const MAX_NOTE_BODY: usize = 4 + 1 + 1 + 1 + MAX_DETAIL;

const NOTE_STOPPED: u8 = 1;
const NOTE_HEALED: u8 = 2;
const NOTE_UNCHECKED: u8 = 3;
const NOTE_CHECKED: u8 = 4;
const NOTE_SEAT_DROPPED: u8 = 5;
const NOTE_SEAT_RETURNED: u8 = 6;

const STOP_LOST_QUORUM: u8 = 1;
const STOP_MATCH_INVALID: u8 = 2;
const STOP_RECORDING_ERROR: u8 = 3;
const STOP_INTERRUPTED: u8 = 4;
const STOP_OTHER: u8 = 5;

const UNCHECKED_ALONE: u8 = 1;
const UNCHECKED_PLAYED_ON: u8 = 2;
const UNCHECKED_SNAPSHOTS: u8 = 3;

/// A short free text where a typed field cannot say it (an I/O error's
/// message): at most [`MAX_DETAIL`] bytes of UTF-8, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Detail(String);

impl Detail {
    /// `text` made a detail: cut to at most [`MAX_DETAIL`] bytes (at a
    /// character boundary), every control character (a newline, an escape)
    /// replaced by a space.
    pub fn new(text: &str) -> Detail {
        let mut out = String::with_capacity(text.len().min(MAX_DETAIL));
        for c in text.chars() {
            let c = if c.is_control() { ' ' } else { c };
            if out.len() + c.len_utf8() > MAX_DETAIL {
                break;
            }
            out.push(c);
        }
        Detail(out)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The detail `bytes` encode exactly, if they are one.
    fn parse(bytes: &[u8]) -> Option<Detail> {
        let text = core::str::from_utf8(bytes).ok()?;
        (bytes.len() <= MAX_DETAIL && !text.chars().any(char::is_control))
            .then(|| Detail(text.to_owned()))
    }
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a log stopped before the end of its match.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopCause {
    /// This seat was in a minority: it no longer heard a quorum of the
    /// seats still in the match, and stopped rather than play on alone.
    LostQuorum,
    /// A desync that could not be healed made the match invalid.
    MatchInvalid {
        /// The first frame whose checksums differed between seats.
        first_frame: Frame,
    },
    /// The log could not be written on (a full disk, a closed pipe).
    RecordingError(Detail),
    /// The process was told to stop (SIGINT, SIGTERM).
    Interrupted,
    /// Anything else, said in words.
    Other(Detail),
}

impl fmt::Display for StopCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopCause::LostQuorum => f.write_str("lost quorum (this seat was in a minority)"),
            StopCause::MatchInvalid { first_frame } => write!(
                f,
                "match invalid (a desync from frame {first_frame} could not be healed)"
            ),
            StopCause::RecordingError(detail) => write!(f, "recording error: {detail}"),
            StopCause::Interrupted => f.write_str("interrupted (the process was told to stop)"),
            StopCause::Other(detail) if detail.as_str().is_empty() => {
                f.write_str("no reason given")
            }
            StopCause::Other(detail) => write!(f, "{detail}"),
        }
    }
}

/// Why nobody compared this seat's checksums from some frame on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UncheckedCause {
    /// No other seat was left to compare with: this seat played alone.
    Alone,
    /// The match chose to play on after a desync it could not heal.
    PlayedOn,
    /// This seat fell back to the authority's snapshots and stepped its own
    /// game without agreement.
    Snapshots,
}

impl fmt::Display for UncheckedCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UncheckedCause::Alone => "this seat played alone",
            UncheckedCause::PlayedOn => "the match played on after a desync it could not heal",
            UncheckedCause::Snapshots => "this seat followed the authority's snapshots",
        })
    }
}

/// A fact about a log's frames.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Note {
    /// The log stops where this note is (it holds exactly the frames before
    /// it), before the end of the match.
    Stopped {
        /// Why.
        reason: StopCause,
    },
    /// This seat's frames `first..=loaded` diverged and were healed: it
    /// loaded the authority's exact state after frame `loaded`. The frames
    /// logged are the healed trajectory (the checksums every seat agreed
    /// on), not the ones this seat first computed.
    Healed {
        /// The first frame this seat got wrong.
        first: Frame,
        /// The frame whose state it loaded (at least `first`).
        loaded: Frame,
    },
    /// From frame `from` on, nobody compared this seat's checksums: the
    /// frames logged are what it computed, unconfirmed.
    Unchecked {
        /// The first unchecked frame.
        from: Frame,
        /// Why.
        cause: UncheckedCause,
    },
    /// From frame `from` on, this seat's checksums are compared again.
    Checked {
        /// The first checked frame.
        from: Frame,
    },
    /// A seat left the match: from the frame after `last_frame` it played
    /// the game's absent input.
    SeatDropped {
        /// The seat.
        seat: u8,
        /// Its last frame played with its own input (`None`: it played
        /// none, and was absent from frame 0).
        last_frame: Option<Frame>,
    },
    /// A dropped seat took its place again and plays its own input from
    /// `frame` on.
    SeatReturned {
        /// The seat.
        seat: u8,
        /// The first frame it plays again.
        frame: Frame,
    },
}

impl Note {
    /// Why this note cannot be in a log of `seats` seats, if it cannot.
    pub(crate) fn invalid(&self, seats: u8) -> Option<&'static str> {
        match *self {
            Note::Healed { first, loaded } if loaded < first => {
                Some("healed span (ends before it starts)")
            }
            Note::SeatDropped { seat, .. } | Note::SeatReturned { seat, .. } if seat >= seats => {
                Some("seat (not a seat of the log)")
            }
            _ => None,
        }
    }
}

impl fmt::Display for Note {
    /// The note without its position (a stop's frame is its position: see
    /// [`Noted`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Stopped { reason } => write!(f, "stopped: {reason}"),
            Note::Healed { first, loaded } => write!(
                f,
                "frames {first}..={loaded} healed (loaded the state after frame {loaded})"
            ),
            Note::Unchecked { from, cause } => write!(f, "unchecked from frame {from} ({cause})"),
            Note::Checked { from } => write!(f, "checked again from frame {from}"),
            Note::SeatDropped {
                seat,
                last_frame: Some(last),
            } => write!(
                f,
                "seat {seat} dropped after frame {last} (absent input from frame {})",
                u64::from(*last) + 1
            ),
            Note::SeatDropped {
                seat,
                last_frame: None,
            } => write!(
                f,
                "seat {seat} dropped before frame 0 (absent input from frame 0)"
            ),
            Note::SeatReturned { seat, frame } => {
                write!(f, "seat {seat} returned, playing from frame {frame}")
            }
        }
    }
}

/// A note and where a log holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Noted {
    /// Frames before the note: it was written after frame `at − 1` was
    /// logged and before frame `at`.
    pub at: Frame,
    /// The note.
    pub note: Note,
}

impl fmt::Display for Noted {
    /// One line: `frame 1027: stopped: lost quorum (…)` for a stop, else
    /// the note, whose fields name its frames.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.note {
            Note::Stopped { .. } => write!(f, "frame {}: {}", self.at, self.note),
            note => write!(f, "{note}"),
        }
    }
}

/// A note record body: the note at position `at`.
pub(crate) fn encode_note(at: Frame, note: &Note) -> Vec<u8> {
    let mut body = Vec::with_capacity(MAX_NOTE_BODY);
    body.extend_from_slice(&at.to_le_bytes());
    let detail = |body: &mut Vec<u8>, d: &Detail| {
        // A `Detail` is at most `MAX_DETAIL` (< 256) bytes.
        body.push(d.0.len() as u8);
        body.extend_from_slice(d.0.as_bytes());
    };
    match note {
        Note::Stopped { reason } => {
            body.push(NOTE_STOPPED);
            match reason {
                StopCause::LostQuorum => body.push(STOP_LOST_QUORUM),
                StopCause::MatchInvalid { first_frame } => {
                    body.push(STOP_MATCH_INVALID);
                    body.extend_from_slice(&first_frame.to_le_bytes());
                }
                StopCause::RecordingError(d) => {
                    body.push(STOP_RECORDING_ERROR);
                    detail(&mut body, d);
                }
                StopCause::Interrupted => body.push(STOP_INTERRUPTED),
                StopCause::Other(d) => {
                    body.push(STOP_OTHER);
                    detail(&mut body, d);
                }
            }
        }
        Note::Healed { first, loaded } => {
            body.push(NOTE_HEALED);
            body.extend_from_slice(&first.to_le_bytes());
            body.extend_from_slice(&loaded.to_le_bytes());
        }
        Note::Unchecked { from, cause } => {
            body.push(NOTE_UNCHECKED);
            body.extend_from_slice(&from.to_le_bytes());
            body.push(match cause {
                UncheckedCause::Alone => UNCHECKED_ALONE,
                UncheckedCause::PlayedOn => UNCHECKED_PLAYED_ON,
                UncheckedCause::Snapshots => UNCHECKED_SNAPSHOTS,
            });
        }
        Note::Checked { from } => {
            body.push(NOTE_CHECKED);
            body.extend_from_slice(&from.to_le_bytes());
        }
        Note::SeatDropped { seat, last_frame } => {
            body.push(NOTE_SEAT_DROPPED);
            body.push(*seat);
            match last_frame {
                None => body.push(0),
                Some(last) => {
                    body.push(1);
                    body.extend_from_slice(&last.to_le_bytes());
                }
            }
        }
        Note::SeatReturned { seat, frame } => {
            body.push(NOTE_SEAT_RETURNED);
            body.push(*seat);
            body.extend_from_slice(&frame.to_le_bytes());
        }
    }
    body
}

/// Reads a note record body of a log of `seats` seats.
pub(crate) fn decode_note(body: &[u8], seats: u8) -> Result<Noted, TruncReason> {
    let Some((at, rest)) = body.split_first_chunk::<4>() else {
        return Err(TruncReason::Malformed {
            what: "note record (shorter than its position)",
        });
    };
    let at = u32::from_le_bytes(*at);
    let bad = |what| TruncReason::Note { at, what };
    let mut r = Fields { rest };
    let note = match r.u8().ok_or(bad("note (no kind)"))? {
        NOTE_STOPPED => {
            let reason = match r.u8().ok_or(bad("stop (no cause)"))? {
                STOP_LOST_QUORUM => StopCause::LostQuorum,
                STOP_MATCH_INVALID => StopCause::MatchInvalid {
                    first_frame: r.u32().ok_or(bad("stop (cut short)"))?,
                },
                STOP_RECORDING_ERROR => {
                    StopCause::RecordingError(r.detail().ok_or(bad("stop detail"))?)
                }
                STOP_INTERRUPTED => StopCause::Interrupted,
                STOP_OTHER => StopCause::Other(r.detail().ok_or(bad("stop detail"))?),
                _ => return Err(bad("stop (unknown cause)")),
            };
            Note::Stopped { reason }
        }
        NOTE_HEALED => {
            let first = r.u32().ok_or(bad("heal (cut short)"))?;
            let loaded = r.u32().ok_or(bad("heal (cut short)"))?;
            Note::Healed { first, loaded }
        }
        NOTE_UNCHECKED => {
            let from = r.u32().ok_or(bad("unchecked span (cut short)"))?;
            let cause = match r.u8().ok_or(bad("unchecked span (cut short)"))? {
                UNCHECKED_ALONE => UncheckedCause::Alone,
                UNCHECKED_PLAYED_ON => UncheckedCause::PlayedOn,
                UNCHECKED_SNAPSHOTS => UncheckedCause::Snapshots,
                _ => return Err(bad("unchecked span (unknown cause)")),
            };
            Note::Unchecked { from, cause }
        }
        NOTE_CHECKED => Note::Checked {
            from: r.u32().ok_or(bad("checked span (cut short)"))?,
        },
        NOTE_SEAT_DROPPED => {
            let seat = r.u8().ok_or(bad("seat drop (cut short)"))?;
            let last_frame = match r.u8().ok_or(bad("seat drop (cut short)"))? {
                0 => None,
                1 => Some(r.u32().ok_or(bad("seat drop (cut short)"))?),
                _ => return Err(bad("seat drop (last frame flag not 0 or 1)")),
            };
            Note::SeatDropped { seat, last_frame }
        }
        NOTE_SEAT_RETURNED => {
            let seat = r.u8().ok_or(bad("seat return (cut short)"))?;
            let frame = r.u32().ok_or(bad("seat return (cut short)"))?;
            Note::SeatReturned { seat, frame }
        }
        _ => return Err(bad("note (unknown kind)")),
    };
    if !r.rest.is_empty() {
        return Err(bad("note (trailing bytes)"));
    }
    if let Some(what) = note.invalid(seats) {
        return Err(bad(what));
    }
    Ok(Noted { at, note })
}

/// The fields of a note body, read front to back.
struct Fields<'a> {
    rest: &'a [u8],
}

impl Fields<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        let (b, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_le_bytes(*b))
    }

    fn detail(&mut self) -> Option<Detail> {
        let len = usize::from(self.u8()?);
        let bytes = self.rest.get(..len)?;
        self.rest = &self.rest[len..];
        Detail::parse(bytes)
    }
}
