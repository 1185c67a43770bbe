//! Determinism: golden per-frame checksums of every scene, exact save/load,
//! and the world seed's effect.
//!
//! Goldens live in `fixtures/physics/<scene>.golden` (one short checksum per
//! frame, the full checksum of the last frame, and for `stack-sleep` the frame
//! at which everything sleeps). `tools/cross-verify` checks the same scenes
//! on aarch64, s390x and i686. Regenerate after an intended change with
//! `LOCKSTEP_BLESS=1 cargo test -p lockstep-physics --test determinism` and
//! say why in the commit.

use std::fmt::Write as _;
use std::path::PathBuf;

use lockstep_fx::{Checksum, Fx, Vec3};
use lockstep_physics::scenes::{self, Scene};
use lockstep_physics::{BodyBuilder, Shape, SolverPath, World, WorldSettings};

fn golden_path(scene: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/physics")
        .join(format!("{scene}.golden"))
}

/// Runs a scene and renders its golden text.
fn golden_text(scene: &Scene, frames: u32) -> String {
    let mut world = scene.build();
    let mut out = format!(
        "# lockstep-physics golden: scene {} frames {frames} state-version {}\n",
        scene.name,
        lockstep_physics::STATE_VERSION
    );
    let mut sleep_frame = None;
    let mut last = world.checksum();
    for _ in 0..frames {
        world.step();
        last = world.checksum();
        writeln!(out, "{} {:016x}", world.frame(), last.short().0).unwrap();
        if sleep_frame.is_none() && world.settings().sleeping && world.all_asleep() {
            sleep_frame = Some(world.frame());
        }
    }
    writeln!(out, "final {last}").unwrap();
    if let Some(f) = sleep_frame {
        writeln!(out, "asleep {f}").unwrap();
    }
    out
}

fn check_golden(name: &str, frames: Option<u32>) {
    let scene = scenes::by_name(name).unwrap();
    let frames = frames.unwrap_or(scene.frames);
    let got = golden_text(&scene, frames);
    let path = golden_path(name);
    if std::env::var_os("LOCKSTEP_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with LOCKSTEP_BLESS=1)", path.display()));
    if let Some((i, (g, w))) = got
        .lines()
        .zip(want.lines())
        .enumerate()
        .find(|(_, (g, w))| g != w)
    {
        panic!(
            "{name}: first difference at line {}: got `{g}`, golden `{w}`",
            i + 1
        );
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{name}: golden has a different length"
    );
}

#[test]
fn golden_stack_sleep() {
    check_golden("stack-sleep", None);
    let text = std::fs::read_to_string(golden_path("stack-sleep")).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("asleep ")),
        "stack-sleep must fall asleep within its frames"
    );
}

#[test]
fn golden_tower_20() {
    check_golden("tower-20", None);
}

#[test]
fn golden_pyramid_15() {
    check_golden("pyramid-15", None);
}

#[test]
fn golden_cubes_1000() {
    check_golden("cubes-1000", None);
}

#[test]
fn golden_smash() {
    check_golden("smash", None);
}

#[test]
fn golden_many_pyramids() {
    check_golden("many-pyramids", Some(120));
}

#[test]
fn golden_capsules() {
    check_golden("capsules", Some(240));
}

#[test]
fn golden_crowd() {
    check_golden("crowd", None);
}

/// The solver's paths never change a bit: every scene stepped on every
/// path this machine can run (the sequential reference, the portable
/// lanes, AVX2 or NEON where the processor has it) gives the same checksum every
/// frame. `crowd` puts nearly every constraint in lanes, in every branch
/// of its row (approaching, pushing out, resting, separating).
#[test]
fn solver_paths_give_the_same_bits() {
    let paths = SolverPath::available();
    assert!(paths.contains(&SolverPath::Sequential) && paths.contains(&SolverPath::Portable));
    for (name, frames) in [
        ("crowd", 300),
        ("stack-sleep", 60),
        ("tower-20", 60),
        ("pyramid-15", 20),
        ("cubes-1000", 60),
        ("smash", 60),
        ("capsules", 60),
    ] {
        let scene = scenes::by_name(name).unwrap();
        let mut worlds: Vec<World> = paths
            .iter()
            .map(|&p| {
                let mut w = scene.build();
                assert!(w.set_solver_path(p));
                w
            })
            .collect();
        let labels: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
        assert_same_bits(name, frames, &mut worlds, &labels);
    }
}

/// Steps `worlds` (one scene on different machine settings, named by
/// `labels`) `frames` times and requires the same checksum every frame.
fn assert_same_bits(name: &str, frames: u32, worlds: &mut [World], labels: &[String]) {
    for _ in 0..frames {
        let sums: Vec<Checksum> = worlds
            .iter_mut()
            .map(|w| {
                w.step();
                w.checksum()
            })
            .collect();
        for (label, s) in labels.iter().zip(&sums) {
            assert_eq!(
                *s,
                sums[0],
                "{name}: frame {} differs between {} and {label}",
                worlds[0].frame(),
                labels[0]
            );
        }
    }
}

/// Save at frame k, load, step on: every later frame's bytes equal the
/// uninterrupted run's.
#[test]
fn a_saved_world_restores_exactly() {
    for name in ["smash", "stack-sleep"] {
        let scene = scenes::by_name(name).unwrap();
        let mut world = scene.build();
        for _ in 0..40 {
            world.step();
        }
        let saved = world.save();
        let mut reference = Vec::new();
        for _ in 0..60 {
            world.step();
            reference.push(world.save());
        }
        let mut restored = World::decode(&saved).unwrap();
        assert_eq!(
            restored.save(),
            saved,
            "{name}: re-encoding a decoded world changes it"
        );
        for (k, want) in reference.iter().enumerate() {
            restored.step();
            assert!(
                restored.save() == *want,
                "{name}: frame {} after the load differs",
                k + 1
            );
        }
    }
}

#[test]
fn seed_changes_checksums_and_same_seed_repeats() {
    let run = |seed: u64| -> Vec<Checksum> {
        let mut scene = scenes::cubes_1000();
        scene.settings = WorldSettings {
            seed,
            ..scene.settings
        };
        let mut world = scene.build();
        (0..60)
            .map(|_| {
                world.step();
                world.checksum()
            })
            .collect()
    };
    let (a, b, c) = (run(1), run(1), run(2));
    assert_eq!(a, b);
    assert_ne!(a.last(), c.last());
}

/// Threads never change a bit: every scene stepped with 1, 2, 3 and 8
/// threads gives the same checksum every frame (the scenes with islands
/// to share, `cubes-1000` once landed and `many-pyramids`, do split; and
/// `pyramid-15`, one island, is sorted by level, prepared in shares and
/// solved level by level on every thread). So do two scenes with one
/// island that goes alone beside small ones, on 1, 2 and 3 threads: a
/// pyramid whose levels are shared (on two threads, wide enough for no
/// more), and columns whose levels are too narrow to share (its passes
/// take one thread while the others share the small batches).
#[test]
fn thread_counts_give_the_same_bits() {
    for (name, frames) in [
        ("stack-sleep", 60),
        ("pyramid-15", 20),
        ("cubes-1000", 120),
        ("smash", 60),
        ("many-pyramids", 40),
        ("capsules", 60),
    ] {
        let scene = scenes::by_name(name).unwrap();
        assert_same_bits_on_threads(&scene, frames, &[1, 2, 3, 8]);
    }
    for wide in [true, false] {
        assert_same_bits_on_threads(&one_big_island(wide), 20, &[1, 2, 3]);
    }
}

/// Steps `scene` on each of `threads` and compares every frame's checksum.
fn assert_same_bits_on_threads(scene: &Scene, frames: u32, threads: &[usize]) {
    let mut worlds: Vec<World> = threads
        .iter()
        .map(|&t| {
            let mut w = scene.build();
            w.set_threads(t);
            w
        })
        .collect();
    let labels: Vec<String> = threads.iter().map(|t| format!("{t} threads")).collect();
    assert_same_bits(scene.name, frames, &mut worlds, &labels);
}

/// An island that carries most of a step's work beside three small ones,
/// so that it goes alone: a pyramid of 650 cubes (about 90 contacts a
/// level), or a block of 2 × 2 columns of 40 touching cubes (about 25).
fn one_big_island(wide: bool) -> Scene {
    let cube = |x: Fx, y: i32, z: Fx| {
        BodyBuilder::dynamic(Shape::Box {
            half_extents: Vec3::splat(Fx::HALF),
        })
        .position(Vec3::new(x, Fx::HALF + Fx::from_int(y), z))
        .density(Fx::ONE)
    };
    let int = Fx::from_int;
    let mut bodies = vec![BodyBuilder::fixed(Shape::HalfSpace).density(Fx::ONE)];
    if wide {
        // Layers of 12², 11², … 1², each centred on the one below, 5 cm apart.
        let half_pitch = Fx::lit("0.525");
        for layer in 0..12 {
            for x in 0..12 - layer {
                for z in 0..12 - layer {
                    let at = |i: i32| half_pitch * int(2 * i + layer);
                    bodies.push(cube(at(x), layer, at(z)));
                }
            }
        }
    } else {
        for y in 0..40 {
            for (x, z) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                bodies.push(cube(int(x), y, int(z)));
            }
        }
    }
    // Three stacks of two, far apart.
    for k in 0..3 {
        for y in 0..2 {
            bodies.push(cube(int(20 + 3 * k), y, int(20)));
        }
    }
    Scene {
        name: if wide {
            "a pyramid beside stacks"
        } else {
            "columns beside stacks"
        },
        settings: WorldSettings {
            sleeping: false,
            ..WorldSettings::default()
        },
        bodies,
        frames: 20,
    }
}
