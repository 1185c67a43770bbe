//! `runners`: one runner per seat on a looping track. A held button 1
//! runs forward, button 0 back, and a seeded gust pushes every runner a
//! little each frame; a runner past the end of the track scores a lap and
//! starts again. Integer and fixed-point only, like every lockstep game.

use lockstep_codec::input::Buttons;
use lockstep_derive::Canonical;
use lockstep_fx::{Canonical, Fx, Rng, Sink, StateReader, StateWriter};
use lockstep_games::Demo;
use lockstep_sim::{Bot, Frame, Game, Match, SetupError, StateError, read_version};

/// The settings, from a TOML file or the embedded defaults.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
pub struct RunnersConfig {
    /// Distance a held button moves a runner each frame.
    pub stride: Fx,
    /// Length of the track: a lap.
    pub track: Fx,
}

/// The match: each seat's runner.
pub struct Runners {
    config: RunnersConfig,
    seed: u64,
    runners: Vec<Runner>,
}

/// One seat's runner.
#[derive(Debug, Clone, Copy)]
struct Runner {
    position: Fx,
    laps: u32,
}

impl Game for Runners {
    type Input = Buttons;
    type Config = RunnersConfig;
    const ID: &'static str = "runners";
    const VERSION: u32 = 1;

    fn new(config: &RunnersConfig, setup: &Match) -> Result<Runners, SetupError> {
        setup.check(Self::ID, 1..=8)?;
        if config.stride <= Fx::ZERO || config.track <= config.stride {
            return Err(SetupError::Setting {
                game: Self::ID,
                field: "track",
                reason: "stride must be positive and the track longer than a stride".into(),
            });
        }
        let start = Runner {
            position: Fx::ZERO,
            laps: 0,
        };
        Ok(Runners {
            config: config.clone(),
            seed: setup.seed,
            runners: vec![start; usize::from(setup.seats)],
        })
    }

    fn step(&mut self, frame: Frame, inputs: &[Buttons]) {
        let mut gusts = Rng::for_frame(self.seed, u64::from(frame));
        let (stride, track) = (self.config.stride, self.config.track);
        for (runner, input) in self.runners.iter_mut().zip(inputs) {
            if input.held(1) {
                runner.position += stride;
            }
            if input.held(0) && runner.position >= stride {
                runner.position -= stride;
            }
            runner.position += gusts.fx_range(Fx::ZERO, stride);
            if runner.position >= track {
                runner.position -= track;
                runner.laps += 1;
            }
        }
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("runners", &[]);
        w.field("version", &Self::VERSION);
        w.field("seed", &self.seed);
        self.config.encode(w);
        w.write_len(self.runners.len());
        for (seat, runner) in self.runners.iter().enumerate() {
            w.entity("runner", &[seat as u32]);
            w.field("position", &runner.position);
            w.field("laps", &runner.laps);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Runners, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Runners>(&mut r)?;
        let seed = r.read_u64()?;
        let config = RunnersConfig::decode(&mut r)?;
        let mut runners = Vec::new();
        for _ in 0..r.read_len(12)? {
            let position = r.read_fx()?;
            let laps = r.read_u32()?;
            runners.push(Runner { position, laps });
        }
        r.finish()?;
        Ok(Runners {
            config,
            seed,
            runners,
        })
    }
}

/// A bot that mostly runs forward and sometimes stops or turns back.
pub struct RunnerBot {
    rng: Rng,
}

impl Bot<Runners> for RunnerBot {
    fn input(&mut self, _game: &Runners, _frame: Frame) -> Buttons {
        match self.rng.below(8) {
            0 => Buttons(0b01),
            1 => Buttons(0),
            _ => Buttons(0b10),
        }
    }
}

impl Demo for Runners {
    type Bot = RunnerBot;
    const DEFAULT_SETTINGS: &'static str = "stride = \"0.25\"\ntrack = 40\n";

    fn bot(seat: u8, seed: u64) -> RunnerBot {
        RunnerBot {
            rng: Rng::new(seed, u64::from(seat)),
        }
    }
}
