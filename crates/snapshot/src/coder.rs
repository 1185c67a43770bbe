//! The symbol layer under the predicted codec: a [`Coder`] writes, reads
//! or measures binary decisions and raw bits, so one `serialize` function
//! serves two back ends — the bit packer ([`Packed`], one bit per decision)
//! and the adaptive binary range coder ([`crate::range`], a fraction of a
//! bit for a decision its context model expects).
//!
//! Invariants: a decision always goes through its adaptive [`Prob`], in
//! every back end, so writer and reader hold the same models after the
//! same symbols; [`Coder::cost`] counts in 1/256 bit, exactly for the bit
//! packer and by the model's `-log2 p` for the range coder.

use lockstep_codec::bits::{BitError, BitStream};

use crate::error::SnapshotError;

/// Bits of a probability (of the bit being 0): 12, as in LZMA's coder.
pub const PROB_BITS: u32 = 12;
/// One in [`PROB_BITS`] fixed point.
pub const PROB_ONE: u32 = 1 << PROB_BITS;
/// How fast a model adapts: each symbol moves it 1/2^ADAPT of the way.
pub const ADAPT_SHIFT: u32 = 4;

/// An adaptive probability that the next decision in its context is
/// `false`, in [`PROB_BITS`] fixed point, never 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prob(pub u16);

impl Default for Prob {
    fn default() -> Prob {
        Prob((PROB_ONE / 2) as u16)
    }
}

impl Prob {
    /// Moves the model toward `bit`.
    pub fn update(&mut self, bit: bool) {
        let p = u32::from(self.0);
        let p = if bit {
            p - (p >> ADAPT_SHIFT)
        } else {
            p + ((PROB_ONE - p) >> ADAPT_SHIFT)
        };
        // Keep both symbols codable.
        self.0 = p.clamp(32, PROB_ONE - 32) as u16;
    }
}

/// A stream of decisions and raw bits: a writer, a reader or a measurer.
pub trait Coder {
    /// `true` when decoding: values passed in are placeholders.
    const READING: bool;

    /// One binary decision in the context of `p` (then `p` adapts).
    fn decide(&mut self, p: &mut Prob, v: &mut bool) -> Result<(), SnapshotError>;

    /// `n` (at most 32) equiprobable bits of `v`.
    fn raw(&mut self, v: &mut u32, n: u32) -> Result<(), SnapshotError>;

    /// What has been coded so far, in 1/256 bit.
    fn cost(&self) -> u64;
}

/// The bit packer as a [`Coder`]: a decision is one bit, the models adapt
/// but do not change the bits spent.
#[derive(Debug)]
pub struct Packed<'a, S: BitStream> {
    /// The bit stream underneath.
    pub stream: &'a mut S,
}

impl<S: BitStream> Coder for Packed<'_, S> {
    const READING: bool = S::READING;

    fn decide(&mut self, p: &mut Prob, v: &mut bool) -> Result<(), SnapshotError> {
        self.stream.bool(v)?;
        p.update(*v);
        Ok(())
    }

    fn raw(&mut self, v: &mut u32, n: u32) -> Result<(), SnapshotError> {
        let mut x = u64::from(*v);
        self.stream.bits(&mut x, n.min(32))?;
        *v = x as u32;
        Ok(())
    }

    fn cost(&self) -> u64 {
        self.stream.bit_position() * 256
    }
}

impl From<BitError> for SnapshotError {
    fn from(e: BitError) -> SnapshotError {
        SnapshotError::Bits(e)
    }
}
