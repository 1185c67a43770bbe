//! The `lockstep` binary end to end: record, replay, seek, verify, diff
//! (with logs that carry notes), bench, and one clear line with a non-zero exit for bad files and
//! arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lockstep_games::cubes::Cubes;
use lockstep_games::{Bots, Demo};
use lockstep_sim::Match;
use lockstep_sim::replay::{Note, RecordSettings, Recorder, StopCause, UncheckedCause};

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

    // Recorded on one thread and on two: the same log, byte for byte.
    for threads in ["1", "2"] {
        let again = d.join(format!("threads-{threads}.log"));
        let o = record(&again, &["--threads", threads]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            std::fs::read(&again).unwrap() == std::fs::read(&log).unwrap(),
            "--threads {threads}: another log"
        );
    }
    let o = record(&d.join("threads-0.log"), &["--threads", "0"]);
    assert!(!o.status.success(), "{}", text(&o));

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

    // On one thread and on two (the default is this machine's cores): the
    // same checksums, so the log verifies again.
    for threads in ["1", "2"] {
        let o = lockstep(&["replay", log.to_str().unwrap(), "-q", "--threads", threads]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains("verified: every frame matches"),
            "{}",
            text(&o)
        );
    }
    let o = lockstep(&["verify", log.to_str().unwrap(), "--threads", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).starts_with("ok "), "{}", text(&o));
    let o = lockstep(&["replay", log.to_str().unwrap(), "--threads", "0"]);
    assert!(!o.status.success(), "{}", text(&o));

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
    // Replay uses the valid frames, and says the log is damaged (exit 1).
    let o = lockstep(&["replay", cut.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("ends early at byte"), "{}", text(&o));
    assert!(text(&o).contains("verified: every frame"), "{}", text(&o));
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
    assert!(
        text(&o).contains("ends early at byte") || text(&o).contains("was skipped"),
        "{}",
        text(&o)
    );

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
    let o = lockstep(&["verify", d.join("missing.log").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("FAIL"), "{}", text(&o));
    assert!(text(&o).contains("missing.log"), "{}", text(&o));
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
    // The keyframe of the flipped state is not what a replay computes.
    assert!(
        text(&o).contains("keyframes are not the replayed state, the first before frame 80"),
        "{}",
        text(&o)
    );

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
    let line = error_line(&record(&out, &["--seats", "9"]));
    assert!(line.contains("1 to 4 seats"), "{line}");
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
    // A solver path the machine lacks is named, with those it has: no
    // processor has both AVX2 and NEON.
    let foreign = if cfg!(target_arch = "aarch64") {
        "avx2"
    } else {
        "neon"
    };
    let line = error_line(&lockstep(&["--solver-path", foreign, "bench", "crowd"]));
    assert!(
        line.contains(&format!(
            "cannot run {foreign} (it can run: sequential, portable"
        )),
        "{line}"
    );
}

#[test]
fn bench_prints_a_table() {
    let o = lockstep(&[
        "bench",
        "stack",
        "--runs",
        "1",
        "--frames",
        "5",
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("ms/frame"), "{out}");
    assert!(out.contains("hash ms"), "{out}");
    assert!(out.contains("encode ms"), "{out}");
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
        "game = \"cubes\"\nframes = 50\nsettings = \"scene.toml\"\n[match]\nseats = 3\nseed = 9\n",
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
    assert!(text(&o).contains("3 seats, seed 9"), "{}", text(&o));
    let o = lockstep(&["replay", log.to_str().unwrap(), "-q"]);
    assert!(text(&o).contains("verified"), "{}", text(&o));

    std::fs::write(
        &m,
        "game = \"cubes\"\nframes = 50\n[match]\nseats = 3\nspeed = 2\n",
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

/// Byte offsets of the records of a log, with their kinds (1 frames,
/// 2 keyframe, 3 end), read by the layout in `fixtures/replays/SPEC.md`.
fn records(bytes: &[u8]) -> Vec<(u8, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut pos = 14 + u32_at(10) + 8;
    let mut out = Vec::new();
    while pos < bytes.len() {
        out.push((bytes[pos], pos));
        pos += 5 + u32_at(pos + 1) + 8;
    }
    out
}

/// Issue 11: `--sync-test 4294967295` panicked (`depth + 1` wrapped), and a
/// depth beyond the log ran for minutes without a word.
#[test]
fn issue_11_sync_test_deeper_than_the_log_is_refused() {
    let d = dir("sync_depth");
    let log = d.join("s.log");
    let o = lockstep(&[
        "record",
        "cubes",
        "--frames",
        "12",
        "-o",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for depth in ["4294967295", "13"] {
        let line = error_line(&lockstep(&[
            "replay",
            log.to_str().unwrap(),
            "-q",
            "--sync-test",
            depth,
        ]));
        assert!(
            line.contains("--sync-test") && line.contains("12 frames"),
            "{line}"
        );
    }
    let o = lockstep(&["replay", log.to_str().unwrap(), "-q", "--sync-test", "12"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("12 frames passed"), "{}", text(&o));
}

/// Issue 11: `record -o keep.log` emptied the file before it found a bad
/// argument; `diff --report a.log` and `replay --save` overwrote an input.
#[test]
fn issue_11_outputs_never_destroy_existing_files_or_inputs() {
    let d = dir("outputs");
    let keep = d.join("keep.log");
    std::fs::write(&keep, b"precious").unwrap();
    // Refused early (seats), and late (a field found missing at frame 10).
    assert!(!record(&keep, &["--seats", "9"]).status.success());
    assert!(
        !record(&keep, &["--flip", "10:body 99999:position"])
            .status
            .success()
    );
    let settings = d.join("bad.toml");
    std::fs::write(&settings, "gravity = 9.81\n").unwrap();
    assert!(
        !record(&keep, &["--settings", settings.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&keep).unwrap(), b"precious");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // The log may not be the settings file.
    let line = error_line(&record(
        &settings,
        &["--settings", settings.to_str().unwrap()],
    ));
    assert!(line.contains("refusing to overwrite"), "{line}");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "gravity = 9.81\n"
    );

    // A successful recording replaces the file.
    let o = record(&keep, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let a = std::fs::read(&keep).unwrap();
    assert!(a.starts_with(b"LSREPLAY"));

    let b = d.join("b.log");
    assert!(record(&b, &["--seed", "2"]).status.success());
    for report in [keep.to_str().unwrap(), b.to_str().unwrap()] {
        let line = error_line(&lockstep(&[
            "diff",
            keep.to_str().unwrap(),
            b.to_str().unwrap(),
            "--report",
            report,
        ]));
        assert!(line.contains("refusing to overwrite"), "{line}");
    }
    let line = error_line(&lockstep(&[
        "replay",
        keep.to_str().unwrap(),
        "--save",
        keep.to_str().unwrap(),
    ]));
    assert!(
        line.contains("--save") && line.contains("refusing"),
        "{line}"
    );
    assert_eq!(std::fs::read(&keep).unwrap(), a);
}

/// Issue 11: a diff that covered only a prefix said "no divergence", exit 0,
/// and the headers were never compared.
#[test]
fn issue_11_diff_agrees_only_on_whole_logs_of_one_match() {
    let d = dir("diff_whole");
    let good = d.join("good.log");
    assert!(record(&good, &[]).status.success());
    let bytes = std::fs::read(&good).unwrap();
    // A corrupted frames record mid-file (frames 60..120): the valid data
    // ends there.
    let (_, at) = *records(&bytes)
        .iter()
        .rfind(|(kind, _)| *kind == 1)
        .unwrap();
    let mut damaged = bytes.clone();
    damaged[at + 12] ^= 0x08;
    let bad = d.join("damaged.log");
    std::fs::write(&bad, &damaged).unwrap();
    let o = lockstep(&["diff", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("INCOMPLETE: no divergence in frames 0..60"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("120 frames; complete"), "{}", text(&o));

    // Another match: the headers say so.
    let other = d.join("seed2.log");
    assert!(record(&other, &["--seed", "2"]).status.success());
    let o = lockstep(&["diff", good.to_str().unwrap(), other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("seed: 1 ≠ 2"), "{}", text(&o));

    // Whole and equal: exit 0.
    let o = lockstep(&["diff", good.to_str().unwrap(), good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("agree on all 120 frames (2 full checksums"),
        "{}",
        text(&o)
    );
}

/// Issue 11: `lockstep diff a.state b.state | head -5` panicked; the diff of
/// two states printed thousands of lines.
#[test]
fn issue_11_a_closed_pipe_ends_quietly_and_state_diffs_are_summarised() {
    use std::process::Stdio;
    let d = dir("pipe");
    let log = d.join("a.log");
    assert!(record(&log, &[]).status.success());
    let (a, b) = (d.join("60.state"), d.join("90.state"));
    for (to, state) in [("60", &a), ("90", &b)] {
        let o = lockstep(&[
            "replay",
            log.to_str().unwrap(),
            "-q",
            "--to",
            to,
            "--save",
            state.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = lockstep(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("by entity kind and field:"), "{out}");
    assert!(out.contains("  body · position: "), "{out}");
    assert!(out.contains("(--all lists every one)"), "{out}");
    assert!(out.lines().count() < 60, "{out}");
    let all = lockstep(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--all"]);
    assert!(all.stdout.len() > 64 * 1024, "enough to fill a pipe");

    // The reader goes away before the output is written.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.is_empty(), "{err}");
    assert_eq!(o.status.code(), Some(141));
}

/// Issue 11: `--flip` past the end was ignored; a missing argument was not
/// named; `verify` stopped at a missing file.
#[test]
fn issue_11_arguments_and_every_file_are_checked() {
    let d = dir("args11");
    let a = d.join("a.log");
    let line = error_line(&record(&a, &["--flip", "120:body 3:position"]));
    assert!(
        line.contains("--flip") && line.contains("past the end"),
        "{line}"
    );
    assert!(!a.exists());
    let line = error_line(&lockstep(&["record", "cubes"]));
    assert!(line.contains("--out"), "{line}");
    let line = error_line(&lockstep(&["diff", "x.log"]));
    assert!(line.contains("<RIGHT>"), "{line}");

    assert!(record(&a, &[]).status.success());
    let c = d.join("c.log");
    std::fs::copy(&a, &c).unwrap();
    let o = lockstep(&[
        "verify",
        a.to_str().unwrap(),
        d.join("missing.log").to_str().unwrap(),
        c.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert_eq!(out.matches("ok ").count(), 2, "{out}");
    assert!(out.contains("FAIL") && out.contains("missing.log"), "{out}");
    assert!(out.contains("2 of 3 logs verified"), "{out}");
}

/// Issue 11: flipping byte 24 of a state file (its frame) gave "0 fields
/// differ", exit 0; a bad keyframe byte dropped every later frame and
/// `replay` exited 0; a corrupted header length read as truncation.
#[test]
fn issue_11_damage_is_found_named_and_fails() {
    let d = dir("damage11");
    let log = d.join("a.log");
    assert!(record(&log, &[]).status.success());
    let state = d.join("s.state");
    let o = lockstep(&[
        "replay",
        log.to_str().unwrap(),
        "-q",
        "--to",
        "60",
        "--save",
        state.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut bytes = std::fs::read(&state).unwrap();
    bytes[24] ^= 1;
    let bad_state = d.join("bad.state");
    std::fs::write(&bad_state, &bytes).unwrap();
    let line = error_line(&lockstep(&[
        "diff",
        state.to_str().unwrap(),
        bad_state.to_str().unwrap(),
    ]));
    assert!(
        line.contains("bad.state") && line.contains("check mismatch"),
        "{line}"
    );

    let bytes = std::fs::read(&log).unwrap();
    let (_, at) = *records(&bytes).iter().find(|(kind, _)| *kind == 2).unwrap();
    let mut kf = bytes.clone();
    kf[at + 40] ^= 0x02;
    let kf_log = d.join("kf.log");
    std::fs::write(&kf_log, &kf).unwrap();
    let o = lockstep(&["replay", kf_log.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("replayed frames 0..120"), "{out}");
    assert!(
        out.contains("was skipped") && out.contains("DAMAGED"),
        "{out}"
    );
    let o = lockstep(&["verify", kf_log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));

    let mut header = bytes.clone();
    header[12] ^= 0xfd;
    let h_log = d.join("header.log");
    std::fs::write(&h_log, &header).unwrap();
    let line = error_line(&lockstep(&["replay", h_log.to_str().unwrap()]));
    assert!(
        line.contains("header is corrupted") && line.contains("body length"),
        "{line}"
    );
    assert!(!line.contains("more byte"), "{line}");
}

/// Records `frames` frames of a two-seat cubes match with its bots, writing
/// each note when its frame position is reached (as a `Peer` would).
fn record_with_notes(frames: u32, notes: &[(u32, Note)]) -> Vec<u8> {
    let setup = Match::default();
    let mut rec = Recorder::<Cubes, _>::new(
        &Cubes::default_config(),
        setup,
        RecordSettings::default(),
        Vec::new(),
    )
    .unwrap();
    let mut bots = Bots::<Cubes>::new(&setup);
    for frame in 0..=frames {
        for (_, note) in notes.iter().filter(|(at, _)| *at == frame) {
            rec.note(note).unwrap();
        }
        if frame < frames {
            let inputs = bots.inputs(rec.engine().game(), frame);
            rec.advance(&inputs).unwrap();
        }
    }
    rec.finish().unwrap().1
}

#[test]
fn logs_with_notes_verify_and_say_what_happened() {
    let d = dir("notes");
    let full = d.join("full.log");
    std::fs::write(&full, record_with_notes(120, &[])).unwrap();
    let stopped = d.join("stopped.log");
    let notes = [
        (
            0,
            Note::SeatDropped {
                seat: 1,
                last_frame: None,
            },
        ),
        (10, Note::SeatReturned { seat: 1, frame: 12 }),
        (
            30,
            Note::Healed {
                first: 30,
                loaded: 42,
            },
        ),
        (
            60,
            Note::Unchecked {
                from: 60,
                cause: UncheckedCause::Alone,
            },
        ),
        (
            90,
            Note::Stopped {
                reason: StopCause::LostQuorum,
            },
        ),
    ];
    std::fs::write(&stopped, record_with_notes(90, &notes)).unwrap();

    // verify: every frame the log holds verifies (exit 0), it says it
    // stopped early, and prints each note on its own line.
    let o = lockstep(&["verify", stopped.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("ok ")
            && out.contains("90 frames verified")
            && out.contains("the log stopped early, at frame 90"),
        "{out}"
    );
    for line in [
        "  note: seat 1 dropped before frame 0 (absent input from frame 0)",
        "  note: seat 1 returned, playing from frame 12",
        "  note: frames 30..=42 healed (loaded the state after frame 42)",
        "  note: unchecked from frame 60 (this seat played alone)",
        "  note: frame 90: stopped: lost quorum (this seat was in a minority)",
    ] {
        assert!(out.lines().any(|l| l == line), "{line}\n{out}");
    }
    // With the whole log of the match: both verify, and they agree.
    let o = lockstep(&["verify", full.to_str().unwrap(), stopped.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("2 of 2 logs verified (1 stopped early)"),
        "{}",
        text(&o)
    );

    // diff: the frames both hold agree, and the shorter says why it is.
    let o = lockstep(&["diff", full.to_str().unwrap(), stopped.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("no divergence: the logs agree on all 90 frames both hold"),
        "{out}"
    );
    assert!(
        out.contains("stopped.log stopped early at frame 90: lost quorum"),
        "{out}"
    );

    // replay prints the notes too.
    let o = lockstep(&["replay", stopped.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("note: frame 90: stopped: lost quorum"),
        "{}",
        text(&o)
    );

    // A shorter log that does not say why is still not an agreement.
    let cut = d.join("cut.log");
    let bytes = std::fs::read(&full).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 17]).unwrap();
    let o = lockstep(&["diff", cut.to_str().unwrap(), stopped.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("90 frames; stopped early at frame 90: lost quorum"),
        "{}",
        text(&o)
    );
}
