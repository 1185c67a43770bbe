//! Desync diagnosis end to end: a bit of one body is flipped before frame
//! k in one recording of a match; comparing its log with a clean recording
//! finds frame k, the body and the field.

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_sim::desync::{diagnose_logs, first_divergence};
use lockstep_sim::replay::{self, RecordSettings, Recorder, RunOptions};
use lockstep_sim::{Bot, Engine, EngineSettings, Frame, Game, Match, StateMap, diff};

fn record<G: Demo>(seats: u8, frames: Frame, flip: Option<(Frame, &str, &str, u32)>) -> Vec<u8> {
    let setup = Match {
        seats,
        seed: 7,
        tick_rate: 60,
    };
    let settings = RecordSettings {
        keyframe_interval: 100,
        ..RecordSettings::default()
    };
    let mut rec = Recorder::<G, _>::new(&G::default_config(), setup, settings, Vec::new()).unwrap();
    let mut bots = Bots::<G>::new(&setup);
    for frame in 0..frames {
        if let Some((k, entity, field, bit)) = flip.filter(|f| f.0 == frame) {
            let map = StateMap::of(rec.engine().game());
            let bytes = map.with_flipped_bit(entity, field, bit).unwrap();
            *rec.game_mut() = G::decode(&bytes).unwrap();
            rec.keyframe().unwrap();
            assert_eq!(rec.engine().frame(), k);
        }
        let inputs = bots.inputs(rec.engine().game(), frame);
        rec.advance(&inputs).unwrap();
    }
    rec.finish().unwrap().1
}

/// Flips `bit` of `field` of `entity` before frame `k` and checks the
/// diagnosis names exactly that.
fn flipped_bit_is_found<G: Demo>(
    seats: u8,
    k: Frame,
    entity: &str,
    field: &str,
    bit: u32,
) -> String {
    let clean = record::<G>(seats, k + 40, None);
    let flipped = record::<G>(seats, k + 40, Some((k, entity, field, bit)));
    let clean = replay::read::<G::Input>(&clean).unwrap();
    let flipped = replay::read::<G::Input>(&flipped).unwrap();

    // The flipped log no longer replays from its start: the flip is not an input.
    let o = replay::run::<G>(&flipped, &RunOptions::default(), |_| {}).unwrap();
    assert_eq!(o.first_mismatch.map(|m| m.frame), Some(k));

    let found = diagnose_logs::<G>(&clean, &flipped, ["clean".into(), "flipped".into()])
        .unwrap()
        .expect("the logs differ");
    let r = &found.report;
    assert_eq!(r.frame, k, "{}", r.to_text());
    assert_eq!(r.before.len(), 1, "{}", r.to_text());
    assert_eq!(r.before[0].entity.to_string(), entity);
    assert_eq!(r.before[0].field, field);
    assert!(!r.after.is_empty());
    let text = r.to_text();
    assert!(
        text.contains(&format!("first divergent frame: {k}")),
        "{text}"
    );
    assert!(text.contains(&format!("{entity} · {field}")), "{text}");
    assert!(text.contains("changed outside the simulation"), "{text}");
    text
}

#[test]
fn a_flipped_cube_position_bit_is_found_at_its_frame() {
    // Body 40 is a small cube of the field; bit 20 of x is about 0.24 mm.
    let report = flipped_bit_is_found::<Cubes>(2, 150, "body 40", "position", 20);
    // The whole report is pinned: its wording, and the exact values, which
    // are the same on every architecture.
    insta::assert_snapshot!(report);
}

#[test]
fn a_flipped_unit_position_bit_is_found_at_its_frame() {
    // Body 115 is unit 90, walking under a bot's move order at frame 130;
    // bit 20 of its x is about 0.24 mm. (Steering sets a walking unit's
    // velocity each frame, and a unit locked in height has none
    // vertically, so a flipped velocity bit would be overwritten or
    // refused.)
    flipped_bit_is_found::<Rts>(2, 130, "body 115", "position", 20);
}

#[test]
fn engine_histories_bisect_to_the_flipped_frame() {
    // The same with two engines side by side, as peers would hold them.
    let k: Frame = 90;
    let setup = Match::default();
    let settings = EngineSettings {
        checksum_history: 300,
        save_interval: 1,
        saved_states_kept: 300,
    };
    let config = Cubes::default_config();
    let mut a = Engine::new(Cubes::new(&config, &setup).unwrap(), settings);
    let mut b = Engine::new(Cubes::new(&config, &setup).unwrap(), settings);
    let mut bots: Vec<_> = (0..2).map(|s| Cubes::bot(s, 1)).collect();
    for frame in 0..150 {
        if frame == k {
            let bytes = StateMap::of(b.game())
                .with_flipped_bit("body 12", "linear velocity", 33)
                .unwrap();
            *b.game_mut() = Cubes::decode(&bytes).unwrap();
        }
        let inputs: Vec<_> = bots
            .iter_mut()
            .map(|bot| bot.input(a.game(), frame))
            .collect();
        a.advance(&inputs);
        b.advance(&inputs);
    }
    let ca: Vec<_> = a.checksums().collect();
    let cb: Vec<_> = b.checksums().collect();
    let d = first_divergence(&ca, &cb).unwrap();
    assert_eq!(d, k);
    let before =
        |e: &Engine<Cubes>| StateMap::decode::<Cubes>(&e.saved_state_of(d).unwrap().bytes).unwrap();
    let found = diff(&before(&a), &before(&b));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].entity.to_string(), "body 12");
    assert_eq!(found[0].field, "linear velocity");
}

/// A log recorded by a machine that steps differently (an `f32` that
/// rounds its own way): re-simulating it here does not give its
/// checksums, so its states after the divergence are not at hand. The
/// report says so in its headline and compares the first keyframes both
/// logs hold, each the state its own machine reached: it names the fields.
#[test]
fn a_log_of_a_machine_that_steps_differently_is_compared_at_its_keyframes() {
    use lockstep_testkit::faulty::{self, Fault, Faulty, Recurring};
    let clean = record::<Cubes>(2, 260, None);
    faulty::install(Some(Fault {
        seat: 0,
        kind: Recurring::SelfConsistent,
        from_frame: 150,
        every: u32::MAX,
        until_frame: 151,
    }));
    faulty::enter(0);
    let other = record::<Faulty<Cubes>>(2, 260, None);
    faulty::leave();
    faulty::install(None);
    let clean = replay::read::<<Cubes as Game>::Input>(&clean).unwrap();
    let other = replay::read::<<Cubes as Game>::Input>(&other).unwrap();
    let found = diagnose_logs::<Cubes>(&clean, &other, ["here".into(), "there".into()])
        .unwrap()
        .expect("the logs differ");
    let r = &found.report;
    let text = r.to_text();
    assert_eq!(r.frame, 150, "{text}");
    assert!(text.contains("were not compared as checksummed"), "{text}");
    assert!(text.contains("stepped differently"), "{text}");
    assert!(text.contains("keyframes before frame 200"), "{text}");
    assert!(r.after_compared && !r.after.is_empty(), "{text}");
    assert!(r.after.iter().any(|d| d.entity.kind == "body"), "{text}");
    let zero = text
        .match_indices("0 fields differ")
        .any(|(i, _)| !text[..i].ends_with(|c: char| c.is_ascii_digit()));
    assert!(!zero, "{text}");
}
