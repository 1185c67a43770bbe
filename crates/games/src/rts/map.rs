//! The battlefield: building the physics world of a new match (ground,
//! walls, buildings, the seed's rocks, every player's units on their base
//! grid) and the collision groups that tell terrain and each player's units
//! apart.
//!
//! Units walk on flat ground: their bodies are locked in height
//! (`BodyBuilder::lock_height`) at their radius above it, so gravity does
//! not pull them and they never touch the ground. The ground is in a group
//! of its own ([`GROUND_GROUP`]) that units leave out of their mask: they
//! meet only each other, the walls, the buildings and the rocks, all taller
//! than a unit, so every contact a unit has pushes it across the plane. A
//! crowd then pays for the contacts between its units and nothing for
//! standing (in an 8 × 1 024 match that stood on the ground, 4 of every 10
//! contacts were with it, and a frame took 40% more instructions).
//!
//! Rocks make each seed's map its own: `rocks` boxes, 2 to 7 m across and
//! 3 m high, placed by an [`Rng`] seeded from the match seed, each kept
//! 4 m clear of every base's starting grid, every building and every rock
//! placed before it (a rock that finds no such place in 64 tries is left
//! out).
//!
//! Invariants: bodies are created in a fixed order (ground, four walls,
//! buildings in file order, rocks, then units seat by seat in id order), so every
//! peer builds the same world bit for bit; a unit's body carries its id as
//! user data and its owner's group ([`player_group`]) as its only group, so
//! `World::query_aabb` with a player's group finds exactly that player's
//! units.

use lockstep_fx::{Fx, Rng, Vec3};
use lockstep_physics::{BodyBuilder, BodyError, BodyHandle, Shape, World, WorldSettings};
use lockstep_sim::Match;

use super::config::RtsConfig;
use super::unit::{Order, Unit};

/// The collision group of the walls, the buildings and the rocks.
pub const TERRAIN_GROUP: u32 = 1;

/// The collision group of the ground, which units do not collide with (it
/// is above every seat's group).
pub const GROUND_GROUP: u32 = 1 << 31;

/// The collision group of player `seat`'s units (one bit per seat, above
/// the terrain's).
pub const fn player_group(seat: u8) -> u32 {
    1 << (seat as u32 + 1)
}

/// The groups of every player but `seat`, among `players`.
pub fn enemy_groups(seat: u8, players: u8) -> u32 {
    let all = ((1u32 << players) - 1) << 1;
    all & !player_group(seat)
}

/// Height of the walls around the map (m).
const WALL_HEIGHT: Fx = Fx::from_int(2);
/// Thickness of the walls (m).
const WALL_THICKNESS: Fx = Fx::ONE;

/// The centre `(x, z)` of `seat`'s base: evenly spaced on a circle of
/// `spawn_radius` around the map centre, seat 0 on +x.
pub fn base(config: &RtsConfig, seat: u8, players: u8) -> (Fx, Fx) {
    let angle = Fx::TAU
        .mul_int(i64::from(seat))
        .div_int(i64::from(players.max(1)));
    let (sin, cos) = angle.sin_cos();
    (config.spawn_radius * cos, config.spawn_radius * sin)
}

/// Builds the world of a new match and returns it with the units, in id
/// order.
pub(crate) fn build(config: &RtsConfig, setup: &Match) -> Result<(World, Vec<Unit>), BodyError> {
    let settings = WorldSettings {
        tick_rate: u32::from(setup.tick_rate),
        seed: setup.seed,
        substeps: config.substeps,
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    let terrain = |b: BodyBuilder| {
        b.friction(config.friction)
            .collision_groups(TERRAIN_GROUP, u32::MAX)
    };
    world.add_body(
        BodyBuilder::fixed(Shape::HalfSpace)
            .friction(config.friction)
            .collision_groups(GROUND_GROUP, u32::MAX),
    )?;

    // Four walls just outside the map's edges.
    let half = config.map_size.scale_pow2(-1);
    let offset = half + WALL_THICKNESS.scale_pow2(-1);
    let long = config.map_size + WALL_THICKNESS.mul_int(2);
    let y = WALL_HEIGHT.scale_pow2(-1);
    for (x, z, size) in [
        (
            offset,
            Fx::ZERO,
            Vec3::new(WALL_THICKNESS, WALL_HEIGHT, long),
        ),
        (
            -offset,
            Fx::ZERO,
            Vec3::new(WALL_THICKNESS, WALL_HEIGHT, long),
        ),
        (
            Fx::ZERO,
            offset,
            Vec3::new(long, WALL_HEIGHT, WALL_THICKNESS),
        ),
        (
            Fx::ZERO,
            -offset,
            Vec3::new(long, WALL_HEIGHT, WALL_THICKNESS),
        ),
    ] {
        let wall = BodyBuilder::fixed(Shape::box_with_size(size)).position(Vec3::new(x, y, z));
        world.add_body(terrain(wall))?;
    }

    for b in &config.buildings {
        let centre = Vec3::new(b.position[0], b.size.y.scale_pow2(-1), b.position[1]);
        let building = BodyBuilder::fixed(Shape::box_with_size(b.size)).position(centre);
        world.add_body(terrain(building))?;
    }

    for (centre, size) in rocks(config, setup) {
        let rock = BodyBuilder::fixed(Shape::box_with_size(size)).position(centre);
        world.add_body(terrain(rock))?;
    }

    let mut units = Vec::new();
    let columns = config.spawn_columns();
    let corner = config.spawn_half_width();
    let mut id = 0u32;
    for seat in 0..setup.seats {
        let (bx, bz) = base(config, seat, setup.seats);
        for i in 0..config.units_per_player {
            let (col, row) = (i % columns, i / columns);
            let x = bx - corner + config.spawn_spacing.mul_int(i64::from(col));
            let z = bz - corner + config.spawn_spacing.mul_int(i64::from(row));
            let body = world.add_body(unit_body(
                config,
                seat,
                id,
                Vec3::new(x, config.unit.radius, z),
            ))?;
            units.push(Unit {
                id,
                owner: seat,
                hp: config.unit.hp,
                order: Order::Idle,
                body,
            });
            id += 1;
        }
    }
    Ok((world, units))
}

/// Height of a rock (m).
const ROCK_HEIGHT: Fx = Fx::from_int(3);
/// Clearance around a rock (m).
const ROCK_CLEARANCE: Fx = Fx::from_int(4);

/// The seed's rocks: centre and full size of each (see the module doc).
fn rocks(config: &RtsConfig, setup: &Match) -> Vec<(Vec3, Vec3)> {
    let mut rng = Rng::new(setup.seed, 0x726f_636b);
    let half = config.map_size.scale_pow2(-1);
    // Footprints to keep clear of, as (centre x, centre z, half x, half z).
    let mut taken: Vec<(Fx, Fx, Fx, Fx)> = Vec::new();
    let grid = config.spawn_half_width() + config.unit.radius;
    for seat in 0..setup.seats {
        let (x, z) = base(config, seat, setup.seats);
        taken.push((x, z, grid, grid));
    }
    for b in &config.buildings {
        let (hx, hz) = (b.size.x.scale_pow2(-1), b.size.z.scale_pow2(-1));
        taken.push((b.position[0], b.position[1], hx, hz));
    }
    let room = half - ROCK_CLEARANCE;
    let mut placed = Vec::new();
    for _ in 0..config.rocks {
        for _ in 0..64 {
            let size = Vec3::new(
                rng.fx_range(Fx::from_int(2), Fx::from_int(7)).round(),
                ROCK_HEIGHT,
                rng.fx_range(Fx::from_int(2), Fx::from_int(7)).round(),
            );
            let (hx, hz) = (size.x.scale_pow2(-1), size.z.scale_pow2(-1));
            let (x, z) = (
                rng.fx_range(-room + hx, room - hx).round(),
                rng.fx_range(-room + hz, room - hz).round(),
            );
            let clear = taken.iter().all(|&(tx, tz, thx, thz)| {
                (x - tx).abs() >= hx + thx + ROCK_CLEARANCE
                    || (z - tz).abs() >= hz + thz + ROCK_CLEARANCE
            });
            if clear {
                taken.push((x, z, hx, hz));
                placed.push((Vec3::new(x, ROCK_HEIGHT.scale_pow2(-1), z), size));
                break;
            }
        }
    }
    placed
}

/// The footprints `[centre x, centre z, half x, half z]` of the fixed
/// terrain boxes of `world` (walls, buildings, rocks), in body order: what
/// blocks the navigation grid.
pub(crate) fn obstacles(world: &World) -> impl Iterator<Item = [Fx; 4]> + '_ {
    world.bodies().filter_map(|(_, body)| {
        let Shape::Box { half_extents } = body.shape() else {
            return None;
        };
        let terrain = body.kind() == lockstep_physics::BodyKind::Static
            && body.collision_groups().0 == TERRAIN_GROUP;
        let p = body.position();
        terrain.then_some([p.x, p.z, half_extents.x, half_extents.z])
    })
}

/// The body of unit `id` of `seat` at `position`: a dynamic sphere that
/// collides with everything but the ground, damped so that a pushed idle
/// unit stops, its rotation locked (a unit slides where it is steered and
/// pushed; it does not roll) and its height locked (it walks on the
/// ground without touching it).
fn unit_body(config: &RtsConfig, seat: u8, id: u32, position: Vec3) -> BodyBuilder {
    let u = &config.unit;
    BodyBuilder::dynamic(Shape::Sphere { radius: u.radius })
        .lock_rotation()
        .lock_height()
        .position(position)
        .friction(config.friction)
        .damping(u.damping, u.damping)
        .collision_groups(player_group(seat), UNIT_MASK)
        .user_data(u64::from(id))
}

/// What a unit collides with: everything but the ground.
const UNIT_MASK: u32 = !GROUND_GROUP;

/// Whether `body` in `world` is the body [`build`] made for a unit of
/// `owner` with this id (used to validate decoded states).
pub(crate) fn is_unit_body(
    world: &World,
    body: BodyHandle,
    config: &RtsConfig,
    owner: u8,
    id: u32,
) -> bool {
    world.body(body).is_some_and(|b| {
        b.kind() == lockstep_physics::BodyKind::Dynamic
            && b.shape()
                == Shape::Sphere {
                    radius: config.unit.radius,
                }
            && b.user_data() == u64::from(id)
            && b.collision_groups() == (player_group(owner), UNIT_MASK)
            && b.is_height_locked()
    })
}
