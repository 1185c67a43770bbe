//! The contract between the engine and a game: the [`Game`] trait.
//!
//! A game is a pure function of its state, the frame number and every
//! player's input for that frame. It owns its canonical encoding, from which
//! the engine derives the checksum (BLAKE3 of exactly the saved-state bytes) and
//! the exact saved state, so the two can never disagree.
//!
//! Invariants an implementation keeps:
//! - [`Game::step`] reads nothing but `self`, the frame and the inputs: no
//!   clock, no float, no hash-map iteration, and no thread whose schedule
//!   could change a result (a world's threads, [`Game::set_threads`], give
//!   the same bits for any count);
//! - [`Game::encode`] writes the whole state (settings included), and
//!   [`Game::decode`] of those bytes gives a game that steps identically;
//! - [`Game::decode`] is safe on untrusted bytes: a typed error, never a panic;
//! - [`Game::VERSION`] changes whenever `step` or the encoding does, so a
//!   replay log recorded by another version is refused, not mis-replayed.

use lockstep_codec::Input;

use crate::GameVersion;
use lockstep_fx::{Canonical, Checksum, DecodeError, HashSink, Sink, StateReader, StateWriter};

/// A frame number: frame `n` is stepped with every player's input for `n`.
pub type Frame = u32;

/// What every match fixes before frame 0, beside the game's own settings.
/// In a match file (see [`crate::settings_file::MatchFile`]) every field is
/// optional and defaults to [`Match::default`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Match {
    /// Seats in the match (`0..seats`). Match files may still call it
    /// `seats`, its name before seats had one word.
    #[serde(alias = "players")]
    pub seats: u8,
    /// The match seed: every random choice of the game derives from it.
    pub seed: u64,
    /// Frames per second of simulated time.
    pub tick_rate: u16,
}

impl Default for Match {
    /// Two seats, seed 1, 60 Hz.
    fn default() -> Match {
        Match {
            seats: 2,
            seed: 1,
            tick_rate: 60,
        }
    }
}

impl Match {
    /// Checks a setup against what game `game` supports: a seat count in
    /// `seats` and a tick rate of 1 to 240 Hz.
    pub fn check(
        &self,
        game: &'static str,
        seats: core::ops::RangeInclusive<u8>,
    ) -> Result<(), SetupError> {
        if !seats.contains(&self.seats) {
            return Err(SetupError::Seats {
                game,
                min: *seats.start(),
                max: *seats.end(),
                found: self.seats,
            });
        }
        if !(1..=240).contains(&self.tick_rate) {
            return Err(SetupError::TickRate {
                game,
                found: self.tick_rate,
            });
        }
        Ok(())
    }
}

/// Why a game refused a match setup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The game does not support this many seats.
    #[error("{game} takes {min} to {max} seats, not {found}")]
    Seats {
        /// The game's id.
        game: &'static str,
        /// Fewest seats.
        min: u8,
        /// Most seats.
        max: u8,
        /// Seats asked for.
        found: u8,
    },
    /// The tick rate is outside what the game supports.
    #[error("{game} runs at 1 to 240 Hz, not {found} Hz")]
    TickRate {
        /// The game's id.
        game: &'static str,
        /// The tick rate asked for.
        found: u16,
    },
    /// A setting is out of its range.
    #[error("invalid {game} setting `{field}`: {reason}")]
    Setting {
        /// The game's id.
        game: &'static str,
        /// The setting.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Why bytes are not a valid game state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The bytes ended early, held a malformed value or continued past the end.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Written by another version of the game.
    #[error("{}", crate::version::refusal(crate::version::Recording::State, game, *found, *expected))]
    Version {
        /// The game's id.
        game: &'static str,
        /// The version in the bytes.
        found: GameVersion,
        /// The version this build writes.
        expected: GameVersion,
    },
    /// Well-formed bytes that describe an impossible state.
    #[error("invalid game state: {0}")]
    Invalid(String),
}

/// A deterministic game the [`Engine`](crate::Engine) can run, check, save,
/// load and replay.
pub trait Game: Sized {
    /// One player's input for one frame, with a bounded bit encoding (the
    /// same trait the network protocol sends).
    type Input: Input;

    /// The game's settings (its scene and rules), loaded from a TOML file
    /// (see [`crate::settings_file`]) and stored canonically in replay logs.
    /// `#[derive(Canonical)]` (the `lockstep-derive` crate) writes their
    /// encoding; their ranges are checked by the game, not the decoder.
    type Config: Canonical + serde::de::DeserializeOwned + Clone + PartialEq + core::fmt::Debug;

    /// A short stable name, written in replay logs (ASCII, at most 32 bytes).
    const ID: &'static str;

    /// Changes whenever `step` or the encoding does. A game that steps
    /// physics keeps its rules version in the high 16 bits and
    /// [`Game::PHYSICS_VERSION`] in the low 16 (see [`GameVersion`]).
    const VERSION: u32;

    /// The version of the physics engine the step runs on
    /// (`lockstep_physics::STATE_VERSION`), also the low 16 bits of
    /// [`Game::VERSION`]; 0 (the default) for a game without physics.
    const PHYSICS_VERSION: u16 = 0;

    /// The state before frame 0.
    fn new(config: &Self::Config, setup: &Match) -> Result<Self, SetupError>;

    /// Steps `frame` with `inputs[seat]` for every seat.
    fn step(&mut self, frame: Frame, inputs: &[Self::Input]);

    /// Writes the whole state canonically. Label entities and fields
    /// ([`StateWriter::entity`], [`StateWriter::field`]) so that
    /// [`crate::diff()`] can name what two states disagree on.
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>);

    /// Reads a state written by [`Game::encode`].
    fn decode(bytes: &[u8]) -> Result<Self, StateError>;

    /// The most bytes a saved state of a match of `config` and `setup` may
    /// take, or why the game refuses that match (the error [`Game::new`]
    /// gives).
    ///
    /// Readers of untrusted bytes refuse a longer state before inflating or
    /// decoding it (a replay log's keyframe is damage, naming its offset and
    /// frame), so a crafted file costs no more memory than the largest
    /// match its header allows; writers leave out a keyframe longer than
    /// this (keyframes only speed up seeking). Size it from the settings so
    /// that every state a real match reaches fits: the state before frame 0
    /// plus what the rules let a match add. The default builds the match to
    /// check its setup and allows [`MAX_STATE_BYTES`], the engine's one
    /// limit, which no implementation can raise.
    ///
    /// [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES
    fn state_limit(config: &Self::Config, setup: &Match) -> Result<u32, SetupError> {
        Self::new(config, setup).map(|_| crate::MAX_STATE_BYTES)
    }

    /// Lets the game's step use up to `threads` threads, e.g. by passing
    /// the count to its physics world (`World::set_threads`). A machine
    /// setting, never state: a game must step to the same bits whatever
    /// it is given. The default ignores it.
    fn set_threads(&mut self, threads: usize) {
        let _ = threads;
    }

    /// BLAKE3 of exactly the bytes [`Game::save`] returns.
    fn checksum(&self) -> Checksum {
        let mut w = StateWriter::<HashSink>::hasher();
        self.encode(&mut w);
        w.checksum()
    }

    /// The exact saved state: the canonical bytes.
    fn save(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.encode(&mut w);
        w.into_inner()
    }
}

/// Reads the `u32` version a state encoding starts with and refuses any
/// but `G::VERSION` (write it with `w.field("version", &G::VERSION)`).
pub fn read_version<G: Game>(r: &mut StateReader<'_>) -> Result<(), StateError> {
    let found = r.read_u32()?;
    if found != G::VERSION {
        return Err(StateError::Version {
            game: G::ID,
            found: GameVersion::of::<G>(found),
            expected: GameVersion::of::<G>(G::VERSION),
        });
    }
    Ok(())
}

/// A scripted player that chooses inputs from what it sees of the game, so
/// matches can be recorded headless. A bot must be deterministic: the same
/// seed, seat and game states give the same inputs.
pub trait Bot<G: Game> {
    /// The input for `frame`, seeing the state before it is stepped.
    fn input(&mut self, game: &G, frame: Frame) -> G::Input;
}
