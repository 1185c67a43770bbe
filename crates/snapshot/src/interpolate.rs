//! Snapshot interpolation for a viewer: a buffer of received snapshots,
//! each stamped with the sender's frame, sampled a fixed delay behind the
//! newest time, so the view moves smoothly between snapshots even when one
//! or two are lost.
//!
//! Positions are interpolated linearly or with a cubic Hermite spline
//! through the snapshots' velocities; orientations by spherical linear
//! interpolation along the shorter arc. Past the newest snapshot the view
//! is extrapolated from its velocity for at most `max_extrapolation` and
//! then held.
//!
//! Invariants: integer (`Fx`) arithmetic only; snapshots are kept in frame
//! order, at most `capacity` of them (older ones are dropped first); a
//! sample never reads a snapshot newer than it needs.

use std::collections::VecDeque;

use lockstep_fx::{Fx, Quat, Vec3};

use crate::quantize::{Bounds, QuantBody};

/// How positions move between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// A straight line at constant speed.
    Linear,
    /// A cubic Hermite spline matching both snapshots' velocities.
    Hermite,
}

/// One body as the viewer draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pose {
    /// Where it is.
    pub position: Vec3,
    /// How it is turned.
    pub orientation: Quat,
}

/// The delay that survives two lost snapshots in a row: three send
/// intervals plus the jitter (350 ms at 10 Hz with 50 ms of jitter, 150 ms
/// at 30 Hz, 85 ms at 60 Hz).
pub fn playout_delay_micros(send_interval_micros: u64, jitter_micros: u64) -> u64 {
    3 * send_interval_micros + jitter_micros
}

/// The viewer's buffer.
#[derive(Debug, Clone)]
pub struct Interpolator {
    bounds: Bounds,
    tick_micros: u64,
    curve: Curve,
    max_extrapolation_micros: u64,
    capacity: usize,
    snapshots: VecDeque<(u32, Vec<QuantBody>)>,
}

impl Interpolator {
    /// A buffer for snapshots coded with `bounds`, frames `tick_micros`
    /// apart, moving positions along `curve`, extrapolating at most
    /// `max_extrapolation_micros` past the newest snapshot.
    pub fn new(
        bounds: Bounds,
        tick_micros: u64,
        curve: Curve,
        max_extrapolation_micros: u64,
    ) -> Interpolator {
        Interpolator {
            bounds,
            tick_micros: tick_micros.max(1),
            curve,
            max_extrapolation_micros,
            capacity: 64,
            snapshots: VecDeque::new(),
        }
    }

    /// Adds the snapshot of `frame` (late or duplicated ones are placed in
    /// order or ignored).
    pub fn push(&mut self, frame: u32, bodies: Vec<QuantBody>) {
        let at = self.snapshots.partition_point(|(f, _)| *f < frame);
        if self.snapshots.get(at).is_some_and(|(f, _)| *f == frame) {
            return;
        }
        self.snapshots.insert(at, (frame, bodies));
        while self.snapshots.len() > self.capacity {
            self.snapshots.pop_front();
        }
    }

    /// The newest frame held.
    pub fn newest(&self) -> Option<u32> {
        self.snapshots.back().map(|(f, _)| *f)
    }

    /// The scene at `time_micros` on the sender's timeline (frame `f` is at
    /// `f · tick`); `None` before the first snapshot's time.
    pub fn sample(&self, time_micros: u64) -> Option<Vec<Pose>> {
        let tick = self.tick_micros;
        let after = self
            .snapshots
            .partition_point(|(f, _)| u64::from(*f) * tick <= time_micros);
        if after == 0 {
            return None;
        }
        let (f0, a) = &self.snapshots[after - 1];
        let t0 = u64::from(*f0) * tick;
        let Some((f1, b)) = self.snapshots.get(after) else {
            // Past the newest: extrapolate along the velocity, capped.
            let ahead = (time_micros - t0).min(self.max_extrapolation_micros);
            let dt = Fx::from_ratio(ahead as i64, 1_000_000);
            return Some(
                a.iter()
                    .map(|q| {
                        let p = q.position(&self.bounds);
                        let v = q.velocity(&self.bounds);
                        Pose {
                            position: p + v * dt,
                            orientation: q.orientation(&self.bounds),
                        }
                    })
                    .collect(),
            );
        };
        let t1 = u64::from(*f1) * tick;
        let span = (t1 - t0).max(1);
        let s = Fx::from_ratio((time_micros - t0) as i64, span as i64);
        let span_s = Fx::from_ratio(span as i64, 1_000_000);
        Some(
            a.iter()
                .zip(b.iter())
                .map(|(qa, qb)| {
                    let (pa, pb) = (qa.position(&self.bounds), qb.position(&self.bounds));
                    let position = match self.curve {
                        Curve::Linear => pa + (pb - pa) * s,
                        Curve::Hermite => hermite(
                            pa,
                            qa.velocity(&self.bounds) * span_s,
                            pb,
                            qb.velocity(&self.bounds) * span_s,
                            s,
                        ),
                    };
                    Pose {
                        position,
                        orientation: slerp(
                            qa.orientation(&self.bounds),
                            qb.orientation(&self.bounds),
                            s,
                        ),
                    }
                })
                .collect(),
        )
    }
}

/// The cubic Hermite point at `s ∈ [0, 1]` between `p0` (tangent `m0`) and
/// `p1` (tangent `m1`), tangents already scaled by the interval.
fn hermite(p0: Vec3, m0: Vec3, p1: Vec3, m1: Vec3, s: Fx) -> Vec3 {
    let s2 = s.saturating_mul(s);
    let s3 = s2.saturating_mul(s);
    let two = Fx::TWO;
    let three = Fx::from_int(3);
    let h00 = two
        .saturating_mul(s3)
        .saturating_sub(three.saturating_mul(s2))
        .saturating_add(Fx::ONE);
    let h10 = s3.saturating_sub(two.saturating_mul(s2)).saturating_add(s);
    let h01 = three
        .saturating_mul(s2)
        .saturating_sub(two.saturating_mul(s3));
    let h11 = s3.saturating_sub(s2);
    p0 * h00 + m0 * h10 + p1 * h01 + m1 * h11
}

/// Spherical linear interpolation from `a` to `b` along the shorter arc;
/// nearly equal rotations are blended linearly and normalized.
pub fn slerp(a: Quat, b: Quat, s: Fx) -> Quat {
    let mut d = a.dot(b);
    let b = if d.is_negative() {
        d = d.saturating_neg();
        Quat {
            w: b.w.saturating_neg(),
            x: b.x.saturating_neg(),
            y: b.y.saturating_neg(),
            z: b.z.saturating_neg(),
        }
    } else {
        b
    };
    let blend = |wa: Fx, wb: Fx| Quat {
        w: a.w
            .saturating_mul(wa)
            .saturating_add(b.w.saturating_mul(wb)),
        x: a.x
            .saturating_mul(wa)
            .saturating_add(b.x.saturating_mul(wb)),
        y: a.y
            .saturating_mul(wa)
            .saturating_add(b.y.saturating_mul(wb)),
        z: a.z
            .saturating_mul(wa)
            .saturating_add(b.z.saturating_mul(wb)),
    };
    if d > Fx::lit("0.9995") {
        return blend(Fx::ONE.saturating_sub(s), s).normalize();
    }
    let theta = d.min(Fx::ONE).acos();
    let sin_theta = theta.sin();
    let wa = Fx::ONE
        .saturating_sub(s)
        .saturating_mul(theta)
        .sin()
        .saturating_div(sin_theta);
    let wb = s.saturating_mul(theta).sin().saturating_div(sin_theta);
    blend(wa, wb).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(x: i32, vx: i32) -> QuantBody {
        QuantBody::new(
            &crate::BodyState {
                position: Vec3::new(Fx::from_int(x), Fx::ONE, Fx::ZERO),
                orientation: Quat::IDENTITY,
                linear_velocity: Vec3::new(Fx::from_int(vx), Fx::ZERO, Fx::ZERO),
                angular_velocity: Vec3::ZERO,
                at_rest: false,
            },
            &Bounds::cubes(),
        )
    }

    #[test]
    fn halfway_between_two_snapshots_is_halfway() {
        let mut i = Interpolator::new(Bounds::cubes(), 10_000, Curve::Linear, 0);
        i.push(0, vec![body(0, 0)]);
        i.push(10, vec![body(10, 0)]);
        let p = i.sample(50_000).unwrap()[0].position;
        assert_eq!(p.x, Fx::from_int(5));
        assert!(i.sample(0).is_some());
    }

    #[test]
    fn hermite_follows_the_velocities_and_extrapolation_is_capped() {
        let mut i = Interpolator::new(Bounds::cubes(), 100_000, Curve::Hermite, 200_000);
        // 1 m/s for 1 s: the spline is the straight line.
        i.push(0, vec![body(0, 1)]);
        i.push(10, vec![body(1, 1)]);
        let p = i.sample(250_000).unwrap()[0].position;
        assert!(
            (p.x.saturating_sub(Fx::lit("0.25"))).abs() < Fx::lit("0.002"),
            "{p:?}"
        );
        // 0.2 s past the newest at most.
        let far = i.sample(5_000_000).unwrap()[0].position;
        assert!(
            (far.x.saturating_sub(Fx::lit("1.2"))).abs() < Fx::lit("0.002"),
            "{far:?}"
        );
    }

    #[test]
    fn slerp_takes_the_short_way_and_hits_both_ends() {
        let a = Quat::IDENTITY;
        let b = Quat::from_axis_angle(Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO), Fx::FRAC_PI_2);
        let mid = slerp(a, b, Fx::HALF);
        let want = Quat::from_axis_angle(Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO), Fx::FRAC_PI_4);
        assert!(mid.dot(want) > Fx::lit("0.9999"), "{mid:?}");
        let neg = Quat {
            w: b.w.saturating_neg(),
            x: b.x.saturating_neg(),
            y: b.y.saturating_neg(),
            z: b.z.saturating_neg(),
        };
        assert!(slerp(a, neg, Fx::HALF).dot(want).abs() > Fx::lit("0.9999"));
        assert!(slerp(a, b, Fx::ONE).dot(b) > Fx::lit("0.9999"));
    }

    #[test]
    fn late_and_duplicate_snapshots_keep_the_order() {
        let mut i = Interpolator::new(Bounds::cubes(), 10_000, Curve::Linear, 0);
        i.push(10, vec![body(10, 0)]);
        i.push(0, vec![body(0, 0)]);
        i.push(10, vec![body(3, 0)]);
        assert_eq!(i.newest(), Some(10));
        assert_eq!(i.sample(100_000).unwrap()[0].position.x, Fx::from_int(10));
    }

    #[test]
    fn the_delay_survives_two_lost_snapshots() {
        assert_eq!(playout_delay_micros(100_000, 50_000), 350_000);
        assert_eq!(playout_delay_micros(33_333, 50_000), 149_999);
    }
}
