//! `Quat`: a rotation quaternion `w + xi + yj + zk` of [`Fx`].
//!
//! Invariants: a quaternion used as an orientation is kept unit length by
//! [`Quat::normalize`] after every integration step; the rotation functions
//! assume unit length and do not renormalise on their own. Products sum their
//! terms at 128-bit precision and round once per component.

use crate::norm::Scaled;
use crate::{Fx, Vec3, Wide};
use core::ops::Mul;

/// A quaternion; as an orientation it rotates body space into world space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Quat {
    /// The scalar part.
    pub w: Fx,
    /// The i component.
    pub x: Fx,
    /// The j component.
    pub y: Fx,
    /// The k component.
    pub z: Fx,
}

/// Sum of four raw products, rounded once to Q32.32, saturating.
#[inline(always)]
fn sum4(p: [(Fx, Fx); 4], signs: [bool; 4]) -> Fx {
    let mut acc = Wide::ZERO;
    for ((a, b), negative) in p.into_iter().zip(signs) {
        let t = Wide::product(a, b);
        // Saturating sums: exact unless the true result is far out of range
        // (components near 2^31, never the case for a rotation).
        acc = if negative {
            acc.saturating_sub(t)
        } else {
            acc.saturating_add(t)
        };
    }
    acc.round_saturating()
}

impl Default for Quat {
    fn default() -> Quat {
        Quat::IDENTITY
    }
}

impl Quat {
    /// The identity rotation.
    pub const IDENTITY: Quat = Quat::from_wxyz(Fx::ONE, Fx::ZERO, Fx::ZERO, Fx::ZERO);

    /// A quaternion from its components, scalar first.
    #[inline(always)]
    pub const fn from_wxyz(w: Fx, x: Fx, y: Fx, z: Fx) -> Quat {
        Quat { w, x, y, z }
    }

    /// The rotation by `angle` radians about the unit vector `axis`
    /// (right-handed).
    pub fn from_axis_angle(axis: Vec3, angle: Fx) -> Quat {
        let (s, c) = angle.scale_pow2(-1).sin_cos();
        Quat::from_wxyz(c, axis.x * s, axis.y * s, axis.z * s)
    }

    /// The vector part `(x, y, z)`.
    #[inline(always)]
    pub const fn vector(self) -> Vec3 {
        Vec3::new(self.x, self.y, self.z)
    }

    /// The conjugate; for a unit quaternion, the inverse rotation.
    #[inline(always)]
    pub fn conjugate(self) -> Quat {
        Quat::from_wxyz(self.w, -self.x, -self.y, -self.z)
    }

    /// The 4D dot product, rounded once.
    #[inline(always)]
    pub fn dot(self, o: Quat) -> Fx {
        sum4(
            [(self.w, o.w), (self.x, o.x), (self.y, o.y), (self.z, o.z)],
            [false; 4],
        )
    }

    /// The norm, within 1 LSB.
    pub fn length(self) -> Fx {
        match Scaled::new([self.w, self.x, self.y, self.z]) {
            Some(s) => s.length(),
            None => Fx::ZERO,
        }
    }

    /// The unit quaternion in this direction, each component within 1 LSB;
    /// the zero quaternion (not a rotation) gives the identity.
    pub fn normalize(self) -> Quat {
        match Scaled::new([self.w, self.x, self.y, self.z]) {
            Some(s) => {
                let [w, x, y, z] = s.unit();
                Quat::from_wxyz(w, x, y, z)
            }
            None => Quat::IDENTITY,
        }
    }

    /// Rotates `v` by this (unit) quaternion.
    #[inline]
    pub fn rotate(self, v: Vec3) -> Vec3 {
        // v' = v + w t + q × t with t = 2 (q × v): 2 cross products instead of
        // the 2 full quaternion products of q v q*.
        let q = self.vector();
        let t = q.cross(v) * Fx::TWO;
        v + t * self.w + q.cross(t)
    }

    /// Rotates `v` by the inverse of this (unit) quaternion: world to body.
    #[inline]
    pub fn inverse_rotate(self, v: Vec3) -> Vec3 {
        self.conjugate().rotate(v)
    }

    /// Advances an orientation by the angular velocity `omega` (world space,
    /// rad/s) over `dt` seconds: `q + dt/2 · (0, ω) q`, renormalised. This is
    /// the first-order update used by most real-time engines; the
    /// renormalisation keeps it on the unit sphere.
    pub fn integrate(self, omega: Vec3, dt: Fx) -> Quat {
        let h = dt.scale_pow2(-1);
        let spin = Quat::from_wxyz(Fx::ZERO, omega.x * h, omega.y * h, omega.z * h) * self;
        Quat::from_wxyz(
            self.w + spin.w,
            self.x + spin.x,
            self.y + spin.y,
            self.z + spin.z,
        )
        .normalize()
    }
}

impl Mul for Quat {
    type Output = Quat;
    /// The Hamilton product: `(a * b).rotate(v) == a.rotate(b.rotate(v))`.
    #[inline]
    fn mul(self, o: Quat) -> Quat {
        let a = self;
        Quat::from_wxyz(
            sum4(
                [(a.w, o.w), (a.x, o.x), (a.y, o.y), (a.z, o.z)],
                [false, true, true, true],
            ),
            sum4(
                [(a.w, o.x), (a.x, o.w), (a.y, o.z), (a.z, o.y)],
                [false, false, false, true],
            ),
            sum4(
                [(a.w, o.y), (a.x, o.z), (a.y, o.w), (a.z, o.x)],
                [false, true, false, false],
            ),
            sum4(
                [(a.w, o.z), (a.x, o.y), (a.y, o.x), (a.z, o.w)],
                [false, false, true, false],
            ),
        )
    }
}
