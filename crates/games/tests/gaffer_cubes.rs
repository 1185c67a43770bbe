//! The snapshot article's scene: 901 bodies, one seat, a route that is the
//! same on every run, and the cube demo's state underneath.

use lockstep_games::cubes::Cubes;
use lockstep_games::gaffer_cubes::{GafferCubes, WAYPOINTS};
use lockstep_games::{Bots, Demo};
use lockstep_sim::{Game, Match};
use lockstep_snapshot::Bodies;

fn setup() -> Match {
    Match {
        seats: 1,
        seed: 5,
        tick_rate: 60,
    }
}

/// The state after `frames` frames of the route, and its inputs.
fn run(frames: u32) -> (GafferCubes, Vec<u8>) {
    let mut game = GafferCubes::new(&GafferCubes::default_config(), &setup()).unwrap();
    let mut route = Bots::<GafferCubes>::new(&setup());
    let mut inputs = Vec::new();
    for frame in 0..frames {
        let i = route.inputs(&game, frame);
        inputs.push(i[0].to_bits());
        game.step(frame, &i);
    }
    (game, inputs)
}

#[test]
fn the_route_is_the_same_on_every_run_and_reaches_its_waypoints() {
    let (a, inputs) = run(400);
    let (b, again) = run(400);
    assert_eq!(inputs, again);
    assert_eq!(a.checksum(), b.checksum());
    assert_eq!(a.body_slots(), 901);
    // It crossed the field to the first waypoint (from x = -16.5) and on
    // into the first row, blowing on the way.
    let at = a.cubes().player_position(0).unwrap();
    assert!(at.x.to_f64_lossy() > 0.0, "{at:?}");
    assert!(
        at.z.to_f64_lossy() < f64::from(WAYPOINTS[0].z) - 5.0,
        "{at:?}"
    );
    assert!(inputs.iter().any(|b| b & 16 != 0), "no blow in 400 frames");
    // Cubes move: the field is not asleep any more.
    assert!(a.cubes().awake_cubes() > 10);
}

#[test]
fn one_seat_only_and_a_state_is_the_cube_demos() {
    let two = Match {
        seats: 2,
        ..setup()
    };
    assert!(GafferCubes::new(&GafferCubes::default_config(), &two).is_err());
    let (game, _) = run(30);
    let bytes = game.save();
    let back = GafferCubes::decode(&bytes).unwrap();
    assert_eq!(back.checksum(), game.checksum());
    // A two-seat cube demo's state is not this game's.
    let demo = Cubes::new(&Cubes::default_config(), &two).unwrap();
    assert!(GafferCubes::decode(&demo.save()).is_err());
}
