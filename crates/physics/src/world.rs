//! The world: the storage of bodies and contacts, and the API a game uses to
//! create, edit, wake and read them.
//!
//! [`World`] owns the simulated state (slots of bodies, the free list, the
//! contact cache, the frame counter) and the per-step caches derived from it
//! (`scratch::Scratch`). Advancing it one step is the job of the
//! `pipeline` module ([`World::step`]); this file never simulates.
//!
//! Invariants: bodies live in slots addressed by generation-checked
//! [`BodyHandle`]s and are processed in slot order; a freed slot is reused
//! last-in first-out; every edit that can change what a body touches wakes
//! its island. The state is exactly what
//! [`World::encode`](crate::World::encode) writes; everything else here is a
//! cache derived from it.

use lockstep_fx::{Fx, Mat3, Quat, Vec3};

use crate::body::{Body, BodyBuilder, BodyHandle, BodyKind};
use crate::contact::{Contact, ContactInfo, Event};
use crate::query_index::{self, QueryIndex};
use crate::scratch::Scratch;
use crate::settings::WorldSettings;
use crate::shape::Shape;
use crate::solver::SolverPath;
use std::sync::{Mutex, OnceLock, PoisonError};

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
    /// Threads a step may use (not state: any count gives the same bits).
    pub(crate) threads: usize,
    /// Which code solves the passes (not state: every path gives the same
    /// bits).
    pub(crate) solver_path: SolverPath,
    /// Whether the last step found nothing to move and nothing has changed
    /// since (a cache of the state: stepping such a world only counts the
    /// frame).
    pub(crate) settled: bool,
    /// The index of `query_aabb`, built on demand (a cache of the state).
    pub(crate) queries: OnceLock<QueryIndex>,
    /// The allocations of the last index dropped, for the next build.
    pub(crate) query_buffers: Mutex<query_index::Buffers>,
    pub(crate) scratch: Scratch,
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
            threads: 1,
            solver_path: SolverPath::default_for_new_worlds(),
            settled: false,
            queries: OnceLock::new(),
            query_buffers: Mutex::default(),
            scratch: Scratch::default(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &WorldSettings {
        &self.settings
    }

    /// Threads a step may use (default 1).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Lets a step use up to `threads` threads (at least 1). The bodies are
    /// split by islands, which never share a body: every thread count gives
    /// the same bits, so this is a machine setting, not part of the state,
    /// and peers may choose differently. Steps with little to solve use one
    /// thread whatever this says, and so does every step on a target that
    /// cannot start a thread (wasm32 without atomics: a browser tab).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
            1
        } else {
            threads.max(1)
        };
    }

    /// Which code solves the contact passes (a new world takes
    /// [`SolverPath::default_for_new_worlds`]: the fastest this machine can
    /// run, unless the program chose another).
    pub fn solver_path(&self) -> SolverPath {
        self.solver_path
    }

    /// Solves the contact passes with `path`, if this machine can run it
    /// (returns whether it did). Every path gives the same bits, so, like
    /// the thread count, this is a machine setting, not part of the state.
    pub fn set_solver_path(&mut self, path: SolverPath) -> bool {
        let ok = path.is_available();
        if ok {
            self.solver_path = path;
        }
        ok
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
            let inv_inertia = if b.lock_rotation {
                Vec3::ZERO
            } else {
                Vec3::new(inv(mp.inertia.x), inv(mp.inertia.y), inv(mp.inertia.z))
            };
            (inv(mp.mass), inv_inertia)
        } else {
            (Fx::ZERO, Vec3::ZERO)
        };
        let moving = b.kind != BodyKind::Static;
        let orientation = normalize_or_identity(b.orientation);
        let mut body = Body {
            kind: b.kind,
            shape: b.shape,
            position: b.position,
            orientation,
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
            arm_orientation: orientation,
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
            height_locked: b.lock_height && b.kind == BodyKind::Dynamic,
        };
        body.linear_velocity = body.in_plane(body.linear_velocity);
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
        self.remove_bodies(&[h]) == 1
    }

    /// Removes several bodies at once, in one pass over the contacts
    /// instead of one per body; returns how many were alive. The world is
    /// left as [`World::remove_body`] on each in turn would leave it, except
    /// that the `ContactEnded` events come in contact order.
    pub fn remove_bodies(&mut self, handles: &[BodyHandle]) -> usize {
        let mut gone: Vec<u32> = Vec::with_capacity(handles.len());
        for &h in handles {
            if self.body(h).is_none() {
                continue;
            }
            let i = h.index;
            self.wake_island_of(i);
            self.slots[i as usize].body = None;
            self.free.push(i);
            gone.push(i);
        }
        if gone.is_empty() {
            return 0;
        }
        let removed = gone.len();
        let mut is_gone = vec![false; self.slots.len()];
        for &i in &gone {
            is_gone[i as usize] = true;
        }
        let slots = &self.slots;
        let events = &mut self.events;
        self.contacts.retain(|c| {
            let ended = is_gone[c.a as usize] || is_gone[c.b as usize];
            if ended && c.manifold.count > 0 {
                events.push(Event::ContactEnded {
                    a: handle_of(slots, c.a),
                    b: handle_of(slots, c.b),
                });
            }
            !ended
        });
        // The events above name the bodies by the handles they had.
        for &i in &gone {
            let slot = &mut self.slots[i as usize];
            slot.generation = slot.generation.wrapping_add(1);
        }
        self.forget_queries();
        self.settled = false;
        removed
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

    /// Sets a dynamic or kinematic body's linear velocity (and wakes it); a
    /// body locked in height takes only its x and z.
    pub fn set_linear_velocity(&mut self, h: BodyHandle, v: Vec3) {
        self.edit(h, true, |b| b.linear_velocity = b.in_plane(v));
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
            b.linear_velocity += b.in_plane(impulse * b.inv_mass);
            let inv_inertia = rotation.rotate_diagonal(b.inv_inertia);
            b.angular_velocity += inv_inertia.mul_vec3((point - b.position).cross(impulse));
        });
    }

    /// Teleports a body (and wakes it and what touches it).
    pub fn set_pose(&mut self, h: BodyHandle, position: Vec3, orientation: Quat) {
        let Some(b) = self.body_mut(h) else { return };
        b.position = position;
        b.orientation = normalize_or_identity(orientation);
        b.arm_orientation = b.orientation;
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
            self.settled = false;
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
                self.settled = false;
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
            self.wake_islands(&[island], |_| {});
        } else {
            // Awake already: an edit restarts its count towards sleep.
            b.still_frames = 0;
        }
    }

    /// Wakes the sleeping bodies whose island id is in `islands` (sorted),
    /// and tells `woken` the slot of each.
    pub(crate) fn wake_islands(&mut self, islands: &[u32], mut woken: impl FnMut(usize)) {
        if islands.is_empty() {
            return;
        }
        for (i, s) in self.slots.iter_mut().enumerate() {
            if let Some(b) = s.body.as_mut() {
                if b.kind == BodyKind::Dynamic
                    && !b.awake
                    && !b.contained
                    && islands.binary_search(&s.island).is_ok()
                {
                    b.awake = true;
                    b.still_frames = 0;
                    woken(i);
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
        self.forget_queries();
        self.settled = false;
        let rotations = &mut self.scratch.rotations;
        if rotations.len() < self.slots.len() {
            rotations.resize(self.slots.len(), Mat3::IDENTITY);
        }
        if let Some(b) = &self.slots[index as usize].body {
            rotations[index as usize] = Mat3::from_quat(b.orientation);
        }
    }

    /// Drops the query index: bounds, groups or containment may change.
    pub(crate) fn forget_queries(&mut self) {
        if let Some(index) = self.queries.take() {
            *self
                .query_buffers
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner) = index.into_buffers();
        }
    }

    /// Recomputes every derived cache (after a load).
    pub(crate) fn refresh_all(&mut self) {
        self.scratch = Scratch::default();
        for i in 0..self.slots.len() as u32 {
            self.refresh_derived(i);
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
