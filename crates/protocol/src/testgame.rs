//! A small but real game for tests and experiments: 64 particles (256 `Fx`
//! values) pushed by every player's [`Buttons`] each frame, with a seeded
//! per-frame random kick, a canonical snapshot and a checksum of it.
//!
//! Invariants: [`Particles::step`] is a pure function of the state, the frame
//! and the inputs (integer `Fx` arithmetic, `Rng::for_frame`); the checksum
//! is BLAKE3 of exactly the snapshot bytes, so a resync can verify a loaded
//! state; [`Particles::load`] accepts only what [`Particles::snapshot`]
//! produces.

use lockstep_fx::{Checksum, DecodeError, Fx, Rng, Sink, StateReader, StateWriter};

/// Particles in the game.
pub const PARTICLES: usize = 64;

pub use lockstep_codec::input::Buttons;

/// The particle game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Particles {
    seed: u64,
    frame: u32,
    pos: Vec<[Fx; 2]>,
    vel: Vec<[Fx; 2]>,
}

const WALL: Fx = Fx::from_int(10);
const PUSH: Fx = Fx::lit("0.25");
const DAMP: Fx = Fx::lit("0.99");
const DT: Fx = Fx::from_ratio(1, 60);

impl Particles {
    /// A new game: particles on a grid, at rest.
    pub fn new(seed: u64) -> Particles {
        let pos = (0..PARTICLES as i32)
            .map(|i| [Fx::from_int(i % 8 - 4), Fx::from_int(i / 8 - 4)])
            .collect();
        Particles {
            seed,
            frame: 0,
            pos,
            vel: vec![[Fx::ZERO; 2]; PARTICLES],
        }
    }

    /// Frames stepped.
    pub fn frame(&self) -> u32 {
        self.frame
    }

    /// Steps one frame with every player's buttons, indexed by seat.
    pub fn step(&mut self, frame: u32, inputs: &[Buttons]) {
        let players = inputs.len().max(1);
        let mut rng = Rng::for_frame(self.seed, u64::from(frame));
        for (p, b) in inputs.iter().enumerate() {
            let dx = Fx::from_int(i32::from(b.held(1)) - i32::from(b.held(0)));
            let dy = Fx::from_int(i32::from(b.held(2)) - i32::from(b.held(3)));
            for i in (p..PARTICLES).step_by(players) {
                self.vel[i][0] += dx * PUSH;
                self.vel[i][1] += dy * PUSH;
            }
            if b.held(4) {
                let i = rng.below(PARTICLES as u32) as usize;
                self.vel[i][0] += rng.fx_range(-Fx::ONE, Fx::ONE);
                self.vel[i][1] += rng.fx_range(-Fx::ONE, Fx::ONE);
            }
        }
        for (p, v) in self.pos.iter_mut().zip(&mut self.vel) {
            for k in 0..2 {
                v[k] *= DAMP;
                p[k] += v[k] * DT;
                if p[k] > WALL || p[k] < -WALL {
                    v[k] = -v[k];
                    p[k] = p[k].clamp(-WALL, WALL);
                }
            }
        }
        self.frame = frame + 1;
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_u64(self.seed);
        w.write_u32(self.frame);
        w.write_len(self.pos.len());
        for (p, v) in self.pos.iter().zip(&self.vel) {
            w.write_fx(p[0]);
            w.write_fx(p[1]);
            w.write_fx(v[0]);
            w.write_fx(v[1]);
        }
    }

    /// BLAKE3 of the snapshot.
    pub fn checksum(&self) -> Checksum {
        let mut w = StateWriter::hasher();
        self.encode(&mut w);
        w.checksum()
    }

    /// The exact snapshot.
    pub fn snapshot(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.encode(&mut w);
        w.into_inner()
    }

    /// Replaces the state with a snapshot.
    pub fn load(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = StateReader::new(bytes);
        let seed = r.read_u64()?;
        let frame = r.read_u32()?;
        let n = r.read_len(32)?;
        let mut pos = Vec::with_capacity(n);
        let mut vel = Vec::with_capacity(n);
        for _ in 0..n {
            pos.push([r.read_fx()?, r.read_fx()?]);
            vel.push([r.read_fx()?, r.read_fx()?]);
        }
        r.finish()?;
        *self = Particles {
            seed,
            frame,
            pos,
            vel,
        };
        Ok(())
    }

    /// Flips the lowest bit of particle 0's x position (a simulated drift).
    pub fn corrupt(&mut self) {
        if let Some(p) = self.pos.first_mut() {
            p[0] = Fx::from_bits(p[0].to_bits() ^ 1);
        }
    }
}

/// Scripted buttons for `seat` at `frame`: a new random set every 20 frames
/// (3 changes a second), the same on every run.
pub fn scripted(seat: u8, frame: u32) -> Buttons {
    Buttons((Rng::for_frame(u64::from(seat) + 1, u64::from(frame / 20)).next_u32() & 63) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_round_trip_and_checksum() {
        let mut g = Particles::new(9);
        for f in 0..50 {
            g.step(f, &[scripted(0, f), scripted(1, f)]);
        }
        let snap = g.snapshot();
        assert_eq!(Checksum::of(&snap), g.checksum());
        let mut h = Particles::new(0);
        h.load(&snap).unwrap();
        assert_eq!(h, g);
        h.corrupt();
        assert_ne!(h.checksum(), g.checksum());
        assert!(h.load(&snap[..snap.len() - 1]).is_err());
    }
}
