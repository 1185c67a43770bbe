//! [`GameVersion`]: what a game's [`Game::VERSION`] says, read as a person
//! can act on it.
//!
//! A game that steps the physics engine keeps two versions in its one
//! number: its *rules* version in the high 16 bits and, in the low 16, the
//! version of the *physics* its step runs on ([`Game::PHYSICS_VERSION`]).
//! The two move apart: a change to the rules moves one game's bits, a
//! change to the physics (a new solver, a re-blessed order of operations)
//! moves every game's. Either makes a log or saved state recorded before
//! replay to other bits, so it is refused, and the refusal names both
//! halves of both versions and what to do: replay it with the release
//! that recorded it. A game without physics has one plain version number.
//!
//! Invariant: the number is the one written in logs and states; this type
//! only reads it, so no recorded byte depends on it.

use core::fmt;

use crate::Game;

/// A game's version number, read as its rules and physics versions where
/// the game steps physics.
///
/// ```
/// use lockstep_sim::GameVersion;
///
/// let v = GameVersion { number: 5 << 16 | 7, physics: true };
/// assert_eq!((v.rules(), v.physics()), (5, Some(7)));
/// assert_eq!(v.to_string(), "rules 5, physics 7");
/// let plain = GameVersion { number: 3, physics: false };
/// assert_eq!(plain.to_string(), "version 3");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GameVersion {
    /// The number, as logs and states record it.
    pub number: u32,
    /// Whether the game keeps a physics version in its low 16 bits.
    pub physics: bool,
}

impl GameVersion {
    /// `number` read as a version of `G`.
    pub fn of<G: Game>(number: u32) -> GameVersion {
        GameVersion {
            number,
            physics: G::PHYSICS_VERSION != 0,
        }
    }

    /// The game's own rules version (the whole number for a game without
    /// physics).
    pub const fn rules(self) -> u32 {
        if self.physics {
            self.number >> 16
        } else {
            self.number
        }
    }

    /// The version of the physics the step runs on, for a game with
    /// physics.
    pub const fn physics(self) -> Option<u16> {
        if self.physics {
            Some(self.number as u16)
        } else {
            None
        }
    }
}

impl fmt::Display for GameVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.physics() {
            Some(physics) => write!(f, "rules {}, physics {physics}", self.rules()),
            None => write!(f, "version {}", self.number),
        }
    }
}

/// What was recorded at another version, for [`refusal`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Recording {
    /// A replay log.
    Log,
    /// A saved state (a state file, a keyframe, a snapshot's bytes).
    State,
}

/// The one line that refuses a recording of `game` made at version `found`
/// by a build that runs `expected`: both versions, and what to do.
pub(crate) fn refusal(
    what: Recording,
    game: &str,
    found: GameVersion,
    expected: GameVersion,
) -> String {
    let (noun, action) = match what {
        Recording::Log => (
            "log",
            "replay it with the lockstep release that recorded it",
        ),
        Recording::State => (
            "saved state",
            "load it with the lockstep release that saved it",
        ),
    };
    format!("this {noun} is of {game} {found} and this build runs {game} {expected}: {action}")
}
