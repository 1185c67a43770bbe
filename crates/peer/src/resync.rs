//! A peer's side of exact resync: serving its state to a drifted seat
//! (the state after the newest frame it reported, which the session
//! verifies against that checksum) and loading the authority's state when
//! it drifted itself — diagnosing the desync first, re-simulating the
//! frames it holds since, and keeping the match's checksums of the frames
//! it got wrong for its replay log.
//!
//! Invariant: a loaded state replaces the engine and the history from its
//! frame on; nothing stepped before the load survives it.

use std::io::Write;

use lockstep_fx::Checksum;
use lockstep_protocol::Instant;
use lockstep_sim::Game;
use lockstep_sim::replay::Note;

use crate::diagnose::{Sides, diagnose};
use crate::event::PeerEvent;
use crate::history::RecordingError;
use crate::peer::Peer;

impl<G: Game, W: Write> Peer<G, W> {
    pub(crate) fn serve_state(&mut self, now: Instant) {
        let Some(frame) = self.session.newest_reported() else {
            return;
        };
        let Some(state) = self.history.state_after(frame) else {
            return;
        };
        self.state_requested = false;
        match self.session.provide_state(now, frame, &state.state) {
            Ok(()) => self.stats.states_served += 1,
            // A state rebuilt unlike the one this peer had (its game is not
            // deterministic) is refused: the requester asks again.
            Err(_) => self.stats.refused_calls += u64::from(state.faithful),
        }
    }

    /// The frames this peer got wrong before its last heal, from the first
    /// one through the loaded frame, with the match's checksums of them
    /// (the authority's), which its replay log records instead of its own.
    pub fn healed_checksums(&self) -> Option<(u32, &[Checksum])> {
        self.healed.as_ref().map(|(f, c)| (*f, &c[..]))
    }

    pub(crate) fn load(&mut self, frame: u32, state: Vec<u8>, checks: &[Checksum]) {
        let checksum = Checksum::of(&state);
        let sides = Sides {
            local: self.seat(),
            authority: self.desync.and_then(|(_, a)| a),
            desync_frame: self.desync.map(|(f, _)| f),
        };
        // Frames stepped on predictions are no evidence either way.
        let found = if frame < self.session.confirmed_before() {
            diagnose::<G>(&self.history, &sides, frame, &state, checks)
        } else {
            crate::diagnose::Found::nothing()
        };
        if let Some((f, first, again)) = found.not_deterministic {
            self.stats.nondeterministic_frames += 1;
            self.events.push_back(PeerEvent::NotDeterministic {
                frame: f,
                first,
                again,
            });
        }
        let game = match G::decode(&state) {
            Ok(g) => g,
            Err(e) => {
                // The session verified the bytes against the authority's
                // checksum: a state that still does not decode is the
                // authority's bug; keep playing on our own state.
                self.stats.refused_calls += 1;
                self.events.push_back(PeerEvent::RecordingStopped {
                    frame,
                    reason: format!("the authority's state does not decode: {e}"),
                });
                return;
            }
        };
        let mut first_wrong = None;
        if let Some(corrected) = found.corrected {
            // The diagnosis re-simulated these frames from the last settled
            // state and reproduced the authority's: they are the history.
            first_wrong = self
                .history
                .open()
                .zip(&corrected)
                .find(|(s, (c, _))| s.checksum != *c)
                .map(|(s, _)| s.frame);
            for (s, (checksum, _)) in self.history.open().zip(&corrected) {
                self.events.push_back(PeerEvent::Stepped {
                    frame: s.frame,
                    checksum: *checksum,
                    resimulated: true,
                    predicted: false,
                });
            }
            self.stats.frames_resimulated += corrected.len() as u64;
            self.history.correct(corrected);
        }
        // The authority's checksums of the frames this peer may have got
        // wrong are the match's: its log records those, not its own.
        let first_taken = self.history.take_checks(frame, checks);
        self.healed = first_taken.map(|first| {
            let skip = checks.len() - (frame + 1 - first) as usize;
            (first, checks[skip..].to_vec())
        });
        // The log says which frames were healed: what it holds of them is
        // the match's trajectory, not what this seat first computed.
        let first = match (first_wrong, first_taken) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if self.recording.is_some() && frame < self.session.confirmed_before() {
            self.note(&Note::Healed {
                first: first.unwrap_or(frame).min(frame),
                loaded: frame,
            });
        }
        if frame + 1 < self.history.base_frame() || frame >= self.history.next_frame() {
            // A state this peer's history does not reach: the log cannot
            // follow (frames were skipped or already settled).
            self.stop_recording(RecordingError {
                frame: self.history.next_frame().min(frame + 1),
                reason: format!(
                    "loaded the state after frame {frame}, outside the unsettled frames {}..{}",
                    self.history.base_frame(),
                    self.history.next_frame()
                ),
            });
            self.history.restart_at(frame + 1, &state);
        } else {
            self.history.load(frame, checksum, &state);
        }
        self.restart_engine(game, frame + 1);
        self.touched = false;
        self.desync = None;
        self.stats.states_loaded += 1;
        self.stats.state_bytes_loaded += state.len() as u64;
        if let Some(d) = &found.diagnosis {
            self.heals.record(d);
        }
        self.events.push_back(PeerEvent::Healed {
            frame,
            state_bytes: state.len() as u64,
            diagnosis: found.diagnosis.map(Box::new),
        });
        if let Some(s) = &mut self.snapshots {
            s.fallback.on_healed(frame);
        }
    }
}
