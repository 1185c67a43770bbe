//! Drives 2–8 [`Session`]s, their games and a [`Network`] together on
//! virtual time, following the crate's call order, and reports what
//! happened: every peer's checksum stream, stalls, desyncs, resyncs and
//! bytes.
//!
//! Invariants: a run is a pure function of its [`Scenario`] (the network and
//! the session tokens are seeded from it); time advances only to the next
//! timeout or delivery, so a minute of game time costs only the work done;
//! nothing here decides anything the sessions should (it only answers their
//! events).

use crate::input::Input;
use crate::netsim::{LinkConfig, Loss, NetStats, Network, Transport};
use crate::player::PlayerId;
use crate::session::{Config, Event, ResyncFailure, Session, TimeoutReason};
use crate::stats::Stats;
use crate::testgame::{Buttons, Particles, scripted};
use crate::time::Instant;
use lockstep_fx::{Checksum, DecodeError, Rng};
use std::collections::BTreeMap;

/// What the harness needs from a game.
pub trait HarnessGame {
    /// The game's input.
    type Input: Input;
    /// Steps `frame` with every player's input.
    fn step(&mut self, frame: u32, inputs: &[Self::Input]);
    /// BLAKE3 of the snapshot.
    fn checksum(&self) -> Checksum;
    /// The exact snapshot.
    fn snapshot(&self) -> Vec<u8>;
    /// Loads a snapshot.
    fn load(&mut self, bytes: &[u8]) -> Result<(), DecodeError>;
    /// Flips one bit of the state (a simulated drift).
    fn corrupt(&mut self);
}

impl HarnessGame for Particles {
    type Input = Buttons;
    fn step(&mut self, frame: u32, inputs: &[Buttons]) {
        Particles::step(self, frame, inputs);
    }
    fn checksum(&self) -> Checksum {
        Particles::checksum(self)
    }
    fn snapshot(&self) -> Vec<u8> {
        Particles::snapshot(self)
    }
    fn load(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        Particles::load(self, bytes)
    }
    fn corrupt(&mut self) {
        Particles::corrupt(self);
    }
}

/// A named network condition from the acceptance table. Latencies
/// are round-trip times: the link's one-way latency is half.
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
    /// Reordering (extra 50 ms) in ppm.
    pub reorder_ppm: u32,
}

impl Condition {
    /// (a) 100 ms RTT, 1% random loss.
    pub const A: Condition = Condition {
        name: "a: 100 ms / 1%",
        rtt_ms: 100,
        loss_ppm: 10_000,
        jitter_ms: 0,
        duplicate_ppm: 0,
        reorder_ppm: 0,
    };
    /// (b) 250 ms RTT, 5% random loss.
    pub const B: Condition = Condition {
        name: "b: 250 ms / 5%",
        rtt_ms: 250,
        loss_ppm: 50_000,
        jitter_ms: 0,
        duplicate_ppm: 0,
        reorder_ppm: 0,
    };
    /// (c) 2 s RTT, 25% random loss, 0–100 ms jitter, 5% duplication, 2%
    /// reordering.
    pub const C: Condition = Condition {
        name: "c: 2 s / 25% +jitter +dup",
        rtt_ms: 2000,
        loss_ppm: 250_000,
        jitter_ms: 100,
        duplicate_ppm: 50_000,
        reorder_ppm: 20_000,
    };

    /// The condition as a UDP-like link.
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
            mtu: 1200,
            transport: Transport::Datagram,
        }
    }

    /// The condition as a TCP-like link (in order, resend after RTO = 2×RTT).
    pub const fn tcp_link(&self) -> LinkConfig {
        LinkConfig {
            transport: Transport::TcpLike {
                rto_micros: self.rtt_ms * 2000,
            },
            ..self.link()
        }
    }
}

/// A run to simulate.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Players, `2..=8`.
    pub players: u8,
    /// Seeds the network and the session tokens.
    pub seed: u64,
    /// Every directed link.
    pub link: LinkConfig,
    /// The run ends once every live peer has released this many frames.
    pub frames: u32,
    /// ... or at this virtual time, whichever comes first.
    pub max_micros: u64,
    /// Stalls before every peer released this frame are the initial playout
    /// delay and are reported apart.
    pub warmup_frames: u32,
    /// Flip a bit of `seat`'s state right after it first steps `frame`.
    pub corrupt_once: Option<(PlayerId, u32)>,
    /// Flip a bit of `seat`'s state after every frame from `frame` on,
    /// replays included (a peer that cannot be healed).
    pub corrupt_always: Option<(PlayerId, u32)>,
    /// Session settings for each seat (`local` is set by the harness).
    pub config: Config,
}

impl Scenario {
    /// Defaults: 60 s of 60 Hz frames on `link`, 2 s of warm-up.
    pub fn new(players: u8, seed: u64, link: LinkConfig) -> Scenario {
        Scenario {
            players,
            seed,
            link,
            frames: 3600,
            max_micros: 600_000_000,
            warmup_frames: 120,
            corrupt_once: None,
            corrupt_always: None,
            config: Config::new(players, PlayerId(0)),
        }
    }
}

/// Something a peer said, with when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    /// Virtual time.
    pub at: Instant,
    /// The seat that said it.
    pub seat: PlayerId,
    /// Its last released frame then.
    pub released: Option<u32>,
    /// What.
    pub what: Note,
}

/// The events a report keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// [`Event::Desync`].
    Desync {
        /// The frame.
        frame: u32,
        /// Whether the logging peer drifted.
        local_drifted: bool,
    },
    /// [`Event::LoadState`].
    Loaded {
        /// The state's frame.
        frame: u32,
        /// Its size.
        bytes: u64,
    },
    /// [`Event::ResyncFailed`].
    ResyncFailed(ResyncFailure),
    /// [`Event::PeerTimedOut`].
    TimedOut(PlayerId, TimeoutReason),
    /// [`Event::PeerDisconnected`].
    Disconnected(PlayerId),
}

/// One peer's outcome.
#[derive(Debug, Clone)]
pub struct PeerReport {
    /// Checksum of every frame stepped (a replay overwrites the first try).
    pub checksums: BTreeMap<u32, Checksum>,
    /// The session's counters at the end.
    pub stats: Stats,
    /// Stall ticks once every peer had released the warm-up frame.
    pub stalls_after_warmup: u64,
    /// When the peer released each frame for the first time.
    pub released_at: BTreeMap<u32, Instant>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    /// Per seat.
    pub peers: Vec<PeerReport>,
    /// Desyncs, loads, failures and timeouts, in order.
    pub log: Vec<Logged>,
    /// The network's counters.
    pub net: NetStats,
    /// Virtual time at the end.
    pub end: Instant,
}

impl Report {
    /// Whether every peer's checksum of every frame they all stepped agrees.
    pub fn checksums_agree(&self) -> bool {
        let n = self.common_frames();
        let first = &self.peers[0].checksums;
        self.peers.iter().all(|p| {
            (0..n).all(|f| p.checksums.contains_key(&f) && p.checksums.get(&f) == first.get(&f))
        })
    }

    /// Whether every peer's checksum agrees for every frame they all
    /// stepped outside `skip` (the frames a drifted peer stepped wrong
    /// before it loaded the authority's state).
    pub fn checksums_agree_outside(&self, skip: core::ops::Range<u32>) -> bool {
        let n = self.common_frames();
        let first = &self.peers[0].checksums;
        self.peers.iter().all(|p| {
            (0..n)
                .filter(|f| !skip.contains(f))
                .all(|f| p.checksums.contains_key(&f) && p.checksums.get(&f) == first.get(&f))
        })
    }

    /// The frames every peer stepped.
    pub fn common_frames(&self) -> u32 {
        self.peers
            .iter()
            .map(|p| p.checksums.len() as u32)
            .min()
            .unwrap_or(0)
    }

    /// Desync events logged.
    pub fn desyncs(&self) -> usize {
        self.log
            .iter()
            .filter(|l| matches!(l.what, Note::Desync { .. }))
            .count()
    }

    /// Stall ticks after warm-up, summed over peers.
    pub fn stalls_after_warmup(&self) -> u64 {
        self.peers.iter().map(|p| p.stalls_after_warmup).sum()
    }

    /// Stall ticks in total, summed over peers.
    pub fn stalls(&self) -> u64 {
        self.peers.iter().map(|p| p.stats.stall_ticks).sum()
    }
}

/// Runs `scenario` with the particle test game and scripted buttons.
pub fn run_particles(scenario: &Scenario) -> Report {
    run(scenario, |_| Particles::new(scenario.seed), scripted)
}

/// Runs `scenario`: `make_game(seat)` builds each peer's game and
/// `script(seat, frame)` gives each local input.
pub fn run<G: HarnessGame>(
    scenario: &Scenario,
    make_game: impl Fn(PlayerId) -> G,
    script: impl Fn(u8, u32) -> G::Input,
) -> Report {
    let n = scenario.players;
    let mut rng = Rng::new(scenario.seed, 0x0074_6f6b_656e);
    let mut net = Network::new(scenario.seed, n, scenario.link);
    let mut sessions: Vec<Session<G::Input>> = (0..n)
        .map(|i| {
            let cfg = Config {
                local: PlayerId(i),
                ..scenario.config.clone()
            };
            Session::new(cfg, rng.next_u32() | 1).expect("scenario config is valid")
        })
        .collect();
    let mut games: Vec<G> = (0..n).map(|i| make_game(PlayerId(i))).collect();
    let mut peers: Vec<PeerReport> = (0..n)
        .map(|_| PeerReport {
            checksums: BTreeMap::new(),
            stats: Stats::default(),
            stalls_after_warmup: 0,
            released_at: BTreeMap::new(),
        })
        .collect();
    let mut warm_stalls: Option<Vec<u64>> = None;
    let mut log = Vec::new();
    let mut now = Instant::ZERO;
    let mut spins = 0u32;
    loop {
        while let Some(d) = net.pop_due(now) {
            let i = d.to.index();
            sessions[i].handle_datagram(now, d.from, &d.bytes);
            drive(
                now,
                i,
                &mut sessions[i],
                &mut games[i],
                &mut peers[i],
                &mut log,
                &mut net,
                scenario,
                &script,
            );
        }
        for i in 0..usize::from(n) {
            if sessions[i].poll_timeout().is_some_and(|t| t <= now) {
                sessions[i].handle_timeout(now);
            }
            drive(
                now,
                i,
                &mut sessions[i],
                &mut games[i],
                &mut peers[i],
                &mut log,
                &mut net,
                scenario,
                &script,
            );
        }
        if warm_stalls.is_none()
            && sessions.iter().all(|s| {
                s.last_released()
                    .is_some_and(|f| f >= scenario.warmup_frames)
            })
        {
            warm_stalls = Some(sessions.iter().map(|s| s.stats().stall_ticks).collect());
        }
        let done = sessions
            .iter()
            .all(|s| s.last_released().is_some_and(|f| f + 1 >= scenario.frames));
        if done || now.as_micros() >= scenario.max_micros {
            break;
        }
        let next = sessions
            .iter()
            .filter_map(|s| s.poll_timeout())
            .chain(net.next_delivery())
            .min()
            .unwrap_or(Instant(scenario.max_micros));
        if next > now {
            now = next;
            spins = 0;
        } else {
            spins += 1;
            if spins > 1000 {
                now = now.plus(1);
            }
        }
    }
    let warm =
        warm_stalls.unwrap_or_else(|| sessions.iter().map(|s| s.stats().stall_ticks).collect());
    for (i, s) in sessions.iter().enumerate() {
        peers[i].stats = s.stats().clone();
        peers[i].stalls_after_warmup = s.stats().stall_ticks - warm[i];
    }
    Report {
        peers,
        log,
        net: net.stats(),
        end: now,
    }
}

#[allow(clippy::too_many_arguments)]
fn drive<G: HarnessGame>(
    now: Instant,
    i: usize,
    session: &mut Session<G::Input>,
    game: &mut G,
    peer: &mut PeerReport,
    log: &mut Vec<Logged>,
    net: &mut Network,
    scenario: &Scenario,
    script: &impl Fn(u8, u32) -> G::Input,
) {
    let seat = PlayerId(i as u8);
    while let Some(event) = session.poll_event() {
        let mut note = None;
        match event {
            Event::InputNeeded { frame } => {
                session
                    .add_local_input(frame, script(seat.0, frame))
                    .expect("asked for this frame");
            }
            Event::Frame {
                frame,
                inputs,
                resimulated,
            } => {
                game.step(frame, &inputs);
                let flip_once = scenario.corrupt_once == Some((seat, frame)) && !resimulated;
                let flip_always = scenario
                    .corrupt_always
                    .is_some_and(|(s, f)| s == seat && frame >= f);
                if flip_once || flip_always {
                    game.corrupt();
                }
                let c = game.checksum();
                peer.checksums.insert(frame, c);
                if !resimulated {
                    peer.released_at.insert(frame, now);
                }
                session
                    .report_checksum(frame, c)
                    .expect("frame was released");
            }
            Event::StateRequested => {
                if let Some(frame) = session.last_released() {
                    session
                        .provide_state(now, frame, &game.snapshot())
                        .expect("state matches its checksum");
                }
            }
            Event::LoadState { frame, state } => {
                game.load(&state).expect("authority's snapshot loads");
                peer.checksums.insert(frame, game.checksum());
                note = Some(Note::Loaded {
                    frame,
                    bytes: state.len() as u64,
                });
            }
            Event::Desync {
                frame,
                local_drifted,
                ..
            } => {
                note = Some(Note::Desync {
                    frame,
                    local_drifted,
                })
            }
            Event::ResyncFailed { reason } => note = Some(Note::ResyncFailed(reason)),
            Event::PeerTimedOut { peer, reason } => note = Some(Note::TimedOut(peer, reason)),
            Event::PeerDisconnected { peer } => note = Some(Note::Disconnected(peer)),
            Event::PeerConnected { .. }
            | Event::Started
            | Event::Incompatible { .. }
            | Event::SeatDropped { .. } => {}
        }
        if let Some(what) = note {
            log.push(Logged {
                at: now,
                seat,
                released: session.last_released(),
                what,
            });
        }
    }
    while let Some(t) = session.poll_transmit(now) {
        net.send(now, seat, t.to, t.bytes);
    }
}
