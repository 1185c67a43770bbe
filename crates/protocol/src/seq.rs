//! 16-bit sequence numbers and frame numbers on the wire, compared safely
//! across wraparound.
//!
//! Invariants: [`seq_newer`] is the RFC 1982 serial-number order on `u16`
//! (a is newer than b when `a - b` modulo 2^16 lies in `1..=32767`), so
//! 65 535 → 0 is "one newer", never "65 535 older". Full frame numbers are
//! `u32` in memory and travel as their low 16 bits; [`unwrap_frame`] restores
//! them against a reference frame the receiver already knows, which is exact
//! as long as the true frame lies within ±32 767 frames of it (9 minutes at
//! 60 Hz, far beyond the input window's cap).

/// `true` when `a` is newer than `b` in 16-bit serial-number order.
pub const fn seq_newer(a: u16, b: u16) -> bool {
    let d = a.wrapping_sub(b);
    d != 0 && d < 0x8000
}

/// Signed distance from `b` to `a` in serial-number order: positive when `a`
/// is newer. The half-way case (`a - b == 32768`) reads as negative.
pub const fn seq_distance(a: u16, b: u16) -> i32 {
    a.wrapping_sub(b) as i16 as i32
}

/// The low 16 bits of a frame, as sent on the wire.
pub const fn wire_frame(frame: u32) -> u16 {
    frame as u16
}

/// The frame nearest `reference` whose low 16 bits are `wire`; `None` when
/// that frame would be negative or above `u32::MAX`.
pub const fn unwrap_frame(wire: u16, reference: u32) -> Option<u32> {
    let d = seq_distance(wire, reference as u16) as i64;
    let f = reference as i64 + d;
    if f < 0 || f > u32::MAX as i64 {
        None
    } else {
        Some(f as u32)
    }
}

/// The packet number nearest `reference` whose low 16 bits are `wire`
/// (never below 0): how a receiver restores a sealed packet's full number
/// from the 16 bits on the wire, against the newest number that opened.
/// Exact while the true number lies within ±32 767 of the reference — a
/// peer would have to lose 32 768 packets in a row (9 minutes at 60 Hz)
/// to break it, and then the packet merely fails to open.
pub const fn widen(wire: u16, reference: u64) -> u64 {
    let d = seq_distance(wire, reference as u16) as i128;
    let n = reference as i128 + d;
    if n < 0 {
        0
    } else if n > u64::MAX as i128 {
        u64::MAX
    } else {
        n as u64
    }
}

/// A receive window over 16-bit packet sequence numbers: remembers the newest
/// sequence seen and which of the 64 before it arrived, so replayed and
/// duplicated packets are recognised and packets older than the window are
/// refused. It also counts what the sender's numbers say it sent since the
/// first one received, and how many of those arrived: the loss the network
/// caused, measured ([`SeqWindow::lost`]).
#[derive(Debug, Clone, Default)]
pub struct SeqWindow {
    newest: Option<u16>,
    /// Bit `i` set: sequence `newest - 1 - i` was received.
    seen: u64,
    /// Sequences from the first received through the newest.
    spanned: u64,
    /// Sequences recorded (each once).
    received: u64,
}

/// What a [`SeqWindow`] says about a sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqVerdict {
    /// Not seen before and inside the window: accept it.
    Fresh,
    /// Already received (a duplicate or a replay).
    Duplicate,
    /// Older than the 64 sequences the window remembers.
    TooOld,
    /// Further ahead of the newest than the caller's bound.
    TooFar,
}

impl SeqWindow {
    /// How many sequences behind the newest are remembered.
    pub const SPAN: i32 = 64;

    /// Classifies `seq` without recording it: a sequence more than
    /// `max_jump` ahead of the newest is [`SeqVerdict::TooFar`].
    pub fn check(&self, seq: u16, max_jump: i32) -> SeqVerdict {
        let Some(newest) = self.newest else {
            return SeqVerdict::Fresh;
        };
        let d = seq_distance(seq, newest);
        if d > max_jump {
            SeqVerdict::TooFar
        } else if d > 0 {
            SeqVerdict::Fresh
        } else if d == 0 {
            SeqVerdict::Duplicate
        } else if -d > Self::SPAN {
            SeqVerdict::TooOld
        } else if self.seen & (1u64 << (-d - 1)) != 0 {
            SeqVerdict::Duplicate
        } else {
            SeqVerdict::Fresh
        }
    }

    /// The newest sequence recorded, if any.
    pub fn newest(&self) -> Option<u16> {
        self.newest
    }

    /// The sequences the sender used from the first one received through
    /// the newest, and how many of them never arrived (a packet still on
    /// its way counts as lost until it comes).
    pub fn lost(&self) -> (u64, u64) {
        (self.spanned, self.spanned.saturating_sub(self.received))
    }

    /// Records `seq` as received (call after [`SeqWindow::check`] said
    /// [`SeqVerdict::Fresh`] and the packet was accepted).
    pub fn record(&mut self, seq: u16) {
        self.received += 1;
        let Some(newest) = self.newest else {
            self.newest = Some(seq);
            self.spanned = 1;
            return;
        };
        let d = seq_distance(seq, newest);
        if d > 0 {
            self.spanned += d as u64;
            // Shift the history: the old newest becomes bit d-1.
            self.seen = if d >= Self::SPAN {
                0
            } else {
                (self.seen << d) | (1u64 << (d - 1))
            };
            if d == Self::SPAN {
                self.seen = 1u64 << (Self::SPAN - 1);
            }
            self.newest = Some(seq);
        } else if d < 0 && -d <= Self::SPAN {
            self.seen |= 1u64 << (-d - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_across_wrap() {
        assert!(seq_newer(0, 65_535));
        assert!(seq_newer(5, 65_530));
        assert!(!seq_newer(65_535, 0));
        assert!(seq_newer(1, 0));
        assert!(!seq_newer(7, 7));
        assert_eq!(seq_distance(2, 65_534), 4);
        assert_eq!(seq_distance(65_534, 2), -4);
    }

    #[test]
    fn unwrap_frames() {
        assert_eq!(unwrap_frame(3, 65_530), Some(65_539));
        assert_eq!(unwrap_frame(65_530, 65_539), Some(65_530));
        assert_eq!(unwrap_frame(10, 12), Some(10));
        assert_eq!(unwrap_frame(65_535, 0), None);
        assert_eq!(unwrap_frame(100, 70_000), Some(65_636));
    }

    #[test]
    fn widen_restores_full_numbers() {
        assert_eq!(widen(5, 0), 5);
        assert_eq!(widen(2, 65_534), 65_538);
        assert_eq!(widen(65_534, 65_538), 65_534);
        assert_eq!(widen(65_535, 0), 0, "never below zero");
        assert_eq!(widen(7, 3 << 16), (3 << 16) + 7);
        assert_eq!(widen(0, u64::MAX), u64::MAX, "never above u64::MAX");
    }

    #[test]
    fn a_window_counts_the_sequences_that_never_came() {
        let mut w = SeqWindow::default();
        assert_eq!(w.lost(), (0, 0));
        // 10, 11, 13, 16 arrive; 12, 14, 15 do not (yet); then 12 late.
        for s in [10u16, 11, 13, 16] {
            w.record(s);
        }
        assert_eq!(w.lost(), (7, 3));
        w.record(12);
        assert_eq!(w.lost(), (7, 2));
        // Across the wrap.
        let mut w = SeqWindow::default();
        for s in [65_534u16, 0, 1] {
            w.record(s);
        }
        assert_eq!(w.lost(), (4, 1));
    }

    #[test]
    fn seq_window_across_wrap() {
        let mut w = SeqWindow::default();
        for s in [65_533u16, 65_535, 0, 1] {
            assert_eq!(w.check(s, i32::MAX), SeqVerdict::Fresh);
            w.record(s);
        }
        assert_eq!(w.check(65_534, i32::MAX), SeqVerdict::Fresh);
        w.record(65_534);
        assert_eq!(w.check(65_534, i32::MAX), SeqVerdict::Duplicate);
        assert_eq!(w.check(65_535, i32::MAX), SeqVerdict::Duplicate);
        assert_eq!(w.check(1, i32::MAX), SeqVerdict::Duplicate);
        assert_eq!(w.check(1u16.wrapping_sub(65), i32::MAX), SeqVerdict::TooOld);
        w.record(1 + 64);
        assert_eq!(w.check(1, i32::MAX), SeqVerdict::Duplicate);
        w.record(1 + 65);
        assert_eq!(w.check(1, i32::MAX), SeqVerdict::TooOld);
    }
}
