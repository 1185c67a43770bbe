//! `skirmish`: a small game of its own, played between processes over UDP
//! with nothing but the engine's public API (`lockstep-fx`, `-sim`,
//! `-protocol`, `-peer`, `-lobby`, `-net`; no shipped game). It shows that
//! the runtime is a library: a new game implements [`Game`], hands the
//! runtime a [`SeatPlan`], and reads every typed event the runtime yields.
//!
//! The game: each seat commands a few units on a square field. A seeded bot
//! orders one unit at a time to a cell of a 32 × 32 grid (often the capture
//! point in the centre); units steer toward their targets with a bounded
//! acceleration and push each other apart; a seat alone on the point scores
//! a point per frame. Positions and velocities are fixed point, the state is
//! encoded with labelled entities (`seat N`, `unit N`) and fields
//! (`position`, `velocity`, …), so a desync report names what differs.
//!
//! The program prints every event the runtime hands it, one line each, and
//! a desync's whole report. `--bug` makes the joining seat nondeterministic:
//! every 200 frames it nudges one unit by one LSB in a direction taken from
//! std's per-process hash seed, as a real bug reading a `HashMap`'s order
//! would. Run:
//!
//! ```text
//! cargo run -p lockstep-net --example skirmish -- duel --bug   # the desync, reported
//! cargo run -p lockstep-net --example skirmish -- duel         # plays to the end, exits 0
//! cargo run -p lockstep-net --example skirmish -- host [--port P] [--players N] [--frames F]
//! cargo run -p lockstep-net --example skirmish -- join ADDR [--bug]
//! ```
//!
//! `duel` starts a host and a joiner as child processes of itself on
//! loopback, relays their lines with a prefix, and exits non-zero if either
//! fails.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use lockstep_fx::{Canonical, DecodeError, Fx, Rng, Sink, StateReader, StateWriter};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::{
    HostEvent, JoinEvent, LinkStatus, MatchEnd, MatchEvent, MatchSettings, Runtime, SeatEndpoint,
    SeatPlan, SeatTiming, Socket, Want, entropy,
};
use lockstep_peer::{PeerEvent, StopReason};
use lockstep_protocol::{BitError, BitStream, Input, schema_hash};
use lockstep_sim::desync::Diagnosis;
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError, read_version};

// ---------------------------------------------------------------- the game

/// A point or a velocity on the field (metres, metres per second).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct V2 {
    x: Fx,
    y: Fx,
}

impl V2 {
    const fn new(x: Fx, y: Fx) -> V2 {
        V2 { x, y }
    }
    fn add(self, o: V2) -> V2 {
        V2::new(self.x + o.x, self.y + o.y)
    }
    fn sub(self, o: V2) -> V2 {
        V2::new(self.x - o.x, self.y - o.y)
    }
    fn scale(self, k: Fx) -> V2 {
        V2::new(self.x * k, self.y * k)
    }
    fn div_int(self, n: i64) -> V2 {
        V2::new(self.x.div_int(n), self.y.div_int(n))
    }
    fn length(self) -> Fx {
        (self.x * self.x + self.y * self.y).sqrt()
    }
    /// Kept inside the square `-half..=half`.
    fn clamp(self, half: Fx) -> V2 {
        V2::new(self.x.clamp(-half, half), self.y.clamp(-half, half))
    }
}

impl core::fmt::Debug for V2 {
    /// Both coordinates exactly, so values one LSB apart print differently.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "({:?}, {:?})", self.x, self.y)
    }
}

impl Canonical for V2 {
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_fx(self.x);
        w.write_fx(self.y);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<V2, DecodeError> {
        Ok(V2::new(r.read_fx()?, r.read_fx()?))
    }
}

/// The game's settings, carried to every seat in the host's roster.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    /// Units each seat commands (1 to 4: an order names one in 2 bits).
    units_per_seat: u8,
    /// Half the side of the square field (m).
    field_half: Fx,
    /// Units closer than twice this push each other apart (m).
    unit_radius: Fx,
    /// Top speed (m/s).
    top_speed: Fx,
    /// Largest change of velocity (m/s²).
    acceleration: Fx,
    /// Radius of the capture point in the centre (m).
    point_radius: Fx,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            units_per_seat: 3,
            field_half: Fx::from_int(12),
            unit_radius: Fx::HALF,
            top_speed: Fx::from_int(4),
            acceleration: Fx::from_int(16),
            point_radius: Fx::from_int(3),
        }
    }
}

impl Rules {
    /// Every setting in a range `step` is safe with.
    fn check(&self) -> Result<(), String> {
        let fits = |v: Fx, max: i32| v.is_positive() && v <= Fx::from_int(max);
        let ok = (1..=4).contains(&self.units_per_seat)
            && fits(self.field_half, 100)
            && fits(self.unit_radius, 4)
            && fits(self.top_speed, 50)
            && fits(self.acceleration, 500)
            && fits(self.point_radius, 50);
        ok.then_some(())
            .ok_or_else(|| format!("rules out of range: {self:?}"))
    }
}

impl Canonical for Rules {
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("rules", &[]);
        w.field("units per seat", &self.units_per_seat);
        w.field("field half", &self.field_half);
        w.field("unit radius", &self.unit_radius);
        w.field("top speed", &self.top_speed);
        w.field("acceleration", &self.acceleration);
        w.field("point radius", &self.point_radius);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Rules, DecodeError> {
        Ok(Rules {
            units_per_seat: r.read_u8()?,
            field_half: r.read_fx()?,
            unit_radius: r.read_fx()?,
            top_speed: r.read_fx()?,
            acceleration: r.read_fx()?,
            point_radius: r.read_fx()?,
        })
    }
}

/// Cells per side of the grid orders name.
const GRID: u32 = 32;

/// One seat's input for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Order {
    /// No new order (also a missing or absent seat's input).
    #[default]
    Hold,
    /// Send the seat's unit `unit` to the centre of grid cell `cell`.
    Move { unit: u8, cell: (u8, u8) },
}

impl Input for Order {
    const MAX_BITS: u32 = 1 + 2 + 5 + 5;

    fn schema_hash() -> u64 {
        schema_hash("skirmish Order v1: tag u1 (0 hold, 1 move); move = unit u2, cell x u5, y u5")
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let (mut tag, mut unit, mut x, mut y) = match *self {
            Order::Hold => (0, 0, 0, 0),
            Order::Move { unit, cell } => (1, unit.into(), cell.0.into(), cell.1.into()),
        };
        s.ranged(&mut tag, 0, 1, "order tag")?;
        if tag == 1 {
            s.ranged(&mut unit, 0, 3, "order unit")?;
            s.ranged(&mut x, 0, GRID - 1, "order cell")?;
            s.ranged(&mut y, 0, GRID - 1, "order cell")?;
        }
        if S::READING {
            *self = match tag {
                1 => Order::Move {
                    unit: unit as u8,
                    cell: (x as u8, y as u8),
                },
                _ => Order::Hold,
            };
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
struct Unit {
    position: V2,
    velocity: V2,
    target: V2,
}

/// The match state: unit `id` belongs to seat `id / units_per_seat`.
#[derive(Debug)]
struct Skirmish {
    rules: Rules,
    tick_rate: u16,
    /// Per seat: frames it held the point alone.
    scores: Vec<u32>,
    /// Every unit, seat by seat.
    units: Vec<Unit>,
}

/// Where each seat's units start: a direction from the centre.
const BASES: [(i64, i64); 8] = [
    (-1, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (0, -1),
    (0, 1),
    (-1, 0),
    (1, 0),
];

impl Skirmish {
    /// The centre of grid cell `(x, y)`.
    fn cell_centre(&self, (x, y): (u8, u8)) -> V2 {
        let half = self.rules.field_half;
        let c = |i: u8| half.mul_int(2 * i64::from(i) + 1).div_int(i64::from(GRID)) - half;
        V2::new(c(x), c(y))
    }

    /// Units steer toward their targets: the velocity turns toward the one
    /// that reaches the target (slowing within half a second of it) by at
    /// most `acceleration / tick_rate` a frame.
    fn steer(&mut self) {
        let (r, hz) = (&self.rules, i64::from(self.tick_rate));
        let max_dv = r.acceleration.div_int(hz);
        for u in &mut self.units {
            let to = u.target.sub(u.position);
            let dist = to.length();
            let wanted = if dist <= r.unit_radius.scale_pow2(-2) {
                V2::default()
            } else {
                to.scale(r.top_speed.min(dist.mul_int(2)) / dist)
            };
            let mut dv = wanted.sub(u.velocity);
            let len = dv.length();
            if len > max_dv {
                dv = dv.scale(max_dv / len);
            }
            u.velocity = u.velocity.add(dv);
            let edge = r.field_half - r.unit_radius;
            u.position = u.position.add(u.velocity.div_int(hz)).clamp(edge);
        }
    }

    /// Overlapping units push each other apart, half the overlap each, pair
    /// by pair in id order.
    fn separate(&mut self) {
        let gap = self.rules.unit_radius.mul_int(2);
        let edge = self.rules.field_half - self.rules.unit_radius;
        for i in 0..self.units.len() {
            for j in i + 1..self.units.len() {
                let d = self.units[j].position.sub(self.units[i].position);
                let dist = d.length();
                if dist >= gap {
                    continue;
                }
                let push = match dist.is_zero() {
                    true => V2::new(gap.scale_pow2(-1), Fx::ZERO),
                    false => d.scale((gap - dist).scale_pow2(-1) / dist),
                };
                self.units[i].position = self.units[i].position.sub(push).clamp(edge);
                self.units[j].position = self.units[j].position.add(push).clamp(edge);
            }
        }
    }

    /// A seat alone on the point scores.
    fn capture(&mut self) {
        let per = usize::from(self.rules.units_per_seat);
        let mut on_point = self
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.position.length() <= self.rules.point_radius)
            .map(|(id, _)| id / per);
        if let Some(first) = on_point.next() {
            if on_point.all(|seat| seat == first) {
                self.scores[first] = self.scores[first].saturating_add(1);
            }
        }
    }
}

impl Game for Skirmish {
    type Input = Order;
    type Config = Rules;
    const ID: &'static str = "skirmish";
    const VERSION: u32 = 1;

    fn new(rules: &Rules, setup: &Match) -> Result<Skirmish, SetupError> {
        setup.check(Self::ID, 2..=8)?;
        rules.check().map_err(|reason| SetupError::Setting {
            game: Self::ID,
            field: "rules",
            reason,
        })?;
        let mut units = Vec::new();
        let base = rules.field_half.mul_int(3).div_int(4);
        let spacing = rules.unit_radius.mul_int(3);
        for &(bx, by) in &BASES[..usize::from(setup.players)] {
            let per = i64::from(rules.units_per_seat);
            for k in 0..per {
                let x = base.mul_int(bx) + spacing.mul_int(2 * k - (per - 1)).scale_pow2(-1);
                let at = V2::new(x, base.mul_int(by));
                units.push(Unit {
                    position: at,
                    velocity: V2::default(),
                    target: at,
                });
            }
        }
        Ok(Skirmish {
            rules: rules.clone(),
            tick_rate: setup.tick_rate,
            scores: vec![0; usize::from(setup.players)],
            units,
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Order]) {
        let per = self.rules.units_per_seat;
        for (seat, order) in inputs.iter().enumerate().take(self.scores.len()) {
            if let Order::Move { unit, cell } = *order {
                if unit < per {
                    let target = self.cell_centre(cell);
                    self.units[seat * usize::from(per) + usize::from(unit)].target = target;
                }
            }
        }
        self.steer();
        self.separate();
        self.capture();
        if let Some(flaw) = FLAW.get() {
            flaw.strike(frame, &mut self.units);
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("skirmish", &[]);
        w.field("version", &Self::VERSION);
        w.field("tick rate", &self.tick_rate);
        w.field("players", &(self.scores.len() as u8));
        self.rules.encode(w);
        for (seat, score) in self.scores.iter().enumerate() {
            w.entity("seat", &[seat as u32]);
            w.field("score", score);
        }
        for (id, u) in self.units.iter().enumerate() {
            w.entity("unit", &[id as u32]);
            w.field("position", &u.position);
            w.field("velocity", &u.velocity);
            w.field("target", &u.target);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Skirmish, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Skirmish>(&mut r)?;
        let tick_rate = r.read_u16()?;
        let players = r.read_u8()?;
        let rules = Rules::decode(&mut r)?;
        let setup = Match {
            players,
            seed: 0,
            tick_rate,
        };
        let invalid = |e: String| StateError::Invalid(e);
        setup
            .check(Self::ID, 2..=8)
            .map_err(|e| invalid(e.to_string()))?;
        rules.check().map_err(invalid)?;
        let scores = (0..players)
            .map(|_| r.read_u32())
            .collect::<Result<Vec<u32>, _>>()?;
        let units = (0..u32::from(players) * u32::from(rules.units_per_seat))
            .map(|_| {
                Ok(Unit {
                    position: V2::decode(&mut r)?,
                    velocity: V2::decode(&mut r)?,
                    target: V2::decode(&mut r)?,
                })
            })
            .collect::<Result<Vec<Unit>, DecodeError>>()?;
        r.finish()?;
        Ok(Skirmish {
            rules,
            tick_rate,
            scores,
            units,
        })
    }
}

/// A seat's bot: every half second to second and a half it orders one unit,
/// half the time the one of its units farthest from the point to the point.
struct Commander {
    seat: usize,
    rng: Rng,
    next: Frame,
}

impl Bot<Skirmish> for Commander {
    fn input(&mut self, game: &Skirmish, frame: Frame) -> Order {
        if frame < self.next {
            return Order::Hold;
        }
        self.next = frame + 30 + self.rng.below(60);
        let per = game.rules.units_per_seat;
        let mine = |k: u8| game.units[self.seat * usize::from(per) + usize::from(k)];
        if self.rng.chance(1, 2) {
            let unit = (0..per)
                .max_by_key(|&k| mine(k).position.length())
                .unwrap_or(0);
            let c = GRID / 2 - 1;
            let cell = (c + self.rng.below(2), c + self.rng.below(2));
            return Order::Move {
                unit,
                cell: (cell.0 as u8, cell.1 as u8),
            };
        }
        Order::Move {
            unit: self.rng.below(u32::from(per)) as u8,
            cell: (self.rng.below(GRID) as u8, self.rng.below(GRID) as u8),
        }
    }
}

// ------------------------------------------------------------- the --bug

/// How often the flawed seat strikes, in frames.
const FLAW_EVERY: u32 = 200;

/// The `--bug` seat's flaw: every [`FLAW_EVERY`] frames its step moves one
/// unit by one LSB in a direction taken from std's hash seed, which differs
/// from process to process (the same hidden input as a `HashMap`'s order).
/// The seat re-runs its own frames the same way, so only the other seat's
/// checksums can tell.
struct Flaw {
    nudge: V2,
}

static FLAW: OnceLock<Flaw> = OnceLock::new();

impl Flaw {
    fn from_hash_seed() -> Flaw {
        let e = Fx::EPSILON;
        let nudge = match RandomState::new().hash_one("skirmish") % 4 {
            0 => V2::new(e, Fx::ZERO),
            1 => V2::new(-e, Fx::ZERO),
            2 => V2::new(Fx::ZERO, e),
            _ => V2::new(Fx::ZERO, -e),
        };
        Flaw { nudge }
    }

    fn strike(&self, frame: Frame, units: &mut [Unit]) {
        if frame == 0 || frame % FLAW_EVERY != 0 || units.is_empty() {
            return;
        }
        let id = (frame / FLAW_EVERY) as usize % units.len();
        units[id].position = units[id].position.add(self.nudge);
    }
}

// ------------------------------------------------------------ the program

/// The replay log's writer: none is kept.
type Seat = SeatEndpoint<Skirmish, std::io::Sink>;

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

const USAGE: &str = "usage: skirmish host [--port P] [--players N] [--frames F] | \
                     skirmish join ADDR [--bug] | skirmish duel [--bug] [--frames F]";

/// The command line, read by hand: a command, flags with values, `--bug`.
fn run(args: &[String]) -> Result<ExitCode, String> {
    let (command, rest) = args.split_first().ok_or(USAGE)?;
    let mut positional = Vec::new();
    let (mut port, mut players, mut frames, mut bug) = (7777u16, 2u8, 600u32, false);
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        let number = |name: &str, v: &String| format!("{name} {v}: not a number in range");
        match arg.as_str() {
            "--port" => {
                port = value("--port")?
                    .parse()
                    .map_err(|_| number("--port", arg))?
            }
            "--players" => {
                players = value("--players")?
                    .parse()
                    .map_err(|_| number("--players", arg))?
            }
            "--frames" => {
                frames = value("--frames")?
                    .parse()
                    .map_err(|_| number("--frames", arg))?
            }
            "--bug" => bug = true,
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}\n{USAGE}")),
            other => positional.push(other.to_string()),
        }
    }
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    };
    match (command.as_str(), positional.as_slice()) {
        ("host", []) => runtime()?.block_on(host(port, players, frames)),
        ("join", [addr]) => {
            let addr: SocketAddr = addr
                .parse()
                .map_err(|_| format!("{addr}: not an address"))?;
            runtime()?.block_on(join(addr, bug))
        }
        ("duel", []) => duel(frames, bug),
        _ => Err(USAGE.into()),
    }
}

/// Hosts a match at seat 0 and plays it with a bot.
async fn host(port: u16, players: u8, frames: u32) -> Result<ExitCode, String> {
    let setup = Match {
        players,
        seed: 7,
        tick_rate: 60,
    };
    let rules = Rules::default();
    Skirmish::new(&rules, &setup).map_err(|e| e.to_string())?;
    let socket = Socket::open(([0, 0, 0, 0], port).into(), LinkShape::PERFECT, 1)
        .map_err(|e| format!("cannot open UDP port {port}: {e}"))?;
    let at = socket.local_addr().map_err(|e| e.to_string())?;
    println!("listening 127.0.0.1:{} for {players} players", at.port());
    let settings = MatchSettings::new(&setup).frames(frames);
    let plan = plan()?;
    let mut rt =
        lockstep_net::host(socket, rules, setup, settings, plan).map_err(|e| e.to_string())?;
    Ok(play(&mut rt).await)
}

/// Joins the match at `addr` and plays the seat it gives with a bot
/// (flawed with `bug`).
async fn join(addr: SocketAddr, bug: bool) -> Result<ExitCode, String> {
    if bug {
        let flaw = FLAW.get_or_init(Flaw::from_hash_seed);
        println!(
            "bug: every {FLAW_EVERY} frames this seat moves a unit by {:?} outside the rules",
            flaw.nudge
        );
    }
    let socket = Socket::open(([0, 0, 0, 0], 0).into(), LinkShape::PERFECT, 2)
        .map_err(|e| format!("cannot open a UDP socket: {e}"))?;
    let identity = entropy::identity().map_err(|e| e.to_string())?;
    let mut joining = lockstep_net::join(socket, addr, Want::Seat, identity);
    // The setup's events, until the roster says which seat this is.
    loop {
        match joining.next_event().await {
            Some(e @ MatchEvent::Join(JoinEvent::Roster(_))) => {
                print_event(&e);
                break;
            }
            Some(e) => print_event(&e),
            None => return Ok(ExitCode::FAILURE),
        }
    }
    match joining.play::<Skirmish, std::io::Sink>(plan()?, SeatTiming::default()) {
        Ok(mut rt) => Ok(play(&mut rt).await),
        Err((mut refused, why)) => {
            println!("cannot play the host's match: {why}");
            while let Some(e) = refused.next_event().await {
                print_event(&e);
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A seat played by a [`Commander`], recording nothing.
fn plan() -> Result<SeatPlan<Skirmish, std::io::Sink>, String> {
    let mut plan = SeatPlan::new(entropy::token().map_err(|e| e.to_string())?);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Commander {
            seat: usize::from(seat),
            rng: Rng::new(m.seed, u64::from(seat)),
            next: 0,
        })
    }));
    Ok(plan)
}

/// Prints every event to the end, then the score; success when the match
/// ran to its end for this seat.
async fn play(rt: &mut Runtime<Seat>) -> ExitCode {
    let (mut end, mut scores) = (None, (0, Vec::new()));
    while let Some(event) = rt.next_event().await {
        print_event(&event);
        if let MatchEvent::Ended(e) = event {
            end = Some(e);
        }
        if let Some(peer) = rt.endpoint().peer() {
            scores = (peer.frame(), peer.game().scores.clone());
        }
    }
    let list: Vec<String> = scores
        .1
        .iter()
        .enumerate()
        .map(|(s, n)| format!("seat {s} {n}"))
        .collect();
    println!("score before frame {}: {}", scores.0, list.join(", "));
    match end {
        Some(e) if e.is_success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

// ------------------------------------------------------------- the lines

/// Prints one event: one line, or a desync report's lines.
fn print_event(event: &MatchEvent) {
    match event {
        MatchEvent::Peer(PeerEvent::Healed {
            frame,
            state_bytes,
            diagnosis,
        }) => {
            println!(
                "healed: loaded the authority's state after frame {frame} ({state_bytes} bytes)"
            );
            print_report(diagnosis.as_deref());
        }
        MatchEvent::Peer(PeerEvent::Stopped(StopReason::MatchInvalid {
            first_frame,
            report,
        })) => {
            println!("stopped: the match is invalid from frame {first_frame}");
            print_report(report.as_deref());
        }
        e => println!("{}", line(e)),
    }
}

/// A desync report: a headline made from its fields, then its whole text.
fn print_report(diagnosis: Option<&Diagnosis>) {
    let Some(d) = diagnosis else {
        println!("  no desync report: this seat's history does not reach the frame");
        return;
    };
    let r = &d.report;
    let fields: Vec<String> = r
        .after
        .iter()
        .map(|f| format!("{} · {}", f.entity, f.field))
        .collect();
    println!(
        "  desync report: frame {}, {} field(s) differ: {}",
        r.frame,
        r.after.len(),
        fields.join(", ")
    );
    for f in &r.after {
        let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "absent".into());
        println!(
            "  {} · {}: {} here, {} at {}",
            f.entity,
            f.field,
            side(&f.left),
            side(&f.right),
            r.sources[1]
        );
    }
    for text in r.to_text().lines() {
        println!("  | {text}");
    }
}

fn line(event: &MatchEvent) -> String {
    match event {
        MatchEvent::Host(e) => format!("host: {}", host_line(e)),
        MatchEvent::Join(e) => format!("join: {}", join_line(e)),
        MatchEvent::Peer(e) => peer_line(e),
        MatchEvent::Status(s) => status_line(s),
        MatchEvent::Ended(end) => format!("match over: {end}"),
        // A seat's runtime never raises these; a spectator's would.
        MatchEvent::Spectator(e) => format!("spectator: {e:?}"),
        MatchEvent::SnapshotSpectator(e) => format!("spectator: {e:?}"),
    }
}

fn host_line(e: &HostEvent) -> String {
    match e {
        HostEvent::SeatOffered { seat, from } => format!("seat {seat} offered to {from}"),
        HostEvent::SeatFreed { seat } => format!("seat {seat} free again (its joiner went silent)"),
        HostEvent::Seated => "every seat is taken: rosters sent".into(),
        HostEvent::RosterRefused { seat, refusal } => {
            format!("seat {seat} refused the roster: {refusal}")
        }
        HostEvent::Rejoining { seat, from, .. } => format!("seat {seat} rejoins from {from}"),
        HostEvent::SpectatorAdmitted { watcher, from, .. } => {
            format!("spectator {} admitted from {from}", watcher.0)
        }
        HostEvent::SpectatorExpired { watcher } => format!("spectator {} never came", watcher.0),
        HostEvent::Refused { from, refusal } => format!("refused {from}: {refusal}"),
    }
}

fn join_line(e: &JoinEvent) -> String {
    match e {
        JoinEvent::Challenged => "the host proved our address".into(),
        JoinEvent::Waiting {
            seat,
            joined,
            players,
        } => format!("seat {seat}; {joined} of {players} seats taken"),
        JoinEvent::AskingAgain(r) => format!("the host says {r}; asking again"),
        JoinEvent::Roster(r) => format!(
            "roster: seat {} of {} players of {} v{}, seed {}, {} frames at {} Hz, {}",
            r.seat.map_or("-".into(), |s| s.to_string()),
            r.setup.players,
            r.game,
            r.game_version,
            r.setup.seed,
            r.settings.frames,
            r.setup.tick_rate,
            if r.settings.sealed {
                "sealed"
            } else {
                "in clear"
            }
        ),
        JoinEvent::Failed(f) => format!("failed: {f}"),
    }
}

fn peer_line(e: &PeerEvent) -> String {
    let seats = |s: lockstep_protocol::PlayerSet| {
        let v: Vec<String> = s.iter().map(|p| format!("seat {}", p.0)).collect();
        v.join(", ")
    };
    match e {
        PeerEvent::Connected { peer } => format!("connected to seat {}", peer.0),
        PeerEvent::Started => "started: frame 0".into(),
        PeerEvent::Stepped {
            frame,
            checksum,
            resimulated,
            predicted,
        } => format!(
            "frame {frame} {checksum}{}{}",
            if *resimulated { " (again)" } else { "" },
            if *predicted { " (predicted)" } else { "" }
        ),
        PeerEvent::RolledBack { frame, frames } => {
            format!("rolled back {frames} frames to {frame}")
        }
        PeerEvent::NotDeterministic {
            frame,
            first,
            again,
        } => {
            format!("NOT DETERMINISTIC: frame {frame} gave {first}, then {again}")
        }
        PeerEvent::Desync {
            frame,
            authority,
            drifted,
            local_drifted,
        } => format!(
            "DESYNC at frame {frame}: drifted {}{}; authority {}",
            seats(*drifted),
            if *local_drifted { " (this seat)" } else { "" },
            authority.map_or("none".into(), |a| format!("seat {}", a.0))
        ),
        PeerEvent::Healed { frame, .. } => format!("healed at frame {frame}"),
        PeerEvent::ResyncFailed { reason } => format!("resync failed: {reason:?}"),
        PeerEvent::Left { peer, reason } => format!("seat {} left: {reason:?}", peer.0),
        PeerEvent::SeatDropped { seat, last_frame } => format!(
            "seat {} dropped after frame {}",
            seat.0,
            last_frame.map_or("-".into(), |f| f.to_string())
        ),
        PeerEvent::SeatReturned { seat, frame } => {
            format!("seat {} returns at frame {frame}", seat.0)
        }
        PeerEvent::Incompatible { peer } => format!("seat {} plays another game", peer.0),
        PeerEvent::RecordingStopped { frame, reason } => {
            format!("log stopped at frame {frame}: {reason}")
        }
        PeerEvent::WatcherJoined { watcher } => format!("spectator {} joined", watcher.0),
        PeerEvent::WatcherLeft { watcher, reason } => {
            format!("spectator {} left: {reason:?}", watcher.0)
        }
        PeerEvent::WatcherIncompatible { watcher } => {
            format!("spectator {} is incompatible", watcher.0)
        }
        PeerEvent::SwitchedToSnapshots { authority, reason } => {
            format!("showing seat {}'s snapshots: {reason:?}", authority.0)
        }
        PeerEvent::BackToLockstep { frame } => format!("back in lockstep at frame {frame}"),
        PeerEvent::Stopped(reason) => format!("stopped: {}", MatchEnd::Stopped(reason.clone())),
    }
}

fn status_line(s: &LinkStatus) -> String {
    format!(
        "status: seat {} frame {} rtt {} delay {} desyncs {} healed {} stalls {} dropped {} up {} bit/s down {} bit/s",
        s.seat.map_or("-".into(), |x| x.to_string()),
        s.frame,
        s.rtt_micros.map_or("-".into(), |us| format!("{us} µs")),
        s.delay_frames,
        s.desyncs,
        s.healed,
        s.stalls,
        s.dropped,
        s.up_bps,
        s.down_bps
    )
}

// ------------------------------------------------------------- the duel

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
    let Ok(addr) = rx.recv_timeout(Duration::from_secs(10)) else {
        let _ = host.kill();
        return Err("the host never said where it listens".into());
    };
    let mut args = vec!["join", addr.as_str()];
    args.extend(bug.then_some("--bug"));
    let mut joiner = spawn(&args)?;
    let join_lines = relay("join", joiner.stdout.take(), None);
    let join_ok = joiner.wait().is_ok_and(|s| s.success());
    // A joiner that failed leaves the host waiting for a seat: give it a
    // few seconds to end by itself.
    let host_ok = wait_or_kill(&mut host, Duration::from_secs(if join_ok { 30 } else { 5 }));
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
/// address of a `listening` line to `addr`.
fn relay(
    name: &'static str,
    out: Option<impl Read + Send + 'static>,
    addr: Option<std::sync::mpsc::Sender<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Some(out) = out else { return };
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let (Some(tx), Some(rest)) = (&addr, line.strip_prefix("listening ")) {
                let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_string());
            }
            println!("[{name}] {line}");
        }
    })
}

/// Waits up to `limit` for `child` to exit (killing it after); whether it
/// succeeded.
fn wait_or_kill(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}
