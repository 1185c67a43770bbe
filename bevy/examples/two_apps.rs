//! Two headless Bevy apps, a host and a joiner, in one process, playing a
//! short match of the cube demo (bots at both seats) over loopback UDP
//! through [`LockstepPlugin`]. Each app is `update()`d in turn until both
//! say the match ended; then both replay logs are replayed and checked.
//!
//! ```text
//! cd bevy && cargo run --example two_apps
//! ```

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use lockstep_bevy::{LockstepEvent, LockstepPlugin, MatchState};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_net::{MatchEvent, MatchSettings, SeatPlan, SeatRuntime};
use lockstep_sim::Match;
use lockstep_sim::replay::{self, RunOptions};

/// Frames the match lasts (three seconds at 60 frames a second).
const FRAMES: u32 = 180;

/// The cube demo on a small field (a 4 × 4 grid of cubes).
fn small() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

/// A bot at the seat, and the replay log kept in memory.
fn bots(mut plan: SeatPlan<Cubes, Vec<u8>>) -> SeatPlan<Cubes, Vec<u8>> {
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Cubes::bot(seat, m.seed))
    }));
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan
}

/// An app playing one seat, printing the events worth a line.
fn app(name: &'static str, plugin: LockstepPlugin<Cubes>) -> App {
    let mut app = App::new();
    app.add_plugins(plugin.plan(bots)).add_systems(
        Update,
        move |mut events: MessageReader<LockstepEvent>| {
            for LockstepEvent(e) in events.read() {
                if !e.is_routine() {
                    println!("[{name}] {e}");
                }
            }
        },
    );
    app
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let any: SocketAddr = "127.0.0.1:0".parse()?;
    let setup = Match {
        seats: 2,
        seed: 5,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    // Only the holder of the seat code sits.
    let invites = lockstep_net::entropy::invites()?;
    let host = LockstepPlugin::<Cubes>::host(any, small(), setup, settings, invites)?;
    let joiner = LockstepPlugin::<Cubes>::join(any, host.local_addr(), invites.seat)?;
    println!("host at {}", host.local_addr());
    let mut apps = [app("host", host), app("join", joiner)];

    // Each app's frame: poll the runtime, run the app's systems. A real
    // app would be paced by its window; here a millisecond between rounds.
    let deadline = Instant::now() + Duration::from_secs(30);
    while apps
        .iter()
        .any(|a| a.world().resource::<MatchState<Cubes>>().running)
    {
        if Instant::now() > deadline {
            return Err("the match did not end within 30 s".into());
        }
        for a in &mut apps {
            a.update();
        }
        std::thread::sleep(Duration::from_millis(1));
    }

    for (name, a) in ["host", "join"].into_iter().zip(&mut apps) {
        let state = a.world().resource::<MatchState<Cubes>>();
        let (end, frame, checksum) = (state.end.clone(), state.frame, state.checksum);
        let checksum = checksum.map(|c| c.to_string()).unwrap_or_default();
        let ended = end.map(|e| MatchEvent::Ended(e).to_string());
        println!("[{name}] {ended:?}; frame {frame}, checksum {checksum}");
        let log = a
            .world_mut()
            .non_send_mut::<SeatRuntime<Cubes, Vec<u8>>>()
            .take_log()
            .ok_or("no replay log")?;
        let read = replay::read(&log)?;
        let outcome = replay::run::<Cubes>(&read, &RunOptions::default(), |_| {})?;
        let ok = outcome.verified() && read.is_complete();
        println!(
            "[{name}] replay log: {} bytes, {} frames replayed, {}",
            log.len(),
            outcome.replayed,
            if ok { "verified" } else { "NOT verified" }
        );
        if !ok {
            return Err(format!("{name}'s replay log does not verify").into());
        }
    }
    Ok(())
}
