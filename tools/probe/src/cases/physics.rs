//! The physics scenes: each case steps one scene of `lockstep_physics::scenes`
//! and writes every frame's state checksum, then the final full state.
//!
//! Frame counts are the cross-check's (≥ 240 per scene; `stack-sleep` runs
//! until everything sleeps, which its golden shows happens well within its
//! 1 200 frames); the native goldens under `fixtures/physics/` cover the
//! scenes' own frame counts.

use lockstep_physics::{SolverPath, World, scenes};

use super::Writer;

/// Steps a scene on `threads` threads, writing each frame's checksum; with
/// `until_asleep` it stops (and writes the frame) once every body sleeps.
fn run(name: &str, frames: u32, until_asleep: bool, threads: usize, w: &mut Writer) {
    let mut world = scenes::by_name(name).expect("known scene").build();
    world.set_threads(threads);
    step(world, frames, until_asleep, w);
}

/// Steps `world` as [`run`] describes.
fn step(mut world: World, frames: u32, until_asleep: bool, w: &mut Writer) {
    for _ in 0..frames {
        world.step();
        w.write_raw(world.checksum().as_bytes());
        if until_asleep && world.all_asleep() {
            w.write_u64(world.frame());
            break;
        }
    }
    world.encode(w);
}

/// `stack-sleep` until all 80 boxes sleep.
pub fn stack_sleep(w: &mut Writer) {
    run("stack-sleep", 1200, true, 1, w);
}

/// `tower-20`, its 3 000 frames: a tall stack kept awake, long enough for
/// a slow lean to show.
pub fn tower_20(w: &mut Writer) {
    run("tower-20", 3000, false, 1, w);
}

/// `pyramid-15`, 240 frames.
pub fn pyramid_15(w: &mut Writer) {
    run("pyramid-15", 240, false, 1, w);
}

/// `cubes-1000`, 240 frames (falling, landing, going to sleep).
pub fn cubes_1000(w: &mut Writer) {
    run("cubes-1000", 240, false, 1, w);
}

/// `smash`, 240 frames.
pub fn smash(w: &mut Writer) {
    run("smash", 240, false, 1, w);
}

/// `many-pyramids`, 240 frames, on 3 threads (one on wasm32, which starts
/// none; the bits are the same): the islands are solved in
/// three batches at once, and the narrowphase and the broadphase sweep in
/// three runs. The bits are those of a one-thread run (the physics tests
/// check it natively for 1, 2, 3 and 8 threads); here every architecture
/// must agree on them too. The other scenes run on one thread.
pub fn many_pyramids(w: &mut Writer) {
    run("many-pyramids", 240, false, 3, w);
}

/// `capsules`, 240 frames (capsules, spheres and cubes falling into a pile).
pub fn capsules(w: &mut Writer) {
    run("capsules", 240, false, 1, w);
}

/// `crowd`, 300 frames: 988 spheres that cannot turn, jammed around a
/// block, nearly every contact solved four at a time. It is written as the
/// portable lanes solve it (the lane kernels' reference, on every
/// architecture), and stepped on every other path the build machine can
/// run (the sequential one; AVX2 or NEON where the processor has it),
/// each of which must give the portable lanes' checksum every frame: a
/// path that does not stops the probe, naming the path and the frame.
pub fn crowd(w: &mut Writer) {
    let build = |path: SolverPath| {
        let mut world = scenes::crowd().build();
        assert!(world.set_solver_path(path));
        world
    };
    let mut reference = build(SolverPath::Portable);
    let mut others: Vec<World> = SolverPath::available()
        .into_iter()
        .filter(|&p| p != SolverPath::Portable)
        .map(build)
        .collect();
    for _ in 0..300 {
        reference.step();
        let sum = reference.checksum();
        w.write_raw(sum.as_bytes());
        for world in &mut others {
            world.step();
            assert!(
                world.checksum() == sum,
                "crowd: the {:?} path differs from the portable lanes at frame {}",
                world.solver_path(),
                world.frame()
            );
        }
    }
    reference.encode(w);
}
