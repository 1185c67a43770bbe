//! Feeds arbitrary text to `lockstep_sim::settings_file::parse` as a match
//! file and as each shipped game's settings (the TOML a user edits or
//! downloads): nothing may panic, an error names a line and column inside
//! the text, and settings that parse are either refused by the game with a
//! typed error or build a match whose state fits the game's state limit.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_sim::settings_file::{MatchFile, SettingsError, parse};
use lockstep_sim::{Game, Match};

fn located<T>(text: &str, result: Result<T, SettingsError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(SettingsError::Parse { line, column, .. }) => {
            assert!(line >= 1 && column >= 1);
            assert!(line <= text.lines().count().max(1) + 1);
            None
        }
        Err(e) => panic!("parsing text gave {e}"),
    }
}

/// Settings of `G` that parse build a small match, or are refused; a match
/// that builds fits the game's state limit.
fn game<G: Game>(text: &str) {
    let Some(config) = located(text, parse::<G::Config>(text, Path::new("f.toml"))) else {
        return;
    };
    let setup = Match::default();
    match G::state_limit(&config, &setup) {
        Ok(limit) => {
            let game = G::new(&config, &setup).expect("a setup with a limit builds");
            assert!(game.save().len() as u64 <= u64::from(limit));
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = located(text, parse::<MatchFile>(text, Path::new("m.toml")));
    game::<Cubes>(text);
    game::<Rts>(text);
});
