//! The frame loop: [`Engine`] steps a [`Game`], checksums every frame, and
//! keeps rings of recent checksums and saved states for rollback, resync
//! and desync reports.
//!
//! Frames: the engine's [`Engine::frame`] is the next frame to step. A
//! [`SavedState`] of frame `f` is the state *before* frame `f` is stepped, so
//! loading it and stepping frames `f, f+1, …` with the same inputs gives the
//! same states again. The checksum of frame `f` is that of the state *after*
//! stepping `f` (the state a saved state of `f + 1` holds).
//!
//! Each frame's checksum is BLAKE3 of the state's canonical bytes, hashed by
//! a [`FrameHasher`]: a machine-local cache that rehashes only the 16 KiB
//! pieces of those bytes that changed since the frame before (the digest is
//! the same as hashing them whole). With two or more threads,
//! [`Engine::advance_deferred`] leaves that hashing to the thread pool's
//! waiting helpers, so a frame's checksum is hashed while the next frame
//! steps and comes back one call later; every other method first takes
//! back a checksum still being hashed, so the history below holds as for
//! [`Engine::advance`].
//!
//! Invariants: the checksum ring holds consecutive frames ending at the last
//! frame stepped; the saved-state ring is in frame order; loading a saved
//! state drops every checksum and saved state of a later state, since they belong to a
//! history that no longer holds.

use std::collections::VecDeque;

use lockstep_fx::{Checksum, FrameHasher};

use crate::game::{Frame, Game, StateError};

/// How much history an [`Engine`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineSettings {
    /// Checksums of this many recent frames are kept.
    pub checksum_history: u32,
    /// The state is saved before every frame that is a multiple of this
    /// (`0`: never).
    #[serde(alias = "snapshot_interval")]
    pub save_interval: u32,
    /// The most recent saved states kept.
    #[serde(alias = "snapshots_kept")]
    pub saved_states_kept: u32,
}

impl EngineSettings {
    /// Keeps no checksums and no saved states: for an engine whose caller
    /// keeps what it needs itself (a replay, a peer's rebuild, a
    /// spectator).
    pub const NONE: EngineSettings = EngineSettings {
        checksum_history: 0,
        save_interval: 0,
        saved_states_kept: 0,
    };
}

impl Default for EngineSettings {
    /// 10 s of checksums at 60 Hz; the state saved every second, the last 8 kept.
    fn default() -> EngineSettings {
        EngineSettings {
            checksum_history: 600,
            save_interval: 60,
            saved_states_kept: 8,
        }
    }
}

/// An exact saved state: the canonical bytes of the state before `frame`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedState {
    /// The next frame to step from this state.
    pub frame: Frame,
    /// The canonical bytes.
    pub bytes: Vec<u8>,
}

impl SavedState {
    /// BLAKE3 of the bytes: equal to the game's checksum of this state.
    pub fn checksum(&self) -> Checksum {
        Checksum::of(&self.bytes)
    }
}

/// Why the engine could not go back to a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RollbackError {
    /// No kept saved state is of that frame.
    #[error("no saved state of frame {frame} is kept (kept: {kept:?})")]
    NoSavedState {
        /// The frame asked for.
        frame: Frame,
        /// The frames of the kept saved states.
        kept: Vec<Frame>,
    },
    /// The saved state did not decode (a game bug: it encoded it).
    #[error("saved state of frame {frame}: {error}")]
    State {
        /// The saved state's frame.
        frame: Frame,
        /// Why it did not decode.
        error: StateError,
    },
}

/// Runs a [`Game`] frame by frame.
#[derive(Debug)]
pub struct Engine<G: Game> {
    game: G,
    frame: Frame,
    settings: EngineSettings,
    checksums: VecDeque<Checksum>,
    saved: VecDeque<SavedState>,
    /// Hashes each frame's state, rehashing only the leaves that changed
    /// since the frame before (machine-local, never part of the state).
    hasher: FrameHasher,
    /// Threads a frame may use (machine-local, see [`Engine::set_threads`]).
    threads: usize,
    /// The frame whose checksum [`Engine::advance_deferred`] began and
    /// nothing has collected yet. Whenever it is set, `hasher` holds that
    /// begun checksum.
    pending: Option<Frame>,
}

/// A copy starts with an empty hasher (its cache never changes a
/// checksum); when a checksum is pending, the copy begins it again from its
/// own state, which is still the one after that frame, so it collects the
/// same checksum for the same frame.
impl<G: Game + Clone> Clone for Engine<G> {
    fn clone(&self) -> Engine<G> {
        let mut copy = Engine {
            game: self.game.clone(),
            frame: self.frame,
            settings: self.settings,
            checksums: self.checksums.clone(),
            saved: self.saved.clone(),
            hasher: self.hasher.clone(),
            threads: self.threads,
            pending: self.pending,
        };
        if copy.pending.is_some() {
            let game = &copy.game;
            copy.hasher.begin(|w| game.encode(w));
        }
        copy
    }
}

impl<G: Game> Engine<G> {
    /// An engine at frame 0 with `game` as the initial state.
    pub fn new(game: G, settings: EngineSettings) -> Engine<G> {
        Engine::at(game, 0, settings)
    }

    /// An engine whose next frame is `frame`, starting from `game` (e.g. a
    /// state loaded from a keyframe).
    pub fn at(game: G, frame: Frame, settings: EngineSettings) -> Engine<G> {
        Engine {
            game,
            frame,
            settings,
            checksums: VecDeque::new(),
            saved: VecDeque::new(),
            hasher: FrameHasher::new(),
            threads: 1,
            pending: None,
        }
    }

    /// Lets each frame use up to `threads` threads (at least 1): the game's
    /// step ([`Game::set_threads`]) and the hashing of a large state
    /// ([`FrameHasher::set_threads`]). A machine setting: states, checksums
    /// and saved states are the same for any count. It stays set through
    /// [`Engine::load`] and [`Engine::rollback`].
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        self.hasher.set_threads(self.threads);
        self.game.set_threads(self.threads);
    }

    /// The threads a frame may use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The game's current state.
    pub fn game(&self) -> &G {
        &self.game
    }

    /// The game, to change it outside the frame loop (a test that corrupts
    /// it, an editor). Changes made here are not part of any replay. A
    /// checksum still being hashed is taken back first (it is the state's
    /// before the change).
    pub fn game_mut(&mut self) -> &mut G {
        self.collect_checksum();
        &mut self.game
    }

    /// The next frame to step.
    pub fn frame(&self) -> Frame {
        self.frame
    }

    /// The history settings.
    pub fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    /// Steps the next frame with every player's input and returns the
    /// checksum of the state after it: [`Game::checksum`], computed by a
    /// [`FrameHasher`] that rehashes only the parts of the state's bytes that
    /// changed since the last frame.
    pub fn advance(&mut self, inputs: &[G::Input]) -> Checksum {
        self.collect_checksum();
        self.save_if_due();
        self.game.step(self.frame, inputs);
        let game = &self.game;
        let checksum = self.hasher.checksum(|w| game.encode(w));
        self.frame = self.frame.wrapping_add(1);
        self.push_checksum(checksum);
        checksum
    }

    /// Steps the next frame like [`Engine::advance`] and also returns the
    /// exact saved state after it. The checksum is hashed from
    /// those same bytes, so keeping every frame's state costs one encoding,
    /// not two.
    pub fn advance_saving(&mut self, inputs: &[G::Input]) -> (Checksum, SavedState) {
        self.collect_checksum();
        self.save_if_due();
        self.game.step(self.frame, inputs);
        self.frame = self.frame.wrapping_add(1);
        let game = &self.game;
        let checksum = self.hasher.checksum(|w| game.encode(w));
        let after = SavedState {
            frame: self.frame,
            bytes: self.hasher.bytes().to_vec(),
        };
        self.push_checksum(checksum);
        (checksum, after)
    }

    /// Steps the next frame like [`Engine::advance`], but has the state
    /// after it hashed by the pool's helpers while they wait between the
    /// next frame's shares, when the engine may use two or more threads
    /// ([`Engine::set_threads`]), so that hashing overlaps the next frame's
    /// step. Returns the checksum begun by the call before, with
    /// its frame, once known ([`Engine::collect_checksum`] gives the last
    /// one). With one thread it hashes at once, and the result still comes
    /// one call later. The checksums are those `advance` gives.
    pub fn advance_deferred(&mut self, inputs: &[G::Input]) -> Option<(Frame, Checksum)> {
        self.save_if_due();
        // The pool's helpers hash the frame before while this one steps.
        self.game.step(self.frame, inputs);
        let done = self.collect_checksum();
        let game = &self.game;
        self.hasher.begin(|w| game.encode(w));
        self.pending = Some(self.frame);
        self.frame = self.frame.wrapping_add(1);
        done
    }

    /// The checksum [`Engine::advance_deferred`] began last, with its
    /// frame, hashing here what no helper took; `None` if it was returned
    /// already. It is kept in the history from then on.
    pub fn collect_checksum(&mut self) -> Option<(Frame, Checksum)> {
        let frame = self.pending.take()?;
        let checksum = self
            .hasher
            .collect()
            .expect("a pending checksum is held by the engine's hasher");
        self.push_checksum(checksum);
        Some((frame, checksum))
    }

    fn push_checksum(&mut self, checksum: Checksum) {
        if self.settings.checksum_history > 0 {
            if self.checksums.len() >= self.settings.checksum_history as usize {
                self.checksums.pop_front();
            }
            self.checksums.push_back(checksum);
        }
    }

    fn saved_states_kept(&self) -> usize {
        self.settings.saved_states_kept as usize
    }

    /// Keeps a saved state of the next frame if it is a multiple of the
    /// save interval.
    fn save_if_due(&mut self) {
        let interval = self.settings.save_interval;
        if interval != 0 && self.frame % interval == 0 && self.saved_states_kept() > 0 {
            self.keep_saved_state();
        }
    }

    fn keep_saved_state(&mut self) {
        if self.saved.back().is_some_and(|s| s.frame == self.frame) {
            return;
        }
        if self.saved.len() >= self.saved_states_kept() {
            self.saved.pop_front();
        }
        let saved = self.save();
        self.saved.push_back(saved);
    }

    /// The checksum of the state after stepping `frame`, if still kept
    /// (one still being hashed is not kept until collected).
    pub fn checksum_of(&self, frame: Frame) -> Option<Checksum> {
        let back = self.frame.checked_sub(1 + frame)?;
        // While a checksum is being hashed, the ring ends a frame earlier.
        let back = back.checked_sub(u32::from(self.pending.is_some()))?;
        let index = self.checksums.len().checked_sub(1 + back as usize)?;
        self.checksums.get(index).copied()
    }

    /// The kept checksums, oldest first, with their frames.
    pub fn checksums(&self) -> impl Iterator<Item = (Frame, Checksum)> + '_ {
        let end = self.frame.wrapping_sub(u32::from(self.pending.is_some()));
        let first = end.wrapping_sub(self.checksums.len() as u32);
        (first..).zip(self.checksums.iter().copied())
    }

    /// The kept saved states, oldest first.
    pub fn saved_states(&self) -> impl Iterator<Item = &SavedState> {
        self.saved.iter()
    }

    /// The kept saved state of `frame`.
    pub fn saved_state_of(&self, frame: Frame) -> Option<&SavedState> {
        self.saved.iter().find(|s| s.frame == frame)
    }

    /// The current state, saved exactly.
    pub fn save(&self) -> SavedState {
        SavedState {
            frame: self.frame,
            bytes: self.game.save(),
        }
    }

    /// Replaces the state with `saved`. Checksums of frames at or after
    /// its frame, and saved states after it, are dropped; earlier ones are kept.
    pub fn load(&mut self, saved: &SavedState) -> Result<(), StateError> {
        let game = G::decode(&saved.bytes)?;
        self.restore(game, saved.frame);
        Ok(())
    }

    /// Goes back to the kept saved state of `frame`.
    pub fn rollback(&mut self, frame: Frame) -> Result<(), RollbackError> {
        let Some(saved) = self.saved_state_of(frame) else {
            return Err(RollbackError::NoSavedState {
                frame,
                kept: self.saved.iter().map(|s| s.frame).collect(),
            });
        };
        let game =
            G::decode(&saved.bytes).map_err(|error| RollbackError::State { frame, error })?;
        self.restore(game, frame);
        Ok(())
    }

    fn restore(&mut self, game: G, frame: Frame) {
        self.collect_checksum();
        let stepped_since = self.frame.saturating_sub(frame) as usize;
        let keep = self.checksums.len().saturating_sub(stepped_since);
        if frame > self.frame {
            self.checksums.clear();
        } else {
            self.checksums.truncate(keep);
        }
        self.saved.retain(|s| s.frame <= frame);
        self.game = game;
        self.game.set_threads(self.threads);
        self.frame = frame;
    }
}
