//! The recorded matches in `fixtures/replays/` replay bit-identically: every
//! frame's checksum matches the log recorded on x86_64, and the final state
//! matches the golden. `tools/cross-verify` replays prefixes of the same
//! logs on aarch64, s390x and i686.
//!
//! Each fixture is described by a match file in `fixtures/matches/`.
//! Regenerate (a reviewed change, after bumping a game's `VERSION`):
//! `LOCKSTEP_BLESS=1 cargo test -p lockstep-tests --test replays`.

use std::path::{Path, PathBuf};

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_sim::replay::{self, RecordSettings, Recorder, RunOptions};
use lockstep_sim::settings_file::{self, MatchFile};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn bless() -> bool {
    std::env::var_os("LOCKSTEP_BLESS").is_some()
}

/// Records the first `frames` frames of the match of `m` with the game's
/// bots (what `lockstep record --match` does), a keyframe every
/// `keyframe_interval` frames, each frame on `threads` threads.
fn record<G: Demo>(m: &MatchFile, frames: u32, keyframe_interval: u32, threads: usize) -> Vec<u8> {
    let config = match &m.settings {
        Some(path) => settings_file::load(path).unwrap(),
        None => G::default_config(),
    };
    let settings = RecordSettings {
        keyframe_interval,
        ..RecordSettings::default()
    };
    let mut rec = Recorder::<G, _>::new(&config, m.setup, settings, Vec::new()).unwrap();
    rec.set_threads(threads);
    assert_eq!(rec.threads(), threads);
    let mut bots = Bots::<G>::new(&m.setup);
    for frame in 0..frames {
        let inputs = bots.inputs(rec.engine().game(), frame);
        rec.advance(&inputs).unwrap();
    }
    rec.finish().unwrap().1
}

/// The match file of fixture `name`.
fn match_file(name: &str) -> MatchFile {
    MatchFile::load(&fixtures().join(format!("matches/{name}.toml"))).unwrap()
}

fn check<G: Demo>(name: &str) {
    let m = match_file(name);
    assert_eq!(m.game, G::ID);
    let log_path = fixtures().join(format!("replays/{name}.log"));
    let golden_path = log_path.with_extension("golden");
    if bless() {
        let keyframes = m.keyframe_interval.unwrap_or(600);
        std::fs::write(&log_path, record::<G>(&m, m.frames, keyframes, 1)).unwrap();
    }
    let file = name;
    let bytes = std::fs::read(&log_path).unwrap();
    let log = replay::read_as::<G>(&bytes).unwrap();
    assert!(log.is_complete(), "{file}: {:?}", log.end());
    // Logs of an older format version (the fixtures were recorded in
    // version 1, before notes) read, and write back byte for byte.
    assert_eq!(
        log.write(Vec::new(), replay::DEFAULT_CHUNK_FRAMES).unwrap(),
        bytes,
        "{file} (format version {}) does not write back as it was",
        log.header().format_version
    );
    assert_eq!(log.frames(), m.frames);
    assert_eq!(log.header().setup, m.setup);
    let outcome = replay::run::<G>(&log, &RunOptions::default(), |_| {}).unwrap();
    assert!(
        outcome.verified(),
        "{file} no longer replays: {:?} (a game or physics change moved the bits; bump the game's VERSION and re-record with LOCKSTEP_BLESS=1)",
        outcome.first_mismatch
    );
    assert_eq!(outcome.replayed, m.frames);
    assert_eq!(outcome.full_checks, m.frames / 60);
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
        let to = (k.frame() + 120).min(m.frames);
        let seek = RunOptions {
            to: Some(to),
            ..RunOptions::default()
        };
        let o = replay::run::<G>(&log, &seek, |_| {}).unwrap();
        assert_eq!(o.start, k.frame());
        assert!(o.verified(), "{file} from keyframe {}: {o:?}", k.frame());
    }
}

#[test]
fn cubes_fixture_replays_bit_identically() {
    check::<Cubes>("cubes-2p");
}

#[test]
fn rts_fixture_replays_bit_identically() {
    check::<Rts>("rts-4p");
}

/// A recording's threads are a machine setting: on two threads the log is
/// the one-thread log, byte for byte (checksums, keyframes and all), and
/// its checksums are the fixture's.
#[test]
fn a_recording_on_two_threads_is_the_recording_on_one() {
    fn agree<G: Demo>(name: &str, frames: u32) {
        let m = match_file(name);
        let one = record::<G>(&m, frames, 100, 1);
        let two = record::<G>(&m, frames, 100, 2);
        assert!(one == two, "{name}: the logs differ");
        let log = replay::read::<G::Input>(&two).unwrap();
        assert_eq!(log.frames(), frames);
        assert_eq!(
            log.keyframes().len(),
            usize::try_from((frames - 1) / 100).unwrap()
        );
        let bytes = std::fs::read(fixtures().join(format!("replays/{name}.log"))).unwrap();
        let fixture = replay::read::<G::Input>(&bytes).unwrap();
        for frame in 0..frames {
            assert_eq!(
                log.check(frame),
                fixture.check(frame),
                "{name}: frame {frame}"
            );
        }
        let full = log.full_checksums();
        assert_eq!(full.len(), usize::try_from(frames / 60).unwrap());
        for (frame, checksum) in full {
            assert_eq!(
                Some(*checksum),
                fixture.full_checksum(*frame),
                "{name}: frame {frame}"
            );
        }
    }
    agree::<Cubes>("cubes-2p", 300);
    agree::<Rts>("rts-4p", 200);
}
