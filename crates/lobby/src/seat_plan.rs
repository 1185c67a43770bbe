//! What the app gives a seat's process ([`SeatPlan`]: its token, its log,
//! its bot, a hook on each peer, a spare key pair) and how long the process
//! waits for things ([`SeatTiming`]).

use std::io::Write;

use lockstep_peer::Peer;
use lockstep_protocol::seal::Identity;
use lockstep_sim::{Bot, Game, Match};

use crate::join_setup::JoinTiming;

/// Where a seat's replay log goes: the app's writer, or nowhere (a
/// process that took a dropped seat back records nothing: a log starts at
/// frame 0, which it never saw).
#[derive(Debug)]
pub enum SeatLog<W> {
    /// The app's writer.
    Log(W),
    /// Nothing is recorded.
    Discard,
}

impl<W: Write> Write for SeatLog<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            SeatLog::Log(w) => w.write(buf),
            SeatLog::Discard => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            SeatLog::Log(w) => w.flush(),
            SeatLog::Discard => Ok(()),
        }
    }
}

/// Opens the seat's replay log when the match starts.
pub type LogOpener<W> = Box<dyn FnOnce() -> std::io::Result<W>>;
/// Makes the bot of a seat (its seat and the match).
pub type BotMaker<G> = Box<dyn FnMut(u8, &Match) -> Box<dyn Bot<G>>>;
/// Called on every peer the endpoint creates, before its first frame
/// (e.g. to enable the snapshot fall-back); an error stops the seat.
pub type Preparation<G, W> = Box<dyn FnMut(&mut Peer<G, SeatLog<W>>) -> Result<(), String>>;

/// What a seat plays with: the app's side of the match.
pub struct SeatPlan<G: Game, W: Write> {
    /// This process's session token (random, never 0).
    pub token: u32,
    /// The replay log, opened when the match starts (`None`: record
    /// nothing).
    pub log: Option<LogOpener<W>>,
    /// The seat's bot (until the app sets an input).
    pub bot: Option<BotMaker<G>>,
    /// Called on each peer created.
    pub prepare: Option<Preparation<G, W>>,
    /// Threads each frame may use on this machine ([`Peer::set_threads`]:
    /// the same states for any count; 1 by default).
    pub threads: usize,
    /// A second key pair, for taking the seat back after it lost the
    /// quorum (a joiner only; `None`: the seat ends instead).
    pub spare_identity: Option<Identity>,
}

impl<G: Game, W: Write> SeatPlan<G, W> {
    /// A plan with `token`, no log, no bot, one thread.
    pub fn new(token: u32) -> SeatPlan<G, W> {
        SeatPlan {
            token,
            log: None,
            bot: None,
            prepare: None,
            threads: 1,
            spare_identity: None,
        }
    }
}

/// How long a seat waits for things to happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatTiming {
    /// The host calls the match off when not every seat completed its
    /// handshake this long after the rosters went out (6 s).
    pub host_start_micros: u64,
    /// A joiner gives up when its match has not started this long after
    /// its roster arrived (8 s: longer than the host's, so that the host's
    /// abort, which says why, comes first).
    pub join_start_micros: u64,
    /// A seat keeps playing this long after its last frame, so the others
    /// hear its last inputs and checksums (1 s).
    pub linger_micros: u64,
    /// A seat whose peer stopped (the match found invalid, a lost quorum)
    /// keeps its peer running until the peer owes nobody a message (every
    /// live seat heard that the match is invalid), at most this long
    /// (5 s).
    pub stop_micros: u64,
    /// The match ends as stuck when no frame was stepped for this long
    /// (60 s).
    pub stall_micros: u64,
    /// The joiner's setup timing (a rejoin after a lost quorum uses it).
    pub join: JoinTiming,
}

impl Default for SeatTiming {
    fn default() -> SeatTiming {
        SeatTiming {
            host_start_micros: 6_000_000,
            join_start_micros: 8_000_000,
            linger_micros: 1_000_000,
            stop_micros: 5_000_000,
            stall_micros: 60_000_000,
            join: JoinTiming::default(),
        }
    }
}
