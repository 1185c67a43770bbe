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

use std::collections::VecDeque;

mod outcome;
mod scenario;

pub use outcome::{PeerRun, Run, SpectatorRun};
pub use scenario::{Condition, DATAGRAM_OVERHEAD, Flip, Partition, Pause, Scenario, Slow};

use crate::faulty;
use crate::netsim::{Datagram, Network};
use lockstep_fx::Rng;
use lockstep_games::Demo;
use lockstep_peer::{Peer, PeerEvent, PeerSettings, Spectator, SpectatorEvent, StopReason};
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::spectate::{SpectateConfig, SpectatorId};
use lockstep_protocol::{Config, Instant, SeatId, Security};
use lockstep_sim::StateMap;

/// A seeded key pair (tests only: real endpoints draw their secret from
/// the operating system).
fn identity(rng: &mut Rng) -> Identity {
    let mut secret = [0u8; 32];
    for chunk in secret.chunks_exact_mut(4) {
        chunk.copy_from_slice(&rng.next_u32().to_le_bytes());
    }
    Identity::from_secret(secret)
}

/// A paused seat: when it wakes, and what waits in its socket.
/// The slow seat's process: busy stepping until `until`, its socket
/// holding what arrived meanwhile.
#[derive(Default)]
struct Busy {
    until: Instant,
    queue: VecDeque<Datagram>,
}

impl Busy {
    /// Charges the frames `peer` stepped since it had stepped `before`:
    /// busy for their cost from `now`, reported to the peer if `slow` says.
    fn charge<G: Demo>(
        &mut self,
        slow: &Slow,
        peer: &mut Peer<G, Vec<u8>>,
        before: u64,
        now: Instant,
    ) {
        let frames = peer.stats().frames_stepped.saturating_sub(before);
        if frames > 0 {
            let cost = frames * slow.step_micros;
            if slow.reports {
                peer.spent(cost);
            }
            self.until = now.plus(cost);
        }
    }
}

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
            && live.lowest() == Some(SeatId(j as u8))
            && !live.contains(SeatId(seat as u8))
    })
}

/// Plays `scenario` of game `G` with settings `config`.
pub fn run<G: Demo>(scenario: &Scenario, config: &G::Config) -> Run {
    let n = scenario.setup.seats;
    let mut rng = Rng::new(scenario.setup.seed, 0x6d65_7368);
    // The spectator, if any, is the network's last node.
    let spectator_node = SeatId(n);
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
    let threads = |seat: usize| scenario.threads.get(seat).copied().unwrap_or(1);
    let mut peers: Vec<Peer<G, Vec<u8>>> = (0..n)
        .map(|seat| {
            let mut settings = PeerSettings::new(&scenario.setup, SeatId(seat), rng.next_u32() | 1);
            settings.session = Config {
                local: SeatId(seat),
                security: security(&identities[usize::from(seat)], &seat_keys),
                ..scenario.session.clone()
            };
            settings.desync_policy = scenario.policy;
            let mut peer = Peer::new(config, scenario.setup, settings, Vec::new())
                .expect("the scenario's match is valid");
            peer.set_threads(threads(usize::from(seat)));
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
    let mut vanished: Option<SeatId> = None;
    let mut vanish_done = false;
    let mut paused: Option<Paused> = None;
    let mut pause_done = false;
    let slow = scenario.slow;
    let is_slow = |i: usize| slow.is_some_and(|s| s.seat.index() == i);
    let mut busy = Busy::default();
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
            let (peer, run) = (&mut peers[i], &mut runs[i]);
            deliver_all(now, offset(i), peer, run, &mut net, p.queue, spectator_node);
        }
        if let Some(s) = slow
            .as_ref()
            .filter(|_| busy.until <= now && !busy.queue.is_empty())
        {
            // Done stepping: the socket's backlog, which may step more.
            let i = s.seat.index();
            let before = peers[i].stats().frames_stepped;
            let (peer, run, queue) = (&mut peers[i], &mut runs[i], std::mem::take(&mut busy.queue));
            deliver_all(now, offset(i), peer, run, &mut net, queue, spectator_node);
            busy.charge(s, &mut peers[i], before, now);
        }
        if cut_until.is_some_and(|t| t <= now) {
            cut_until = None;
            cut_partition(&mut net, scenario, false);
        }
        while let Some(d) = net.pop_due(now) {
            if vanished.is_some_and(|v| v == d.to || v == d.from) {
                continue;
            }
            if d.to == spectator_node {
                if let Some((s, r)) = spectator.as_mut() {
                    faulty::enter(spectator_node.0);
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
            if is_slow(i) && now < busy.until {
                busy.queue.push_back(d);
                continue;
            }
            let before = peers[i].stats().frames_stepped;
            deliver(
                now,
                offset(i),
                &mut peers[i],
                &mut runs[i],
                &mut net,
                d,
                spectator_node,
            );
            if let Some(s) = slow.as_ref().filter(|_| is_slow(i)) {
                busy.charge(s, &mut peers[i], before, now);
            }
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
                let v = SeatId(i as u8);
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
                peer.set_threads(threads(i));
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
            if is_slow(i) && now < busy.until {
                continue;
            }
            let t = std::time::Instant::now();
            let before = peers[i].stats().frames_stepped;
            if peers[i].poll_timeout().is_some_and(|t| t <= local(now, i)) {
                faulty::enter(i as u8);
                peers[i].handle_timeout(local(now, i));
                faulty::leave();
            }
            drain(now, offset(i), &mut peers[i], &mut runs[i], &mut net);
            runs[i].busy_nanos += t.elapsed().as_nanos() as u64;
            if let Some(s) = slow.as_ref().filter(|_| is_slow(i)) {
                busy.charge(s, &mut peers[i], before, now);
            }
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
            let v = SeatId(seat as u8);
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
                let spectate = SpectateConfig::new(n, scenario.session.tick_micros);
                let token = rng.next_u32() | 1;
                let mut s = Spectator::new(config, scenario.setup, spectate, token, now)
                    .expect("the scenario's match is valid");
                s.set_threads(scenario.spectator_threads);
                if scenario.sealed {
                    let own = identity(&mut rng);
                    s = s
                        .sealed(&own, seat_keys[relay.index()])
                        .expect("seeded keys are usable");
                    peers[relay.index()]
                        .admit_spectator(SpectatorId(0), own.public())
                        .expect("seeded keys are usable");
                }
                if scenario.session.arbiter == Some(relay) {
                    peers[relay.index()].name_arbiter(SpectatorId(0));
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
                faulty::enter(spectator_node.0);
                s.handle_timeout(now);
                faulty::leave();
            }
            drain_spectator(now, s, r, &mut net, scenario);
            if let Some(f) = flip.as_ref().filter(|f| f.seat == spectator_node) {
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
            .filter_map(|p| {
                let at = global(p.poll_timeout()?, p.seat().index());
                Some(if is_slow(p.seat().index()) {
                    at.max(busy.until)
                } else {
                    at
                })
            })
            .chain((!busy.queue.is_empty()).then_some(busy.until))
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
            r.connection = *s.connection_stats();
            r.threads = s.threads();
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
    let nodes = scenario.setup.seats + 1;
    for a in 0..nodes {
        for b in 0..nodes {
            let (a, b) = (SeatId(a), SeatId(b));
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
        .map(|s| peer.session().clock_offset(SeatId(s)))
        .collect();
    r.frame_advantage = (0..n)
        .map(|s| peer.session().frame_advantage(SeatId(s)))
        .collect();
    r.stopped = peer.stopped().cloned();
    r.threads = peer.threads();
    r.settled_through = peer.session().newest_clean();
    r.invalidation = peer.invalidation().copied();
    r.log = if r.vanished {
        None
    } else {
        peer.finish().ok().flatten()
    };
}

/// Hands a seat that wakes (resumed, or done stepping) the datagrams its
/// socket held meanwhile, in arrival order, as [`deliver`] does one.
fn deliver_all<G: Demo>(
    now: Instant,
    offset: u64,
    peer: &mut Peer<G, Vec<u8>>,
    run: &mut PeerRun,
    net: &mut Network,
    queue: VecDeque<Datagram>,
    spectator_node: SeatId,
) {
    for d in queue {
        deliver(now, offset, peer, run, net, d, spectator_node);
    }
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
    spectator_node: SeatId,
) {
    let local = now.plus(offset);
    let t = std::time::Instant::now();
    faulty::enter(peer.seat().0);
    if d.from == spectator_node {
        peer.handle_spectator_datagram(local, SpectatorId(0), &d.bytes);
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
    let me = SeatId(scenario.setup.seats);
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
    // Every frame sampled since the last call (a lockstep turn samples
    // several at once).
    let sampled = peer.session().next_input_frame();
    let from = run
        .sampled_at
        .keys()
        .next_back()
        .map_or(sampled.saturating_sub(1), |f| f + 1);
    for f in from..sampled {
        run.sampled_at.insert(f, now);
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
    let spectator_node = SeatId(peer.session().config().seats);
    while let Some(t) = peer.poll_spectator_transmit(local) {
        net.send(now, seat, spectator_node, t.bytes);
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
