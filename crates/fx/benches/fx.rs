//! ns/op of the `Fx` primitives beside their f32/f64 equivalents and the two
//! fixed-point crates a fixed-point engine would otherwise use, `fixed`
//! (I32F32 arithmetic and sqrt) and `cordic` (CORDIC sin_cos and atan2 on
//! I32F32), measured in the same run, and checksum throughput in bytes/s.
//!
//! `cordic` runs inside its safe domain only: its sin_cos reduces the angle
//! by subtracting π in a loop and its atan2 divides `y / x` in I32F32, so
//! large angles are slow and large ratios overflow (a panic in a debug
//! build, a wrong result in release); the angle inputs here are within
//! ±8 rad and the atan2 inputs keep |y/x| below 2^20.
//!
//! Each benchmark maps a 1 024-element input array, so the figures are
//! throughput per element (criterion's `thrpt`, or time / 1 024), not the
//! latency of one isolated call; `fork_join` times the handoff of a job to
//! a helper thread. Run with
//! `cargo bench -p lockstep-fx --bench fx`; `benches/fx-table` turns the
//! results into the ns/op table.
#![allow(clippy::float_arithmetic, missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fixed::types::I32F32;
use lockstep_fx::{FrameHasher, Fx, Quat, Rng, StateWriter, Vec3};
use std::hint::black_box;

const N: usize = 1024;

fn inputs(seed: u64, lo: i64, hi: i64) -> Vec<Fx> {
    let mut rng = Rng::new(seed, 0);
    (0..N)
        .map(|_| {
            let span = (hi - lo) as u64;
            Fx::from_bits(lo + (rng.next_u64() % span) as i64)
        })
        .collect()
}

fn f32s(v: &[Fx]) -> Vec<f32> {
    v.iter().map(|x| x.to_f64_lossy() as f32).collect()
}

fn f64s(v: &[Fx]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64_lossy()).collect()
}

fn fixeds(v: &[Fx]) -> Vec<I32F32> {
    v.iter().map(|x| I32F32::from_bits(x.to_bits())).collect()
}

/// Benchmarks `op` over the inputs, storing results so nothing is elided.
macro_rules! bench_map {
    ($group:expr, $name:expr, $out:ty, $input:expr, |$x:pat_param| $body:expr) => {{
        let input = $input;
        let mut out: Vec<$out> = Vec::with_capacity(N);
        $group.bench_function($name, |b| {
            b.iter(|| {
                out.clear();
                out.extend(black_box(&input).iter().map(|$x| $body));
                black_box(&out);
            })
        });
    }};
}

fn scalar(c: &mut Criterion) {
    let a = inputs(1, -(100 << 32), 100 << 32);
    let b = inputs(2, -(100 << 32), 100 << 32);
    let pos = inputs(3, 1, 1 << 62);
    let angle = inputs(4, -(8 << 32), 8 << 32);
    let abc: Vec<(Fx, Fx, Fx)> = a.iter().zip(&b).map(|(x, y)| (*x, *y, *x)).collect();
    let abc32: Vec<(f32, f32, f32)> = f32s(&a)
        .into_iter()
        .zip(f32s(&b))
        .map(|(x, y)| (x, y, x))
        .collect();
    let abc64: Vec<(f64, f64, f64)> = f64s(&a)
        .into_iter()
        .zip(f64s(&b))
        .map(|(x, y)| (x, y, x))
        .collect();
    let abcfix: Vec<(I32F32, I32F32, I32F32)> = fixeds(&a)
        .into_iter()
        .zip(fixeds(&b))
        .map(|(x, y)| (x, y, x))
        .collect();

    let mut g = c.benchmark_group("mul_add");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Fx, abc.clone(), |&(x, y, z)| x * y + z);
    bench_map!(g, "fixed", I32F32, abcfix.clone(), |&(x, y, z)| x
        .saturating_mul(y)
        .saturating_add(z));
    bench_map!(g, "f32", f32, abc32.clone(), |&(x, y, z)| x * y + z);
    bench_map!(g, "f64", f64, abc64.clone(), |&(x, y, z)| x * y + z);
    g.finish();

    let mut g = c.benchmark_group("div");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Fx, abc.clone(), |&(x, y, _)| x / y);
    bench_map!(g, "fixed", I32F32, abcfix.clone(), |&(x, y, _)| x
        .saturating_div(y));
    bench_map!(g, "f32", f32, abc32.clone(), |&(x, y, _)| x / y);
    bench_map!(g, "f64", f64, abc64.clone(), |&(x, y, _)| x / y);
    g.finish();

    let mut g = c.benchmark_group("sqrt");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Fx, pos.clone(), |x| x.sqrt());
    // `fixed`'s sqrt over the same full range (it handles values >= 2^30).
    bench_map!(g, "fixed", I32F32, fixeds(&pos), |x| x.sqrt());
    bench_map!(g, "f32", f32, f32s(&pos), |x| x.sqrt());
    bench_map!(g, "f64", f64, f64s(&pos), |x| x.sqrt());
    g.finish();

    let mut g = c.benchmark_group("sin_cos");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", (Fx, Fx), angle.clone(), |x| x.sin_cos());
    bench_map!(g, "cordic", (I32F32, I32F32), fixeds(&angle), |x| {
        cordic::sin_cos(*x)
    });
    bench_map!(g, "f32", (f32, f32), f32s(&angle), |x| x.sin_cos());
    bench_map!(g, "f64", (f64, f64), f64s(&angle), |x| x.sin_cos());
    g.finish();

    let mut g = c.benchmark_group("atan2");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Fx, abc.clone(), |&(y, x, _)| y.atan2(x));
    let safe: Vec<(I32F32, I32F32)> = abcfix
        .iter()
        .map(|&(y, x, _)| {
            // Keep |y/x| < 2^20: cordic divides y by x in I32F32.
            let floor = I32F32::from_bits(1 << 20);
            let x = if x.abs() < floor { floor } else { x };
            (y, x)
        })
        .collect();
    bench_map!(g, "cordic", I32F32, safe, |&(y, x)| cordic::atan2(y, x));
    bench_map!(g, "f32", f32, abc32.clone(), |&(y, x, _)| y.atan2(x));
    bench_map!(g, "f64", f64, abc64.clone(), |&(y, x, _)| y.atan2(x));
    g.finish();
}

/// One isolated call per iteration with `black_box`ed operands, the usual
/// way per-call figures are quoted: includes the harness overhead, excludes
/// the auto-vectorisation a float loop gets over an array.
fn per_call(c: &mut Criterion) {
    let (a, b, k) = (Fx::lit("1.2345"), Fx::lit("-6.789"), Fx::lit("0.5"));
    let (a32, b32, k32) = (1.2345f32, -6.789f32, 0.5f32);
    let mut g = c.benchmark_group("call");
    g.bench_function("mul_add/fx", |bch| {
        bch.iter(|| black_box(a) * black_box(b) + black_box(k))
    });
    g.bench_function("mul_add/f32", |bch| {
        bch.iter(|| black_box(a32) * black_box(b32) + black_box(k32))
    });
    g.bench_function("sqrt/fx", |bch| bch.iter(|| black_box(a).sqrt()));
    g.bench_function("sqrt/f32", |bch| bch.iter(|| black_box(a32).sqrt()));
    g.bench_function("sin_cos/fx", |bch| bch.iter(|| black_box(b).sin_cos()));
    g.bench_function("sin_cos/f32", |bch| bch.iter(|| black_box(b32).sin_cos()));
    g.bench_function("atan2/fx", |bch| {
        bch.iter(|| black_box(a).atan2(black_box(b)))
    });
    g.bench_function("atan2/f32", |bch| {
        bch.iter(|| black_box(a32).atan2(black_box(b32)))
    });
    g.finish();
}

fn vectors(c: &mut Criterion) {
    let a = inputs(5, -(10 << 32), 10 << 32);
    let b = inputs(6, -(10 << 32), 10 << 32);
    let v: Vec<Vec3> = a
        .chunks(3)
        .zip(b.chunks(3))
        .flat_map(|(p, q)| {
            [
                Vec3::new(p[0], p[1 % p.len()], p[2 % p.len()]),
                Vec3::new(q[0], q[1 % q.len()], q[2 % q.len()]),
            ]
        })
        .take(N)
        .collect();
    let v32: Vec<[f32; 3]> = v
        .iter()
        .map(|v| v.to_array().map(|c| c.to_f64_lossy() as f32))
        .collect();
    let q: Vec<Quat> = v
        .iter()
        .zip(&a)
        .map(|(v, w)| Quat::from_wxyz(*w, v.x, v.y, v.z))
        .collect();
    let q32: Vec<[f32; 4]> = q
        .iter()
        .map(|q| [q.w, q.x, q.y, q.z].map(|c| c.to_f64_lossy() as f32))
        .collect();
    let unit_q: Vec<(Quat, Vec3)> = q.iter().map(|q| q.normalize()).zip(v.clone()).collect();
    let unit_q32: Vec<([f32; 4], [f32; 3])> =
        q32.iter().map(|q| norm4(*q)).zip(v32.clone()).collect();

    let mut g = c.benchmark_group("vec3_normalize");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Vec3, v.clone(), |x| x.normalize_or_zero());
    bench_map!(g, "f32", [f32; 3], v32.clone(), |x| norm3(*x));
    g.finish();

    let mut g = c.benchmark_group("quat_normalize");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Quat, q.clone(), |x| x.normalize());
    bench_map!(g, "f32", [f32; 4], q32.clone(), |x| norm4(*x));
    g.finish();

    let mut g = c.benchmark_group("quat_rotate");
    g.throughput(Throughput::Elements(N as u64));
    bench_map!(g, "fx", Vec3, unit_q, |(q, v)| q.rotate(*v));
    bench_map!(g, "f32", [f32; 3], unit_q32, |(q, v)| rotate32(*q, *v));
    g.finish();
}

fn norm3(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if l > 0.0 { v.map(|c| c / l) } else { [0.0; 3] }
}

fn norm4(q: [f32; 4]) -> [f32; 4] {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if l > 0.0 {
        q.map(|c| c / l)
    } else {
        [1.0, 0.0, 0.0, 0.0]
    }
}

fn cross32(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The same formula as `Quat::rotate`: v + w t + q × t, t = 2 q × v.
fn rotate32(q: [f32; 4], v: [f32; 3]) -> [f32; 3] {
    let u = [q[1], q[2], q[3]];
    let t = cross32(u, v).map(|c| 2.0 * c);
    let ut = cross32(u, t);
    [
        v[0] + q[0] * t[0] + ut[0],
        v[1] + q[0] * t[1] + ut[1],
        v[2] + q[0] * t[2] + ut[2],
    ]
}

fn checksum(c: &mut Criterion) {
    // A state of 64 Ki Fx values (512 KiB), written field by field as a game
    // state is, versus BLAKE3 of the same bytes in one call.
    let values = inputs(7, i64::MIN / 2, i64::MAX / 2);
    let state: Vec<Fx> = values.iter().cycle().take(64 * 1024).copied().collect();
    let mut bytes = StateWriter::buffer();
    for v in &state {
        bytes.write_fx(*v);
    }
    let bytes = bytes.into_inner();
    let mut g = c.benchmark_group("checksum");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function(BenchmarkId::new("state_writer", "512KiB"), |b| {
        b.iter(|| {
            let mut w = StateWriter::hasher();
            for v in black_box(&state) {
                w.write_fx(*v);
            }
            black_box(w.checksum())
        })
    });
    g.bench_function(BenchmarkId::new("blake3_slice", "512KiB"), |b| {
        b.iter(|| black_box(blake3::hash(black_box(&bytes))))
    });
    // The engine's per-frame hasher on the same state, written the same way:
    // unchanged since the frame before (a world asleep), and with one value
    // changed each time (a frame counter: one 16 KiB piece to rehash).
    let mut hasher = FrameHasher::new();
    g.bench_function(BenchmarkId::new("frame_hasher_unchanged", "512KiB"), |b| {
        b.iter(|| {
            black_box(hasher.checksum(|w| {
                for v in black_box(&state) {
                    w.write_fx(*v);
                }
            }))
        })
    });
    let mut tick = Fx::ZERO;
    g.bench_function(BenchmarkId::new("frame_hasher_one_change", "512KiB"), |b| {
        b.iter(|| {
            tick += Fx::ONE;
            black_box(hasher.checksum(|w| {
                w.write_fx(tick);
                for v in black_box(&state[1..]) {
                    w.write_fx(*v);
                }
            }))
        })
    });
    g.finish();

    // A 2 MiB state (the RTS at 8 × 1 024 units writes about 2.8 MB) that
    // changes in every leaf each frame, hashed on one and on two threads.
    let big: Vec<Fx> = values.iter().cycle().take(256 * 1024).copied().collect();
    let mut g = c.benchmark_group("checksum_all_changed");
    g.throughput(Throughput::Bytes(8 * big.len() as u64));
    for threads in [1, 2] {
        let mut hasher = FrameHasher::new();
        hasher.set_threads(threads);
        let mut tick = 0i64;
        g.bench_function(BenchmarkId::new("frame_hasher_threads", threads), |b| {
            b.iter(|| {
                tick += 1;
                black_box(hasher.checksum(|w| {
                    for v in black_box(&big) {
                        w.write_i64(v.to_bits() ^ tick);
                    }
                }))
            })
        });
    }
    g.finish();
}

fn fork_join(c: &mut Criterion) {
    // What sharing a piece of work costs: two jobs that each sum 1 024
    // numbers (well under a microsecond), one on the calling thread and one
    // on a helper, against both run in place. Calls come back to back, so
    // this is the handoff to a helper that is still waiting for work, as
    // between the shares of one physics step.
    let data: Vec<u64> = (0..2 * N as u64).collect();
    let mut g = c.benchmark_group("fork_join");
    g.bench_function("two_small_jobs", |b| {
        b.iter(|| {
            black_box(lockstep_fx::fork_join(
                black_box(&data).chunks(N).collect(),
                |chunk| chunk.iter().sum::<u64>(),
            ))
        })
    });
    g.bench_function("both_in_place", |b| {
        b.iter(|| {
            let sums: Vec<u64> = black_box(&data)
                .chunks(N)
                .map(|chunk| chunk.iter().sum::<u64>())
                .collect();
            black_box(sums)
        })
    });
    // The first share of a live frame: the helpers fell asleep during the
    // pause since the last frame (3 ms here; 16 at 60 Hz), and the call
    // wakes one. Two jobs of about 30 µs each; only the call is timed, so
    // against `two_jobs_in_place` this is what waking a helper costs the
    // first share of a frame. On a two-core virtual machine the wake-up
    // took longer than the job: 72 µs a call against 62 µs in place.
    let big: Vec<u64> = (0..2 * 32 * N as u64).collect();
    let share = |chunk: &[u64]| {
        (0..8).fold(0u64, |acc, _| {
            acc.wrapping_add(black_box(chunk).iter().sum::<u64>())
        })
    };
    g.bench_function("two_jobs_after_a_pause", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(std::time::Duration::from_millis(3));
                let t = std::time::Instant::now();
                black_box(lockstep_fx::fork_join(big.chunks(32 * N).collect(), share));
                total += t.elapsed();
            }
            total
        })
    });
    g.bench_function("two_jobs_in_place", |b| {
        b.iter(|| black_box(big.chunks(32 * N).map(share).collect::<Vec<u64>>()))
    });
    g.finish();
}

criterion_group!(benches, scalar, per_call, vectors, checksum, fork_join);
criterion_main!(benches);
