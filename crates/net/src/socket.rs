//! [`Socket`]: one UDP socket made with socket2 (IPv4, IPv6 or dual-stack,
//! with sized buffers), its send path through a [`Conditioner`], the clock
//! the sans-IO crates read, and, for a match found by its code, the reach
//! layer ([`Reach`]) every datagram passes through ([`Socket::reach_with`]).
//!
//! The socket is non-blocking and needs no async runtime: a game loop
//! takes what has arrived ([`Socket::receive_ready`]) and sends what is
//! due ([`Socket::flush`]) whenever it likes. Only waiting needs tokio
//! ([`Socket::receive`]): the first wait registers a second handle on the
//! same socket with the tokio runtime it runs on, which wakes the wait when
//! a datagram arrives.
//!
//! Invariants: the socket is the only place a clock is read
//! ([`Socket::now`], microseconds since it was opened); every datagram
//! sent passes through the reach layer (if any), then the conditioner; a
//! receive drains every datagram ready before returning, so a burst is
//! handled before the next step; the reach layer's own datagrams (probes,
//! the rendezvous, the relay's answers) never reach the endpoint, and its
//! timers are due in [`Socket::next_send`] and run in [`Socket::flush`].

use std::io;
use std::net::{Ipv6Addr, SocketAddr};
use std::time::Duration;

use socket2::{Domain, Protocol, Type};
use tokio::io::Interest;

use crate::conditioner::{Conditioner, LinkShape};
use lockstep_protocol::Instant;
use lockstep_rendezvous::{Inbound, Reach};

/// Socket buffer sizes asked of the OS (it may grant less).
pub const BUFFER_BYTES: usize = 1 << 20;

/// Bytes and datagrams through a socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Datagrams sent (after the conditioner).
    pub sent: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Datagrams received.
    pub received: u64,
    /// Bytes received.
    pub received_bytes: u64,
}

/// The most datagrams one receive takes before the caller steps: a flood
/// cannot keep a seat from its frames.
const RECEIVE_MOST: usize = 4096;

/// A UDP socket, its conditioner and its clock.
#[derive(Debug)]
pub struct Socket {
    /// Non-blocking; every send and receive goes through it.
    socket: std::net::UdpSocket,
    /// The same socket registered with tokio, made on the first wait
    /// ([`Socket::receive`]): it only tells a wait that a datagram arrived.
    waker: Option<tokio::net::UdpSocket>,
    v6: bool,
    conditioner: Conditioner,
    start: std::time::Instant,
    traffic: Traffic,
    buf: Vec<u8>,
    reach: Option<Reach>,
}

/// Opens a non-blocking UDP socket bound to `addr`. An unspecified IPv6
/// address (`[::]`) is made dual-stack where the OS allows, so IPv4 peers
/// reach it too.
pub fn bind(addr: SocketAddr) -> io::Result<std::net::UdpSocket> {
    let domain = Domain::for_address(addr);
    let socket = socket2::Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() && addr.ip() == Ipv6Addr::UNSPECIFIED {
        // Not every OS allows it; IPv6 alone still works.
        let _ = socket.set_only_v6(false);
    }
    let _ = socket.set_recv_buffer_size(BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(BUFFER_BYTES);
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// `addr` with an IPv4-mapped IPv6 address (how a dual-stack socket sees
/// an IPv4 sender) written as the IPv4 address it is, so every process names
/// a peer the same way.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => addr,
        },
        v4 => v4,
    }
}

impl Socket {
    /// A socket bound to `addr`, sending through `shape` (seeded by
    /// `seed`). Needs no async runtime.
    pub fn open(addr: SocketAddr, shape: LinkShape, seed: u64) -> io::Result<Socket> {
        Ok(Socket {
            socket: bind(addr)?,
            waker: None,
            v6: addr.is_ipv6(),
            conditioner: Conditioner::new(shape, seed),
            start: std::time::Instant::now(),
            traffic: Traffic::default(),
            buf: vec![0; 2048],
            reach: None,
        })
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Microseconds since the socket was opened.
    pub fn now(&self) -> Instant {
        Instant::from_micros(self.start.elapsed().as_micros() as u64)
    }

    /// The traffic so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// Datagrams handed to the conditioner, and how many it lost.
    pub fn conditioned(&self) -> (u64, u64) {
        self.conditioner.counts()
    }

    /// Passes every datagram in and out through `reach` from now on (a
    /// match found through a rendezvous: its members go by mapped
    /// addresses).
    pub fn reach_with(&mut self, reach: Reach) {
        self.reach = Some(reach);
    }

    /// The reach layer, if the match was found through a rendezvous.
    pub fn reach(&self) -> Option<&Reach> {
        self.reach.as_ref()
    }

    /// The reach layer, to read its events.
    pub fn reach_mut(&mut self) -> Option<&mut Reach> {
        self.reach.as_mut()
    }

    /// Queues `bytes` for `to` through the reach layer (a mapped address
    /// goes to its member's path now) and the conditioner;
    /// [`Socket::flush`] sends what is due.
    pub fn send(&mut self, to: SocketAddr, bytes: Vec<u8>) {
        let now = self.now();
        let (to, bytes) = match &mut self.reach {
            Some(reach) => match reach.send(now.as_micros(), to, bytes) {
                Some(t) => (t.to, t.bytes),
                None => return,
            },
            None => (to, bytes),
        };
        self.conditioner.send(now, to, bytes);
    }

    /// Runs the reach layer's timers if due and queues what it sends.
    fn pump_reach(&mut self, now: Instant) {
        let Some(reach) = &mut self.reach else {
            return;
        };
        if reach.poll_timeout().is_some_and(|t| t <= now.as_micros()) {
            reach.handle_timeout(now.as_micros());
        }
        while let Some(t) = reach.poll_transmit() {
            self.conditioner.send(now, t.to, t.bytes);
        }
    }

    /// `to` in the socket's address family: an IPv4 address becomes
    /// IPv4-mapped on an IPv6 (dual-stack) socket.
    fn on_wire(&self, to: SocketAddr) -> SocketAddr {
        match to {
            SocketAddr::V4(v4) if self.v6 => {
                SocketAddr::new(v4.ip().to_ipv6_mapped().into(), v4.port())
            }
            other => other,
        }
    }

    /// Sends every queued datagram that is due. A send the OS refuses
    /// (buffer full, unreachable) is dropped like a lost datagram.
    pub fn flush(&mut self) {
        let now = self.now();
        self.pump_reach(now);
        while let Some((to, bytes)) = self.conditioner.pop_due(now) {
            if self.socket.send_to(&bytes, self.on_wire(to)).is_ok() {
                self.traffic.sent += 1;
                self.traffic.sent_bytes += bytes.len() as u64;
            }
        }
    }

    /// When the conditioner next has a datagram due, or the reach layer a
    /// timer.
    pub fn next_send(&self) -> Option<Instant> {
        let reach = self
            .reach
            .as_ref()
            .and_then(Reach::poll_timeout)
            .map(Instant::from_micros);
        [self.conditioner.next_due(), reach]
            .into_iter()
            .flatten()
            .min()
    }

    /// Every datagram that has arrived, in arrival order, without waiting
    /// (at most 4 096 a call; the rest wait for the next). The reach
    /// layer's own datagrams are taken by it here.
    pub fn receive_ready(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        let mut out = Vec::new();
        let now = self.now().as_micros();
        // Until WouldBlock. Another error (an ICMP port unreachable that
        // Linux reports on the next receive) says nothing about the
        // datagrams still queued: stop this round, the next one reads them.
        for _ in 0..RECEIVE_MOST {
            let Ok((n, from)) = self.socket.recv_from(&mut self.buf) else {
                break;
            };
            self.took(now, n, from, &mut out);
        }
        out
    }

    /// Waits until a datagram arrives or `deadline` (socket time) passes,
    /// then returns every datagram ready, in arrival order. Runs on a tokio
    /// runtime with I/O and time enabled. Cancel-safe: it awaits only
    /// before reading, so a dropped wait loses no datagram.
    pub async fn receive(&mut self, deadline: Instant) -> Vec<(SocketAddr, Vec<u8>)> {
        let wait = Duration::from_micros(deadline.since(self.now()));
        if self.waker.is_none() {
            let registered = self
                .socket
                .try_clone()
                .and_then(tokio::net::UdpSocket::from_std);
            match registered {
                Ok(waker) => self.waker = Some(waker),
                // No second handle (out of descriptors): wait out the
                // deadline, then take what is there.
                Err(_) => {
                    tokio::time::sleep(wait).await;
                    return self.receive_ready();
                }
            }
        }
        let mut out = Vec::new();
        let Some(waker) = &self.waker else {
            return out;
        };
        let ready = tokio::time::timeout(wait, waker.readable()).await;
        if !matches!(ready, Ok(Ok(()))) {
            return out;
        }
        // Read through tokio's handle, so that the WouldBlock that ends
        // the burst tells tokio to wait for the next datagram. (Taken out
        // and put back with no await between.)
        let Some(waker) = self.waker.take() else {
            return out;
        };
        let now = self.now().as_micros();
        for _ in 0..RECEIVE_MOST {
            let (socket, buf) = (&self.socket, &mut self.buf);
            let Ok((n, from)) = waker.try_io(Interest::READABLE, || socket.recv_from(buf)) else {
                break;
            };
            self.took(now, n, from, &mut out);
        }
        self.waker = Some(waker);
        out
    }

    /// Counts the `n` bytes just read from `from` and passes them through
    /// the reach layer, if any, into `out`.
    fn took(&mut self, now: u64, n: usize, from: SocketAddr, out: &mut Vec<(SocketAddr, Vec<u8>)>) {
        self.traffic.received += 1;
        self.traffic.received_bytes += n as u64;
        let from = canonical(from);
        let bytes = &self.buf[..n];
        match &mut self.reach {
            Some(reach) => {
                if let Inbound::Pass { from, bytes } = reach.handle_datagram(now, from, bytes) {
                    out.push((from, bytes.to_vec()));
                }
            }
            None => out.push((from, bytes.to_vec())),
        }
    }
}
