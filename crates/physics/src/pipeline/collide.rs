//! Broadphase and narrowphase of one step: which pairs may touch, their
//! manifolds, and the merge with last step's contact cache.
//!
//! Pairs come from the grid broadphase plus every moving body against
//! every half-space. A large world's proxies (each body's bounds, widened
//! by how far it may move) are made by shares of its slots on several
//! threads and closed up in slot order, as one pass would leave them. The
//! merge walks this step's pairs and the old cache together in `(a, b)`
//! order, carrying warm-start impulses by feature id, keeping resting
//! contacts between bodies that do not move, and emitting begin/end
//! events. When the step wakes sleeping bodies and collides again, only
//! what involves a woken body is done again: the pairs they add are found
//! by testing them against every proxy instead of by a second search
//! (`World::find_woken_pairs`, for a few woken bodies), and only the pairs
//! and cached contacts with a woken body are merged again
//! (`World::collide_woken`); the rest of the first collision stands.
//! The results are those of a whole second collision, which every test
//! build compares them with.

use lockstep_fx::{Fx, Mat3, fork_join};

use crate::aabb::Aabb;
use crate::body::{Body, BodyKind};
use crate::broadphase::Proxy;
use crate::contact::{Contact, Event};
use crate::narrowphase::{self, Manifold, Pose, Segment};
use crate::shape::Shape;
use crate::world::{Slot, World, handle_of};

use lockstep_fx::Vec3;

/// Below this many pairs the narrowphase runs on one thread.
const PARALLEL_PAIRS: usize = 512;

/// What fills a place of `scratch.proxies` before a proxy is written there.
const PLACEHOLDER: Proxy = Proxy {
    aabb: Aabb {
        min: Vec3::ZERO,
        max: Vec3::ZERO,
    },
    body: 0,
    active: false,
    groups: 0,
    mask: 0,
};

/// Pairs per run when the narrowphase is shared between threads.
const NARROW_RUN: usize = 64;

/// Most woken proxies whose pairs [`World::find_woken_pairs`] looks up in
/// the first search's grid; past it every body is searched again. (Set
/// when each woken proxy was tested against every proxy: in the RTS at
/// 8 × 1 024 units that took 1.8 million instructions a waking step, and
/// searching every body 5.8 million with the sort and sweep that the grid
/// broadphase replaced. A lookup in the grid costs far less.)
const WOKEN_SEARCH_MAX: usize = 32;

/// The broadphase proxy of live body `i`, or `None` for a half-space.
fn proxy(i: u32, b: &Body, rotation: &Mat3, margin: Fx, h: Fx) -> Option<Proxy> {
    let aabb = b.bounds(rotation)?;
    let grow = margin + World::sweep(b, h);
    Some(Proxy {
        aabb: aabb.expanded(Vec3::splat(grow)),
        body: i,
        active: World::is_active(b),
        groups: b.groups,
        mask: b.mask,
    })
}

/// Pushes the pairs of `p` with every half-space (slots `half_spaces`)
/// whose layers agree.
fn half_space_pairs(slots: &[Slot], half_spaces: &[u32], p: &Proxy, pairs: &mut Vec<(u32, u32)>) {
    for &hs in half_spaces {
        let plane = slots[hs as usize]
            .body
            .as_ref()
            .expect("half-space slot is live");
        if plane.groups & p.mask != 0 && p.groups & plane.mask != 0 {
            pairs.push((hs.min(p.body), hs.max(p.body)));
        }
    }
}

/// A run of pairs and the manifolds it fills.
type NarrowRun<'a> = (&'a [(u32, u32)], &'a mut [Manifold]);

impl World {
    pub(crate) fn find_pairs(&mut self, h: Fx) {
        let margin = self.settings.speculative_distance.scale_pow2(-1);
        let share = self.slot_share();
        let sc = &mut self.scratch;
        let n = self.slots.len();
        // Each share of the slots writes its proxies from the start of its
        // own stretch of `proxies` (a place per slot, so it cannot run
        // out), in slot order; the stretches are then closed up in share
        // order, which is slot order again, whatever the thread count.
        // Only growth fills new places: the rest are overwritten.
        sc.proxies.resize(n, PLACEHOLDER);
        let jobs: Vec<_> = self
            .slots
            .chunks(share)
            .zip(sc.rotations[..n].chunks(share))
            .zip(sc.proxies.chunks_mut(share))
            .enumerate()
            .map(|(k, ((slots, rotations), out))| (k * share, slots, rotations, out))
            .collect();
        let made = fork_join(jobs, |(first, slots, rotations, out)| {
            let (mut count, mut half_spaces) = (0, Vec::new());
            for (k, slot) in slots.iter().enumerate() {
                let Some(b) = &slot.body else { continue };
                if b.contained {
                    continue;
                }
                let i = (first + k) as u32;
                match proxy(i, b, &rotations[k], margin, h) {
                    Some(p) => {
                        out[count] = p;
                        count += 1;
                    }
                    None => half_spaces.push(i),
                }
            }
            (count, half_spaces)
        });
        sc.half_spaces.clear();
        let mut end = 0;
        for (k, (count, half_spaces)) in made.into_iter().enumerate() {
            let start = k * share;
            if start != end {
                sc.proxies.copy_within(start..start + count, end);
            }
            end += count;
            sc.half_spaces.extend(half_spaces);
        }
        sc.proxies.truncate(end);
        sc.broadphase
            .pairs(&sc.proxies, self.threads, &mut sc.pairs);
        for p in sc.proxies.iter().filter(|p| p.active) {
            half_space_pairs(&self.slots, &sc.half_spaces, p, &mut sc.pairs);
        }
        sc.broadphase.sort_pairs(&mut sc.pairs, self.slots.len());
    }

    /// The pairs [`World::find_pairs`] would find now that the bodies
    /// marked in `scratch.woken` are awake, from the first collision's
    /// (`scratch.first_pairs`) and its proxies, into `scratch.pairs`; or
    /// `false` (and nothing written) where a full search is cheaper or
    /// needed.
    ///
    /// Waking changes no bounds (a sleeping body has no velocity, so its
    /// margin stays; checked) and makes only the woken proxies active. A
    /// pair is found when one of its two proxies is active, so the pairs
    /// this adds are those of a woken body with a body that was not active
    /// in the first search: found here by testing each woken proxy against
    /// the proxies that the first search's grid holds near it
    /// ([`Broadphase::overlapping`](crate::broadphase::Broadphase::overlapping)),
    /// the same bounds and layers test the broadphase makes. (The RTS at
    /// 8 × 1 024 units wakes a few on about half of its frames, and
    /// sweeping every unit again took a tenth of its steps' instructions.)
    pub(crate) fn find_woken_pairs(&mut self, h: Fx) -> bool {
        let margin = self.settings.speculative_distance.scale_pow2(-1);
        let sc = &mut self.scratch;
        let (woken, proxies) = (&sc.woken, &mut sc.proxies);
        sc.woken_proxies.clear();
        sc.woken_proxies.extend(
            (0..proxies.len() as u32).filter(|&k| woken[proxies[k as usize].body as usize]),
        );
        if sc.woken_proxies.len() > WOKEN_SEARCH_MAX {
            #[cfg(test)]
            tests::SWEPT.with(|n| n.set(n.get() + 1));
            return false;
        }
        for &k in &sc.woken_proxies {
            let before = &proxies[k as usize];
            let i = before.body as usize;
            let b = self.slots[i].body.as_ref().expect("woken bodies are live");
            let now = proxy(before.body, b, &sc.rotations[i], margin, h);
            if before.active || now.is_none_or(|now| now.aabb != before.aabb || !now.active) {
                return false;
            }
        }
        sc.pairs.clear();
        sc.pairs.extend_from_slice(&sc.first_pairs);
        for &k in &sc.woken_proxies {
            let p = &proxies[k as usize];
            half_space_pairs(&self.slots, &sc.half_spaces, p, &mut sc.pairs);
            let pairs = &mut sc.pairs;
            sc.broadphase.overlapping(proxies, k, |j| {
                let q = &proxies[j as usize];
                // Pairs with a proxy active in the first search are found
                // already, and a pair of two woken proxies is made once.
                let made = q.active || (woken[q.body as usize] && j <= k);
                if !made && p.layers_agree(q) {
                    pairs.push((p.body.min(q.body), p.body.max(q.body)));
                }
            });
        }
        for &k in &sc.woken_proxies {
            proxies[k as usize].active = true;
        }
        #[cfg(test)]
        tests::SEARCHES.with(|n| n.set(n.get() + 1));
        sc.broadphase.sort_pairs(&mut sc.pairs, self.slots.len());
        true
    }

    /// The manifold between two live bodies, normal from `a` to `b`.
    pub(crate) fn manifold(&self, a: u32, b: u32, margin: Fx) -> Manifold {
        let (Some(ba), Some(bb)) = (&self.slots[a as usize].body, &self.slots[b as usize].body)
        else {
            return Manifold::default();
        };
        let pose = |i: u32, body: &Body| Pose {
            position: body.position,
            rotation: self.rotation(i),
        };
        let segment =
            |i: u32, body: &Body, half_height: Fx| Segment::of(&pose(i, body), half_height);
        match (ba.shape, bb.shape) {
            (Shape::Box { half_extents: ha }, Shape::Box { half_extents: hb }) => {
                narrowphase::box_box(&pose(a, ba), ha, &pose(b, bb), hb, margin)
            }
            (Shape::Sphere { radius: ra }, Shape::Sphere { radius: rb }) => {
                narrowphase::sphere_sphere(ba.position, ra, bb.position, rb, margin)
            }
            (Shape::Sphere { radius }, Shape::Box { half_extents }) => {
                narrowphase::sphere_box(ba.position, radius, &pose(b, bb), half_extents, margin)
            }
            (Shape::Box { half_extents }, Shape::Sphere { radius }) => {
                narrowphase::sphere_box(bb.position, radius, &pose(a, ba), half_extents, margin)
                    .flipped()
            }
            (
                Shape::Capsule {
                    half_height: ha,
                    radius: ra,
                },
                Shape::Capsule {
                    half_height: hb,
                    radius: rb,
                },
            ) => narrowphase::capsule_capsule(
                &segment(a, ba, ha),
                ra,
                &segment(b, bb, hb),
                rb,
                margin,
            ),
            (
                Shape::Sphere { radius: rs },
                Shape::Capsule {
                    half_height,
                    radius,
                },
            ) => narrowphase::sphere_capsule(
                ba.position,
                rs,
                &segment(b, bb, half_height),
                radius,
                margin,
            ),
            (
                Shape::Capsule {
                    half_height,
                    radius,
                },
                Shape::Sphere { radius: rs },
            ) => narrowphase::sphere_capsule(
                bb.position,
                rs,
                &segment(a, ba, half_height),
                radius,
                margin,
            )
            .flipped(),
            (
                Shape::Box { half_extents },
                Shape::Capsule {
                    half_height,
                    radius,
                },
            ) => {
                let p = pose(b, bb);
                let s = Segment::of(&p, half_height);
                narrowphase::box_capsule(&pose(a, ba), half_extents, &p, &s, radius, margin)
            }
            (
                Shape::Capsule {
                    half_height,
                    radius,
                },
                Shape::Box { half_extents },
            ) => {
                let p = pose(a, ba);
                let s = Segment::of(&p, half_height);
                narrowphase::box_capsule(&pose(b, bb), half_extents, &p, &s, radius, margin)
                    .flipped()
            }
            (Shape::HalfSpace, other) => self.against_half_space(a, ba, b, bb, other, margin),
            (other, Shape::HalfSpace) => self
                .against_half_space(b, bb, a, ba, other, margin)
                .flipped(),
        }
    }

    pub(crate) fn against_half_space(
        &self,
        hs: u32,
        plane: &Body,
        i: u32,
        body: &Body,
        shape: Shape,
        margin: Fx,
    ) -> Manifold {
        let normal = self.rotation(hs).col(1);
        let offset = narrowphase::along(normal, plane.position);
        match shape {
            Shape::Box { half_extents } => {
                let pose = Pose {
                    position: body.position,
                    rotation: self.rotation(i),
                };
                narrowphase::box_plane(normal, offset, &pose, half_extents, margin)
            }
            Shape::Sphere { radius } => {
                narrowphase::sphere_plane(normal, offset, body.position, radius, margin)
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let pose = Pose {
                    position: body.position,
                    rotation: self.rotation(i),
                };
                let s = Segment::of(&pose, half_height);
                narrowphase::capsule_plane(normal, offset, &s, radius, margin)
            }
            Shape::HalfSpace => Manifold::default(),
        }
    }

    /// The manifold of pair `(a, b)` this step: its margin grows with how
    /// far the two bodies may travel.
    fn pair_manifold(&self, (a, b): (u32, u32), h: Fx) -> Manifold {
        let margin = self.settings.speculative_distance
            + World::sweep(self.live(a), h)
            + World::sweep(self.live(b), h);
        self.manifold(a, b, margin)
    }

    /// Every pair's manifold, in pair order, computed ahead on several
    /// threads when there are enough pairs and threads (a manifold is a
    /// pure function of the world, so any thread computes the same);
    /// otherwise `out` is left empty and [`World::collide`] computes each
    /// manifold where it is used, which saves copying each one twice.
    fn manifolds(&self, pairs: &[(u32, u32)], h: Fx, out: &mut Vec<Manifold>) {
        // Spheres' manifolds are shared too: with threads that start once
        // (`fork_join`'s pool), an RTS crowd of spheres gains from it (its
        // fixture replays about 5% faster on two threads), where starting a
        // thread per share made it 2-5% slower.
        let threads = if pairs.len() >= PARALLEL_PAIRS {
            self.threads.max(1)
        } else {
            1
        };
        if threads == 1 {
            out.clear();
            return;
        }
        // Every manifold below is written before the merge reads it, so
        // last step's are left in place rather than cleared first: only
        // growth fills new ones (192 bytes each, tens of thousands a step).
        out.resize(pairs.len(), Manifold::default());
        let run = |pairs: &[(u32, u32)], out: &mut [Manifold]| {
            for (m, &p) in out.iter_mut().zip(pairs) {
                *m = self.pair_manifold(p, h);
            }
        };
        // Pairs cost unequally (a box on the ground is cheaper than two
        // boxes, and pairs are sorted by body, so similar pairs sit
        // together): short runs dealt out in turn keep the threads' shares
        // even. Each pair's manifold is the same on any thread.
        let mut shares: Vec<Vec<NarrowRun<'_>>> = (0..threads).map(|_| Vec::new()).collect();
        let pieces = pairs.chunks(NARROW_RUN).zip(out.chunks_mut(NARROW_RUN));
        for (k, piece) in pieces.enumerate() {
            shares[k % threads].push(piece);
        }
        fork_join(shares, |share| {
            for (p, o) in share {
                run(p, o);
            }
        });
    }

    /// Narrowphase over this step's pairs, merged with the cache: fresh
    /// manifolds for active pairs, old entries kept for resting ones.
    pub(crate) fn collide(&mut self, h: Fx) {
        let pairs = std::mem::take(&mut self.scratch.pairs);
        let mut manifolds = std::mem::take(&mut self.scratch.manifolds);
        let mut new_contacts = std::mem::take(&mut self.scratch.new_contacts);
        self.manifolds(&pairs, h, &mut manifolds);
        new_contacts.clear();
        self.scratch.wake.clear();
        let cache = 0..self.contacts.len();
        self.merge(&pairs, &manifolds, h, cache, &mut new_contacts);
        std::mem::swap(&mut self.contacts, &mut new_contacts);
        let sc = &mut self.scratch;
        sc.new_contacts = new_contacts;
        sc.pairs = pairs;
        sc.manifolds = manifolds;
    }

    /// The collision that follows a waking (`World::step`), from the last
    /// step's cache, as [`World::collide`] would make it.
    ///
    /// Where no woken body takes part, nothing changed since the first
    /// collision: the same bodies, poses, margins and cache entry give the
    /// same pair, manifold, contact and event. So the first collision's
    /// contacts and events (`scratch.first_contacts`, `first_events`) are
    /// kept there; only the pairs and cached contacts with a woken body are
    /// computed and merged again, and the two are put together in pair
    /// order.
    pub(crate) fn collide_woken(&mut self, h: Fx) {
        let sc = &mut self.scratch;
        let woken = std::mem::take(&mut sc.woken);
        let touches = |a: u32, b: u32| woken[a as usize] || woken[b as usize];
        let mut computed = std::mem::take(&mut sc.computed);
        computed.clear();
        computed.extend(sc.pairs.iter().copied().filter(|&(a, b)| touches(a, b)));
        let mut cached = std::mem::take(&mut sc.woken_cache);
        cached.clear();
        cached.extend((0..self.contacts.len()).filter(|&i| {
            let c = &self.contacts[i];
            touches(c.a, c.b)
        }));
        let mut manifolds = std::mem::take(&mut sc.manifolds);
        self.manifolds(&computed, h, &mut manifolds);
        let mut changed = std::mem::take(&mut self.scratch.woken_contacts);
        changed.clear();
        self.scratch.wake.clear();
        let first_events = std::mem::take(&mut self.scratch.first_events);
        self.events.clear();
        self.merge(
            &computed,
            &manifolds,
            h,
            cached.iter().copied(),
            &mut changed,
        );
        let key = |c: &Contact| (c.a, c.b);
        let sc = &mut self.scratch;
        let mut new_contacts = std::mem::take(&mut sc.new_contacts);
        new_contacts.clear();
        merge_by_key(
            sc.first_contacts.iter().filter(|c| !touches(c.a, c.b)),
            changed.iter(),
            key,
            &mut new_contacts,
        );
        // The merge's events go to the scratch buffer, whose allocation
        // the events of the step then take over.
        let mut changed_events = std::mem::take(&mut self.scratch.woken_events);
        changed_events.clear();
        std::mem::swap(&mut self.events, &mut changed_events);
        merge_by_key(
            first_events.iter().filter(|e| {
                let (a, b) = event_pair(e);
                !touches(a, b)
            }),
            changed_events.iter(),
            event_pair,
            &mut self.events,
        );
        std::mem::swap(&mut self.contacts, &mut new_contacts);
        let sc = &mut self.scratch;
        sc.new_contacts = new_contacts;
        sc.computed = computed;
        sc.woken = woken;
        sc.woken_cache = cached;
        sc.manifolds = manifolds;
        sc.woken_contacts = changed;
        sc.woken_events = changed_events;
        sc.first_events = first_events;
    }

    /// Merges `pairs` (ascending; their manifolds are `manifolds`, or are
    /// computed here where the narrowphase was not shared) with the cached
    /// contacts at `cache` (ascending indices into `self.contacts`) in
    /// `(a, b)` order into `out`: a pair's contact carries the warm-start
    /// impulses of its cache entry by feature id; a cache entry without a
    /// pair is kept if it rests, else ends. Pushes begin and end events,
    /// and the sleeping islands an active body touched to `scratch.wake`.
    fn merge(
        &mut self,
        pairs: &[(u32, u32)],
        manifolds: &[Manifold],
        h: Fx,
        cache: impl Iterator<Item = usize>,
        out: &mut Vec<Contact>,
    ) {
        let mut cache = cache.peekable();
        let mut next = 0usize;
        loop {
            let pair = pairs.get(next).copied();
            let cached = cache
                .peek()
                .map(|&i| (self.contacts[i].a, self.contacts[i].b));
            match (pair, cached) {
                (None, None) => break,
                (Some(p), Some(c)) if c < p => {
                    let old = cache.next().expect("peeked");
                    self.carry_or_end(old, out);
                }
                (None, Some(_)) => {
                    let old = cache.next().expect("peeked");
                    self.carry_or_end(old, out);
                }
                (Some(p), c) => {
                    // The cache entry of the same pair, by index (a
                    // contact is too large to copy for a look).
                    let previous = if c == Some(p) { cache.next() } else { None };
                    let manifold = match manifolds.get(next) {
                        Some(m) => *m,
                        None => self.pair_manifold(p, h),
                    };
                    next += 1;
                    let (a, b) = p;
                    let (ba, bb) = (self.live(a), self.live(b));
                    let active = [World::is_active(ba), World::is_active(bb)];
                    let was_touching =
                        previous.is_some_and(|i| self.contacts[i].manifold.count > 0);
                    if manifold.count == 0 {
                        if was_touching {
                            self.events.push(Event::ContactEnded {
                                a: handle_of(&self.slots, a),
                                b: handle_of(&self.slots, b),
                            });
                        }
                        continue;
                    }
                    if !was_touching {
                        self.events.push(Event::ContactBegan {
                            a: handle_of(&self.slots, a),
                            b: handle_of(&self.slots, b),
                        });
                    }
                    // An active body touching a sleeping one wakes its island
                    // (`step` then collides again with the island awake).
                    for (me_active, other) in [(active[0], b), (active[1], a)] {
                        if me_active {
                            let o = self.live(other);
                            if o.kind == BodyKind::Dynamic && !o.awake && !o.contained {
                                self.scratch.wake.push(self.slots[other as usize].island);
                            }
                        }
                    }
                    let mut normal_impulses = [Fx::ZERO; 4];
                    let (mut friction_impulse, mut twist_impulse) = (Vec3::ZERO, Fx::ZERO);
                    if let Some(prev) = previous.map(|i| &self.contacts[i]) {
                        for (imp, p) in normal_impulses.iter_mut().zip(manifold.points()) {
                            *imp = prev.impulse_for(p.id);
                        }
                        friction_impulse = prev.friction_impulse;
                        twist_impulse = prev.twist_impulse;
                    }
                    out.push(Contact {
                        a,
                        b,
                        manifold,
                        normal_impulses,
                        friction_impulse,
                        twist_impulse,
                        fresh: true,
                    });
                }
            }
        }
    }

    pub(crate) fn live(&self, i: u32) -> &Body {
        self.slots[i as usize]
            .body
            .as_ref()
            .expect("pair bodies are live")
    }

    /// An old cache entry with no pair this step: kept if neither body moves
    /// (a resting contact between sleeping or static bodies), else it ended.
    pub(crate) fn carry_or_end(&mut self, old: usize, out: &mut Vec<Contact>) {
        let c = &self.contacts[old];
        let (ba, bb) = (
            self.slots[c.a as usize].body.as_ref(),
            self.slots[c.b as usize].body.as_ref(),
        );
        let resting = match (ba, bb) {
            (Some(x), Some(y)) => {
                !World::is_active(x) && !World::is_active(y) && !x.contained && !y.contained
            }
            _ => false,
        };
        if resting {
            out.push(Contact { fresh: false, ..*c });
        } else if c.manifold.count > 0 {
            self.events.push(Event::ContactEnded {
                a: handle_of(&self.slots, c.a),
                b: handle_of(&self.slots, c.b),
            });
        }
    }
}

/// The pair of bodies of a contact event, as `(a, b)` slot indices.
fn event_pair(e: &Event) -> (u32, u32) {
    match e {
        Event::ContactBegan { a, b } | Event::ContactEnded { a, b } => (a.index, b.index),
        Event::BodyContained(h) => (h.index, h.index),
    }
}

/// Puts two sequences ascending by `key` (no key in both) together into
/// `out`, ascending.
fn merge_by_key<'a, T: Copy + 'a, K: Ord>(
    a: impl Iterator<Item = &'a T>,
    b: impl Iterator<Item = &'a T>,
    key: impl Fn(&T) -> K,
    out: &mut Vec<T>,
) {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(x), Some(y)) => key(x) < key(y),
        };
        let next = if take_a { a.next() } else { b.next() };
        out.extend(next.copied());
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use lockstep_fx::{Fx, Vec3};

    use crate::{BodyBuilder, Shape, World, WorldSettings};

    thread_local! {
        /// Waking steps whose pairs were found from the woken bodies, and
        /// those with too many woken bodies, swept again.
        pub(super) static SEARCHES: Cell<usize> = const { Cell::new(0) };
        pub(super) static SWEPT: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn proxies_made_on_threads_are_those_of_one_pass_in_slot_order() {
        // More slots than one thread takes, with half-spaces at the start
        // and in a later share, holes left by removed bodies, bodies
        // contained out of range, asleep and moving: every thread count
        // gives the proxies and half-spaces of a plain pass over the slots.
        let mut world = World::new(WorldSettings::default());
        let ground = || BodyBuilder::fixed(Shape::HalfSpace);
        world.add_body(ground()).unwrap();
        let ball = Shape::Sphere { radius: Fx::HALF };
        let mut handles = Vec::new();
        for i in 0..2_600 {
            if i == 1_800 {
                world.add_body(ground()).unwrap();
                continue;
            }
            let at = Vec3::new(Fx::from_int(i % 50), Fx::HALF, Fx::from_int(i / 50));
            let at = if i % 401 == 7 {
                at * Fx::from_int(1 << 20)
            } else {
                at
            };
            let body = BodyBuilder::dynamic(ball).position(at);
            let body = if i % 3 == 0 { body.asleep() } else { body };
            handles.push(world.add_body(body).unwrap());
        }
        for k in [4, 1_290, 2_400] {
            world.remove_body(handles[k]);
        }
        world.step();
        let h = world.settings.dt();
        let margin = world.settings.speculative_distance.scale_pow2(-1);
        let (mut proxies, mut half_spaces) = (Vec::new(), Vec::new());
        for (i, slot) in world.slots.iter().enumerate() {
            let Some(b) = &slot.body else { continue };
            if b.contained {
                continue;
            }
            match super::proxy(i as u32, b, &world.scratch.rotations[i], margin, h) {
                Some(p) => proxies.push(p),
                None => half_spaces.push(i as u32),
            }
        }
        let contained = world.slots.iter().filter_map(|s| s.body.as_ref());
        assert_eq!(contained.filter(|b| b.contained).count(), 7);
        for threads in [1, 2, 3, 8] {
            world.set_threads(threads);
            world.find_pairs(h);
            let made = &world.scratch.proxies;
            assert_eq!(made.len(), proxies.len(), "{threads} threads");
            for (m, p) in made.iter().zip(&proxies) {
                assert_eq!(
                    (m.aabb, m.body, m.active, m.groups, m.mask),
                    (p.aabb, p.body, p.active, p.groups, p.mask),
                    "{threads} threads"
                );
            }
            assert_eq!(world.scratch.half_spaces, half_spaces, "{threads} threads");
        }
    }

    #[test]
    fn a_waking_step_makes_the_pairs_contacts_and_events_of_a_whole_collision() {
        // Sleeping cubes, apart and in a block of 36 touching ones, and
        // balls rolled into them: a few bodies woken at a time, then the
        // whole block. Every waking step compares its pairs, contacts and
        // events with those of a whole second collision (the checks in
        // `World::step`, in every test build).
        let mut world = World::new(WorldSettings::default());
        world
            .add_body(BodyBuilder::fixed(Shape::HalfSpace).friction(Fx::HALF))
            .unwrap();
        let cube = Shape::box_with_size(Vec3::splat(Fx::ONE));
        for i in 0..12 {
            let at = Vec3::new(Fx::from_int(3 * i), Fx::HALF, Fx::ZERO);
            world
                .add_body(BodyBuilder::dynamic(cube).position(at))
                .unwrap();
        }
        for i in 0..36 {
            let at = Vec3::new(Fx::from_int(i % 6), Fx::HALF, Fx::from_int(10 + i / 6));
            world
                .add_body(BodyBuilder::dynamic(cube).position(at))
                .unwrap();
        }
        for _ in 0..150 {
            world.step();
        }
        assert!(world.bodies().all(|(_, b)| !b.is_awake()));
        let ball = |at: Vec3, v: Vec3| {
            BodyBuilder::dynamic(Shape::Sphere { radius: Fx::HALF })
                .position(at)
                .linear_velocity(v)
        };
        // Along the row of cubes, and into the block.
        world
            .add_body(ball(
                Vec3::new(Fx::from_int(-3), Fx::HALF, Fx::ZERO),
                Vec3::new(Fx::from_int(12), Fx::ZERO, Fx::ZERO),
            ))
            .unwrap();
        world
            .add_body(ball(
                Vec3::new(Fx::from_int(2), Fx::HALF, Fx::from_int(4)),
                Vec3::new(Fx::ZERO, Fx::ZERO, Fx::from_int(8)),
            ))
            .unwrap();
        let before = (SEARCHES.with(Cell::get), SWEPT.with(Cell::get));
        for _ in 0..120 {
            world.step();
        }
        let after = (SEARCHES.with(Cell::get), SWEPT.with(Cell::get));
        assert!(
            after.0 > before.0,
            "no step found its pairs from the woken bodies"
        );
        assert!(after.1 > before.1, "no step woke too many to search");
    }
}
