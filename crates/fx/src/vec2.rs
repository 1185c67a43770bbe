//! `Vec2`: a 2D vector of [`Fx`] for games on a plane (an RTS map, a
//! top-down shooter): positions, velocities, directions.
//!
//! Invariants, the same as [`Vec3`](crate::Vec3)'s: component arithmetic
//! follows `Fx`'s saturating policy; `dot` and `perp_dot` sum their
//! products at 128-bit precision and round once, so they are exact to
//! 0.5 LSB whenever the result is in range; `length` and each component of
//! `normalize` are within 1 LSB (see [`crate::norm`]).

use crate::norm::Scaled;
use crate::{Fx, Wide};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A 2D vector of Q32.32 components.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Vec2 {
    /// The x component.
    pub x: Fx,
    /// The y component.
    pub y: Fx,
}

impl Vec2 {
    /// The zero vector.
    pub const ZERO: Vec2 = Vec2::new(Fx::ZERO, Fx::ZERO);
    /// Both components one.
    pub const ONE: Vec2 = Vec2::new(Fx::ONE, Fx::ONE);
    /// The unit x axis.
    pub const X: Vec2 = Vec2::new(Fx::ONE, Fx::ZERO);
    /// The unit y axis.
    pub const Y: Vec2 = Vec2::new(Fx::ZERO, Fx::ONE);

    /// A vector from its components.
    #[inline(always)]
    pub const fn new(x: Fx, y: Fx) -> Vec2 {
        Vec2 { x, y }
    }

    /// A vector with both components `v`.
    #[inline(always)]
    pub const fn splat(v: Fx) -> Vec2 {
        Vec2::new(v, v)
    }

    /// A vector of integers.
    #[inline(always)]
    pub const fn from_ints(x: i32, y: i32) -> Vec2 {
        Vec2::new(Fx::from_int(x), Fx::from_int(y))
    }

    /// The components as an array `[x, y]`.
    #[inline(always)]
    pub const fn to_array(self) -> [Fx; 2] {
        [self.x, self.y]
    }

    /// A vector from `[x, y]`.
    #[inline(always)]
    pub const fn from_array(a: [Fx; 2]) -> Vec2 {
        Vec2::new(a[0], a[1])
    }

    /// Dot product, rounded once.
    #[inline(always)]
    pub fn dot(self, o: Vec2) -> Fx {
        Wide::product(self.x, o.x)
            .saturating_add(Wide::product(self.y, o.y))
            .round_saturating()
    }

    /// The 2D cross product `x·o.y − y·o.x`, rounded once: positive when
    /// `o` turns counter-clockwise from `self`, zero when they are parallel.
    #[inline(always)]
    pub fn perp_dot(self, o: Vec2) -> Fx {
        // Two products of at most 2^126 each: the difference never saturates.
        Wide::product(self.x, o.y)
            .saturating_sub(Wide::product(self.y, o.x))
            .round_saturating()
    }

    /// `self` turned a quarter counter-clockwise: `(−y, x)`.
    #[inline(always)]
    pub fn perp(self) -> Vec2 {
        Vec2::new(-self.y, self.x)
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
    pub fn try_normalize(self) -> Option<Vec2> {
        Scaled::new(self.to_array()).map(|s| Vec2::from_array(s.unit()))
    }

    /// The unit vector in this direction, or zero for the zero vector.
    #[inline]
    pub fn normalize_or_zero(self) -> Vec2 {
        self.try_normalize().unwrap_or(Vec2::ZERO)
    }

    /// The unit vector and the length together (one square root).
    #[inline]
    pub fn normalize_and_length(self) -> Option<(Vec2, Fx)> {
        Scaled::new(self.to_array()).map(|s| (Vec2::from_array(s.unit()), s.length()))
    }

    /// Distance to `o`.
    #[inline]
    pub fn distance(self, o: Vec2) -> Fx {
        (self - o).length()
    }

    /// Component-wise product.
    #[inline(always)]
    pub fn mul_elem(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x * o.x, self.y * o.y)
    }

    /// Component-wise minimum.
    #[inline(always)]
    pub fn min(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x.min(o.x), self.y.min(o.y))
    }

    /// Component-wise maximum.
    #[inline(always)]
    pub fn max(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x.max(o.x), self.y.max(o.y))
    }

    /// Component-wise absolute value.
    #[inline(always)]
    pub fn abs(self) -> Vec2 {
        Vec2::new(self.x.abs(), self.y.abs())
    }

    /// The larger component.
    #[inline(always)]
    pub fn max_element(self) -> Fx {
        self.x.max(self.y)
    }

    /// The smaller component.
    #[inline(always)]
    pub fn min_element(self) -> Fx {
        self.x.min(self.y)
    }

    /// `self + (o - self) * t`.
    #[inline(always)]
    pub fn lerp(self, o: Vec2, t: Fx) -> Vec2 {
        self + (o - self) * t
    }

    /// `self + v * t`, the step of an explicit integrator.
    #[inline(always)]
    pub fn add_scaled(self, v: Vec2, t: Fx) -> Vec2 {
        self + v * t
    }
}

impl Add for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
}

impl Sub for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
}

impl Neg for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn neg(self) -> Vec2 {
        Vec2::new(-self.x, -self.y)
    }
}

impl Mul<Fx> for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn mul(self, s: Fx) -> Vec2 {
        Vec2::new(self.x * s, self.y * s)
    }
}

impl Mul<Vec2> for Fx {
    type Output = Vec2;
    #[inline(always)]
    fn mul(self, v: Vec2) -> Vec2 {
        v * self
    }
}

impl AddAssign for Vec2 {
    #[inline(always)]
    fn add_assign(&mut self, o: Vec2) {
        *self = *self + o;
    }
}

impl SubAssign for Vec2 {
    #[inline(always)]
    fn sub_assign(&mut self, o: Vec2) {
        *self = *self - o;
    }
}

impl MulAssign<Fx> for Vec2 {
    #[inline(always)]
    fn mul_assign(&mut self, s: Fx) {
        *self = *self * s;
    }
}

impl core::iter::Sum for Vec2 {
    fn sum<I: Iterator<Item = Vec2>>(iter: I) -> Vec2 {
        iter.fold(Vec2::ZERO, |a, b| a + b)
    }
}
