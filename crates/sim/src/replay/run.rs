//! The replay runner: [`read_as`] reads a log as its game's (refusing what
//! the game refuses, before any record is read), and [`run`] rebuilds a logged match — refusing a log of
//! another game, game version, input schema or (if asked) scene — steps its
//! frames through an [`Engine`] and verifies every logged checksum, from
//! frame 0 or, to seek, from the latest keyframe at or before the target.
//!
//! Invariants: the game is rebuilt only from the log (`G::new(config,
//! setup)` with the config decoded from the header, or `G::decode` of a
//! keyframe), and a keyframe is used only if its checksum equals what the log
//! holds for the frame before it; every stepped frame is compared with the
//! strongest checksum logged for it (full if there is one, else the short
//! check), and every keyframe the replay reaches with the state it computed
//! (BLAKE3 of the keyframe's bytes against the engine's checksum), so a
//! keyframe that would mislead a later seek is caught by a full replay;
//! the notes the log holds up to where the replay stops are handed on as
//! they are (they say what happened to the log, and change nothing that is
//! checked: a healed or unchecked frame is compared with the log like any
//! other); nothing panics on any log.

use lockstep_fx::{Canonical, Checksum, DecodeError};

use super::header::{Header, LogError};
use super::note::{Note, Noted, StopCause};
use super::reader::{Logged, ReplayLog, read_with};
use crate::GameVersion;
use crate::engine::{Engine, EngineSettings};
use crate::game::{Frame, Game, SetupError, StateError};

/// What [`run`] does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Stop before this frame (`None`: replay every logged frame from frame
    /// 0). A target starts from the latest keyframe at or before it.
    pub to: Option<Frame>,
    /// Stop after the first frame whose checksum differs from the log's.
    pub stop_at_mismatch: bool,
    /// Refuse a log whose config (scene) hash is not this one.
    pub config_hash: Option<Checksum>,
    /// Threads each frame may use ([`Engine::set_threads`]; 0 counts as
    /// 1). The outcome is the same for any count.
    pub threads: usize,
}

/// A frame whose computed checksum differs from the logged one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// The frame (the checksum of the state after stepping it).
    pub frame: Frame,
    /// What the log holds.
    pub expected: Logged,
    /// What the replay computed.
    pub computed: Checksum,
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The frame the replay started before: 0, or a keyframe's.
    pub start: Frame,
    /// The frame it stopped before (`start + replayed`).
    pub end: Frame,
    /// Frames stepped and checked.
    pub replayed: u32,
    /// Of those, frames checked against a full checksum.
    pub full_checks: u32,
    /// The first frame whose checksum differs from the log's.
    pub first_mismatch: Option<Mismatch>,
    /// How many frames differ.
    pub mismatches: u32,
    /// Keyframes reached by the replay (after its start) and compared with
    /// the re-simulated state.
    pub keyframes_checked: u32,
    /// The first of those that is not the re-simulated state (its frame).
    pub first_bad_keyframe: Option<Frame>,
    /// How many of those are not the re-simulated state.
    pub bad_keyframes: u32,
    /// The checksum of the final state (the state before `end`).
    pub final_checksum: Checksum,
    /// The log's notes at or before `end` (the notes it holds about the
    /// frames up to where the replay stopped), in the log's order.
    pub notes: Vec<Noted>,
}

impl Outcome {
    /// Whether every frame replayed matched the log, and every keyframe
    /// reached is the state the replay computed.
    pub fn verified(&self) -> bool {
        self.first_mismatch.is_none() && self.first_bad_keyframe.is_none()
    }

    /// Why the log stopped early, if the replay reached the note that says
    /// so (at `end`: the log holds no frame after it).
    pub fn stop(&self) -> Option<&StopCause> {
        match self.notes.last() {
            Some(Noted {
                at,
                note: Note::Stopped { reason },
            }) if *at == self.end => Some(reason),
            _ => None,
        }
    }
}

/// Why a log could not be read or replayed as `G`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The bytes are not a log this build reads (a bad header).
    #[error(transparent)]
    Log(#[from] LogError),
    /// A log of another game.
    #[error("the log is of game `{found}`, not `{expected}`")]
    Game {
        /// The log's game id.
        found: String,
        /// This game's id.
        expected: &'static str,
    },
    /// A log of another version of the game.
    #[error("{}", crate::version::refusal(crate::version::Recording::Log, game, *found, *expected))]
    GameVersion {
        /// The game id.
        game: &'static str,
        /// The log's game version.
        found: GameVersion,
        /// This build's.
        expected: GameVersion,
    },
    /// A log whose inputs are encoded differently.
    #[error("the log's input schema hash is {found:016x}, this build's is {expected:016x}")]
    Schema {
        /// The log's.
        found: u64,
        /// This build's.
        expected: u64,
    },
    /// A log of another scene/config than the one asked for.
    #[error("the log's config hash is {found}, expected {expected}")]
    ConfigHash {
        /// The log's.
        found: Checksum,
        /// The one asked for.
        expected: Checksum,
    },
    /// The log's config does not decode as this game's.
    #[error("the log's config does not decode: {0}")]
    Config(DecodeError),
    /// The game refused the log's setup.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The target frame is past the log.
    #[error("cannot replay to frame {to}: the log holds {frames} frames")]
    Beyond {
        /// The target.
        to: Frame,
        /// Frames in the log.
        frames: Frame,
    },
    /// A keyframe that does not decode as this game's state.
    #[error("keyframe of frame {frame}: {error}")]
    Keyframe {
        /// The keyframe's frame.
        frame: Frame,
        /// Why it does not decode.
        error: StateError,
    },
    /// A keyframe whose checksum is not the one logged for the frame before.
    #[error("keyframe of frame {frame} has checksum {found}, the log holds {expected} for frame {}", .frame.saturating_sub(1))]
    KeyframeChecksum {
        /// The keyframe's frame (at least 1).
        frame: Frame,
        /// What the log holds for `frame - 1`.
        expected: Logged,
        /// The keyframe's checksum.
        found: Checksum,
    },
}

/// Checks that `header` is a log of `G` as this build runs it (id, version,
/// input schema) and returns its config, which must re-encode to exactly the
/// logged bytes.
pub fn check_game<G: Game>(header: &Header) -> Result<G::Config, RunError> {
    if header.game != G::ID {
        return Err(RunError::Game {
            found: header.game.clone(),
            expected: G::ID,
        });
    }
    if header.game_version != G::VERSION {
        return Err(RunError::GameVersion {
            game: G::ID,
            found: GameVersion::of::<G>(header.game_version),
            expected: GameVersion::of::<G>(G::VERSION),
        });
    }
    let expected = <G::Input as lockstep_codec::Input>::schema_hash();
    if header.schema_hash != expected {
        return Err(RunError::Schema {
            found: header.schema_hash,
            expected,
        });
    }
    let config = G::Config::from_canonical(&header.config).map_err(RunError::Config)?;
    if config.to_canonical() != header.config {
        return Err(RunError::Config(DecodeError::Invalid {
            offset: 0,
            what: "config (does not re-encode to the logged bytes)",
        }));
    }
    Ok(config)
}

/// Reads a replay log of `G`, as every tool that replays, seeks or draws
/// one should: refuses a header [`run`] would refuse (another game, game
/// version or input schema, a config that does not decode, a setup the game
/// refuses), and reads the records allowing keyframes no longer than the
/// game's [`Game::state_limit`] for the log's settings (a longer one is
/// damage, skipped before it is inflated).
pub fn read_as<G: Game>(bytes: &[u8]) -> Result<ReplayLog<G::Input>, RunError> {
    let header = Header::read(bytes)?;
    let config = check_game::<G>(&header)?;
    let limit = G::state_limit(&config, &header.setup)?;
    Ok(read_with::<G::Input>(bytes, limit)?)
}

/// Replays `log` as `G` and verifies it, calling `progress(frame)` after
/// each frame stepped.
pub fn run<G: Game>(
    log: &ReplayLog<G::Input>,
    options: &RunOptions,
    progress: impl FnMut(Frame),
) -> Result<Outcome, RunError> {
    run_with_state::<G>(log, options, progress).map(|(outcome, _)| outcome)
}

/// [`run`], also handing back the engine holding the final state (the state
/// before [`Outcome::end`]), to save it or compare it.
pub fn run_with_state<G: Game>(
    log: &ReplayLog<G::Input>,
    options: &RunOptions,
    mut progress: impl FnMut(Frame),
) -> Result<(Outcome, Engine<G>), RunError> {
    let header = log.header();
    let config = check_game::<G>(header)?;
    if let Some(expected) = options.config_hash {
        if header.config_hash != expected {
            return Err(RunError::ConfigHash {
                found: header.config_hash,
                expected,
            });
        }
    }
    let frames = log.frames();
    let end = match options.to {
        Some(to) if to > frames => return Err(RunError::Beyond { to, frames }),
        Some(to) => to,
        None => frames,
    };
    let keyframe = options
        .to
        .and_then(|to| log.keyframe_at_or_before(to))
        .filter(|k| k.frame() > 0);
    let mut engine = match keyframe {
        Some(k) => {
            // A seek refuses what a replay from frame 0 refuses: a setup
            // the game does not play.
            G::state_limit(&config, &header.setup)?;
            let frame = k.frame();
            // A keyframe is at a frame the log reached, so `frame - 1` is logged.
            if let Some(expected) = log.logged(frame - 1) {
                let found = k.checksum();
                if !expected.matches(&found) {
                    return Err(RunError::KeyframeChecksum {
                        frame,
                        expected,
                        found,
                    });
                }
            }
            let keyframe_error = |error| RunError::Keyframe { frame, error };
            let saved = k
                .state()
                .map_err(|e| keyframe_error(StateError::Invalid(e.to_string())))?;
            let game = G::decode(&saved.bytes).map_err(keyframe_error)?;
            Engine::at(game, frame, EngineSettings::NONE)
        }
        None => Engine::new(G::new(&config, &header.setup)?, EngineSettings::NONE),
    };
    engine.set_threads(options.threads);
    let start = engine.frame();
    let mut outcome = Outcome {
        start,
        end: start,
        replayed: 0,
        full_checks: 0,
        first_mismatch: None,
        mismatches: 0,
        keyframes_checked: 0,
        first_bad_keyframe: None,
        bad_keyframes: 0,
        final_checksum: engine.game().checksum(),
        notes: Vec::new(),
    };
    // Checks the checksum computed for `frame` (the state after it) against
    // the log and the keyframe of the next frame; false to stop here.
    let check = |outcome: &mut Outcome, frame: Frame, computed: Checksum| {
        outcome.final_checksum = computed;
        let Some(expected) = log.logged(frame) else {
            return true;
        };
        if matches!(expected, Logged::Full(_)) {
            outcome.full_checks += 1;
        }
        // A keyframe of the next frame holds the state just computed.
        if let Some(k) = log.keyframe(frame + 1) {
            outcome.keyframes_checked += 1;
            if k.checksum() != computed {
                outcome.bad_keyframes += 1;
                outcome.first_bad_keyframe.get_or_insert(k.frame());
            }
        }
        if !expected.matches(&computed) {
            outcome.mismatches += 1;
            if outcome.first_mismatch.is_none() {
                outcome.first_mismatch = Some(Mismatch {
                    frame,
                    expected,
                    computed,
                });
            }
            return !options.stop_at_mismatch;
        }
        true
    };
    // Without a stop at the first mismatch, each frame's checksum is hashed
    // (with two or more threads, on a helper) while the next frame steps.
    let deferred = !options.stop_at_mismatch;
    for frame in start..end {
        let (Some(inputs), Some(_)) = (log.inputs(frame), log.logged(frame)) else {
            break;
        };
        let done = if deferred {
            engine.advance_deferred(inputs)
        } else {
            Some((frame, engine.advance(inputs)))
        };
        outcome.replayed += 1;
        outcome.end = engine.frame();
        progress(frame);
        if let Some((f, computed)) = done {
            if !check(&mut outcome, f, computed) {
                break;
            }
        }
    }
    if let Some((f, computed)) = engine.collect_checksum() {
        check(&mut outcome, f, computed);
    }
    let end = outcome.end;
    outcome.notes = log
        .notes()
        .iter()
        .take_while(|n| n.at <= end)
        .cloned()
        .collect();
    Ok((outcome, engine))
}
