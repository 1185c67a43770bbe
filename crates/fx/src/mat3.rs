//! `Mat3`: a 3×3 matrix of [`Fx`], stored as rows, for rotations and inertia
//! tensors.
//!
//! Invariants: products sum their terms at 128-bit precision and round once
//! per entry (via [`Vec3::dot`]); nothing here allocates or panics.

use crate::{Fx, Quat, Vec3};
use core::ops::{Add, Mul, Sub};

/// A 3×3 matrix, row-major: `rows[i]` is row `i`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Mat3 {
    /// The three rows.
    pub rows: [Vec3; 3],
}

impl Default for Mat3 {
    fn default() -> Mat3 {
        Mat3::IDENTITY
    }
}

impl Mat3 {
    /// The identity matrix.
    pub const IDENTITY: Mat3 = Mat3::from_rows(Vec3::X, Vec3::Y, Vec3::Z);
    /// The zero matrix.
    pub const ZERO: Mat3 = Mat3::from_rows(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);

    /// A matrix from its rows.
    #[inline(always)]
    pub const fn from_rows(r0: Vec3, r1: Vec3, r2: Vec3) -> Mat3 {
        Mat3 { rows: [r0, r1, r2] }
    }

    /// A matrix from its columns.
    #[inline(always)]
    pub const fn from_cols(c0: Vec3, c1: Vec3, c2: Vec3) -> Mat3 {
        Mat3::from_rows(
            Vec3::new(c0.x, c1.x, c2.x),
            Vec3::new(c0.y, c1.y, c2.y),
            Vec3::new(c0.z, c1.z, c2.z),
        )
    }

    /// The diagonal matrix `diag(d.x, d.y, d.z)`.
    #[inline(always)]
    pub const fn from_diagonal(d: Vec3) -> Mat3 {
        Mat3::from_rows(
            Vec3::new(d.x, Fx::ZERO, Fx::ZERO),
            Vec3::new(Fx::ZERO, d.y, Fx::ZERO),
            Vec3::new(Fx::ZERO, Fx::ZERO, d.z),
        )
    }

    /// The cross-product matrix `[v]×`: `skew(v) * u == v.cross(u)`.
    #[inline(always)]
    pub fn skew(v: Vec3) -> Mat3 {
        Mat3::from_rows(
            Vec3::new(Fx::ZERO, -v.z, v.y),
            Vec3::new(v.z, Fx::ZERO, -v.x),
            Vec3::new(-v.y, v.x, Fx::ZERO),
        )
    }

    /// The rotation matrix of a unit quaternion.
    pub fn from_quat(q: Quat) -> Mat3 {
        let (w, x, y, z) = (q.w, q.x, q.y, q.z);
        let (x2, y2, z2) = (x * Fx::TWO, y * Fx::TWO, z * Fx::TWO);
        let (xx, yy, zz) = (x * x2, y * y2, z * z2);
        let (xy, xz, yz) = (x * y2, x * z2, y * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        Mat3::from_rows(
            Vec3::new(Fx::ONE - (yy + zz), xy - wz, xz + wy),
            Vec3::new(xy + wz, Fx::ONE - (xx + zz), yz - wx),
            Vec3::new(xz - wy, yz + wx, Fx::ONE - (xx + yy)),
        )
    }

    /// Column `i` (0, 1 or 2; other values give column 2).
    #[inline(always)]
    pub fn col(&self, i: u8) -> Vec3 {
        Vec3::new(
            self.rows[0].axis(i),
            self.rows[1].axis(i),
            self.rows[2].axis(i),
        )
    }

    /// The diagonal.
    #[inline(always)]
    pub fn diagonal(&self) -> Vec3 {
        Vec3::new(self.rows[0].x, self.rows[1].y, self.rows[2].z)
    }

    /// The transpose.
    #[inline(always)]
    pub fn transpose(&self) -> Mat3 {
        Mat3::from_cols(self.rows[0], self.rows[1], self.rows[2])
    }

    /// `self * v`.
    #[inline(always)]
    pub fn mul_vec3(&self, v: Vec3) -> Vec3 {
        Vec3::new(
            self.rows[0].dot(v),
            self.rows[1].dot(v),
            self.rows[2].dot(v),
        )
    }

    /// `selfᵀ * v`: each entry is a column of `self` dotted with `v`.
    #[inline(always)]
    pub fn transpose_mul_vec3(&self, v: Vec3) -> Vec3 {
        Vec3::new(self.col(0).dot(v), self.col(1).dot(v), self.col(2).dot(v))
    }

    /// `self * o`.
    pub fn mul_mat3(&self, o: &Mat3) -> Mat3 {
        let t = o.transpose();
        Mat3::from_rows(
            t.mul_vec3(self.rows[0]),
            t.mul_vec3(self.rows[1]),
            t.mul_vec3(self.rows[2]),
        )
    }

    /// Every entry times `s`.
    #[inline(always)]
    pub fn scale(&self, s: Fx) -> Mat3 {
        Mat3::from_rows(self.rows[0] * s, self.rows[1] * s, self.rows[2] * s)
    }

    /// `R · diag(d) · Rᵀ` for a rotation `R = self`: a body-space diagonal
    /// inertia (or inverse inertia) tensor expressed in world space. The
    /// result is exactly symmetric.
    pub fn rotate_diagonal(&self, d: Vec3) -> Mat3 {
        let r = &self.rows;
        // Entry (i, j) = Σ_k R[i][k] d[k] R[j][k].
        let scaled = [r[0].mul_elem(d), r[1].mul_elem(d), r[2].mul_elem(d)];
        let e00 = scaled[0].dot(r[0]);
        let e01 = scaled[0].dot(r[1]);
        let e02 = scaled[0].dot(r[2]);
        let e11 = scaled[1].dot(r[1]);
        let e12 = scaled[1].dot(r[2]);
        let e22 = scaled[2].dot(r[2]);
        Mat3::from_rows(
            Vec3::new(e00, e01, e02),
            Vec3::new(e01, e11, e12),
            Vec3::new(e02, e12, e22),
        )
    }

    /// The determinant.
    pub fn determinant(&self) -> Fx {
        self.rows[0].dot(self.rows[1].cross(self.rows[2]))
    }

    /// The inverse, or `None` if the computed determinant is zero. The adjugate
    /// is exact to 0.5 LSB per entry before the division by the determinant, so
    /// precision degrades as the matrix nears singularity: a singular matrix
    /// whose rounded determinant is a few LSB gives huge (possibly saturated)
    /// entries rather than `None`. Check the determinant against a tolerance
    /// first where that matters.
    pub fn inverse(&self) -> Option<Mat3> {
        let [a, b, c] = self.rows;
        // The columns of the inverse are the cross products of the rows over
        // the determinant: row i · column j = det · δij.
        let c0 = b.cross(c);
        let c1 = c.cross(a);
        let c2 = a.cross(b);
        let det = a.dot(c0);
        if det.is_zero() {
            return None;
        }
        let inv = |v: Vec3| Vec3::new(v.x / det, v.y / det, v.z / det);
        Some(Mat3::from_cols(inv(c0), inv(c1), inv(c2)))
    }
}

impl Mul<Vec3> for Mat3 {
    type Output = Vec3;
    #[inline(always)]
    fn mul(self, v: Vec3) -> Vec3 {
        self.mul_vec3(v)
    }
}

impl Mul for Mat3 {
    type Output = Mat3;
    #[inline]
    fn mul(self, o: Mat3) -> Mat3 {
        self.mul_mat3(&o)
    }
}

impl Add for Mat3 {
    type Output = Mat3;
    #[inline]
    fn add(self, o: Mat3) -> Mat3 {
        Mat3::from_rows(
            self.rows[0] + o.rows[0],
            self.rows[1] + o.rows[1],
            self.rows[2] + o.rows[2],
        )
    }
}

impl Sub for Mat3 {
    type Output = Mat3;
    #[inline]
    fn sub(self, o: Mat3) -> Mat3 {
        Mat3::from_rows(
            self.rows[0] - o.rows[0],
            self.rows[1] - o.rows[1],
            self.rows[2] - o.rows[2],
        )
    }
}
