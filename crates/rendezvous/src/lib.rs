//! How players behind NATs find each other: the match code a person reads
//! aloud, and (as they are built) the rendezvous that files a match under
//! its code and introduces a host and its joiners, and the relay that
//! forwards the sealed datagrams no direct path carries.
//!
//! Like the rest of lockstep's decisions, everything here is sans-IO: no
//! socket, no clock, no randomness of its own; datagrams, time and random
//! bytes come in as arguments.
//!
//! The parts, one file each:
//! - `code.rs`: [`MatchCode`], the ten-symbol invitation, and its public
//!   part [`CodeId`], all a rendezvous ever sees of it.
#![deny(clippy::float_arithmetic)]

pub mod code;

pub use code::{CodeError, CodeId, MatchCode};
