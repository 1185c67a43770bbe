//! A match found by its code: registering a host's codes at a rendezvous
//! ([`register`]) and finding a host by a code ([`find`]). Both put a
//! [`Reach`] layer in the socket and run it alone until the rendezvous
//! answers; from then on every datagram of the match passes through it
//! (punching, the relay, mapped addresses — all decided in
//! `lockstep-rendezvous`), and the runtime drives it with the socket. An
//! app that must not wait (a game loop polling its seat each frame) puts
//! the layer in with [`start_host`] or [`start_join`] and goes on at once.
//!
//! ```no_run
//! use lockstep_net::conditioner::LinkShape;
//! use lockstep_net::{Invite, Socket, Want, reach};
//! use lockstep_rendezvous::{MatchCode, ReachTiming};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut socket = Socket::open("0.0.0.0:0".parse()?, LinkShape::PERFECT, 1)?;
//! let code = MatchCode::parse("4K7Q-M2XHP9")?;
//! let rendezvous = "203.0.113.7:7700".parse()?;
//! let found = reach::find(&mut socket, rendezvous, &code, ReachTiming::default(), |_| {}).await?;
//! // The code found the host; proving it tells the host we were invited,
//! // and the host's proof back tells us the rendezvous led us to the right
//! // one.
//! let joining = lockstep_net::join(socket, found.host, Want::Seat, Invite::Code(code))?;
//! # let _ = joining;
//! # Ok(())
//! # }
//! ```
//!
//! Invariants: nothing here decides anything (the reach layer does); every
//! wait is bounded by the reach layer's own (a rendezvous that never
//! answers ends with [`ReachFailure::NoAnswer`] after its last attempt).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use lockstep_rendezvous::{
    CodeId, MatchCode, MatchId, MemberId, Owner, Reach, ReachEvent, ReachTiming, Refusal, Role,
};

use crate::entropy::{self, NoEntropy};
use crate::socket::Socket;

/// Why a match could not be found or registered.
#[derive(Debug, thiserror::Error)]
pub enum ReachFailure {
    /// The rendezvous refused.
    #[error("the rendezvous refused: {0}")]
    Refused(Refusal),
    /// The rendezvous never answered.
    #[error("the rendezvous at {0} does not answer")]
    NoAnswer(SocketAddr),
    /// No randomness for the registration's secret.
    #[error(transparent)]
    Entropy(#[from] NoEntropy),
}

/// What the rendezvous answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Met {
    /// The match.
    pub match_id: MatchId,
    /// This process's number in it.
    pub member: MemberId,
    /// Its role.
    pub role: Role,
    /// Where the rendezvous sees this process (outside its NAT).
    pub observed: SocketAddr,
    /// The address the host goes by: what a joiner's setup asks.
    pub host: SocketAddr,
}

/// This machine's address toward `rendezvous` (the one its routes would
/// send from), with the socket's port: the local candidate other members
/// on the same network reach it at. Nothing is sent to find it.
pub fn local_candidates(socket: &Socket, rendezvous: SocketAddr) -> Vec<SocketAddr> {
    let Ok(bound) = socket.local_addr() else {
        return Vec::new();
    };
    if !bound.ip().is_unspecified() {
        return vec![bound];
    }
    let any: IpAddr = match rendezvous {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let probe = std::net::UdpSocket::bind(SocketAddr::new(any, 0))
        .and_then(|s| s.connect(rendezvous).and_then(|()| s.local_addr()));
    match probe {
        Ok(local) if !local.ip().is_unspecified() => {
            vec![SocketAddr::new(local.ip(), bound.port())]
        }
        _ => Vec::new(),
    }
}

/// Puts in `socket` a reach layer that registers `codes` (the seat code
/// first, then the spectator code, if any) at `rendezvous` and refreshes
/// them while it runs, without waiting: host the match on the socket at
/// once, and read how the registration went from the reach layer's events
/// ([`Socket::reach_mut`]).
pub fn start_host(
    socket: &mut Socket,
    rendezvous: SocketAddr,
    codes: &[MatchCode],
    timing: ReachTiming,
) -> Result<(), NoEntropy> {
    let mut owner = [0u8; 16];
    owner.copy_from_slice(&entropy::secret()?[..16]);
    let ids: Vec<CodeId> = codes.iter().map(MatchCode::id).collect();
    let locals = local_candidates(socket, rendezvous);
    let now = socket.now().as_micros();
    let reach = Reach::host(now, rendezvous, locals, Owner(owner), ids, timing);
    socket.reach_with(reach);
    Ok(())
}

/// Puts in `socket` a reach layer that looks `code` up at `rendezvous`,
/// without waiting, and gives the address the host goes by: join it on
/// this socket at once (what goes to the host waits in the reach layer
/// until a path opens), and read how the lookup went from the reach
/// layer's events.
pub fn start_join(
    socket: &mut Socket,
    rendezvous: SocketAddr,
    code: &MatchCode,
    timing: ReachTiming,
) -> SocketAddr {
    let locals = local_candidates(socket, rendezvous);
    let now = socket.now().as_micros();
    let reach = Reach::join(now, rendezvous, locals, code.id(), timing);
    let host = reach.host_address();
    socket.reach_with(reach);
    host
}

/// [`start_host`], then waits for the rendezvous's answer, handing every
/// reach event to `on_event`. The socket keeps the reach layer: host the
/// match on it, and the registration is refreshed while it runs.
pub async fn register(
    socket: &mut Socket,
    rendezvous: SocketAddr,
    codes: &[MatchCode],
    timing: ReachTiming,
    on_event: impl FnMut(&ReachEvent),
) -> Result<Met, ReachFailure> {
    start_host(socket, rendezvous, codes, timing)?;
    meet(socket, rendezvous, on_event).await
}

/// [`start_join`], then waits for the rendezvous's answer, handing every
/// reach event to `on_event`. Then join [`Met::host`] on this socket: the
/// reach layer finds the path to it (direct if punching opens one, else
/// the relay).
pub async fn find(
    socket: &mut Socket,
    rendezvous: SocketAddr,
    code: &MatchCode,
    timing: ReachTiming,
    on_event: impl FnMut(&ReachEvent),
) -> Result<Met, ReachFailure> {
    start_join(socket, rendezvous, code, timing);
    meet(socket, rendezvous, on_event).await
}

/// Runs the socket's reach layer alone until the rendezvous answers.
async fn meet(
    socket: &mut Socket,
    rendezvous: SocketAddr,
    mut on_event: impl FnMut(&ReachEvent),
) -> Result<Met, ReachFailure> {
    loop {
        socket.flush();
        let Some(reach) = socket.reach_mut() else {
            return Err(ReachFailure::NoAnswer(rendezvous));
        };
        while let Some(event) = reach.poll_event() {
            on_event(&event);
            match event {
                ReachEvent::Joined {
                    match_id,
                    member,
                    role,
                    observed,
                } => {
                    return Ok(Met {
                        match_id,
                        member,
                        role,
                        observed,
                        host: reach.host_address(),
                    });
                }
                ReachEvent::Refused(r) => return Err(ReachFailure::Refused(r)),
                ReachEvent::NoAnswer => return Err(ReachFailure::NoAnswer(rendezvous)),
                _ => {}
            }
        }
        let now = socket.now();
        let deadline = socket
            .next_send()
            .unwrap_or(now.plus(50_000))
            .min(now.plus(50_000));
        // Nothing but the reach layer's own datagrams can come before the
        // match starts: anything else is dropped here.
        let _ = socket.receive(deadline).await;
    }
}
