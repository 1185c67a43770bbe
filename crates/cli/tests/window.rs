//! `lockstep play` in real X windows on a headless X server (Xvfb): a local
//! match against a bot, and two windows playing each other over loopback
//! UDP. Each window is captured with `xwd` once its match is over and
//! compared loosely (most pixels close, not pixel-exact) with what `lockstep
//! render` draws from the replay log that window's process wrote, at the
//! frame the window says it shows; the two seats' logs must verify against
//! each other.
//!
//! A third test holds → in the window with `xdotool` (XTEST key events, as
//! a keyboard makes them) and finds the local player's `right` button in
//! the replay log for about as long as the key was down, and no other; then
//! presses C and sees the window switch from the overview to the camera
//! that follows the player's cube.
//!
//! Without `Xvfb`, `xwd` or `xdotool` on the machine the tests say so and
//! pass, unless `CI` is set: CI installs them (`.ci/run`), so there a
//! missing one fails.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use lockstep_games::cubes::CubesInput;
use lockstep_sim::replay;

const EXE: &str = env!("CARGO_BIN_EXE_lockstep");
const WIDTH: u32 = 320;
const HEIGHT: u32 = 180;

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `program` runs here; `None` with the reason to skip otherwise.
fn have(program: &str, probe: &[&str]) -> bool {
    let found = Command::new(program)
        .args(probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is missing on CI: .ci/run installs it (xvfb, x11-apps, xdotool)"
        );
        eprintln!("skipped: {program} is not installed (apt-get install xvfb x11-apps xdotool)");
    }
    found
}

/// A headless X server on a display it chose itself, ended when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb, or `None` (the test is skipped) if it is not installed.
    fn start() -> Option<Xvfb> {
        if !have("Xvfb", &["-help"]) || !have("xwd", &["-help"]) {
            return None;
        }
        // X servers started at the same moment can race for a display
        // number; the tests start theirs one at a time, and each answers a
        // client before its test uses it.
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..3 {
            // `-displayfd 1`: Xvfb picks a free display and prints its
            // number on stdout. `-noreset`: a client leaving (the probe,
            // xwd) does not reset the server under the others.
            let mut child = Command::new("Xvfb")
                .args(["-displayfd", "1", "-noreset", "-nolisten", "tcp"])
                .args(["-screen", "0", "800x600x24"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("Xvfb starts");
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let number: u32 = line.trim().parse().expect("Xvfb prints its display");
            let x = Xvfb {
                child,
                display: format!(":{number}"),
            };
            if x.answers() {
                return Some(x);
            }
            eprintln!("Xvfb on {} does not answer; starting another", x.display);
        }
        panic!("no Xvfb answered a client");
    }

    /// Whether a client can connect within 5 s.
    fn answers(&self) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            let probe = Command::new("xwd")
                .args(["-root", "-silent", "-display", &self.display])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if probe.is_ok_and(|s| s.success()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `lockstep play` process and what it printed.
struct Player {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Player {
    /// `lockstep play ARGS --bot`, its log at `log`.
    fn start(x: &Xvfb, args: &[&str], log: &Path) -> Player {
        let mut with_bot = args.to_vec();
        with_bot.push("--bot");
        Player::at_keys(x, &with_bot, log)
    }

    /// `lockstep play ARGS`, the keyboard at the seat's controls.
    fn at_keys(x: &Xvfb, args: &[&str], log: &Path) -> Player {
        let mut child = Command::new(EXE)
            .arg("play")
            .args(args)
            .arg("--log")
            .arg(log)
            .args(["--linger", "60"])
            .args([
                "--width",
                &WIDTH.to_string(),
                "--height",
                &HEIGHT.to_string(),
            ])
            .env("DISPLAY", &x.display)
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
        Player {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Panics with what the process said if it has ended.
    fn still_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            while let Ok(l) = self.lines.try_recv() {
                self.seen.push(l);
            }
            panic!(
                "lockstep play ended ({status}): {err}; printed {:?}",
                self.seen
            );
        }
    }

    /// Waits (at most `secs`) for a line starting with `prefix`.
    fn wait_for(&mut self, secs: u64, prefix: &str) -> String {
        let until = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < until {
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
                self.seen.push(l.clone());
                if l.starts_with(prefix) {
                    return l;
                }
            }
            self.still_running();
        }
        panic!(
            "no `{prefix}` line within {secs} s; printed {:?}",
            self.seen
        );
    }

    /// Waits for `match over at frame N; replay log written to PATH`.
    fn over(&mut self) -> u32 {
        let line = self.wait_for(120, "match over at frame ");
        let rest = line.trim_start_matches("match over at frame ");
        rest.split(';').next().unwrap().parse().unwrap()
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

type Pixels = Vec<[u8; 3]>;

/// The window named `title`, captured with `xwd`, as RGB pixels.
fn capture(x: &Xvfb, title: &str) -> (u32, u32, Pixels) {
    let out = Command::new("xwd")
        .args(["-display", &x.display, "-name", title, "-silent"])
        .output()
        .expect("xwd runs");
    assert!(
        out.status.success(),
        "xwd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    decode_xwd(&out.stdout)
}

/// An XWD (X Window Dump, version 7) image of 24 or 32 bits a pixel.
fn decode_xwd(bytes: &[u8]) -> (u32, u32, Pixels) {
    let field = |i: usize| u32::from_be_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap());
    let (header, version) = (field(0) as usize, field(1));
    assert_eq!(version, 7, "XWD version");
    let (width, height) = (field(4), field(5));
    let lsb_first = field(7) == 0;
    let bits_per_pixel = field(11);
    let bytes_per_line = field(12) as usize;
    let masks = [field(14), field(15), field(16)];
    let colours = field(19) as usize;
    assert!(
        bits_per_pixel == 32 || bits_per_pixel == 24,
        "{bits_per_pixel} bits a pixel"
    );
    let step = bits_per_pixel as usize / 8;
    let data = &bytes[header + colours * 12..];
    let mut pixels = Vec::with_capacity((width * height) as usize);
    for y in 0..height as usize {
        for x in 0..width as usize {
            let at = y * bytes_per_line + x * step;
            let mut word = [0u8; 4];
            word[..step].copy_from_slice(&data[at..at + step]);
            let v = if lsb_first {
                u32::from_le_bytes(word)
            } else {
                u32::from_be_bytes(word) >> (32 - bits_per_pixel)
            };
            pixels.push(masks.map(|m| ((v & m) >> m.trailing_zeros()) as u8));
        }
    }
    (width, height, pixels)
}

/// `lockstep render` of `log` at `frame`, the window's size.
fn render(log: &Path, frame: u32, out: &Path) -> Pixels {
    let rendered = Command::new(EXE)
        .arg("render")
        .arg(log)
        .args(["--frames", &frame.to_string(), "-q"])
        .args([
            "--width",
            &WIDTH.to_string(),
            "--height",
            &HEIGHT.to_string(),
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "render {}: {}",
        log.display(),
        String::from_utf8_lossy(&rendered.stderr)
    );
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(out).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// The first row compared: the overlays (the window's says more than a
/// rendered picture's) stay in the top third.
const FIRST_ROW: usize = HEIGHT as usize / 3;

/// The share of pixels below the overlays (per mille) whose colours differ
/// by more than 48 in some channel.
fn differing_permille(a: &[[u8; 3]], b: &[[u8; 3]]) -> usize {
    assert_eq!(a.len(), b.len());
    let skip = FIRST_ROW * WIDTH as usize;
    let far = a[skip..]
        .iter()
        .zip(&b[skip..])
        .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 48))
        .count();
    far * 1000 / (a.len() - skip)
}

/// Captures the window `title` until it matches `expected` loosely (the
/// last picture may still be on its way to the screen), at most 5 s.
fn assert_window_shows(x: &Xvfb, title: &str, expected: &[[u8; 3]]) {
    // A blank window of the sky's colour must not pass: the check has teeth.
    let sky = vec![expected[0]; expected.len()];
    let blank = differing_permille(&sky, expected);
    assert!(blank > 200, "the scene covers {blank}‰ of the picture");
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let (w, h, shot) = capture(x, title);
        assert_eq!((w, h), (WIDTH, HEIGHT), "the window's size");
        let off = differing_permille(&shot, expected);
        if off <= 20 {
            eprintln!(
                "{title}: {off}‰ of the pixels differ from the rendered log (a blank window: {blank}‰)"
            );
            return;
        }
        assert!(
            Instant::now() < until,
            "{title}: {off}‰ of the pixels differ from the rendered log"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_local_match_in_a_window_looks_like_its_rendered_log() {
    let Some(x) = Xvfb::start() else { return };
    let dir = scratch("window-local");
    let log = dir.join("local.log");
    let mut player = Player::start(&x, &["--frames", "90"], &log);
    let frame = player.over();
    assert_eq!(frame, 90);
    let expected = render(&log, frame, &dir.join("expected.png"));
    assert_window_shows(&x, "lockstep play: cubes, local match", &expected);
}

#[test]
fn two_windows_play_each_other_over_udp_and_agree() {
    let Some(x) = Xvfb::start() else { return };
    let dir = scratch("window-udp");
    let (host_log, join_log) = (dir.join("host.log"), dir.join("join.log"));
    // Side by side: an X server without a window manager would stack
    // them, and a covered window has no pixels to capture.
    let mut host = Player::start(
        &x,
        &["--host", "0", "--frames", "120", "--position", "0,0"],
        &host_log,
    );
    let hosting = host.wait_for(30, "hosting cubes");
    // `hosting cubes for 2 players at ADDR: join with ...`
    let addr = hosting
        .split(" at ")
        .nth(1)
        .and_then(|rest| rest.split(": ").next())
        .expect("the host prints its address")
        .to_string();
    // `  seat code CODE: join with ...`: the lobby admits only the invited.
    let seat = host.wait_for(30, "  seat code ");
    let code = seat
        .trim_start_matches("  seat code ")
        .split(':')
        .next()
        .expect("the host prints the seat code")
        .to_string();
    let mut joiner = Player::start(
        &x,
        &["--join", &addr, "--code", &code, "--position", "400,0"],
        &join_log,
    );
    let host_frame = host.over();
    let join_frame = joiner.over();
    for frame in [host_frame, join_frame] {
        assert!(frame >= 120, "the windows reached frame {frame}");
    }
    let verify = Command::new(EXE)
        .arg("verify")
        .args([&host_log, &join_log])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "the two seats' logs disagree: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let expected = render(&host_log, host_frame, &dir.join("host.png"));
    assert_window_shows(&x, "lockstep play: cubes, hosting", &expected);
    let expected = render(&join_log, join_frame, &dir.join("join.png"));
    assert_window_shows(
        &x,
        &format!("lockstep play: cubes, joined at {addr}"),
        &expected,
    );
}

/// `xdotool ARGS` on the display of `x`; its output.
fn xdotool(x: &Xvfb, args: &[&str]) -> String {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", &x.display)
        .output()
        .expect("xdotool runs");
    assert!(
        out.status.success(),
        "xdotool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn keys_held_in_the_window_are_the_local_players_input() {
    let Some(x) = Xvfb::start() else { return };
    if !have("xdotool", &["version"]) {
        return;
    }
    let dir = scratch("window-keys");
    let log = dir.join("keys.log");
    let mut player = Player::at_keys(&x, &["--frames", "300"], &log);
    let title = "lockstep play: cubes, local match";
    let until = Instant::now() + Duration::from_secs(30);
    let window = loop {
        let found = Command::new("xdotool")
            .args(["search", "--name", title])
            .env("DISPLAY", &x.display)
            .output()
            .unwrap();
        let id = String::from_utf8_lossy(&found.stdout).trim().to_string();
        if !id.is_empty() {
            break id;
        }
        player.still_running();
        assert!(
            Instant::now() < until,
            "the window never appeared: {}",
            String::from_utf8_lossy(&found.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // No window manager: give the window the keyboard focus ourselves.
    xdotool(&x, &["windowfocus", "--sync", &window]);
    std::thread::sleep(Duration::from_millis(500));
    xdotool(&x, &["keydown", "Right"]);
    std::thread::sleep(Duration::from_millis(1000));
    xdotool(&x, &["keyup", "Right"]);
    let frame = player.over();
    assert_eq!(frame, 300);
    // The window shows the overview, as `lockstep render` draws it; C
    // switches to the camera behind the player's cube: another picture.
    let expected = render(&log, frame, &dir.join("expected.png"));
    assert_window_shows(&x, title, &expected);
    // Held for a while, as a finger would: the window reads the keys once
    // a turn, so a press and release within one turn are never seen.
    xdotool(&x, &["keydown", "c"]);
    std::thread::sleep(Duration::from_millis(300));
    xdotool(&x, &["keyup", "c"]);
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, _, shot) = capture(&x, title);
        let off = differing_permille(&shot, &expected);
        if off > 200 {
            eprintln!("after C: {off}‰ of the pixels differ from the overview");
            break;
        }
        assert!(
            Instant::now() < until,
            "C did not change the camera ({off}‰ differ)"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = replay::read::<CubesInput>(&std::fs::read(&log).unwrap()).unwrap();
    let mut held = Vec::new();
    for f in 0..log.frames() {
        let seat0 = log.inputs(f).unwrap()[0];
        assert!(
            seat0 == CubesInput::NONE || seat0 == CubesInput::from_bits(2),
            "frame {f}: only → was held, not {seat0:?}"
        );
        if seat0.right {
            held.push(f);
        }
    }
    // One press, one unbroken run of frames, neither at the start nor at
    // the end of the match. 1 s held is about 60 frames at 60 a second; a
    // loaded machine that falls behind steps a backlog while the key is
    // down, so only the bounds are loose.
    assert!(!held.is_empty(), "→ never reached the match's input");
    let (first, last) = (held[0], held[held.len() - 1]);
    eprintln!("→ held from frame {first} to {last} of {}", log.frames());
    assert_eq!(held.len() as u32, last - first + 1, "one press: {held:?}");
    assert!(first > 0 && last + 1 < log.frames(), "{first}..={last}");
    assert!(
        (10..=240).contains(&held.len()),
        "→ held for {} frames",
        held.len()
    );
}

#[test]
fn without_a_display_or_a_host_play_fails_in_one_line() {
    let no_display = Command::new(EXE)
        .args(["play", "--frames", "10"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert!(!no_display.status.success());
    let err = String::from_utf8_lossy(&no_display.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("lockstep: cannot open a window"), "{err}");

    let Some(x) = Xvfb::start() else { return };
    // Nothing listens on the discard port: the host never answers.
    let lost = Command::new(EXE)
        .args([
            "play",
            "--join",
            "127.0.0.1:9",
            "--width",
            "64",
            "--height",
            "64",
        ])
        .env("DISPLAY", &x.display)
        .output()
        .unwrap();
    assert!(!lost.status.success());
    let err = String::from_utf8_lossy(&lost.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("did not answer within 5 s"), "{err}");
}
