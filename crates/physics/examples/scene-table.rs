#![allow(clippy::float_arithmetic)] // a report: floats only format the timings
//! Prints a table of the benchmark scenes: ms/step (median of 3 runs), when
//! everything sleeps, contacts, and bytes of canonical state per body.
//!
//! Run: `cargo run --release -p lockstep-physics --example scene-table [--no-shuffle] [--runs N] [SCENE...]`.
//! `--no-shuffle` solves constraints in pair order instead of the per-frame
//! shuffled order, to compare the two.
//! Timing uses the wall clock: this is a report, not part of the simulation.

use std::time::Instant;

use lockstep_physics::{BodyKind, scenes};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let no_shuffle = args.iter().any(|a| a == "--no-shuffle");
    args.retain(|a| a != "--no-shuffle");
    let mut runs_wanted = 3usize;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs_wanted = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                eprintln!("--runs needs a positive number");
                std::process::exit(2);
            });
        args.drain(i..i + 2);
    }
    let names: Vec<&str> = if args.is_empty() {
        scenes::NAMES.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    println!(
        "{:<14} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "scene",
        "bodies",
        "frames",
        "ms/step",
        "max ms",
        "asleep@",
        "contacts",
        "top Δ mm",
        "pen mm",
        "bytes/body",
        "+contacts"
    );
    for name in names {
        let Some(mut scene) = scenes::by_name(name) else {
            eprintln!(
                "unknown scene `{name}`; known: {}",
                scenes::NAMES.join(", ")
            );
            std::process::exit(2);
        };
        scene.settings.shuffle = !no_shuffle;
        let mut runs = Vec::new();
        let mut worst = 0u128;
        let mut asleep_at = None;
        let mut world = scene.build();
        for _ in 0..runs_wanted {
            world = scene.build();
            let start = Instant::now();
            for _ in 0..scene.frames {
                let t = Instant::now();
                world.step();
                worst = worst.max(t.elapsed().as_micros());
                if asleep_at.is_none() && world.settings().sleeping && world.all_asleep() {
                    asleep_at = Some(world.frame());
                }
            }
            runs.push(start.elapsed().as_micros() / u128::from(scene.frames));
        }
        runs.sort_unstable();
        let dynamic = world
            .bodies()
            .filter(|(_, b)| b.kind() == BodyKind::Dynamic)
            .count();
        let total = world.save().len();
        // Bytes without the contact cache: the same world's bodies alone.
        let mut bare = lockstep_physics::World::new(*world.settings());
        for b in &scene.bodies {
            bare.add_body(b.clone()).unwrap();
        }
        let body_bytes = bare.save().len();
        let n = scene.bodies.len();
        // How far the last body (a pyramid's top) moved, and the deepest overlap now.
        let last = scene
            .bodies
            .last()
            .map_or(Default::default(), |b| b.position);
        let top = world.bodies().last().map_or(0.0, |(_, b)| {
            (b.position() - last).length().to_f64_lossy() * 1000.0
        });
        let pen = world
            .contacts()
            .flat_map(|c| c.points.iter().map(|p| -p.separation.to_f64_lossy()))
            .fold(0.0, f64::max)
            * 1000.0;
        println!(
            "{:<14} {:>6} {:>6} {:>8.3} {:>8.3} {:>8} {:>8} {:>10.1} {:>9.2} {:>10} {:>10}",
            name,
            dynamic,
            scene.frames,
            runs[runs.len() / 2] as f64 / 1000.0,
            worst as f64 / 1000.0,
            asleep_at.map_or("-".to_string(), |f| f.to_string()),
            world.contact_count(),
            top,
            pen,
            body_bytes / n,
            total / n,
        );
    }
}
