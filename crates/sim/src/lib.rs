//! The simulation core of lockstep: what a game implements, the frame loop
//! that runs it, and the tools that prove it deterministic.
//!
//! - [`Game`]: the trait an embedding game implements (an [`Input`] type with
//!   a bounded bit encoding, `step(frame, inputs)`, a canonical labelled
//!   state encoding); [`Bot`] for scripted players.
//! - [`Engine`]: steps a game, checksums every frame (BLAKE3 of exactly the
//!   saved-state bytes), keeps rings of recent checksums and exact saved states,
//!   saves, loads and rolls back.
//! - [`SyncTest`]: every frame, rolls back a few frames, re-simulates and
//!   compares, to catch non-determinism in a game while it is written.
//! - [`diff()`] and [`desync`]: which entity and field two states disagree on,
//!   the first frame two checksum streams part, and a readable desync report.
//! - [`replay`]: versioned binary replay logs of a match's inputs and
//!   checksums, written as a stream and read back up to the last valid byte.
//! - [`StateFile`]: one exact state saved to disk, for desync reports.
//! - [`settings_file`]: a game's settings and whole matches from TOML, with
//!   errors that name file, line and field.
//!
//! This crate is integer-only, reads no clock and starts no thread itself:
//! [`Engine::set_threads`] hands a thread count to the game and to the
//! checksum's hasher, whose results do not depend on it.
//!
//! [`Input`]: lockstep_codec::Input
#![deny(clippy::float_arithmetic, clippy::float_cmp)]

pub mod desync;
pub mod diff;
mod engine;
pub mod fields;
mod game;
pub mod replay;
pub mod settings_file;
mod state_file;
mod synctest;
mod version;

pub use diff::{FieldDiff, diff, diff_states};
pub use engine::{Engine, EngineSettings, RollbackError, SavedState};
pub use fields::{EntityKey, StateMap};
pub use game::{Bot, Frame, Game, Match, SetupError, StateError, read_version};
pub use lockstep_codec::Input;
pub use lockstep_codec::deflate::MAX_STATE_BYTES;
pub use state_file::{STATE_FILE_VERSION, STATE_MAGIC, StateFile, StateFileError};
pub use synctest::{SyncTest, SyncTestError};
pub use version::GameVersion;
