//! The solve of one step: solver bodies and contact constraints built from
//! the awake bodies and this step's manifolds, the substep loop, and the
//! write-back of impulses (for warm starting) and of the new poses and
//! velocities.

use lockstep_fx::{Fx, Mat3, Rng, Vec3};

use crate::body::{Body, BodyKind};
use crate::solver::{self, BodyInfo, PointInput, Softness, SolverBody};
use crate::world::World;

impl World {
    pub(crate) fn solve(&mut self) {
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
}
