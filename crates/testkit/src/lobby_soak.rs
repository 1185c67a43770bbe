//! Soak matches played by whole processes, the lobby included
//! ([`crate::processes`]): each match is set up through the host's lobby
//! over the drawn network (its setup datagrams lost, duplicated, reordered
//! and delayed like the rest), and in half of them a joiner's process dies
//! mid-match and a new process takes its seat back at once, proving it
//! holds the seat's key and waiting for the others to drop it; a third of
//! them have a spectator.
//!
//! A match passes when every process still playing at the end — the host,
//! the joiners, the seat's new process, the spectator — ends
//! [`MatchEnd::Finished`] (the seat's new process may instead be refused
//! because the match is too near its end for it to come back), and every log of a seat that played the whole
//! match reads whole, verifies, and agrees with the others frame for frame.
//!
//! Invariant: a match is a pure function of its seed (the processes
//! harness draws every key, token and secret from it).

use lockstep_fx::Rng;
use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_lobby::{JoinFailure, MatchEnd, MatchSettings, Refusal};
use lockstep_protocol::{Instant, Mode, Rollback};
use lockstep_sim::Match;
use lockstep_sim::replay::{self, RunOptions};

use crate::netsim::{LinkConfig, Loss, Transport};
use crate::processes::Lan;
use crate::soak::{SoakGame, cubes_config, rts_config};

/// Frames every lobby soak match plays.
pub const FRAMES: u32 = 600;

/// A drawn match.
#[derive(Debug, Clone)]
pub struct LobbyPlan {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The game.
    pub game: SoakGame,
    /// Seats.
    pub seats: u8,
    /// Every directed link, the lobby's datagrams included.
    pub link: LinkConfig,
    /// Lockstep or rollback.
    pub mode: Mode,
    /// Whether packets are sealed.
    pub sealed: bool,
    /// The frame after which the last joiner's process dies and a new one
    /// takes its seat back at once.
    pub kill_at: Option<u32>,
    /// Whether a spectator watches.
    pub spectator: bool,
}

/// What a lobby soak match did.
#[derive(Debug, Clone)]
pub struct LobbyOutcome {
    /// The match.
    pub plan: LobbyPlan,
    /// Why it failed, if it did.
    pub failure: Option<String>,
    /// Whether the killed seat's new process took the seat back.
    pub rejoined: bool,
    /// Virtual time the match took, in microseconds.
    pub micros: u64,
}

impl LobbyOutcome {
    /// Whether the match passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// Draws lobby match `seed`: either game, 2 to 4 seats, a network from calm
/// to a 1 s round trip with 25% loss, duplication and reordering, either
/// mode, sealed or not.
pub fn plan(seed: u64) -> LobbyPlan {
    let mut rng = Rng::new(seed, 0x6c6f_6262);
    let game = if rng.chance(1, 2) {
        SoakGame::Cubes
    } else {
        SoakGame::Rts
    };
    let seats = 2 + rng.below(3) as u8;
    let rtt_ms = match rng.below(3) {
        0 => 10 + u64::from(rng.below(90)),
        1 => 100 + u64::from(rng.below(300)),
        _ => 400 + u64::from(rng.below(601)),
    };
    let loss_ppm = match rng.below(3) {
        0 => 0,
        1 => rng.below(50_001),
        _ => rng.below(250_001),
    };
    let link = LinkConfig {
        latency_micros: rtt_ms * 500,
        jitter_micros: u64::from(rng.below(50_001)),
        loss: if loss_ppm == 0 {
            Loss::None
        } else {
            Loss::Random(loss_ppm)
        },
        duplicate_ppm: rng.below(50_001),
        reorder_ppm: rng.below(50_001),
        reorder_micros: 50_000,
        // The setup travels in clear: integrity is UDP's own checksum,
        // which catches a flipped bit; no corrupted datagram is handed in.
        corrupt_ppm: 0,
        mtu: 1200,
        transport: Transport::Datagram,
    };
    let mode = if rng.chance(1, 2) {
        Mode::Lockstep
    } else {
        Mode::Rollback(Rollback::DEFAULT)
    };
    let sealed = rng.chance(3, 4);
    let kill_at = rng.chance(1, 2).then(|| 40 + rng.below(80));
    let spectator = rng.chance(1, 3);
    LobbyPlan {
        seed,
        game,
        seats,
        link,
        mode,
        sealed,
        kill_at,
        spectator,
    }
}

/// Plays and judges `plan`.
pub fn play(plan: &LobbyPlan) -> LobbyOutcome {
    match plan.game {
        SoakGame::Cubes => judge::<Cubes>(plan, cubes_config()),
        SoakGame::Rts => judge::<Rts>(plan, rts_config()),
    }
}

fn judge<G: Demo>(plan: &LobbyPlan, config: G::Config) -> LobbyOutcome {
    let setup = Match {
        seats: plan.seats,
        seed: plan.seed,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup)
        .frames(FRAMES)
        .sealed(plan.sealed)
        .mode(plan.mode);
    let mut lan = Lan::<G>::host(plan.seed, plan.link, config, setup, settings);
    let joiners: Vec<usize> = (1..plan.seats).map(|_| lan.join()).collect();
    let mut playing: Vec<usize> = vec![0];
    playing.extend(&joiners);
    let limit = Instant::from_micros(600_000_000);
    let ended = |l: &Lan<G>, nodes: &[usize]| nodes.iter().all(|&n| l.run_of(n).end.is_some());
    let mut whole = playing.clone();
    let mut rejoined_node = None;
    if let Some(at) = plan.kill_at {
        let victim = *joiners.last().unwrap_or(&0);
        let reached = lan.run_until(limit, |l| {
            ended(l, &playing) || l.frame_of(victim).is_some_and(|f| f > at)
        });
        if reached && lan.run_of(victim).end.is_none() {
            lan.kill(victim);
            let back = lan.rejoin(victim);
            playing.retain(|&n| n != victim);
            whole.retain(|&n| n != victim);
            playing.push(back);
            rejoined_node = Some(back);
        }
    }
    if plan.spectator {
        playing.push(lan.spectate());
    }
    lan.run_until(limit, |l| ended(l, &playing));
    let micros = lan.now().as_micros();
    let mut failure = None;
    for &n in &playing {
        let end = &lan.run_of(n).end;
        // A seat whose process died too near the end is refused its seat
        // back: the match is over by the time it could play again.
        let too_late = Some(MatchEnd::SetupFailed(JoinFailure::Refused(Refusal::Ended)));
        let fine = *end == Some(MatchEnd::Finished { frames: FRAMES })
            || (Some(n) == rejoined_node && *end == too_late);
        if !fine {
            failure.get_or_insert(format!("node {n} ended {end:?}"));
        }
    }
    if failure.is_none() {
        failure = logs_agree::<G>(&lan, &whole).err();
    }
    LobbyOutcome {
        plan: plan.clone(),
        failure,
        rejoined: rejoined_node
            .is_some_and(|n| lan.run_of(n).end == Some(MatchEnd::Finished { frames: FRAMES })),
        micros,
    }
}

/// Every log of `nodes` reads whole, holds the match, verifies, and agrees
/// with the others frame for frame.
fn logs_agree<G: Demo>(lan: &Lan<G>, nodes: &[usize]) -> Result<(), String> {
    let mut first: Option<Vec<Option<replay::FrameCheck>>> = None;
    for &n in nodes {
        let bytes = lan
            .run_of(n)
            .log
            .as_ref()
            .ok_or(format!("node {n} kept no log"))?;
        let log = replay::read::<G::Input>(bytes).map_err(|e| format!("node {n}: {e}"))?;
        if !log.is_complete() || log.frames() != FRAMES {
            return Err(format!(
                "node {n}'s log holds {} frames, ends {:?}",
                log.frames(),
                log.end()
            ));
        }
        let outcome = replay::run::<G>(&log, &RunOptions::default(), |_| {})
            .map_err(|e| format!("node {n}: {e}"))?;
        if !outcome.verified() {
            return Err(format!(
                "node {n}'s log does not verify: {:?}",
                outcome.first_mismatch
            ));
        }
        let checks: Vec<_> = (0..log.frames()).map(|f| log.check(f)).collect();
        match &first {
            None => first = Some(checks),
            Some(c) if *c != checks => return Err(format!("node {n}'s log differs")),
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_a_function_of_their_seed_and_vary() {
        let plans: Vec<LobbyPlan> = (0..100).map(plan).collect();
        assert_eq!(plan(7).link, plan(7).link);
        assert!(plans.iter().any(|p| p.kill_at.is_some()));
        assert!(plans.iter().any(|p| p.spectator));
        assert!(plans.iter().any(|p| p.seats == 4));
        assert!(plans.iter().any(|p| p.link.latency_micros >= 400_000));
    }

    #[test]
    fn a_sample_of_lobby_matches_passes() {
        for seed in 0..3 {
            let outcome = play(&plan(seed));
            assert!(outcome.passed(), "seed {seed}: {:?}", outcome.failure);
        }
    }
}
