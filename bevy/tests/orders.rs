//! Orders through the plugin: two headless apps play a game whose input is
//! `Orders` (`with_orders`); each app's system sends `IssueCommand`
//! messages and sets `LocalHeld`. Every command must be applied once, on
//! the same frame, by both seats, and both logs must hold it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use lockstep_bevy::{IssueCommand, LocalHeld, LockstepPlugin, MatchState};
use lockstep_fx::{Canonical, DecodeError, Sink, StateReader, StateWriter};
use lockstep_net::{MatchEnd, MatchSettings, SeatPlan, SeatRuntime};
use lockstep_protocol::bits::{BitError, BitStream};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::{Command, Orders};
use lockstep_sim::replay::{self, RunOptions};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError};

const FRAMES: u32 = 240;

/// A command: a number to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Mark(u16);

impl Command for Mark {
    const MAX_BITS: u32 = 16;
    fn schema() -> &'static str {
        "Mark: u16"
    }
    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let mut v = u64::from(self.0);
        s.bits(&mut v, 16)?;
        self.0 = v as u16;
        Ok(())
    }

    fn read<S: BitStream>(s: &mut S) -> Result<Mark, BitError> {
        let mut c = Mark(0);
        c.serialize(s)?;
        Ok(c)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
struct NoRules;

/// Every mark applied, with the frame and the seat.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marks(Vec<(u32, u8, u16)>);

impl Game for Marks {
    type Input = Orders<Buttons, Mark>;
    type Config = NoRules;
    const ID: &'static str = "marks";
    const VERSION: u32 = 1;

    fn new(_: &NoRules, setup: &Match) -> Result<Marks, SetupError> {
        setup.check(Self::ID, 2..=2)?;
        Ok(Marks(Vec::new()))
    }

    fn step(&mut self, frame: Frame, inputs: &[Self::Input]) {
        for (seat, input) in inputs.iter().enumerate() {
            for m in input.commands() {
                self.0.push((frame, seat as u8, m.0));
            }
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_len(self.0.len());
        for &(frame, seat, mark) in &self.0 {
            w.field("frame", &frame);
            w.field("seat", &seat);
            w.field("mark", &mark);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Marks, StateError> {
        let mut r = StateReader::new(bytes);
        let n = r.read_len(7)?;
        let mut marks = Vec::with_capacity(n);
        for _ in 0..n {
            marks.push((r.read_u32()?, r.read_u8()?, r.read_u16()?));
        }
        r.finish()?;
        Ok(Marks(marks))
    }
}

impl Canonical for NoRules {
    fn encode<S: Sink>(&self, _: &mut StateWriter<S>) {}
    fn decode(_: &mut StateReader<'_>) -> Result<NoRules, DecodeError> {
        Ok(NoRules)
    }
}

/// Marks issued by this app: seat `s` issues `s × 1000 + n` for the `n`th
/// frame it sees that is a multiple of 20, and holds button 0 on odd tens.
#[derive(Resource, Default)]
struct Issued {
    seen: Option<u32>,
    marks: Vec<u16>,
}

fn play(
    state: Res<MatchState<Marks>>,
    mut issued: ResMut<Issued>,
    mut held: ResMut<LocalHeld<Buttons>>,
    mut out: MessageWriter<IssueCommand<Mark>>,
) {
    let (Some(seat), frame) = (state.seat, state.frame) else {
        return;
    };
    if issued.seen == Some(frame) || frame >= FRAMES - 60 {
        return;
    }
    issued.seen = Some(frame);
    held.0 = Buttons(u8::from(frame / 10 % 2 == 1));
    if frame % 20 == 0 {
        let mark = u16::from(seat.0) * 1000 + (frame / 20) as u16;
        issued.marks.push(mark);
        out.write(IssueCommand(Mark(mark)));
    }
}

fn with_log(mut plan: SeatPlan<Marks, Vec<u8>>) -> SeatPlan<Marks, Vec<u8>> {
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan
}

fn app(plugin: LockstepPlugin<Marks>) -> App {
    let mut app = App::new();
    app.add_plugins(plugin.with_orders())
        .init_resource::<Issued>()
        .insert_resource(LocalHeld(Buttons(0)))
        .add_systems(Update, play);
    app
}

#[test]
fn commands_sent_as_messages_are_applied_once_on_one_frame_by_both_apps() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let setup = Match {
        seats: 2,
        seed: 3,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    let invites = lockstep_net::entropy::invites().unwrap();
    let host = LockstepPlugin::<Marks>::host(any, NoRules, setup, settings, invites)
        .unwrap()
        .plan(with_log);
    let joiner = LockstepPlugin::<Marks>::join(any, host.local_addr(), invites.seat)
        .unwrap()
        .plan(with_log);
    let (mut host, mut joiner) = (app(host), app(joiner));

    let deadline = Instant::now() + Duration::from_secs(40);
    let running = |a: &App| a.world().resource::<MatchState<Marks>>().running;
    while running(&host) || running(&joiner) {
        assert!(Instant::now() < deadline, "the match did not end in 40 s");
        host.update();
        joiner.update();
        std::thread::sleep(Duration::from_millis(1));
    }

    let mut issued = Vec::new();
    let mut finals = Vec::new();
    for a in [&mut host, &mut joiner] {
        let state = a.world().resource::<MatchState<Marks>>();
        assert_eq!(state.end, Some(MatchEnd::Finished { frames: FRAMES }));
        let seat = state.seat.unwrap().0;
        let applied = state.game.as_ref().unwrap().0.clone();
        issued.extend(
            a.world()
                .resource::<Issued>()
                .marks
                .iter()
                .map(|&m| (seat, m)),
        );
        let log = a
            .world_mut()
            .non_send_mut::<SeatRuntime<Marks, Vec<u8>>>()
            .take_log()
            .unwrap();
        let read = replay::read::<Orders<Buttons, Mark>>(&log).unwrap();
        let (outcome, engine) =
            replay::run_with_state::<Marks>(&read, &RunOptions::default(), |_| {}).unwrap();
        assert!(outcome.verified());
        assert_eq!(
            engine.game().0,
            applied,
            "the log replays to the same marks"
        );
        finals.push(applied);
    }
    assert_eq!(
        finals[0], finals[1],
        "both seats applied the same marks on the same frames"
    );
    let mut applied: Vec<(u8, u16)> = finals[0].iter().map(|&(_, s, m)| (s, m)).collect();
    applied.sort_unstable();
    issued.sort_unstable();
    assert!(issued.len() >= 18, "{issued:?}");
    assert_eq!(applied, issued, "every mark once, and no other");
}
