//! Collision shapes and their mass properties.
//!
//! A shape is defined in its body's local frame, centred on the body's
//! position: a box by its half extents, a sphere by its radius, a capsule by
//! the half length of its core segment (along local y) and its radius, a
//! half-space by nothing at all (its surface is the local plane `y = 0` and matter lies at
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
    /// A capsule: every point within `radius` of the segment along the local
    /// y axis from `−half_height` to `+half_height` (a cylinder with
    /// hemispherical ends; the usual shape of characters and units).
    Capsule {
        /// Half the length of the core segment (positive).
        half_height: Fx,
        /// Radius (positive).
        radius: Fx,
    },
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
    /// A box of the given full size along x, y and z (a 1 m cube is
    /// `box_with_size(Vec3::ONE)`); [`Shape::Box`] itself holds half of it.
    pub fn box_with_size(size: Vec3) -> Shape {
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
            Shape::Capsule {
                half_height: h,
                radius: r,
            } => {
                // A cylinder of height 2h and two hemispheres (one sphere).
                let r2 = r * r;
                let cylinder = density * Fx::PI * r2 * h.mul_int(2);
                let sphere = density * (Fx::PI * r2 * r).mul_int(4).div_int(3);
                let mass = cylinder + sphere;
                // About the axis: mr²/2 for the cylinder, 2mr²/5 for the
                // sphere. Across: m(h²/3 + r²/4) for the cylinder; each
                // hemisphere 2mr²/5 about its flat face's diameter, moved out
                // by h (its centre of mass 3r/8 beyond it).
                let axial = (cylinder * r2).scale_pow2(-1) + (sphere * r2).mul_int(2).div_int(5);
                let across = cylinder * (h * h).div_int(3)
                    + (cylinder * r2).scale_pow2(-2)
                    + sphere
                        * ((r2.mul_int(2)).div_int(5) + h * h + (h * r).mul_int(3).scale_pow2(-2));
                MassProperties {
                    mass,
                    inertia: Vec3::new(across, axial, across),
                }
            }
            Shape::HalfSpace => MassProperties {
                mass: Fx::ZERO,
                inertia: Vec3::ZERO,
            },
        }
    }

    /// The distance from the centre to the farthest point of the shape
    /// (zero for a half-space).
    pub fn reach(&self) -> Fx {
        match *self {
            Shape::Box { half_extents } => half_extents.length(),
            Shape::Sphere { radius } => radius,
            Shape::Capsule {
                half_height,
                radius,
            } => half_height + radius,
            Shape::HalfSpace => Fx::ZERO,
        }
    }

    /// Whether the shape's dimensions are usable: strictly positive and below
    /// 2^20 m, so products of a few dimensions stay in range.
    pub fn is_valid(&self) -> bool {
        let ok = |v: Fx| v.is_positive() && v < Fx::from_int(1 << 20);
        match *self {
            Shape::Box { half_extents: h } => ok(h.x) && ok(h.y) && ok(h.z),
            Shape::Sphere { radius } => ok(radius),
            Shape::Capsule {
                half_height,
                radius,
            } => ok(half_height) && ok(radius),
            Shape::HalfSpace => true,
        }
    }

    /// Stable numeric tag used by the canonical encoding.
    pub(crate) fn tag(&self) -> u8 {
        match self {
            Shape::Box { .. } => 0,
            Shape::Sphere { .. } => 1,
            Shape::HalfSpace => 2,
            Shape::Capsule { .. } => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_cube_and_sphere() {
        let cube = Shape::box_with_size(Vec3::splat(Fx::ONE)).mass_properties(Fx::ONE);
        assert_eq!(cube.mass, Fx::ONE);
        // 1/6 for a unit cube, within one rounding.
        let expected = Fx::from_ratio(1, 6);
        assert!((cube.inertia.x - expected).abs() <= Fx::from_bits(2));
        let ball = Shape::Sphere { radius: Fx::ONE }.mass_properties(Fx::from_int(3));
        // 4π within a few LSB.
        assert!((ball.mass - Fx::PI.mul_int(4)).abs() <= Fx::from_bits(8));
    }

    #[test]
    fn capsule_mass_and_inertia() {
        // r = 1, h = 1: a cylinder of mass 2π and a sphere of 4π/3.
        let c = Shape::Capsule {
            half_height: Fx::ONE,
            radius: Fx::ONE,
        }
        .mass_properties(Fx::ONE);
        let (mc, ms) = (Fx::PI.mul_int(2), Fx::PI.mul_int(4).div_int(3));
        let close = |a: Fx, b: Fx| (a - b).abs() <= Fx::from_bits(64);
        assert!(close(c.mass, mc + ms), "{:?}", c.mass);
        // About the axis: mc/2 + 2ms/5.
        assert!(close(
            c.inertia.y,
            mc.scale_pow2(-1) + ms.mul_int(2).div_int(5)
        ));
        // Across: mc(1/3 + 1/4) + ms(2/5 + 1 + 3/4).
        let across = mc * Fx::from_ratio(7, 12) + ms * Fx::from_ratio(43, 20);
        assert!(
            close(c.inertia.x, across),
            "{:?} vs {across:?}",
            c.inertia.x
        );
        assert_eq!(c.inertia.x, c.inertia.z);
        // A zero-height capsule is a sphere.
        let s = Shape::Sphere { radius: Fx::ONE }.mass_properties(Fx::ONE);
        let flat = Shape::Capsule {
            half_height: Fx::from_bits(1),
            radius: Fx::ONE,
        }
        .mass_properties(Fx::ONE);
        assert!((flat.mass - s.mass).abs() <= Fx::from_bits(1 << 8));
    }
}
