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
//! 75 mm over 3 000 frames). Stiffer springs would also have saved it, but
//! they kept `cubes-1000` awake longer (with the rows swept: asleep at
//! frame 153 at 36 Hz, 312 at 48 Hz, never at 60 Hz).
//!
//! **How far a stack sinks.** At rest the leak balances the feedback, so
//! each contact of a stack is compressed by its load over `m·ω²`, and the
//! compressions add up the stack: a tower's top sinks in proportion to
//! `1/hertz²` and to the square of its height, whatever the damping ratio,
//! the substeps or `arm_turn`. The 20-cube tower sinks 167, 107, 75 and
//! 42 mm at 24, 30, 36 and 48 Hz (`scene-table --set contact-hertz=H
//! tower-20`): 75 mm × (36/hertz)². rapier3d 0.36's contacts are springs
//! of the same kind (30 Hz, ζ = 10, twice as stiff against a fixed body,
//! 4 substeps), and its tower sinks the 106 mm ours does at 30 Hz. Within
//! 10 mm would take about 100 Hz, past the quarter of the substep rate
//! that keeps a spring stable (60 Hz at 4 substeps). At that cap the tower
//! sinks 27 mm, but `stack-sleep` never falls asleep; with the cap raised
//! to half the substep rate, 80 Hz sinks 15 mm (`stack-sleep` never
//! sleeps, `cubes-1000` only at frame 109) and at 100 Hz the tower falls.
//! Leaking only what a row gained since its substep began (the warm start
//! carrying the load rigidly) takes the sink away for stacks of up to five
//! cubes, but from eight up the stack rocks without end (±0.15 m/s) and
//! the 20-cube tower falls; leaking that plus half the carried impulse
//! halves the sink (38 mm), and `stack-sleep` sleeps at frame 134 instead
//! of 76. A position pass after each step's velocity passes, after Box2D
//! v2.4's non-linear Gauss–Seidel (which pushes each point apart on its
//! own, and so tips the tower over here), pushing each manifold apart by a
//! share of its mean overlap beyond 0.5 mm, changes little next to the
//! 75 mm without it: 73.0 mm with four sweeps a step that push a fifth of
//! it, 58.7 mm with eight that push all of it, because within the next
//! step the spring presses most of it back.
//! So the soft contact's sink stays as it is.
//!
//! **Why a column of cubes swayed.** `cubes-1000` falls into 100 columns
//! of 10, and it stayed awake because a few of them swayed: their tops
//! swung ±60 mm with a period of about two seconds, at 0.1 to 0.2 m/s,
//! above the sleep speed, and all 1 000 slept only at frame 155 (median of
//! eight shuffle seeds; rapier: 91). The cause was not the spring: with
//! rapier's settings (30 Hz) ours slept at 167 (now 77). It was the Gauss–Seidel
//! sweeps over a face's four normal rows, which leave the first corner a
//! larger share; the rows are now solved exactly as one block (`block.rs`)
//! and every column comes to rest once its last cube has landed: all 1 000
//! asleep at frame 78 (77–79 over eight seeds; `scene-table --seeds 8
//! cubes-1000`). Before that fix, more substeps (82 with 6) or a second
//! relaxing pass (87) calmed the sway at 28% and 21% more instructions.
//!
//! **The damping ratio.** 5 (Box2D v3 and rapier use 10). With the rows
//! solved exactly, a damping ratio of 10 left a slow rocking in a few of
//! `stack-sleep`'s leaning towers (all asleep from frame 76, 56–162 over
//! 16 seeds), which 5 settles (57, 54–76) along with `many-pyramids` (48
//! → 43) and `cubes-1000` (82 → 78). The sink of a stack does not depend on
//! it.

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
    /// `1/a₂`, the leak over the mass scale: where a soft row settles when
    /// swept until nothing changes, `vn + t = −leak_weight·K·λ` (zero when
    /// rigid; see `block.rs`).
    pub leak_weight: Fx,
}

impl Softness {
    /// A rigid constraint: no feedback, full mass, no leak.
    pub const RIGID: Softness = Softness {
        bias_rate: Fx::ZERO,
        mass_scale: Fx::ONE,
        impulse_scale: Fx::ZERO,
        leak_weight: Fx::ZERO,
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
            leak_weight: Fx::ONE / a2,
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
        // a2 = hω·a1 = 1.5708 · 21.57 = 33.88.
        assert!((s.leak_weight - s.impulse_scale / s.mass_scale).abs() < Fx::lit("0.000001"));
        assert!((s.leak_weight - Fx::lit("0.029515")).abs() < Fx::lit("0.00001"));
        assert_eq!(Softness::new(Fx::ZERO, Fx::ONE, Fx::ONE), Softness::RIGID);
    }
}
