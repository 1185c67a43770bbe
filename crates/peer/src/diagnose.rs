//! Live desync diagnosis: when the authority's exact state after frame `F`
//! reaches a drifted peer, [`diagnose`] re-simulates the peer's unsettled
//! frames from its last settled state and tells which frame, entities and
//! fields it got wrong, and why.
//!
//! Two cases, told apart by the re-simulation:
//! - it reproduces the authority's state: this peer's state was changed
//!   *outside* the simulation (memory corruption, code writing game state
//!   between frames). The report names the first frame whose recorded
//!   state or checksum differs from the re-simulated one, with the fields
//!   before and after it, and the re-simulated frames are the corrected
//!   history (what the replay log records).
//! - it reproduces this peer's own state: a machine stepped differently (a
//!   determinism bug). The report compares this peer's state after `F` with
//!   the authority's.
//!
//! Invariants: the re-simulation starts from a state every peer agreed on
//! (the history's base) and uses only the recorded inputs; nothing here
//! changes the running game.

use lockstep_fx::Checksum;
use lockstep_protocol::PlayerId;
use lockstep_sim::desync::{DesyncReport, Diagnosis};
use lockstep_sim::{Engine, EngineSettings, Game, Snapshot, diff_snapshots};

use crate::history::History;

/// What the re-simulation found.
pub(crate) struct Found {
    /// The report, if the history covered the loaded frame.
    pub diagnosis: Option<Diagnosis>,
    /// The corrected results of the open frames through the loaded frame,
    /// when the re-simulation reproduced the authority's state.
    pub corrected: Option<Vec<(Checksum, Snapshot)>>,
}

impl Found {
    /// No diagnosis and no correction.
    pub fn nothing() -> Found {
        Found {
            diagnosis: None,
            corrected: None,
        }
    }
}

/// Who is who, for the report.
pub(crate) struct Sides {
    pub local: PlayerId,
    pub authority: Option<PlayerId>,
    pub desync_frame: Option<u32>,
}

const NO_HISTORY: EngineSettings = EngineSettings {
    checksum_history: 0,
    snapshot_interval: 0,
    snapshots_kept: 0,
};

/// Diagnoses the load of `state`, the authority's state after `frame`.
pub(crate) fn diagnose<G: Game>(
    history: &History<G::Input>,
    sides: &Sides,
    frame: u32,
    state: &[u8],
) -> Found {
    let none = Found::nothing();
    let open = history.open();
    let start = history.base_frame();
    if frame < start || open.back().is_none_or(|s| s.frame < frame) {
        return none;
    }
    let Ok(game) = G::decode(history.base()) else {
        return none;
    };
    let mut engine = Engine::at(game, start, NO_HISTORY);
    let mut resim: Vec<(Checksum, Snapshot)> = Vec::new();
    let mut first_wrong: Option<usize> = None;
    for (i, s) in open.iter().take_while(|s| s.frame <= frame).enumerate() {
        let resim_before: &[u8] = match i {
            0 => history.base(),
            _ => &resim[i - 1].1.bytes,
        };
        let touched = s.touched.as_deref().is_some_and(|t| t != resim_before);
        let (checksum, after) = engine.advance_saving(&s.inputs);
        if first_wrong.is_none() && (checksum != s.checksum || touched) {
            first_wrong = Some(i);
        }
        resim.push((checksum, after));
    }
    let authority_checksum = Checksum::of(state);
    let reproduced = resim.last().is_some_and(|(c, _)| *c == authority_checksum);
    let who = |seat: Option<PlayerId>, what: &str| match seat {
        Some(s) => format!("player {} ({what})", s.0),
        None => what.to_string(),
    };
    let sources = [
        who(Some(sides.local), "this peer"),
        who(sides.authority, "the authority"),
    ];
    let report = |k: u32, checksums: [Checksum; 2], before: [&[u8]; 2], after: [&[u8]; 2]| {
        let inputs = open
            .iter()
            .find(|s| s.frame == k)
            .map(|s| s.inputs.iter().map(|i| format!("{i:?}")).collect())
            .unwrap_or_default();
        DesyncReport {
            game: G::ID.to_string(),
            sources: sources.clone(),
            frame: k,
            checksums: checksums.map(|c| c.to_string()),
            inputs,
            before: diff_snapshots::<G>(before[0], before[1]).unwrap_or_default(),
            after: diff_snapshots::<G>(after[0], after[1]).unwrap_or_default(),
            notes: Vec::new(),
        }
    };
    let detected = sides
        .desync_frame
        .map(|d| format!("; the checksum exchange first saw a difference at frame {d}"))
        .unwrap_or_default();
    if reproduced {
        let Some(i) = first_wrong else {
            return Found {
                diagnosis: None,
                corrected: Some(resim),
            };
        };
        let s = &open[i];
        let recorded_before: &[u8] = match (&s.touched, i) {
            (Some(t), _) => t,
            (None, 0) => history.base(),
            (None, _) => &open[i - 1].after,
        };
        let resim_before: &[u8] = if i == 0 {
            history.base()
        } else {
            &resim[i - 1].1.bytes
        };
        let mut r = report(
            s.frame,
            [s.checksum, resim[i].0],
            [recorded_before, resim_before],
            [&s.after, &resim[i].1.bytes],
        );
        r.sources[1] = format!("{} (re-simulated here from frame {start})", sources[1]);
        r.notes.push(format!(
            "re-simulating frames {start}..={frame} from the last settled state reproduces the authority's state after frame {frame}: this peer's state was changed outside the simulation{detected}"
        ));
        if s.touched.is_none() {
            r.notes.push(format!(
                "the change happened after this peer saved its state after frame {} and before it stepped frame {}",
                s.frame.saturating_sub(1),
                s.frame
            ));
        }
        let states = [
            Snapshot {
                frame: s.frame,
                bytes: recorded_before.to_vec(),
            },
            Snapshot {
                frame: s.frame,
                bytes: resim_before.to_vec(),
            },
        ];
        return Found {
            diagnosis: Some(Diagnosis { report: r, states }),
            corrected: Some(resim),
        };
    }
    let Some(own) = open.iter().find(|s| s.frame == frame) else {
        return none;
    };
    let mut r = report(
        frame,
        [own.checksum, authority_checksum],
        [&own.after, state],
        [&own.after, state],
    );
    r.before.clear();
    r.notes.push(format!(
        "re-simulating frames {start}..={frame} from the last settled state gives this peer's own result again, not the authority's: one of the two machines steps differently (with two players the authority is seat 0 by rule, right or not){detected}"
    ));
    r.notes.push(format!(
        "the states compared are both sides' states after frame {frame}"
    ));
    let states = [
        Snapshot {
            frame: frame + 1,
            bytes: own.after.clone(),
        },
        Snapshot {
            frame: frame + 1,
            bytes: state.to_vec(),
        },
    ];
    Found {
        diagnosis: Some(Diagnosis { report: r, states }),
        corrected: None,
    }
}
