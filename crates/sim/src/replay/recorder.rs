//! [`Recorder`]: an [`Engine`] that logs what it steps — every frame's
//! inputs and checksum, and a keyframe every `keyframe_interval` frames — to
//! a [`LogWriter`].
//!
//! Invariants: the engine's next frame is always the writer's frame count
//! (the recorder steps only through [`Recorder::advance`], which refuses
//! inputs it could not log before stepping); the keyframe of frame `k` is the
//! state before frame `k`, written before frame `k` is logged, for every
//! non-zero multiple `k` of the interval (frame 0 needs none: the header
//! rebuilds it); after a [`Note::Stopped`] it steps nothing more.

use std::io::{self, Write};

use lockstep_fx::Checksum;

use super::header::Header;
use super::note::Note;
use super::writer::LogWriter;
use crate::engine::{Engine, EngineSettings};
use crate::game::{Frame, Game, Match, SetupError};

/// How a [`Recorder`] lays out its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordSettings {
    /// A full 32-byte checksum is logged after every this many frames
    /// (`0`: never).
    pub full_checksum_interval: u32,
    /// A keyframe is logged before every frame that is a non-zero multiple
    /// of this (`0`: never).
    pub keyframe_interval: u32,
    /// Frames per chunk: a chunk is written and flushed this often.
    pub chunk_frames: u32,
    /// The engine's history settings.
    pub engine: EngineSettings,
}

impl Default for RecordSettings {
    /// At 60 Hz: a full checksum every second, a keyframe every 10 s, a
    /// chunk every second.
    fn default() -> RecordSettings {
        RecordSettings {
            full_checksum_interval: 60,
            keyframe_interval: 600,
            chunk_frames: super::DEFAULT_CHUNK_FRAMES,
            engine: EngineSettings::default(),
        }
    }
}

/// Why a recording could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The game refused the match setup.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// Writing the header failed.
    #[error("writing the replay log header: {0}")]
    Io(#[from] io::Error),
}

/// Steps a game and logs every frame.
#[derive(Debug)]
pub struct Recorder<G: Game, W: Write> {
    engine: Engine<G>,
    writer: LogWriter<W, G::Input>,
    keyframe_interval: u32,
    last_keyframe: Option<Frame>,
}

impl<G: Game, W: Write> Recorder<G, W> {
    /// Starts a match of `G` and its log in `out` (the header is written at
    /// once).
    pub fn new(
        config: &G::Config,
        setup: Match,
        settings: RecordSettings,
        out: W,
    ) -> Result<Self, RecordError> {
        let game = G::new(config, &setup)?;
        let state_limit = G::state_limit(config, &setup)?;
        let header = Header::new::<G>(
            config,
            setup,
            settings.full_checksum_interval,
            settings.keyframe_interval,
        );
        let writer =
            LogWriter::new(out, header, settings.chunk_frames)?.with_state_limit(state_limit);
        Ok(Recorder {
            engine: Engine::new(game, settings.engine),
            writer,
            keyframe_interval: settings.keyframe_interval,
            last_keyframe: None,
        })
    }

    /// Steps the next frame with every player's input, logs the inputs and
    /// the checksum (and, first, a keyframe if one is due), and returns the
    /// checksum.
    pub fn advance(&mut self, inputs: &[G::Input]) -> io::Result<Checksum> {
        let seats = usize::from(self.writer.header().setup.seats);
        if inputs.len() != seats {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} inputs for {seats} seats", inputs.len()),
            ));
        }
        if self.writer.is_stopped() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the log stopped at frame {}", self.writer.frames()),
            ));
        }
        let frame = self.engine.frame();
        let k = self.keyframe_interval;
        if k != 0 && frame != 0 && frame % k == 0 {
            self.keyframe()?;
        }
        let checksum = self.engine.advance(inputs);
        self.writer.frame(inputs, &checksum)?;
        Ok(checksum)
    }

    /// Logs a keyframe of the current state now (the state before the next
    /// frame), unless one of this frame is already logged. After
    /// [`Recorder::game_mut`] changed the state, this records the changed
    /// state, so a desync report can show it.
    pub fn keyframe(&mut self) -> io::Result<()> {
        let frame = self.engine.frame();
        if frame == 0 || self.last_keyframe == Some(frame) {
            return Ok(());
        }
        self.writer.keyframe(&self.engine.save())?;
        self.last_keyframe = Some(frame);
        Ok(())
    }

    /// Logs a note at the current frame (after every frame stepped so far):
    /// see [`LogWriter::note`]. After a [`Note::Stopped`] the recorder
    /// steps nothing more; [`Recorder::finish`] ends the log.
    pub fn note(&mut self, note: &Note) -> io::Result<()> {
        self.writer.note(note)
    }

    /// Lets each frame use up to `threads` threads (the game's step and the
    /// checksum's hashing, see [`Engine::set_threads`]). A machine setting:
    /// the log is the same, byte for byte, for any count.
    pub fn set_threads(&mut self, threads: usize) {
        self.engine.set_threads(threads);
    }

    /// The threads a frame may use (1 unless set).
    pub fn threads(&self) -> usize {
        self.engine.threads()
    }

    /// The engine.
    pub fn engine(&self) -> &Engine<G> {
        &self.engine
    }

    /// The game, to change it outside the frame loop. Changes made here are
    /// not logged, so a replay of the log will not see them: this is how a
    /// test makes a recorded match diverge from its replay.
    pub fn game_mut(&mut self) -> &mut G {
        self.engine.game_mut()
    }

    /// The log writer.
    pub fn writer(&self) -> &LogWriter<W, G::Input> {
        &self.writer
    }

    /// Writes the pending chunk now (it is written every `chunk_frames`
    /// frames anyway).
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// Ends the log and gives back the engine and the output.
    pub fn finish(self) -> io::Result<(Engine<G>, W)> {
        let out = self.writer.finish()?;
        Ok((self.engine, out))
    }
}
