//! The bit-level encodings that lockstep's wire protocol and its replay logs
//! share, each written once:
//!
//! - [`bits`]: the bit packer, one [`BitStream`] trait that writes, reads
//!   and measures, so every message has a single `serialize` function; it
//!   also codes a 32-byte [`Checksum`](lockstep_fx::Checksum) field;
//! - [`input`]: the [`Input`] trait every game's input implements (a bounded
//!   bit encoding and a schema hash) and the 1-bit "same as the previous
//!   input" coding that makes a held input cost one bit;
//! - [`orders`]: [`Orders`], an input that carries one-shot [`Command`]s
//!   beside what is held, each applied once on the frame it rides in;
//! - [`deflate`]: compression of exact states with a bounded, checked
//!   inflate, so a hostile length or a deflate bomb fails instead of
//!   allocating.
//!
//! Like the other deterministic crates, it is integer-only and reads no
//! clock; every decoder is safe on untrusted bytes.
#![deny(clippy::float_arithmetic)]

pub mod bits;
pub mod deflate;
pub mod input;
pub mod orders;

pub use bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter};
pub use input::{Input, schema_hash};
pub use orders::{Command, Commanded, MAX_COMMANDS, Orders};
