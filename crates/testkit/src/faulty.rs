//! [`Faulty`]: a shipped game with a recurring nondeterminism injected into
//! its `step` on one seat — the bug a real game ships with (a hash map's
//! iteration order, an `f32`, an uninitialised field), modelled so that a
//! match of it runs on virtual time and fails the same way every time.
//!
//! A [`Faulty<G>`] steps exactly as `G` does, and then, on the faulty seat
//! only, every [`Fault::every`] frames, flips a bit of a body's position:
//!
//! - [`Recurring::SelfInconsistent`]: the bit depends on how many faulty
//!   steps this thread has run, so the same frame stepped again from the
//!   same state gives another result (the hash-order, uninitialised-memory
//!   and clock-reading bugs: the seat disagrees with itself);
//! - [`Recurring::SelfConsistent`]: the bit depends only on the frame, so
//!   the seat computes the same wrong result however often it steps the
//!   frame (an `f32` rounding the same way on one machine).
//!
//! Which seat is "this process" is a thread-local the harness sets around
//! every call into a node ([`enter`], [`leave`]); outside those calls (a
//! replay, a verify, another thread) a `Faulty<G>` is `G`, so the replay
//! logs of its matches replay and verify as `G`'s (the game id, version,
//! settings and state encoding are `G`'s own).
//!
//! Invariant: with no fault installed ([`install`]) or no node entered, a
//! `Faulty<G>` computes exactly `G`'s bits.

use std::cell::Cell;

use lockstep_fx::{Sink, StateWriter};
use lockstep_games::Demo;
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError, StateMap};

/// How the injected nondeterminism behaves when a frame is stepped again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recurring {
    /// Another result each time (reads a per-process value that changes).
    SelfInconsistent,
    /// The same wrong result each time on this seat.
    SelfConsistent,
}

/// A recurring nondeterminism on one seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The node (seat) whose steps go wrong.
    pub seat: u8,
    /// How it behaves when a frame is stepped again.
    pub kind: Recurring,
    /// The first frame that goes wrong.
    pub from_frame: u32,
    /// Then every this many frames (at least 1)...
    pub every: u32,
    /// ... before this frame (`u32::MAX`: for good).
    pub until_frame: u32,
}

thread_local! {
    static FAULT: Cell<Option<Fault>> = const { Cell::new(None) };
    static NODE: Cell<Option<u8>> = const { Cell::new(None) };
    static STEPS: Cell<u32> = const { Cell::new(0) };
}

/// Installs `fault` for this thread's matches (`None`: every `Faulty<G>`
/// is `G`). Resets the per-process counter.
pub fn install(fault: Option<Fault>) {
    FAULT.with(|f| f.set(fault));
    STEPS.with(|s| s.set(0));
}

/// The harness is about to call into node `node` (a seat, or the
/// spectator's index).
pub fn enter(node: u8) {
    NODE.with(|n| n.set(Some(node)));
}

/// The harness's call into a node returned.
pub fn leave() {
    NODE.with(|n| n.set(None));
}

/// The fault to apply to a step of `frame` now, if any.
fn active(frame: Frame) -> Option<Fault> {
    let fault = FAULT.with(Cell::get)?;
    let node = NODE.with(Cell::get)?;
    let due = node == fault.seat
        && (fault.from_frame..fault.until_frame).contains(&frame)
        && (frame - fault.from_frame) % fault.every.max(1) == 0;
    due.then_some(fault)
}

/// `G` with a recurring nondeterminism on one seat (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faulty<G>(pub G);

impl<G: Game> Faulty<G> {
    /// The wrapped game.
    pub fn inner(&self) -> &G {
        &self.0
    }

    fn perturb(&mut self, frame: Frame, fault: Fault) {
        let salt = match fault.kind {
            Recurring::SelfConsistent => frame / fault.every.max(1),
            Recurring::SelfInconsistent => STEPS.with(|s| {
                let n = s.get();
                s.set(n.wrapping_add(1));
                n
            }),
        };
        // A body every game labels, and a bit of its position that moves it
        // visibly but keeps it inside the world.
        let entity = format!("body {}", 1 + salt % 8);
        let bit = 16 + (salt / 8) % 16;
        let map = StateMap::of(&self.0);
        let Some(bytes) = map.with_flipped_bit(&entity, "position", bit) else {
            return;
        };
        if let Ok(g) = G::decode(&bytes) {
            self.0 = g;
        }
    }
}

impl<G: Game> Game for Faulty<G> {
    type Input = G::Input;
    type Config = G::Config;
    const ID: &'static str = G::ID;
    const VERSION: u32 = G::VERSION;

    fn new(config: &G::Config, setup: &Match) -> Result<Self, SetupError> {
        G::new(config, setup).map(Faulty)
    }

    fn step(&mut self, frame: Frame, inputs: &[G::Input]) {
        self.0.step(frame, inputs);
        if let Some(fault) = active(frame) {
            self.perturb(frame, fault);
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        self.0.encode(w);
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateError> {
        G::decode(bytes).map(Faulty)
    }

    fn set_threads(&mut self, threads: usize) {
        self.0.set_threads(threads);
    }
}

/// `G`'s bot, playing a [`Faulty<G>`].
pub struct FaultyBot<B>(B);

impl<G: Game, B: Bot<G>> Bot<Faulty<G>> for FaultyBot<B> {
    fn input(&mut self, game: &Faulty<G>, frame: Frame) -> G::Input {
        self.0.input(&game.0, frame)
    }
}

impl<G: Demo> Demo for Faulty<G> {
    type Bot = FaultyBot<G::Bot>;
    const DEFAULT_SETTINGS: &'static str = G::DEFAULT_SETTINGS;

    fn bot(seat: u8, seed: u64) -> Self::Bot {
        FaultyBot(G::bot(seat, seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_games::cubes::Cubes;

    fn stepped(kind: Recurring, node: Option<u8>, runs: u32) -> Vec<lockstep_fx::Checksum> {
        let setup = Match {
            seats: 2,
            seed: 3,
            tick_rate: 60,
        };
        install(Some(Fault {
            seat: 0,
            kind,
            from_frame: 2,
            every: 2,
            until_frame: u32::MAX,
        }));
        let start = Faulty::<Cubes>::new(&Cubes::default_config(), &setup).unwrap();
        let inputs = vec![Default::default(); 2];
        let out = (0..runs)
            .map(|_| {
                let mut g = Faulty::<Cubes>::decode(&start.save()).unwrap();
                if let Some(n) = node {
                    enter(n);
                }
                for f in 0..5 {
                    g.step(f, &inputs);
                }
                leave();
                g.checksum()
            })
            .collect();
        install(None);
        out
    }

    #[test]
    fn only_the_faulty_seat_drifts_and_as_its_kind_says() {
        let plain = stepped(Recurring::SelfConsistent, None, 1)[0];
        assert_eq!(stepped(Recurring::SelfConsistent, Some(1), 1)[0], plain);
        let consistent = stepped(Recurring::SelfConsistent, Some(0), 2);
        assert_ne!(consistent[0], plain);
        assert_eq!(consistent[0], consistent[1]);
        let inconsistent = stepped(Recurring::SelfInconsistent, Some(0), 2);
        assert_ne!(inconsistent[0], plain);
        assert_ne!(inconsistent[0], inconsistent[1]);
    }
}
