//! [`Depict`]: how a game's state becomes a [`Scene`], the colour of each
//! player, and the helpers a game built on `lockstep-physics` draws its
//! world with ([`solids`]). The shipped games' pictures are in
//! `shipped.rs` (the `shipped` feature).
//!
//! A solid's key is its body handle (slot and generation); its exact
//! fingerprint hashes the body's fixed-point pose and velocities (and any
//! game state the game adds), so [`Scene::differing`] finds every body
//! whose state two logs disagree on at a frame.

use std::hash::{DefaultHasher, Hash, Hasher};

use lockstep_fx::{Quat, Vec3};
use lockstep_physics::{Body, BodyHandle, Shape as BodyShape, World};

use crate::canvas::Rgb;
use crate::scene::{Scene, Shape, Solid};

/// A game state that can be drawn.
pub trait Depict {
    /// The scene this state shows.
    fn scene(&self) -> Scene;

    /// Where a camera that follows player `seat` looks, in the scene's
    /// metres (`None`: the game has no one place for a player, or no such
    /// seat).
    fn camera_target(&self, seat: u8) -> Option<[f32; 3]>;

    /// The scene as player `seat` may see it (a game with a fog of war
    /// hides what the seat does not see); by default, all of it.
    fn seen_by(&self, seat: u8) -> Scene {
        let _ = seat;
        self.scene()
    }
}

/// The colour of player `seat` (eight distinct colours, then repeating).
pub fn player_colour(seat: u8) -> Rgb {
    const COLOURS: [Rgb; 8] = [
        Rgb(52, 120, 246), // blue
        Rgb(245, 140, 20), // orange
        Rgb(40, 175, 90),  // green
        Rgb(150, 80, 230), // purple
        Rgb(20, 185, 205), // cyan
        Rgb(235, 80, 160), // pink
        Rgb(225, 200, 30), // yellow
        Rgb(140, 95, 55),  // brown
    ];
    COLOURS[usize::from(seat) % COLOURS.len()]
}

/// The name of [`player_colour`]`(seat)`, in capitals (what an overlay
/// tells a player).
pub fn player_colour_name(seat: u8) -> &'static str {
    const NAMES: [&str; 8] = [
        "BLUE", "ORANGE", "GREEN", "PURPLE", "CYAN", "PINK", "YELLOW", "BROWN",
    ];
    NAMES[usize::from(seat) % NAMES.len()]
}

/// A solid for every body of `world` but half-spaces (the ground is drawn
/// apart), in slot order. `look` gives each body's colour and any game
/// state of it beyond the body's own that its fingerprint should cover
/// (`None`: the body is left out).
pub fn solids(world: &World, look: impl Fn(BodyHandle, &Body) -> Option<(Rgb, u64)>) -> Vec<Solid> {
    world
        .bodies()
        .filter_map(|(h, body)| {
            let shape = match body.shape() {
                BodyShape::Box { half_extents } => Shape::Box {
                    half: floats(half_extents),
                },
                BodyShape::Sphere { radius } => Shape::Sphere {
                    radius: radius.to_f64_lossy() as f32,
                },
                // Drawn as the box around it (the rasteriser has boxes and
                // spheres).
                BodyShape::Capsule {
                    half_height,
                    radius,
                } => Shape::Box {
                    half: floats(Vec3::new(radius, half_height + radius, radius)),
                },
                BodyShape::HalfSpace => return None,
            };
            let (colour, extra) = look(h, body)?;
            Some(Solid {
                key: (u64::from(h.generation) << 32) | u64::from(h.index),
                exact: fingerprint(body, extra),
                shape,
                position: floats(body.position()),
                rotation: rotation(body.orientation()),
                colour,
                outlined: false,
            })
        })
        .collect()
}

/// A hash of the body's exact pose and velocities and `extra`.
fn fingerprint(body: &Body, extra: u64) -> u64 {
    let mut h = DefaultHasher::new();
    extra.hash(&mut h);
    for v in [
        body.position(),
        body.linear_velocity(),
        body.angular_velocity(),
    ] {
        [v.x, v.y, v.z].map(|c| c.to_bits()).hash(&mut h);
    }
    let q = body.orientation();
    [q.w, q.x, q.y, q.z].map(|c| c.to_bits()).hash(&mut h);
    h.finish()
}

/// A vector's components as floats, for drawing.
pub(crate) fn floats(v: Vec3) -> [f32; 3] {
    [v.x, v.y, v.z].map(|c| c.to_f64_lossy() as f32)
}

/// The rotation matrix (rows) of a unit quaternion.
pub(crate) fn rotation(q: Quat) -> [[f32; 3]; 3] {
    let [w, x, y, z] = [q.w, q.x, q.y, q.z].map(|c| c.to_f64_lossy() as f32);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::Fx;

    #[test]
    fn a_quarter_turn_about_y_maps_x_to_minus_z() {
        let q = Quat::from_axis_angle(Vec3::Y, Fx::PI.scale_pow2(-1));
        let r = rotation(q);
        let x = [r[0][0], r[1][0], r[2][0]];
        assert!(x[0].abs() < 1e-6 && (x[2] + 1.0).abs() < 1e-6, "{x:?}");
    }
}
