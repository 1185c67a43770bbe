//! The solve of one step: the solver's batches built from the awake bodies
//! and this step's manifolds, solved (on several threads when the world
//! has them and the step has islands to share), and the write-back of
//! impulses (for warm starting) and of the new poses and velocities.
//!
//! A *mover* is a body the solver moves: an awake dynamic body or a moving
//! kinematic one; every other body is immovable. The solve order is this
//! step's manifolds that involve a moving dynamic body, shuffled by
//! `Rng::for_frame(seed, frame)`; those against an immovable body become
//! anchored constraints (normal flipped when the immovable body is B, so
//! that the moving one is always B), the others pairs that join their two
//! movers' islands. Islands go to batches whole ([`partition`](crate::solver::partition)); a batch
//! keeps its constraints in the solve order, so every island sees the same
//! order whatever the number of batches, and the bits do not depend on the
//! thread count.
//!
//! When a step has threads, an island that carries most of its work (a
//! pyramid, or the pile that holds most of the cubes) goes *alone* into
//! the first batch ([`Deal`]), which is shared by *levels* ([`Levels`]):
//! its contacts are sorted by level, an order with the bits of the solve
//! order; whole levels are prepared in contiguous shares at once (each
//! constraint is built from its own contact and the bodies' state at the
//! start of the step, alone) and appended in order; then the passes run
//! level by level on as many threads as the levels are wide for
//! ([`Batch::level_threads`], [`Batch::step_levels`]) before the other
//! batches are solved, or, where that is one, on one thread beside them
//! ([`Batch::step`]).

use lockstep_fx::wide::wrapping::mat_vec;
use lockstep_fx::{Fx, Mat3, Rng, Vec3, fork_join};

use crate::body::{Body, BodyKind};
use crate::contact::Contact;
use crate::scratch::Solving;
use crate::settings::WorldSettings;
use crate::solver::{
    self, Batch, BodyInfo, Constraints, Displacement, LinearPoint, ManifoldInput, Place, Point,
    PointInput, Prepared, Softness, SolverPath, StepParams, Velocity, places,
};
#[cfg(doc)]
use crate::solver::{Levels, partition::Deal};
use crate::world::{Slot, World};

/// Marks a body the solver does not move.
const IMMOVABLE: u32 = u32::MAX;

/// Below this many constraints a step is solved on one thread: the share
/// of a small step is not worth handing over (64 replayed the fixtures no
/// faster on two threads).
const PARALLEL_MIN: usize = 256;

/// What every batch reads while it is built and solved.
struct Shared<'a> {
    slots: &'a [Slot],
    contacts: &'a [Contact],
    rotations: &'a [Mat3],
    /// Each slot's index within its batch (`IMMOVABLE` for the others).
    local: &'a [u32],
    settings: &'a WorldSettings,
    /// Which code solves the passes (machine-local).
    path: SolverPath,
    params: StepParams,
    soft: Softness,
    anchored_soft: Softness,
}

impl World {
    pub(crate) fn solve(&mut self) {
        let settings = self.settings;
        let substeps = settings.substeps.max(1);
        let rate = i64::from(settings.tick_rate.max(1)) * i64::from(substeps);
        let hs = Fx::from_ratio(1, rate);
        let inv_hs = Fx::from_int(rate.min(i64::from(i32::MAX)) as i32);
        let sc = &mut self.scratch;

        // Movers, in slot order.
        sc.movers.clear();
        sc.mover_index.clear();
        sc.mover_index.resize(self.slots.len(), IMMOVABLE);
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.body.as_ref().is_some_and(World::is_active) {
                sc.mover_index[i] = sc.movers.len() as u32;
                sc.movers.push(i as u32);
            }
        }
        // This step's constraints, in solve order.
        sc.order.clear();
        for (ci, c) in self.contacts.iter().enumerate() {
            let (Some(ba), Some(bb)) = (
                self.slots[c.a as usize].body.as_ref(),
                self.slots[c.b as usize].body.as_ref(),
            ) else {
                continue;
            };
            if c.fresh && (World::is_moving_dynamic(ba) || World::is_moving_dynamic(bb)) {
                sc.order.push(Solving {
                    contact: ci as u32,
                    a: sc.mover_index[c.a as usize],
                    b: sc.mover_index[c.b as usize],
                });
            }
        }
        if settings.shuffle {
            Rng::for_frame(settings.seed, self.frame).shuffle(&mut sc.order);
        }

        // Islands and batches: every body and constraint is a unit of work.
        let threads = if sc.order.len() >= PARALLEL_MIN {
            self.threads.max(1)
        } else {
            1
        };
        sc.islands.reset(sc.movers.len());
        sc.work.clear();
        sc.work.resize(sc.movers.len(), 1);
        for &Solving { a: ma, b: mb, .. } in &sc.order {
            match (ma, mb) {
                (IMMOVABLE, m) | (m, IMMOVABLE) => sc.work[m as usize] += 1,
                _ => {
                    sc.islands.join(ma, mb);
                    sc.work[ma as usize] += 1;
                }
            }
        }
        let deal = sc
            .islands
            .batches(&sc.work, threads, PARALLEL_MIN as u64, &mut sc.batch_of);
        let batches = deal.batches;
        if sc.batches.len() < batches {
            sc.batches.resize_with(batches, Batch::default);
        }
        for b in &mut sc.batches {
            b.clear();
        }
        sc.local.clear();
        sc.local.resize(self.slots.len(), IMMOVABLE);
        for (m, &slot) in sc.movers.iter().enumerate() {
            let batch = &mut sc.batches[sc.batch_of[m] as usize];
            sc.local[slot as usize] = batch.bodies.len() as u32;
            batch.bodies.push(slot);
        }
        for &Solving {
            contact: ci,
            a: ma,
            b: mb,
        } in &sc.order
        {
            let mover = if ma == IMMOVABLE { mb } else { ma };
            let batch = &mut sc.batches[sc.batch_of[mover as usize] as usize];
            if ma == IMMOVABLE || mb == IMMOVABLE {
                batch.anchored_contacts.push((ci, mb == IMMOVABLE));
            } else {
                batch.pair_contacts.push(ci);
            }
        }

        // Stiffness is capped at a quarter of the substep rate (Box2D v3);
        // contacts with an immovable body are twice as stiff.
        let hertz = settings.contact_hertz.min(inv_hs.scale_pow2(-2));
        let shared = Shared {
            slots: &self.slots,
            contacts: &self.contacts,
            rotations: &sc.rotations,
            local: &sc.local,
            settings: &self.settings,
            path: self.solver_path,
            params: StepParams {
                substeps,
                iterations: settings.iterations,
                relax_iterations: settings.relax_iterations,
                h: hs,
                inv_h: inv_hs,
                max_push: settings.max_push_velocity,
                restitution_threshold: settings.restitution_threshold,
            },
            soft: Softness::new(hertz, settings.contact_damping_ratio, hs),
            anchored_soft: Softness::new(hertz.mul_int(2), settings.contact_damping_ratio, hs),
        };
        // An island alone is built on every thread, and its passes are
        // shared by levels where they can be, before the other batches are
        // solved at once, one thread each. Where they cannot, its passes
        // take one thread and the other batches share the others.
        let (alone, rest) = sc.batches[..batches].split_at_mut(usize::from(deal.alone));
        let mut jobs: Vec<Vec<(bool, &mut Batch)>> = Vec::with_capacity(threads);
        if let Some(b) = alone.first_mut() {
            build_batch(&shared, b, threads);
            let level_threads = b.level_threads(threads);
            if level_threads > 1 {
                b.step_levels(&shared.params, level_threads);
            } else {
                jobs.push(vec![(true, b)]);
            }
        }
        let per_job = rest.len().div_ceil(threads - jobs.len()).max(1);
        jobs.extend(
            rest.chunks_mut(per_job)
                .map(|c| c.iter_mut().map(|b| (false, b)).collect()),
        );
        fork_join(jobs, |job| {
            for (built, b) in job {
                if !built {
                    build_batch(&shared, b, 1);
                }
                b.step(&shared.params, shared.path);
            }
        });

        // Write back, batch by batch: impulses for warm starting, then the
        // bodies' displacements and final velocities.
        for b in &sc.batches[..batches] {
            let anchored = b.anchored_contacts.iter().copied();
            write_impulses(&mut self.contacts, &b.anchored, &b.points, anchored);
            let pairs = b.pair_contacts.iter().map(|&c| (c, false));
            write_impulses(&mut self.contacts, &b.pairs, &b.points, pairs);
            for (k, &i) in b.bodies.iter().enumerate() {
                let Some(body) = self.slots[i as usize].body.as_mut() else {
                    continue;
                };
                let (v, d) = (b.velocities[k], b.displacements[k]);
                // A body locked in height drops whatever vertical motion a
                // contact out of its plane gave it within the step.
                body.position += body.in_plane(d.linear);
                if d.angular != Vec3::ZERO {
                    body.orientation = body.orientation.integrate(d.angular, Fx::ONE);
                    sc.rotations[i as usize] = Mat3::from_quat(body.orientation);
                }
                body.follow_arms(settings.arm_turn);
                if body.kind == BodyKind::Dynamic {
                    body.linear_velocity = body.in_plane(v.linear);
                    body.angular_velocity = v.angular;
                }
            }
        }
    }
}

/// Builds one batch's solver bodies and constraints, on up to `threads`
/// threads: with more than one, its contacts are sorted by level and
/// whole levels are prepared at once.
fn build_batch(s: &Shared<'_>, b: &mut Batch, threads: usize) {
    let settings = s.settings;
    let h = s.params.h;
    for &i in &b.bodies {
        let body = live(s.slots, i);
        b.velocities.push(Velocity {
            linear: body.linear_velocity,
            angular: body.angular_velocity,
        });
        b.displacements.push(Displacement::default());
        let dynamic = body.kind == BodyKind::Dynamic;
        b.gravity.push(if dynamic {
            body.in_plane(settings.gravity * (body.gravity_scale * h))
        } else {
            Vec3::ZERO
        });
        // A body that cannot turn (locked, kinematic) has zero inertia,
        // which rotates to zero, and takes its arms as they are.
        let rotation = &s.rotations[i as usize];
        b.inertia.push(if body.can_turn() {
            rotation.rotate_diagonal(body.inv_inertia)
        } else {
            Mat3::ZERO
        });
        b.arm_frames.push(body.arm_frame(rotation));
    }
    let threads = threads.max(1);
    if threads > 1 {
        // Sorted by level, so that the passes can be shared too.
        let (contacts, local) = (s.contacts, s.local);
        b.levels.sort(
            b.bodies.len(),
            &mut b.anchored_contacts,
            &mut b.pair_contacts,
            |(ci, flipped)| {
                let c = &contacts[ci as usize];
                local[if flipped { c.a } else { c.b } as usize]
            },
            |ci| {
                let c = &contacts[ci as usize];
                (local[c.a as usize], local[c.b as usize])
            },
        );
    }
    let bodies = Bodies {
        velocities: &b.velocities,
        inertia: &b.inertia,
        arm_frames: &b.arm_frames,
    };
    let (anchored, pairs) = (&b.anchored_contacts, &b.pair_contacts);
    if threads == 1 {
        let (a, p, points) = (&mut b.anchored, &mut b.pairs, &mut b.points);
        prepare_contacts(s, &bodies, anchored, pairs, a, p, points);
        return;
    }
    // Whole levels in contiguous shares, prepared at once and appended in
    // order, each level's anchored constraints before its pairs: the
    // constraints of preparing them in turn, in level order.
    if b.shares.len() < threads {
        b.shares.resize_with(threads, Prepared::default);
    }
    let levels = &b.levels;
    let share_of = |level: usize| {
        let (a, p) = levels.contacts(level);
        (a.start + p.start) * threads / levels.len().max(1)
    };
    fork_join(
        b.shares[..threads].iter_mut().enumerate().collect(),
        |(k, share)| {
            share.clear();
            for level in (0..levels.count()).filter(|&l| share_of(l) == k) {
                let (a, p) = levels.contacts(level);
                let Prepared {
                    anchored: into_anchored,
                    pairs: into_pairs,
                    points,
                } = share;
                let (a, p) = (&anchored[a], &pairs[p]);
                prepare_contacts(s, &bodies, a, p, into_anchored, into_pairs, points);
            }
        },
    );
    let mut taken = core::mem::take(&mut b.shares);
    for share in &mut taken[..threads] {
        b.append(share);
    }
    b.shares = taken;
}

/// What preparing a batch's constraints reads of its bodies, by batch
/// index.
struct Bodies<'a> {
    velocities: &'a [Velocity],
    inertia: &'a [Mat3],
    arm_frames: &'a [Option<Mat3>],
}

/// Prepares a batch's anchored contacts, then its pair contacts (contact
/// indices in solve order), appending their constraints to `anchored` and
/// `pairs`, and the general constraints' points to `points`.
fn prepare_contacts(
    s: &Shared<'_>,
    bodies: &Bodies<'_>,
    anchored_contacts: &[(u32, bool)],
    pair_contacts: &[u32],
    anchored: &mut Constraints,
    pairs: &mut Constraints,
    points: &mut Vec<Point>,
) {
    let info = |i: u32, body: &Body| {
        let index = s.local[i as usize];
        let dynamic = index != IMMOVABLE && body.kind == BodyKind::Dynamic;
        BodyInfo {
            index,
            inv_mass: if dynamic { body.inv_mass } else { Fx::ZERO },
            inv_inertia: if dynamic {
                bodies.inertia[index as usize]
            } else {
                Mat3::ZERO
            },
        }
    };
    let mut inputs = [PointInput {
        position: Vec3::ZERO,
        separation: Fx::ZERO,
        impulse: Fx::ZERO,
        arm_a: Vec3::ZERO,
        arm_b: Vec3::ZERO,
    }; 4];
    // A body's lever arms, in its arm orientation when it has one (only
    // movers have: an immovable body's arm meets zero inverse inertia).
    let frames = bodies.arm_frames;
    let arm = |i: u32, body: &Body, point: Vec3| {
        let offset = point - body.position;
        match s.local[i as usize] {
            IMMOVABLE => offset,
            // A rotation times an arm within a body's size: the solver's
            // wrapping products cannot overflow here.
            k => frames[k as usize].map_or(offset, |f| mat_vec(&f, offset)),
        }
    };
    for &(ci, flip) in anchored_contacts {
        let c = &s.contacts[ci as usize];
        let (ba, bb) = (live(s.slots, c.a), live(s.slots, c.b));
        let moving = if flip { info(c.a, ba) } else { info(c.b, bb) };
        let soft = s.anchored_soft;
        if let Some(p) =
            linear_point::<false>(c, ba, bb, flip, &moving, &moving, soft, bodies.velocities)
        {
            anchored.push_linear(p);
            continue;
        }
        let m = gather(c, ba, bb, flip, soft, &arm, &mut inputs);
        let k = solver::prepare::<false>(&moving, &moving, &m, bodies.velocities, points);
        anchored.push_general(k);
    }
    for &ci in pair_contacts {
        let c = &s.contacts[ci as usize];
        let (ba, bb) = (live(s.slots, c.a), live(s.slots, c.b));
        let (ia, ib) = (info(c.a, ba), info(c.b, bb));
        if let Some(p) = linear_point::<true>(c, ba, bb, false, &ia, &ib, s.soft, bodies.velocities)
        {
            pairs.push_linear(p);
            continue;
        }
        let m = gather(c, ba, bb, false, s.soft, &arm, &mut inputs);
        let k = solver::prepare::<true>(&ia, &ib, &m, bodies.velocities, points);
        pairs.push_general(k);
    }
}

/// The contact as a linear point (seen from the other side when `flip`),
/// if it is one ([`solver::is_linear`]).
#[allow(clippy::too_many_arguments)]
fn linear_point<const TWO: bool>(
    c: &Contact,
    ba: &Body,
    bb: &Body,
    flip: bool,
    ia: &BodyInfo,
    ib: &BodyInfo,
    soft: Softness,
    velocities: &[Velocity],
) -> Option<LinearPoint> {
    let (count, carried) = (c.manifold.count, c.friction_impulse);
    if count != 1 {
        return None;
    }
    let friction = combined_friction(ba, bb);
    let restitution = ba.restitution.max(bb.restitution);
    let linear =
        solver::is_linear::<TWO>(ia, ib, count, friction, carried, restitution, velocities);
    linear.then(|| {
        let normal = if flip {
            -c.manifold.normal
        } else {
            c.manifold.normal
        };
        let (separation, impulse) = (c.manifold.points()[0].separation, c.normal_impulses[0]);
        LinearPoint::new::<TWO>(ia, ib, normal, separation, impulse, soft)
    })
}

/// Writes one kind's impulses back to `contacts`, for warm starting the
/// next step; `order` gives the contact index of each constraint in solve
/// order, and whether its normal was flipped.
fn write_impulses(
    contacts: &mut [Contact],
    constraints: &Constraints,
    points: &[Point],
    mut order: impl Iterator<Item = (u32, bool)>,
) {
    for place in places(&constraints.order) {
        match place {
            Place::General(i) => {
                let (k, Some((ci, flip))) = (&constraints.general[i], order.next()) else {
                    return;
                };
                let contact = &mut contacts[ci as usize];
                for (imp, p) in contact.normal_impulses.iter_mut().zip(k.points(points)) {
                    *imp = k.normal_impulse(p);
                }
                let (friction, twist) = (k.friction_impulse(), k.twist());
                contact.friction_impulse = if flip { -friction } else { friction };
                contact.twist_impulse = if flip { -twist } else { twist };
            }
            Place::Linear(run) => {
                for (p, (ci, _)) in constraints.linear[run].iter().zip(order.by_ref()) {
                    // A linear point has one point and carries no
                    // friction or twist impulse.
                    let contact = &mut contacts[ci as usize];
                    contact.normal_impulses[0] = p.impulse;
                    contact.friction_impulse = Vec3::ZERO;
                    contact.twist_impulse = Fx::ZERO;
                }
            }
        }
    }
}

/// The combined friction coefficient of two bodies' contacts.
fn combined_friction(ba: &Body, bb: &Body) -> Fx {
    if ba.friction == bb.friction {
        ba.friction
    } else {
        (ba.friction * bb.friction).sqrt()
    }
}

/// A contact as the solver's input (its points written into `points`),
/// seen from the other side when `flip`.
fn gather<'p>(
    c: &Contact,
    ba: &Body,
    bb: &Body,
    flip: bool,
    soft: Softness,
    arm: &impl Fn(u32, &Body, Vec3) -> Vec3,
    points: &'p mut [PointInput; 4],
) -> ManifoldInput<'p> {
    for (k, p) in c.manifold.points().iter().enumerate() {
        let (arm_a, arm_b) = (arm(c.a, ba, p.position), arm(c.b, bb, p.position));
        let (arm_a, arm_b) = if flip { (arm_b, arm_a) } else { (arm_a, arm_b) };
        points[k] = PointInput {
            position: p.position,
            separation: p.separation,
            impulse: c.normal_impulses[k],
            arm_a,
            arm_b,
        };
    }
    let friction = combined_friction(ba, bb);
    let sign = |v: Vec3| if flip { -v } else { v };
    ManifoldInput {
        normal: sign(c.manifold.normal),
        points: &points[..usize::from(c.manifold.count)],
        friction_impulse: sign(c.friction_impulse),
        twist_impulse: if flip {
            -c.twist_impulse
        } else {
            c.twist_impulse
        },
        friction,
        restitution: ba.restitution.max(bb.restitution),
        soft,
    }
}

fn live(slots: &[Slot], i: u32) -> &Body {
    slots[i as usize]
        .body
        .as_ref()
        .expect("solver bodies are live")
}
