//! The input delay a rollback session wants: frames between sampling a
//! local input and stepping its frame.
//!
//! Each peer works out the delay it wants from the lateness of the remote
//! inputs it receives ([`wanted_delay`]) and sends it in its
//! [`Timing`](crate::packet::Timing) messages. The host takes the largest
//! delay any seat wants, its own included, and every seat switches to it at
//! the same frame through a [`Schedule`](crate::schedule::Schedule).
//!
//! Inputs travel labelled with their frame, so a delay only decides *when*
//! frames are stepped, never what they hold: two peers on different delays
//! still step the same frames with the same inputs. A late plan costs a
//! hitch, never a desync; the agreement is there so that every player
//! waits as long as every other.
//!
//! Invariants: integer arithmetic only; the delay wanted stays in
//! `min..=max`.

use crate::delay::frames_for;

/// The delay a peer wants, in frames, from the lateness of the remote
/// inputs it received (`median` and `p98`, microseconds, `None` before
/// any): enough that the median input arrives within half the prediction
/// `window` and the 98th percentile within the whole window, kept in
/// `min..=max`.
pub fn wanted_delay(
    median: Option<i64>,
    p98: Option<i64>,
    tick_micros: u64,
    window: u32,
    min: u32,
    max: u32,
) -> u32 {
    let (Some(median), Some(p98)) = (median, p98) else {
        return min.min(max);
    };
    let typical = frames_for(median, tick_micros).saturating_sub(window / 2);
    let tail = (frames_for(p98, tick_micros) + 1).saturating_sub(window);
    typical.max(tail).clamp(min.min(max), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wanted_delay_leaves_the_window_to_jitter() {
        let tick = 16_667;
        assert_eq!(wanted_delay(None, None, tick, 8, 0, 60), 0);
        // 25 ms one way: predicted within the window, no delay.
        assert_eq!(wanted_delay(Some(25_000), Some(30_000), tick, 8, 0, 60), 0);
        // 100 ms one way (6 frames): 2 frames of delay keep the median
        // rollback at 4.
        assert_eq!(
            wanted_delay(Some(100_000), Some(110_000), tick, 8, 0, 60),
            2
        );
        // Heavy jitter: the 98th percentile decides.
        assert_eq!(wanted_delay(Some(40_000), Some(250_000), tick, 8, 0, 60), 8);
        // 1 s one way: as good as lockstep, within the cap.
        assert_eq!(
            wanted_delay(Some(1_000_000), Some(1_100_000), tick, 8, 0, 30),
            30
        );
    }
}
