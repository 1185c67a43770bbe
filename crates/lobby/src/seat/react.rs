//! How a [`SeatEndpoint`] reacts to what its parts report: the host's
//! setup (a seat taken, a spectator admitted, a claim to a dropped seat),
//! the joiner's setup (the roster, a refusal), and its peer (a stop, a
//! seat dropped or back) — and how it ends the match: once, with a typed
//! [`MatchEnd`], after the log is finished.
//!
//! Invariant: [`MatchEvent::Ended`] is raised here only, and last.

use std::io::Write;

use lockstep_peer::{Node, PeerEvent, SeatEvent, StopReason};
use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::Game;

use super::{Phase, Role, SeatEndpoint};
use crate::Datagram;
use crate::event::{MatchEnd, MatchEvent};
use crate::host_setup::HostEvent;
use crate::join_setup::{JoinEvent, JoinSetup};
use crate::message::Abort;
use crate::router::Router;
use crate::seat_plan::SeatLog;

impl<G: Game, W: Write> SeatEndpoint<G, W> {
    pub(super) fn on_host_event(&mut self, now: Instant, e: HostEvent) {
        let sealed = self.settings.sealed;
        match &e {
            HostEvent::Seated => {
                let (keys, addresses) = match &self.role {
                    Role::Host(h) => (h.keys(), h.addresses()),
                    Role::Joined(_) => return,
                };
                self.events.push_back(MatchEvent::Host(e));
                if let Err(detail) = self.start_peer(now, SeatId(0), false, &keys, addresses) {
                    self.log_error = Some(detail.clone());
                    self.call_off(now, Abort::HostFailed { detail });
                }
                return;
            }
            HostEvent::Rejoining { seat, from, key } => {
                if let Some(p) = &mut self.peer {
                    if sealed {
                        let _ = p.expect_return(*seat, *key);
                    }
                }
                self.router.move_seat(*seat, *from);
            }
            HostEvent::SpectatorAdmitted {
                spectator,
                from,
                key,
                arbiter,
            } => {
                if let Some(p) = &mut self.peer {
                    if p.admit_spectator(*spectator, *key).is_ok() {
                        self.router.add_spectator(*spectator, *from);
                        if *arbiter {
                            p.name_arbiter(*spectator);
                        }
                    }
                }
            }
            HostEvent::SpectatorExpired { spectator } => {
                if let Some(p) = &mut self.peer {
                    p.revoke_spectator(*spectator);
                }
                self.router.remove_spectator(*spectator);
            }
            HostEvent::RosterRefused { seat, refusal } => {
                self.abort = Some(Abort::JoinerRefused {
                    seat: *seat,
                    refusal: Box::new(refusal.clone()),
                });
                self.phase = Phase::Aborting;
            }
            _ => {}
        }
        self.events.push_back(MatchEvent::Host(e));
    }

    pub(super) fn on_join_event(&mut self, now: Instant, e: JoinEvent) {
        let rejoining = self.stopped.is_some();
        match &e {
            JoinEvent::Roster(r) if self.peer.is_none() && self.phase == Phase::Setup => {
                // The roster of a rejoin after a lost quorum.
                let host = match &self.role {
                    Role::Joined(j) => j.host(),
                    Role::Host(_) => return,
                };
                let addresses = Self::roster_addresses(r, host);
                let seat = r.seat.unwrap_or(SeatId(0));
                let keys = r.keys.clone();
                self.events.push_back(MatchEvent::Join(e));
                if self.start_peer(now, seat, true, &keys, addresses).is_err() {
                    let why = self.stopped.clone();
                    self.end_stopped_or(now, why, MatchEnd::HostVanished);
                }
                return;
            }
            JoinEvent::Failed(why) => {
                self.events.push_back(MatchEvent::Join(e.clone()));
                if rejoining && self.peer.is_none() {
                    let stopped = self.stopped.clone();
                    self.end_stopped_or(now, stopped, MatchEnd::SetupFailed(why.clone()));
                } else {
                    self.end(now, MatchEnd::SetupFailed(why.clone()));
                }
                return;
            }
            _ => {}
        }
        self.events.push_back(MatchEvent::Join(e));
    }

    pub(super) fn on_peer_event(&mut self, now: Instant, e: PeerEvent) {
        match &e {
            PeerEvent::Desync { .. } => self.desyncs += 1,
            PeerEvent::Seat(SeatEvent::Dropped { seat, .. }) => {
                // Its restarted process may greet from a new address.
                self.router.allow_move(*seat);
                if let Role::Host(h) = &mut self.role {
                    h.seat_dropped(SeatId(seat.0));
                }
            }
            PeerEvent::Seat(SeatEvent::Returned { seat, .. }) => {
                if let Role::Host(h) = &mut self.role {
                    h.seat_returned(SeatId(seat.0));
                }
            }
            PeerEvent::SpectatorJoined { spectator } => {
                if let Role::Host(h) = &mut self.role {
                    h.spectator_joined(*spectator);
                }
            }
            PeerEvent::SpectatorLeft { spectator, .. }
            | PeerEvent::SpectatorIncompatible { spectator } => {
                if let Role::Host(h) = &mut self.role {
                    h.spectator_left(*spectator);
                }
                self.router.remove_spectator(*spectator);
            }
            PeerEvent::RecordingStopped { frame, reason } => {
                self.log_error = Some(format!("the replay log stopped at frame {frame}: {reason}"));
            }
            PeerEvent::Stopped(reason) => {
                let reason = reason.clone();
                self.events.push_back(MatchEvent::Peer(e));
                self.on_stopped(now, reason);
                return;
            }
            _ => {}
        }
        self.events.push_back(MatchEvent::Peer(e));
    }

    pub(super) fn on_stopped(&mut self, now: Instant, reason: StopReason) {
        self.stopped = Some(reason.clone());
        let host = match &self.role {
            Role::Joined(j) => Some(j.host()),
            Role::Host(_) => None,
        };
        let spare = match (&reason, host) {
            (StopReason::LostQuorum { .. }, Some(_)) => self.plan.spare_identity.take(),
            _ => None,
        };
        match (spare, host) {
            (Some(spare), Some(host)) => {
                // Take the seat back: the old peer's log ends here, a new
                // peer rejoins under a fresh key pair, claiming the seat
                // with the old one.
                self.retire_peer(now);
                let old = std::mem::replace(&mut self.identity, spare);
                let setup =
                    JoinSetup::rejoin(now, host, self.identity.clone(), old, self.timing.join);
                self.role = Role::Joined(Box::new(setup));
                self.phase = Phase::Setup;
                self.router = Router::default();
            }
            _ => {
                self.phase = Phase::Stopping {
                    linger: Some(now.plus(self.timing.linger_micros)),
                    until: now.plus(self.timing.stop_micros),
                }
            }
        }
    }

    pub(super) fn end_stopped_or(
        &mut self,
        now: Instant,
        stopped: Option<StopReason>,
        otherwise: MatchEnd,
    ) {
        match stopped {
            Some(reason) => self.end(now, MatchEnd::Stopped(reason)),
            None => self.end(now, otherwise),
        }
    }

    /// The host calls the match off: its setup tells every seated joiner
    /// (a few times); the end follows.
    pub(super) fn call_off(&mut self, now: Instant, reason: Abort) {
        if let Role::Host(h) = &mut self.role {
            h.abort(now, reason.clone());
            h.handle_timeout(now);
        }
        self.retire_peer(now);
        self.abort = Some(reason);
        self.phase = Phase::Aborting;
    }

    /// Says goodbye, hands out the peer's last datagrams, finishes its log.
    pub(super) fn retire_peer(&mut self, now: Instant) {
        let Some(mut p) = self.peer.take() else {
            return;
        };
        self.last_status = self.status_of(&p);
        self.last_stats = p.stats().clone();
        p.disconnect(now);
        while let Some((party, bytes)) = Node::poll_transmit(&mut p, now) {
            if let Some(to) = self.router.address(party) {
                self.out.push_back(Datagram { to, bytes });
            }
        }
        match p.finish() {
            Ok(Some(SeatLog::Log(w))) => {
                if self.finished_log.is_none() {
                    self.finished_log = Some(w);
                }
            }
            Ok(_) => {}
            Err(e) => {
                self.log_error
                    .get_or_insert_with(|| format!("finishing the replay log: {e}"));
            }
        }
    }

    pub(super) fn end(&mut self, now: Instant, end: MatchEnd) {
        if self.phase == Phase::Ended {
            return;
        }
        self.retire_peer(now);
        if let Role::Host(h) = &mut self.role {
            h.end();
        }
        self.phase = Phase::Ended;
        self.events.push_back(MatchEvent::Ended(end));
    }
}
