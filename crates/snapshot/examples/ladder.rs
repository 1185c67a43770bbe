//! The compression ladder on the recorded cube match
//! (`fixtures/replays/cubes-2p.log`, two bots pushing and rolling up 900
//! cubes at 60 Hz): bits per snapshot, step by step from the raw state to
//! the full codec, as kbit/s at one snapshot per frame.
//!
//! Every delta step codes frame `f` against the quantized state of frame
//! `f − 6` (the newest snapshot a receiver 100 ms away would have acked),
//! or against the initial state for the first frames.
//!
//! `cargo run --release -p lockstep-snapshot --example ladder [LOG] [FRAMES]`
#![allow(clippy::float_arithmetic)] // the table's averages

use lockstep_fx::Canonical;
use lockstep_fx::Fx;
use lockstep_games::cubes::Cubes;
use lockstep_sim::replay;
use lockstep_sim::{Engine, EngineSettings, Game};
use lockstep_snapshot::delta::{self, Breakdown, Level};
use lockstep_snapshot::{Bounds, QuantBody};

/// Frames between a snapshot and the baseline it is coded against.
const ACK_LAG: usize = 6;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/replays/cubes-2p.log"
        )
        .to_string()
    });
    let limit: Option<u32> = args.next().and_then(|a| a.parse().ok());
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
    let quantize = |g: &Cubes| -> Vec<QuantBody> {
        g.world()
            .bodies()
            .filter(|(_, b)| b.mass() > Fx::ZERO)
            .map(|(_, b)| {
                QuantBody::new(
                    b.position(),
                    b.orientation(),
                    b.linear_velocity(),
                    !b.is_awake(),
                    &bounds,
                )
            })
            .collect()
    };
    let frames = limit.unwrap_or(log.frames()).min(log.frames());
    let mut history = vec![quantize(engine.game())];
    let (mut raw, mut at_rest_bits, mut smallest) = (0u64, 0u64, 0u64);
    let mut levels = [Breakdown::default(); 4];
    let positional = Bounds {
        velocity_bits: 0,
        ..bounds
    };
    let mut bodies = 0usize;
    for f in 0..frames {
        let inputs = log.inputs(f).expect("logged inputs").to_vec();
        engine.advance(&inputs);
        let g = engine.game();
        let awake = g
            .world()
            .bodies()
            .filter(|(_, b)| b.mass() > Fx::ZERO)
            .map(|(_, b)| b.is_awake())
            .collect::<Vec<bool>>();
        bodies = awake.len();
        let moving = awake.iter().filter(|a| **a).count() as u64;
        let n = awake.len() as u64;
        // Position, orientation and linear velocity as raw 64-bit Fx.
        raw += n * (3 + 4 + 3) * 64;
        // An at-rest bit; resting bodies send no velocity.
        at_rest_bits += n * (1 + (3 + 4) * 64) + moving * 3 * 64;
        // Smallest-three orientation (2 + 3 × 9 bits) instead of 4 × 64.
        smallest += n * (1 + 3 * 64 + 2 + 27) + moving * 3 * 64;
        let current = quantize(g);
        let base = &history[history.len().saturating_sub(ACK_LAG)];
        for (slot, level) in levels
            .iter_mut()
            .zip([Level::Absolute, Level::Delta, Level::Relative])
        {
            slot.add(&delta::measure(level, base, &current, &bounds));
        }
        // The viewer interpolates: no velocity at all.
        let strip = |s: &[QuantBody]| -> Vec<QuantBody> {
            s.iter()
                .map(|b| QuantBody {
                    velocity: [0; 3],
                    ..*b
                })
                .collect()
        };
        levels[3].add(&delta::measure(
            Level::Relative,
            &strip(base),
            &strip(&current),
            &positional,
        ));
        history.push(current);
        if history.len() > ACK_LAG + 1 {
            history.remove(0);
        }
    }
    let frames_f = f64::from(frames.max(1));
    let kbps = |bits: u64| bits as f64 / frames_f * 60.0 / 1000.0;
    println!(
        "compression ladder: {} bodies, {frames} frames of {} at 60 Hz, baseline {ACK_LAG} frames back",
        bodies,
        path.rsplit('/').next().unwrap_or(&path)
    );
    println!(
        "{:<52} {:>12} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "step", "kbit/s", "bodies/f", "index b", "pos b", "orient b", "other b"
    );
    let row = |name: &str, bits: u64| {
        println!("{name:<52} {:>12.1}", kbps(bits));
    };
    row("raw: position, orientation, velocity as 64-bit Fx", raw);
    row("+ at-rest bit, no velocity at rest", at_rest_bits);
    row("+ smallest-three orientation (2 + 3 × 9 bits)", smallest);
    let names = [
        "+ bounded position (512/m), 11-bit velocity",
        "+ delta: changed bodies only (cheaper index)",
        "+ relative position/orientation, unchanged bits",
        "+ no velocity (the viewer interpolates)",
    ];
    for (name, b) in names.iter().zip(&levels) {
        let per = |bits: u64| bits as f64 / (b.bodies.max(1)) as f64;
        println!(
            "{name:<52} {:>12.1} {:>10.1} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            kbps(b.total()),
            b.bodies as f64 / frames_f,
            per(b.index_bits),
            per(b.position_bits),
            per(b.orientation_bits),
            per(b.other_bits),
        );
    }
}
