//! Commands beside inputs ([`Orders`]): a command issued on one seat is
//! applied once, on the same frame, on every seat — under loss, duplication
//! and reordering, in lockstep and in rollback mode — and survives record,
//! replay and verify.
//!
//! The game here, `Tally`, keeps every command it applied with the frame
//! and the seat, so its checksum (and so the seats' agreement) covers them
//! all, and a test can count them.

use std::collections::{BTreeMap, VecDeque};

use lockstep_codec::{BitError, BitStream, Command, Orders, input::Buttons};
use lockstep_fx::{Canonical, DecodeError, Sink, StateReader, StateWriter};
use lockstep_games::Demo;
use lockstep_peer::{Peer, PeerSettings};
use lockstep_protocol::{InputDelay, Instant, Mode, Rollback, SeatId};
use lockstep_sim::replay::{self, RunOptions};
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError, read_version};
use lockstep_testkit::mesh::{self, Condition, Pause, Scenario};
use lockstep_testkit::verdict;

/// A command: bump the tally by `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Bump {
    value: u16,
}

impl Command for Bump {
    const MAX_BITS: u32 = 16;

    fn schema() -> &'static str {
        "Bump: u16 value"
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let mut v = u64::from(self.value);
        s.bits(&mut v, 16)?;
        self.value = v as u16;
        Ok(())
    }

    fn read<S: BitStream>(s: &mut S) -> Result<Bump, BitError> {
        let mut c = Bump { value: 0 };
        c.serialize(s)?;
        Ok(c)
    }
}

/// The bots issue `burst` commands on every `every`th frame of their seat.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
struct TallyConfig {
    every: u32,
    burst: u32,
}

impl Canonical for TallyConfig {
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.field("every", &self.every);
        w.field("burst", &self.burst);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        Ok(TallyConfig {
            every: r.read_u32()?,
            burst: r.read_u32()?,
        })
    }
}

/// Every command applied: `(frame, seat, value)`, in the order applied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tally {
    config: TallyConfig,
    applied: Vec<(u32, u8, u16)>,
}

impl Game for Tally {
    type Input = Orders<Buttons, Bump>;
    type Config = TallyConfig;
    const ID: &'static str = "tally";
    const VERSION: u32 = 1;

    fn new(config: &TallyConfig, setup: &Match) -> Result<Self, SetupError> {
        setup.check(Self::ID, 2..=8)?;
        Ok(Tally {
            config: config.clone(),
            applied: Vec::new(),
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Self::Input]) {
        for (seat, input) in inputs.iter().enumerate() {
            for c in input.commands() {
                self.applied.push((frame, seat as u8, c.value));
            }
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.field("version", &Self::VERSION);
        self.config.encode(w);
        w.write_len(self.applied.len());
        for (i, (frame, seat, value)) in self.applied.iter().enumerate() {
            w.entity("command", &[i as u32]);
            w.field("frame", frame);
            w.field("seat", seat);
            w.field("value", value);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Tally>(&mut r)?;
        let config = TallyConfig::decode(&mut r)?;
        let n = r.read_len(7)?;
        let mut applied = Vec::with_capacity(n);
        for _ in 0..n {
            applied.push((r.read_u32()?, r.read_u8()?, r.read_u16()?));
        }
        r.finish()?;
        Ok(Tally { config, applied })
    }
}

/// The commands seat `seat` issues with its input for `frame`: none, or
/// `burst` of them numbered from `frame × 8`, so every command is unique and
/// says when it was issued.
fn issued(config: &TallyConfig, seat: u8, frame: u32) -> Vec<Bump> {
    if frame % config.every != u32::from(seat) % config.every {
        return Vec::new();
    }
    (0..config.burst)
        .map(|k| Bump {
            value: (frame * 8 + k) as u16,
        })
        .collect()
}

struct TallyBot {
    seat: u8,
}

impl Bot<Tally> for TallyBot {
    fn input(&mut self, game: &Tally, frame: Frame) -> Orders<Buttons, Bump> {
        let mut input = Orders::new(Buttons::scripted(self.seat, frame));
        for c in issued(&game.config, self.seat, frame) {
            input.push(c).unwrap();
        }
        input
    }
}

impl Demo for Tally {
    type Bot = TallyBot;
    const DEFAULT_SETTINGS: &'static str = "every = 3\nburst = 1\n";

    fn bot(seat: u8, _seed: u64) -> TallyBot {
        TallyBot { seat }
    }
}

/// Every command a log holds, by value: the frame and seat it rode in, and
/// how many times it appears.
fn commands_in_log(log: &[u8]) -> BTreeMap<(u8, u16), Vec<u32>> {
    let log = replay::read::<Orders<Buttons, Bump>>(log).expect("the log reads");
    let mut found: BTreeMap<(u8, u16), Vec<u32>> = BTreeMap::new();
    for frame in 0..log.frames() {
        for (seat, input) in log.inputs(frame).unwrap().iter().enumerate() {
            for c in input.commands() {
                found.entry((seat as u8, c.value)).or_default().push(frame);
            }
        }
    }
    found
}

/// Plays `frames` frames of Tally over `cond` in `mode` and checks that
/// every command was applied exactly once, on the frame it was issued for,
/// by every seat (their logs verify and agree, and replaying one gives the
/// final state with each command in it once).
fn every_command_once(
    seats: u8,
    cond: Condition,
    mode: Mode,
    frames: u32,
    config: TallyConfig,
    pause: Option<Pause>,
) -> mesh::Run {
    let mut s = Scenario::new(seats, 17, cond.link(), frames);
    s.session.mode = mode;
    s.pause = pause;
    let run = mesh::run::<Tally>(&s, &config);
    if let Err(e) = verdict::check::<Tally>(&run, frames) {
        panic!("{}: {e}", cond.name);
    }
    for (seat, p) in run.peers.iter().enumerate() {
        let log = p.log.as_ref().expect("every seat records");
        let found = commands_in_log(log);
        let logged = replay::read::<Orders<Buttons, Bump>>(log).unwrap().frames();
        let mut expected = 0;
        for frame in 0..logged {
            for issuer in 0..seats {
                for c in issued(&config, issuer, frame) {
                    expected += 1;
                    assert_eq!(
                        found.get(&(issuer, c.value)),
                        Some(&vec![frame]),
                        "{}: seat {seat}'s log, the command seat {issuer} issued for frame {frame}",
                        cond.name
                    );
                }
            }
        }
        assert_eq!(found.len(), expected, "{}: no other command", cond.name);
        // Replaying the log gives a state that applied each command once.
        let read = replay::read::<Orders<Buttons, Bump>>(log).unwrap();
        let (outcome, engine) =
            replay::run_with_state::<Tally>(&read, &RunOptions::default(), |_| {})
                .expect("it replays");
        assert_eq!(outcome.first_mismatch, None, "{}", cond.name);
        assert_eq!(engine.game().applied.len(), expected, "{}", cond.name);
    }
    run
}

#[test]
fn a_command_is_applied_once_on_the_same_frame_by_every_seat_in_lockstep() {
    every_command_once(
        3,
        Condition::POOR,
        Mode::Lockstep,
        600,
        Tally::default_config(),
        None,
    );
}

#[test]
fn a_command_is_applied_once_on_the_same_frame_by_every_seat_in_rollback() {
    let mode = Mode::Rollback(Rollback {
        input_delay: InputDelay::Fixed(2),
        ..Rollback::DEFAULT
    });
    let run = every_command_once(3, Condition::POOR, mode, 600, Tally::default_config(), None);
    for p in &run.peers {
        // Predictions (which carry no command) were wrong and corrected.
        assert!(p.stats.rollbacks > 0, "{:?}", p.stats);
    }
}

/// Eight commands every frame, and seat 1 paused for 1.5 s: when it wakes
/// the others hold some 90 unacked inputs of up to 142 bits, more than one
/// packet holds, so each packet carries the oldest run that fits and the
/// rest follows.
#[test]
fn a_send_window_too_large_for_a_packet_travels_in_runs_that_fit() {
    let config = TallyConfig { every: 1, burst: 8 };
    let pause = Pause {
        seat: SeatId(1),
        frame: 200,
        micros: 1_500_000,
    };
    let run = every_command_once(2, Condition::POOR, Mode::Lockstep, 600, config, Some(pause));
    // 90 frames went unacked while seat 1 slept; a packet held at most
    // what fits (about 9 000 bits of inputs).
    let session = &run.peers[0].session;
    assert!(session.max_inputs_per_packet < 90, "{session:?}");
}

/// Two peers on a perfect 20 ms link, seat 0 driven by the app through
/// `Peer::issue` and `Peer::set_held`.
#[test]
fn an_issued_command_goes_with_the_next_sampled_frame_only() {
    let setup = Match {
        seats: 2,
        seed: 5,
        tick_rate: 60,
    };
    let config = TallyConfig {
        every: 1_000_000,
        burst: 1,
    };
    let mut peers: Vec<Peer<Tally, std::io::Sink>> = (0..2u8)
        .map(|seat| {
            let s = PeerSettings::new(&setup, SeatId(seat), 70 + u32::from(seat));
            let mut p = Peer::new(&config, setup, s, std::io::sink()).unwrap();
            p.set_bot(Box::new(TallyBot { seat }));
            p
        })
        .collect();
    peers[0].set_held(Buttons(5));
    let mut wire: VecDeque<(Instant, usize, SeatId, Vec<u8>)> = VecDeque::new();
    let mut now = Instant::ZERO;
    let mut issued_at = None;
    while peers.iter().any(|p| p.frame() < 240) && now.as_micros() < 20_000_000 {
        if issued_at.is_none() && peers[0].frame() >= 60 {
            for v in [7, 8, 9] {
                peers[0].issue(Bump { value: v }).unwrap();
            }
            issued_at = Some(peers[0].frame());
        }
        for (i, p) in peers.iter_mut().enumerate() {
            p.handle_timeout(now);
            while let Some(t) = p.poll_transmit(now) {
                wire.push_back((now.plus(20_000), 1 - i, SeatId(i as u8), t.bytes));
            }
        }
        while wire.front().is_some_and(|w| w.0 <= now) {
            let (_, to, from, bytes) = wire.pop_front().unwrap();
            peers[to].handle_datagram(now, from, &bytes);
        }
        let next = peers
            .iter()
            .filter_map(|p| p.poll_timeout())
            .chain(wire.front().map(|w| w.0))
            .min()
            .unwrap();
        now = next.max(now.plus(1));
    }
    let issued_at = issued_at.expect("the match reached frame 60");
    for p in &peers {
        // Seat 1's bot issues one command of its own, at frame 1.
        let applied: Vec<_> = p
            .game()
            .applied
            .iter()
            .filter(|a| a.1 == 0)
            .copied()
            .collect();
        assert_eq!(applied.len(), 3, "{applied:?}");
        let frame = applied[0].0;
        // The next frame seat 0 sampled: at or after the frame it had
        // stepped when the app issued, within its input delay.
        assert!(frame >= issued_at && frame < issued_at + 10, "{applied:?}");
        assert_eq!(applied, vec![(frame, 0, 7), (frame, 0, 8), (frame, 0, 9)]);
    }
}
