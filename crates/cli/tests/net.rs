//! Matches between real processes over loopback UDP: `lockstep host` and
//! `lockstep join` with the link conditioner on, a seat killed and
//! restarted, a seat killed for good, a spectator, and a socket spraying
//! random bytes. Every wait is bounded; ports are picked by the OS.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_lockstep");

/// A scratch directory for one test, with small settings of both games.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockstep-net-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cubes = include_str!("../../games/scenes/cubes.toml").replace("grid = 30", "grid = 8");
    let rts = include_str!("../../games/scenes/rts.toml")
        .replace("units_per_player = 512", "units_per_player = 24");
    std::fs::write(dir.join("cubes.toml"), cubes).unwrap();
    std::fs::write(dir.join("rts.toml"), rts).unwrap();
    dir
}

/// The link every process sends through: 40 ms ± 10 ms one way, 2% loss,
/// some duplication and reordering.
fn link(seed: u32) -> Vec<String> {
    [
        "--delay",
        "40",
        "--jitter",
        "10",
        "--loss",
        "2",
        "--duplicate",
        "1",
        "--reorder",
        "1",
        "--machine",
        "--link-seed",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([seed.to_string()])
    .collect()
}

/// A running process and the lines it printed.
struct Proc {
    name: String,
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Proc {
    fn start(name: &str, args: &[String]) -> Proc {
        let mut child = Command::new(EXE)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proc {
            name: name.to_string(),
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Takes what was printed so far.
    fn pump(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
    }

    /// Waits (at most `secs`) for a line `pick` accepts.
    fn wait_for(&mut self, secs: u64, pick: impl Fn(&str) -> bool) -> String {
        let until = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < until {
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
                self.seen.push(l.clone());
                if pick(&l) {
                    return l;
                }
            }
        }
        panic!(
            "{}: no such line within {secs} s; saw {:?}",
            self.name, self.seen
        );
    }

    /// The newest frame in a status line.
    fn frame(&mut self) -> u32 {
        self.pump();
        self.seen
            .iter()
            .rev()
            .find(|l| l.starts_with("status "))
            .map_or(0, |l| field(l, "frame").parse().unwrap_or(0))
    }

    /// Waits (at most `secs`) until a status line shows frame `frame`.
    fn reach(&mut self, frame: u32, secs: u64) {
        let until = Instant::now() + Duration::from_secs(secs);
        while self.frame() < frame {
            assert!(
                Instant::now() < until,
                "{} never reached frame {frame}: {:?}",
                self.name,
                self.seen
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to end (at most `secs`): every line.
    fn finish_all(mut self, secs: u64) -> Vec<String> {
        self.finish_ref(secs);
        self.seen
    }

    /// Waits for the process to end (at most `secs`), whatever its exit
    /// status: every line it printed, and its stderr last.
    fn finish_status(mut self, secs: u64) -> Vec<String> {
        let until = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.child.try_wait().unwrap().is_some() {
                while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(10)) {
                    self.seen.push(l);
                }
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                self.seen.push(err);
                return self.seen;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!(
                    "{} did not finish within {secs} s: {:?}",
                    self.name, self.seen
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to end (at most `secs`): its `done` line.
    fn finish(mut self, secs: u64) -> String {
        self.finish_ref(secs)
    }

    fn finish_ref(&mut self, secs: u64) -> String {
        let until = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The reader thread may still be passing on the last lines:
                // take them until it ends at the pipe's end.
                while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(10)) {
                    self.seen.push(l);
                }
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                assert!(
                    status.success(),
                    "{} failed: {err}\n{:?}",
                    self.name,
                    self.seen
                );
                return self
                    .seen
                    .iter()
                    .find(|l| l.starts_with("done "))
                    .cloned()
                    .unwrap_or_else(|| panic!("{}: no summary in {:?}", self.name, self.seen));
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!(
                    "{} did not finish within {secs} s: {:?}",
                    self.name, self.seen
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map_or("", |(_, v)| v)
}

/// Where a host listens and the codes it printed.
struct Hosted {
    addr: String,
    seat: String,
    spectate: String,
}

/// Starts a host of `game` for `seats` seats; returns it, its address and
/// its codes.
fn host(dir: &Path, game: &str, seats: u8, frames: u32) -> (Proc, Hosted) {
    host_with(dir, game, seats, frames, &[])
}

/// [`host`] with more arguments (`--rollback`, ...).
fn host_with(dir: &Path, game: &str, seats: u8, frames: u32, extra: &[&str]) -> (Proc, Hosted) {
    host_logging(dir, game, seats, frames, extra, &dir.join("seat-0.log"))
}

/// [`host_with`], its log written to `log`.
fn host_logging(
    dir: &Path,
    game: &str,
    seats: u8,
    frames: u32,
    extra: &[&str],
    log: &Path,
) -> (Proc, Hosted) {
    let mut args: Vec<String> = [
        "host",
        game,
        "--seats",
        &seats.to_string(),
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--frames",
        &frames.to_string(),
        "--seed",
        "7",
        // Twice the usual rate: the same frames in half the time.
        "--tick-rate",
        "120",
        "--settings",
        &dir.join(format!("{game}.toml")).display().to_string(),
        "--log",
        &log.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(link(1));
    let mut p = Proc::start("host", &args);
    let line = p.wait_for(20, |l| l.starts_with("listening "));
    let addr = line["listening ".len()..].trim().to_string();
    // The codes come on the line before.
    let invite = p
        .seen
        .iter()
        .find(|l| l.starts_with("invite "))
        .cloned()
        .unwrap_or_default();
    let hosted = Hosted {
        addr,
        seat: field(&invite, "seat").to_string(),
        spectate: field(&invite, "spectate").to_string(),
    };
    (p, hosted)
}

fn joiner(dir: &Path, host: &Hosted, i: u32, extra: &[&str]) -> Proc {
    let mut args: Vec<String> = vec![
        "join".into(),
        host.addr.clone(),
        "--log".into(),
        dir.join(format!("join-{i}.log")).display().to_string(),
    ];
    // A rejoin proves the seat's key instead of the code; a joiner
    // through a rendezvous proves the code it found the match by.
    if !extra.contains(&"--rejoin") && !extra.contains(&"--rendezvous") {
        args.extend(["--code".into(), host.seat.clone()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(link(10 + i));
    Proc::start(&format!("joiner {i}"), &args)
}

/// `lockstep verify` over `logs`: every log verifies, and logs of one match
/// agree.
fn verify(logs: &[PathBuf]) {
    let out = Command::new(EXE).arg("verify").args(logs).output().unwrap();
    assert!(
        out.status.success(),
        "verify failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn play(game: &str, seats: u8, mode: &[&str]) -> String {
    let dir = scratch(&format!("{game}{seats}{}", mode.join("")));
    let frames = 600;
    let (h, addr) = host_with(&dir, game, seats, frames, mode);
    let joiners: Vec<Proc> = (1..u32::from(seats))
        .map(|i| joiner(&dir, &addr, i, &[]))
        .collect();
    let mut logs = vec![dir.join("seat-0.log")];
    for (i, j) in joiners.into_iter().enumerate() {
        let done = j.finish(120);
        assert_eq!(field(&done, "desyncs"), "0", "{done}");
        assert!(
            field(&done, "frame").parse::<u32>().unwrap() >= frames,
            "{done}"
        );
        logs.push(dir.join(format!("join-{}.log", i + 1)));
    }
    let done = h.finish(60);
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    verify(&logs);
    // Every seat's log holds exactly the match: `diff` finds them equal.
    for other in &logs[1..] {
        let out = Command::new(EXE)
            .arg("diff")
            .arg(&logs[0])
            .arg(other)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "diff: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    done
}

#[test]
fn two_and_four_processes_play_cubes_over_udp_and_their_logs_agree() {
    play("cubes", 2, &[]);
    play("cubes", 4, &[]);
}

#[test]
fn two_and_four_processes_play_rts_over_udp_and_their_logs_agree() {
    play("rts", 2, &[]);
    play("rts", 4, &[]);
}

/// The host picks rollback; its joiners follow the roster, step at once on
/// predictions, roll back the mispredicted frames, and their logs (of
/// confirmed frames only) agree.
#[test]
fn three_processes_play_rts_in_rollback_over_udp_and_their_logs_agree() {
    let done = play("rts", 3, &["--rollback"]);
    assert_ne!(field(&done, "rolled_back"), "0", "{done}");
}

/// A seat's process is killed (`kill -9`) near frame 300 and restarted at
/// once with `join --rejoin` and the seat's key file: it waits for the
/// others to drop the seat, takes it back, and nobody desyncs.
#[test]
fn a_killed_seat_restarted_with_rejoin_takes_its_seat_back() {
    let dir = scratch("rejoin");
    let (h, addr) = host(&dir, "cubes", 3, 800);
    let j1 = joiner(&dir, &addr, 1, &[]);
    let mut j2 = joiner(&dir, &addr, 2, &[]);
    j2.reach(300, 60);
    j2.child.kill().unwrap();
    let _ = j2.child.wait();
    let key = dir.join("join-2.key").display().to_string();
    let back = joiner(&dir, &addr, 3, &["--rejoin", "--key", &key]);
    let done = back.finish(120);
    eprintln!("rejoined: {done}");
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    assert_ne!(field(&done, "rejoin_bytes"), "-", "{done}");
    assert!(
        field(&done, "frame").parse::<u32>().unwrap() >= 800,
        "{done}"
    );
    for p in [j1, h] {
        let done = p.finish(60);
        assert_eq!(field(&done, "desyncs"), "0", "{done}");
    }
    verify(&[dir.join("seat-0.log"), dir.join("join-1.log")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A seat killed for good is dropped; the others finish the match.
#[test]
fn a_killed_seat_is_dropped_and_the_others_finish() {
    let dir = scratch("drop");
    let (h, addr) = host(&dir, "rts", 3, 600);
    let j1 = joiner(&dir, &addr, 1, &[]);
    let mut j2 = joiner(&dir, &addr, 2, &[]);
    j2.reach(300, 60);
    j2.child.kill().unwrap();
    let _ = j2.child.wait();
    for p in [j1, h] {
        let done = p.finish(120);
        assert_eq!(field(&done, "desyncs"), "0", "{done}");
        assert!(
            field(&done, "frame").parse::<u32>().unwrap() >= 600,
            "{done}"
        );
    }
    verify(&[dir.join("seat-0.log"), dir.join("join-1.log")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spectator joins mid-match and checks the settled checksums (its
/// frames on two threads), beside the match's arbiter (`lockstep
/// arbiter`); a socket sprays random bytes at the host meanwhile, which
/// only counts them.
#[test]
fn a_spectator_agrees_and_random_bytes_change_nothing_but_a_counter() {
    let dir = scratch("watch");
    let (mut h, addr) = host_with(&dir, "cubes", 2, 700, &["--arbiter"]);
    let j = joiner(&dir, &addr, 1, &[]);
    h.reach(200, 60);
    let mut args = vec![
        "spectate".to_string(),
        "--threads".into(),
        "2".into(),
        addr.addr.clone(),
        "--code".into(),
        addr.spectate.clone(),
    ];
    args.extend(link(99));
    let spectator = Proc::start("spectator", &args);
    // A second one watches by snapshots and never simulates.
    let mut args = vec![
        "spectate".to_string(),
        "--snapshots".into(),
        addr.addr.clone(),
        "--code".into(),
        addr.spectate.clone(),
    ];
    args.extend(link(98));
    let by_snapshots = Proc::start("snapshot spectator", &args);
    let mut args = vec!["arbiter".to_string(), addr.addr.clone()];
    args.extend(link(97));
    let arbiter = Proc::start("arbiter", &args);
    let noise = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut x = 0x1234_5678u32;
    for i in 0..500 {
        let len = 1 + (i * 37) % 1300;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let _ = noise.send_to(&bytes, &addr.addr);
        if i % 50 == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let spectator = spectator.finish_all(120);
    let done = spectator
        .iter()
        .find(|l| l.starts_with("done "))
        .cloned()
        .unwrap();
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    assert!(
        field(&done, "checked").parse::<u32>().unwrap() >= 100,
        "{done} {spectator:?}"
    );
    let done = arbiter.finish(120);
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    let done = by_snapshots.finish(120);
    // It saw snapshots to the match's end.
    assert!(
        field(&done, "frame").parse::<u32>().unwrap() >= 690,
        "{done}"
    );
    let joined = j.finish(60);
    assert_eq!(field(&joined, "desyncs"), "0", "{joined}");
    let mut h = h;
    h.pump();
    let dropped: u64 = h
        .seen
        .iter()
        .rev()
        .find(|l| l.starts_with("status "))
        .map_or(0, |l| field(l, "dropped").parse().unwrap_or(0));
    assert!(dropped >= 400, "the host counted {dropped} stray datagrams");
    let done = h.finish(60);
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    verify(&[dir.join("seat-0.log"), dir.join("join-1.log")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` (`STOP`, `CONT`, ...) to `child`.
fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// The seats of one match paused and resumed: seat `paused` (a joiner) is
/// stopped (SIGSTOP) for 10 s near frame 300, then continued. The others
/// drop it and play on; it finds it lost the quorum and takes its seat back
/// (or ends non-zero). No two logs part without saying so: every log
/// verifies, and the paused seat's log ends where it stopped, saying why.
fn pause_a_seat(game: &str, seats: u8) {
    let dir = scratch(&format!("pause{game}{seats}"));
    let frames = 2400;
    let (h, addr) = host(&dir, game, seats, frames);
    let mut joiners: Vec<Proc> = (1..u32::from(seats))
        .map(|i| joiner(&dir, &addr, i, &[]))
        .collect();
    let paused = joiners.len() - 1;
    joiners[paused].reach(300, 60);
    signal(&joiners[paused].child, "STOP");
    std::thread::sleep(Duration::from_secs(10));
    signal(&joiners[paused].child, "CONT");
    let mut logs = vec![dir.join("seat-0.log")];
    for (i, j) in joiners.into_iter().enumerate() {
        let log = dir.join(format!("join-{}.log", i + 1));
        if i == paused {
            let lines = j.finish_status(120);
            let said = lines.join("\n");
            assert!(
                said.contains("lost the quorum") || said.contains("lost_quorum"),
                "{said}"
            );
            // Its log stopped where the seat did, and says so.
            let out = Command::new(EXE).arg("verify").arg(&log).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{text}");
            assert!(text.contains("stopped early"), "{text}");
            let diff = Command::new(EXE)
                .arg("diff")
                .arg(&logs[0])
                .arg(&log)
                .output()
                .unwrap();
            assert!(
                diff.status.success(),
                "the paused seat's log parts from the host's: {}",
                String::from_utf8_lossy(&diff.stdout)
            );
        } else {
            let done = j.finish(120);
            assert_eq!(field(&done, "end"), "finished", "{done}");
            logs.push(log);
        }
    }
    let done = h.finish(60);
    assert_eq!(field(&done, "end"), "finished", "{done}");
    verify(&logs);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_paused_seat_of_two_never_plays_on_alone() {
    pause_a_seat("cubes", 2);
}

#[test]
fn a_paused_seat_of_four_never_plays_on_alone() {
    pause_a_seat("rts", 4);
}

/// The host of a two-seat match is killed: the joiner, in a minority of
/// one, stops, cannot take its seat back from nobody, and ends non-zero;
/// its log verifies up to where it stopped.
#[test]
fn a_joiner_whose_host_dies_does_not_play_on_alone() {
    let dir = scratch("hostdies");
    let (mut h, addr) = host(&dir, "cubes", 2, 2400);
    let j = joiner(&dir, &addr, 1, &[]);
    h.reach(300, 60);
    h.child.kill().unwrap();
    let _ = h.child.wait();
    let lines = j.finish_status(60);
    let said = lines.join("\n");
    assert!(said.contains("lost_quorum"), "{said}");
    let out = Command::new(EXE)
        .arg("verify")
        .arg(dir.join("join-1.log"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("stopped early"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host that cannot write its replay log calls the match off: its
/// joiner exits non-zero within 10 s, saying the host's reason.
#[test]
fn a_host_that_cannot_write_its_log_tells_its_joiner_why() {
    let dir = scratch("nolog");
    std::fs::write(dir.join("blocker"), b"a file, not a directory").unwrap();
    let log = dir.join("blocker").join("seat-0.log");
    let (h, addr) = host_logging(&dir, "cubes", 2, 300, &[], &log);
    let t = Instant::now();
    let mut args: Vec<String> = vec![
        "join".into(),
        addr.addr,
        "--code".into(),
        addr.seat,
        "--log".into(),
        dir.join("join-1.log").display().to_string(),
    ];
    args.extend(link(11));
    let out = Command::new(EXE).args(&args).output().unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("cannot open the replay log"), "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let mut h = h;
    let status = h.child.wait().unwrap();
    assert!(!status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A seat whose log stops early (a write fails mid-match, as on a full
/// disk: here a pipe whose reader leaves) plays its match to the end for
/// the others, then exits non-zero saying where its log stopped.
#[test]
fn a_seat_whose_log_stops_mid_match_exits_non_zero() {
    let dir = scratch("full");
    let fifo = dir.join("log.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here: skipped");
        return;
    }
    // The "disk": takes the header and a few chunks, then fills up.
    let reader_fifo = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut f = std::fs::File::open(&reader_fifo).unwrap();
        let mut buf = vec![0u8; 600];
        let _ = std::io::Read::read_exact(&mut f, &mut buf);
    });
    let (h, addr) = host(&dir, "cubes", 2, 600);
    let mut args: Vec<String> = vec![
        "join".into(),
        addr.addr,
        "--code".into(),
        addr.seat,
        "--log".into(),
        fifo.display().to_string(),
        "--key".into(),
        dir.join("join-1.key").display().to_string(),
    ];
    args.extend(link(11));
    let out = Command::new(EXE).args(&args).output().unwrap();
    reader.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("the replay log stopped at frame"), "{err}");
    assert!(
        said.contains("end=finished"),
        "it played to the end: {said}"
    );
    let done = h.finish(60);
    assert_eq!(field(&done, "end"), "finished", "{done}");
    verify(&[dir.join("seat-0.log")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lockstep record` interrupted (SIGINT) keeps the frames it recorded, in
/// a log that verifies, under the name asked for, leaves no temporary file
/// behind, and exits non-zero.
#[test]
fn an_interrupted_record_keeps_its_valid_frames() {
    let dir = scratch("interrupt");
    let out_log = dir.join("cut.log");
    let child = Command::new(EXE)
        .args(["record", "cubes", "--frames", "1000000", "-o"])
        .arg(&out_log)
        .args(["--settings"])
        .arg(dir.join("cubes.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let it record a while (no sleep would tell how far it got; a few
    // hundred milliseconds record thousands of frames of this small field).
    std::thread::sleep(Duration::from_millis(800));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("interrupted"), "{said}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    verify(&[out_log]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host that never answers, a port in use, and an address that is not one
/// each give one clear line and a non-zero exit, quickly.
#[test]
fn unreachable_hosts_and_busy_ports_fail_clearly() {
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = quiet.local_addr().unwrap().to_string();
    let t = Instant::now();
    let out = Command::new(EXE).args(["join", &addr]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not answer"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(15));
    let port = quiet.local_addr().unwrap().port().to_string();
    let out = Command::new(EXE)
        .args(["host", "cubes", "--bind", "127.0.0.1", "--port", &port])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use"), "{err}");
    let out = Command::new(EXE)
        .args(["join", "nowhere"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an address"));
}

/// The same over IPv6 loopback, when the machine has it.
#[test]
fn a_match_plays_over_ipv6_loopback() {
    if UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here: skipped");
        return;
    }
    let dir = scratch("ipv6");
    let mut args: Vec<String> = [
        "host",
        "cubes",
        "--port",
        "0",
        "--bind",
        "::1",
        "--frames",
        "240",
        "--tick-rate",
        "120",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend([
        "--settings".to_string(),
        dir.join("cubes.toml").display().to_string(),
        "--log".into(),
        dir.join("seat-0.log").display().to_string(),
    ]);
    args.extend(link(5));
    let mut h = Proc::start("host", &args);
    let line = h.wait_for(20, |l| l.starts_with("listening "));
    let addr = line["listening ".len()..].trim().to_string();
    assert!(addr.starts_with("[::1]"), "{addr}");
    let invite = h
        .seen
        .iter()
        .find(|l| l.starts_with("invite "))
        .cloned()
        .unwrap();
    let hosted = Hosted {
        addr,
        seat: field(&invite, "seat").to_string(),
        spectate: field(&invite, "spectate").to_string(),
    };
    let j = joiner(&dir, &hosted, 1, &[]);
    for p in [j, h] {
        let done = p.finish(60);
        assert_eq!(field(&done, "desyncs"), "0", "{done}");
    }
    verify(&[dir.join("seat-0.log"), dir.join("join-1.log")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a joiner prints once the host proved the code it was given.
const PROVEN: &str = "the host proved it holds the match code";

/// A match to join through a rendezvous by `code`.
fn hosted_at(code: &str) -> Hosted {
    Hosted {
        addr: code.to_string(),
        seat: code.to_string(),
        spectate: String::new(),
    }
}

/// Starts `lockstep rendezvous` with a relay on loopback; gives it and its
/// address.
fn rendezvous() -> (Proc, String) {
    let args: Vec<String> = [
        "rendezvous",
        "--bind",
        "127.0.0.1",
        "--port",
        "0",
        "--relay-port",
        "0",
        "--machine",
        "--status-every",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut p = Proc::start("rendezvous", &args);
    let line = p.wait_for(20, |l| l.starts_with("listening "));
    let addr = field(&line, "rendezvous").to_string();
    assert!(field(&line, "relay").starts_with("127.0.0.1:"), "{line}");
    (p, addr)
}

/// A match found by its code: `host --rendezvous` prints a seat code and a
/// spectator code, `join CODE --rendezvous` takes a seat by it (through
/// the relay, with `--relayed`), `spectate CODE --rendezvous` watches by
/// the other, each proving its code to the host and the host proving it
/// back; a joiner whose code has the right public part and a wrong secret
/// finds the host but is not seated. Every log verifies. Then the
/// rendezvous is stopped (SIGTERM, exit 0).
#[test]
fn a_match_found_by_its_code_plays_and_its_logs_agree() {
    let dir = scratch("code");
    let (mut r, at) = rendezvous();
    let (h, hosted) = host_with(&dir, "cubes", 3, 480, &["--rendezvous", &at]);
    let code = h
        .seen
        .iter()
        .find(|l| l.starts_with("code "))
        .cloned()
        .unwrap_or_else(|| panic!("no code line in {:?}", h.seen));
    let (seat, spectate) = (field(&code, "seat"), field(&code, "spectate"));
    assert_eq!(seat.len(), 11, "{code}");
    // The codes registered are the ones the host takes.
    assert_eq!((seat, spectate), (&*hosted.seat, &*hosted.spectate));
    // The public part is right (the rendezvous finds the host), the
    // secret is not: the host's proof does not verify, nothing is seated.
    let wrong_secret = format!(
        "{}{}",
        &seat[..5],
        if &seat[5..] == "000000" {
            "000001"
        } else {
            "000000"
        }
    );
    let out = Command::new(EXE)
        .args(["join", &wrong_secret, "--rendezvous", &at, "--machine"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the invited host"), "{err}");
    let j1 = joiner(&dir, &hosted_at(seat), 1, &["--rendezvous", &at]);
    let j2 = joiner(
        &dir,
        &hosted_at(&seat.to_lowercase()),
        2,
        &["--rendezvous", &at, "--relayed"],
    );
    let mut args: Vec<String> = ["spectate", spectate, "--rendezvous", &at]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(link(30));
    let s = Proc::start("spectator", &args);
    let mut logs = vec![dir.join("seat-0.log")];
    for (i, j) in [j1, j2].into_iter().enumerate() {
        let lines = j.finish_all(120);
        let done = lines.iter().find(|l| l.starts_with("done ")).unwrap();
        assert_eq!(field(done, "desyncs"), "0", "{done}");
        assert!(
            lines.iter().any(|l| l.starts_with("reach joined ")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains(PROVEN)), "{lines:?}");
        logs.push(dir.join(format!("join-{}.log", i + 1)));
        if i == 1 {
            // --relayed: every path through the relay.
            assert!(
                lines
                    .iter()
                    .filter(|l| l.starts_with("reach path "))
                    .all(|l| l.contains("via=relay")),
                "{lines:?}"
            );
        }
    }
    let watched = s.finish_all(60);
    let done = watched.iter().find(|l| l.starts_with("done ")).unwrap();
    assert_eq!(field(done, "desyncs"), "0", "{done}");
    assert_eq!(field(done, "end"), "finished", "{done}");
    assert!(watched.iter().any(|l| l.contains(PROVEN)), "{watched:?}");
    let done = h.finish(60);
    assert_eq!(field(&done, "desyncs"), "0", "{done}");
    verify(&logs);
    signal(&r.child, "TERM");
    let status = r.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    r.pump();
    assert!(
        r.seen
            .iter()
            .any(|l| field(l, "forwarded") != "0" && l.starts_with("status "))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A code that is none, a code nobody registered and a rendezvous that
/// never answers each give one clear line and a non-zero exit.
#[test]
fn a_wrong_code_or_a_silent_rendezvous_fails_clearly() {
    let (mut r, at) = rendezvous();
    let out = Command::new(EXE)
        .args(["join", "4K7Q-M2XHPU", "--rendezvous", &at])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a match code"), "{err}");
    let out = Command::new(EXE)
        .args(["join", "4K7Q-M2XHP9", "--rendezvous", &at])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no match is filed under code 4K7Q"), "{err}");
    let _ = r.child.kill();
    let _ = r.child.wait();
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = quiet.local_addr().unwrap().to_string();
    let t = Instant::now();
    let out = Command::new(EXE)
        .args(["spectate", "4K7Q-M2XHP9", "--rendezvous", &addr])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not answer"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(15));
}

/// `lockstep rendezvous` and `lockstep relay` given what cannot work: one
/// line on stderr naming the argument, a non-zero exit, at once.
#[test]
fn the_services_refuse_what_cannot_work_in_one_line() {
    let dir = scratch("services");
    let fails = |args: &[&str], says: &str| {
        let t = Instant::now();
        let out = Command::new(EXE).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(t.elapsed() < Duration::from_secs(10), "{args:?} took long");
    };
    let any = ["--bind", "127.0.0.1", "--port", "0"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["rendezvous"];
        v.extend(any);
        v.extend(extra);
        v
    };
    fails(
        &with(&["--store", "postgres://x"]),
        "--store postgres://x: give `memory` or redis://",
    );
    // Nothing listens on port 1: the store is checked before serving.
    fails(
        &with(&["--store", "redis://127.0.0.1:1/"]),
        "--store redis://127.0.0.1:1/: the store failed",
    );
    fails(
        &with(&["--relay", "127.0.0.1:7701"]),
        "--relay: give --secret FILE",
    );
    fails(
        &["rendezvous", "--port", "0", "--relay-port", "0"],
        "--relay-port: say the address players reach it at with --public IP",
    );
    let missing = dir.join("missing-secret");
    let missing = missing.to_str().unwrap();
    fails(
        &[
            "relay",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--secret",
            missing,
        ],
        "missing-secret",
    );
    let bad = dir.join("bad-secret");
    std::fs::write(&bad, "not hex at all\n").unwrap();
    fails(
        &[
            "relay",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--secret",
            bad.to_str().unwrap(),
        ],
        "not a secret (64 hex digits)",
    );
    // A secret the rendezvous creates serves its relay; a busy port is named.
    let secret = dir.join("secret");
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    fails(
        &[
            "rendezvous",
            "--bind",
            "127.0.0.1",
            "--port",
            &port,
            "--secret",
            secret.to_str().unwrap(),
        ],
        &format!("port {port} is in use"),
    );
    let written = std::fs::read_to_string(&secret).unwrap();
    assert_eq!(written.trim().len(), 64, "{written}");
    fails(
        &[
            "relay",
            "--bind",
            "127.0.0.1",
            "--port",
            &port,
            "--secret",
            secret.to_str().unwrap(),
        ],
        &format!("port {port} is in use"),
    );
    fails(
        &["host", "cubes", "--port", "0", "--rendezvous", "nowhere"],
        "not an address",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
