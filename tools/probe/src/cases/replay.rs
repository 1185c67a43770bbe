//! The recorded matches in `fixtures/replays/`: each case replays a prefix
//! of a fixture log (and a stretch seeked from a keyframe) and writes what
//! the replay found: whether every frame matched the log recorded on
//! x86_64, how many frames it stepped, and the final state's checksum. A
//! build that computes any frame differently changes the verdict and the
//! checksum, so its line differs from the others.
//!
//! The prefixes are short enough for qemu; `cargo test` replays the whole
//! logs natively (tests/tests/replays.rs).

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_sim::replay::{self, RunOptions};
use lockstep_sim::{Frame, Game};

use super::Writer;

const CUBES: &[u8] = include_bytes!("../../../../fixtures/replays/cubes-2p.log");
const RTS: &[u8] = include_bytes!("../../../../fixtures/replays/rts-4p.log");

/// Replays `log` as `G` up to `to` (from the latest keyframe at or before
/// it) and writes the verdict.
fn run<G: Game>(log: &[u8], to: Frame, w: &mut Writer) {
    let log = replay::read::<G::Input>(log).expect("the fixture log reads");
    let options = RunOptions {
        to: Some(to),
        ..RunOptions::default()
    };
    let (outcome, engine) =
        replay::run_with_state::<G>(&log, &options, |_| {}).expect("the fixture log replays");
    w.write_bool(outcome.verified());
    w.write_u32(outcome.start);
    w.write_u32(outcome.replayed);
    w.write_u32(outcome.mismatches);
    w.write_raw(engine.game().checksum().as_bytes());
}

/// The cubes match, frames 0..360.
pub fn cubes_start(w: &mut Writer) {
    run::<Cubes>(CUBES, 360, w);
}

/// The cubes match from its keyframe at 2400 to 2640.
pub fn cubes_keyframe(w: &mut Writer) {
    run::<Cubes>(CUBES, 2640, w);
}

/// The RTS battle, frames 0..360.
pub fn rts_start(w: &mut Writer) {
    run::<Rts>(RTS, 360, w);
}

/// The RTS battle from its keyframe at 2400 to 2640 (armies engaged).
pub fn rts_keyframe(w: &mut Writer) {
    run::<Rts>(RTS, 2640, w);
}
