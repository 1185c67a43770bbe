//! Soft constraints: the spring-damper that Erin Catto describes for Box2D
//! v3 ("Solver2D", 2024), a stiffness in hertz and a damping ratio turned
//! into three coefficients for one substep.
//!
//! With `ω = 2π·hertz`, `a₁ = 2ζ + hω`, `a₂ = hω·a₁` and `a₃ = 1/(1 + a₂)`:
//! the position error is fed back at `ω/a₁` per second (`bias_rate`), the
//! effective mass is scaled by `a₂a₃` (`mass_scale`) and a share `a₃` of
//! the accumulated impulse leaks each iteration (`impulse_scale`). A resting
//! load then compresses the contact by about `g/ω²` per unit of weight
//! borne, like a spring of that frequency.
//!
//! **Tall stacks.** The spring is per contact point, and its stiffness is
//! the point's effective mass times `ω²`. A cube's corner point has a small
//! effective mass (about 1/8 kg for two 1 kg cubes, most of the inverse mass
//! being the turning), so a face contact resists *rocking* far less than a
//! rigid one. A column of such contacts buckles under its own weight once
//! it is tall enough (Greenhill's problem): at the default 36 Hz a tower of
//! 20 unit cubes kept awake sinks 74 mm, and its lean doubles about every
//! 80 frames (12 mm at frame 300, 130 mm at 600) until it falls
//! (`scenes::tower_20`); ten cubes stand. Measured for that tower (4 substeps unless said): 60 Hz (the cap
//! at 4 substeps) stands, sinks 26.5 mm and sways up to 32 mm; 6 substeps
//! at 90 Hz stand within 7 mm and sink 12 mm. But every stiffer setting
//! tried also kept `cubes-1000` awake longer (asleep at frame 153 by
//! default, 194 at 42 Hz, 210 with 6 substeps at 90 Hz, never at 60 Hz),
//! and leaking the manifold's mean impulse instead of each point's, or
//! stiffer contacts with the ground alone, did not save the tower. The
//! columns of `cubes-1000` sway the same way (10 cubes high, 0.1 to 0.2 m/s
//! at the top until about frame 150), which is what keeps it awake.

use lockstep_fx::Fx;

/// Spring-damper coefficients of a soft constraint for one substep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Softness {
    /// Position error fed back per second (1/s).
    pub bias_rate: Fx,
    /// Scale of the effective mass.
    pub mass_scale: Fx,
    /// Share of the accumulated impulse that leaks per iteration.
    pub impulse_scale: Fx,
}

impl Softness {
    /// A rigid constraint: no feedback, full mass, no leak.
    pub const RIGID: Softness = Softness {
        bias_rate: Fx::ZERO,
        mass_scale: Fx::ONE,
        impulse_scale: Fx::ZERO,
    };

    /// Softness for stiffness `hertz`, damping ratio `zeta` and substep `h`
    /// (rigid for zero hertz).
    pub fn new(hertz: Fx, zeta: Fx, h: Fx) -> Softness {
        if hertz.is_zero() {
            return Softness::RIGID;
        }
        let omega = Fx::TAU * hertz;
        let a1 = zeta.mul_int(2) + h * omega;
        let a2 = h * omega * a1;
        let a3 = Fx::ONE / (Fx::ONE + a2);
        Softness {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softness_matches_the_closed_form() {
        // 15 Hz, ζ = 10, h = 1/60: ω = 94.25, a1 = 21.57, bias rate = 4.37.
        let s = Softness::new(Fx::from_int(15), Fx::from_int(10), Fx::from_ratio(1, 60));
        assert!(
            (s.bias_rate - Fx::lit("4.3694")).abs() < Fx::lit("0.001"),
            "{}",
            s.bias_rate
        );
        assert!((s.mass_scale + s.impulse_scale - Fx::ONE).abs() < Fx::lit("0.000001"));
        assert_eq!(Softness::new(Fx::ZERO, Fx::ONE, Fx::ONE), Softness::RIGID);
    }
}
