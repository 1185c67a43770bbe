//! [`Spectator`]: watches a match without a seat. It joins through one
//! seat's relay, loads the settled state the relay sends, steps every frame
//! the relay streams (all seats' inputs) and checks each checksum the seats
//! settled on against its own.
//!
//! Invariants: a spectator reads no clock and owns no socket (sans-IO, like
//! [`Peer`](crate::Peer)); it sends no inputs, there is no call to give it
//! one; frames are stepped in order from the frame after the loaded state;
//! a settled checksum that disagrees with the spectator's own makes it ask
//! the relay for a fresh state and step nothing until it arrives.

use std::collections::VecDeque;

use lockstep_fx::{Checksum, ShortChecksum};
use lockstep_protocol::Instant;
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::spectate::{
    SpectateConfig, SpectatorSession, SpectatorSessionEvent, SpectatorSessionStats,
};
use lockstep_sim::{Engine, EngineSettings, Game, Match};

use crate::error::PeerError;

/// What a spectator tells its app, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpectatorEvent {
    /// The relay answered the handshake.
    Connected,
    /// The relay's state after `frame` was loaded; frames from `frame + 1`
    /// follow.
    Loaded {
        /// The state's frame.
        frame: u32,
        /// Its size.
        state_bytes: u64,
    },
    /// The game stepped `frame`.
    Stepped {
        /// The frame.
        frame: u32,
        /// BLAKE3 of the state after it.
        checksum: Checksum,
    },
    /// The seats settled on another checksum for `frame` than the one this
    /// spectator computed: it asks for the relay's state again.
    Desync {
        /// The frame.
        frame: u32,
    },
    /// The seats disputed `frame` and asked this spectator, the match's
    /// arbiter, for its checksum of it: it answered `short`, or `None`
    /// when it did not step the frame.
    Arbitrated {
        /// The disputed frame.
        frame: u32,
        /// Its checksum of the state after it.
        short: Option<ShortChecksum>,
    },
    /// The relay plays another game, seat count or tick.
    Incompatible,
    /// The relay said goodbye or went silent.
    RelayLost,
}

impl std::fmt::Display for SpectatorEvent {
    /// One line for a person (see [`PeerEvent`](crate::PeerEvent)'s text).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpectatorEvent::Connected => write!(f, "connected to the host"),
            SpectatorEvent::Loaded { frame, state_bytes } => {
                write!(
                    f,
                    "loaded the state after frame {frame} ({state_bytes} bytes)"
                )
            }
            SpectatorEvent::Stepped { frame, .. } => write!(f, "stepped frame {frame}"),
            SpectatorEvent::Desync { frame } => {
                write!(f, "desync at frame {frame}: asking for the state again")
            }
            SpectatorEvent::Arbitrated {
                frame,
                short: Some(short),
            } => write!(
                f,
                "arbiter: the seats dispute frame {frame}; our checksum of it is {short}"
            ),
            SpectatorEvent::Arbitrated { frame, short: None } => write!(
                f,
                "arbiter: the seats dispute frame {frame}, which this process did not step"
            ),
            SpectatorEvent::Incompatible => write!(f, "the host plays another game"),
            SpectatorEvent::RelayLost => write!(f, "the host went away"),
        }
    }
}

/// What a spectator did, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpectatorStats {
    /// Frames stepped.
    pub frames_stepped: u64,
    /// Settled checksums compared with the spectator's own, and how many
    /// of them differed.
    pub checksums_checked: u64,
    /// Settled checksums that differed from the spectator's own.
    pub checksums_differing: u64,
    /// States loaded.
    pub states_loaded: u64,
}

/// Checksums of the frames stepped that are kept for a later settled
/// checksum to be compared with: settling trails stepping by the seats'
/// unsettled frames (600 at most by default).
const KEPT_CHECKSUMS: usize = 1_024;

/// A spectator of a match of `G`.
pub struct Spectator<G: Game> {
    spectator: SpectatorSession<G::Input>,
    engine: Option<Engine<G>>,
    /// The threads each frame may use, for every engine a loaded state
    /// starts (at least 1).
    threads: usize,
    mine: VecDeque<(u32, ShortChecksum)>,
    settled: VecDeque<(u32, u64)>,
    /// The frame the relay asks our checksum of, until answered.
    asked: Option<u32>,
    events: VecDeque<SpectatorEvent>,
    stats: SpectatorStats,
}

impl<G: Game> core::fmt::Debug for Spectator<G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Spectator")
            .field("next_frame", &self.spectator.next_frame())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<G: Game> Spectator<G> {
    /// A spectator of the match `setup` of `G` with `config` (the same the
    /// seats play; the handshake checks the input schema, seat count and
    /// tick), token `token` (random, never 0), starting at `now`. It has no
    /// game until the relay's state arrives.
    pub fn new(
        config: &G::Config,
        setup: Match,
        spectate: SpectateConfig,
        token: u32,
        now: Instant,
    ) -> Result<Spectator<G>, PeerError> {
        if spectate.seats != setup.seats {
            return Err(PeerError::Seats {
                session: spectate.seats,
                setup: setup.seats,
            });
        }
        // The setup must be one the game accepts, though the state comes
        // from the relay.
        G::new(config, &setup)?;
        Ok(Spectator {
            spectator: SpectatorSession::new(spectate, token, now),
            engine: None,
            threads: 1,
            mine: VecDeque::new(),
            settled: VecDeque::new(),
            asked: None,
            events: VecDeque::new(),
            stats: SpectatorStats::default(),
        })
    }

    /// The same spectator, sealing its packets with keys agreed between
    /// `identity` (its key pair for the match) and the relay's public key
    /// `relay`, as the match setup gave them.
    pub fn sealed(
        mut self,
        identity: &Identity,
        relay: PublicKey,
    ) -> Result<Spectator<G>, PeerError> {
        self.spectator = self.spectator.sealed(identity, relay)?;
        Ok(self)
    }

    /// Feeds a datagram received from the relay.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.spectator.handle_datagram(now, bytes);
        self.answer();
    }

    /// Runs the timers once `now` reaches [`Spectator::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.spectator.handle_timeout(now);
        self.answer();
    }

    /// The next datagram for the relay.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.spectator.poll_transmit(now)
    }

    /// When [`Spectator::handle_timeout`] next needs calling, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.spectator.poll_timeout()
    }

    /// The next thing that happened, in order.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SpectatorEvent> {
        self.events.pop_front()
    }

    /// Sets the threads each frame may use (1 at first, 0 counts as 1):
    /// the game's step and the hashing of its state, now and after every
    /// state loaded later. A setting of this machine, as
    /// [`Peer::set_threads`](crate::Peer::set_threads): the checksums are
    /// the same for any count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        if let Some(engine) = self.engine.as_mut() {
            engine.set_threads(self.threads);
        }
    }

    /// The threads each frame may use (those of the loaded state's engine,
    /// once there is one).
    pub fn threads(&self) -> usize {
        self.engine.as_ref().map_or(self.threads, Engine::threads)
    }

    /// The game after the newest frame stepped, once a state has loaded.
    pub fn game(&self) -> Option<&G> {
        self.engine.as_ref().map(Engine::game)
    }

    /// The game, to change it outside the simulation (a test that corrupts
    /// it): the change shows up as a desync against the next settled
    /// checksum, and the spectator asks for the relay's state again.
    pub fn game_mut(&mut self) -> Option<&mut G> {
        self.engine.as_mut().map(Engine::game_mut)
    }

    /// The next frame to step (0 before a state has loaded).
    pub fn frame(&self) -> u32 {
        self.engine.as_ref().map_or(0, Engine::frame)
    }

    /// The counters.
    pub fn stats(&self) -> &SpectatorStats {
        &self.stats
    }

    /// The connection's counters.
    pub fn connection_stats(&self) -> &SpectatorSessionStats {
        self.spectator.stats()
    }

    /// Says goodbye to the relay.
    pub fn disconnect(&mut self) {
        self.spectator.disconnect();
    }

    fn answer(&mut self) {
        while let Some(event) = self.spectator.poll_event() {
            match event {
                SpectatorSessionEvent::Connected => {
                    self.events.push_back(SpectatorEvent::Connected)
                }
                SpectatorSessionEvent::LoadState { frame, state } => self.load(frame, &state),
                SpectatorSessionEvent::Frame { frame, inputs } => self.step(frame, &inputs),
                SpectatorSessionEvent::Settled { frame, short } => {
                    self.settled.push_back((frame, short));
                    if self.settled.len() > KEPT_CHECKSUMS {
                        self.settled.pop_front();
                    }
                }
                SpectatorSessionEvent::Asked { frame } => self.asked = Some(frame),
                SpectatorSessionEvent::Incompatible => {
                    self.events.push_back(SpectatorEvent::Incompatible)
                }
                SpectatorSessionEvent::RelayLost => {
                    self.events.push_back(SpectatorEvent::RelayLost)
                }
                // Only a spectator that asked for snapshots gets parts.
                SpectatorSessionEvent::SnapshotPart(_) => {}
            }
            self.check();
            self.arbitrate();
        }
    }

    /// Answers the relay's question once the frame asked about is stepped
    /// (or is known never to be: it is before our state).
    fn arbitrate(&mut self) {
        let (Some(frame), Some(&(oldest, _))) = (self.asked, self.mine.front()) else {
            return;
        };
        let short = if frame < oldest {
            None
        } else {
            match self.mine.get((frame - oldest) as usize) {
                Some(&(_, short)) => Some(short),
                None => return,
            }
        };
        self.asked = None;
        self.spectator.answer(frame, short.map(|s| s.0));
        self.events
            .push_back(SpectatorEvent::Arbitrated { frame, short });
    }

    fn load(&mut self, frame: u32, state: &[u8]) {
        // The spectator verified the bytes against the relay's checksum; a
        // state that still does not decode is the relay's bug: ask again.
        let Ok(game) = G::decode(state) else {
            self.spectator.request_state();
            return;
        };
        let mut engine = Engine::at(game, frame + 1, EngineSettings::NONE);
        engine.set_threads(self.threads);
        self.engine = Some(engine);
        self.mine.clear();
        self.mine.push_back((frame, Checksum::of(state).short()));
        self.stats.states_loaded += 1;
        self.events.push_back(SpectatorEvent::Loaded {
            frame,
            state_bytes: state.len() as u64,
        });
    }

    fn step(&mut self, frame: u32, inputs: &[G::Input]) {
        let Some(engine) = self.engine.as_mut().filter(|e| e.frame() == frame) else {
            return;
        };
        let checksum = engine.advance(inputs);
        self.stats.frames_stepped += 1;
        self.mine.push_back((frame, checksum.short()));
        if self.mine.len() > KEPT_CHECKSUMS {
            self.mine.pop_front();
        }
        self.events
            .push_back(SpectatorEvent::Stepped { frame, checksum });
    }

    /// Compares the settled checksums with ours for the frames both hold.
    fn check(&mut self) {
        while let Some(&(frame, short)) = self.settled.front() {
            let Some(&(oldest, _)) = self.mine.front() else {
                return;
            };
            if frame < oldest {
                // Before our state: nothing to compare with.
                self.settled.pop_front();
                continue;
            }
            let Some(&(_, ours)) = self.mine.get((frame - oldest) as usize) else {
                // Not stepped yet.
                return;
            };
            self.settled.pop_front();
            self.stats.checksums_checked += 1;
            if ours.0 != short {
                self.stats.checksums_differing += 1;
                self.events.push_back(SpectatorEvent::Desync { frame });
                self.engine = None;
                self.mine.clear();
                self.settled.clear();
                self.spectator.request_state();
                return;
            }
        }
    }
}
