//! Finding and explaining a desync: the first frame two checksum streams
//! part ([`first_divergence`]), and a readable report of that frame
//! ([`DesyncReport`]): both checksums, every player's inputs, and the fields
//! the two states disagree on before and after it. [`diagnose_logs`] does
//! all of it for two replay logs of one match.
//!
//! A report never claims agreement it did not see: when two checksums
//! differ and the report could not compare the two states they describe —
//! one side's state is missing, or rebuilding it gave other bits than the
//! ones checksummed (the game does not step the same twice, or a log was
//! recorded by a machine that steps differently) — its headline says what
//! could not be compared and why ([`DesyncReport::not_compared`]), never
//! "0 fields differ".

use core::fmt::Write as _;
use std::path::{Path, PathBuf};

use lockstep_fx::Checksum;

use crate::diff::FieldDiff;
use crate::engine::{Engine, EngineSettings, SavedState};
use crate::game::{Frame, Game, StateError};
use crate::replay::{FrameCheck, ReplayLog, RunError, check_game};
use crate::state_file::StateFile;

/// The first frame at which two per-frame checksum streams differ, looking
/// only at frames both hold (each stream in frame order).
///
/// Replay logs and engine histories hold a check for every frame, so one
/// merge-scan finds the frame exactly. A bisection would save nothing at
/// these sizes (thousands of 2-byte checks) and would assume that streams
/// never agree again once they part, which a corrupted value that the next
/// frame overwrites breaks.
pub fn first_divergence<C: PartialEq>(left: &[(Frame, C)], right: &[(Frame, C)]) -> Option<Frame> {
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        match left[i].0.cmp(&right[j].0) {
            core::cmp::Ordering::Less => i += 1,
            core::cmp::Ordering::Greater => j += 1,
            core::cmp::Ordering::Equal => {
                if left[i].1 != right[j].1 {
                    return Some(left[i].0);
                }
                i += 1;
                j += 1;
            }
        }
    }
    None
}

/// Everything known about the first divergent frame of two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesyncReport {
    /// The game's id.
    pub game: String,
    /// Where the two runs came from (file names, peer names).
    pub sources: [String; 2],
    /// The first frame whose checksums differ.
    pub frame: Frame,
    /// Both runs' checksums of the state after `frame`, as logged.
    pub checksums: [String; 2],
    /// Every player's input for `frame`, as text.
    pub inputs: Vec<String>,
    /// The fields that differ in the states *before* `frame` (left run on
    /// the left). Non-empty when a state changed outside the simulation
    /// between frames: memory corruption, or a bug writing state outside
    /// `step`.
    pub before: Vec<FieldDiff>,
    /// The fields that differ in the states *after* `frame`.
    pub after: Vec<FieldDiff>,
    /// Whether the states before `frame` were compared (`before` lists
    /// what differs in them).
    pub before_compared: bool,
    /// Whether the states after `frame` were compared (`after` lists what
    /// differs in them).
    pub after_compared: bool,
    /// What could not be compared, and why, one line each: a side's state
    /// missing, or a state that is not the one its side checksummed.
    /// Empty when both states after `frame` are the ones checksummed and
    /// were compared.
    pub not_compared: Vec<String>,
    /// How each state was obtained, and anything else worth knowing.
    pub notes: Vec<String>,
}

/// One side's state after the report's frame, as a report compares it.
#[derive(Debug, Clone, Copy)]
pub struct SideState<'a> {
    /// The state's bytes, or why this side's state is not at hand.
    pub bytes: Result<&'a [u8], &'a str>,
    /// The checksum this side's run gave the state, where known: a state
    /// with other bits was rebuilt differently, and the report says so.
    pub checksummed: Option<Checksum>,
}

impl DesyncReport {
    /// A report of `frame` with nothing compared yet.
    pub fn new(
        game: &str,
        sources: [String; 2],
        frame: Frame,
        checksums: [String; 2],
        inputs: Vec<String>,
    ) -> DesyncReport {
        DesyncReport {
            game: game.to_string(),
            sources,
            frame,
            checksums,
            inputs,
            before: Vec::new(),
            after: Vec::new(),
            before_compared: false,
            after_compared: false,
            not_compared: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Compares the two states before the frame field by field.
    pub fn compare_before<G: Game>(&mut self, states: [&[u8]; 2]) {
        match crate::diff::diff_states::<G>(states[0], states[1]) {
            Ok(d) => {
                self.before = d;
                self.before_compared = true;
            }
            Err(e) => self.notes.push(format!(
                "the states before frame {} were not compared: one does not decode ({e})",
                self.frame
            )),
        }
    }

    /// Compares the two sides' states after the frame field by field, and
    /// says what could not be: a state missing (and why), a state whose
    /// bits are not the ones its side checksummed, states that do not
    /// decode, and equal states under two different checksums.
    pub fn compare_after<G: Game>(&mut self, sides: [SideState<'_>; 2]) {
        let frame = self.frame;
        for (side, source) in sides.iter().zip(&self.sources) {
            match side.bytes {
                Err(why) => self.not_compared.push(format!(
                    "{source}: no state after frame {frame} to compare ({why})"
                )),
                Ok(bytes) => {
                    let here = Checksum::of(bytes);
                    if let Some(then) = side.checksummed.filter(|c| *c != here) {
                        self.not_compared.push(format!(
                            "{source}: its state after frame {frame} here is not the one it checksummed ({} here, {} then): stepping the frames again gave other bits, so that run is not reproduced",
                            here.short(),
                            then.short()
                        ));
                    }
                }
            }
        }
        let (Ok(left), Ok(right)) = (sides[0].bytes, sides[1].bytes) else {
            return;
        };
        match crate::diff::diff_states::<G>(left, right) {
            Ok(d) => {
                self.after = d;
                self.after_compared = true;
            }
            Err(e) => {
                self.not_compared.push(format!(
                    "the states after frame {frame} do not decode ({e})"
                ));
                return;
            }
        }
        if self.after.is_empty()
            && self.checksums[0] != self.checksums[1]
            && self.not_compared.is_empty()
        {
            self.not_compared.push(format!(
                "the states compared after frame {frame} are equal although the checksums differ: neither is the state its checksum describes"
            ));
        }
    }

    /// The headline: how many fields differ, or what could not be
    /// compared.
    pub fn headline(&self) -> String {
        let frame = self.frame;
        if self.not_compared.is_empty() && self.after_compared {
            return format!(
                "{} in the states after frame {frame}",
                crate::diff::count(self.after.len())
            );
        }
        let mut h = format!("the states after frame {frame} were not compared as checksummed");
        if self.after_compared {
            h.push_str(&format!(
                "; compared instead (see below), {}",
                match self.after.len() {
                    0 => "no field differs".to_string(),
                    n => crate::diff::count(n),
                }
            ));
        }
        h
    }

    /// The report as readable text.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "desync report: {}", self.game);
        let _ = writeln!(t, "left:  {}", self.sources[0]);
        let _ = writeln!(t, "right: {}", self.sources[1]);
        let _ = writeln!(t, "first divergent frame: {}", self.frame);
        let _ = writeln!(
            t,
            "checksum after frame {}, left:  {}",
            self.frame, self.checksums[0]
        );
        let _ = writeln!(
            t,
            "checksum after frame {}, right: {}",
            self.frame, self.checksums[1]
        );
        let _ = writeln!(t, "{}", self.headline());
        for line in &self.not_compared {
            let _ = writeln!(t, "  not compared: {line}");
        }
        for note in &self.notes {
            let _ = writeln!(t, "note: {note}");
        }
        let _ = writeln!(t, "\ninputs of frame {}:", self.frame);
        for (seat, input) in self.inputs.iter().enumerate() {
            let _ = writeln!(t, "  seat {seat}: {input}");
        }
        let sections = [
            ("before", self.before_compared, &self.before),
            ("after", self.after_compared, &self.after),
        ];
        for (when, compared, diff) in sections {
            if !compared {
                continue;
            }
            let head = if diff.is_empty() {
                format!("the states compared {when} frame {} are equal", self.frame)
            } else {
                format!(
                    "{} in the states {when} frame {}:",
                    crate::diff::count(diff.len()),
                    self.frame
                )
            };
            let _ = writeln!(t, "\n{head}");
            for d in diff {
                let _ = writeln!(t, "  {d}");
            }
        }
        t
    }
}

/// A diagnosed desync: the report and both sides' states before the
/// divergent frame. [`diagnose_logs`] finds one between two replay logs; a
/// live peer builds one when the authority's state reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// The readable report.
    pub report: DesyncReport,
    /// The left and right states before [`DesyncReport::frame`].
    pub states: [SavedState; 2],
}

impl Diagnosis {
    /// The files a report consists of, to be written as the caller sees fit
    /// (`lockstep diff` writes each whole or not at all): the report as text
    /// at `path`, and each state beside it as a state file
    /// (`<path stem>.left.state`, `<path stem>.right.state`, which `lockstep
    /// diff` compares field by field).
    pub fn files<G: Game>(&self, path: &Path) -> [(PathBuf, Vec<u8>); 3] {
        let state = |side: &str, saved: &SavedState| {
            (
                path.with_extension(format!("{side}.state")),
                StateFile::of::<G>(saved.clone()).encode(),
            )
        };
        [
            (path.to_path_buf(), self.report.to_text().into_bytes()),
            state("left", &self.states[0]),
            state("right", &self.states[1]),
        ]
    }
}

/// One log's states around frame `d`, rebuilt on this machine.
struct Around {
    before: SavedState,
    after: SavedState,
    after_checksum: Checksum,
    /// This machine's checksum of frame `d` is the log's.
    reproduced: bool,
    notes: Vec<String>,
}

fn around<G: Game>(log: &ReplayLog<G::Input>, d: Frame, side: &str) -> Result<Around, RunError> {
    let config = check_game::<G>(log.header())?;
    let mut notes = Vec::new();
    let keyframe = log.keyframe_at_or_before(d).filter(|k| k.frame() > 0);
    let game = match keyframe {
        Some(k) => {
            // Refuse what a replay from frame 0 refuses: a setup the game
            // does not play.
            G::state_limit(&config, &log.header().setup)?;
            let keyframe_error = |error| RunError::Keyframe {
                frame: k.frame(),
                error,
            };
            let saved = k
                .state()
                .map_err(|e| keyframe_error(StateError::Invalid(e.to_string())))?;
            G::decode(&saved.bytes).map_err(keyframe_error)?
        }
        None => G::new(&config, &log.header().setup)?,
    };
    let start = keyframe.map_or(0, |k| k.frame());
    if let Some(k) = keyframe {
        let logged = log.logged(k.frame() - 1);
        if logged.is_some_and(|l| !l.matches(&k.checksum())) {
            notes.push(format!(
                "{side}: the keyframe before frame {} is not the state the log's checksum of frame {} describes: the state was changed outside the simulation between those frames",
                k.frame(),
                k.frame() - 1
            ));
        }
    }
    let mut engine = Engine::at(game, start, EngineSettings::NONE);
    let mut first_bad = None;
    for f in start..d {
        let (Some(inputs), Some(logged)) = (log.inputs(f), log.logged(f)) else {
            break;
        };
        let c = engine.advance(inputs);
        if first_bad.is_none() && !logged.matches(&c) {
            first_bad = Some(f);
        }
    }
    let before = engine.save();
    let inputs = log.inputs(d).unwrap_or(&[]);
    let after_checksum = engine.advance(inputs);
    let reproduced = log.logged(d).is_some_and(|l| l.matches(&after_checksum));
    let from = if start == 0 {
        "the start of the match".to_string()
    } else {
        format!("its keyframe before frame {start}")
    };
    match (first_bad, reproduced) {
        (None, true) => notes.push(format!(
            "{side}: states rebuilt from {from}; every checksum through frame {d} matches the log"
        )),
        (Some(f), _) => notes.push(format!(
            "{side}: states rebuilt from {from}, but this machine's checksum of frame {f} already differs from the log: the recording machine computed this log differently"
        )),
        (None, false) => notes.push(format!(
            "{side}: states rebuilt from {from}; the state before frame {d} matches the log, but this machine's state after frame {d} does not: the recording machine stepped frame {d} differently, or its state before it was changed after its last keyframe"
        )),
    }
    Ok(Around {
        before,
        after: engine.save(),
        after_checksum,
        reproduced: reproduced && first_bad.is_none(),
        notes,
    })
}

/// A side of `report` whose log this machine does not reproduce (the
/// recording machine stepped differently): the states after the frame are
/// not at hand, so the report compares the first keyframes after it that
/// both logs hold, each the state its own machine reached; without one it
/// says so.
fn compare_keyframes<G: Game>(
    report: &mut DesyncReport,
    logs: [&ReplayLog<G::Input>; 2],
    around: [&Around; 2],
) {
    let d = report.frame;
    for (i, a) in around.iter().enumerate() {
        if !a.reproduced {
            let source = report.sources[i].clone();
            report.not_compared.push(format!(
                "{source}: this machine's re-simulation does not give the log's checksum of frame {d}: the machine that recorded it stepped differently, so its state after frame {d} is not at hand"
            ));
        }
    }
    let after = |log: &ReplayLog<G::Input>| {
        log.keyframes()
            .iter()
            .filter(|k| k.frame() > d)
            .map(|k| k.frame())
            .collect::<Vec<_>>()
    };
    let theirs = after(logs[1]);
    let shared = after(logs[0]).into_iter().find(|f| theirs.contains(f));
    let states = shared.and_then(|k| Some((k, logs[0].keyframe(k)?, logs[1].keyframe(k)?)));
    match states {
        Some((k, left, right)) => {
            report.notes.push(format!(
                "compared instead: both logs' keyframes before frame {k}, each the state its own machine reached"
            ));
            // Kept deflated as logged: inflated here, one state each.
            let inflated = left.state().and_then(|l| Ok((l, right.state()?)));
            let compared = match inflated {
                Ok((left, right)) => crate::diff::diff_states::<G>(&left.bytes, &right.bytes)
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match compared {
                Ok(diff) => {
                    report.after = diff;
                    report.after_compared = true;
                }
                Err(e) => report
                    .not_compared
                    .push(format!("the keyframes before frame {k} do not decode ({e})")),
            }
        }
        None => report.not_compared.push(format!(
            "neither log holds a keyframe after frame {d} that the other holds too: no state of the machine that stepped differently to compare"
        )),
    }
}

/// Compares two logs of the same match: the first frame whose logged
/// checksums differ (the short checks of every frame, and the full
/// checksums where both logs hold one), both runs' states before and after it (rebuilt from
/// each log's latest keyframe at or before it), and the fields that differ.
/// `Ok(None)` if the logs agree on every frame both hold.
pub fn diagnose_logs<G: Game>(
    left: &ReplayLog<G::Input>,
    right: &ReplayLog<G::Input>,
    sources: [String; 2],
) -> Result<Option<Diagnosis>, RunError> {
    let checks = |log: &ReplayLog<G::Input>| -> Vec<(Frame, FrameCheck)> {
        (0..log.frames())
            .filter_map(|f| log.check(f).map(|c| (f, c)))
            .collect()
    };
    // The short checks of every frame, and the full checksums of the frames
    // both logged one for (a 16-bit check misses 1 divergence in 65 536).
    let short = first_divergence(&checks(left), &checks(right));
    let full = first_divergence(left.full_checksums(), right.full_checksums());
    let Some(d) = short.into_iter().chain(full).min() else {
        return Ok(None);
    };
    let l = around::<G>(left, d, "left")?;
    let r = around::<G>(right, d, "right")?;
    let mut notes = l.notes.clone();
    notes.extend(r.notes.iter().cloned());
    let common = left.frames().min(right.frames());
    if let Some(f) = (0..common).find(|&f| left.inputs(f) != right.inputs(f)) {
        notes.push(format!(
            "the logs' inputs differ from frame {f} on: they are not the same match"
        ));
    }
    let logged = |log: &ReplayLog<G::Input>, computed: &Checksum| {
        log.logged(d)
            .map_or_else(|| computed.to_string(), |l| l.to_string())
    };
    let inputs = left
        .inputs(d)
        .unwrap_or(&[])
        .iter()
        .map(|i| format!("{i:?}"))
        .collect();
    let checksums = [
        logged(left, &l.after_checksum),
        logged(right, &r.after_checksum),
    ];
    let mut report = DesyncReport::new(G::ID, sources, d, checksums, inputs);
    report.notes = notes;
    report.compare_before::<G>([&l.before.bytes, &r.before.bytes]);
    if l.reproduced && r.reproduced {
        fn side(a: &Around) -> SideState<'_> {
            SideState {
                bytes: Ok(&a.after.bytes),
                checksummed: Some(a.after_checksum),
            }
        }
        report.compare_after::<G>([side(&l), side(&r)]);
    } else {
        compare_keyframes::<G>(&mut report, [left, right], [&l, &r]);
    }
    Ok(Some(Diagnosis {
        report,
        states: [l.before, r.before],
    }))
}

#[cfg(test)]
mod tests {
    use super::first_divergence;

    #[test]
    fn the_first_differing_common_frame_is_found() {
        let a: Vec<(u32, u16)> = (0..100).map(|f| (f, f as u16)).collect();
        let mut b = a.clone();
        assert_eq!(first_divergence(&a, &b), None);
        b[40].1 = 7; // a transient difference the streams recover from
        b[70].1 = 9;
        assert_eq!(first_divergence(&a, &b), Some(40));
        // Only frames both hold count.
        let c: Vec<(u32, u16)> = a[50..].to_vec();
        assert_eq!(first_divergence(&c, &b), Some(70));
        assert_eq!(first_divergence(&a[..10], &[]), None);
    }
}
