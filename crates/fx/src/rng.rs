//! `Rng`: the engine's one random number generator, PCG32 (PCG-XSH-RR with a
//! 64-bit state and a selectable odd increment), by M. E. O'Neill, "PCG: A
//! Family of Simple Fast Space-Efficient Statistically Good Algorithms for
//! Random Number Generation" (2014).
//!
//! Invariants:
//! - The output stream is a pure function of `(seed, stream)`, identical on
//!   every target; it matches the reference `pcg32_srandom_r` /
//!   `pcg32_random_r` of the PCG minimal C library (test vectors in the tests).
//! - The generator is versioned by [`Rng::VERSION`]. Any change to the
//!   algorithm, to seeding, to [`Rng::below`] or to [`Rng::shuffle`] changes the
//!   simulation, so it must bump the version (replays record it).
//! - [`Rng::for_frame`] derives the per-frame stream from `(world seed, frame)`
//!   so a frame's randomness never depends on how many numbers earlier frames
//!   drew.

use crate::Fx;

const MULTIPLIER: u64 = 6_364_136_223_846_793_005;

/// A PCG32 generator. Its whole state is two `u64`s, see [`Rng::to_state`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Rng {
    state: u64,
    inc: u64,
}

/// SplitMix64's finaliser (Steele, Lea & Flood, "Fast Splittable Pseudorandom
/// Number Generators", 2014): a bijective 64-bit mix used to derive seeds.
#[inline]
const fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// Version of the generator's algorithm and derived operations.
    pub const VERSION: u32 = 1;

    /// The generator seeded with `seed` on stream `stream`, exactly as the
    /// reference `pcg32_srandom_r(seed, stream)`.
    pub const fn new(seed: u64, stream: u64) -> Rng {
        let mut rng = Rng {
            state: 0,
            inc: (stream << 1) | 1,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(seed);
        rng.step();
        rng
    }

    /// The generator for one simulation frame: the seed is a SplitMix64 mix of
    /// the world seed and the frame number, the stream (increment) the frame
    /// number. Frames below 2^63 each get their own stream; two worlds on the
    /// same frame share the stream but start at unrelated points of it.
    pub const fn for_frame(world_seed: u64, frame: u64) -> Rng {
        Rng::new(splitmix64(world_seed ^ splitmix64(frame)), frame)
    }

    /// Rebuilds a generator from [`Rng::to_state`]. The increment is forced odd,
    /// so any pair of words is a valid generator.
    pub const fn from_state(state: u64, inc: u64) -> Rng {
        Rng {
            state,
            inc: inc | 1,
        }
    }

    /// The full state `(state, increment)`, for canonical encoding.
    pub const fn to_state(&self) -> (u64, u64) {
        (self.state, self.inc)
    }

    #[inline(always)]
    const fn step(&mut self) {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(self.inc);
    }

    /// The next 32 uniformly distributed bits.
    #[inline]
    pub const fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.step();
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// The next 64 bits: two outputs, the first in the high half.
    #[inline]
    pub const fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        let lo = self.next_u32() as u64;
        (hi << 32) | lo
    }

    /// A uniform integer in `[0, bound)` without modulo bias (Lemire,
    /// "Fast Random Integer Generation in an Interval", 2019). `bound == 0`
    /// returns 0 and consumes nothing.
    #[inline]
    pub fn below(&mut self, bound: u32) -> u32 {
        if bound == 0 {
            return 0;
        }
        let mut m = self.next_u32() as u64 * bound as u64;
        if (m as u32) < bound {
            // Reject the low products that would over-represent some values.
            let threshold = bound.wrapping_neg() % bound;
            while (m as u32) < threshold {
                m = self.next_u32() as u64 * bound as u64;
            }
        }
        (m >> 32) as u32
    }

    /// A uniform integer in `[lo, hi]` (inclusive); `lo > hi` returns `lo`.
    pub fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        if lo >= hi {
            return lo;
        }
        let span = (hi as i64 - lo as i64) as u64 + 1;
        let offset = if span > u32::MAX as u64 {
            self.next_u32() as u64
        } else {
            self.below(span as u32) as u64
        };
        (lo as i64 + offset as i64) as i32
    }

    /// A uniform [`Fx`] in `[0, 1)`: 32 random fraction bits.
    #[inline]
    pub fn fx_unit(&mut self) -> Fx {
        Fx::from_bits(self.next_u32() as i64)
    }

    /// A uniform [`Fx`] in `[lo, hi)` (`lo` when `hi <= lo`): `lo` plus the
    /// span times a 32-bit unit draw, floored, computed in 128 bits so any
    /// span, even wider than the `Fx` range, works.
    pub fn fx_range(&mut self, lo: Fx, hi: Fx) -> Fx {
        if hi <= lo {
            return lo;
        }
        let span = hi.to_bits() as i128 - lo.to_bits() as i128;
        let offset = (span * self.next_u32() as i128) >> 32;
        Fx::from_bits((lo.to_bits() as i128 + offset) as i64)
    }

    /// `true` with probability `numerator / denominator`
    /// (`denominator == 0` gives `false`).
    pub fn chance(&mut self, numerator: u32, denominator: u32) -> bool {
        denominator != 0 && self.below(denominator) < numerator
    }

    /// Shuffles `items` uniformly (Fisher–Yates, from the back, one
    /// [`Rng::below`] draw per position). Slices longer than `u32::MAX` items
    /// are shuffled only in their first `u32::MAX` positions, the same on
    /// every target.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        let n = u32::try_from(items.len()).unwrap_or(u32::MAX);
        let mut i = n;
        while i > 1 {
            let j = self.below(i);
            i -= 1;
            items.swap(i as usize, j as usize);
        }
    }
}
