//! Two headless Bevy apps in one process, a host (a bot at its seat) and a
//! joiner (its input written by an app system into `LocalInput`), play a
//! short match of the cube demo over loopback UDP through the plugin. Both
//! must finish every frame with no desync and the same final checksum, and
//! both replay logs must be the same bytes and replay to their checksums.
//! The loop is bounded in time; the ports are the OS's choice.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use lockstep_bevy::{LocalInput, LockstepEvent, LockstepPlugin, MatchState};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig, CubesInput};
use lockstep_net::{MatchEnd, MatchEvent, MatchSettings, PeerEvent, SeatPlan, SeatRuntime};
use lockstep_protocol::SeatId;
use lockstep_sim::Match;
use lockstep_sim::replay::{self, RunOptions};

const FRAMES: u32 = 180;

fn small() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

fn with_log(mut plan: SeatPlan<Cubes, Vec<u8>>) -> SeatPlan<Cubes, Vec<u8>> {
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan
}

fn with_bot(plan: SeatPlan<Cubes, Vec<u8>>) -> SeatPlan<Cubes, Vec<u8>> {
    let mut plan = with_log(plan);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Cubes::bot(seat, m.seed))
    }));
    plan
}

/// What an app saw of its events.
#[derive(Resource, Default)]
struct Seen {
    stepped: u32,
    trouble: Vec<String>,
    ends: Vec<MatchEnd>,
}

fn watch(mut seen: ResMut<Seen>, mut events: MessageReader<LockstepEvent>) {
    for LockstepEvent(e) in events.read() {
        match e {
            MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) => {
                seen.stepped = seen.stepped.max(frame + 1)
            }
            MatchEvent::Peer(
                PeerEvent::Desync { .. }
                | PeerEvent::NotDeterministic { .. }
                | PeerEvent::Healed { .. }
                | PeerEvent::ResyncFailed { .. }
                | PeerEvent::Stopped(_),
            ) => seen.trouble.push(e.to_string()),
            MatchEvent::Ended(end) => seen.ends.push(end.clone()),
            _ => {}
        }
    }
}

/// The joiner's player: steers by the frame it sees, a pattern that
/// changes every 30 frames.
fn steer(state: Res<MatchState<Cubes>>, mut input: ResMut<LocalInput<CubesInput>>) {
    let phase = state.frame / 30 % 4;
    input.0 = CubesInput {
        left: phase == 0,
        right: phase == 2,
        up: phase == 1,
        ..CubesInput::default()
    };
}

fn app(plugin: LockstepPlugin<Cubes>) -> App {
    let mut app = App::new();
    app.add_plugins(plugin)
        .init_resource::<Seen>()
        .add_systems(Update, watch);
    app
}

#[test]
fn a_host_app_and_a_joiner_app_play_a_match_over_loopback() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let setup = Match {
        seats: 2,
        seed: 9,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    let invites = lockstep_net::entropy::invites().unwrap();
    let host = LockstepPlugin::<Cubes>::host(any, small(), setup, settings, invites)
        .unwrap()
        .plan(with_bot);
    let joiner = LockstepPlugin::<Cubes>::join(any, host.local_addr(), invites.seat)
        .unwrap()
        .plan(with_log);
    let mut host = app(host);
    let mut joiner = app(joiner);
    joiner
        .init_resource::<LocalInput<CubesInput>>()
        .add_systems(Update, steer);

    let deadline = Instant::now() + Duration::from_secs(40);
    let running = |a: &App| a.world().resource::<MatchState<Cubes>>().running;
    while running(&host) || running(&joiner) {
        assert!(Instant::now() < deadline, "the match did not end in 40 s");
        host.update();
        joiner.update();
        std::thread::sleep(Duration::from_millis(1));
    }

    let mut logs = Vec::new();
    let mut finals = Vec::new();
    for (name, a, seat) in [("host", &mut host, 0), ("joiner", &mut joiner, 1)] {
        let seen = a.world().resource::<Seen>();
        assert_eq!(seen.trouble, Vec::<String>::new(), "{name}: no desync");
        assert_eq!(
            seen.ends,
            vec![MatchEnd::Finished { frames: FRAMES }],
            "{name}: one end, finished"
        );
        assert_eq!(seen.stepped, FRAMES, "{name}: every frame stepped");
        let state = a.world().resource::<MatchState<Cubes>>();
        assert_eq!(state.end, Some(MatchEnd::Finished { frames: FRAMES }));
        assert_eq!(state.frame, FRAMES, "{name}: the newest state");
        assert_eq!(state.seat, Some(SeatId(seat)));
        assert_eq!(state.desyncs, 0);
        let game = state.game.as_ref().expect("a state");
        let checksum = state.checksum.expect("the last frame's checksum");
        assert_eq!(
            lockstep_sim::Game::checksum(game),
            checksum,
            "{name}: the copy is the state"
        );
        let log = a
            .world_mut()
            .non_send_mut::<SeatRuntime<Cubes, Vec<u8>>>()
            .take_log()
            .expect("a replay log");
        let read = replay::read(&log).unwrap();
        assert!(read.is_complete(), "{name}: the log is complete");
        let outcome = replay::run::<Cubes>(&read, &RunOptions::default(), |_| {}).unwrap();
        assert!(
            outcome.verified(),
            "{name}: the log replays to its checksums"
        );
        assert_eq!(outcome.replayed, FRAMES);
        let joiner_at = |f| read.inputs(f).expect("logged inputs")[1];
        assert!(
            joiner_at(10).left,
            "{name}: the joiner's LocalInput was played"
        );
        assert!((30..120).any(|f| joiner_at(f).up), "{name}: and followed");
        assert_eq!(
            outcome.final_checksum, checksum,
            "{name}: the log ends where the app did"
        );
        finals.push(checksum);
        logs.push(log);
    }
    assert_eq!(finals[0], finals[1], "the same final state at both seats");
    assert_eq!(
        logs[0], logs[1],
        "both seats logged the same match, byte for byte"
    );
}
