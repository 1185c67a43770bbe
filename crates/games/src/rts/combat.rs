//! Combat: units hit the nearest enemy in reach, idle units chase the
//! nearest enemy in sight, and the dead are removed.
//!
//! Each unit looks for enemies once every `attack_interval` frames, on the
//! frames where `frame % attack_interval == id % attack_interval`, so the
//! cost is spread evenly over frames. It asks the physics world for enemy
//! bodies near it (`World::query_aabb` with the other players' groups),
//! takes the nearest living one (ties to the lower id), and hits it for
//! `damage` if their surfaces are within `range`; otherwise, if it is idle
//! and the enemy is within `sight`, it moves toward it.
//!
//! Invariants: attackers act in id order and a hit lands at once, so a unit
//! killed earlier in the pass does not strike back; units at 0 hp are
//! removed (body, unit and selection entries) at the end of the pass;
//! distances are compared squared, in `Fx`, with no square root.

use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{Aabb, World};

use super::config::UnitConfig;
use super::map::enemy_groups;
use super::unit::{Order, Unit};

/// Runs this frame's share of attacks and chases; returns whether a unit
/// died.
pub(crate) fn fight(
    world: &World,
    units: &mut [Unit],
    rules: &UnitConfig,
    players: u8,
    frame: u32,
) -> bool {
    let interval = rules.attack_interval.max(1);
    let diameter = rules.radius.mul_int(2);
    let reach = diameter + rules.range;
    let sight = diameter + rules.sight;
    let (reach2, sight2) = (reach * reach, sight * sight);
    let mut died = false;
    for i in 0..units.len() {
        let attacker = &units[i];
        if attacker.id % interval != frame % interval || attacker.hp == 0 {
            continue;
        }
        let Some(body) = world.body(attacker.body) else {
            continue;
        };
        let p = body.position();
        let area = Aabb::from_corners(
            p - Vec3::new(sight, sight, sight),
            p + Vec3::new(sight, sight, sight),
        );
        // The nearest living enemy: (squared distance, id, index).
        let mut nearest: Option<(Fx, u32, usize)> = None;
        for h in world.query_aabb(&area, enemy_groups(attacker.owner, players)) {
            let Some(b) = world.body(h) else { continue };
            let Some(j) = index_of(units, b.user_data()) else {
                continue;
            };
            if units[j].hp == 0 {
                continue;
            }
            let d = b.position() - p;
            let d2 = d.x * d.x + d.z * d.z;
            let key = (d2, units[j].id, j);
            if nearest.is_none_or(|n| (key.0, key.1) < (n.0, n.1)) {
                nearest = Some(key);
            }
        }
        let Some((d2, _, j)) = nearest else { continue };
        if d2 <= reach2 {
            let target = &mut units[j];
            target.hp = target.hp.saturating_sub(rules.damage);
            died |= target.hp == 0;
        } else if d2 <= sight2 && units[i].order == Order::Idle {
            if let Some(b) = world.body(units[j].body) {
                let t = b.position();
                units[i].order = Order::Move {
                    x: t.x,
                    z: t.z,
                    goal: None,
                    blocked: 0,
                };
            }
        }
    }
    died
}

/// The index of unit `id` in `units` (sorted by id).
pub(crate) fn index_of(units: &[Unit], id: u64) -> Option<usize> {
    let id = u32::try_from(id).ok()?;
    units.binary_search_by_key(&id, |u| u.id).ok()
}
