//! Behaviour of the benchmark scenes: stable stacking, settling to sleep,
//! no tunnelling, waking on impact.

use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{BodyKind, World, scenes};

fn dynamic_positions(world: &World) -> Vec<Vec3> {
    world
        .bodies()
        .filter(|(_, b)| b.kind() == BodyKind::Dynamic)
        .map(|(_, b)| b.position())
        .collect()
}

/// Deepest overlap among the contacts solved in the last step (m, ≥ 0).
fn max_penetration(world: &World) -> Fx {
    world
        .contacts()
        .flat_map(|c| c.points.iter().map(|p| -p.separation))
        .fold(Fx::ZERO, Fx::max)
}

#[test]
fn pyramid_15_stands() {
    let scene = scenes::pyramid_15();
    let mut world = scene.build();
    let start = dynamic_positions(&world);
    let mut settled = Vec::new();
    let mut worst_penetration = Fx::ZERO;
    for f in 0..scene.frames {
        world.step();
        if f == 59 {
            settled = dynamic_positions(&world);
        }
        if f >= 60 {
            worst_penetration = worst_penetration.max(max_penetration(&world));
        }
    }
    let end = dynamic_positions(&world);
    let horizontal = |a: Vec3, b: Vec3| Vec3::new(a.x - b.x, Fx::ZERO, a.z - b.z).length();
    // No box falls: none slides more than 2 cm sideways or sinks more than
    // the 15 contact layers' settling (each layer settles ≤ 2.5 mm into its
    // contact).
    let slide = start
        .iter()
        .zip(&end)
        .map(|(a, b)| horizontal(*a, *b))
        .fold(Fx::ZERO, Fx::max);
    let sink = start
        .iter()
        .zip(&end)
        .map(|(a, b)| a.y - b.y)
        .fold(Fx::ZERO, Fx::max);
    assert!(slide < Fx::lit("0.02"), "a box slid {slide} m");
    assert!(sink < Fx::lit("0.0375"), "a box sank {sink} m");
    // Once settled (frame 60), the top box (built last) drifts less than 1 %
    // of its size over the remaining 540 frames.
    let drift = (*settled.last().unwrap() - *end.last().unwrap()).length();
    assert!(
        drift < Fx::lit("0.01"),
        "top box drifted {drift} m after settling"
    );
    // Every resting contact overlaps by at most 1 mm (rapier's default
    // allowed error), the soft contacts' give under 14 layers included.
    assert!(
        worst_penetration <= Fx::lit("0.001"),
        "penetration {worst_penetration} m"
    );
    println!(
        "pyramid-15: slide {slide} m, sink {sink} m, top drift after settling {drift} m, worst penetration {worst_penetration} m"
    );
}

#[test]
fn cubes_1000_settle_to_sleep_without_tunnelling() {
    let scene = scenes::cubes_1000();
    let mut world = scene.build();
    let mut asleep_at = None;
    let mut settled_energy: Option<Fx> = None;
    for _ in 0..scene.frames {
        world.step();
        let energy: Fx = world.bodies().map(|(_, b)| b.kinetic_energy()).sum();
        for (_, b) in world.bodies() {
            if b.kind() == BodyKind::Dynamic {
                assert!(
                    b.position().y > Fx::lit("0.4"),
                    "a cube went through the ground at frame {}",
                    world.frame()
                );
            }
        }
        // After settling (asleep), kinetic energy never rises.
        if let Some(e) = settled_energy {
            assert!(
                energy <= e,
                "kinetic energy rose after settling at frame {}",
                world.frame()
            );
            settled_energy = Some(energy);
        }
        if asleep_at.is_none() && world.all_asleep() {
            asleep_at = Some(world.frame());
            settled_energy = Some(energy);
        }
    }
    let asleep_at = asleep_at.expect("the block settles to sleep");
    // rapier3d 0.36 has the same scene asleep at frame 91 (`tools/peer-bench`).
    assert!(
        asleep_at <= 91,
        "cubes-1000 asleep only at frame {asleep_at}"
    );
}

#[test]
fn smash_wakes_the_wall() {
    let scene = scenes::smash();
    let mut world = scene.build();
    let asleep_before = world
        .bodies()
        .filter(|(_, b)| b.kind() == BodyKind::Dynamic && !b.is_awake())
        .count();
    assert_eq!(asleep_before, 200);
    let mut max_awake = 0;
    for _ in 0..scene.frames {
        world.step();
        max_awake = max_awake.max(world.bodies().filter(|(_, b)| b.is_awake()).count());
    }
    assert!(max_awake > 100, "the impact woke only {max_awake} bodies");
    // The ram went through the wall's plane, and nothing left the world.
    let ram = world.bodies().last().unwrap().1;
    assert!(
        ram.position().x > Fx::ZERO,
        "ram stopped at {}",
        ram.position().x
    );
    assert!(world.bodies().all(|(_, b)| !b.is_contained()));
}
