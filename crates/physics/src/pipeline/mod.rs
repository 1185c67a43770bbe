//! The step pipeline: what [`World::step`] does to advance one frame, in
//! order (the split follows rapier's `physics_pipeline` and Box2D v3's
//! `b2World_Step`):
//! 1. integrate velocities of awake dynamic bodies (forces, damping; per
//!    body, in shares of a large world's slots on the world's threads);
//! 2. broadphase and narrowphase (`collide.rs`): the grid broadphase plus the
//!    half-space pairs, manifolds for every pair with a moving body, merged
//!    with last step's cache by feature id (warm starting), contact events;
//!    an island touched while asleep wakes and the step collides again
//!    (only what involves a woken body);
//! 3. solve (`solve.rs`): constraint order shuffled by
//!    `Rng::for_frame(seed, frame)`; per substep gravity, warm start, soft
//!    iterations, position integration and relaxation; then restitution;
//! 4. containment of bodies that left the valid range and their still
//!    frames counted (both per body, in shares of the slots on the world's
//!    threads), then sleeping by islands.
//!
//! Invariants: bodies are processed in slot order and pairs in `(a, b)`
//! order; nothing depends on allocation addresses, hash order, clocks or
//! threads; all arithmetic is `Fx`. [`Scratch`](crate::scratch::Scratch)
//! holds only caches derived from the state, never encoded.

mod collide;
mod solve;

use lockstep_fx::{Fx, Vec3, fork_join};

use crate::body::{Body, BodyHandle, BodyKind};
use crate::contact::Event;
use crate::island;
use crate::world::World;

/// Below this many slots the per-body passes of a step (the proxies,
/// containment and still counts) run on one thread: a shorter share costs
/// less than handing it to a helper (on two threads, 256 made both fixture
/// replays slower).
const PARALLEL_SLOTS: usize = 2048;

impl World {
    /// Advances the world by one time step.
    pub fn step(&mut self) {
        self.events.clear();
        if self.settled {
            // Nothing moved last step and nothing changed since: the step
            // below would only count the frame.
            self.frame = self.frame.wrapping_add(1);
            return;
        }
        self.forget_queries();
        let h = self.settings.dt();
        self.integrate_velocities(h);
        if !self
            .slots
            .iter()
            .any(|s| s.body.as_ref().is_some_and(World::is_active))
        {
            // Nothing moves: no pairs to find and nothing to solve; the cache
            // merge alone keeps the resting contacts (and ends any with a
            // contained body). Afterwards every contact is a resting one
            // between bodies that stay put, so until something changes the
            // next steps would do nothing at all.
            self.scratch.pairs.clear();
            self.collide(h);
            self.frame = self.frame.wrapping_add(1);
            self.settled = true;
            return;
        }
        self.find_pairs(h);
        self.collide(h);
        if !self.scratch.wake.is_empty() {
            // Something moving touched a sleeping island: wake it now and
            // collide again from last step's cache (which `collide` left in
            // `scratch.new_contacts`), so the island takes part in this very
            // step (an island treated as immovable for one step would stop a
            // fast body dead). The first collision's pairs, contacts and
            // events are kept for the second, which redoes only what
            // involves a woken body: the pairs they add, found without
            // searching every body again (`find_woken_pairs`), and the pairs
            // and cached contacts with a woken body (`collide_woken`).
            let sc = &mut self.scratch;
            let mut wake = std::mem::take(&mut sc.wake);
            wake.sort_unstable();
            wake.dedup();
            let mut woken = std::mem::take(&mut sc.woken);
            woken.clear();
            woken.resize(self.slots.len(), false);
            self.wake_islands(&wake, |i| woken[i] = true);
            let sc = &mut self.scratch;
            sc.wake = wake;
            sc.woken = woken;
            std::mem::swap(&mut self.contacts, &mut sc.new_contacts);
            std::mem::swap(&mut sc.new_contacts, &mut sc.first_contacts);
            std::mem::swap(&mut sc.pairs, &mut sc.first_pairs);
            std::mem::swap(&mut self.events, &mut sc.first_events);
            if self.find_woken_pairs(h) {
                // Every test step checks that the pairs found from the
                // woken bodies are the ones a whole search finds.
                #[cfg(debug_assertions)]
                {
                    let found = self.scratch.pairs.clone();
                    self.find_pairs(h);
                    assert_eq!(found, self.scratch.pairs, "the woken bodies' pairs");
                }
            } else {
                self.find_pairs(h);
            }
            #[cfg(debug_assertions)]
            let (cache, pairs) = (self.contacts.clone(), self.scratch.pairs.clone());
            self.collide_woken(h);
            // And that the contacts and events it keeps from the first
            // collision are those a whole collision makes.
            #[cfg(debug_assertions)]
            {
                let kept = (self.contacts.clone(), self.events.clone());
                (self.contacts, self.scratch.pairs) = (cache, pairs);
                self.events.clear();
                self.collide(h);
                assert_eq!(kept.0, self.contacts, "the contacts after a waking");
                assert_eq!(kept.1, self.events, "the events after a waking");
            }
        }
        self.solve();
        self.update_sleep();
        self.frame = self.frame.wrapping_add(1);
    }

    /// Forces, torques and damping over the whole step (gravity is applied
    /// per substep by the solver). Each body's new velocities are a pure
    /// function of the body, so a large world's slots are shared between
    /// the world's threads ([`World::slot_share`]).
    pub(crate) fn integrate_velocities(&mut self, h: Fx) {
        let share = self.slot_share();
        let s = &self.settings;
        let max_v2 = s.max_linear_speed * s.max_linear_speed;
        let max_w2 = s.max_angular_speed * s.max_angular_speed;
        let n = self.slots.len();
        let jobs: Vec<_> = self
            .slots
            .chunks_mut(share)
            .zip(self.scratch.rotations[..n].chunks(share))
            .collect();
        fork_join(jobs, |(slots, rotations)| {
            // `1 / (1 + h·c)` for the last damping rate met: bodies mostly
            // share a few rates, so most skip the division (same result).
            let mut last = (Fx::ZERO, Fx::ONE);
            let mut keep = |rate: Fx| {
                if rate != last.0 {
                    last = (rate, Fx::ONE / (Fx::ONE + h * rate));
                }
                last.1
            };
            for (slot, rotation) in slots.iter_mut().zip(rotations) {
                let Some(b) = slot.body.as_mut() else {
                    continue;
                };
                if b.kind != BodyKind::Dynamic || !b.awake || b.contained {
                    continue;
                }
                // No force adds an exact zero, and a zero `w` is under any
                // limit: both skipped, with the same bits.
                let mut v = b.linear_velocity;
                if b.force != Vec3::ZERO {
                    v += b.in_plane(b.force * (b.inv_mass * h));
                }
                let mut w = b.angular_velocity;
                if b.torque != Vec3::ZERO {
                    let inv_inertia = rotation.rotate_diagonal(b.inv_inertia);
                    w += inv_inertia.mul_vec3(b.torque) * h;
                }
                if !b.linear_damping.is_zero() {
                    v *= keep(b.linear_damping);
                }
                if !b.angular_damping.is_zero() && w != Vec3::ZERO {
                    w *= keep(b.angular_damping);
                }
                if v.length_squared() > max_v2 {
                    v = v.normalize_or_zero() * s.max_linear_speed;
                }
                if w != Vec3::ZERO && w.length_squared() > max_w2 {
                    w = w.normalize_or_zero() * s.max_angular_speed;
                }
                b.linear_velocity = v;
                b.angular_velocity = w;
                b.force = Vec3::ZERO;
                b.torque = Vec3::ZERO;
            }
        });
    }

    /// Whether a body moves this step (awake dynamic, or kinematic with a
    /// velocity).
    pub(crate) fn is_active(b: &Body) -> bool {
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
    pub(crate) fn is_moving_dynamic(b: &Body) -> bool {
        b.kind == BodyKind::Dynamic && World::is_active(b)
    }

    /// How far a body's centre may travel this step (L1 bound). Turning is
    /// left out: adding it (`|ω|·reach`) widened the margins enough to make
    /// `cubes-1000`'s swaying towers touch, and sleep 60 frames later.
    pub(crate) fn sweep(b: &Body, h: Fx) -> Fx {
        if !World::is_active(b) {
            return Fx::ZERO;
        }
        let v = b.linear_velocity.abs();
        ((v.x + v.y + v.z) * h).min(Fx::from_int(8))
    }

    /// The threads a per-body pass is shared between: one below
    /// [`PARALLEL_SLOTS`], else the world's. Encoding the state in parts
    /// follows it too (`state.rs`): the last pass of such a world's step
    /// has just used the pool, so its helpers are awake to take the parts.
    pub(crate) fn pass_threads(&self) -> usize {
        if self.slots.len() >= PARALLEL_SLOTS {
            self.threads.max(1)
        } else {
            1
        }
    }

    /// How many slots each share of a per-body pass takes: all of them
    /// below [`PARALLEL_SLOTS`], else an even share per thread (never 0).
    fn slot_share(&self) -> usize {
        self.slots.len().div_ceil(self.pass_threads()).max(1)
    }

    /// Containment of the bodies that left the valid range, then the still
    /// frames counted and still islands put to sleep. Both first parts are
    /// a pure function of each body, so a large world's slots are shared
    /// between the world's threads: each share contains and counts its own
    /// bodies and lists its contained ones in slot order, and the lists are
    /// joined in share order, so the events come in slot order on any
    /// number of threads.
    pub(crate) fn update_sleep(&mut self) {
        let share = self.slot_share();
        let settings = &self.settings;
        let speed2 = settings.sleep_speed * settings.sleep_speed;
        let jobs: Vec<_> = self.slots.chunks_mut(share).enumerate().collect();
        let counted = fork_join(jobs, |(k, slots)| {
            let mut contained = Vec::new();
            let mut found = island::Stillness::default();
            for (i, slot) in (k * share..).zip(slots) {
                let generation = slot.generation;
                let Some(b) = slot.body.as_mut() else {
                    continue;
                };
                if contain(b, settings.bounds) {
                    contained.push(BodyHandle {
                        index: i as u32,
                        generation,
                    });
                }
                if settings.sleeping {
                    found = found.or(island::count_still(b, speed2, settings.sleep_frames));
                }
            }
            (contained, found)
        });
        let mut found = island::Stillness::default();
        for (contained, share_found) in counted {
            self.events
                .extend(contained.into_iter().map(Event::BodyContained));
            found = found.or(share_found);
        }
        if self.settings.sleeping {
            island::update(self, found);
        }
    }
}

/// Takes `b` out of the simulation if it left the valid range (`bounds`
/// from the origin on some axis): it stops, sleeps and collides no more.
/// Returns whether it was contained now.
fn contain(b: &mut Body, bounds: Fx) -> bool {
    if b.kind == BodyKind::Static || b.contained {
        return false;
    }
    let p = b.position.abs();
    if p.x > bounds || p.y > bounds || p.z > bounds {
        b.contained = true;
        b.awake = false;
        b.linear_velocity = Vec3::ZERO;
        b.angular_velocity = Vec3::ZERO;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::BodyBuilder;
    use crate::settings::WorldSettings;
    use crate::shape::Shape;

    /// A world of more slots than one thread takes: balls resting apart on
    /// the ground (they fall asleep island by island), seven thrown out of
    /// range (contained, each with an event), a row of balls touching a
    /// moving kinematic paddle (it keeps them awake), balls spinning with
    /// damping, pushed and twisted every frame, or launched faster than the
    /// speed limit, and holes. Every thread count gives one thread's bytes
    /// and events, frame by frame, the contained events in slot order.
    #[test]
    fn per_body_passes_on_threads_are_those_of_one_thread() {
        let build = |threads: usize| {
            let settings = WorldSettings {
                sleep_frames: 4,
                ..WorldSettings::default()
            };
            let mut world = World::new(settings);
            world.set_threads(threads);
            world
                .add_body(BodyBuilder::fixed(Shape::HalfSpace))
                .unwrap();
            let ball = Shape::Sphere { radius: Fx::HALF };
            let mut handles = Vec::new();
            for i in 0..2_600 {
                let at = Vec3::new(
                    Fx::from_int(2 * (i % 50)),
                    Fx::HALF,
                    Fx::from_int(2 * (i / 50)),
                );
                let at = if i % 401 == 7 {
                    at * Fx::from_int(1 << 20)
                } else {
                    at
                };
                let body = BodyBuilder::dynamic(ball).position(at);
                let body = match i % 97 {
                    50 => body.linear_velocity(Vec3::new(Fx::ZERO, Fx::from_int(1_000), Fx::ZERO)),
                    _ if i % 9 == 2 => body
                        .damping(Fx::HALF, Fx::from_int(2))
                        .angular_velocity(Vec3::new(Fx::ZERO, Fx::from_int(3), Fx::ZERO)),
                    _ => body,
                };
                handles.push(world.add_body(body).unwrap());
            }
            for k in [4, 1_290, 2_400] {
                world.remove_body(handles[k]);
            }
            let paddle = BodyBuilder::kinematic(Shape::box_with_size(Vec3::new(
                Fx::ONE,
                Fx::ONE,
                Fx::from_int(100),
            )))
            // Touching the last ball of every row of 50.
            .position(Vec3::new(Fx::from_int(99), Fx::HALF, Fx::from_int(50)))
            .linear_velocity(Vec3::new(Fx::ZERO, Fx::ZERO, Fx::lit("0.25")));
            world.add_body(paddle).unwrap();
            let pushed: Vec<BodyHandle> = handles.into_iter().skip(6).step_by(13).collect();
            (world, pushed)
        };
        let mut worlds: Vec<(World, Vec<BodyHandle>)> =
            [1, 2, 3, 8].into_iter().map(build).collect();
        let mut contained = Vec::new();
        for frame in 0..12 {
            for (world, pushed) in &mut worlds {
                for &h in pushed.iter() {
                    world.apply_force(h, Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO));
                    world.apply_torque(h, Vec3::new(Fx::ZERO, Fx::lit("0.1"), Fx::ZERO));
                }
                world.step();
            }
            let worlds: Vec<&World> = worlds.iter().map(|(w, _)| w).collect();
            let (one, others) = worlds.split_first().expect("four worlds");
            for (world, threads) in others.iter().zip([2, 3, 8]) {
                assert_eq!(world.save(), one.save(), "frame {frame}, {threads} threads");
                assert_eq!(
                    world.events(),
                    one.events(),
                    "frame {frame}, {threads} threads"
                );
            }
            contained.extend(one.events().iter().filter_map(|e| match e {
                Event::BodyContained(h) => Some(h.index),
                _ => None,
            }));
        }
        assert_eq!(contained.len(), 7, "seven contained: {contained:?}");
        assert!(contained.is_sorted(), "in slot order: {contained:?}");
        let bodies = || worlds[0].0.slots.iter().filter_map(|s| s.body.as_ref());
        let asleep = bodies().filter(|b| !b.awake && !b.contained).count();
        assert!(asleep > 1_500, "resting balls fell asleep ({asleep})");
        let fastest = bodies()
            .map(|b| b.linear_velocity.length())
            .max()
            .expect("bodies");
        assert!(
            fastest > Fx::from_int(200) && fastest <= Fx::from_int(240),
            "launched balls held to the speed limit ({fastest:?})"
        );
        let spinning = bodies()
            .filter(|b| b.angular_velocity != Vec3::ZERO && b.awake)
            .count();
        assert!(spinning > 300, "spinning and twisted balls ({spinning})");
        let rolling = bodies()
            .filter(|b| b.kind == BodyKind::Dynamic && b.awake)
            .count();
        assert!(
            rolling >= 40,
            "balls touching the paddle or rolling stay awake ({rolling})"
        );
    }
}
