//! The game: its settings ([`Rules`]), a seat's input ([`Order`]), the
//! match state and its frame step ([`Skirmish`]), a seeded bot
//! ([`Commander`]) and the `--bug` seat's flaw ([`Flaw`]).
//!
//! A frame: each seat's order sets one of its units' target; every unit
//! steers toward its target; overlapping units push each other apart in id
//! order; the seat with the most units on the capture point scores.
//!
//! Invariants: `step` reads nothing but the state, the frame and the
//! inputs (except the flaw, on purpose), with `Fx` arithmetic only; the
//! state is exactly what `encode` writes, every entity and field labelled,
//! and `decode` refuses any state `step` could not run.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use lockstep_fx::{Canonical, DecodeError, Fx, Rng, Sink, StateReader, StateWriter, Vec3};
use lockstep_protocol::{BitError, BitStream, Input, schema_hash};
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError, read_version};

/// A point or a velocity on the field: a `Vec3` on the ground plane (z = 0).
fn xy(x: Fx, y: Fx) -> Vec3 {
    Vec3::new(x, y, Fx::ZERO)
}

/// The distance velocity `v` covers in one frame at `hz` frames a second.
fn per_frame(v: Vec3, hz: i64) -> Vec3 {
    xy(v.x.div_int(hz), v.y.div_int(hz))
}

/// `v` kept inside the square `-half..=half`.
fn inside(v: Vec3, half: Fx) -> Vec3 {
    v.max(Vec3::splat(-half)).min(Vec3::splat(half))
}

/// The game's settings, carried to every seat in the host's roster.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rules {
    /// Units each seat commands (1 to 4: an order names one in 2 bits).
    units_per_seat: u8,
    /// Half the side of the square field (m).
    field_half: Fx,
    /// Units closer than twice this push each other apart (m).
    unit_radius: Fx,
    /// Top speed (m/s).
    top_speed: Fx,
    /// Largest change of velocity (m/s²).
    acceleration: Fx,
    /// Radius of the capture point in the centre (m).
    point_radius: Fx,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            units_per_seat: 3,
            field_half: Fx::from_int(12),
            unit_radius: Fx::HALF,
            top_speed: Fx::from_int(4),
            acceleration: Fx::from_int(16),
            point_radius: Fx::from_int(3),
        }
    }
}

impl Rules {
    /// Every setting in a range `step` is safe with.
    fn check(&self) -> Result<(), String> {
        let fits = |v: Fx, max: i32| v.is_positive() && v <= Fx::from_int(max);
        let ok = (1..=4).contains(&self.units_per_seat)
            && fits(self.field_half, 100)
            && fits(self.unit_radius, 4)
            && fits(self.top_speed, 50)
            && fits(self.acceleration, 500)
            && fits(self.point_radius, 50)
            && self.field_half > self.unit_radius.mul_int(4);
        ok.then_some(())
            .ok_or_else(|| format!("rules out of range: {self:?}"))
    }
}

impl Canonical for Rules {
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("rules", &[]);
        w.field("units per seat", &self.units_per_seat);
        w.field("field half", &self.field_half);
        w.field("unit radius", &self.unit_radius);
        w.field("top speed", &self.top_speed);
        w.field("acceleration", &self.acceleration);
        w.field("point radius", &self.point_radius);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Rules, DecodeError> {
        Ok(Rules {
            units_per_seat: r.read_u8()?,
            field_half: r.read_fx()?,
            unit_radius: r.read_fx()?,
            top_speed: r.read_fx()?,
            acceleration: r.read_fx()?,
            point_radius: r.read_fx()?,
        })
    }
}

/// Cells per side of the grid orders name.
const GRID: u32 = 32;

/// One seat's input for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Order {
    /// No new order (also a missing or absent seat's input).
    #[default]
    Hold,
    /// Send the seat's unit `unit` to the centre of grid cell `cell`.
    Move { unit: u8, cell: (u8, u8) },
}

impl Input for Order {
    const MAX_BITS: u32 = 1 + 2 + 5 + 5;

    fn schema_hash() -> u64 {
        schema_hash("skirmish Order v1: tag u1 (0 hold, 1 move); move = unit u2, cell x u5, y u5")
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let (mut tag, mut unit, mut x, mut y) = match *self {
            Order::Hold => (0, 0, 0, 0),
            Order::Move { unit, cell } => (1, unit.into(), cell.0.into(), cell.1.into()),
        };
        s.ranged(&mut tag, 0, 1, "order tag")?;
        if tag == 1 {
            s.ranged(&mut unit, 0, 3, "order unit")?;
            s.ranged(&mut x, 0, GRID - 1, "order cell")?;
            s.ranged(&mut y, 0, GRID - 1, "order cell")?;
        }
        if S::READING {
            *self = match tag {
                1 => Order::Move {
                    unit: unit as u8,
                    cell: (x as u8, y as u8),
                },
                _ => Order::Hold,
            };
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
struct Unit {
    position: Vec3,
    velocity: Vec3,
    target: Vec3,
}

/// The match state: unit `id` belongs to seat `id / units_per_seat`.
#[derive(Debug)]
pub(crate) struct Skirmish {
    rules: Rules,
    tick_rate: u16,
    /// Per seat: frames it held the point.
    pub(crate) scores: Vec<u32>,
    /// Every unit, seat by seat.
    units: Vec<Unit>,
}

/// Where each seat's units start: a direction from the centre, by seat.
const BASE_X: [i64; 8] = [-1, 1, -1, 1, 0, 0, -1, 1];
const BASE_Y: [i64; 8] = [-1, 1, 1, -1, -1, 1, 0, 0];

impl Skirmish {
    /// The centre of grid cell `(x, y)`.
    fn cell_centre(&self, (x, y): (u8, u8)) -> Vec3 {
        let half = self.rules.field_half;
        let c = |i: u8| half.mul_int(2 * i64::from(i) + 1).div_int(i64::from(GRID)) - half;
        xy(c(x), c(y))
    }

    /// Units steer toward their targets: the velocity turns toward the one
    /// that reaches the target (slowing within half a second of it) by at
    /// most `acceleration / tick_rate` a frame.
    fn steer(&mut self) {
        let (r, hz) = (&self.rules, i64::from(self.tick_rate));
        let max_dv = r.acceleration.div_int(hz);
        for u in &mut self.units {
            let to = u.target - u.position;
            let dist = to.length();
            let wanted = if dist <= r.unit_radius.scale_pow2(-2) {
                Vec3::ZERO
            } else {
                to * (r.top_speed.min(dist.mul_int(2)) / dist)
            };
            let mut dv = wanted - u.velocity;
            let len = dv.length();
            if len > max_dv {
                dv *= max_dv / len;
            }
            u.velocity += dv;
            let edge = r.field_half - r.unit_radius;
            u.position = inside(u.position + per_frame(u.velocity, hz), edge);
        }
    }

    /// Overlapping units push each other apart, half the overlap each, pair
    /// by pair in id order.
    fn separate(&mut self) {
        let gap = self.rules.unit_radius.mul_int(2);
        let edge = self.rules.field_half - self.rules.unit_radius;
        for i in 0..self.units.len() {
            for j in i + 1..self.units.len() {
                let d = self.units[j].position - self.units[i].position;
                let dist = d.length();
                if dist >= gap {
                    continue;
                }
                let push = match dist.is_zero() {
                    true => xy(gap.scale_pow2(-1), Fx::ZERO),
                    false => d * ((gap - dist).scale_pow2(-1) / dist),
                };
                self.units[i].position = inside(self.units[i].position - push, edge);
                self.units[j].position = inside(self.units[j].position + push, edge);
            }
        }
    }

    /// The seat with the most units on the point (strictly more than any
    /// other) scores.
    fn capture(&mut self) {
        let per = usize::from(self.rules.units_per_seat);
        let mut count = vec![0u32; self.scores.len()];
        for (id, u) in self.units.iter().enumerate() {
            if u.position.length() <= self.rules.point_radius {
                count[id / per] += 1;
            }
        }
        let most = count.iter().copied().max().unwrap_or(0);
        let mut leaders = (0..count.len()).filter(|&s| count[s] == most);
        if let (Some(seat), None, true) = (leaders.next(), leaders.next(), most > 0) {
            self.scores[seat] = self.scores[seat].saturating_add(1);
        }
    }
}

impl Game for Skirmish {
    type Input = Order;
    type Config = Rules;
    const ID: &'static str = "skirmish";
    const VERSION: u32 = 1;

    fn new(rules: &Rules, setup: &Match) -> Result<Skirmish, SetupError> {
        setup.check(Self::ID, 2..=8)?;
        rules.check().map_err(|reason| SetupError::Setting {
            game: Self::ID,
            field: "rules",
            reason,
        })?;
        let mut units = Vec::new();
        let base = rules.field_half.mul_int(3).div_int(4);
        let spacing = rules.unit_radius.mul_int(3);
        let per = i64::from(rules.units_per_seat);
        for seat in 0..usize::from(setup.seats) {
            for k in 0..per {
                let row = spacing.mul_int(2 * k - (per - 1)).scale_pow2(-1);
                let at = xy(base.mul_int(BASE_X[seat]) + row, base.mul_int(BASE_Y[seat]));
                units.push(Unit {
                    position: at,
                    velocity: Vec3::ZERO,
                    target: at,
                });
            }
        }
        Ok(Skirmish {
            rules: rules.clone(),
            tick_rate: setup.tick_rate,
            scores: vec![0; usize::from(setup.seats)],
            units,
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Order]) {
        let per = self.rules.units_per_seat;
        for (seat, order) in inputs.iter().enumerate().take(self.scores.len()) {
            if let Order::Move { unit, cell } = *order {
                if unit < per {
                    let target = self.cell_centre(cell);
                    self.units[seat * usize::from(per) + usize::from(unit)].target = target;
                }
            }
        }
        self.steer();
        self.separate();
        self.capture();
        if let Some(flaw) = FLAW.get() {
            flaw.strike(frame, &mut self.units);
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("skirmish", &[]);
        w.field("version", &Self::VERSION);
        w.field("tick rate", &self.tick_rate);
        w.field("seats", &(self.scores.len() as u8));
        self.rules.encode(w);
        for (seat, score) in self.scores.iter().enumerate() {
            w.entity("seat", &[seat as u32]);
            w.field("score", score);
        }
        for (id, u) in self.units.iter().enumerate() {
            w.entity("unit", &[id as u32]);
            w.field("position", &u.position);
            w.field("velocity", &u.velocity);
            w.field("target", &u.target);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Skirmish, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Skirmish>(&mut r)?;
        let tick_rate = r.read_u16()?;
        let seats = r.read_u8()?;
        let rules = Rules::decode(&mut r)?;
        let setup = Match {
            seats,
            seed: 0,
            tick_rate,
        };
        let invalid = |e: String| StateError::Invalid(e);
        setup
            .check(Self::ID, 2..=8)
            .map_err(|e| invalid(e.to_string()))?;
        rules.check().map_err(invalid)?;
        let scores = (0..seats)
            .map(|_| r.read_u32())
            .collect::<Result<Vec<u32>, _>>()?;
        let units = (0..u32::from(seats) * u32::from(rules.units_per_seat))
            .map(|_| {
                Ok(Unit {
                    position: r.read_vec3()?,
                    velocity: r.read_vec3()?,
                    target: r.read_vec3()?,
                })
            })
            .collect::<Result<Vec<Unit>, DecodeError>>()?;
        r.finish()?;
        let flat = |v: &Vec3| v.z.is_zero();
        if !units
            .iter()
            .all(|u| [u.position, u.velocity, u.target].iter().all(flat))
        {
            return Err(invalid("a unit off the ground plane".into()));
        }
        Ok(Skirmish {
            rules,
            tick_rate,
            scores,
            units,
        })
    }
}

/// A seat's bot: every half second to second and a half it sends one of
/// its units to a random cell, half the time one next to the point.
pub(crate) struct Commander {
    rng: Rng,
    next: Frame,
}

impl Commander {
    /// Seat `seat`'s bot in a match of seed `seed`.
    pub(crate) fn new(seed: u64, seat: u8) -> Commander {
        let rng = Rng::new(seed, u64::from(seat));
        Commander { rng, next: 0 }
    }
}

impl Bot<Skirmish> for Commander {
    fn input(&mut self, game: &Skirmish, frame: Frame) -> Order {
        if frame < self.next {
            return Order::Hold;
        }
        self.next = frame + 30 + self.rng.below(60);
        let unit = self.rng.below(u32::from(game.rules.units_per_seat)) as u8;
        let (lo, span) = match self.rng.chance(1, 2) {
            true => (GRID / 2 - 1, 2),
            false => (0, GRID),
        };
        let mut cell = || (lo + self.rng.below(span)) as u8;
        Order::Move {
            unit,
            cell: (cell(), cell()),
        }
    }
}

/// How often the flawed seat strikes, in frames.
pub(crate) const FLAW_EVERY: u32 = 200;

/// The `--bug` seat's flaw: every [`FLAW_EVERY`] frames its step moves one
/// unit by one LSB in a direction taken from std's hash seed, which differs
/// from process to process (the same hidden input as a `HashMap`'s order).
/// The seat re-runs its own frames the same way, so only the other seat's
/// checksums can tell.
pub(crate) struct Flaw {
    pub(crate) nudge: Vec3,
}

pub(crate) static FLAW: OnceLock<Flaw> = OnceLock::new();

impl Flaw {
    pub(crate) fn from_hash_seed() -> Flaw {
        let bits = RandomState::new().hash_one("skirmish");
        let lsb = if bits & 1 == 0 {
            Fx::EPSILON
        } else {
            -Fx::EPSILON
        };
        let nudge = match bits & 2 {
            0 => xy(lsb, Fx::ZERO),
            _ => xy(Fx::ZERO, lsb),
        };
        Flaw { nudge }
    }

    fn strike(&self, frame: Frame, units: &mut [Unit]) {
        if frame == 0 || frame % FLAW_EVERY != 0 || units.is_empty() {
            return;
        }
        let id = (frame / FLAW_EVERY) as usize % units.len();
        units[id].position += self.nudge;
    }
}
