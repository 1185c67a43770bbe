//! Time between peers: the [`Timing`] messages every seat sends every
//! other seat (clock synchronization, see [`crate::clock_sync`]), the
//! balancing of the frame clock against the peers' ticks (see
//! [`crate::clock`]), the agreed input delay of rollback mode (see
//! [`crate::input_delay`]) and the agreed pace of the match (see
//! [`crate::pace`]).
//!
//! From a peer's [`Timing`] the session learns the peer's clock offset and
//! when the peer sampled its newest frame by its own clock; with the offset
//! that tick becomes a local time, and the difference from our own tick of
//! the same frame says how far ahead of that peer our frame clock runs. The
//! mean over the peers sets the tick's stretch.
//!
//! Invariants: nothing here reads a clock (every time is the `now` passed
//! in or a peer's reported time); an echo becomes a sample once, only if it
//! names a time not in our future; a delay or pace plan is taken only from
//! the seat this session counts as host.

use super::handshake::Refused;
use super::{InputDelay, Mode, Rollback, Session};
use crate::clock_sync::{ClockEstimate, ClockSample};
use crate::input::Input;
use crate::input_delay::wanted_delay;
use crate::packet::{DelayPlan, Echo, Message, PacePlan, TickStamp, Timing};
use crate::seat::SeatId;
use crate::seq::{unwrap_frame, wire_frame};
use crate::time::Instant;

/// Ticks the target input delay must stay lower before the host shrinks it
/// by a frame (2 s at 60 Hz).
const DELAY_SHRINK_TICKS: u32 = 120;

/// Frames of margin, beyond half the worst round trip, between the host's
/// newest frame and the frame a new input delay applies from: the plan
/// rides in Timing messages sent every 200 ms, so it reaches every peer
/// first unless several in a row are lost (then it applies a little late,
/// which costs a hitch, not a desync).
const DELAY_PLAN_LEAD_FRAMES: u32 = 30;

/// Ticks the pace the seats' step costs call for must stay lower before
/// the host quickens the match by a step.
const PACE_SHRINK_TICKS: u32 = 60;

/// Frames of margin, beyond half the worst round trip, between the host's
/// newest frame and the frame a new pace applies from. Shorter than a delay
/// plan's: every frame before the switch is one a slow seat falls further
/// behind in, so the host sends the plan at once instead of waiting for
/// the next Timing (lost, it goes again with the next one, and the seat
/// switches late: a hitch, not a desync).
const PACE_PLAN_LEAD_FRAMES: u32 = 6;

impl<I: Input> Session<I> {
    /// The clock offset of `peer` (its clock minus ours), once estimated.
    pub fn clock_offset(&self, peer: SeatId) -> Option<ClockEstimate> {
        self.peers.get(peer.index())?.offsets.estimate()
    }

    /// How far ahead of `peer`'s frame clock ours runs, in microseconds
    /// (positive: we sample each frame before it does), once its clock
    /// offset is estimated and it reported a tick.
    pub fn frame_advantage(&self, peer: SeatId) -> Option<i64> {
        let p = self.peers.get(peer.index())?;
        let offset = p.offsets.estimate()?.offset_micros;
        let (frame, their_time) = p.tick?;
        let theirs_here = i128::from(their_time) - i128::from(offset);
        let ours = i128::from(self.clock.tick_time(frame).as_micros());
        i64::try_from(theirs_here - ours).ok()
    }

    /// The input delay in force, in frames (rollback mode; in lockstep the
    /// playout delay, [`Session::delay_frames`], plays that part).
    pub fn input_delay(&self) -> u32 {
        self.input_delay.current()
    }

    /// The newest plan to change the input delay, `(frame, delay)`.
    pub fn input_delay_plan(&self) -> Option<(u32, u32)> {
        self.input_delay.plan()
    }

    /// The tick's stretch now, in permille (positive: slower).
    pub fn clock_stretch_permille(&self) -> i64 {
        self.clock.stretch_permille()
    }

    /// Sets the tick length from the mean frame advantage over the peers
    /// still playing.
    pub(super) fn balance_clock(&mut self) {
        let local = self.cfg.local.index();
        let mut sum = 0i128;
        let mut n = 0i128;
        for i in 0..self.peers.len() {
            if i == local || self.peers[i].gone {
                continue;
            }
            if let Some(ahead) = self.frame_advantage(SeatId(i as u8)) {
                sum += i128::from(ahead);
                n += 1;
            }
        }
        if n > 0 {
            self.clock.balance((sum / n) as i64);
            if self.clock.stretch_permille() != 0 {
                self.stats.nudged_ticks += 1;
            }
        }
    }

    /// Rollback with an adaptive input delay, once per tick: works out the
    /// delay this peer wants and, on the host, plans a change toward the
    /// largest delay any seat wants.
    pub(super) fn plan_input_delay(&mut self) {
        let Mode::Rollback(r) = self.cfg.mode else {
            return;
        };
        let InputDelay::Adaptive { min, max } = r.input_delay else {
            return;
        };
        self.wanted_delay = wanted_delay(
            self.delay.lateness_quantile(500),
            self.delay.lateness_quantile(980),
            self.cfg.tick_micros,
            r.max_prediction,
            min,
            max,
        );
        if self.host() != self.cfg.local {
            return;
        }
        let target = self
            .others_playing()
            .map(|p| p.wanted_delay.clamp(min, max))
            .fold(self.wanted_delay, u32::max);
        let lead = self.plan_lead(DELAY_PLAN_LEAD_FRAMES);
        let _ = self
            .input_delay
            .decide(target, self.clock.next_frame(), lead, DELAY_SHRINK_TICKS);
    }

    /// What stepping a frame cost the app, in microseconds (its own clock,
    /// measured around the steps, or a simulated cost). The seats' reports
    /// set the pace of the match ([`crate::pace`]): a seat whose steps take
    /// longer than a tick slows every seat down together instead of
    /// stalling them. An app that never reports leaves the pace to the
    /// others.
    pub fn report_step_cost(&mut self, micros: u64) {
        self.step_costs.record(micros);
    }

    /// The pace in force, in pace steps over the nominal tick (0: the
    /// nominal tick).
    pub fn pace_steps(&self) -> u32 {
        self.pace.current()
    }

    /// The other seats' peers still playing (not gone).
    fn others_playing(&self) -> impl Iterator<Item = &super::handshake::Peer> {
        let local = self.cfg.local.index();
        self.peers
            .iter()
            .enumerate()
            .filter(move |(i, p)| *i != local && !p.gone)
            .map(|(_, p)| p)
    }

    /// The frames ahead of the host's newest at which a plan it makes now
    /// takes effect: half the worst round trip, and a margin.
    fn plan_lead(&self, margin: u32) -> u32 {
        let worst_rtt = self.worst_rtt_micros();
        crate::delay::frames_for((worst_rtt / 2) as i64, self.cfg.tick_micros) + margin
    }

    /// Once per tick, on the host: plans the pace the slowest seat's step
    /// cost calls for.
    pub(super) fn plan_pace(&mut self) {
        if self.host() != self.cfg.local {
            return;
        }
        let cost = self
            .others_playing()
            .map(|p| p.step_cost)
            .fold(self.step_costs.reported(), u32::max);
        let target = crate::pace::steps_for(u64::from(cost), self.cfg.tick_micros);
        let lead = self.plan_lead(PACE_PLAN_LEAD_FRAMES);
        let planned = self
            .pace
            .decide(target, self.clock.next_frame(), lead, PACE_SHRINK_TICKS);
        if planned.is_some() {
            let now = self.now;
            for p in &mut self.peers {
                p.next_timing_at = p.next_timing_at.min(now);
            }
        }
    }

    /// The Timing message for peer `i`, if one is due at `now`.
    pub(super) fn timing_due(&mut self, now: Instant, i: usize) -> Option<Message<I>> {
        let hosting = self.host() == self.cfg.local;
        let tick = self.clock.next_frame().checked_sub(1).map(|f| TickStamp {
            frame: wire_frame(f),
            time: self.clock.tick_time(f).as_micros(),
        });
        let (plan, pace) = if hosting {
            (self.input_delay.plan(), self.pace.plan())
        } else {
            (None, None)
        };
        let step_cost = self.step_costs.reported();
        let p = &mut self.peers[i];
        if now < p.next_timing_at {
            return None;
        }
        p.next_timing_at = now.plus(self.cfg.timing_interval_micros);
        let echo = p.heard_time.map(|(time, at)| Echo {
            time,
            held: u32::try_from(now.since(at)).unwrap_or(u32::MAX),
        });
        Some(Message::Timing(Timing {
            time: now.as_micros(),
            echo,
            tick,
            wanted_delay: u8::try_from(self.wanted_delay).unwrap_or(u8::MAX),
            delay: plan.map(|(frame, delay)| DelayPlan {
                frame: wire_frame(frame),
                delay: u8::try_from(delay).unwrap_or(u8::MAX),
            }),
            step_cost,
            pace: pace.map(|(frame, steps)| PacePlan {
                frame: wire_frame(frame),
                steps: u8::try_from(steps).unwrap_or(u8::MAX),
            }),
        }))
    }

    /// Takes a peer's Timing: a clock sample from its echo, its newest
    /// tick, the delay it wants and, from the host, the delay plan.
    pub(super) fn on_timing(
        &mut self,
        now: Instant,
        who: SeatId,
        m: Timing,
    ) -> Result<(), Refused> {
        let reference = self.clock.next_frame();
        let tick = match m.tick {
            None => None,
            Some(t) => match unwrap_frame(t.frame, reference) {
                Some(f) => Some((f, t.time)),
                None => return Err(Refused::Invalid),
            },
        };
        let plan = match m.delay {
            None => None,
            Some(d) => match unwrap_frame(d.frame, reference) {
                Some(f) => Some((f, u32::from(d.delay))),
                None => return Err(Refused::Invalid),
            },
        };
        let pace = match m.pace {
            None => None,
            Some(p) => match unwrap_frame(p.frame, reference) {
                Some(f) => Some((f, u32::from(p.steps))),
                None => return Err(Refused::Invalid),
            },
        };
        let from_host = who == self.host();
        let p = &mut self.peers[who.index()];
        if p.heard_time.is_none_or(|(t, _)| m.time > t) {
            p.heard_time = Some((m.time, now));
        }
        if let Some(e) = m.echo {
            let fresh = p.echo_used.is_none_or(|u| e.time > u);
            let sample = m.time.checked_sub(u64::from(e.held)).and_then(|t1| {
                (e.time <= now.as_micros())
                    .then(|| ClockSample::from_round_trip(Instant(e.time), t1, m.time, now))
                    .flatten()
            });
            if let (true, Some(s)) = (fresh, sample) {
                p.offsets.record(s);
                p.echo_used = Some(e.time);
                self.stats.clock_samples += 1;
            }
        }
        if let Some((frame, time)) = tick {
            if p.tick.is_none_or(|(f, _)| frame > f) {
                p.tick = Some((frame, time));
            }
        }
        p.wanted_delay = u32::from(m.wanted_delay);
        p.step_cost = m.step_cost;
        if let (true, Some((frame, steps))) = (from_host, pace) {
            self.pace
                .adopt(frame, steps.min(crate::pace::MAX_PACE_STEPS));
        }
        if let (true, Some((frame, delay))) = (from_host, plan) {
            if let Mode::Rollback(Rollback {
                input_delay: InputDelay::Adaptive { min, max },
                ..
            }) = self.cfg.mode
            {
                self.input_delay.adopt(frame, delay.clamp(min, max));
            }
        }
        Ok(())
    }
}
