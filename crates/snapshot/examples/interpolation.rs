//! Interpolation quality on the recorded cube match: a sender snapshots the
//! scene (quantized) at 10, 30 or 60 Hz; each snapshot crosses a link with
//! 50 ms of latency, ±2 frames of jitter and 5% loss; a viewer samples its
//! interpolation buffer every frame, a playout delay of three send
//! intervals plus the jitter behind. The table is the viewer's position
//! error against the exact simulation at the time it shows, over every body.
//!
//! `cargo run --release -p lockstep-snapshot --example interpolation [LOG] [FRAMES]`
#![allow(clippy::float_arithmetic)] // the table's statistics

use lockstep_fx::{Canonical, Fx, Rng, Vec3};
use lockstep_games::cubes::Cubes;
use lockstep_sim::replay;
use lockstep_sim::{Engine, EngineSettings, Game};
use lockstep_snapshot::interpolate::{Curve, Interpolator, playout_delay_micros};
use lockstep_snapshot::{Bodies, Bounds, QuantBody};

const TICK: u64 = 16_667;
const LATENCY: u64 = 50_000;
const JITTER_FRAMES: u64 = 2;
const LOSS_PERCENT: u32 = 5;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/replays/cubes-2p.log"
        )
        .to_string()
    });
    let frames: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(600);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let log = replay::read::<<Cubes as Game>::Input>(&bytes).expect("a cubes log");
    let header = log.header();
    let config = <Cubes as Game>::Config::from_snapshot(&header.config).expect("its settings");
    let game = Cubes::new(&config, &header.setup).expect("its match");
    let settings = EngineSettings {
        checksum_history: 0,
        snapshot_interval: 0,
        snapshots_kept: 0,
    };
    let mut engine = Engine::new(game, settings);
    let bounds = Bounds::cubes();
    // The exact positions and the quantized snapshot of every frame.
    let frames = frames.min(log.frames());
    let mut truth: Vec<Vec<Vec3>> = Vec::new();
    let mut snaps: Vec<Vec<QuantBody>> = Vec::new();
    for f in 0..frames {
        let inputs = log.inputs(f).expect("logged inputs").to_vec();
        engine.advance(&inputs);
        let bodies: Vec<_> = (0..engine.game().body_slots())
            .filter_map(|s| engine.game().body(s))
            .map(|(state, _)| (state.position, QuantBody::new(&state, &bounds)))
            .collect();
        truth.push(bodies.iter().map(|(p, _)| *p).collect());
        snaps.push(bodies.iter().map(|(_, q)| *q).collect());
    }
    println!(
        "interpolation error over {frames} frames of {} ({} bodies): {} ms latency, ±{JITTER_FRAMES} frames jitter, {LOSS_PERCENT}% loss",
        path.rsplit('/').next().unwrap_or(&path),
        truth.first().map_or(0, Vec::len),
        LATENCY / 1000
    );
    println!(
        "{:<8} {:<8} {:>10} {:>12} {:>12} {:>10}",
        "rate", "curve", "delay ms", "mean mm", "max mm", "shown"
    );
    for hz in [10u64, 30, 60] {
        let every = (60 / hz) as u32;
        for curve in [Curve::Linear, Curve::Hermite] {
            let (mean, max, shown, delay) = run(&truth, &snaps, &bounds, every, curve);
            println!(
                "{:<8} {:<8} {:>10} {:>12.2} {:>12.2} {:>10}",
                format!("{hz} Hz"),
                format!("{curve:?}"),
                delay / 1000,
                mean,
                max,
                shown
            );
        }
    }
}

/// Plays the link and the viewer: mean and max error (mm), samples shown,
/// and the playout delay used.
fn run(
    truth: &[Vec<Vec3>],
    snaps: &[Vec<QuantBody>],
    bounds: &Bounds,
    every: u32,
    curve: Curve,
) -> (f64, f64, u64, u64) {
    let mut rng = Rng::new(u64::from(every), 77);
    // (arrival µs, frame)
    let mut wire: Vec<(u64, u32)> = Vec::new();
    for f in (0..snaps.len() as u32).step_by(every as usize) {
        if rng.below(100) < LOSS_PERCENT {
            continue;
        }
        let jitter = u64::from(rng.below((2 * JITTER_FRAMES * TICK) as u32 + 1));
        let arrival = u64::from(f) * TICK + LATENCY - JITTER_FRAMES * TICK + jitter;
        wire.push((arrival, f));
    }
    wire.sort();
    let delay = playout_delay_micros(u64::from(every) * TICK, JITTER_FRAMES * TICK);
    // Shown `LATENCY + delay` behind, rounded up to a whole frame.
    let behind = (LATENCY + delay).div_ceil(TICK);
    let mut view = Interpolator::new(*bounds, TICK, curve, 250_000);
    let mut next = 0;
    let (mut sum, mut max, mut n, mut shown) = (0.0f64, 0.0f64, 0u64, 0u64);
    for now_frame in 0..snaps.len() as u64 {
        let now = now_frame * TICK;
        while next < wire.len() && wire[next].0 <= now {
            let f = wire[next].1;
            view.push(f, snaps[f as usize].clone());
            next += 1;
        }
        let Some(target) = now_frame.checked_sub(behind) else {
            continue;
        };
        let Some(poses) = view.sample(target * TICK) else {
            continue;
        };
        shown += 1;
        for (pose, exact) in poses.iter().zip(&truth[target as usize]) {
            let d = pose.position - *exact;
            let metres = |x: Fx| x.to_bits() as f64 / 4_294_967_296.0;
            let e =
                (metres(d.x).powi(2) + metres(d.y).powi(2) + metres(d.z).powi(2)).sqrt() * 1000.0;
            sum += e;
            max = max.max(e);
            n += 1;
        }
    }
    (sum / n.max(1) as f64, max, shown, behind * TICK)
}
