#![allow(clippy::float_arithmetic)] // a report: floats only format the timings
//! Prints a table of the benchmark scenes: ms/step (median of 3 runs), when
//! everything sleeps, contacts, and bytes of canonical state per body.
//!
//! Run: `cargo run --release -p lockstep-physics --example scene-table [--no-shuffle] [--runs N] [--seeds N] [--set NAME=VALUE]... [SCENE...]`.
//! - `--no-shuffle` solves constraints in pair order instead of the per-frame
//!   shuffled order, to compare the two.
//! - `--seeds N` steps each scene once more for every shuffle seed `0..N`
//!   until it sleeps, and the `asleep@` column gives the median frame and
//!   the range: when a scene falls asleep is chaotic (one column of cubes
//!   that sways keeps it awake), so one seed says little about a change.
//! - `--set NAME=VALUE` changes one of the scenes' settings (`substeps`,
//!   `iterations`, `relax-iterations`, `contact-hertz`, `damping-ratio`,
//!   `arm-turn`, `sleep-speed`, `sleep-frames`), to measure what a setting
//!   does to sleeping and to tall stacks before changing a default.
//!
//! Timing uses the wall clock: this is a report, not part of the simulation.

use std::time::Instant;

use lockstep_fx::Fx;
use lockstep_physics::{BodyKind, WorldSettings, scenes};

/// Ends the report with a message for a bad argument.
fn refuse(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2);
}

/// Takes `flag N` (a positive count) out of `args`, if given.
fn count_flag(args: &mut Vec<String>, flag: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == flag)?;
    let n = args
        .get(i + 1)
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| refuse(&format!("{flag} needs a positive number")));
    args.drain(i..i + 2);
    Some(n)
}

/// Applies one `NAME=VALUE` to `s`.
fn set(s: &mut WorldSettings, assignment: &str) -> Result<(), String> {
    let (name, value) = assignment
        .split_once('=')
        .ok_or_else(|| format!("--set wants NAME=VALUE, not `{assignment}`"))?;
    let fx = || {
        value
            .parse::<Fx>()
            .map_err(|e| format!("--set {name}: `{value}`: {e}"))
    };
    let small = || {
        value
            .parse::<u8>()
            .map_err(|e| format!("--set {name}: `{value}`: {e}"))
    };
    match name {
        "substeps" => s.substeps = small()?.max(1),
        "iterations" => s.iterations = small()?,
        "relax-iterations" => s.relax_iterations = small()?,
        "contact-hertz" => s.contact_hertz = fx()?,
        "damping-ratio" => s.contact_damping_ratio = fx()?,
        "arm-turn" => s.arm_turn = fx()?,
        "sleep-speed" => s.sleep_speed = fx()?,
        "sleep-frames" => {
            s.sleep_frames = value
                .parse()
                .map_err(|e| format!("--set {name}: `{value}`: {e}"))?;
        }
        _ => return Err(format!("--set: no setting `{name}`")),
    }
    Ok(())
}

/// The frame after which every body of `scene` sleeps with shuffle seed
/// `seed`, if it does within the scene's frames (never, when the scene
/// keeps its bodies awake).
fn asleep_with_seed(scene: &scenes::Scene, seed: u64) -> Option<u64> {
    if !scene.settings.sleeping {
        return None;
    }
    let mut scene = scene.clone();
    scene.settings.seed = seed;
    let mut world = scene.build();
    (0..scene.frames).find_map(|_| {
        world.step();
        world.all_asleep().then(|| world.frame())
    })
}

/// `median (lowest–highest)` of the seeds' asleep frames; `-` for a seed
/// that never slept, which counts as later than any that did.
fn seeds_column(frames: &[Option<u64>]) -> String {
    if frames.iter().all(Option::is_none) {
        return "-".to_string();
    }
    let mut sorted = frames.to_vec();
    sorted.sort_by_key(|f| f.unwrap_or(u64::MAX));
    let show = |f: Option<u64>| f.map_or("-".to_string(), |f| f.to_string());
    format!(
        "{} ({}–{})",
        show(sorted[sorted.len() / 2]),
        show(sorted[0]),
        show(sorted[sorted.len() - 1])
    )
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let no_shuffle = args.iter().any(|a| a == "--no-shuffle");
    args.retain(|a| a != "--no-shuffle");
    let runs_wanted = count_flag(&mut args, "--runs").unwrap_or(3);
    let seeds = count_flag(&mut args, "--seeds");
    let mut assignments = Vec::new();
    while let Some(i) = args.iter().position(|a| a == "--set") {
        let Some(a) = args.get(i + 1).cloned() else {
            refuse("--set needs NAME=VALUE");
        };
        set(&mut WorldSettings::default(), &a).unwrap_or_else(|e| refuse(&e));
        assignments.push(a);
        args.drain(i..i + 2);
    }
    if let Some(a) = args.iter().find(|a| a.starts_with("--")) {
        refuse(&format!("unknown option `{a}`"));
    }
    let names: Vec<&str> = if args.is_empty() {
        scenes::NAMES.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    println!(
        "{:<14} {:>6} {:>6} {:>8} {:>8} {:>16} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "scene",
        "bodies",
        "frames",
        "ms/step",
        "max ms",
        if seeds.is_some() {
            "asleep@ seeds"
        } else {
            "asleep@"
        },
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
        for a in &assignments {
            set(&mut scene.settings, a).unwrap_or_else(|e| refuse(&e));
        }
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
        let asleep = match seeds {
            Some(n) => seeds_column(
                &(0..n as u64)
                    .map(|seed| asleep_with_seed(&scene, seed))
                    .collect::<Vec<_>>(),
            ),
            None => asleep_at.map_or("-".to_string(), |f| f.to_string()),
        };
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
            "{:<14} {:>6} {:>6} {:>8.3} {:>8.3} {:>16} {:>8} {:>10.1} {:>9.2} {:>10} {:>10}",
            name,
            dynamic,
            scene.frames,
            runs[runs.len() / 2] as f64 / 1000.0,
            worst as f64 / 1000.0,
            asleep,
            world.contact_count(),
            top,
            pen,
            body_bytes / n,
            total / n,
        );
    }
}
