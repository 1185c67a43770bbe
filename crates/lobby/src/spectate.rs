//! [`SpectateEndpoint`]: a spectator's process, by socket address — its
//! node ([`Spectator`], which steps and checks the match, or
//! [`SnapshotSpectator`], which shows the relay's snapshots) talking to the
//! host's relay, built from the spectator's roster.
//!
//! Invariants: only the host's address is routed (as the relay); the end
//! is raised once: when the last frame was seen, the relay went away, or
//! the host plays another game.

use std::collections::VecDeque;
use std::net::SocketAddr;

use lockstep_peer::{
    Bodies, Node, Party, SnapshotSettings, SnapshotSpectator, SnapshotSpectatorEvent, Spectator,
    SpectatorEvent,
};
use lockstep_protocol::Instant;
use lockstep_protocol::seal::Identity;
use lockstep_protocol::spectate::SpectateConfig;
use lockstep_sim::Game;

use crate::Datagram;
use crate::endpoint::{Endpoint, Joining};
use crate::event::{LinkStatus, MatchEnd, MatchEvent};
use crate::join_setup::JoinSetup;
use crate::message::{Refusal, Roster, RosterProblem};
use crate::router::{Route, Router};

/// A spectator's node, as a [`SpectateEndpoint`] drives it.
pub trait Spectating: Node<Event: Into<MatchEvent>> {
    /// The newest frame seen (stepped, or shown by snapshot).
    fn newest_frame(&self) -> u32;
    /// Whether it has seen the match to its end (`frames` long).
    fn has_seen_all(&self, frames: u32) -> bool;
    /// Says goodbye to the relay.
    fn disconnect(&mut self);
    /// Adds what it knows to a status line (`tick_micros`: the match's
    /// tick).
    fn fill(&self, status: &mut LinkStatus, tick_micros: u64);
}

impl<G: Game> Spectating for Spectator<G> {
    fn newest_frame(&self) -> u32 {
        self.frame()
    }

    fn has_seen_all(&self, frames: u32) -> bool {
        self.frame() >= frames
    }

    fn disconnect(&mut self) {
        Spectator::disconnect(self);
    }

    fn fill(&self, status: &mut LinkStatus, _tick_micros: u64) {
        status.frame = self.frame();
        status.checked = self.stats().checksums_checked;
        status.desyncs = self.stats().checksums_differing;
        status.healed = self.stats().states_loaded;
    }
}

impl<G: Game + Bodies> Spectating for SnapshotSpectator<G> {
    fn newest_frame(&self) -> u32 {
        self.newest_snapshot().map_or(0, |(f, _)| f)
    }

    fn has_seen_all(&self, frames: u32) -> bool {
        // Snapshots come every `every` frames: the last one may be up to
        // that far before the end.
        let every = SnapshotSettings::default().every.max(1);
        self.newest_snapshot()
            .is_some_and(|(f, _)| f + every + 1 >= frames)
    }

    fn disconnect(&mut self) {
        SnapshotSpectator::disconnect(self);
    }

    fn fill(&self, status: &mut LinkStatus, tick_micros: u64) {
        status.frame = self.newest_frame();
        let tick = tick_micros.max(1);
        status.delay_frames = (self.view().clock().delay_micros(self.view().mode()) / tick) as u32;
        status.dropped = self.stats().undecodable;
    }
}

/// A spectator's process. See the module documentation.
#[derive(Debug)]
pub struct SpectateEndpoint<N> {
    setup: JoinSetup,
    node: N,
    router: Router,
    frames: u32,
    tick_micros: u64,
    ended: bool,
    events: VecDeque<MatchEvent>,
    out: VecDeque<Datagram>,
}

impl<N: Spectating> SpectateEndpoint<N> {
    /// The node.
    pub fn node(&self) -> &N {
        &self.node
    }

    /// The match's length in frames.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    fn end(&mut self, now: Instant, end: MatchEnd) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.node.disconnect();
        while let Some((_, bytes)) = self.node.poll_transmit(now) {
            if let Some(to) = self.router.address(Party::Relay) {
                self.out.push_back(Datagram { to, bytes });
            }
        }
        self.events.push_back(MatchEvent::Ended(end));
    }

    fn pump(&mut self, now: Instant) {
        while let Some(e) = self.setup.poll_event() {
            self.events.push_back(MatchEvent::Join(e));
        }
        if let Some(why) = self.setup.failure().cloned() {
            // The host called the match off (now, or in the datagrams that
            // brought the roster).
            self.end(now, MatchEnd::SetupFailed(why));
        }
        while let Some(d) = self.setup.poll_transmit() {
            self.out.push_back(d);
        }
        while let Some(e) = self.node.poll_event() {
            let e: MatchEvent = e.into();
            let end = match &e {
                MatchEvent::Spectator(SpectatorEvent::RelayLost)
                | MatchEvent::SnapshotSpectator(SnapshotSpectatorEvent::RelayLost) => {
                    Some(MatchEnd::RelayLost {
                        frame: self.node.newest_frame(),
                    })
                }
                MatchEvent::Spectator(SpectatorEvent::Incompatible)
                | MatchEvent::SnapshotSpectator(SnapshotSpectatorEvent::Incompatible) => {
                    Some(MatchEnd::Incompatible)
                }
                _ => None,
            };
            self.events.push_back(e);
            if let Some(end) = end {
                self.end(now, end);
            }
        }
        if !self.ended && self.node.has_seen_all(self.frames) {
            self.end(
                now,
                MatchEnd::Finished {
                    frames: self.frames,
                },
            );
        }
    }
}

/// What a spectator needs of its roster: the game's settings, checked.
fn checked<G: Game>(roster: &Roster) -> Result<G::Config, Refusal> {
    if roster.seat.is_some() || roster.keys.len() != 1 {
        return Err(Refusal::Roster {
            problem: RosterProblem::Malformed,
            detail: "a seat's roster".into(),
        });
    }
    roster.accept::<G>()
}

type Refused = (Box<Joining>, Refusal);

fn refuse(now: Instant, mut joining: Joining, r: Refusal) -> Refused {
    joining.setup.refuse(now, r.clone());
    (Box::new(joining), r)
}

impl<G: Game> SpectateEndpoint<Spectator<G>> {
    /// The spectator whose setup `joining` received its roster: it steps
    /// the match and checks every checksum the seats settled on. A roster
    /// it cannot watch is refused to the host and `joining` comes back.
    pub fn from_roster(now: Instant, joining: Joining, token: u32) -> Result<Self, Refused> {
        let (joining, roster, config, spectate) = accept::<G>(now, joining)?;
        let made = Spectator::<G>::new(&config, roster.setup, spectate, token, now)
            .and_then(|s| seal(s, &roster, joining.setup.identity(), Spectator::sealed));
        match made {
            Ok(node) => Ok(SpectateEndpoint::with(now, joining, node, &roster)),
            Err(e) => Err(refuse(now, joining, settings_refusal(e.to_string()))),
        }
    }

    /// Sets the threads each frame the spectator steps may use
    /// ([`Spectator::set_threads`]; 1 unless set).
    pub fn set_threads(&mut self, threads: usize) {
        self.node.set_threads(threads);
    }
}

impl<G: Game + Bodies> SpectateEndpoint<SnapshotSpectator<G>> {
    /// The spectator whose setup `joining` received its roster, watching
    /// the relay's snapshots (with the relay's `snapshots` settings)
    /// instead of simulating.
    pub fn snapshots_from_roster(
        now: Instant,
        joining: Joining,
        token: u32,
        snapshots: SnapshotSettings,
    ) -> Result<Self, Refused> {
        let (joining, roster, config, spectate) = accept::<G>(now, joining)?;
        let made =
            SnapshotSpectator::<G>::new(&config, roster.setup, spectate, snapshots, token, now)
                .and_then(|s| {
                    seal(
                        s,
                        &roster,
                        joining.setup.identity(),
                        SnapshotSpectator::sealed,
                    )
                });
        match made {
            Ok(node) => Ok(SpectateEndpoint::with(now, joining, node, &roster)),
            Err(e) => Err(refuse(now, joining, settings_refusal(e.to_string()))),
        }
    }
}

/// The roster `joining` received, checked for `G`, with its game's
/// settings and the relay's watch settings; or the refusal sent.
fn accept<G: Game>(
    now: Instant,
    joining: Joining,
) -> Result<(Joining, Roster, G::Config, SpectateConfig), Refused> {
    let Some(roster) = joining.setup.roster().cloned() else {
        let r = Refusal::Roster {
            problem: RosterProblem::Malformed,
            detail: "no roster yet".into(),
        };
        return Err((Box::new(joining), r));
    };
    let config = match checked::<G>(&roster) {
        Ok(c) => c,
        Err(r) => return Err(refuse(now, joining, r)),
    };
    let mut spectate = roster.settings.peer.spectate.clone();
    spectate.seats = roster.setup.seats;
    Ok((joining, roster, config, spectate))
}

fn settings_refusal(detail: String) -> Refusal {
    Refusal::Roster {
        problem: RosterProblem::Settings,
        detail,
    }
}

/// Seals `node` with the relay's key when the match is sealed.
fn seal<N, E>(
    node: N,
    roster: &Roster,
    identity: &Identity,
    sealed: impl FnOnce(N, &Identity, lockstep_protocol::seal::PublicKey) -> Result<N, E>,
) -> Result<N, E> {
    match (roster.settings.sealed, roster.keys.first()) {
        (true, Some(relay)) => sealed(node, identity, *relay),
        _ => Ok(node),
    }
}

impl<N: Spectating> SpectateEndpoint<N> {
    fn with(now: Instant, joining: Joining, node: N, roster: &Roster) -> SpectateEndpoint<N> {
        let host = joining.setup.host();
        let mut me = SpectateEndpoint {
            setup: joining.setup,
            node,
            router: Router::relay(host),
            frames: roster.settings.frames,
            tick_micros: roster.settings.peer.spectate.tick_micros,
            ended: false,
            events: VecDeque::new(),
            out: VecDeque::new(),
        };
        me.pump(now);
        me
    }
}

impl<N: Spectating> Endpoint for SpectateEndpoint<N> {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        if self.ended {
            return;
        }
        match self.router.route(from, bytes) {
            Route::Setup => self.setup.handle_datagram(now, from, bytes),
            Route::Party(party) => {
                self.node.handle_datagram(now, party, bytes);
            }
            Route::Moving(_) | Route::Stray => {}
        }
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.ended {
            return;
        }
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now);
        }
        self.pump(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.ended {
            return None;
        }
        self.node.poll_timeout()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        if let Some(d) = self.out.pop_front() {
            return Some(d);
        }
        if self.ended {
            return None;
        }
        let (party, bytes) = self.node.poll_transmit(now)?;
        debug_assert_eq!(party, Party::Relay);
        Some(Datagram {
            to: self.router.address(Party::Relay)?,
            bytes,
        })
    }

    fn poll_event(&mut self) -> Option<MatchEvent> {
        self.events.pop_front()
    }

    fn status(&self) -> LinkStatus {
        let mut s = LinkStatus::default();
        self.node.fill(&mut s, self.tick_micros);
        s.dropped += self.router.stray();
        s
    }

    fn is_closed(&self) -> bool {
        self.ended && self.out.is_empty()
    }
}
