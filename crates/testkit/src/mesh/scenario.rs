//! What a mesh run plays: the [`Scenario`] — the match, the network
//! ([`Condition`]), the session settings, and the faults on cue (a flipped
//! bit, a pause, a partition, a vanished or restarted process, a recurring
//! nondeterminism).
//!
//! Invariant: plain data; a run is a pure function of it and the game's
//! settings.

use crate::faulty::Fault;
use crate::netsim::{LinkConfig, Loss, Transport};
use lockstep_peer::{DesyncPolicy, PeerSettings};
use lockstep_protocol::{Config, SeatId, SeatSet};
use lockstep_sim::Match;

/// A network condition: round-trip time, loss, jitter, duplication and
/// reordering on every directed link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    /// Short name.
    pub name: &'static str,
    /// Round-trip time in milliseconds.
    pub rtt_ms: u64,
    /// Loss in ppm.
    pub loss_ppm: u32,
    /// Jitter (extra one-way latency, uniform) in milliseconds.
    pub jitter_ms: u64,
    /// Duplication in ppm.
    pub duplicate_ppm: u32,
    /// Reordering (held back 50 ms) in ppm.
    pub reorder_ppm: u32,
}

impl Condition {
    /// 100 ms round trip, 1% loss, 5 ms jitter, 1% duplication and reordering.
    pub const GOOD: Condition = Condition {
        name: "100 ms / 1%",
        rtt_ms: 100,
        loss_ppm: 10_000,
        jitter_ms: 5,
        duplicate_ppm: 10_000,
        reorder_ppm: 10_000,
    };
    /// 250 ms round trip, 5% loss, 20 ms jitter, 2% duplication and
    /// reordering.
    pub const POOR: Condition = Condition {
        name: "250 ms / 5%",
        rtt_ms: 250,
        loss_ppm: 50_000,
        jitter_ms: 20,
        duplicate_ppm: 20_000,
        reorder_ppm: 20_000,
    };
    /// 2 s round trip, 25% loss, 100 ms jitter, 5% duplication, 2%
    /// reordering.
    pub const AWFUL: Condition = Condition {
        name: "2 s / 25%",
        rtt_ms: 2000,
        loss_ppm: 250_000,
        jitter_ms: 100,
        duplicate_ppm: 50_000,
        reorder_ppm: 20_000,
    };

    /// The condition as a TCP-like stream: in order, a lost segment resent
    /// after a timeout of twice the round trip.
    pub const fn tcp_link(&self) -> LinkConfig {
        LinkConfig {
            transport: Transport::TcpLike {
                rto_micros: self.rtt_ms * 2000,
            },
            ..self.link()
        }
    }

    /// The condition as a datagram link.
    pub const fn link(&self) -> LinkConfig {
        LinkConfig {
            latency_micros: self.rtt_ms * 500,
            jitter_micros: self.jitter_ms * 1000,
            loss: if self.loss_ppm == 0 {
                Loss::None
            } else {
                Loss::Random(self.loss_ppm)
            },
            duplicate_ppm: self.duplicate_ppm,
            reorder_ppm: self.reorder_ppm,
            reorder_micros: 50_000,
            corrupt_ppm: 0,
            mtu: 1200,
            transport: Transport::Datagram,
        }
    }
}

/// A bit to flip in one peer's state, outside the simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    /// The peer whose state is changed; `SeatId(players)` is the
    /// scenario's spectator.
    pub seat: SeatId,
    /// Flipped just before this frame is stepped (in rollback mode, the
    /// first moment from then on that no predicted frame is outstanding,
    /// so that no rollback can undo the change).
    pub frame: u32,
    /// The entity, as the game labels it (e.g. `body 40`).
    pub entity: String,
    /// The field (e.g. `position`).
    pub field: String,
    /// The bit of the field's bytes.
    pub bit: u32,
    /// Flip it again before every later frame too (a peer that cannot be
    /// healed: it keeps drifting after every state load).
    pub repeat: bool,
}

/// A seat's process paused, as by SIGSTOP, then resumed (SIGCONT): while
/// paused it takes no timeouts and sends nothing; the datagrams sent to it
/// queue as in its socket's receive buffer (up to
/// [`Scenario::socket_buffer_bytes`], the rest dropped) and are all handled,
/// in arrival order, when it wakes, before its timers run. Its clock runs
/// on meanwhile, so it wakes far behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    /// The seat.
    pub seat: SeatId,
    /// Paused once it has stepped this frame.
    pub frame: u32,
    /// For this long, in microseconds.
    pub micros: u64,
}

/// A seat on a slow machine: stepping each frame keeps its process busy
/// for `step_micros` of virtual time, during which it handles nothing (its
/// datagrams wait in its socket, its timers fire late).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slow {
    /// The seat.
    pub seat: SeatId,
    /// What stepping one frame costs it, in microseconds.
    pub step_micros: u64,
    /// Whether it reports its step cost (`Peer::spent`), so the match's
    /// pace follows it; `false` shows what happens without.
    pub reports: bool,
}

/// A network split in two: the seats of `side` and the others cannot reach
/// each other for a while (what is in flight when it starts still arrives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// One side; the other is every other seat (and the spectator).
    pub side: SeatSet,
    /// Starts once every seat still playing has stepped this frame.
    pub frame: u32,
    /// Lasts this long, in microseconds.
    pub micros: u64,
}

/// The bytes a datagram takes in a socket's receive buffer on top of its
/// payload (the kernel charges a buffer for its bookkeeping too; Linux
/// charges roughly this much per small datagram).
pub const DATAGRAM_OVERHEAD: u64 = 768;

/// A match to play.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The match: seats, seed, tick rate.
    pub setup: Match,
    /// Every directed link.
    pub link: LinkConfig,
    /// The run ends once every live peer has confirmed this many frames
    /// (stepped them with every player's real input)...
    pub frames: u32,
    /// ... or at this virtual time, whichever comes first.
    pub max_micros: u64,
    /// Stalls before every peer stepped this frame are the initial playout
    /// delay and are counted apart.
    pub warmup_frames: u32,
    /// A bit to flip.
    pub flip: Option<Flip>,
    /// A peer that vanishes (its process dies: it sends and receives
    /// nothing more) once it has stepped this frame.
    pub vanish: Option<(SeatId, u32)>,
    /// Once every other peer has stepped this frame, the vanished seat's
    /// process restarts and rejoins the match (a new `Peer` with
    /// `rejoin` set and a new token).
    pub rejoin_at: Option<u32>,
    /// A seat paused and resumed.
    pub pause: Option<Pause>,
    /// A seat whose steps are slow.
    pub slow: Option<Slow>,
    /// A network partition.
    pub partition: Option<Partition>,
    /// Whether the process of a seat that stopped because it lost the
    /// match's quorum restarts and takes its seat back (as `rejoin_at` does
    /// for a vanished one), once the seat that hosts returns (the lowest
    /// seat playing) has dropped it. Seats come back one at a time: a
    /// process restarts once every process restarted before it is back,
    /// so the keys it is handed are current.
    pub restart_stopped: bool,
    /// A paused seat's socket receive buffer, in bytes (212 992, Linux's
    /// default), each datagram charged its length plus
    /// [`DATAGRAM_OVERHEAD`].
    pub socket_buffer_bytes: u64,
    /// A spectator that joins through the relay of seat `.0` once that
    /// seat has stepped frame `.1`; with `session.arbiter` naming that seat,
    /// it is the match's arbiter.
    pub spectate: Option<(SeatId, u32)>,
    /// Session settings for every seat (`local` is set per seat; the
    /// security is set by `sealed`).
    pub session: Config,
    /// Whether every packet is sealed (the default, as over real sockets):
    /// each seat, restarted process and spectator gets a seeded key pair,
    /// bound to its seat the way the match setup binds it.
    pub sealed: bool,
    /// Whether the run goes on past `frames` until every live peer has
    /// compared its checksums through frame `frames − 1` clean against the
    /// others', and through the first frame a flipped bit made wrong if
    /// that is later (so a desync near the end has the time to be found and
    /// healed; a run that never gets there stops at `max_micros`).
    pub settle: bool,
    /// Per seat, how far ahead its clock reads of the network's (microseconds;
    /// missing seats read 0): every time a peer is handed, and every
    /// timeout it asks for, is on its own clock, as between real machines.
    pub clock_offsets: Vec<u64>,
    /// Per seat, the threads its frames may use (missing seats: 1): a
    /// machine setting, so seats on different counts must still agree.
    pub threads: Vec<usize>,
    /// The threads the spectator's frames may use (at least 1).
    pub spectator_threads: usize,
    /// A recurring nondeterminism in one seat's game (a match of a
    /// [`Faulty`](crate::faulty::Faulty) game only).
    pub fault: Option<Fault>,
    /// What the match does with a desync it cannot heal.
    pub policy: DesyncPolicy,
}

impl Scenario {
    /// `frames` frames of a `seats`-seat match on `link`, seeded by
    /// `seed`, with two seconds of warm-up.
    pub fn new(seats: u8, seed: u64, link: LinkConfig, frames: u32) -> Scenario {
        let setup = Match {
            seats,
            seed,
            tick_rate: 60,
        };
        Scenario {
            setup,
            link,
            frames,
            max_micros: 3_600_000_000,
            warmup_frames: 120,
            flip: None,
            vanish: None,
            rejoin_at: None,
            pause: None,
            slow: None,
            partition: None,
            restart_stopped: false,
            socket_buffer_bytes: 212_992,
            spectate: None,
            session: PeerSettings::new(&setup, SeatId(0), 1).session,
            sealed: true,
            settle: false,
            clock_offsets: Vec::new(),
            threads: Vec::new(),
            spectator_threads: 1,
            fault: None,
            policy: DesyncPolicy::Stop,
        }
    }
}
