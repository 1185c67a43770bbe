//! [`MatchSettings`]: how a match is played — its length, whether its
//! packets are sealed, and every seat's session, log and relay settings —
//! chosen by the host and carried to every joiner in the roster, so every
//! seat plays the host's choices (the sync test, the delays, the timeouts
//! included).
//!
//! Invariants: the roster encoding carries every match-wide field of
//! [`PeerSettings`] (a test walks every field through it); the per-process
//! fields — the seat, the seat count, the token, the keys, `rejoin` —
//! never travel: each process sets its own ([`MatchSettings::for_seat`]).

use lockstep_fx::{Sink, StateReader, StateWriter};
use lockstep_peer::{DesyncPolicy, PeerSettings};
use lockstep_protocol::{Config, InputDelay, Mode, Rollback, SeatId, Security};
use lockstep_sim::Match;

use crate::wire::MessageError;

/// How a match is played: the host's choices, which every seat plays.
/// [`MatchSettings::new`] gives the defaults; the builder methods change
/// the common ones, [`MatchSettings::peer`] is there for everything else.
/// With serde, a settings file may give any subset of the fields.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchSettings {
    /// Frames the match lasts (1 200: 20 s at 60 Hz); every seat's log
    /// holds exactly these.
    pub frames: u32,
    /// Whether every session packet is sealed (the default; off only for
    /// trusted networks and comparisons).
    pub sealed: bool,
    /// Whether the match takes an arbiter (off by default): one spectator
    /// that joins through the host asking to arbitrate
    /// ([`Want::Arbitrate`](crate::message::Want::Arbitrate), `lockstep
    /// arbiter`) steps the confirmed inputs on its own machine, and a
    /// dispute no majority and no self-check can settle (two seats, a bug
    /// that is consistent on one machine) is settled by its checksum: the
    /// seat it matches is the authority. Every seat waits for its word in
    /// a dispute (bounded), so run it where the host trusts it.
    pub arbiter: bool,
    /// Every seat's settings: the session (mode, delays, timeouts), the
    /// replay log's layout, the spectators' relay. Its per-process fields
    /// (seat, seat count, token, keys, rejoin) are ignored.
    pub peer: PeerSettings,
}

impl Default for MatchSettings {
    /// [`MatchSettings::new`] for a two-seat match at 60 Hz.
    fn default() -> MatchSettings {
        MatchSettings::new(&Match {
            seats: 2,
            seed: 0,
            tick_rate: 60,
        })
    }
}

impl MatchSettings {
    /// The defaults for `setup` (the tick from its tick rate): 1 200
    /// frames, sealed, lockstep.
    pub fn new(setup: &Match) -> MatchSettings {
        MatchSettings {
            frames: 1200,
            sealed: true,
            arbiter: false,
            peer: PeerSettings::new(setup, SeatId(0), 1),
        }
    }

    /// The match lasts `frames` frames.
    pub fn frames(mut self, frames: u32) -> MatchSettings {
        self.frames = frames;
        self
    }

    /// Packets are sealed (`true`) or travel in clear.
    pub fn sealed(mut self, sealed: bool) -> MatchSettings {
        self.sealed = sealed;
        self
    }

    /// Lockstep or rollback, with rollback's settings.
    pub fn mode(mut self, mode: Mode) -> MatchSettings {
        self.peer.session.mode = mode;
        self
    }

    /// The match takes an arbiter (see [`MatchSettings::arbiter`]).
    pub fn arbiter(mut self, arbiter: bool) -> MatchSettings {
        self.arbiter = arbiter;
        self
    }

    /// Changes anything else of every seat's settings.
    pub fn tune(mut self, change: impl FnOnce(&mut PeerSettings)) -> MatchSettings {
        change(&mut self.peer);
        self
    }

    /// The settings of seat `seat` of `setup`, played by a process with
    /// `token` and `security`; `rejoin` for a restarted process taking a
    /// dropped seat back.
    pub fn for_seat(
        &self,
        setup: &Match,
        seat: SeatId,
        token: u32,
        security: Security,
        rejoin: bool,
    ) -> PeerSettings {
        let mut p = self.peer.clone();
        p.token = token;
        p.session.seats = setup.seats;
        p.session.local = seat;
        p.session.security = security;
        p.session.rejoin = rejoin;
        p.session.match_frames = Some(self.frames);
        // The host is seat 0 and its relay serves the arbiter.
        p.session.arbiter = self.arbiter.then_some(SeatId(0));
        p.spectate.seats = setup.seats;
        p
    }

    /// Writes every match-wide field, in a fixed order.
    pub(crate) fn write<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_u32(self.frames);
        w.write_bool(self.sealed);
        w.write_bool(self.arbiter);
        write_session(w, &self.peer.session);
        let rec = &self.peer.record;
        for v in [
            rec.full_checksum_interval,
            rec.keyframe_interval,
            rec.chunk_frames,
            rec.engine.checksum_history,
            rec.engine.save_interval,
            rec.engine.saved_states_kept,
            self.peer.max_unsettled_frames,
            self.peer.state_every,
        ] {
            w.write_u32(v);
        }
        w.write_u8(match self.peer.desync_policy {
            DesyncPolicy::Stop => 0,
            DesyncPolicy::Snapshots => 1,
            DesyncPolicy::Continue => 2,
        });
        let spectate = &self.peer.spectate;
        w.write_u64(spectate.tick_micros);
        w.write_u64(spectate.hello_interval_micros);
        w.write_u64(spectate.timeout_micros);
        w.write_u32(spectate.chunks_per_tick);
        w.write_u64(spectate.chunk_rto_micros);
        w.write_u32(spectate.max_lag_frames);
        w.write_u32(spectate.max_spectators);
    }

    /// Reads what [`MatchSettings::write`] wrote for a match of `setup`.
    pub(crate) fn read(r: &mut StateReader<'_>, setup: &Match) -> Result<Self, MessageError> {
        let mut s = MatchSettings::new(setup);
        s.frames = r.read_u32()?;
        s.sealed = r.read_bool()?;
        s.arbiter = r.read_bool()?;
        read_session(r, &mut s.peer.session)?;
        let rec = &mut s.peer.record;
        for v in [
            &mut rec.full_checksum_interval,
            &mut rec.keyframe_interval,
            &mut rec.chunk_frames,
            &mut rec.engine.checksum_history,
            &mut rec.engine.save_interval,
            &mut rec.engine.saved_states_kept,
            &mut s.peer.max_unsettled_frames,
            &mut s.peer.state_every,
        ] {
            *v = r.read_u32()?;
        }
        s.peer.desync_policy = match r.read_u8()? {
            0 => DesyncPolicy::Stop,
            1 => DesyncPolicy::Snapshots,
            2 => DesyncPolicy::Continue,
            _ => return Err(MessageError::Malformed("desync policy".into())),
        };
        let spectate = &mut s.peer.spectate;
        spectate.tick_micros = r.read_u64()?;
        spectate.hello_interval_micros = r.read_u64()?;
        spectate.timeout_micros = r.read_u64()?;
        spectate.chunks_per_tick = r.read_u32()?;
        spectate.chunk_rto_micros = r.read_u64()?;
        spectate.max_lag_frames = r.read_u32()?;
        spectate.max_spectators = r.read_u32()?;
        Ok(s)
    }
}

fn write_session<S: Sink>(w: &mut StateWriter<S>, c: &Config) {
    w.write_u64(c.tick_micros);
    w.write_u16(c.initial_seq);
    w.write_u64(c.initial_delay_micros);
    w.write_bool(c.adaptive_delay);
    for v in [
        c.delay_quantile_permille,
        c.delay_margin_frames,
        c.delay_window,
        c.delay_shrink_every,
        c.max_delay_frames,
        c.max_catch_up,
        c.max_unacked_inputs,
    ] {
        w.write_u32(v);
    }
    w.write_u64(c.peer_timeout_micros);
    w.write_u64(c.disconnect_grace_micros);
    w.write_u64(c.hello_interval_micros);
    for v in [
        c.checksum_redundancy,
        c.full_checksum_every,
        c.nudge_permille,
        c.resync_max_attempts,
    ] {
        w.write_u32(v);
    }
    w.write_u64(c.resync_timeout_micros);
    for v in [
        c.resync_stable_frames,
        c.input_history_frames,
        c.chunks_per_tick,
    ] {
        w.write_u32(v);
    }
    w.write_bool(c.redundant_inputs);
    w.write_bool(c.play_on_alone);
    write_mode(w, &c.mode);
    w.write_u64(c.timing_interval_micros);
    w.write_u32(c.recurring_desyncs);
    w.write_u32(c.recurring_window_frames);
    w.write_u32(c.turn_frames);
}

fn read_session(r: &mut StateReader<'_>, c: &mut Config) -> Result<(), MessageError> {
    c.tick_micros = r.read_u64()?;
    c.initial_seq = r.read_u16()?;
    c.initial_delay_micros = r.read_u64()?;
    c.adaptive_delay = r.read_bool()?;
    for v in [
        &mut c.delay_quantile_permille,
        &mut c.delay_margin_frames,
        &mut c.delay_window,
        &mut c.delay_shrink_every,
        &mut c.max_delay_frames,
        &mut c.max_catch_up,
        &mut c.max_unacked_inputs,
    ] {
        *v = r.read_u32()?;
    }
    c.peer_timeout_micros = r.read_u64()?;
    c.disconnect_grace_micros = r.read_u64()?;
    c.hello_interval_micros = r.read_u64()?;
    for v in [
        &mut c.checksum_redundancy,
        &mut c.full_checksum_every,
        &mut c.nudge_permille,
        &mut c.resync_max_attempts,
    ] {
        *v = r.read_u32()?;
    }
    c.resync_timeout_micros = r.read_u64()?;
    for v in [
        &mut c.resync_stable_frames,
        &mut c.input_history_frames,
        &mut c.chunks_per_tick,
    ] {
        *v = r.read_u32()?;
    }
    c.redundant_inputs = r.read_bool()?;
    c.play_on_alone = r.read_bool()?;
    c.mode = read_mode(r)?;
    c.timing_interval_micros = r.read_u64()?;
    c.recurring_desyncs = r.read_u32()?;
    c.recurring_window_frames = r.read_u32()?;
    c.turn_frames = r.read_u32()?;
    Ok(())
}

/// Writes a mode: 0 for lockstep; 1, the prediction window, the sync test's
/// frames and the input delay (0 and its frames for a fixed one, 1 and its
/// bounds for an adaptive one) for rollback.
fn write_mode<S: Sink>(w: &mut StateWriter<S>, mode: &Mode) {
    match mode {
        Mode::Lockstep => w.write_u8(0),
        Mode::Rollback(r) => {
            w.write_u8(1);
            w.write_u32(r.max_prediction);
            w.write_u32(r.sync_test_frames);
            match r.input_delay {
                InputDelay::Fixed(d) => {
                    w.write_u8(0);
                    w.write_u32(d);
                }
                InputDelay::Adaptive { min, max } => {
                    w.write_u8(1);
                    w.write_u32(min);
                    w.write_u32(max);
                }
            }
        }
    }
}

fn read_mode(r: &mut StateReader<'_>) -> Result<Mode, MessageError> {
    let bad = || MessageError::Malformed("mode".into());
    Ok(match r.read_u8()? {
        0 => Mode::Lockstep,
        1 => {
            let max_prediction = r.read_u32()?;
            let sync_test_frames = r.read_u32()?;
            let input_delay = match r.read_u8()? {
                0 => InputDelay::Fixed(r.read_u32()?),
                1 => InputDelay::Adaptive {
                    min: r.read_u32()?,
                    max: r.read_u32()?,
                },
                _ => return Err(bad()),
            };
            Mode::Rollback(Rollback {
                max_prediction,
                input_delay,
                sync_test_frames,
            })
        }
        _ => return Err(bad()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> Match {
        Match {
            seats: 4,
            seed: 5,
            tick_rate: 30,
        }
    }

    fn round_trip(s: &MatchSettings) -> MatchSettings {
        let mut w = StateWriter::buffer();
        s.write(&mut w);
        let mut r = StateReader::new(w.bytes());
        let back = MatchSettings::read(&mut r, &setup()).unwrap();
        r.finish().unwrap();
        back
    }

    /// Fields each process sets for itself: they never travel.
    const PER_PROCESS: [&str; 6] = [
        "peer.token",
        "peer.session.seats",
        "peer.session.local",
        "peer.session.rejoin",
        "peer.session.match_frames",
        "peer.spectate.seats",
    ];

    /// Every leaf of the settings (as serde sees them) with its path.
    fn leaves(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(&path, v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }

    fn leaf_mut<'a>(v: &'a mut toml::Value, path: &str) -> &'a mut toml::Value {
        path.split('.').fold(v, |v, k| &mut v[k])
    }

    /// Walks every field serde knows, changes it alone, and checks that the
    /// roster encoding carries the change: a field added to the settings
    /// and forgotten in the encoding fails here.
    #[test]
    fn the_roster_carries_every_match_wide_field() {
        let base = MatchSettings::new(&setup()).mode(Mode::Rollback(Rollback {
            max_prediction: 7,
            input_delay: InputDelay::Adaptive { min: 1, max: 9 },
            sync_test_frames: 3,
        }));
        let tree = toml::Value::try_from(&base).unwrap();
        let mut paths = Vec::new();
        leaves("", &tree, &mut paths);
        assert!(paths.len() > 30, "{paths:?}");
        for path in paths {
            if PER_PROCESS.contains(&path.as_str()) {
                continue;
            }
            let mut changed = tree.clone();
            let leaf = leaf_mut(&mut changed, &path);
            *leaf = match leaf {
                toml::Value::Integer(i) => toml::Value::Integer(*i + 1),
                toml::Value::Boolean(b) => toml::Value::Boolean(!*b),
                // The desync policy: another one.
                toml::Value::String(p) if p == "stop" => toml::Value::String("continue".into()),
                toml::Value::String(_) => toml::Value::String("stop".into()),
                other => panic!("{path}: a leaf of an unexpected kind {other:?}"),
            };
            let changed: MatchSettings = changed.try_into().unwrap();
            assert_ne!(changed, base, "{path}");
            assert_eq!(round_trip(&changed), changed, "{path} does not travel");
        }
    }

    #[test]
    fn every_mode_travels() {
        for mode in [
            Mode::Lockstep,
            Mode::ROLLBACK,
            Mode::Rollback(Rollback {
                input_delay: InputDelay::Fixed(4),
                ..Rollback::DEFAULT
            }),
        ] {
            let s = MatchSettings::new(&setup()).mode(mode);
            assert_eq!(round_trip(&s), s);
        }
    }

    #[test]
    fn a_settings_file_may_give_any_subset() {
        let s: MatchSettings =
            toml::from_str("frames = 600\n[peer.session]\npeer_timeout_micros = 5000000\n")
                .unwrap();
        assert_eq!(s.frames, 600);
        assert_eq!(s.peer.session.peer_timeout_micros, 5_000_000);
        assert!(s.sealed);
        assert!(toml::from_str::<MatchSettings>("framez = 1").is_err());
    }

    #[test]
    fn a_seat_gets_its_own_fields() {
        let s = MatchSettings::new(&setup()).frames(90);
        let p = s.for_seat(&setup(), SeatId(3), 77, Security::Plain, true);
        assert_eq!(p.session.local, SeatId(3));
        assert_eq!(p.session.seats, 4);
        assert_eq!(p.spectate.seats, 4);
        assert_eq!(p.token, 77);
        assert!(p.session.rejoin);
        assert_eq!(p.session.match_frames, Some(90));
    }
}
