//! One batch's general constraints solved on several threads, with the
//! bits of solving them one after another.
//!
//! **Levels.** Walk a batch's constraints in their solve order (anchored,
//! then pairs) and give each a *level*: one above the highest level of the
//! earlier constraints on either of its moving bodies. Every earlier
//! constraint that shares a body with a constraint then has a lower level,
//! so solving the constraints level by level, in any order within a level,
//! each constraint still meets its bodies' velocities exactly as the solve
//! order leaves them: the same bits. And the constraints of one level share
//! no body, so they can be solved at once. (`pyramid-15`, one island of
//! 5 525 constraints, has about 26 levels a step.)
//!
//! **Layout.** [`Levels::sort`] sorts a batch's contacts by level, stably,
//! each kind on its own, before they are prepared; the preparation then
//! runs level by level, each level's anchored constraints before its
//! pairs. So each kind's constraints lie in level order, which is itself a
//! solve order with the bits of the first (a batch whose passes cannot be
//! shared is solved this way by [`Batch::step`]), and the points lie in
//! *blocks*: a level's anchored constraints, cut into runs of up to
//! [`BLOCK`], then its pairs, level after level.
//!
//! **Threads.** [`Batch::step_levels`] runs a step's passes as
//! [`stages`](lockstep_fx::stages()): per substep, gravity, then one stage
//! per level of the warm start and of each pass, with the position
//! integration between them (the bodies' stages cut into runs of
//! [`BODIES`]). Each block is one item; the threads take a stage's blocks
//! as they come, and all of a stage is done before the next begins. The
//! bodies' velocities and displacements are shared while the passes run,
//! each component an atomic read and written with relaxed ordering (the
//! stage ends order them); each block's constraints and points sit behind
//! a lock that only the thread running the block ever takes.
//!
//! It solves general constraints only, without restitution: a batch with
//! linear points (lane runs interleave with the general constraints) or a
//! bouncing constraint takes [`Batch::step`], in level order. So does a
//! batch whose levels are too narrow to pay for the threads' meeting at
//! every stage's end; a wider one takes only as many threads as its
//! levels are wide for ([`Batch::level_threads`]).

use std::ops::Range;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};

use lockstep_fx::{Fx, Vec3};

use super::{Batch, Constraint, Displacement, Motion, Pass, Point, StepParams, Velocity, contact};

/// Most constraints a block holds: a level of `pyramid-15` is about 165,
/// so two threads share about twenty blocks and wait at its end for less
/// than one.
const BLOCK: usize = 8;

/// Bodies per item of gravity's and the integration's stages.
const BODIES: usize = 128;

/// Fewest contacts a level holds on average, per thread, for a batch's
/// passes to be shared. Every stage ends with the threads waiting for each
/// other, which narrow levels do not pay for: on two threads `cubes-1000`
/// (about 120 contacts a level) solved by levels ran 0.89 of its time on
/// one thread a batch, but the cube fixture's piles (about 10 a level,
/// in 49 levels) made the whole replay run 1.07 of its time.
const WIDTH_MIN: usize = 32;

/// A batch's levels: how its contacts were sorted, and the shared bodies
/// of a threaded step (kept between steps for their allocations).
#[derive(Debug, Default)]
pub(crate) struct Levels {
    /// Per level, the end of its anchored contacts and of its pair
    /// contacts in the sorted lists.
    ends: Vec<(u32, u32)>,
    /// Per body, the level of the last constraint on it.
    last: Vec<u32>,
    /// Each contact's level (anchored, then pairs).
    level: Vec<u32>,
    /// Sorting space.
    anchored: Vec<(u32, bool)>,
    pairs: Vec<u32>,
    /// The bodies while a threaded step runs.
    shared: Vec<SharedBody>,
}

impl Levels {
    /// Sorts a batch's anchored and pair contacts (in solve order) by
    /// level, stably; `mover` names an anchored contact's moving body and
    /// `movers` a pair's two, by batch index, among `bodies`.
    pub fn sort(
        &mut self,
        bodies: usize,
        anchored: &mut Vec<(u32, bool)>,
        pairs: &mut Vec<u32>,
        mover: impl Fn((u32, bool)) -> u32,
        movers: impl Fn(u32) -> (u32, u32),
    ) {
        self.last.clear();
        self.last.resize(bodies, 0);
        self.level.clear();
        for &contact in anchored.iter() {
            let m = mover(contact) as usize;
            self.last[m] += 1;
            self.level.push(self.last[m]);
        }
        for &contact in pairs.iter() {
            let (a, b) = movers(contact);
            let (a, b) = (a as usize, b as usize);
            let level = self.last[a].max(self.last[b]) + 1;
            self.last[a] = level;
            self.last[b] = level;
            self.level.push(level);
        }
        let levels = self.level.iter().copied().max().unwrap_or(0) as usize;
        // Counts, then each level's start, then a stable scatter.
        self.ends.clear();
        self.ends.resize(levels, (0, 0));
        let (of_anchored, of_pairs) = self.level.split_at(anchored.len());
        for &l in of_anchored {
            self.ends[l as usize - 1].0 += 1;
        }
        for &l in of_pairs {
            self.ends[l as usize - 1].1 += 1;
        }
        let (mut a, mut p) = (0, 0);
        for end in &mut self.ends {
            (a, p) = (a + end.0, p + end.1);
            *end = (a, p);
        }
        scatter(anchored, &mut self.anchored, of_anchored, &self.ends, |e| {
            e.0
        });
        scatter(pairs, &mut self.pairs, of_pairs, &self.ends, |e| e.1);
        // Within a level, by body: threads then take contiguous shares of
        // each level, so a body's neighbours tend to stay on its thread.
        // No two contacts of one level share a body, so the keys differ.
        for level in 0..self.count() {
            let (a, p) = self.contacts(level);
            anchored[a].sort_unstable_by_key(|&c| mover(c));
            pairs[p].sort_unstable_by_key(|&c| {
                let (a, b) = movers(c);
                a.min(b)
            });
        }
    }

    /// The levels' count.
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// The contacts sorted, of both kinds.
    pub fn len(&self) -> usize {
        self.ends
            .last()
            .map_or(0, |&(a, p)| a as usize + p as usize)
    }

    /// Forgets the last sort (a batch that is not sorted has no levels).
    pub fn clear(&mut self) {
        self.ends.clear();
    }

    /// The contacts of `level`: its range among the sorted anchored
    /// contacts, and among the sorted pair contacts.
    pub fn contacts(&self, level: usize) -> (Range<usize>, Range<usize>) {
        let (a0, p0) = match level {
            0 => (0, 0),
            _ => self.ends[level - 1],
        };
        let (a1, p1) = self.ends[level];
        (a0 as usize..a1 as usize, p0 as usize..p1 as usize)
    }
}

/// Sorts `items` by `levels` (1-based, one per item), stably: each level's
/// items start where the level before `ends` (its kind's end, by `end`).
fn scatter<T: Copy>(
    items: &mut Vec<T>,
    space: &mut Vec<T>,
    levels: &[u32],
    ends: &[(u32, u32)],
    end: impl Fn(&(u32, u32)) -> u32,
) {
    let Some(&first) = items.first() else {
        return;
    };
    space.clear();
    space.resize(items.len(), first);
    // Each level's next place: the end of the level before.
    let mut next: Vec<u32> = core::iter::once(0).chain(ends.iter().map(&end)).collect();
    for (&item, &l) in items.iter().zip(levels) {
        let at = &mut next[l as usize - 1];
        space[*at as usize] = item;
        *at += 1;
    }
    core::mem::swap(items, space);
}

/// A body's velocities and displacement while a threaded step runs: each
/// `Fx` component's bits, linear then angular.
#[derive(Debug)]
struct SharedBody {
    velocity: [AtomicI64; 6],
    displacement: [AtomicI64; 6],
}

fn cells(linear: Vec3, angular: Vec3) -> [AtomicI64; 6] {
    [
        linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
    ]
    .map(|c| AtomicI64::new(c.to_bits()))
}

fn load(cells: &[AtomicI64; 6]) -> (Vec3, Vec3) {
    let c = cells
        .each_ref()
        .map(|c| Fx::from_bits(c.load(Ordering::Relaxed)));
    (Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5]))
}

fn store(cells: &[AtomicI64; 6], linear: Vec3, angular: Vec3) {
    let bits = [
        linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
    ];
    for (c, bits) in cells.iter().zip(bits) {
        c.store(bits.to_bits(), Ordering::Relaxed);
    }
}

impl SharedBody {
    fn new(v: &Velocity, d: &Displacement) -> SharedBody {
        SharedBody {
            velocity: cells(v.linear, v.angular),
            displacement: cells(d.linear, d.angular),
        }
    }

    #[inline(always)]
    fn velocity(&self) -> Velocity {
        let (linear, angular) = load(&self.velocity);
        Velocity { linear, angular }
    }

    #[inline(always)]
    fn set_velocity(&self, v: Velocity) {
        store(&self.velocity, v.linear, v.angular);
    }

    #[inline(always)]
    fn displacement(&self) -> Displacement {
        let (linear, angular) = load(&self.displacement);
        Displacement { linear, angular }
    }

    fn set_displacement(&self, d: Displacement) {
        store(&self.displacement, d.linear, d.angular);
    }
}

/// The shared bodies, as the kernels see them.
struct Shared<'a>(&'a [SharedBody]);

impl Motion for Shared<'_> {
    #[inline(always)]
    fn velocity(&self, i: u32) -> Velocity {
        self.0[i as usize].velocity()
    }
    #[inline(always)]
    fn set_velocity(&mut self, i: u32, v: Velocity) {
        self.0[i as usize].set_velocity(v);
    }
    #[inline(always)]
    fn displacement(&self, i: u32) -> Displacement {
        self.0[i as usize].displacement()
    }
}

/// A run of one level's constraints of one kind, with their points.
struct Block<'a> {
    /// Pairs (else anchored constraints).
    pairs: bool,
    constraints: &'a mut [Constraint],
    points: &'a mut [Point],
    /// The index of `points[0]` in the batch's points.
    base: u32,
}

impl Block<'_> {
    /// Each constraint with its own points.
    fn each(&mut self, mut f: impl FnMut(&mut Constraint, &mut [Point])) {
        for c in self.constraints.iter_mut() {
            let first = (c.first - self.base) as usize;
            f(c, &mut self.points[first..][..usize::from(c.count)]);
        }
    }
}

/// What a stage of a threaded step does.
#[derive(Clone, Copy, Debug)]
enum Stage {
    /// Gravity's velocity change, for every body.
    Gravity,
    /// The warm start of one level.
    WarmStart(usize),
    /// One pass over one level.
    Solve(usize, Pass),
    /// The position integration, for every body.
    Integrate,
}

impl Batch {
    /// On how many of up to `threads` threads [`Batch::step_levels`]
    /// should solve this batch: none (0) unless it holds only general
    /// constraints, none bouncing; and no more than its levels are wide
    /// for (on average [`WIDTH_MIN`] contacts a thread). Below two, the
    /// batch takes [`Batch::step`].
    pub fn level_threads(&self, threads: usize) -> usize {
        let general = self.anchored.linear.is_empty()
            && self.pairs.linear.is_empty()
            && !self.anchored.bounces()
            && !self.pairs.bounces();
        let wide = self.levels.len() / (self.levels.count() * WIDTH_MIN).max(1);
        if general { threads.min(wide) } else { 0 }
    }

    /// Solves one step on up to `threads` threads, level by level (see the
    /// module's documentation): the bits of [`Batch::step`]. The batch's
    /// contacts were sorted by [`Levels::sort`] and prepared level by
    /// level, and [`Batch::level_threads`] allows `threads`.
    pub fn step_levels(&mut self, p: &StepParams, threads: usize) {
        debug_assert!(threads <= self.level_threads(threads));
        let Batch {
            velocities,
            displacements,
            gravity,
            anchored,
            pairs,
            points,
            levels,
            ..
        } = self;
        levels.shared.clear();
        let bodies = velocities.iter().zip(&*displacements);
        levels
            .shared
            .extend(bodies.map(|(v, d)| SharedBody::new(v, d)));

        // The blocks, in the points' order, and each level's blocks.
        let mut blocks = Vec::new();
        let mut of_level = Vec::with_capacity(levels.count());
        let (mut rest_anchored, mut rest_pairs) =
            (&mut anchored.general[..], &mut pairs.general[..]);
        let mut rest_points = &mut points[..];
        let mut base = 0u32;
        for level in 0..levels.count() {
            let start = blocks.len();
            let (a, p) = levels.contacts(level);
            for (is_pairs, len) in [(false, a.len()), (true, p.len())] {
                let mut left = len;
                while left > 0 {
                    let take = left.min(BLOCK);
                    left -= take;
                    let rest = if is_pairs {
                        &mut rest_pairs
                    } else {
                        &mut rest_anchored
                    };
                    let (constraints, after) = core::mem::take(rest).split_at_mut(take);
                    *rest = after;
                    let count: u32 = constraints.iter().map(|c| u32::from(c.count)).sum();
                    assert_eq!(
                        constraints[0].first, base,
                        "a level's points follow the level before"
                    );
                    let (own, after) =
                        core::mem::take(&mut rest_points).split_at_mut(count as usize);
                    rest_points = after;
                    blocks.push(Mutex::new(Block {
                        pairs: is_pairs,
                        constraints,
                        points: own,
                        base,
                    }));
                    base += count;
                }
            }
            of_level.push(start..blocks.len());
        }

        // The stages, as `Batch::step` runs the passes.
        let mut stages = Vec::new();
        let mut stale = false;
        let levels_of = |pass: Pass| (0..of_level.len()).map(move |l| Stage::Solve(l, pass));
        for _ in 0..p.substeps.max(1) {
            stages.push(Stage::Gravity);
            stages.extend((0..of_level.len()).map(Stage::WarmStart));
            for _ in 0..p.iterations {
                stages.extend(levels_of(Pass::next(p, true, &mut stale)));
            }
            stages.push(Stage::Integrate);
            stale = true;
            for _ in 0..p.relax_iterations {
                stages.extend(levels_of(Pass::next(p, false, &mut stale)));
            }
        }
        let bodies = levels.shared.len().div_ceil(BODIES) as u32;
        let sizes: Vec<u32> = stages
            .iter()
            .map(|stage| match *stage {
                Stage::Gravity | Stage::Integrate => bodies,
                Stage::WarmStart(l) | Stage::Solve(l, _) => of_level[l].len() as u32,
            })
            .collect();

        let shared = &levels.shared[..];
        let gravity = &gravity[..];
        let h = p.h;
        lockstep_fx::stages(threads, &sizes, |stage, item| {
            let item = item as usize;
            let bodies = || {
                let start = item * BODIES;
                start..(start + BODIES).min(shared.len())
            };
            let block = |level: usize| {
                blocks[of_level[level].start + item]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
            };
            let mut motion = Shared(shared);
            match stages[stage] {
                Stage::Gravity => {
                    for (s, g) in shared[bodies()].iter().zip(&gravity[bodies()]) {
                        let mut v = s.velocity();
                        v.fall(*g);
                        s.set_velocity(v);
                    }
                }
                Stage::WarmStart(level) => block(level).warm_start(&mut motion),
                Stage::Solve(level, pass) => block(level).solve(&mut motion, &pass),
                Stage::Integrate => {
                    for s in &shared[bodies()] {
                        let mut d = s.displacement();
                        d.advance(&s.velocity(), h);
                        s.set_displacement(d);
                    }
                }
            }
        });

        for ((s, v), d) in levels.shared.iter().zip(velocities).zip(displacements) {
            *v = s.velocity();
            *d = s.displacement();
        }
    }
}

impl Block<'_> {
    fn warm_start(&mut self, motion: &mut Shared<'_>) {
        let pairs = self.pairs;
        self.each(|c, pts| {
            if pairs {
                contact::warm_start_alone::<true, _>(c, pts, motion);
            } else {
                contact::warm_start_alone::<false, _>(c, pts, motion);
            }
        });
    }

    fn solve(&mut self, motion: &mut Shared<'_>, pass: &Pass) {
        let pairs = self.pairs;
        self.each(|c, pts| {
            if pairs {
                contact::solve_alone::<true, _>(c, pts, motion, pass);
            } else {
                contact::solve_alone::<false, _>(c, pts, motion, pass);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use lockstep_fx::Rng;

    use super::*;

    /// Random contacts among a few bodies, sorted: no level's contacts
    /// share a body, and every body meets its contacts in the order it
    /// met them before (the condition for the same bits), whether the
    /// levels are walked one after another or each kind on its own.
    #[test]
    fn levels_keep_every_bodys_order() {
        const BODIES: u32 = 40;
        let mut rng = Rng::new(7, 1);
        let movers_of: Vec<(u32, u32)> = (0..500)
            .map(|_| {
                let a = rng.below(BODIES);
                let b = (a + 1 + rng.below(BODIES - 1)) % BODIES;
                (a, b)
            })
            .collect();
        let mut anchored: Vec<(u32, bool)> = (0..200).map(|ci| (ci, ci % 3 == 0)).collect();
        let mut pairs: Vec<u32> = (200..500).collect();
        let touches = |ci: u32| -> Vec<u32> {
            let (a, b) = movers_of[ci as usize];
            if ci < 200 { vec![a] } else { vec![a, b] }
        };
        let order_of = |contacts: &mut dyn Iterator<Item = u32>| {
            let mut seen = vec![Vec::new(); BODIES as usize];
            for ci in contacts {
                for body in touches(ci) {
                    seen[body as usize].push(ci);
                }
            }
            seen
        };
        let before = order_of(&mut anchored.iter().map(|c| c.0).chain(pairs.iter().copied()));

        let mut levels = Levels::default();
        levels.sort(
            BODIES as usize,
            &mut anchored,
            &mut pairs,
            |(ci, _)| movers_of[ci as usize].0,
            |ci| movers_of[ci as usize],
        );

        assert!(levels.count() > 1);
        let mut walked = Vec::new();
        for level in 0..levels.count() {
            let (a, p) = levels.contacts(level);
            let contacts: Vec<u32> = anchored[a]
                .iter()
                .map(|c| c.0)
                .chain(pairs[p].iter().copied())
                .collect();
            let mut bodies: Vec<u32> = contacts.iter().flat_map(|&ci| touches(ci)).collect();
            let touched = bodies.len();
            bodies.sort_unstable();
            bodies.dedup();
            assert_eq!(bodies.len(), touched, "level {level} shares a body");
            walked.extend(contacts);
        }
        assert_eq!(order_of(&mut walked.into_iter()), before);
        let by_kind = anchored.iter().map(|c| c.0).chain(pairs.iter().copied());
        assert_eq!(order_of(&mut { by_kind }), before);
    }
}
