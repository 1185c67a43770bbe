//! Sync testing ([`SyncTest`]), after GGRS's `SyncTestSession`: every frame,
//! go back `depth` frames, load the state saved there, step the same inputs
//! again and require the same checksums. A game that reads anything but its
//! state and inputs (a clock, a hash map's order, an uninitialised field, a
//! float) or whose encoding misses part of its state fails within `depth`
//! frames, with the frame and the fields that differ.
//!
//! Invariants: the states kept are those of the first run, one per frame
//! from `frame - depth` to the current frame; after a successful check the
//! engine holds the re-simulated state, which equals the first.

use std::collections::VecDeque;

use lockstep_fx::Checksum;

use crate::diff::{FieldDiff, diff_states};
use crate::engine::{Engine, EngineSettings, SavedState};
use crate::game::{Frame, Game, StateError};

/// A determinism failure found by a [`SyncTest`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncTestError {
    /// Stepping `frame` again from the same state gave another state.
    #[error(
        "frame {frame} is not deterministic: checksum {first} the first time, {again} again ({})",
        crate::diff::count(diff.len())
    )]
    Mismatch {
        /// The first frame whose re-simulation differs.
        frame: Frame,
        /// Checksum of the state after `frame` the first time.
        first: Checksum,
        /// Checksum after stepping it again.
        again: Checksum,
        /// The fields that differ (first run on the left).
        diff: Vec<FieldDiff>,
    },
    /// A saved state did not load back to the same bytes: `decode` and
    /// `encode` disagree.
    #[error("the state before frame {frame} does not survive a save and load ({})", crate::diff::count(diff.len()))]
    RoundTrip {
        /// The frame of the state.
        frame: Frame,
        /// The fields that differ (saved on the left).
        diff: Vec<FieldDiff>,
    },
    /// A saved state did not decode at all.
    #[error("the state before frame {frame} does not load: {error}")]
    Load {
        /// The frame of the state.
        frame: Frame,
        /// Why it did not decode.
        error: StateError,
    },
}

/// Runs a game while re-simulating the last `depth` frames after each one.
#[derive(Debug, Clone)]
pub struct SyncTest<G: Game> {
    engine: Engine<G>,
    depth: u32,
    /// States of the first run: `states[i]` is before frame `first + i`.
    states: VecDeque<SavedState>,
    /// Inputs of the frames since the oldest state.
    inputs: VecDeque<Vec<G::Input>>,
    resimulated: u64,
}

impl<G: Game> SyncTest<G> {
    /// Starts from `game` at frame 0, checking `depth` frames back (GGRS's
    /// default check distance is 2; `0` checks only save and load).
    ///
    /// Any depth is accepted, up to `u32::MAX`; a depth beyond the frames
    /// stepped goes back to frame 0. The cost is `depth` extra steps a frame
    /// and one kept saved state per frame of depth, so a caller that takes the
    /// depth from a user should bound it by the frames it will step.
    pub fn new(game: G, depth: u32) -> SyncTest<G> {
        let settings = EngineSettings {
            // The checksums of the frames re-simulated, and the current one.
            checksum_history: depth.saturating_add(1),
            save_interval: 0,
            saved_states_kept: 0,
        };
        let engine = Engine::new(game, settings);
        let states = VecDeque::from([engine.save()]);
        SyncTest {
            engine,
            depth,
            states,
            inputs: VecDeque::new(),
            resimulated: 0,
        }
    }

    /// The engine (its state is always the first run's).
    pub fn engine(&self) -> &Engine<G> {
        &self.engine
    }

    /// The engine, to change the game outside the frame loop.
    pub fn engine_mut(&mut self) -> &mut Engine<G> {
        &mut self.engine
    }

    /// Frames stepped a second time so far.
    pub fn resimulated(&self) -> u64 {
        self.resimulated
    }

    /// Steps the next frame, then goes back `depth` frames (or to frame 0),
    /// steps them again and compares. Returns the frame's checksum.
    pub fn advance(&mut self, inputs: &[G::Input]) -> Result<Checksum, SyncTestError> {
        let checksum = self.engine.advance(inputs);
        self.inputs.push_back(inputs.to_vec());
        self.states.push_back(self.engine.save());
        while self.inputs.len() > self.depth as usize {
            self.inputs.pop_front();
            self.states.pop_front();
        }
        self.check()?;
        Ok(checksum)
    }

    fn check(&mut self) -> Result<(), SyncTestError> {
        let Some(oldest) = self.states.front() else {
            return Ok(());
        };
        let start = oldest.frame;
        let first: Vec<Checksum> = (start..self.engine.frame())
            .filter_map(|f| self.engine.checksum_of(f))
            .collect();
        self.engine
            .load(oldest)
            .map_err(|error| SyncTestError::Load {
                frame: start,
                error,
            })?;
        let reloaded = self.engine.game().save();
        if reloaded != oldest.bytes {
            let diff = diff_states::<G>(&oldest.bytes, &reloaded).unwrap_or_default();
            return Err(SyncTestError::RoundTrip { frame: start, diff });
        }
        for (i, inputs) in self.inputs.iter().enumerate() {
            let frame = start + i as Frame;
            let again = self.engine.advance(inputs);
            self.resimulated += 1;
            if again != first[i] {
                let diff = diff_states::<G>(&self.states[i + 1].bytes, &self.engine.game().save())
                    .unwrap_or_default();
                return Err(SyncTestError::Mismatch {
                    frame,
                    first: first[i],
                    again,
                    diff,
                });
            }
        }
        Ok(())
    }
}
