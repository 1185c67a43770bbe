//! Interpolation quality on the recorded cube match: a sender streams
//! range-coded snapshots of the scene at 10, 30 or 60 Hz against the
//! baselines the viewer acked; each snapshot and each ack crosses a link
//! with 50 ms of latency, ±2 frames of jitter and 5% loss; the viewer's
//! clock learns the send interval and the jitter from what arrives and
//! shows the scene three send intervals plus the jitter behind the
//! earliest arrivals (extrapolation: only the jitter behind, with the
//! jumps smoothed). The table is the viewer's position error against the
//! exact simulation at the time it shows, over every body and frame, and
//! what the stream cost.
//!
//! `cargo run --release -p lockstep-snapshot --example interpolation [LOG] [FRAMES]`
#![allow(clippy::float_arithmetic)] // the table's statistics

mod fixture;

use fixture::{Fixture, JITTER_FRAMES, LATENCY, TICK, link_delay, millimetres};
use lockstep_fx::{Rng, Vec3};
use lockstep_snapshot::interpolate::{Interpolator, ViewClock, ViewMode};
use lockstep_snapshot::smoothing::{Smoother, Smoothing};
use lockstep_snapshot::stream::{SnapshotReceiver, SnapshotSender};
use lockstep_snapshot::{Bodies, Bounds, Level, QuantBody, bodies};

const LOSS_PERCENT: u32 = 5;

/// The recorded match, quantized both ways, with the exact positions.
struct Recording {
    truth: Vec<Vec<Vec3>>,
    with_velocity: Vec<Vec<QuantBody>>,
    positions_only: Vec<Vec<QuantBody>>,
    bounds: Bounds,
}

fn main() {
    let fixture = Fixture::from_args(1200);
    let rec = record(&fixture);
    println!(
        "interpolation error over {} frames of {} ({} bodies): {} ms latency, ±{JITTER_FRAMES} frames jitter, {LOSS_PERCENT}% loss both ways",
        rec.truth.len() - 1,
        fixture.name,
        rec.truth[0].len(),
        LATENCY / 1000
    );
    println!(
        "{:<8} {:<12} {:>9} {:>9} {:>10} {:>10} {:>9}",
        "rate", "mode", "behind ms", "jitter", "mean mm", "max mm", "kbit/s"
    );
    for hz in [10u64, 30, 60] {
        for mode in [ViewMode::Linear, ViewMode::Hermite, ViewMode::Extrapolate] {
            let r = run(&rec, (60 / hz) as u32, mode);
            println!(
                "{:<8} {:<12} {:>9.0} {:>9.0} {:>10.2} {:>10.1} {:>9.1}",
                format!("{hz} Hz"),
                format!("{mode:?}"),
                r.delay_ms,
                r.jitter_ms,
                r.mean_mm,
                r.max_mm,
                r.kbps
            );
        }
    }
}

fn record(fixture: &Fixture) -> Recording {
    let mut engine = fixture.engine();
    let bounds = engine.game().snapshot_bounds();
    let mut rec = Recording {
        truth: Vec::new(),
        with_velocity: Vec::new(),
        positions_only: Vec::new(),
        bounds,
    };
    // Frame 0 of the recording is the initial state, frame f + 1 the state
    // after stepping frame f.
    for f in 0..=fixture.inputs.len() {
        if f > 0 {
            engine.advance(&fixture.inputs[f - 1]);
        }
        let g = engine.game();
        rec.truth.push(
            (0..g.body_slots())
                .filter_map(|s| g.body(s))
                .map(|(b, _)| b.position)
                .collect(),
        );
        rec.with_velocity.push(bodies::quantize(g, &bounds));
        rec.positions_only
            .push(bodies::quantize(g, &bounds.positional()));
    }
    rec
}

struct Outcome {
    delay_ms: f64,
    jitter_ms: f64,
    mean_mm: f64,
    max_mm: f64,
    kbps: f64,
}

/// Plays the stream and the viewer for one rate and mode.
fn run(rec: &Recording, every: u32, mode: ViewMode) -> Outcome {
    let (snaps, bounds) = if mode.needs_velocity() {
        (&rec.with_velocity, rec.bounds)
    } else {
        (&rec.positions_only, rec.bounds.positional())
    };
    let mut rng = Rng::new(u64::from(every) * 10 + mode as u64, 77);
    let mut sender = SnapshotSender::new(snaps[0].clone(), bounds, Level::RangeCoded);
    let mut receiver = SnapshotReceiver::new(snaps[0].clone(), bounds);
    let mut view = Interpolator::new(bounds, TICK, mode, 250_000);
    let mut clock = ViewClock::new(TICK, 120);
    let mut smoother = Smoother::new(Smoothing::default(), snaps[0].len());
    // In flight: (arrival µs, frame, payload) and acks (arrival µs, frame).
    let mut wire: Vec<(u64, u32, Vec<u8>)> = Vec::new();
    let mut acks: Vec<(u64, u32)> = Vec::new();
    let (mut sum, mut max, mut n, mut bytes) = (0.0f64, 0.0f64, 0u64, 0u64);
    let (mut delay_sum, mut jitter_sum, mut shown) = (0u64, 0u64, 0u64);
    let mut last_view: Option<u64> = None;
    for now_frame in 1..snaps.len() as u32 {
        let now = u64::from(now_frame) * TICK;
        // The sender takes the acks that arrived, then sends its snapshot.
        acks.retain(|&(at, f)| {
            if at <= now {
                sender.on_ack(f);
            }
            at > now
        });
        if now_frame % every == 0 {
            let (payload, sent) = sender.encode(now_frame, snaps[now_frame as usize].clone());
            bytes += sent.bytes;
            if rng.below(100) >= LOSS_PERCENT {
                wire.push((now + link_delay(&mut rng), now_frame, payload));
            }
        }
        // The viewer takes what arrived.
        wire.sort_by_key(|w| (w.0, w.1));
        let before = last_view.and_then(|t| view.sample(t));
        let arrived: Vec<_> = wire.iter().filter(|w| w.0 <= now).cloned().collect();
        wire.retain(|w| w.0 > now);
        for (at, frame, payload) in arrived {
            let Ok(bodies) = receiver.decode(frame, &payload) else {
                continue;
            };
            clock.on_snapshot(frame, at);
            view.push(frame, bodies);
            if rng.below(100) >= LOSS_PERCENT {
                acks.push((now + link_delay(&mut rng), frame));
            }
        }
        if mode == ViewMode::Extrapolate {
            // A new snapshot moves the extrapolation: draw the jump smoothed.
            if let (Some(t), Some(before)) = (last_view, before) {
                if let Some(after) = view.sample(t) {
                    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                        if b != a {
                            smoother.correct(i, b, a);
                        }
                    }
                }
            }
            smoother.decay();
        }
        let Some(t) = clock.view_time(now, mode) else {
            continue;
        };
        let target = (t / TICK) as usize;
        if target == 0 || target >= rec.truth.len() {
            continue;
        }
        let view_t = target as u64 * TICK;
        last_view = Some(view_t);
        let Some(poses) = view.sample(view_t) else {
            continue;
        };
        shown += 1;
        delay_sum += now - view_t;
        jitter_sum += clock.jitter_micros();
        for (i, (pose, exact)) in poses.iter().zip(&rec.truth[target]).enumerate() {
            let drawn = if mode == ViewMode::Extrapolate {
                smoother.shown(i, pose)
            } else {
                *pose
            };
            let e = millimetres(drawn.position - *exact);
            sum += e;
            max = max.max(e);
            n += 1;
        }
    }
    let seconds = (snaps.len() - 1) as f64 * TICK as f64 / 1e6;
    Outcome {
        delay_ms: delay_sum as f64 / shown.max(1) as f64 / 1000.0,
        jitter_ms: jitter_sum as f64 / shown.max(1) as f64 / 1000.0,
        mean_mm: sum / n.max(1) as f64,
        max_mm: max,
        kbps: bytes as f64 * 8.0 / seconds / 1000.0,
    }
}
