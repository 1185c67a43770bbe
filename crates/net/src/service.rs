//! The rendezvous and the relay over real sockets: [`Services`] drives
//! `lockstep-rendezvous`'s [`Rendezvous`] and [`Relay`] (either or both, on
//! one socket each) on the wall clock, which their tickets' expiries are
//! read by. `lockstep rendezvous` and `lockstep relay` are this loop.
//!
//! Invariants: every wait is bounded (by the state machines' timeouts and
//! at most 50 ms); each wake feeds every datagram ready, runs the timers,
//! then sends; nothing is decided here.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockstep_protocol::Instant;
use lockstep_rendezvous::{Relay, Rendezvous, Store};

use crate::socket::Socket;

/// Microseconds since the UNIX epoch by this machine's clock.
pub fn wall_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// A rendezvous or a relay and its socket.
trait Service {
    fn handle_datagram(&mut self, now: u64, from: SocketAddr, bytes: &[u8]);
    fn handle_timeout(&mut self, now: u64);
    fn poll_timeout(&self) -> Option<u64>;
    fn poll_transmit(&mut self) -> Option<lockstep_rendezvous::Transmit>;
}

impl<S: Store> Service for Rendezvous<S> {
    fn handle_datagram(&mut self, now: u64, from: SocketAddr, bytes: &[u8]) {
        Rendezvous::handle_datagram(self, now, from, bytes);
    }
    fn handle_timeout(&mut self, now: u64) {
        Rendezvous::handle_timeout(self, now);
    }
    fn poll_timeout(&self) -> Option<u64> {
        Rendezvous::poll_timeout(self)
    }
    fn poll_transmit(&mut self) -> Option<lockstep_rendezvous::Transmit> {
        Rendezvous::poll_transmit(self)
    }
}

impl Service for Relay {
    fn handle_datagram(&mut self, now: u64, from: SocketAddr, bytes: &[u8]) {
        Relay::handle_datagram(self, now, from, bytes);
    }
    fn handle_timeout(&mut self, now: u64) {
        Relay::handle_timeout(self, now);
    }
    fn poll_timeout(&self) -> Option<u64> {
        Relay::poll_timeout(self)
    }
    fn poll_transmit(&mut self) -> Option<lockstep_rendezvous::Transmit> {
        Relay::poll_transmit(self)
    }
}

/// One wake of `service` on `socket`: wait until `deadline` (wall clock)
/// or a datagram, feed, run the timers, send.
async fn turn(socket: &mut Socket, service: &mut dyn Service, deadline: u64) {
    let wall = wall_micros();
    let wait = deadline.saturating_sub(wall).min(50_000);
    let local_deadline = Instant::from_micros(socket.now().as_micros() + wait);
    let datagrams = socket.receive(local_deadline).await;
    let now = wall_micros();
    for (from, bytes) in datagrams {
        service.handle_datagram(now, from, &bytes);
    }
    if service.poll_timeout().is_some_and(|t| t <= now) {
        service.handle_timeout(now);
    }
    while let Some(t) = service.poll_transmit() {
        socket.send(t.to, t.bytes);
    }
    socket.flush();
}

/// A rendezvous and a relay, each on its own socket, either absent. See
/// the module documentation.
pub struct Services<S: Store> {
    /// The rendezvous and its socket.
    pub rendezvous: Option<(Socket, Rendezvous<S>)>,
    /// The relay and its socket.
    pub relay: Option<(Socket, Relay)>,
}

impl<S: Store> core::fmt::Debug for Services<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Services")
            .field("rendezvous", &self.rendezvous.is_some())
            .field("relay", &self.relay.is_some())
            .finish()
    }
}

impl<S: Store> Services<S> {
    /// Runs both for `span`.
    pub async fn run_for(&mut self, span: Duration) {
        let until = wall_micros().saturating_add(span.as_micros() as u64);
        loop {
            let now = wall_micros();
            if now >= until {
                return;
            }
            let deadline = |t: Option<u64>| t.unwrap_or(until).min(until);
            match (&mut self.rendezvous, &mut self.relay) {
                (Some((a, r)), Some((b, y))) => {
                    let (da, db) = (deadline(r.poll_timeout()), deadline(y.poll_timeout()));
                    // Whichever wakes first; the other takes its turn next.
                    tokio::select! {
                        () = turn(a, r, da) => {}
                        () = turn(b, y, db) => {}
                    }
                }
                (Some((a, r)), None) => {
                    let d = deadline(r.poll_timeout());
                    turn(a, r, d).await;
                }
                (None, Some((b, y))) => {
                    let d = deadline(y.poll_timeout());
                    turn(b, y, d).await;
                }
                (None, None) => {
                    tokio::time::sleep(Duration::from_micros(until - now)).await;
                }
            }
        }
    }
}
