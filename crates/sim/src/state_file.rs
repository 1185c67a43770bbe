//! A saved game state on disk ([`StateFile`]): one exact saved state with what
//! is needed to trust it — the game id and version, the frame it is the
//! state before — and a BLAKE3 check over all of it.
//!
//! Layout, format version 2 (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `LSSTATE\0` |
//! | 2 | format version `u16` = 2 |
//! | 4 + n | game id: a `u32` length `n`, then `n` bytes |
//! | 4 | game version `u32` |
//! | 4 | frame `u32`: the state is the one before this frame |
//! | 4 + m | state: a `u32` length `m`, then the game's canonical bytes |
//! | 32 | BLAKE3 of every byte before it |
//!
//! Version 1 checked only the state bytes, so a changed frame number or game id
//! went unseen; version 2 covers the whole file. A reader refuses any other
//! version with [`StateFileError::Version`] (a version 1 file must be saved
//! again). The checksum of the state itself (the engine's checksum of the
//! frame before) is BLAKE3 of the saved-state bytes, recomputed on demand
//! ([`SavedState::checksum`]).
//!
//! The decoder is safe on untrusted bytes: it checks the magic, then the
//! version, then the check over the whole file, and only then reads the
//! fields; a state longer than [`MAX_STATE_BYTES`](crate::MAX_STATE_BYTES)
//! is refused before a game decodes it; every error is typed and carries
//! what was wrong; nothing panics.

use lockstep_fx::{Checksum, DecodeError, StateReader, StateWriter};

use crate::GameVersion;
use crate::engine::SavedState;
use crate::game::{Frame, Game};

/// The first 8 bytes of every state file.
pub const STATE_MAGIC: [u8; 8] = *b"LSSTATE\0";

/// Bytes before the fields the check protects: magic and version.
const PREFIX: usize = 8 + 2;

/// Bytes of the check that ends a state file.
const CHECK: usize = 32;

/// Version of the state file layout.
pub const STATE_FILE_VERSION: u16 = 2;

/// Why bytes are not a state file (of the game expected).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateFileError {
    /// Not a state file at all.
    #[error("not a lockstep state file (bad magic)")]
    Magic,
    /// A layout this build does not read.
    #[error(
        "state file format version {found}; this build reads version {STATE_FILE_VERSION} only (save the state again with this build)"
    )]
    Version {
        /// The version found.
        found: u16,
    },
    /// Malformed or truncated bytes.
    #[error("malformed state file: {0}")]
    Decode(#[from] DecodeError),
    /// The file's bytes do not match its check (any byte after the version
    /// changed, or the file cut short).
    #[error("state file check mismatch: the file is corrupted or cut short")]
    Checksum,
    /// A state longer than [`MAX_STATE_BYTES`](crate::MAX_STATE_BYTES),
    /// the longest any lockstep format carries: refused before the game
    /// decodes it.
    #[error(
        "state file holds a state of {len} bytes, more than {} (the longest state lockstep carries)",
        crate::MAX_STATE_BYTES
    )]
    TooLong {
        /// The state's length.
        len: u64,
    },
    /// A state of another game or game version.
    #[error("{}", if found.as_str() == *expected {
        crate::version::refusal(crate::version::Recording::State, expected, *found_version, *expected_version)
    } else {
        format!("the state file holds a state of {found}, not {expected}")
    })]
    Game {
        /// The game id found.
        found: String,
        /// Its version.
        found_version: GameVersion,
        /// The game id expected.
        expected: &'static str,
        /// The version expected.
        expected_version: GameVersion,
    },
}

/// One exact game state, as saved to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    /// The game's id.
    pub game: String,
    /// The game's version.
    pub game_version: u32,
    /// The saved state (the state before `state.frame`).
    pub state: SavedState,
}

impl StateFile {
    /// A state file of `state`, a state of `G`.
    pub fn of<G: Game>(state: SavedState) -> StateFile {
        StateFile {
            game: G::ID.to_string(),
            game_version: G::VERSION,
            state,
        }
    }

    /// The frame the state is before.
    pub fn frame(&self) -> Frame {
        self.state.frame
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_raw(&STATE_MAGIC);
        w.write_u16(STATE_FILE_VERSION);
        w.write_bytes(self.game.as_bytes());
        w.write_u32(self.game_version);
        w.write_u32(self.state.frame);
        w.write_bytes(&self.state.bytes);
        let check = Checksum::of(w.bytes());
        w.write_raw(check.as_bytes());
        w.into_inner()
    }

    /// Reads a state file of any game.
    pub fn decode(bytes: &[u8]) -> Result<StateFile, StateFileError> {
        let mut r = StateReader::new(bytes);
        if r.read_raw(8).ok() != Some(&STATE_MAGIC[..]) {
            return Err(StateFileError::Magic);
        }
        let version = r.read_u16()?;
        if version != STATE_FILE_VERSION {
            return Err(StateFileError::Version { found: version });
        }
        // The check covers every byte before it: test it before any field.
        if bytes.len() < PREFIX + CHECK {
            return Err(StateFileError::Decode(DecodeError::UnexpectedEnd {
                offset: bytes.len() as u64,
                needed: (PREFIX + CHECK - bytes.len()) as u64,
            }));
        }
        let (body, check) = bytes.split_at(bytes.len() - CHECK);
        if Checksum::of(body).as_bytes()[..] != check[..] {
            return Err(StateFileError::Checksum);
        }
        let mut r = StateReader::new(body);
        r.read_raw(PREFIX)?;
        let game = String::from_utf8_lossy(r.read_bytes()?).into_owned();
        let game_version = r.read_u32()?;
        let frame = r.read_u32()?;
        let saved = r.read_bytes()?;
        if saved.len() as u64 > u64::from(crate::MAX_STATE_BYTES) {
            return Err(StateFileError::TooLong {
                len: saved.len() as u64,
            });
        }
        let saved = saved.to_vec();
        r.finish()?;
        Ok(StateFile {
            game,
            game_version,
            state: SavedState {
                frame,
                bytes: saved,
            },
        })
    }

    /// Checks that this is a state of `G` at its current version.
    pub fn expect<G: Game>(&self) -> Result<(), StateFileError> {
        if self.game != G::ID || self.game_version != G::VERSION {
            return Err(StateFileError::Game {
                found: self.game.clone(),
                found_version: GameVersion::of::<G>(self.game_version),
                expected: G::ID,
                expected_version: GameVersion::of::<G>(G::VERSION),
            });
        }
        Ok(())
    }
}
