//! Feeds arbitrary bytes to `lockstep_sim::replay::read` as a log of the test
//! game's `Buttons`: nothing may panic; whatever reads must say where its
//! valid data ends, agree with `Header::read`, and re-encode to a complete
//! log that reads back to the same header, frames, checksums, keyframes and
//! notes. Every keyframe inflates to a state of its announced length whose
//! checksum is the one read; read again under a small state limit, no
//! keyframe longer than the limit is kept, and the frames are the same.
//!
//! Random bytes almost never pass the header's and records' BLAKE3 checks, so
//! the same bytes are also cut into records behind a valid header and sealed
//! with the checks a writer would give them, behind a header of format
//! version 1 or 2: that reaches the frame, keyframe, note and end decoders.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_codec::Input;
use lockstep_codec::input::Buttons;
use lockstep_fx::Checksum;
use lockstep_sim::Match;
use lockstep_sim::replay::{self, Header, LogEnd, LogError};

fn check_log(data: &[u8]) {
    let header = Header::read(data);
    let log = match replay::read::<Buttons>(data) {
        Ok(log) => log,
        // A good header of another input type.
        Err(LogError::Schema { .. }) => return assert!(header.is_ok()),
        Err(_) => return assert!(header.is_err()),
    };
    assert_eq!(header.as_ref(), Ok(log.header()));
    if let LogEnd::Truncated { offset, frame, .. } = log.end() {
        assert!(*offset <= data.len() as u64);
        assert_eq!(*frame, log.frames());
    }
    // Iterate everything the log holds.
    for f in 0..log.frames() {
        assert_eq!(
            log.inputs(f).map(<[Buttons]>::len),
            Some(usize::from(log.header().setup.seats))
        );
        assert!(log.logged(f).is_some());
    }
    for k in log.keyframes() {
        assert!(k.frame() <= log.frames());
        let state = k.state().expect("a keyframe that read inflates");
        assert_eq!(state.frame, k.frame());
        assert_eq!(state.bytes.len() as u64, u64::from(k.state_len()));
        assert_eq!(state.checksum(), k.checksum());
    }
    let limit = 64;
    let small = replay::read_with::<Buttons>(data, limit).expect("the header read once");
    assert!(small.keyframes().iter().all(|k| k.state_len() <= limit));
    assert_eq!(small.frames(), log.frames());
    assert_eq!(small.notes(), log.notes());
    assert!(log.header().allows_notes() || log.notes().is_empty());
    assert!(log.notes().windows(2).all(|n| n[0].at <= n[1].at));
    for n in log.notes() {
        assert!(n.at <= log.frames());
        assert!(n.to_string().lines().count() == 1);
    }
    if log.stop().is_some() {
        assert_eq!(log.notes().last().map(|n| n.at), Some(log.frames()));
    }
    // Re-encode (complete, in small chunks) and read back.
    let bytes = log
        .write(Vec::new(), 7)
        .expect("a log that reads re-encodes");
    let again = replay::read::<Buttons>(&bytes).expect("a re-encoded log reads");
    assert_eq!(again.end(), &LogEnd::Complete);
    assert_eq!(again.header(), log.header());
    assert_eq!(again.frames(), log.frames());
    assert_eq!(again.full_checksums(), log.full_checksums());
    assert_eq!(again.keyframes(), log.keyframes());
    assert_eq!(again.notes(), log.notes());
    assert_eq!(again.stop(), log.stop());
    for f in 0..log.frames() {
        assert_eq!(again.inputs(f), log.inputs(f));
        assert_eq!(again.check(f), log.check(f));
    }
}

/// A valid header chosen by the first two bytes, then the rest cut into
/// records (`kind u8 | length u8 | body`), each sealed with its right check.
fn sealed(data: &[u8]) -> Option<Vec<u8>> {
    let (&[seats, interval], mut rest) = data.split_first_chunk::<2>()?;
    let header = Header {
        format_version: if seats & 0x80 == 0 { 2 } else { 1 },
        game: "fuzz".into(),
        game_version: 1,
        schema_hash: Buttons::schema_hash(),
        setup: Match {
            seats: seats % 4 + 1,
            ..Match::default()
        },
        full_checksum_interval: u32::from(interval % 8),
        keyframe_interval: 0,
        config: Vec::new(),
        config_hash: Checksum::of(&[]),
    };
    let check = header.check();
    let mut out = header.to_bytes();
    while let Some((&[kind, len], tail)) = rest.split_first_chunk::<2>() {
        let len = usize::from(len).min(tail.len());
        let (body, next) = tail.split_at(len);
        let mut record = vec![kind];
        record.extend_from_slice(&(len as u32).to_le_bytes());
        let mut hashed = check.to_le_bytes().to_vec();
        hashed.extend_from_slice(&record);
        hashed.extend_from_slice(body);
        record.extend_from_slice(body);
        record.extend_from_slice(&Checksum::of(&hashed).short().0.to_le_bytes());
        out.extend_from_slice(&record);
        rest = next;
    }
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    check_log(data);
    if let Some(log) = sealed(data) {
        check_log(&log);
    }
});
