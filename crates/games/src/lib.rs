//! The games shipped with lockstep, written only against the public APIs of
//! `lockstep-sim` and `lockstep-physics`, as a studio would write its own.
#![deny(clippy::float_arithmetic, clippy::float_cmp)]
