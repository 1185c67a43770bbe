//! [`FrameHasher`]: the checksum of a state that is hashed again every
//! frame, rehashing only the parts whose bytes changed since the last frame.
//!
//! BLAKE3 is a tree hash: the input is cut into 1 KiB chunks, each chunk is
//! hashed on its own (its *chaining value* depends only on its bytes and its
//! position), and pairs of chaining values are merged up a left-balanced
//! binary tree to the root. So a state hashed every frame can keep the
//! chaining value of every 16 KiB *leaf* (16 chunks, one whole subtree of
//! that tree), and when a frame's bytes equal the last frame's over a leaf,
//! reuse it. Only changed leaves are hashed again, then the ~n parents are
//! merged (a parent is one compression).
//!
//! Invariants:
//! - [`FrameHasher::checksum`] returns exactly `Checksum::of(bytes)` for the
//!   bytes the state writes, whatever states came before: the digest, and so
//!   the checksum's definition, is plain BLAKE3. A leaf's chaining value is
//!   reused only when the same bytes sit at the same offset, which is all
//!   that value depends on.
//! - The cache is machine-local: it is not state, and never changes a bit.
//!
//! A world at rest (bodies asleep) writes the same bytes frame after frame
//! except its frame counter, so it costs the encoding, a compare and one
//! leaf; a state that changes everywhere costs what a plain hash does, plus
//! the compare, which stops at the first differing byte of each leaf.
//!
//! **Threads.** Each leaf's chaining value depends on its bytes and offset
//! alone, so the leaves of a large state are shared out between threads
//! ([`FrameHasher::set_threads`], a machine setting like a world's thread
//! count): contiguous shares, each thread comparing and hashing its own,
//! then the parents merged on the calling thread. The digest is the same
//! for any thread count.

use blake3::hazmat::{ChainingValue, HasherExt, Mode, left_subtree_len, merge_subtrees_non_root};

use crate::{Checksum, StateWriter};

/// Bytes per cached leaf: 16 chunks of 1 KiB, a whole subtree of the BLAKE3
/// tree at any multiple of its size, and 16 chunks is what BLAKE3 hashes at
/// once with AVX-512 (8 with AVX2, 4 with SSE4.1 and NEON).
const LEAF: usize = 16 * 1024;

/// Below this many leaves (512 KiB) a state is hashed on one thread:
/// starting one costs about what hashing a few leaves does.
const PARALLEL_LEAVES: usize = 32;

/// Hashes a state every frame, keeping each 16 KiB leaf's BLAKE3 chaining
/// value for the next frame (see the module documentation).
///
/// ```
/// use lockstep_fx::{Checksum, FrameHasher, StateWriter};
///
/// let mut hasher = FrameHasher::new();
/// let mut state = vec![7u8; 100_000];
/// for frame in 0..3u8 {
///     state[5] = frame;
///     let checksum = hasher.checksum(|w: &mut StateWriter<Vec<u8>>| w.write_raw(&state));
///     assert_eq!(checksum, Checksum::of(&state));
/// }
/// ```
#[derive(Clone, Default)]
pub struct FrameHasher {
    /// The bytes of the last state hashed.
    last: Vec<u8>,
    /// The buffer the next state is written into (swapped with `last`).
    next: Vec<u8>,
    /// The chaining value of each leaf of `last` (empty when `last` is a
    /// single leaf or less: its digest is a root, not a chaining value).
    leaves: Vec<ChainingValue>,
    /// Threads the leaves may be shared between (0 counts as 1).
    threads: usize,
}

impl FrameHasher {
    /// A hasher with nothing cached.
    pub fn new() -> FrameHasher {
        FrameHasher::default()
    }

    /// BLAKE3 of the bytes `encode` writes, reusing what it can of the
    /// previous call's work.
    pub fn checksum(&mut self, encode: impl FnOnce(&mut StateWriter<Vec<u8>>)) -> Checksum {
        let mut buffer = core::mem::take(&mut self.next);
        buffer.clear();
        let mut w = StateWriter::new(buffer);
        encode(&mut w);
        let bytes = w.into_inner();
        let checksum = self.hash(&bytes);
        self.next = core::mem::replace(&mut self.last, bytes);
        checksum
    }

    /// The bytes of the last state hashed (its exact saved state).
    pub fn bytes(&self) -> &[u8] {
        &self.last
    }

    /// Lets a large state's leaves be hashed on up to `threads` threads (at
    /// least 1; always 1 on WebAssembly without threads). The checksum is
    /// the same for any count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
            1
        } else {
            threads.max(1)
        };
    }

    /// The threads a large state's leaves may be hashed on.
    pub fn threads(&self) -> usize {
        self.threads.max(1)
    }

    /// BLAKE3 of `bytes`, updating `leaves` from `last` to `bytes`.
    fn hash(&mut self, bytes: &[u8]) -> Checksum {
        if bytes.len() <= LEAF {
            // One leaf or less: hashed whole, its digest is the root.
            self.leaves.clear();
            return Checksum::of(bytes);
        }
        let count = bytes.len().div_ceil(LEAF);
        // Leaves below `known` hold the last state's chaining values.
        let known = self.leaves.len().min(count);
        self.leaves.resize(count, [0; 32]);
        let last = &self.last;
        // Brings the leaves from `first` on up to date with `bytes`.
        let update = |first: usize, leaves: &mut [ChainingValue]| {
            for (k, value) in leaves.iter_mut().enumerate() {
                let i = first + k;
                let start = i * LEAF;
                let leaf = &bytes[start..bytes.len().min(start + LEAF)];
                // The last state's whole leaf at this offset: equal only if
                // it has the same bytes and ends where this one does.
                let old = last.get(start..last.len().min(start + LEAF));
                if i < known && old == Some(leaf) {
                    continue;
                }
                *value = blake3::Hasher::new()
                    .set_input_offset(start as u64)
                    .update(leaf)
                    .finalize_non_root();
            }
        };
        let threads = if count >= PARALLEL_LEAVES {
            self.threads()
        } else {
            1
        };
        if threads == 1 {
            update(0, &mut self.leaves);
        } else {
            let share = count.div_ceil(threads);
            let update = &update;
            std::thread::scope(|s| {
                let mut shares = self.leaves.chunks_mut(share).enumerate();
                let first = shares.next();
                for (t, leaves) in shares {
                    s.spawn(move || update(t * share, leaves));
                }
                if let Some((_, leaves)) = first {
                    update(0, leaves);
                }
            });
        }
        let (left, right) = split(bytes.len());
        let digest = blake3::hazmat::merge_subtrees_root(
            &self.subtree(0, left),
            &self.subtree(left, right),
            Mode::Hash,
        );
        Checksum::from_bytes(*digest.as_bytes())
    }

    /// The chaining value of the subtree of `len` bytes at `start` (a
    /// multiple of [`LEAF`]), merged from the cached leaves.
    fn subtree(&self, start: usize, len: usize) -> ChainingValue {
        if len <= LEAF {
            return self.leaves[start / LEAF];
        }
        let (left, right) = split(len);
        merge_subtrees_non_root(
            &self.subtree(start, left),
            &self.subtree(start + left, right),
            Mode::Hash,
        )
    }
}

impl core::fmt::Debug for FrameHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FrameHasher")
            .field("last_bytes", &self.last.len())
            .field("leaves", &self.leaves.len())
            .finish_non_exhaustive()
    }
}

/// How BLAKE3 splits a subtree of `len` (> 1 chunk) bytes: the left part is
/// the largest power-of-two number of chunks below `len`, so for `len` above
/// one leaf it is a whole number of leaves.
fn split(len: usize) -> (usize, usize) {
    let left = left_subtree_len(len as u64) as usize;
    (left, len - left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_of(h: &mut FrameHasher, bytes: &[u8]) -> Checksum {
        h.checksum(|w| w.write_raw(bytes))
    }

    #[test]
    fn every_size_and_edit_gives_plain_blake3() {
        let mut h = FrameHasher::new();
        let sizes = [
            0,
            1,
            1024,
            LEAF - 1,
            LEAF,
            LEAF + 1,
            2 * LEAF,
            3 * LEAF + 5,
            64 * 1024,
            100_003,
            5 * LEAF,
        ];
        let mut rng = crate::Rng::new(11, 3);
        let mut bytes = Vec::new();
        for &n in sizes.iter().chain(sizes.iter().rev()) {
            bytes.resize(n, 0xa5);
            for _ in 0..4 {
                // The same bytes again, then one changed byte somewhere.
                assert_eq!(hash_of(&mut h, &bytes), Checksum::of(&bytes), "{n} bytes");
                if n > 0 {
                    let at = rng.below(n as u32) as usize;
                    bytes[at] = bytes[at].wrapping_add(1);
                }
                assert_eq!(hash_of(&mut h, &bytes), Checksum::of(&bytes), "{n} bytes");
            }
        }
        assert_eq!(h.bytes(), &bytes[..]);
    }

    #[test]
    fn any_thread_count_gives_plain_blake3() {
        let mut rng = crate::Rng::new(5, 8);
        for threads in [1, 2, 3, 7] {
            let mut h = FrameHasher::new();
            h.set_threads(threads);
            assert_eq!(h.threads(), threads);
            // Large enough to be shared out, with a short last leaf; then
            // grown, shrunk, and edited in a few leaves at a time.
            let mut bytes: Vec<u8> = (0..PARALLEL_LEAVES * LEAF + 777)
                .map(|i| (i * 31 % 251) as u8)
                .collect();
            for round in 0..12 {
                assert_eq!(
                    hash_of(&mut h, &bytes),
                    Checksum::of(&bytes),
                    "{threads} threads"
                );
                for _ in 0..=round % 4 {
                    let at = rng.below(bytes.len() as u32) as usize;
                    bytes[at] ^= 0x5a;
                }
                match round {
                    4 => bytes.extend_from_slice(&[9; 3 * LEAF]),
                    8 => bytes.truncate(PARALLEL_LEAVES * LEAF - 5),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn a_shorter_state_with_the_same_start_is_not_mistaken_for_the_longer() {
        let mut h = FrameHasher::new();
        let long = vec![3u8; 3 * LEAF];
        assert_eq!(hash_of(&mut h, &long), Checksum::of(&long));
        for cut in [3 * LEAF - 1, 2 * LEAF + 1, 2 * LEAF, LEAF + 1] {
            assert_eq!(hash_of(&mut h, &long[..cut]), Checksum::of(&long[..cut]));
            assert_eq!(hash_of(&mut h, &long), Checksum::of(&long));
        }
    }
}
