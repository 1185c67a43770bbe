//! [`Route`], the scripted player of the snapshot article's scene: it
//! drives the player's cube through a fixed list of waypoints that snake
//! across the field, and blows briefly at each, so a recorded run is the
//! same on every machine and after every change of the physics that keeps
//! the cube able to follow its route.
//!
//! Invariants: the input depends only on the frame, the route's own
//! counters and the player's position in the game (no randomness); the
//! route loops, so a run of any length has an input for every frame.

use lockstep_fx::Fx;
use lockstep_sim::{Bot, Frame};

use super::GafferCubes;
use crate::cubes::CubesInput;

/// Distance to a waypoint within which the route stops pushing along an
/// axis (m).
const DEAD_ZONE: Fx = Fx::lit("0.5");
/// Distance at which a waypoint counts as reached (m).
const REACHED: Fx = Fx::lit("1.5");

/// One waypoint: where to go, `(x, z)` in metres, and for how many frames
/// space is held once it is reached (0: no blow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waypoint {
    /// Where to go along x (m).
    pub x: i32,
    /// Where to go along z (m).
    pub z: i32,
    /// Frames of blowing on arrival.
    pub blow: u32,
}

const fn at(x: i32, z: i32, blow: u32) -> Waypoint {
    Waypoint { x, z, blow }
}

/// The route: in from the −x side along the middle, then back and forth
/// across the 30 × 30 field in rows 5 m apart with a waypoint every 6 m,
/// then through the middle and back to the start; 9 frames of blowing at
/// every waypoint. How often it blows sets how many cubes move: this much
/// moves about as many cubes between snapshots as the article's figures
/// imply (about 70 changed against a baseline 6 frames old; the snapshot
/// figures print the count).
pub const WAYPOINTS: [Waypoint; 34] = [
    at(12, 0, 9),
    at(12, -12, 9),
    at(6, -12, 9),
    at(0, -12, 9),
    at(-6, -12, 9),
    at(-12, -12, 9),
    at(-12, -7, 9),
    at(-6, -7, 9),
    at(0, -7, 9),
    at(6, -7, 9),
    at(12, -7, 9),
    at(12, -2, 9),
    at(6, -2, 9),
    at(0, -2, 9),
    at(-6, -2, 9),
    at(-12, -2, 9),
    at(-12, 3, 9),
    at(-6, 3, 9),
    at(0, 3, 9),
    at(6, 3, 9),
    at(12, 3, 9),
    at(12, 8, 9),
    at(6, 8, 9),
    at(0, 8, 9),
    at(-6, 8, 9),
    at(-12, 8, 9),
    at(-12, 13, 9),
    at(-6, 13, 9),
    at(0, 13, 9),
    at(6, 13, 9),
    at(12, 13, 9),
    at(0, 6, 9),
    at(0, -6, 9),
    at(-12, 0, 9),
];

/// The scripted player of [`GafferCubes`]: seat 0 follows
/// [`WAYPOINTS`] in a loop.
#[derive(Debug, Clone, Default)]
pub struct Route {
    /// The waypoint it heads to.
    next: usize,
    /// Space is held before this frame.
    blow_until: Frame,
}

impl Route {
    /// The route from its first waypoint.
    pub fn new() -> Route {
        Route::default()
    }

    /// The waypoint it heads to.
    pub fn heading(&self) -> Waypoint {
        WAYPOINTS[self.next % WAYPOINTS.len()]
    }
}

impl Bot<GafferCubes> for Route {
    fn input(&mut self, game: &GafferCubes, frame: Frame) -> CubesInput {
        let Some(at) = game.cubes().player_position(0) else {
            return CubesInput::NONE;
        };
        let target = |w: Waypoint| (Fx::from_int(w.x) - at.x, Fx::from_int(w.z) - at.z);
        let (dx, dz) = target(self.heading());
        if dx.abs() < REACHED && dz.abs() < REACHED {
            let reached = self.heading();
            if reached.blow > 0 {
                self.blow_until = frame + reached.blow;
            }
            self.next = (self.next + 1) % WAYPOINTS.len();
        }
        let (dx, dz) = target(self.heading());
        CubesInput {
            left: dx < -DEAD_ZONE,
            right: dx > DEAD_ZONE,
            up: dz < -DEAD_ZONE,
            down: dz > DEAD_ZONE,
            space: frame < self.blow_until,
            z: false,
        }
    }
}
