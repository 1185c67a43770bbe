//! What driving a 2-seat match costs a game loop, per 60 Hz tick: the host
//! and a joiner in this process on loopback, each tick of one plain loop
//! driving both seats, two ways in turn:
//!
//! - `poll`: [`SeatRuntime::poll`], which does what is due and returns;
//! - `select`: the runtime's async `next_event` raced against a 2 ms frame
//!   budget in `tokio::select!` on a current-thread runtime, as a game
//!   without a poll had to.
//!
//! It prints, per way and seat, the time the loop spent in the driver per
//! tick (median, 99th percentile, worst) and the frames the seat stepped.
//! The game is the cube demo on a 4 × 4 field (16 cubes), so the figure is
//! mostly the driver's own.
//!
//! ```text
//! cargo run --release -p lockstep-net --example driver-cost [-- --frames 600 --budget-us 2000]
//! ```

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::{
    Endpoint, JoinEvent, Joining, MatchEvent, MatchSettings, PeerEvent, Runtime, SeatEndpoint,
    SeatPlan, SeatRuntime, SeatTiming, Socket, Want,
};
use lockstep_sim::Match;

/// The loop's tick: the match's, 60 a second.
const TICK: Duration = Duration::from_micros(16_667);

type Seat = SeatEndpoint<Cubes, std::io::Sink>;

fn small() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

fn plan(token: u32) -> SeatPlan<Cubes, std::io::Sink> {
    let mut plan = SeatPlan::new(token);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Cubes::bot(seat, m.seed))
    }));
    plan
}

fn socket() -> Socket {
    Socket::open("127.0.0.1:0".parse().unwrap(), LinkShape::PERFECT, 1).expect("a loopback socket")
}

/// A host's runtime and a joiner's, not yet driven.
fn pair(frames: u32) -> (Runtime<Seat>, Runtime<Joining>) {
    let setup = Match {
        seats: 2,
        seed: 5,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(frames);
    let host_socket = socket();
    let addr: SocketAddr = host_socket.local_addr().unwrap();
    let invites = lockstep_net::entropy::invites().expect("entropy");
    let host = lockstep_net::host(host_socket, small(), setup, settings, invites, plan(1))
        .expect("entropy");
    let joiner = lockstep_net::join(socket(), addr, Want::Seat, invites.seat).expect("entropy");
    (host, joiner)
}

/// What one seat's driving cost, tick by tick.
#[derive(Default)]
struct Costs {
    per_tick: Vec<Duration>,
    frames: u32,
}

impl Costs {
    fn count(&mut self, event: &MatchEvent) {
        if let MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) = event {
            self.frames = self.frames.max(frame + 1);
        }
    }

    fn row(&mut self, way: &str, seat: &str) -> String {
        self.per_tick.sort();
        let n = self.per_tick.len();
        let at = |q: usize| ms(self.per_tick[(n - 1) * q / 100]);
        format!(
            "| {way} | {seat} | {n} | {} | {} | {} | {} |",
            at(50),
            at(99),
            at(100),
            self.frames
        )
    }
}

/// A duration in milliseconds, to the microsecond, in integers.
fn ms(d: Duration) -> String {
    let us = d.as_micros();
    format!("{}.{:03}", us / 1000, us % 1000)
}

/// Sleeps to tick `n` of a loop started at `start` (a schedule that does
/// not drift).
fn wait_for_tick(start: Instant, n: u32) {
    std::thread::sleep((start + TICK * n).saturating_duration_since(Instant::now()));
}

/// Both seats driven by `poll` from one plain loop.
fn by_poll(frames: u32) -> [Costs; 2] {
    let (host, joiner) = pair(frames);
    let mut seats = [
        SeatRuntime::seat(host),
        SeatRuntime::joining(joiner, plan(2), SeatTiming::default()),
    ];
    let mut costs = [Costs::default(), Costs::default()];
    let start = Instant::now();
    let mut tick = 0;
    while seats.iter().any(|s| !s.is_finished()) {
        for (seat, cost) in seats.iter_mut().zip(&mut costs) {
            let t = Instant::now();
            let events: Vec<MatchEvent> = seat.poll().collect();
            cost.per_tick.push(t.elapsed());
            events.iter().for_each(|e| cost.count(e));
        }
        tick += 1;
        wait_for_tick(start, tick);
    }
    costs
}

/// A joiner's runtime before and after its roster, for `select`.
enum Stage {
    Joining(Box<Runtime<Joining>>),
    Seat(Box<Runtime<Seat>>),
    Done,
}

/// Races `next_event` against the budget on `tokio`: the events it got.
fn budgeted<E: Endpoint>(
    tokio: &tokio::runtime::Runtime,
    rt: &mut Runtime<E>,
    budget: Duration,
) -> (Vec<MatchEvent>, bool) {
    tokio.block_on(async {
        let until = tokio::time::Instant::now() + budget;
        let mut got = Vec::new();
        loop {
            tokio::select! {
                event = rt.next_event() => match event {
                    Some(e) => got.push(e),
                    None => return (got, true),
                },
                _ = tokio::time::sleep_until(until) => return (got, false),
            }
        }
    })
}

/// Both seats driven by `select!` with a frame budget from one plain loop.
fn by_select(frames: u32, budget: Duration) -> [Costs; 2] {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut host, joiner) = {
        let _inside = tokio.enter();
        pair(frames)
    };
    let mut joiner = Stage::Joining(Box::new(joiner));
    let mut host_done = false;
    let mut costs = [Costs::default(), Costs::default()];
    let start = Instant::now();
    let mut tick = 0;
    while !host_done || !matches!(joiner, Stage::Done) {
        if !host_done {
            let t = Instant::now();
            let (events, ended) = budgeted(&tokio, &mut host, budget);
            costs[0].per_tick.push(t.elapsed());
            events.iter().for_each(|e| costs[0].count(e));
            host_done = ended;
        }
        let t = Instant::now();
        joiner = match joiner {
            Stage::Joining(mut rt) => {
                let (events, ended) = budgeted(&tokio, &mut rt, budget);
                let roster = events
                    .iter()
                    .any(|e| matches!(e, MatchEvent::Join(JoinEvent::Roster(_))));
                match (roster, ended) {
                    (true, _) => match rt.play(plan(2), SeatTiming::default()) {
                        Ok(seat) => Stage::Seat(Box::new(seat)),
                        Err((_, why)) => panic!("the roster cannot be played: {why}"),
                    },
                    (false, true) => Stage::Done,
                    (false, false) => Stage::Joining(rt),
                }
            }
            Stage::Seat(mut rt) => {
                let (events, ended) = budgeted(&tokio, &mut rt, budget);
                events.iter().for_each(|e| costs[1].count(e));
                if ended { Stage::Done } else { Stage::Seat(rt) }
            }
            Stage::Done => Stage::Done,
        };
        costs[1].per_tick.push(t.elapsed());
        tick += 1;
        wait_for_tick(start, tick);
    }
    costs
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: u32| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let frames = value("--frames", 600);
    let budget = Duration::from_micros(u64::from(value("--budget-us", 2000)));
    println!(
        "a 2-seat match of {frames} frames at 60 Hz on loopback, each way in turn; ms per tick"
    );
    println!();
    println!("| driver | seat | ticks | median | p99 | worst | frames |");
    println!("|---|---|---|---|---|---|---|");
    let [mut host, mut joiner] = by_poll(frames);
    println!("{}", host.row("poll", "host"));
    println!("{}", joiner.row("poll", "joiner"));
    let way = format!("select!, {} ms budget", ms(budget));
    let [mut host, mut joiner] = by_select(frames, budget);
    println!("{}", host.row(&way, "host"));
    println!("{}", joiner.row(&way, "joiner"));
}
