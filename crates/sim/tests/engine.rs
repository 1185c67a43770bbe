//! Engine, sync test, diff and desync bisection on the walkers test game.

mod common;

use common::{Walkers, WalkersConfig, script};
use lockstep_codec::input::Buttons;
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

/// A game of `n` walkers per seat.
fn walkers(n: u32) -> Walkers {
    let config = WalkersConfig {
        walkers: n,
        ..WalkersConfig::default()
    };
    Walkers::new(&config, &Match::default()).unwrap()
}

#[test]
fn rollback_and_resimulation_give_the_same_checksums() {
    let settings = EngineSettings {
        checksum_history: 100,
        save_interval: 10,
        saved_states_kept: 4,
    };
    let mut engine = Engine::new(new_game(), settings);
    let first: Vec<_> = (0..60).map(|f| engine.advance(&inputs(f))).collect();
    assert_eq!(engine.checksum_of(59), Some(first[59]));
    assert_eq!(
        engine.saved_states().map(|s| s.frame).collect::<Vec<_>>(),
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
    let s = engine.saved_state_of(40).unwrap();
    assert_eq!(s.checksum(), first[39]);
}

/// With two threads, `advance_deferred` has each frame's state hashed by
/// the pool's helpers while the next frame steps: every checksum comes back one
/// call later, equal to `advance`'s, and the history, saved states, a
/// rollback and a plain `advance` in between all see every frame's
/// checksum as with `advance` alone.
#[test]
fn deferred_checksums_equal_the_plain_ones_one_call_later() {
    // Over 16 leaves of 16 KiB, every one changing each frame: enough for
    // the hasher to hand each state to its helper.
    let game = walkers(20_000);
    let settings = EngineSettings {
        checksum_history: 200,
        save_interval: 10,
        saved_states_kept: 4,
    };
    assert!(game.save().len() > 16 * 16 * 1024);
    let mut plain = Engine::new(game.clone(), settings);
    let first: Vec<_> = (0..80).map(|f| plain.advance(&inputs(f))).collect();
    for threads in [1, 2] {
        let mut engine = Engine::new(game.clone(), settings);
        engine.set_threads(threads);
        assert_eq!(engine.advance_deferred(&inputs(0)), None);
        // Begun but not collected: not in the history yet.
        assert_eq!(engine.checksum_of(0), None);
        for f in 1..50 {
            let done = engine.advance_deferred(&inputs(f));
            assert_eq!(
                done,
                Some((f - 1, first[f as usize - 1])),
                "{threads} threads"
            );
        }
        assert_eq!(engine.checksum_of(48), Some(first[48]));
        // A plain step takes back the one still being hashed first.
        assert_eq!(engine.advance(&inputs(50)), first[50]);
        assert_eq!(engine.checksum_of(49), Some(first[49]));
        assert_eq!(engine.collect_checksum(), None);
        for f in 51..60 {
            engine.advance_deferred(&inputs(f));
        }
        // A rollback keeps the earlier frames' checksums, the last included.
        engine.rollback(40).unwrap();
        assert_eq!(engine.checksum_of(39), Some(first[39]));
        assert_eq!(engine.checksum_of(40), None);
        for f in 40..80 {
            engine.advance_deferred(&inputs(f));
        }
        assert_eq!(engine.collect_checksum(), Some((79, first[79])));
        let kept: Vec<_> = engine.checksums().collect();
        assert_eq!(kept.len(), 80);
        assert!(kept.iter().all(|&(f, c)| c == first[f as usize]));
        let saved = engine.saved_state_of(70).unwrap();
        assert_eq!(saved.checksum(), first[69]);
        // A copy taken while a checksum is being hashed still gets it,
        // whether it collects it at once or steps on first.
        engine.rollback(70).unwrap();
        engine.advance_deferred(&inputs(70));
        let mut copy = engine.clone();
        assert_eq!(copy.collect_checksum(), Some((70, first[70])));
        assert_eq!(copy.checksum_of(70), Some(first[70]));
        let mut stepping = engine.clone();
        assert_eq!(
            stepping.advance_deferred(&inputs(71)),
            Some((70, first[70]))
        );
        assert_eq!(stepping.collect_checksum(), Some((71, first[71])));
        // Reaching into the game takes the pending checksum back first.
        let _ = engine.game_mut();
        assert_eq!(engine.collect_checksum(), None);
        assert_eq!(engine.checksum_of(70), Some(first[70]));
    }
}

/// The engine hashes each frame incrementally (only the 16 KiB pieces of
/// the state's bytes that changed); its checksums are still plain BLAKE3 of
/// the whole state, through steps, a rollback, a load and a state cut
/// short between frames.
#[test]
fn incremental_checksums_equal_hashing_the_whole_state() {
    let mut engine = Engine::new(walkers(8000), EngineSettings::default());
    let check = |engine: &mut Engine<Walkers>, f: Frame| {
        let c = engine.advance(&inputs(f));
        assert_eq!(c, engine.game().checksum(), "frame {f}");
        c
    };
    let first: Vec<_> = (0..130).map(|f| check(&mut engine, f)).collect();
    assert!(engine.save().bytes.len() > 3 * 16 * 1024);
    engine.rollback(120).unwrap();
    for f in 120..130 {
        assert_eq!(check(&mut engine, f), first[f as usize]);
    }
    engine.game_mut().positions.truncate(5001);
    for f in 130..140 {
        check(&mut engine, f);
    }
    let saved = engine.saved_state_of(120).unwrap().clone();
    engine.load(&saved).unwrap();
    for f in 120..130 {
        assert_eq!(check(&mut engine, f), first[f as usize]);
    }
}

#[test]
fn save_and_load_continue_exactly() {
    let mut a = Engine::new(new_game(), EngineSettings::default());
    for f in 0..25 {
        a.advance(&inputs(f));
    }
    let saved = a.save();
    let mut b = Engine::at(
        Walkers::decode(&saved.bytes).unwrap(),
        saved.frame,
        EngineSettings::default(),
    );
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

/// Issue 11: `depth + 1` wrapped to 0 for `u32::MAX` and the first check
/// panicked; a depth beyond the frames stepped now goes back to frame 0.
#[test]
fn issue_11_sync_test_depth_u32_max_does_not_wrap() {
    let mut t = SyncTest::new(new_game(), u32::MAX);
    for f in 0..10 {
        t.advance(&inputs(f)).unwrap();
    }
    // Every frame goes back to frame 0: 1 + 2 + … + 10 frames again.
    assert_eq!(t.resimulated(), 55);
}

/// Walkers with a bug: a counter that steers the walk but is not part of
/// the encoded state, as a game that forgets a field would have.
#[derive(Debug, Clone)]
struct Leaky {
    inner: Walkers,
    hidden: u32,
}

impl Game for Leaky {
    type Input = Buttons;
    type Config = WalkersConfig;
    const ID: &'static str = "leaky";
    const VERSION: u32 = 1;
    fn new(config: &WalkersConfig, setup: &Match) -> Result<Self, lockstep_sim::SetupError> {
        Ok(Leaky {
            inner: Walkers::new(config, setup)?,
            hidden: 0,
        })
    }
    fn step(&mut self, frame: Frame, inputs: &[Buttons]) {
        self.inner.step(frame, inputs);
        self.hidden += 1;
        self.inner.positions[2] += lockstep_fx::Fx::from_bits(i64::from(self.hidden));
    }
    fn encode<S: lockstep_fx::Sink>(&self, w: &mut lockstep_fx::StateWriter<S>) {
        self.inner.encode(w);
    }
    fn decode(bytes: &[u8]) -> Result<Self, lockstep_sim::StateError> {
        Ok(Leaky {
            inner: Walkers::decode(bytes)?,
            hidden: 0,
        })
    }
}

#[test]
fn sync_test_names_the_frame_and_field_of_hidden_state() {
    let game = Leaky::new(&WalkersConfig::default(), &Match::default()).unwrap();
    let mut t = SyncTest::new(game, 2);
    let mut failure = None;
    for f in 0..100 {
        if let Err(e) = t.advance(&inputs(f)) {
            failure = Some(e);
            break;
        }
    }
    // The first run steps frame 1 with hidden = 2; after frame 2 the test
    // loads the state before frame 1 (hidden = 0) and steps frame 1 with
    // hidden = 1, so walker 2 moves one LSB less.
    match failure {
        Some(SyncTestError::Mismatch { frame, diff, .. }) => {
            assert_eq!(frame, 1);
            assert_eq!(diff.len(), 1, "{diff:?}");
            assert_eq!(diff[0].entity.to_string(), "walker 2");
            assert_eq!(diff[0].field, "position");
        }
        other => panic!("expected a mismatch at frame 1, got {other:?}"),
    }
}

#[test]
fn a_flipped_bit_is_found_at_its_frame_with_its_entity_and_field() {
    let k: Frame = 37;
    let settings = EngineSettings {
        checksum_history: 200,
        save_interval: 1,
        saved_states_kept: 200,
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
    let left =
        StateMap::decode::<Walkers>(&clean.saved_state_of(frame + 1).unwrap().bytes).unwrap();
    let right =
        StateMap::decode::<Walkers>(&flipped.saved_state_of(frame + 1).unwrap().bytes).unwrap();
    let d = diff(&left, &right);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].entity.to_string(), "walker 5");
    assert_eq!(d[0].field, "position");
}
