//! A studio's own tools binary end to end: the `own_game` example
//! registers its `squads` game (`Demo` and pictures, no snapshots)
//! with `lockstep_cli::Tools`, and its binary records, verifies, replays
//! diffs and renders its own logs, plays a networked demo of itself, and says
//! clearly what a command it cannot run would need.
//!
//! `cargo test` builds the examples before it runs the tests; the binary
//! is found beside this test's, in the target directory's `examples/`.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The example's binary, built by `cargo test` (or `cargo build --example
/// own_game`).
fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it is");
    // target/<profile>/deps/own_game-<hash> → target/<profile>/examples/
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let path = profile
        .join("examples")
        .join(format!("own_game{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p lockstep-cli --example own_game` (plain `cargo test` does)",
        path.display()
    );
    path
}

fn tools(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .output()
        .expect("the example runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("own_game-{test}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
fn the_tools_record_verify_replay_and_diff_the_studios_own_logs() {
    let d = dir("logs");
    let clean = d.join("clean.log");
    let flipped = d.join("flipped.log");
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();

    let o = tools(&["record", "squads", "--frames", "300", "-o", &path(&clean)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("recorded 300 frames (5 s) of squads (2 seats, seed 1)"),
        "{}",
        text(&o)
    );

    let o = tools(&["verify", &path(&clean)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).starts_with(&format!(
            "ok {}: squads version 1: 300 frames verified",
            clean.display()
        )),
        "{}",
        text(&o)
    );

    let o = tools(&["replay", &path(&clean), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("squads version 1, 2 seats, seed 1, 60 Hz"),
        "{out}"
    );
    assert!(
        out.contains("verified: every frame matches the log"),
        "{out}"
    );

    // Bit 33 of a unit's x (Q32.32): 2 m sideways, before frame 120.
    let o = tools(&[
        "record",
        "squads",
        "--frames",
        "300",
        "--flip",
        "120:unit 1:position:33",
        "-o",
        &path(&flipped),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tools(&["verify", &path(&flipped)]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("first bad frame 120"), "{}", text(&o));

    let report = d.join("report.txt");
    let o = tools(&[
        "diff",
        &path(&clean),
        &path(&flipped),
        "--report",
        &path(&report),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("first divergent frame: 120"), "{out}");
    assert!(out.contains("unit 1 · position"), "{out}");
    let o = tools(&["diff", &path(&clean), &path(&clean)]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn its_pictures_render_and_what_it_lacks_is_one_clear_line() {
    let d = dir("lacks");
    let log = d.join("a.log");
    let log = log.to_str().unwrap();
    let o = tools(&["record", "squads", "--frames", "30", "-o", log]);
    assert!(o.status.success(), "{}", text(&o));

    // Its pictures: the game implements `Depict` and registers them.
    let png = d.join("frame.png");
    let o = tools(&["render", log, "--frames", "30", "-o", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000));
    let line = error_line(&tools(&["record", "cubes", "-o", log]));
    assert_eq!(
        line,
        "squads-tools: unknown game `cubes`; known games: squads"
    );
    let line = error_line(&tools(&["play", "--frames", "1"]));
    assert!(
        line.contains("does not register the `cubes` game"),
        "{line}"
    );
    let line = error_line(&tools(&["verify", "--frobnicate"]));
    assert!(line.ends_with("(see `squads-tools --help`)"), "{line}");

    // The help names the program and its games, and hides `play`.
    let o = tools(&["--help"]);
    let out = text(&o);
    assert!(
        out.contains("Usage: squads-tools [OPTIONS] <COMMAND>"),
        "{out}"
    );
    assert!(
        out.contains("squads-tools: the lockstep tools for squads"),
        "{out}"
    );
    assert!(!out.contains("The lockstep command line"), "{out}");
    assert!(!out.contains("  play "), "{out}");
    let out = text(&tools(&["record", "--help"]));
    assert!(out.contains("The game: squads (default: squads)"), "{out}");
    // The only game needs no name.
    let unnamed = d.join("unnamed.log");
    let o = tools(&["record", "--frames", "10", "-o", unnamed.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    // `bench` times the registered game, not the engine's scenes.
    let out = text(&tools(&["bench", "--runs", "1", "--frames", "10"]));
    assert!(out.contains("game:squads"), "{out}");
    assert!(!out.contains("game:rts"), "{out}");
    assert!(!out.contains("pyramid"), "{out}");
}

#[test]
fn the_demo_runs_the_studios_own_binary_over_udp() {
    let d = dir("demo");
    let o = tools(&[
        "demo",
        "--frames",
        "120",
        "--delay",
        "10",
        "--jitter",
        "2",
        "--dir",
        d.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("of squads (lockstep)"), "{out}");
    assert!(out.contains("every log verifies"), "{out}");
    assert!(d.join("seat-0.log").exists() && d.join("join-1.log").exists());
}

#[test]
fn a_spectator_asking_for_snapshots_of_a_game_without_bodies_is_told_why() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let d = dir("snapshots");
    let start = |args: &[&str]| {
        Command::new(binary())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the example runs")
    };
    let seat0 = d.join("seat-0.log");
    let mut host = start(&[
        "host",
        "squads",
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--frames",
        "1200",
        "--machine",
        "--log",
        seat0.to_str().unwrap(),
    ]);
    // Its lines, read to the end so that it never writes to a closed pipe.
    let (tx, lines) = std::sync::mpsc::channel();
    let out = host.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Its codes, then where it listens.
    let mut seat_code = String::new();
    let mut spectate_code = String::new();
    let addr = lines
        .iter()
        .find_map(|l| {
            if let Some(codes) = l.strip_prefix("invite ") {
                for kv in codes.split_whitespace() {
                    match kv.split_once('=') {
                        Some(("seat", c)) => seat_code = c.to_string(),
                        Some(("spectate", c)) => spectate_code = c.to_string(),
                        _ => {}
                    }
                }
            }
            l.strip_prefix("listening ").map(str::to_string)
        })
        .expect("the host says where it listens");
    let seat1 = d.join("seat-1.log");
    let mut joiner = start(&[
        "join",
        &addr,
        "--code",
        &seat_code,
        "--machine",
        "--log",
        seat1.to_str().unwrap(),
    ]);
    // Spectators are let in once the match has started.
    lines
        .iter()
        .find(|l| l.starts_with("status ") && !l.contains(" frame=0 "))
        .expect("the match starts");
    let watched = tools(&["spectate", "--snapshots", &addr, "--code", &spectate_code]);
    for child in [&mut host, &mut joiner] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let line = error_line(&watched);
    assert_eq!(
        line,
        "squads-tools: game `squads` has no snapshots: implement `lockstep_snapshot::Bodies` for it and register it with `GameTools::new().snapshots()`"
    );
}
