//! [`Runtime`]: the one loop that drives any [`Endpoint`] over a
//! [`Socket`]. It moves datagrams and time, raises a [`LinkStatus`] now
//! and then (adding the socket's traffic), and hands the endpoint's events
//! to the app. It decides nothing: seating, rejoins, admission, membership
//! and the end of the match are the endpoint's.
//!
//! Two ways to run it, over the same rounds of work:
//!
//! - **From a game loop** ([`Runtime::poll`]): each call does what is due
//!   now — every datagram that arrived, the endpoint's timers, what is due
//!   to send — without waiting, and hands out the events it raised. No
//!   async runtime is involved. Call it at least once per tick of the match.
//! - **As a task** ([`Runtime::next_event`]): waits on tokio until the
//!   endpoint has an event (or a status is due).
//!
//! Invariants: every wait is bounded (by the endpoint's next timeout, the
//! conditioner's next send, the next status, and at most 50 ms); each round
//! feeds every datagram ready, then the timers, then drains events and
//! sends; events leave in the order the endpoint raised them, each once
//! (an event not taken yet stays queued); after the endpoint closed, the
//! conditioner is given at most a second to deliver what it holds, then
//! the runtime is finished ([`Runtime::is_finished`]).

use std::collections::VecDeque;
use std::time::Duration;

use lockstep_lobby::{Endpoint, LinkStatus, MatchEvent};
use lockstep_protocol::Instant;

use crate::socket::{Socket, Traffic};

/// How long the conditioner may still deliver after the endpoint closed.
const LINGER_MICROS: u64 = 1_000_000;

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
    /// When the endpoint was first seen closed.
    closed_at: Option<Instant>,
    /// Closed, and the conditioner delivered what it held (or gave up).
    finished: bool,
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
            closed_at: None,
            finished: false,
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

    /// Whether the runtime is done: the endpoint closed, what it sent left
    /// (or a second passed), and every event was handed out. A game loop
    /// stops polling here; [`Runtime::next_event`] returns `None`.
    pub fn is_finished(&self) -> bool {
        self.finished && self.events.is_empty()
    }

    /// Advances the match as far as it can go now, without waiting: every
    /// datagram that arrived is handed to the endpoint, its timers that are
    /// due run (a seat steps the frames due, sampling its input), what is
    /// due is sent, and a status is raised when one is due. Gives the
    /// events raised, in order; those the caller does not take stay queued
    /// for the next call.
    ///
    /// For a game loop: call it once per frame of the loop, and at least
    /// once per tick of the match (a seat's frames are stepped, and its
    /// inputs sent, only inside a call; a loop slower than the tick makes
    /// the seat catch up several frames in one call and its inputs arrive
    /// late, which slows the match's pace for every seat). Between calls
    /// nothing happens and nothing is lost: datagrams wait in the socket's
    /// buffer. Needs no async runtime; costs what the endpoint's work costs
    /// (the frames stepped) plus a few system calls.
    pub fn poll(&mut self) -> impl Iterator<Item = MatchEvent> + '_ {
        self.collect();
        if !self.finished {
            let now = self.socket.now();
            if !self.endpoint.is_closed() {
                let datagrams = self.socket.receive_ready();
                self.work(datagrams);
                if let Some(status) = self.status_due(self.socket.now()) {
                    self.events.push_back(MatchEvent::Status(status));
                }
            }
            if self.endpoint.is_closed() {
                self.linger(now);
            }
        }
        std::iter::from_fn(move || self.events.pop_front())
    }

    /// The next event: runs the loop, waiting on tokio, until the endpoint
    /// has one (or a status is due). `None` once the runtime is finished
    /// ([`Runtime::is_finished`]).
    ///
    /// Cancel-safe: dropping the future (a `select!` branch that lost)
    /// loses nothing. It awaits only while waiting for a datagram or a
    /// deadline; datagrams are read after the wait, handed to the endpoint
    /// with no await in between, and events wait in the runtime's queue
    /// until taken. In a game loop, prefer [`Runtime::poll`]: a `select!`
    /// against a frame budget spends the whole budget waiting, while a
    /// poll spends only the work there is.
    pub async fn next_event(&mut self) -> Option<MatchEvent> {
        loop {
            self.collect();
            if let Some(e) = self.events.pop_front() {
                return Some(e);
            }
            if self.finished {
                return None;
            }
            let now = self.socket.now();
            if self.endpoint.is_closed() {
                if let Some(due) = self.linger(now) {
                    // What arrives now is too late for the endpoint.
                    let _ = self.socket.receive(due).await;
                }
                continue;
            }
            if let Some(status) = self.status_due(now) {
                return Some(MatchEvent::Status(status));
            }
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
            self.work(datagrams);
        }
    }

    /// Events the endpoint holds (one built already ended may hold some
    /// from before this runtime drove it), into the queue.
    fn collect(&mut self) {
        while let Some(e) = self.endpoint.poll_event() {
            self.events.push_back(e);
        }
    }

    /// One round: feed the datagrams, run the timers, collect events, send.
    fn work(&mut self, datagrams: Vec<(std::net::SocketAddr, Vec<u8>)>) {
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
        self.collect();
        while let Some(d) = self.endpoint.poll_transmit(now) {
            self.socket.send(d.to, d.bytes);
        }
        self.socket.flush();
        let busy = woke.elapsed();
        self.endpoint.spent(inside.as_micros() as u64);
        self.cost.endpoint_micros += inside.as_micros() as u64;
        self.cost.loop_micros += busy.saturating_sub(inside).as_micros() as u64;
    }

    /// The status, when one is due at `now`, with the traffic since the
    /// last one.
    fn status_due(&mut self, now: Instant) -> Option<LinkStatus> {
        if now < self.next_status {
            return None;
        }
        self.next_status = now.plus(self.status_every);
        let mut s = self.endpoint.status();
        let t = self.socket.traffic();
        let (last, at) = self.last_traffic;
        let micros = now.since(at).max(1);
        s.up_bps = (t.sent_bytes - last.sent_bytes) * 8 * 1_000_000 / micros;
        s.down_bps = (t.received_bytes - last.received_bytes) * 8 * 1_000_000 / micros;
        let (sent, lost) = self.socket.conditioned();
        s.loss_permille = lost * 1000 / sent.max(1);
        self.last_traffic = (t, now);
        Some(s)
    }

    /// After the endpoint closed: sends what the conditioner has due, and
    /// gives when its next datagram is due, or `None` (finished) when it
    /// holds none due within a second of the close.
    fn linger(&mut self, now: Instant) -> Option<Instant> {
        let until = self.closed_at.get_or_insert(now).plus(LINGER_MICROS);
        self.socket.flush();
        match self.socket.next_send() {
            Some(due) if due <= until => Some(due),
            _ => {
                self.finished = true;
                None
            }
        }
    }
}
