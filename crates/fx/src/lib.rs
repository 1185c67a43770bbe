//! Deterministic fixed-point math for lockstep.
//!
//! Everything here is integer-only and gives the same bits on every target
//! (x86_64, aarch64, s390x big-endian, i686 32-bit), in debug and release:
//!
//! - [`Fx`]: a signed Q32.32 scalar with saturating arithmetic.
//! - [`Vec3`], [`Quat`], [`Mat3`]: the linear algebra of a rigid-body solver;
//!   [`Vec2`] for games on a plane.
//! - `sqrt`, `sin`, `cos`, `sin_cos`, `atan2`, `acos`, `asin` on [`Fx`], each
//!   with a documented and tested maximum error in LSB.
//! - [`Wide`]: exact Q64.64 products and their rounding, saturating or
//!   wrapping ([`wide`]), the one home of the engine's wide arithmetic;
//!   [`lanes`] gives the wrapping products four at a time, bit for bit.
//! - [`Rng`]: a seeded, versioned PCG32 generator with published test vectors.
//! - [`StateWriter`] / [`StateReader`]: canonical little-endian encoding of
//!   state into a BLAKE3 [`Checksum`] or an exact saved state buffer; the
//!   [`Canonical`] trait, with its encodings of `Vec`, `Option` and arrays
//!   (derived for structs and enums by the `lockstep-derive` crate);
//!   [`FrameHasher`] checksums a state every frame, rehashing only what
//!   changed (the same BLAKE3 digest).
//! - [`fork_join()`]: shares work between the calling thread and a pool of
//!   helper threads that stay between calls, running on the calling thread
//!   what no helper is free (or can be started) for; [`stages()`] runs a
//!   sequence of stages of independent items on several threads, each
//!   stage finished before the next.
//!
//! ```
//! use lockstep_fx::{Fx, Vec3};
//!
//! const GRAVITY: Fx = Fx::lit("-9.81");
//! let v = Vec3::new(Fx::from_int(3), Fx::ZERO, Fx::from_int(4));
//! assert_eq!(v.length(), Fx::from_int(5));
//! assert!(GRAVITY.is_negative());
//! ```
#![deny(clippy::float_arithmetic, clippy::float_cmp)]

mod checksum;
mod encoding;
mod fork_join;
mod frame_hasher;
pub mod lanes;
mod mat3;
mod norm;
mod quat;
mod rng;
mod scalar;
#[cfg(feature = "serde")]
mod serde_impls;
mod sqrt;
mod stages;
mod trig;
mod vec2;
mod vec3;
pub mod wide;

pub use checksum::{Checksum, ParseChecksumError, ShortChecksum};
pub use encoding::{
    ByteCounter, Canonical, DecodeError, HashSink, Mark, PerSeat, Sink, StateReader, StateWriter,
    decode_vec,
};
pub use fork_join::fork_join;
pub use frame_hasher::FrameHasher;
pub use mat3::Mat3;
pub use quat::Quat;
pub use rng::Rng;
pub use scalar::{FRAC_BITS, Fx, ParseFxError};
pub use stages::stages;
pub use vec2::Vec2;
pub use vec3::Vec3;
pub use wide::Wide;
