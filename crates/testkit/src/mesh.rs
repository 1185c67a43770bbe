//! [`run`]: a match of 2–8 real [`Peer`]s of a shipped game, played by bots
//! over a seeded [`Network`] on virtual time.
//!
//! Faults come on cue: a bit flipped in a state ([`Flip`]), a process that
//! dies (`vanish`) and whose seat a restarted process takes back
//! (`rejoin_at`), a process paused and resumed as by SIGSTOP and SIGCONT
//! ([`Pause`]), a network split in two for a while ([`Partition`]), and the
//! process of a seat that stopped because it lost the match's quorum
//! restarted to take its seat back (`restart_stopped`).
//!
//! Invariants: a run is a pure function of its [`Scenario`] and the game's
//! settings (the network, the tokens and the bots are seeded from it); time
//! jumps to the next timeout or delivery, so a minute of a 2-second-latency
//! match costs only the simulation work; the harness only moves datagrams,
//! time and injected faults: every protocol and game decision is the
//! peers' own. A recurring nondeterminism ([`Scenario::fault`]) acts only
//! in a match of a [`Faulty`](crate::faulty::Faulty) game, on its seat,
//! while the harness is inside a call to that seat's peer.

use std::collections::{BTreeMap, VecDeque};

use crate::faulty::{self, Fault};
use crate::netsim::{Datagram, LinkConfig, Loss, NetStats, Network, Transport};
use lockstep_fx::{Checksum, Rng};
use lockstep_games::Demo;
use lockstep_peer::{
    DesyncPolicy, Peer, PeerEvent, PeerSettings, PeerStats, Spectator, SpectatorEvent,
    SpectatorStats, StopReason,
};
use lockstep_protocol::clock_sync::ClockEstimate;
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::watch::{WatchConfig, WatcherId, WatcherStats};
use lockstep_protocol::{Config, Instant, Invalidation, PlayerId, PlayerSet, Security, Stats};
use lockstep_sim::{Match, StateMap};

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
    /// The peer whose state is changed; `PlayerId(players)` is the
    /// scenario's spectator.
    pub seat: PlayerId,
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
    pub seat: PlayerId,
    /// Paused once it has stepped this frame.
    pub frame: u32,
    /// For this long, in microseconds.
    pub micros: u64,
}

/// A network split in two: the seats of `side` and the others cannot reach
/// each other for a while (what is in flight when it starts still arrives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// One side; the other is every other seat (and the spectator).
    pub side: PlayerSet,
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
    /// The match: players, seed, tick rate.
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
    pub vanish: Option<(PlayerId, u32)>,
    /// Once every other peer has stepped this frame, the vanished seat's
    /// process restarts and rejoins the match (a new `Peer` with
    /// `rejoin` set and a new token).
    pub rejoin_at: Option<u32>,
    /// A seat paused and resumed.
    pub pause: Option<Pause>,
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
    pub spectate: Option<(PlayerId, u32)>,
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
    /// A recurring nondeterminism in one seat's game (a match of a
    /// [`Faulty`](crate::faulty::Faulty) game only).
    pub fault: Option<Fault>,
    /// What the match does with a desync it cannot heal.
    pub policy: DesyncPolicy,
}

impl Scenario {
    /// `frames` frames of a `players`-player match on `link`, seeded by
    /// `seed`, with two seconds of warm-up.
    pub fn new(players: u8, seed: u64, link: LinkConfig, frames: u32) -> Scenario {
        let setup = Match {
            players,
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
            partition: None,
            restart_stopped: false,
            socket_buffer_bytes: 212_992,
            spectate: None,
            session: PeerSettings::new(&setup, PlayerId(0), 1).session,
            sealed: true,
            settle: false,
            clock_offsets: Vec::new(),
            fault: None,
            policy: DesyncPolicy::Stop,
        }
    }
}

/// A seeded key pair (tests only: real endpoints draw their secret from
/// the operating system).
fn identity(rng: &mut Rng) -> Identity {
    let mut secret = [0u8; 32];
    for chunk in secret.chunks_exact_mut(4) {
        chunk.copy_from_slice(&rng.next_u32().to_le_bytes());
    }
    Identity::from_secret(secret)
}

/// One peer's side of a run.
#[derive(Debug, Clone, Default)]
pub struct PeerRun {
    /// The checksum of every frame the peer stepped (a re-simulated frame
    /// replaces the first try).
    pub checksums: BTreeMap<u32, Checksum>,
    /// When the peer first stepped each frame.
    pub stepped_at: BTreeMap<u32, Instant>,
    /// Every event but [`PeerEvent::Stepped`], with when it happened.
    pub events: Vec<(Instant, PeerEvent)>,
    /// The peer's counters.
    pub stats: PeerStats,
    /// The session's counters.
    pub session: Stats,
    /// Stall ticks after every peer stepped the warm-up frame.
    pub stalls_after_warmup: u64,
    /// The replay log the peer recorded (`None` if recording stopped).
    pub log: Option<Vec<u8>>,
    /// Wall-clock time spent inside the peer's calls, in nanoseconds (a
    /// measurement only: nothing in the run depends on it).
    pub busy_nanos: u64,
    /// The playout delay in frames over the run: the first value and every
    /// change, with when it was seen.
    pub delay_frames: Vec<(Instant, u32)>,
    /// When the peer sampled its local input for each frame (its tick).
    pub sampled_at: BTreeMap<u32, Instant>,
    /// Every frame before this one was confirmed at the end (stepped with
    /// every player's real input; in lockstep, every frame stepped).
    pub confirmed_before: u32,
    /// At the end, per seat, that seat's clock offset as this peer
    /// estimated it (its own seat: `None`).
    pub clock_offsets: Vec<Option<ClockEstimate>>,
    /// At the end, per seat, how far ahead of that seat this peer's frame
    /// clock ran, in microseconds.
    pub frame_advantage: Vec<Option<i64>>,
    /// Why the peer stopped before the end, if it did.
    pub stopped: Option<StopReason>,
    /// At the end, the newest frame a quorum compared clean
    /// ([`Session::newest_clean`](lockstep_protocol::Session::newest_clean)).
    pub settled_through: Option<u32>,
    /// The match's invalidation as the peer knew it at the end.
    pub invalidation: Option<Invalidation>,
    /// The first frame of every span it played alone, unchecked
    /// ([`Peer::unchecked_from`]).
    pub unchecked_from: Vec<u32>,
    /// This process took its seat back in a running match (it records no
    /// log).
    pub rejoined: bool,
    /// This process vanished (died): it left no finished log.
    pub vanished: bool,
}

impl PeerRun {
    /// Frames from sampling a local input to first showing its frame, per
    /// frame sampled and stepped (the perceived input latency, in ticks of
    /// `tick_micros`, rounded to the nearest).
    pub fn input_latency_frames(&self, tick_micros: u64) -> Vec<u32> {
        let tick = tick_micros.max(1);
        self.sampled_at
            .iter()
            .filter_map(|(f, sampled)| {
                let shown = self.stepped_at.get(f)?;
                Some(((shown.since(*sampled) + tick / 2) / tick) as u32)
            })
            .collect()
    }
}

/// The spectator's side of a run.
#[derive(Debug, Clone, Default)]
pub struct SpectatorRun {
    /// When it started.
    pub joined_at: Instant,
    /// The frame of the state it loaded first, and when.
    pub loaded: Option<(u32, Instant)>,
    /// The checksum of every frame it stepped.
    pub checksums: BTreeMap<u32, Checksum>,
    /// Every event but [`SpectatorEvent::Stepped`], with when it happened.
    pub events: Vec<(Instant, SpectatorEvent)>,
    /// Its counters.
    pub stats: SpectatorStats,
    /// Its connection's counters.
    pub watcher: WatcherStats,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Run {
    /// Per seat.
    pub peers: Vec<PeerRun>,
    /// The network's counters.
    pub net: NetStats,
    /// Virtual time at the end.
    pub end: Instant,
    /// When the scenario's bit was flipped.
    pub flipped_at: Option<Instant>,
    /// The peer that vanished, if one did (and did not rejoin).
    pub vanished: Option<PlayerId>,
    /// The processes replaced by a restarted one (a vanished process, or
    /// one that stopped), oldest first, with their seats; the seat's entry
    /// in `peers` is its newest process.
    pub replaced: Vec<(PlayerId, PeerRun)>,
    /// When a seat's restarted process last started.
    pub rejoined_at: Option<Instant>,
    /// Datagrams a paused seat's full socket buffer dropped.
    pub buffer_overflow: u64,
    /// The spectator, if the scenario had one.
    pub spectator: Option<SpectatorRun>,
}

impl Run {
    /// The peers still playing at the end (all but a vanished one and
    /// those that stopped).
    pub fn remaining(&self) -> impl Iterator<Item = &PeerRun> {
        let vanished = self.vanished;
        self.peers
            .iter()
            .enumerate()
            .filter(move |(i, p)| vanished.is_none_or(|v| v.index() != *i) && p.stopped.is_none())
            .map(|(_, p)| p)
    }

    /// Every process that played, with its seat: those replaced first,
    /// then the newest of each seat.
    pub fn processes(&self) -> impl Iterator<Item = (PlayerId, &PeerRun)> {
        self.replaced.iter().map(|(s, p)| (*s, p)).chain(
            self.peers
                .iter()
                .enumerate()
                .map(|(i, p)| (PlayerId(i as u8), p)),
        )
    }

    /// The first frame two processes that did not vanish hold different
    /// final checksums for, among the frames both confirmed (for one that
    /// stopped, the frames before its stop: what it stepped after the last
    /// frame a quorum settled is no part of the match), with the two seats.
    pub fn first_parting(&self) -> Option<(u32, PlayerId, PlayerId)> {
        let held: Vec<(PlayerId, &PeerRun, u32)> = self
            .processes()
            .filter(|(_, p)| !p.vanished)
            .map(|(s, p)| {
                let end = p
                    .stopped
                    .as_ref()
                    .map_or(p.confirmed_before, |r| r.frame().min(p.confirmed_before));
                (s, p, end)
            })
            .collect();
        let mut first: Option<(u32, PlayerId, PlayerId)> = None;
        for (i, (sa, a, ea)) in held.iter().enumerate() {
            for (sb, b, eb) in &held[i + 1..] {
                let end = (*ea).min(*eb);
                let parted = a
                    .checksums
                    .range(..end)
                    .find(|(f, c)| b.checksums.get(f).is_some_and(|d| d != *c));
                if let Some((&f, _)) = parted {
                    if first.is_none_or(|(g, _, _)| f < g) {
                        first = Some((f, *sa, *sb));
                    }
                }
            }
        }
        first
    }

    /// The frames every remaining peer stepped.
    pub fn common_frames(&self) -> u32 {
        self.common().len() as u32
    }

    /// The frames every remaining peer stepped and confirmed.
    fn common(&self) -> Vec<u32> {
        let mut all = self.remaining();
        let Some(first) = all.next() else {
            return Vec::new();
        };
        let rest: Vec<&PeerRun> = all.collect();
        let confirmed = rest
            .iter()
            .map(|p| p.confirmed_before)
            .fold(first.confirmed_before, u32::min);
        first
            .checksums
            .keys()
            .filter(|f| **f < confirmed && rest.iter().all(|p| p.checksums.contains_key(f)))
            .copied()
            .collect()
    }

    /// The first frame some remaining peer's final checksum differs from
    /// another's, among the frames all stepped.
    pub fn first_disagreement(&self) -> Option<u32> {
        let first = &self.remaining().next()?.checksums;
        self.common()
            .into_iter()
            .find(|f| self.remaining().any(|p| p.checksums.get(f) != first.get(f)))
    }

    /// Every event `pick` selects, at any process (replaced ones too),
    /// with the seat and time.
    pub fn events<T>(&self, pick: impl Fn(&PeerEvent) -> Option<T>) -> Vec<(PlayerId, Instant, T)> {
        let mut out = Vec::new();
        for (seat, p) in self.processes() {
            for (at, e) in &p.events {
                if let Some(t) = pick(e) {
                    out.push((seat, *at, t));
                }
            }
        }
        out
    }

    /// Stall ticks after warm-up, summed over the remaining peers.
    pub fn stalls_after_warmup(&self) -> u64 {
        self.remaining().map(|p| p.stalls_after_warmup).sum()
    }
}

/// A paused seat: when it wakes, and what waits in its socket.
struct Paused {
    seat: usize,
    until: Instant,
    queue: VecDeque<Datagram>,
    bytes: u64,
}

/// The seat that takes back `seat` for a restarted process: the lowest
/// seat playing (not gone, stopped or paused) that is its own host (no
/// lower seat live in its view) and has dropped `seat` for good.
fn return_host<G: Demo>(
    peers: &[Peer<G, Vec<u8>>],
    seat: usize,
    playing: impl Fn(usize) -> bool,
) -> Option<usize> {
    (0..peers.len()).find(|&j| {
        let live = peers[j].session().live();
        j != seat
            && playing(j)
            && live.lowest() == Some(PlayerId(j as u8))
            && !live.contains(PlayerId(seat as u8))
    })
}

/// Plays `scenario` of game `G` with settings `config`.
pub fn run<G: Demo>(scenario: &Scenario, config: &G::Config) -> Run {
    let n = scenario.setup.players;
    let mut rng = Rng::new(scenario.setup.seed, 0x6d65_7368);
    // The spectator, if any, is the network's last node.
    let watcher_node = PlayerId(n);
    let mut net = Network::new(scenario.setup.seed, n + 1, scenario.link);
    let mut spectator: Option<(Spectator<G>, SpectatorRun)> = None;
    let identities: Vec<Identity> = (0..n).map(|_| identity(&mut rng)).collect();
    let mut seat_keys: Vec<PublicKey> = identities.iter().map(Identity::public).collect();
    let security = |identity: &Identity, seats: &[PublicKey]| {
        if scenario.sealed {
            Security::Sealed {
                identity: identity.clone(),
                seats: seats.to_vec(),
            }
        } else {
            Security::Plain
        }
    };
    let mut peers: Vec<Peer<G, Vec<u8>>> = (0..n)
        .map(|seat| {
            let mut settings =
                PeerSettings::new(&scenario.setup, PlayerId(seat), rng.next_u32() | 1);
            settings.session = Config {
                local: PlayerId(seat),
                security: security(&identities[usize::from(seat)], &seat_keys),
                ..scenario.session.clone()
            };
            settings.desync_policy = scenario.policy;
            let mut peer = Peer::new(config, scenario.setup, settings, Vec::new())
                .expect("the scenario's match is valid");
            peer.set_bot(Box::new(G::bot(seat, scenario.setup.seed)));
            peer
        })
        .collect();
    let mut runs: Vec<PeerRun> = (0..n).map(|_| PeerRun::default()).collect();
    let mut replaced = Vec::new();
    let mut rejoined_at = None;
    let mut flip = scenario.flip.clone();
    let mut flipped_at = None;
    // With `settle`, the run goes on until every peer compared clean
    // through this frame: the last wanted one, or the first a flip made
    // wrong, whichever is later.
    let mut settle_through = scenario.frames.saturating_sub(1);
    let mut vanished: Option<PlayerId> = None;
    let mut vanish_done = false;
    let mut paused: Option<Paused> = None;
    let mut pause_done = false;
    let mut buffer_overflow = 0;
    let mut cut_until: Option<Instant> = None;
    // Sealed: restarted processes not yet back, with their public keys,
    // which the match setup keeps telling the seats that dropped them
    // (whichever of them hosts the return must know it).
    let mut returning_keys: Vec<(usize, PublicKey)> = Vec::new();
    let mut partition_done = false;
    let mut warm: Option<Vec<u64>> = None;
    let offset = |seat: usize| scenario.clock_offsets.get(seat).copied().unwrap_or(0);
    // A seat's clock, and a time on it back on the network's clock.
    let local = |now: Instant, seat: usize| now.plus(offset(seat));
    let global = |t: Instant, seat: usize| Instant(t.as_micros().saturating_sub(offset(seat)));
    let mut now = Instant::ZERO;
    faulty::install(scenario.fault);
    loop {
        if let Some(p) = paused.take_if(|p| p.until <= now) {
            // SIGCONT: the socket's backlog first, then the timers.
            let i = p.seat;
            for d in p.queue {
                deliver(
                    now,
                    offset(i),
                    &mut peers[i],
                    &mut runs[i],
                    &mut net,
                    d,
                    watcher_node,
                );
            }
        }
        if cut_until.is_some_and(|t| t <= now) {
            cut_until = None;
            cut_partition(&mut net, scenario, false);
        }
        while let Some(d) = net.pop_due(now) {
            if vanished.is_some_and(|v| v == d.to || v == d.from) {
                continue;
            }
            if d.to == watcher_node {
                if let Some((s, r)) = spectator.as_mut() {
                    faulty::enter(watcher_node.0);
                    s.handle_datagram(now, &d.bytes);
                    faulty::leave();
                    drain_spectator(now, s, r, &mut net, scenario);
                }
                continue;
            }
            let i = d.to.index();
            if let Some(p) = paused.as_mut().filter(|p| p.seat == i) {
                let cost = d.bytes.len() as u64 + DATAGRAM_OVERHEAD;
                if p.bytes + cost <= scenario.socket_buffer_bytes {
                    p.bytes += cost;
                    p.queue.push_back(d);
                } else {
                    buffer_overflow += 1;
                }
                continue;
            }
            deliver(
                now,
                offset(i),
                &mut peers[i],
                &mut runs[i],
                &mut net,
                d,
                watcher_node,
            );
        }
        if let Some(part) = scenario.partition {
            let all_there = (0..usize::from(n))
                .filter(|&i| {
                    vanished.is_none_or(|v| v.index() != i) && peers[i].stopped().is_none()
                })
                .all(|i| peers[i].frame() > part.frame);
            if !partition_done && all_there {
                partition_done = true;
                cut_until = Some(now.plus(part.micros));
                cut_partition(&mut net, scenario, true);
            }
        }
        for i in 0..usize::from(n) {
            if let Some((seat, frame)) = scenario.vanish {
                if !vanish_done && seat.index() == i && peers[i].frame() > frame {
                    vanished = Some(seat);
                    vanish_done = true;
                }
            }
            if let Some(p) = scenario.pause {
                let ready = p.seat.index() == i && peers[i].frame() > p.frame;
                if !pause_done && ready && vanished != Some(p.seat) && peers[i].stopped().is_none()
                {
                    pause_done = true;
                    paused = Some(Paused {
                        seat: i,
                        until: now.plus(p.micros),
                        queue: VecDeque::new(),
                        bytes: 0,
                    });
                }
            }
            let is_paused = |j: usize| paused.as_ref().is_some_and(|p| p.seat == j);
            let playing = |j: usize| {
                vanished.is_none_or(|v| v.index() != j)
                    && !is_paused(j)
                    && peers[j].stopped().is_none()
            };
            let restart = if vanished.is_some_and(|v| v.index() == i) {
                // A vanished process restarts once the others stepped
                // `rejoin_at`.
                scenario.rejoin_at.is_some_and(|at| {
                    (0..usize::from(n))
                        .filter(|&j| j != i)
                        .all(|j| peers[j].frame() > at)
                })
            } else {
                scenario.restart_stopped
                    && matches!(peers[i].stopped(), Some(StopReason::LostQuorum { .. }))
            };
            // One seat comes back at a time: a restarted process is handed
            // the keys of the seats whose processes are back, so the next
            // one starts only once it is back itself (or stopped again).
            let one_at_a_time = (0..usize::from(n)).all(|j| {
                !runs[j].rejoined || peers[j].session().is_running() || peers[j].stopped().is_some()
            });
            let host = if restart && one_at_a_time {
                return_host(&peers, i, playing)
            } else {
                None
            };
            if let Some(host) = host {
                // The restarted process draws a new key pair; the match
                // setup tells the host, which vouches for it to the rest.
                let v = PlayerId(i as u8);
                let fresh = identity(&mut rng);
                seat_keys[i] = fresh.public();
                if scenario.sealed {
                    peers[host]
                        .expect_return(v, fresh.public())
                        .expect("the host dropped the seat");
                    returning_keys.retain(|(s, _)| *s != i);
                    returning_keys.push((i, fresh.public()));
                }
                let mut settings = PeerSettings::new(&scenario.setup, v, rng.next_u32() | 1);
                settings.session = Config {
                    local: v,
                    rejoin: true,
                    security: security(&fresh, &seat_keys),
                    ..scenario.session.clone()
                };
                settings.desync_policy = scenario.policy;
                let mut peer = Peer::new(config, scenario.setup, settings, Vec::new())
                    .expect("the scenario's match is valid");
                peer.set_bot(Box::new(G::bot(v.0, scenario.setup.seed)));
                let old = std::mem::replace(&mut peers[i], peer);
                let mut old_run = std::mem::take(&mut runs[i]);
                old_run.vanished = vanished == Some(v);
                close_run(old, &mut old_run, 0, n);
                replaced.push((v, old_run));
                runs[i].rejoined = true;
                net.forget(v);
                rejoined_at = Some(now);
                if vanished == Some(v) {
                    vanished = None;
                }
            }
            if vanished.is_some_and(|v| v.index() == i)
                || paused.as_ref().is_some_and(|p| p.seat == i)
            {
                continue;
            }
            let t = std::time::Instant::now();
            if peers[i].poll_timeout().is_some_and(|t| t <= local(now, i)) {
                faulty::enter(i as u8);
                peers[i].handle_timeout(local(now, i));
                faulty::leave();
            }
            drain(now, offset(i), &mut peers[i], &mut runs[i], &mut net);
            runs[i].busy_nanos += t.elapsed().as_nanos() as u64;
            if let Some(f) = flip.as_mut().filter(|f| f.seat.index() == i) {
                let settled = peers[i].session().confirmed_before() == peers[i].frame();
                if peers[i].frame() >= f.frame && settled && peers[i].stopped().is_none() {
                    flip_bit(&mut peers[i], f);
                    settle_through = settle_through.max(peers[i].frame());
                    flipped_at = flipped_at.or(Some(now));
                    if f.repeat {
                        f.frame = peers[i].frame() + 1;
                    } else {
                        flip = None;
                    }
                }
            }
        }
        returning_keys.retain(|&(seat, key)| {
            if peers[seat].session().is_running() || peers[seat].stopped().is_some() {
                return false;
            }
            let v = PlayerId(seat as u8);
            for peer in peers
                .iter_mut()
                .filter(|p| p.seat() != v && p.stopped().is_none())
            {
                if !peer.session().live().contains(v) && peer.session().seat_key(v) != Some(key) {
                    // Refused only by a seat that has not dropped it.
                    let _ = peer.expect_return(v, key);
                }
            }
            true
        });
        if let Some((relay, at)) = scenario.spectate {
            if spectator.is_none() && peers[relay.index()].frame() > at {
                let watch = WatchConfig::new(n, scenario.session.tick_micros);
                let token = rng.next_u32() | 1;
                let mut s = Spectator::new(config, scenario.setup, watch, token, now)
                    .expect("the scenario's match is valid");
                if scenario.sealed {
                    let own = identity(&mut rng);
                    s = s
                        .sealed(&own, seat_keys[relay.index()])
                        .expect("seeded keys are usable");
                    peers[relay.index()]
                        .admit_watcher(WatcherId(0), own.public())
                        .expect("seeded keys are usable");
                }
                if scenario.session.arbiter == Some(relay) {
                    peers[relay.index()].name_arbiter(WatcherId(0));
                }
                let r = SpectatorRun {
                    joined_at: now,
                    ..SpectatorRun::default()
                };
                spectator = Some((s, r));
            }
        }
        if let Some((s, r)) = spectator.as_mut() {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                faulty::enter(watcher_node.0);
                s.handle_timeout(now);
                faulty::leave();
            }
            drain_spectator(now, s, r, &mut net, scenario);
            if let Some(f) = flip.as_ref().filter(|f| f.seat == watcher_node) {
                if s.frame() >= f.frame {
                    if let Some(game) = s.game_mut() {
                        *game = flipped(game, f);
                        flipped_at = flipped_at.or(Some(now));
                        flip = None;
                    }
                }
            }
        }
        if warm.is_none() && peers.iter().all(|p| p.frame() > scenario.warmup_frames) {
            warm = Some(
                peers
                    .iter()
                    .map(|p| p.session_stats().stall_ticks)
                    .collect(),
            );
        }
        // A seat that stopped is done; a paused one is not (it wakes).
        let in_play = |p: &Peer<G, Vec<u8>>| vanished != Some(p.seat()) && p.stopped().is_none();
        let restart_pending = (scenario.restart_stopped
            && peers.iter().any(|p| p.stopped().is_some())
            && peers.iter().any(in_play))
            || (scenario.rejoin_at.is_some() && vanished.is_some());
        // A match found invalid is over once every seat still in play
        // has learned it and stopped too.
        let invalid = peers
            .iter()
            .any(|p| matches!(p.stopped(), Some(StopReason::MatchInvalid { .. })));
        let done = !restart_pending
            && (!invalid || !peers.iter().any(in_play))
            && peers.iter().filter(|p| in_play(p)).all(|p| {
                let s = p.session();
                // Alone, nobody compares: there is nothing to settle on.
                let alone = s.live().len() < 2;
                s.confirmed_before() >= scenario.frames
                    && (!scenario.settle
                        || alone
                        || s.newest_clean().is_some_and(|c| c >= settle_through))
            });
        if done || now.as_micros() >= scenario.max_micros {
            break;
        }
        let next = peers
            .iter()
            .filter(|p| vanished != Some(p.seat()))
            .filter(|p| paused.as_ref().is_none_or(|q| q.seat != p.seat().index()))
            .filter_map(|p| Some(global(p.poll_timeout()?, p.seat().index())))
            .chain(spectator.as_ref().and_then(|(s, _)| s.poll_timeout()))
            .chain(net.next_delivery())
            .chain(paused.as_ref().map(|p| p.until))
            .chain(cut_until)
            .min()
            .unwrap_or(Instant(scenario.max_micros));
        now = if next > now { next } else { now.plus(1) };
    }
    let warm = warm.unwrap_or_else(|| {
        peers
            .iter()
            .map(|p| p.session_stats().stall_ticks)
            .collect()
    });
    for (i, peer) in peers.into_iter().enumerate() {
        let r = &mut runs[i];
        r.vanished = vanished.is_some_and(|v| v.index() == i);
        close_run(peer, r, warm[i], n);
    }
    faulty::install(None);
    Run {
        peers: runs,
        net: net.stats(),
        end: now,
        flipped_at,
        vanished,
        replaced,
        rejoined_at,
        buffer_overflow,
        spectator: spectator.map(|(s, mut r)| {
            r.stats = *s.stats();
            r.watcher = *s.watcher_stats();
            r
        }),
    }
}

/// Cuts (or mends) every link between the partition's two sides.
fn cut_partition(net: &mut Network, scenario: &Scenario, cut: bool) {
    let Some(part) = scenario.partition else {
        return;
    };
    // The spectator (the last node) sits with the seats outside `side`.
    let nodes = scenario.setup.players + 1;
    for a in 0..nodes {
        for b in 0..nodes {
            let (a, b) = (PlayerId(a), PlayerId(b));
            if part.side.contains(a) != part.side.contains(b) {
                net.set_cut(a, b, cut);
            }
        }
    }
}

/// Fills in what a process's run says at its end, and its log: a
/// vanished process leaves none (it died), any other finishes its own.
fn close_run<G: Demo>(peer: Peer<G, Vec<u8>>, r: &mut PeerRun, warm_stalls: u64, n: u8) {
    r.stats = peer.stats().clone();
    r.session = peer.session_stats().clone();
    r.stalls_after_warmup = r.session.stall_ticks.saturating_sub(warm_stalls);
    r.confirmed_before = peer.session().confirmed_before();
    r.clock_offsets = (0..n)
        .map(|s| peer.session().clock_offset(PlayerId(s)))
        .collect();
    r.frame_advantage = (0..n)
        .map(|s| peer.session().frame_advantage(PlayerId(s)))
        .collect();
    r.stopped = peer.stopped().cloned();
    r.settled_through = peer.session().newest_clean();
    r.invalidation = peer.invalidation().copied();
    r.log = if r.vanished {
        None
    } else {
        peer.finish().ok().flatten()
    };
}

/// Hands datagram `d` to `peer` (from a seat or the spectator) at network
/// time `now`, and takes what it caused.
fn deliver<G: Demo>(
    now: Instant,
    offset: u64,
    peer: &mut Peer<G, Vec<u8>>,
    run: &mut PeerRun,
    net: &mut Network,
    d: Datagram,
    watcher_node: PlayerId,
) {
    let local = now.plus(offset);
    let t = std::time::Instant::now();
    faulty::enter(peer.seat().0);
    if d.from == watcher_node {
        peer.handle_watcher_datagram(local, WatcherId(0), &d.bytes);
    } else {
        peer.handle_datagram(local, d.from, &d.bytes);
    }
    faulty::leave();
    drain(now, offset, peer, run, net);
    run.busy_nanos += t.elapsed().as_nanos() as u64;
}

fn drain_spectator<G: Demo>(
    now: Instant,
    s: &mut Spectator<G>,
    run: &mut SpectatorRun,
    net: &mut Network,
    scenario: &Scenario,
) {
    while let Some(event) = s.poll_event() {
        match event {
            SpectatorEvent::Stepped { frame, checksum } => {
                run.checksums.insert(frame, checksum);
            }
            SpectatorEvent::Loaded { frame, .. } => {
                run.loaded = run.loaded.or(Some((frame, now)));
                run.events.push((now, event));
            }
            other => run.events.push((now, other)),
        }
    }
    let (relay, _) = scenario.spectate.unwrap_or_default();
    let me = PlayerId(scenario.setup.players);
    while let Some(bytes) = s.poll_transmit(now) {
        net.send(now, me, relay, bytes);
    }
}

/// Takes what `peer` did at network time `now` (its clock reads `offset`
/// ahead): its events into `run`, its datagrams onto `net`.
fn drain<G: Demo>(
    now: Instant,
    offset: u64,
    peer: &mut Peer<G, Vec<u8>>,
    run: &mut PeerRun,
    net: &mut Network,
) {
    if let Some(f) = peer.session().next_local_frame().checked_sub(1) {
        run.sampled_at.entry(f).or_insert(now);
    }
    let local = now.plus(offset);
    while let Some(event) = peer.poll_event() {
        match event {
            PeerEvent::Stepped {
                frame,
                checksum,
                resimulated,
                ..
            } => {
                run.checksums.insert(frame, checksum);
                if !resimulated {
                    run.stepped_at.entry(frame).or_insert(now);
                }
            }
            PeerEvent::Healed { frame, .. } => {
                // The loaded state is the authority's result of `frame`,
                // and the frames before it that this peer got wrong now
                // hold the authority's checksums.
                if let Some((f, c)) = peer.newest_checksum().filter(|(f, _)| *f == frame) {
                    run.checksums.insert(f, c);
                }
                if let Some((first, checks)) = peer.healed_checksums() {
                    for (f, c) in (first..).zip(checks) {
                        run.checksums.insert(f, *c);
                    }
                }
                run.events.push((now, event));
            }
            other => run.events.push((now, other)),
        }
    }
    if let Some(from) = peer.unchecked_from() {
        if run.unchecked_from.last() != Some(&from) {
            run.unchecked_from.push(from);
        }
    }
    let delay = peer.session_stats().delay_frames;
    if run.delay_frames.last().map(|&(_, d)| d) != Some(delay) {
        run.delay_frames.push((now, delay));
    }
    let seat = peer.seat();
    while let Some(t) = peer.poll_transmit(local) {
        net.send(now, seat, t.to, t.bytes);
    }
    // The harness's only spectator is the network's last node.
    let watcher_node = PlayerId(peer.session().config().players);
    while let Some(t) = peer.poll_watcher_transmit(local) {
        net.send(now, seat, watcher_node, t.bytes);
    }
}

fn flip_bit<G: Demo>(peer: &mut Peer<G, Vec<u8>>, flip: &Flip) {
    let game = flipped(peer.game(), flip);
    *peer.game_mut() = game;
}

fn flipped<G: Demo>(game: &G, flip: &Flip) -> G {
    let map = StateMap::of(game);
    let bytes = map
        .with_flipped_bit(&flip.entity, &flip.field, flip.bit)
        .unwrap_or_else(|| panic!("no field `{}` of `{}` to flip", flip.field, flip.entity));
    G::decode(&bytes).expect("the flipped state decodes")
}
