//! The `lockstep` binary end to end: record, replay, seek, verify, diff,
//! bench, and one clear line with a non-zero exit for bad files and
//! arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lockstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn record(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "record",
        "cubes",
        "--frames",
        "120",
        "--keyframe-interval",
        "60",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    lockstep(&args)
}

/// The one line a failing command prints on stderr.
fn error_line(o: &Output) -> String {
    assert!(!o.status.success(), "expected a failure: {}", text(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {err}");
    lines[0].to_string()
}

#[test]
fn record_replay_seek_and_verify() {
    let d = dir("record_replay");
    let log = d.join("a.log");
    let o = record(&log, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("recorded 120 frames"), "{}", text(&o));

    let o = lockstep(&["replay", log.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("replayed frames 0..120"), "{}", text(&o));
    assert!(
        text(&o).contains("verified: every frame matches"),
        "{}",
        text(&o)
    );

    let state = d.join("at90.state");
    let o = lockstep(&[
        "replay",
        log.to_str().unwrap(),
        "-q",
        "--to",
        "90",
        "--save",
        state.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("replayed frames 60..90"), "{}", text(&o));
    assert!(state.exists());

    let o = lockstep(&["replay", log.to_str().unwrap(), "-q", "--sync-test", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("sync test depth 2: 120 frames passed"),
        "{}",
        text(&o)
    );

    let copy = d.join("b.log");
    std::fs::copy(&log, &copy).unwrap();
    let o = lockstep(&["verify", log.to_str().unwrap(), copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(text(&o).matches("ok ").count(), 2, "{}", text(&o));
}

#[test]
fn damaged_logs_fail_clearly_and_keep_their_prefix() {
    let d = dir("damaged");
    let log = d.join("a.log");
    assert!(record(&log, &[]).status.success());
    let bytes = std::fs::read(&log).unwrap();

    // Truncated: replay uses the valid frames, verify fails naming the end.
    let cut = d.join("cut.log");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let o = lockstep(&["replay", cut.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("ends early at byte"), "{}", text(&o));
    let o = lockstep(&["verify", cut.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).contains("incomplete"), "{}", text(&o));

    // A corrupted byte in the middle: the records before it are kept.
    let bad = d.join("bad.log");
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    std::fs::write(&bad, &flipped).unwrap();
    let o = lockstep(&["verify", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).contains("ends early at byte"), "{}", text(&o));

    // Another format version: one line, naming the file.
    let version = d.join("version.log");
    let mut v = bytes.clone();
    v[8] = 9;
    std::fs::write(&version, &v).unwrap();
    let line = error_line(&lockstep(&["replay", version.to_str().unwrap()]));
    assert!(
        line.contains("version.log") && line.contains("version"),
        "{line}"
    );

    // Not a log at all, and a missing file.
    let junk = d.join("junk.log");
    std::fs::write(&junk, b"hello").unwrap();
    let line = error_line(&lockstep(&["replay", junk.to_str().unwrap()]));
    assert!(line.contains("junk.log"), "{line}");
    let line = error_line(&lockstep(&[
        "verify",
        d.join("missing.log").to_str().unwrap(),
    ]));
    assert!(line.contains("missing.log"), "{line}");
}

#[test]
fn diff_finds_a_flipped_bit_and_writes_a_report() {
    let d = dir("diff");
    let clean = d.join("clean.log");
    let flipped = d.join("flipped.log");
    assert!(record(&clean, &[]).status.success());
    let o = record(&flipped, &["--flip", "80:body 40:position:20"]);
    assert!(o.status.success(), "{}", text(&o));

    let o = lockstep(&["verify", flipped.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).contains("first bad frame 80"), "{}", text(&o));

    let report = d.join("report.txt");
    let o = lockstep(&[
        "diff",
        clean.to_str().unwrap(),
        flipped.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("first divergent frame: 80"), "{out}");
    assert!(out.contains("body 40 · position"), "{out}");
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(written.contains("body 40 · position"), "{written}");

    // The two states before frame 80, diffed as state files.
    let left = d.join("report.left.state");
    let right = d.join("report.right.state");
    let o = lockstep(&["diff", left.to_str().unwrap(), right.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("body 40 · position"), "{}", text(&o));
    assert!(text(&o).contains("1 field differs"), "{}", text(&o));

    // Identical logs: no divergence, exit 0.
    let o = lockstep(&["diff", clean.to_str().unwrap(), clean.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn bad_arguments_give_one_clear_line() {
    let d = dir("args");
    let out = d.join("x.log");
    let line = error_line(&lockstep(&["record", "chess", "-o", out.to_str().unwrap()]));
    assert!(line.contains("unknown game `chess`"), "{line}");
    let line = error_line(&record(&out, &["--flip", "soon"]));
    assert!(line.contains("--flip"), "{line}");
    let line = error_line(&record(&out, &["--flip", "10:body 99999:position"]));
    assert!(line.contains("body 99999"), "{line}");
    let line = error_line(&record(&out, &["--players", "9"]));
    assert!(line.contains("1 to 4 players"), "{line}");
    let settings = d.join("bad.toml");
    std::fs::write(&settings, "gravity = 9.81\n").unwrap();
    let line = error_line(&record(&out, &["--settings", settings.to_str().unwrap()]));
    assert!(line.contains("bad.toml:1:"), "{line}");
    let line = error_line(&lockstep(&["bench", "--runs", "0"]));
    assert!(line.contains("--runs"), "{line}");
    let line = error_line(&lockstep(&["replay", "--frobnicate", "x.log"]));
    assert!(line.contains("--frobnicate"), "{line}");
    let line = error_line(&record(&out, &["--seed", "many"]));
    assert!(line.contains("many"), "{line}");
    let line = error_line(&lockstep(&["bench", "nothing-like-this"]));
    assert!(line.contains("no benchmark matches"), "{line}");
}

#[test]
fn bench_prints_a_table() {
    let o = lockstep(&["bench", "stack", "--runs", "1", "--frames", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("ms/step"), "{out}");
    assert!(out.contains("stack-sleep"), "{out}");
}

#[test]
fn the_demo_plays_over_udp_and_verifies_every_log() {
    let d = dir("demo");
    let settings = d.join("cubes.toml");
    let small = include_str!("../../games/scenes/cubes.toml").replace("grid = 30", "grid = 6");
    std::fs::write(&settings, small).unwrap();
    let o = lockstep(&[
        "demo",
        "--frames",
        "180",
        "--delay",
        "20",
        "--jitter",
        "5",
        "--settings",
        settings.to_str().unwrap(),
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("every log verifies"), "{out}");
    assert!(d.join("seat-0.log").exists() && d.join("join-1.log").exists());
}

#[test]
fn match_files_describe_a_recording_and_flags_override_them() {
    let d = dir("match_file");
    std::fs::write(d.join("scene.toml"), lockstep_scene_with_grid(10)).unwrap();
    std::fs::write(
        d.join("m.toml"),
        "game = \"cubes\"\nframes = 50\nsettings = \"scene.toml\"\n[match]\nplayers = 3\nseed = 9\n",
    )
    .unwrap();
    let log = d.join("m.log");
    let m = d.join("m.toml");
    let o = lockstep(&[
        "record",
        "--match",
        m.to_str().unwrap(),
        "-o",
        log.to_str().unwrap(),
        "--frames",
        "40",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("recorded 40 frames"), "{}", text(&o));
    assert!(text(&o).contains("3 players, seed 9"), "{}", text(&o));
    let o = lockstep(&["replay", log.to_str().unwrap(), "-q"]);
    assert!(text(&o).contains("verified"), "{}", text(&o));

    std::fs::write(
        &m,
        "game = \"cubes\"\nframes = 50\n[match]\nplayers = 3\nspeed = 2\n",
    )
    .unwrap();
    let line = error_line(&lockstep(&[
        "record",
        "--match",
        m.to_str().unwrap(),
        "-o",
        log.to_str().unwrap(),
    ]));
    assert!(
        line.contains("m.toml:5:") && line.contains("speed"),
        "{line}"
    );
}

/// The embedded cubes settings with another grid size.
fn lockstep_scene_with_grid(grid: u32) -> String {
    let text = include_str!("../../games/scenes/cubes.toml");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("grid ="))
        .expect("the scene sets grid");
    text.replacen(line, &format!("grid = {grid}"), 1)
}
