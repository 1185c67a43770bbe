//! Test scaffolding for lockstep, kept out of the library crates
//! (`publish = false`, used only by tests, benches and tools).
//!
//! - [`crafted`]: replay logs crafted to make a reader take more memory than
//!   the file is worth (deflate bombs in keyframes) or to seek past a
//!   header the game refuses;
//! - [`netsim`]: a seeded network on virtual time (latency, jitter, random
//!   or burst loss, duplication, reordering, MTU), or a TCP-like stream
//!   ([`tcp_model`]) to compare against;
//! - [`mesh`]: plays a whole match of real [`Peer`](lockstep_peer::Peer)s
//!   of a shipped game over that network, with faults injected on cue (a
//!   flipped bit, a peer that keeps drifting, a vanished peer, a paused
//!   peer, a partition, a restarted minority seat), and reports every
//!   process's checksum stream, events, counters, stop reason and replay
//!   log;
//! - [`faulty`]: a shipped game with a recurring nondeterminism injected
//!   into its step on one seat (self-consistent or not), for matches of a
//!   game that cannot be healed for good;
//! - [`processes`]: whole processes of a match — the lobby included — on
//!   that network, addressed by socket addresses, with scripted strangers
//!   (squatters, forgers, silent spectators);
//! - [`soak`]: seeded varied matches (either game and mode, 2–8 seats,
//!   networks up to 2 s / 25% loss, corrupted datagrams, clocks apart,
//!   flipped bits, paused seats and partitions), each played and judged;
//! - [`lobby_soak`]: seeded matches of whole processes, set up through the
//!   lobby over the drawn network, a seat's process killed and its seat
//!   taken back, spectators;
//! - [`verdict`]: what a finished match must show (no two processes part
//!   without saying so: agreement on every frame both vouch for, and every
//!   replay log whole, verifying, agreeing with the others, and short only
//!   where its process stopped).
#![deny(clippy::float_arithmetic)]

pub mod crafted;
pub mod faulty;
pub mod lobby_soak;
pub mod mesh;
pub mod netsim;
pub mod processes;
pub mod soak;
pub mod tcp_model;
pub mod verdict;
