//! Snapshot interpolation for a viewer: a buffer of received snapshots
//! ([`Interpolator`]), each stamped with the sender's frame, sampled a
//! delay behind the newest time so the view moves smoothly between
//! snapshots even when one or two are lost, and the clock that picks that
//! delay from what arrives ([`ViewClock`]).
//!
//! Positions are interpolated linearly or with a cubic Hermite spline
//! through the snapshots' velocities; orientations by spherical linear
//! interpolation along the shorter arc. Past the newest snapshot the view
//! is extrapolated from its velocity for at most `max_extrapolation` and
//! then held. In [`ViewMode::Extrapolate`] the view does not wait for a
//! second snapshot at all: it shows the newest one moved along its
//! velocity (the viewer smooths the jump when the next arrives, see
//! [`crate::smoothing`]).
//!
//! Invariants: integer (`Fx`) arithmetic only; snapshots are kept in frame
//! order, at most `capacity` of them (older ones are dropped first); a
//! sample never reads a snapshot newer than it needs; removed bodies
//! (absent in a snapshot) are shown where they last were, flagged hidden.

use std::collections::VecDeque;

use lockstep_fx::{Fx, Quat, Vec3};

use crate::quantize::{Bounds, QuantBody};

/// How the view is drawn from the snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewMode {
    /// Between two snapshots along a straight line at constant speed.
    Linear,
    /// Between two snapshots along a cubic Hermite spline matching both
    /// snapshots' velocities (the snapshots must carry velocity).
    Hermite,
    /// From the newest snapshot along its velocity, without waiting for
    /// the next (the snapshots must carry velocity).
    Extrapolate,
}

impl ViewMode {
    /// Whether the mode needs velocities in the snapshots.
    pub fn needs_velocity(self) -> bool {
        self != ViewMode::Linear
    }
}

/// One body as the viewer draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pose {
    /// Where it is.
    pub position: Vec3,
    /// How it is turned.
    pub orientation: Quat,
    /// Whether it exists (a removed body is not drawn).
    pub visible: bool,
}

impl Pose {
    /// A visible body at `position` turned by `orientation`.
    pub fn new(position: Vec3, orientation: Quat) -> Pose {
        Pose {
            position,
            orientation,
            visible: true,
        }
    }
}

/// The delay that survives two lost snapshots in a row: three send
/// intervals plus the jitter (350 ms at 10 Hz with 50 ms of jitter, 150 ms
/// at 30 Hz, 85 ms at 60 Hz).
pub fn playout_delay_micros(send_interval_micros: u64, jitter_micros: u64) -> u64 {
    3 * send_interval_micros + jitter_micros
}

/// Picks the time a viewer shows from the snapshots' arrivals: it learns
/// the send interval (the upper quartile of the frame gaps between the
/// recent snapshots received, in frame order whatever order they arrived
/// in: a snapshot lost now and then does not lengthen it, a sender whose
/// budget holds back a quarter of its snapshots or more does) and the
/// jitter (the spread of
/// `arrival − frame time` over the recent snapshots), and shows the
/// sender's timeline
/// [`playout_delay_micros`] behind the earliest arrivals (in
/// [`ViewMode::Extrapolate`], only the jitter behind).
#[derive(Debug, Clone)]
pub struct ViewClock {
    tick_micros: u64,
    window: usize,
    /// `arrival − frame · tick` of the recent snapshots.
    offsets: VecDeque<i64>,
    /// The recent snapshots' frames, in frame order.
    frames: VecDeque<u32>,
}

impl ViewClock {
    /// A clock for frames `tick_micros` apart, judging the last `window`
    /// snapshots.
    pub fn new(tick_micros: u64, window: usize) -> ViewClock {
        ViewClock {
            tick_micros: tick_micros.max(1),
            window: window.max(2),
            offsets: VecDeque::new(),
            frames: VecDeque::new(),
        }
    }

    /// Snapshot `frame` arrived at `arrival_micros` (the viewer's clock).
    pub fn on_snapshot(&mut self, frame: u32, arrival_micros: u64) {
        let offset = arrival_micros as i64 - (u64::from(frame) * self.tick_micros) as i64;
        self.offsets.push_back(offset);
        if self.offsets.len() > self.window {
            self.offsets.pop_front();
        }
        let at = self.frames.partition_point(|&f| f < frame);
        if self.frames.get(at) != Some(&frame) {
            self.frames.insert(at, frame);
            if self.frames.len() > self.window {
                self.frames.pop_front();
            }
        }
    }

    /// The send interval as measured: the upper quartile of the recent
    /// gaps (one tick until two arrived).
    pub fn send_interval_micros(&self) -> u64 {
        let mut gaps: Vec<u32> = self
            .frames
            .iter()
            .zip(self.frames.iter().skip(1))
            .map(|(a, b)| b - a)
            .collect();
        gaps.sort_unstable();
        let quartile = gaps.get(gaps.len() * 3 / 4).copied().unwrap_or(1);
        u64::from(quartile) * self.tick_micros
    }

    /// The jitter as measured: the spread of the arrival offsets.
    pub fn jitter_micros(&self) -> u64 {
        let lo = self.offsets.iter().copied().min().unwrap_or(0);
        let hi = self.offsets.iter().copied().max().unwrap_or(0);
        (hi - lo).max(0) as u64
    }

    /// How far behind the earliest arrivals the view is shown in `mode`.
    pub fn delay_micros(&self, mode: ViewMode) -> u64 {
        match mode {
            ViewMode::Extrapolate => self.jitter_micros(),
            _ => playout_delay_micros(self.send_interval_micros(), self.jitter_micros()),
        }
    }

    /// The time on the sender's timeline (frame `f` at `f · tick`) to show
    /// at `now_micros`, once a snapshot has arrived.
    pub fn view_time(&self, now_micros: u64, mode: ViewMode) -> Option<u64> {
        let lo = self.offsets.iter().copied().min()?;
        let t = now_micros as i64 - lo - self.delay_micros(mode) as i64;
        u64::try_from(t).ok()
    }
}

/// The viewer's buffer.
#[derive(Debug, Clone)]
pub struct Interpolator {
    bounds: Bounds,
    tick_micros: u64,
    mode: ViewMode,
    max_extrapolation_micros: u64,
    capacity: usize,
    snapshots: VecDeque<(u32, Vec<QuantBody>)>,
}

impl Interpolator {
    /// A buffer for snapshots coded with `bounds`, frames `tick_micros`
    /// apart, drawn in `mode`, extrapolating at most
    /// `max_extrapolation_micros` past the snapshot it starts from.
    pub fn new(
        bounds: Bounds,
        tick_micros: u64,
        mode: ViewMode,
        max_extrapolation_micros: u64,
    ) -> Interpolator {
        Interpolator {
            bounds,
            tick_micros: tick_micros.max(1),
            mode,
            max_extrapolation_micros,
            capacity: 64,
            snapshots: VecDeque::new(),
        }
    }

    /// The mode it draws in.
    pub fn mode(&self) -> ViewMode {
        self.mode
    }

    /// Forgets every snapshot (a new stream starts).
    pub fn clear(&mut self) {
        self.snapshots.clear();
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
        let next = self
            .snapshots
            .get(after)
            .filter(|_| self.mode != ViewMode::Extrapolate);
        let Some((f1, b)) = next else {
            // Past the newest (or extrapolating): along the velocity, capped.
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
                            visible: q.present,
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
                    if !qa.present || !qb.present {
                        // Appearing or removed: no path between the two.
                        let q = if qa.present { qa } else { qb };
                        return Pose {
                            position: q.position(&self.bounds),
                            orientation: q.orientation(&self.bounds),
                            visible: qa.present && s < Fx::HALF || qb.present && s >= Fx::HALF,
                        };
                    }
                    let (pa, pb) = (qa.position(&self.bounds), qb.position(&self.bounds));
                    let position = match self.mode {
                        ViewMode::Hermite => hermite(
                            pa,
                            qa.velocity(&self.bounds) * span_s,
                            pb,
                            qb.velocity(&self.bounds) * span_s,
                            s,
                        ),
                        _ => pa + (pb - pa) * s,
                    };
                    Pose {
                        position,
                        orientation: slerp(
                            qa.orientation(&self.bounds),
                            qb.orientation(&self.bounds),
                            s,
                        ),
                        visible: true,
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
        let mut i = Interpolator::new(Bounds::cubes(), 10_000, ViewMode::Linear, 0);
        i.push(0, vec![body(0, 0)]);
        i.push(10, vec![body(10, 0)]);
        let p = i.sample(50_000).unwrap()[0].position;
        assert_eq!(p.x, Fx::from_int(5));
        assert!(i.sample(0).is_some());
    }

    #[test]
    fn hermite_follows_the_velocities_and_extrapolation_is_capped() {
        let mut i = Interpolator::new(Bounds::cubes(), 100_000, ViewMode::Hermite, 200_000);
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
        let mut i = Interpolator::new(Bounds::cubes(), 10_000, ViewMode::Linear, 0);
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

    #[test]
    fn the_clock_learns_the_send_interval_and_the_jitter() {
        let mut c = ViewClock::new(10_000, 32);
        // Every 3rd frame, 40 ms late, ±5 ms; one lost, two out of order.
        for (i, f) in [0u32, 3, 6, 15, 12, 18].into_iter().enumerate() {
            let jitter = if i % 2 == 0 { 0 } else { 10_000 };
            c.on_snapshot(f, u64::from(f) * 10_000 + 40_000 + jitter);
        }
        assert_eq!(c.send_interval_micros(), 30_000);
        assert_eq!(c.jitter_micros(), 10_000);
        // A sender that holds back a snapshot in three goes at 2 frames.
        let mut held = ViewClock::new(10_000, 32);
        for f in (0..60u32).filter(|f| f % 3 != 2) {
            held.on_snapshot(f, u64::from(f) * 10_000);
        }
        assert_eq!(held.send_interval_micros(), 20_000);
        assert_eq!(c.delay_micros(ViewMode::Linear), 100_000);
        assert_eq!(c.delay_micros(ViewMode::Extrapolate), 10_000);
        // At 400 ms the view shows 400 − 40 − 100 = 260 ms of the sender's.
        assert_eq!(c.view_time(400_000, ViewMode::Linear), Some(260_000));
    }

    #[test]
    fn extrapolation_starts_from_the_newest_snapshot_before_the_time() {
        let mut i = Interpolator::new(Bounds::cubes(), 100_000, ViewMode::Extrapolate, 1_000_000);
        i.push(0, vec![body(0, 1)]);
        i.push(10, vec![body(5, 1)]);
        // Half-way, it extrapolates frame 0 (not interpolating toward 10).
        let p = i.sample(500_000).unwrap()[0].position;
        assert!(
            (p.x.saturating_sub(Fx::HALF)).abs() < Fx::lit("0.002"),
            "{p:?}"
        );
    }
}
