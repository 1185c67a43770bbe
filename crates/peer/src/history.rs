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
//! Invariants: the open frames are consecutive and start at
//! [`History::base_frame`]; the base state is the exact state before that
//! frame (the state after the newest settled frame, whose checksum every
//! peer agreed on, or the initial state); the log holds exactly the settled
//! frames, in order from frame 0.

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
}

impl<I: Input> History<I> {
    /// A history starting from `initial`, the state before frame `frame`.
    pub fn new(frame: u32, initial: Vec<u8>) -> History<I> {
        History {
            base_frame: frame,
            base: initial,
            open: VecDeque::new(),
            settled: VecDeque::new(),
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
        self.base_frame = frame;
        self.base = state.to_vec();
        self.settled.clear();
    }

    /// Settles the open frames up to `through` and, beyond that, the oldest
    /// ones while more than `max_open` are held; writes each to `log`.
    pub fn settle<W: Write>(
        &mut self,
        through: Option<u32>,
        max_open: usize,
        log: Option<&mut Recording<W, I>>,
    ) -> Result<(), RecordingError> {
        let mut log = log;
        while let Some(front) = self.open.front() {
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

    /// Settles and writes every open frame (the match is over).
    pub fn settle_all<W: Write>(
        &mut self,
        log: Option<&mut Recording<W, I>>,
    ) -> Result<(), RecordingError> {
        self.settle(None, 0, log)
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
