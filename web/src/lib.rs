//! `lockstep-viewer`: a replay log opened, re-simulated, verified as
//! `lockstep verify` does, and drawn — the engine of the browser viewer
//! (`web/static/`), where it runs as a wasm32 module (`wasm.rs`), and a
//! plain library natively, where its tests run.
//!
//! - [`Viewer::open`] reads a log of either shipped game (`cubes`, `rts`),
//!   keeping the valid part of a damaged one;
//! - [`Viewer::verify`] re-simulates every frame from the start and
//!   compares every checksum with the log's;
//! - [`Viewer::picture`] draws the state before a frame, seeking from the
//!   nearest keyframe (or stepping on from the last picture when that is
//!   nearer), with `lockstep-render`'s rasteriser.
//!
//! Invariant: the simulation is the engine's own (`lockstep_sim::replay`);
//! nothing drawn flows back into it, so the verdict is the one every other
//! build of the engine reaches.

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_render::{Camera, Canvas, Depict, Overlay, draw_scene};
use lockstep_sim::replay::{self, Header, LogEnd, ReplayLog, RunOptions};
use lockstep_sim::{Engine, EngineSettings, Game, GameVersion, SavedState};

#[cfg(target_family = "wasm")]
mod wasm;

/// What a verification found: what `lockstep verify` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Frames in the log (its valid part).
    pub frames: u32,
    /// Frames re-simulated and checked.
    pub replayed: u32,
    /// The first frame whose checksum differs from the log's.
    pub first_mismatch: Option<u32>,
    /// Frames whose checksum differs.
    pub mismatches: u32,
    /// The first keyframe that is not the replayed state (the frame after
    /// it).
    pub first_bad_keyframe: Option<u32>,
    /// What is wrong with a log that is not whole: its first damaged
    /// record, or where its valid data ends.
    pub damage: Option<String>,
    /// The frame the damage comes after (a damaged record skipped, or the
    /// end of the valid data).
    pub damaged_after: Option<u32>,
}

impl Verdict {
    /// The first frame the log is wrong at: its first checksum that differs,
    /// else the first keyframe that is not the replayed state, else where
    /// it is damaged.
    pub fn first_bad_frame(&self) -> Option<u32> {
        self.first_mismatch
            .or(self.first_bad_keyframe)
            .or(self.damaged_after)
    }
}

impl Verdict {
    /// Every frame re-simulated to the logged checksum, every keyframe the
    /// replayed state, and the log whole.
    pub fn verified(&self) -> bool {
        self.first_mismatch.is_none()
            && self.first_bad_keyframe.is_none()
            && self.damage.is_none()
            && self.replayed == self.frames
    }
}

/// One game's log, the engine of the last picture drawn, and the saved
/// states of the index.
struct Replay<G: Game> {
    log: ReplayLog<G::Input>,
    cursor: Option<Engine<G>>,
    /// Saved states every `index_every` frames, by the next frame to
    /// step: where a seek starts (a log's own keyframes are sparse).
    index: Vec<SavedState>,
    /// Frames between two saved states: [`INDEX_EVERY`], or more when the
    /// log's states would not fit [`INDEX_BYTES`] that often.
    index_every: u32,
    /// The engine that builds the index, a few frames at a time.
    indexer: Option<Engine<G>>,
}

enum AnyReplay {
    Cubes(Replay<Cubes>),
    Rts(Replay<Rts>),
}

/// An open replay log. See the module documentation.
pub struct Viewer {
    replay: AnyReplay,
}

/// Frames a picture steps on from the last one before it seeks instead.
const STEP_ON: u32 = 120;

/// Frames between two saved states of the index, at least.
pub const INDEX_EVERY: u32 = 60;

/// The most bytes the index's saved states hold together (a long match of
/// large states is indexed more sparsely, never more heavily).
pub const INDEX_BYTES: u64 = 64 << 20;

impl<G: Game + Depict> Replay<G> {
    fn read(bytes: &[u8]) -> Result<Replay<G>, String> {
        // A log of another rules or physics version, or a setup the game
        // refuses, is refused here with the line `lockstep replay` gives,
        // before anything is stepped.
        let log = replay::read_as::<G>(bytes).map_err(|e| e.to_string())?;
        Ok(Replay {
            log,
            cursor: None,
            index: Vec::new(),
            indexer: None,
            index_every: INDEX_EVERY,
        })
    }

    fn verify(&self) -> Result<Verdict, String> {
        let outcome = replay::run::<G>(&self.log, &RunOptions::default(), |_| {})
            .map_err(|e| e.to_string())?;
        let frames = self.log.frames();
        let (damage, damaged_after) = match (self.log.damage().first(), self.log.end()) {
            (Some(d), _) => (Some(d.to_string()), Some(d.frame)),
            (None, LogEnd::Truncated { offset, .. }) => (
                Some(format!(
                    "its valid data ends at byte {offset}, after frame {frames}"
                )),
                Some(frames),
            ),
            _ => (None, None),
        };
        Ok(Verdict {
            frames: self.log.frames(),
            replayed: outcome.replayed,
            first_mismatch: outcome.first_mismatch.map(|m| m.frame),
            mismatches: outcome.mismatches,
            first_bad_keyframe: outcome.first_bad_keyframe,
            damage,
            damaged_after,
        })
    }

    /// Steps the indexer up to `n` frames, saving a state every
    /// `index_every` frames; the frames indexed so far.
    fn index_step(&mut self, n: u32) -> Result<u32, String> {
        if self.indexer.is_none() {
            let options = RunOptions {
                to: Some(0),
                ..RunOptions::default()
            };
            let (_, engine) = replay::run_with_state::<G>(&self.log, &options, |_| {})
                .map_err(|e| e.to_string())?;
            self.indexer = Some(engine);
        }
        let frames = self.log.frames();
        let Some(engine) = self.indexer.as_mut() else {
            return Ok(0);
        };
        for _ in 0..n {
            let f = engine.frame();
            if f % self.index_every == 0 && self.index.last().is_none_or(|s| s.frame < f) {
                let saved = engine.save();
                if self.index.is_empty() {
                    // The first state tells the size of all: space them so
                    // that the whole log's fit the budget.
                    let states = (INDEX_BYTES / (saved.bytes.len() as u64).max(1)).max(1);
                    let every = u64::from(frames)
                        .div_ceil(states)
                        .max(u64::from(INDEX_EVERY));
                    let every = every.div_ceil(u64::from(INDEX_EVERY)) * u64::from(INDEX_EVERY);
                    self.index_every = u32::try_from(every).unwrap_or(u32::MAX);
                }
                self.index.push(saved);
            }
            if f >= frames {
                break;
            }
            let Some(inputs) = self.log.inputs(f) else {
                break;
            };
            engine.advance(inputs);
        }
        Ok(engine.frame())
    }

    /// The engine holding the state before `frame`.
    fn seek(&mut self, frame: u32) -> Result<&Engine<G>, String> {
        let from_cursor = self
            .cursor
            .as_ref()
            .filter(|e| e.frame() <= frame)
            .map(Engine::frame);
        let saved = self
            .index
            .iter()
            .rev()
            .find(|s| s.frame <= frame)
            .filter(|s| from_cursor.is_none_or(|c| s.frame > c));
        if let Some(snapshot) = saved {
            let game = G::decode(&snapshot.bytes).map_err(|e| e.to_string())?;
            let settings = EngineSettings {
                checksum_history: 0,
                save_interval: 0,
                saved_states_kept: 0,
            };
            self.cursor = Some(Engine::at(game, snapshot.frame, settings));
        }
        let near = self
            .cursor
            .as_ref()
            .is_some_and(|e| e.frame() <= frame && frame - e.frame() <= STEP_ON);
        if !near {
            let options = RunOptions {
                to: Some(frame),
                ..RunOptions::default()
            };
            let (_, engine) = replay::run_with_state::<G>(&self.log, &options, |_| {})
                .map_err(|e| e.to_string())?;
            self.cursor = Some(engine);
        }
        let Some(engine) = self.cursor.as_mut() else {
            return Err("no state".into());
        };
        while engine.frame() < frame {
            let f = engine.frame();
            let inputs = self
                .log
                .inputs(f)
                .ok_or_else(|| format!("frame {f} is not in the log"))?;
            engine.advance(inputs);
        }
        Ok(engine)
    }

    fn picture(&mut self, frame: u32, width: u32, height: u32) -> Result<Canvas, String> {
        let frames = self.log.frames();
        let engine = self.seek(frame.min(frames))?;
        let scene = engine.game().scene();
        let mut canvas = Canvas::new(width, height);
        let camera = Camera::overview(&scene, width, height);
        draw_scene(&mut canvas, &scene, &camera);
        Overlay::new()
            .line(format!("FRAME {} / {frames}", engine.frame()))
            .draw(&mut canvas);
        Ok(canvas)
    }
}

impl Viewer {
    /// Reads a replay log of a shipped game; a damaged log keeps its valid
    /// part. The error says why nothing could be read.
    pub fn open(bytes: &[u8]) -> Result<Viewer, String> {
        let header = Header::read(bytes).map_err(|e| e.to_string())?;
        let replay = match header.game.as_str() {
            g if g == Cubes::ID => AnyReplay::Cubes(Replay::read(bytes)?),
            g if g == Rts::ID => AnyReplay::Rts(Replay::read(bytes)?),
            other => {
                return Err(format!(
                    "unknown game `{other}` (the viewer plays cubes and rts)"
                ));
            }
        };
        Ok(Viewer { replay })
    }

    /// The game's version as this build runs it (and as the log records
    /// it: a log of another version is not opened): its rules and physics.
    pub fn version(&self) -> String {
        match self.replay {
            AnyReplay::Cubes(_) => GameVersion::of::<Cubes>(Cubes::VERSION).to_string(),
            AnyReplay::Rts(_) => GameVersion::of::<Rts>(Rts::VERSION).to_string(),
        }
    }

    /// The game's id.
    pub fn game(&self) -> &'static str {
        match self.replay {
            AnyReplay::Cubes(_) => Cubes::ID,
            AnyReplay::Rts(_) => Rts::ID,
        }
    }

    /// Frames in the log.
    pub fn frames(&self) -> u32 {
        match &self.replay {
            AnyReplay::Cubes(r) => r.log.frames(),
            AnyReplay::Rts(r) => r.log.frames(),
        }
    }

    /// Re-simulates every frame and compares its checksum with the log's.
    pub fn verify(&self) -> Result<Verdict, String> {
        match &self.replay {
            AnyReplay::Cubes(r) => r.verify(),
            AnyReplay::Rts(r) => r.verify(),
        }
    }

    /// Builds the index seeks start from, `n` frames at a time (call it
    /// while idle); the frames indexed so far, the log's frame count once
    /// done.
    pub fn index_step(&mut self, n: u32) -> Result<u32, String> {
        match &mut self.replay {
            AnyReplay::Cubes(r) => r.index_step(n),
            AnyReplay::Rts(r) => r.index_step(n),
        }
    }

    /// The state before `frame` (0: the start; the log's frame count: the
    /// end), drawn `width` × `height` with the frame number.
    pub fn picture(&mut self, frame: u32, width: u32, height: u32) -> Result<Canvas, String> {
        match &mut self.replay {
            AnyReplay::Cubes(r) => r.picture(frame, width, height),
            AnyReplay::Rts(r) => r.picture(frame, width, height),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/../fixtures/replays/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn a_fixture_verifies_and_draws() {
        let mut v = Viewer::open(&fixture("cubes-2p.log")).unwrap();
        assert_eq!(v.game(), "cubes");
        let verdict = v.verify().unwrap();
        assert!(verdict.verified(), "{verdict:?}");
        assert_eq!(verdict.replayed, v.frames());
        // Seeking back and forth gives the same picture as stepping on.
        let stepped: Vec<Vec<u8>> = [10, 20, 30]
            .iter()
            .map(|&f| v.picture(f, 64, 48).unwrap().rgb_bytes())
            .collect();
        let sought = v.picture(20, 64, 48).unwrap().rgb_bytes();
        assert_eq!(stepped[1], sought);
        assert_ne!(stepped[0], stepped[2]);
        // From the index, a far frame is the same picture.
        let far = v.picture(700, 64, 48).unwrap().rgb_bytes();
        while v.index_step(100).unwrap() < v.frames() {}
        // 3 600 frames of a small state: a state every 60 frames.
        if let AnyReplay::Cubes(r) = &v.replay {
            assert_eq!(r.index.len(), 60);
            let bytes: usize = r.index.iter().map(|s| s.bytes.len()).sum();
            assert!(bytes as u64 <= INDEX_BYTES);
        }
        v.picture(0, 64, 48).unwrap();
        assert_eq!(v.picture(700, 64, 48).unwrap().rgb_bytes(), far);
    }

    #[test]
    fn a_damaged_log_never_verifies() {
        let bytes = fixture("cubes-2p.log");
        let at = bytes.len() / 2;
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        let log = replay::read::<<Cubes as Game>::Input>(&damaged).unwrap();
        let v = Viewer::open(&damaged).and_then(|v| v.verify()).unwrap();
        assert!(!v.verified(), "byte {at}: {v:?}");
        // Where the reader says it is damaged: a damaged record it skipped,
        // or the end of its valid data (a flipped byte can make either).
        let damaged_after = match (log.damage().first(), log.end()) {
            (Some(d), _) => Some(d.frame),
            (None, LogEnd::Truncated { .. }) => Some(log.frames()),
            _ => None,
        };
        assert!(damaged_after.is_some(), "byte {at} went unnoticed");
        assert_eq!(v.damaged_after, damaged_after);
        assert_eq!(v.first_bad_frame(), v.damaged_after);
    }

    /// A log recorded on another physics version is refused when it is
    /// opened, with one line naming both versions and what to do.
    #[test]
    fn a_log_of_another_physics_version_is_refused() {
        let bytes = fixture("rts-4p.log");
        let mut header = Header::read(&bytes).unwrap();
        let length = header.to_bytes().len();
        header.game_version -= 1;
        let mut older = header.to_bytes();
        older.extend_from_slice(&bytes[length..]);
        let error = Viewer::open(&older).err().expect("refused");
        let now = GameVersion::of::<Rts>(Rts::VERSION);
        let then = GameVersion::of::<Rts>(Rts::VERSION - 1);
        assert_eq!(then.physics(), now.physics().map(|p| p - 1));
        assert!(error.contains(&format!("rts {then}")), "{error}");
        assert!(error.contains(&format!("rts {now}")), "{error}");
        assert!(error.contains("release that recorded it"), "{error}");
        let v = Viewer::open(&bytes).unwrap();
        assert_eq!(v.version(), now.to_string());
    }

    #[test]
    fn bytes_that_are_no_log_are_an_error() {
        assert!(Viewer::open(b"not a log").is_err());
        assert!(Viewer::open(&[]).is_err());
    }
}
