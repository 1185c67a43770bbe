//! A small game for the sim crate's tests: walkers on a line, pushed by
//! their players' buttons, with a seeded random drift each frame.
#![allow(dead_code)]

use lockstep_codec::input::Buttons;
use lockstep_derive::Canonical;
use lockstep_fx::{Canonical, Fx, Rng, Sink, StateReader, StateWriter};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError, read_version};

/// The walkers' settings (their encoding is derived).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
pub struct WalkersConfig {
    /// Walkers per player.
    pub walkers: u32,
    /// Distance a held button moves a walker per frame.
    pub step: Fx,
}

impl Default for WalkersConfig {
    fn default() -> Self {
        WalkersConfig {
            walkers: 4,
            step: Fx::lit("0.25"),
        }
    }
}

/// The game: `positions[player * walkers + i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walkers {
    pub config: WalkersConfig,
    pub seed: u64,
    pub positions: Vec<Fx>,
}

impl Game for Walkers {
    type Input = Buttons;
    type Config = WalkersConfig;
    const ID: &'static str = "walkers";
    const VERSION: u32 = 1;

    fn new(config: &WalkersConfig, setup: &Match) -> Result<Self, SetupError> {
        setup.check(Self::ID, 1..=8)?;
        let n = config.walkers as usize * usize::from(setup.seats);
        Ok(Walkers {
            config: config.clone(),
            seed: setup.seed,
            positions: vec![Fx::ZERO; n],
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Buttons]) {
        let mut rng = Rng::for_frame(self.seed, u64::from(frame));
        let per = self.config.walkers as usize;
        for (i, p) in self.positions.iter_mut().enumerate() {
            let b = inputs.get(i / per.max(1)).copied().unwrap_or_default();
            if b.held(0) {
                *p -= self.config.step;
            }
            if b.held(1) {
                *p += self.config.step;
            }
            *p += rng.fx_range(Fx::lit("-0.01"), Fx::lit("0.01"));
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("walkers", &[]);
        w.field("version", &Self::VERSION);
        w.field("seed", &self.seed);
        self.config.encode(w);
        w.write_len(self.positions.len());
        for (i, p) in self.positions.iter().enumerate() {
            w.entity("walker", &[i as u32]);
            w.field("position", p);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Walkers>(&mut r)?;
        let seed = r.read_u64()?;
        let config = WalkersConfig::decode(&mut r)?;
        let n = r.read_len(8)?;
        let mut positions = Vec::with_capacity(n);
        for _ in 0..n {
            positions.push(r.read_fx()?);
        }
        r.finish()?;
        Ok(Walkers {
            config,
            seed,
            positions,
        })
    }
}

/// A scripted input: player `seat` at `frame`.
pub fn script(seat: u8, frame: Frame) -> Buttons {
    Buttons::scripted(seat, frame)
}
