//! `Game::state_limit` of the shipped games: every state a bot match
//! reaches fits it (readers refuse longer keyframes, and writers leave them
//! out), and it stays within a small factor of what matches reach, so a
//! crafted keyframe costs no more than a real match of the same settings.
//! A setup the game refuses is refused by the limit too.

use lockstep_fx::Fx;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_sim::{Game, MAX_STATE_BYTES, Match};

/// Plays `frames` frames of bots and returns the longest state seen.
fn longest_state<G: Demo>(config: &G::Config, setup: &Match, frames: u32) -> usize {
    let mut game = G::new(config, setup).expect("a valid setup");
    let mut bots = Bots::<G>::new(setup);
    let mut longest = game.save().len();
    for frame in 0..frames {
        let inputs = bots.inputs(&game, frame);
        game.step(frame, &inputs);
        if frame % 20 == 0 {
            longest = longest.max(game.save().len());
        }
    }
    longest
}

fn check<G: Demo>(config: &G::Config, setup: Match, frames: u32) {
    let limit = G::state_limit(config, &setup).expect("a valid setup");
    let longest = longest_state::<G>(config, &setup, frames);
    assert!(
        longest as u64 <= u64::from(limit),
        "{}: a state of {longest} bytes, over the limit {limit}",
        G::ID
    );
    assert!(
        u64::from(limit) <= 40 * longest as u64,
        "{}: a limit of {limit} bytes for states of {longest}",
        G::ID
    );
    assert!(limit <= MAX_STATE_BYTES);
}

fn setup(seats: u8) -> Match {
    Match {
        seats,
        seed: 5,
        tick_rate: 60,
    }
}

#[test]
fn the_cubes_states_fit_their_limit() {
    check::<Cubes>(&Cubes::default_config(), setup(2), 600);
    check::<Cubes>(&Cubes::default_config(), setup(4), 300);
}

#[test]
fn the_rts_states_fit_their_limit() {
    let mut small = Rts::default_config();
    small.map_size = Fx::from_int(60);
    small.spawn_radius = Fx::from_int(14);
    small.units_per_player = 64;
    small.buildings.truncate(1);
    small.buildings[0].position = [Fx::ZERO, Fx::from_int(-5)];
    check::<Rts>(&small, setup(4), 900);
    check::<Rts>(&Rts::default_config(), setup(2), 300);
}

#[test]
fn a_refused_setup_has_no_limit() {
    assert!(Cubes::state_limit(&Cubes::default_config(), &setup(9)).is_err());
    assert!(Rts::state_limit(&Rts::default_config(), &setup(1)).is_err());
    let mut slow = setup(2);
    slow.tick_rate = 0;
    assert!(Rts::state_limit(&Rts::default_config(), &slow).is_err());
}
