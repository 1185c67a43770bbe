//! Live desync diagnosis, by re-simulation: stepping the unsettled frames
//! again from the last state every seat agreed on, with the inputs
//! recorded, ignoring any change the app made to the game between frames
//! (the simulation's own result).
//!
//! - [`self_check`]: a disputed seat's evidence about itself. A seat whose
//!   second run of the disputed frames disagrees with its first run is at
//!   fault, whatever the other seats hold: its game read something other
//!   than its state and inputs (a hash map's order, an uninitialised
//!   field, a clock), or the app changed its state outside the simulation.
//! - [`diagnose`]: when the authority's exact state after frame `F`
//!   reaches a drifted seat, which frame, entities and fields it got wrong,
//!   and why. If the re-simulation reproduces the authority's state, this
//!   seat's first run went wrong: a change the app made ([`Peer::game_mut`](crate::Peer::game_mut))
//!   explains it when one was recorded; otherwise the frames are stepped a
//!   second time, and only if the two re-runs agree (the simulation is
//!   self-consistent) is the first run's difference called a change
//!   outside the simulation; if they disagree, the game is not
//!   deterministic. If the re-simulation gives this seat's own result
//!   again, the two machines step differently; the report then names the
//!   first frame whose checksums differ (from the authority's checksums
//!   that come with its state).
//! - [`compare`]: a dispute nobody could be blamed for: this seat's state
//!   and another's after the same frame, side by side.
//!
//! Invariants: every re-simulation starts from a state every seat agreed
//! on (the history's base) and uses only the recorded inputs; nothing here
//! changes the running game or the history.

use std::collections::BTreeMap;

use lockstep_fx::Checksum;
use lockstep_protocol::{SeatId, SelfCheck};
use lockstep_sim::desync::{DesyncReport, Diagnosis, SideState};
use lockstep_sim::{Game, SavedState};

use crate::history::History;

/// What the diagnosis of a load found.
pub(crate) struct Found {
    /// The report, if the history covered the loaded frame.
    pub diagnosis: Option<Diagnosis>,
    /// The corrected results of the open frames through the loaded frame
    /// (states where the history keeps them), when the re-simulation
    /// reproduced the authority's state.
    pub corrected: Option<Vec<(Checksum, Option<SavedState>)>>,
    /// A frame two re-runs stepped differently: the game is not
    /// deterministic (with both checksums).
    pub not_deterministic: Option<(u32, Checksum, Checksum)>,
}

impl Found {
    /// No diagnosis and no correction.
    pub fn nothing() -> Found {
        Found {
            diagnosis: None,
            corrected: None,
            not_deterministic: None,
        }
    }
}

/// Who is who, for the report.
pub(crate) struct Sides {
    pub local: SeatId,
    pub authority: Option<SeatId>,
    pub desync_frame: Option<u32>,
}

/// One pure re-run of frames `start..=through` from the base state.
struct Run {
    /// The checksum after each frame, from `start` on.
    checksums: Vec<Checksum>,
    /// The states after the frames asked for.
    states: BTreeMap<u32, Vec<u8>>,
}

/// Steps the open frames `base..=through` again from the base state,
/// ignoring the app's changes, keeping the states after the frames `keep`
/// selects. `None` if the history does not hold them or the base state
/// cannot be rebuilt as it was agreed.
fn run<G: Game>(history: &History<G>, through: u32, keep: impl Fn(u32) -> bool) -> Option<Run> {
    let start = history.base_frame();
    if through < start || history.newest().is_none_or(|(n, _)| n < through) {
        return None;
    }
    let base = history.base_state().filter(|b| b.faithful)?;
    let mut engine = history.engine_at(G::decode(&base.state).ok()?, start);
    let mut out = Run {
        checksums: Vec::new(),
        states: BTreeMap::new(),
    };
    for s in history.open().take_while(|s| s.frame <= through) {
        if keep(s.frame) {
            let (c, after) = engine.advance_saving(&s.inputs);
            out.checksums.push(c);
            out.states.insert(s.frame, after.bytes);
        } else {
            out.checksums.push(engine.advance(&s.inputs));
        }
    }
    Some(out)
}

/// What a self-check found.
pub(crate) struct Checked {
    /// The finding.
    pub check: SelfCheck,
    /// The first run's and the second run's checksum of the first frame
    /// that differed.
    pub again: Option<(Checksum, Checksum)>,
}

/// A disputed seat's evidence about itself: steps the frames from the
/// last agreed state through `through` again and compares each checksum
/// with its first run's.
pub(crate) fn self_check<G: Game>(history: &History<G>, through: u32) -> Checked {
    let Some(r) = run(history, through, |_| false) else {
        return Checked {
            check: SelfCheck::Unknown,
            again: None,
        };
    };
    let first = history
        .open()
        .zip(&r.checksums)
        .find(|(s, c)| s.checksum != **c)
        .map(|(s, c)| (s.frame, s.checksum, *c));
    match first {
        Some((frame, a, b)) => Checked {
            check: SelfCheck::Inconsistent { frame },
            again: Some((a, b)),
        },
        None => Checked {
            check: SelfCheck::Consistent,
            again: None,
        },
    }
}

/// Whether any open frame through `through` holds a change the app made:
/// the first such frame.
pub(crate) fn touched_through<G: Game>(history: &History<G>, through: u32) -> Option<u32> {
    history
        .open()
        .take_while(|s| s.frame <= through)
        .find(|s| s.touched.is_some())
        .map(|s| s.frame)
}

fn inputs_of<G: Game>(history: &History<G>, frame: u32) -> Vec<String> {
    history
        .get(frame)
        .map(|s| s.inputs.iter().map(|i| format!("{i:?}")).collect())
        .unwrap_or_default()
}

fn who(seat: Option<SeatId>, what: &str) -> String {
    match seat {
        Some(s) => format!("seat {} ({what})", s.0),
        None => what.to_string(),
    }
}

/// Diagnoses the load of `state`, the authority's state after `frame`;
/// `checks` are the authority's checksums of the frames up to `frame`
/// (oldest first), as the heal brought them.
pub(crate) fn diagnose<G: Game>(
    history: &History<G>,
    sides: &Sides,
    frame: u32,
    state: &[u8],
    checks: &[Checksum],
) -> Found {
    let start = history.base_frame();
    let Some(base) = history.base_state().filter(|b| b.faithful) else {
        return Found::nothing();
    };
    // What the history keeps, and the frame the report will look at.
    let every = history.settings().state_every;
    let recent_from = history
        .next_frame()
        .saturating_sub(history.settings().recent);
    let touched = touched_through(history, frame);
    let keep = |f: u32| {
        (f + 1) % every == 0
            || f >= recent_from
            || f == frame
            || touched.is_some_and(|t| f + 1 == t || f == t)
    };
    let Some(first) = run(history, frame, keep) else {
        return Found::nothing();
    };
    let authority = Checksum::of(state);
    let reproduced = first.checksums.last() == Some(&authority);
    let sources = [
        who(Some(sides.local), "this peer"),
        who(sides.authority, "the authority"),
    ];
    let detected = sides
        .desync_frame
        .map(|d| format!("; the checksum exchange first saw a difference at frame {d}"))
        .unwrap_or_default();
    let resim_after = |f: u32| -> Option<&[u8]> {
        if f + 1 == start {
            Some(&base.state)
        } else {
            first.states.get(&f).map(Vec::as_slice)
        }
    };
    if reproduced {
        let corrected: Vec<(Checksum, Option<SavedState>)> = history
            .open()
            .take_while(|s| s.frame <= frame)
            .zip(&first.checksums)
            .map(|(s, c)| {
                let after = first.states.get(&s.frame).map(|b| SavedState {
                    frame: s.frame + 1,
                    bytes: b.clone(),
                });
                (*c, after)
            })
            .collect();
        let mismatch = history
            .open()
            .zip(&first.checksums)
            .find(|(s, c)| s.checksum != **c)
            .map(|(s, _)| s.frame);
        let mut found = Found {
            diagnosis: None,
            corrected: Some(corrected),
            not_deterministic: None,
        };
        if let Some(t) = touched {
            // The app changed the state: that is the explanation.
            let recorded_before = history
                .get(t)
                .and_then(|s| s.touched.clone())
                .unwrap_or_default();
            let resim_before = resim_after(t.wrapping_sub(1)).unwrap_or(&[]).to_vec();
            let resim = resim_after(t).unwrap_or(&[]);
            let recorded = history.state_after(t).map(|r| r.state).unwrap_or_default();
            let checksums = [
                history.get(t).map_or(authority, |s| s.checksum),
                first.checksums[(t - start) as usize],
            ];
            let mut r = report::<G>(
                history,
                &sources,
                t,
                checksums,
                Some([&recorded_before, &resim_before]),
                [side(&recorded, checksums[0]), side(resim, checksums[1])],
            );
            r.sources[1] = format!("{} (re-simulated here from frame {start})", sources[1]);
            r.notes.push(format!(
                "re-simulating frames {start}..={frame} from the last agreed state reproduces the authority's state after frame {frame}; this peer's state was changed outside the simulation by the app before frame {t} (the change is the difference in the states before it){detected}"
            ));
            found.diagnosis = Some(Diagnosis {
                report: r,
                states: [
                    SavedState {
                        frame: t,
                        bytes: recorded_before,
                    },
                    SavedState {
                        frame: t,
                        bytes: resim_before,
                    },
                ],
            });
            return found;
        }
        let Some(m) = mismatch else {
            return found;
        };
        // No change by the app: step the frames a second time. Only a
        // self-consistent simulation makes the first run's difference a
        // change from outside it.
        let second = run(history, frame, |_| false);
        let again = second.as_ref().and_then(|s| {
            s.checksums
                .iter()
                .zip(&first.checksums)
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| (start + i as u32, *b, *a))
        });
        let own = history.get(m).map_or(authority, |s| s.checksum);
        let own_after = history
            .state_after(m)
            .filter(|r| r.faithful)
            .map(|r| r.state);
        let resim = resim_after(m).map(<[u8]>::to_vec);
        let resim_m = first.checksums[(m - start) as usize];
        let (after_left, after_right, at, checked) = match (own_after, resim) {
            (Some(o), Some(r)) => (o, r, m, [own, resim_m]),
            _ => (
                history
                    .state_after(frame)
                    .map(|r| r.state)
                    .unwrap_or_default(),
                state.to_vec(),
                frame,
                [
                    history.get(frame).map_or(authority, |s| s.checksum),
                    authority,
                ],
            ),
        };
        let mut r = report::<G>(
            history,
            &sources,
            m,
            [own, resim_m],
            None,
            [
                side(&after_left, checked[0]),
                side(&after_right, checked[1]),
            ],
        );
        r.sources[1] = format!("{} (re-simulated here from frame {start})", sources[1]);
        match again {
            None => r.notes.push(format!(
                "re-simulating frames {start}..={frame} from the last agreed state, twice, gives the authority's state after frame {frame} both times; this peer's first run of frame {m} differs: its state was changed outside the simulation (memory corruption, or code writing game state between frames){detected}"
            )),
            Some((f, a, b)) => {
                r.notes.push(format!(
                    "re-simulating frames {start}..={frame} from the last agreed state reproduces the authority's state, but a second re-run steps frame {f} differently from the first: the game is not deterministic (it reads something other than its state and inputs: a hash map's order, an uninitialised field, a clock){detected}"
                ));
                found.not_deterministic = Some((f, a, b));
            }
        }
        if at != m {
            r.notes.push(format!(
                "the states compared are this peer's and the authority's after frame {at}"
            ));
        }
        found.diagnosis = Some(Diagnosis {
            report: r,
            states: [
                SavedState {
                    frame: at + 1,
                    bytes: after_left,
                },
                SavedState {
                    frame: at + 1,
                    bytes: after_right,
                },
            ],
        });
        return found;
    }
    // The re-simulation gives this seat's own result: the machines step
    // differently. Name the first frame whose checksums differ.
    let Some(own) = history.get(frame).map(|s| s.checksum) else {
        return Found::nothing();
    };
    let own_state = history
        .state_after(frame)
        .map(|r| r.state)
        .unwrap_or_default();
    let first_diff = first_differing(history, frame, checks);
    let (d, checksums) = match first_diff {
        Some((d, mine, theirs)) => (d, [mine, theirs]),
        None => (frame, [own, authority]),
    };
    let mut r = report::<G>(
        history,
        &sources,
        d,
        checksums,
        None,
        [side(&own_state, own), side(state, authority)],
    );
    r.notes.push(format!(
        "re-simulating frames {start}..={frame} from the last agreed state gives this peer's own result again, not the authority's: the two machines step differently{detected}"
    ));
    r.notes.push(format!(
        "the states compared are both sides' states after frame {frame}"
    ));
    Found {
        diagnosis: Some(Diagnosis {
            report: r,
            states: [
                SavedState {
                    frame: frame + 1,
                    bytes: own_state,
                },
                SavedState {
                    frame: frame + 1,
                    bytes: state.to_vec(),
                },
            ],
        }),
        corrected: None,
        not_deterministic: None,
    }
}

/// The first frame through `last` whose checksum in the history differs
/// from the authority's in `checks` (which end at `last`), with both.
fn first_differing<G: Game>(
    history: &History<G>,
    last: u32,
    checks: &[Checksum],
) -> Option<(u32, Checksum, Checksum)> {
    let first = (last + 1).checked_sub(checks.len() as u32)?;
    checks.iter().enumerate().find_map(|(i, theirs)| {
        let f = first + i as u32;
        let mine = history.get(f)?.checksum;
        (mine != *theirs).then_some((f, mine, *theirs))
    })
}

/// A dispute nobody could be blamed for: this seat's state after `frame`
/// beside `other`'s, received from seat `from` (or why it did not come).
/// Every disputed seat stepped the frames again and got its own result
/// again, so the states should be the ones each checksummed; the report
/// says so where one is not.
pub(crate) fn compare<G: Game>(
    history: &History<G>,
    local: SeatId,
    from: SeatId,
    frame: u32,
    other: Result<&[u8], &str>,
) -> Diagnosis {
    let own = history.state_after(frame);
    let own_checksum = history.get(frame).map(|s| s.checksum);
    let other_checksum = other.ok().map(Checksum::of);
    let shown =
        |c: Option<Checksum>| c.map_or_else(|| "not known here".to_string(), |c| c.to_string());
    let sources = [
        who(Some(local), "this seat"),
        who(Some(from), "the other seat"),
    ];
    let mut r = DesyncReport::new(
        G::ID,
        sources,
        frame,
        [shown(own_checksum), shown(other_checksum)],
        inputs_of(history, frame),
    );
    let own_bytes: Result<&[u8], &str> = match &own {
        Some(o) => Ok(&o.state),
        None => Err("this seat no longer holds it"),
    };
    r.compare_after::<G>([
        SideState {
            bytes: own_bytes,
            checksummed: own_checksum,
        },
        SideState {
            bytes: other,
            checksummed: None,
        },
    ]);
    r.notes.push(format!(
        "cannot tell which seat drifted: every disputed seat stepped the frames from the last agreed state through frame {frame} again and got its own result again, so no seat's state was taken over another's; the match is invalid"
    ));
    if r.after_compared {
        r.notes.push(format!(
            "the states compared are both seats' states after frame {frame}"
        ));
    }
    let saved = |bytes: &[u8]| SavedState {
        frame: frame + 1,
        bytes: bytes.to_vec(),
    };
    Diagnosis {
        report: r,
        states: [
            saved(own_bytes.unwrap_or_default()),
            saved(other.unwrap_or_default()),
        ],
    }
}

/// A side of a report: `bytes`, which its run checksummed as `checksum`
/// (an empty state: not at hand).
fn side(bytes: &[u8], checksum: Checksum) -> SideState<'_> {
    SideState {
        bytes: if bytes.is_empty() {
            Err("not held here")
        } else {
            Ok(bytes)
        },
        checksummed: Some(checksum),
    }
}

fn report<G: Game>(
    history: &History<G>,
    sources: &[String; 2],
    frame: u32,
    checksums: [Checksum; 2],
    before: Option<[&[u8]; 2]>,
    after: [SideState<'_>; 2],
) -> DesyncReport {
    let mut r = DesyncReport::new(
        G::ID,
        sources.clone(),
        frame,
        checksums.map(|c| c.to_string()),
        inputs_of(history, frame),
    );
    if let Some(b) = before.filter(|b| !b[0].is_empty() && !b[1].is_empty()) {
        r.compare_before::<G>(b);
    }
    r.compare_after::<G>(after);
    r
}
