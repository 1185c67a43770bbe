//! Rollback mode played through `Peer` over the simulated network: peers
//! step at once on predicted inputs, roll back when a prediction was wrong,
//! and still agree bit for bit on every confirmed frame, record only
//! confirmed inputs, and heal a desync; the sync test re-steps every frame
//! on the real rollback path; clocks that start apart are brought together.

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{PeerEvent, SeatEvent};
use lockstep_protocol::{InputDelay, Mode, Rollback, SeatId};
use lockstep_sim::Game;
use lockstep_testkit::mesh::{self, Condition, Flip, Run, Scenario};
use lockstep_testkit::verdict;

/// The cube demo on a 10 × 10 field.
fn small_cubes() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 10;
    c
}

/// The RTS with 24 units a player.
fn small_rts() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 24;
    c
}

fn rollback(input_delay: InputDelay) -> Mode {
    Mode::Rollback(Rollback {
        input_delay,
        ..Rollback::DEFAULT
    })
}

fn scenario(seats: u8, seed: u64, cond: Condition, frames: u32, mode: Mode) -> Scenario {
    let mut s = Scenario::new(seats, seed, cond.link(), frames);
    s.session.mode = mode;
    s
}

fn assert_agree<G: Game>(run: &Run, frames: u32) {
    if let Err(e) = verdict::check::<G>(run, frames) {
        panic!("{e}");
    }
    for (seat, p) in run.peers.iter().enumerate() {
        assert_eq!(p.stats.nondeterministic_frames, 0, "seat {seat}");
        assert_eq!(p.stats.refused_calls, 0, "seat {seat}");
    }
}

fn desyncs(run: &Run) -> usize {
    run.events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()))
        .len()
}

fn median(mut v: Vec<u32>) -> u32 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

#[test]
fn rollback_peers_predict_roll_back_and_agree_on_every_confirmed_frame() {
    let s = scenario(2, 21, Condition::GOOD, 480, rollback(InputDelay::Fixed(1)));
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert_agree::<Cubes>(&run, 480);
    assert_eq!(desyncs(&run), 0);
    for p in &run.peers {
        assert!(p.stats.frames_predicted > 100, "{:?}", p.stats);
        assert!(p.stats.rollbacks > 0, "{:?}", p.stats);
        assert!(p.stats.frames_rolled_back >= p.stats.rollbacks);
        // The local input shows one frame (the input delay) after it is
        // sampled, however far away the other peer is.
        assert_eq!(median(p.input_latency_frames(16_667)), 1);
    }
    // In lockstep the same match shows it a playout delay later.
    let mut lockstep = s.clone();
    lockstep.session.mode = Mode::Lockstep;
    let run = mesh::run::<Cubes>(&lockstep, &small_cubes());
    assert!(median(run.peers[0].input_latency_frames(16_667)) >= 6);
}

#[test]
fn rollback_rts_peers_agree_under_a_poor_network() {
    for seats in [3, 6] {
        let s = scenario(seats, 22, Condition::POOR, 360, Mode::ROLLBACK);
        let run = mesh::run::<Rts>(&s, &small_rts());
        assert_agree::<Rts>(&run, 360);
        assert_eq!(desyncs(&run), 0, "{seats} seats");
    }
}

/// A seat whose frames use two threads and one whose frames use one play
/// the same match, in lockstep and with rollbacks: the thread count is a
/// machine setting, and a rolled-back engine keeps it. A spectator on two
/// threads watches. The RTS's default armies (1 024 units with two seats)
/// are large enough for the step to share its work.
#[test]
fn seats_on_two_threads_and_on_one_agree() {
    for mode in [Mode::Lockstep, rollback(InputDelay::Fixed(1))] {
        let mut s = scenario(2, 23, Condition::GOOD, 240, mode);
        s.threads = vec![2, 1];
        s.spectate = Some((SeatId(1), 60));
        s.spectator_threads = 2;
        let run = mesh::run::<Rts>(&s, &Rts::default_config());
        assert_agree::<Rts>(&run, 240);
        assert_eq!(desyncs(&run), 0, "{mode:?}");
        if mode != Mode::Lockstep {
            assert!(run.peers[0].stats.rollbacks > 0, "{:?}", run.peers[0].stats);
        }
        let threads: Vec<usize> = run.peers.iter().map(|p| p.threads).collect();
        assert_eq!(threads, [2, 1], "{mode:?}");
        // The spectator steps on two threads, checks the seats' settled
        // checksums and agrees with every seat on every frame it stepped.
        let spectator = run.spectator.as_ref().expect("the spectator joined");
        assert_eq!(spectator.threads, 2, "{mode:?}");
        assert!(
            spectator.checksums.len() >= 100,
            "{mode:?}: {:?}",
            spectator.stats
        );
        assert!(
            spectator.stats.checksums_checked > 0,
            "{mode:?}: {:?}",
            spectator.stats
        );
        assert_eq!(spectator.stats.checksums_differing, 0, "{mode:?}");
        for (f, c) in &spectator.checksums {
            for p in &run.peers {
                assert_eq!(p.checksums.get(f), Some(c), "{mode:?}: frame {f}");
            }
        }
    }
}

#[test]
fn the_sync_test_steps_every_frame_again_and_finds_no_difference() {
    let mut mode = Rollback::DEFAULT;
    mode.sync_test_frames = 5;
    mode.input_delay = InputDelay::Fixed(2);
    let s = scenario(2, 23, Condition::GOOD, 240, Mode::Rollback(mode));
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert_agree::<Cubes>(&run, 240);
    let run_rts = mesh::run::<Rts>(&s, &small_rts());
    assert_agree::<Rts>(&run_rts, 240);
    for p in run.peers.iter().chain(&run_rts.peers) {
        // Nearly every tick rolls back five frames.
        assert!(p.stats.rollbacks > 200, "{:?}", p.stats);
        assert!(p.stats.frames_rolled_back > 1000, "{:?}", p.stats);
    }
}

#[test]
fn a_flipped_bit_in_rollback_mode_is_found_on_confirmed_frames_and_healed() {
    // With 4 frames of input delay most frames are confirmed when stepped,
    // so the flip (made when no prediction is outstanding) happens soon.
    let mut s = scenario(3, 24, Condition::GOOD, 600, rollback(InputDelay::Fixed(4)));
    s.flip = Some(Flip {
        seat: SeatId(2),
        frame: 200,
        entity: "body 40".into(),
        field: "position".into(),
        bit: 20,
        repeat: false,
    });
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert!(run.flipped_at.is_some());
    assert!(run.peers[2].stats.frames_predicted > 0);
    let drifted = run.events(|e| match e {
        PeerEvent::Desync { drifted, .. } => Some(*drifted),
        _ => None,
    });
    assert!(!drifted.is_empty());
    assert!(drifted.iter().all(|(_, _, d)| d.iter().eq([SeatId(2)])));
    let healed = run.events(|e| matches!(e, PeerEvent::Healed { .. }).then_some(()));
    assert_eq!(healed.len(), 1);
    assert_eq!(healed[0].0, SeatId(2));
    assert_agree::<Cubes>(&run, 600);
}

#[test]
fn the_adaptive_input_delay_changes_at_one_frame_for_everyone() {
    let s = scenario(4, 25, Condition::POOR, 600, Mode::ROLLBACK);
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert_agree::<Cubes>(&run, 600);
    assert_eq!(desyncs(&run), 0);
    // 125 ms one way and 20 ms of jitter: the host raised the delay from
    // 0, and every seat switched at the frame it named.
    let delays: Vec<u32> = run.peers.iter().map(|p| p.session.delay_frames).collect();
    assert!(
        delays.iter().all(|&d| d == delays[0] && d > 0),
        "{delays:?}"
    );
}

#[test]
fn clocks_that_start_apart_are_measured_and_brought_together() {
    let mut s = scenario(2, 26, Condition::AWFUL, 900, Mode::Lockstep);
    // Seat 1's clock reads 37 s ahead of seat 0's.
    s.clock_offsets = vec![0, 37_000_000];
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert_agree::<Cubes>(&run, 900);
    let offset = |seat: usize, of: usize| run.peers[seat].clock_offsets[of].expect("estimated");
    assert!(
        (offset(0, 1).offset_micros - 37_000_000).abs() < 20_000,
        "{:?}",
        offset(0, 1)
    );
    assert!(
        (offset(1, 0).offset_micros + 37_000_000).abs() < 20_000,
        "{:?}",
        offset(1, 0)
    );
}

#[test]
fn in_rollback_mode_a_vanished_seat_is_dropped_and_its_restarted_process_rejoins() {
    let mut s = scenario(4, 27, Condition::GOOD, 900, Mode::ROLLBACK);
    s.vanish = Some((SeatId(3), 300));
    s.rejoin_at = Some(500);
    let run = mesh::run::<Rts>(&s, &small_rts());
    let dropped =
        run.events(|e| matches!(e, PeerEvent::Seat(SeatEvent::Dropped { .. })).then_some(()));
    assert_eq!(dropped.len(), 3);
    let returned = run.events(|e| match e {
        PeerEvent::Seat(SeatEvent::Returned { seat, frame }) => Some((*seat, *frame)),
        _ => None,
    });
    assert_eq!(returned.len(), 4, "{returned:?}");
    // The rejoined process agrees from its return on; the three others'
    // logs hold the whole match, the absent stretch included.
    if let Err(e) = verdict::check::<Rts>(&run, 900) {
        panic!("{e}");
    }
    assert_eq!(desyncs(&run), 0);
}

#[test]
fn in_rollback_mode_a_spectator_is_fed_confirmed_frames_only_and_agrees() {
    let mut s = scenario(3, 28, Condition::POOR, 900, Mode::ROLLBACK);
    s.spectate = Some((SeatId(1), 300));
    let run = mesh::run::<Cubes>(&s, &small_cubes());
    assert_agree::<Cubes>(&run, 900);
    let w = run.spectator.as_ref().expect("the spectator joined");
    assert!(w.stats.checksums_checked >= 100, "{:?}", w.stats);
    assert_eq!(w.stats.checksums_differing, 0, "{:?}", w.stats);
    for (f, c) in &w.checksums {
        assert_eq!(run.peers[0].checksums.get(f), Some(c), "frame {f}");
    }
    assert!(run.peers[1].stats.frames_rolled_back > 0);
}
