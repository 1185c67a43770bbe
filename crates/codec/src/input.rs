//! What the wire and the replay log need from a game's input: the [`Input`]
//! trait, and the 1-bit "same as the previous input" coding both use.
//!
//! The protocol and the replay log are generic over the input type and never
//! look inside one; they compare inputs for equality (the 1-bit coding),
//! clone them into frames, and serialize them through a [`BitStream`].
//! Invariants an implementation must keep:
//! - `serialize` writes at most [`Input::MAX_BITS`] bits, and the same value
//!   always the same bits (so equal inputs have equal encodings);
//! - reading rejects every bit pattern that writing never produces, with a
//!   [`BitError`] (use [`BitStream::ranged`]), so decoding is canonical;
//! - [`Input::schema_hash`] changes whenever the encoding does: peers whose
//!   hashes differ refuse each other at the handshake.

use crate::bits::{BitError, BitMeasurer, BitStream};
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

    /// The input of a seat that has left the match, for every frame after
    /// the last one the remaining peers agreed it played. This is how a
    /// game learns that a player left: deterministically, as part of the
    /// input stream (and so of the replay log). The default is
    /// [`Default::default`] (no buttons, no command); a game that wants to
    /// react (hand the units to an AI, freeze a cube) gives it a value a
    /// player cannot send.
    fn absent() -> Self {
        Self::default()
    }

    /// The input predicted for a later frame when this is a seat's newest
    /// one (rollback mode steps ahead with it until the real one arrives).
    /// The default repeats it: a held input stays held. An input carrying
    /// one-shot commands predicts them away ([`Orders`](crate::orders::Orders)
    /// does), so a prediction never applies a command twice.
    fn repeat(&self) -> Self {
        self.clone()
    }
}

/// A ready-made input: six buttons (left, right, up, down, fire, jump) in 6
/// bits, as in the cube demo of Glenn Fiedler's networked-physics articles.
/// Small games, examples and tests use it as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Buttons(pub u8);

impl Buttons {
    /// Whether button `i` (0 = left … 5 = jump) is held.
    pub const fn held(self, i: u8) -> bool {
        self.0 & (1 << i) != 0
    }

    /// A scripted player for tests and examples: seat `seat`'s buttons at
    /// `frame`, a seeded pattern that changes every 20 frames (so most
    /// frames repeat the previous input, as a human's do).
    pub fn scripted(seat: u8, frame: u32) -> Buttons {
        let mut rng = lockstep_fx::Rng::for_frame(u64::from(seat) + 1, u64::from(frame / 20));
        Buttons((rng.next_u32() & 63) as u8)
    }
}

impl Input for Buttons {
    const MAX_BITS: u32 = 6;

    fn schema_hash() -> u64 {
        // The description is frozen: recorded logs and wire vectors hold
        // its hash.
        schema_hash(
            "lockstep-protocol testgame Buttons v1: u6 = left|right|up|down|fire|jump, LSB first",
        )
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let mut v = u32::from(self.0);
        s.ranged(&mut v, 0, 63, "buttons")?;
        self.0 = v as u8;
        Ok(())
    }
}

/// Nothing held: the held part of an input made only of commands
/// (`Orders<(), MyCommand>`, a game driven by orders alone). Zero bits.
impl Input for () {
    const MAX_BITS: u32 = 0;

    fn schema_hash() -> u64 {
        schema_hash("lockstep nothing held: 0 bits")
    }

    fn serialize<S: BitStream>(&mut self, _s: &mut S) -> Result<(), BitError> {
        Ok(())
    }
}

/// The 64-bit schema hash of a textual schema description: the short form of
/// its BLAKE3 digest.
pub fn schema_hash(description: &str) -> u64 {
    Checksum::of(description.as_bytes()).short().0
}

/// Codes one player's `input` after `prev`, the same player's input for the
/// frame before (`None`: there is none, the input goes in full): one bit
/// "changed", and the input only if it changed. A held input costs one bit.
/// Returns whether the bit said "changed"; a reader that finds a "changed"
/// input equal to `prev` holds a non-canonical encoding and should refuse it.
pub fn serialize_after<I: Input, S: BitStream>(
    s: &mut S,
    input: &mut I,
    prev: Option<&I>,
) -> Result<bool, BitError> {
    let Some(prev) = prev else {
        input.serialize(s)?;
        return Ok(true);
    };
    let mut changed = !S::READING && input != prev;
    s.bool(&mut changed)?;
    if !changed {
        if S::READING {
            *input = prev.clone();
        }
        return Ok(false);
    }
    if S::READING {
        *input = I::default();
    }
    input.serialize(s)?;
    Ok(true)
}

/// Writes or reads `count` inputs of one player for consecutive frames, each
/// coded after the one before ([`serialize_after`]). When reading, `inputs`
/// is replaced by the `count` inputs read.
pub fn serialize_run<I: Input, S: BitStream>(
    s: &mut S,
    inputs: &mut Vec<I>,
    count: u32,
) -> Result<(), BitError> {
    if S::READING {
        inputs.clear();
        for i in 0..count as usize {
            let mut input = I::default();
            serialize_after(s, &mut input, i.checked_sub(1).map(|p| &inputs[p]))?;
            inputs.push(input);
        }
        return Ok(());
    }
    for i in 0..(count as usize).min(inputs.len()) {
        let (before, rest) = inputs.split_at_mut(i);
        serialize_after(s, &mut rest[0], before.last())?;
    }
    Ok(())
}

/// How many of `inputs`, from the first, fit in `budget` bits when coded
/// as a run ([`serialize_run`]). A sender whose inputs can be large (one-shot
/// commands ride in them) sends that many and the rest in later packets:
/// the run always starts at the receiver's oldest missing frame, so every
/// packet that carries one input makes progress.
pub fn run_that_fits<I: Input>(inputs: &[I], budget: u64) -> usize {
    // Every input costs at most `MAX_BITS` and a flag: when even that fits,
    // nothing needs measuring (always, for small inputs, on the hot path
    // of every packet).
    if inputs.len() as u64 * (u64::from(I::MAX_BITS) + 1) <= budget {
        return inputs.len();
    }
    let mut m = BitMeasurer::new();
    for (i, input) in inputs.iter().enumerate() {
        let mut copy = input.clone();
        let prev = i.checked_sub(1).map(|p| &inputs[p]);
        if serialize_after(&mut m, &mut copy, prev).is_err() || m.bits() > budget {
            return i;
        }
    }
    inputs.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_cut_where_the_next_input_would_pass_the_budget() {
        // 6 bits, then 1 + 6 for each change and 1 for each repeat.
        let run = [Buttons(1), Buttons(1), Buttons(2), Buttons(2)];
        assert_eq!(run_that_fits(&run, 6), 1);
        assert_eq!(run_that_fits(&run, 7), 2);
        assert_eq!(run_that_fits(&run, 13), 2);
        assert_eq!(run_that_fits(&run, 14), 3);
        assert_eq!(run_that_fits(&run, 15), 4);
        assert_eq!(run_that_fits(&run, 5), 0);
        assert_eq!(run_that_fits::<Buttons>(&[], 0), 0);
    }
}
