//! [`CubesBot`], the cube demo's scripted player: it drives its cube to
//! random points of the field, blows now and then and holds z for
//! stretches, so a recorded match shows pushing, blowing and katamari.
//!
//! Invariants: the bot's choices come only from its `Rng` (seeded from the
//! match seed and its seat), its own counters, the frame and its cube's
//! position in the game, so the same seed, seat and game states give the
//! same inputs on every peer.

use lockstep_fx::{Fx, Rng};
use lockstep_sim::{Bot, Frame};

use super::game::Cubes;
use super::input::CubesInput;

/// Distance to the target within which the bot stops pushing on an axis (m).
const DEAD_ZONE: Fx = Fx::lit("0.5");
/// Distance at which a target counts as reached (m).
const REACHED: Fx = Fx::lit("1.5");

/// A seeded scripted player for one seat.
#[derive(Debug, Clone)]
pub struct CubesBot {
    seat: u8,
    rng: Rng,
    /// Where it heads, `(x, z)`.
    target: (Fx, Fx),
    /// It picks a new target at this frame (or on reaching it).
    retarget_at: Frame,
    /// Space is held before this frame.
    space_until: Frame,
    /// z is held before this frame.
    z_until: Frame,
    /// z is not pressed again before this frame.
    z_rest_until: Frame,
}

impl CubesBot {
    /// The bot for `seat`, seeded from the match seed.
    pub fn new(seat: u8, seed: u64) -> CubesBot {
        CubesBot {
            seat,
            rng: Rng::new(seed, 0xC0BE_0000 + u64::from(seat)),
            target: (Fx::ZERO, Fx::ZERO),
            retarget_at: 0,
            space_until: 0,
            z_until: 0,
            z_rest_until: 0,
        }
    }

    /// Where the bot is heading, `(x, z)`.
    pub fn target(&self) -> (Fx, Fx) {
        self.target
    }

    fn frames(&mut self, lo: u32, hi: u32) -> Frame {
        lo + self.rng.below(hi - lo + 1)
    }
}

impl Bot<Cubes> for CubesBot {
    fn input(&mut self, game: &Cubes, frame: Frame) -> CubesInput {
        let Some(at) = game.player_position(self.seat) else {
            return CubesInput::NONE;
        };
        let (dx, dz) = (self.target.0 - at.x, self.target.1 - at.z);
        let reached = dx.abs() < REACHED && dz.abs() < REACHED;
        if frame >= self.retarget_at || reached {
            let half = game.config().field_half_width();
            self.target = (
                self.rng.fx_range(-half, half),
                self.rng.fx_range(-half, half),
            );
            self.retarget_at = frame + self.frames(150, 360);
        }
        let (dx, dz) = (self.target.0 - at.x, self.target.1 - at.z);
        if frame >= self.space_until && self.rng.chance(1, 150) {
            self.space_until = frame + self.frames(15, 40);
        }
        if frame >= self.z_until && frame >= self.z_rest_until && self.rng.chance(1, 120) {
            self.z_until = frame + self.frames(180, 480);
            self.z_rest_until = self.z_until + 60;
        }
        CubesInput {
            left: dx < -DEAD_ZONE,
            right: dx > DEAD_ZONE,
            up: dz < -DEAD_ZONE,
            down: dz > DEAD_ZONE,
            space: frame < self.space_until,
            z: frame < self.z_until,
        }
    }
}
