//! [`History`]: the frames this peer has stepped but the match has not yet
//! settled, with enough of their states to rebuild any of them, and the
//! replay log they are written to once settled.
//!
//! A frame is *settled* once its checksum has been compared clean against
//! the other peers' (or once more than the unsettled limit of frames are
//! held, so the frames held stay bounded when nobody is left to compare
//! with). Until then it may still be replaced: a drifted peer loads the
//! authority's state and takes the authority's checksums of the frames it
//! got wrong (or re-simulates them, when that reproduces the authority's
//! state), and the corrected checksums are the ones logged. That is why
//! every peer's log of one match verifies and holds the same checksums.
//!
//! **Bounded memory.** Every frame keeps its inputs and checksum, but a
//! full state only every [`HistorySettings::state_every`] frames (the
//! state after each frame `f` with `f + 1` a multiple of it, so the replay
//! log's keyframes, at multiples of the keyframe interval, are among them
//! when the interval is a multiple of it), for the newest
//! [`HistorySettings::recent`] frames (a rollback within the prediction
//! window, and the state a resync serves, cost nothing), for a loaded
//! state (re-simulation never crosses it), and the state before a frame
//! the app changed outside the simulation. Any other state is rebuilt by
//! stepping the frames after the newest state kept before it — at most
//! `state_every − 1` frames. The states held are bounded by
//! `frames held / state_every + recent` plus the loads and the app's
//! changes, instead of one per frame.
//!
//! In rollback mode the frames also serve as the ring of saved states a
//! rollback restores: [`History::rewind`] gives back the state before the
//! first wrong frame and forgets the frames from it on, keeping what they
//! were stepped with so that a frame stepped again with the same inputs
//! can be required to give the same checksum.
//!
//! Invariants: the frames held are consecutive from the anchor frame; the
//! anchor is the exact state before it and the anchor frame is at most the
//! base frame (the first unsettled one), so every frame from the base on
//! can be rebuilt from it; the frames between the anchor and the base are
//! settled and kept only to rebuild from the anchor; the log holds exactly
//! the settled frames, in order from frame 0, and only confirmed ones
//! (stepped with every player's real input): a frame is settled only below
//! the confirmed limit the caller passes.

use std::collections::VecDeque;
use std::io::Write;

use lockstep_fx::Checksum;
use lockstep_sim::replay::LogWriter;
use lockstep_sim::{Engine, EngineSettings, Game, SavedState};

/// How many states a [`History`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HistorySettings {
    /// A full state is kept after every frame `f` with `f + 1` a multiple
    /// of this (at least 1).
    pub state_every: u32,
    /// The states after the newest this many frames are kept too (at least
    /// 1: the newest).
    pub recent: u32,
}

/// One stepped frame.
#[derive(Debug, Clone)]
pub(crate) struct Stepped<I> {
    /// The frame.
    pub frame: u32,
    /// Every player's input for it.
    pub inputs: Vec<I>,
    /// BLAKE3 of the state after it (the authority's, once corrected).
    pub checksum: Checksum,
    /// The exact state after the frame, when kept.
    pub after: Option<Vec<u8>>,
    /// The state before the frame when the app changed the game outside
    /// the simulation since the previous frame (otherwise the previous
    /// frame's result).
    pub touched: Option<Vec<u8>>,
    /// `after` does not follow from stepping the frame (a loaded state):
    /// it is always kept, so no rebuild steps across it.
    pub pinned: bool,
}

impl<I> Stepped<I> {
    /// A frame just stepped, with the state after it.
    pub fn new(frame: u32, inputs: Vec<I>, checksum: Checksum, after: Vec<u8>) -> Stepped<I> {
        Stepped {
            frame,
            inputs,
            checksum,
            after: Some(after),
            touched: None,
            pinned: false,
        }
    }

    fn state_bytes(&self) -> u64 {
        (self.after.as_ref().map_or(0, Vec::len) + self.touched.as_ref().map_or(0, Vec::len)) as u64
    }
}

/// The replay log being written, and what it needs to lay out keyframes.
#[derive(Debug)]
pub(crate) struct Recording<W: Write, I: lockstep_sim::Input> {
    pub writer: LogWriter<W, I>,
    pub keyframe_interval: u32,
}

/// Why the log stopped following the match.
#[derive(Debug)]
pub(crate) struct RecordingError {
    pub frame: u32,
    pub reason: String,
}

/// A state rebuilt from the history.
pub(crate) struct Rebuilt {
    /// The exact state.
    pub state: Vec<u8>,
    /// Every frame stepped to rebuild it gave the checksum it has in the
    /// history (the state is the one this peer had, or was corrected to).
    pub faithful: bool,
}

/// Stepped frames from the anchor on, and the states kept of them.
pub(crate) struct History<G: Game> {
    anchor_frame: u32,
    anchor: Vec<u8>,
    frames: VecDeque<Stepped<G::Input>>,
    base_frame: u32,
    /// The newest frames settled, oldest first, with their checksums (the
    /// last one is the base's).
    settled: VecDeque<(u32, Checksum)>,
    /// The frames the last rollback undid, oldest first, with the inputs
    /// and checksum of their undone run, while they are being stepped
    /// again with the same inputs.
    undone: VecDeque<(u32, Vec<G::Input>, Checksum)>,
    settings: HistorySettings,
    /// Bytes of the states held (the anchor's included), now and at most.
    bytes: u64,
    peak_bytes: u64,
    /// Threads a rebuild's frames may use (a machine setting: the states
    /// are the same for any count).
    threads: usize,
}

impl<G: Game> core::fmt::Debug for History<G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("History")
            .field("anchor_frame", &self.anchor_frame)
            .field("base_frame", &self.base_frame)
            .field("frames", &self.frames.len())
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl<G: Game> History<G> {
    /// A history starting from `initial`, the state before frame `frame`.
    pub fn new(frame: u32, initial: Vec<u8>, settings: HistorySettings) -> History<G> {
        let bytes = initial.len() as u64;
        History {
            anchor_frame: frame,
            anchor: initial,
            frames: VecDeque::new(),
            base_frame: frame,
            settled: VecDeque::new(),
            undone: VecDeque::new(),
            settings: HistorySettings {
                state_every: settings.state_every.max(1),
                recent: settings.recent.max(1),
            },
            bytes,
            peak_bytes: bytes,
            threads: 1,
        }
    }

    /// Lets the frames a rebuild steps use up to `threads` threads (at
    /// least 1), as [`Engine::set_threads`].
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// An engine that steps `game` from `frame` on this history's threads,
    /// keeping no history of its own (a rebuild's, a diagnosis's).
    pub fn engine_at(&self, game: G, frame: u32) -> Engine<G> {
        let mut engine = Engine::at(game, frame, EngineSettings::NONE);
        engine.set_threads(self.threads);
        engine
    }

    /// The first frame not settled.
    pub fn base_frame(&self) -> u32 {
        self.base_frame
    }

    /// How many states it keeps.
    pub fn settings(&self) -> HistorySettings {
        self.settings
    }

    /// The exact state before [`History::base_frame`] (after the newest
    /// settled frame), rebuilt from the anchor when it is not kept.
    pub fn base_state(&self) -> Option<Rebuilt> {
        self.state_before(self.base_frame)
    }

    /// The exact state before `frame` (after the one before it, or the
    /// anchor), as [`History::state_after`] gives it.
    fn state_before(&self, frame: u32) -> Option<Rebuilt> {
        if frame == self.anchor_frame {
            return Some(Rebuilt {
                state: self.anchor.clone(),
                faithful: true,
            });
        }
        self.state_after(frame.checked_sub(1)?)
    }

    /// The next frame expected.
    pub fn next_frame(&self) -> u32 {
        self.anchor_frame + self.frames.len() as u32
    }

    /// Bytes of the states held now.
    pub fn state_bytes(&self) -> u64 {
        self.bytes
    }

    /// The most bytes of states held at once so far.
    pub fn peak_state_bytes(&self) -> u64 {
        self.peak_bytes
    }

    /// The newest frames settled since the history (re)started, at most
    /// [`History::SETTLED_KEPT`], oldest first, with their checksums.
    pub fn recently_settled(&self) -> &VecDeque<(u32, Checksum)> {
        &self.settled
    }

    /// Settled frames whose checksums [`History::recently_settled`] keeps.
    pub const SETTLED_KEPT: usize = 8;

    /// The unsettled frames, oldest first.
    pub fn open(&self) -> impl DoubleEndedIterator<Item = &Stepped<G::Input>> + Clone {
        let settled = (self.base_frame - self.anchor_frame) as usize;
        self.frames.range(settled..)
    }

    /// Frame `frame`, if held.
    pub fn get(&self, frame: u32) -> Option<&Stepped<G::Input>> {
        let i = frame.checked_sub(self.anchor_frame)?;
        self.frames.get(i as usize)
    }

    /// The newest frame stepped and its checksum.
    pub fn newest(&self) -> Option<(u32, Checksum)> {
        self.frames.back().map(|s| (s.frame, s.checksum))
    }

    /// The exact state after `frame` as this peer holds it (rebuilt by
    /// stepping from the newest state kept before it when it is not kept),
    /// for frames from the one before the anchor on.
    pub fn state_after(&self, frame: u32) -> Option<Rebuilt> {
        if frame.checked_add(1) == Some(self.anchor_frame) {
            return Some(Rebuilt {
                state: self.anchor.clone(),
                faithful: true,
            });
        }
        let target = frame.checked_sub(self.anchor_frame)? as usize;
        let s = self.frames.get(target)?;
        if let Some(after) = &s.after {
            return Some(Rebuilt {
                state: after.clone(),
                faithful: true,
            });
        }
        // The newest point at or before the target to step from: a kept
        // state after a frame, or a state the app set before one.
        let mut start = None;
        for i in (0..=target).rev() {
            let f = &self.frames[i];
            if i < target {
                if let Some(after) = &f.after {
                    start = Some((i + 1, after));
                    break;
                }
            }
            if let Some(t) = &f.touched {
                start = Some((i, t));
                break;
            }
        }
        let (from, state) = start.unwrap_or((0, &self.anchor));
        self.step_from(from, state, target)
    }

    /// The state before frame index `from` is `state`: steps frames
    /// `from..=target`, taking each state the app set on the way, and
    /// checks each checksum against the one held (a healed span's, the
    /// authority's, are not this peer's: a rebuild through it is not
    /// faithful).
    fn step_from(&self, from: usize, state: &[u8], target: usize) -> Option<Rebuilt> {
        let first = self.frames.get(from)?.frame;
        let mut engine = self.engine_at(G::decode(state).ok()?, first);
        let mut faithful = true;
        for f in self.frames.range(from..=target) {
            if let Some(t) = &f.touched {
                engine = self.engine_at(G::decode(t).ok()?, f.frame);
            }
            faithful &= engine.advance(&f.inputs) == f.checksum;
        }
        Some(Rebuilt {
            state: engine.game().save(),
            faithful,
        })
    }

    /// Forgets the open frames from `frame` on (a rollback steps them
    /// again) and gives back the state before `frame`, with whether the app
    /// had changed it outside the simulation; `None` (nothing forgotten)
    /// when `frame` is settled already, not stepped yet, or its state
    /// cannot be rebuilt.
    pub fn rewind(&mut self, frame: u32) -> Option<(Vec<u8>, bool)> {
        if frame < self.base_frame || frame > self.next_frame() {
            return None;
        }
        let i = (frame - self.anchor_frame) as usize;
        let touched = self.frames.get(i).and_then(|s| s.touched.clone());
        let before = match &touched {
            Some(t) => t.clone(),
            None => self.state_before(frame)?.state,
        };
        let undone: Vec<Stepped<G::Input>> = self.frames.drain(i..).collect();
        for s in &undone {
            self.bytes -= s.state_bytes();
        }
        self.undone = undone
            .into_iter()
            .map(|s| (s.frame, s.inputs, s.checksum))
            .collect();
        Some((before, touched.is_some()))
    }

    /// A frame stepped again after a rollback: `Some(first)` when it was
    /// stepped from the same state with the same inputs before and then
    /// gave checksum `first`, other than `checksum` now (the game is not
    /// deterministic). Once a frame's inputs differ from its undone run,
    /// the later ones start from another state and are not compared.
    pub fn check_again(
        &mut self,
        frame: u32,
        inputs: &[G::Input],
        checksum: Checksum,
    ) -> Option<Checksum> {
        while self.undone.front().is_some_and(|(f, _, _)| *f < frame) {
            self.undone.pop_front();
        }
        let (f, before, first) = self.undone.pop_front()?;
        if f != frame || before != inputs {
            self.undone.clear();
            return None;
        }
        (first != checksum).then_some(first)
    }

    /// Adds a frame just stepped (`touched`: the state before it, if the
    /// app changed it outside the simulation). A frame before the settled
    /// ones (a state older than the settled history was loaded) is not
    /// kept: the log already holds it.
    pub fn push(&mut self, mut stepped: Stepped<G::Input>, touched: Option<Vec<u8>>) {
        if stepped.frame < self.base_frame {
            return;
        }
        if stepped.frame != self.next_frame() {
            // Frames are stepped in order; anything else is a state load
            // that skipped frames, which `restart_at` handles first.
            let keep =
                (stepped.frame.saturating_sub(self.anchor_frame) as usize).min(self.frames.len());
            for s in self.frames.drain(keep..) {
                self.bytes -= s.state_bytes();
            }
        }
        stepped.touched = touched;
        self.bytes += stepped.state_bytes();
        self.frames.push_back(stepped);
        self.trim_states();
    }

    /// Whether the state after `s` is kept once it is no longer recent.
    fn kept(&self, s: &Stepped<G::Input>) -> bool {
        s.pinned || (s.frame + 1) % self.settings.state_every == 0
    }

    /// Drops the states that are neither recent nor kept.
    fn trim_states(&mut self) {
        let recent = self.settings.recent as usize;
        let old = self.frames.len().saturating_sub(recent);
        // Only the frame that just left the recent window can hold a state
        // to drop (older ones were trimmed before), unless a rewind or a
        // load moved the window: look back a little further.
        let from = old.saturating_sub(recent);
        for i in from..old {
            let keep = self.kept(&self.frames[i]);
            let s = &mut self.frames[i];
            if !keep {
                if let Some(a) = s.after.take() {
                    self.bytes -= a.len() as u64;
                }
            }
        }
        self.peak_bytes = self.peak_bytes.max(self.bytes);
    }

    /// Replaces the results of the open frames from the first one on with
    /// `corrected` (re-simulated from the base, reproducing the
    /// authority's state), in order; the states given are kept where a
    /// state is kept.
    pub fn correct(&mut self, corrected: Vec<(Checksum, Option<SavedState>)>) {
        let settled = (self.base_frame - self.anchor_frame) as usize;
        let recent_from = self.next_frame().saturating_sub(self.settings.recent);
        let every = self.settings.state_every;
        for (s, (checksum, after)) in self.frames.range_mut(settled..).zip(corrected) {
            self.bytes -= s.state_bytes();
            let keep = s.pinned || (s.frame + 1) % every == 0 || s.frame >= recent_from;
            s.checksum = checksum;
            s.after = after.filter(|_| keep).map(|a| a.bytes);
            s.touched = None;
            self.bytes += s.state_bytes();
        }
        self.peak_bytes = self.peak_bytes.max(self.bytes);
    }

    /// Takes `checks`, the authority's checksums of the frames up to and
    /// including `last`, oldest first, as the checksums of the open frames
    /// they cover; the states this peer computed for the frames whose
    /// checksums change, and of every frame after it, are forgotten (they
    /// are wrong). Returns the first frame whose checksum changed.
    pub fn take_checks(&mut self, last: u32, checks: &[Checksum]) -> Option<u32> {
        let first = last.checked_add(1)?.checked_sub(checks.len() as u32)?;
        let mut changed = None;
        for (k, c) in checks.iter().enumerate() {
            let f = first + k as u32;
            if f < self.base_frame {
                continue;
            }
            let Some(i) = f.checked_sub(self.anchor_frame) else {
                continue;
            };
            let Some(s) = self.frames.get_mut(i as usize) else {
                break;
            };
            if s.checksum != *c || changed.is_some() {
                changed = changed.or(Some(f));
                s.checksum = *c;
                self.bytes -= s.state_bytes();
                s.after = None;
                s.touched = None;
                self.bytes += s.state_bytes();
            }
        }
        changed
    }

    /// Forgets the frames after `frame` (they will be stepped again) and
    /// sets `frame`'s result to the loaded state, kept for good.
    pub fn load(&mut self, frame: u32, checksum: Checksum, state: &[u8]) {
        let keep = (frame + 1).saturating_sub(self.anchor_frame) as usize;
        for s in self.frames.drain(keep.min(self.frames.len())..) {
            self.bytes -= s.state_bytes();
        }
        if let Some(s) = self.frames.back_mut().filter(|s| s.frame == frame) {
            self.bytes -= s.after.as_ref().map_or(0, Vec::len) as u64;
            s.checksum = checksum;
            s.after = Some(state.to_vec());
            s.pinned = true;
            self.bytes += state.len() as u64;
        }
        self.undone.clear();
        self.peak_bytes = self.peak_bytes.max(self.bytes);
    }

    /// Starts over from `state`, the state before `frame`, dropping every
    /// frame held (a load of a state this peer had not reached).
    pub fn restart_at(&mut self, frame: u32, state: &[u8]) {
        self.frames.clear();
        self.undone.clear();
        self.anchor_frame = frame;
        self.anchor = state.to_vec();
        self.base_frame = frame;
        self.settled.clear();
        self.bytes = state.len() as u64;
        self.peak_bytes = self.peak_bytes.max(self.bytes);
    }

    /// Settles the open frames up to `through` and, beyond that, the oldest
    /// ones while more than `max_open` are held, but only frames before
    /// `confirmed` (the oldest frame that may still be rolled back); writes
    /// each to `log`.
    pub fn settle<W: Write>(
        &mut self,
        through: Option<u32>,
        max_open: usize,
        confirmed: u32,
        log: Option<&mut Recording<W, G::Input>>,
    ) -> Result<(), RecordingError> {
        let mut log = log;
        let before = self.base_frame;
        loop {
            let open = (self.next_frame() - self.base_frame) as usize;
            let Some(front) = self.get(self.base_frame) else {
                break;
            };
            if front.frame >= confirmed {
                break;
            }
            let settled = through.is_some_and(|t| front.frame <= t);
            if !settled && open <= max_open {
                break;
            }
            let (frame, checksum) = (front.frame, front.checksum);
            if let Some(rec) = log.as_deref_mut() {
                self.write_frame(rec, frame)?;
            }
            self.base_frame = frame + 1;
            self.settled.push_back((frame, checksum));
            if self.settled.len() > Self::SETTLED_KEPT {
                self.settled.pop_front();
            }
        }
        if self.base_frame != before {
            self.advance_anchor();
        }
        Ok(())
    }

    /// Settles and writes every open frame before `confirmed` (the match
    /// is over; frames stepped on predictions are not part of it).
    pub fn settle_all<W: Write>(
        &mut self,
        confirmed: u32,
        log: Option<&mut Recording<W, G::Input>>,
    ) -> Result<(), RecordingError> {
        self.settle(None, 0, confirmed, log)
    }

    /// Moves the anchor to the newest state kept after a settled frame,
    /// forgetting the frames before it.
    fn advance_anchor(&mut self) {
        let settled = (self.base_frame - self.anchor_frame) as usize;
        let Some(i) = (0..settled).rev().find(|&i| self.frames[i].after.is_some()) else {
            return;
        };
        let mut dropped: Vec<Stepped<G::Input>> = self.frames.drain(..=i).collect();
        let Some(last) = dropped.pop() else {
            return;
        };
        for s in &dropped {
            self.bytes -= s.state_bytes();
        }
        self.bytes -= last.touched.as_ref().map_or(0, Vec::len) as u64;
        self.bytes -= self.anchor.len() as u64;
        self.anchor_frame = last.frame + 1;
        self.anchor = last.after.unwrap_or_default();
    }

    fn write_frame<W: Write>(
        &self,
        rec: &mut Recording<W, G::Input>,
        frame: u32,
    ) -> Result<(), RecordingError> {
        let fail = |reason: String| RecordingError { frame, reason };
        let expected = rec.writer.frames();
        if frame != expected {
            return Err(fail(format!(
                "frame {frame} settled while the log expects frame {expected}"
            )));
        }
        let Some(s) = self.get(frame) else {
            return Err(fail(format!("frame {frame} is not held")));
        };
        let k = rec.keyframe_interval;
        if k != 0 && frame != 0 && frame % k == 0 {
            // The state before the frame as this peer had it (the app's
            // change included); a keyframe whose state cannot be rebuilt
            // faithfully (a healed span) is left out: a keyframe only
            // speeds up seeking.
            let before = match &s.touched {
                Some(t) => Some(t.clone()),
                None => self
                    .state_after(frame - 1)
                    .filter(|r| r.faithful)
                    .map(|r| r.state),
            };
            if let Some(bytes) = before {
                let keyframe = SavedState { frame, bytes };
                rec.writer
                    .keyframe(&keyframe)
                    .map_err(|e| fail(format!("writing the keyframe of frame {frame}: {e}")))?;
            }
        }
        rec.writer
            .frame(&s.inputs, &s.checksum)
            .map_err(|e| fail(format!("writing frame {frame}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_games::Demo;
    use lockstep_games::cubes::Cubes;
    use lockstep_sim::{Bot, Match};

    const SETTINGS: HistorySettings = HistorySettings {
        state_every: 60,
        recent: 3,
    };

    /// A history of `frames` frames of a two-seat cube match, and the
    /// exact state after each frame.
    fn stepped(frames: u32) -> (History<Cubes>, Vec<Vec<u8>>) {
        let setup = Match {
            seats: 2,
            seed: 9,
            tick_rate: 60,
        };
        let mut config = Cubes::default_config();
        config.field.grid = 3;
        let game = Cubes::new(&config, &setup).unwrap();
        let mut history = History::new(0, game.save(), SETTINGS);
        let mut engine = Engine::new(game, EngineSettings::NONE);
        let mut bots: Vec<_> = (0..2).map(|s| Cubes::bot(s, 9)).collect();
        let mut states = Vec::new();
        for f in 0..frames {
            let inputs: Vec<_> = bots.iter_mut().map(|b| b.input(engine.game(), f)).collect();
            let (c, after) = engine.advance_saving(&inputs);
            states.push(after.bytes.clone());
            history.push(Stepped::new(f, inputs, c, after.bytes), None);
        }
        (history, states)
    }

    #[test]
    fn a_state_is_kept_every_60_frames_and_for_the_newest_ones_and_any_is_rebuilt() {
        let (h, states) = stepped(200);
        let kept: Vec<u32> = h
            .open()
            .filter(|s| s.after.is_some())
            .map(|s| s.frame)
            .collect();
        assert_eq!(kept, [59, 119, 179, 197, 198, 199]);
        // The initial state and six more, never one per frame (states grow
        // as contacts are made, so the bound is the largest).
        let size = states.iter().map(Vec::len).max().unwrap() as u64;
        assert!(h.peak_state_bytes() <= 8 * size, "{}", h.peak_state_bytes());
        for f in [0, 1, 58, 59, 60, 100, 150, 196, 199] {
            let r = h.state_after(f).unwrap();
            assert!(r.faithful);
            assert_eq!(r.state, states[f as usize], "frame {f}");
        }
    }

    #[test]
    fn settling_moves_the_anchor_to_a_kept_state_and_forgets_the_frames_before() {
        let (mut h, states) = stepped(200);
        h.settle::<Vec<u8>>(Some(150), 1000, 200, None).unwrap();
        assert_eq!(h.base_frame(), 151);
        // The anchor is the state after frame 119; frames 120..=150 stay
        // to rebuild the base from it.
        assert!(h.get(119).is_none() && h.get(120).is_some());
        assert_eq!(h.base_state().unwrap().state, states[150]);
        assert_eq!(
            h.recently_settled().back(),
            Some(&(150, h.get(150).unwrap().checksum))
        );
    }

    #[test]
    fn a_rewind_restores_the_state_before_a_frame() {
        let (mut h, states) = stepped(200);
        // Within the recent frames, and further back (rebuilt).
        let (s, touched) = h.rewind(198).unwrap();
        assert_eq!((s, touched), (states[197].clone(), false));
        let (s, _) = h.rewind(130).unwrap();
        assert_eq!(s, states[129]);
        assert_eq!(h.next_frame(), 130);
        // Back to the start: the initial state, every frame forgotten.
        let (s, _) = h.rewind(0).unwrap();
        assert_eq!(h.next_frame(), 0);
        assert_eq!(s, h.base_state().unwrap().state);
        assert_ne!(s, states[0]);
    }

    #[test]
    fn the_authoritys_checksums_replace_a_healed_span_and_its_states() {
        let (mut h, _) = stepped(100);
        let mut checks: Vec<Checksum> = (50..=99).map(|f| h.get(f).unwrap().checksum).collect();
        // This peer got frames 70.. wrong: the authority's differ there.
        for c in &mut checks[20..] {
            *c = Checksum::from_bytes([7; 32]);
        }
        assert_eq!(h.take_checks(99, &checks), Some(70));
        assert_eq!(h.get(69).map(|s| s.after.is_some()), Some(false));
        assert!((70..=99).all(|f| h.get(f).unwrap().checksum == checks[(f - 50) as usize]));
        assert!((70..=99).all(|f| h.get(f).unwrap().after.is_none()));
        // A state in the span cannot be rebuilt as it was.
        assert!(!h.state_after(80).unwrap().faithful);
    }
}
