//! The bit packer: one [`BitStream`] trait with three implementations — a
//! [`BitWriter`], a [`BitReader`] and a [`BitMeasurer`] — so each message has
//! a single `serialize` function that writes, reads and measures it (the
//! unified-serialize pattern of Glenn Fiedler's "Serialization Strategies").
//!
//! Invariants:
//! - Bits are packed least-significant first into each byte; a message ends
//!   with zero padding up to the next byte boundary.
//! - [`BitReader`] is safe on untrusted bytes: every read is bounds-checked,
//!   every ranged read checks its range, and [`BitReader::finish`] rejects
//!   non-zero padding and trailing bytes. Nothing panics; errors carry the bit
//!   offset where decoding stopped.
//! - A value is always written with the width the reader will use, so
//!   `measure == write length` bit for bit.

/// Why a bit stream could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BitError {
    /// The input ended inside a field.
    #[error("input ends at bit {bit}: {needed} more bit(s) needed")]
    UnexpectedEnd {
        /// Bit offset where the field starts.
        bit: u64,
        /// Bits the field needs beyond the end.
        needed: u64,
    },
    /// A field holds a value outside its range.
    #[error("{what} out of range at bit {bit}")]
    OutOfRange {
        /// Bit offset of the field.
        bit: u64,
        /// What was being read.
        what: &'static str,
    },
    /// Padding bits before a byte boundary were not zero.
    #[error("non-zero padding at bit {bit}")]
    NonZeroPadding {
        /// Bit offset of the padding.
        bit: u64,
    },
    /// Whole bytes remain after the message.
    #[error("{extra} trailing byte(s) after bit {bit}")]
    TrailingBytes {
        /// Bit offset where the message ended.
        bit: u64,
        /// Extra bytes.
        extra: u64,
    },
}

use lockstep_fx::Checksum;

/// Bits needed to hold every value in `0..=max`.
pub const fn bits_for(max: u64) -> u32 {
    64 - max.leading_zeros()
}

/// A stream a message serializes itself through: a writer, a reader or a
/// measurer. Each method takes the value by `&mut`: writers and measurers read
/// it, readers overwrite it.
pub trait BitStream {
    /// `true` for [`BitReader`]: the values passed in are placeholders.
    const READING: bool;

    /// Serializes the low `n` bits of `value` (`n <= 64`). A reader checks
    /// nothing beyond the bit count here; use [`BitStream::ranged`] for ranges.
    fn bits(&mut self, value: &mut u64, n: u32) -> Result<(), BitError>;

    /// Zero bits up to the next byte boundary (checked to be zero on read).
    fn align(&mut self) -> Result<(), BitError>;

    /// Raw bytes at a byte boundary (call [`BitStream::align`] first): a
    /// reader replaces `bytes` with the next `len` bytes; a writer writes
    /// `bytes` and ignores `len`, which must equal `bytes.len()`.
    fn bytes(&mut self, bytes: &mut Vec<u8>, len: usize) -> Result<(), BitError>;

    /// Bits consumed or produced so far.
    fn bit_position(&self) -> u64;

    /// One bit.
    fn bool(&mut self, v: &mut bool) -> Result<(), BitError> {
        let mut x = u64::from(*v);
        self.bits(&mut x, 1)?;
        *v = x != 0;
        Ok(())
    }

    /// A `u8` in 8 bits.
    fn u8(&mut self, v: &mut u8) -> Result<(), BitError> {
        let mut x = u64::from(*v);
        self.bits(&mut x, 8)?;
        *v = x as u8;
        Ok(())
    }

    /// A `u16` in 16 bits.
    fn u16(&mut self, v: &mut u16) -> Result<(), BitError> {
        let mut x = u64::from(*v);
        self.bits(&mut x, 16)?;
        *v = x as u16;
        Ok(())
    }

    /// A `u32` in 32 bits.
    fn u32(&mut self, v: &mut u32) -> Result<(), BitError> {
        let mut x = u64::from(*v);
        self.bits(&mut x, 32)?;
        *v = x as u32;
        Ok(())
    }

    /// A `u64` in 64 bits.
    fn u64(&mut self, v: &mut u64) -> Result<(), BitError> {
        self.bits(v, 64)
    }

    /// A 32-byte checksum, as four little-endian `u64` words.
    fn checksum(&mut self, c: &mut Checksum) -> Result<(), BitError> {
        let mut bytes = *c.as_bytes();
        for word in bytes.chunks_exact_mut(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let mut v = u64::from_le_bytes(w);
            self.u64(&mut v)?;
            word.copy_from_slice(&v.to_le_bytes());
        }
        *c = Checksum::from_bytes(bytes);
        Ok(())
    }

    /// A value in `min..=max`, written as `v - min` in [`bits_for`]`(max - min)`
    /// bits. A reader returns [`BitError::OutOfRange`] for a value above `max`;
    /// a writer given a value outside the range writes it clamped (a caller
    /// bug that the decoder's canonical check then exposes).
    fn ranged(
        &mut self,
        v: &mut u32,
        min: u32,
        max: u32,
        what: &'static str,
    ) -> Result<(), BitError> {
        let hi = max.max(min);
        let span = u64::from(hi - min);
        let bit = self.bit_position();
        let mut x = u64::from((*v).clamp(min, hi) - min);
        self.bits(&mut x, bits_for(span))?;
        if x > span {
            return Err(BitError::OutOfRange { bit, what });
        }
        *v = min + x as u32;
        Ok(())
    }
}

/// Writes bits into a growing byte buffer.
#[derive(Debug, Clone, Default)]
pub struct BitWriter {
    buf: Vec<u8>,
    scratch: u64,
    scratch_bits: u32,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> BitWriter {
        BitWriter::default()
    }

    /// Pads to a byte boundary with zeros and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        let _ = self.align();
        self.buf
    }

    fn flush_bytes(&mut self) {
        while self.scratch_bits >= 8 {
            self.buf.push(self.scratch as u8);
            self.scratch >>= 8;
            self.scratch_bits -= 8;
        }
    }
}

impl BitStream for BitWriter {
    const READING: bool = false;

    fn bits(&mut self, value: &mut u64, n: u32) -> Result<(), BitError> {
        debug_assert!(n <= 64);
        if n == 0 {
            return Ok(());
        }
        let v = if n == 64 {
            *value
        } else {
            *value & ((1u64 << n) - 1)
        };
        // Write in two halves of at most 32 bits so the scratch never overflows.
        let (lo_n, hi_n) = if n > 32 { (32, n - 32) } else { (n, 0) };
        self.scratch |= (v & 0xffff_ffff) << self.scratch_bits;
        self.scratch_bits += lo_n;
        self.flush_bytes();
        if hi_n > 0 {
            self.scratch |= (v >> 32) << self.scratch_bits;
            self.scratch_bits += hi_n;
            self.flush_bytes();
        }
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        if self.scratch_bits > 0 {
            self.buf.push(self.scratch as u8);
            self.scratch = 0;
            self.scratch_bits = 0;
        }
        Ok(())
    }

    fn bytes(&mut self, bytes: &mut Vec<u8>, _len: usize) -> Result<(), BitError> {
        self.align()?;
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    fn bit_position(&self) -> u64 {
        self.buf.len() as u64 * 8 + u64::from(self.scratch_bits)
    }
}

/// Counts the bits a message would take without writing them.
#[derive(Debug, Clone, Copy, Default)]
pub struct BitMeasurer {
    bits: u64,
}

impl BitMeasurer {
    /// A measurer at zero bits.
    pub fn new() -> BitMeasurer {
        BitMeasurer::default()
    }

    /// Bits counted so far.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Whole bytes the message takes once padded.
    pub fn bytes(&self) -> u64 {
        self.bits.div_ceil(8)
    }
}

impl BitStream for BitMeasurer {
    const READING: bool = false;

    fn bits(&mut self, _value: &mut u64, n: u32) -> Result<(), BitError> {
        self.bits += u64::from(n);
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        self.bits = self.bits.div_ceil(8) * 8;
        Ok(())
    }

    fn bytes(&mut self, bytes: &mut Vec<u8>, _len: usize) -> Result<(), BitError> {
        self.align()?;
        self.bits += bytes.len() as u64 * 8;
        Ok(())
    }

    fn bit_position(&self) -> u64 {
        self.bits
    }
}

/// Reads bits from untrusted bytes; never panics.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    /// Next bit to read, counted from the start.
    bit: u64,
}

impl<'a> BitReader<'a> {
    /// A reader at the first bit of `bytes`.
    pub fn new(bytes: &'a [u8]) -> BitReader<'a> {
        BitReader { bytes, bit: 0 }
    }

    fn total_bits(&self) -> u64 {
        self.bytes.len() as u64 * 8
    }

    /// Succeeds only at the end of the input, after zero padding.
    pub fn finish(mut self) -> Result<(), BitError> {
        self.align()?;
        let end = self.bit / 8;
        let extra = (self.bytes.len() as u64).saturating_sub(end);
        if extra > 0 {
            return Err(BitError::TrailingBytes {
                bit: self.bit,
                extra,
            });
        }
        Ok(())
    }
}

impl BitStream for BitReader<'_> {
    const READING: bool = true;

    fn bits(&mut self, value: &mut u64, n: u32) -> Result<(), BitError> {
        debug_assert!(n <= 64);
        let start = self.bit;
        let left = self.total_bits() - start;
        if u64::from(n) > left {
            return Err(BitError::UnexpectedEnd {
                bit: start,
                needed: u64::from(n) - left,
            });
        }
        let mut out = 0u64;
        let mut got = 0u32;
        while got < n {
            let byte_index = (self.bit / 8) as usize;
            let offset = (self.bit % 8) as u32;
            let take = (8 - offset).min(n - got);
            let byte = u64::from(self.bytes[byte_index]);
            let chunk = (byte >> offset) & ((1u64 << take) - 1);
            out |= chunk << got;
            got += take;
            self.bit += u64::from(take);
        }
        *value = out;
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        let pad = ((8 - self.bit % 8) % 8) as u32;
        if pad > 0 {
            let at = self.bit;
            let mut v = 0;
            self.bits(&mut v, pad)?;
            if v != 0 {
                return Err(BitError::NonZeroPadding { bit: at });
            }
        }
        Ok(())
    }

    fn bytes(&mut self, bytes: &mut Vec<u8>, len: usize) -> Result<(), BitError> {
        self.align()?;
        let start = (self.bit / 8) as usize;
        let left = self.bytes.len() - start;
        if len > left {
            return Err(BitError::UnexpectedEnd {
                bit: self.bit,
                needed: (len - left) as u64 * 8,
            });
        }
        bytes.clear();
        bytes.extend_from_slice(&self.bytes[start..start + len]);
        self.bit += len as u64 * 8;
        Ok(())
    }

    fn bit_position(&self) -> u64 {
        self.bit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn widths() {
        assert_eq!(bits_for(0), 0);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(7), 3);
        assert_eq!(bits_for(8), 4);
        assert_eq!(bits_for(u64::MAX), 64);
    }

    #[test]
    fn lsb_first_layout() {
        let mut w = BitWriter::new();
        w.bits(&mut 0b1, 1).unwrap();
        w.bits(&mut 0b011, 3).unwrap();
        w.bits(&mut 0xabc, 12).unwrap();
        assert_eq!(w.finish(), vec![0b1100_0111, 0xab]);
    }

    #[test]
    fn ranged_rejects_out_of_range() {
        // 5 in a 0..=4 field: 3 bits hold it, the range check refuses it.
        let bytes = [0b101u8];
        let mut r = BitReader::new(&bytes);
        let mut v = 0;
        assert_eq!(
            r.ranged(&mut v, 0, 4, "test"),
            Err(BitError::OutOfRange {
                bit: 0,
                what: "test"
            })
        );
    }

    #[test]
    fn padding_and_trailing() {
        let mut r = BitReader::new(&[0b10]);
        r.bits(&mut 0, 1).unwrap();
        assert_eq!(r.finish(), Err(BitError::NonZeroPadding { bit: 1 }));
        let mut r = BitReader::new(&[1, 0]);
        r.bits(&mut 0, 1).unwrap();
        assert_eq!(
            r.finish(),
            Err(BitError::TrailingBytes { bit: 8, extra: 1 })
        );
    }

    proptest! {
        #[test]
        fn round_trip(fields in proptest::collection::vec((any::<u64>(), 0u32..=64), 0..40)) {
            let mut w = BitWriter::new();
            let mut m = BitMeasurer::new();
            for &(v, n) in &fields {
                w.bits(&mut v.clone(), n).unwrap();
                BitStream::bits(&mut m, &mut v.clone(), n).unwrap();
            }
            prop_assert_eq!(w.bit_position(), m.bits());
            let bytes = w.finish();
            prop_assert_eq!(bytes.len() as u64, m.bytes());
            let mut r = BitReader::new(&bytes);
            for &(v, n) in &fields {
                let mut x = 0;
                r.bits(&mut x, n).unwrap();
                let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                prop_assert_eq!(x, v & mask);
            }
            prop_assert!(r.finish().is_ok());
        }
    }
}
