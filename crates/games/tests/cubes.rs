//! The cube demo's tests: settings, determinism, sync testing, save/load,
//! pushing, blowing, katamari, player counts, hostile snapshots and the
//! input encoding. Frame counts stay modest so the suite is fast in debug.

use lockstep_codec::{BitReader, BitWriter, Input};
use lockstep_fx::{Checksum, Fx};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesBot, CubesConfig, CubesInput};
use lockstep_sim::{Bot, Engine, EngineSettings, Game, Match, SetupError, StateError, SyncTest};

fn setup(players: u8) -> Match {
    Match {
        seats: players,
        seed: 5,
        tick_rate: 60,
    }
}

fn new_game(players: u8) -> Cubes {
    Cubes::new(&Cubes::default_config(), &setup(players)).expect("valid setup")
}

fn bots(players: u8) -> Vec<CubesBot> {
    (0..players).map(|s| Cubes::bot(s, 5)).collect()
}

fn bot_inputs(bots: &mut [CubesBot], game: &Cubes, frame: u32) -> Vec<CubesInput> {
    bots.iter_mut().map(|b| b.input(game, frame)).collect()
}

/// Runs a bot match and returns the game and the checksum after each frame.
fn bot_match(players: u8, frames: u32) -> (Cubes, Vec<Checksum>) {
    let mut game = new_game(players);
    let mut bots = bots(players);
    let mut sums = Vec::new();
    for f in 0..frames {
        let inputs = bot_inputs(&mut bots, &game, f);
        game.step(f, &inputs);
        sums.push(game.checksum());
    }
    (game, sums)
}

const NONE: CubesInput = CubesInput::NONE;
const RIGHT: CubesInput = CubesInput {
    right: true,
    ..NONE
};

/// Seat 0 (spawned on −x) drives right into the field for `frames`, with
/// `extra` buttons held as well.
fn drive_in(game: &mut Cubes, frames: u32, extra: CubesInput) {
    let input = CubesInput::from_bits(RIGHT.to_bits() | extra.to_bits());
    for f in 0..frames {
        game.step(f, &[input]);
    }
}

fn highest_cube(game: &Cubes) -> Fx {
    (0..game.cube_count())
        .filter_map(|i| game.cube_position(i))
        .map(|p| p.y)
        .max()
        .unwrap()
}

#[test]
fn embedded_settings_parse_and_lay_out_the_field() {
    let c = Cubes::default_config();
    c.validate().unwrap();
    assert_eq!(c.field.grid, 30);
    let game = new_game(2);
    assert_eq!(game.cube_count(), 900);
    assert_eq!(game.world().body_count(), 1 + 2 + 900);
    assert_eq!(game.awake_cubes(), 0, "the field starts asleep");
    let (a, b) = (
        game.player_position(0).unwrap(),
        game.player_position(1).unwrap(),
    );
    assert!(a.x < -c.field_half_width() && b.x > c.field_half_width());
    assert_eq!(game.player_position(2), None);

    // Floats and unknown fields are refused, with the line.
    let floaty = Cubes::DEFAULT_SETTINGS.replace("gravity = \"9.81\"", "gravity = 9.81");
    let e =
        lockstep_sim::settings_file::parse::<CubesConfig>(&floaty, "c.toml".as_ref()).unwrap_err();
    assert!(e.to_string().contains("\"9.81\""), "{e}");
    let extra = format!("{}\n[extra]\nx = 1\n", Cubes::DEFAULT_SETTINGS);
    assert!(lockstep_sim::settings_file::parse::<CubesConfig>(&extra, "c.toml".as_ref()).is_err());
}

#[test]
fn bot_matches_are_deterministic() {
    let (a, sums_a) = bot_match(2, 300);
    let (b, sums_b) = bot_match(2, 300);
    assert_eq!(sums_a, sums_b);
    assert_eq!(a.save(), b.save());
    assert!(a.awake_cubes() > 0, "the bots reached the field");
    // Another seed plays another match.
    let mut c = Cubes::new(
        &Cubes::default_config(),
        &Match {
            seed: 6,
            ..setup(2)
        },
    )
    .unwrap();
    let mut bots: Vec<_> = (0..2).map(|s| Cubes::bot(s, 6)).collect();
    for f in 0..300 {
        let inputs = bot_inputs(&mut bots, &c, f);
        c.step(f, &inputs);
    }
    assert_ne!(c.checksum(), a.checksum());
}

/// Seat 0 drives right, holds z from frame 40 and blows at 100..120; seat 1
/// is a bot.
#[test]
fn sync_test_passes() {
    let mut t = SyncTest::new(new_game(2), 2);
    let mut bot = Cubes::bot(1, 5);
    for f in 0..200 {
        let scripted = CubesInput {
            right: true,
            z: f >= 40,
            space: (100..120).contains(&f),
            ..NONE
        };
        let other = bot.input(t.engine().game(), f);
        t.advance(&[scripted, other]).unwrap();
    }
    let game = t.engine().game();
    assert!(
        !game.attached(0).is_empty(),
        "katamari ran in the sync test"
    );
}

#[test]
fn save_and_load_continue_identically() {
    let mut a = Engine::new(new_game(2), EngineSettings::default());
    let mut bots_a = bots(2);
    for f in 0..150 {
        let inputs = bot_inputs(&mut bots_a, a.game(), f);
        a.advance(&inputs);
    }
    let saved = a.save();
    let loaded = Cubes::decode(&saved.bytes).unwrap();
    assert_eq!(loaded.save(), saved.bytes);
    let mut b = Engine::at(loaded, saved.frame, EngineSettings::default());
    let mut bots_b = bots_a.clone();
    for f in 150..250 {
        let ia = bot_inputs(&mut bots_a, a.game(), f);
        let ib = bot_inputs(&mut bots_b, b.game(), f);
        assert_eq!(ia, ib);
        assert_eq!(a.advance(&ia), b.advance(&ib), "frame {f}");
    }
}

#[test]
fn arrows_push_and_missing_inputs_count_as_none() {
    let mut game = new_game(2);
    let start = [
        game.player_position(0).unwrap(),
        game.player_position(1).unwrap(),
    ];
    // Only seat 0's input: seat 1 holds nothing.
    drive_in(&mut game, 60, NONE);
    let p0 = game.player_position(0).unwrap();
    assert!(
        p0.x - start[0].x > Fx::from_int(3),
        "moved {}",
        p0.x - start[0].x
    );
    assert!(game.player_velocity(0).unwrap().x <= Fx::lit("8.5"));
    let idle = (game.player_position(1).unwrap() - start[1]).length();
    assert!(
        idle < Fx::lit("0.01"),
        "seat 1 only settled on the ground: {idle}"
    );
}

#[test]
fn katamari_sticks_touched_cubes_and_lets_go() {
    let mut game = new_game(1);
    drive_in(&mut game, 150, CubesInput { z: true, ..NONE });
    let stuck = game.attached(0).to_vec();
    assert!(stuck.len() > 3, "{} cubes stuck", stuck.len());
    assert!(stuck.len() <= game.config().katamari.max_cubes as usize);
    assert!(stuck.windows(2).all(|w| w[0] < w[1]));
    let centre = game.player_position(0).unwrap();
    for &i in &stuck {
        let d = (game.cube_position(i).unwrap() - centre).length();
        assert!(d <= game.config().katamari.radius, "cube {i} at {d}");
    }
    // The clump travels with the player: its cubes left their grid cells.
    let moved = stuck
        .iter()
        .filter(|&&i| {
            let home = lockstep_games::cubes::scene::cube_point(game.config(), i);
            (game.cube_position(i).unwrap() - home).length() > Fx::from_int(2)
        })
        .count();
    assert!(moved > 0, "no stuck cube was carried along");
    // Releasing z drops them all.
    game.step(150, &[RIGHT]);
    assert!(game.attached(0).is_empty());
}

#[test]
fn space_blows_cubes_up_and_away() {
    let mut calm = new_game(1);
    drive_in(&mut calm, 120, NONE);
    let mut windy = new_game(1);
    drive_in(&mut windy, 90, NONE);
    for f in 90..120 {
        windy.step(
            f,
            &[CubesInput {
                space: true,
                ..NONE
            }],
        );
    }
    let cube = windy.config().field.cube_size;
    assert!(highest_cube(&calm) < cube, "pushing alone keeps cubes low");
    assert!(
        highest_cube(&windy) > cube.mul_int(3),
        "blown cubes fly: highest {}",
        highest_cube(&windy)
    );
    assert!(windy.awake_cubes() > calm.awake_cubes());
    // Space lifts the player's cube too.
    assert!(windy.player_position(0).unwrap().y > windy.config().player.size);
}

#[test]
fn one_and_four_player_matches_run() {
    for players in [1, 4] {
        let start: Vec<_> = {
            let g = new_game(players);
            (0..players)
                .map(|s| g.player_position(s).unwrap())
                .collect()
        };
        let (game, _) = bot_match(players, 120);
        assert_eq!(game.players(), players);
        for s in 0..players {
            let d = (game.player_position(s).unwrap() - start[usize::from(s)]).length();
            assert!(d > Fx::ONE, "seat {s} of {players} moved only {d}");
        }
    }
}

#[test]
fn invalid_setups_are_refused() {
    let c = Cubes::default_config();
    for players in [0, 5, 8] {
        assert!(matches!(
            Cubes::new(&c, &setup(players)),
            Err(SetupError::Seats { found, min: 1, max: 4, .. }) if found == players
        ));
    }
    let slow = Match {
        tick_rate: 0,
        ..setup(2)
    };
    assert!(matches!(
        Cubes::new(&c, &slow),
        Err(SetupError::TickRate { .. })
    ));
    let mut bad = c.clone();
    bad.field.spacing = Fx::lit("0.25");
    assert!(matches!(
        Cubes::new(&bad, &setup(2)),
        Err(SetupError::Setting {
            field: "field.spacing",
            ..
        })
    ));
    let mut bad = c;
    bad.field.grid = 0;
    assert!(matches!(
        Cubes::new(&bad, &setup(2)),
        Err(SetupError::Setting {
            field: "field.grid",
            ..
        })
    ));
}

#[test]
fn hostile_snapshots_give_errors_not_panics() {
    let mut game = new_game(2);
    drive_in(&mut game, 100, CubesInput { z: true, ..NONE });
    assert!(!game.attached(0).is_empty());
    let bytes = game.save();
    assert!(Cubes::decode(&bytes).is_ok());

    // Truncations anywhere, including inside the header.
    let step = (bytes.len() / 300).max(1);
    for len in (0..bytes.len()).step_by(step).chain(0..64) {
        assert!(
            Cubes::decode(&bytes[..len]).is_err(),
            "prefix of {len} bytes"
        );
    }
    let mut long = bytes.clone();
    long.push(0);
    assert!(Cubes::decode(&long).is_err());

    // Bit flips: an error, or a state that steps without panicking.
    let mut loaded = 0;
    for (n, at) in (0..bytes.len()).step_by(bytes.len() / 200).enumerate() {
        let mut flipped = bytes.clone();
        flipped[at] ^= 1 << (n % 8);
        if let Ok(mut g) = Cubes::decode(&flipped) {
            loaded += 1;
            for f in 0..2 {
                g.step(f, &[CubesInput::from_bits(0x3f), RIGHT]);
            }
        }
    }
    assert!(loaded > 0, "some flips land in plain values");

    // Typed errors for the header.
    let mut wrong = bytes.clone();
    wrong[0] ^= 0xff;
    assert!(matches!(
        Cubes::decode(&wrong),
        Err(StateError::Version { .. })
    ));
    // The player count is after the version (4 bytes) and the settings.
    let players_at = 4 + lockstep_fx::Canonical::to_canonical(game.config()).len();
    assert_eq!(bytes[players_at], 2);
    for bad in [0u8, 5] {
        // The lists that follow no longer read as that many (the world
        // is misread), or they do and the count is refused.
        let mut b = bytes.clone();
        b[players_at] = bad;
        assert!(matches!(
            Cubes::decode(&b),
            Err(StateError::Invalid(_) | StateError::Decode(_))
        ));
    }
    // Seat 0's first attached cube, repeated or out of range.
    let list_at = players_at + 1;
    let n = u32::from_le_bytes(bytes[list_at..list_at + 4].try_into().unwrap());
    assert!(n >= 2);
    let second = list_at + 8;
    for bad in [0u32, 900, u32::MAX] {
        let mut b = bytes.clone();
        b[second..second + 4].copy_from_slice(&bad.to_le_bytes());
        assert!(
            matches!(Cubes::decode(&b), Err(StateError::Invalid(_))),
            "{bad}"
        );
    }
}

#[test]
fn input_encoding_is_six_bits_with_its_own_schema() {
    assert_eq!(CubesInput::MAX_BITS, 6);
    assert_ne!(
        CubesInput::schema_hash(),
        lockstep_codec::input::Buttons::schema_hash()
    );
    for bits in [0u8, 1, 0x2a, 0x3f] {
        let mut input = CubesInput::from_bits(bits);
        let mut w = BitWriter::new();
        input.serialize(&mut w).unwrap();
        let bytes = w.finish();
        assert_eq!(bytes.len(), 1);
        let mut back = NONE;
        back.serialize(&mut BitReader::new(&bytes)).unwrap();
        assert_eq!(back.to_bits(), bits);
    }
}
