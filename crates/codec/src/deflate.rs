//! Deflate for exact states (resync transfers, replay-log keyframes): a state
//! is sent compressed only when that is smaller, and inflated only up to the
//! length announced beside it.
//!
//! Invariants: no announced length above [`MAX_STATE_BYTES`] (or a smaller
//! limit the caller gives) is inflated at all; an announced length that
//! deflate's maximum ratio (1032:1) cannot reach from the payload is refused
//! before inflating; [`unpack_with`] hands the bytes on in pieces of at most
//! [`PIECE_BYTES`] and holds nothing else but the inflater's 32 KiB window,
//! so a reader can check or hash a state without ever holding it; [`unpack`]
//! grows its output only as bytes come out, never past the announced length,
//! and returns exactly `len` bytes or an error.

use miniz_oxide::inflate::stream::{InflateState, inflate};
use miniz_oxide::{DataFormat, MZFlush, MZStatus};

/// Deflate's largest compression ratio: an announced length beyond
/// `(payload + 1) × 1032` is a lie.
pub const MAX_RATIO: u64 = 1032;

/// The longest exact state any lockstep format carries, in bytes: 64 MiB. A
/// resync transfer, a replay log's keyframe or a state file announcing more
/// is refused before anything is inflated or allocated; a game's own limit
/// (`Game::state_limit` in `lockstep-sim`) is usually far lower.
pub const MAX_STATE_BYTES: u32 = 64 << 20;

/// The largest piece [`unpack_with`] hands on at once.
pub const PIECE_BYTES: usize = 16 << 10;

/// Why a payload did not unpack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DeflateError {
    /// A stored (uncompressed) payload is not the announced length.
    #[error("stored payload of {found} bytes, {expected} announced")]
    StoredLength {
        /// The announced length.
        expected: u32,
        /// The payload's length.
        found: u64,
    },
    /// The announced length is beyond what the payload can inflate to.
    #[error("{expected} bytes announced from a {payload}-byte deflate stream")]
    BeyondRatio {
        /// The announced length.
        expected: u32,
        /// The payload's length.
        payload: u64,
    },
    /// The announced length is beyond the limit for this state.
    #[error("{expected} bytes announced, more than the {limit}-byte limit")]
    TooLong {
        /// The announced length.
        expected: u32,
        /// The limit.
        limit: u32,
    },
    /// The stream is corrupt or does not inflate to the announced length.
    #[error("the deflate stream does not inflate to its announced {expected} bytes")]
    Inflate {
        /// The announced length.
        expected: u32,
    },
}

/// `bytes` ready to send or store: `(compressed, payload)`, deflated (level
/// 6) only if that is smaller.
pub fn pack(bytes: &[u8]) -> (bool, Vec<u8>) {
    let packed = miniz_oxide::deflate::compress_to_vec(bytes, 6);
    if packed.len() < bytes.len() {
        (true, packed)
    } else {
        (false, bytes.to_vec())
    }
}

/// The `len` bytes inside `payload` (deflated if `compressed`), at most
/// [`MAX_STATE_BYTES`] of them.
pub fn unpack(compressed: bool, payload: &[u8], len: u32) -> Result<Vec<u8>, DeflateError> {
    let mut out = Vec::new();
    unpack_with(compressed, payload, len, MAX_STATE_BYTES, |piece| {
        out.extend_from_slice(piece)
    })?;
    Ok(out)
}

/// Hands the `len` bytes inside `payload` (deflated if `compressed`) to
/// `piece`, in order, in pieces of at most [`PIECE_BYTES`], without holding
/// them: checks a state's length, or hashes it, in a window's worth of
/// memory. Refuses a `len` above `limit` (itself capped at
/// [`MAX_STATE_BYTES`]) before inflating anything. On an error, `piece` may
/// have been given a prefix of the bytes, never more than `len` of them.
pub fn unpack_with(
    compressed: bool,
    payload: &[u8],
    len: u32,
    limit: u32,
    mut piece: impl FnMut(&[u8]),
) -> Result<(), DeflateError> {
    let limit = limit.min(MAX_STATE_BYTES);
    if len > limit {
        return Err(DeflateError::TooLong {
            expected: len,
            limit,
        });
    }
    if !compressed {
        if payload.len() as u64 != u64::from(len) {
            return Err(DeflateError::StoredLength {
                expected: len,
                found: payload.len() as u64,
            });
        }
        payload.chunks(PIECE_BYTES).for_each(piece);
        return Ok(());
    }
    if u64::from(len) > (payload.len() as u64 + 1).saturating_mul(MAX_RATIO) {
        return Err(DeflateError::BeyondRatio {
            expected: len,
            payload: payload.len() as u64,
        });
    }
    let failed = DeflateError::Inflate { expected: len };
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut buffer = vec![0u8; PIECE_BYTES];
    let mut input = payload;
    // Bytes still owed; the stream must end exactly when this reaches 0.
    let mut owed = u64::from(len);
    loop {
        // Never ask for more than is owed plus one byte: one byte too many
        // is enough to call the length a lie.
        let room = buffer
            .len()
            .min(usize::try_from(owed + 1).unwrap_or(usize::MAX));
        let result = inflate(&mut state, input, &mut buffer[..room], MZFlush::None);
        input = &input[result.bytes_consumed..];
        let written = result.bytes_written as u64;
        if written > owed {
            return Err(failed);
        }
        owed -= written;
        if result.bytes_written > 0 {
            piece(&buffer[..result.bytes_written]);
        }
        match result.status {
            Ok(MZStatus::StreamEnd) if owed == 0 => return Ok(()),
            Ok(MZStatus::Ok) if result.bytes_consumed > 0 || result.bytes_written > 0 => {}
            // Ended short, made no progress (the input ran out), or corrupt.
            _ => return Err(failed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_only_when_smaller_and_unpacks_exactly() {
        let zeros = vec![0u8; 10_000];
        let (c, p) = pack(&zeros);
        assert!(c && p.len() < 100);
        assert_eq!(unpack(c, &p, 10_000), Ok(zeros));
        let noise: Vec<u8> = (0..64u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let (c, p) = pack(&noise);
        assert!(!c);
        assert_eq!(unpack(c, &p, 64), Ok(noise));
    }

    #[test]
    fn lies_about_the_length_are_refused() {
        let (_, p) = pack(&[7u8; 5000]);
        assert!(matches!(
            unpack(true, &p, 4999),
            Err(DeflateError::Inflate { .. })
        ));
        assert!(matches!(
            unpack(true, &p, 5001),
            Err(DeflateError::Inflate { .. })
        ));
        assert!(matches!(
            unpack(true, &p, 1 << 20),
            Err(DeflateError::BeyondRatio { .. })
        ));
        assert!(matches!(
            unpack(true, &p, u32::MAX),
            Err(DeflateError::TooLong { .. })
        ));
        assert!(matches!(
            unpack(false, &p, 3),
            Err(DeflateError::StoredLength { .. })
        ));
        assert!(unpack(true, &[0xff, 0x00, 0x13], 10).is_err());
    }

    /// A deflate bomb: a small stream of zeros that inflates within the
    /// ratio but past the limit is refused before a byte is inflated, and
    /// one within the limit is handed on in pieces of at most
    /// `PIECE_BYTES`.
    #[test]
    fn a_bomb_is_refused_by_its_limit_and_pieces_stay_small() {
        let zeros = vec![0u8; 4 << 20];
        let (c, p) = pack(&zeros);
        assert!(c && (p.len() as u64 + 1) * MAX_RATIO >= zeros.len() as u64);
        let mut seen = 0u64;
        let limited = unpack_with(c, &p, 4 << 20, 1 << 20, |b| seen += b.len() as u64);
        assert_eq!(
            limited,
            Err(DeflateError::TooLong {
                expected: 4 << 20,
                limit: 1 << 20
            })
        );
        assert_eq!(seen, 0);
        let mut largest = 0;
        let mut hasher = OrderedSum::default();
        unpack_with(c, &p, 4 << 20, MAX_STATE_BYTES, |b| {
            largest = largest.max(b.len());
            hasher.add(b);
        })
        .unwrap();
        assert!(largest <= PIECE_BYTES);
        assert_eq!(hasher, OrderedSum::of(&zeros));
        assert_eq!(
            unpack(c, &p, MAX_STATE_BYTES + 1),
            Err(DeflateError::TooLong {
                expected: MAX_STATE_BYTES + 1,
                limit: MAX_STATE_BYTES
            })
        );
    }

    /// A length one short of the stream or one past it is refused whatever
    /// the piece boundaries.
    #[test]
    fn lengths_off_by_one_fail_at_every_size() {
        for n in [
            0usize,
            1,
            PIECE_BYTES - 1,
            PIECE_BYTES,
            PIECE_BYTES + 1,
            3 * PIECE_BYTES,
        ] {
            let bytes: Vec<u8> = (0..n).map(|i| (i % 7) as u8).collect();
            let p = miniz_oxide::deflate::compress_to_vec(&bytes, 6);
            assert_eq!(unpack(true, &p, n as u32), Ok(bytes), "{n}");
            assert!(unpack(true, &p, n as u32 + 1).is_err(), "{n} + 1");
            if n > 0 {
                assert!(unpack(true, &p, n as u32 - 1).is_err(), "{n} - 1");
            }
        }
    }

    /// An order-sensitive sum of bytes, to check pieces arrive in order.
    #[derive(Debug, Default, PartialEq, Eq)]
    struct OrderedSum(u64, u64);

    impl OrderedSum {
        fn add(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(b) + 1);
                self.1 += 1;
            }
        }
        fn of(bytes: &[u8]) -> Self {
            let mut s = Self::default();
            s.add(bytes);
            s
        }
    }
}
