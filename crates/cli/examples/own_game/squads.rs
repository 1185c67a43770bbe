//! `squads`: a tiny skirmish, written only with what a studio gets —
//! `#[derive(Canonical)]` for every byte of state, `Orders` of a
//! `#[derive(Command)]` for the players' commands, `Vec2` for a map on a
//! plane — and no hand-written encoder.
//!
//! Each seat has four units on a 64 × 64 m field. A command sends one unit
//! to a cell (`Order::Move`) or stops it (`Order::Stop`); a unit walks
//! toward its target and hits the nearest enemy unit in range once a
//! second, unless its seat holds button 0 ("hold fire"). Integer and fixed
//! point only, like every lockstep game.

use lockstep_codec::Orders;
use lockstep_codec::input::Buttons;
use lockstep_derive::{Canonical, Command};
use lockstep_fx::{Canonical, Fx, Rng, Sink, StateWriter, Vec2};
use lockstep_games::Demo;
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError};

/// Units per seat.
const UNITS: u8 = 4;

/// The settings, from a TOML file or the embedded defaults.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
pub struct SquadsConfig {
    /// How far a unit walks each frame (m).
    pub speed: Fx,
    /// How far it hits (m).
    pub range: Fx,
    /// Hit points it starts with; one hit takes one.
    pub hp: u16,
}

/// A player's order: one command, applied on the frame it rides in. The
/// derive packs it in as few bits as the ranges allow (1 bit of variant, 2
/// of unit, 6 + 6 of cell) and checks them when reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
pub enum Order {
    /// Stop unit `unit` where it stands.
    Stop {
        #[command(range = 0..=3)]
        unit: u8,
    },
    /// Send unit `unit` to the centre of cell `(x, y)` (1 m cells).
    Move {
        #[command(range = 0..=3)]
        unit: u8,
        #[command(range = 0..=63)]
        x: u8,
        #[command(range = 0..=63)]
        y: u8,
    },
}

/// One unit: whose, where, where to, and how healthy.
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "unit", ids(id))]
struct Unit {
    id: u32,
    seat: u8,
    position: Vec2,
    target: Option<Vec2>,
    hp: u16,
}

/// The whole state of a match, encoded by the derive.
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
pub struct Squads {
    version: u32,
    #[canonical(flatten)]
    config: SquadsConfig,
    seed: u64,
    #[canonical(max_len = 32)]
    units: Vec<Unit>,
}

impl Game for Squads {
    type Input = Orders<Buttons, Order>;
    type Config = SquadsConfig;
    const ID: &'static str = "squads";
    const VERSION: u32 = 1;

    fn new(config: &SquadsConfig, setup: &Match) -> Result<Squads, SetupError> {
        setup.check(Self::ID, 2..=8)?;
        // Each seat's squad starts in a row of its own.
        let units = (0..setup.seats)
            .flat_map(|seat| (0..UNITS).map(move |i| (seat, i)))
            .map(|(seat, i)| Unit {
                id: u32::from(seat * UNITS + i),
                seat,
                position: Vec2::from_ints(8 + 12 * i32::from(i), 4 + 7 * i32::from(seat)),
                target: None,
                hp: config.hp,
            })
            .collect();
        Ok(Squads {
            version: Self::VERSION,
            config: config.clone(),
            seed: setup.seed,
            units,
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Self::Input]) {
        for (seat, input) in inputs.iter().enumerate() {
            for order in input.commands() {
                let (unit, target) = match *order {
                    Order::Move { unit, x, y } => {
                        let centre = |c: u8| Fx::from_int(i32::from(c)) + Fx::HALF;
                        (unit, Some(Vec2::new(centre(x), centre(y))))
                    }
                    Order::Stop { unit } => (unit, None),
                };
                let id = seat as u32 * u32::from(UNITS) + u32::from(unit);
                if let Some(u) = self.units.iter_mut().find(|u| u.id == id) {
                    u.target = target;
                }
            }
        }
        let speed = self.config.speed;
        for u in &mut self.units {
            if let Some(t) = u.target {
                let to = t - u.position;
                u.position = if to.length() <= speed {
                    t
                } else {
                    u.position + to.normalize_or_zero() * speed
                };
            }
        }
        if frame % 60 == 0 {
            self.fight(inputs);
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        Canonical::encode(self, w);
    }

    fn decode(bytes: &[u8]) -> Result<Squads, StateError> {
        let s = Squads::from_canonical(bytes)?;
        if s.version != Self::VERSION {
            return Err(StateError::Invalid(format!("squads version {}", s.version)));
        }
        Ok(s)
    }
}

impl Squads {
    /// Every unit whose seat does not hold fire hits the nearest enemy in
    /// range (ties: the lower id); the fallen leave the field.
    fn fight(&mut self, inputs: &[Orders<Buttons, Order>]) {
        let mut hits = vec![0u16; self.units.len()];
        for a in &self.units {
            if inputs
                .get(usize::from(a.seat))
                .is_some_and(|i| i.held.held(0))
            {
                continue;
            }
            let nearest = (self.units.iter().enumerate())
                .filter(|(_, b)| b.seat != a.seat)
                .map(|(j, b)| (a.position.distance(b.position), j))
                .filter(|&(d, _)| d <= self.config.range)
                .min();
            if let Some((_, j)) = nearest {
                hits[j] += 1;
            }
        }
        for (u, h) in self.units.iter_mut().zip(hits) {
            u.hp = u.hp.saturating_sub(h);
        }
        self.units.retain(|u| u.hp > 0);
    }
}

/// A bot that sends a unit toward the enemy now and then.
pub struct SquadBot {
    seat: u8,
    rng: Rng,
}

impl Bot<Squads> for SquadBot {
    fn input(&mut self, _game: &Squads, frame: Frame) -> Orders<Buttons, Order> {
        let mut input = Orders::new(Buttons(u8::from(self.rng.below(10) == 0)));
        if frame % 20 == u32::from(self.seat) {
            let unit = self.rng.below(u32::from(UNITS)) as u8;
            let (x, y) = (self.rng.below(64) as u8, 28 + self.rng.below(8) as u8);
            let _ = input.push(Order::Move { unit, x, y });
        }
        input
    }
}

impl Demo for Squads {
    type Bot = SquadBot;
    const DEFAULT_SETTINGS: &'static str = "speed = \"0.05\"\nrange = 3\nhp = 20\n";

    fn bot(seat: u8, seed: u64) -> SquadBot {
        SquadBot {
            seat,
            rng: Rng::new(seed, u64::from(seat)),
        }
    }
}

/// Pictures for `render`: each unit a box in its seat's colour on the
/// field. Drawing is outside the simulation, so floats are fine here.
#[allow(clippy::float_arithmetic)] // pictures only, never the state
impl lockstep_render::Depict for Squads {
    fn scene(&self) -> lockstep_render::Scene {
        use lockstep_render::{Ground, Rgb, Scene, Shape, Solid, player_colour};
        let metres = |v: Fx| v.to_f64_lossy() as f32 - 32.0;
        let solids = self
            .units
            .iter()
            .map(|u| Solid {
                key: u64::from(u.id),
                // The exact state a picture shows: position and hit points.
                exact: (u.position.x.to_bits() as u64).rotate_left(1)
                    ^ (u.position.y.to_bits() as u64)
                    ^ u64::from(u.hp),
                shape: Shape::Box {
                    half: [0.4, 0.4, 0.4],
                },
                position: [metres(u.position.x), 0.4, metres(u.position.y)],
                rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                colour: player_colour(u.seat),
                outlined: false,
            })
            .collect();
        Scene {
            solids,
            ground: Some(Ground {
                half_size: 33.0,
                spacing: 4.0,
                colour: Rgb(186, 194, 172),
                line_colour: Rgb(160, 170, 148),
            }),
            focus: ([-32.0, 0.0, -32.0], [32.0, 2.0, 32.0]),
            sky: Rgb(214, 224, 234),
        }
    }

    /// The seat's first unit still standing.
    fn camera_target(&self, seat: u8) -> Option<[f32; 3]> {
        let u = self.units.iter().find(|u| u.seat == seat)?;
        let metres = |v: Fx| v.to_f64_lossy() as f32 - 32.0;
        Some([metres(u.position.x), 0.4, metres(u.position.y)])
    }
}
