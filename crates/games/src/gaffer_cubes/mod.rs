//! The scene of the snapshot-compression article, as a game of its own:
//! one large player cube rolling through a 30 × 30 grid of small cubes
//! (901 bodies), driven by a scripted [`Route`], so a run is repeatable
//! and the snapshot stream can be measured on the scene the article
//! measured.
//!
//! The article's scene and this one:
//!
//! | | the article | `gaffer-cubes` |
//! |---|---|---|
//! | bodies | 901 cubes: the player's and 900 small ones | the same: [`Cubes`] with one seat, its settings (`scenes/cubes.toml`: a 1.5 m player cube, 0.5 m cubes 1 m apart) |
//! | the player | moved by forces at its centre; it rolls and tumbles by friction, pushes cubes, blows them away | the same controls (arrows push, space lifts and blows); katamari is never used |
//! | who plays | a person | [`Route`]: waypoints snaking across the field, a short blow at each |
//! | simulation | ODE at 60 Hz | lockstep's physics at 60 Hz, integer only |
//! | snapshot box | x, y in \[−256, 255\] m, z (up) in \[0, 32\] m, 512 steps per metre | the same box with y up (`snapshot_bounds`): 18 + 14 + 18 bits |
//!
//! Everything else is the cube demo's: the state, its encoding (a state
//! or log of this game is one of [`Cubes`] with one seat and the game id
//! `gaffer-cubes`), the physics.
//!
//! ```
//! use lockstep_games::gaffer_cubes::GafferCubes;
//! use lockstep_games::{Bots, Demo};
//! use lockstep_sim::{Game, Match};
//! use lockstep_snapshot::Bodies;
//!
//! let setup = Match { seats: 1, ..Match::default() };
//! let mut game = GafferCubes::new(&GafferCubes::default_config(), &setup).unwrap();
//! assert_eq!(game.body_slots(), 901);
//! let mut route = Bots::<GafferCubes>::new(&setup);
//! for frame in 0..120 {
//!     let inputs = route.inputs(&game, frame);
//!     game.step(frame, &inputs);
//! }
//! // The route heads for +x first.
//! assert!(game.cubes().player_velocity(0).unwrap().x.is_positive());
//! ```

mod route;

pub use route::{Route, WAYPOINTS, Waypoint};

use lockstep_fx::{Fx, Sink, StateWriter, Vec3};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError};
use lockstep_snapshot::{Bodies, BodiesMut, BodyState, Bounds, Role};

use crate::cubes::{Cubes, CubesConfig, CubesInput};

/// The article's scene: the cube demo with one seat, played by [`Route`].
#[derive(Debug)]
pub struct GafferCubes(Cubes);

impl GafferCubes {
    /// The cube demo underneath.
    pub fn cubes(&self) -> &Cubes {
        &self.0
    }

    /// The article's snapshot box: x and z in \[−256, 256) m, y (up) in
    /// \[0, 32) m, 512 steps per metre (18 + 14 + 18 bits), 9-bit
    /// orientation components, 11-bit velocity components within ±32 m/s.
    pub fn article_bounds() -> Bounds {
        Bounds {
            min: Vec3::new(Fx::from_int(-256), Fx::ZERO, Fx::from_int(-256)),
            max: Vec3::new(Fx::from_int(256), Fx::from_int(32), Fx::from_int(256)),
            ..Bounds::cubes()
        }
    }
}

impl Game for GafferCubes {
    type Input = CubesInput;
    type Config = CubesConfig;
    const ID: &'static str = "gaffer-cubes";
    const VERSION: u32 = Cubes::VERSION;
    const PHYSICS_VERSION: u16 = Cubes::PHYSICS_VERSION;

    /// One seat only: the article's scene has one player.
    fn new(config: &CubesConfig, setup: &Match) -> Result<GafferCubes, SetupError> {
        setup.check(Self::ID, 1..=1)?;
        Cubes::new(config, setup).map(GafferCubes)
    }

    fn step(&mut self, frame: Frame, inputs: &[CubesInput]) {
        self.0.step(frame, inputs);
    }

    fn set_threads(&mut self, threads: usize) {
        self.0.set_threads(threads);
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        self.0.encode(w);
    }

    fn decode(bytes: &[u8]) -> Result<GafferCubes, StateError> {
        let game = Cubes::decode(bytes)?;
        if game.players() != 1 {
            return Err(StateError::Invalid(format!(
                "{} seats, not the one of {}",
                game.players(),
                Self::ID
            )));
        }
        Ok(GafferCubes(game))
    }
}

impl crate::Demo for GafferCubes {
    type Bot = Route;

    const DEFAULT_SETTINGS: &'static str = <Cubes as crate::Demo>::DEFAULT_SETTINGS;

    /// The route, whatever the seed.
    fn bot(_seat: u8, _seed: u64) -> Route {
        Route::new()
    }
}

impl Bodies for GafferCubes {
    /// [`GafferCubes::article_bounds`].
    fn snapshot_bounds(&self) -> Bounds {
        GafferCubes::article_bounds()
    }

    fn body_slots(&self) -> u32 {
        self.0.body_slots()
    }

    fn body(&self, slot: u32) -> Option<(BodyState, Role)> {
        self.0.body(slot)
    }
}

impl BodiesMut for GafferCubes {
    fn set_body(&mut self, slot: u32, state: &BodyState) {
        self.0.set_body(slot, state);
    }
}
