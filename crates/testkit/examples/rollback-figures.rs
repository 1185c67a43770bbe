//! Figures of the latency techniques, measured on the simulated network
//! with real peers of the shipped games:
//!
//! - the perceived input latency — frames from sampling a local input to
//!   first showing its frame — in lockstep and in rollback, at 50, 100 and
//!   200 ms round trips;
//! - in rollback, the frames rolled back per second and the CPU a peer
//!   spends per frame (stepping, re-stepping, encoding, hashing, the
//!   protocol), against lockstep's, for `cubes` and `rts` at their default
//!   sizes;
//! - clock synchronization at 2 s round trips and 25% loss: how far each
//!   peer's estimate of the other's clock offset is off after 10 s, and
//!   how far apart the two frame clocks still tick.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example rollback-figures [-- --seeds N]`
//!
//! Every match is seeded, so the frame counts repeat exactly; the CPU
//! figures are wall-clock time spent inside the peers' calls (medians over
//! the seeds), which moves with the machine.

// A report: floats only format measured figures, nothing flows back.
#![allow(clippy::float_arithmetic)]

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_protocol::Mode;
use lockstep_testkit::mesh::{self, Condition, Run, Scenario};
use lockstep_testkit::netsim::{LinkConfig, Loss};
use lockstep_testkit::soak;

const TICK_MICROS: u64 = 16_667;

fn seeds() -> u64 {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--seeds" {
            if let Some(n) = args.next().and_then(|v| v.parse().ok()) {
                return n;
            }
            eprintln!("rollback-figures: --seeds needs a number");
            std::process::exit(2);
        }
    }
    5
}

fn quantile(mut v: Vec<u64>, permille: usize) -> u64 {
    v.sort_unstable();
    if v.is_empty() {
        return 0;
    }
    v[(v.len() * permille / 1000).min(v.len() - 1)]
}

/// A link with `rtt_ms` round trips, jitter of a tenth of the one-way
/// latency, and 1% loss.
fn link(rtt_ms: u64) -> LinkConfig {
    LinkConfig {
        jitter_micros: rtt_ms * 50,
        loss: Loss::Random(10_000),
        ..LinkConfig::ideal(rtt_ms * 500)
    }
}

fn play<G: Demo>(
    seats: u8,
    seed: u64,
    rtt_ms: u64,
    mode: Mode,
    frames: u32,
    config: &G::Config,
) -> Run {
    let mut s = Scenario::new(seats, seed, link(rtt_ms), frames);
    s.session.mode = mode;
    mesh::run::<G>(&s, config)
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Lockstep => "lockstep",
        Mode::Rollback(_) => "rollback",
    }
}

/// Perceived latency, in frames, over every peer and seed: median and 95th
/// percentile, after the two-second warm-up.
fn latency<G: Demo>(
    seats: u8,
    rtt_ms: u64,
    mode: Mode,
    seeds: u64,
    config: &G::Config,
) -> (u64, u64) {
    let mut all = Vec::new();
    for seed in 0..seeds {
        let run = play::<G>(seats, 300 + seed, rtt_ms, mode, 900, config);
        for p in &run.peers {
            let l = p.input_latency_frames(TICK_MICROS);
            all.extend(l.iter().skip(120).map(|&f| u64::from(f)));
        }
    }
    (quantile(all.clone(), 500), quantile(all, 950))
}

/// Rolled-back frames per second of match, frames predicted per second,
/// and µs of CPU per frame (medians over peers and seeds).
fn cost<G: Demo>(seats: u8, rtt_ms: u64, mode: Mode, seeds: u64) -> (f64, f64, u64) {
    let (mut rolled, mut predicted, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
    let frames = 600;
    for seed in 0..seeds {
        let run = play::<G>(
            seats,
            400 + seed,
            rtt_ms,
            mode,
            frames,
            &G::default_config(),
        );
        let seconds = f64::from(frames) * TICK_MICROS as f64 / 1e6;
        for p in &run.peers {
            rolled.push((p.stats.frames_rolled_back as f64 / seconds * 10.0) as u64);
            predicted.push((p.stats.frames_predicted as f64 / seconds * 10.0) as u64);
            cpu.push(p.busy_nanos / 1000 / u64::from(p.confirmed_before.max(1)));
        }
    }
    (
        quantile(rolled, 500) as f64 / 10.0,
        quantile(predicted, 500) as f64 / 10.0,
        quantile(cpu, 500),
    )
}

fn main() {
    let seeds = seeds();
    let rtts = [50u64, 100, 200];
    let modes = [Mode::Lockstep, Mode::ROLLBACK];

    println!(
        "## Perceived input latency (frames at 60 Hz; 1% loss, jitter a tenth of the one-way latency; \
         the soak's small games, 900 frames, {seeds} seeds)\n"
    );
    println!(
        "| game | round trip | lockstep median | lockstep p95 | rollback median | rollback p95 | rollback input delay |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, seats) in [("cubes", 2u8), ("rts", 4)] {
        for rtt in rtts {
            let mut cells = Vec::new();
            for mode in modes {
                // The latency does not depend on the game's size: the soak's
                // small games.
                let (med, p95) = match name {
                    "cubes" => latency::<Cubes>(seats, rtt, mode, seeds, &soak::cubes_config()),
                    _ => latency::<Rts>(seats, rtt, mode, seeds, &soak::rts_config()),
                };
                cells.push(format!("{med} | {p95}"));
            }
            let delay = match name {
                "cubes" => {
                    play::<Cubes>(seats, 300, rtt, Mode::ROLLBACK, 900, &soak::cubes_config())
                }
                _ => play::<Rts>(seats, 300, rtt, Mode::ROLLBACK, 900, &soak::rts_config()),
            }
            .peers[0]
                .session
                .delay_frames;
            println!(
                "| {name} ({seats} seats) | {rtt} ms | {} | {} | {delay} |",
                cells[0], cells[1]
            );
        }
    }

    println!(
        "\n## Cost of rollback (default game sizes, 600 frames; medians over peers and {seeds} seeds)\n"
    );
    println!(
        "| game | round trip | mode | frames predicted /s | frames rolled back /s | CPU µs per frame |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, seats) in [("cubes", 2u8), ("rts", 4)] {
        for rtt in rtts {
            for mode in modes {
                let (rolled, predicted, cpu) = match name {
                    "cubes" => cost::<Cubes>(seats, rtt, mode, seeds),
                    _ => cost::<Rts>(seats, rtt, mode, seeds),
                };
                println!(
                    "| {name} ({seats} seats) | {rtt} ms | {} | {predicted:.1} | {rolled:.1} | {cpu} |",
                    mode_name(mode)
                );
            }
        }
    }

    println!(
        "\n## Clock synchronization after 10 s at 2 s round trips, 25% loss (clocks set 0 to 60 s apart; {seeds} seeds × 2 peers)\n"
    );
    let (mut errors, mut apart, mut samples) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 0..seeds {
        let mut s = Scenario::new(2, 500 + seed, Condition::AWFUL.link(), 100_000);
        s.clock_offsets = vec![
            seed * 7_777_777 % 60_000_000,
            (seed + 3) * 13_131_313 % 60_000_000,
        ];
        s.max_micros = 10_000_000;
        let run = mesh::run::<Cubes>(&s, &soak::cubes_config());
        for (me, other) in [(0usize, 1usize), (1, 0)] {
            let truth = s.clock_offsets[other] as i64 - s.clock_offsets[me] as i64;
            if let Some(est) = run.peers[me].clock_offsets[other] {
                errors.push((est.offset_micros - truth).unsigned_abs());
                samples.push(u64::from(est.held));
            }
            if let Some(a) = run.peers[me].frame_advantage[other] {
                apart.push(a.unsigned_abs());
            }
        }
    }
    println!("| figure | median | worst (clock samples: fewest) |");
    println!("|---|---|---|");
    println!(
        "| clock offset error (ms) | {:.1} | {:.1} |",
        quantile(errors.clone(), 500) as f64 / 1000.0,
        errors.iter().max().copied().unwrap_or(0) as f64 / 1000.0
    );
    println!(
        "| frame clocks apart (frames) | {:.2} | {:.2} |",
        quantile(apart.clone(), 500) as f64 / TICK_MICROS as f64,
        apart.iter().max().copied().unwrap_or(0) as f64 / TICK_MICROS as f64
    );
    println!(
        "| clock samples held | {} | {} |",
        quantile(samples.clone(), 500),
        samples.iter().min().copied().unwrap_or(0)
    );
}
