//! Queries game code asks of the world: ray casts and box overlaps.
//!
//! Both visit bodies in slot order and break ties by the lower slot index, so
//! every peer gets the same answer. They look at shapes as of the last step
//! (or the last edit) and never change the world.

use lockstep_fx::{Fx, Mat3, Vec3};

use crate::aabb::Aabb;
use crate::body::{Body, BodyHandle};
use crate::query_index::QueryIndex;
use crate::shape::Shape;
use crate::world::{World, handle_of};
use std::sync::PoisonError;

/// Where a ray first hit a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyHandle,
    /// Distance along the (normalised) ray direction.
    pub distance: Fx,
    /// World hit point.
    pub point: Vec3,
    /// Surface normal at the hit point.
    pub normal: Vec3,
}

impl World {
    /// The first body a ray from `origin` along `direction` hits within
    /// `max_distance`, among bodies in any of the collision layers `mask`.
    /// A ray starting inside a shape hits it at distance 0. Returns `None` for
    /// a zero direction.
    pub fn ray_cast(
        &self,
        origin: Vec3,
        direction: Vec3,
        max_distance: Fx,
        mask: u32,
    ) -> Option<RayHit> {
        let d = direction.try_normalize()?;
        let mut best: Option<RayHit> = None;
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(b) = &slot.body else { continue };
            if b.contained || b.groups & mask == 0 {
                continue;
            }
            let i = i as u32;
            let limit = best.map_or(max_distance, |h| h.distance);
            let hit = match b.shape {
                Shape::Sphere { radius } => ray_sphere(origin, d, b.position, radius),
                Shape::Box { half_extents } => {
                    let r = self.rotation(i);
                    ray_box(
                        r.transpose_mul_vec3(origin - b.position),
                        r.transpose_mul_vec3(d),
                        half_extents,
                    )
                    .map(|(t, n)| (t, r.mul_vec3(n)))
                }
                Shape::Capsule {
                    half_height,
                    radius,
                } => {
                    let r = self.rotation(i);
                    ray_capsule(
                        r.transpose_mul_vec3(origin - b.position),
                        r.transpose_mul_vec3(d),
                        half_height,
                        radius,
                    )
                    .map(|(t, n)| (t, r.mul_vec3(n)))
                }
                Shape::HalfSpace => {
                    let n = self.rotation(i).col(1);
                    ray_plane(origin, d, n, n.dot(b.position))
                }
            };
            if let Some((t, normal)) = hit {
                if t <= limit && best.is_none_or(|h| t < h.distance) {
                    best = Some(RayHit {
                        body: handle_of(&self.slots, i),
                        distance: t,
                        point: origin.add_scaled(d, t),
                        normal,
                    });
                }
            }
        }
        best
    }

    /// Bodies whose bounds overlap `area` (e.g. a unit-selection rectangle
    /// extruded vertically), in slot order, among layers `mask`. Half-spaces
    /// are never reported.
    ///
    /// The first query after a change builds a grid of the bodies (see
    /// `query_index.rs`), which later queries of the same state share.
    pub fn query_aabb(&self, area: &Aabb, mask: u32) -> Vec<BodyHandle> {
        let mut found = Vec::new();
        self.query_aabb_each(area, mask, |h, _| found.push(h));
        found.sort_unstable_by_key(|h| h.index);
        found
    }

    /// Calls `visit` with each body [`World::query_aabb`] would report, once
    /// each, without allocating: for a game that queries once per unit
    /// every frame. The order is the query grid's, a function of the state
    /// alone (the same on every machine), but not slot order: a visitor
    /// whose result could depend on it (a list, a nearest whose ties are
    /// not broken by id) sorts what it keeps, or calls `query_aabb`.
    pub fn query_aabb_each(
        &self,
        area: &Aabb,
        mask: u32,
        mut visit: impl FnMut(BodyHandle, &Body),
    ) {
        let index = self.queries.get_or_init(|| {
            let buffers = core::mem::take(
                &mut *self
                    .query_buffers
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            let bodies = (0..self.slots.len() as u32).filter_map(|i| {
                let b = self.slots[i as usize].body.as_ref()?;
                if b.contained {
                    return None;
                }
                let rotation = self.scratch.rotations.get(i as usize);
                Some((i, b.groups, b.bounds(rotation.unwrap_or(&Mat3::IDENTITY))?))
            });
            QueryIndex::build(bodies, buffers)
        });
        index.query(area, mask, |slot| {
            if let Some(b) = &self.slots[slot as usize].body {
                visit(handle_of(&self.slots, slot), b);
            }
        });
    }
}

fn ray_sphere(o: Vec3, d: Vec3, c: Vec3, r: Fx) -> Option<(Fx, Vec3)> {
    let m = o - c;
    let b = m.dot(d);
    let cc = m.length_squared() - r * r;
    if cc.is_positive() && b.is_positive() {
        return None;
    }
    let disc = b * b - cc;
    if disc.is_negative() {
        return None;
    }
    let t = (-b - disc.sqrt()).max(Fx::ZERO);
    let n = (o.add_scaled(d, t) - c).normalize_or_zero();
    Some((t, n))
}

/// Ray against a capsule in its own frame (core segment on the y axis from
/// `−h` to `h`): the nearest of the side (a cylinder) and the two end caps
/// (spheres); 0 from inside.
fn ray_capsule(o: Vec3, d: Vec3, h: Fx, r: Fx) -> Option<(Fx, Vec3)> {
    let core = |y: Fx| Vec3::new(Fx::ZERO, y.clamp(-h, h), Fx::ZERO);
    let inside = o - core(o.y);
    if inside.length_squared() <= r * r {
        return Some((Fx::ZERO, inside.try_normalize().unwrap_or(Vec3::Y)));
    }
    let mut best: Option<(Fx, Vec3)> = None;
    let mut offer = |hit: Option<(Fx, Vec3)>| {
        if let Some((t, n)) = hit {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, n));
            }
        }
    };
    // The side: (ox + t dx)² + (oz + t dz)² = r², within the segment.
    let a = d.x * d.x + d.z * d.z;
    if a > Fx::from_bits(1 << 8) {
        let b = o.x * d.x + o.z * d.z;
        let c = o.x * o.x + o.z * o.z - r * r;
        let disc = b * b - a * c;
        if !disc.is_negative() {
            let t = (-b - disc.sqrt()) / a;
            let y = o.y + d.y * t;
            if !t.is_negative() && y.abs() <= h {
                let p = o.add_scaled(d, t);
                let n = Vec3::new(p.x, Fx::ZERO, p.z).normalize_or_zero();
                offer(Some((t, n)));
            }
        }
    }
    offer(ray_sphere(o, d, core(h), r));
    offer(ray_sphere(o, d, core(-h), r));
    best
}

/// Slab test in the box's frame; returns the entry distance and local normal.
fn ray_box(o: Vec3, d: Vec3, h: Vec3) -> Option<(Fx, Vec3)> {
    let mut t_min = Fx::ZERO;
    let mut t_max = Fx::MAX;
    let mut normal = Vec3::ZERO;
    for axis in 0..3u8 {
        let (oa, da, ha) = (o.axis(axis), d.axis(axis), h.axis(axis));
        if da.abs() < Fx::from_bits(1 << 8) {
            if oa.abs() > ha {
                return None;
            }
            continue;
        }
        let (mut t1, mut t2) = ((-ha - oa) / da, (ha - oa) / da);
        let mut sign = Fx::NEG_ONE;
        if t1 > t2 {
            core::mem::swap(&mut t1, &mut t2);
            sign = Fx::ONE;
        }
        if t1 > t_min {
            t_min = t1;
            let mut n = [Fx::ZERO; 3];
            n[usize::from(axis)] = sign;
            normal = Vec3::from_array(n);
        }
        t_max = t_max.min(t2);
        if t_min > t_max {
            return None;
        }
    }
    if normal == Vec3::ZERO {
        // Started inside: report the exit-free hit at the origin.
        normal = -d;
    }
    Some((t_min, normal))
}

fn ray_plane(o: Vec3, d: Vec3, n: Vec3, offset: Fx) -> Option<(Fx, Vec3)> {
    let height = n.dot(o) - offset;
    if !height.is_positive() {
        return Some((Fx::ZERO, n));
    }
    let rate = n.dot(d);
    if !rate.is_negative() {
        return None;
    }
    Some((height / -rate, n))
}
