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
    /// and returns how many batches there are (none empty, but for the one
    /// batch of a step with no movers).
    ///
    /// The islands are dealt out largest first, each to the batch with the
    /// least work so far (the first such batch on a tie; equal islands in
    /// root order): "longest processing time first", which never leaves the
    /// busiest batch more than a third above the best split of whole
    /// islands. Cutting the islands into runs in root order instead left
    /// the first batch with whatever island crossed the half, about three
    /// quarters of a cube pile's work where two thirds was possible.
    pub fn batches(&mut self, work: &[u32], batches: usize, out: &mut Vec<u32>) -> usize {
        let n = self.parent.len();
        out.clear();
        out.resize(n, 0);
        if batches <= 1 || n == 0 {
            return 1;
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
        self.by_work
            .sort_unstable_by_key(|&(w, r)| (core::cmp::Reverse(w), r));
        self.load.clear();
        self.load.resize(batches.min(self.by_work.len()), 0);
        for &(w, r) in &self.by_work {
            let (lightest, _) = self
                .load
                .iter()
                .enumerate()
                .min_by_key(|&(_, &l)| l)
                .expect("at least one batch");
            self.load[lightest] += w;
            out[r as usize] = lightest as u32;
        }
        for i in 0..n as u32 {
            let r = self.find(i);
            out[i as usize] = out[r as usize];
        }
        self.load.len()
    }
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
        let n = s.batches(&[1; 8], 2, &mut out);
        assert_eq!(n, 2);
        // Equal islands alternate, in root order.
        assert_eq!(out, vec![0, 0, 1, 1, 0, 0, 1, 1]);
        // Islands of work 1, 1, 1, 5, 1, 1 in root order: the island of 5
        // goes alone, where a cut in root order at half the work (5) would
        // have given one batch 8 and the other 2.
        let mut row = Islands::default();
        row.reset(6);
        let n = row.batches(&[1, 1, 1, 5, 1, 1], 2, &mut out);
        assert_eq!(n, 2);
        assert_eq!(out, vec![1, 1, 1, 0, 1, 1]);
        // Fewer islands than batches: no batch is left empty.
        assert_eq!(row.batches(&[1; 6], 9, &mut out), 6);
        assert_eq!(out, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(s.batches(&[1; 8], 1, &mut out), 1);
        assert!(out.iter().all(|&b| b == 0));
        // One island cannot be split.
        let mut one = Islands::default();
        one.reset(4);
        one.join(0, 3);
        one.join(1, 2);
        one.join(2, 3);
        assert_eq!(one.batches(&[1; 4], 3, &mut out), 1);
    }
}
