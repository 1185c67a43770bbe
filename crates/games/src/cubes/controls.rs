//! What the arrows and space do to the world: pushing and lifting a player's
//! cube ([`drive`]) and blowing the small cubes around it away ([`blow`]).
//!
//! Invariants: both read only the world and the settings and act through
//! the world's force and impulse calls (which wake what they touch); every
//! body is looked up through its handle, so a missing body is skipped, never
//! a panic; the cubes blown are those [`World::query_aabb`] reports, in slot
//! order.

use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{Aabb, BodyHandle, World};

use super::config::CubesConfig;
use super::input::CubesInput;
use super::scene::{GROUP_CUBES, Layout};

/// −1, 0 or +1 from a pair of opposite buttons.
fn axis(negative: bool, positive: bool) -> Fx {
    Fx::from_int(i32::from(positive) - i32::from(negative))
}

/// Pushes a player's cube along x and z with the arrows (each axis up to
/// `max_speed`) and lifts it while space is held below `hover_height`.
/// `carried` is the mass stuck to the cube, which the push and the lift
/// accelerate along with it.
pub fn drive(
    world: &mut World,
    config: &CubesConfig,
    player: BodyHandle,
    input: CubesInput,
    carried: Fx,
) {
    let Some(b) = world.body(player) else { return };
    let p = &config.player;
    let mass = b.mass() + carried;
    let v = b.linear_velocity();
    let height = b.position().y;
    let mut force = Vec3::ZERO;
    let x = axis(input.left, input.right);
    if !x.is_zero() && v.x * x < p.max_speed {
        force.x = mass * p.push * x;
    }
    let z = axis(input.up, input.down);
    if !z.is_zero() && v.z * z < p.max_speed {
        force.z = mass * p.push * z;
    }
    if input.space && height < p.hover_height {
        force.y = mass * p.lift;
    }
    if force != Vec3::ZERO {
        world.apply_force(player, force);
    }
}

/// Blows the small cubes whose centres are within `blow.radius` of `centre`
/// away from it, out and up, except the cubes in `spared` (sorted cube
/// numbers: those stuck to the blower). Returns how many were blown.
pub fn blow(
    world: &mut World,
    config: &CubesConfig,
    layout: &Layout,
    centre: Vec3,
    spared: &[u32],
) -> u32 {
    let b = &config.blow;
    if !b.radius.is_positive() || !b.strength.is_positive() {
        return 0;
    }
    let dt = world.settings().dt();
    let reach = Vec3::splat(b.radius);
    let area = Aabb::from_corners(centre - reach, centre + reach);
    // Impulses are applied at a point above the centre, so blown cubes
    // tumble as well as fly.
    let lever = Vec3::new(Fx::ZERO, config.field.cube_size.scale_pow2(-2), Fx::ZERO);
    let mut blown = 0;
    for h in world.query_aabb(&area, GROUP_CUBES) {
        let Some(i) = layout.cube_of(h) else { continue };
        if spared.binary_search(&i).is_ok() {
            continue;
        }
        let Some(cube) = world.body(h) else { continue };
        let (position, mass) = (cube.position(), cube.mass());
        let offset = position - centre;
        let distance = offset.length();
        if distance >= b.radius {
            continue;
        }
        let out = Vec3::new(offset.x, Fx::ZERO, offset.z).normalize_or_zero();
        let direction = (out + Vec3::Y * b.upward).normalize_or_zero();
        let falloff = (b.radius - distance) / b.radius;
        let dv = direction * (b.strength * dt * falloff);
        world.apply_impulse(h, dv * mass, position + lever);
        blown += 1;
    }
    blown
}
