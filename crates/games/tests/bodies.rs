//! Both games expose their bodies to snapshots: one slot per body for the
//! whole match, in the game's own terms (players' cubes first; unit ids),
//! with roles, and a receiver can write a state back.

use lockstep_fx::{Fx, Vec3};
use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_sim::{Game, Match};
use lockstep_snapshot::{Bodies, BodiesMut, Role};

#[test]
fn cube_slots_are_the_players_cubes_then_the_field() {
    let mut config = Cubes::default_config();
    config.field.grid = 4;
    let setup = Match {
        seats: 2,
        seed: 1,
        tick_rate: 60,
    };
    let mut game = Cubes::new(&config, &setup).unwrap();
    assert_eq!(game.body_slots(), 2 + 16);
    let (seat1, role) = game.body(1).unwrap();
    assert_eq!(role, Role::Player);
    assert_eq!(Some(seat1.position), game.player_position(1));
    let (cube, role) = game.body(2).unwrap();
    assert_eq!(role, Role::Free);
    assert_eq!(Some(cube.position), game.cube_position(0));
    assert!(game.body(18).is_none());
    // A receiver writes a state back; the bounds hold the field.
    let mut moved = cube;
    moved.position = cube.position + Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO);
    moved.at_rest = false;
    game.set_body(2, &moved);
    assert_eq!(game.cube_position(0), Some(moved.position));
    let b = game.snapshot_bounds();
    assert!(b.min.x < moved.position.x && moved.position.x < b.max.x);
}

#[test]
fn rts_slots_are_unit_ids_and_selected_units_are_players() {
    let mut config = Rts::default_config();
    config.units_per_player = 9;
    let setup = Match {
        seats: 2,
        seed: 3,
        tick_rate: 60,
    };
    let mut game = Rts::new(&config, &setup).unwrap();
    assert_eq!(game.body_slots(), 18);
    for id in 0..18 {
        let (state, role) = game.body(id).unwrap();
        assert_eq!(Some(state.position), game.unit(id).map(|u| u.position));
        assert_eq!(role, Role::Free);
    }
    // Seat 0 selects its units: they become the players' bodies.
    let (x, z) = game.base(0);
    let r = Fx::from_int(10);
    game.step(
        0,
        &[
            lockstep_games::rts::Command::select(x - r, z - r, x + r, z + r).into(),
            lockstep_games::rts::RtsInput::default(),
        ],
    );
    assert_eq!(game.body(0).unwrap().1, Role::Player);
    assert_eq!(game.body(9).unwrap().1, Role::Free);
    let b = game.snapshot_bounds();
    let half = config.map_size.scale_pow2(-1);
    assert!(b.max.x > half && b.min.z < half.saturating_neg());
}
