//! Crafted files: replay logs built to make a reader take more memory than
//! the file is worth, each record sealed with the check a writer would give
//! it (so only the reader's bounds stand between the bytes and the memory).
//! The regression tests feed them to the readers and the `lockstep` tools;
//! `tools/crafted-files` writes them out and measures each tool's peak
//! memory on them.
//!
//! - [`deflate_bomb`]: a raw deflate stream that inflates about 1 032 times
//!   its size (deflate's greatest ratio) into zeros;
//! - [`keyframe_bomb`]: a real bot match with one keyframe whose data is such
//!   a stream, announcing its true inflated length (up to 4 GiB);
//! - [`keyframe_swarm`]: a real bot match with a small deflate bomb before
//!   every frame, each announcing `state` bytes of zeros;
//! - [`refused_setup`]: the log of a match whose setup the game refuses
//!   (too many seats) but whose records are sound, with a keyframe to seek
//!   from.
//!
//! The matches are played by the game's bots on its default settings, so
//! every frame of a crafted log replays to its logged checksum: what is
//! wrong with it is exactly what it was crafted with.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use lockstep_fx::Checksum;
use lockstep_games::{Bots, Demo};
use lockstep_sim::replay::{Header, LogWriter};
use lockstep_sim::{Engine, EngineSettings, Frame, Match};

/// The start of zlib's level-9 raw deflate stream of 1 MiB of zeros: a
/// dynamic block whose codes for "copy 258 bytes from 1 back" are one bit
/// each, so that every zero byte after it is 8 such bits (4 × 258 bytes).
const BOMB_HEAD: [u8; 15] = [
    0xed, 0xc1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xc2, 0xa0, 0xf5, 0x4f, 0x6d, 0x08, 0x5f, 0xa0,
];

/// The end of that stream: the end-of-block code after the copies.
const BOMB_TAIL: [u8; 2] = [0x3e, 0x03];

/// A raw deflate stream of `zeros + 17` bytes that inflates to
/// [`bomb_len`]`(zeros)` zero bytes.
pub fn deflate_bomb(zeros: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(zeros + BOMB_HEAD.len() + BOMB_TAIL.len());
    out.extend_from_slice(&BOMB_HEAD);
    out.resize(BOMB_HEAD.len() + zeros, 0);
    out.extend_from_slice(&BOMB_TAIL);
    out
}

/// What [`deflate_bomb`]`(zeros)` inflates to, in bytes.
pub fn bomb_len(zeros: usize) -> u64 {
    64 + 1032 * zeros as u64
}

/// The zeros a [`deflate_bomb`] needs to inflate to at least `len` bytes.
pub fn zeros_for(len: u64) -> usize {
    usize::try_from(len.saturating_sub(64).div_ceil(1032)).unwrap_or(usize::MAX)
}

/// A two-seat match of `G`'s bots on its default settings, seed 1, 60 Hz.
pub fn setup() -> Match {
    Match::default()
}

/// The zeros of the largest [`deflate_bomb`] of at most `bytes` bytes
/// whose inflated length a `u32` can announce (4 GiB).
pub fn bomb_zeros(bytes: usize) -> usize {
    let most = (u64::from(u32::MAX) - 64) / 1032;
    bytes
        .saturating_sub(BOMB_HEAD.len() + BOMB_TAIL.len())
        .min(most as usize)
}

/// A log of `frames` frames of `G`'s bots with one keyframe before frame
/// `frames / 2` whose data is the [`deflate_bomb`] of [`bomb_zeros`]`(bytes)`,
/// announcing what it inflates to.
pub fn keyframe_bomb<G: Demo>(frames: Frame, bytes: usize) -> Vec<u8> {
    let zeros = bomb_zeros(bytes);
    let len = bomb_len(zeros) as u32;
    let data = deflate_bomb(zeros);
    play::<G>(&setup(), frames, |frame| {
        (frame == frames / 2).then(|| keyframe_body(frame, len, &data))
    })
}

/// A log of `G`'s bots, a keyframe before every frame from 1 on whose data
/// is a [`deflate_bomb`] inflating to at least `state` bytes, until the log
/// is about `bytes` long.
pub fn keyframe_swarm<G: Demo>(bytes: usize, state: u64) -> Vec<u8> {
    let zeros = zeros_for(state);
    let data = deflate_bomb(zeros);
    let len = u32::try_from(bomb_len(zeros)).unwrap_or(u32::MAX);
    // A record of the keyframe, and about a byte of frames after it.
    let per_frame = data.len() + 9 + 13 + 4;
    let frames = (bytes / per_frame).max(2) as Frame;
    play::<G>(&setup(), frames, |frame| {
        (frame > 0).then(|| keyframe_body(frame, len, &data))
    })
}

/// A log of `frames` frames of a match of `G` with more seats than it
/// plays (`seats`), every seat's input the default, checksums of a real
/// two-seat match, and a keyframe of that match's state before frame
/// `frames / 2`: sound records behind a header the game refuses.
pub fn refused_setup<G: Demo>(seats: u8, frames: Frame) -> Vec<u8> {
    let played = setup();
    let config = G::default_config();
    let mut engine = Engine::new(
        G::new(&config, &played).expect("the default settings"),
        EngineSettings::NONE,
    );
    let mut bots = Bots::<G>::new(&played);
    let refused = Match { seats, ..played };
    let header = Header::new::<G>(&config, refused, 60, 0);
    let out = Shared::default();
    let mut w = LogWriter::<_, G::Input>::new(out.clone(), header, 60).expect("a header");
    let inputs = vec![G::Input::default(); usize::from(seats)];
    for frame in 0..frames {
        if frame == frames / 2 {
            w.keyframe(&engine.save()).expect("a keyframe");
        }
        let played_inputs = bots.inputs(engine.game(), frame);
        let checksum = engine.advance(&played_inputs);
        w.frame(&inputs, &checksum).expect("a frame");
    }
    w.finish().expect("the end");
    out.take()
}

/// A keyframe record body: `frame | deflated | len | data`.
fn keyframe_body(frame: Frame, len: u32, data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(9 + data.len());
    body.extend_from_slice(&frame.to_le_bytes());
    body.push(1);
    body.extend_from_slice(&len.to_le_bytes());
    body.extend_from_slice(data);
    body
}

/// Plays `frames` frames of `G`'s bots into a log, putting the keyframe
/// record body `keyframe(frame)` gives before each frame, sealed as a
/// writer seals it.
fn play<G: Demo>(
    setup: &Match,
    frames: Frame,
    mut keyframe: impl FnMut(Frame) -> Option<Vec<u8>>,
) -> Vec<u8> {
    let config = G::default_config();
    let mut engine = Engine::new(
        G::new(&config, setup).expect("the default settings"),
        EngineSettings::NONE,
    );
    let mut bots = Bots::<G>::new(setup);
    let header = Header::new::<G>(&config, *setup, 60, 0);
    let check = header.check();
    let out = Shared::default();
    let mut w = LogWriter::<_, G::Input>::new(out.clone(), header, 60).expect("a header");
    for frame in 0..frames {
        if let Some(body) = keyframe(frame) {
            w.flush().expect("a flush");
            out.0.borrow_mut().extend_from_slice(&seal(check, 2, &body));
        }
        let inputs = bots.inputs(engine.game(), frame);
        let checksum = engine.advance(&inputs);
        w.frame(&inputs, &checksum).expect("a frame");
    }
    w.finish().expect("the end");
    out.take()
}

/// A whole record: `kind | length | body | check`, the check chained from
/// the header's (`fixtures/replays/SPEC.md` §3).
fn seal(header_check: u64, kind: u8, body: &[u8]) -> Vec<u8> {
    let mut record = vec![kind];
    record.extend_from_slice(&(body.len() as u32).to_le_bytes());
    let mut hashed = header_check.to_le_bytes().to_vec();
    hashed.extend_from_slice(&record);
    hashed.extend_from_slice(body);
    record.extend_from_slice(body);
    record.extend_from_slice(&Checksum::of(&hashed).short().0.to_le_bytes());
    record
}

/// A byte buffer a [`LogWriter`] writes into while the crafter adds records
/// of its own between the writer's.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Shared {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bomb inflates to exactly what it says, at deflate's ratio, up
    /// to the engine's limit on a state; one zero more is refused before a
    /// byte is handed on.
    #[test]
    fn a_deflate_bomb_inflates_to_its_length() {
        use lockstep_codec::deflate::{DeflateError, MAX_STATE_BYTES};
        let largest = zeros_for(u64::from(MAX_STATE_BYTES) + 1) - 1;
        assert!(bomb_len(largest) <= u64::from(MAX_STATE_BYTES));
        assert!(bomb_len(largest + 1) > u64::from(MAX_STATE_BYTES));
        for zeros in [0, 1, 1016, largest] {
            let bomb = deflate_bomb(zeros);
            let mut n = 0u64;
            let len = bomb_len(zeros) as u32;
            lockstep_codec::deflate::unpack_with(true, &bomb, len, u32::MAX, |p| {
                assert!(p.iter().all(|&b| b == 0));
                n += p.len() as u64;
            })
            .unwrap();
            assert_eq!(n, bomb_len(zeros));
        }
        let over = bomb_len(largest + 1) as u32;
        let refused = lockstep_codec::deflate::unpack_with(
            true,
            &deflate_bomb(largest + 1),
            over,
            u32::MAX,
            |_| panic!("a piece of a refused bomb was handed on"),
        );
        assert_eq!(
            refused,
            Err(DeflateError::TooLong {
                expected: over,
                limit: MAX_STATE_BYTES
            })
        );
        // zeros_for gives the fewest zeros that reach a length.
        for len in [1 << 20, (1 << 20) + 1, 65, 1096] {
            let zeros = zeros_for(len);
            assert!(bomb_len(zeros) >= len, "{len}");
            assert!(bomb_len(zeros - 1) < len, "{len}");
        }
    }
}
