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
//!
//! **In the background.** [`FrameHasher::begin`] encodes a state at once
//! and, with two or more threads, posts its leaves as background work for
//! `fork_join`'s pool: the pool's helpers hash a leaf at a time while they
//! wait between the shares of the next frame's step, and so does a caller
//! waiting for its helpers at the end of a share-out (see `fork_join.rs`).
//! [`FrameHasher::collect`] hashes whatever leaves are left itself, waits
//! a few microseconds for any leaf another thread is still hashing (one at
//! most each) and then hashes that leaf itself too, so a helper that lost
//! its core never holds the owner up, and merges the parents. So hashing takes the time a step leaves a thread
//! waiting (in the four-seat RTS replay on two threads, the pool's helper
//! spent about two thirds of the run waiting) and competes with none of
//! its shares; where no helper is free (one thread, a busy pool, a host
//! without threads), `collect` hashes the state on the calling thread.
//! The bytes, the last state and the cached leaves move into the posted
//! work and back by value; each leaf's chaining value is written by the
//! one thread that took the leaf.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use blake3::hazmat::{ChainingValue, HasherExt, Mode, left_subtree_len, merge_subtrees_non_root};

use crate::fork_join::{Background, post_background, withdraw_background};
use crate::{Checksum, StateWriter, fork_join};

/// Bytes per cached leaf: 16 chunks of 1 KiB, a whole subtree of the BLAKE3
/// tree at any multiple of its size, and 16 chunks is what BLAKE3 hashes at
/// once with AVX-512 (8 with AVX2, 4 with SSE4.1 and NEON).
const LEAF: usize = 16 * 1024;

/// Below this many leaves (512 KiB) a state is hashed on one thread: set
/// when each share started a thread, which cost about what hashing a few
/// leaves does (a share handed to `fork_join`'s pool costs less now).
const PARALLEL_LEAVES: usize = 32;

/// [`FrameHasher::begin`] posts a state's leaves as background work only
/// when the last state hashed had to hash this many leaves again: a state
/// that changed in fewer (a world mostly asleep) costs less to hash where
/// it is than to post.
const BACKGROUND_LEAVES: usize = 4;

/// Rounds [`FrameHasher::collect`] spins for a helper to finish the leaf it
/// is hashing (a few microseconds) before it hashes that leaf itself.
const SETTLE_SPINS: u32 = 1024;

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
#[derive(Default)]
pub struct FrameHasher {
    /// The bytes of the last state hashed (empty while a begun hashing
    /// holds them).
    last: Vec<u8>,
    /// The buffer the next state is written into (swapped with `last`).
    next: Vec<u8>,
    /// The chaining value of each leaf of `last` (empty when `last` is a
    /// single leaf or less: its digest is a root, not a chaining value).
    leaves: Vec<ChainingValue>,
    /// Threads the leaves may be shared between (0 counts as 1).
    threads: usize,
    /// A begun state being hashed in the background (holding `last` and
    /// `leaves` meanwhile).
    in_flight: Option<Arc<Hashing>>,
    /// The checksum of the begun state, once known and not yet collected.
    ready: Option<Checksum>,
    /// How many leaves the last hash had to hash again (their bytes had
    /// changed): what the next state is likely to cost.
    rehashed: usize,
}

/// A begun state's hashing, posted as background work: its leaves, taken
/// one at a time by whichever thread comes (a pool helper, or the owner
/// at [`FrameHasher::collect`]), with the cache they are compared against.
struct Hashing {
    bytes: Vec<u8>,
    /// The last state and its leaves' chaining values (the cache).
    last: Vec<u8>,
    leaves: Vec<ChainingValue>,
    /// How many leaves `bytes` has (more than one).
    count: usize,
    /// The next leaf to take (may run past `count`).
    next: AtomicUsize,
    /// How many leaves were hashed again (their bytes had changed).
    rehashed: AtomicUsize,
    /// Each leaf's chaining value, written by the thread that took it once
    /// it is done (`None` before).
    values: Mutex<Vec<Option<ChainingValue>>>,
}

impl Hashing {
    fn new(bytes: Vec<u8>, last: Vec<u8>, leaves: Vec<ChainingValue>) -> Hashing {
        let count = bytes.len().div_ceil(LEAF);
        Hashing {
            values: Mutex::new(vec![None; count]),
            bytes,
            last,
            leaves,
            count,
            next: AtomicUsize::new(0),
            rehashed: AtomicUsize::new(0),
        }
    }
}

impl Background for Hashing {
    fn part(&self) -> bool {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.count {
            return false;
        }
        let value = leaf_value(&self.last, self.leaves.len(), &self.bytes, i);
        if value.is_some() {
            self.rehashed.fetch_add(1, Ordering::Relaxed);
        }
        let value = value.unwrap_or_else(|| self.leaves[i]);
        self.values.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(value);
        true
    }

    fn has_parts(&self) -> bool {
        self.next.load(Ordering::Relaxed) < self.count
    }
}

/// A copy keeps the thread setting but none of the cache (which never
/// changes a checksum) and nothing begun.
impl Clone for FrameHasher {
    fn clone(&self) -> FrameHasher {
        let mut copy = FrameHasher::default();
        copy.threads = self.threads;
        copy
    }
}

/// A state begun and never collected is withdrawn, so that no helper
/// hashes it for nobody.
impl Drop for FrameHasher {
    fn drop(&mut self) {
        if let Some(hashing) = self.in_flight.take() {
            withdraw_background(&hashing);
        }
    }
}

impl FrameHasher {
    /// A hasher with nothing cached.
    pub fn new() -> FrameHasher {
        FrameHasher::default()
    }

    /// BLAKE3 of the bytes `encode` writes, reusing what it can of the
    /// previous call's work, hashed before it returns.
    pub fn checksum(&mut self, encode: impl FnOnce(&mut StateWriter<Vec<u8>>)) -> Checksum {
        self.settle();
        self.ready = None;
        let bytes = self.encode(encode);
        self.finish(bytes)
    }

    /// Encodes a state now and hashes it for [`FrameHasher::collect`]: in
    /// the background, by the pool's waiting helpers, when this hasher may
    /// use two or more threads (else here and now). A checksum begun
    /// before and not collected is dropped.
    ///
    /// ```
    /// use lockstep_fx::{Checksum, FrameHasher, StateWriter};
    ///
    /// let mut hasher = FrameHasher::new();
    /// hasher.set_threads(2);
    /// for frame in 0..3u8 {
    ///     // A large state that changes everywhere: from the second frame
    ///     // on, it is posted for the pool's helpers.
    ///     let state = vec![frame; 600_000];
    ///     hasher.begin(|w: &mut StateWriter<Vec<u8>>| w.write_raw(&state));
    ///     // ... step the next frame here while the helpers hash ...
    ///     assert_eq!(hasher.collect(), Some(Checksum::of(&state)));
    ///     assert_eq!(hasher.collect(), None);
    /// }
    /// ```
    pub fn begin(&mut self, encode: impl FnOnce(&mut StateWriter<Vec<u8>>)) {
        self.settle();
        self.ready = None;
        let bytes = self.encode(encode);
        // A single leaf has no parts to share, and a state that changed in
        // few leaves last time costs less to hash here than to post.
        if self.threads() < 2 || bytes.len() <= LEAF || self.rehashed < BACKGROUND_LEAVES {
            self.ready = Some(self.finish(bytes));
            return;
        }
        let hashing = Arc::new(Hashing::new(
            bytes,
            core::mem::take(&mut self.last),
            core::mem::take(&mut self.leaves),
        ));
        post_background(hashing.clone());
        self.in_flight = Some(hashing);
    }

    /// The checksum of the state given to the last [`FrameHasher::begin`],
    /// hashing here the leaves no helper took; `None` if it was collected
    /// already (or nothing was begun).
    pub fn collect(&mut self) -> Option<Checksum> {
        self.settle();
        self.ready.take()
    }

    /// The bytes of the last state hashed (its exact saved state), its
    /// hashing finished first if it was begun.
    pub fn bytes(&mut self) -> &[u8] {
        self.settle();
        &self.last
    }

    /// Writes a state into the spare buffer.
    fn encode(&mut self, encode: impl FnOnce(&mut StateWriter<Vec<u8>>)) -> Vec<u8> {
        let mut buffer = core::mem::take(&mut self.next);
        buffer.clear();
        let mut w = StateWriter::new(buffer);
        encode(&mut w);
        w.into_inner()
    }

    /// Hashes `bytes` here, and keeps them as the last state.
    fn finish(&mut self, bytes: Vec<u8>) -> Checksum {
        let threads = self.threads();
        let (checksum, rehashed) = hash(&self.last, &mut self.leaves, &bytes, threads);
        self.rehashed = rehashed;
        self.next = core::mem::replace(&mut self.last, bytes);
        checksum
    }

    /// Finishes the state being hashed in the background: hashes the
    /// leaves no helper took, waits for those a helper is hashing, and
    /// merges them into its checksum.
    fn settle(&mut self) {
        let Some(hashing) = self.in_flight.take() else {
            return;
        };
        while hashing.part() {}
        withdraw_background(&hashing);
        // A helper still holds the work only while it hashes a leaf it took
        // (a few microseconds), then lets go of it: a short spin for that.
        // A helper whose core was taken meanwhile (another program on a
        // busy machine) may hold it for a scheduler's slice, milliseconds:
        // then the leaves it holds are hashed here again and the buffers
        // copied out, rather than waited for.
        let mut hashing = hashing;
        for _ in 0..SETTLE_SPINS {
            match Arc::try_unwrap(hashing) {
                Ok(done) => return self.settle_owned(done),
                Err(shared) => hashing = shared,
            }
            std::hint::spin_loop();
        }
        match Arc::try_unwrap(hashing) {
            Ok(done) => self.settle_owned(done),
            Err(shared) => self.settle_shared(&shared),
        }
    }

    /// Settles a hashing no other thread holds, taking its buffers back.
    fn settle_owned(&mut self, hashing: Hashing) {
        let values = hashing
            .values
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        self.next = hashing.last;
        self.last = hashing.bytes;
        if values.iter().all(Option::is_some) {
            self.leaves = values.into_iter().flatten().collect();
            self.ready = Some(root(&self.leaves, self.last.len()));
            self.rehashed = hashing.rehashed.into_inner();
        } else {
            // A leaf taken and never finished (its thread panicked, which
            // hashing a slice does not): hash the whole state again.
            self.leaves.clear();
            let (checksum, rehashed) = hash(&[], &mut self.leaves, &self.last, 1);
            self.ready = Some(checksum);
            self.rehashed = rehashed;
        }
    }

    /// Settles a hashing a helper still holds (it is hashing a leaf): the
    /// leaves not done yet are hashed here, and the state's bytes copied
    /// out; the helper's own value for its leaf, the same, is dropped with
    /// its handle.
    fn settle_shared(&mut self, hashing: &Hashing) {
        let values = hashing
            .values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let known = hashing.leaves.len();
        let mut rehashed = hashing.rehashed.load(Ordering::Relaxed);
        self.leaves = values
            .iter()
            .enumerate()
            .map(|(i, value)| {
                value.unwrap_or_else(|| {
                    let fresh = leaf_value(&hashing.last, known, &hashing.bytes, i);
                    rehashed += usize::from(fresh.is_some());
                    fresh.unwrap_or_else(|| hashing.leaves[i])
                })
            })
            .collect();
        self.last = hashing.bytes.clone();
        self.next = Vec::new();
        self.ready = Some(root(&self.leaves, self.last.len()));
        self.rehashed = rehashed;
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
}

/// BLAKE3 of `bytes`, updating `leaves` (the chaining values of `last`'s
/// leaves) to those of `bytes`, on up to `threads` threads; with the number
/// of leaves it had to hash again (1 for a state of one leaf or less).
fn hash(
    last: &[u8],
    leaves: &mut Vec<ChainingValue>,
    bytes: &[u8],
    threads: usize,
) -> (Checksum, usize) {
    if bytes.len() <= LEAF {
        // One leaf or less: hashed whole, its digest is the root.
        leaves.clear();
        return (Checksum::of(bytes), 1);
    }
    let count = bytes.len().div_ceil(LEAF);
    // Leaves below `known` hold the last state's chaining values.
    let known = leaves.len().min(count);
    leaves.resize(count, [0; 32]);
    // Brings the leaves from `first` on up to date with `bytes`; returns
    // how many it hashed.
    let update = |first: usize, leaves: &mut [ChainingValue]| {
        let mut hashed = 0;
        for (k, value) in leaves.iter_mut().enumerate() {
            if let Some(new) = leaf_value(last, known, bytes, first + k) {
                *value = new;
                hashed += 1;
            }
        }
        hashed
    };
    let threads = if count >= PARALLEL_LEAVES {
        threads.max(1)
    } else {
        1
    };
    let rehashed = if threads == 1 {
        update(0, leaves)
    } else {
        let share = count.div_ceil(threads);
        let shares = leaves.chunks_mut(share).enumerate().collect();
        fork_join(shares, |(t, leaves)| update(t * share, leaves))
            .into_iter()
            .sum()
    };
    (root(leaves, bytes.len()), rehashed)
}

/// The chaining value of leaf `i` of `bytes`, or `None` where the last
/// state (`last`, whose first `known` leaves' values are cached) has the
/// same bytes there, so that its cached value stands.
fn leaf_value(last: &[u8], known: usize, bytes: &[u8], i: usize) -> Option<ChainingValue> {
    let start = i * LEAF;
    let leaf = &bytes[start..bytes.len().min(start + LEAF)];
    // The last state's whole leaf at this offset: equal only if it has
    // the same bytes and ends where this one does.
    let old = last.get(start..last.len().min(start + LEAF));
    if i < known && old == Some(leaf) {
        return None;
    }
    Some(
        blake3::Hasher::new()
            .set_input_offset(start as u64)
            .update(leaf)
            .finalize_non_root(),
    )
}

/// BLAKE3 of a state of `len` bytes (more than one leaf) whose leaves'
/// chaining values are `leaves`.
fn root(leaves: &[ChainingValue], len: usize) -> Checksum {
    let (left, right) = split(len);
    let digest = blake3::hazmat::merge_subtrees_root(
        &subtree(leaves, 0, left),
        &subtree(leaves, left, right),
        Mode::Hash,
    );
    Checksum::from_bytes(*digest.as_bytes())
}

/// The chaining value of the subtree of `len` bytes at `start` (a multiple
/// of [`LEAF`]), merged from the cached `leaves`.
fn subtree(leaves: &[ChainingValue], start: usize, len: usize) -> ChainingValue {
    if len <= LEAF {
        return leaves[start / LEAF];
    }
    let (left, right) = split(len);
    merge_subtrees_non_root(
        &subtree(leaves, start, left),
        &subtree(leaves, start + left, right),
        Mode::Hash,
    )
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
    fn a_state_hashed_in_the_background_gives_plain_blake3() {
        let mut rng = crate::Rng::new(9, 2);
        for threads in [1, 2, 3] {
            let mut h = FrameHasher::new();
            h.set_threads(threads);
            let mut bytes: Vec<u8> = (0..20 * LEAF + 99).map(|i| (i % 253) as u8).collect();
            let mut helped = 0;
            for round in 0..24 {
                let expected = Checksum::of(&bytes);
                let state = bytes.clone();
                h.begin(|w| w.write_raw(&state));
                // Posted for the pool's helpers only with two threads or
                // more, and only after a state that changed in many leaves.
                if h.in_flight.is_some() {
                    assert!(threads >= 2);
                    helped += 1;
                }
                // The caller goes on with the next state meanwhile: every
                // leaf changed, except in a few rounds only one byte.
                if round % 8 == 5 {
                    let at = rng.below(bytes.len() as u32) as usize;
                    bytes[at] ^= 0x81;
                } else {
                    for at in (0..bytes.len()).step_by(LEAF / 2) {
                        bytes[at] = bytes[at].wrapping_add(1);
                    }
                }
                match round % 4 {
                    // Collected as soon as begun, after the bytes are read,
                    // or only when the next state is begun (dropped).
                    0 => assert_eq!(h.collect(), Some(expected), "{threads} threads"),
                    1 => {
                        assert_eq!(h.bytes(), &state[..]);
                        assert_eq!(h.collect(), Some(expected));
                    }
                    // Left for the next `begin` to drop.
                    2 => continue,
                    _ => {
                        // A plain checksum in between drops the begun one.
                        assert_eq!(hash_of(&mut h, &bytes), Checksum::of(&bytes));
                    }
                }
                assert_eq!(h.collect(), None);
                match round {
                    11 => bytes.truncate(2 * LEAF + 3),
                    15 => bytes.extend_from_slice(&[4; 25 * LEAF]),
                    _ => {}
                }
            }
            assert_eq!(helped > 0, threads >= 2, "{threads} threads: {helped}");
            // A copy has none of the cache and nothing begun, and agrees.
            let mut copy = h.clone();
            assert_eq!(copy.threads(), threads);
            assert_eq!(hash_of(&mut copy, &bytes), hash_of(&mut h, &bytes));
        }
    }

    /// With helpers refused (a host without threads: none is started for
    /// the work, though helpers started before may still take parts), the
    /// caller hashes every leaf left when it collects, and the checksum is
    /// the same.
    #[test]
    fn a_state_no_helper_takes_is_hashed_by_its_owner() {
        crate::fork_join::probe::refuse(true);
        let mut h = FrameHasher::new();
        h.set_threads(2);
        let mut bytes = vec![0u8; 20 * LEAF + 7];
        for round in 1..8u8 {
            for at in (0..bytes.len()).step_by(LEAF / 2) {
                bytes[at] = round;
            }
            let state = bytes.clone();
            h.begin(|w| w.write_raw(&state));
            assert_eq!(h.in_flight.is_some(), round > 1);
            assert_eq!(h.collect(), Some(Checksum::of(&state)));
        }
        // Begun and dropped: withdrawn from the pool's backlog.
        h.begin(|w| w.write_raw(&bytes));
        drop(h);
        crate::fork_join::probe::refuse(false);
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
