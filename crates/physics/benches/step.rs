//! Step time of the benchmark scenes (criterion). One "iteration" is one
//! `World::step`, so criterion's time per iteration is the ms/step figure.
//!
//! - `cubes-1000/settling`: frames 0..120 of a fresh block (bodies falling
//!   and landing, many new contacts);
//! - `cubes-1000/settled`: a step of the block once everything sleeps;
//! - `pyramid-15`: a step from frame 60 on (sleeping off, 1 240 contacts
//!   stacks);
//! - `many-pyramids/awake`: frames 0..60; `many-pyramids/asleep`: once asleep.
//!
//! Run: `cargo bench -p lockstep-physics --bench step`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep_physics::{World, scenes};

/// Times `frames` steps starting at frame `from` of a freshly built scene,
/// as many times as criterion asks, and reports the time per step.
fn fresh_run(name: &str, from: u32, frames: u32) -> impl FnMut(u64) -> Duration {
    let scene = scenes::by_name(name).unwrap();
    let mut start = scene.build();
    for _ in 0..from {
        start.step();
    }
    let saved = start.save();
    move |iters| {
        let mut total = Duration::ZERO;
        let mut done = 0;
        while done < iters {
            let mut world = World::decode(&saved).unwrap();
            let n = u64::from(frames).min(iters - done);
            let t = Instant::now();
            for _ in 0..n {
                world.step();
            }
            total += t.elapsed();
            black_box(world.frame());
            done += n;
        }
        total
    }
}

/// Times steps of one world that keeps running (a steady state).
fn steady(name: &str, warmup: u32) -> impl FnMut(u64) -> Duration {
    let scene = scenes::by_name(name).unwrap();
    let mut world = scene.build();
    for _ in 0..warmup {
        world.step();
    }
    move |iters| {
        let t = Instant::now();
        for _ in 0..iters {
            world.step();
        }
        t.elapsed()
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("step");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("cubes-1000/settling", |b| {
        b.iter_custom(fresh_run("cubes-1000", 0, 120))
    });
    g.bench_function("cubes-1000/settled", |b| {
        b.iter_custom(steady("cubes-1000", 400))
    });
    g.bench_function("pyramid-15", |b| b.iter_custom(steady("pyramid-15", 60)));
    g.bench_function("many-pyramids/awake", |b| {
        b.iter_custom(fresh_run("many-pyramids", 0, 60))
    });
    g.bench_function("many-pyramids/asleep", |b| {
        b.iter_custom(steady("many-pyramids", 400))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
