//! What both games share to expose their bodies to snapshots
//! (`lockstep_snapshot::Bodies`): reading a physics body as a
//! [`BodyState`] and writing one back.

use lockstep_fx::Vec3;
use lockstep_physics::{Body, BodyHandle, World};
use lockstep_snapshot::BodyState;

/// A body's state as snapshots carry it.
pub(crate) fn state_of(b: &Body) -> BodyState {
    BodyState {
        position: b.position(),
        orientation: b.orientation(),
        linear_velocity: b.linear_velocity(),
        angular_velocity: b.angular_velocity(),
        at_rest: !b.is_awake(),
    }
}

/// Overwrites body `h`'s pose and velocities with `state` (a state
/// synchronization receiver taking the sender's state). A body already
/// resting where `state` rests is left alone, so it does not wake; one put
/// to rest gets zero velocities and falls asleep on its own.
pub(crate) fn set_state(world: &mut World, h: BodyHandle, state: &BodyState) {
    let Some(b) = world.body(h) else {
        return;
    };
    let same_pose = b.position() == state.position && b.orientation() == state.orientation;
    if state.at_rest && same_pose && !b.is_awake() {
        return;
    }
    let (v, w) = if state.at_rest {
        (Vec3::ZERO, Vec3::ZERO)
    } else {
        (state.linear_velocity, state.angular_velocity)
    };
    let (same_v, same_w) = (b.linear_velocity() == v, b.angular_velocity() == w);
    if !same_pose {
        world.set_pose(h, state.position, state.orientation);
    }
    if !same_v {
        world.set_linear_velocity(h, v);
    }
    if !same_w {
        world.set_angular_velocity(h, w);
    }
}
