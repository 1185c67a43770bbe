//! One player's input for one frame ([`CubesInput`]): six buttons, as in the
//! cube demo of Glenn Fiedler's networked-physics articles.
//!
//! Invariants: the bit encoding is exactly six bits, one per button in the
//! order left, right, up, down, space, z (the order of
//! [`CubesInput::to_bits`]), and [`CubesInput::schema_hash`] names that
//! order, so a peer built with another layout is refused at the handshake.

use lockstep_codec::bits::{BitError, BitStream};
use lockstep_codec::input::{Input, schema_hash};

/// The buttons a player holds during one frame.
///
/// Directions are in world axes: `left`/`right` push along −x/+x, `up`/`down`
/// along −z/+z (away from / towards a camera looking down −z).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CubesInput {
    /// Push towards −x.
    pub left: bool,
    /// Push towards +x.
    pub right: bool,
    /// Push towards −z.
    pub up: bool,
    /// Push towards +z.
    pub down: bool,
    /// Lift the cube and blow nearby cubes away.
    pub space: bool,
    /// Katamari mode: touched cubes stick to the player's cube.
    pub z: bool,
}

impl CubesInput {
    /// No button held (what a missing input counts as).
    pub const NONE: CubesInput = CubesInput::from_bits(0);

    /// The buttons from six bits, LSB first: left, right, up, down, space, z
    /// (higher bits are ignored).
    pub const fn from_bits(bits: u8) -> CubesInput {
        CubesInput {
            left: bits & 1 != 0,
            right: bits & 2 != 0,
            up: bits & 4 != 0,
            down: bits & 8 != 0,
            space: bits & 16 != 0,
            z: bits & 32 != 0,
        }
    }

    /// The six bits, LSB first: left, right, up, down, space, z.
    pub const fn to_bits(self) -> u8 {
        self.left as u8
            | (self.right as u8) << 1
            | (self.up as u8) << 2
            | (self.down as u8) << 3
            | (self.space as u8) << 4
            | (self.z as u8) << 5
    }
}

impl Input for CubesInput {
    const MAX_BITS: u32 = 6;

    fn schema_hash() -> u64 {
        schema_hash(
            "lockstep-games cubes CubesInput v1: 6 x bool = left, right, up, down, space, z",
        )
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        s.bool(&mut self.left)?;
        s.bool(&mut self.right)?;
        s.bool(&mut self.up)?;
        s.bool(&mut self.down)?;
        s.bool(&mut self.space)?;
        s.bool(&mut self.z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_codec::bits::{BitMeasurer, BitReader, BitWriter};

    #[test]
    fn every_input_round_trips_in_six_bits() {
        for bits in 0..64u8 {
            let input = CubesInput::from_bits(bits);
            assert_eq!(input.to_bits(), bits);
            let mut m = BitMeasurer::new();
            let mut i = input;
            i.serialize(&mut m).unwrap();
            assert_eq!(m.bits(), 6);
            let mut w = BitWriter::new();
            let mut i = input;
            i.serialize(&mut w).unwrap();
            let bytes = w.finish();
            let mut back = CubesInput::NONE;
            let mut r = BitReader::new(&bytes);
            back.serialize(&mut r).unwrap();
            r.finish().unwrap();
            assert_eq!(back, input);
        }
    }
}
