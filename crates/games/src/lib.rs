//! The games shipped with lockstep, written only against the public APIs of
//! `lockstep-sim`, `lockstep-physics` and `lockstep-snapshot`, as a studio would
//! write its own:
//!
//! - [`cubes`]: the networked-physics cube demo: each player pushes a cube
//!   through a field of small cubes, blows them away, or rolls them up
//!   katamari-style.
//! - [`gaffer_cubes`]: the snapshot-compression article's scene, one
//!   player cube rolling through the cube demo's field along a scripted
//!   route (the cube demo's rules, one seat).
//! - [`rts`]: an RTS battle: thousands of units that players select and move
//!   by commands, colliding on the ground around static buildings.
//!
//! Each game has a seeded scripted bot and embedded default settings
//! ([`Demo`]), so matches can be recorded headless, and exposes its bodies
//! to snapshots (`lockstep_snapshot::Bodies`, `BodiesMut`).
//!
//! The games are the `shipped` feature (on by default). A studio that only
//! wants [`Demo`] for its own game leaves them out:
//! `lockstep-games = { ..., default-features = false }`.
#![deny(clippy::float_arithmetic, clippy::float_cmp)]

#[cfg(feature = "shipped")]
mod bodies;
#[cfg(feature = "shipped")]
pub mod cubes;
#[cfg(feature = "shipped")]
pub mod gaffer_cubes;
#[cfg(feature = "shipped")]
pub mod rts;

use lockstep_sim::{Bot, Frame, Game, Match};

/// A shipped game's state version ([`Game::VERSION`]): its own rules
/// version in the high 16 bits and the physics engine's
/// [`STATE_VERSION`](lockstep_physics::STATE_VERSION) in the low 16, so
/// that a change to the physics (which moves every game's bits) makes old
/// logs and states fail with a version error instead of a mismatch.
pub const fn version(rules: u16) -> u32 {
    (rules as u32) << 16 | lockstep_physics::STATE_VERSION as u32
}

/// Cached contacts a shipped game's state allows per body of its world, on
/// average (the ground's many contacts included): a world holds a contact
/// only between bodies that touch or nearly do, and the scenes measured hold
/// two or fewer (pyramid-15: about 2 000 for 1 241 bodies).
pub const CONTACTS_PER_BODY: u32 = 16;

/// The most bytes the world of a shipped game may take in a saved state:
/// `slots` slots with every field written, [`CONTACTS_PER_BODY`] contacts
/// each (see [`Game::state_limit`](lockstep_sim::Game::state_limit)).
fn world_limit(slots: u32) -> u64 {
    lockstep_physics::World::max_encoded_len(slots, slots.saturating_mul(CONTACTS_PER_BODY))
}

/// `bytes`, capped at the engine's one limit on a state.
fn state_limit(bytes: u64) -> u32 {
    u32::try_from(bytes)
        .unwrap_or(u32::MAX)
        .min(lockstep_sim::MAX_STATE_BYTES)
}

/// A shipped game: embedded default settings and a scripted bot.
pub trait Demo: Game {
    /// The bot that plays it.
    type Bot: Bot<Self> + 'static;

    /// The default settings, as TOML text (the file under `scenes/`).
    const DEFAULT_SETTINGS: &'static str;

    /// A bot for `seat`, seeded from the match seed.
    fn bot(seat: u8, seed: u64) -> Self::Bot;

    /// The default settings, parsed.
    fn default_config() -> Self::Config {
        lockstep_sim::settings_file::parse(
            Self::DEFAULT_SETTINGS,
            std::path::Path::new("<embedded>"),
        )
        .unwrap_or_else(|e| panic!("the embedded {} settings are invalid: {e}", Self::ID))
    }
}

/// One bot per seat of a match, asked together each frame: how a headless
/// match is played (`lockstep record`, the fixtures, the benchmarks).
pub struct Bots<G: Demo> {
    bots: Vec<G::Bot>,
}

impl<G: Demo> Bots<G> {
    /// A bot for every seat of `setup`, seeded from its seed.
    pub fn new(setup: &Match) -> Bots<G> {
        Bots {
            bots: (0..setup.seats).map(|s| G::bot(s, setup.seed)).collect(),
        }
    }

    /// Every seat's input for `frame`, seeing `game` before it is stepped.
    pub fn inputs(&mut self, game: &G, frame: Frame) -> Vec<G::Input> {
        self.bots.iter_mut().map(|b| b.input(game, frame)).collect()
    }
}
