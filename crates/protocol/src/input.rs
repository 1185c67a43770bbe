//! What the protocol needs from a game's input: the [`Input`] trait.
//!
//! The session is generic over the input type and never looks inside one; it
//! compares inputs for equality (the 1-bit "same as previous" encoding),
//! clones them into frames, and serializes them through a
//! [`BitStream`]. Invariants an implementation must keep:
//! - `serialize` writes at most [`Input::MAX_BITS`] bits, and the same value
//!   always the same bits (so equal inputs have equal encodings);
//! - reading rejects every bit pattern that writing never produces, with a
//!   [`BitError`] (use [`BitStream::ranged`]), so decoding is canonical;
//! - [`Input::schema_hash`] changes whenever the encoding does: peers whose
//!   hashes differ refuse each other at the handshake.

use crate::bits::{BitError, BitStream};
use core::fmt::Debug;
use lockstep_fx::Checksum;

/// One player's input for one frame.
pub trait Input: Clone + PartialEq + Eq + Default + Debug {
    /// The most bits [`Input::serialize`] writes.
    const MAX_BITS: u32;

    /// A hash of the input's encoding, compared at the handshake. Derive it
    /// with [`schema_hash`] from a description that names every field and
    /// width, and change the description with the encoding.
    fn schema_hash() -> u64;

    /// Writes, reads or measures the input (see [`BitStream`]).
    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError>;
}

/// The 64-bit schema hash of a textual schema description: the short form of
/// its BLAKE3 digest.
pub fn schema_hash(description: &str) -> u64 {
    Checksum::of(description.as_bytes()).short().0
}
