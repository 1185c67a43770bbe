//! Why a request was not granted: [`Refusal`] (host to joiner, or a
//! joiner refusing the roster it was sent) and [`RosterProblem`], with
//! their wire encoding.
//!
//! Invariant: every refusal decodes to itself, and an unknown tag is an
//! error, never a panic.

use lockstep_fx::{Sink, StateReader, StateWriter};
use lockstep_protocol::SeatId;

use crate::wire::{MessageError, bad, read_text, write_text};

/// Why a request was not granted (host to joiner), or a roster not played
/// (joiner to host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another setup format or wire protocol.
    Version {
        /// The version the refusing side speaks.
        ours: u8,
        /// The version it was asked to speak.
        theirs: u8,
    },
    /// Every seat is offered (ask again: an offer whose joiner goes silent
    /// lapses).
    Full,
    /// The match has started: no new seats (rejoin a dropped seat, or watch).
    Started,
    /// The match has not started yet: nothing to rejoin or watch (ask again).
    NotStarted,
    /// The match is over.
    Ended,
    /// This key already holds another seat.
    KeyInUse,
    /// A rejoin names a key no seat of the match is bound to.
    NoSuchSeat,
    /// A rejoin's seat is still in the match: it has not been dropped (yet).
    NotDropped {
        /// The seat.
        seat: SeatId,
    },
    /// A rejoin's proof does not verify.
    BadProof,
    /// Too many spectators are being admitted (ask again).
    SpectatorsFull,
    /// An arbiter asked to join a match whose settings name none, or that
    /// has one already.
    NoArbiter,
    /// The door asked for takes a code, and the request proves none.
    InviteNeeded,
    /// The request's proof of its invitation does not verify.
    BadInvite,
    /// This source (an address, or an IPv6 /64) tried too many invitations
    /// lately (ask again: one more is allowed every 12 s).
    TooManyGuesses,
    /// The joiner cannot play the roster the host sent.
    Roster {
        /// Why.
        problem: RosterProblem,
        /// Details, for a person.
        detail: String,
    },
}

impl Refusal {
    /// Whether asking again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Refusal::Full
                | Refusal::NotStarted
                | Refusal::NotDropped { .. }
                | Refusal::SpectatorsFull
                | Refusal::TooManyGuesses
        )
    }
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Refusal::Version { ours, theirs } => {
                write!(f, "version {theirs} asked, version {ours} spoken")
            }
            Refusal::Full => write!(f, "every seat is offered"),
            Refusal::Started => write!(f, "the match has started (rejoin a dropped seat or watch)"),
            Refusal::NotStarted => write!(f, "the match has not started yet"),
            Refusal::Ended => write!(f, "the match is over"),
            Refusal::KeyInUse => write!(f, "this key already holds another seat"),
            Refusal::NoSuchSeat => write!(f, "no seat of the match is bound to this key"),
            Refusal::NotDropped { seat } => write!(f, "{seat} is still in the match"),
            Refusal::BadProof => write!(f, "the proof of the seat's key does not verify"),
            Refusal::SpectatorsFull => write!(f, "too many spectators are joining"),
            Refusal::NoArbiter => write!(f, "the match takes no arbiter, or has one already"),
            Refusal::InviteNeeded => {
                write!(f, "the match admits only the invited: ask with its code")
            }
            Refusal::BadInvite => write!(f, "the proof of the invitation does not verify"),
            Refusal::TooManyGuesses => {
                write!(
                    f,
                    "too many invitations were tried from this address lately"
                )
            }
            Refusal::Roster { problem, detail } => write!(f, "{problem}: {detail}"),
        }
    }
}

/// Why a joiner cannot play a roster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosterProblem {
    /// It does not know the game.
    UnknownGame,
    /// It has another version of the game.
    GameVersion,
    /// The settings do not hash to the roster's hash, or do not decode.
    Settings,
    /// The roster binds another key to the joiner's seat.
    WrongKey,
    /// The roster is inconsistent (a seat out of range, keys missing).
    Malformed,
    /// This process cannot start its seat (its replay log cannot be
    /// written, its game refuses the match).
    Local,
}

impl core::fmt::Display for RosterProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RosterProblem::UnknownGame => "unknown game",
            RosterProblem::GameVersion => "another version of the game",
            RosterProblem::Settings => "settings that do not decode or hash differently",
            RosterProblem::WrongKey => "the roster binds another key to our seat",
            RosterProblem::Malformed => "an inconsistent roster",
            RosterProblem::Local => "this process cannot start its seat",
        })
    }
}

pub(crate) fn write_refusal<S: Sink>(w: &mut StateWriter<S>, r: &Refusal) {
    match r {
        Refusal::Version { ours, theirs } => {
            w.write_u8(0);
            w.write_u8(*ours);
            w.write_u8(*theirs);
        }
        Refusal::Full => w.write_u8(1),
        Refusal::Started => w.write_u8(2),
        Refusal::NotStarted => w.write_u8(3),
        Refusal::Ended => w.write_u8(4),
        Refusal::KeyInUse => w.write_u8(5),
        Refusal::NoSuchSeat => w.write_u8(6),
        Refusal::NotDropped { seat } => {
            w.write_u8(7);
            w.write_u8(seat.0);
        }
        Refusal::BadProof => w.write_u8(8),
        Refusal::SpectatorsFull => w.write_u8(9),
        Refusal::NoArbiter => w.write_u8(11),
        Refusal::InviteNeeded => w.write_u8(12),
        Refusal::BadInvite => w.write_u8(13),
        Refusal::TooManyGuesses => w.write_u8(14),
        Refusal::Roster { problem, detail } => {
            w.write_u8(10);
            w.write_u8(match problem {
                RosterProblem::UnknownGame => 0,
                RosterProblem::GameVersion => 1,
                RosterProblem::Settings => 2,
                RosterProblem::WrongKey => 3,
                RosterProblem::Malformed => 4,
                RosterProblem::Local => 5,
            });
            write_text(w, detail);
        }
    }
}

pub(crate) fn read_refusal(r: &mut StateReader<'_>) -> Result<Refusal, MessageError> {
    Ok(match r.read_u8()? {
        0 => Refusal::Version {
            ours: r.read_u8()?,
            theirs: r.read_u8()?,
        },
        1 => Refusal::Full,
        2 => Refusal::Started,
        3 => Refusal::NotStarted,
        4 => Refusal::Ended,
        5 => Refusal::KeyInUse,
        6 => Refusal::NoSuchSeat,
        7 => Refusal::NotDropped {
            seat: SeatId(r.read_u8()?),
        },
        8 => Refusal::BadProof,
        9 => Refusal::SpectatorsFull,
        11 => Refusal::NoArbiter,
        12 => Refusal::InviteNeeded,
        13 => Refusal::BadInvite,
        14 => Refusal::TooManyGuesses,
        10 => Refusal::Roster {
            problem: match r.read_u8()? {
                0 => RosterProblem::UnknownGame,
                1 => RosterProblem::GameVersion,
                2 => RosterProblem::Settings,
                3 => RosterProblem::WrongKey,
                4 => RosterProblem::Malformed,
                5 => RosterProblem::Local,
                _ => return Err(bad("unknown roster problem")),
            },
            detail: read_text(r)?,
        },
        _ => return Err(bad("unknown refusal")),
    })
}
