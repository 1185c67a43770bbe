//! [`Endpoint`]: what a runtime drives — one process's part in a match,
//! addressed by socket addresses. The endpoints of this crate are
//! [`SeatEndpoint`](crate::SeatEndpoint) (a seat: the host's, or a
//! joiner's once it has its roster), [`Joining`] (a joiner before it knows
//! what it will play) and [`SpectateEndpoint`](crate::SpectateEndpoint).
//!
//! Call order, as the session's: feed every datagram received
//! ([`Endpoint::handle_datagram`]), run the timers once due
//! ([`Endpoint::handle_timeout`]), drain [`Endpoint::poll_event`], drain
//! [`Endpoint::poll_transmit`] and send each datagram, then wait for the
//! next datagram or [`Endpoint::poll_timeout`]. Once
//! [`Endpoint::is_closed`], the endpoint has said everything it had to
//! (its goodbyes included) and raised [`MatchEvent::Ended`].
//!
//! Invariants: an endpoint reads no clock, owns no socket and draws no
//! randomness (keys and secrets come in); the same calls give the same
//! results.

use std::collections::VecDeque;
use std::net::SocketAddr;

use lockstep_protocol::Instant;

use crate::Datagram;
use crate::event::{LinkStatus, MatchEnd, MatchEvent};
use crate::join_setup::{JoinEvent, JoinSetup};

/// One process's part in a match, by socket address. See the module
/// documentation for the call order.
pub trait Endpoint {
    /// Feeds a datagram received from `from`.
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]);

    /// Runs the timers; call once `now` reaches [`Endpoint::poll_timeout`].
    fn handle_timeout(&mut self, now: Instant);

    /// When [`Endpoint::handle_timeout`] is next due, if ever.
    fn poll_timeout(&self) -> Option<Instant>;

    /// The next datagram to send.
    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram>;

    /// The next thing that happened, in order.
    fn poll_event(&mut self) -> Option<MatchEvent>;

    /// The numbers of a status line now.
    fn status(&self) -> LinkStatus;

    /// Whether the match is over for this process and everything it had
    /// to send was handed out.
    fn is_closed(&self) -> bool;

    /// How long the last calls took by the driver's clock, in microseconds:
    /// a seat spreads it over the frames it stepped, and the match's pace
    /// follows the slowest seat (`lockstep_peer::Peer::spent`). Others
    /// ignore it.
    fn spent(&mut self, _micros: u64) {}
}

/// A joiner before it knows what it plays: the setup alone, until the
/// roster arrives ([`JoinEvent::Roster`]). Then build the endpoint that
/// plays or watches it from this one
/// ([`SeatEndpoint::from_roster`](crate::SeatEndpoint::from_roster),
/// [`SpectateEndpoint::from_roster`](crate::SpectateEndpoint::from_roster)).
#[derive(Debug)]
pub struct Joining {
    pub(crate) setup: JoinSetup,
    events: VecDeque<MatchEvent>,
    ended: bool,
}

impl Joining {
    /// Drives `setup`.
    pub fn new(setup: JoinSetup) -> Joining {
        Joining {
            setup,
            events: VecDeque::new(),
            ended: false,
        }
    }

    /// The setup.
    pub fn setup(&self) -> &JoinSetup {
        &self.setup
    }

    /// The setup, to refuse a roster ([`JoinSetup::refuse`]).
    pub fn setup_mut(&mut self) -> &mut JoinSetup {
        &mut self.setup
    }

    fn pump(&mut self) {
        while let Some(e) = self.setup.poll_event() {
            if let JoinEvent::Failed(why) = &e {
                self.events.push_back(MatchEvent::Join(e.clone()));
                self.events
                    .push_back(MatchEvent::Ended(MatchEnd::SetupFailed(why.clone())));
                self.ended = true;
                continue;
            }
            self.events.push_back(MatchEvent::Join(e));
        }
    }
}

impl Endpoint for Joining {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.setup.handle_datagram(now, from, bytes);
        self.pump();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.setup.handle_timeout(now);
        self.pump();
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.setup.poll_timeout()
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Datagram> {
        self.setup.poll_transmit()
    }

    fn poll_event(&mut self) -> Option<MatchEvent> {
        self.events.pop_front()
    }

    fn status(&self) -> LinkStatus {
        LinkStatus::default()
    }

    fn is_closed(&self) -> bool {
        self.ended
    }
}
