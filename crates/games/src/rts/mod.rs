//! The RTS demo: 2 to 8 players each command hundreds of units (dynamic
//! spheres walking on flat ground, walled in, around static buildings and
//! the rocks the match seed scatters) by selecting them with a rectangle and
//! ordering them to move, attack-move or stop; a moved group follows a flow field around
//! the obstacles; units that meet enemies fight until one side is gone; each
//! player sees the map through its own fog of war.
//!
//! Units stay rigid bodies of `lockstep-physics` rather than kinematic
//! agents: the contacts give separation and sliding along obstacles for
//! free, and the game exercises the engine's solver at RTS scale (its cost
//! is measured by `peer-bench`). But they are upright agents, as in any
//! RTS: frictionless spheres whose rotation is locked, so they slide where
//! they are steered and never roll, and the solver leaves out every angular
//! term of their contacts (an 8 × 200 match at 20 Hz replays 1.7 times
//! faster than with rolling units); and whose height is locked, so they
//! need neither gravity nor a contact with the ground (an 8 × 1 024 match
//! steps in 30% less time than with units standing on it). Paths and the
//! fog live on a coarse grid beside the bodies.
//!
//! It is written only against the public APIs of `lockstep-sim`,
//! `lockstep-physics`, `lockstep-fx`, `lockstep-protocol` and
//! `lockstep-snapshot`, as a studio would embed the engine:
//! - [`command`]: the players' [`Command`]s, one-shot orders riding in
//!   the input ([`RtsInput`]: `Orders<(), Command>`), and their bit encoding;
//! - [`config`]: the settings ([`RtsConfig`]), from `scenes/rts.toml`;
//! - [`map`]: building the world (rocks from the seed); collision groups;
//! - [`nav`]: the navigation grid ([`NavGrid`]) and flow fields ([`Flow`]);
//! - [`fog`]: each player's fog of war ([`Fog`]);
//! - [`unit`](mod@unit): unit state ([`Order`], [`UnitView`]) and steering;
//! - `combat.rs`: shots, missiles, chases and removal of the dead (see
//!   [Combat](#combat));
//! - `game.rs`: [`Rts`], the [`Game`](lockstep_sim::Game) implementation;
//! - `bot.rs`: [`RtsBot`], the scripted player;
//! - `snapshot.rs`: its units for snapshots (`lockstep_snapshot::Bodies`).
//!
//! ```
//! use lockstep_games::Demo;
//! use lockstep_games::rts::{Command, Rts, RtsInput};
//! use lockstep_sim::{Game, Match};
//!
//! let mut config = Rts::default_config();
//! config.units_per_player = 16;
//! let mut game = Rts::new(&config, &Match::default()).unwrap();
//! let (x, z) = game.base(0);
//! let r = lockstep_fx::Fx::from_int(10);
//! game.step(0, &[Command::select(x - r, z - r, x + r, z + r).into(), RtsInput::default()]);
//! assert_eq!(game.selection(0).len(), 16);
//! game.step(1, &[Command::move_to(lockstep_fx::Fx::ZERO, lockstep_fx::Fx::ZERO).into()]);
//! ```
//!
//! # Combat
//! Each unit looks for enemies once every `attack_interval` frames
//! (staggered by id) and shoots the nearest in range: a [`Missile`] flies
//! at `missile_speed` and hits its target when it lands, if the target
//! still lives. An idle unit chases an enemy in sight; a unit on an
//! attack-move ([`Command::AttackMove`]) stands to fight while an enemy is
//! in range and walks on when none is. Units at 0 hp leave the world at the
//! end of the pass.

mod bot;
mod combat;
pub mod command;
pub mod config;
pub mod fog;
mod game;
pub mod map;
pub mod nav;
mod snapshot;
pub mod unit;

pub use bot::RtsBot;
pub use combat::Missile;
pub use command::{Command, MapPoint, RtsInput};
pub use config::{Building, RtsConfig, UnitConfig};
pub use fog::Fog;
pub use game::{MAX_FLOWS, Rts};
pub use nav::{Flow, NavGrid};
pub use unit::{Order, UnitView};

impl crate::Demo for Rts {
    type Bot = RtsBot;

    const DEFAULT_SETTINGS: &'static str = include_str!("../../scenes/rts.toml");

    fn bot(seat: u8, seed: u64) -> RtsBot {
        RtsBot::new(seat, seed)
    }
}
