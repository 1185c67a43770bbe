//! Keyframes: exact saved states a log carries for seeking, and the codec of
//! their record body (`frame u32 | encoding u8 | length u32 | data`,
//! `fixtures/replays/SPEC.md` §5).
//!
//! A [`Keyframe`] is kept as it was logged — deflated or stored — with the
//! checksum of the state it holds, and inflated only when a seek loads it
//! ([`Keyframe::state`]). Reading checks it whole without holding it: the
//! data is inflated in pieces that are hashed and dropped.
//!
//! Invariants: a keyframe that reads announces a length no longer than the
//! reader's state limit (the log's game's [`Game::state_limit`], never more
//! than [`MAX_STATE_BYTES`]), checked before a byte is inflated; its data
//! gives exactly that many bytes, whose BLAKE3 is [`Keyframe::checksum`]; so
//! a log costs its own bytes in memory, whatever its keyframes inflate to,
//! and loading one costs at most the limit.
//!
//! [`Game::state_limit`]: crate::Game::state_limit
//! [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES

use lockstep_codec::deflate::{self, DeflateError};
use lockstep_fx::{Checksum, HashSink, StateWriter};

use super::trunc::TruncReason;
use crate::engine::SavedState;
use crate::game::Frame;

/// Keyframe data stored as it is.
const STORED: u8 = 0;
/// Keyframe data as a raw deflate stream.
const DEFLATED: u8 = 1;

/// Bytes of a keyframe body before its data: frame, encoding, length.
const FIELDS: usize = 4 + 1 + 4;

/// An exact saved state in a log, as logged: the state before
/// [`Keyframe::frame`], deflated or stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyframe {
    frame: Frame,
    len: u32,
    checksum: Checksum,
    compressed: bool,
    data: Vec<u8>,
}

impl Keyframe {
    /// The keyframe of `saved`, deflated if that is smaller. `None` if the
    /// state is longer than a `u32` length can say.
    pub fn of(saved: &SavedState) -> Option<Keyframe> {
        let len = u32::try_from(saved.bytes.len()).ok()?;
        let (compressed, data) = deflate::pack(&saved.bytes);
        Some(Keyframe {
            frame: saved.frame,
            len,
            checksum: saved.checksum(),
            compressed,
            data,
        })
    }

    /// The frame it is the state before.
    pub fn frame(&self) -> Frame {
        self.frame
    }

    /// The length of the state it holds, in bytes.
    pub fn state_len(&self) -> u32 {
        self.len
    }

    /// BLAKE3 of the state it holds: the checksum of the frame before
    /// [`Keyframe::frame`], if the log is right.
    pub fn checksum(&self) -> Checksum {
        self.checksum
    }

    /// The state it holds, inflated (at most the state limit it was read
    /// with). The data was checked when it was read, so an error here means
    /// the keyframe was built by hand; it is typed all the same.
    pub fn state(&self) -> Result<SavedState, DeflateError> {
        let bytes = deflate::unpack(self.compressed, &self.data, self.len)?;
        Ok(SavedState {
            frame: self.frame,
            bytes,
        })
    }

    /// The record body.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(FIELDS + self.data.len());
        body.extend_from_slice(&self.frame.to_le_bytes());
        body.push(if self.compressed { DEFLATED } else { STORED });
        body.extend_from_slice(&self.len.to_le_bytes());
        body.extend_from_slice(&self.data);
        body
    }

    /// Reads a keyframe record body, refusing a state longer than `limit`
    /// bytes before inflating it.
    pub(crate) fn decode(body: &[u8], limit: u32) -> Result<Keyframe, TruncReason> {
        if body.len() < FIELDS {
            return Err(TruncReason::Malformed {
                what: "keyframe record (shorter than its fields)",
            });
        }
        let frame = u32::from_le_bytes([body[0], body[1], body[2], body[3]]);
        let encoding = body[4];
        let len = u32::from_le_bytes([body[5], body[6], body[7], body[8]]);
        let data = &body[FIELDS..];
        let bad = |what| TruncReason::Keyframe { frame, what };
        let compressed = match encoding {
            STORED => false,
            DEFLATED => true,
            _ => return Err(bad("unknown encoding")),
        };
        let mut hasher = StateWriter::<HashSink>::hasher();
        deflate::unpack_with(compressed, data, len, limit, |piece| {
            hasher.write_raw(piece)
        })
        .map_err(|e| match e {
            DeflateError::TooLong { limit, .. } => {
                TruncReason::KeyframeTooLong { frame, len, limit }
            }
            DeflateError::StoredLength { .. } => bad("stored length differs from the data"),
            DeflateError::BeyondRatio { .. } => bad("inflated length beyond deflate's ratio"),
            DeflateError::Inflate { .. } => bad("deflate stream does not inflate to its length"),
        })?;
        Ok(Keyframe {
            frame,
            len,
            checksum: hasher.checksum(),
            compressed,
            data: data.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MAX_STATE_BYTES;

    #[test]
    fn a_keyframe_reads_back_with_its_checksum_and_state() {
        for bytes in [
            vec![9u8; 5000],
            (0..300u32).map(|i| (i * 7) as u8).collect(),
        ] {
            let saved = SavedState { frame: 12, bytes };
            let k = Keyframe::of(&saved).unwrap();
            let body = k.encode();
            let read = Keyframe::decode(&body, MAX_STATE_BYTES).unwrap();
            assert_eq!(read, k);
            assert_eq!(read.checksum(), saved.checksum());
            assert_eq!(read.state(), Ok(saved.clone()));
            let len = saved.bytes.len() as u32;
            assert_eq!(
                Keyframe::decode(&body, len - 1),
                Err(TruncReason::KeyframeTooLong {
                    frame: 12,
                    len,
                    limit: len - 1
                })
            );
        }
    }
}
