//! The deterministic partition of a step's solve: islands, and batches of
//! whole islands for threads.
//!
//! An island is a set of moving bodies joined by this step's constraints
//! between two of them (an immovable body joins nothing: through the ground
//! every stack would be one island). Islands never share a body, so each
//! one's solve reads and writes only its own bodies and constraints: solving
//! them one after another, in any order, or at once on several threads gives
//! the same bits. A batch is a set of whole islands, dealt out so that the
//! batches carry about the same work; only how long a step takes depends on
//! the batches, never its result.
//!
//! An island that carries most of a step's work (a pyramid, a pile that
//! holds most of the cubes) would leave the other threads idle in any
//! deal: it goes *alone*, first, into a batch of its own that the step
//! shares between threads by levels where it can, and the other islands
//! are dealt out after it.
//!
//! Invariants: union-find keeps the lowest index as every root, so the
//! islands and their order depend only on the movers and the links, in any
//! order of the links.

/// Union-find over movers `0..n` with the lowest index as root, and the
/// buffers [`Islands::batches`] deals them out with (kept, so that a step
/// allocates nothing once warm).
#[derive(Debug, Default)]
pub(crate) struct Islands {
    parent: Vec<u32>,
    /// Each island's total work, at its root.
    root_work: Vec<u64>,
    /// The islands as `(work, root)`, largest first.
    by_work: Vec<(u64, u32)>,
    /// Sorting space of [`largest_first`]: islands per work below
    /// [`COUNTED_WORK`], and the sorted islands.
    counts: Vec<u32>,
    sorted: Vec<(u64, u32)>,
    /// Each batch's work so far.
    load: Vec<u64>,
}

impl Islands {
    /// `n` movers, each alone.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
    }

    /// The root (lowest mover) of `i`'s island.
    pub fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let p = self.parent[i as usize];
            self.parent[i as usize] = self.parent[p as usize];
            i = p;
        }
        i
    }

    /// Joins the islands of `a` and `b`.
    pub fn join(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra < rb {
            self.parent[rb as usize] = ra;
        } else if rb < ra {
            self.parent[ra as usize] = rb;
        }
    }

    /// Splits the islands into at most `batches` batches of about equal
    /// work, given each mover's own work (its body and the constraints it
    /// is counted for, at least one): writes each mover's batch into `out`
    /// and says how many batches there are (none empty, but for the one
    /// batch of a step with no movers) and whether the first goes alone.
    ///
    /// With more than one batch, an island of at least `alone_min` work
    /// whose rest (the other islands' work) is less than half its own goes
    /// alone, as batch 0. Shared by levels on two threads such an island
    /// runs about 1.4 times as fast as on one, so it gains when its rest
    /// is below about 0.57 of it (`w / 1.4 + rest / 2 < w`); a deal of
    /// whole islands would leave that island's thread the last to finish.
    ///
    /// The islands are dealt out largest first, each to the batch with the
    /// least work so far (the first such batch on a tie; equal islands in
    /// root order): "longest processing time first", which never leaves the
    /// busiest batch more than a third above the best split of whole
    /// islands. Cutting the islands into runs in root order instead left
    /// the first batch with whatever island crossed the half, about three
    /// quarters of a cube pile's work where two thirds was possible.
    pub fn batches(
        &mut self,
        work: &[u32],
        batches: usize,
        alone_min: u64,
        out: &mut Vec<u32>,
    ) -> Deal {
        let n = self.parent.len();
        out.clear();
        out.resize(n, 0);
        if batches <= 1 || n == 0 {
            return Deal {
                batches: 1,
                alone: false,
            };
        }
        let mut root_work = core::mem::take(&mut self.root_work);
        root_work.clear();
        root_work.resize(n, 0);
        for i in 0..n as u32 {
            let r = self.find(i);
            root_work[r as usize] += u64::from(work.get(i as usize).copied().unwrap_or(0));
        }
        self.by_work.clear();
        self.by_work.extend(
            (0..n as u32)
                .filter(|&r| self.parent[r as usize] == r)
                .map(|r| (root_work[r as usize], r)),
        );
        self.root_work = root_work;
        largest_first(&mut self.by_work, &mut self.counts, &mut self.sorted);
        let total: u64 = self.by_work.iter().map(|&(w, _)| w).sum();
        let alone = self
            .by_work
            .first()
            .is_some_and(|&(w, _)| w >= alone_min && (total - w) * 2 < w);
        // The island alone keeps batch 0 (`out` is all zeros so far).
        let dealt = &self.by_work[usize::from(alone)..];
        self.load.clear();
        self.load.resize(batches.min(dealt.len()), 0);
        let first = u32::from(alone);
        for &(w, r) in dealt {
            let (lightest, _) = self
                .load
                .iter()
                .enumerate()
                .min_by_key(|&(_, &l)| l)
                .expect("at least one batch");
            self.load[lightest] += w;
            out[r as usize] = first + lightest as u32;
        }
        for i in 0..n as u32 {
            let r = self.find(i);
            out[i as usize] = out[r as usize];
        }
        Deal {
            batches: usize::from(alone) + self.load.len(),
            alone,
        }
    }
}

/// Islands of less work than this are put in order by counting.
const COUNTED_WORK: u64 = 64;

/// Sorts islands `(work, root)`, given in root order, by work descending,
/// then root: a comparison sort of the few islands of [`COUNTED_WORK`] or
/// more, then a counting sort of the rest after them, which keeps their
/// root order within each work. The same order as a comparison sort of
/// all, in time linear in the small islands: an RTS step has thousands of
/// islands of a unit or a few, and sorting them by comparison was about a
/// twentieth of the calling thread's instructions in `game:rts-8x1024`.
fn largest_first(
    islands: &mut Vec<(u64, u32)>,
    counts: &mut Vec<u32>,
    sorted: &mut Vec<(u64, u32)>,
) {
    debug_assert!(islands.windows(2).all(|p| p[0].1 < p[1].1), "root order");
    counts.clear();
    counts.resize(COUNTED_WORK as usize, 0);
    sorted.clear();
    for &(w, r) in islands.iter() {
        if w < COUNTED_WORK {
            counts[w as usize] += 1;
        } else {
            sorted.push((w, r));
        }
    }
    sorted.sort_unstable_by_key(|&(w, r)| (core::cmp::Reverse(w), r));
    // Where the islands of each work start, the most work first.
    let mut at = sorted.len() as u32;
    for count in counts.iter_mut().rev() {
        let c = *count;
        *count = at;
        at += c;
    }
    sorted.resize(islands.len(), (0, 0));
    for &(w, r) in islands.iter().filter(|&&(w, _)| w < COUNTED_WORK) {
        let slot = &mut counts[w as usize];
        sorted[*slot as usize] = (w, r);
        *slot += 1;
    }
    core::mem::swap(islands, sorted);
}

/// How [`Islands::batches`] dealt a step's islands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deal {
    /// How many batches there are.
    pub batches: usize,
    /// Whether batch 0 is one island alone, built on every thread and
    /// solved by levels where they are wide enough, before the other
    /// batches.
    pub alone: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_lowest_and_order_free() {
        let links = [(5u32, 3u32), (3, 9), (1, 2), (9, 7)];
        let mut a = Islands::default();
        a.reset(10);
        for &(x, y) in &links {
            a.join(x, y);
        }
        let mut b = Islands::default();
        b.reset(10);
        for &(x, y) in links.iter().rev() {
            b.join(y, x);
        }
        for i in 0..10 {
            assert_eq!(a.find(i), b.find(i));
        }
        assert_eq!(a.find(9), 3);
        assert_eq!(a.find(2), 1);
        assert_eq!(a.find(4), 4);
    }

    #[test]
    fn batches_hold_whole_islands_largest_first() {
        let mut s = Islands::default();
        s.reset(8);
        s.join(0, 1);
        s.join(2, 3);
        s.join(4, 5);
        s.join(6, 7);
        let mut out = Vec::new();
        let deal = |batches, alone| Deal { batches, alone };
        assert_eq!(s.batches(&[1; 8], 2, 0, &mut out), deal(2, false));
        // Equal islands alternate, in root order.
        assert_eq!(out, vec![0, 0, 1, 1, 0, 0, 1, 1]);
        // Islands of work 1, 1, 1, 5, 1, 1 in root order: the island of 5
        // goes alone, where a cut in root order at half the work (5) would
        // have given one batch 8 and the other 2.
        let mut row = Islands::default();
        row.reset(6);
        let work = [1, 1, 1, 5, 1, 1];
        assert_eq!(row.batches(&work, 2, 99, &mut out), deal(2, false));
        assert_eq!(out, vec![1, 1, 1, 0, 1, 1]);
        // Its rest (5) is not less than half of it: it is dealt out too.
        assert_eq!(row.batches(&work, 2, 0, &mut out), deal(2, false));
        // Fewer islands than batches: no batch is left empty.
        assert_eq!(row.batches(&[1; 6], 9, 0, &mut out), deal(6, false));
        assert_eq!(out, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(s.batches(&[1; 8], 1, 0, &mut out), deal(1, false));
        assert!(out.iter().all(|&b| b == 0));
        // One island cannot be split.
        let mut one = Islands::default();
        one.reset(4);
        one.join(0, 3);
        one.join(1, 2);
        one.join(2, 3);
        assert_eq!(one.batches(&[1; 4], 3, 5, &mut out), deal(1, false));
        // Unless it is large enough to go alone, with nothing to deal.
        assert_eq!(one.batches(&[1; 4], 3, 4, &mut out), deal(1, true));
        assert!(out.iter().all(|&b| b == 0));
    }

    #[test]
    fn largest_first_is_the_order_of_a_comparison_sort() {
        let mut rng = lockstep_fx::Rng::new(5, 2);
        let (mut counts, mut sorted) = (Vec::new(), Vec::new());
        for round in 0..20u32 {
            // Small works that tie often, and a few past the counted ones.
            let mut root = 0;
            let mut islands: Vec<(u64, u32)> = (0..rng.below(300))
                .map(|_| {
                    root += 1 + rng.below(3);
                    let w = if rng.chance(1, 10) {
                        COUNTED_WORK + u64::from(rng.below(100))
                    } else {
                        u64::from(rng.below(3 * round + 5))
                    };
                    (w, root)
                })
                .collect();
            let mut expected = islands.clone();
            expected.sort_unstable_by_key(|&(w, r)| (core::cmp::Reverse(w), r));
            largest_first(&mut islands, &mut counts, &mut sorted);
            assert_eq!(islands, expected);
        }
    }

    #[test]
    fn an_island_with_most_of_the_work_goes_alone() {
        // Islands {0..4} (work 9), {5, 6} (2), {7} (1), {8} (1): the rest
        // of the first is 4, less than half its 9.
        let mut s = Islands::default();
        s.reset(9);
        for i in 1..5 {
            s.join(0, i);
        }
        s.join(5, 6);
        let work = [5, 1, 1, 1, 1, 1, 1, 1, 1];
        let mut out = Vec::new();
        let deal = s.batches(&work, 2, 8, &mut out);
        assert_eq!(
            deal,
            Deal {
                batches: 3,
                alone: true
            }
        );
        // The big island is batch 0; the others are dealt into two more,
        // largest first, to the lightest (the first on a tie).
        assert_eq!(out, vec![0, 0, 0, 0, 0, 1, 1, 2, 2]);
        // Below the least work an island alone must carry, it is dealt.
        let deal = s.batches(&work, 2, 10, &mut out);
        assert_eq!(
            deal,
            Deal {
                batches: 2,
                alone: false
            }
        );
        assert_eq!(out, vec![0, 0, 0, 0, 0, 1, 1, 1, 1]);
    }
}
