//! Matches of real `Peer`s — the shipped games, and a game made
//! nondeterministic on purpose — over the simulated network on virtual
//! time (and, in `over_udp`, over real UDP on loopback). One test binary,
//! so the matches these tests share are compiled once:
//!
//! - `commands`: orders issued beside inputs are applied once, on one
//!   frame, by every seat, in both modes and under loss;
//! - `matches`: every peer's checksums and log agree; a drifted peer is
//!   diagnosed and healed live;
//! - `rollback`: rollback mode agrees bit for bit on confirmed frames;
//! - `resync`: a flipped bit is found and healed; burst loss causes none;
//! - `forgery`: sealed sessions under an attacker who sees every packet;
//! - `soak`: a sample of the soak's seeded matches, each judged;
//! - `lobby`: the match setup played by whole processes (squatters,
//!   silent spectators, rejoins by proof of the key);
//! - `membership`: the quorum — paused seats, a dead host, partitions;
//! - `honesty`: blame by evidence, a match found invalid, healed logs;
//! - `over_udp`: the same honesty over real UDP on loopback.

mod commands;
mod forgery;
mod honesty;
mod lobby;
mod matches;
mod membership;
mod over_udp;
mod resync;
mod rollback;
mod soak;
mod turns;
