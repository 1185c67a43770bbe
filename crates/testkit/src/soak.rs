//! Soak matches: a seeded stream of varied matches, each played by
//! [`mesh::run`] and judged. [`plan`] draws a match from its seed — either
//! game, lockstep or rollback (fixed or adaptive input delay), 2 to 4
//! seats of cubes or 2 to 8 of the RTS, a network anywhere from calm to
//! 2 s round trips with 25% loss, jitter, duplication, reordering and
//! (sealed) corrupted datagrams, every seat's clock set apart, in about a
//! third of the matches a bit flipped in one seat's state (any seat: none
//! is the authority by number), in half of the others with a round trip
//! under a second a membership fault: a seat paused for half a second to
//! twelve (as by SIGSTOP), or the network split in two for as long, the
//! process of a seat that lost the quorum restarting to take its seat back
//! — and in a quarter of the rest a recurring nondeterminism in one seat's
//! game ([`Faulty`], self-consistent or not), half of those with an
//! arbiter (a spectator joined through a random seat's relay) — and
//! [`play`] plays it and says what went wrong.
//!
//! A match passes when [`verdict::check`] passes (no two processes part
//! without saying so: every frame both vouch for agreed, every log whole,
//! verifying and agreeing with every other, a short log only where its
//! process stopped), no frame stepped twice from one state gave two
//! checksums (unless the game was made nondeterministic), no call was
//! refused, every desync reported was a real one (reported only after a
//! flip or a fault, with that seat among the drifted), no seat but the
//! flipped or faulty one loaded another's state, and no seat is stranded:
//! every seat that stopped came back, and some seat played to the end —
//! except in a match found invalid (a fault only), where every seat stopped
//! with `MatchInvalid`.
//!
//! Invariant: a match is a pure function of its seed; the games are small
//! (25 cubes, or 8 units a seat) so thousands of matches fit in minutes.

use lockstep_fx::Rng;
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{PeerEvent, SpectatorEvent, StopReason};
use lockstep_protocol::{InputDelay, Mode, Rollback, SeatId, SeatSet};
use lockstep_sim::Game;

use crate::faulty::{Fault, Faulty, Recurring};
use crate::mesh::{self, Flip, Partition, Pause, Run, Scenario};
use crate::netsim::{LinkConfig, Loss, Transport};
use crate::verdict::{self, Failure};

/// Which game a soak match plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoakGame {
    /// The cube demo on a 5 × 5 field.
    Cubes,
    /// The RTS with 8 units a seat.
    Rts,
}

/// A drawn match.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The game.
    pub game: SoakGame,
    /// The scenario (mode in `session.mode`).
    pub scenario: Scenario,
}

impl Plan {
    /// Whether it plays rollback.
    pub fn rollback(&self) -> bool {
        matches!(self.scenario.session.mode, Mode::Rollback(_))
    }
}

/// What a soak match did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The match.
    pub plan: Plan,
    /// The verdict's failure, if any.
    pub failure: Option<Failure>,
    /// Desync reports (one per seat that saw one).
    pub desyncs: u32,
    /// Desync reports that were not real (see the module doc).
    pub false_reports: u32,
    /// Whether the planned flip happened.
    pub flipped: bool,
    /// States loaded to heal a desync.
    pub healed: u32,
    /// The longest time a seat spent from learning it drifted to loading
    /// the authority's state, in microseconds.
    pub longest_heal_micros: u64,
    /// Frames that gave two checksums from one state.
    pub nondeterministic: u64,
    /// Calls a peer's session refused.
    pub refused_calls: u64,
    /// Frames stepped on predictions, over all seats.
    pub frames_predicted: u64,
    /// Frames stepped again after rollbacks, over all seats.
    pub frames_rolled_back: u64,
    /// Frames confirmed by every seat.
    pub frames: u32,
    /// Virtual time the match took, in microseconds.
    pub micros: u64,
    /// Processes that stopped because their seat lost the quorum.
    pub lost_quorum: u32,
    /// Processes restarted that took their seat back.
    pub rejoined: u32,
    /// Seats that played alone, unchecked, for a while.
    pub alone: u32,
    /// Seats whose last process stopped and never came back, or every
    /// seat when none played to the end (not counting a match found
    /// invalid).
    pub stranded: u32,
    /// Whether the match was found invalid (a seat stopped with
    /// `MatchInvalid`).
    pub invalid: bool,
    /// Seats still playing at the end of a match found invalid (every one
    /// must have stopped).
    pub not_stopped: u32,
    /// Virtual time from the first desync to the last seat's stop, in
    /// microseconds (0 unless found invalid).
    pub invalid_after_micros: u64,
    /// Seats that loaded another's state though neither flipped nor faulty
    /// (an honest seat overwritten).
    pub overwritten: u32,
    /// The most bytes of game states any seat's unsettled history held at
    /// once (the match's peak live state bytes).
    pub peak_state_bytes: u64,
    /// Disputes the match's arbiter answered with its checksum.
    pub arbiter_answers: u32,
}

impl Outcome {
    /// Whether the match passed.
    pub fn passed(&self) -> bool {
        let faulty = self.plan.scenario.fault.is_some();
        self.failure.is_none()
            && self.false_reports == 0
            && (self.nondeterministic == 0 || faulty)
            && self.refused_calls == 0
            && self.stranded == 0
            && self.overwritten == 0
            && self.not_stopped == 0
            && (!self.invalid || faulty)
    }
}

/// Frames every soak match plays.
pub const FRAMES: u32 = 360;

/// The cubes of a soak match.
pub fn cubes_config() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

/// The RTS of a soak match.
pub fn rts_config() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 8;
    c
}

/// Draws match `seed`.
pub fn plan(seed: u64) -> Plan {
    let mut rng = Rng::new(seed, 0x736f_616b);
    let game = if rng.chance(1, 2) {
        SoakGame::Cubes
    } else {
        SoakGame::Rts
    };
    // The cube demo seats up to 4, the RTS up to 8.
    let seats = match game {
        SoakGame::Cubes => 2 + rng.below(3) as u8,
        SoakGame::Rts => 2 + rng.below(7) as u8,
    };
    // Round trips from 10 ms to 2 s, with a bias to the playable range.
    let rtt_ms = match rng.below(4) {
        0 => 10 + u64::from(rng.below(90)),
        1 => 100 + u64::from(rng.below(150)),
        2 => 250 + u64::from(rng.below(750)),
        _ => 1000 + u64::from(rng.below(1001)),
    };
    let loss_ppm = match rng.below(3) {
        0 => 0,
        1 => rng.below(50_001),
        _ => rng.below(250_001),
    };
    let link = LinkConfig {
        latency_micros: rtt_ms * 500,
        jitter_micros: u64::from(rng.below(100_001)),
        loss: if loss_ppm == 0 {
            Loss::None
        } else if rng.chance(1, 3) {
            Loss::bursty(loss_ppm, 1 + rng.below(4))
        } else {
            Loss::Random(loss_ppm)
        },
        duplicate_ppm: rng.below(50_001),
        reorder_ppm: rng.below(50_001),
        reorder_micros: 50_000,
        corrupt_ppm: rng.below(10_001),
        mtu: 1200,
        transport: Transport::Datagram,
    };
    let mut s = Scenario::new(seats, seed, link, FRAMES);
    s.session.mode = if rng.chance(1, 2) {
        Mode::Lockstep
    } else {
        let input_delay = if rng.chance(1, 2) {
            InputDelay::Adaptive { min: 0, max: 60 }
        } else {
            InputDelay::Fixed(rng.below(5))
        };
        Mode::Rollback(Rollback {
            input_delay,
            ..Rollback::DEFAULT
        })
    };
    s.sealed = rng.chance(3, 4);
    if !s.sealed {
        // A plain session leaves integrity to UDP's own checksum, which
        // catches every flipped bit; only a sealed one is handed
        // corrupted datagrams (its tags catch them).
        s.link.corrupt_ppm = 0;
    }
    s.clock_offsets = (0..seats)
        .map(|_| u64::from(rng.below(60_000_000)))
        .collect();
    if rng.chance(1, 3) {
        // Any seat: no seat is the authority by number, so a corrupted
        // seat 0 of two is found out by its own second run and healed.
        let seat = rng.below(u32::from(seats)) as u8;
        s.flip = Some(Flip {
            seat: SeatId(seat),
            frame: 30 + rng.below(FRAMES / 3),
            entity: format!("body {}", 1 + rng.below(8)),
            field: "position".into(),
            bit: 16 + rng.below(16),
            repeat: false,
        });
    }
    // Membership faults: a seat paused, or the network split in two, from
    // half a second (no seat dropped) to twelve (the minority stops,
    // restarts and takes its seat back). Not with a flip, so that each
    // fault is judged on its own. Nor over round trips of a second or
    // more: a restarted process then needs about two round trips to hear
    // from its peers, longer than the 2 s silence timeout and the 3 s of
    // unacked inputs they allow it, and the seats coming back are dropped
    // again and again (a known limit of taking a seat back).
    let fault = rng.below(4);
    if fault < 2 && s.flip.is_none() && rtt_ms < 1000 {
        let frame = 60 + rng.below(FRAMES / 2);
        let micros = 500_000 + u64::from(rng.below(11_500_001));
        if fault == 0 {
            s.pause = Some(Pause {
                seat: SeatId(rng.below(u32::from(seats)) as u8),
                frame,
                micros,
            });
        } else {
            // A side that is neither empty nor every seat.
            let side = 1 + rng.below((1u32 << seats) - 2);
            s.partition = Some(Partition {
                side: SeatSet(side as u8),
                frame,
                micros,
            });
        }
        s.restart_stopped = true;
    }
    // A game that is not deterministic on one seat, now and then: healed
    // while it can be, and the match found invalid when it keeps drifting
    // (or nobody can be blamed). Drawn last, alone with no other fault.
    if s.flip.is_none() && s.pause.is_none() && s.partition.is_none() && rng.chance(1, 4) {
        s.fault = Some(Fault {
            seat: rng.below(u32::from(seats)) as u8,
            kind: if rng.chance(1, 2) {
                Recurring::SelfConsistent
            } else {
                Recurring::SelfInconsistent
            },
            from_frame: 30 + rng.below(120),
            every: 20 + rng.below(70),
            // Not after the frames the match must settle: a fault the run
            // ends before detecting would be judged unhealed.
            until_frame: FRAMES,
        });
        if rng.chance(1, 2) {
            let relay = SeatId(rng.below(u32::from(seats)) as u8);
            s.spectate = Some((relay, 5 + rng.below(20)));
            s.session.arbiter = Some(relay);
        }
    }
    // Played on until every seat compared the last frame clean, so a
    // desync near the end is given the time to heal; a match that cannot
    // get there within ten minutes of virtual time has failed.
    s.settle = true;
    s.max_micros = 600_000_000;
    Plan {
        seed,
        game,
        scenario: s,
    }
}

/// Plays and judges `plan`.
pub fn play(plan: &Plan) -> Outcome {
    match plan.game {
        SoakGame::Cubes => judge::<Faulty<Cubes>>(plan, &cubes_config()),
        SoakGame::Rts => judge::<Faulty<Rts>>(plan, &rts_config()),
    }
}

fn judge<G: Demo>(plan: &Plan, config: &G::Config) -> Outcome {
    let s = &plan.scenario;
    let run: Run = mesh::run::<G>(s, config);
    let failure = verdict::check::<G>(&run, FRAMES).err();
    let flipped = run.flipped_at.is_some();
    // The seat whose state or game goes wrong: the only one that may
    // drift and load another's state.
    let culprit = s
        .flip
        .as_ref()
        .filter(|_| flipped)
        .map(|f| f.seat)
        .or(s.fault.map(|f| SeatId(f.seat)));
    let reports = run.events(|e| match e {
        PeerEvent::Desync { drifted, .. } => Some(*drifted),
        _ => None,
    });
    let false_reports = reports
        .iter()
        .filter(|(_, _, drifted)| !culprit.is_some_and(|c| drifted.contains(c)))
        .count() as u32;
    let overwritten = run
        .processes()
        .filter(|(seat, p)| p.stats.states_loaded > 0 && culprit != Some(*seat) && !p.rejoined)
        .count() as u32;
    let invalid = run
        .peers
        .iter()
        .any(|p| matches!(p.stopped, Some(StopReason::MatchInvalid { .. })));
    let not_stopped = if invalid {
        run.remaining().count() as u32
    } else {
        0
    };
    let invalid_after_micros = if invalid {
        let first = run
            .events(|e| {
                matches!(e, PeerEvent::Desync { .. } | PeerEvent::ResyncFailed { .. }).then_some(())
            })
            .iter()
            .map(|(_, t, _)| *t)
            .min();
        let last = run
            .events(|e| matches!(e, PeerEvent::Stopped(_)).then_some(()))
            .iter()
            .map(|(_, t, _)| *t)
            .max();
        match (first, last) {
            (Some(f), Some(l)) => l.since(f),
            _ => 0,
        }
    } else {
        0
    };
    let healed = run
        .events(|e| matches!(e, PeerEvent::Healed { .. }).then_some(()))
        .len() as u32;
    let mut longest_heal_micros = 0;
    for p in &run.peers {
        let mut drifted_at = None;
        for (at, e) in &p.events {
            match e {
                PeerEvent::Desync {
                    local_drifted: true,
                    ..
                } => drifted_at = drifted_at.or(Some(*at)),
                PeerEvent::Healed { .. } => {
                    if let Some(d) = drifted_at.take() {
                        longest_heal_micros = longest_heal_micros.max(at.since(d));
                    }
                }
                _ => {}
            }
        }
    }
    let sum =
        |f: fn(&lockstep_peer::PeerStats) -> u64| run.processes().map(|(_, p)| f(&p.stats)).sum();
    let lost_quorum = run
        .processes()
        .filter(|(_, p)| matches!(p.stopped, Some(StopReason::LostQuorum { .. })))
        .count() as u32;
    let playing = run.remaining().count() as u32;
    let stranded = if invalid {
        // Every seat stops in a match found invalid: none is stranded.
        0
    } else if playing == 0 {
        u32::from(s.setup.seats)
    } else {
        run.peers.iter().filter(|p| p.stopped.is_some()).count() as u32
    };
    Outcome {
        plan: plan.clone(),
        failure,
        desyncs: reports.len() as u32,
        false_reports,
        flipped,
        healed,
        longest_heal_micros,
        nondeterministic: sum(|p| p.nondeterministic_frames),
        refused_calls: sum(|p| p.refused_calls),
        frames_predicted: sum(|p| p.frames_predicted),
        frames_rolled_back: sum(|p| p.frames_rolled_back),
        frames: run.common_frames(),
        micros: run.end.as_micros(),
        lost_quorum,
        rejoined: run.processes().filter(|(_, p)| p.rejoined).count() as u32,
        alone: run
            .processes()
            .filter(|(_, p)| !p.unchecked_from.is_empty())
            .count() as u32,
        stranded,
        invalid,
        not_stopped,
        invalid_after_micros,
        overwritten,
        peak_state_bytes: run
            .processes()
            .map(|(_, p)| p.stats.peak_state_bytes)
            .max()
            .unwrap_or(0),
        arbiter_answers: run.spectator.as_ref().map_or(0, |a| {
            a.events
                .iter()
                .filter(|(_, e)| matches!(e, SpectatorEvent::Arbitrated { short: Some(_), .. }))
                .count() as u32
        }),
    }
}

/// The game played, for tables.
pub fn game_name(g: SoakGame) -> &'static str {
    match g {
        SoakGame::Cubes => Cubes::ID,
        SoakGame::Rts => Rts::ID,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_a_function_of_their_seed_and_vary() {
        let a = plan(7);
        let b = plan(7);
        assert_eq!(a.scenario.link, b.scenario.link);
        assert_eq!(a.scenario.clock_offsets, b.scenario.clock_offsets);
        let plans: Vec<Plan> = (0..200).map(plan).collect();
        assert!(plans.iter().any(|p| p.rollback()) && plans.iter().any(|p| !p.rollback()));
        assert!(plans.iter().any(|p| p.scenario.setup.seats == 8));
        assert!(
            plans
                .iter()
                .any(|p| p.scenario.link.latency_micros >= 900_000)
        );
        assert!(plans.iter().any(|p| p.scenario.flip.is_some()));
        assert!(plans.iter().any(|p| p.scenario.fault.is_some()));
        assert!(plans.iter().any(|p| {
            p.scenario
                .flip
                .as_ref()
                .is_some_and(|f| f.seat == SeatId(0))
        }));
        assert!(plans.iter().any(|p| p.game == SoakGame::Rts));
        assert!(plans.iter().any(|p| p.scenario.pause.is_some()));
        assert!(plans.iter().any(|p| p.scenario.partition.is_some()));
        for p in &plans {
            if let Some(part) = p.scenario.partition {
                let all = SeatSet::first(p.scenario.setup.seats);
                assert!(
                    !part.side.is_empty() && part.side != all && !all.without(part.side).is_empty()
                );
                assert_eq!(part.side.without(all), SeatSet::EMPTY);
            }
        }
    }
}
