//! A model of a TCP-like transport, for comparing lockstep over an ordered,
//! reliable stream with the redundant-UDP protocol: each message is sent
//! once; a lost transmission is resent after a fixed retransmission timeout
//! (RTO, about 2×RTT); the receiver delivers in order only, so one loss holds
//! back everything sent after it (head-of-line blocking).
//!
//! Invariants: the delivery time of a message is never earlier than that of
//! the message sent before it on the same link; at most [`MAX_TRIES`]
//! transmissions are modelled (the last always arrives), so the model never
//! loops forever. It models neither congestion control nor Nagle: the hitches
//! it shows are the floor a real TCP adds to.

use lockstep_protocol::Instant;

/// Transmissions modelled per message; the last one is never lost.
pub const MAX_TRIES: u32 = 64;

/// One direction of a TCP-like link: the in-order delivery horizon.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpLink {
    last_delivery: Instant,
}

impl TcpLink {
    /// Schedules a message sent at `now`. `attempt(t)` draws one
    /// transmission at time `t`: whether it is lost, and when it would arrive.
    /// Returns when the message is delivered.
    pub fn schedule(
        &mut self,
        now: Instant,
        rto_micros: u64,
        mut attempt: impl FnMut(Instant) -> (bool, Instant),
    ) -> Instant {
        let mut t = now;
        let mut arrival = now;
        for i in 0..MAX_TRIES {
            let (lost, at) = attempt(t);
            arrival = at;
            if !lost || i + 1 == MAX_TRIES {
                break;
            }
            t = t.plus(rto_micros);
        }
        let deliver = arrival.max(self.last_delivery);
        self.last_delivery = deliver;
        deliver
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_blocks_the_line() {
        let mut link = TcpLink::default();
        // First message: lost once, resent after 200 µs, arrives 100 µs later.
        let mut first = true;
        let a = link.schedule(Instant(0), 200, |t| {
            (std::mem::take(&mut first), t.plus(100))
        });
        assert_eq!(a, Instant(300));
        // The second, sent at 10 and not lost, waits behind the first.
        let b = link.schedule(Instant(10), 200, |t| (false, t.plus(100)));
        assert_eq!(b, Instant(300));
        let c = link.schedule(Instant(400), 200, |t| (false, t.plus(100)));
        assert_eq!(c, Instant(500));
    }
}
