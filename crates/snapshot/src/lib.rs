//! Lossy snapshots of a scene's rigid bodies, for viewers that cannot
//! simulate and for peers that fall back from lockstep: bounded
//! quantization, smallest-three orientations, delta compression against an
//! acked baseline with relative indices, positions and orientations, and
//! snapshot interpolation.
//!
//! - [`quantize`]: one body's state as small integer codes ([`QuantBody`],
//!   [`Bounds`], [`SmallestThree`]);
//! - [`delta`]: a whole snapshot coded against a baseline, at the levels
//!   of the compression ladder ([`Level`]);
//! - [`interpolate`]: a viewer's buffer, sampled a playout delay behind the
//!   newest snapshot.
//!
//! Exact resync stays the lossless path; these codes lose up to half a step
//! (1/1 024 m of position at 512 steps per metre). The crate is integer
//! only, like the deterministic set: sender and receiver hold identical
//! quantized baselines on any machine.
//!
//! `cargo run --release -p lockstep-snapshot --example ladder` prints the
//! compression ladder measured on the recorded cube match, and `--example
//! interpolation` a viewer's error against the exact simulation.
#![deny(clippy::float_arithmetic)]

pub mod bodies;
pub mod coder;
pub mod delta;
mod error;
pub mod interpolate;
pub mod predicted;
pub mod quantize;
pub mod range;
pub mod smoothing;
pub mod stream;
pub mod sync;

pub use bodies::{Bodies, BodiesMut, BodyState, Role};
pub use delta::{Breakdown, Level, Reference};
pub use error::SnapshotError;
pub use quantize::{Bounds, QuantBody, SmallestThree};
