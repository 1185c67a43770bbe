//! `peer-bench`: times `lockstep-physics` against rapier3d on the same scenes,
//! in one process, alternating runs, and checks that both simulate the same
//! thing.
//!
//! ```text
//! peer-bench [--frames N] [--runs R] [--threads T] [--only ours|rapier] [--instructions] [scene ...]
//! ```
//!
//! `--instructions` adds each engine's instructions per step, counted by
//! running this tool again under valgrind's callgrind (see
//! [`instructions_per_step`]).
//!
//! This is a measuring tool, not a deterministic crate: floats and clocks are
//! fine here.

use std::process::{Command, ExitCode};
use std::time::Instant;

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_physics::scenes::{self, Scene};
use lockstep_physics::{BodyKind, Shape, World};
use rapier3d::geometry::PairContacts;
use rapier3d::prelude::{
    CoefficientCombineRule, ColliderBuilder, IntegrationParameters, PhysicsWorld, Pose,
    RigidBodyBuilder, RigidBodyHandle, Rotation, SharedShape, Vector,
};

const DEFAULT_SCENES: [&str; 4] = ["tower-20", "cubes-1000", "pyramid-15", "many-pyramids"];
/// Frame where `cubes-1000`'s "settling" phase ends and "settled" begins.
const SETTLE_FRAME: usize = 120;
/// The two frame counts whose callgrind totals are subtracted for
/// `--instructions`: the scene's set-up cancels out, and one step is the
/// mean of frames 20..60.
const COUNT_FRAMES: (usize, usize) = (20, 60);

fn usage() -> String {
    format!(
        "usage: peer-bench [--frames N] [--runs R] [--threads T] [--only ours|rapier] [--instructions] [scene ...]\n\
         scenes: {} (default: {})",
        scenes::NAMES.join(", "),
        DEFAULT_SCENES.join(" ")
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    Both,
    Ours,
    Rapier,
}

struct Args {
    frames: Option<usize>,
    runs: usize,
    /// Threads our world may use (rapier always runs on one).
    threads: usize,
    only: Only,
    /// Also count instructions per step under callgrind.
    instructions: bool,
    scenes: Vec<Scene>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        frames: None,
        runs: 3,
        threads: 1,
        only: Only::Both,
        instructions: false,
        scenes: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value\n{}", usage()))
        };
        match a.as_str() {
            "--frames" => {
                let v = value("--frames")?;
                args.frames = Some(v.parse().map_err(|_| format!("bad --frames {v}"))?);
            }
            "--runs" => {
                let v = value("--runs")?;
                args.runs = v.parse().map_err(|_| format!("bad --runs {v}"))?;
                if args.runs == 0 {
                    return Err("--runs must be at least 1".into());
                }
            }
            "--threads" => {
                let v = value("--threads")?;
                args.threads = v.parse().map_err(|_| format!("bad --threads {v}"))?;
                if args.threads == 0 {
                    return Err("--threads must be at least 1".into());
                }
            }
            "--only" => {
                args.only = match value("--only")?.as_str() {
                    "ours" => Only::Ours,
                    "rapier" => Only::Rapier,
                    o => return Err(format!("bad --only {o} (ours or rapier)")),
                };
            }
            "--instructions" => args.instructions = true,
            "-h" | "--help" => return Err(usage()),
            name if name.starts_with('-') => {
                return Err(format!("unknown option {name}\n{}", usage()));
            }
            name => {
                let scene = scenes::by_name(name)
                    .ok_or_else(|| format!("unknown scene {name}\n{}", usage()))?;
                args.scenes.push(scene);
            }
        }
    }
    if args.scenes.is_empty() {
        args.scenes = DEFAULT_SCENES
            .iter()
            .map(|n| scenes::by_name(n).expect("default scene exists"))
            .collect();
    }
    Ok(args)
}

/// The final state of one run, engine-neutral.
struct Final {
    /// Position of every scene body, in scene order (static ones included).
    positions: Vec<[f64; 3]>,
    /// Dynamic bodies still awake (not sleeping) after the last frame.
    awake: usize,
    /// First frame after which every dynamic body was asleep, if any.
    all_asleep_from: Option<usize>,
    /// Deepest overlap of any contact (m), sampled every 30 frames from
    /// frame 120 on while bodies are awake: how deep resting contacts sit.
    deepest_overlap: f64,
    /// Largest horizontal distance (m) of the body that started highest
    /// from where it started, sampled every 30 frames: how far a stack leans.
    top_lean_max: f64,
}

/// Per-step wall times (seconds) and the final state of one run.
struct Run {
    step_secs: Vec<f64>,
    fin: Final,
}

fn f(x: Fx) -> f64 {
    x.to_f64_lossy()
}

fn vec(v: Vec3) -> Vector {
    Vector::new(f(v.x) as f32, f(v.y) as f32, f(v.z) as f32)
}

fn rot(q: Quat) -> Rotation {
    Rotation::from_xyzw(f(q.x) as f32, f(q.y) as f32, f(q.z) as f32, f(q.w) as f32).normalize()
}

// ---------------------------------------------------------------- ours

/// What the timing loop needs from an engine.
trait Engine {
    fn step(&mut self);
    /// Dynamic bodies awake now.
    fn awake(&self) -> usize;
    /// Body positions in scene order.
    fn positions(&self) -> Vec<[f64; 3]>;
    /// Deepest overlap of any current contact point (m, 0 if none).
    fn deepest_overlap(&self) -> f64;
    /// Position of the body at scene index `i`.
    fn position(&self, i: usize) -> [f64; 3];
}

impl Engine for World {
    fn step(&mut self) {
        World::step(self);
    }
    fn awake(&self) -> usize {
        self.bodies()
            .filter(|(_, b)| b.kind() == BodyKind::Dynamic && b.is_awake())
            .count()
    }
    fn positions(&self) -> Vec<[f64; 3]> {
        // Scene bodies are added in order into fresh slots, so slot order = scene order.
        self.bodies()
            .map(|(_, b)| [f(b.position().x), f(b.position().y), f(b.position().z)])
            .collect()
    }
    fn deepest_overlap(&self) -> f64 {
        self.contacts()
            .flat_map(|c| c.points.iter().map(|p| -f(p.separation)))
            .fold(0.0, f64::max)
    }
    fn position(&self, i: usize) -> [f64; 3] {
        let (_, b) = self.bodies().nth(i).expect("scene body");
        let p = b.position();
        [f(p.x), f(p.y), f(p.z)]
    }
}

/// Scene index of the dynamic body that starts highest (the last such).
fn top_body(scene: &Scene) -> Option<usize> {
    let mut top = None::<(usize, Fx)>;
    for (i, b) in scene.bodies.iter().enumerate() {
        if b.kind == BodyKind::Dynamic && top.is_none_or(|(_, y)| b.position.y >= y) {
            top = Some((i, b.position.y));
        }
    }
    top.map(|(i, _)| i)
}

/// Steps an engine `frames` times, timing each step alone (the sleep check
/// runs outside the timed region).
fn time_run(engine: &mut impl Engine, scene: &Scene, frames: usize) -> Run {
    let dynamic = scene
        .bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Dynamic)
        .count();
    let mut step_secs = Vec::with_capacity(frames);
    let mut all_asleep_from = None;
    let mut deepest_overlap = 0.0f64;
    let top = top_body(scene).map(|i| (i, scene.bodies[i].position));
    let mut top_lean_max = 0.0f64;
    for frame in 0..frames {
        let t = Instant::now();
        engine.step();
        step_secs.push(t.elapsed().as_secs_f64());
        if all_asleep_from.is_none() && dynamic > 0 && engine.awake() == 0 {
            all_asleep_from = Some(frame + 1);
        }
        if frame + 1 >= 120 && (frame + 1) % 30 == 0 && all_asleep_from.is_none() {
            deepest_overlap = deepest_overlap.max(engine.deepest_overlap());
        }
        if let Some((i, start)) = top.filter(|_| (frame + 1) % 30 == 0) {
            let p = engine.position(i);
            let lean = (p[0] - f(start.x)).hypot(p[2] - f(start.z));
            top_lean_max = top_lean_max.max(lean);
        }
    }
    Run {
        step_secs,
        fin: Final {
            positions: engine.positions(),
            awake: engine.awake(),
            all_asleep_from,
            deepest_overlap,
            top_lean_max,
        },
    }
}

// ---------------------------------------------------------------- rapier

struct RapierScene {
    world: PhysicsWorld,
    handles: Vec<RigidBodyHandle>,
}

fn build_rapier(scene: &Scene) -> RapierScene {
    let s = &scene.settings;
    let mut world = PhysicsWorld::new();
    world.gravity = vec(s.gravity);
    // Rapier's default solver (4 iterations, 1 internal PGS, 1 stabilization),
    // only the time step changed.
    world.integration_parameters = IntegrationParameters {
        dt: 1.0 / s.tick_rate.max(1) as f32,
        ..IntegrationParameters::default()
    };
    let mut handles = Vec::with_capacity(scene.bodies.len());
    for b in &scene.bodies {
        let builder = match b.kind {
            BodyKind::Dynamic => RigidBodyBuilder::dynamic(),
            BodyKind::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
            BodyKind::Static => RigidBodyBuilder::fixed(),
        };
        let builder = builder
            .pose(Pose::from_parts(vec(b.position), rot(b.orientation)))
            .linvel(vec(b.linear_velocity))
            .can_sleep(s.sleeping)
            .sleeping(b.asleep && s.sleeping);
        let builder = if b.lock_rotation {
            builder.lock_rotations()
        } else {
            builder
        };
        let shape = match b.shape {
            Shape::Box { half_extents: h } => {
                SharedShape::cuboid(f(h.x) as f32, f(h.y) as f32, f(h.z) as f32)
            }
            Shape::Sphere { radius } => SharedShape::ball(f(radius) as f32),
            Shape::Capsule {
                half_height,
                radius,
            } => SharedShape::capsule_y(f(half_height) as f32, f(radius) as f32),
            // Matter below the body's local plane y = 0: outward normal +y in the
            // body frame; the body's pose tilts it like ours.
            Shape::HalfSpace => SharedShape::halfspace(Vector::Y),
        };
        // Ours combines friction as sqrt(a·b) and restitution as max(a, b). In
        // every scene two bodies' frictions are equal or one is zero (`crowd`'s
        // frictionless units), where rapier's Min gives the same value; Max
        // matches ours for restitution.
        let collider = ColliderBuilder::new(shape)
            .density(f(b.density) as f32)
            .friction(f(b.friction) as f32)
            .friction_combine_rule(CoefficientCombineRule::Min)
            .restitution(f(b.restitution) as f32)
            .restitution_combine_rule(CoefficientCombineRule::Max);
        let (h, _) = world.insert(builder, collider);
        handles.push(h);
    }
    RapierScene { world, handles }
}

impl Engine for RapierScene {
    fn step(&mut self) {
        self.world.step();
    }
    fn awake(&self) -> usize {
        self.handles
            .iter()
            .filter(|h| {
                let b = &self.world.bodies[**h];
                b.is_dynamic() && !b.is_sleeping()
            })
            .count()
    }
    fn positions(&self) -> Vec<[f64; 3]> {
        self.handles
            .iter()
            .map(|h| {
                let t = self.world.bodies[*h].translation();
                [t.x as f64, t.y as f64, t.z as f64]
            })
            .collect()
    }
    fn deepest_overlap(&self) -> f64 {
        let mut deepest = 0.0f64;
        for pair in self.world.narrow_phase.contact_pairs() {
            if let PairContacts::Rigid(r) = &pair.contacts {
                for m in &r.manifolds {
                    for p in &m.points {
                        deepest = deepest.max(-p.dist as f64);
                    }
                }
            }
        }
        deepest
    }
    fn position(&self, i: usize) -> [f64; 3] {
        let t = self.world.bodies[self.handles[i]].translation();
        [t.x as f64, t.y as f64, t.z as f64]
    }
}

// ---------------------------------------------------------------- stats

fn mean_ms(secs: &[f64]) -> f64 {
    if secs.is_empty() {
        f64::NAN
    } else {
        secs.iter().sum::<f64>() / secs.len() as f64 * 1e3
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median over runs of the mean ms/step of frames `range` in each run.
fn median_ms(runs: &[Run], range: std::ops::Range<usize>) -> f64 {
    median(
        runs.iter()
            .map(|r| {
                mean_ms(
                    &r.step_secs
                        [range.start.min(r.step_secs.len())..range.end.min(r.step_secs.len())],
                )
            })
            .collect(),
    )
}

/// Median over runs of the mean ms/step of the frames before everything slept
/// (all frames when it never did).
fn median_awake_ms(runs: &[Run]) -> f64 {
    median(
        runs.iter()
            .map(|r| mean_ms(&r.step_secs[..r.fin.all_asleep_from.unwrap_or(r.step_secs.len())]))
            .collect(),
    )
}

/// Median over runs of the mean ms/step of the frames after everything slept:
/// the cost of a world that is entirely asleep (NaN when it never slept).
fn median_asleep_ms(runs: &[Run]) -> f64 {
    median(
        runs.iter()
            .filter_map(|r| r.fin.all_asleep_from.map(|f| mean_ms(&r.step_secs[f..])))
            .collect(),
    )
}

/// Sanity figures of one engine's final state against the scene's start.
struct Sanity {
    mean_y: f64,
    /// y(final) − y(start) of the body that started highest (the last such).
    top_dy: f64,
    /// Horizontal distance of that body from its start: at the end, and the
    /// largest sampled.
    top_lean: (f64, f64),
    /// Dynamic bodies with y < 0.4 (a unit cube rests at 0.5).
    below: usize,
    /// Dynamic bodies whose y dropped by more than 0.5 m.
    dropped: usize,
    awake: usize,
    all_asleep_from: Option<usize>,
    deepest_overlap: f64,
}

fn sanity(scene: &Scene, fin: &Final) -> Sanity {
    let (mut sum_y, mut n, mut below, mut dropped) = (0.0, 0usize, 0usize, 0usize);
    for (b, p) in scene.bodies.iter().zip(&fin.positions) {
        if b.kind != BodyKind::Dynamic {
            continue;
        }
        let y0 = f(b.position.y);
        sum_y += p[1];
        n += 1;
        below += usize::from(p[1] < 0.4);
        dropped += usize::from(y0 - p[1] > 0.5);
    }
    let top = top_body(scene);
    let top_dy = top.map_or(f64::NAN, |i| {
        fin.positions[i][1] - f(scene.bodies[i].position.y)
    });
    let top_lean = top.map_or((f64::NAN, f64::NAN), |i| {
        let (p, s) = (fin.positions[i], scene.bodies[i].position);
        ((p[0] - f(s.x)).hypot(p[2] - f(s.z)), fin.top_lean_max)
    });
    Sanity {
        mean_y: if n == 0 { f64::NAN } else { sum_y / n as f64 },
        top_dy,
        top_lean,
        below,
        dropped,
        awake: fin.awake,
        all_asleep_from: fin.all_asleep_from,
        deepest_overlap: fin.deepest_overlap,
    }
}

/// Largest and mean per-body distance between the two engines' final positions.
fn divergence(a: &Final, b: &Final) -> (f64, f64) {
    let d: Vec<f64> = a
        .positions
        .iter()
        .zip(&b.positions)
        .map(|(p, q)| {
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
        })
        .collect();
    let max = d.iter().copied().fold(0.0, f64::max);
    (
        max,
        if d.is_empty() {
            0.0
        } else {
            d.iter().sum::<f64>() / d.len() as f64
        },
    )
}

// ---------------------------------------------------------------- main

struct Row {
    label: String,
    bodies: usize,
    frames: String,
    ours: f64,
    rapier: f64,
    /// Mean ms/step before all bodies slept, ours and rapier (scene rows only).
    awake: Option<(f64, f64)>,
    /// Mean ms/step once all bodies slept, ours and rapier (scene rows only).
    asleep: Option<(f64, f64)>,
    /// Instructions per step, ours and rapier (NaN where not counted).
    instructions: Option<(f64, f64)>,
}

/// Instructions one step of `scene` executes in `engine` (`ours` or
/// `rapier`): this program run under `valgrind --tool=callgrind` for
/// [`COUNT_FRAMES`]` .0` and `.1` frames, the difference of the two totals
/// divided by the difference of the frame counts. Instructions do not drift
/// with the machine's load the way time does.
fn instructions_per_step(scene: &str, engine: &str, threads: usize) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let count = |frames: usize| -> Result<u64, String> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(&exe)
            .args(["--only", engine, "--runs", "1"])
            .args(["--frames", &frames.to_string()])
            .args(["--threads", &threads.to_string(), scene])
            .output()
            .map_err(|e| format!("cannot run valgrind (is it installed?): {e}"))?;
        let text = String::from_utf8_lossy(&out.stderr);
        text.lines()
            .find_map(|l| {
                l.split_once("Collected :")
                    .map(|(_, n)| n.trim().parse().ok())
            })
            .flatten()
            .ok_or_else(|| format!("no callgrind total for {engine} {scene}:\n{text}"))
    };
    let (a, b) = COUNT_FRAMES;
    let (ta, tb) = (count(a)?, count(b)?);
    Ok(tb.saturating_sub(ta) as f64 / (b - a) as f64)
}

fn fmt_ms(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.3}")
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let ip = IntegrationParameters::default();
    println!(
        "peer-bench: lockstep-physics vs rapier3d 0.36.1 (f32, enhanced-determinism, single thread); \
         rapier solver: {} iterations, {} internal PGS, {} stabilization; {} run(s) alternating ours/rapier; \
         ours on {} thread(s)",
        ip.num_solver_iterations,
        ip.num_internal_pgs_iterations,
        ip.num_internal_stabilization_iterations,
        args.runs,
        args.threads
    );
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    for scene in &args.scenes {
        let frames = args.frames.unwrap_or(scene.frames as usize);
        let (mut ours, mut rapier) = (Vec::new(), Vec::new());
        for run in 0..args.runs {
            if args.only != Only::Rapier {
                let mut world = scene.build();
                world.set_threads(args.threads);
                let r = time_run(&mut world, scene, frames);
                eprintln!(
                    "  {} run {}: ours   {:.3} ms/step",
                    scene.name,
                    run + 1,
                    mean_ms(&r.step_secs)
                );
                ours.push(r);
            }
            if args.only != Only::Ours {
                let r = time_run(&mut build_rapier(scene), scene, frames);
                eprintln!(
                    "  {} run {}: rapier {:.3} ms/step",
                    scene.name,
                    run + 1,
                    mean_ms(&r.step_secs)
                );
                rapier.push(r);
            }
        }
        let bodies = scene.bodies.len();
        rows.push(Row {
            label: scene.name.into(),
            bodies,
            frames: frames.to_string(),
            ours: median_ms(&ours, 0..frames),
            rapier: median_ms(&rapier, 0..frames),
            awake: Some((median_awake_ms(&ours), median_awake_ms(&rapier))),
            asleep: Some((median_asleep_ms(&ours), median_asleep_ms(&rapier))),
            instructions: args
                .instructions
                .then(|| {
                    let count = |engine: &str, wanted: bool| {
                        if !wanted {
                            return Ok(f64::NAN);
                        }
                        eprintln!("  {}: counting {engine}'s instructions", scene.name);
                        instructions_per_step(scene.name, engine, args.threads)
                    };
                    Ok::<_, String>((
                        count("ours", args.only != Only::Rapier)?,
                        count("rapier", args.only != Only::Ours)?,
                    ))
                })
                .transpose()
                .unwrap_or_else(|e| {
                    eprintln!("{e}");
                    None
                }),
        });
        if scene.name == "cubes-1000" && frames > SETTLE_FRAME {
            for (phase, range) in [
                ("settling", 0..SETTLE_FRAME),
                ("settled", SETTLE_FRAME..frames),
            ] {
                rows.push(Row {
                    label: format!("  {phase}"),
                    bodies,
                    frames: format!("{}..{}", range.start, range.end),
                    ours: median_ms(&ours, range.clone()),
                    rapier: median_ms(&rapier, range),
                    awake: None,
                    asleep: None,
                    instructions: None,
                });
            }
        }
        let so = ours.last().map(|r| sanity(scene, &r.fin));
        let sr = rapier.last().map(|r| sanity(scene, &r.fin));
        let div = match (ours.last(), rapier.last()) {
            (Some(a), Some(b)) => Some(divergence(&a.fin, &b.fin)),
            _ => None,
        };
        checks.push((scene.name, frames, so, sr, div));
    }

    println!();
    println!(
        "| scene | bodies | frames | ours ms/step | rapier ms/step | ours/rapier | until all asleep: ours / rapier ms/step | all asleep: ours / rapier ms/step | instructions/step ours / rapier (M, frames {}..{}) | ours/rapier instructions |",
        COUNT_FRAMES.0, COUNT_FRAMES.1
    );
    println!("|---|---:|---:|---:|---:|---:|---|---|---|---:|");
    for r in &rows {
        let ratio = r.ours / r.rapier;
        let ratio = if ratio.is_finite() {
            format!("{ratio:.2}")
        } else {
            "-".into()
        };
        let pair = |p: Option<(f64, f64)>| {
            p.map_or(String::new(), |(o, a)| {
                format!("{} / {}", fmt_ms(o), fmt_ms(a))
            })
        };
        let (awake, asleep) = (pair(r.awake), pair(r.asleep));
        let (instructions, instruction_ratio) =
            r.instructions
                .map_or(("-".to_string(), "-".to_string()), |(o, a)| {
                    let m = |x: f64| {
                        if x.is_nan() {
                            "-".into()
                        } else {
                            format!("{:.2}", x / 1e6)
                        }
                    };
                    let ratio = o / a;
                    let ratio = if ratio.is_finite() {
                        format!("{ratio:.2}")
                    } else {
                        "-".into()
                    };
                    (format!("{} / {}", m(o), m(a)), ratio)
                });
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.label,
            r.bodies,
            r.frames,
            fmt_ms(r.ours),
            fmt_ms(r.rapier),
            ratio,
            awake,
            asleep,
            instructions,
            instruction_ratio
        );
    }

    println!();
    println!("Final state after the last frame (ours / rapier):");
    println!(
        "| scene | mean y (m) | top body Δy (mm) | top body lean end, max (mm) | deepest overlap (mm) | y < 0.4 | dropped > 0.5 m | awake at end | all asleep from frame | body Δpos ours↔rapier max / mean (m) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, _frames, so, sr, div) in &checks {
        let pair = |g: &dyn Fn(&Sanity) -> String| {
            format!(
                "{} / {}",
                so.as_ref().map_or("-".into(), g),
                sr.as_ref().map_or("-".into(), g)
            )
        };
        let asleep = |s: &Sanity| s.all_asleep_from.map_or("never".into(), |f| f.to_string());
        let div = div.map_or("-".into(), |(max, mean)| format!("{max:.3} / {mean:.4}"));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            name,
            pair(&|s| format!("{:.4}", s.mean_y)),
            pair(&|s| format!("{:+.1}", s.top_dy * 1e3)),
            pair(&|s| format!("{:.1}, {:.1}", s.top_lean.0 * 1e3, s.top_lean.1 * 1e3)),
            pair(&|s| format!("{:.2}", s.deepest_overlap * 1e3)),
            pair(&|s| s.below.to_string()),
            pair(&|s| s.dropped.to_string()),
            pair(&|s| s.awake.to_string()),
            pair(&asleep),
            div,
        );
    }
    ExitCode::SUCCESS
}
