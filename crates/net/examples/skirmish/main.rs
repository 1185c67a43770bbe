//! `skirmish`: a small game of its own, played between processes over UDP
//! with nothing but the engine's public API (`lockstep-fx`, `-sim`,
//! `-protocol`, `-peer`, `-lobby`, `-net`; no shipped game). It shows that
//! the runtime is a library: a new game implements [`Game`], hands the
//! runtime a [`SeatPlan`], and reads every typed event the runtime yields.
//!
//! The game: each seat commands a few units on a square field. A seeded bot
//! orders one unit at a time to a cell of a 32 × 32 grid (often the capture
//! point in the centre); units steer toward their targets with a bounded
//! acceleration and push each other apart; the seat with the most units on
//! the capture point scores a point per frame. Positions and velocities are
//! fixed point, and the state is encoded with labelled entities (`seat N`,
//! `unit N`) and fields (`position`, `velocity`, …), so a desync report
//! names what differs.
//!
//! Each seat is driven from a plain 60 Hz loop, as a game's own loop would
//! drive it: every tick it polls the seat ([`SeatRuntime::poll`]: what
//! arrived, the frames due, what to send, without waiting), prints every
//! event the poll handed out, one line each (a desync's whole report), and
//! sleeps to the next tick. No async code: the runtime needs none. At the
//! end it prints what the polls cost per tick (median, 99th percentile,
//! worst). `--bug` makes the joining seat nondeterministic:
//! every 200 frames it nudges one unit by one LSB in a direction taken from
//! std's per-process hash seed, as a real bug reading a `HashMap`'s order
//! would. Run:
//!
//! ```text
//! cargo run -p lockstep-net --example skirmish -- duel --bug   # the desync, reported
//! cargo run -p lockstep-net --example skirmish -- duel         # plays to the end, exits 0
//! cargo run -p lockstep-net --example skirmish -- host [--port P] [--seats N] [--frames F]
//! cargo run -p lockstep-net --example skirmish -- join ADDR CODE [--bug]
//! ```
//!
//! The host prints its address and the seat code it drew; a joiner needs
//! both. `duel` starts a host and a joiner as child processes of itself on
//! loopback, relays their lines with a prefix, and exits non-zero if either
//! fails.
//!
//! The parts: `game.rs`, the game (what any game brings: a `Game`, its
//! `Input`, its settings, a `Bot`); `lines.rs`, every event as text; this
//! file, the command line and the processes.

mod game;
mod lines;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use lockstep_net::conditioner::LinkShape;
use lockstep_net::{
    Invite, MatchCode, MatchEvent, MatchSettings, SeatPlan, SeatRuntime, SeatTiming, Socket, Want,
    entropy,
};
use lockstep_sim::{Game, Match};

use game::{Commander, FLAW, FLAW_EVERY, Flaw, Rules, Skirmish};
use lines::print_event;

/// A seat of the game, keeping no replay log.
type Seat = SeatRuntime<Skirmish, std::io::Sink>;

/// The loop's tick: 60 a second, the match's tick rate.
const TICK: Duration = Duration::from_micros(16_667);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(why) => {
            eprintln!("skirmish: {why}");
            ExitCode::from(2)
        }
    }
}

const USAGE: &str = "usage: skirmish host [--port P] [--seats N] [--frames F] | \
                     skirmish join ADDR CODE [--bug] | skirmish duel [--bug] [--frames F]";

/// The command line, read by hand: a command, flags with values, `--bug`.
fn run(args: &[String]) -> Result<ExitCode, String> {
    let (command, rest) = args.split_first().ok_or(USAGE)?;
    let mut positional = Vec::new();
    let (mut port, mut seats, mut frames, mut bug) = (7777u16, 2u8, 600u32, false);
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--port" => port = value(&mut it, arg)?,
            "--seats" => seats = value(&mut it, arg)?,
            "--frames" => frames = value(&mut it, arg)?,
            "--bug" => bug = true,
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}\n{USAGE}")),
            other => positional.push(other.to_string()),
        }
    }
    match (command.as_str(), positional.as_slice()) {
        ("host", []) => host(port, seats, frames),
        ("join", [addr, code]) => {
            let addr: SocketAddr = addr
                .parse()
                .map_err(|_| format!("{addr}: not an address"))?;
            let code = MatchCode::parse(code).map_err(|e| format!("{code}: {e}"))?;
            join(addr, code, bug)
        }
        ("duel", []) => duel(frames, bug),
        _ => Err(USAGE.into()),
    }
}

/// The value after flag `name`.
fn value<T: std::str::FromStr>(it: &mut std::slice::Iter<String>, name: &str) -> Result<T, String> {
    let v = it.next().ok_or(format!("{name} needs a value"))?;
    v.parse()
        .map_err(|_| format!("{name} {v}: not a number in range"))
}

/// Hosts a match at seat 0 and plays it with a bot.
fn host(port: u16, seats: u8, frames: u32) -> Result<ExitCode, String> {
    let setup = Match {
        seats,
        seed: 7,
        tick_rate: 60,
    };
    let rules = Rules::default();
    Skirmish::new(&rules, &setup).map_err(|e| e.to_string())?;
    let socket = Socket::open(([0, 0, 0, 0], port).into(), LinkShape::PERFECT, 1)
        .map_err(|e| format!("cannot open UDP port {port}: {e}"))?;
    let at = socket.local_addr().map_err(|e| e.to_string())?;
    // Only whoever is given the seat code may sit.
    let invites = entropy::invites().map_err(|e| e.to_string())?;
    let code = invites
        .seat
        .code()
        .map(|c| c.to_string())
        .unwrap_or_default();
    println!(
        "listening 127.0.0.1:{} for {seats} seats, seat code {code}",
        at.port()
    );
    let settings = MatchSettings::new(&setup).frames(frames);
    let plan = plan()?;
    let rt = lockstep_net::host(socket, rules, setup, settings, invites, plan)
        .map_err(|e| e.to_string())?;
    Ok(play(SeatRuntime::seat(rt)))
}

/// Joins the match at `addr` with its seat `code` and plays the seat it
/// gives with a bot (flawed with `bug`).
fn join(addr: SocketAddr, code: MatchCode, bug: bool) -> Result<ExitCode, String> {
    if bug {
        let flaw = FLAW.get_or_init(Flaw::from_hash_seed);
        let (x, y) = (flaw.nudge.x.to_bits(), flaw.nudge.y.to_bits());
        println!("bug: every {FLAW_EVERY} frames this seat moves a unit by ({x}, {y}) LSB");
    }
    let socket = Socket::open(([0, 0, 0, 0], 0).into(), LinkShape::PERFECT, 2)
        .map_err(|e| format!("cannot open a UDP socket: {e}"))?;
    let joining = lockstep_net::join(socket, addr, Want::Seat, Invite::Code(code))
        .map_err(|e| e.to_string())?;
    // The setup first; the seat the roster gives, with this plan, after.
    Ok(play(SeatRuntime::joining(
        joining,
        plan()?,
        SeatTiming::default(),
    )))
}

/// A seat played by a [`Commander`], recording nothing.
fn plan() -> Result<SeatPlan<Skirmish, std::io::Sink>, String> {
    let mut plan = SeatPlan::new(entropy::token().map_err(|e| e.to_string())?);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Commander::new(m.seed, seat))
    }));
    Ok(plan)
}

/// The game loop: at every tick, polls the seat and prints its events;
/// at the end the score and what the polls cost. Success when the match ran
/// to its end for this seat.
fn play(mut seat: Seat) -> ExitCode {
    let (mut end, mut scores) = (None, (0, Vec::new()));
    let mut costs = Vec::new();
    let start = Instant::now();
    let mut ticks = 0u32;
    while !seat.is_finished() {
        let polled = Instant::now();
        let events: Vec<MatchEvent> = seat.poll().collect();
        costs.push(polled.elapsed());
        for event in events {
            print_event(&event);
            if let MatchEvent::Ended(e) = event {
                end = Some(e);
            }
        }
        if let Some(peer) = seat.endpoint().and_then(|s| s.peer()) {
            scores = (peer.frame(), peer.game().scores.clone());
        }
        // A game would read its input and draw here; then it waits for
        // the next tick, on a schedule that does not drift.
        ticks += 1;
        let next = start + TICK * ticks;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    if let Some(why) = seat.refusal() {
        println!("cannot play the host's match: {why}");
    }
    let list: Vec<String> = scores
        .1
        .iter()
        .enumerate()
        .map(|(s, n)| format!("seat {s} {n}"))
        .collect();
    println!("score before frame {}: {}", scores.0, list.join(", "));
    costs.sort();
    let at = |q: usize| costs[(costs.len() - 1) * q / 100].as_micros();
    if !costs.is_empty() {
        println!(
            "poll per tick over {} ticks: median {} µs, p99 {} µs, worst {} µs",
            costs.len(),
            at(50),
            at(99),
            at(100)
        );
    }
    match end {
        Some(e) if e.is_success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// Starts `host` and `join` children of this program on loopback, relays
/// their lines, and succeeds only if both do.
fn duel(frames: u32, bug: bool) -> Result<ExitCode, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let spawn = |args: &[&str]| {
        Command::new(&me)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", me.display()))
    };
    let frames = frames.to_string();
    let mut host = spawn(&["host", "--port", "0", "--frames", &frames])?;
    let (tx, rx) = std::sync::mpsc::channel();
    let host_lines = relay("host", host.stdout.take(), Some(tx));
    let Ok((addr, code)) = rx.recv_timeout(Duration::from_secs(10)) else {
        let _ = host.kill();
        return Err("the host never said where it listens".into());
    };
    let mut args = vec!["join", addr.as_str(), code.as_str()];
    args.extend(bug.then_some("--bug"));
    let mut joiner = spawn(&args)?;
    let join_lines = relay("join", joiner.stdout.take(), None);
    let join_ok = joiner.wait().is_ok_and(|s| s.success());
    if !join_ok {
        // A host whose joiner failed may wait for the seat to be taken
        // again: it has ten seconds to end by itself.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while host.try_wait().is_ok_and(|s| s.is_none()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = host.kill();
    }
    let host_ok = host.wait().is_ok_and(|s| s.success());
    let _ = (host_lines.join(), join_lines.join());
    let word = |ok: bool| if ok { "succeeded" } else { "FAILED" };
    println!("duel: host {}, joiner {}", word(host_ok), word(join_ok));
    Ok(if host_ok && join_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Copies a child's lines to ours with `[name] ` before each, sending the
/// address and the seat code of a `listening` line to `addr`.
fn relay(
    name: &'static str,
    out: Option<impl Read + Send + 'static>,
    addr: Option<std::sync::mpsc::Sender<(String, String)>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Some(out) = out else { return };
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let (Some(tx), Some(rest)) = (&addr, line.strip_prefix("listening ")) {
                let at = rest.split(' ').next().unwrap_or_default().to_string();
                let code = rest.rsplit(' ').next().unwrap_or_default().to_string();
                let _ = tx.send((at, code));
            }
            println!("[{name}] {line}");
        }
    })
}
