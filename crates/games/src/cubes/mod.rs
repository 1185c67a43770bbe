//! The cube demo of Glenn Fiedler's networked-physics articles: each player
//! (1 to 4) pushes a cube through a 30 × 30 field of small cubes resting on
//! the ground. Arrows push it, space lifts it and blows the cubes around it
//! away, z turns on katamari mode, in which the cubes it touches stick to it.
//!
//! It is written only against the public APIs of `lockstep-sim`,
//! `lockstep-physics`, `lockstep-fx`, `lockstep-protocol` and
//! `lockstep-snapshot`, as a studio would embed the engine:
//! - [`input`]: the input ([`CubesInput`], six buttons) and its bit encoding;
//! - [`config`]: the settings ([`CubesConfig`]), from `scenes/cubes.toml`;
//! - [`scene`]: building the world, the body [`Layout`], collision groups;
//! - `controls.rs`: pushing, lifting and blowing;
//! - `katamari.rs`: which cubes stick and how they are held;
//! - `game.rs`: [`Cubes`], the [`Game`](lockstep_sim::Game) implementation;
//! - `bot.rs`: [`CubesBot`], the scripted player;
//! - `snapshot.rs`: its bodies for snapshots (`lockstep_snapshot::Bodies`).
//!
//! ```
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::{Cubes, CubesInput};
//! use lockstep_sim::{Game, Match};
//!
//! let config = Cubes::default_config();
//! let setup = Match { seats: 1, ..Match::default() };
//! let mut game = Cubes::new(&config, &setup).unwrap();
//! let start = game.player_position(0).unwrap();
//! let right = CubesInput { right: true, ..CubesInput::NONE };
//! for frame in 0..30 {
//!     game.step(frame, &[right]);
//! }
//! assert!(game.player_position(0).unwrap().x > start.x);
//! ```

mod bot;
pub mod config;
mod controls;
mod game;
pub mod input;
mod katamari;
pub mod scene;
mod snapshot;

pub use bot::CubesBot;
pub use config::{BlowConfig, CubesConfig, FieldConfig, KatamariConfig, PlayerConfig};
pub use game::{Cubes, MAX_SEATS, MIN_PLAYERS};
pub use input::CubesInput;
pub use scene::Layout;

impl crate::Demo for Cubes {
    type Bot = CubesBot;

    const DEFAULT_SETTINGS: &'static str = include_str!("../../scenes/cubes.toml");

    fn bot(seat: u8, seed: u64) -> CubesBot {
        CubesBot::new(seat, seed)
    }
}
