//! The benchmark and determinism scenes, shared by tests, benches, the
//! cross-architecture probe and the peer comparison.
//!
//! A [`Scene`] is plain data (settings and a list of [`BodyBuilder`]s, whose
//! fields are public) so another
//! engine can build the same thing; [`Scene::build`] makes the [`World`].
//! Every scene uses unit cubes (half extent 0.5) on a ground whose top is
//! `y = 0`, gravity −9.81 m/s² and 60 Hz, the setup of the rapier3d
//! comparison in `tools/peer-bench`. Positions come from integers and
//! ratios only, so every peer builds the same bits.

use lockstep_fx::{Fx, Quat, Rng, Vec3};

use crate::body::BodyBuilder;
use crate::settings::WorldSettings;
use crate::shape::Shape;
use crate::world::World;

/// A named scene.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scene {
    /// Name, as used on the command line and in fixture file names.
    pub name: &'static str,
    /// World settings.
    pub settings: WorldSettings,
    /// Bodies in creation order (slot order); the ground comes first.
    pub bodies: Vec<BodyBuilder>,
    /// Frames the scene is meant to run (its golden covers these).
    pub frames: u32,
}

impl Scene {
    /// Builds the world.
    pub fn build(&self) -> World {
        let mut w = World::new(self.settings);
        for b in &self.bodies {
            w.add_body(b.clone()).expect("scene bodies are valid");
        }
        w
    }
}

/// Names of all scenes, in a fixed order.
pub const NAMES: [&str; 8] = [
    "stack-sleep",
    "tower-20",
    "pyramid-15",
    "cubes-1000",
    "smash",
    "many-pyramids",
    "capsules",
    "crowd",
];

/// A scene by name.
pub fn by_name(name: &str) -> Option<Scene> {
    Some(match name {
        "stack-sleep" => stack_sleep(),
        "tower-20" => tower_20(),
        "pyramid-15" => pyramid_15(),
        "cubes-1000" => cubes_1000(),
        "smash" => smash(),
        "many-pyramids" => many_pyramids(),
        "capsules" => capsules(),
        "crowd" => crowd(),
        _ => return None,
    })
}

fn ground() -> BodyBuilder {
    BodyBuilder::fixed(Shape::HalfSpace).density(Fx::ONE)
}

fn unit_cube() -> Shape {
    Shape::Box {
        half_extents: Vec3::splat(Fx::HALF),
    }
}

/// A unit cube of density 1 (1 kg), as in the rapier figures.
fn cube_at(position: Vec3) -> BodyBuilder {
    BodyBuilder::dynamic(unit_cube())
        .position(position)
        .density(Fx::ONE)
}

/// Gap left between neighbouring cubes when a scene is built (m).
const GAP: Fx = Fx::lit("0.05");

/// 80 unit cubes in 8 towers of 10, each cube nudged and turned a little by a
/// fixed seed, stepped until everything sleeps (our counterpart of Box2D's
/// FallingHinges determinism test).
pub fn stack_sleep() -> Scene {
    let mut rng = Rng::new(0x5eed, 3);
    let mut bodies = vec![ground()];
    for tower in 0..8 {
        let x = Fx::from_int((tower % 4) * 3 - 5);
        let z = Fx::from_int((tower / 4) * 3 - 2);
        for level in 0..10 {
            let jitter = |rng: &mut Rng| rng.fx_range(Fx::lit("-0.08"), Fx::lit("0.08"));
            let y = Fx::HALF + (Fx::ONE + GAP).mul_int(level);
            let mut b = cube_at(Vec3::new(x + jitter(&mut rng), y, z + jitter(&mut rng)));
            let angle = rng.fx_range(Fx::lit("-0.2"), Fx::lit("0.2"));
            b.orientation = Quat::from_axis_angle(Vec3::Y, angle);
            bodies.push(b);
        }
    }
    Scene {
        name: "stack-sleep",
        settings: WorldSettings::default(),
        bodies,
        frames: 1200,
    }
}

/// One tower of 20 unit cubes, each resting exactly on the one below (no
/// gap, no jitter), sleeping off, 3 000 frames (50 s): how far a tall
/// stack kept awake sinks under its own weight and whether it stays upright.
pub fn tower_20() -> Scene {
    let mut bodies = vec![ground()];
    for level in 0..20 {
        bodies.push(cube_at(Vec3::new(
            Fx::ZERO,
            Fx::HALF + Fx::from_int(level),
            Fx::ZERO,
        )));
    }
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    Scene {
        name: "tower-20",
        settings,
        bodies,
        frames: 3000,
    }
}

/// A square pyramid of 1 240 cubes, 15 layers (15² … 1²), sleeping off, 600
/// frames.
pub fn pyramid_15() -> Scene {
    let mut bodies = vec![ground()];
    square_pyramid(&mut bodies, 15, Vec3::ZERO);
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    Scene {
        name: "pyramid-15",
        settings,
        bodies,
        frames: 600,
    }
}

fn square_pyramid(bodies: &mut Vec<BodyBuilder>, base: i32, at: Vec3) {
    let pitch = Fx::ONE + GAP;
    for layer in 0..base {
        let n = base - layer;
        // Centre the layer: offsets (i - (n-1)/2) · pitch.
        for i in 0..n {
            for k in 0..n {
                let off = |j: i32| (pitch * Fx::from_int(2 * j - (n - 1))).scale_pow2(-1);
                let y = Fx::HALF + Fx::from_int(layer);
                bodies.push(cube_at(at + Vec3::new(off(i), y, off(k))));
            }
        }
    }
}

/// A 10×10×10 block of cubes dropped from 1 m onto the ground.
pub fn cubes_1000() -> Scene {
    let mut bodies = vec![ground()];
    let pitch = Fx::ONE + Fx::lit("0.1");
    for y in 0..10 {
        for x in 0..10 {
            for z in 0..10 {
                let p = Vec3::new(
                    pitch * Fx::from_int(x - 5),
                    Fx::lit("1.5") + pitch * Fx::from_int(y),
                    pitch * Fx::from_int(z - 5),
                );
                bodies.push(cube_at(p));
            }
        }
    }
    Scene {
        name: "cubes-1000",
        settings: WorldSettings::default(),
        bodies,
        frames: 600,
    }
}

/// A heavy 2 m box at 40 m/s into a sleeping wall of 20 × 10 cubes.
pub fn smash() -> Scene {
    let mut bodies = vec![ground()];
    let pitch = Fx::ONE + GAP;
    for y in 0..10 {
        for z in 0..20 {
            let mut b = cube_at(Vec3::new(
                Fx::ZERO,
                Fx::HALF + Fx::from_int(y),
                pitch * Fx::from_int(z - 10),
            ));
            b.asleep = true;
            bodies.push(b);
        }
    }
    let ram = BodyBuilder::dynamic(Shape::Box {
        half_extents: Vec3::splat(Fx::ONE),
    })
    .position(Vec3::from_ints(-20, 3, 0))
    .density(Fx::from_int(10))
    .linear_velocity(Vec3::from_ints(40, 0, 0));
    bodies.push(ram);
    Scene {
        name: "smash",
        settings: WorldSettings::default(),
        bodies,
        frames: 300,
    }
}

/// 40 triangular pyramids of 210 cubes (base 20), 8 400 bodies.
pub fn many_pyramids() -> Scene {
    let mut bodies = vec![ground()];
    let pitch = Fx::ONE + GAP;
    for p in 0..40 {
        let ox = Fx::from_int((p % 5) * 24 - 48);
        let oz = Fx::from_int((p / 5) * 4 - 14);
        for row in 0..20 {
            let n = 20 - row;
            for i in 0..n {
                let x = ox + (pitch * Fx::from_int(2 * i - (n - 1))).scale_pow2(-1);
                bodies.push(cube_at(Vec3::new(x, Fx::HALF + Fx::from_int(row), oz)));
            }
        }
    }
    Scene {
        name: "many-pyramids",
        settings: WorldSettings::default(),
        bodies,
        frames: 240,
    }
}

/// 400 capsules (half height 0.5, radius 0.25), 100 spheres and 100 cubes
/// in ten loose layers, each turned by a fixed seed, dropped into a pile.
/// Every body has some damping (rolling shapes would otherwise roll on
/// forever: the engine has no rolling resistance).
pub fn capsules() -> Scene {
    let mut rng = Rng::new(0xca95, 5);
    let mut bodies = vec![ground()];
    for layer in 0..10 {
        for i in 0..6 {
            for k in 0..10 {
                let p = Vec3::new(
                    Fx::from_int(i - 3).mul_int(2) + rng.fx_range(-Fx::lit("0.2"), Fx::lit("0.2")),
                    Fx::ONE + Fx::lit("1.6").mul_int(i64::from(layer)),
                    Fx::from_int(k - 5).mul_int(2) + rng.fx_range(-Fx::lit("0.2"), Fx::lit("0.2")),
                );
                let axis = Vec3::new(
                    rng.fx_range(-Fx::ONE, Fx::ONE),
                    rng.fx_range(-Fx::ONE, Fx::ONE),
                    rng.fx_range(-Fx::ONE, Fx::ONE),
                )
                .try_normalize()
                .unwrap_or(Vec3::X);
                let turn = Quat::from_axis_angle(axis, rng.fx_range(Fx::ZERO, Fx::PI));
                let shape = match (i + k + layer) % 6 {
                    0 => Shape::Sphere {
                        radius: Fx::lit("0.3"),
                    },
                    1 => Shape::box_with_size(Vec3::splat(Fx::lit("0.6"))),
                    _ => Shape::Capsule {
                        half_height: Fx::HALF,
                        radius: Fx::lit("0.25"),
                    },
                };
                let mut b = BodyBuilder::dynamic(shape)
                    .position(p)
                    .density(Fx::ONE)
                    .damping(Fx::HALF, Fx::from_int(3));
                b.orientation = turn;
                bodies.push(b);
            }
        }
    }
    Scene {
        name: "capsules",
        settings: WorldSettings::default(),
        bodies,
        frames: 600,
    }
}

/// 988 spheres that cannot turn and have no friction, like an RTS's units,
/// in a 32 × 32 grid with its centre left free for a static block of
/// 6 × 2 × 6 m. Each sphere starts towards the centre at a quarter of its
/// distance per second, damped, so the crowd closes in and jams around the
/// block. Every contact is one point between bodies that cannot turn,
/// frictionless: what the solver takes four at a time.
pub fn crowd() -> Scene {
    let mut bodies = vec![ground()];
    bodies.push(
        BodyBuilder::fixed(Shape::Box {
            half_extents: Vec3::from_ints(3, 1, 3),
        })
        .position(Vec3::from_ints(0, 1, 0)),
    );
    let pitch = Fx::lit("1.2");
    for i in 0..32 {
        for k in 0..32 {
            // Grid offsets -15.5 ..= 15.5 pitches, as halves.
            let at = |n: i32| (pitch * Fx::from_int(2 * n - 31)).scale_pow2(-1);
            let (x, z) = (at(i), at(k));
            if x.abs() < Fx::from_int(4) && z.abs() < Fx::from_int(4) {
                continue;
            }
            let speed = Fx::lit("0.25");
            bodies.push(
                BodyBuilder::dynamic(Shape::Sphere { radius: Fx::HALF })
                    .lock_rotation()
                    .position(Vec3::new(x, Fx::HALF, z))
                    .linear_velocity(Vec3::new(-x * speed, Fx::ZERO, -z * speed))
                    .friction(Fx::ZERO)
                    .damping(Fx::lit("0.5"), Fx::ZERO)
                    .density(Fx::ONE),
            );
        }
    }
    Scene {
        name: "crowd",
        settings: WorldSettings::default(),
        bodies,
        frames: 300,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_counts() {
        assert_eq!(stack_sleep().bodies.len(), 81);
        assert_eq!(tower_20().bodies.len(), 21);
        assert_eq!(pyramid_15().bodies.len(), 1241);
        assert_eq!(cubes_1000().bodies.len(), 1001);
        assert_eq!(smash().bodies.len(), 202);
        assert_eq!(many_pyramids().bodies.len(), 8401);
        assert_eq!(capsules().bodies.len(), 601);
        for name in NAMES {
            assert_eq!(by_name(name).unwrap().name, name);
        }
    }
}
