//! [`History`]: the frames this peer has stepped but the match has not yet
//! settled, with the exact state after each, and the replay log they are
//! written to once settled.
//!
//! A frame is *settled* once its checksum has been compared clean against
//! the other peers' (or once more than the unsettled limit of frames are
//! held, so memory stays bounded when nobody is left to compare with). Until
//! then it may still be replaced: a drifted peer re-simulates it after
//! loading the authority's state, and the corrected checksum is the one
//! logged. That is why every peer's log of one match verifies and holds the
//! same checksums.
//!
//! In rollback mode the open frames also serve as the ring of saved states
//! a rollback restores: [`History::rewind`] gives back the state before
//! the first wrong frame and forgets the frames from it on, keeping what
//! they were stepped with so that a frame stepped again with the same
//! inputs can be required to give the same checksum.
//!
//! Invariants: the open frames are consecutive and start at
//! [`History::base_frame`]; the base state is the exact state before that
//! frame (the state after the newest settled frame, whose checksum every
//! peer agreed on, or the initial state); the log holds exactly the settled
//! frames, in order from frame 0, and only confirmed ones (stepped with
//! every player's real input): a frame is settled only below the confirmed
//! limit the caller passes.

use std::collections::VecDeque;
use std::io::Write;

use lockstep_fx::Checksum;
use lockstep_sim::Snapshot;
use lockstep_sim::replay::LogWriter;

use crate::Input;

/// One stepped frame.
#[derive(Debug, Clone)]
pub(crate) struct Stepped<I> {
    /// The frame.
    pub frame: u32,
    /// Every player's input for it.
    pub inputs: Vec<I>,
    /// BLAKE3 of `after`.
    pub checksum: Checksum,
    /// The exact state after the frame.
    pub after: Vec<u8>,
    /// The state before the frame when the app changed the game outside
    /// the simulation since the previous frame (otherwise it is the previous
    /// frame's `after`).
    pub touched: Option<Vec<u8>>,
}

/// The replay log being written, and what it needs to lay out keyframes.
#[derive(Debug)]
pub(crate) struct Recording<W: Write, I: Input> {
    pub writer: LogWriter<W, I>,
    pub keyframe_interval: u32,
}

/// Why the log stopped following the match.
#[derive(Debug)]
pub(crate) struct RecordingError {
    pub frame: u32,
    pub reason: String,
}

/// Unsettled frames, and the state they start from.
#[derive(Debug)]
pub(crate) struct History<I> {
    base_frame: u32,
    base: Vec<u8>,
    open: VecDeque<Stepped<I>>,
    /// The newest frames settled, oldest first, with their checksums (the
    /// last one is the base's).
    settled: VecDeque<(u32, Checksum)>,
    /// The frames the last rollback undid, oldest first, with the inputs
    /// and checksum of their undone run, while they are being stepped
    /// again with the same inputs.
    undone: VecDeque<(u32, Vec<I>, Checksum)>,
}

impl<I: Input> History<I> {
    /// A history starting from `initial`, the state before frame `frame`.
    pub fn new(frame: u32, initial: Vec<u8>) -> History<I> {
        History {
            base_frame: frame,
            base: initial,
            open: VecDeque::new(),
            settled: VecDeque::new(),
            undone: VecDeque::new(),
        }
    }

    /// The first frame not settled.
    pub fn base_frame(&self) -> u32 {
        self.base_frame
    }

    /// The exact state before [`History::base_frame`].
    pub fn base(&self) -> &[u8] {
        &self.base
    }

    /// The newest frames settled since the history (re)started, at most
    /// [`History::SETTLED_KEPT`], oldest first, with their checksums.
    pub fn recently_settled(&self) -> &VecDeque<(u32, Checksum)> {
        &self.settled
    }

    /// Settled frames whose checksums [`History::recently_settled`] keeps.
    pub const SETTLED_KEPT: usize = 8;

    /// The unsettled frames, oldest first.
    pub fn open(&self) -> &VecDeque<Stepped<I>> {
        &self.open
    }

    /// The next frame expected.
    pub fn next_frame(&self) -> u32 {
        self.base_frame + self.open.len() as u32
    }

    /// The exact state after the newest frame stepped, and that frame.
    pub fn newest(&self) -> Option<(u32, &[u8])> {
        match self.open.back() {
            Some(s) => Some((s.frame, &s.after)),
            None => self.base_frame.checked_sub(1).map(|f| (f, &self.base[..])),
        }
    }

    /// The exact state after `frame`, if this history holds it (the base
    /// is the state after the frame before the first open one).
    pub fn state_after(&self, frame: u32) -> Option<&[u8]> {
        if frame.checked_add(1) == Some(self.base_frame) {
            return Some(&self.base);
        }
        let i = frame.checked_sub(self.base_frame)? as usize;
        self.open.get(i).map(|s| &s.after[..])
    }

    /// Forgets the open frames from `frame` on (a rollback steps them
    /// again) and gives back the state before `frame`, with whether the app
    /// had changed it outside the simulation; `None` (nothing forgotten)
    /// when `frame` is settled already or not stepped yet.
    pub fn rewind(&mut self, frame: u32) -> Option<(Vec<u8>, bool)> {
        if frame < self.base_frame || frame > self.next_frame() {
            return None;
        }
        let keep = (frame - self.base_frame) as usize;
        let undone: Vec<Stepped<I>> = self.open.drain(keep..).collect();
        let touched = undone.first().and_then(|s| s.touched.clone());
        let before = match (&touched, self.open.back()) {
            (Some(t), _) => t.clone(),
            (None, Some(s)) => s.after.clone(),
            (None, None) => self.base.clone(),
        };
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
        inputs: &[I],
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

    /// Adds a frame just stepped. A frame at or before the settled ones (a
    /// state older than the settled history was loaded) is not kept: the
    /// log already holds it.
    pub fn push(&mut self, stepped: Stepped<I>) {
        if stepped.frame < self.base_frame {
            return;
        }
        if stepped.frame != self.next_frame() {
            // Frames are stepped in order; anything else is a state load
            // that skipped frames, which `restart_at` handles first.
            self.open.retain(|s| s.frame < stepped.frame);
        }
        self.open.push_back(stepped);
    }

    /// Replaces the checksum and state of the open frames from the first
    /// one on with `corrected` (re-simulated from the base), in order.
    pub fn correct(&mut self, corrected: Vec<(Checksum, Snapshot)>) {
        for (s, (checksum, after)) in self.open.iter_mut().zip(corrected) {
            s.checksum = checksum;
            s.after = after.bytes;
            s.touched = None;
        }
    }

    /// Forgets the open frames after `frame` (they will be stepped again)
    /// and sets `frame`'s result to the loaded state.
    pub fn load(&mut self, frame: u32, checksum: Checksum, state: &[u8]) {
        self.open.retain(|s| s.frame <= frame);
        if let Some(s) = self.open.back_mut().filter(|s| s.frame == frame) {
            s.checksum = checksum;
            s.after = state.to_vec();
        }
    }

    /// Starts over from `state`, the state before `frame`, dropping every
    /// open frame (a load of a state this peer had not reached).
    pub fn restart_at(&mut self, frame: u32, state: &[u8]) {
        self.open.clear();
        self.undone.clear();
        self.base_frame = frame;
        self.base = state.to_vec();
        self.settled.clear();
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
        log: Option<&mut Recording<W, I>>,
    ) -> Result<(), RecordingError> {
        let mut log = log;
        while let Some(front) = self.open.front() {
            if front.frame >= confirmed {
                break;
            }
            let settled = through.is_some_and(|t| front.frame <= t);
            if !settled && self.open.len() <= max_open {
                break;
            }
            let Some(s) = self.open.pop_front() else {
                break;
            };
            if let Some(rec) = log.as_deref_mut() {
                write_frame(rec, &s, &self.base)?;
            }
            self.base_frame = s.frame + 1;
            self.base = s.after;
            self.settled.push_back((s.frame, s.checksum));
            if self.settled.len() > Self::SETTLED_KEPT {
                self.settled.pop_front();
            }
        }
        Ok(())
    }

    /// Settles and writes every open frame before `confirmed` (the match
    /// is over; frames stepped on predictions are not part of it).
    pub fn settle_all<W: Write>(
        &mut self,
        confirmed: u32,
        log: Option<&mut Recording<W, I>>,
    ) -> Result<(), RecordingError> {
        self.settle(None, 0, confirmed, log)
    }
}

fn write_frame<W: Write, I: Input>(
    rec: &mut Recording<W, I>,
    s: &Stepped<I>,
    before: &[u8],
) -> Result<(), RecordingError> {
    let fail = |reason: String| RecordingError {
        frame: s.frame,
        reason,
    };
    let expected = rec.writer.frames();
    if s.frame != expected {
        return Err(fail(format!(
            "frame {} settled while the log expects frame {expected}",
            s.frame
        )));
    }
    let k = rec.keyframe_interval;
    if k != 0 && s.frame != 0 && s.frame % k == 0 {
        let bytes = s.touched.as_deref().unwrap_or(before).to_vec();
        let keyframe = Snapshot {
            frame: s.frame,
            bytes,
        };
        rec.writer
            .keyframe(&keyframe)
            .map_err(|e| fail(format!("writing the keyframe of frame {}: {e}", s.frame)))?;
    }
    rec.writer
        .frame(&s.inputs, &s.checksum)
        .map_err(|e| fail(format!("writing frame {}: {e}", s.frame)))
}
