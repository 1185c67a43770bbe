//! What the app sees of a session: the [`Event`]s it drains, the datagrams
//! it sends ([`Transmit`]), and why a call was refused ([`CallError`]).

use crate::packet::{Cause, SnapshotAck, SnapshotPart};
use crate::seat::{SeatId, SeatSet};
use crate::send_window::InputError;

/// Why an app call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// A local input for a frame the session did not ask for.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A checksum or state for a frame not released yet.
    #[error("frame {frame} has not been released (last released {released:?})")]
    NotReleased {
        /// The frame passed.
        frame: u32,
        /// The newest frame released.
        released: Option<u32>,
    },
    /// A state nobody asked for (no [`Event::StateRequested`] is pending),
    /// or for another frame than the newest whose checksum was reported.
    #[error("no state was requested for frame {frame}")]
    StateNotRequested {
        /// The frame passed.
        frame: u32,
    },
    /// The state's BLAKE3 is not the checksum reported for its frame: the
    /// app's checksum must be the hash of exactly its snapshot bytes.
    #[error("state for frame {frame} does not hash to its reported checksum")]
    StateChecksum {
        /// The frame passed.
        frame: u32,
    },
    /// A returning process's key for a seat that is not dropped here (or a
    /// session that is not sealed).
    #[error("seat {} is not a dropped seat of a sealed session", seat.0)]
    NotDropped {
        /// The seat passed.
        seat: SeatId,
    },
    /// A returning process's public key is unusable (a low-order point).
    #[error("the key offered for seat {} is unusable", seat.0)]
    WeakKey {
        /// The seat passed.
        seat: SeatId,
    },
    /// A message for a seat that is not a connected peer of a running
    /// match.
    #[error("seat {} is not a connected peer", peer.0)]
    NotConnected {
        /// The seat passed.
        peer: SeatId,
    },
    /// A resync retry while resync had not failed.
    #[error("resync has not failed")]
    ResyncNotFailed,
    /// A self-check for a frame no dispute is about.
    #[error("no dispute is about frame {frame}")]
    NotDisputed {
        /// The frame passed.
        frame: u32,
    },
    /// The match is invalid already (a call that would step, send inputs
    /// or declare it invalid again).
    #[error("the match is invalid already")]
    Invalidated,
}

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The peer to send it to.
    pub to: SeatId,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Why a peer was timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutReason {
    /// Nothing valid arrived from it for `peer_timeout_micros`.
    Silent,
    /// It left more than `max_unacked_inputs` of our inputs unacked.
    TooManyUnacked,
    /// It said it dropped this seat (it takes nothing more from us), and
    /// nothing newer from it cancelled that within the goodbye grace.
    DroppedUs,
}

/// Why resync gave up: the match can no longer prove that every seat
/// plays it the same way. The app then applies the match's policy: stop
/// it ([`Session::invalidate`](super::Session::invalidate)), fall back to
/// snapshots, or play on unchecked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResyncFailure {
    /// Seats disagree on `frame`, no strict majority decides, and the
    /// disputed seats' evidence about themselves blames none of them (or
    /// all): nobody may be overwritten.
    Unattributed {
        /// The disputed frame.
        frame: u32,
    },
    /// The state was loaded, or its transfer tried, too often.
    TooManyAttempts {
        /// Attempts made.
        attempts: u32,
    },
    /// A loaded state is older than the input history kept for re-simulation.
    HistoryTooShort {
        /// The state's frame.
        frame: u32,
    },
    /// This seat drifted `desyncs` times within
    /// [`Config::recurring_window_frames`](super::Config::recurring_window_frames)
    /// frames, the first at `first_frame`: its game is not deterministic,
    /// and healing it again would only hide that.
    Recurring {
        /// Desyncs counted in the window.
        desyncs: u32,
        /// The frame of the first of them.
        first_frame: u32,
    },
}

/// A match found invalid: from `first_frame` on the seats no longer prove
/// that they play the same match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalidation {
    /// The first frame whose checksums differed.
    pub first_frame: u32,
    /// Why.
    pub cause: Cause,
    /// The seat found at fault, if one was.
    pub seat: Option<SeatId>,
    /// The match plays on unchecked (its policy says so) instead of
    /// stopping.
    pub play_on: bool,
}

/// What the session tells the app; drain with [`Session::poll_event`](super::Session::poll_event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<I> {
    /// Who is in the match changed: a seat connected, left, was dropped
    /// or came back. Passed on unchanged by the peer and the endpoints.
    Seat(SeatEvent),
    /// Every peer is connected; the frame clock runs from frame 0.
    Started,
    /// Sample the local input for `frame` and pass it to
    /// [`Session::add_local_input`](super::Session::add_local_input) before the next `handle_timeout`.
    InputNeeded {
        /// The frame.
        frame: u32,
    },
    /// Step the game through `frame` with every player's input (indexed by
    /// seat), then [`Session::report_checksum`](super::Session::report_checksum)
    /// before the next call into the session.
    Frame {
        /// The frame.
        frame: u32,
        /// Every player's input for it.
        inputs: Vec<I>,
        /// `true` when stepping it again: after [`Event::LoadState`] or
        /// [`Event::Rollback`].
        resimulated: bool,
        /// `true` when some input is a prediction (rollback mode): the frame
        /// may be rolled back and stepped again.
        predicted: bool,
    },
    /// Rollback mode: a prediction was wrong. Restore the state before
    /// `frame` (the state after `frame − 1`, as it was when first stepped);
    /// the [`Event::Frame`]s that follow (`resimulated: true`) step `frame`
    /// and the later frames again.
    Rollback {
        /// The first frame to step again.
        frame: u32,
    },
    /// Checksums for `frame` differ and no strict majority of the seats
    /// holds one of them: step the frames from the newest frame compared
    /// clean through `frame` again, from its state and with the same
    /// inputs, and say whether they gave the same checksums as the first
    /// time ([`Session::report_self_check`](super::Session::report_self_check)).
    /// Every disputed seat does; a seat whose second run disagrees with its
    /// first is at fault. Comparisons pause until the evidence is in.
    Disputed {
        /// The first frame found to differ.
        frame: u32,
        /// The seats disputing it.
        seats: SeatSet,
    },
    /// Checksums for `frame` differ.
    Desync {
        /// The first frame found to differ.
        frame: u32,
        /// The seat whose state is right, if one could be chosen.
        authority: Option<SeatId>,
        /// The seats that drifted.
        drifted: SeatSet,
        /// Whether this peer is one of them (it will resync).
        local_drifted: bool,
    },
    /// A drifted peer needs our state. Answer with
    /// [`Session::provide_state`](super::Session::provide_state)`(now,
    /// frame, snapshot)`, where `frame` is the newest frame whose checksum
    /// this app has passed to
    /// [`Session::report_checksum`](super::Session::report_checksum) (or
    /// the frame of the last [`Event::LoadState`], if none was reported
    /// since) and `snapshot` the game state right after it. That frame may
    /// be older than [`Session::last_released`](super::Session::last_released):
    /// [`Event::Frame`]s released in the same call can be queued behind this
    /// event, and the app may answer before stepping them. The request stays
    /// pending until answered, so the app may also answer later, with the
    /// then-newest frame; the event is not raised again meanwhile.
    StateRequested,
    /// Replace the game state with `state`, the authority's exact saved state
    /// after `frame`; the [`Event::Frame`]s that follow (with `resimulated:
    /// true`) re-simulate the frames after it.
    LoadState {
        /// The state's frame.
        frame: u32,
        /// The snapshot bytes.
        state: Vec<u8>,
        /// The authority's checksums of the frames up to `frame`, oldest
        /// first, the last one `state`'s (a heal's: the frames this peer
        /// may have got wrong since the last frame compared clean, for its
        /// record of the match; empty for a returning seat).
        checks: Vec<lockstep_fx::Checksum>,
    },
    /// A disputed seat asks for this peer's state after exactly `frame`, to
    /// compare, not to load. Answer with
    /// [`Session::provide_state_at`](super::Session::provide_state_at) if
    /// the app still holds it.
    StateWanted {
        /// The frame.
        frame: u32,
    },
    /// The state asked for with
    /// [`Session::compare_with`](super::Session::compare_with): `from`'s
    /// exact state after `frame` (verified against its checksum), for a
    /// report. Do not load it.
    CompareState {
        /// The seat it came from.
        from: SeatId,
        /// Its frame.
        frame: u32,
        /// The snapshot bytes.
        state: Vec<u8>,
    },
    /// The state asked for with `compare_with` did not arrive in time.
    CompareFailed {
        /// The seat asked.
        from: SeatId,
    },
    /// The match is invalid: a seat (`by`, this one or a peer) found it so.
    /// Unless it plays on unchecked, this session has stopped: it releases
    /// no frame and sends no input any more; it tells the other seats,
    /// and still answers their state requests.
    Invalidated {
        /// The seat that told us (our own seat when we decided it).
        by: SeatId,
        /// What was found.
        invalidation: Invalidation,
    },
    /// Resync cannot bring this peer back.
    ResyncFailed {
        /// Why.
        reason: ResyncFailure,
    },
    /// This seat's side of the match is no longer a quorum of the seats
    /// still in it (the quorum rule, `quorum.rs`): it stopped hearing too many of
    /// them, they dropped it, or it lost a seat the others still hear. It must not play on alone: the session
    /// steps, samples and sends nothing more (it said goodbye to the seats
    /// it still heard) and drops every later datagram. Frames stepped but
    /// not settled ([`Session::newest_clean`](super::Session::newest_clean))
    /// may differ from what the others play and must not be recorded. The
    /// app may take the seat back with a new process (`rejoin`) once the
    /// others have dropped it, or end.
    LostQuorum {
        /// The first frame this seat did not step.
        frame: u32,
        /// The seats that counted: those live in the match as this seat knew
        /// it, less those that said goodbye.
        live: SeatSet,
        /// The seats of `live` on its side, itself included: those it
        /// still heard or, when no seat it heard would join its drop of a
        /// seat it lost (see `seat_drop.rs`), those that had.
        heard: SeatSet,
    },
    /// No other seat is left in the match and [`Config::play_on_alone`](super::Config::play_on_alone)
    /// lets this one play on: from `from` on its frames are compared with
    /// nobody's (unchecked) until a seat returns
    /// ([`SeatEvent::Returned`]: checking starts again at its frame).
    PlayingAlone {
        /// The first frame not compared with another seat's.
        from: u32,
    },
    /// A part of a snapshot from `from` (this peer asked it for a snapshot
    /// stream: see [`Session::send_snapshot_ack`](super::Session::send_snapshot_ack)).
    SnapshotPart {
        /// The sender.
        from: SeatId,
        /// The part.
        part: SnapshotPart,
    },
    /// `from` asks for, acks or ends a snapshot stream from this peer.
    SnapshotAck {
        /// The receiver of the stream.
        from: SeatId,
        /// Its ack.
        ack: SnapshotAck,
    },
}

/// Why a seat left the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaveReason {
    /// It said goodbye.
    Disconnected,
    /// It went silent, or stopped acknowledging our inputs.
    TimedOut(TimeoutReason),
}

/// A change in who is in the match, as this seat saw it. The session raises
/// it ([`Event::Seat`]); the peer and the endpoints pass the same value on,
/// and its text (`Display`) is the one every front end shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatEvent {
    /// The handshake with `seat`'s process completed.
    Connected {
        /// The seat.
        seat: SeatId,
    },
    /// `seat` left: it said goodbye or was timed out; nothing more is sent
    /// to it.
    Left {
        /// The seat.
        seat: SeatId,
        /// Why.
        reason: LeaveReason,
    },
    /// `seat`'s handshake names another input schema, seat count or tick.
    Incompatible {
        /// The seat.
        seat: SeatId,
    },
    /// The remaining seats agreed that `seat`, which timed out or left,
    /// played its last frame at `last_frame` (`None`: it played none); from
    /// the frame after it, its input is the game's absent input
    /// ([`Input::absent`](crate::input::Input::absent)).
    Dropped {
        /// The seat.
        seat: SeatId,
        /// Its last frame.
        last_frame: Option<u32>,
    },
    /// A dropped seat came back (its restarted process rejoined): it plays
    /// again from `frame` (the frames between its drop and `frame` keep the
    /// absent input). On the rejoining process itself, `seat` is its own.
    Returned {
        /// The seat.
        seat: SeatId,
        /// The first frame it plays again.
        frame: u32,
    },
}

impl std::fmt::Display for LeaveReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaveReason::Disconnected => write!(f, "said goodbye"),
            LeaveReason::TimedOut(TimeoutReason::Silent) => write!(f, "went silent"),
            LeaveReason::TimedOut(TimeoutReason::TooManyUnacked) => {
                write!(f, "stopped acknowledging our inputs")
            }
            LeaveReason::TimedOut(TimeoutReason::DroppedUs) => write!(f, "dropped this seat"),
        }
    }
}

impl std::fmt::Display for SeatEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeatEvent::Connected { seat } => write!(f, "{seat} connected"),
            SeatEvent::Left { seat, reason } => write!(f, "{seat} left ({reason})"),
            SeatEvent::Incompatible { seat } => {
                write!(f, "{seat} plays another game or version")
            }
            SeatEvent::Dropped {
                seat,
                last_frame: Some(last),
            } => write!(f, "{seat} dropped after frame {last}"),
            SeatEvent::Dropped {
                seat,
                last_frame: None,
            } => write!(f, "{seat} dropped before frame 0"),
            SeatEvent::Returned { seat, frame } => write!(f, "{seat} returns at frame {frame}"),
        }
    }
}

impl std::fmt::Display for ResyncFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResyncFailure::Unattributed { frame } => write!(
                f,
                "the seats disagree on frame {frame} and neither a majority nor their evidence says who drifted"
            ),
            ResyncFailure::TooManyAttempts { attempts } => {
                write!(f, "the state was loaded or asked for {attempts} times")
            }
            ResyncFailure::HistoryTooShort { frame } => write!(
                f,
                "the state of frame {frame} is older than the inputs kept to step it forward"
            ),
            ResyncFailure::Recurring {
                desyncs,
                first_frame,
            } => write!(
                f,
                "this seat drifted {desyncs} times since frame {first_frame}: its game is not deterministic"
            ),
        }
    }
}
