//! Test scaffolding for lockstep, kept out of the library crates
//! (`publish = false`, used only by tests, benches and tools).
//!
//! - [`mesh`]: plays a whole match of real [`Peer`](lockstep_peer::Peer)s
//!   of a shipped game over the simulated network, on virtual time, with
//!   faults injected on cue (a flipped bit, a vanished peer), and reports
//!   every peer's checksum stream, events, counters and replay log.
#![deny(clippy::float_arithmetic)]

pub mod mesh;
