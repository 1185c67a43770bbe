//! Canonical encoding of a whole world, for checksums and exact snapshots.
//!
//! Layout (all little-endian, through [`StateWriter`]): a `u16` version, the
//! settings, the frame, every slot in index order (generation, then the body
//! or a hole), the free list, and the contact cache in `(a, b)` order with
//! each point's feature id and normal impulse, then the manifold's friction
//! impulse (a world vector) and twist impulse. Contact geometry is not
//! state: the next step recomputes it for every pair that moves. Decoding
//! validates everything a later step relies on (shapes, indices, the cache's
//! order, the free list), so hostile bytes give a [`StateError`], never a
//! panic or a world that misbehaves later.

use lockstep_fx::{Checksum, DecodeError, Fx, HashSink, Sink, StateReader, StateWriter, Vec3};

use crate::body::{Body, BodyKind};
use crate::contact::Contact;
use crate::narrowphase::Manifold;
use crate::settings::WorldSettings;
use crate::shape::Shape;
use crate::world::{Slot, World};

/// Version of the encoding; bump on any change to the layout or to what a
/// step computes from it.
pub const STATE_VERSION: u16 = 1;

/// Why bytes are not a valid world.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The bytes ended early, held a bad value, or continued past the end.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Written by another version of the encoding.
    #[error("world state version {found}, expected {STATE_VERSION}")]
    Version {
        /// The version found.
        found: u16,
    },
    /// Well-formed bytes describing an impossible world.
    #[error("invalid world state: {0}")]
    Invalid(&'static str),
}

impl World {
    /// Writes the whole state canonically.
    pub fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_u16(STATE_VERSION);
        encode_settings(&self.settings, w);
        w.write_u64(self.frame);
        w.write_len(self.slots.len());
        for slot in &self.slots {
            w.write_u32(slot.generation);
            match &slot.body {
                None => w.write_bool(false),
                Some(b) => {
                    w.write_bool(true);
                    w.write_u32(slot.island);
                    encode_body(b, w);
                }
            }
        }
        w.write_len(self.free.len());
        for &f in &self.free {
            w.write_u32(f);
        }
        w.write_len(self.contacts.len());
        for c in &self.contacts {
            w.write_u32(c.a);
            w.write_u32(c.b);
            w.write_u8(c.manifold.count);
            for (p, &imp) in c.manifold.points().iter().zip(&c.normal_impulses) {
                w.write_u32(p.id);
                w.write_fx(imp);
            }
            w.write_vec3(c.friction_impulse);
            w.write_fx(c.twist_impulse);
        }
    }

    /// BLAKE3 checksum of the canonical state.
    pub fn checksum(&self) -> Checksum {
        let mut w = StateWriter::<HashSink>::hasher();
        self.encode(&mut w);
        w.checksum()
    }

    /// The exact snapshot: the canonical bytes.
    pub fn snapshot(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.encode(&mut w);
        w.into_inner()
    }

    /// Restores a world from [`World::snapshot`] bytes. Stepping it gives the
    /// same states as stepping the world that was saved.
    pub fn decode(bytes: &[u8]) -> Result<World, StateError> {
        let mut r = StateReader::new(bytes);
        let version = r.read_u16()?;
        if version != STATE_VERSION {
            return Err(StateError::Version { found: version });
        }
        let settings = decode_settings(&mut r)?;
        let mut world = World::new(settings);
        world.frame = r.read_u64()?;
        let n = r.read_len(5)?;
        for _ in 0..n {
            let generation = r.read_u32()?;
            let slot = if r.read_bool()? {
                let island = r.read_u32()?;
                Slot {
                    generation,
                    body: Some(decode_body(&mut r)?),
                    island,
                }
            } else {
                Slot {
                    generation,
                    body: None,
                    island: 0,
                }
            };
            world.slots.push(slot);
        }
        let free = r.read_len(4)?;
        let mut seen = vec![false; n];
        for _ in 0..free {
            let f = r.read_u32()?;
            let i =
                usize::try_from(f).map_err(|_| StateError::Invalid("free slot out of range"))?;
            if i >= n || world.slots[i].body.is_some() || seen[i] {
                return Err(StateError::Invalid(
                    "free list must name each empty slot once",
                ));
            }
            seen[i] = true;
            world.free.push(f);
        }
        if world
            .slots
            .iter()
            .zip(&seen)
            .any(|(s, &free)| s.body.is_none() != free)
        {
            return Err(StateError::Invalid(
                "an empty slot is missing from the free list",
            ));
        }
        for s in &world.slots {
            if s.body.is_some() && s.island as usize >= n {
                return Err(StateError::Invalid("island id out of range"));
            }
        }
        let contacts = r.read_len(41)?;
        let mut last: Option<(u32, u32)> = None;
        for _ in 0..contacts {
            let (a, b) = (r.read_u32()?, r.read_u32()?);
            let live = |i: u32| {
                world
                    .slots
                    .get(i as usize)
                    .is_some_and(|s| s.body.is_some())
            };
            if a >= b || !live(a) || !live(b) || last.is_some_and(|l| l >= (a, b)) {
                return Err(StateError::Invalid(
                    "contacts must join live bodies a < b in ascending order",
                ));
            }
            last = Some((a, b));
            let count = r.read_u8()?;
            if count > 4 {
                return Err(StateError::Invalid("a contact has at most 4 points"));
            }
            let mut manifold = Manifold {
                count,
                ..Manifold::default()
            };
            let mut normal_impulses = [Fx::ZERO; 4];
            let n = usize::from(count);
            for (point, impulse) in manifold.points[..n]
                .iter_mut()
                .zip(&mut normal_impulses[..n])
            {
                point.id = r.read_u32()?;
                *impulse = r.read_fx()?;
            }
            let friction_impulse = r.read_vec3()?;
            let twist_impulse = r.read_fx()?;
            world.contacts.push(Contact {
                a,
                b,
                manifold,
                normal_impulses,
                friction_impulse,
                twist_impulse,
                fresh: false,
            });
        }
        r.finish()?;
        world.refresh_all();
        Ok(world)
    }
}

fn encode_settings<S: Sink>(s: &WorldSettings, w: &mut StateWriter<S>) {
    w.write_vec3(s.gravity);
    w.write_u32(s.tick_rate);
    w.write_u64(s.seed);
    w.write_bool(s.shuffle);
    w.write_u8(s.substeps);
    w.write_u8(s.iterations);
    w.write_u8(s.relax_iterations);
    for v in [
        s.contact_hertz,
        s.contact_damping_ratio,
        s.max_push_velocity,
        s.linear_slop,
        s.speculative_distance,
        s.restitution_threshold,
    ] {
        w.write_fx(v);
    }
    w.write_bool(s.sleeping);
    w.write_fx(s.sleep_speed);
    w.write_u32(s.sleep_frames);
    for v in [s.max_linear_speed, s.max_angular_speed, s.bounds] {
        w.write_fx(v);
    }
}

fn decode_settings(r: &mut StateReader<'_>) -> Result<WorldSettings, StateError> {
    Ok(WorldSettings {
        gravity: r.read_vec3()?,
        tick_rate: r.read_u32()?,
        seed: r.read_u64()?,
        shuffle: r.read_bool()?,
        substeps: r.read_u8()?,
        iterations: r.read_u8()?,
        relax_iterations: r.read_u8()?,
        contact_hertz: r.read_fx()?,
        contact_damping_ratio: r.read_fx()?,
        max_push_velocity: r.read_fx()?,
        linear_slop: r.read_fx()?,
        speculative_distance: r.read_fx()?,
        restitution_threshold: r.read_fx()?,
        sleeping: r.read_bool()?,
        sleep_speed: r.read_fx()?,
        sleep_frames: r.read_u32()?,
        max_linear_speed: r.read_fx()?,
        max_angular_speed: r.read_fx()?,
        bounds: r.read_fx()?,
    })
}

fn encode_body<S: Sink>(b: &Body, w: &mut StateWriter<S>) {
    w.write_u8(b.kind.tag());
    w.write_u8(b.shape.tag());
    match b.shape {
        Shape::Box { half_extents } => w.write_vec3(half_extents),
        Shape::Sphere { radius } => w.write_fx(radius),
        Shape::HalfSpace => {}
    }
    w.write_vec3(b.position);
    w.write_quat(b.orientation);
    w.write_vec3(b.linear_velocity);
    w.write_vec3(b.angular_velocity);
    w.write_vec3(b.force);
    w.write_vec3(b.torque);
    w.write_fx(b.inv_mass);
    w.write_vec3(b.inv_inertia);
    for v in [
        b.linear_damping,
        b.angular_damping,
        b.friction,
        b.restitution,
        b.gravity_scale,
    ] {
        w.write_fx(v);
    }
    w.write_u32(b.groups);
    w.write_u32(b.mask);
    w.write_u64(b.user_data);
    w.write_u32(b.still_frames);
    w.write_bool(b.awake);
    w.write_bool(b.contained);
}

fn decode_body(r: &mut StateReader<'_>) -> Result<Body, StateError> {
    let kind = match r.read_u8()? {
        0 => BodyKind::Dynamic,
        1 => BodyKind::Kinematic,
        2 => BodyKind::Static,
        _ => return Err(StateError::Invalid("unknown body kind")),
    };
    let shape = match r.read_u8()? {
        0 => Shape::Box {
            half_extents: r.read_vec3()?,
        },
        1 => Shape::Sphere {
            radius: r.read_fx()?,
        },
        2 => Shape::HalfSpace,
        _ => return Err(StateError::Invalid("unknown shape")),
    };
    if !shape.is_valid() || (shape == Shape::HalfSpace && kind != BodyKind::Static) {
        return Err(StateError::Invalid(
            "bad shape dimensions or a moving half-space",
        ));
    }
    let mut b = Body {
        kind,
        shape,
        position: r.read_vec3()?,
        orientation: r.read_quat()?,
        linear_velocity: r.read_vec3()?,
        angular_velocity: r.read_vec3()?,
        force: r.read_vec3()?,
        torque: r.read_vec3()?,
        inv_mass: r.read_fx()?,
        inv_inertia: r.read_vec3()?,
        linear_damping: Fx::ZERO,
        angular_damping: Fx::ZERO,
        friction: Fx::ZERO,
        restitution: Fx::ZERO,
        gravity_scale: Fx::ZERO,
        groups: 0,
        mask: 0,
        user_data: 0,
        still_frames: 0,
        awake: false,
        contained: false,
    };
    b.linear_damping = r.read_fx()?;
    b.angular_damping = r.read_fx()?;
    b.friction = r.read_fx()?;
    b.restitution = r.read_fx()?;
    b.gravity_scale = r.read_fx()?;
    b.groups = r.read_u32()?;
    b.mask = r.read_u32()?;
    b.user_data = r.read_u64()?;
    b.still_frames = r.read_u32()?;
    b.awake = r.read_bool()?;
    b.contained = r.read_bool()?;
    if b.inv_mass.is_negative() || b.inv_inertia.min_element().is_negative() {
        return Err(StateError::Invalid("negative inverse mass or inertia"));
    }
    if kind != BodyKind::Dynamic && (b.inv_mass != Fx::ZERO || b.inv_inertia != Vec3::ZERO) {
        return Err(StateError::Invalid("only dynamic bodies have mass"));
    }
    Ok(b)
}
