//! A saved game state on disk ([`StateFile`]): one exact snapshot with what
//! is needed to trust it — the game id and version, the frame it is the
//! state before, and its BLAKE3 checksum.
//!
//! Layout (little-endian): magic `LSSTATE\0`, format version `u16`, game id
//! (a `u32` length then ASCII), game version `u32`, frame `u32`, the
//! snapshot (a `u32` length then the bytes), then the 32-byte BLAKE3 of the
//! snapshot. The decoder is safe on untrusted bytes: every error is typed
//! and carries what was wrong; nothing panics.

use lockstep_fx::{Checksum, DecodeError, StateReader, StateWriter};

use crate::engine::Snapshot;
use crate::game::{Frame, Game};

/// The first 8 bytes of every state file.
pub const STATE_MAGIC: [u8; 8] = *b"LSSTATE\0";

/// Version of the state file layout.
pub const STATE_FILE_VERSION: u16 = 1;

/// Why bytes are not a state file (of the game expected).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateFileError {
    /// Not a state file at all.
    #[error("not a lockstep state file (bad magic)")]
    Magic,
    /// A layout this build does not read.
    #[error("state file version {found}, this build reads version {STATE_FILE_VERSION}")]
    Version {
        /// The version found.
        found: u16,
    },
    /// Malformed or truncated bytes.
    #[error("malformed state file: {0}")]
    Decode(#[from] DecodeError),
    /// The snapshot does not match its checksum.
    #[error("state file checksum mismatch: the snapshot is corrupted")]
    Checksum,
    /// A state of another game or game version.
    #[error("state file holds {found} v{found_version}, expected {expected} v{expected_version}")]
    Game {
        /// The game id found.
        found: String,
        /// Its version.
        found_version: u32,
        /// The game id expected.
        expected: &'static str,
        /// The version expected.
        expected_version: u32,
    },
}

/// One exact game state, as saved to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    /// The game's id.
    pub game: String,
    /// The game's version.
    pub game_version: u32,
    /// The snapshot (the state before `snapshot.frame`).
    pub snapshot: Snapshot,
}

impl StateFile {
    /// A state file of `snapshot`, a state of `G`.
    pub fn of<G: Game>(snapshot: Snapshot) -> StateFile {
        StateFile {
            game: G::ID.to_string(),
            game_version: G::VERSION,
            snapshot,
        }
    }

    /// The frame the state is before.
    pub fn frame(&self) -> Frame {
        self.snapshot.frame
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_raw(&STATE_MAGIC);
        w.write_u16(STATE_FILE_VERSION);
        w.write_bytes(self.game.as_bytes());
        w.write_u32(self.game_version);
        w.write_u32(self.snapshot.frame);
        w.write_bytes(&self.snapshot.bytes);
        w.write_raw(self.snapshot.checksum().as_bytes());
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
        let game = String::from_utf8_lossy(r.read_bytes()?).into_owned();
        let game_version = r.read_u32()?;
        let frame = r.read_u32()?;
        let snapshot = r.read_bytes()?.to_vec();
        let mut sum = [0u8; 32];
        sum.copy_from_slice(r.read_raw(32)?);
        r.finish()?;
        if Checksum::of(&snapshot) != Checksum::from_bytes(sum) {
            return Err(StateFileError::Checksum);
        }
        Ok(StateFile {
            game,
            game_version,
            snapshot: Snapshot {
                frame,
                bytes: snapshot,
            },
        })
    }

    /// Checks that this is a state of `G` at its current version.
    pub fn expect<G: Game>(&self) -> Result<(), StateFileError> {
        if self.game != G::ID || self.game_version != G::VERSION {
            return Err(StateFileError::Game {
                found: self.game.clone(),
                found_version: self.game_version,
                expected: G::ID,
                expected_version: G::VERSION,
            });
        }
        Ok(())
    }
}
