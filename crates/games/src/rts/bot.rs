//! A scripted RTS player ([`RtsBot`]) so matches can be recorded headless.
//!
//! Every 2 to 5 seconds of game time the bot picks one of its units at
//! random, selects the units in a square of 8 to 28 m around it and, in
//! the same frame's input (a second command), moves them to the map centre
//! or attack-moves them on an enemy base (with some scatter), or, one time
//! in six, stops them. Armies sent to the same places meet, attack-moving
//! ones stand and shoot, and idle units chase what comes into sight, so
//! matches turn into battles.
//!
//! Invariants: the bot's choices come only from its [`Rng`] (seeded from the
//! match seed and its seat) and the game state it is shown, so the same
//! seed, seat and states give the same commands on every peer.

use lockstep_fx::{Fx, Rng};
use lockstep_sim::{Bot, Frame};

use super::command::{Command, RtsInput};
use super::game::Rts;

/// A deterministic scripted player for one seat.
#[derive(Debug, Clone)]
pub struct RtsBot {
    seat: u8,
    rng: Rng,
    /// The frame of the next decision.
    next: Frame,
}

impl RtsBot {
    /// A bot for `seat`, seeded from the match seed.
    pub fn new(seat: u8, seed: u64) -> RtsBot {
        let mut rng = Rng::new(seed, 0x7274_7300 | u64::from(seat));
        let next = rng.below(60);
        RtsBot { seat, rng, next }
    }

    /// A point near the map centre or an enemy base, scattered by up to 8 m,
    /// and the order to give: a move to the centre, an attack-move on a base.
    fn target(&mut self, game: &Rts) -> Command {
        let others: Vec<u8> = (0..game.players())
            .filter(|&s| s != self.seat && game.units_alive(s) > 0)
            .collect();
        let centre = others.is_empty() || self.rng.chance(1, 3);
        let (x, z) = if centre {
            (Fx::ZERO, Fx::ZERO)
        } else {
            game.base(others[self.rng.below(others.len() as u32) as usize])
        };
        let scatter = Fx::from_int(8);
        let mut jitter = || self.rng.fx_range(-scatter, scatter);
        let (x, z) = (x + jitter(), z + jitter());
        if centre {
            Command::move_to(x, z)
        } else {
            Command::attack_move_to(x, z)
        }
    }
}

impl Bot<Rts> for RtsBot {
    fn input(&mut self, game: &Rts, frame: Frame) -> RtsInput {
        let mut input = RtsInput::default();
        if frame < self.next {
            return input;
        }
        let tick = game.world().settings().tick_rate.max(1);
        self.next = frame + self.rng.range_i32(2, 5) as u32 * tick;
        let own: Vec<_> = game.units().filter(|u| u.owner == self.seat).collect();
        if own.is_empty() {
            return input;
        }
        let leader = own[self.rng.below(own.len() as u32) as usize].position;
        let half = self.rng.fx_range(Fx::from_int(4), Fx::from_int(14));
        let select = Command::select(
            leader.x - half,
            leader.z - half,
            leader.x + half,
            leader.z + half,
        );
        let order = if self.rng.chance(1, 6) {
            Command::Stop
        } else {
            self.target(game)
        };
        // Two commands of one frame, applied in this order: what a person
        // does with a drag and a click.
        let _ = input.push(select);
        let _ = input.push(order);
        input
    }
}
