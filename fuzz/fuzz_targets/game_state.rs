//! Decodes arbitrary bytes as a state file and as a snapshot of each shipped
//! game: never panics; a state that decodes re-encodes to the same bytes and
//! survives a step.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_sim::{Game, StateFile};

fn game<G: Game>(data: &[u8]) {
    if let Ok(mut g) = G::decode(data) {
        assert_eq!(g.save(), data);
        g.step(0, &[]);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = StateFile::decode(data) {
        assert_eq!(file.encode(), data);
    }
    game::<Cubes>(data);
    game::<Rts>(data);
});
