//! Units: their game state (`Unit`: owner, hit points, [`Order`], body)
//! and steering, which turns an order into a horizontal velocity each frame.
//!
//! Steering only sets velocities; the physics contacts do the rest (units
//! push each other apart and slide along obstacles). A unit's body is a
//! frictionless sphere whose rotation is locked: it slides where it is
//! steered and pushed, and never rolls. A unit ordered by a
//! move command follows its group's flow field (see [`super::nav`]): it
//! heads along the field's step at its cell until its own target is within
//! [`DIRECT_RANGE`] with a clear line to it, then straight for the target,
//! so a group keeps its formation in the open and files around obstacles.
//! A chase (no field) heads straight for its target. A unit on an
//! attack-move (`attack`) that found an enemy in range at its last look
//! (`fighting`, set by combat) stands still to fight, and walks on once
//! none is. It moves at full speed, slowing linearly within
//! `slow_distance`. A unit held below a quarter of its speed (by a crowd
//! or a wall) steers 60° to its right while it is held, so crowds that meet
//! head-on pass each other (`keep_right`). It arrives within
//! `arrive_distance`, and gives up once held for `give_up_frames` frames in
//! a row. Arriving, giving up and stopping zero
//! the unit's horizontal and angular velocity; idle units are left to their
//! damping and fall asleep.
//!
//! Invariants: units are kept in a `Vec` sorted by id (ids are never
//! reused), and processed in that order; a unit's body exists while the
//! unit does.

use lockstep_derive::Canonical;
use lockstep_fx::{Fx, Vec3};
use lockstep_physics::{BodyHandle, World};

use super::config::UnitConfig;
use super::nav::{Flow, NEIGHBOURS, NavGrid};

/// A unit this close to its own target (m) leaves the flow field for a
/// straight line, if the line crosses only free cells.
pub const DIRECT_RANGE: Fx = Fx::from_int(24);

/// cos 60° and sin 60°: how far [`keep_right`] turns a heading.
const SIDESTEP_COS: Fx = Fx::HALF;
const SIDESTEP_SIN: Fx = Fx::lit("0.8660254038");

/// A heading turned 60° to its right (about +y, seen from above). Units
/// held up steer this way, so two crowds that meet head-on slide past each
/// other instead of pushing straight into each other until both give up.
/// (60° was chosen by counting stuck units where two armies cross a walled
/// map: 16, 9, 4 and 1 in three seeded crossings for 15°, 27°, 45° and 60°
/// with units giving up after 45 frames; none in twelve with 60° and 90.)
fn keep_right(h: Vec3) -> Vec3 {
    // (x, z) → (x·c − z·s, x·s + z·c)
    Vec3::new(
        h.x * SIDESTEP_COS - h.z * SIDESTEP_SIN,
        Fx::ZERO,
        h.x * SIDESTEP_SIN + h.z * SIDESTEP_COS,
    )
}

/// 1/√2, the length of each axis of a diagonal unit step.
const HALF_SQRT2: Fx = Fx::lit("0.70710678");

/// What a unit is doing (encoded as a tag, 0 idle or 1 move, then the
/// move's fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Canonical)]
pub enum Order {
    /// Standing (it still fights enemies in range and chases those in sight).
    #[default]
    Idle,
    /// Heading for a point on the ground.
    Move {
        /// Target x (m).
        #[canonical(name = "target x")]
        x: Fx,
        /// Target z (m).
        #[canonical(name = "target z")]
        z: Fx,
        /// The goal cell of the flow field it follows (`None`: straight to
        /// the target, as a chase goes).
        #[canonical(name = "flow goal")]
        goal: Option<u32>,
        /// Frames in a row spent below a quarter of its speed.
        #[canonical(name = "blocked frames")]
        blocked: u32,
        /// An attack-move: it stops to fight enemies in range on the way.
        attack: bool,
        /// On an attack-move, an enemy was in range at its last look: it
        /// stands and fights instead of walking.
        fighting: bool,
    },
}

/// A unit's game state (its position and velocity live in its body),
/// encoded as entity `unit` with its id; decoding checks only the encoding
/// (the game checks the unit against the world and the settings).
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "unit", ids(id))]
pub(crate) struct Unit {
    pub id: u32,
    pub owner: u8,
    /// Hit points; the unit is removed at the end of the pass that takes
    /// them to 0.
    pub hp: u32,
    pub order: Order,
    pub body: BodyHandle,
}

/// A read-only view of a unit, for bots, renderers and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitView {
    /// Stable id (units are numbered seat by seat at spawn).
    pub id: u32,
    /// The seat that commands it.
    pub owner: u8,
    /// Hit points left.
    pub hp: u32,
    /// What it is doing.
    pub order: Order,
    /// Centre of its sphere.
    pub position: Vec3,
    /// Linear velocity.
    pub velocity: Vec3,
}

impl Unit {
    /// The unit as seen from outside (`None` if its body is missing, which a
    /// valid state never has).
    pub fn view(&self, world: &World) -> Option<UnitView> {
        let b = world.body(self.body)?;
        Some(UnitView {
            id: self.id,
            owner: self.owner,
            hp: self.hp,
            order: self.order,
            position: b.position(),
            velocity: b.linear_velocity(),
        })
    }

    /// Sets the velocity this frame's order asks for (see the module doc).
    pub fn steer(&mut self, world: &mut World, rules: &UnitConfig, nav: &NavGrid, flows: &[Flow]) {
        let Order::Move {
            x,
            z,
            goal,
            blocked,
            attack,
            fighting,
        } = self.order
        else {
            return;
        };
        let Some(b) = world.body(self.body) else {
            return;
        };
        let (p, v) = (b.position(), b.linear_velocity());
        if fighting {
            // Standing to shoot: no walking, and no count toward giving up.
            world.set_linear_velocity(self.body, Vec3::ZERO);
            return;
        }
        let to = Vec3::new(x - p.x, Fx::ZERO, z - p.z);
        let distance = to.length();
        let slow = Vec3::new(v.x, Fx::ZERO, v.z).length() < rules.speed.scale_pow2(-2);
        let blocked = if slow { blocked.saturating_add(1) } else { 0 };
        if distance <= rules.arrive_distance || blocked >= rules.give_up_frames {
            self.halt(world);
            return;
        }
        self.order = Order::Move {
            x,
            z,
            goal,
            blocked,
            attack,
            fighting,
        };
        let speed = if distance < rules.slow_distance {
            rules.speed * distance / rules.slow_distance
        } else {
            rules.speed
        };
        let along = goal
            .filter(|_| distance > DIRECT_RANGE || !nav.clear_line((p.x, p.z), (x, z)))
            .and_then(|g| flow_step(flows, g, nav.index_at(p.x, p.z)));
        let heading = match along {
            Some(unit) => unit * speed,
            // distance > arrive_distance ≥ 0, so the division is safe.
            None => to * (speed / distance),
        };
        let heading = if blocked > 0 {
            keep_right(heading)
        } else {
            heading
        };
        world.set_linear_velocity(self.body, Vec3::new(heading.x, Fx::ZERO, heading.z));
    }

    /// The flow goal this unit follows, if any.
    pub fn goal(&self) -> Option<u32> {
        match self.order {
            Order::Move { goal, .. } => goal,
            Order::Idle => None,
        }
    }

    /// Drops the order and stops the unit where it stands.
    pub fn halt(&mut self, world: &mut World) {
        self.order = Order::Idle;
        // A no-op for a body that is gone.
        world.set_linear_velocity(self.body, Vec3::ZERO);
        world.set_angular_velocity(self.body, Vec3::ZERO);
    }
}

/// The unit vector (on the ground) of field `goal`'s step at `cell`; `None`
/// at the goal cell, without a path, or without such a field.
fn flow_step(flows: &[Flow], goal: u32, cell: u32) -> Option<Vec3> {
    let step = Flow::find(flows, goal)?.step(cell);
    let (dx, dz) = *NEIGHBOURS.get(usize::from(step))?;
    let k = if dx != 0 && dz != 0 {
        HALF_SQRT2
    } else {
        Fx::ONE
    };
    Some(Vec3::new(
        k.mul_int(i64::from(dx)),
        Fx::ZERO,
        k.mul_int(i64::from(dz)),
    ))
}
