//! [`SeatRuntime`]: one seat's runtime from its first datagram to its
//! last, for a game loop that polls it. A host's seat plays from the start;
//! a joiner's first runs the setup and, when the roster comes, plays the
//! seat the roster gives with the plan it was made with — the step an app
//! would otherwise write between [`Runtime::roster`] and [`Runtime::play`].
//!
//! Invariants: events leave in the order the runtimes raised them, each
//! once, the roster's among them; the setup's runtime becomes the seat's at
//! the poll that hands out the roster, over the same socket; a roster this
//! process cannot play is refused to the host, and the setup runs until it
//! has said so (its end is the last event).

use std::collections::VecDeque;
use std::io::Write;

use lockstep_lobby::{JoinEvent, Joining, MatchEvent, Refusal, SeatEndpoint, SeatPlan, SeatTiming};
use lockstep_sim::Game;

use crate::runtime::Runtime;
use crate::socket::Socket;

/// One seat of a match, from the setup to the end, driven by
/// [`SeatRuntime::poll`]. See the module documentation.
pub struct SeatRuntime<G: Game, W: Write> {
    stage: Stage<G, W>,
    events: VecDeque<MatchEvent>,
}

/// Where the seat is.
enum Stage<G: Game, W: Write> {
    /// A joiner waiting for its roster, and what it will play the seat with.
    Joining {
        rt: Box<Runtime<Joining>>,
        plan: Box<(SeatPlan<G, W>, SeatTiming)>,
    },
    /// A joiner that could not play its roster, telling the host why.
    Refused(Box<Runtime<Joining>>, Refusal),
    /// The seat, playing.
    Seat(Box<Runtime<SeatEndpoint<G, W>>>),
    /// Between two stages, inside one call.
    Moving,
}

impl<G: Game, W: Write> SeatRuntime<G, W> {
    /// A seat that plays from the start (a host's: [`crate::host`]).
    pub fn seat(rt: Runtime<SeatEndpoint<G, W>>) -> SeatRuntime<G, W> {
        SeatRuntime {
            stage: Stage::Seat(Box::new(rt)),
            events: VecDeque::new(),
        }
    }

    /// A joiner's setup ([`crate::join`]) that plays its seat with `plan`
    /// and `timing` once the roster comes.
    pub fn joining(
        rt: Runtime<Joining>,
        plan: SeatPlan<G, W>,
        timing: SeatTiming,
    ) -> SeatRuntime<G, W> {
        SeatRuntime {
            stage: Stage::Joining {
                rt: Box::new(rt),
                plan: Box::new((plan, timing)),
            },
            events: VecDeque::new(),
        }
    }

    /// [`Runtime::poll`] of the stage the seat is in: everything due now,
    /// without waiting; the events raised, in order (the roster among
    /// them). Those not taken stay queued for the next call.
    pub fn poll(&mut self) -> impl Iterator<Item = MatchEvent> + '_ {
        let mut roster = false;
        match &mut self.stage {
            Stage::Joining { rt, .. } => {
                for e in rt.poll() {
                    roster |= matches!(e, MatchEvent::Join(JoinEvent::Roster(_)));
                    self.events.push_back(e);
                }
            }
            Stage::Refused(rt, _) => self.events.extend(rt.poll()),
            Stage::Seat(rt) => self.events.extend(rt.poll()),
            Stage::Moving => {}
        }
        if roster {
            self.take_seat();
        }
        std::iter::from_fn(move || self.events.pop_front())
    }

    /// The roster came: the setup's runtime becomes the seat's.
    fn take_seat(&mut self) {
        let Stage::Joining { rt, plan } = std::mem::replace(&mut self.stage, Stage::Moving) else {
            unreachable!("a roster comes only to a joiner");
        };
        let (plan, timing) = *plan;
        self.stage = match rt.play(plan, timing) {
            Ok(seat) => Stage::Seat(Box::new(seat)),
            // The setup tells the host why, and ends itself.
            Err((refused, why)) => Stage::Refused(refused, why),
        };
    }

    /// Whether everything is done: the match is over for this process,
    /// what it sent left, and every event was handed out.
    pub fn is_finished(&self) -> bool {
        self.events.is_empty()
            && match &self.stage {
                Stage::Joining { rt, .. } | Stage::Refused(rt, _) => rt.is_finished(),
                Stage::Seat(rt) => rt.is_finished(),
                Stage::Moving => true,
            }
    }

    /// Why this process could not play the roster it was sent (it told the
    /// host so; the setup's end follows).
    pub fn refusal(&self) -> Option<&Refusal> {
        match &self.stage {
            Stage::Refused(_, why) => Some(why),
            _ => None,
        }
    }

    /// The seat's runtime, once it plays (`None` while a joiner waits for
    /// its roster, or after it refused it).
    pub fn runtime(&self) -> Option<&Runtime<SeatEndpoint<G, W>>> {
        match &self.stage {
            Stage::Seat(rt) => Some(rt),
            _ => None,
        }
    }

    /// The seat's runtime, to change its endpoint (set the input, issue a
    /// command, leave).
    pub fn runtime_mut(&mut self) -> Option<&mut Runtime<SeatEndpoint<G, W>>> {
        match &mut self.stage {
            Stage::Seat(rt) => Some(rt),
            _ => None,
        }
    }

    /// The socket the seat runs on, whatever its stage (a match found by
    /// its code: the reach layer's events).
    pub fn socket_mut(&mut self) -> Option<&mut Socket> {
        match &mut self.stage {
            Stage::Joining { rt, .. } | Stage::Refused(rt, _) => Some(rt.socket_mut()),
            Stage::Seat(rt) => Some(rt.socket_mut()),
            Stage::Moving => None,
        }
    }

    /// The seat's endpoint, once it plays: its peer, its game, its
    /// counters.
    pub fn endpoint(&self) -> Option<&SeatEndpoint<G, W>> {
        self.runtime().map(Runtime::endpoint)
    }

    /// The seat's endpoint, to set the input or issue a command.
    pub fn endpoint_mut(&mut self) -> Option<&mut SeatEndpoint<G, W>> {
        self.runtime_mut().map(Runtime::endpoint_mut)
    }

    /// Leaves the match now: the seat says goodbye and the match ends for
    /// this process (`MatchEnd::Left`); a joiner still in its setup is not
    /// stopped by this (it has no seat to leave yet).
    pub fn leave(&mut self) {
        if let Some(rt) = self.runtime_mut() {
            let now = rt.now();
            rt.endpoint_mut().leave(now);
        }
    }

    /// The replay log, once the match ended (`None` before, if the plan
    /// kept none, or if it was taken already).
    pub fn take_log(&mut self) -> Option<W> {
        self.endpoint_mut().and_then(SeatEndpoint::take_log)
    }
}

impl<G: Game, W: Write> core::fmt::Debug for SeatRuntime<G, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let stage = match &self.stage {
            Stage::Joining { .. } => "joining",
            Stage::Refused(..) => "refused its roster",
            Stage::Seat(_) => "seated",
            Stage::Moving => "moving",
        };
        f.debug_struct("SeatRuntime")
            .field("stage", &stage)
            .field("events", &self.events.len())
            .finish()
    }
}
