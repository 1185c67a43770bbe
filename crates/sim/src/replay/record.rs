//! Records, the unit of a log after its header, and the codecs of their
//! bodies, shared by the writer and the reader so the two cannot disagree.
//!
//! A record is `kind u8 | body length u32 | body | check u64`, the check
//! being the first 8 bytes of BLAKE3 of the header check followed by every
//! record byte before the check (`fixtures/replays/SPEC.md` §3). Bodies:
//! - frames (kind 1): `first frame u32 | count u32 | bits`, the bits packing
//!   each frame's inputs (the chunk's first frame in full, then per player a
//!   `0` bit for "same as before" or `1` and the input), its 16-bit
//!   [`FrameCheck`] and, on full-checksum frames, the 32-byte checksum;
//! - keyframe (kind 2): `frame u32 | encoding u8 | length u32 | data`, whose
//!   codec lives with the [`Keyframe`](super::Keyframe) type (`keyframe.rs`);
//! - end (kind 3): `frames u32`;
//! - note (kind 4, format version 2 on): `at u32 | note u8 | fields`, whose
//!   codec lives with the [`Note`](super::Note) type (`note.rs`).
//!
//! Invariants: decoding is canonical (an input flagged as changed must
//! differ, padding must be zero, no byte may trail, a frame's short check
//! must be the prefix of its full checksum), never panics, and allocates no
//! more than the body's length allows: a record's frame count is capped by
//! its bits (every frame takes at least 16).

use lockstep_codec::input::serialize_after;
use lockstep_codec::{BitReader, BitStream, BitWriter, Input};
use lockstep_fx::Checksum;

use super::FrameCheck;
use super::header::{Header, check_of_parts};
use super::trunc::TruncReason;
use crate::game::Frame;

/// A chunk of frames.
pub(crate) const KIND_FRAMES: u8 = 1;
/// An exact saved state for seeking.
pub(crate) const KIND_KEYFRAME: u8 = 2;
/// The writer finished the log.
pub(crate) const KIND_END: u8 = 3;
/// A [`Note`](super::Note) (format version 2 on).
pub(crate) const KIND_NOTE: u8 = 4;

/// Bytes before a record's body: kind and body length.
pub(crate) const RECORD_PREFIX: usize = 1 + 4;
/// Bytes of a record's check.
pub(crate) const RECORD_CHECK: usize = 8;

/// Bits every frame takes at least: its [`FrameCheck`].
const MIN_FRAME_BITS: u64 = 16;

/// The record check of `kind` and `body` in a log whose header check is
/// `header_check`.
fn record_check(header_check: u64, prefix: &[u8], body: &[u8]) -> u64 {
    check_of_parts(&[&header_check.to_le_bytes(), prefix, body])
}

/// A whole record: prefix, body and check. `None` if the body is longer than
/// a `u32` length can say.
pub(crate) fn seal(header_check: u64, kind: u8, body: &[u8]) -> Option<Vec<u8>> {
    let len = u32::try_from(body.len()).ok()?;
    let mut out = Vec::with_capacity(RECORD_PREFIX + body.len() + RECORD_CHECK);
    out.push(kind);
    out.extend_from_slice(&len.to_le_bytes());
    let check = record_check(header_check, &out, body);
    out.extend_from_slice(body);
    out.extend_from_slice(&check.to_le_bytes());
    Some(out)
}

/// Opens the record at the start of `rest`: its kind, body and total length.
pub(crate) fn open(header_check: u64, rest: &[u8]) -> Result<(u8, &[u8], usize), TruncReason> {
    let have = rest.len() as u64;
    if rest.len() < RECORD_PREFIX {
        return Err(TruncReason::Incomplete {
            needed: (RECORD_PREFIX + RECORD_CHECK) as u64 - have,
        });
    }
    let kind = rest[0];
    let len = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]);
    let total = (RECORD_PREFIX + RECORD_CHECK) as u64 + u64::from(len);
    if total > have {
        return Err(TruncReason::Incomplete {
            needed: total - have,
        });
    }
    // `total <= rest.len()`, so it fits in `usize`.
    let body_end = RECORD_PREFIX + len as usize;
    let body = &rest[RECORD_PREFIX..body_end];
    let mut b = [0u8; RECORD_CHECK];
    b.copy_from_slice(&rest[body_end..body_end + RECORD_CHECK]);
    if u64::from_le_bytes(b) != record_check(header_check, &rest[..RECORD_PREFIX], body) {
        return Err(TruncReason::Check);
    }
    Ok((kind, body, body_end + RECORD_CHECK))
}

/// Packs frames into the body of one frames record.
#[derive(Debug, Clone)]
pub(crate) struct FramesEncoder<I> {
    first: Frame,
    count: u32,
    bits: BitWriter,
    prev: Vec<I>,
}

impl<I: Input> FramesEncoder<I> {
    /// An empty chunk whose first frame will be `first`.
    pub(crate) fn new(first: Frame) -> Self {
        FramesEncoder {
            first,
            count: 0,
            bits: BitWriter::new(),
            prev: Vec::new(),
        }
    }

    /// Frames packed so far.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// Packs the next frame: every player's input, the short check and, when
    /// the header asks for one on this frame, the full checksum.
    pub(crate) fn push(&mut self, inputs: &[I], check: FrameCheck, full: Option<&Checksum>) {
        let first = self.count == 0;
        for (seat, input) in inputs.iter().enumerate() {
            let prev = if first { None } else { self.prev.get(seat) };
            // A `BitWriter` never fails.
            let _ = serialize_after(&mut self.bits, &mut input.clone(), prev);
        }
        self.prev.clear();
        self.prev.extend_from_slice(inputs);
        let _ = self.bits.u16(&mut check.0.clone());
        if let Some(full) = full {
            let _ = self.bits.checksum(&mut full.clone());
        }
        self.count += 1;
    }

    /// The record body, and a fresh encoder for the frames after it.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        let next = self.first.wrapping_add(self.count);
        let done = core::mem::replace(self, FramesEncoder::new(next));
        let bits = done.bits.finish();
        let mut body = Vec::with_capacity(8 + bits.len());
        body.extend_from_slice(&done.first.to_le_bytes());
        body.extend_from_slice(&done.count.to_le_bytes());
        body.extend_from_slice(&bits);
        body
    }
}

/// The frames of one frames record.
#[derive(Debug, Clone, Default)]
pub(crate) struct Frames<I> {
    /// `count × seats` inputs, frame-major.
    pub(crate) inputs: Vec<I>,
    /// One per frame.
    pub(crate) checks: Vec<FrameCheck>,
    /// The full checksums, in frame order.
    pub(crate) full: Vec<(Frame, Checksum)>,
}

/// Reads a frames record body that must start at frame `expected`.
pub(crate) fn decode_frames<I: Input>(
    body: &[u8],
    header: &Header,
    expected: Frame,
) -> Result<Frames<I>, TruncReason> {
    let malformed = |what| TruncReason::Malformed { what };
    if body.len() < 8 {
        return Err(malformed("frames record (shorter than its counts)"));
    }
    let first = u32::from_le_bytes([body[0], body[1], body[2], body[3]]);
    let count = u32::from_le_bytes([body[4], body[5], body[6], body[7]]);
    if first != expected {
        return Err(TruncReason::FrameOrder {
            expected,
            found: first,
        });
    }
    let bits = &body[8..];
    if count == 0 || u64::from(count) > bits.len() as u64 * 8 / MIN_FRAME_BITS {
        return Err(malformed("frame count (zero, or more than the bits hold)"));
    }
    if u64::from(first) + u64::from(count) > u64::from(u32::MAX) {
        return Err(malformed("frame count (past frame u32::MAX - 1)"));
    }
    let seats = usize::from(header.setup.seats);
    let mut r = BitReader::new(bits);
    let mut out = Frames {
        inputs: Vec::with_capacity(count as usize),
        checks: Vec::with_capacity(count as usize),
        full: Vec::new(),
    };
    for i in 0..count {
        // `first + i < u32::MAX` by the check above.
        let frame = first + i;
        let frames_err = |error| TruncReason::Frames { frame, error };
        // Where the previous frame's inputs start (none in the first frame).
        let prev_base = out.inputs.len().checked_sub(seats).filter(|_| i > 0);
        for seat in 0..seats {
            let prev = prev_base.map(|at| at + seat);
            let mut input = I::default();
            let changed = serialize_after(&mut r, &mut input, prev.map(|at| &out.inputs[at]))
                .map_err(frames_err)?;
            if changed && prev.is_some_and(|at| out.inputs[at] == input) {
                return Err(TruncReason::NonCanonical {
                    frame,
                    seat: seat as u8,
                });
            }
            out.inputs.push(input);
        }
        let mut check = 0u16;
        r.u16(&mut check).map_err(frames_err)?;
        let check = FrameCheck(check);
        if header.has_full_checksum(frame) {
            let mut full = Checksum::default();
            r.checksum(&mut full).map_err(frames_err)?;
            if FrameCheck::of(&full) != check {
                return Err(TruncReason::Inconsistent { frame });
            }
            out.full.push((frame, full));
        }
        out.checks.push(check);
    }
    let last = first.wrapping_add(count - 1);
    r.finish()
        .map_err(|error| TruncReason::Frames { frame: last, error })?;
    Ok(out)
}

/// An end record body.
pub(crate) fn encode_end(frames: Frame) -> Vec<u8> {
    frames.to_le_bytes().to_vec()
}

/// Reads an end record body: the number of frames the log holds.
pub(crate) fn decode_end(body: &[u8]) -> Result<Frame, TruncReason> {
    match body {
        &[a, b, c, d] => Ok(u32::from_le_bytes([a, b, c, d])),
        _ => Err(TruncReason::Malformed {
            what: "end record (not 4 bytes)",
        }),
    }
}
