//! [`LockstepSeat`]: one seat's [`Runtime`] of `lockstep-net`, advanced a
//! little in each Bevy frame without blocking it.
//!
//! `lockstep-net` offers its runtime as one async loop
//! ([`Runtime::next_event`]), not as a step to call once per frame. This
//! module keeps that loop as it is and runs it in small slices: the seat's
//! whole life (for a joiner: the setup, the roster, then the seat) is one
//! future, kept across frames, that pushes every event into a queue. Each
//! [`LockstepSeat::poll`] polls it on the seat's own current-thread tokio
//! runtime, lets tokio's driver look once at the socket and the timers
//! without waiting (a yield), and polls it again. The future is never
//! dropped before it ends, so the timers the runtime arms (the endpoint's
//! next timeout, the next status) stay armed from one frame to the next
//! and fire in the first poll after they are due.
//!
//! The app still needs the endpoint between polls (to set the input, to
//! issue commands, to read the game): the runtime drives a thin endpoint
//! (`SharedSeat`) that borrows the real [`SeatEndpoint`] from a shared
//! cell for the length of each call and never across an `.await`, so the
//! app's borrows (between polls) and the runtime's (inside them) never
//! overlap.
//!
//! Invariants: a poll never waits (the socket and timers are looked at,
//! not waited on); events reach the queue in the order the runtime hands
//! them out, each once; the future is polled again only while it has not
//! ended, and dropped as soon as it has; everything here lives on the
//! thread that made it (Bevy holds it as a non-send resource).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use lockstep_lobby::{Datagram, Endpoint, JoinEvent, Joining};
use lockstep_net::{LinkStatus, MatchEvent, Runtime, STATUS_EVERY, SeatEndpoint, SeatPlan, Socket};
use lockstep_protocol::Instant;
use lockstep_sim::Game;

/// What the runtime and the app share: the seat (none while a joiner
/// waits for its roster) and the events not yet handed to Bevy.
struct Shared<G: Game, W: Write> {
    seat: Option<SeatEndpoint<G, W>>,
    events: VecDeque<MatchEvent>,
}

type Cell<G, W> = Rc<RefCell<Shared<G, W>>>;

/// The endpoint the runtime drives: the shared seat, borrowed per call.
struct SharedSeat<G: Game, W: Write>(Cell<G, W>);

impl<G: Game, W: Write> Endpoint for SharedSeat<G, W> {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        if let Some(seat) = &mut self.0.borrow_mut().seat {
            seat.handle_datagram(now, from, bytes);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if let Some(seat) = &mut self.0.borrow_mut().seat {
            seat.handle_timeout(now);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.0.borrow().seat.as_ref()?.poll_timeout()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        self.0.borrow_mut().seat.as_mut()?.poll_transmit(now)
    }

    fn poll_event(&mut self) -> Option<MatchEvent> {
        self.0.borrow_mut().seat.as_mut()?.poll_event()
    }

    fn status(&self) -> LinkStatus {
        match &self.0.borrow().seat {
            Some(seat) => seat.status(),
            None => LinkStatus::default(),
        }
    }

    fn is_closed(&self) -> bool {
        self.0.borrow().seat.as_ref().is_none_or(|s| s.is_closed())
    }
}

/// How the seat starts: a host's endpoint, ready; or a joiner's setup,
/// with what it plays its seat with once the roster comes.
pub(crate) enum Start<G: Game, W: Write> {
    /// The host: plays seat 0 and seats the joiners.
    Host(Box<SeatEndpoint<G, W>>),
    /// A joiner: asks for a seat, then plays it with `plan`.
    Join {
        joining: Box<Joining>,
        plan: SeatPlan<G, W>,
        timing: lockstep_net::SeatTiming,
    },
}

/// The seat's whole life, as one future: every event goes to the queue.
async fn live<G: Game + 'static, W: Write + 'static>(
    socket: Socket,
    start: Start<G, W>,
    cell: Cell<G, W>,
) {
    let push = |e: MatchEvent| cell.borrow_mut().events.push_back(e);
    let socket = match start {
        Start::Host(seat) => {
            cell.borrow_mut().seat = Some(*seat);
            socket
        }
        Start::Join {
            joining,
            plan,
            timing,
        } => {
            let mut rt = Runtime::new(socket, *joining, STATUS_EVERY);
            match rt.roster(|e| push(e.clone())).await {
                Ok(roster) => push(MatchEvent::Join(JoinEvent::Roster(roster))),
                Err(end) => {
                    push(MatchEvent::Ended(end));
                    // Lets the setup's last datagrams leave.
                    while let Some(e) = rt.next_event().await {
                        push(e);
                    }
                    return;
                }
            }
            match rt.play(plan, timing) {
                Ok(rt) => {
                    let (socket, seat) = rt.into_parts();
                    cell.borrow_mut().seat = Some(seat);
                    socket
                }
                Err((mut refused, _why)) => {
                    // The refusal reaches the host; the setup ends itself.
                    while let Some(e) = refused.next_event().await {
                        push(e);
                    }
                    return;
                }
            }
        }
    };
    let mut rt = Runtime::new(socket, SharedSeat(cell.clone()), STATUS_EVERY);
    while let Some(e) = rt.next_event().await {
        push(e);
    }
}

/// One seat of a match, driven in slices (see the module documentation).
/// Bevy holds it as a non-send resource: read it with
/// `NonSend<LockstepSeat<G, W>>`, change it with `NonSendMut`.
pub struct LockstepSeat<G: Game, W: Write> {
    tokio: tokio::runtime::Runtime,
    cell: Cell<G, W>,
    life: Option<Pin<Box<dyn Future<Output = ()>>>>,
    local_addr: SocketAddr,
    opened: std::time::Instant,
}

impl<G: Game + 'static, W: Write + 'static> LockstepSeat<G, W> {
    /// Starts the seat on `socket` (opened on `tokio`, `opened` just after
    /// the socket).
    pub(crate) fn new(
        tokio: tokio::runtime::Runtime,
        socket: Socket,
        opened: std::time::Instant,
        start: Start<G, W>,
    ) -> LockstepSeat<G, W> {
        let cell = Rc::new(RefCell::new(Shared {
            seat: None,
            events: VecDeque::new(),
        }));
        let local_addr = socket
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        LockstepSeat {
            tokio,
            life: Some(Box::pin(live(socket, start, cell.clone()))),
            cell,
            local_addr,
            opened,
        }
    }

    /// Runs the seat as far as it can go without waiting: datagrams that
    /// arrived, timers that are due, datagrams to send.
    pub fn poll(&mut self) {
        let Some(life) = &mut self.life else {
            return;
        };
        let ended = self.tokio.block_on(async {
            let mut life = life.as_mut();
            if poll_once(life.as_mut()).await {
                return true;
            }
            // Lets tokio's driver look at the socket and the timers once,
            // without waiting, then runs what that woke.
            tokio::task::yield_now().await;
            poll_once(life).await
        });
        if ended {
            self.life = None;
        }
    }

    /// The next event the runtime handed out since the last call.
    pub fn next_event(&mut self) -> Option<MatchEvent> {
        self.cell.borrow_mut().events.pop_front()
    }

    /// Whether the runtime still runs (the match is not over, or its last
    /// datagrams have not left yet).
    pub fn is_running(&self) -> bool {
        self.life.is_some()
    }

    /// The address the seat's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Calls `f` with the seat's endpoint (`None` while a joiner waits for
    /// its roster): its peer, its game, its counters.
    pub fn with_endpoint<R>(&self, f: impl FnOnce(Option<&SeatEndpoint<G, W>>) -> R) -> R {
        f(self.cell.borrow().seat.as_ref())
    }

    /// Calls `f` with the seat's endpoint, to change it (does nothing
    /// while a joiner waits for its roster).
    pub fn with_endpoint_mut<R>(
        &mut self,
        f: impl FnOnce(&mut SeatEndpoint<G, W>) -> R,
    ) -> Option<R> {
        self.cell.borrow_mut().seat.as_mut().map(f)
    }

    /// The replay log, once the match ended (`None` before, or if the plan
    /// kept none, or if it was taken already).
    pub fn take_log(&mut self) -> Option<W> {
        self.with_endpoint_mut(|s| s.take_log()).flatten()
    }

    /// Leaves the match now: the seat says goodbye and the match ends for
    /// this process ([`lockstep_net::MatchEnd::Left`]).
    pub fn leave(&mut self) {
        let now = Instant::from_micros(self.opened.elapsed().as_micros() as u64);
        self.with_endpoint_mut(|s| s.leave(now));
    }
}

/// Polls `f` once with the caller's context: whether it ended.
async fn poll_once(mut f: Pin<&mut (dyn Future<Output = ()> + '_)>) -> bool {
    std::future::poll_fn(|cx| Poll::Ready(f.as_mut().poll(cx).is_ready())).await
}
