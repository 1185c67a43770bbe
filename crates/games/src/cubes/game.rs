//! [`Cubes`], the cube demo's [`Game`]: the settings, each player's stuck
//! cubes and the physics world, stepped from the players' buttons.
//!
//! A frame: for each seat in order, its buttons push and lift its cube,
//! space blows the cubes around it away, z pulls its stuck cubes in (or,
//! released, drops them all); then the world steps; then, for each seat
//! holding z, cubes that drifted past the radius come off and newly touching
//! cubes stick.
//!
//! Invariants: the state is exactly what [`Game::encode`] writes: the
//! version, then the fields as `#[derive(Canonical)]` writes them (settings,
//! each seat's stuck cubes with the seat count, the world); the
//! body layout of [`Layout`] holds at all times; [`Game::decode`] checks all
//! of it and refuses anything else with a [`StateError`]; `step` uses only
//! `Fx` arithmetic, the world and the inputs.

use lockstep_derive::Canonical;
use lockstep_fx::{PerSeat, Sink, StateReader, StateWriter, Vec3};
use lockstep_physics::{BodyHandle, World};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError, read_version};

use super::config::CubesConfig;
use super::input::CubesInput;
use super::scene::{self, Layout};
use super::{controls, katamari};

/// Fewest players.
pub const MIN_PLAYERS: u8 = 1;
/// Most players (one per side of the field).
pub const MAX_SEATS: u8 = 4;

/// The cube demo: 1 to 4 players' cubes and a grid of small cubes on the
/// ground.
#[derive(Debug, Canonical)]
pub struct Cubes {
    #[canonical(flatten)]
    config: CubesConfig,
    /// Each seat's stuck cubes: sorted cube numbers (see `katamari`).
    #[canonical(name = "attached")]
    stuck: PerSeat<Vec<u32>>,
    #[canonical(flatten)]
    world: World,
    /// The bodies' handles: rebuilt from the world on decode.
    #[canonical(skip)]
    layout: Layout,
}

impl Cubes {
    /// The settings.
    pub fn config(&self) -> &CubesConfig {
        &self.config
    }

    /// Players in the match.
    pub fn players(&self) -> u8 {
        self.stuck.len() as u8
    }

    /// The physics world (for rendering and inspection).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Seat `seat`'s cube.
    pub fn player_body(&self, seat: u8) -> Option<BodyHandle> {
        self.layout.players.get(usize::from(seat)).copied()
    }

    /// The centre of seat `seat`'s cube.
    pub fn player_position(&self, seat: u8) -> Option<Vec3> {
        Some(self.world.body(self.player_body(seat)?)?.position())
    }

    /// The velocity of seat `seat`'s cube.
    pub fn player_velocity(&self, seat: u8) -> Option<Vec3> {
        Some(self.world.body(self.player_body(seat)?)?.linear_velocity())
    }

    /// Small cubes in the field.
    pub fn cube_count(&self) -> u32 {
        self.layout.cubes.len() as u32
    }

    /// Small cube `i`'s body.
    pub fn cube_body(&self, i: u32) -> Option<BodyHandle> {
        self.layout.cubes.get(i as usize).copied()
    }

    /// The centre of small cube `i`.
    pub fn cube_position(&self, i: u32) -> Option<Vec3> {
        Some(self.world.body(self.cube_body(i)?)?.position())
    }

    /// The cubes stuck to seat `seat`'s cube (sorted cube numbers; empty for
    /// a seat not in the match).
    pub fn attached(&self, seat: u8) -> &[u32] {
        self.stuck.get(usize::from(seat)).map_or(&[], Vec::as_slice)
    }

    /// Small cubes awake (moving or not yet settled).
    pub fn awake_cubes(&self) -> u32 {
        self.layout
            .cubes
            .iter()
            .filter(|&&h| self.world.body(h).is_some_and(|b| b.is_awake()))
            .count() as u32
    }

    /// Overwrites body `h` with `state` (see [`crate::bodies::set_state`]).
    pub(super) fn set_body_state(&mut self, h: BodyHandle, state: &lockstep_snapshot::BodyState) {
        crate::bodies::set_state(&mut self.world, h, state);
    }

    /// Whether cube `i` is stuck to a seat other than `seat`.
    fn held_by_other(stuck: &[Vec<u32>], seat: usize, i: u32) -> bool {
        stuck
            .iter()
            .enumerate()
            .any(|(s, list)| s != seat && list.binary_search(&i).is_ok())
    }
}

impl Cubes {
    /// Checks a decoded state and rebuilds its layout: valid settings, a
    /// seat count the game plays, each seat's stuck cubes sorted, below the
    /// cube count, within `katamari.max_cubes` and held by one seat only,
    /// and a world whose bodies are the layout's.
    fn check(&mut self) -> Result<(), StateError> {
        let config = &self.config;
        config.check().map_err(|(field, reason)| {
            StateError::Invalid(format!("setting `{field}`: {reason}"))
        })?;
        let seats = self.stuck.len() as u8;
        if !(MIN_PLAYERS..=MAX_SEATS).contains(&seats) {
            return Err(StateError::Invalid(format!(
                "{seats} seats, not {MIN_PLAYERS} to {MAX_SEATS}"
            )));
        }
        let cubes = config.cube_count();
        let mut held = vec![false; cubes as usize];
        for (seat, list) in self.stuck.iter().enumerate() {
            if list.len() > config.katamari.max_cubes as usize {
                return Err(StateError::Invalid(format!(
                    "seat {seat} holds {} cubes, more than katamari.max_cubes",
                    list.len()
                )));
            }
            let sorted = list.windows(2).all(|p| p[0] < p[1]);
            if !sorted || list.last().is_some_and(|&i| i >= cubes) {
                return Err(StateError::Invalid(format!(
                    "seat {seat}'s attached cubes are not sorted cube numbers below {cubes}"
                )));
            }
            for &i in list {
                if std::mem::replace(&mut held[i as usize], true) {
                    return Err(StateError::Invalid(format!(
                        "cube {i} is attached to two seats"
                    )));
                }
            }
        }
        self.layout =
            Layout::of(&self.world, seats, cubes).map_err(|e| StateError::Invalid(e.into()))?;
        Ok(())
    }
}

/// State encoding version (see [`Game::VERSION`]): rules version 1 with
/// the physics' state version.
const VERSION: u32 = crate::version(1);

impl Game for Cubes {
    type Input = CubesInput;
    type Config = CubesConfig;
    const ID: &'static str = "cubes";
    const VERSION: u32 = VERSION;
    const PHYSICS_VERSION: u16 = lockstep_physics::STATE_VERSION;

    fn new(config: &CubesConfig, setup: &Match) -> Result<Cubes, SetupError> {
        setup.check(Self::ID, MIN_PLAYERS..=MAX_SEATS)?;
        config.validate()?;
        let settings = scene::world_settings(config, setup.tick_rate, setup.seed);
        let (world, layout) = Layout::build(config, setup.seats, settings)?;
        Ok(Cubes {
            config: config.clone(),
            world,
            layout,
            stuck: PerSeat(vec![Vec::new(); usize::from(setup.seats)]),
        })
    }

    /// The state before frame 0, with every seat holding its most stuck
    /// cubes and every body of the world its every field and
    /// [`CONTACTS_PER_BODY`](crate::CONTACTS_PER_BODY) contacts (the world
    /// never gains a body).
    fn state_limit(config: &CubesConfig, setup: &Match) -> Result<u32, SetupError> {
        let start = Cubes::new(config, setup)?;
        let stuck = config.katamari.max_cubes.min(config.cube_count());
        let bytes = start.save().len() as u64
            + u64::from(setup.seats) * 4 * u64::from(stuck)
            + crate::world_limit(start.world.body_count() as u32);
        Ok(crate::state_limit(bytes))
    }

    fn step(&mut self, _frame: Frame, inputs: &[CubesInput]) {
        let players = self.stuck.len();
        let input = |seat: usize| inputs.get(seat).copied().unwrap_or_default();
        for seat in 0..players {
            let b = input(seat);
            let player = self.layout.players[seat];
            if !b.z {
                self.stuck[seat].clear();
            }
            let stuck = &self.stuck[seat];
            let carried = katamari::carried_mass(&self.world, &self.layout, stuck);
            controls::drive(&mut self.world, &self.config, player, b, carried);
            if b.space {
                if let Some(centre) = self.world.body(player).map(|p| p.position()) {
                    controls::blow(&mut self.world, &self.config, &self.layout, centre, stuck);
                }
            }
            if b.z {
                katamari::pull(&mut self.world, &self.config, &self.layout, player, stuck);
            }
        }
        self.world.step();
        for seat in 0..players {
            if !input(seat).z {
                continue;
            }
            let player = self.layout.players[seat];
            let mut stuck = std::mem::take(&mut self.stuck[seat]);
            katamari::drop_far(&self.world, &self.config, &self.layout, player, &mut stuck);
            let touching =
                katamari::touching(&self.world, &self.config, &self.layout, seat, &stuck);
            katamari::stick(&self.config, &mut stuck, &touching, |i| {
                Cubes::held_by_other(&self.stuck, seat, i)
            });
            self.stuck[seat] = stuck;
        }
    }

    fn set_threads(&mut self, threads: usize) {
        self.world.set_threads(threads);
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("cubes", &[]);
        w.field("version", &VERSION);
        lockstep_fx::Canonical::encode(self, w);
    }

    fn decode(bytes: &[u8]) -> Result<Cubes, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Cubes>(&mut r)?;
        let mut game = <Cubes as lockstep_fx::Canonical>::decode(&mut r)?;
        r.finish()?;
        game.check()?;
        Ok(game)
    }
}
