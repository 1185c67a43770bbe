//! Combat: units shoot the nearest enemy in range, idle units chase the
//! nearest enemy in sight, attack-moving units stand to fight, missiles fly,
//! and the dead are removed.
//!
//! Each unit looks for enemies once every `attack_interval` frames, on the
//! frames where `frame % attack_interval == id % attack_interval`, so the
//! cost is spread evenly over frames. It visits the enemy bodies near it
//! (`World::query_aabb_each` with the other players' groups), within half
//! its sight first and within all of it only if that finds none nearer
//! than half the sight, and takes the nearest living one (ties to the
//! lower id); a body is looked up among the units only when it would beat
//! the nearest so far. If their surfaces
//! are within `range` it shoots: with a `missile_speed` of 0 the hit lands
//! at once (a melee blow); otherwise a [`Missile`] leaves the shooter and
//! lands `⌈distance × tick rate / missile_speed⌉` frames later (at least
//! one), on the target wherever it went by then, if it still lives. An
//! idle unit with the enemy in `sight` but out of range chases it (an
//! attack-move toward where it stands); a unit on an attack-move stands
//! still while an enemy is in range at its look (`fighting`) and walks on
//! when none is.
//!
//! A pass first finds every looking unit's nearest enemy as the units
//! stand, on the world's threads; then the units act in id order, and one
//! whose nearest was killed earlier in the pass looks again.
//!
//! Invariants: attackers act in id order; missiles are kept in the order
//! they were shot and land in that order, before this frame's shots; a
//! blow or a landing missile takes hit points at once, so a unit killed
//! earlier in the pass does not strike back; units at 0 hp are removed
//! (body, unit and selection entries) at the end of the pass, and missiles
//! aimed at them fall harmlessly; distances are compared squared, in `Fx`,
//! and the one square root (a missile's flight) is `Fx`'s.

use lockstep_derive::Canonical;
use lockstep_fx::{Fx, Vec3, fork_join};
use lockstep_physics::{Aabb, World};

use super::config::UnitConfig;
use super::map::enemy_groups;
use super::unit::{Order, Unit};

/// A missile in flight (an arrow, a bolt): shot by a unit of `owner` from
/// `(x, z)` at frame `shot`, it hits unit `target` at frame `lands` if the
/// target still lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Canonical)]
#[canonical(entity = "missile")]
pub struct Missile {
    /// The shooter's seat (the missile's colour).
    pub owner: u8,
    /// The id of the unit it is aimed at.
    pub target: u32,
    /// Where it was shot from (m).
    #[canonical(name = "from x")]
    pub x: Fx,
    /// Where it was shot from (m).
    #[canonical(name = "from z")]
    pub z: Fx,
    /// The frame it was shot in.
    pub shot: u32,
    /// The frame it lands in (after `shot`).
    pub lands: u32,
}

/// Lands the missiles due at `frame` (hitting targets still alive), then
/// runs this frame's share of looks: shots, chases and attack-move stands.
/// Returns whether a unit died.
pub(crate) fn fight(
    world: &World,
    units: &mut [Unit],
    missiles: &mut Vec<Missile>,
    rules: &UnitConfig,
    players: u8,
    frame: u32,
) -> bool {
    let mut died = land(units, missiles, rules.damage, frame);
    let interval = rules.attack_interval.max(1);
    let diameter = rules.radius.mul_int(2);
    let reach = diameter + rules.range;
    let sight = diameter + rules.sight;
    let (reach2, sight2) = (reach * reach, sight * sight);
    let tick_rate = i64::from(world.settings().tick_rate.max(1));
    let looks: Vec<usize> = (0..units.len())
        .filter(|&i| units[i].id % interval == frame % interval && units[i].hp > 0)
        .collect();
    let first_looks = nearest_enemies(world, units, &looks, players, sight);
    for (&i, first) in looks.iter().zip(first_looks) {
        let attacker = &units[i];
        if attacker.hp == 0 {
            // Killed earlier in this pass.
            continue;
        }
        let Some(body) = world.body(attacker.body) else {
            continue;
        };
        let p = body.position();
        // The living enemies only ever shrink within a pass, so the nearest
        // at its start is still the nearest while it lives; if it died
        // since, the unit looks again.
        let nearest = match first {
            Some((_, j)) if units[j].hp == 0 => {
                nearest_enemy(world, units, attacker.owner, players, p, sight)
            }
            first => first,
        };
        let in_reach = nearest.is_some_and(|(d2, _)| d2 <= reach2);
        if let Order::Move {
            attack: true,
            fighting,
            ..
        } = &mut units[i].order
        {
            *fighting = in_reach;
        }
        let Some((d2, j)) = nearest else { continue };
        if in_reach {
            if rules.missile_speed.is_positive() {
                // Flight frames: distance / speed in seconds, at the tick
                // rate, rounded up (−⌊−x⌋).
                let frames = d2.sqrt().mul_int(tick_rate) / rules.missile_speed;
                let flight = -(-frames).to_int_floor();
                missiles.push(Missile {
                    owner: units[i].owner,
                    target: units[j].id,
                    x: p.x,
                    z: p.z,
                    shot: frame,
                    lands: frame + flight.max(1) as u32,
                });
            } else {
                let target = &mut units[j];
                target.hp = target.hp.saturating_sub(rules.damage);
                died |= target.hp == 0;
            }
        } else if d2 <= sight2 && units[i].order == Order::Idle {
            if let Some(b) = world.body(units[j].body) {
                let t = b.position();
                units[i].order = Order::Move {
                    x: t.x,
                    z: t.z,
                    goal: None,
                    blocked: 0,
                    attack: true,
                    fighting: false,
                };
            }
        }
    }
    died
}

/// Fewest looks in a pass that are shared between the world's threads.
const SHARED_LOOKS: usize = 64;

/// The nearest living enemy of each unit of `looks` (indices), as the
/// units stand: on the world's threads when there are enough looks, each
/// thread taking a contiguous share (every look reads the world and the
/// units alone, so the answers do not depend on the threads). The first
/// look runs on the calling thread, before the others start: it builds
/// the world's query grid, which the others share.
fn nearest_enemies(
    world: &World,
    units: &[Unit],
    looks: &[usize],
    players: u8,
    sight: Fx,
) -> Vec<Option<(Fx, usize)>> {
    let look = |&i: &usize| {
        let u = &units[i];
        let p = world.body(u.body)?.position();
        nearest_enemy(world, units, u.owner, players, p, sight)
    };
    let threads = world.threads();
    if threads <= 1 || looks.len() < SHARED_LOOKS {
        return looks.iter().map(look).collect();
    }
    let (first, rest) = looks.split_at(1);
    let mut found: Vec<_> = first.iter().map(look).collect();
    let shares = rest.chunks(rest.len().div_ceil(threads)).collect();
    for share in fork_join(shares, |share| share.iter().map(look).collect::<Vec<_>>()) {
        found.extend(share);
    }
    found
}

/// The nearest living enemy of `owner` within `sight` of `p` on both ground
/// axes: (squared ground distance, index), ties to the lower id (a total
/// order, so the order the query visits the bodies in does not matter).
///
/// It looks within half the sight first, and over the whole sight only if
/// that finds no enemy nearer than half the sight. A body the first look
/// does not visit lies more than half the sight away on a ground axis, so
/// its squared distance is at least `(sight / 2)²` (a product rounded to
/// nearest never shrinks as its factors grow): it cannot beat an enemy
/// found nearer than that, and the first look's answer is the whole
/// sight's. When an enemy stands that near (a battle), a look reads about
/// a quarter of the bodies in sight; when none does, it reads that
/// quarter twice (in the 8 × 1 024 bench, four looks in five).
fn nearest_enemy(
    world: &World,
    units: &[Unit],
    owner: u8,
    players: u8,
    p: Vec3,
    sight: Fx,
) -> Option<(Fx, usize)> {
    let near = sight.scale_pow2(-1);
    let within = |ground| nearest_within(world, units, owner, players, p, ground, sight);
    match within(near) {
        Some(found) if found.0 < near * near => Some(found),
        _ => within(sight),
    }
}

/// The nearest living enemy of `owner` among the bodies whose bounds lie
/// within `ground` of `p` on both ground axes and within `height` of it
/// vertically: (squared ground distance, index), ties to the lower id.
fn nearest_within(
    world: &World,
    units: &[Unit],
    owner: u8,
    players: u8,
    p: Vec3,
    ground: Fx,
    height: Fx,
) -> Option<(Fx, usize)> {
    let reach = Vec3::new(ground, height, ground);
    let area = Aabb::from_corners(p - reach, p + reach);
    let mut nearest: Option<(Fx, u32, usize)> = None;
    world.query_aabb_each(&area, enemy_groups(owner, players), |_, b| {
        // The key first: only a body that would beat the nearest so far is
        // looked up among the units (a search of the whole list) and
        // checked for life.
        let Ok(id) = u32::try_from(b.user_data()) else {
            return;
        };
        let d = b.position() - p;
        let d2 = d.x * d.x + d.z * d.z;
        if nearest.is_some_and(|n| (d2, id) >= (n.0, n.1)) {
            return;
        }
        let Some(j) = index_of(units, id) else {
            return;
        };
        if units[j].hp > 0 {
            nearest = Some((d2, id, j));
        }
    });
    nearest.map(|(d2, _, j)| (d2, j))
}

/// Lands the missiles due at `frame`, in the order they were shot: each
/// takes `damage` from its target if the target still lives. Returns
/// whether a unit died.
fn land(units: &mut [Unit], missiles: &mut Vec<Missile>, damage: u32, frame: u32) -> bool {
    let mut died = false;
    missiles.retain(|m| {
        if m.lands > frame {
            return true;
        }
        if let Some(j) = index_of(units, m.target) {
            let target = &mut units[j];
            if target.hp > 0 {
                target.hp = target.hp.saturating_sub(damage);
                died |= target.hp == 0;
            }
        }
        false
    });
    died
}

/// The index of unit `id` in `units` (sorted by id).
pub(crate) fn index_of(units: &[Unit], id: u32) -> Option<usize> {
    units.binary_search_by_key(&id, |u| u.id).ok()
}

#[cfg(test)]
mod tests {
    use lockstep_fx::{Fx, Rng, Vec3};
    use lockstep_physics::{BodyBuilder, Shape, World, WorldSettings};

    use super::super::Rts;
    use super::super::map::player_group;
    use super::super::unit::{Order, Unit};
    use super::{fight, nearest_enemy};
    use crate::Demo;

    /// The units' radius.
    const RADIUS: Fx = Fx::HALF;

    /// The nearest living enemy by a scan of every unit: the bodies whose
    /// bounds meet the square of `sight` around `p`, least (distance², id).
    fn scanned(
        world: &World,
        units: &[Unit],
        owner: u8,
        p: Vec3,
        sight: Fx,
    ) -> Option<(Fx, usize)> {
        units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.owner != owner && u.hp > 0)
            .filter_map(|(j, u)| {
                let q = world.body(u.body)?.position();
                let d = q - p;
                let reach = sight + RADIUS;
                let near = [d.x, d.y, d.z].iter().all(|c| c.abs() <= reach);
                near.then_some((d.x * d.x + d.z * d.z, u.id, j))
            })
            .min_by_key(|&(d2, id, _)| (d2, id))
            .map(|(d2, _, j)| (d2, j))
    }

    /// Looking a body up only when it would beat the nearest so far finds
    /// exactly what checking every body finds: crowds of four sides, some
    /// units dead, ties in distance (units on a grid), ids not in slot order.
    #[test]
    fn nearest_enemy_matches_a_scan_of_every_unit() {
        let mut rng = Rng::new(0x31, 4);
        for round in 0..6 {
            let mut world = World::new(WorldSettings::default());
            let mut units = Vec::new();
            for id in 0..400u32 {
                let owner = rng.below(4) as u8;
                // Whole metres on a small field: many equal distances.
                let at = |rng: &mut Rng| Fx::from_int(rng.below(40) as i32 - 20);
                let position = Vec3::new(at(&mut rng), RADIUS, at(&mut rng));
                let body = world
                    .add_body(
                        BodyBuilder::dynamic(Shape::Sphere { radius: RADIUS })
                            .position(position)
                            .collision_groups(player_group(owner), u32::MAX)
                            .user_data(u64::from(id * 7 % 400)),
                    )
                    .expect("a valid body");
                units.push(Unit {
                    id: id * 7 % 400,
                    owner,
                    hp: rng.below(3),
                    order: Order::Idle,
                    body,
                });
            }
            units.sort_by_key(|u| u.id);
            for look in 0..200 {
                let owner = rng.below(4) as u8;
                let p = Vec3::new(
                    Fx::from_int(rng.below(48) as i32 - 24),
                    RADIUS,
                    Fx::from_int(rng.below(48) as i32 - 24),
                );
                let sight = Fx::from_int(1 + rng.below(12) as i32);
                assert_eq!(
                    nearest_enemy(&world, &units, owner, 4, p, sight),
                    scanned(&world, &units, owner, p, sight),
                    "round {round}, look {look}"
                );
            }
        }
    }

    /// Blows shared between threads land exactly as in a pass where each
    /// unit looks at its turn: crowds of two sides in melee (every unit
    /// looks every frame, and a blow kills), so that many a unit's nearest
    /// at the start of a pass is killed before its turn and it looks again.
    #[test]
    fn shared_looks_strike_as_looks_in_turn() {
        let mut rules = Rts::default_config().unit;
        rules.radius = RADIUS;
        rules.missile_speed = Fx::ZERO;
        rules.attack_interval = 1;
        rules.damage = 1;
        rules.range = Fx::ONE;
        rules.sight = Fx::from_int(3);
        let reach = rules.radius.mul_int(2) + rules.range;
        let sight = rules.radius.mul_int(2) + rules.sight;
        let mut rng = Rng::new(0x32, 0);
        let mut world = World::new(WorldSettings::default());
        world.set_threads(2);
        let mut units = Vec::new();
        for id in 0..600u32 {
            let owner = rng.below(2) as u8;
            let at = |rng: &mut Rng| Fx::from_int(rng.below(30) as i32 - 15);
            let body = world
                .add_body(
                    BodyBuilder::dynamic(Shape::Sphere { radius: RADIUS })
                        .position(Vec3::new(at(&mut rng), RADIUS, at(&mut rng)))
                        .collision_groups(player_group(owner), u32::MAX)
                        .user_data(u64::from(id)),
                )
                .expect("a valid body");
            units.push(Unit {
                id,
                owner,
                hp: 1 + rng.below(2),
                order: Order::Idle,
                body,
            });
        }
        let mut looked_again = 0;
        for frame in 0..4 {
            // Each unit in turn, looking by a scan of every unit.
            let mut want = units.clone();
            let start = want.clone();
            for i in 0..want.len() {
                let u = &want[i];
                if u.hp == 0 {
                    continue;
                }
                let p = world.body(u.body).unwrap().position();
                let Some((d2, j)) = scanned(&world, &want, u.owner, p, sight) else {
                    continue;
                };
                let first = scanned(&world, &start, u.owner, p, sight);
                looked_again += usize::from(first.is_some_and(|(_, k)| k != j));
                if d2 <= reach * reach {
                    want[j].hp -= 1;
                }
            }
            let mut missiles = Vec::new();
            fight(&world, &mut units, &mut missiles, &rules, 2, frame);
            assert!(missiles.is_empty());
            let hp = |us: &[Unit]| us.iter().map(|u| u.hp).collect::<Vec<_>>();
            assert_eq!(hp(&units), hp(&want), "frame {frame}");
        }
        assert!(looked_again > 20, "{looked_again} units looked again");
    }
}
