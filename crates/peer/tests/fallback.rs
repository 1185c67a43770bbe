//! The snapshot fall-back, on virtual time: a peer whose game keeps
//! drifting exhausts its resync attempts, switches to the authority's
//! snapshot stream (and shows it within the stream's bound of the
//! authority's state), keeps playing, and returns to lockstep once a later
//! resync holds.

use std::collections::{BTreeMap, VecDeque};

use lockstep_fx::{Fx, Vec3};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_peer::{
    DesyncPolicy, FallbackReason, Peer, PeerEvent, PeerSettings, SnapshotSettings,
};
use lockstep_protocol::{Instant, Mode, SeatId};
use lockstep_sim::Match;
use lockstep_snapshot::{Bodies, BodiesMut};

/// The cube demo on a 5 × 5 field.
fn tiny() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

/// One-way delay of the virtual link.
const LATENCY: u64 = 20_000;

struct Match2 {
    peers: Vec<Peer<Cubes, std::io::Sink>>,
    wire: VecDeque<(Instant, usize, SeatId, Vec<u8>)>,
    now: Instant,
    events: Vec<Vec<PeerEvent>>,
}

impl Match2 {
    fn new(settings: SnapshotSettings) -> Match2 {
        Match2::with_mode(settings, Mode::Lockstep)
    }

    fn with_mode(settings: SnapshotSettings, mode: Mode) -> Match2 {
        let setup = Match {
            seats: 2,
            seed: 5,
            tick_rate: 60,
        };
        let config = tiny();
        let peers = (0..2u8)
            .map(|seat| {
                let mut s = PeerSettings::new(&setup, SeatId(seat), 40 + u32::from(seat));
                s.session.mode = mode;
                s.desync_policy = DesyncPolicy::Snapshots;
                let mut p = Peer::new(&config, setup, s, std::io::sink()).unwrap();
                p.set_bot(Box::new(Cubes::bot(seat, setup.seed)));
                p.enable_snapshots(settings).unwrap();
                p
            })
            .collect();
        Match2 {
            peers,
            wire: VecDeque::new(),
            now: Instant::ZERO,
            events: vec![Vec::new(), Vec::new()],
        }
    }

    /// One millisecond of virtual time.
    fn tick(&mut self) {
        while self.wire.front().is_some_and(|w| w.0 <= self.now) {
            let (_, to, from, bytes) = self.wire.pop_front().unwrap();
            self.peers[to].handle_datagram(self.now, from, &bytes);
        }
        for i in 0..2 {
            if self.peers[i].poll_timeout().is_some_and(|t| t <= self.now) {
                self.peers[i].handle_timeout(self.now);
            }
            while let Some(e) = self.peers[i].poll_event() {
                self.events[i].push(e);
            }
            while let Some(t) = self.peers[i].poll_transmit(self.now) {
                let at = self.now.plus(LATENCY);
                self.wire
                    .push_back((at, t.to.index(), SeatId(i as u8), t.bytes));
            }
        }
        self.now = self.now.plus(1_000);
    }

    fn happened(&self, peer: usize, f: impl Fn(&PeerEvent) -> bool) -> bool {
        self.events[peer].iter().any(f)
    }
}

/// Whether `shown`, a snapshot of `frame`, is within the stream's bound of
/// the authority's states (`states`, by frame): half a quantization step
/// (1/1024 m) for every body, and for a moving body half a step of its
/// residuals, at most an eighth of how far it moves in a frame (read here
/// off the fastest frame of the 16 before, with room for the noise of the
/// values the sender reads it from).
fn within_bound(
    shown: &[lockstep_peer::Pose],
    frame: u32,
    states: &BTreeMap<u32, Vec<Vec3>>,
) -> Result<(), String> {
    let Some(exact) = states.get(&frame) else {
        return Ok(());
    };
    let largest = |d: Vec3| d.x.abs().max(d.y.abs()).max(d.z.abs());
    for (i, (pose, want)) in shown.iter().zip(exact).enumerate() {
        let fastest = (frame.saturating_sub(16)..frame)
            .filter_map(|f| Some(largest(states.get(&(f + 1))?[i] - states.get(&f)?[i])))
            .fold(Fx::ZERO, Fx::max);
        let bound = Fx::from_ratio(1, 1024)
            .saturating_add(fastest.scale_pow2(-2))
            .saturating_add(Fx::from_bits(4));
        let worst = largest(pose.position - *want);
        if worst > bound {
            return Err(format!("frame {frame}, body {i}: {worst:?} > {bound:?}"));
        }
    }
    Ok(())
}

/// Every body slot's position in `game`.
fn positions(game: &Cubes) -> Vec<Vec3> {
    (0..game.body_slots())
        .map(|s| game.body(s).map(|(b, _)| b.position).unwrap_or(Vec3::ZERO))
        .collect()
}

#[test]
fn a_peer_that_keeps_drifting_falls_back_to_snapshots_and_returns_after_a_resync_holds() {
    falls_back_and_returns(Mode::Lockstep);
}

/// The same in rollback mode: the fall-back and the return work on
/// confirmed frames, whatever was predicted meanwhile.
#[test]
fn a_rollback_peer_that_keeps_drifting_falls_back_and_returns() {
    falls_back_and_returns(Mode::ROLLBACK);
}

fn falls_back_and_returns(mode: Mode) {
    let settings = SnapshotSettings {
        retry_after_micros: 3_000_000,
        ..SnapshotSettings::default()
    };
    let mut m = Match2::with_mode(settings, mode);
    // The authority's bodies after each frame it stepped.
    let mut authority: BTreeMap<u32, Vec<Vec3>> = BTreeMap::new();
    let mut drifting = true;
    let mut last_nudged = 0;
    let mut compared = std::collections::BTreeSet::new();
    let mut shown = 0;
    while m.now < Instant::from_millis(30_000) {
        m.tick();
        if let Some(f) = m.peers[0].frame().checked_sub(1) {
            authority
                .entry(f)
                .or_insert_with(|| positions(m.peers[0].game()));
        }
        // Peer 1's platform drifts: a cube moves by a centimetre every
        // frame after frame 60, until it has fallen back.
        let f1 = m.peers[1].frame();
        if drifting && f1 > 60 && f1 != last_nudged {
            last_nudged = f1;
            let game = m.peers[1].game_mut();
            if let Some((mut b, _)) = game.body(4) {
                b.position.x = b.position.x.saturating_add(Fx::lit("0.01"));
                game.set_body(4, &b);
            }
        }
        if drifting && m.peers[1].is_on_snapshots() {
            drifting = false;
        }
        // While on snapshots, what it shows is the authority's state at the
        // snapshot's frame, within the stream's bound.
        if m.peers[1].is_on_snapshots() {
            // The interpolated view starts a playout delay after the first
            // snapshot.
            if m.peers[1].snapshot_view(m.now).is_some() {
                shown += 1;
            }
            if let Some((frame, poses)) = m.peers[1].newest_snapshot() {
                if authority.contains_key(&frame) {
                    within_bound(&poses, frame, &authority).unwrap();
                    compared.insert(frame);
                }
            }
        }
        if m.happened(1, |e| matches!(e, PeerEvent::BackToLockstep { .. })) {
            break;
        }
    }
    // It failed resync, switched to the seat-0 authority's snapshots...
    assert!(m.happened(1, |e| matches!(e, PeerEvent::ResyncFailed { .. })));
    assert!(m.happened(1, |e| matches!(
        e,
        PeerEvent::SwitchedToSnapshots {
            authority: SeatId(0),
            reason: FallbackReason::ResyncFailed(_)
        }
    )));
    let stats = m.peers[1].snapshot_stats().unwrap();
    assert_eq!(stats.switches, 1);
    assert!(
        stats.received.snapshots > 20 && stats.received.undecodable == 0,
        "{stats:?}"
    );
    assert!(
        compared.len() > 20,
        "only {} snapshots compared",
        compared.len()
    );
    assert!(shown > 1_000, "the view was drawn for {shown} ms");
    let served = m.peers[0].snapshot_stats().unwrap().served;
    assert!(served.snapshots > 20 && served.too_large == 0, "{served:?}");
    // ...and came back once a retried resync held.
    assert!(m.happened(1, |e| matches!(e, PeerEvent::Healed { .. })));
    assert!(
        m.happened(1, |e| matches!(e, PeerEvent::BackToLockstep { .. })),
        "still on snapshots at {:?}",
        m.now
    );
    assert!(!m.peers[1].is_on_snapshots());
    assert_eq!(m.peers[1].snapshot_stats().unwrap().returns, 1);
    // Lockstep holds again: the peers' checksums agree from then on.
    let clean = m.peers[1].session().newest_clean().unwrap();
    for _ in 0..2_000 {
        m.tick();
    }
    assert!(m.peers[1].session().newest_clean().unwrap() > clean + 60);
    assert!(!m.peers[1].session().resync_failed());
}

#[test]
fn a_viewer_shows_snapshots_from_the_start_and_keeps_playing() {
    let settings = SnapshotSettings {
        viewer: true,
        ..SnapshotSettings::default()
    };
    let mut m = Match2::new(settings);
    while m.now < Instant::from_millis(3_000) {
        m.tick();
    }
    // Both seats are viewers here: each shows the other's snapshots.
    for i in 0..2 {
        assert!(m.peers[i].is_on_snapshots());
        assert!(m.happened(i, |e| matches!(
            e,
            PeerEvent::SwitchedToSnapshots {
                reason: FallbackReason::Viewer,
                ..
            }
        )));
        assert!(m.peers[i].snapshot_view(m.now).is_some());
        // Its inputs keep the match going.
        assert!(m.peers[i].frame() > 120);
    }
}

#[test]
fn a_spectator_watching_snapshots_sees_the_relays_state_within_the_streams_bound() {
    use lockstep_peer::{SnapshotSpectator, SnapshotSpectatorEvent};
    use lockstep_protocol::spectate::{SpectateConfig, SpectatorId};

    let mut m = Match2::new(SnapshotSettings::default());
    let setup = Match {
        seats: 2,
        seed: 5,
        tick_rate: 60,
    };
    let spectate = SpectateConfig::new(
        2,
        PeerSettings::new(&setup, SeatId(0), 1).session.tick_micros,
    );
    let mut spectator: SnapshotSpectator<Cubes> = SnapshotSpectator::new(
        &tiny(),
        setup,
        spectate,
        SnapshotSettings::default(),
        77,
        m.now,
    )
    .unwrap();
    let mut to_relay: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut to_spectator: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut relay_states: BTreeMap<u32, Vec<Vec3>> = BTreeMap::new();
    let (mut snapshots, mut compared) = (0, 0);
    while m.now < Instant::from_millis(4_000) {
        m.tick();
        if let Some(f) = m.peers[0].frame().checked_sub(1) {
            relay_states
                .entry(f)
                .or_insert_with(|| positions(m.peers[0].game()));
        }
        while to_relay.front().is_some_and(|d| d.0 <= m.now) {
            let (_, bytes) = to_relay.pop_front().unwrap();
            m.peers[0].handle_spectator_datagram(m.now, SpectatorId(1), &bytes);
        }
        while let Some(t) = m.peers[0].poll_spectator_transmit(m.now) {
            to_spectator.push_back((m.now.plus(LATENCY), t.bytes));
        }
        while to_spectator.front().is_some_and(|d| d.0 <= m.now) {
            let (_, bytes) = to_spectator.pop_front().unwrap();
            spectator.handle_datagram(m.now, &bytes);
        }
        if spectator.poll_timeout().is_some_and(|t| t <= m.now) {
            spectator.handle_timeout(m.now);
        }
        while let Some(e) = spectator.poll_event() {
            if let SnapshotSpectatorEvent::Snapshot { frame } = e {
                snapshots += 1;
                let (_, poses) = spectator.newest_snapshot().unwrap();
                if relay_states.contains_key(&frame) {
                    within_bound(&poses, frame, &relay_states).unwrap();
                    compared += 1;
                }
            }
        }
        while let Some(bytes) = spectator.poll_transmit(m.now) {
            to_relay.push_back((m.now.plus(LATENCY), bytes));
        }
    }
    // 60 snapshots a second for most of 4 s, none refused.
    assert!(snapshots > 160, "{snapshots}");
    assert!(compared > 40, "{compared}");
    assert_eq!(spectator.stats().undecodable, 0);
    assert!(spectator.poses(m.now).is_some());
    // The relay streamed snapshots, and never its exact state.
    assert_eq!(m.peers[0].relay().stats().states_served, 0);
}
