//! State files: a round trip, and every changed byte refused — the frame and
//! game id included (issue 11: format version 1 checked only the snapshot).

mod common;

use common::{Walkers, WalkersConfig};
use lockstep_fx::{Checksum, StateWriter};
use lockstep_sim::{
    Engine, EngineSettings, Game, Match, STATE_FILE_VERSION, STATE_MAGIC, StateFile, StateFileError,
};

fn saved() -> StateFile {
    let game = Walkers::new(&WalkersConfig::default(), &Match::default()).unwrap();
    let mut engine = Engine::new(game, EngineSettings::default());
    for _ in 0..5 {
        engine.advance(&[Default::default(), Default::default()]);
    }
    StateFile::of::<Walkers>(engine.save())
}

#[test]
fn a_state_file_round_trips() {
    let file = saved();
    let back = StateFile::decode(&file.encode()).unwrap();
    assert_eq!(back, file);
    assert_eq!(back.frame(), 5);
    back.expect::<Walkers>().unwrap();
}

#[test]
fn issue_11_every_byte_of_a_state_file_is_checked() {
    let bytes = saved().encode();
    // Every byte after the version is covered, the game id and frame included.
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x01;
        let err = StateFile::decode(&bad).expect_err("a changed byte is refused");
        match at {
            0..=7 => assert_eq!(err, StateFileError::Magic, "byte {at}"),
            8..=9 => assert!(matches!(err, StateFileError::Version { .. }), "byte {at}"),
            _ => assert_eq!(err, StateFileError::Checksum, "byte {at}"),
        }
    }
    for len in 0..bytes.len() {
        assert!(StateFile::decode(&bytes[..len]).is_err(), "cut at {len}");
    }
}

#[test]
fn a_version_1_state_file_is_refused_by_name() {
    // Version 1: the same fields, the check covering only the snapshot.
    let file = saved();
    let mut w = StateWriter::buffer();
    w.write_raw(&STATE_MAGIC);
    w.write_u16(1);
    w.write_bytes(file.game.as_bytes());
    w.write_u32(file.game_version);
    w.write_u32(file.frame());
    w.write_bytes(&file.state.bytes);
    w.write_raw(Checksum::of(&file.state.bytes).as_bytes());
    let err = StateFile::decode(&w.into_inner()).unwrap_err();
    assert_eq!(err, StateFileError::Version { found: 1 });
    let text = err.to_string();
    assert!(text.contains("version 1"), "{text}");
    assert!(
        text.contains(&format!("version {STATE_FILE_VERSION}")),
        "{text}"
    );
}

#[test]
fn a_state_of_another_game_version_is_refused_naming_both() {
    let mut file = saved();
    file.game_version += 1;
    let err = file.expect::<Walkers>().unwrap_err();
    let text = err.to_string();
    let ours = Walkers::VERSION;
    assert!(
        text.contains(&format!("walkers version {}", ours + 1)),
        "{text}"
    );
    assert!(text.contains(&format!("walkers version {ours}")), "{text}");
    assert!(text.contains("release that saved it"), "{text}");
}

/// A state file holding a state past the engine's one limit is refused
/// before any game decodes it; one at the limit reads.
#[test]
fn a_state_past_the_limit_is_refused() {
    let mut file = saved();
    file.state.bytes = vec![0; lockstep_sim::MAX_STATE_BYTES as usize];
    assert!(StateFile::decode(&file.encode()).is_ok());
    file.state.bytes.push(0);
    assert_eq!(
        StateFile::decode(&file.encode()),
        Err(StateFileError::TooLong {
            len: u64::from(lockstep_sim::MAX_STATE_BYTES) + 1
        })
    );
}
