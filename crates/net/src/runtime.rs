//! [`Runtime`]: the one loop that drives any [`Endpoint`] over a
//! [`Socket`]. It moves datagrams and time, raises a [`LinkStatus`] now
//! and then (adding the socket's traffic), and hands the endpoint's events
//! to the app one at a time ([`Runtime::next_event`]). It decides nothing:
//! seating, rejoins, admission, membership and the end of the match are
//! the endpoint's.
//!
//! Invariants: every wait is bounded (by the endpoint's next timeout, the
//! conditioner's next send, the next status, and at most 50 ms); each wake
//! feeds every datagram ready, then the timers, then drains events and
//! sends; after the endpoint closed, the conditioner is given at most a
//! second to deliver what it holds, then `next_event` returns `None`.

use std::collections::VecDeque;
use std::time::Duration;

use lockstep_lobby::{Endpoint, LinkStatus, MatchEvent};
use lockstep_protocol::Instant;

use crate::socket::{Socket, Traffic};

/// Where the loop's time went, for the report of a match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopCost {
    /// Microseconds spent in the loop's own work (receiving, routing to
    /// the endpoint, the conditioner, sending), the endpoint's calls
    /// excluded.
    pub loop_micros: u64,
    /// Microseconds spent inside the endpoint's calls (the game's steps
    /// and checksums, the session, the setup).
    pub endpoint_micros: u64,
}

/// Drives an endpoint over a socket. See the module documentation.
#[derive(Debug)]
pub struct Runtime<E> {
    socket: Socket,
    endpoint: E,
    status_every: u64,
    next_status: Instant,
    last_traffic: (Traffic, Instant),
    events: VecDeque<MatchEvent>,
    drained: bool,
    cost: LoopCost,
}

impl<E: Endpoint> Runtime<E> {
    /// Drives `endpoint` over `socket`, with a status every `status_every`.
    pub fn new(socket: Socket, endpoint: E, status_every: Duration) -> Runtime<E> {
        let now = socket.now();
        let every = (status_every.as_micros() as u64).max(1);
        Runtime {
            last_traffic: (socket.traffic(), now),
            next_status: now.plus(every),
            status_every: every,
            socket,
            endpoint,
            events: VecDeque::new(),
            drained: false,
            cost: LoopCost::default(),
        }
    }

    /// The endpoint (the app reads its game, its peer, its counters).
    pub fn endpoint(&self) -> &E {
        &self.endpoint
    }

    /// The endpoint, to set the local input or leave.
    pub fn endpoint_mut(&mut self) -> &mut E {
        &mut self.endpoint
    }

    /// The socket (its address, its traffic).
    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// The socket, to read its reach layer's events.
    pub fn socket_mut(&mut self) -> &mut Socket {
        &mut self.socket
    }

    /// The clock the endpoint runs on.
    pub fn now(&self) -> Instant {
        self.socket.now()
    }

    /// How often a status is raised, in microseconds.
    pub fn status_every_micros(&self) -> u64 {
        self.status_every
    }

    /// Where the loop's time went so far.
    pub fn cost(&self) -> LoopCost {
        self.cost
    }

    /// The socket and the endpoint, to drive the socket with another
    /// endpoint built from this one (a joiner's setup becomes its seat).
    pub fn into_parts(self) -> (Socket, E) {
        (self.socket, self.endpoint)
    }

    /// The status now, with the traffic since the last one.
    fn status(&mut self, now: Instant) -> LinkStatus {
        let mut s = self.endpoint.status();
        let t = self.socket.traffic();
        let (last, at) = self.last_traffic;
        let micros = now.since(at).max(1);
        s.up_bps = (t.sent_bytes - last.sent_bytes) * 8 * 1_000_000 / micros;
        s.down_bps = (t.received_bytes - last.received_bytes) * 8 * 1_000_000 / micros;
        let (sent, lost) = self.socket.conditioned();
        s.loss_permille = lost * 1000 / sent.max(1);
        self.last_traffic = (t, now);
        s
    }

    /// The next event: runs the loop until the endpoint has one (or a
    /// status is due). `None` once the endpoint closed and everything it
    /// sent left.
    pub async fn next_event(&mut self) -> Option<MatchEvent> {
        loop {
            // An endpoint may hold events from before this runtime drove
            // it (one built already ended, say).
            while let Some(e) = self.endpoint.poll_event() {
                self.events.push_back(e);
            }
            if let Some(e) = self.events.pop_front() {
                return Some(e);
            }
            if self.endpoint.is_closed() {
                if !self.drained {
                    self.drain().await;
                    self.drained = true;
                }
                return None;
            }
            let now = self.socket.now();
            if now >= self.next_status {
                self.next_status = now.plus(self.status_every);
                let status = self.status(now);
                return Some(MatchEvent::Status(status));
            }
            self.turn().await;
        }
    }

    /// One wake: wait, feed, run the timers, collect events, send.
    async fn turn(&mut self) {
        let now = self.socket.now();
        let deadline = [
            self.endpoint.poll_timeout(),
            self.socket.next_send(),
            Some(self.next_status),
            Some(now.plus(50_000)),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(now);
        let datagrams = self.socket.receive(deadline).await;
        let woke = std::time::Instant::now();
        let now = self.socket.now();
        let mut inside = Duration::ZERO;
        for (from, bytes) in datagrams {
            let t = std::time::Instant::now();
            self.endpoint.handle_datagram(now, from, &bytes);
            inside += t.elapsed();
        }
        if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            let t = std::time::Instant::now();
            self.endpoint.handle_timeout(now);
            inside += t.elapsed();
        }
        while let Some(e) = self.endpoint.poll_event() {
            self.events.push_back(e);
        }
        while let Some(d) = self.endpoint.poll_transmit(now) {
            self.socket.send(d.to, d.bytes);
        }
        self.socket.flush();
        let busy = woke.elapsed();
        self.endpoint.spent(inside.as_micros() as u64);
        self.cost.endpoint_micros += inside.as_micros() as u64;
        self.cost.loop_micros += busy.saturating_sub(inside).as_micros() as u64;
    }

    /// Lets the conditioner deliver what it still holds (goodbyes, the last
    /// inputs), for at most a second.
    async fn drain(&mut self) {
        let until = self.socket.now().plus(1_000_000);
        while let Some(t) = self.socket.next_send() {
            if t > until {
                break;
            }
            let _ = self.socket.receive(t).await;
            self.socket.flush();
        }
    }
}
