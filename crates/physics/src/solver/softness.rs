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
//! being the turning), so a face contact resists *rocking* with about
//! `ω²/8` N·m per radian, far less than a rigid one. When a stack leans,
//! each cube's weight moves towards the lower edge of the face below; if
//! the solver takes the lever arms as they are every step, the lean makes a
//! torque that grows with it, and a column of such contacts buckles under
//! its own weight (Greenhill's problem). A static model of 20 unit cubes
//! with springs of that stiffness buckles below 42 to 48 Hz, and the tower
//! did exactly that when the arms were re-derived every step: at 36 and
//! 42 Hz it fell, at 48 Hz and above it stood. The solver now takes each
//! body's arms in its arm orientation, which follows the body only once it
//! has turned more than `WorldSettings::arm_turn` (`Body::arm_frame`): the
//! springs still follow the bodies, a small lean no longer moves the arms, and
//! the tower stands at the default 36 Hz (`scenes::tower_20`: it sinks
//! 74 mm and leans at most 5 mm over 3 000 frames). Stiffer springs would
//! also have saved it, but they kept `cubes-1000` awake longer (asleep at
//! frame 153 at 36 Hz, 312 at 48 Hz, never at 60 Hz).
//!
//! **How far a stack sinks.** At rest the leak balances the feedback, so
//! each contact of a stack is compressed by its load over `m·ω²`, and the
//! compressions add up the stack: a tower's top sinks in proportion to
//! `1/hertz²` and to the square of its height, whatever the damping ratio,
//! the substeps or `arm_turn`. The 20-cube tower sinks 166, 106, 74 and
//! 42 mm at 24, 30, 36 and 48 Hz (`scene-table --set contact-hertz=H
//! tower-20`): 95.8 mm × (36/hertz)². rapier3d 0.36's contacts are springs
//! of the same kind (30 Hz, ζ = 10, twice as stiff against a fixed body,
//! 4 substeps), and its tower sinks the 106 mm ours does at 30 Hz. Within
//! 10 mm would take about 110 Hz, past the quarter of the substep rate
//! that keeps a spring stable (60 Hz at 4 substeps).
//!
//! **Why a column of cubes sways.** `cubes-1000` falls into 100 columns
//! of 10, and it stays awake because a few of them sway: their tops swing
//! ±60 mm with a period of about two seconds, at 0.1 to 0.2 m/s, above the
//! sleep speed. The sway grows with `h·ω`, the spring's stiffness against
//! the substep: a smaller substep calms it (all asleep at frame 155 with
//! 4 substeps, 129 with 5, 82 with 6, 74 with 8: medians over eight
//! shuffle seeds, `scene-table --seeds 8 --set substeps=N cubes-1000`), as
//! does a softer spring (95 at 24 Hz, but the tower then sinks 166 mm) or
//! a second relaxing pass (87); a stiffer one makes it worse (253 at
//! 48 Hz). The passes cost: 6 substeps run 28% more instructions on
//! `pyramid-15`, a second relaxing pass 21%, so the defaults keep 4
//! substeps and one relaxing pass. The spring is not the
//! whole story: with rapier's settings (30 Hz) ours sleeps at frame 167,
//! rapier at 91, so something else in this solver feeds the sway.

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
