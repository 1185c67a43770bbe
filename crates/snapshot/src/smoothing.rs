//! Visual error smoothing: when what a viewer simulates or extrapolates is
//! corrected (a state update snaps a body, a new snapshot moves the
//! extrapolation), the body is not drawn jumping; the jump becomes an
//! error drawn on top of the corrected pose that shrinks every frame.
//!
//! The error shrinks by a factor that depends on its size, as state
//! synchronization does it: 0.95 a frame while it is under 25 cm (small
//! corrections fade over about a second), 0.85 from 1 m (a large one is
//! gone in a few frames rather than dragging across the scene), blended
//! linearly in between. Orientation errors shrink by the same factor
//! toward no rotation.
//!
//! Invariants: integer (`Fx`) arithmetic only; an error never grows by
//! itself, and one under a micrometre (and a ten-thousandth of a radian)
//! is dropped, so a body at rest is drawn exactly where it is.

use lockstep_fx::{Fx, Quat, Vec3};

use crate::interpolate::Pose;

/// How fast errors fade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smoothing {
    /// Errors up to this long fade by `small_factor` a frame (0.25 m).
    pub small: Fx,
    /// Errors from this long fade by `large_factor` a frame (1 m).
    pub large: Fx,
    /// The factor for small errors (0.95).
    pub small_factor: Fx,
    /// The factor for large errors (0.85).
    pub large_factor: Fx,
}

impl Default for Smoothing {
    fn default() -> Smoothing {
        Smoothing {
            small: Fx::lit("0.25"),
            large: Fx::ONE,
            small_factor: Fx::lit("0.95"),
            large_factor: Fx::lit("0.85"),
        }
    }
}

impl Smoothing {
    /// The factor an error of `length` shrinks by this frame.
    pub fn factor(&self, length: Fx) -> Fx {
        if length <= self.small {
            return self.small_factor;
        }
        if length >= self.large {
            return self.large_factor;
        }
        let span = self.large.saturating_sub(self.small);
        let t = length.saturating_sub(self.small).saturating_div(span);
        self.small_factor.saturating_add(
            self.large_factor
                .saturating_sub(self.small_factor)
                .saturating_mul(t),
        )
    }
}

/// Each body's visual error.
#[derive(Debug, Clone)]
pub struct Smoother {
    settings: Smoothing,
    errors: Vec<(Vec3, Quat)>,
}

/// Below this an error is dropped.
const TINY_POSITION: Fx = Fx::from_bits(4_295); // 1 µm
const TINY_ROTATION: Fx = Fx::from_bits(429_497); // 1e-4

impl Smoother {
    /// No errors yet, for `bodies` bodies.
    pub fn new(settings: Smoothing, bodies: usize) -> Smoother {
        Smoother {
            settings,
            errors: vec![(Vec3::ZERO, Quat::IDENTITY); bodies],
        }
    }

    /// Body `i` was corrected from `before` to `after`: it keeps being
    /// drawn where it was, and the difference fades from the next frame.
    pub fn correct(&mut self, i: usize, before: &Pose, after: &Pose) {
        let Some((ep, eq)) = self.errors.get_mut(i) else {
            return;
        };
        // Drawn: after + error. Keep drawing `before + old error`.
        *ep += before.position - after.position;
        *eq = (*eq * before.orientation * after.orientation.conjugate()).normalize();
    }

    /// Shrinks every error by its factor (once a frame).
    pub fn decay(&mut self) {
        for (ep, eq) in &mut self.errors {
            let length = ep.length();
            if length <= TINY_POSITION {
                *ep = Vec3::ZERO;
            } else {
                *ep *= self.settings.factor(length);
            }
            // The rotation error's size: twice the vector part's length.
            let w = if eq.w.is_negative() {
                Quat {
                    w: eq.w.saturating_neg(),
                    x: eq.x.saturating_neg(),
                    y: eq.y.saturating_neg(),
                    z: eq.z.saturating_neg(),
                }
            } else {
                *eq
            };
            let angle = w.vector().length().saturating_mul(Fx::TWO);
            if angle <= TINY_ROTATION {
                *eq = Quat::IDENTITY;
                continue;
            }
            let f = self.settings.factor(length.max(angle));
            let g = Fx::ONE.saturating_sub(f);
            *eq = Quat {
                w: w.w.saturating_mul(f).saturating_add(g),
                x: w.x.saturating_mul(f),
                y: w.y.saturating_mul(f),
                z: w.z.saturating_mul(f),
            }
            .normalize();
        }
    }

    /// Where to draw body `i` whose corrected pose is `pose`.
    pub fn shown(&self, i: usize, pose: &Pose) -> Pose {
        match self.errors.get(i) {
            Some((ep, eq)) => Pose {
                position: pose.position + *ep,
                orientation: (*eq * pose.orientation).normalize(),
                visible: pose.visible,
            },
            None => *pose,
        }
    }

    /// Body `i`'s position error now.
    pub fn position_error(&self, i: usize) -> Vec3 {
        self.errors.get(i).map_or(Vec3::ZERO, |e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_errors_fade_slowly_large_ones_fast() {
        let s = Smoothing::default();
        assert_eq!(s.factor(Fx::lit("0.1")), Fx::lit("0.95"));
        assert_eq!(s.factor(Fx::from_int(3)), Fx::lit("0.85"));
        let mid = s.factor(Fx::lit("0.625"));
        assert!(
            (mid.saturating_sub(Fx::lit("0.9"))).abs() < Fx::lit("0.0001"),
            "{mid:?}"
        );
    }

    #[test]
    fn a_correction_is_drawn_where_it_was_then_fades_away() {
        let mut sm = Smoother::new(Smoothing::default(), 1);
        let before = Pose::new(
            Vec3::new(Fx::from_int(2), Fx::ZERO, Fx::ZERO),
            Quat::IDENTITY,
        );
        let turned = Quat::from_axis_angle(Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO), Fx::lit("0.3"));
        let after = Pose::new(Vec3::ZERO, turned);
        sm.correct(0, &before, &after);
        let drawn = sm.shown(0, &after);
        assert!((drawn.position.x.saturating_sub(Fx::from_int(2))).abs() < Fx::lit("0.0001"));
        assert!(drawn.orientation.dot(Quat::IDENTITY) > Fx::lit("0.9999"));
        // 0.85 while over a metre, then 0.95: about 300 frames to 1 µm.
        for _ in 0..400 {
            sm.decay();
        }
        let drawn = sm.shown(0, &after);
        assert_eq!(drawn.position, Vec3::ZERO);
        assert!(drawn.orientation.dot(turned) > Fx::lit("0.9999"));
    }
}
