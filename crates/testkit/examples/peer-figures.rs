//! Figures of the `Peer` seam, measured on the simulated network:
//!
//! - how many frames after a flipped bit the desync is detected and healed
//!   (both games, two network conditions, several seeds; medians);
//! - the bytes and time to rejoin a match: a peer vanishes, its seat is
//!   dropped, its restarted process rejoins at frame 1800;
//! - the bytes and time for a spectator to join at frame 1200, and what its
//!   feed costs the relay;
//! - the CPU time a peer spends per frame outside the game's own `step`;
//! - a seat's time per frame with its frames on one thread and on two
//!   (`Peer::set_threads`).
//!
//! `cargo run --release -p lockstep-testkit --features figures --example peer-figures`

// A report: floats only format measured times, nothing flows back.
#![allow(clippy::float_arithmetic)]

use std::time::Instant as Clock;

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_peer::{PeerEvent, SpectatorEvent};
use lockstep_protocol::SeatId;
use lockstep_sim::replay;
use lockstep_testkit::mesh::{self, Condition, Flip, Scenario};

const TICK_MICROS: u64 = 16_667;

/// The median of measured times.
fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Frames from the flip to the first desync event and to the heal, at the
/// drifted peer, over `seeds` runs.
fn flip_figures<G: Demo>(entity: &str, cond: Condition, seeds: u64) -> (u64, u64, u64, usize) {
    let (mut detect, mut heal, mut bytes, mut healed) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for seed in 0..seeds {
        let mut s = Scenario::new(2, 100 + seed, cond.link(), 900);
        s.flip = Some(Flip {
            seat: SeatId(1),
            frame: 400,
            entity: entity.into(),
            field: "position".into(),
            bit: 20,
            repeat: false,
        });
        let run = mesh::run::<G>(&s, &G::default_config());
        let Some(at) = run.flipped_at else { continue };
        let frames = |t: lockstep_protocol::Instant| t.since(at) / TICK_MICROS;
        let peer = &run.peers[1];
        if let Some((t, _)) = peer
            .events
            .iter()
            .find(|(_, e)| matches!(e, PeerEvent::Desync { .. }))
        {
            detect.push(frames(*t));
        }
        if let Some((t, e)) = peer
            .events
            .iter()
            .find(|(_, e)| matches!(e, PeerEvent::Healed { .. }))
        {
            heal.push(frames(*t));
            if let PeerEvent::Healed { state_bytes, .. } = e {
                bytes.push(*state_bytes);
            }
            healed += 1;
        }
    }
    (median(detect), median(heal), median(bytes), healed)
}

/// For a 2-peer match on a good network, per frame: the peer's time, the
/// game's own `step` alone, and `step` plus the checksum (what
/// `Engine::advance` does without any network).
fn overhead<G: Demo>(frames: u32) -> (f64, f64, f64) {
    let s = Scenario::new(2, 3, Condition::GOOD.link(), frames);
    let runs: Vec<_> = (0..3)
        .map(|_| mesh::run::<G>(&s, &G::default_config()))
        .collect();
    let mut peer_runs: Vec<f64> = runs
        .iter()
        .map(|r| {
            let p = &r.peers[0];
            let stepped = p.stats.frames_stepped + p.stats.frames_resimulated;
            p.busy_nanos as f64 / 1000.0 / stepped as f64
        })
        .collect();
    peer_runs.sort_by(f64::total_cmp);
    let peer_us = peer_runs[1];
    let p = &runs[0].peers[0];
    // The same frames, stepped alone, then stepped and checksummed.
    let log = replay::read::<G::Input>(p.log.as_ref().expect("recorded")).expect("reads");
    let per_frame = |checksum: bool| {
        let mut game = G::new(&G::default_config(), &log.header().setup).expect("setup");
        let t = Clock::now();
        for f in 0..log.frames() {
            game.step(f, log.inputs(f).expect("logged"));
            if checksum {
                std::hint::black_box(game.checksum());
            }
        }
        t.elapsed().as_secs_f64() * 1e6 / f64::from(log.frames().max(1))
    };
    // Medians of five runs of each, interleaved, so machine noise hits
    // both alike.
    let (mut step, mut summed) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        step.push(per_frame(false));
        summed.push(per_frame(true));
    }
    (peer_us, median_f64(step), median_f64(summed))
}

/// Seat 0's time per frame (in its calls, from its first frame to the
/// match's end) with its frames on `threads` threads, the other seats on
/// one: a match of `frames` frames of `seats` seats on a good network. The
/// peers run one after another on this thread, so seat 0's helpers have
/// the machine's other cores to themselves, as on a machine of its own.
fn seat_micros<G: Demo>(seats: u8, config: &G::Config, frames: u32, threads: usize) -> f64 {
    let mut s = Scenario::new(seats, 3, Condition::GOOD.link(), frames);
    s.threads = vec![threads];
    let run = mesh::run::<G>(&s, config);
    assert!(run.first_disagreement().is_none(), "the seats disagree");
    let p = &run.peers[0];
    assert_eq!(p.threads, threads);
    let stepped = p.stats.frames_stepped + p.stats.frames_resimulated;
    p.busy_nanos as f64 / 1000.0 / stepped.max(1) as f64
}

/// Prints the row `name` of the thread table: [`seat_micros`] on one
/// thread and on two, medians of three matches each, alternating, so
/// machine noise hits both alike.
fn thread_row<G: Demo>(name: &str, seats: u8, config: &G::Config, frames: u32) {
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        one.push(seat_micros::<G>(seats, config, frames, 1));
        two.push(seat_micros::<G>(seats, config, frames, 2));
    }
    let (one, two) = (median_f64(one), median_f64(two));
    println!(
        "{name:<22} {frames:>8} {one:>12.1} {two:>12.1} {:>8.2}",
        one / two
    );
}

/// A seat vanishes at frame 1500 and its restarted process rejoins once the
/// others passed frame 1800: state bytes, bytes on the wire, virtual ms from
/// the restart to the loaded state, and the longest gap between two frames
/// at the other peers after the restart.
fn rejoin_figures<G: Demo>(seats: u8) -> (u64, u64, u64, u64, bool) {
    let mut s = Scenario::new(seats, 9, Condition::GOOD.link(), 2400);
    let seat = SeatId(seats - 1);
    s.vanish = Some((seat, 1500));
    s.rejoin_at = Some(1800);
    let run = mesh::run::<G>(&s, &G::default_config());
    let start = run.rejoined_at.expect("rejoined");
    let rejoined = &run.peers[seat.index()];
    let (healed_at, bytes) = rejoined
        .events
        .iter()
        .find_map(|(t, e)| match e {
            PeerEvent::Healed { state_bytes, .. } => Some((*t, *state_bytes)),
            _ => None,
        })
        .expect("loaded the host's state");
    let wire = run.peers[0].session.resync_bytes_sent();
    let mut gap = 0;
    for p in run.remaining().filter(|p| !std::ptr::eq(*p, rejoined)) {
        let mut prev = None;
        for t in p.stepped_at.values().filter(|t| **t >= start) {
            if let Some(q) = prev {
                gap = gap.max(t.since(q));
            }
            prev = Some(*t);
        }
    }
    (
        bytes,
        wire,
        healed_at.since(start) / 1000,
        gap / 1000,
        run.first_disagreement().is_none(),
    )
}

/// A spectator joins through seat 0 once it passed frame 1200: state
/// bytes, bytes the relay sent it, virtual ms from its first packet to the
/// loaded state, its lag behind the relay at the end (frames), the relay's
/// feed rate (kbit/s) and whether every frame it stepped agrees.
fn spectator_figures<G: Demo>(seats: u8, cond: Condition) -> (u64, u64, u64, u64, u64, bool) {
    let mut s = Scenario::new(seats, 11, cond.link(), 2400);
    s.spectate = Some((SeatId(0), 1200));
    let run = mesh::run::<G>(&s, &G::default_config());
    let sp = run.spectator.as_ref().expect("joined");
    let (_, loaded_at) = sp.loaded.expect("loaded");
    let state = sp
        .events
        .iter()
        .find_map(|(_, e)| match e {
            SpectatorEvent::Loaded { state_bytes, .. } => Some(*state_bytes),
            _ => None,
        })
        .unwrap_or(0);
    let newest = sp.checksums.keys().next_back().copied().unwrap_or(0);
    let lag = u64::from(
        run.peers[0]
            .checksums
            .keys()
            .next_back()
            .copied()
            .unwrap_or(0),
    )
    .saturating_sub(u64::from(newest));
    let secs = run.end.since(sp.joined_at).max(1);
    let rate = sp.connection.received.bytes * 8 * 1000 / secs;
    let agree = sp
        .checksums
        .iter()
        .all(|(f, c)| run.peers.iter().all(|p| p.checksums.get(f) == Some(c)));
    (
        state,
        sp.connection.received.bytes,
        loaded_at.since(sp.joined_at) / 1000,
        lag,
        rate,
        agree && sp.stats.checksums_differing == 0,
    )
}

fn main() {
    println!("flipped bit at frame 400 of a 2-peer match (default scenes), 5 seeds each; medians");
    println!(
        "{:<8} {:<14} {:>16} {:>14} {:>12} {:>8}",
        "game", "network", "frames→detected", "frames→healed", "state B", "healed"
    );
    for cond in [Condition::GOOD, Condition::POOR] {
        let (d, h, b, n) = flip_figures::<Cubes>("body 40", cond, 5);
        println!(
            "{:<8} {:<14} {d:>16} {h:>14} {b:>12} {n:>6}/5",
            "cubes", cond.name
        );
        let (d, h, b, n) = flip_figures::<Rts>("body 40", cond, 5);
        println!(
            "{:<8} {:<14} {d:>16} {h:>14} {b:>12} {n:>6}/5",
            "rts", cond.name
        );
    }
    println!();
    println!(
        "rejoin: a seat vanishes at frame 1500, its restarted process rejoins after frame 1800 (default scenes, 100 ms / 1%)"
    );
    println!(
        "{:<14} {:>10} {:>12} {:>20} {:>28} {:>8}",
        "game", "state B", "wire B", "restart→loaded ms", "others' longest gap ms", "agree"
    );
    for (name, f) in [
        ("cubes, 2 peers", rejoin_figures::<Cubes>(2)),
        ("rts, 4 peers", rejoin_figures::<Rts>(4)),
    ] {
        println!(
            "{name:<14} {:>10} {:>12} {:>20} {:>28} {:>8}",
            f.0, f.1, f.2, f.3, f.4
        );
    }
    println!();
    println!("spectator: joins through seat 0 after frame 1200 of 2400 (default scenes)");
    println!(
        "{:<14} {:<14} {:>10} {:>12} {:>16} {:>10} {:>12} {:>8}",
        "game",
        "network",
        "state B",
        "received B",
        "join→loaded ms",
        "lag fr",
        "feed kbit/s",
        "agree"
    );
    for (name, cond, f) in [
        (
            "cubes, 2 peers",
            Condition::GOOD,
            spectator_figures::<Cubes>(2, Condition::GOOD),
        ),
        (
            "cubes, 2 peers",
            Condition::POOR,
            spectator_figures::<Cubes>(2, Condition::POOR),
        ),
        (
            "rts, 4 peers",
            Condition::GOOD,
            spectator_figures::<Rts>(4, Condition::GOOD),
        ),
        (
            "rts, 4 peers",
            Condition::POOR,
            spectator_figures::<Rts>(4, Condition::POOR),
        ),
    ] {
        println!(
            "{name:<14} {:<14} {:>10} {:>12} {:>16} {:>10} {:>12} {:>8}",
            cond.name, f.0, f.1, f.2, f.3, f.4, f.5
        );
    }
    println!();
    println!(
        "CPU per frame, 2-peer match of 1200 frames at 100 ms / 1% (default scenes), one peer; medians of 3 matches and 5 replays"
    );
    println!(
        "{:<8} {:>12} {:>12} {:>16} {:>22}",
        "game", "peer µs", "step µs", "step+checksum µs", "peer − step+checksum µs"
    );
    for (name, (peer, step, summed)) in [
        ("cubes", overhead::<Cubes>(1200)),
        ("rts", overhead::<Rts>(1200)),
    ] {
        println!(
            "{name:<8} {peer:>12.1} {step:>12.1} {summed:>16.1} {:>22.1}",
            peer - summed
        );
    }
    thread_table();
}

/// The table of [`thread_row`]s.
fn thread_table() {
    println!();
    println!(
        "a seat's frames on 1 and 2 threads (Peer::set_threads; the other seats on 1), good network, seat 0's µs per frame; medians of 3 matches each"
    );
    println!(
        "{:<22} {:>8} {:>12} {:>12} {:>8}",
        "game", "frames", "1 thread", "2 threads", "1 / 2"
    );
    thread_row::<Cubes>("cubes, 2 seats", 2, &Cubes::default_config(), 600);
    thread_row::<Rts>("rts, 4 seats", 4, &Rts::default_config(), 600);
    let mut large = Rts::default_config();
    large.units_per_player = 1024;
    thread_row::<Rts>("rts, 8 seats × 1 024", 8, &large, 300);
}
