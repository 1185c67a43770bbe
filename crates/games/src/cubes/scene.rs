//! Building the cube demo's world from its settings, and the fixed layout of
//! its bodies ([`Layout`]) that the rest of the game relies on.
//!
//! Invariants: slot 0 holds the ground (a static half-space), slots
//! `1..=players` the players' cubes in seat order, and the next `grid²`
//! slots the small cubes in row-major order (cube `i` is at row `i / grid`,
//! column `i % grid`); no body is ever removed, so the layout holds for the
//! whole match. [`Layout::of`] checks a decoded world against it, so the
//! game's lookups never meet a foreign body.

use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{BodyBuilder, BodyHandle, BodyKind, Shape, World, WorldSettings};
use lockstep_sim::{Game, SetupError};

use super::config::CubesConfig;

/// Collision group of the ground.
pub const GROUP_GROUND: u32 = 1;
/// Collision group of the players' cubes.
pub const GROUP_PLAYERS: u32 = 2;
/// Collision group of the small cubes (what [`World::query_aabb`] looks for).
pub const GROUP_CUBES: u32 = 4;

/// `user_data` of a player's cube: `TAG_PLAYER << 32 | seat`.
pub const TAG_PLAYER: u64 = 1;
/// `user_data` of a small cube: `TAG_CUBE << 32 | cube number`.
pub const TAG_CUBE: u64 = 2;

/// The physics settings of a match: the defaults, with the configured
/// gravity, the match's tick rate and seed.
pub fn world_settings(config: &CubesConfig, tick_rate: u16, seed: u64) -> WorldSettings {
    WorldSettings {
        gravity: Vec3::new(Fx::ZERO, -config.gravity, Fx::ZERO),
        tick_rate: u32::from(tick_rate),
        seed,
        ..WorldSettings::default()
    }
}

/// Where seat `seat`'s cube starts: one spacing beyond the edge of the grid,
/// seat 0 on −x, 1 on +x, 2 on −z, 3 on +z (resting on the ground).
pub fn spawn_point(config: &CubesConfig, seat: u8) -> Vec3 {
    let d = config.spawn_distance();
    let y = config.player.size.scale_pow2(-1);
    match seat % 4 {
        0 => Vec3::new(-d, y, Fx::ZERO),
        1 => Vec3::new(d, y, Fx::ZERO),
        2 => Vec3::new(Fx::ZERO, y, -d),
        _ => Vec3::new(Fx::ZERO, y, d),
    }
}

/// Where small cube `i` starts (resting on the ground).
pub fn cube_point(config: &CubesConfig, i: u32) -> Vec3 {
    let grid = config.field.grid.max(1);
    let half = config.field_half_width();
    let s = config.field.spacing;
    Vec3::new(
        s.mul_int(i64::from(i % grid)) - half,
        config.field.cube_size.scale_pow2(-1),
        s.mul_int(i64::from(i / grid)) - half,
    )
}

/// The handles of the game's bodies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    /// Each seat's cube.
    pub players: Vec<BodyHandle>,
    /// The small cubes, by cube number.
    pub cubes: Vec<BodyHandle>,
}

impl Layout {
    /// Builds the world of a validated config for `players` seats. Sizes
    /// and densities so small that a mass rounds to zero are refused.
    pub fn build(
        config: &CubesConfig,
        players: u8,
        settings: WorldSettings,
    ) -> Result<(World, Layout), SetupError> {
        let mut world = World::new(settings);
        let mut add = |b: BodyBuilder, field: &'static str| {
            world.add_body(b).map_err(|e| SetupError::Setting {
                game: super::Cubes::ID,
                field,
                reason: e.to_string(),
            })
        };
        add(
            BodyBuilder::fixed(Shape::HalfSpace)
                .friction(config.field.friction)
                .collision_groups(GROUP_GROUND, u32::MAX),
            "field.friction",
        )?;
        let p = &config.player;
        let players = (0..players)
            .map(|seat| {
                add(
                    BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(p.size)))
                        .position(spawn_point(config, seat))
                        .density(p.density)
                        .friction(p.friction)
                        .damping(p.linear_damping, p.angular_damping)
                        .collision_groups(GROUP_PLAYERS, u32::MAX)
                        .user_data(TAG_PLAYER << 32 | u64::from(seat)),
                    "player.density",
                )
            })
            .collect::<Result<_, _>>()?;
        let f = &config.field;
        let cubes = (0..config.cube_count())
            .map(|i| {
                add(
                    BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(f.cube_size)))
                        .position(cube_point(config, i))
                        .density(f.density)
                        .friction(f.friction)
                        .damping(f.linear_damping, f.angular_damping)
                        .collision_groups(GROUP_CUBES, u32::MAX)
                        .user_data(TAG_CUBE << 32 | u64::from(i))
                        .asleep(),
                    "field.density",
                )
            })
            .collect::<Result<_, _>>()?;
        Ok((world, Layout { players, cubes }))
    }

    /// The layout of a decoded world, or what breaks it: exactly the ground,
    /// `players` dynamic boxes and `cubes` dynamic boxes, in that slot order
    /// with no holes.
    pub fn of(world: &World, players: u8, cubes: u32) -> Result<Layout, &'static str> {
        let expected = 1 + usize::from(players) + cubes as usize;
        if world.body_count() != expected {
            return Err("the world does not hold the ground, the players and the cubes");
        }
        let mut layout = Layout {
            players: Vec::with_capacity(usize::from(players)),
            cubes: Vec::with_capacity(cubes as usize),
        };
        for (slot, (h, b)) in world.bodies().enumerate() {
            if h.index as usize != slot {
                return Err("the world's bodies are not in consecutive slots");
            }
            let is_box = matches!(b.shape(), Shape::Box { .. });
            if slot == 0 {
                if b.kind() != BodyKind::Static || b.shape() != Shape::HalfSpace {
                    return Err("slot 0 is not the ground");
                }
            } else if b.kind() != BodyKind::Dynamic || !is_box {
                return Err("a player or cube is not a dynamic box");
            } else if slot <= usize::from(players) {
                layout.players.push(h);
            } else {
                layout.cubes.push(h);
            }
        }
        Ok(layout)
    }

    /// The cube number of a body, if it is a small cube.
    pub fn cube_of(&self, h: BodyHandle) -> Option<u32> {
        let first = self.cubes.first()?.index;
        let i = h.index.checked_sub(first)?;
        (self.cubes.get(i as usize) == Some(&h)).then_some(i)
    }

    /// The seat of a body, if it is a player's cube.
    pub fn seat_of(&self, h: BodyHandle) -> Option<usize> {
        let i = h.index.checked_sub(1)? as usize;
        (self.players.get(i) == Some(&h)).then_some(i)
    }
}
