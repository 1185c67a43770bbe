//! Katamari mode (z held): which small cubes stick to a player's cube and
//! how they are held there.
//!
//! A cube sticks when, after a step, it touches the player's cube or a cube
//! already stuck to it, lies within `katamari.radius` of the player's
//! centre, and is stuck to no other player; at most `katamari.max_cubes`
//! stick, the lowest cube numbers first. Each frame a damped spring pulls
//! every stuck cube towards the player's centre ([`pull`]), and the player
//! takes the opposite impulse, so the clump moves as one mass. A cube
//! farther than the radius comes off ([`drop_far`]); releasing z drops all.
//!
//! Invariants: a player's stuck list is sorted, without duplicates, holds
//! valid cube numbers only, never exceeds `max_cubes`, and no cube is on two
//! lists; everything is decided from the world's contacts in their `(a, b)`
//! order and the lists' order, so every peer sticks the same cubes.

use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{BodyHandle, World};

use super::config::CubesConfig;
use super::scene::Layout;

/// The mass of the stuck cubes.
pub fn carried_mass(world: &World, layout: &Layout, stuck: &[u32]) -> Fx {
    stuck
        .iter()
        .filter_map(|&i| world.body(*layout.cubes.get(i as usize)?))
        .fold(Fx::ZERO, |m, b| m + b.mass())
}

/// Pulls the stuck cubes towards the player's centre with a damped spring
/// (stiffness `strength`, damping `damping` of the velocity relative to the
/// player), and gives the player the opposite impulse.
pub fn pull(
    world: &mut World,
    config: &CubesConfig,
    layout: &Layout,
    player: BodyHandle,
    stuck: &[u32],
) {
    let Some(p) = world.body(player) else { return };
    let (centre, velocity) = (p.position(), p.linear_velocity());
    let dt = world.settings().dt();
    let k = &config.katamari;
    let stiffness = k.strength * dt;
    let damping = (k.damping * dt).min(Fx::ONE);
    let mut reaction = Vec3::ZERO;
    for &i in stuck {
        let Some(&h) = layout.cubes.get(i as usize) else {
            continue;
        };
        let Some(b) = world.body(h) else { continue };
        let position = b.position();
        let dv = (centre - position) * stiffness + (velocity - b.linear_velocity()) * damping;
        let impulse = dv * b.mass();
        world.apply_impulse(h, impulse, position);
        reaction -= impulse;
    }
    if reaction != Vec3::ZERO {
        world.apply_impulse(player, reaction, centre);
    }
}

/// Drops the stuck cubes farther than `katamari.radius` from the player's
/// centre (all of them if the player's cube is missing).
pub fn drop_far(
    world: &World,
    config: &CubesConfig,
    layout: &Layout,
    player: BodyHandle,
    stuck: &mut Vec<u32>,
) {
    let Some(centre) = world.body(player).map(|b| b.position()) else {
        stuck.clear();
        return;
    };
    let radius = config.katamari.radius;
    stuck.retain(|&i| {
        layout
            .cubes
            .get(i as usize)
            .and_then(|&h| world.body(h))
            .is_some_and(|b| (b.position() - centre).length() <= radius)
    });
}

/// The cubes that may stick to `seat`'s cube after the last step: cubes not
/// in `stuck` touching the player's cube or a cube in `stuck`, within
/// `katamari.radius` of its centre; sorted, without duplicates.
pub fn touching(
    world: &World,
    config: &CubesConfig,
    layout: &Layout,
    seat: usize,
    stuck: &[u32],
) -> Vec<u32> {
    let Some(centre) = layout
        .players
        .get(seat)
        .and_then(|&h| world.body(h))
        .map(|b| b.position())
    else {
        return Vec::new();
    };
    let holds = |h: BodyHandle| {
        layout.seat_of(h) == Some(seat)
            || layout
                .cube_of(h)
                .is_some_and(|i| stuck.binary_search(&i).is_ok())
    };
    let mut found = Vec::new();
    for c in world.contacts() {
        for (holder, other) in [(c.a, c.b), (c.b, c.a)] {
            let Some(i) = layout.cube_of(other) else {
                continue;
            };
            if holds(holder) && stuck.binary_search(&i).is_err() {
                found.push(i);
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    let radius = config.katamari.radius;
    found.retain(|&i| {
        world
            .body(layout.cubes[i as usize])
            .is_some_and(|b| (b.position() - centre).length() <= radius)
    });
    found
}

/// Sticks `candidates` (sorted) that no player holds yet to `stuck`, lowest
/// numbers first, up to `katamari.max_cubes`.
pub fn stick(
    config: &CubesConfig,
    stuck: &mut Vec<u32>,
    candidates: &[u32],
    held_elsewhere: impl Fn(u32) -> bool,
) {
    let room = (config.katamari.max_cubes as usize).saturating_sub(stuck.len());
    let before = stuck.len();
    stuck.extend(
        candidates
            .iter()
            .copied()
            .filter(|&i| !held_elsewhere(i))
            .take(room),
    );
    if stuck.len() > before {
        stuck.sort_unstable();
    }
}
