//! Rigid bodies: their kinds, state, handles and the builder that creates them.
//!
//! A [`Body`] holds everything the simulation carries from one step to the
//! next (pose, velocities, accumulated forces, material, sleep state); what is
//! derived from it each step (rotation matrix, world inertia, bounds) lives in
//! the world's per-step caches, not here. Bodies are addressed by
//! [`BodyHandle`]s: a slot index plus a generation, so a handle to a removed
//! body never reaches the body that later reuses its slot.

use lockstep_fx::{Canonical, DecodeError, Fx, Mat3, Quat, Sink, StateReader, StateWriter, Vec3};

use crate::aabb::Aabb;

use crate::shape::Shape;

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// Moved by forces and contacts.
    Dynamic,
    /// Moved only by the velocity the game sets; pushes dynamic bodies and is
    /// never pushed.
    Kinematic,
    /// Never moves.
    Static,
}

impl BodyKind {
    pub(crate) fn tag(self) -> u8 {
        match self {
            BodyKind::Dynamic => 0,
            BodyKind::Kinematic => 1,
            BodyKind::Static => 2,
        }
    }
}

/// A typed reference to a body of a [`World`](crate::World).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BodyHandle {
    /// Slot index (bodies are stored and processed in slot order).
    pub index: u32,
    /// Generation of the slot when the handle was made.
    pub generation: u32,
}

/// The slot index then the generation, each a `u32`, so a game's state can
/// hold handles (a handle is only as valid as the world it is checked
/// against after decoding).
impl Canonical for BodyHandle {
    const MIN_BYTES: u32 = 8;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_u32(self.index);
        w.write_u32(self.generation);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        Ok(BodyHandle {
            index: r.read_u32()?,
            generation: r.read_u32()?,
        })
    }
}

/// A rigid body's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    pub(crate) kind: BodyKind,
    pub(crate) shape: Shape,
    pub(crate) position: Vec3,
    pub(crate) orientation: Quat,
    pub(crate) linear_velocity: Vec3,
    pub(crate) angular_velocity: Vec3,
    pub(crate) force: Vec3,
    pub(crate) torque: Vec3,
    pub(crate) inv_mass: Fx,
    pub(crate) inv_inertia: Vec3,
    /// The orientation the solver takes this body's contact lever arms in
    /// (see [`Body::arm_frame`]).
    pub(crate) arm_orientation: Quat,
    pub(crate) linear_damping: Fx,
    pub(crate) angular_damping: Fx,
    pub(crate) friction: Fx,
    pub(crate) restitution: Fx,
    pub(crate) gravity_scale: Fx,
    /// Collision layers this body is in.
    pub(crate) groups: u32,
    /// Collision layers this body collides with.
    pub(crate) mask: u32,
    pub(crate) user_data: u64,
    /// Frames in a row the body has been slow enough to sleep.
    pub(crate) still_frames: u32,
    pub(crate) awake: bool,
    /// Taken out of the simulation because its state left the valid range.
    pub(crate) contained: bool,
    /// Keeps its height: nothing moves it along y (see
    /// [`BodyBuilder::lock_height`]).
    pub(crate) height_locked: bool,
}

impl Body {
    /// How the body moves.
    pub fn kind(&self) -> BodyKind {
        self.kind
    }
    /// Its shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// World position of its centre of mass.
    pub fn position(&self) -> Vec3 {
        self.position
    }
    /// Orientation (unit quaternion).
    pub fn orientation(&self) -> Quat {
        self.orientation
    }
    /// Linear velocity (m/s).
    pub fn linear_velocity(&self) -> Vec3 {
        self.linear_velocity
    }
    /// Angular velocity (rad/s, world frame).
    pub fn angular_velocity(&self) -> Vec3 {
        self.angular_velocity
    }
    /// Mass (0 for static and kinematic bodies).
    pub fn mass(&self) -> Fx {
        if self.inv_mass.is_zero() {
            Fx::ZERO
        } else {
            Fx::ONE / self.inv_mass
        }
    }
    /// Whether an impulse can turn it: a dynamic body whose rotation is not
    /// locked (static and kinematic bodies have zero inverse inertia).
    pub(crate) fn can_turn(&self) -> bool {
        self.inv_inertia != Vec3::ZERO
    }

    /// Whether its height is locked ([`BodyBuilder::lock_height`]): its
    /// position and velocity along y never change under gravity, forces,
    /// contacts or impulses.
    pub fn is_height_locked(&self) -> bool {
        self.height_locked
    }

    /// `v` without its y component when the height is locked, else `v`.
    pub(crate) fn in_plane(&self, v: Vec3) -> Vec3 {
        if self.height_locked {
            Vec3::new(v.x, Fx::ZERO, v.z)
        } else {
            v
        }
    }

    /// The rotation that takes an offset from the body's centre, in world
    /// axes, to where it was when the body had its arm orientation
    /// (`R_arm · R_nowᵀ`, `rotation` being `R_now`); `None` when the two
    /// orientations are the same or the body cannot turn.
    ///
    /// **Why.** The solver turns a contact point's impulse into torque
    /// through its lever arm, the offset from the body's centre to the
    /// point. Taken as they are, the arms lean with the body: when a stack
    /// leans, each body's weight moves towards the lower edge of the face
    /// below, a torque that grows with the lean, and a tall enough stack of
    /// soft contacts buckles under its own weight (20 cubes did, at the
    /// default 36 Hz: `scenes::tower_20`). Taken in an orientation that
    /// stays put while the body turns less than
    /// [`WorldSettings::arm_turn`](crate::WorldSettings::arm_turn), a small
    /// lean moves no arm, and the stack stands on its springs. Points still
    /// move over the body's faces (the arms follow sliding), and the
    /// separations follow the real motion. Rapier 0.36 keeps its arms in the
    /// same spirit, frozen while a contact's relative pose moves little.
    pub(crate) fn arm_frame(&self, rotation: &Mat3) -> Option<Mat3> {
        if !self.can_turn() || self.arm_orientation == self.orientation {
            return None;
        }
        Some(Mat3::from_quat(self.arm_orientation).mul_mat3(&rotation.transpose()))
    }

    /// After the body moved: its arm orientation becomes its orientation
    /// when it has turned more than `limit` radians away from it, or always
    /// when it cannot turn.
    pub(crate) fn follow_arms(&mut self, limit: Fx) {
        let turn = self.arm_orientation.conjugate() * self.orientation;
        // |xyz| = sin(θ/2) ≈ θ/2 for the small angles compared here.
        let half = Vec3::new(turn.x, turn.y, turn.z).length_squared();
        let most = limit.scale_pow2(-1);
        if !self.can_turn() || half > most * most {
            self.arm_orientation = self.orientation;
        }
    }

    /// Whether it is simulated this step (static bodies are never awake).
    pub fn is_awake(&self) -> bool {
        self.awake
    }
    /// Whether it was taken out of the simulation for leaving the valid range.
    pub fn is_contained(&self) -> bool {
        self.contained
    }
    /// The game's own tag.
    pub fn user_data(&self) -> u64 {
        self.user_data
    }
    /// Friction coefficient.
    pub fn friction(&self) -> Fx {
        self.friction
    }
    /// Restitution (bounciness) coefficient.
    pub fn restitution(&self) -> Fx {
        self.restitution
    }
    /// Collision layers (membership, filter).
    pub fn collision_groups(&self) -> (u32, u32) {
        (self.groups, self.mask)
    }
    /// World-space bounds of its shape, given its rotation matrix
    /// (half-spaces have none).
    pub(crate) fn bounds(&self, rotation: &Mat3) -> Option<Aabb> {
        match self.shape {
            Shape::Box { half_extents } => {
                Some(Aabb::of_box(self.position, rotation, half_extents))
            }
            Shape::Sphere { radius } => Some(Aabb::of_sphere(self.position, radius)),
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let tip = rotation.col(1) * half_height;
                let (a, b) = (self.position - tip, self.position + tip);
                Some(Aabb::from_corners(a, b).expanded(Vec3::splat(radius)))
            }
            Shape::HalfSpace => None,
        }
    }

    /// Kinetic energy `½ m v² + ½ ωᵀ I ω` (with the inertia in the body frame).
    pub fn kinetic_energy(&self) -> Fx {
        if self.inv_mass.is_zero() {
            return Fx::ZERO;
        }
        let m = Fx::ONE / self.inv_mass;
        let w = self.orientation.inverse_rotate(self.angular_velocity);
        let inertia = |inv: Fx| {
            if inv.is_zero() {
                Fx::ZERO
            } else {
                Fx::ONE / inv
            }
        };
        let rot = inertia(self.inv_inertia.x) * w.x * w.x
            + inertia(self.inv_inertia.y) * w.y * w.y
            + inertia(self.inv_inertia.z) * w.z * w.z;
        (m * self.linear_velocity.length_squared() + rot).scale_pow2(-1)
    }
}

/// Creates bodies: pick the kind and shape, chain the settings, and pass it to
/// [`World::add_body`](crate::World::add_body).
///
/// Defaults: at the origin, unrotated, at rest, density 1 000 kg/m³ (water),
/// friction 0.5, restitution 0, no damping, gravity scale 1, free to turn,
/// in every collision group and colliding with every group.
///
/// The fields are public so that a builder is also plain data another engine
/// can read (the benchmark scenes and the rapier comparison use it that way);
/// `add_body` validates them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyBuilder {
    /// How it moves.
    pub kind: BodyKind,
    /// Its shape.
    pub shape: Shape,
    /// Centre position.
    pub position: Vec3,
    /// Orientation (normalised when the body is added).
    pub orientation: Quat,
    /// Initial linear velocity.
    pub linear_velocity: Vec3,
    /// Initial angular velocity.
    pub angular_velocity: Vec3,
    /// Density (kg/m³); gives the mass of dynamic bodies.
    pub density: Fx,
    /// Linear damping rate (1/s).
    pub linear_damping: Fx,
    /// Angular damping rate (1/s).
    pub angular_damping: Fx,
    /// Friction coefficient.
    pub friction: Fx,
    /// Restitution coefficient.
    pub restitution: Fx,
    /// Gravity scale.
    pub gravity_scale: Fx,
    /// Collision layers the body is in.
    pub groups: u32,
    /// Collision layers the body collides with.
    pub mask: u32,
    /// The game's own tag.
    pub user_data: u64,
    /// Starts asleep (dynamic bodies).
    pub asleep: bool,
    /// Never turns under contacts, forces or impulses (dynamic bodies): its
    /// inverse inertia is zero, as Box2D's "fixed rotation" and rapier's
    /// "locked rotations". It keeps the angular velocity it is given.
    pub lock_rotation: bool,
    /// Keeps its height (dynamic bodies): it moves only across the
    /// horizontal plane (rapier's "translation locked on y").
    pub lock_height: bool,
}

impl BodyBuilder {
    /// A body of the given kind and shape, with the defaults above.
    pub fn new(kind: BodyKind, shape: Shape) -> BodyBuilder {
        BodyBuilder {
            kind,
            shape,
            position: Vec3::ZERO,
            orientation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            density: Fx::from_int(1000),
            linear_damping: Fx::ZERO,
            angular_damping: Fx::ZERO,
            friction: Fx::HALF,
            restitution: Fx::ZERO,
            gravity_scale: Fx::ONE,
            groups: u32::MAX,
            mask: u32::MAX,
            user_data: 0,
            asleep: false,
            lock_rotation: false,
            lock_height: false,
        }
    }
    /// A dynamic body.
    pub fn dynamic(shape: Shape) -> BodyBuilder {
        BodyBuilder::new(BodyKind::Dynamic, shape)
    }
    /// A static body.
    pub fn fixed(shape: Shape) -> BodyBuilder {
        BodyBuilder::new(BodyKind::Static, shape)
    }
    /// A kinematic body.
    pub fn kinematic(shape: Shape) -> BodyBuilder {
        BodyBuilder::new(BodyKind::Kinematic, shape)
    }
    /// Position of the centre.
    pub fn position(mut self, p: Vec3) -> Self {
        self.position = p;
        self
    }
    /// Orientation (normalised when the body is added).
    pub fn orientation(mut self, q: Quat) -> Self {
        self.orientation = q;
        self
    }
    /// Initial linear velocity.
    pub fn linear_velocity(mut self, v: Vec3) -> Self {
        self.linear_velocity = v;
        self
    }
    /// Initial angular velocity.
    pub fn angular_velocity(mut self, w: Vec3) -> Self {
        self.angular_velocity = w;
        self
    }
    /// Density in kg/m³ (dynamic bodies).
    pub fn density(mut self, d: Fx) -> Self {
        self.density = d;
        self
    }
    /// Linear and angular damping rates (1/s).
    pub fn damping(mut self, linear: Fx, angular: Fx) -> Self {
        self.linear_damping = linear;
        self.angular_damping = angular;
        self
    }
    /// Friction coefficient (combined with the other body's as the geometric
    /// mean `sqrt(a·b)`).
    pub fn friction(mut self, mu: Fx) -> Self {
        self.friction = mu;
        self
    }
    /// Restitution coefficient (combined by taking the larger).
    pub fn restitution(mut self, e: Fx) -> Self {
        self.restitution = e;
        self
    }
    /// Gravity scale (0 floats).
    pub fn gravity_scale(mut self, s: Fx) -> Self {
        self.gravity_scale = s;
        self
    }
    /// Collision layers: the body is in `groups` and collides with bodies in
    /// `mask` (both must agree for a pair to collide).
    pub fn collision_groups(mut self, groups: u32, mask: u32) -> Self {
        self.groups = groups;
        self.mask = mask;
        self
    }
    /// A tag for the game's own use (an entity id).
    pub fn user_data(mut self, data: u64) -> Self {
        self.user_data = data;
        self
    }
    /// Starts asleep (until something touches it).
    pub fn asleep(mut self) -> Self {
        self.asleep = true;
        self
    }
    /// Locks the rotation: contacts, torques and impulses never turn the
    /// body (its inverse inertia is zero). Upright agents want this: a
    /// character or an RTS unit slides and is pushed, but never rolls or
    /// tips; and the solver skips every angular term of a contact whose
    /// bodies cannot turn.
    pub fn lock_rotation(mut self) -> Self {
        self.lock_rotation = true;
        self
    }
    /// Locks the height: the body moves only across the horizontal plane
    /// at the height it is created or posed at. Gravity, forces, impulses
    /// and contacts move it along x and z only; a vertical velocity it is
    /// given is dropped. The units of a strategy game want this: they walk
    /// on flat ground, so they need neither gravity nor a contact with the
    /// ground (an RTS unit touches only other units, walls and buildings,
    /// whose normals with it lie in the plane).
    ///
    /// Within a step, a contact whose normal leaves the plane (a sphere on
    /// the edge of a low box) moves the body vertically as it would a free
    /// one; the step's end drops that motion. Contacts whose normals lie in
    /// the plane act exactly as on a free body.
    pub fn lock_height(mut self) -> Self {
        self.lock_height = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{World, WorldSettings};

    fn cube(lock: bool) -> Body {
        let mut world = World::new(WorldSettings::default());
        let b = BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::ONE)));
        let h = world
            .add_body(if lock { b.lock_rotation() } else { b })
            .unwrap();
        world.body(h).unwrap().clone()
    }

    fn turned(b: &mut Body, angle: &str) {
        b.orientation =
            Quat::from_axis_angle(Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO), Fx::lit(angle));
    }

    #[test]
    fn arms_keep_their_orientation_until_the_body_turns_past_the_limit() {
        let limit = Fx::lit("0.02");
        let mut b = cube(false);
        assert_eq!(b.arm_orientation, b.orientation);
        assert_eq!(b.arm_frame(&Mat3::from_quat(b.orientation)), None);

        // 0.015 rad: the arms stay where they were; the frame turns an
        // offset back by the body's turn.
        turned(&mut b, "0.015");
        b.follow_arms(limit);
        assert_eq!(b.arm_orientation, Quat::IDENTITY);
        let rotation = Mat3::from_quat(b.orientation);
        let corner = Vec3::new(Fx::HALF, -Fx::HALF, Fx::HALF);
        let back = b
            .arm_frame(&rotation)
            .unwrap()
            .mul_vec3(rotation.mul_vec3(corner));
        assert!((back - corner).length() < Fx::lit("0.000001"), "{back:?}");

        // 0.025 rad: past the limit, they turn with the body.
        turned(&mut b, "0.025");
        b.follow_arms(limit);
        assert_eq!(b.arm_orientation, b.orientation);
        assert_eq!(b.arm_frame(&Mat3::from_quat(b.orientation)), None);
    }

    #[test]
    fn a_body_that_cannot_turn_has_no_arm_frame() {
        let mut b = cube(true);
        turned(&mut b, "0.015");
        assert_eq!(b.arm_frame(&Mat3::from_quat(b.orientation)), None);
        b.follow_arms(Fx::lit("0.02"));
        assert_eq!(b.arm_orientation, b.orientation);
    }
}
