//! Crafted replay logs (`lockstep_testkit::crafted`) against the tools that
//! read logs, each run with its data segment limited to 256 MiB
//! (`prlimit --data`): a tool that inflated a keyframe bomb, or held a swarm
//! of keyframes inflated, would fail to allocate and abort. Each must
//! instead finish, say what is wrong with the log (the damaged record's
//! offset and frame), keep its valid frames and exit 1; `diff` never calls
//! such a log an agreement; `render` refuses a header `verify` refuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_sim::Game;
use lockstep_testkit::crafted;

/// The data limit each tool runs under.
const DATA_LIMIT: u64 = 256 << 20;

/// Runs `lockstep args` with its data segment limited to [`DATA_LIMIT`].
fn limited(args: &[&str]) -> Output {
    let limit = format!("--data={DATA_LIMIT}");
    Command::new("prlimit")
        .arg(&limit)
        .arg(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("prlimit (util-linux) runs the binary")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `o` ended on its own with exit status 1 (not killed, not aborted).
fn failed_cleanly(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(1), "{what}: {}", text(o));
}

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &Path, bytes: &[u8]) -> String {
    std::fs::write(path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every tool that reads a log, on a log of `frames` frames whose
/// keyframes were crafted: each finishes under the limit, says why the log
/// is bad and exits 1.
fn every_tool_fails_cleanly(d: &Path, log: &str, frames: u32, says: &str) {
    let o = limited(&["verify", log]);
    failed_cleanly(&o, "verify");
    assert!(text(&o).contains(says), "verify: {}", text(&o));
    assert!(text(&o).contains("FAIL"), "verify: {}", text(&o));

    let o = limited(&["replay", "-q", log]);
    failed_cleanly(&o, "replay");
    assert!(text(&o).contains(says), "replay: {}", text(&o));

    // Seeking loads a keyframe (or refuses one): the final state.
    let png = d.join("last.png");
    let o = limited(&[
        "render",
        log,
        "--width",
        "64",
        "--height",
        "36",
        "-o",
        png.to_str().unwrap(),
    ]);
    failed_cleanly(&o, "render");

    // A log against itself: never an agreement it could not read.
    let o = limited(&["diff", log, log]);
    failed_cleanly(&o, "diff");
    assert!(!text(&o).contains("no divergence:"), "diff: {}", text(&o));
    assert!(
        text(&o).contains(&format!("no divergence in frames 0..{frames}")),
        "diff: {}",
        text(&o)
    );
}

/// A 4 MB log whose one keyframe is a deflate stream announcing (and truly
/// inflating to) 4.1 GB: refused before a byte of it is inflated, by the
/// limit the game's settings give; all 120 frames are kept and verified.
#[test]
fn a_keyframe_bomb_is_refused_before_it_inflates() {
    let d = dir("crafted_bomb");
    let bytes = crafted::keyframe_bomb::<Cubes>(120, 4 << 20);
    let log = write(&d.join("bomb.log"), &bytes);
    let limit = Cubes::state_limit(&Cubes::default_config(), &crafted::setup()).unwrap();
    let len = crafted::bomb_len(crafted::bomb_zeros(4 << 20));
    let says = format!("keyframe of frame 60: a state of {len} bytes, more than the {limit}");
    every_tool_fails_cleanly(&d, &log, 120, &says);
    let o = limited(&["replay", "-q", &log]);
    assert!(text(&o).contains("replayed frames 0..120"), "{}", text(&o));
    assert!(
        text(&o).contains("verified: every frame matches"),
        "{}",
        text(&o)
    );
}

/// A log with a keyframe before every frame, each a small deflate stream of
/// a 1 MiB state (within the game's limit): read, every one is checked and
/// none is held inflated; a replay finds every one wrong.
#[test]
fn a_swarm_of_keyframes_costs_its_bytes_not_their_states() {
    let d = dir("crafted_swarm");
    let bytes = crafted::keyframe_swarm::<Cubes>(300 << 10, 1 << 20);
    let log = write(&d.join("swarm.log"), &bytes);
    let o = limited(&["verify", &log]);
    failed_cleanly(&o, "verify");
    assert!(
        text(&o).contains("keyframes are not the replayed state, the first before frame 1"),
        "{}",
        text(&o)
    );
    // Seeking decodes one keyframe: zeros are no state of the game.
    let o = limited(&["replay", "-q", &log, "--to", "100"]);
    failed_cleanly(&o, "replay --to");
    assert!(text(&o).contains("keyframe of frame 100 "), "{}", text(&o));
    // A log whose keyframes contradict its checksums agrees with nothing.
    let o = limited(&["diff", &log, &log]);
    failed_cleanly(&o, "diff");
    assert!(!text(&o).contains("no divergence:"), "diff: {}", text(&o));
    assert!(
        text(&o).contains("are not the state its own checksums describe, the first before frame 1"),
        "diff: {}",
        text(&o)
    );
}

/// `render` refuses a log `verify` refuses for its header (a setup the
/// game does not play), even though a keyframe would let it seek past
/// frame 0 without building that setup.
#[test]
fn render_refuses_a_header_verify_refuses() {
    let d = dir("crafted_header");
    let bytes = crafted::refused_setup::<Cubes>(5, 120);
    let log = write(&d.join("five-seats.log"), &bytes);
    let says = "cubes takes 1 to 4 seats, not 5";
    let o = limited(&["verify", &log]);
    failed_cleanly(&o, "verify");
    assert!(text(&o).contains(says), "verify: {}", text(&o));
    let png = d.join("last.png");
    let o = limited(&["render", &log, "-o", png.to_str().unwrap()]);
    failed_cleanly(&o, "render");
    assert!(text(&o).contains(says), "render: {}", text(&o));
    assert!(!png.exists() || std::fs::metadata(&png).unwrap().len() == 0);
    let o = limited(&["replay", "-q", &log, "--to", "100"]);
    failed_cleanly(&o, "replay --to");
    assert!(text(&o).contains(says), "replay --to: {}", text(&o));
}
