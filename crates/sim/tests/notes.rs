//! Notes in replay logs: every kind round trips at any position, a log with
//! notes re-encodes byte for byte, a stopped log takes nothing but its end,
//! truncation and corruption of a note are typed and keep what they can,
//! and a version 1 log (no notes) still reads and writes back as it was.

mod common;

use common::{Walkers, WalkersConfig, script};
use lockstep_codec::input::Buttons;
use lockstep_fx::Checksum;
use lockstep_sim::replay::{
    self, Detail, Header, LogEnd, LogError, LogWriter, MAX_DETAIL, Note, Noted, RecordSettings,
    Recorder, ReplayLog, RunOptions, StopCause, TruncReason, UncheckedCause,
};
use lockstep_sim::{EngineSettings, Frame, Match};

fn inputs(frame: Frame) -> Vec<Buttons> {
    (0..2).map(|seat| script(seat, frame)).collect()
}

fn read(bytes: &[u8]) -> Result<ReplayLog<Buttons>, LogError> {
    replay::read::<Buttons>(bytes)
}

fn recorder() -> Recorder<Walkers, Vec<u8>> {
    let settings = RecordSettings {
        full_checksum_interval: 10,
        keyframe_interval: 10,
        chunk_frames: 7,
        engine: EngineSettings::default(),
    };
    Recorder::new(
        &WalkersConfig::default(),
        Match::default(),
        settings,
        Vec::new(),
    )
    .unwrap()
}

/// Every kind of note, and every stop reason.
fn every_note() -> Vec<Note> {
    let stops = [
        StopCause::LostQuorum,
        StopCause::MatchInvalid { first_frame: 17 },
        StopCause::RecordingError(Detail::new("No space left on device (os error 28)")),
        StopCause::Interrupted,
        StopCause::Other(Detail::new("")),
    ];
    let mut notes = vec![
        Note::SeatDropped {
            seat: 1,
            last_frame: None,
        },
        Note::SeatDropped {
            seat: 0,
            last_frame: Some(4),
        },
        Note::SeatReturned { seat: 1, frame: 12 },
        Note::Healed {
            first: 12,
            loaded: 15,
        },
        Note::Healed {
            first: 30,
            loaded: 30,
        },
        Note::Unchecked {
            from: 18,
            cause: UncheckedCause::Alone,
        },
        Note::Unchecked {
            from: 19,
            cause: UncheckedCause::PlayedOn,
        },
        Note::Unchecked {
            from: 21,
            cause: UncheckedCause::Snapshots,
        },
        Note::Checked { from: 25 },
    ];
    notes.extend(stops.into_iter().map(|reason| Note::Stopped { reason }));
    notes
}

/// Records 40 frames with `notes` written at their positions (a position
/// that is a keyframe's gets its notes before the keyframe, except at frame
/// 20, where the keyframe is written first), then finishes.
fn record_with(notes: &[Noted]) -> Vec<u8> {
    let mut r = recorder();
    let mut notes = notes.iter().peekable();
    for f in 0..=40 {
        if f == 20 {
            r.keyframe().unwrap();
        }
        while let Some(n) = notes.next_if(|n| n.at == f) {
            r.note(&n.note).unwrap();
        }
        if f < 40 && !r.writer().is_stopped() {
            r.advance(&inputs(f)).unwrap();
        }
    }
    r.finish().unwrap().1
}

/// The notes to record: every kind but a stop, spread over positions (two
/// at 0, several at one frame, at keyframe frames, mid-chunk), then `stop`
/// at the end.
fn spread(stop: Option<StopCause>) -> Vec<Noted> {
    let notes: Vec<Note> = every_note()
        .into_iter()
        .filter(|n| !matches!(n, Note::Stopped { .. }))
        .collect();
    let at = [0, 0, 3, 10, 10, 10, 20, 20, 33];
    let mut out: Vec<Noted> = at
        .into_iter()
        .zip(notes)
        .map(|(at, note)| Noted { at, note })
        .collect();
    if let Some(reason) = stop {
        out.push(Noted {
            at: 40,
            note: Note::Stopped { reason },
        });
    }
    out
}

/// Each record after the header: kind, byte offset and length.
fn records(bytes: &[u8]) -> Vec<(u8, usize, usize)> {
    let body = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let mut at = 22 + body;
    let mut out = Vec::new();
    while at < bytes.len() {
        let len = 13 + u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push((bytes[at], at, len));
        at += len;
    }
    out
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
fn every_note_kind_round_trips_at_its_position() {
    for stop in every_note().into_iter().filter_map(|n| match n {
        Note::Stopped { reason } => Some(reason),
        _ => None,
    }) {
        let notes = spread(Some(stop.clone()));
        let bytes = record_with(&notes);
        let log = read(&bytes).unwrap();
        assert!(log.is_complete(), "{:?}", log.end());
        assert_eq!(log.header().format_version, replay::FORMAT_VERSION);
        assert_eq!(log.frames(), 40);
        assert_eq!(log.notes(), &notes[..]);
        assert_eq!(log.stop(), Some(&stop));
        assert_eq!(log.keyframes().len(), 3);
        // Byte for byte with the recorder's chunking, including where each
        // note lies among the keyframes of its frame.
        assert_eq!(log.write(Vec::new(), 7).unwrap(), bytes);
        for chunk in [1, 3, 100] {
            assert_eq!(read(&log.write(Vec::new(), chunk).unwrap()).unwrap(), log);
        }
        // The replay verifies every frame and hands the notes on.
        let out = replay::run::<Walkers>(&log, &RunOptions::default(), |_| {}).unwrap();
        assert!(out.verified() && out.replayed == 40);
        assert_eq!(out.notes, notes);
        assert_eq!(out.stop(), Some(&stop));
        // A seek hands on the notes up to where it stops.
        let seek = RunOptions {
            to: Some(20),
            ..RunOptions::default()
        };
        let out = replay::run::<Walkers>(&log, &seek, |_| {}).unwrap();
        assert_eq!(out.notes, notes[..8]);
        assert_eq!(out.stop(), None);
    }
    // Without a stop the log is a whole match that says what happened to it.
    let notes = spread(None);
    let log = read(&record_with(&notes)).unwrap();
    assert!(log.is_complete());
    assert_eq!(log.notes(), &notes[..]);
    assert_eq!(log.stop(), None);
}

#[test]
fn notes_print_one_line_each() {
    let lines: Vec<String> = spread(Some(StopCause::LostQuorum))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "seat 1 dropped before frame 0 (absent input from frame 0)",
            "seat 0 dropped after frame 4 (absent input from frame 5)",
            "seat 1 returned, playing from frame 12",
            "frames 12..=15 healed (loaded the state after frame 15)",
            "frames 30..=30 healed (loaded the state after frame 30)",
            "unchecked from frame 18 (this seat played alone)",
            "unchecked from frame 19 (the match played on after a desync it could not heal)",
            "unchecked from frame 21 (this seat followed the authority's snapshots)",
            "checked again from frame 25",
            "frame 40: stopped: lost quorum (this seat was in a minority)",
        ]
    );
    let stop = |reason| Note::Stopped { reason }.to_string();
    assert_eq!(
        stop(StopCause::MatchInvalid { first_frame: 17 }),
        "stopped: match invalid (a desync from frame 17 could not be healed)"
    );
    assert_eq!(
        stop(StopCause::RecordingError(Detail::new("disk\nfull"))),
        "stopped: recording error: disk full"
    );
    assert_eq!(
        stop(StopCause::Other(Detail::new(""))),
        "stopped: no reason given"
    );
}

#[test]
fn a_detail_is_bounded_and_prints_on_one_line() {
    let long = "é\u{1b}[31m".repeat(100);
    let d = Detail::new(&long);
    assert!(d.as_str().len() <= MAX_DETAIL);
    assert!(d.as_str().len() > MAX_DETAIL - 4);
    assert!(!d.as_str().chars().any(char::is_control));
    assert!(long.starts_with(&d.as_str().replace(' ', "\u{1b}")));
}

#[test]
fn a_stopped_log_takes_nothing_but_its_end() {
    let mut r = recorder();
    for f in 0..5 {
        r.advance(&inputs(f)).unwrap();
    }
    r.note(&Note::Stopped {
        reason: StopCause::Interrupted,
    })
    .unwrap();
    assert!(r.writer().is_stopped());
    // Refused before stepping: the engine stays at the log's frame.
    assert!(r.advance(&inputs(5)).is_err());
    assert_eq!(r.engine().frame(), 5);
    assert!(r.note(&Note::Checked { from: 5 }).is_err());
    assert!(
        r.note(&Note::Stopped {
            reason: StopCause::LostQuorum
        })
        .is_err()
    );
    let (_, bytes) = r.finish().unwrap();
    let log = read(&bytes).unwrap();
    assert!(log.is_complete());
    assert_eq!(log.frames(), 5);
    assert_eq!(log.stop(), Some(&StopCause::Interrupted));
}

#[test]
fn the_writer_refuses_notes_it_cannot_log() {
    let header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 0, 0);
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header.clone(), 10).unwrap();
    let bad = [
        Note::SeatDropped {
            seat: 2,
            last_frame: None,
        },
        Note::SeatReturned { seat: 9, frame: 0 },
        Note::Healed {
            first: 5,
            loaded: 4,
        },
    ];
    for note in &bad {
        assert!(w.note(note).is_err(), "{note:?}");
    }
    // Nothing was written for them.
    assert_eq!(w.written(), header.to_bytes().len() as u64);
    // A version 1 log holds no notes.
    let v1 = Header {
        format_version: 1,
        ..header
    };
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), v1, 10).unwrap();
    assert!(w.note(&Note::Checked { from: 0 }).is_err());
    let v0 = Header {
        format_version: 0,
        ..w.header().clone()
    };
    assert!(LogWriter::<_, Buttons>::new(Vec::new(), v0, 10).is_err());
}

#[test]
fn truncation_inside_a_note_keeps_the_frames_before_it() {
    let notes = spread(Some(StopCause::MatchInvalid { first_frame: 40 }));
    let bytes = record_with(&notes);
    let full = read(&bytes).unwrap();
    let mut frames = 0;
    let mut kept = 0;
    for (kind, at, len) in records(&bytes) {
        if kind == 4 {
            for cut in at + 1..at + len {
                let log = read(&bytes[..cut]).unwrap();
                assert_eq!(log.frames(), frames);
                assert_eq!(log.notes(), &full.notes()[..kept]);
                assert!(matches!(
                    log.end(),
                    LogEnd::Truncated {
                        offset,
                        reason: TruncReason::Incomplete { .. },
                        ..
                    } if *offset == at as u64
                ));
            }
            kept += 1;
        }
        let log = read(&bytes[..at + len]).unwrap();
        frames = log.frames();
    }
    assert_eq!(kept, notes.len());
}

#[test]
fn a_damaged_note_costs_the_note_not_the_frames_after_it() {
    let notes = spread(None);
    let bytes = record_with(&notes);
    let full = read(&bytes).unwrap();
    // The note of frame 3 (the third note), in the middle of a chunk.
    let (_, at, len) = records(&bytes)
        .into_iter()
        .filter(|r| r.0 == 4)
        .nth(2)
        .unwrap();
    for byte in at + 5..at + len {
        let mut damaged = bytes.clone();
        damaged[byte] ^= 0x20;
        let log = read(&damaged).unwrap();
        assert_eq!(log.end(), &LogEnd::Complete);
        assert!(!log.is_complete());
        assert_eq!(log.damage().len(), 1);
        assert_eq!(log.damage()[0].offset, at as u64);
        assert_eq!(log.damage()[0].reason, TruncReason::Check);
        assert_eq!(log.frames(), 40);
        let mut rest = full.notes().to_vec();
        rest.remove(2);
        assert_eq!(log.notes(), &rest[..]);
    }
}

#[test]
fn malformed_notes_are_typed_errors() {
    let header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 0, 0);
    let check = header.check();
    let note = |at: u32, rest: &[u8]| {
        let mut body = at.to_le_bytes().to_vec();
        body.extend_from_slice(rest);
        body
    };
    let malformed = |what| TruncReason::Note { at: 0, what };
    let detail = |len: u8, text: &[u8]| {
        let mut b = vec![1, 3, len];
        b.extend_from_slice(text);
        b
    };
    let cases: Vec<(Vec<u8>, TruncReason)> = vec![
        (
            vec![0, 0],
            TruncReason::Malformed {
                what: "note record (shorter than its position)",
            },
        ),
        (note(0, &[]), malformed("note (no kind)")),
        (note(0, &[7]), malformed("note (unknown kind)")),
        (note(0, &[0]), malformed("note (unknown kind)")),
        (note(0, &[1]), malformed("stop (no cause)")),
        (note(0, &[1, 6]), malformed("stop (unknown cause)")),
        (note(0, &[1, 2, 0, 0]), malformed("stop (cut short)")),
        (note(0, &[1, 1, 0]), malformed("note (trailing bytes)")),
        (note(0, &detail(3, b"ab")), malformed("stop detail")),
        (note(0, &detail(2, b"a\n")), malformed("stop detail")),
        (note(0, &detail(2, &[0xc3, 0x28])), malformed("stop detail")),
        (
            note(0, &detail(161, &[b'a'; 161])),
            malformed("stop detail"),
        ),
        (
            note(0, &[2, 5, 0, 0, 0, 4, 0, 0, 0]),
            malformed("healed span (ends before it starts)"),
        ),
        (note(0, &[2, 5, 0, 0, 0]), malformed("heal (cut short)")),
        (
            note(0, &[3, 0, 0, 0, 0, 4]),
            malformed("unchecked span (unknown cause)"),
        ),
        (note(0, &[4, 0, 0]), malformed("checked span (cut short)")),
        (
            note(0, &[5, 0, 2]),
            malformed("seat drop (last frame flag not 0 or 1)"),
        ),
        (
            note(0, &[5, 2, 0]),
            malformed("seat (not a seat of the log)"),
        ),
        (note(0, &[6, 0, 1, 0]), malformed("seat return (cut short)")),
        (
            note(1, &[4, 0, 0, 0, 0]),
            TruncReason::NoteOrder {
                expected: 0,
                found: 1,
            },
        ),
    ];
    for (body, reason) in cases {
        let mut bytes = header.to_bytes();
        let start = bytes.len() as u64;
        bytes.extend_from_slice(&seal(check, 4, &body));
        let log = read(&bytes).unwrap();
        assert_eq!(
            log.end(),
            &LogEnd::Truncated {
                offset: start,
                frame: 0,
                reason: reason.clone()
            },
            "{body:?}"
        );
        assert!(log.notes().is_empty());
        // With the end record after it, the bad note is skipped as damage.
        bytes.extend_from_slice(&seal(check, 3, &0u32.to_le_bytes()));
        let log = read(&bytes).unwrap();
        assert_eq!(log.end(), &LogEnd::Complete);
        assert_eq!(log.damage().len(), 1, "{body:?}");
        assert_eq!(log.damage()[0].reason, reason);
    }
    // The largest note reads.
    let mut bytes = header.to_bytes();
    bytes.extend_from_slice(&seal(check, 4, &note(0, &detail(160, &[b'a'; 160]))));
    bytes.extend_from_slice(&seal(check, 3, &0u32.to_le_bytes()));
    assert!(read(&bytes).unwrap().is_complete());
}

#[test]
fn nothing_but_the_end_may_follow_a_stop() {
    let header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 0, 0);
    let check = header.check();
    let stop = seal(check, 4, &[0, 0, 0, 0, 1, 4]);
    let mut bytes = header.to_bytes();
    bytes.extend_from_slice(&stop);
    let after = bytes.len() as u64;
    bytes.extend_from_slice(&seal(check, 4, &[0, 0, 0, 0, 4, 0, 0, 0, 0]));
    let log = read(&bytes).unwrap();
    assert_eq!(log.stop(), Some(&StopCause::Interrupted));
    assert_eq!(
        log.end(),
        &LogEnd::Truncated {
            offset: after,
            frame: 0,
            reason: TruncReason::AfterStop { frame: 0 }
        }
    );
    // A second stop is refused the same way.
    let mut bytes = header.to_bytes();
    bytes.extend_from_slice(&stop);
    bytes.extend_from_slice(&stop);
    let log = read(&bytes).unwrap();
    assert_eq!(log.notes().len(), 1);
    assert!(matches!(
        log.end(),
        LogEnd::Truncated {
            reason: TruncReason::AfterStop { frame: 0 },
            ..
        }
    ));
}

#[test]
fn a_version_1_log_still_reads_and_writes_back_as_it_was() {
    let mut header = Header::new::<Walkers>(&WalkersConfig::default(), Match::default(), 10, 0);
    header.format_version = 1;
    let check = header.check();
    let mut w = LogWriter::<_, Buttons>::new(Vec::new(), header, 7).unwrap();
    let mut engine = lockstep_sim::Engine::new(
        <Walkers as lockstep_sim::Game>::new(&WalkersConfig::default(), &Match::default()).unwrap(),
        EngineSettings::default(),
    );
    for f in 0..30 {
        let checksum = engine.advance(&inputs(f));
        w.frame(&inputs(f), &checksum).unwrap();
    }
    let bytes = w.finish().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    let log = read(&bytes).unwrap();
    assert!(log.is_complete());
    assert_eq!(log.header().format_version, 1);
    assert!(log.notes().is_empty());
    assert_eq!(log.write(Vec::new(), 7).unwrap(), bytes);
    let out = replay::run::<Walkers>(&log, &RunOptions::default(), |_| {}).unwrap();
    assert!(out.verified() && out.replayed == 30 && out.notes.is_empty());

    // A note record in a version 1 log is a kind that version does not
    // have: with intact records after it, it is skipped as damage.
    let at = bytes.len() - 17;
    let mut with_note = bytes[..at].to_vec();
    with_note.extend_from_slice(&seal(check, 4, &[30, 0, 0, 0, 4, 0, 0, 0, 0]));
    with_note.extend_from_slice(&bytes[at..]);
    let log = read(&with_note).unwrap();
    assert!(log.notes().is_empty());
    assert_eq!(log.frames(), 30);
    assert_eq!(log.damage().len(), 1);
    assert_eq!(log.damage()[0].reason, TruncReason::UnknownKind(4));
}
