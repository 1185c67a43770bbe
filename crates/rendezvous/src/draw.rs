//! [`Draw`]: the random bytes a rendezvous needs (match ids, match keys),
//! from a seed that comes in: BLAKE3 in keyed mode over a counter. The
//! process draws the seed from its operating system once; a test passes a
//! fixed one and gets the same run every time.
//!
//! Invariants: no two draws of one `Draw` repeat (the counter never does
//! within 2⁶⁴ draws); without the seed, a draw cannot be told from random
//! bytes.

/// A stream of random bytes from a seed. See the module documentation.
#[derive(Clone)]
pub struct Draw {
    key: [u8; 32],
    counter: u64,
}

impl core::fmt::Debug for Draw {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Draw")
            .field("counter", &self.counter)
            .finish_non_exhaustive()
    }
}

impl Draw {
    /// Draws from `seed`.
    pub fn new(seed: [u8; 32]) -> Draw {
        Draw {
            key: blake3::derive_key("lockstep reach v1 2026 draw", &seed),
            counter: 0,
        }
    }

    /// The next 32 random bytes.
    pub fn bytes(&mut self) -> [u8; 32] {
        self.counter = self.counter.wrapping_add(1);
        *blake3::keyed_hash(&self.key, &self.counter.to_le_bytes()).as_bytes()
    }

    /// The next random `u64`.
    pub fn u64(&mut self) -> u64 {
        let b = self.bytes();
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    /// The next 16 random bytes.
    pub fn sixteen(&mut self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.bytes()[..16]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_seed_and_never_repeat() {
        let mut a = Draw::new([1; 32]);
        let mut b = Draw::new([1; 32]);
        let mut c = Draw::new([2; 32]);
        let first = a.bytes();
        assert_eq!(first, b.bytes());
        assert_ne!(first, c.bytes());
        assert_ne!(first, a.bytes());
    }
}
