//! The RTS demo's tests: determinism, save/load, commands, combat, player
//! counts, hostile snapshots, settings and the input encoding. Small
//! configurations keep the suite fast in debug builds.

use lockstep_codec::{BitError, BitReader, BitStream, BitWriter, Command as _, Input};
use lockstep_fx::{Checksum, Fx};
use lockstep_games::Demo;
use lockstep_games::rts::{Command, MapPoint, Order, Rts, RtsBot, RtsConfig, RtsInput};
use lockstep_sim::{Bot, Engine, EngineSettings, Game, Match, SetupError, StateError, SyncTest};

/// A small battlefield: `units` per player on a 60 m map.
fn small(units: u32) -> RtsConfig {
    let mut c = Rts::default_config();
    c.map_size = Fx::from_int(60);
    c.spawn_radius = Fx::from_int(14);
    c.units_per_player = units;
    c.buildings.truncate(1);
    c.buildings[0].position = [Fx::ZERO, Fx::from_int(-5)];
    c.buildings[0].size = lockstep_fx::Vec3::from_ints(2, 2, 2);
    c
}

fn setup(players: u8) -> Match {
    Match {
        seats: players,
        seed: 11,
        tick_rate: 60,
    }
}

fn new_game(config: &RtsConfig, players: u8) -> Rts {
    Rts::new(config, &setup(players)).expect("valid setup")
}

fn bots(players: u8) -> Vec<RtsBot> {
    (0..players).map(|s| Rts::bot(s, 11)).collect()
}

/// Runs a bot match and returns the checksum after every frame.
fn bot_match(config: &RtsConfig, players: u8, frames: u32) -> (Rts, Vec<Checksum>) {
    let mut game = new_game(config, players);
    let mut bots = bots(players);
    let mut sums = Vec::new();
    for f in 0..frames {
        let inputs: Vec<RtsInput> = bots.iter_mut().map(|b| b.input(&game, f)).collect();
        game.step(f, &inputs);
        sums.push(game.checksum());
    }
    (game, sums)
}

/// Frame 0 of a two-seat small match: each seat selects all its units.
fn select_all(game: &mut Rts) {
    let all = Command::select(
        Fx::from_int(-30),
        Fx::from_int(-30),
        Fx::from_int(30),
        Fx::from_int(30),
    );
    game.step(0, &[all.into(), all.into()]);
}

/// A frame's input without commands.
fn none() -> RtsInput {
    RtsInput::default()
}

fn square(x: Fx, z: Fx, half: i32) -> Command {
    let h = Fx::from_int(half);
    Command::select(x - h, z - h, x + h, z + h)
}

#[test]
fn embedded_settings_parse_and_field_two_thousand_units() {
    let c = Rts::default_config();
    c.validate().unwrap();
    let game = new_game(&c, 4);
    assert!(game.units().count() >= 2000, "{}", game.units().count());
    // Floats and unknown keys are refused.
    let float = Rts::DEFAULT_SETTINGS.replace("spawn_spacing = \"1.25\"", "spawn_spacing = 1.25");
    assert!(lockstep_sim::settings_file::parse::<RtsConfig>(&float, "x".as_ref()).is_err());
    let extra = format!("{}\nsurprise = 1\n", Rts::DEFAULT_SETTINGS);
    assert!(lockstep_sim::settings_file::parse::<RtsConfig>(&extra, "x".as_ref()).is_err());
}

#[test]
fn two_bot_matches_give_equal_checksum_streams() {
    let c = small(24);
    let (a, sa) = bot_match(&c, 4, 240);
    let (_, sb) = bot_match(&c, 4, 240);
    assert_eq!(sa, sb);
    assert!(
        a.units()
            .any(|u| u.order != Order::Idle || u.velocity.x != Fx::ZERO)
    );
}

#[test]
fn sync_test_depth_two_passes() {
    let c = small(12);
    let mut t = SyncTest::new(new_game(&c, 3), 2);
    let mut bots = bots(3);
    for f in 0..100 {
        let inputs: Vec<RtsInput> = bots
            .iter_mut()
            .map(|b| b.input(t.engine().game(), f))
            .collect();
        t.advance(&inputs).unwrap();
    }
}

#[test]
fn save_and_load_mid_match_continues_identically() {
    let c = small(16);
    let settings = EngineSettings::default();
    let mut engine = Engine::new(new_game(&c, 2), settings);
    let mut bots = bots(2);
    let mut saved = None;
    let mut inputs_log = Vec::new();
    let mut sums = Vec::new();
    for f in 0..160 {
        if f == 70 {
            saved = Some(engine.save());
        }
        let inputs: Vec<RtsInput> = bots.iter_mut().map(|b| b.input(engine.game(), f)).collect();
        sums.push(engine.advance(&inputs));
        inputs_log.push(inputs);
    }
    let saved = saved.unwrap();
    let mut other = Engine::new(new_game(&c, 2), settings);
    other.load(&saved).unwrap();
    assert_eq!(other.frame(), 70);
    for f in 70..160 {
        assert_eq!(
            other.advance(&inputs_log[f as usize]),
            sums[f as usize],
            "frame {f}"
        );
    }
}

#[test]
fn engine_threads_give_the_same_checksums_and_survive_a_rollback() {
    // Big enough for every part to share its work: 4 × 1 000 units give
    // hundreds of constraints and pairs, and a state of more than 32
    // leaves of 16 KiB for the hasher.
    let mut c = Rts::default_config();
    c.units_per_player = 1000;
    let settings = EngineSettings {
        save_interval: 20,
        ..EngineSettings::default()
    };
    let mut one = Engine::new(new_game(&c, 4), settings);
    let mut three = Engine::new(new_game(&c, 4), settings);
    three.set_threads(3);
    assert_eq!(three.threads(), 3);
    let size = three.save().bytes.len();
    assert!(size > 32 * 16 * 1024, "large enough to share: {size} bytes");
    let mut bots = bots(4);
    let mut inputs_log = Vec::new();
    for f in 0..90 {
        let inputs: Vec<RtsInput> = bots.iter_mut().map(|b| b.input(one.game(), f)).collect();
        assert_eq!(one.advance(&inputs), three.advance(&inputs), "frame {f}");
        inputs_log.push(inputs);
    }
    // A rollback decodes a new game: it keeps the engine's thread count.
    three.rollback(40).unwrap();
    assert_eq!(three.game().world().threads(), 3);
    for f in 40..90 {
        let again = three.advance(&inputs_log[f as usize]);
        assert_eq!(Some(&again), one.checksum_of(f).as_ref(), "frame {f} again");
    }
}

#[test]
fn select_and_move_moves_the_selected_units_only() {
    let c = small(16);
    let mut game = new_game(&c, 2);
    let (x, z) = game.base(0);
    // The base's 4×4 grid (pitch 1.25 m) has its front row (+z) at z + 1.875.
    let front = Command::select(
        x - Fx::from_int(3),
        z + Fx::lit("1.5"),
        x + Fx::from_int(3),
        z + Fx::from_int(3),
    );
    game.step(0, &[front.into(), none()]);
    let selected = game.selection(0).to_vec();
    assert_eq!(selected.len(), 4, "{selected:?}");
    assert!(selected.iter().all(|&id| game.unit(id).unwrap().owner == 0));
    let before: Vec<_> = game.units().collect();
    // The selection's centre (z + 1.875) goes to z + 12: 10 m ahead, less
    // the arrival distance.
    game.step(1, &[Command::move_to(x, z + Fx::from_int(12)).into()]);
    for f in 2..300 {
        game.step(f, &[]);
    }
    for u in before {
        let now = game.unit(u.id).unwrap();
        let moved = now.position.z - u.position.z;
        if selected.contains(&u.id) {
            assert!(moved > Fx::from_int(9), "unit {} moved {moved}", u.id);
            assert_eq!(now.order, Order::Idle, "unit {} has arrived", u.id);
        } else {
            assert!(moved.abs() < Fx::ONE, "unit {} moved {moved}", u.id);
        }
    }
}

#[test]
fn a_selection_never_holds_enemy_units() {
    let c = small(16);
    let mut game = new_game(&c, 2);
    game.step(
        0,
        &[Command::select(
            Fx::from_int(-30),
            Fx::from_int(-30),
            Fx::from_int(30),
            Fx::from_int(30),
        )
        .into()],
    );
    assert_eq!(game.selection(0).len(), 16);
    assert!(game.selection(1).is_empty());
}

#[test]
fn stop_halts_the_selection() {
    let c = small(9);
    let mut game = new_game(&c, 2);
    let (x, z) = game.base(1);
    game.step(0, &[none(), square(x, z, 5).into()]);
    game.step(
        1,
        &[none(), Command::move_to(x, z + Fx::from_int(20)).into()],
    );
    for f in 2..30 {
        game.step(f, &[]);
    }
    let ids = game.selection(1).to_vec();
    assert_eq!(ids.len(), 9);
    assert!(
        ids.iter()
            .all(|&id| matches!(game.unit(id).unwrap().order, Order::Move { .. }))
    );
    game.step(30, &[none(), Command::Stop.into()]);
    let at_stop: Vec<_> = ids
        .iter()
        .map(|&id| game.unit(id).unwrap().position)
        .collect();
    for f in 31..90 {
        game.step(f, &[]);
    }
    for (&id, p) in ids.iter().zip(at_stop) {
        let u = game.unit(id).unwrap();
        assert_eq!(u.order, Order::Idle);
        assert!((u.position.z - p.z).abs() < Fx::ONE, "unit {id} drifted");
    }
}

#[test]
fn armies_that_meet_fight_until_units_die() {
    let c = small(16);
    let mut game = new_game(&c, 2);
    select_all(&mut game);
    let centre = Command::move_to(Fx::ZERO, Fx::from_int(5));
    game.step(1, &[centre.into(), centre.into()]);
    for f in 2..600 {
        game.step(f, &[]);
    }
    let alive = game.units().count();
    assert!(alive < 32, "nobody died");
    // The dead are gone from the world and from the selections (units
    // are the bodies locked in height).
    assert_eq!(
        game.world()
            .bodies()
            .filter(|(_, b)| b.is_height_locked())
            .count(),
        alive
    );
    for seat in 0..2 {
        assert!(
            game.selection(seat)
                .iter()
                .all(|&id| game.unit(id).is_some())
        );
    }
}

#[test]
fn attack_moving_archers_stand_and_shoot_missiles_that_land_later() {
    let c = small(16);
    let mut game = new_game(&c, 2);
    select_all(&mut game);
    // Seat 0 attack-moves across the map onto seat 1's base; seat 1 waits.
    let (bx, bz) = game.base(1);
    game.step(1, &[Command::attack_move_to(bx, bz).into(), none()]);
    let (mut shot, mut stood, mut hurt_before_landing) = (0, 0, false);
    let mut in_flight: Vec<(u32, u32)> = Vec::new();
    for f in 2..900 {
        let hp: Vec<(u32, u32)> = game.units().map(|u| (u.id, u.hp)).collect();
        game.step(f, &[]);
        // Every missile shot this frame lands at least a frame later.
        for m in game.missiles() {
            assert!(m.lands > m.shot);
            if m.shot == f {
                shot += 1;
                in_flight.push((m.target, m.lands));
            }
        }
        // A unit loses hit points only in a frame where a missile aimed at
        // it lands.
        for (id, before) in hp {
            let now = game.unit(id).map_or(0, |u| u.hp);
            if now < before && !in_flight.iter().any(|&(t, at)| t == id && at == f) {
                hurt_before_landing = true;
            }
        }
        stood += game
            .units()
            .filter(|u| {
                matches!(
                    u.order,
                    Order::Move {
                        attack: true,
                        fighting: true,
                        ..
                    }
                ) && u.velocity.x == Fx::ZERO
                    && u.velocity.z == Fx::ZERO
            })
            .count();
    }
    assert!(shot > 20, "{shot} missiles shot");
    assert!(stood > 0, "no attack-moving unit stood to fight");
    assert!(!hurt_before_landing, "a hit landed without a missile");
    assert!(game.units_alive(1) < 16, "no defender died");
}

#[test]
fn two_and_eight_players_play() {
    for players in [2, 8] {
        let (game, _) = bot_match(&small(8), players, 120);
        assert_eq!(game.players(), players);
        assert!((0..players).all(|s| game.units_alive(s) > 0));
    }
}

#[test]
fn invalid_setups_are_refused() {
    let c = small(4);
    for players in [0, 1, 9, 255] {
        assert!(matches!(
            Rts::new(&c, &setup(players)),
            Err(SetupError::Seats { found, .. }) if found == players
        ));
    }
    let bad_tick = Match {
        tick_rate: 0,
        ..setup(2)
    };
    assert!(matches!(
        Rts::new(&c, &bad_tick),
        Err(SetupError::TickRate { .. })
    ));
    let mut far = c.clone();
    far.spawn_radius = Fx::from_int(40);
    assert!(matches!(
        Rts::new(&far, &setup(2)),
        Err(SetupError::Setting {
            field: "spawn_radius",
            ..
        })
    ));
    // The grid: at most 256 cells across; a unit sees at most 32 cells.
    let refused = |edit: fn(&mut RtsConfig)| {
        let mut bad = c.clone();
        edit(&mut bad);
        match Rts::new(&bad, &setup(2)) {
            Err(SetupError::Setting { field, .. }) => field,
            other => panic!("accepted: {other:?}"),
        }
    };
    assert_eq!(refused(|b| b.cell_size = Fx::lit("0.125")), "cell_size");
    assert_eq!(refused(|b| b.cell_size = Fx::ZERO), "cell_size");
    assert_eq!(refused(|b| b.unit.view = Fx::from_int(65)), "unit.view");
    assert_eq!(
        refused(|b| {
            b.cell_size = Fx::lit("0.5");
            b.unit.view = Fx::from_int(17);
        }),
        "unit.view"
    );
    assert_eq!(refused(|b| b.rocks = 65), "rocks");
    assert_eq!(refused(|b| b.fog_interval = 0), "fog_interval");
    assert_eq!(refused(|b| b.substeps = 0), "substeps");
    assert_eq!(refused(|b| b.substeps = 9), "substeps");
    assert_eq!(
        refused(|b| b.unit.missile_speed = Fx::lit("0.5")),
        "unit.missile_speed"
    );
}

#[test]
fn hostile_snapshots_give_errors_not_panics() {
    let c = small(4);
    let (game, _) = bot_match(&c, 2, 40);
    let bytes = game.save();
    let back = Rts::decode(&bytes).unwrap();
    assert_eq!(back.save(), bytes);
    for len in 0..bytes.len() {
        assert!(Rts::decode(&bytes[..len]).is_err(), "truncated to {len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Rts::decode(&longer).is_err());
    for (i, bit) in (0..bytes.len()).zip((0..8).cycle()) {
        let mut b = bytes.clone();
        b[i] ^= 1 << bit;
        // A flip may land on a value that is still valid; it must not panic,
        // and a state that loads must step.
        if let Ok(mut g) = Rts::decode(&b) {
            g.step(40, &[Command::Stop.into(), none()]);
        }
    }
    let mut version = bytes.clone();
    version[0] ^= 1;
    assert!(matches!(
        Rts::decode(&version),
        Err(StateError::Version { .. })
    ));
}

/// Writes a command and reads it back.
fn round_trip(c: Command) -> Command {
    let mut w = BitWriter::new();
    c.clone().serialize(&mut w).unwrap();
    let bytes = w.finish();
    let mut r = BitReader::new(&bytes);
    let mut back = Command::default();
    back.serialize(&mut r).unwrap();
    r.finish().unwrap();
    back
}

#[test]
fn commands_round_trip_within_their_bit_budget() {
    let far = Fx::from_int(1000);
    let commands = [
        Command::Stop,
        Command::move_to(Fx::lit("12.25"), Fx::lit("-3.5")),
        Command::attack_move_to(Fx::lit("-40"), Fx::lit("7.75")),
        Command::select(-far, -far, far, far),
        Command::Select {
            from: MapPoint { x: 0, z: 2048 },
            to: MapPoint { x: 1024, z: 7 },
        },
    ];
    for c in commands {
        assert_eq!(round_trip(c), c);
        let mut m = lockstep_codec::BitMeasurer::new();
        c.clone().serialize(&mut m).unwrap();
        assert!(m.bits() <= u64::from(Command::MAX_BITS));
    }
    // Quantized to 0.25 m cells, clamped to ±256 m.
    assert_eq!(
        MapPoint::from_map(Fx::lit("12.3"), -far).to_map(),
        (Fx::lit("12.25"), Fx::from_int(-256))
    );
    // Bot commands round-trip too.
    let (game, _) = bot_match(&small(8), 2, 1);
    let mut bot = Rts::bot(0, 3);
    for f in 0..400 {
        for &c in bot.input(&game, f).commands() {
            assert_eq!(round_trip(c), c);
        }
    }
    assert_ne!(RtsInput::schema_hash(), 0);
}

#[test]
fn out_of_range_cells_are_rejected() {
    // A move (tag 1) whose x cell is 2049, one past the grid.
    let mut w = BitWriter::new();
    w.bits(&mut 1, 2).unwrap();
    w.bits(&mut 2049, 12).unwrap();
    w.bits(&mut 0, 12).unwrap();
    let bytes = w.finish();
    let mut c = Command::default();
    let e = c.serialize(&mut BitReader::new(&bytes)).unwrap_err();
    assert!(matches!(e, BitError::OutOfRange { bit: 2, .. }), "{e}");
    // A truncated select.
    let mut c = Command::default();
    assert!(c.serialize(&mut BitReader::new(&[1])).is_err());
}
