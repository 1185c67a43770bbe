//! Lossy state streams of a scene's rigid bodies, for viewers that cannot
//! simulate, for peers that fall back from lockstep, and for state
//! synchronization: bounded quantization, smallest-three orientations,
//! delta compression against acked baselines with motion prediction and an
//! adaptive binary range coder, snapshot interpolation, and the state
//! synchronization machinery.
//!
//! - [`bodies`]: what a game exposes ([`Bodies`], [`BodiesMut`]: body
//!   slots, each a [`BodyState`] and a [`Role`]);
//! - [`quantize`]: one body's state as small integer codes ([`QuantBody`],
//!   [`Bounds`], [`SmallestThree`]);
//! - [`delta`]: a whole snapshot coded against a [`Reference`], at the
//!   levels of the compression ladder ([`Level`]); [`predicted`] holds the
//!   three levels that predict from the acked motion, over the [`coder`]
//!   layer (bit packer or [`range`] coder), and the [`predicted::Models`]
//!   a coding starts from and ends with;
//! - [`stream`]: one sender and one receiver of snapshots with acked
//!   baselines, the models carried over from them, and the sender's rate
//!   [`stream::Budget`];
//! - [`interpolate`]: a viewer's buffer and the clock that picks its delay
//!   from the send interval and the measured jitter; [`smoothing`]: the
//!   visual error smoothing of corrections;
//! - [`sync`]: state synchronization (priority accumulator, per-body
//!   baselines, jitter buffer).
//!
//! Exact resync stays the lossless path; these codes lose up to half a step
//! (1/1 024 m of position at 512 steps per metre), and at
//! [`Level::Scaled`] a moving body up to an eighth of how far it moves in a
//! frame. The crate is integer
//! only, like the deterministic set: sender and receiver hold identical
//! quantized baselines on any machine. It depends on no protocol: the
//! bytes travel however the app likes (`lockstep-protocol` cuts them into
//! datagrams for the snapshot fall-back).
//!
//! `cargo run --release -p lockstep-snapshot --example ladder` prints the
//! compression ladder measured on the recorded cube match, `--example
//! interpolation` a viewer's error against the exact simulation, and
//! `--example state_sync` a state synchronization receiver's divergence;
//! `cargo run --release -p lockstep-testkit --features figures --example
//! snapshot-figures` measures the stream as it runs, every header counted,
//! on the cube match and on the snapshot article's scene.
#![deny(clippy::float_arithmetic)]

pub mod bodies;
mod body;
pub mod coder;
pub mod delta;
mod error;
pub mod interpolate;
mod ladder;
pub mod predicted;
pub mod quantize;
pub mod range;
pub mod smoothing;
pub mod stream;
pub mod sync;

pub use bodies::{Bodies, BodiesMut, Role};
pub use body::BodyState;
pub use error::SnapshotError;
pub use ladder::{Breakdown, Level, Reference};
pub use quantize::{Bounds, QuantBody, SmallestThree};
