//! Replay logs on the walkers test game: round trip, verification, seeking,
//! truncation and corruption, refusal of foreign logs, divergence reports.

mod common;

use common::{Walkers, WalkersConfig, script};
use lockstep_codec::input::Buttons;
use lockstep_fx::{Checksum, Fx, Sink, StateWriter};
use lockstep_sim::replay::{
    self, FORMAT_VERSION, FrameCheck, Header, LogEnd, LogError, LogWriter, Logged, RecordSettings,
    Recorder, ReplayLog, RunError, RunOptions, TruncReason,
};
use lockstep_sim::{
    EngineSettings, Frame, Game, GameVersion, Match, SavedState, SetupError, StateError,
};

fn inputs(frame: Frame) -> Vec<Buttons> {
    (0..2).map(|seat| script(seat, frame)).collect()
}

fn settings(full: u32, keyframes: u32, chunk: u32) -> RecordSettings {
    RecordSettings {
        full_checksum_interval: full,
        keyframe_interval: keyframes,
        chunk_frames: chunk,
        engine: EngineSettings::default(),
    }
}

/// A whole record boundary of a log: its byte offset and the frames before it.
type Boundary = (u64, Frame);

struct Recording {
    bytes: Vec<u8>,
    checksums: Vec<Checksum>,
    initial: Checksum,
    boundaries: Vec<Boundary>,
}

/// Records `frames` frames of two scripted players; `corrupt_at` changes the
/// state (unlogged) before that frame.
fn record(frames: Frame, settings: RecordSettings, corrupt_at: Option<Frame>) -> Recording {
    let mut r = Recorder::<Walkers, _>::new(
        &WalkersConfig::default(),
        Match::default(),
        settings,
        Vec::new(),
    )
    .unwrap();
    let initial = r.engine().game().checksum();
    let mut boundaries = vec![(r.writer().written(), 0)];
    let mut checksums = Vec::new();
    for f in 0..frames {
        if corrupt_at == Some(f) {
            r.game_mut().positions[3] += Fx::from_bits(1 << 20);
        }
        checksums.push(r.advance(&inputs(f)).unwrap());
        let w = r.writer();
        let here = (w.written(), w.frames() - w.pending_frames());
        if boundaries.last() != Some(&here) {
            boundaries.push(here);
        }
    }
    let (_, bytes) = r.finish().unwrap();
    boundaries.push((bytes.len() as u64, frames));
    Recording {
        bytes,
        checksums,
        initial,
        boundaries,
    }
}

fn read(bytes: &[u8]) -> Result<ReplayLog<Buttons>, LogError> {
    replay::read::<Buttons>(bytes)
}

fn header_len() -> usize {
    Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 0, 0)
        .to_bytes()
        .len()
}

/// `log` holds exactly the first `frames` frames of `full`.
fn assert_prefix(log: &ReplayLog<Buttons>, full: &ReplayLog<Buttons>, frames: Frame) {
    assert_eq!(log.frames(), frames);
    for f in 0..frames {
        assert_eq!(log.inputs(f), full.inputs(f));
        assert_eq!(log.logged(f), full.logged(f));
    }
    assert!(log.keyframes().iter().all(|k| full.keyframes().contains(k)));
}

#[test]
fn a_600_frame_match_round_trips_with_keyframes() {
    let rec = record(600, settings(60, 120, 60), None);
    let log = read(&rec.bytes).unwrap();
    assert_eq!(log.end(), &LogEnd::Complete);
    assert_eq!(log.frames(), 600);
    assert_eq!(log.header().game, "walkers");
    assert_eq!(log.header().setup, Match::default());
    assert_eq!(log.header().config_hash, Checksum::of(&log.header().config));
    for f in 0..600 {
        assert_eq!(log.inputs(f), Some(&inputs(f)[..]));
        assert_eq!(
            log.check(f),
            Some(FrameCheck::of(&rec.checksums[f as usize]))
        );
    }
    assert_eq!(log.inputs(600), None);
    let full: Vec<Frame> = log.full_checksums().iter().map(|&(f, _)| f).collect();
    assert_eq!(full, (0..10).map(|i| 60 * i + 59).collect::<Vec<_>>());
    for &(f, c) in log.full_checksums() {
        assert_eq!(c, rec.checksums[f as usize]);
    }
    let keyframes: Vec<Frame> = log.keyframes().iter().map(|k| k.frame()).collect();
    assert_eq!(keyframes, [120, 240, 360, 480]);
    for k in log.keyframes() {
        assert_eq!(k.checksum(), rec.checksums[k.frame() as usize - 1]);
    }
    // Re-encoding with the recorder's chunking gives the same bytes.
    assert_eq!(log.write(Vec::new(), 60).unwrap(), rec.bytes);
    // Any other chunking reads back to the same log.
    for chunk in [1, 7, 600, 1000] {
        let again = read(&log.write(Vec::new(), chunk).unwrap()).unwrap();
        assert_eq!(again, log);
    }
    assert_eq!(Header::read(&rec.bytes).unwrap(), *log.header());
}

#[test]
fn a_replay_verifies_every_frame() {
    let rec = record(600, settings(60, 120, 60), None);
    let log = read(&rec.bytes).unwrap();
    // Two threads hash each frame while the next steps: the same outcome.
    for threads in [1, 2] {
        let options = RunOptions {
            threads,
            ..RunOptions::default()
        };
        let mut seen = Vec::new();
        let out = replay::run::<Walkers>(&log, &options, |f| seen.push(f)).unwrap();
        assert!(out.verified());
        assert_eq!((out.start, out.end, out.replayed), (0, 600, 600));
        assert_eq!(out.full_checks, 10);
        assert_eq!(out.mismatches, 0);
        assert_eq!((out.keyframes_checked, out.bad_keyframes), (4, 0));
        assert_eq!(out.final_checksum, rec.checksums[599]);
        assert_eq!(seen, (0..600).collect::<Vec<_>>());
    }
}

#[test]
fn seeking_lands_on_the_checksum_of_a_full_replay() {
    let rec = record(600, settings(60, 120, 60), None);
    let log = read(&rec.bytes).unwrap();
    for to in [0, 1, 59, 119, 120, 121, 333, 480, 599, 600] {
        let options = RunOptions {
            to: Some(to),
            ..RunOptions::default()
        };
        let out = replay::run::<Walkers>(&log, &options, |_| {}).unwrap();
        let keyframe = [480, 360, 240, 120].into_iter().find(|&k| k <= to);
        assert_eq!(out.start, keyframe.unwrap_or(0), "to {to}");
        assert_eq!(out.end, to);
        assert_eq!(out.replayed, to - out.start);
        assert!(out.verified());
        let expected = match to {
            0 => rec.initial,
            _ => rec.checksums[to as usize - 1],
        };
        assert_eq!(out.final_checksum, expected, "to {to}");
    }
    let beyond = RunOptions {
        to: Some(601),
        ..RunOptions::default()
    };
    assert_eq!(
        replay::run::<Walkers>(&log, &beyond, |_| {}),
        Err(RunError::Beyond {
            to: 601,
            frames: 600
        })
    );
}

#[test]
fn truncation_at_every_byte_keeps_exactly_the_complete_records() {
    // Chunks of 8 frames, keyframes every 16: each advance writes at most
    // one record, so the recorder sees every boundary.
    let rec = record(40, settings(10, 16, 8), None);
    let full = read(&rec.bytes).unwrap();
    assert!(full.is_complete());
    assert_eq!(full.keyframes().len(), 2);
    let header = header_len();
    assert_eq!(rec.boundaries[0], (header as u64, 0));
    let mut last_frames = 0;
    for len in 0..=rec.bytes.len() {
        let prefix = &rec.bytes[..len];
        if len < header {
            assert!(
                matches!(read(prefix), Err(LogError::Truncated { .. })),
                "{len}"
            );
            continue;
        }
        let log = read(prefix).unwrap();
        let &(offset, frames) = rec
            .boundaries
            .iter()
            .rev()
            .find(|&&(b, _)| b <= len as u64)
            .unwrap();
        assert_prefix(&log, &full, frames);
        assert!(frames >= last_frames);
        last_frames = frames;
        if len == rec.bytes.len() {
            assert_eq!(log.end(), &LogEnd::Complete);
            continue;
        }
        let LogEnd::Truncated {
            offset: at,
            frame,
            reason,
        } = log.end().clone()
        else {
            panic!("a strict prefix of {len} bytes reads as complete");
        };
        assert_eq!((at, frame), (offset, frames), "{len}");
        if offset == len as u64 {
            assert_eq!(reason, TruncReason::MissingEnd);
        } else {
            assert!(matches!(reason, TruncReason::Incomplete { .. }), "{len}");
        }
    }
    assert_eq!(last_frames, 40);
}

#[test]
fn bit_flips_are_never_accepted() {
    let rec = record(40, settings(10, 16, 8), None);
    let full = read(&rec.bytes).unwrap();
    let header = header_len();
    let mut bytes = rec.bytes.clone();
    for bit in 0..bytes.len() * 8 {
        let byte = bit / 8;
        bytes[byte] ^= 1 << (bit % 8);
        match read(&bytes) {
            Err(_) => assert!(byte < header, "bit {bit}"),
            Ok(log) if !log.damage().is_empty() => {
                // A damaged keyframe: skipped, every frame kept.
                assert!(!log.is_complete(), "bit {bit}");
                assert_eq!(log.damage().len(), 1, "bit {bit}");
                let d = &log.damage()[0];
                assert!(d.offset <= byte as u64, "bit {bit}");
                assert!(rec.boundaries.iter().any(|&(b, _)| b == d.offset));
                assert_eq!(log.keyframes().len() + 1, full.keyframes().len());
                assert_prefix(&log, &full, 40);
            }
            Ok(log) => {
                assert!(byte >= header, "bit {bit}");
                let LogEnd::Truncated { offset, frame, .. } = log.end().clone() else {
                    panic!("bit {bit} flipped and the log reads as complete");
                };
                // The flipped byte is not in the data kept.
                assert!(offset <= byte as u64, "bit {bit}");
                assert_eq!(frame, log.frames());
                let kept = rec
                    .boundaries
                    .iter()
                    .rev()
                    .find(|&&(b, _)| b <= offset)
                    .unwrap();
                assert_eq!(kept.0, offset, "bit {bit}");
                assert_prefix(&log, &full, kept.1);
                // What reads re-encodes to a complete log of the same frames.
                let again = read(&log.write(Vec::new(), 7).unwrap()).unwrap();
                assert!(again.is_complete());
                assert_prefix(&again, &full, kept.1);
            }
        }
        bytes[byte] ^= 1 << (bit % 8);
    }
}

#[test]
fn bad_headers_are_clear_errors() {
    let rec = record(30, settings(10, 0, 10), None);
    let mut bytes = rec.bytes.clone();
    bytes[8..10].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = read(&bytes).unwrap_err();
    assert_eq!(
        err,
        LogError::Version {
            found: FORMAT_VERSION + 1
        }
    );
    assert!(err.to_string().contains("format version 3"), "{err}");
    assert!(err.to_string().contains("reads versions 1 to 2"), "{err}");
    assert_eq!(Header::read(&bytes), Err(err));
    bytes[8..10].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(read(&bytes).unwrap_err(), LogError::Version { found: 0 });

    let mut bytes = rec.bytes.clone();
    bytes[0] = b'X';
    assert_eq!(read(&bytes).unwrap_err(), LogError::Magic);
    assert_eq!(read(b"PK\x03\x04").unwrap_err(), LogError::Magic);
    assert!(matches!(read(b"LSREP"), Err(LogError::Truncated { .. })));

    let mut bytes = rec.bytes.clone();
    bytes[20] ^= 1;
    assert!(matches!(read(&bytes), Err(LogError::Check { .. })));
}

/// Issue 11: a corrupted body length read as "16591246 more bytes needed".
#[test]
fn issue_11_a_corrupted_header_length_is_a_corrupt_field_not_truncation() {
    let rec = record(30, settings(10, 0, 10), None);
    let len = header_len();
    let body = (len - 22) as u32;
    for bad in [body ^ 0x00fd_0000, body + 1, body - 1, 0] {
        let mut bytes = rec.bytes.clone();
        bytes[10..14].copy_from_slice(&bad.to_le_bytes());
        let err = read(&bytes).unwrap_err();
        assert_eq!(
            err,
            LogError::Length {
                found: bad,
                fields: u64::from(body)
            },
            "length {bad}"
        );
        assert!(err.to_string().contains("corrupted"), "{err}");
    }
    // A log cut inside its config is still a truncation.
    assert!(matches!(
        read(&rec.bytes[..len - 12]),
        Err(LogError::Truncated { needed: 12, .. })
    ));
}

/// Issue 80: a keyframe announcing a state longer than the game allows
/// (a deflate stream that inflates within deflate's ratio to gigabytes)
/// was inflated whole, and every keyframe was held inflated. A keyframe
/// longer than the reader's state limit is damage, refused before it is
/// inflated, naming its offset and frame; the frames after it are kept.
#[test]
fn issue_80_a_keyframe_past_the_state_limit_is_damage_not_memory() {
    let rec = record(60, settings(10, 20, 10), None);
    let full = read(&rec.bytes).unwrap();
    let len = full.keyframes()[0].state_len();
    assert!(full.keyframes().iter().all(|k| k.state_len() == len));
    let log = replay::read_with::<Buttons>(&rec.bytes, len - 1).unwrap();
    assert_eq!(log.end(), &LogEnd::Complete);
    assert!(!log.is_complete());
    let (at20, _) = *rec.boundaries.iter().find(|&&(_, f)| f == 20).unwrap();
    let reason = |frame| TruncReason::KeyframeTooLong {
        frame,
        len,
        limit: len - 1,
    };
    assert_eq!(log.damage().len(), 2);
    assert_eq!(
        log.damage()[0],
        replay::Damage {
            offset: at20,
            frame: 20,
            reason: reason(20)
        }
    );
    assert_eq!(log.damage()[1].reason, reason(40));
    assert!(
        log.damage()[1]
            .to_string()
            .contains("keyframe of frame 40: a state of")
    );
    assert_prefix(&log, &full, 60);
    assert!(log.keyframes().is_empty());
    // At the limit, every keyframe reads, checked and not inflated: it
    // inflates only when asked, to the state the writer logged.
    let log = replay::read_with::<Buttons>(&rec.bytes, len).unwrap();
    assert!(log.is_complete());
    for k in log.keyframes() {
        let state = k.state().unwrap();
        assert_eq!(state.checksum(), k.checksum());
        assert_eq!(state.bytes.len() as u32, len);
    }
    // Read as its game's, the game's own limit applies (the walkers' is
    // the engine's).
    let as_game = replay::read_as::<Walkers>(&rec.bytes).unwrap();
    assert_eq!(as_game, full);
}

/// A writer with a state limit leaves out the keyframes longer than it (a
/// keyframe only speeds up seeking): what it writes reads back whole.
#[test]
fn a_writer_leaves_out_keyframes_past_its_state_limit() {
    let config = WalkersConfig::default();
    let setup = Match::default();
    let header = Header::new::<Walkers>(&config, setup, 10, 20);
    let mut engine = lockstep_sim::Engine::new(
        Walkers::new(&config, &setup).unwrap(),
        EngineSettings::default(),
    );
    let len = engine.save().bytes.len() as u32;
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header, 10)
        .unwrap()
        .with_state_limit(len - 1);
    for f in 0..30 {
        if f == 20 {
            w.keyframe(&engine.save()).unwrap();
        }
        let c = engine.advance(&inputs(f));
        w.frame(&inputs(f), &c).unwrap();
    }
    let log = read(&w.finish().unwrap()).unwrap();
    assert!(log.is_complete());
    assert_eq!(log.frames(), 30);
    assert!(log.keyframes().is_empty());
}

/// Issue 11: one bad byte in a keyframe dropped every later, intact frame.
#[test]
fn issue_11_a_damaged_keyframe_costs_the_keyframe_not_the_frames_after_it() {
    let rec = record(60, settings(10, 20, 10), None);
    let full = read(&rec.bytes).unwrap();
    assert_eq!(full.keyframes().len(), 2);
    // The keyframe before frame 20 is the record right after frame 20's boundary.
    let (at, _) = *rec.boundaries.iter().find(|&&(_, f)| f == 20).unwrap();
    let mut bytes = rec.bytes.clone();
    bytes[at as usize + 20] ^= 0x40;
    let log = read(&bytes).unwrap();
    assert_eq!(log.end(), &LogEnd::Complete);
    assert!(!log.is_complete());
    assert_eq!(
        log.damage(),
        &[replay::Damage {
            offset: at,
            frame: 20,
            reason: TruncReason::Check
        }]
    );
    assert!(log.damage()[0].to_string().contains("skipped"));
    assert_prefix(&log, &full, 60);
    assert_eq!(log.keyframes().len(), 1);
    assert_eq!(log.keyframes()[0].frame(), 40);
    // The frames still replay and verify.
    let out = replay::run::<Walkers>(&log, &RunOptions::default(), |_| {}).unwrap();
    assert!(out.verified() && out.replayed == 60);

    // A damaged frames record still ends the valid data: the next chunk
    // does not continue at its frame.
    let (at, _) = *rec.boundaries.iter().find(|&&(_, f)| f == 30).unwrap();
    let mut bytes = rec.bytes.clone();
    bytes[at as usize + 12] ^= 0x40;
    let log = read(&bytes).unwrap();
    assert!(log.damage().is_empty());
    assert_eq!(log.frames(), 30);
    assert!(matches!(log.end(), LogEnd::Truncated { frame: 30, .. }));
}

/// Issue 11: `diff` compared only the 16-bit checks, so two logs whose full
/// checksums differ where their short checks agree looked the same.
#[test]
fn issue_11_logs_that_differ_only_in_a_full_checksum_diverge() {
    let rec = record(40, settings(10, 0, 10), None);
    let good = read(&rec.bytes).unwrap();
    let header = good.header().clone();
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header, 10).unwrap();
    for f in 0..40 {
        let mut checksum = rec.checksums[f as usize];
        if f == 29 {
            // Same first two bytes (the short check), another checksum.
            let mut b = *checksum.as_bytes();
            b[31] ^= 1;
            checksum = Checksum::from_bytes(b);
        }
        w.frame(good.inputs(f).unwrap(), &checksum).unwrap();
    }
    let other = read(&w.finish().unwrap()).unwrap();
    assert!(other.is_complete());
    let found = lockstep_sim::desync::diagnose_logs::<Walkers>(
        &good,
        &other,
        ["good".into(), "other".into()],
    )
    .unwrap()
    .expect("a divergence");
    assert_eq!(found.report.frame, 29);
    // Headers of one match do not differ; another seed does.
    assert!(good.header().match_differences(other.header()).is_empty());
    let mut seeded = good.header().clone();
    seeded.setup.seed = 9;
    assert_eq!(
        good.header().match_differences(&seeded),
        vec![("seed", "1".to_string(), "9".to_string())]
    );
}

/// The walkers under another id, or another version.
macro_rules! variant {
    ($name:ident, $id:expr, $version:expr) => {
        #[derive(Debug, Clone)]
        struct $name(Walkers);

        impl Game for $name {
            type Input = Buttons;
            type Config = WalkersConfig;
            const ID: &'static str = $id;
            const VERSION: u32 = $version;

            fn new(config: &WalkersConfig, setup: &Match) -> Result<Self, SetupError> {
                Walkers::new(config, setup).map($name)
            }
            fn step(&mut self, frame: Frame, inputs: &[Buttons]) {
                self.0.step(frame, inputs)
            }
            fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
                self.0.encode(w)
            }
            fn decode(bytes: &[u8]) -> Result<Self, StateError> {
                Walkers::decode(bytes).map($name)
            }
        }
    };
}

variant!(Runners, "runners", 1);
variant!(WalkersV2, "walkers", 2);

#[test]
fn a_log_of_another_game_or_version_or_scene_is_refused() {
    let rec = record(30, settings(10, 0, 10), None);
    let log = read(&rec.bytes).unwrap();
    let options = RunOptions::default();
    let err = replay::run::<Runners>(&log, &options, |_| {}).unwrap_err();
    assert_eq!(
        err,
        RunError::Game {
            found: "walkers".into(),
            expected: "runners"
        }
    );
    assert!(
        err.to_string().contains("`walkers`, not `runners`"),
        "{err}"
    );
    assert!(matches!(
        replay::run::<WalkersV2>(&log, &options, |_| {}),
        Err(RunError::GameVersion {
            found: GameVersion { number: 1, .. },
            expected: GameVersion { number: 2, .. },
            ..
        })
    ));
    let other_scene = RunOptions {
        config_hash: Some(Checksum::of(b"another scene")),
        ..options
    };
    assert!(matches!(
        replay::run::<Walkers>(&log, &other_scene, |_| {}),
        Err(RunError::ConfigHash { .. })
    ));
    let same_scene = RunOptions {
        config_hash: Some(log.header().config_hash),
        ..options
    };
    assert!(
        replay::run::<Walkers>(&log, &same_scene, |_| {})
            .unwrap()
            .verified()
    );
}

#[test]
fn a_divergence_is_reported_at_its_frame() {
    let rec = record(600, settings(60, 120, 60), Some(300));
    let log = read(&rec.bytes).unwrap();
    let two = RunOptions {
        threads: 2,
        ..RunOptions::default()
    };
    let out = replay::run::<Walkers>(&log, &two, |_| {}).unwrap();
    assert_eq!(
        out,
        replay::run::<Walkers>(&log, &RunOptions::default(), |_| {}).unwrap()
    );
    let m = out.first_mismatch.unwrap();
    assert_eq!(m.frame, 300);
    assert_eq!(
        m.expected,
        Logged::Short(FrameCheck::of(&rec.checksums[300]))
    );
    assert_ne!(m.computed, rec.checksums[300]);
    assert_eq!(out.replayed, 600);
    assert_eq!(out.mismatches, 300);
    assert_ne!(out.final_checksum, rec.checksums[599]);

    let stop = RunOptions {
        stop_at_mismatch: true,
        ..RunOptions::default()
    };
    let out = replay::run::<Walkers>(&log, &stop, |_| {}).unwrap();
    assert_eq!((out.replayed, out.end, out.mismatches), (301, 301, 1));
    assert_eq!(out.first_mismatch, Some(m));

    // Seeking from a keyframe recorded after the divergence replays the
    // recorded (diverged) states, so it verifies.
    let seek = RunOptions {
        to: Some(400),
        ..RunOptions::default()
    };
    let out = replay::run::<Walkers>(&log, &seek, |_| {}).unwrap();
    assert_eq!(out.start, 360);
    assert!(out.verified());
    assert_eq!(out.final_checksum, rec.checksums[399]);
}

#[test]
fn a_keyframe_that_does_not_match_the_log_is_refused() {
    let config = WalkersConfig::default();
    let setup = Match::default();
    let header = Header::new::<Walkers>(&config, setup, 10, 20);
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header, 10).unwrap();
    let mut engine = lockstep_sim::Engine::new(
        Walkers::new(&config, &setup).unwrap(),
        EngineSettings::default(),
    );
    for f in 0..20 {
        let c = engine.advance(&inputs(f));
        w.frame(&inputs(f), &c).unwrap();
    }
    let mut wrong = engine.save();
    wrong.bytes = Walkers::new(&config, &setup).unwrap().save();
    w.keyframe(&wrong).unwrap();
    for f in 20..30 {
        let c = engine.advance(&inputs(f));
        w.frame(&inputs(f), &c).unwrap();
    }
    let log = read(&w.finish().unwrap()).unwrap();
    assert!(log.is_complete());
    let seek = RunOptions {
        to: Some(25),
        ..RunOptions::default()
    };
    assert!(matches!(
        replay::run::<Walkers>(&log, &seek, |_| {}),
        Err(RunError::KeyframeChecksum { frame: 20, .. })
    ));
    // Issue 11: a full replay starts from the header, but it still compares
    // every keyframe it reaches with the state it computed.
    let out = replay::run::<Walkers>(&log, &RunOptions::default(), |_| {}).unwrap();
    assert_eq!(out.first_mismatch, None);
    assert_eq!(out.keyframes_checked, 1);
    assert_eq!(out.first_bad_keyframe, Some(20));
    assert_eq!(out.bad_keyframes, 1);
    assert!(!out.verified());
}

#[test]
fn spliced_and_trailing_bytes_end_the_valid_data() {
    let rec = record(40, settings(10, 0, 8), None);
    let full = read(&rec.bytes).unwrap();
    let header = header_len();
    let (b1, b2) = (rec.boundaries[1].0 as usize, rec.boundaries[2].0 as usize);

    // A chunk out of order: the header, then the second chunk.
    let mut spliced = rec.bytes[..header].to_vec();
    spliced.extend_from_slice(&rec.bytes[b1..b2]);
    let log = read(&spliced).unwrap();
    assert_eq!(
        log.end(),
        &LogEnd::Truncated {
            offset: header as u64,
            frame: 0,
            reason: TruncReason::FrameOrder {
                expected: 0,
                found: 8
            }
        }
    );

    // A chunk of another log (another seed): its check binds it to its header.
    let other = {
        let mut r = Recorder::<Walkers, _>::new(
            &WalkersConfig::default(),
            Match {
                seed: 2,
                ..Match::default()
            },
            settings(10, 0, 8),
            Vec::new(),
        )
        .unwrap();
        for f in 0..16 {
            r.advance(&inputs(f)).unwrap();
        }
        r.finish().unwrap().1
    };
    let mut spliced = rec.bytes[..b1].to_vec();
    spliced.extend_from_slice(&other[b1..b2]);
    let log = read(&spliced).unwrap();
    assert_eq!(
        log.end(),
        &LogEnd::Truncated {
            offset: b1 as u64,
            frame: 8,
            reason: TruncReason::Check
        }
    );

    // Garbage after the end record.
    let mut trailing = rec.bytes.clone();
    trailing.extend_from_slice(b"garbage");
    let log = read(&trailing).unwrap();
    assert_prefix(&log, &full, 40);
    assert_eq!(
        log.end(),
        &LogEnd::Truncated {
            offset: rec.bytes.len() as u64,
            frame: 40,
            reason: TruncReason::TrailingBytes { extra: 7 }
        }
    );
}

#[test]
fn the_writer_refuses_what_it_cannot_log() {
    let header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 10, 0);
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header.clone(), 10).unwrap();
    assert!(w.frame(&[Buttons(1)], &Checksum::default()).is_err());
    assert!(
        w.keyframe(&SavedState {
            frame: 3,
            bytes: vec![]
        })
        .is_err()
    );
    assert!(LogWriter::<_, Buttons>::new(Vec::new(), header.clone(), 0).is_err());
    let mut bad = header;
    bad.config_hash = Checksum::default();
    assert!(LogWriter::<_, Buttons>::new(Vec::new(), bad, 10).is_err());
}

#[test]
fn a_player_frame_takes_about_a_byte_and_a_half() {
    // Two players, 6-bit inputs changing every 20 frames; per frame a 2-byte
    // check, 2 × ~0.3 bits of inputs, 32 bytes of full checksum a second and
    // 21 bytes of chunk framing a second: 3.2 bytes a frame.
    let rec = record(600, settings(60, 0, 60), None);
    let body = rec.bytes.len() - header_len();
    assert!(body * 10 <= 2 * 600 * 17, "{body} bytes");
    // Without full checksums, in 10-second chunks: 2.4 bytes a frame.
    let rec = record(600, settings(0, 0, 600), None);
    let body = rec.bytes.len() - header_len();
    assert!(body * 10 <= 2 * 600 * 13, "{body} bytes");
}

#[test]
fn a_log_read_as_other_inputs_is_refused() {
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    struct Wide(u16);
    impl lockstep_codec::Input for Wide {
        const MAX_BITS: u32 = 12;
        fn schema_hash() -> u64 {
            lockstep_codec::schema_hash("test Wide: u12")
        }
        fn serialize<S: lockstep_codec::BitStream>(
            &mut self,
            s: &mut S,
        ) -> Result<(), lockstep_codec::BitError> {
            let mut v = u32::from(self.0);
            s.ranged(&mut v, 0, 4095, "wide")?;
            self.0 = v as u16;
            Ok(())
        }
    }
    let rec = record(10, settings(10, 0, 10), None);
    assert!(matches!(
        replay::read::<Wide>(&rec.bytes),
        Err(LogError::Schema { .. })
    ));
}

/// A record sealed with the check a writer would give it.
fn seal(header_check: u64, kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    let mut hashed = header_check.to_le_bytes().to_vec();
    hashed.extend_from_slice(&out);
    hashed.extend_from_slice(body);
    out.extend_from_slice(body);
    out.extend_from_slice(&Checksum::of(&hashed).short().0.to_le_bytes());
    out
}

#[test]
fn well_sealed_garbage_records_never_panic_and_end_the_log() {
    let header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 3, 0);
    let head = header.to_bytes();
    let check = header.check();
    // The writer's own record, sealed by the test, reads.
    let mut ok = head.clone();
    ok.extend_from_slice(&seal(check, 3, &0u32.to_le_bytes()));
    assert!(read(&ok).unwrap().is_complete());

    let mut rng = lockstep_fx::Rng::new(7, 1);
    for i in 0..3000u32 {
        let kind = (rng.next_u32() % 4) as u8 + 1;
        let len = (rng.next_u32() % 48) as usize;
        let mut body: Vec<u8> = (0..len).map(|_| rng.next_u32() as u8).collect();
        // Mostly plausible heads: frame 0 and a small count or length.
        if len >= 8 && i % 2 == 0 {
            body[..4].copy_from_slice(&0u32.to_le_bytes());
            body[4..8].copy_from_slice(&(rng.next_u32() % 8).to_le_bytes());
        }
        if kind == 2 && len >= 9 && i % 3 == 0 {
            body[0..4].copy_from_slice(&0u32.to_le_bytes());
            body[4] = (rng.next_u32() % 2) as u8;
        }
        let mut bytes = head.clone();
        bytes.extend_from_slice(&seal(check, kind, &body));
        let log = read(&bytes).unwrap();
        match log.end() {
            LogEnd::Complete => assert!(kind == 3 && body == [0; 4]),
            LogEnd::Truncated { offset, frame, .. } => {
                assert!(*offset == head.len() as u64 || *offset == bytes.len() as u64);
                assert_eq!(*frame, log.frames());
            }
        }
        // Whatever was kept re-encodes and reads back the same.
        let again = read(&log.write(Vec::new(), 5).unwrap()).unwrap();
        assert!(again.is_complete());
        assert_eq!(again.frames(), log.frames());
        assert_eq!(again.keyframes(), log.keyframes());
    }
}
