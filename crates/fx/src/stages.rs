//! [`stages`]: a sequence of stages, each of independent items, run by
//! several threads at once, every stage finished before the next begins.
//!
//! This is for work too fine for one [`fork_join()`] per stage: the passes
//! of a constraint solver over one island, where a stage (one level of one
//! pass) takes tens of microseconds and a step has hundreds of them. The
//! threads are asked for once, and then meet at each stage's end.
//!
//! **How the items are shared.** Every thread walks the same stages in
//! order. A stage's items are cut into one contiguous share per thread;
//! within a stage, a thread claims the next unclaimed item of its own share
//! (one atomic counter per share) until none is left, then of the others'
//! shares, then waits until every item of the stage is done (a second
//! counter) before it moves on. So a thread mostly runs the same part of
//! every stage, and where neighbouring items touch neighbouring data (the
//! bodies of one part of an island), that data stays in its core's cache.
//! Which thread runs an item is still a matter of timing, so the caller's
//! items must be such that it never changes a result: the items of one
//! stage touch disjoint data, and a stage may read what earlier stages
//! wrote.
//!
//! **Invariants.**
//! - Every item runs exactly once, and every item of a stage has finished
//!   (its writes visible: each item's end is a release, each wait an
//!   acquire) before any item of the next stage starts.
//! - No thread waits for another to arrive, only for items already claimed
//!   to finish. A thread that starts late finds the stages before it done;
//!   where no helper is to be had, [`fork_join()`] runs the other shares in
//!   place after the first, which then has nothing left to do. So a
//!   missing helper costs only speed, as in [`fork_join()`].
//! - An item that panics still counts as done, so the other threads do not
//!   wait for it forever; the panic reaches the caller through
//!   [`fork_join()`] once every thread has stopped.

use std::hint;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;

use crate::fork_join;

/// A waiting thread yields its core once every this many rounds, so that
/// a thread with work (the one finishing the stage, on a machine with
/// fewer cores than threads) is not kept waiting.
const YIELD_EVERY: u32 = 32;

/// Counts an item done when dropped, so also when it panics.
struct Done<'a>(&'a AtomicU32);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Runs `work(stage, item)` for every item `0..sizes[stage]` of every
/// stage, on up to `threads` threads (the calling thread and helpers of
/// [`fork_join()`]), finishing each stage before the next begins.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use lockstep_fx::stages;
///
/// // Stage 0 fills four cells; stage 1 reads stage 0's cells.
/// let cells: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
/// stages(2, &[4, 4], |stage, item| {
///     let i = item as usize;
///     if stage == 0 {
///         cells[i].store(i as u64 + 1, Ordering::Relaxed);
///     } else {
///         let before = cells[i].load(Ordering::Relaxed);
///         cells[4 + i].store(before * 10, Ordering::Relaxed);
///     }
/// });
/// let last: Vec<u64> = cells[4..].iter().map(|c| c.load(Ordering::Relaxed)).collect();
/// assert_eq!(last, vec![10, 20, 30, 40]);
/// ```
pub fn stages(threads: usize, sizes: &[u32], work: impl Fn(usize, u32) + Sync) {
    let threads = threads.max(1);
    // Per stage, the items handed out of each thread's share (a count may
    // run past its share's end), and the items finished.
    let claimed: Vec<AtomicU32> = (0..sizes.len() * threads)
        .map(|_| AtomicU32::new(0))
        .collect();
    let done: Vec<AtomicU32> = sizes.iter().map(|_| AtomicU32::new(0)).collect();
    let walk = |thread: usize| {
        for (stage, (&size, done)) in sizes.iter().zip(&done).enumerate() {
            let claimed = &claimed[stage * threads..][..threads];
            // Its own share first, then what is left of the others'.
            for share in (0..threads).map(|k| (thread + k) % threads) {
                let start = share_start(size, share, threads);
                let end = share_start(size, share + 1, threads);
                loop {
                    let taken = claimed[share].fetch_add(1, Ordering::Relaxed);
                    let item = start.saturating_add(taken);
                    if item >= end {
                        break;
                    }
                    let _done = Done(done);
                    work(stage, item);
                }
            }
            let mut rounds = 0u32;
            while done.load(Ordering::Acquire) < size {
                rounds = rounds.wrapping_add(1);
                if rounds % YIELD_EVERY == 0 {
                    thread::yield_now();
                } else {
                    hint::spin_loop();
                }
            }
        }
    };
    fork_join((0..threads).collect(), walk);
}

/// Where the `share`-th of `shares` contiguous shares of `size` items
/// starts.
fn share_start(size: u32, share: usize, shares: usize) -> u32 {
    (u64::from(size) * share as u64 / shares as u64) as u32
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;

    /// A running sum whose every stage reads the last one's cells: any
    /// item run early, twice or not at all would change the totals.
    fn chain(threads: usize) -> Vec<u64> {
        const WIDTH: usize = 16;
        const STAGES: usize = 50;
        let cells: Vec<AtomicU64> = (0..WIDTH * (STAGES + 1))
            .map(|i| AtomicU64::new(if i < WIDTH { i as u64 } else { 0 }))
            .collect();
        let sizes = vec![WIDTH as u32; STAGES];
        stages(threads, &sizes, |stage, item| {
            let i = item as usize;
            let row = |s: usize, k: usize| &cells[s * WIDTH + (k % WIDTH)];
            let sum = row(stage, i).load(Ordering::Relaxed)
                + row(stage, i + 1).load(Ordering::Relaxed)
                + 1;
            row(stage + 1, i).store(sum % 1_000_003, Ordering::Relaxed);
        });
        cells.iter().map(|c| c.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn any_thread_count_gives_the_same_results() {
        let one = chain(1);
        for threads in [2, 3, 8] {
            assert_eq!(chain(threads), one, "{threads} threads");
        }
    }

    #[test]
    fn empty_stages_and_no_stages_end() {
        stages(2, &[], |_, _| unreachable!());
        let ran = AtomicU32::new(0);
        stages(3, &[0, 2, 0, 1], |_, _| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_panicking_item_reaches_the_caller() {
        let result = std::panic::catch_unwind(|| {
            stages(2, &[4, 4], |stage, item| {
                assert!(!(stage == 0 && item == 2), "item 2 fails");
            });
        });
        assert!(result.is_err());
    }
}
