//! Versions on the command line: `lockstep verify` names the rules and
//! physics versions a log was checked with, and a log recorded on another
//! physics version is refused by `replay` and `verify` with one line that
//! names both versions and what to do.

use std::path::PathBuf;
use std::process::{Command, Output};

use lockstep_fx::Checksum;
use lockstep_games::cubes::Cubes;
use lockstep_sim::replay::{self, LogWriter};
use lockstep_sim::{Game, GameVersion};

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

#[test]
fn a_log_of_another_physics_version_is_refused_naming_both() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("versions");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("now.log");
    let o = lockstep(&[
        "record",
        "cubes",
        "--frames",
        "30",
        "-o",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let now = GameVersion::of::<Cubes>(Cubes::VERSION);
    assert!(now.physics().is_some());
    let o = lockstep(&["verify", log.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("cubes {now}:")), "{}", text(&o));

    // The same inputs, logged as by the last physics version (the
    // checksums do not matter: the log is refused before any frame).
    let now_log = replay::read::<<Cubes as Game>::Input>(&std::fs::read(&log).unwrap()).unwrap();
    let mut header = now_log.header().clone();
    header.game_version -= 1;
    let then = GameVersion::of::<Cubes>(header.game_version);
    let mut writer = LogWriter::new(Vec::new(), header, 16).unwrap();
    for frame in 0..now_log.frames() {
        let inputs = now_log.inputs(frame).unwrap();
        writer.frame(inputs, &Checksum::of(b"")).unwrap();
    }
    let old = dir.join("older.log");
    std::fs::write(&old, writer.finish().unwrap()).unwrap();

    let expected = format!(
        "this log is of cubes {then} and this build runs cubes {now}: \
         replay it with the lockstep release that recorded it"
    );
    let o = lockstep(&["replay", "-q", old.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&expected), "{err}");
    let o = lockstep(&["verify", old.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&expected), "{}", text(&o));
}
