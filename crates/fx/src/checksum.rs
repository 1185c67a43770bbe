//! The state checksum: a 32-byte BLAKE3 digest of a canonical encoding, and
//! its 8-byte short form sent every frame.
//!
//! Invariant: the short form is the first 8 bytes of the full digest read as a
//! little-endian `u64`, so a peer holding the full checksum can always check a
//! short one.

use core::fmt;
use core::str::FromStr;

/// A BLAKE3 digest of a canonically encoded state.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Checksum([u8; 32]);

/// The first 8 bytes of a [`Checksum`], cheap to send every frame.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ShortChecksum(pub u64);

impl Checksum {
    /// Wraps 32 digest bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Checksum {
        Checksum(bytes)
    }

    /// The digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// BLAKE3 of `bytes` (e.g. of an exact saved state).
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum(*blake3::hash(bytes).as_bytes())
    }

    /// The 8-byte short form.
    pub fn short(&self) -> ShortChecksum {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        ShortChecksum(u64::from_le_bytes(b))
    }
}

impl fmt::Display for Checksum {
    /// 64 lowercase hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Checksum({self})")
    }
}

impl fmt::Display for ShortChecksum {
    /// 16 lowercase hex digits of the little-endian bytes, i.e. the first 16
    /// digits of the full checksum's hex form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0.to_le_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ShortChecksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShortChecksum({self})")
    }
}

/// Why a string is not a 64-digit hex checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a checksum is 64 hex digits")]
pub struct ParseChecksumError;

impl FromStr for Checksum {
    type Err = ParseChecksumError;
    fn from_str(s: &str) -> Result<Checksum, ParseChecksumError> {
        let s = s.as_bytes();
        if s.len() != 64 {
            return Err(ParseChecksumError);
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.chunks_exact(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16).ok_or(ParseChecksumError)?;
            let lo = (pair[1] as char).to_digit(16).ok_or(ParseChecksumError)?;
            out[i] = (hi * 16 + lo) as u8;
        }
        Ok(Checksum(out))
    }
}
