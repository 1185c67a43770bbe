//! Matches of the shipped games played through `Peer` over the simulated
//! network: every peer's checksum stream and replay log must agree, and a
//! drifted peer must be diagnosed and healed live.

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{PeerEvent, SeatEvent, SpectatorEvent};
use lockstep_protocol::SeatId;
use lockstep_sim::Game;
use lockstep_sim::replay::{self, RunOptions};
use lockstep_testkit::mesh::{self, Condition, Flip, Run, Scenario};
use lockstep_testkit::verdict;

/// The cube demo on a 10 × 10 field: the same rules, a tenth of the bodies.
fn small_cubes() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 10;
    c
}

/// The cube demo on a 5 × 5 field, for sweeps of many matches.
fn tiny_cubes() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

/// The RTS with 24 units a player.
fn small_rts() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 24;
    c
}

/// Every peer's final checksums agree, and every peer's log replays and
/// verifies and holds the same checksums as the others'.
fn assert_agree<G: Game>(run: &Run, frames: u32) {
    if let Err(e) = verdict::check::<G>(run, frames) {
        panic!("{e}");
    }
}

fn play<G: Demo>(seats: u8, cond: Condition, frames: u32, config: &G::Config) -> Run {
    let scenario = Scenario::new(seats, 11 + u64::from(seats), cond.link(), frames);
    mesh::run::<G>(&scenario, config)
}

#[test]
fn cubes_two_and_four_peers_agree_under_good_and_poor_networks() {
    for cond in [Condition::GOOD, Condition::POOR] {
        for seats in [2, 4] {
            let run = play::<Cubes>(seats, cond, 480, &small_cubes());
            assert_agree::<Cubes>(&run, 480);
            assert_eq!(run.stalls_after_warmup(), 0, "{} with {seats}", cond.name);
        }
    }
}

#[test]
fn rts_two_four_and_eight_peers_agree_under_good_and_poor_networks() {
    for cond in [Condition::GOOD, Condition::POOR] {
        for seats in [2, 4, 8] {
            let run = play::<Rts>(seats, cond, 480, &small_rts());
            assert_agree::<Rts>(&run, 480);
            assert_eq!(run.stalls_after_warmup(), 0, "{} with {seats}", cond.name);
        }
    }
}

#[test]
fn both_games_agree_at_two_seconds_and_a_quarter_lost() {
    let run = play::<Cubes>(2, Condition::AWFUL, 600, &small_cubes());
    assert_agree::<Cubes>(&run, 600);
    let run = play::<Rts>(4, Condition::AWFUL, 600, &small_rts());
    assert_agree::<Rts>(&run, 600);
    let run = play::<Rts>(8, Condition::AWFUL, 480, &small_rts());
    assert_agree::<Rts>(&run, 480);
}

#[test]
fn a_flipped_bit_is_reported_live_by_frame_entity_and_field_and_healed() {
    let mut scenario = Scenario::new(2, 5, Condition::GOOD.link(), 600);
    scenario.flip = Some(Flip {
        seat: SeatId(1),
        frame: 200,
        entity: "body 40".into(),
        field: "position".into(),
        bit: 20,
        repeat: false,
    });
    let run = mesh::run::<Cubes>(&scenario, &small_cubes());
    let healed = run.events(|e| match e {
        PeerEvent::Healed {
            frame, diagnosis, ..
        } => Some((*frame, diagnosis.clone())),
        _ => None,
    });
    assert_eq!(healed.len(), 1, "{healed:?}");
    let (seat, _, (loaded, diagnosis)) = &healed[0];
    assert_eq!(*seat, SeatId(1));
    assert!(*loaded >= 200);
    let d = diagnosis.as_ref().expect("a live report");
    let text = d.report.to_text();
    assert_eq!(d.report.frame, 200, "{text}");
    assert!(
        d.report
            .before
            .iter()
            .any(|f| f.entity.to_string() == "body 40" && f.field == "position"),
        "{text}"
    );
    assert!(text.contains("changed outside the simulation"), "{text}");
    // Healed: every frame agrees but those the drifted peer stepped wrong,
    // and its log holds the corrected history, so all logs verify.
    assert_agree::<Cubes>(&run, 600);
}

/// The resync's request and answer hold at every delay: a real desync
/// heals, and every log verifies, whatever the one-way latency.
#[test]
fn a_desync_heals_at_every_one_way_delay_from_0_to_40_ms() {
    for ms in 0..=40u64 {
        let mut link = Condition::GOOD.link();
        link.latency_micros = ms * 1000;
        link.jitter_micros = 0;
        link.loss = lockstep_testkit::netsim::Loss::None;
        link.duplicate_ppm = 0;
        link.reorder_ppm = 0;
        let mut scenario = Scenario::new(2, 40 + ms, link, 300);
        scenario.flip = Some(Flip {
            seat: SeatId(1),
            frame: 120,
            entity: "body 7".into(),
            field: "position".into(),
            bit: 24,
            repeat: false,
        });
        let run = mesh::run::<Cubes>(&scenario, &tiny_cubes());
        let healed = run.events(|e| matches!(e, PeerEvent::Healed { .. }).then_some(()));
        let failed = run.events(|e| matches!(e, PeerEvent::ResyncFailed { .. }).then_some(()));
        assert!(failed.is_empty(), "{ms} ms: resync failed");
        assert_eq!(healed.len(), 1, "{ms} ms: healed {} times", healed.len());
        assert_agree::<Cubes>(&run, 300);
    }
}

#[test]
fn three_of_four_peers_agree_on_a_vanished_seat_and_play_on() {
    let mut scenario = Scenario::new(4, 21, Condition::GOOD.link(), 1000);
    scenario.vanish = Some((SeatId(2), 600));
    let run = mesh::run::<Rts>(&scenario, &small_rts());
    let dropped = run.events(|e| match e {
        PeerEvent::Seat(SeatEvent::Dropped { seat, last_frame }) => Some((*seat, *last_frame)),
        _ => None,
    });
    assert_eq!(dropped.len(), 3, "{dropped:?}");
    let (_, _, (seat, last)) = dropped[0];
    assert_eq!(seat, SeatId(2));
    let last = last.expect("it played");
    assert!((600..700).contains(&last), "last frame {last}");
    assert!(
        dropped.iter().all(|(_, _, d)| *d == (seat, Some(last))),
        "{dropped:?}"
    );
    // The others play on to the end, agree, and their logs replay the
    // match, the absent seat included.
    assert_eq!(run.vanished, Some(SeatId(2)));
    assert!(run.common_frames() >= 1000);
    assert_eq!(run.first_disagreement(), None);
    for (i, p) in run.peers.iter().enumerate().filter(|(i, _)| *i != 2) {
        let log = replay::read::<<Rts as Game>::Input>(p.log.as_ref().expect("recorded")).unwrap();
        let out = replay::run::<Rts>(&log, &RunOptions::default(), |_| {}).unwrap();
        assert!(
            out.verified() && log.frames() >= 1000,
            "peer {i}: {:?}",
            out.first_mismatch
        );
        assert_eq!(
            log.inputs(last + 1).map(|i| i[2].clone()),
            Some(<Rts as Game>::Input::default()),
            "the absent seat plays the absent input"
        );
    }
}

/// A peer restarted after its seat was dropped rejoins: it takes the
/// host's state, fast-forwards, and every checksum agrees from its rejoin
/// frame on; the others stall no longer than the transfer.
#[test]
fn a_restarted_peer_rejoins_and_agrees_from_its_rejoin_frame_on() {
    let mut scenario = Scenario::new(4, 31, Condition::GOOD.link(), 1500);
    scenario.vanish = Some((SeatId(3), 600));
    scenario.rejoin_at = Some(900);
    let run = mesh::run::<Rts>(&scenario, &small_rts());
    let returned = run.events(|e| match e {
        PeerEvent::Seat(SeatEvent::Returned { seat, frame }) => Some((*seat, *frame)),
        _ => None,
    });
    // The three others and the rejoined process itself, on one frame.
    assert_eq!(returned.len(), 4, "{returned:?}");
    let frame = returned[0].2.1;
    assert!(
        returned.iter().all(|(_, _, r)| *r == (SeatId(3), frame)),
        "{returned:?}"
    );
    let rejoined = &run.peers[3];
    let healed = rejoined
        .events
        .iter()
        .find_map(|(_, e)| match e {
            PeerEvent::Healed { frame, .. } => Some(*frame),
            _ => None,
        })
        .expect("the rejoined peer loaded the host's state");
    assert!(healed + 1 >= frame);
    assert!(
        rejoined
            .checksums
            .keys()
            .next()
            .is_some_and(|&f| f <= healed)
    );
    assert!(
        run.common_frames() >= 1500 - healed - 1,
        "{}",
        run.common_frames()
    );
    assert_eq!(run.first_disagreement(), None);
    // The others' logs still replay the whole match, the absent stretch
    // and the return included.
    for p in &run.peers[..3] {
        let log = replay::read::<<Rts as Game>::Input>(p.log.as_ref().expect("recorded")).unwrap();
        let out = replay::run::<Rts>(&log, &RunOptions::default(), |_| {}).unwrap();
        assert!(
            out.verified() && log.frames() >= 1500,
            "{:?}",
            out.first_mismatch
        );
    }
}

/// A spectator joining through one seat's relay at frame 1 200 loads a
/// settled state, steps every frame after it and agrees with every seat,
/// checking the checksums the seats settled on; the other seats never hear
/// from it.
#[test]
fn a_spectator_joining_at_frame_1200_agrees_from_its_join_frame_on() {
    for (cond, seed) in [(Condition::GOOD, 41), (Condition::POOR, 42)] {
        let mut scenario = Scenario::new(4, seed, cond.link(), 1800);
        scenario.spectate = Some((SeatId(1), 1200));
        let run = mesh::run::<Cubes>(&scenario, &small_cubes());
        let s = run.spectator.as_ref().expect("the spectator joined");
        let (loaded, _) = s.loaded.expect("the spectator loaded a state");
        assert!(
            (1000..=1800).contains(&loaded),
            "{}: loaded frame {loaded}",
            cond.name
        );
        let stepped: Vec<u32> = s.checksums.keys().copied().collect();
        assert!(
            stepped.len() >= 300,
            "{}: the spectator stepped {} frames",
            cond.name,
            stepped.len()
        );
        assert_eq!(stepped[0], loaded + 1, "{}", cond.name);
        for (f, c) in &s.checksums {
            for (seat, p) in run.peers.iter().enumerate() {
                assert_eq!(
                    p.checksums.get(f),
                    Some(c),
                    "{}: spectator and seat {seat} differ at frame {f}",
                    cond.name
                );
            }
        }
        assert!(s.stats.checksums_checked >= 100, "{:?}", s.stats);
        assert_eq!(s.stats.checksums_differing, 0, "{:?}", s.stats);
        assert_eq!(run.first_disagreement(), None);
        // Only the relay served it; the seats' sessions dropped nothing of it.
        for p in &run.peers {
            assert_eq!(p.session.dropped.unexpected, 0, "{:?}", p.session.dropped);
        }
    }
}

/// A spectator whose state drifts (a bit flipped in it) sees the next
/// settled checksum disagree, asks its relay for the state again, loads it
/// and agrees with the seats from then on.
#[test]
fn a_drifted_spectator_reloads_the_relays_state_and_agrees_again() {
    let mut scenario = Scenario::new(2, 43, Condition::POOR.link(), 1500);
    scenario.spectate = Some((SeatId(0), 300));
    scenario.flip = Some(Flip {
        seat: SeatId(2),
        frame: 700,
        entity: "body 40".into(),
        field: "position".into(),
        bit: 20,
        repeat: false,
    });
    let run = mesh::run::<Cubes>(&scenario, &small_cubes());
    let s = run.spectator.as_ref().expect("joined");
    assert!(run.flipped_at.is_some());
    let desync = s
        .events
        .iter()
        .find_map(|(_, e)| match e {
            SpectatorEvent::Desync { frame } => Some(*frame),
            _ => None,
        })
        .expect("the drift was seen");
    assert!(desync >= 700, "desync at {desync}");
    assert_eq!(s.stats.states_loaded, 2, "{:?}", s.stats);
    assert_eq!(s.stats.checksums_differing, 1, "{:?}", s.stats);
    // Every frame stepped after the second state agrees with the seats.
    let reloaded = s
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            SpectatorEvent::Loaded { frame, .. } => Some(*frame),
            _ => None,
        })
        .nth(1)
        .expect("a second state");
    let after: Vec<_> = s.checksums.range(reloaded + 1..).collect();
    assert!(
        after.len() >= 300,
        "{} frames after the reload",
        after.len()
    );
    for (f, c) in after {
        assert_eq!(run.peers[0].checksums.get(f), Some(c), "frame {f}");
    }
}
