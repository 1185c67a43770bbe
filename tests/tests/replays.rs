//! The recorded matches in `fixtures/replays/` replay bit-identically: every
//! frame's checksum matches the log recorded on x86_64, and the final state
//! matches the golden. `tools/cross-verify` replays prefixes of the same
//! logs on aarch64, s390x and i686.
//!
//! Regenerate (a reviewed change, after bumping a game's `VERSION`):
//! `LOCKSTEP_BLESS=1 cargo test -p lockstep-tests --test replays`.

use std::path::{Path, PathBuf};

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_sim::replay::{self, RecordSettings, Recorder, RunOptions};
use lockstep_sim::{Bot, Match};

/// How each fixture was recorded: the game, players, seed, frames.
struct Fixture {
    file: &'static str,
    players: u8,
}

const FRAMES: u32 = 3600;
const KEYFRAMES: u32 = 1200;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/replays")
}

fn bless() -> bool {
    std::env::var_os("LOCKSTEP_BLESS").is_some()
}

/// Records the fixture with the game's bots and embedded settings (what
/// `lockstep record <game> --frames 3600 --keyframe-interval 1200` does).
fn record<G: Demo>(f: &Fixture) -> Vec<u8> {
    let setup = Match {
        players: f.players,
        seed: 1,
        tick_rate: 60,
    };
    let settings = RecordSettings {
        keyframe_interval: KEYFRAMES,
        ..RecordSettings::default()
    };
    let mut rec = Recorder::<G, _>::new(&G::default_config(), setup, settings, Vec::new()).unwrap();
    let mut bots: Vec<G::Bot> = (0..f.players).map(|s| G::bot(s, setup.seed)).collect();
    for frame in 0..FRAMES {
        let inputs: Vec<G::Input> = bots
            .iter_mut()
            .map(|b| b.input(rec.engine().game(), frame))
            .collect();
        rec.advance(&inputs).unwrap();
    }
    rec.finish().unwrap().1
}

fn check<G: Demo>(f: &Fixture) {
    let log_path = dir().join(f.file);
    let golden_path = log_path.with_extension("golden");
    if bless() {
        std::fs::write(&log_path, record::<G>(f)).unwrap();
    }
    let bytes = std::fs::read(&log_path).unwrap();
    let log = replay::read::<G::Input>(&bytes).unwrap();
    assert!(log.is_complete(), "{}: {:?}", f.file, log.end());
    assert_eq!(log.frames(), FRAMES);
    assert_eq!(log.header().setup.players, f.players);
    let outcome = replay::run::<G>(&log, &RunOptions::default(), |_| {}).unwrap();
    assert!(
        outcome.verified(),
        "{} no longer replays: {:?} (a game or physics change moved the bits; bump the game's VERSION and re-record with LOCKSTEP_BLESS=1)",
        f.file,
        outcome.first_mismatch
    );
    assert_eq!(outcome.replayed, FRAMES);
    assert_eq!(outcome.full_checks, FRAMES / 60);
    let golden = format!(
        "game {}\nframes {}\nkeyframes {}\nfinal {}\n",
        G::ID,
        outcome.replayed,
        log.keyframes().len(),
        outcome.final_checksum
    );
    if bless() {
        std::fs::write(&golden_path, &golden).unwrap();
    }
    let expected = std::fs::read_to_string(&golden_path).unwrap();
    assert_eq!(golden, expected, "{}", golden_path.display());
    // Seeking from each keyframe lands on the logged checksums too.
    for k in log.keyframes() {
        let to = (k.frame + 120).min(FRAMES);
        let seek = RunOptions {
            to: Some(to),
            ..RunOptions::default()
        };
        let o = replay::run::<G>(&log, &seek, |_| {}).unwrap();
        assert_eq!(o.start, k.frame);
        assert!(
            o.verified(),
            "{} from keyframe {}: {:?}",
            f.file,
            k.frame,
            o
        );
    }
}

#[test]
fn cubes_fixture_replays_bit_identically() {
    check::<Cubes>(&Fixture {
        file: "cubes-2p.log",
        players: 2,
    });
}

#[test]
fn rts_fixture_replays_bit_identically() {
    check::<Rts>(&Fixture {
        file: "rts-4p.log",
        players: 4,
    });
}
