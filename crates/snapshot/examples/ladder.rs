//! The compression ladder on the recorded cube match
//! (`fixtures/replays/cubes-2p.log`, two bots pushing, blowing and rolling
//! up 900 cubes at 60 Hz): bits per snapshot, step by step from the raw
//! state to the range-coded predicted codec, as kbit/s at one snapshot per
//! frame, with the average bits per coded body spent on its index,
//! position, orientation and the rest.
//!
//! Every delta step codes frame `f` against the quantized state of frame
//! `f − 6` (the newest snapshot a receiver 100 ms of round trip away would
//! have acked), or against the initial state for the first frames; the
//! predicted steps also see the acked snapshot before it (`f − 7`). A
//! second table shows the last three steps at other round trips.
//!
//! `cargo run --release -p lockstep-snapshot --example ladder [LOG] [FRAMES]`
#![allow(clippy::float_arithmetic)] // the table's averages

use std::collections::VecDeque;

mod fixture;

use lockstep_snapshot::delta;
use lockstep_snapshot::{Bodies, QuantBody, bodies};
use lockstep_snapshot::{Breakdown, Level, Reference};

/// Frames between a snapshot and the baseline it is coded against.
const ACK_LAG: usize = 6;
/// Other ack lags for the second table.
const LAGS: [usize; 5] = [1, 2, 3, 6, 12];

/// One row's running totals.
#[derive(Default, Clone, Copy)]
struct Row {
    parts: Breakdown,
    bytes: u64,
}

fn reference<'a>(history: &'a VecDeque<Vec<QuantBody>>, lag: usize) -> Reference<'a> {
    // `history.back()` is the current frame; the initial state is first.
    let newest = history.len() - 1;
    let base = newest.saturating_sub(lag);
    let previous = base.checked_sub(1).map(|p| (history[p].as_slice(), 1));
    Reference {
        base: &history[base],
        base_age: (newest - base) as u32,
        previous: if newest - base == lag { previous } else { None },
        models: None,
    }
}

fn main() {
    let fixture = fixture::Fixture::from_args(u32::MAX);
    let mut engine = fixture.engine();
    let bounds = engine.game().snapshot_bounds();
    let positional = bounds.positional();
    let frames = fixture.inputs.len() as u32;
    let depth = LAGS.iter().max().copied().unwrap_or(ACK_LAG) + 2;
    let mut history: VecDeque<Vec<QuantBody>> = VecDeque::new();
    let mut viewed: VecDeque<Vec<QuantBody>> = VecDeque::new();
    history.push_back(bodies::quantize(engine.game(), &bounds));
    viewed.push_back(bodies::quantize(engine.game(), &positional));
    let (mut raw, mut at_rest_bits, mut smallest) = (0u64, 0u64, 0u64);
    let mut levels = [Row::default(); 6];
    let mut by_lag = [[Row::default(); 3]; LAGS.len()];
    let mut bodies = 0usize;
    for inputs in &fixture.inputs {
        engine.advance(inputs);
        let g = engine.game();
        let current = bodies::quantize(g, &bounds);
        bodies = current.len();
        let n = current.len() as u64;
        let moving = current.iter().filter(|b| !b.at_rest).count() as u64;
        // Position, orientation and linear velocity as raw 64-bit Fx.
        raw += n * (3 + 4 + 3) * 64;
        // An at-rest bit; resting bodies send no velocity.
        at_rest_bits += n * (1 + (3 + 4) * 64) + moving * 3 * 64;
        // Smallest-three orientation (2 + 3 × 9 bits) instead of 4 × 64.
        smallest += n * (1 + 3 * 64 + 2 + 27) + moving * 3 * 64;
        history.push_back(current);
        viewed.push_back(bodies::quantize(g, &positional));
        for (slot, level) in levels
            .iter_mut()
            .zip([Level::Absolute, Level::Delta, Level::Relative])
        {
            let r = reference(&history, ACK_LAG);
            slot.parts
                .add(&delta::measure(level, &r, history.back().unwrap(), &bounds));
        }
        // The viewer interpolates: no velocity at all.
        for (i, level) in [Level::Relative, Level::Predicted, Level::RangeCoded]
            .into_iter()
            .enumerate()
        {
            for (lag_row, lag) in by_lag.iter_mut().zip(LAGS) {
                let r = reference(&viewed, lag);
                let cur = viewed.back().unwrap();
                let row = &mut lag_row[i];
                row.parts.add(&delta::measure(level, &r, cur, &positional));
                if level == Level::RangeCoded {
                    row.bytes += delta::encode(level, &r, cur, &positional).0.len() as u64;
                }
                if lag == ACK_LAG {
                    levels[3 + i] = *row;
                }
            }
        }
        if history.len() > depth {
            history.pop_front();
            viewed.pop_front();
        }
    }
    let frames_f = f64::from(frames.max(1));
    let kbps = |bits: u64| bits as f64 / frames_f * 60.0 / 1000.0;
    let row_bits = |r: &Row| {
        if r.bytes > 0 {
            r.bytes * 8
        } else {
            r.parts.total()
        }
    };
    println!(
        "compression ladder: {bodies} bodies, {frames} frames of {} at 60 Hz, baseline {ACK_LAG} frames back",
        fixture.name
    );
    println!(
        "{:<54} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "step", "kbit/s", "bodies/f", "index b", "pos b", "orient b", "other b"
    );
    let plain = |name: &str, bits: u64| {
        println!("{name:<54} {:>10.1}", kbps(bits));
    };
    plain("raw: position, orientation, velocity as 64-bit Fx", raw);
    plain("+ at-rest bit, no velocity at rest", at_rest_bits);
    plain("+ smallest-three orientation (2 + 3 × 9 bits)", smallest);
    let names = [
        "+ bounded position (512/m), 11-bit velocity",
        "+ delta: changed bodies only (cheaper index)",
        "+ relative position/orientation, unchanged bits",
        "+ no velocity (the viewer interpolates)",
        "+ predicted from the acked motion, magnitude classes",
        "+ adaptive binary range coder, context models",
    ];
    for (name, r) in names.iter().zip(&levels) {
        let b = &r.parts;
        let per = |bits: u64| bits as f64 / (b.bodies.max(1)) as f64;
        println!(
            "{name:<54} {:>10.1} {:>9.1} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            kbps(row_bits(r)),
            b.bodies as f64 / frames_f,
            per(b.index_bits),
            per(b.position_bits),
            per(b.orientation_bits),
            per(b.other_bits),
        );
    }
    println!();
    println!("the last three steps (no velocity) by ack lag, kbit/s:");
    println!(
        "{:<22} {:>10} {:>10} {:>12}",
        "baseline", "relative", "predicted", "range-coded"
    );
    for (row, lag) in by_lag.iter().zip(LAGS) {
        println!(
            "{:<22} {:>10.1} {:>10.1} {:>12.1}",
            format!("{lag} frames ({} ms)", lag * 1000 / 60),
            kbps(row_bits(&row[0])),
            kbps(row_bits(&row[1])),
            kbps(row_bits(&row[2])),
        );
    }
}
