//! [`SnapshotError`]: why untrusted snapshot bytes were refused.

use lockstep_codec::bits::BitError;

/// Why a snapshot, a stream payload or a state-sync packet could not be
/// decoded. Decoders return one of these for any input; none panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// A bit-packed field could not be read.
    #[error(transparent)]
    Bits(BitError),
    /// A decoded value falls outside what the bounds allow.
    #[error("{what} out of range")]
    OutOfRange {
        /// What was being decoded.
        what: &'static str,
    },
    /// Bytes remain after the snapshot ends.
    #[error("{extra} trailing byte(s) after the snapshot")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
    /// The payload codes against a baseline the receiver does not hold.
    #[error("baseline frame {frame} is not held")]
    MissingBaseline {
        /// The frame named.
        frame: u32,
    },
    /// The baseline's body count is not the snapshot's.
    #[error("{found} bodies, expected {expected}")]
    BodyCount {
        /// Bodies the payload or caller has.
        found: u64,
        /// Bodies the baseline has.
        expected: u64,
    },
}
