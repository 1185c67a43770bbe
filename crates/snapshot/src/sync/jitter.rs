//! [`JitterBuffer`]: holds state synchronization packets until their
//! frame's turn, a few frames behind the earliest arrivals, so packets
//! that arrive unevenly are applied evenly, one frame per tick, in order.
//!
//! Invariants: packets are released in frame order, each at most once; a
//! packet for a frame already released (too late) is dropped and counted.

use std::collections::BTreeMap;

/// Packets waiting for their frame.
#[derive(Debug, Clone)]
pub struct JitterBuffer<T> {
    tick_micros: u64,
    delay_frames: u32,
    /// The smallest `arrival − frame · tick` seen: the link's best case.
    offset: Option<i64>,
    waiting: BTreeMap<u32, T>,
    released: Option<u32>,
    late: u64,
}

impl<T> JitterBuffer<T> {
    /// A buffer for frames `tick_micros` apart that releases frame `f`
    /// `delay_frames` ticks after the best-case arrival of `f` (4–5 frames
    /// at 60 Hz).
    pub fn new(tick_micros: u64, delay_frames: u32) -> JitterBuffer<T> {
        JitterBuffer {
            tick_micros: tick_micros.max(1),
            delay_frames,
            offset: None,
            waiting: BTreeMap::new(),
            released: None,
            late: 0,
        }
    }

    /// Packets that arrived after their frame's turn.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// The packet of `frame` arrived at `arrival_micros`.
    pub fn push(&mut self, frame: u32, arrival_micros: u64, packet: T) {
        let offset = arrival_micros as i64 - (u64::from(frame) * self.tick_micros) as i64;
        self.offset = Some(self.offset.map_or(offset, |o| o.min(offset)));
        if self.released.is_some_and(|r| frame <= r) {
            self.late += 1;
            return;
        }
        self.waiting.entry(frame).or_insert(packet);
    }

    /// The newest frame whose turn has come at `now_micros` (frames up to
    /// it are due, whether their packets arrived or not).
    pub fn due_frame(&self, now_micros: u64) -> Option<u32> {
        let offset = self.offset?;
        let t = now_micros as i64 - offset - i64::from(self.delay_frames) * self.tick_micros as i64;
        u64::try_from(t).ok().map(|t| (t / self.tick_micros) as u32)
    }

    /// The packet of `frame` if it is due at `now_micros` and arrived; the
    /// frames before it are released with it (their packets, if any, are
    /// dropped: they came too late to be applied in order).
    pub fn take(&mut self, frame: u32, now_micros: u64) -> Option<T> {
        if self.due_frame(now_micros).is_none_or(|d| frame > d) {
            return None;
        }
        if self.released.is_some_and(|r| frame <= r) {
            return None;
        }
        self.released = Some(frame);
        let later = self.waiting.split_off(&(frame + 1));
        let mut now = std::mem::replace(&mut self.waiting, later);
        now.remove(&frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_wait_their_turn_and_late_ones_are_dropped() {
        let mut j = JitterBuffer::new(10_000, 4);
        j.push(0, 50_000, "a");
        j.push(2, 75_000, "c"); // 5 ms later than the best case
        // Frame 0 is due 4 ticks after its best-case arrival.
        assert_eq!(j.take(0, 80_000), None);
        assert_eq!(j.take(0, 90_000), Some("a"));
        assert_eq!(j.take(1, 100_000), None); // lost
        assert_eq!(j.take(2, 110_000), Some("c"));
        j.push(1, 111_000, "b"); // too late
        assert_eq!(j.late(), 1);
    }
}
