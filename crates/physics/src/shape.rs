//! Collision shapes and their mass properties.
//!
//! A shape is defined in its body's local frame, centred on the body's
//! position: a box by its half extents, a sphere by its radius, a half-space by
//! nothing at all (its surface is the local plane `y = 0` and matter lies at
//! `y < 0`; rotate the body to tilt it). Half-spaces are static only. Mass and
//! inertia come from the shape and a density, computed in fixed point and
//! saturating, so absurd sizes give huge (never wrapped) values.

use lockstep_fx::{Fx, Vec3};

/// A collision shape in its body's local frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A box with the given half extents (all positive).
    Box {
        /// Half the size along each local axis.
        half_extents: Vec3,
    },
    /// A sphere of the given radius.
    Sphere {
        /// Radius (positive).
        radius: Fx,
    },
    /// The half-space below the local plane `y = 0` (static bodies only): the
    /// ground, or a wall or slope when rotated.
    HalfSpace,
}

/// Mass and local inertia of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MassProperties {
    /// Mass in kilograms.
    pub mass: Fx,
    /// Principal moments of inertia about the local axes.
    pub inertia: Vec3,
}

impl Shape {
    /// A box from its full size along x, y, z.
    pub fn cuboid(size: Vec3) -> Shape {
        Shape::Box {
            half_extents: size.abs() * Fx::HALF,
        }
    }

    /// Mass properties at the given density (kg/m³); a half-space has none.
    pub fn mass_properties(&self, density: Fx) -> MassProperties {
        match *self {
            Shape::Box { half_extents: h } => {
                let mass = density * (h.x * h.y * h.z).mul_int(8);
                let (x2, y2, z2) = (h.x * h.x, h.y * h.y, h.z * h.z);
                // I = m/3 · (b² + c²) for half extents b, c.
                let third = mass.div_int(3);
                MassProperties {
                    mass,
                    inertia: Vec3::new(third * (y2 + z2), third * (x2 + z2), third * (x2 + y2)),
                }
            }
            Shape::Sphere { radius: r } => {
                let volume = (Fx::PI * r * r * r).mul_int(4).div_int(3);
                let mass = density * volume;
                let i = (mass * r * r).mul_int(2).div_int(5);
                MassProperties {
                    mass,
                    inertia: Vec3::splat(i),
                }
            }
            Shape::HalfSpace => MassProperties {
                mass: Fx::ZERO,
                inertia: Vec3::ZERO,
            },
        }
    }

    /// Whether the shape's dimensions are usable: strictly positive and below
    /// 2^20 m, so products of a few dimensions stay in range.
    pub fn is_valid(&self) -> bool {
        let ok = |v: Fx| v.is_positive() && v < Fx::from_int(1 << 20);
        match *self {
            Shape::Box { half_extents: h } => ok(h.x) && ok(h.y) && ok(h.z),
            Shape::Sphere { radius } => ok(radius),
            Shape::HalfSpace => true,
        }
    }

    /// Stable numeric tag used by the canonical encoding.
    pub(crate) fn tag(&self) -> u8 {
        match self {
            Shape::Box { .. } => 0,
            Shape::Sphere { .. } => 1,
            Shape::HalfSpace => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_cube_and_sphere() {
        let cube = Shape::cuboid(Vec3::splat(Fx::ONE)).mass_properties(Fx::ONE);
        assert_eq!(cube.mass, Fx::ONE);
        // 1/6 for a unit cube, within one rounding.
        let expected = Fx::from_ratio(1, 6);
        assert!((cube.inertia.x - expected).abs() <= Fx::from_bits(2));
        let ball = Shape::Sphere { radius: Fx::ONE }.mass_properties(Fx::from_int(3));
        // 4π within a few LSB.
        assert!((ball.mass - Fx::PI.mul_int(4)).abs() <= Fx::from_bits(8));
    }
}
