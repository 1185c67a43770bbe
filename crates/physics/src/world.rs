//! The world: bodies, the contact cache and the fixed-step pipeline.
//!
//! [`World::step`] advances one frame:
//! 1. integrate velocities of awake dynamic bodies (forces, damping);
//! 2. broadphase (sort and sweep) and the half-space pairs;
//! 3. narrowphase for every pair with a moving body, merged with last step's
//!    cache by feature id (warm starting), contact events
//!    (an island touched while asleep wakes and the step collides again);
//! 4. solve: constraint order shuffled by `Rng::for_frame(seed, frame)`; per
//!    substep gravity, warm start, soft iterations, position integration and
//!    relaxation; then restitution;
//! 5. sleeping by islands, waking of touched islands, containment of bodies
//!    that left the valid range.
//!
//! Invariants: bodies are processed in slot order and pairs in `(a, b)`
//! order; nothing depends on allocation addresses, hash order, clocks or
//! threads; all arithmetic is `Fx`. The state is exactly what
//! [`World::encode`](crate::World::encode) writes; everything else here is a
//! cache derived from it.

use lockstep_fx::{Fx, Mat3, Quat, Rng, Vec3};

use crate::aabb::Aabb;
use crate::body::{Body, BodyBuilder, BodyHandle, BodyKind};
use crate::broadphase::{Broadphase, Proxy};
use crate::contact::{Contact, ContactInfo, Event};
use crate::island;
use crate::narrowphase::{self, Manifold, Pose};
use crate::settings::WorldSettings;
use crate::shape::Shape;
use crate::solver::{self, BodyInfo, ContactConstraint, PointInput, Softness, SolverBody};

/// Why a body could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// A size was zero, negative or beyond 2^20 m.
    #[error("shape dimensions must be positive and below 2^20 m")]
    InvalidShape,
    /// Half-spaces can only be static.
    #[error("a half-space must be static")]
    MovingHalfSpace,
    /// A dynamic body needs a positive mass.
    #[error("a dynamic body needs a positive density")]
    NoMass,
    /// More than 2^32 − 1 bodies.
    #[error("too many bodies")]
    TooMany,
}

/// A storage slot: a body or a hole left by a removed one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub generation: u32,
    pub body: Option<Body>,
    /// Island id of a sleeping body (the lowest slot index in its island).
    pub island: u32,
}

/// A deterministic rigid-body world.
#[derive(Debug)]
pub struct World {
    pub(crate) settings: WorldSettings,
    pub(crate) frame: u64,
    pub(crate) slots: Vec<Slot>,
    /// Free slot indices, reused last-in first-out.
    pub(crate) free: Vec<u32>,
    pub(crate) contacts: Vec<Contact>,
    pub(crate) events: Vec<Event>,
    scratch: Scratch,
}

/// Per-step caches derived from the state; never encoded.
#[derive(Debug, Default)]
struct Scratch {
    rotations: Vec<Mat3>,
    broadphase: Broadphase,
    proxies: Vec<Proxy>,
    pairs: Vec<(u32, u32)>,
    /// Solver index per slot (0 = immovable).
    solver_index: Vec<u32>,
    solver_bodies: Vec<u32>,
    velocities: Vec<SolverBody>,
    inertia: Vec<Mat3>,
    /// Gravity's velocity change per substep, per solver body.
    gravity: Vec<Vec3>,
    constraints: Vec<ContactConstraint>,
    /// Contact index of each constraint, in solve order.
    order: Vec<u32>,
    new_contacts: Vec<Contact>,
    wake: Vec<u32>,
    half_spaces: Vec<u32>,
}

impl World {
    /// An empty world.
    pub fn new(settings: WorldSettings) -> World {
        World {
            settings,
            frame: 0,
            slots: Vec::new(),
            free: Vec::new(),
            contacts: Vec::new(),
            events: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &WorldSettings {
        &self.settings
    }

    /// Frames stepped so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Adds a body.
    pub fn add_body(&mut self, b: BodyBuilder) -> Result<BodyHandle, BodyError> {
        if !b.shape.is_valid() {
            return Err(BodyError::InvalidShape);
        }
        if b.shape == Shape::HalfSpace && b.kind != BodyKind::Static {
            return Err(BodyError::MovingHalfSpace);
        }
        let (inv_mass, inv_inertia) = if b.kind == BodyKind::Dynamic {
            let mp = b.shape.mass_properties(b.density);
            if !mp.mass.is_positive() || !mp.inertia.min_element().is_positive() {
                return Err(BodyError::NoMass);
            }
            let inv = |x: Fx| Fx::ONE / x;
            (
                inv(mp.mass),
                Vec3::new(inv(mp.inertia.x), inv(mp.inertia.y), inv(mp.inertia.z)),
            )
        } else {
            (Fx::ZERO, Vec3::ZERO)
        };
        let moving = b.kind != BodyKind::Static;
        let body = Body {
            kind: b.kind,
            shape: b.shape,
            position: b.position,
            orientation: normalize_or_identity(b.orientation),
            linear_velocity: if moving {
                b.linear_velocity
            } else {
                Vec3::ZERO
            },
            angular_velocity: if moving {
                b.angular_velocity
            } else {
                Vec3::ZERO
            },
            force: Vec3::ZERO,
            torque: Vec3::ZERO,
            inv_mass,
            inv_inertia,
            linear_damping: b.linear_damping,
            angular_damping: b.angular_damping,
            friction: b.friction.max(Fx::ZERO),
            restitution: b.restitution.clamp(Fx::ZERO, Fx::ONE),
            gravity_scale: b.gravity_scale,
            groups: b.groups,
            mask: b.mask,
            user_data: b.user_data,
            still_frames: 0,
            awake: moving && !(b.asleep && b.kind == BodyKind::Dynamic),
            contained: false,
        };
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.slots.len()).map_err(|_| BodyError::TooMany)?;
                if i == u32::MAX {
                    return Err(BodyError::TooMany);
                }
                self.slots.push(Slot {
                    generation: 0,
                    body: None,
                    island: 0,
                });
                i
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.island = index;
        slot.body = Some(body);
        let generation = slot.generation;
        self.refresh_derived(index);
        Ok(BodyHandle { index, generation })
    }

    /// Removes a body; its contacts end (with events). Returns whether the
    /// handle was live.
    pub fn remove_body(&mut self, h: BodyHandle) -> bool {
        if self.body(h).is_none() {
            return false;
        }
        let i = h.index;
        self.wake_island_of(i);
        let slots = &self.slots;
        let events = &mut self.events;
        self.contacts.retain(|c| {
            let gone = c.a == i || c.b == i;
            if gone && c.manifold.count > 0 {
                events.push(Event::ContactEnded {
                    a: handle_of(slots, c.a),
                    b: handle_of(slots, c.b),
                });
            }
            !gone
        });
        let slot = &mut self.slots[i as usize];
        slot.body = None;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(i);
        true
    }

    /// The body behind a handle, if it is still alive.
    pub fn body(&self, h: BodyHandle) -> Option<&Body> {
        let s = self.slots.get(h.index as usize)?;
        if s.generation != h.generation {
            return None;
        }
        s.body.as_ref()
    }

    fn body_mut(&mut self, h: BodyHandle) -> Option<&mut Body> {
        let s = self.slots.get_mut(h.index as usize)?;
        if s.generation != h.generation {
            return None;
        }
        s.body.as_mut()
    }

    /// Live bodies in slot order.
    pub fn bodies(&self) -> impl Iterator<Item = (BodyHandle, &Body)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.body.as_ref().map(|b| {
                (
                    BodyHandle {
                        index: i as u32,
                        generation: s.generation,
                    },
                    b,
                )
            })
        })
    }

    /// Whether every body is asleep (or static): the world is at rest.
    pub fn all_asleep(&self) -> bool {
        self.bodies().all(|(_, b)| !b.is_awake())
    }

    /// Number of live bodies.
    pub fn body_count(&self) -> usize {
        self.slots.iter().filter(|s| s.body.is_some()).count()
    }

    /// Sets a dynamic or kinematic body's linear velocity (and wakes it).
    pub fn set_linear_velocity(&mut self, h: BodyHandle, v: Vec3) {
        self.edit(h, true, |b| b.linear_velocity = v);
    }

    /// Sets a dynamic or kinematic body's angular velocity (and wakes it).
    pub fn set_angular_velocity(&mut self, h: BodyHandle, w: Vec3) {
        self.edit(h, true, |b| b.angular_velocity = w);
    }

    /// Adds a force at the centre of mass for the next step (and wakes it).
    pub fn apply_force(&mut self, h: BodyHandle, f: Vec3) {
        self.edit(h, false, |b| b.force += f);
    }

    /// Adds a torque for the next step (and wakes it).
    pub fn apply_torque(&mut self, h: BodyHandle, t: Vec3) {
        self.edit(h, false, |b| b.torque += t);
    }

    /// Applies an impulse at a world point, changing the velocities at once.
    pub fn apply_impulse(&mut self, h: BodyHandle, impulse: Vec3, point: Vec3) {
        let Some(rotation) = self.scratch.rotations.get(h.index as usize).copied() else {
            return;
        };
        self.edit(h, false, |b| {
            b.linear_velocity += impulse * b.inv_mass;
            let inv_inertia = rotation.rotate_diagonal(b.inv_inertia);
            b.angular_velocity += inv_inertia.mul_vec3((point - b.position).cross(impulse));
        });
    }

    /// Teleports a body (and wakes it and what touches it).
    pub fn set_pose(&mut self, h: BodyHandle, position: Vec3, orientation: Quat) {
        let Some(b) = self.body_mut(h) else { return };
        b.position = position;
        b.orientation = normalize_or_identity(orientation);
        if b.kind == BodyKind::Dynamic {
            b.awake = true;
            b.still_frames = 0;
        }
        self.refresh_derived(h.index);
        self.wake_island_of(h.index);
    }

    /// Wakes a sleeping body and its island.
    pub fn wake(&mut self, h: BodyHandle) {
        if self.body(h).is_some() {
            self.wake_island_of(h.index);
        }
    }

    /// Applies a game edit to a live, uncontained body that can take it
    /// (dynamic, or also kinematic for velocities), then wakes its island.
    fn edit(&mut self, h: BodyHandle, kinematic_too: bool, f: impl FnOnce(&mut Body)) {
        if let Some(b) = self.body_mut(h) {
            let accepts = match b.kind {
                BodyKind::Dynamic => true,
                BodyKind::Kinematic => kinematic_too,
                BodyKind::Static => false,
            };
            if accepts && !b.contained {
                f(b);
                self.wake_island_of(h.index);
            }
        }
    }

    /// Wakes every sleeping body in the island of slot `i`.
    fn wake_island_of(&mut self, i: u32) {
        let Some(slot) = self.slots.get_mut(i as usize) else {
            return;
        };
        let island = slot.island;
        let Some(b) = slot.body.as_mut() else { return };
        if b.kind == BodyKind::Dynamic && !b.awake && !b.contained {
            self.wake_islands(&[island]);
        } else {
            // Awake already: an edit restarts its count towards sleep.
            b.still_frames = 0;
        }
    }

    /// Wakes the sleeping bodies whose island id is in `islands` (sorted).
    fn wake_islands(&mut self, islands: &[u32]) {
        if islands.is_empty() {
            return;
        }
        for s in &mut self.slots {
            if let Some(b) = s.body.as_mut() {
                if b.kind == BodyKind::Dynamic
                    && !b.awake
                    && !b.contained
                    && islands.binary_search(&s.island).is_ok()
                {
                    b.awake = true;
                    b.still_frames = 0;
                }
            }
        }
    }

    /// Events of the last step (contact begin/end, containment).
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Contacts solved in the last step, in `(a, b)` slot order.
    pub fn contacts(&self) -> impl Iterator<Item = ContactInfo<'_>> {
        self.contacts
            .iter()
            .filter(|c| c.fresh && c.manifold.count > 0)
            .map(|c| ContactInfo {
                a: handle_of(&self.slots, c.a),
                b: handle_of(&self.slots, c.b),
                normal: c.manifold.normal,
                points: c.manifold.points(),
                normal_impulses: c.normal_impulses,
            })
    }

    /// Number of cached contacts (touching pairs, awake or asleep).
    pub fn contact_count(&self) -> usize {
        self.contacts.len()
    }

    /// The rotation matrix of a live body.
    pub(crate) fn rotation(&self, index: u32) -> Mat3 {
        self.scratch
            .rotations
            .get(index as usize)
            .copied()
            .unwrap_or(Mat3::IDENTITY)
    }

    /// Recomputes the caches derived from one slot.
    fn refresh_derived(&mut self, index: u32) {
        let rotations = &mut self.scratch.rotations;
        if rotations.len() < self.slots.len() {
            rotations.resize(self.slots.len(), Mat3::IDENTITY);
        }
        if let Some(b) = &self.slots[index as usize].body {
            rotations[index as usize] = Mat3::from_quat(b.orientation);
        }
    }

    /// Recomputes every derived cache (after a load).
    pub(crate) fn refresh_all(&mut self) {
        self.scratch = Scratch::default();
        for i in 0..self.slots.len() as u32 {
            self.refresh_derived(i);
        }
    }

    /// The world-space bounds of a live body's shape (half-spaces: none).
    pub(crate) fn shape_aabb(&self, index: u32) -> Option<Aabb> {
        let b = self.slots.get(index as usize)?.body.as_ref()?;
        b.bounds(&self.rotation(index))
    }

    /// Advances the world by one time step.
    pub fn step(&mut self) {
        self.events.clear();
        let h = self.settings.dt();
        self.integrate_velocities(h);
        if !self
            .slots
            .iter()
            .any(|s| s.body.as_ref().is_some_and(World::is_active))
        {
            // Nothing moves: no pairs to find and nothing to solve; the cache
            // merge alone keeps the resting contacts (and ends any with a
            // contained body).
            self.scratch.pairs.clear();
            self.collide(h);
            self.frame = self.frame.wrapping_add(1);
            return;
        }
        self.find_pairs(h);
        self.collide(h);
        if !self.scratch.wake.is_empty() {
            // Something moving touched a sleeping island: wake it now and
            // collide again from last step's cache (which `collide` left in
            // `scratch.new_contacts`), so the island takes part in this very
            // step (an island treated as immovable for one step would stop a
            // fast body dead).
            let mut wake = std::mem::take(&mut self.scratch.wake);
            wake.sort_unstable();
            wake.dedup();
            self.wake_islands(&wake);
            self.scratch.wake = wake;
            std::mem::swap(&mut self.contacts, &mut self.scratch.new_contacts);
            self.events.clear();
            self.find_pairs(h);
            self.collide(h);
        }
        self.solve();
        self.update_sleep();
        self.frame = self.frame.wrapping_add(1);
    }

    /// Forces, torques and damping over the whole step (gravity is applied
    /// per substep by the solver).
    fn integrate_velocities(&mut self, h: Fx) {
        let s = &self.settings;
        let max_v2 = s.max_linear_speed * s.max_linear_speed;
        let max_w2 = s.max_angular_speed * s.max_angular_speed;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(b) = slot.body.as_mut() else {
                continue;
            };
            if b.kind != BodyKind::Dynamic || !b.awake || b.contained {
                continue;
            }
            let mut v = b.linear_velocity + b.force * (b.inv_mass * h);
            let mut w = b.angular_velocity;
            if b.torque != Vec3::ZERO {
                let inv_inertia = self.scratch.rotations[i].rotate_diagonal(b.inv_inertia);
                w += inv_inertia.mul_vec3(b.torque) * h;
            }
            if !b.linear_damping.is_zero() {
                v *= Fx::ONE / (Fx::ONE + h * b.linear_damping);
            }
            if !b.angular_damping.is_zero() {
                w *= Fx::ONE / (Fx::ONE + h * b.angular_damping);
            }
            if v.length_squared() > max_v2 {
                v = v.normalize_or_zero() * s.max_linear_speed;
            }
            if w.length_squared() > max_w2 {
                w = w.normalize_or_zero() * s.max_angular_speed;
            }
            b.linear_velocity = v;
            b.angular_velocity = w;
            b.force = Vec3::ZERO;
            b.torque = Vec3::ZERO;
        }
    }

    /// Whether a body moves this step (awake dynamic, or kinematic with a
    /// velocity).
    fn is_active(b: &Body) -> bool {
        !b.contained
            && match b.kind {
                BodyKind::Dynamic => b.awake,
                BodyKind::Kinematic => {
                    b.linear_velocity != Vec3::ZERO || b.angular_velocity != Vec3::ZERO
                }
                BodyKind::Static => false,
            }
    }

    /// Whether a body is dynamic and awake (so the solver moves it).
    fn is_moving_dynamic(b: &Body) -> bool {
        b.kind == BodyKind::Dynamic && World::is_active(b)
    }

    /// How far a body may travel this step along each axis (L1 bound).
    fn sweep(b: &Body, h: Fx) -> Fx {
        if !World::is_active(b) {
            return Fx::ZERO;
        }
        let v = b.linear_velocity.abs();
        ((v.x + v.y + v.z) * h).min(Fx::from_int(8))
    }

    fn find_pairs(&mut self, h: Fx) {
        let margin = self.settings.speculative_distance.scale_pow2(-1);
        let sc = &mut self.scratch;
        sc.proxies.clear();
        sc.half_spaces.clear();
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(b) = &slot.body else { continue };
            if b.contained {
                continue;
            }
            let Some(aabb) = b.bounds(&sc.rotations[i]) else {
                sc.half_spaces.push(i as u32);
                continue;
            };
            let grow = margin + World::sweep(b, h);
            sc.proxies.push(Proxy {
                aabb: aabb.expanded(Vec3::splat(grow)),
                body: i as u32,
                active: World::is_active(b),
                groups: b.groups,
                mask: b.mask,
            });
        }
        sc.broadphase.pairs(&sc.proxies, &mut sc.pairs);
        if !sc.half_spaces.is_empty() {
            for p in &sc.proxies {
                if !p.active {
                    continue;
                }
                for &hs in &sc.half_spaces {
                    let plane = self.slots[hs as usize]
                        .body
                        .as_ref()
                        .expect("half-space slot is live");
                    if plane.groups & p.mask != 0 && p.groups & plane.mask != 0 {
                        sc.pairs.push((hs.min(p.body), hs.max(p.body)));
                    }
                }
            }
            sc.pairs.sort_unstable();
        }
    }

    /// The manifold between two live bodies, normal from `a` to `b`.
    fn manifold(&self, a: u32, b: u32, margin: Fx) -> Manifold {
        let (Some(ba), Some(bb)) = (&self.slots[a as usize].body, &self.slots[b as usize].body)
        else {
            return Manifold::default();
        };
        let pose = |i: u32, body: &Body| Pose {
            position: body.position,
            rotation: self.rotation(i),
        };
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
            (Shape::HalfSpace, other) => self.against_half_space(a, ba, b, bb, other, margin),
            (other, Shape::HalfSpace) => self
                .against_half_space(b, bb, a, ba, other, margin)
                .flipped(),
        }
    }

    fn against_half_space(
        &self,
        hs: u32,
        plane: &Body,
        i: u32,
        body: &Body,
        shape: Shape,
        margin: Fx,
    ) -> Manifold {
        let normal = self.rotation(hs).col(1);
        let offset = normal.dot(plane.position);
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
            Shape::HalfSpace => Manifold::default(),
        }
    }

    /// Narrowphase over this step's pairs, merged with the cache: fresh
    /// manifolds for active pairs, old entries kept for resting ones.
    fn collide(&mut self, h: Fx) {
        let mut new_contacts = std::mem::take(&mut self.scratch.new_contacts);
        let pairs = std::mem::take(&mut self.scratch.pairs);
        new_contacts.clear();
        self.scratch.wake.clear();
        let base = self.settings.speculative_distance;
        let mut old = 0usize;
        let mut next = 0usize;
        loop {
            let pair = pairs.get(next).copied();
            let cached = self.contacts.get(old).map(|c| (c.a, c.b));
            match (pair, cached) {
                (None, None) => break,
                (Some(p), Some(c)) if c < p => {
                    self.carry_or_end(old, &mut new_contacts);
                    old += 1;
                }
                (None, Some(_)) => {
                    self.carry_or_end(old, &mut new_contacts);
                    old += 1;
                }
                (Some(p), c) => {
                    let previous = if c == Some(p) {
                        old += 1;
                        Some(self.contacts[old - 1])
                    } else {
                        None
                    };
                    next += 1;
                    let (a, b) = p;
                    let (ba, bb) = (self.live(a), self.live(b));
                    let margin = base + World::sweep(ba, h) + World::sweep(bb, h);
                    let active = [World::is_active(ba), World::is_active(bb)];
                    let manifold = self.manifold(a, b, margin);
                    let was_touching = previous.is_some_and(|c| c.manifold.count > 0);
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
                    if let Some(prev) = &previous {
                        for (imp, p) in normal_impulses.iter_mut().zip(manifold.points()) {
                            *imp = prev.impulse_for(p.id);
                        }
                        friction_impulse = prev.friction_impulse;
                        twist_impulse = prev.twist_impulse;
                    }
                    new_contacts.push(Contact {
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
        std::mem::swap(&mut self.contacts, &mut new_contacts);
        self.scratch.new_contacts = new_contacts;
        self.scratch.pairs = pairs;
    }

    fn live(&self, i: u32) -> &Body {
        self.slots[i as usize]
            .body
            .as_ref()
            .expect("pair bodies are live")
    }

    /// An old cache entry with no pair this step: kept if neither body moves
    /// (a resting contact between sleeping or static bodies), else it ended.
    fn carry_or_end(&mut self, old: usize, out: &mut Vec<Contact>) {
        let c = self.contacts[old];
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
            out.push(Contact { fresh: false, ..c });
        } else if c.manifold.count > 0 {
            self.events.push(Event::ContactEnded {
                a: handle_of(&self.slots, c.a),
                b: handle_of(&self.slots, c.b),
            });
        }
    }

    fn solve(&mut self) {
        let settings = self.settings;
        let substeps = settings.substeps.max(1);
        let rate = i64::from(settings.tick_rate.max(1)) * i64::from(substeps);
        let hs = Fx::from_ratio(1, rate);
        let inv_hs = Fx::from_int(rate.min(i64::from(i32::MAX)) as i32);
        let sc = &mut self.scratch;
        // Solver bodies: index 0 is the immovable ground.
        sc.solver_index.clear();
        sc.solver_index.resize(self.slots.len(), 0);
        sc.solver_bodies.clear();
        sc.velocities.clear();
        sc.inertia.clear();
        sc.velocities.push(SolverBody::default());
        sc.gravity.clear();
        sc.gravity.push(Vec3::ZERO);
        sc.inertia.push(Mat3::ZERO);
        sc.solver_bodies.push(u32::MAX);
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(b) = &slot.body else { continue };
            if !World::is_active(b) {
                continue;
            }
            sc.solver_index[i] = sc.velocities.len() as u32;
            sc.solver_bodies.push(i as u32);
            sc.velocities.push(SolverBody {
                linear: b.linear_velocity,
                angular: b.angular_velocity,
                dp: Vec3::ZERO,
                dtheta: Vec3::ZERO,
            });
            let g = if b.kind == BodyKind::Dynamic {
                settings.gravity * (b.gravity_scale * hs)
            } else {
                Vec3::ZERO
            };
            sc.gravity.push(g);
            let inv_inertia = if b.kind == BodyKind::Dynamic {
                sc.rotations[i].rotate_diagonal(b.inv_inertia)
            } else {
                Mat3::ZERO
            };
            sc.inertia.push(inv_inertia);
        }
        // Constraints for this step's manifolds that involve a dynamic body.
        // Stiffness is capped at a quarter of the substep rate (Box2D v3).
        let hertz = settings.contact_hertz.min(inv_hs.scale_pow2(-2));
        let soft = Softness::new(hertz, settings.contact_damping_ratio, hs);
        let static_soft = Softness::new(hertz.mul_int(2), settings.contact_damping_ratio, hs);
        // The solve order: this step's manifolds that involve a moving
        // dynamic body, shuffled by the frame's generator. The constraints
        // are built in that order, so the passes below walk memory in order.
        sc.order.clear();
        for (ci, c) in self.contacts.iter().enumerate() {
            let (Some(ba), Some(bb)) = (
                self.slots[c.a as usize].body.as_ref(),
                self.slots[c.b as usize].body.as_ref(),
            ) else {
                continue;
            };
            if c.fresh && (World::is_moving_dynamic(ba) || World::is_moving_dynamic(bb)) {
                sc.order.push(ci as u32);
            }
        }
        if settings.shuffle {
            Rng::for_frame(settings.seed, self.frame).shuffle(&mut sc.order);
        }
        sc.constraints.clear();
        for &ci in &sc.order {
            let c = &self.contacts[ci as usize];
            let (Some(ba), Some(bb)) = (
                self.slots[c.a as usize].body.as_ref(),
                self.slots[c.b as usize].body.as_ref(),
            ) else {
                continue;
            };
            let dyn_a = World::is_moving_dynamic(ba);
            let dyn_b = World::is_moving_dynamic(bb);
            let info = |i: u32, b: &Body, dynamic: bool| BodyInfo {
                solver_index: sc.solver_index[i as usize],
                position: b.position,
                inv_mass: if dynamic { b.inv_mass } else { Fx::ZERO },
                inv_inertia: if dynamic {
                    sc.inertia[sc.solver_index[i as usize] as usize]
                } else {
                    Mat3::ZERO
                },
            };
            let mut points = [PointInput {
                position: Vec3::ZERO,
                separation: Fx::ZERO,
                impulse: Fx::ZERO,
            }; 4];
            for (k, p) in c.manifold.points().iter().enumerate() {
                points[k] = PointInput {
                    position: p.position,
                    separation: p.separation,
                    impulse: c.normal_impulses[k],
                };
            }
            let friction = if ba.friction == bb.friction {
                ba.friction
            } else {
                (ba.friction * bb.friction).sqrt()
            };
            let restitution = ba.restitution.max(bb.restitution);
            let soft = if dyn_a && dyn_b { soft } else { static_soft };
            sc.constraints.push(solver::prepare(
                &info(c.a, ba, dyn_a),
                &info(c.b, bb, dyn_b),
                c.manifold.normal,
                &points[..usize::from(c.manifold.count)],
                c.friction_impulse,
                c.twist_impulse,
                friction,
                restitution,
                soft,
                &sc.velocities,
            ));
        }
        for _ in 0..substeps {
            for (v, g) in sc.velocities.iter_mut().zip(&sc.gravity) {
                v.linear += *g;
            }
            solver::track_approach(&mut sc.constraints, &sc.velocities);
            solver::warm_start(&sc.constraints, &mut sc.velocities);
            for _ in 0..settings.iterations {
                solver::solve(
                    &mut sc.constraints,
                    &mut sc.velocities,
                    true,
                    inv_hs,
                    settings.linear_slop,
                    settings.max_push_velocity,
                );
            }
            for v in sc.velocities.iter_mut().skip(1) {
                v.dp += v.linear * hs;
                v.dtheta += v.angular * hs;
            }
            for _ in 0..settings.relax_iterations {
                solver::solve(
                    &mut sc.constraints,
                    &mut sc.velocities,
                    false,
                    inv_hs,
                    settings.linear_slop,
                    settings.max_push_velocity,
                );
            }
        }
        solver::restitution(
            &mut sc.constraints,
            &mut sc.velocities,
            settings.restitution_threshold,
        );
        // Store impulses for warm starting and velocities for the next step.
        for (c, &ci) in sc.constraints.iter().zip(&sc.order) {
            let contact = &mut self.contacts[ci as usize];
            for (imp, p) in contact
                .normal_impulses
                .iter_mut()
                .zip(&c.points[..usize::from(c.count)])
            {
                *imp = p.normal.impulse;
            }
            contact.friction_impulse = c.friction_impulse();
            contact.twist_impulse = c.twist.impulse;
        }
        // Move the bodies by their accumulated displacement and keep the
        // final velocities for the next step.
        for (k, &i) in sc.solver_bodies.iter().enumerate().skip(1) {
            let Some(b) = self.slots[i as usize].body.as_mut() else {
                continue;
            };
            let v = sc.velocities[k];
            b.position += v.dp;
            if v.dtheta != Vec3::ZERO {
                b.orientation = b.orientation.integrate(v.dtheta, Fx::ONE);
                sc.rotations[i as usize] = Mat3::from_quat(b.orientation);
            }
            if b.kind == BodyKind::Dynamic {
                b.linear_velocity = v.linear;
                b.angular_velocity = v.angular;
            }
        }
    }

    fn update_sleep(&mut self) {
        // Containment first: a body out of range leaves the simulation.
        let bounds = self.settings.bounds;
        for i in 0..self.slots.len() {
            let slot = &mut self.slots[i];
            let generation = slot.generation;
            let Some(b) = slot.body.as_mut() else {
                continue;
            };
            if b.kind == BodyKind::Static || b.contained {
                continue;
            }
            let p = b.position.abs();
            if p.x > bounds || p.y > bounds || p.z > bounds {
                b.contained = true;
                b.awake = false;
                b.linear_velocity = Vec3::ZERO;
                b.angular_velocity = Vec3::ZERO;
                self.events.push(Event::BodyContained(BodyHandle {
                    index: i as u32,
                    generation,
                }));
            }
        }
        if self.settings.sleeping {
            island::update(self);
        }
    }
}

/// The handle of a live slot.
pub(crate) fn handle_of(slots: &[Slot], i: u32) -> BodyHandle {
    BodyHandle {
        index: i,
        generation: slots.get(i as usize).map_or(0, |s| s.generation),
    }
}

fn normalize_or_identity(q: Quat) -> Quat {
    if q.length().is_zero() {
        Quat::IDENTITY
    } else {
        q.normalize()
    }
}
