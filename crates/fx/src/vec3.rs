//! `Vec3`: a 3D vector of [`Fx`] for positions, velocities, normals and
//! impulses.
//!
//! Invariants: component arithmetic follows `Fx`'s saturating policy; `dot`
//! and `cross` sum their products at 128-bit precision and round once, so they
//! are exact to 0.5 LSB whenever the result is in range; `length` and
//! each component of `normalize` are within 1 LSB (see [`crate::norm`]).

use crate::norm::Scaled;
use crate::{Fx, Wide};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A 3D vector of Q32.32 components.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Vec3 {
    /// The x component.
    pub x: Fx,
    /// The y component (up, in the engine's convention).
    pub y: Fx,
    /// The z component.
    pub z: Fx,
}

impl Vec3 {
    /// The zero vector.
    pub const ZERO: Vec3 = Vec3::new(Fx::ZERO, Fx::ZERO, Fx::ZERO);
    /// All components one.
    pub const ONE: Vec3 = Vec3::new(Fx::ONE, Fx::ONE, Fx::ONE);
    /// The unit x axis.
    pub const X: Vec3 = Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO);
    /// The unit y axis (up).
    pub const Y: Vec3 = Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO);
    /// The unit z axis.
    pub const Z: Vec3 = Vec3::new(Fx::ZERO, Fx::ZERO, Fx::ONE);

    /// A vector from its components.
    #[inline(always)]
    pub const fn new(x: Fx, y: Fx, z: Fx) -> Vec3 {
        Vec3 { x, y, z }
    }

    /// A vector with every component `v`.
    #[inline(always)]
    pub const fn splat(v: Fx) -> Vec3 {
        Vec3::new(v, v, v)
    }

    /// A vector of integers.
    #[inline(always)]
    pub const fn from_ints(x: i32, y: i32, z: i32) -> Vec3 {
        Vec3::new(Fx::from_int(x), Fx::from_int(y), Fx::from_int(z))
    }

    /// The components as an array `[x, y, z]`.
    #[inline(always)]
    pub const fn to_array(self) -> [Fx; 3] {
        [self.x, self.y, self.z]
    }

    /// A vector from `[x, y, z]`.
    #[inline(always)]
    pub const fn from_array(a: [Fx; 3]) -> Vec3 {
        Vec3::new(a[0], a[1], a[2])
    }

    /// Component `axis` (0 = x, 1 = y, 2 = z); other values give z.
    #[inline(always)]
    pub const fn axis(self, axis: u8) -> Fx {
        match axis {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }

    /// Dot product, rounded once.
    #[inline(always)]
    pub fn dot(self, o: Vec3) -> Fx {
        // Each product lies in [-2^126, 2^126]; saturating sums stay exact
        // whenever the result is representable (and saturate when it is not).
        Wide::dot_saturating(self, o).round_saturating()
    }

    /// Cross product, each component rounded once.
    #[inline(always)]
    pub fn cross(self, o: Vec3) -> Vec3 {
        // Two products of at most 2^126 each: the difference never saturates.
        let c = |p: Fx, q: Fx, r: Fx, s: Fx| {
            Wide::product(p, q)
                .saturating_sub(Wide::product(r, s))
                .round_saturating()
        };
        Vec3::new(
            c(self.y, o.z, self.z, o.y),
            c(self.z, o.x, self.x, o.z),
            c(self.x, o.y, self.y, o.x),
        )
    }

    /// Squared length, rounded once (saturates for lengths above ~46 341).
    #[inline(always)]
    pub fn length_squared(self) -> Fx {
        self.dot(self)
    }

    /// Euclidean length, within 1 LSB.
    #[inline]
    pub fn length(self) -> Fx {
        match Scaled::new(self.to_array()) {
            Some(s) => s.length(),
            None => Fx::ZERO,
        }
    }

    /// The unit vector in this direction, or `None` for the zero vector.
    /// Each component is within 1 LSB of the exact quotient.
    #[inline]
    pub fn try_normalize(self) -> Option<Vec3> {
        Scaled::new(self.to_array()).map(|s| Vec3::from_array(s.unit()))
    }

    /// The unit vector in this direction, or zero for the zero vector.
    #[inline]
    pub fn normalize_or_zero(self) -> Vec3 {
        self.try_normalize().unwrap_or(Vec3::ZERO)
    }

    /// The unit vector and the length together (one square root).
    #[inline]
    pub fn normalize_and_length(self) -> Option<(Vec3, Fx)> {
        Scaled::new(self.to_array()).map(|s| (Vec3::from_array(s.unit()), s.length()))
    }

    /// Distance to `o`.
    #[inline]
    pub fn distance(self, o: Vec3) -> Fx {
        (self - o).length()
    }

    /// Component-wise product.
    #[inline(always)]
    pub fn mul_elem(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }

    /// Component-wise minimum.
    #[inline(always)]
    pub fn min(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x.min(o.x), self.y.min(o.y), self.z.min(o.z))
    }

    /// Component-wise maximum.
    #[inline(always)]
    pub fn max(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x.max(o.x), self.y.max(o.y), self.z.max(o.z))
    }

    /// Component-wise absolute value.
    #[inline(always)]
    pub fn abs(self) -> Vec3 {
        Vec3::new(self.x.abs(), self.y.abs(), self.z.abs())
    }

    /// The largest component.
    #[inline(always)]
    pub fn max_element(self) -> Fx {
        self.x.max(self.y).max(self.z)
    }

    /// The smallest component.
    #[inline(always)]
    pub fn min_element(self) -> Fx {
        self.x.min(self.y).min(self.z)
    }

    /// `self + (o - self) * t`.
    #[inline(always)]
    pub fn lerp(self, o: Vec3, t: Fx) -> Vec3 {
        self + (o - self) * t
    }

    /// `self + v * t`, the step of an explicit integrator.
    #[inline(always)]
    pub fn add_scaled(self, v: Vec3, t: Fx) -> Vec3 {
        self + v * t
    }

    /// Two unit vectors perpendicular to `self` (which should be unit
    /// length) and to each other: `(self, t1, t2)` is a right-handed basis
    /// (`self × t1 = t2`). Branch-light and without a square root: the
    /// construction of Duff et al., "Building an Orthonormal Basis,
    /// Revisited" (JCGT 2017), whose one division is by `1 + |z|`; the
    /// basis is orthonormal to within a few LSB of how unit `self` is.
    pub fn any_orthonormal_pair(self) -> (Vec3, Vec3) {
        let (x, y, z) = (self.x, self.y, self.z);
        let sign = if z.is_negative() {
            Fx::NEG_ONE
        } else {
            Fx::ONE
        };
        let a = Fx::NEG_ONE / (sign + z);
        let b = x * y * a;
        let t1 = Vec3::new(Fx::ONE + sign * x * x * a, sign * b, -(sign * x));
        let t2 = Vec3::new(b, sign + y * y * a, -y);
        (t1, t2)
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl Sub for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl Neg for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}

impl Mul<Fx> for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn mul(self, s: Fx) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}

impl Mul<Vec3> for Fx {
    type Output = Vec3;
    #[inline(always)]
    fn mul(self, v: Vec3) -> Vec3 {
        v * self
    }
}

impl AddAssign for Vec3 {
    #[inline(always)]
    fn add_assign(&mut self, o: Vec3) {
        *self = *self + o;
    }
}

impl SubAssign for Vec3 {
    #[inline(always)]
    fn sub_assign(&mut self, o: Vec3) {
        *self = *self - o;
    }
}

impl MulAssign<Fx> for Vec3 {
    #[inline(always)]
    fn mul_assign(&mut self, s: Fx) {
        *self = *self * s;
    }
}

impl core::iter::Sum for Vec3 {
    fn sum<I: Iterator<Item = Vec3>>(iter: I) -> Vec3 {
        iter.fold(Vec3::ZERO, |a, b| a + b)
    }
}
