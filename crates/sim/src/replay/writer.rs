//! The streaming writer: [`LogWriter`] writes the header at once, then packs
//! frames into a chunk and writes and flushes the chunk as one record every
//! `chunk_frames` frames, before each keyframe and note, and on
//! [`LogWriter::finish`], which adds the end record.
//!
//! Invariants: every byte handed to the output is a whole record (or the
//! header), so a crash loses at most the frames of the unwritten chunk and
//! the reader keeps everything before; frames are logged consecutively from
//! 0 with exactly `seats` inputs each; a keyframe is written at the frame
//! count it is the state before, after every earlier frame; a note is
//! written at the frame count reached, after every earlier frame, and only
//! in a log of format version 2 on. After a [`Note::Stopped`] the writer
//! takes nothing but [`LogWriter::finish`]. After an I/O error the writer
//! refuses further calls (what it wrote before stays readable).

use std::io::{self, Write};

use lockstep_codec::Input;
use lockstep_fx::Checksum;

use super::FrameCheck;
use super::header::Header;
use super::keyframe::Keyframe;
use super::note::{Note, encode_note};
use super::record::{
    FramesEncoder, KIND_END, KIND_FRAMES, KIND_KEYFRAME, KIND_NOTE, encode_end, seal,
};
use crate::engine::SavedState;
use crate::game::Frame;

/// Writes a replay log to `W` as the match is played.
#[derive(Debug)]
pub struct LogWriter<W: Write, I: Input> {
    out: W,
    header: Header,
    header_check: u64,
    chunk_frames: u32,
    chunk: FramesEncoder<I>,
    frames: Frame,
    last_keyframe: Option<Frame>,
    state_limit: u32,
    stopped: bool,
    written: u64,
    broken: bool,
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

impl<W: Write, I: Input> LogWriter<W, I> {
    /// Writes and flushes `header`, then logs frames in chunks of
    /// `chunk_frames` (at least 1; [`super::DEFAULT_CHUNK_FRAMES`] is one
    /// second at 60 Hz). Fails if the header is invalid or is not of inputs
    /// `I` (schema hash).
    pub fn new(mut out: W, header: Header, chunk_frames: u32) -> io::Result<Self> {
        if let Some(what) = header.invalid() {
            return Err(invalid(format!("replay log header: invalid {what}")));
        }
        if header.schema_hash != I::schema_hash() {
            return Err(invalid(format!(
                "replay log header: schema hash {:016x} is not the inputs' {:016x}",
                header.schema_hash,
                I::schema_hash()
            )));
        }
        if chunk_frames == 0 {
            return Err(invalid("replay log chunks need at least 1 frame".into()));
        }
        let bytes = header.to_bytes();
        out.write_all(&bytes)?;
        out.flush()?;
        Ok(LogWriter {
            out,
            header_check: header.check(),
            header,
            chunk_frames,
            chunk: FramesEncoder::new(0),
            frames: 0,
            last_keyframe: None,
            state_limit: crate::MAX_STATE_BYTES,
            stopped: false,
            written: bytes.len() as u64,
            broken: false,
        })
    }

    /// Leaves out every keyframe whose state is longer than `limit` bytes
    /// (the log's game's [`Game::state_limit`]; never more than
    /// [`MAX_STATE_BYTES`], the default): readers refuse such a keyframe,
    /// and a keyframe only speeds up seeking.
    ///
    /// [`Game::state_limit`]: crate::Game::state_limit
    /// [`MAX_STATE_BYTES`]: crate::MAX_STATE_BYTES
    pub fn with_state_limit(mut self, limit: u32) -> Self {
        self.state_limit = limit.min(crate::MAX_STATE_BYTES);
        self
    }

    /// The header written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Frames logged so far (the next frame to log).
    pub fn frames(&self) -> Frame {
        self.frames
    }

    /// Whether a [`Note::Stopped`] was written: the log takes nothing more
    /// but its end ([`LogWriter::finish`]).
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Frames logged but not yet written: the pending chunk.
    pub fn pending_frames(&self) -> u32 {
        self.chunk.count()
    }

    /// Bytes written to the output so far: where the next record starts.
    /// Frames still in the pending chunk are not counted.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The output.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Logs the next frame: every player's input and the checksum of the
    /// state after it. Writes the chunk when it is full.
    pub fn frame(&mut self, inputs: &[I], checksum: &Checksum) -> io::Result<()> {
        let full = self.header.has_full_checksum(self.frames);
        self.logged_frame(inputs, FrameCheck::of(checksum), full.then_some(checksum))
    }

    /// Logs the next frame from what a log holds: the short check, and the
    /// full checksum on frames that carry one.
    pub(crate) fn logged_frame(
        &mut self,
        inputs: &[I],
        check: FrameCheck,
        full: Option<&Checksum>,
    ) -> io::Result<()> {
        self.usable()?;
        self.going()?;
        let seats = usize::from(self.header.setup.seats);
        if inputs.len() != seats {
            return Err(invalid(format!(
                "frame {}: {} inputs for {seats} seats",
                self.frames,
                inputs.len()
            )));
        }
        if self.frames == Frame::MAX {
            return Err(invalid("a replay log holds at most u32::MAX frames".into()));
        }
        let full = if self.header.has_full_checksum(self.frames) {
            let Some(full) = full else {
                return Err(invalid(format!(
                    "frame {} needs a full checksum",
                    self.frames
                )));
            };
            if FrameCheck::of(full) != check {
                return Err(invalid(format!(
                    "frame {}: short check is not the full checksum's prefix",
                    self.frames
                )));
            }
            Some(full)
        } else {
            None
        };
        self.chunk.push(inputs, check, full);
        self.frames += 1;
        if self.chunk.count() >= self.chunk_frames {
            self.flush()?;
        }
        Ok(())
    }

    /// Logs a keyframe: an exact saved state of the state before the next frame
    /// (`saved.frame` must be [`LogWriter::frames`], after the previous
    /// keyframe). Writes the pending chunk first. A state longer than the
    /// state limit ([`LogWriter::with_state_limit`]) is left out.
    pub fn keyframe(&mut self, saved: &SavedState) -> io::Result<()> {
        self.keyframe_at(saved.frame)?;
        if saved.bytes.len() as u64 > u64::from(self.state_limit) {
            return Ok(());
        }
        let Some(keyframe) = Keyframe::of(saved) else {
            return Err(invalid("keyframe longer than 4 GiB".into()));
        };
        self.put_keyframe(&keyframe)
    }

    /// Logs a keyframe read from a log, as it was logged (see
    /// [`LogWriter::keyframe`]).
    pub(crate) fn logged_keyframe(&mut self, keyframe: &Keyframe) -> io::Result<()> {
        self.keyframe_at(keyframe.frame())?;
        if keyframe.state_len() > self.state_limit {
            return Ok(());
        }
        self.put_keyframe(keyframe)
    }

    /// Checks that a keyframe of `frame` may be logged now.
    fn keyframe_at(&self, frame: Frame) -> io::Result<()> {
        self.usable()?;
        self.going()?;
        if frame != self.frames || self.last_keyframe.is_some_and(|k| k >= frame) {
            return Err(invalid(format!(
                "keyframe of frame {frame} where the log is at frame {}",
                self.frames
            )));
        }
        Ok(())
    }

    fn put_keyframe(&mut self, keyframe: &Keyframe) -> io::Result<()> {
        self.flush()?;
        self.put(KIND_KEYFRAME, &keyframe.encode())?;
        self.last_keyframe = Some(keyframe.frame());
        self.out_flush()
    }

    /// Logs a note at the current frame count ([`LogWriter::frames`]: after
    /// every frame logged so far). Writes the pending chunk first, then the
    /// note, and flushes, so the note is on the output when this returns.
    /// After a [`Note::Stopped`] the log takes nothing but
    /// [`LogWriter::finish`]. Fails for a log of format version 1, a seat
    /// that is not one of the log's, or a healed span that ends before it
    /// starts.
    pub fn note(&mut self, note: &Note) -> io::Result<()> {
        self.usable()?;
        self.going()?;
        if !self.header.allows_notes() {
            return Err(invalid(format!(
                "a replay log of format version {} holds no notes",
                self.header.format_version
            )));
        }
        if let Some(what) = note.invalid(self.header.setup.seats) {
            return Err(invalid(format!("note: invalid {what}")));
        }
        let body = encode_note(self.frames, note);
        self.flush()?;
        self.put(KIND_NOTE, &body)?;
        self.stopped = matches!(note, Note::Stopped { .. });
        self.out_flush()
    }

    /// Writes the pending chunk, if any, and flushes the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.usable()?;
        if self.chunk.count() > 0 {
            let body = self.chunk.take();
            self.put(KIND_FRAMES, &body)?;
        }
        self.out_flush()
    }

    /// Writes the pending chunk and the end record, flushes, and gives the
    /// output back.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush()?;
        self.put(KIND_END, &encode_end(self.frames))?;
        self.out_flush()?;
        Ok(self.out)
    }

    fn going(&self) -> io::Result<()> {
        if self.stopped {
            return Err(invalid(format!(
                "the replay log stopped at frame {}: it takes nothing but its end",
                self.frames
            )));
        }
        Ok(())
    }

    fn usable(&self) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::other(
                "replay log writer failed earlier; the log ends at its last whole record",
            ));
        }
        Ok(())
    }

    fn put(&mut self, kind: u8, body: &[u8]) -> io::Result<()> {
        let Some(record) = seal(self.header_check, kind, body) else {
            return Err(invalid("replay log record longer than 4 GiB".into()));
        };
        self.broken = true;
        self.out.write_all(&record)?;
        self.broken = false;
        self.written += record.len() as u64;
        Ok(())
    }

    fn out_flush(&mut self) -> io::Result<()> {
        self.broken = true;
        self.out.flush()?;
        self.broken = false;
        Ok(())
    }
}
