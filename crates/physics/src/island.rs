//! Islands and sleeping.
//!
//! An island is a set of awake dynamic bodies connected by touching contacts
//! (static and kinematic bodies do not join islands: they would merge the
//! whole world through the ground). After each step a body that moved slower
//! than the sleep speed counts one more still frame; an island whose bodies
//! have all been still for `sleep_frames` goes to sleep as a whole, with its
//! velocities zeroed and its island id set to its lowest slot index. A body
//! touching a moving kinematic body never sleeps.
//!
//! Islands come from a union-find whose root is always the lowest index, over
//! contacts in `(a, b)` order, so the outcome depends only on the state. A
//! step in which no body has yet been still for `sleep_frames` (a battle,
//! a scene still falling) cannot put an island to sleep, and skips it.
//!
//! The still counts ([`count_still`]) are per body, so the step counts them
//! with containment in shares of the slots on the world's threads; the
//! islands ([`update`]) are then found on the calling thread.

use lockstep_fx::{Fx, Vec3};

use crate::body::{Body, BodyKind};
use crate::world::World;

/// What counting the still frames of some bodies found: whether one of
/// them may fall asleep, and whether one is a moving kinematic body. The
/// counts of all bodies, in any shares, merge by `or`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stillness {
    /// A body has been still for `sleep_frames`.
    pub ready: bool,
    /// A kinematic body moves (only then can a contact keep a body from
    /// counting still frames).
    pub pushers: bool,
}

impl Stillness {
    /// Both findings of `self` and `other`.
    pub fn or(self, other: Stillness) -> Stillness {
        Stillness {
            ready: self.ready || other.ready,
            pushers: self.pushers || other.pushers,
        }
    }
}

/// Counts one more still frame for a sleep candidate `b` that moved slower
/// than the sleep speed (`speed2` is its square) this step, and starts its
/// count again if it moved faster; `ready` once it has `needed` frames. It
/// reads and writes `b` alone, so shares of the bodies may be counted on
/// different threads.
pub(crate) fn count_still(b: &mut Body, speed2: Fx, needed: u32) -> Stillness {
    if !World::is_moving_dynamic(b) {
        return Stillness {
            ready: false,
            pushers: is_moving_kinematic(b),
        };
    }
    // Speed of the fastest surface point: |v| + |ω|·extent, compared squared.
    let extent = b.shape.reach();
    let still = b.linear_velocity.length_squared() < speed2
        && b.angular_velocity.length_squared() * extent * extent < speed2;
    b.still_frames = if still {
        b.still_frames.saturating_add(1)
    } else {
        0
    };
    Stillness {
        ready: b.still_frames >= needed,
        pushers: false,
    }
}

/// Puts still islands to sleep, once every body's still frames are counted
/// ([`count_still`]) and `found` is what the counting found.
pub(crate) fn update(world: &mut World, found: Stillness) {
    let n = world.slots.len();
    let needed = world.settings.sleep_frames;
    let Stillness { ready, pushers } = found;
    // If no body has been still long enough, no island can fall asleep
    // this step; only a moving kinematic body can then reset counts.
    if !ready && !pushers {
        return;
    }
    // The union-find's parents, needed only when an island may sleep
    // (the buffers are the world's scratch, given back at the end).
    let mut parent = std::mem::take(&mut world.scratch.sleep_parent);
    parent.clear();
    if ready {
        parent.extend(0..n as u32);
    }
    let mut restless = Vec::new();
    for c in &world.contacts {
        if !c.fresh || c.manifold.count == 0 {
            continue;
        }
        let (Some(a), Some(b)) = (
            world.slots[c.a as usize].body.as_ref(),
            world.slots[c.b as usize].body.as_ref(),
        ) else {
            continue;
        };
        match (World::is_moving_dynamic(a), World::is_moving_dynamic(b)) {
            (true, true) if ready => union(&mut parent, c.a, c.b),
            (true, false) if is_moving_kinematic(b) => restless.push(c.a),
            (false, true) if is_moving_kinematic(a) => restless.push(c.b),
            _ => {}
        }
    }
    for i in restless {
        if let Some(b) = world.slots[i as usize].body.as_mut() {
            b.still_frames = 0;
        }
    }
    if !ready {
        world.scratch.sleep_parent = parent;
        return;
    }
    // Each candidate's island root, and each island's fewest still frames.
    let mut members = std::mem::take(&mut world.scratch.sleep_members);
    members.clear();
    let mut min_still = std::mem::take(&mut world.scratch.sleep_min_still);
    min_still.clear();
    min_still.resize(n, u32::MAX);
    for i in 0..n as u32 {
        let Some(b) = world.slots[i as usize].body.as_ref() else {
            continue;
        };
        if !World::is_moving_dynamic(b) {
            continue;
        }
        let r = find(&mut parent, i);
        min_still[r as usize] = min_still[r as usize].min(b.still_frames);
        members.push((i, r));
    }
    for &(i, r) in &members {
        if min_still[r as usize] >= needed {
            let slot = &mut world.slots[i as usize];
            slot.island = r;
            let b = slot.body.as_mut().expect("members are live");
            b.awake = false;
            b.linear_velocity = Vec3::ZERO;
            b.angular_velocity = Vec3::ZERO;
        }
    }
    let sc = &mut world.scratch;
    sc.sleep_parent = parent;
    sc.sleep_members = members;
    sc.sleep_min_still = min_still;
}

fn is_moving_kinematic(b: &Body) -> bool {
    b.kind == BodyKind::Kinematic
        && (b.linear_velocity != Vec3::ZERO || b.angular_velocity != Vec3::ZERO)
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

/// Joins two sets; the root is the lower index.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra < rb {
        parent[rb as usize] = ra;
    } else if rb < ra {
        parent[ra as usize] = rb;
    }
}
