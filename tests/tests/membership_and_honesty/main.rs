//! Membership and honesty (ARCHITECTURE.md's section of that name): who
//! is in a match and how a seat comes back, and that a match never lies
//! about its state. One test binary, so the matches these tests share (a
//! `Peer` of cubes or of the RTS, whole endpoints, the faulty game) are
//! built once:
//!
//! - `lobby`: the match setup played by whole processes on the simulated
//!   network (squatters, silent spectators, rejoins by proof of the key);
//! - `membership`: the quorum — paused seats, a dead host, partitions;
//! - `honesty`: blame by evidence, a match found invalid, healed logs;
//! - `over_udp`: the same honesty over real UDP on loopback.

mod honesty;
mod lobby;
mod membership;
mod over_udp;
