//! Deflate for exact states (resync transfers, replay-log keyframes): a state
//! is sent compressed only when that is smaller, and inflated only up to the
//! length announced beside it.
//!
//! Invariants: [`unpack`] never allocates more than the announced length,
//! refuses an announced length that deflate's maximum ratio (1032:1) cannot
//! reach from the payload, and returns exactly `len` bytes or an error.

/// Deflate's largest compression ratio: an announced length beyond
/// `(payload + 1) × 1032` is a lie.
pub const MAX_RATIO: u64 = 1032;

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

/// The `len` bytes inside `payload` (deflated if `compressed`).
pub fn unpack(compressed: bool, payload: &[u8], len: u32) -> Result<Vec<u8>, DeflateError> {
    if !compressed {
        if payload.len() as u64 != u64::from(len) {
            return Err(DeflateError::StoredLength {
                expected: len,
                found: payload.len() as u64,
            });
        }
        return Ok(payload.to_vec());
    }
    if u64::from(len) > (payload.len() as u64 + 1).saturating_mul(MAX_RATIO) {
        return Err(DeflateError::BeyondRatio {
            expected: len,
            payload: payload.len() as u64,
        });
    }
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(payload, len as usize)
        .map_err(|_| DeflateError::Inflate { expected: len })?;
    if bytes.len() as u64 != u64::from(len) {
        return Err(DeflateError::Inflate { expected: len });
    }
    Ok(bytes)
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
            unpack(true, &p, u32::MAX),
            Err(DeflateError::BeyondRatio { .. })
        ));
        assert!(matches!(
            unpack(false, &p, 3),
            Err(DeflateError::StoredLength { .. })
        ));
        assert!(unpack(true, &[0xff, 0x00, 0x13], 10).is_err());
    }
}
