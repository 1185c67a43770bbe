//! Canonical encoding of a whole world, for checksums and exact saved states.
//!
//! Layout (all little-endian, through [`StateWriter`]): a `u16` version, the
//! settings, the frame, every slot in index order (generation, then the body
//! or a hole), the free list, and the contact cache in `(a, b)` order with
//! each point's feature id and normal impulse, then whether the manifold
//! carries a friction or twist impulse and, if it does, its friction
//! impulse (a world vector) and twist impulse. Contact geometry is not
//! state: the next step recomputes it for every pair that moves.
//!
//! **Plain fields are left out.** A body's fields that most bodies hold at
//! a plain value (an identity orientation, no spin, no pending force, no
//! inertia for a body that cannot turn, no damping, no restitution, a
//! gravity scale of one, a free height) are written only when they differ
//! from it; a byte after the shape says which are left out ([`plain`]). An RTS unit then
//! takes about half the bytes, and so does its checksum's hashing. Each
//! body and contact still has exactly one encoding: a field at its plain
//! value is always left out, and a decoder refuses it written out. Decoding
//! validates everything a later step relies on (shapes, indices, the cache's
//! order, the free list), so hostile bytes give a [`StateError`], never a
//! panic or a world that misbehaves later.
//!
//! **Threads.** A large world's long runs of records (its slots, its
//! contacts) are written in parts on the world's threads, into a sink that
//! reads no labels ([`Sink::READS_MARKS`]): the first part straight into
//! the writer, the others into buffers put after it in order. Each record's
//! bytes depend on the record alone, so the bytes are those of one thread.

use core::ops::Range;

use lockstep_fx::{
    Canonical, Checksum, DecodeError, Fx, HashSink, Quat, Sink, StateReader, StateWriter, Vec3,
    fork_join,
};

use crate::body::{Body, BodyKind};
use crate::contact::Contact;
use crate::narrowphase::Manifold;
use crate::settings::WorldSettings;
use crate::shape::Shape;
use crate::world::{Slot, World};

/// Version of the encoding; bump on any change to the layout or to what a
/// step computes from it. The shipped games carry it in their own version
/// (`lockstep_games::version`).
///
/// - 1: the first solver.
/// - 2: the islands-and-anchors solver: a friction cone, one linear impulse
///   per manifold, separations refreshed once per integration.
/// - 3: contact lever arms taken in each body's arm orientation (encoded
///   for bodies that can turn) and the setting `arm_turn`.
/// - 4: plain body fields and a contact's zero friction and twist impulses
///   left out (the same simulation, fewer bytes).
/// - 5: a body may be locked in height (the last bit of the plain byte).
/// - 6: the passes over contacts whose bodies turn take narrow 32-bit
///   products (the same bytes; a step computes other bits from them).
pub const STATE_VERSION: u16 = 6;

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

/// The most bytes one slot's record takes: its generation, occupancy and
/// island, and a box body with every field written (none at its plain
/// value, turning, so its arm orientation too).
pub const MAX_SLOT_BYTES: u32 = 4 + 1 + 4 + MAX_BODY_BYTES;

/// The most bytes a body takes (see [`MAX_SLOT_BYTES`]): kind, shape tag and
/// a box's half extents, the plain byte, position, orientation, both
/// velocities, force and torque, inverse mass and inertia, arm orientation,
/// both dampings, friction, restitution, gravity scale, groups, mask, user
/// data, still frames, awake and contained.
const MAX_BODY_BYTES: u32 =
    1 + 1 + 24 + 1 + 24 + 32 + 24 + 24 + 48 + 8 + 24 + 32 + 16 + 8 + 8 + 8 + 4 + 4 + 8 + 4 + 1 + 1;

/// The most bytes one cached contact takes: its pair, four points with
/// their feature ids and normal impulses, and its friction and twist
/// impulses.
pub const MAX_CONTACT_BYTES: u32 = 4 + 4 + 1 + 4 * (4 + 8) + 1 + 24 + 8;

/// Bytes of the world's version, settings and frame.
const FIXED_BYTES: u64 = 2 + (24 + 4 + 8 + 1 + 3 + 6 * 8 + 1 + 8 + 4 + 3 * 8) + 8;

impl World {
    /// The most bytes a world of at most `slots` slots and `contacts`
    /// cached contacts encodes to: what a game that knows how many bodies
    /// its worlds hold allows a saved state to take (readers of untrusted
    /// states refuse longer ones before decoding them).
    pub fn max_encoded_len(slots: u32, contacts: u32) -> u64 {
        // Slot, free-list and contact counts, then the records; the free
        // list names at most every slot.
        FIXED_BYTES
            + 3 * 4
            + u64::from(slots) * u64::from(MAX_SLOT_BYTES + 4)
            + u64::from(contacts) * u64::from(MAX_CONTACT_BYTES)
    }

    /// Writes the whole state canonically.
    pub fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("world", &[]);
        w.field("state version", &STATE_VERSION);
        encode_settings(&self.settings, w);
        w.field("frame", &self.frame);
        w.label::<u32>("slots");
        w.write_len(self.slots.len());
        let threads = self.pass_threads();
        write_records(&self.slots, threads, w);
        w.entity("free list", &[]);
        w.label::<u32>("length");
        w.write_len(self.free.len());
        for f in &self.free {
            w.field("slot", f);
        }
        w.entity("contacts", &[]);
        w.label::<u32>("length");
        w.write_len(self.contacts.len());
        write_records(&self.contacts, threads, w);
    }

    /// BLAKE3 checksum of the canonical state.
    pub fn checksum(&self) -> Checksum {
        let mut w = StateWriter::<HashSink>::hasher();
        self.encode(&mut w);
        w.checksum()
    }

    /// The exact saved state: the canonical bytes.
    pub fn save(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.encode(&mut w);
        w.into_inner()
    }

    /// Restores a world from [`World::save`] bytes, all of them (trailing
    /// bytes are an error). Stepping it gives the same states as stepping
    /// the world that was saved.
    pub fn decode(bytes: &[u8]) -> Result<World, StateError> {
        let mut r = StateReader::new(bytes);
        let world = World::read(&mut r)?;
        r.finish()?;
        Ok(world)
    }

    /// Reads a world written by [`World::encode`] from `r` and stops at its
    /// end, so a game may encode its world anywhere in its state, between
    /// its other fields: the encoding says how long it is (slot, free-list
    /// and contact counts), and nothing after it is read.
    pub fn read(r: &mut StateReader<'_>) -> Result<World, StateError> {
        let version = r.read_u16()?;
        if version != STATE_VERSION {
            return Err(StateError::Version { found: version });
        }
        let settings = decode_settings(r)?;
        let mut world = World::new(settings);
        world.frame = r.read_u64()?;
        let n = r.read_len(5)?;
        for _ in 0..n {
            let generation = r.read_u32()?;
            let slot = if r.read_bool()? {
                let island = r.read_u32()?;
                Slot {
                    generation,
                    body: Some(decode_body(r)?),
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
        let contacts = r.read_len(10)?;
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
            let (friction_impulse, twist_impulse) = if r.read_bool()? {
                let carried = (r.read_vec3()?, r.read_fx()?);
                if carried == (Vec3::ZERO, Fx::ZERO) {
                    return Err(StateError::Invalid(
                        "a contact carrying no friction must leave it out",
                    ));
                }
                carried
            } else {
                (Vec3::ZERO, Fx::ZERO)
            };
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
        world.refresh_all();
        Ok(world)
    }
}

/// A world inside a game's derived state: the same bytes as
/// [`World::encode`], read back by [`World::read`] (a version or a
/// validation failure becomes a [`DecodeError::Invalid`] at the world's
/// first byte).
impl Canonical for World {
    const MIN_BYTES: u32 = 2;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        World::encode(self, w);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<World, DecodeError> {
        let offset = r.offset();
        World::read(r).map_err(|e| match e {
            StateError::Decode(d) => d,
            StateError::Version { .. } => DecodeError::Invalid {
                offset,
                what: "world state version",
            },
            StateError::Invalid(what) => DecodeError::Invalid { offset, what },
        })
    }
}

/// One of a world's runs of records (a slot, a contact), written by
/// [`write_records`].
trait Record: Sync {
    /// Bytes a record usually takes, to size a part's buffer.
    const TYPICAL_BYTES: usize;
    /// Writes this record, the `index`th of its run.
    fn write<S: Sink>(&self, index: usize, w: &mut StateWriter<S>);
}

/// Writes all of `records` into `w`, the same bytes on any number of
/// threads. With several `threads` (a large world's: `World::pass_threads`),
/// a long run (at least [`PARALLEL_RECORDS`]) into a sink that reads no
/// labels is written in one part per thread on `fork_join`'s pool: the
/// first part straight into `w` (on the calling thread), the others into
/// buffers put after it in order.
fn write_records<S: Sink, R: Record>(records: &[R], threads: usize, w: &mut StateWriter<S>) {
    let n = records.len();
    if S::READS_MARKS || threads < 2 || n < PARALLEL_RECORDS {
        write_range(records, 0..n, w);
        return;
    }
    /// Where a part is written.
    enum Part<'w, S: Sink> {
        Here(&'w mut StateWriter<S>),
        Aside,
    }
    let share = n.div_ceil(threads);
    let mut parts = vec![(Part::Here(w), 0..share)];
    parts.extend(
        (share..n)
            .step_by(share)
            .map(|start| (Part::Aside, start..n.min(start + share))),
    );
    let written = fork_join(parts, |(part, range)| match part {
        Part::Here(w) => {
            write_range(records, range, w);
            None
        }
        Part::Aside => {
            let mut buffer = StateWriter::new(Vec::with_capacity(range.len() * R::TYPICAL_BYTES));
            write_range(records, range, &mut buffer);
            Some(buffer.into_inner())
        }
    });
    for bytes in written.into_iter().flatten() {
        w.write_raw(&bytes);
    }
}

/// Writes the records of `range`, in order.
fn write_range<S: Sink, R: Record>(records: &[R], range: Range<usize>, w: &mut StateWriter<S>) {
    for (i, r) in range.clone().zip(&records[range]) {
        r.write(i, w);
    }
}

/// Below this many records a run is written on one thread: a shorter part
/// costs less than handing it to a helper (a record takes a few hundred
/// instructions to write). Only a large world writes in parts at all
/// (`World::pass_threads`): in a smaller one the pool's helpers have often
/// gone to sleep since the step last used them, and waking one cost more
/// than its part saved (two threads: `pyramid-15`, whose 1 241 slots and
/// 2 000-odd contacts were written in parts, spent 1.19 of the time on
/// its checksum and `game:cubes` 1.24, 10 alternating pairs each).
const PARALLEL_RECORDS: usize = 256;

/// A slot: its generation, whether it holds a body and, if it does, the
/// body's island and the body.
impl Record for Slot {
    const TYPICAL_BYTES: usize = 160;

    fn write<S: Sink>(&self, index: usize, w: &mut StateWriter<S>) {
        w.entity("body", &[index as u32]);
        w.field("generation", &self.generation);
        w.field("occupied", &self.body.is_some());
        if let Some(b) = &self.body {
            w.field("island", &self.island);
            encode_body(b, w);
        }
    }
}

/// A cached contact: its pair, its points' feature ids and normal
/// impulses, and its friction and twist impulses if it carries them.
impl Record for Contact {
    const TYPICAL_BYTES: usize = 48;

    fn write<S: Sink>(&self, _index: usize, w: &mut StateWriter<S>) {
        w.entity("contact", &[self.a, self.b]);
        w.field("a", &self.a);
        w.field("b", &self.b);
        w.field("points", &self.manifold.count);
        for (p, imp) in self.manifold.points().iter().zip(&self.normal_impulses) {
            w.field("point id", &p.id);
            w.field("normal impulse", imp);
        }
        // A contact that turns no body carries no friction or twist
        // impulse (every contact of an RTS unit): both are left out.
        let carried = self.friction_impulse != Vec3::ZERO || !self.twist_impulse.is_zero();
        w.field("friction carried", &carried);
        if carried {
            w.field("friction impulse", &self.friction_impulse);
            w.field("twist impulse", &self.twist_impulse);
        }
    }
}

fn encode_settings<S: Sink>(s: &WorldSettings, w: &mut StateWriter<S>) {
    w.field("gravity", &s.gravity);
    w.field("tick rate", &s.tick_rate);
    w.field("seed", &s.seed);
    w.field("shuffle", &s.shuffle);
    w.field("substeps", &s.substeps);
    w.field("iterations", &s.iterations);
    w.field("relax iterations", &s.relax_iterations);
    w.field("contact hertz", &s.contact_hertz);
    w.field("contact damping ratio", &s.contact_damping_ratio);
    w.field("max push velocity", &s.max_push_velocity);
    w.field("speculative distance", &s.speculative_distance);
    w.field("arm turn", &s.arm_turn);
    w.field("restitution threshold", &s.restitution_threshold);
    w.field("sleeping", &s.sleeping);
    w.field("sleep speed", &s.sleep_speed);
    w.field("sleep frames", &s.sleep_frames);
    w.field("max linear speed", &s.max_linear_speed);
    w.field("max angular speed", &s.max_angular_speed);
    w.field("bounds", &s.bounds);
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
        speculative_distance: r.read_fx()?,
        arm_turn: r.read_fx()?,
        restitution_threshold: r.read_fx()?,
        sleeping: r.read_bool()?,
        sleep_speed: r.read_fx()?,
        sleep_frames: r.read_u32()?,
        max_linear_speed: r.read_fx()?,
        max_angular_speed: r.read_fx()?,
        bounds: r.read_fx()?,
    })
}

/// The body fields that may be left out of a body's encoding: a bit of the
/// `plain` byte written after the shape is set when its field holds the
/// plain value named here, and then the field's bytes are not written. A
/// field is left out exactly when it holds that value, so each body has one
/// encoding: a decoder refuses a field written out at its plain value.
mod plain {
    /// The orientation is the identity.
    pub const ORIENTATION: u8 = 1 << 0;
    /// The angular velocity is zero.
    pub const ANGULAR_VELOCITY: u8 = 1 << 1;
    /// The accumulated force and torque are both zero.
    pub const FORCES: u8 = 1 << 2;
    /// The inverse inertia is zero (a body that cannot turn).
    pub const INERTIA: u8 = 1 << 3;
    /// The linear and angular damping are both zero.
    pub const DAMPING: u8 = 1 << 4;
    /// The restitution is zero.
    pub const RESTITUTION: u8 = 1 << 5;
    /// The gravity scale is one.
    pub const GRAVITY_SCALE: u8 = 1 << 6;
    /// The height is free. Clear for a body locked in height, and no bytes
    /// follow: the lock has no other value to write.
    pub const HEIGHT: u8 = 1 << 7;
}

/// The `plain` byte of `b` (see [`plain`]).
fn plain_fields(b: &Body) -> u8 {
    let mut bits = 0;
    let mut set = |bit: u8, is_plain: bool| {
        if is_plain {
            bits |= bit;
        }
    };
    set(plain::ORIENTATION, b.orientation == Quat::IDENTITY);
    set(plain::ANGULAR_VELOCITY, b.angular_velocity == Vec3::ZERO);
    set(
        plain::FORCES,
        b.force == Vec3::ZERO && b.torque == Vec3::ZERO,
    );
    set(plain::INERTIA, b.inv_inertia == Vec3::ZERO);
    set(
        plain::DAMPING,
        b.linear_damping.is_zero() && b.angular_damping.is_zero(),
    );
    set(plain::RESTITUTION, b.restitution.is_zero());
    set(plain::GRAVITY_SCALE, b.gravity_scale == Fx::ONE);
    set(plain::HEIGHT, !b.height_locked);
    bits
}

fn encode_body<S: Sink>(b: &Body, w: &mut StateWriter<S>) {
    w.field("kind", &b.kind.tag());
    w.field("shape", &b.shape.tag());
    match b.shape {
        Shape::Box { half_extents } => w.field("half extents", &half_extents),
        Shape::Sphere { radius } => w.field("radius", &radius),
        Shape::Capsule {
            half_height,
            radius,
        } => {
            w.field("half height", &half_height);
            w.field("radius", &radius);
        }
        Shape::HalfSpace => {}
    }
    let bits = plain_fields(b);
    let written = |bit: u8| bits & bit == 0;
    w.field("plain fields", &bits);
    w.field("position", &b.position);
    if written(plain::ORIENTATION) {
        w.field("orientation", &b.orientation);
    }
    w.field("linear velocity", &b.linear_velocity);
    if written(plain::ANGULAR_VELOCITY) {
        w.field("angular velocity", &b.angular_velocity);
    }
    if written(plain::FORCES) {
        w.field("force", &b.force);
        w.field("torque", &b.torque);
    }
    w.field("inverse mass", &b.inv_mass);
    if written(plain::INERTIA) {
        w.field("inverse inertia", &b.inv_inertia);
    }
    if b.can_turn() {
        w.field("arm orientation", &b.arm_orientation);
    }
    if written(plain::DAMPING) {
        w.field("linear damping", &b.linear_damping);
        w.field("angular damping", &b.angular_damping);
    }
    w.field("friction", &b.friction);
    if written(plain::RESTITUTION) {
        w.field("restitution", &b.restitution);
    }
    if written(plain::GRAVITY_SCALE) {
        w.field("gravity scale", &b.gravity_scale);
    }
    w.field("groups", &b.groups);
    w.field("mask", &b.mask);
    w.field("user data", &b.user_data);
    w.field("still frames", &b.still_frames);
    w.field("awake", &b.awake);
    w.field("contained", &b.contained);
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
        3 => Shape::Capsule {
            half_height: r.read_fx()?,
            radius: r.read_fx()?,
        },
        _ => return Err(StateError::Invalid("unknown shape")),
    };
    if !shape.is_valid() || (shape == Shape::HalfSpace && kind != BodyKind::Static) {
        return Err(StateError::Invalid(
            "bad shape dimensions or a moving half-space",
        ));
    }
    let bits = r.read_u8()?;
    let mut fields = Fields { r, bits };
    let position = fields.r.read_vec3()?;
    let orientation = fields.or(plain::ORIENTATION, Quat::IDENTITY, StateReader::read_quat)?;
    let linear_velocity = fields.r.read_vec3()?;
    let angular_velocity =
        fields.or(plain::ANGULAR_VELOCITY, Vec3::ZERO, StateReader::read_vec3)?;
    let forces = fields.or(plain::FORCES, [Vec3::ZERO; 2], |r| {
        Ok([r.read_vec3()?, r.read_vec3()?])
    })?;
    let inv_mass = fields.r.read_fx()?;
    let inv_inertia = fields.or(plain::INERTIA, Vec3::ZERO, StateReader::read_vec3)?;
    let can_turn = inv_inertia != Vec3::ZERO;
    let arm_orientation = if can_turn {
        fields.r.read_quat()?
    } else {
        orientation
    };
    let [linear_damping, angular_damping] = fields.or(plain::DAMPING, [Fx::ZERO; 2], |r| {
        Ok([r.read_fx()?, r.read_fx()?])
    })?;
    let friction = fields.r.read_fx()?;
    let restitution = fields.or(plain::RESTITUTION, Fx::ZERO, StateReader::read_fx)?;
    let gravity_scale = fields.or(plain::GRAVITY_SCALE, Fx::ONE, StateReader::read_fx)?;
    let r = fields.r;
    let b = Body {
        kind,
        shape,
        position,
        orientation,
        linear_velocity,
        angular_velocity,
        force: forces[0],
        torque: forces[1],
        inv_mass,
        inv_inertia,
        arm_orientation,
        linear_damping,
        angular_damping,
        friction,
        restitution,
        gravity_scale,
        groups: r.read_u32()?,
        mask: r.read_u32()?,
        user_data: r.read_u64()?,
        still_frames: r.read_u32()?,
        awake: r.read_bool()?,
        contained: r.read_bool()?,
        height_locked: bits & plain::HEIGHT == 0,
    };
    if b.height_locked && (kind != BodyKind::Dynamic || !b.linear_velocity.y.is_zero()) {
        return Err(StateError::Invalid(
            "only a dynamic body is locked in height, with no vertical velocity",
        ));
    }
    if b.inv_mass.is_negative() || b.inv_inertia.min_element().is_negative() {
        return Err(StateError::Invalid("negative inverse mass or inertia"));
    }
    if kind != BodyKind::Dynamic && (b.inv_mass != Fx::ZERO || b.inv_inertia != Vec3::ZERO) {
        return Err(StateError::Invalid("only dynamic bodies have mass"));
    }
    Ok(b)
}

/// A body's fields being read, with its `plain` byte (see [`plain`]).
struct Fields<'r, 'b> {
    r: &'r mut StateReader<'b>,
    bits: u8,
}

impl<'b> Fields<'_, 'b> {
    /// The field of `bit`: its plain value when the bit is set, else read
    /// by `read`, which must not give the plain value (that field would
    /// have been left out).
    fn or<T: PartialEq>(
        &mut self,
        bit: u8,
        plain: T,
        read: impl FnOnce(&mut StateReader<'b>) -> Result<T, DecodeError>,
    ) -> Result<T, StateError> {
        if self.bits & bit != 0 {
            return Ok(plain);
        }
        let value = read(self.r)?;
        if value == plain {
            return Err(StateError::Invalid(
                "a body field at its plain value must be left out",
            ));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the labels it is given, as a diagnosis map reads them.
    #[derive(Default)]
    struct Labelled {
        bytes: Vec<u8>,
        entities: usize,
    }

    impl Sink for Labelled {
        const READS_MARKS: bool = true;

        fn put(&mut self, bytes: &[u8]) {
            self.bytes.extend_from_slice(bytes);
        }

        fn mark(&mut self, mark: lockstep_fx::Mark<'_>) {
            if let lockstep_fx::Mark::Entity { .. } = mark {
                self.entities += 1;
            }
        }
    }

    /// A large world (pyramids of boxes, whose contacts carry friction,
    /// with holes) writes the same bytes on any number of threads, into a
    /// buffer and into the hasher; a sink that reads labels gets every
    /// label.
    #[test]
    fn long_runs_written_in_parts_are_the_bytes_of_one_thread() {
        let mut world = crate::scenes::many_pyramids().build();
        world.step();
        let handles: Vec<_> = world.bodies().map(|(h, _)| h).collect();
        for k in [3, 4_000, 8_400] {
            world.remove_body(handles[k]);
        }
        world.step();
        world.set_threads(8);
        assert_eq!(world.pass_threads(), 8, "a large world");
        assert!(world.contacts.len() >= 8 * PARALLEL_RECORDS);
        assert!(
            world
                .contacts
                .iter()
                .any(|c| c.friction_impulse != Vec3::ZERO)
        );
        assert!(world.slots.iter().any(|s| s.body.is_none()));

        world.set_threads(1);
        let one = world.save();
        for threads in [2, 3, 8] {
            world.set_threads(threads);
            assert_eq!(world.save(), one, "{threads} threads");
            assert_eq!(world.checksum(), Checksum::of(&one), "{threads} threads");
            let mut labelled = StateWriter::new(Labelled::default());
            world.encode(&mut labelled);
            let labelled = labelled.into_inner();
            assert_eq!(labelled.bytes, one, "{threads} threads");
            // One per slot and per contact, and the world, free list and
            // contact cache themselves.
            let entities = world.slots.len() + world.contacts.len() + 3;
            assert_eq!(labelled.entities, entities, "{threads} threads");
        }
    }

    /// The bound is tight for a slot, a contact and the fixed fields, and
    /// holds for a stepped world with holes and contacts carrying friction.
    #[test]
    fn a_world_never_encodes_past_its_bound() {
        let mut world = World::new(WorldSettings::default());
        let h = world
            .add_body(
                crate::BodyBuilder::dynamic(Shape::Box {
                    half_extents: Vec3::splat(Fx::ONE),
                })
                .position(Vec3::new(Fx::ZERO, Fx::from_int(3), Fx::ZERO)),
            )
            .unwrap();
        let empty = World::new(WorldSettings::default()).save().len() as u64;
        assert_eq!(empty, World::max_encoded_len(0, 0));
        let slot = world.slots[h.index as usize].body.as_mut().unwrap();
        slot.orientation = Quat::from_wxyz(Fx::ZERO, Fx::ONE, Fx::ZERO, Fx::ZERO);
        slot.angular_velocity = Vec3::splat(Fx::ONE);
        slot.force = Vec3::splat(Fx::ONE);
        slot.torque = Vec3::splat(Fx::ONE);
        slot.linear_damping = Fx::ONE;
        slot.restitution = Fx::ONE;
        slot.gravity_scale = Fx::from_int(2);
        assert!(slot.can_turn() && slot.inv_inertia != Vec3::ZERO);
        let one = world.save().len() as u64;
        assert_eq!(one - empty, u64::from(MAX_SLOT_BYTES));
        world.contacts.push(Contact {
            a: 0,
            b: 0,
            manifold: Manifold {
                count: 4,
                ..Manifold::default()
            },
            normal_impulses: [Fx::ONE; 4],
            friction_impulse: Vec3::splat(Fx::ONE),
            twist_impulse: Fx::ONE,
            fresh: false,
        });
        let with_contact = world.save().len() as u64;
        assert_eq!(with_contact - one, u64::from(MAX_CONTACT_BYTES));

        let mut world = crate::scenes::many_pyramids().build();
        for _ in 0..3 {
            world.step();
        }
        let handles: Vec<_> = world.bodies().map(|(h, _)| h).collect();
        for k in [3, 4_000, 8_400] {
            world.remove_body(handles[k]);
        }
        world.step();
        let bound = World::max_encoded_len(world.slots.len() as u32, world.contacts.len() as u32);
        assert!(world.save().len() as u64 <= bound);
    }
}
