//! The networked commands with `--rendezvous`: a match found by its code
//! instead of an address. `host` registers the public parts of its codes
//! (a seat code and a spectator code); `join`, `spectate` and `arbiter`
//! look their code up and join the host's mapped address, and a seat or a
//! spectator proves the same code to the host (the host proves it back,
//! so a rendezvous that points elsewhere is caught);
//! every command prints how it reaches each member as that changes
//! (direct, or through the relay). The reach layer in the socket does the
//! rest (`lockstep_net::reach`).

use std::net::SocketAddr;

use lockstep_net::entropy;
use lockstep_net::reach::{self, ReachFailure};
use lockstep_net::{Invite, Invites, Socket};
use lockstep_rendezvous::{MatchCode, ReachTiming, Refusal};

use crate::error::CliError;
use crate::report::Printer;

/// How the reach layer runs: `--relayed` sends everything through the
/// relay (no punching, no probe answered).
pub(super) fn timing(relayed: bool) -> ReachTiming {
    ReachTiming {
        punch_micros: if relayed {
            0
        } else {
            ReachTiming::default().punch_micros
        },
        ..ReachTiming::default()
    }
}

fn failure(rendezvous: &str, e: ReachFailure) -> CliError {
    CliError::new(match e {
        ReachFailure::Refused(Refusal::Unknown(id)) => {
            format!(
                "no match is filed under code {id}… at the rendezvous {rendezvous} (a typo, or the match is over)"
            )
        }
        ReachFailure::Refused(r) => format!("the rendezvous {rendezvous} refused: {r}"),
        other => other.to_string(),
    })
}

/// Registers the codes of `invites` (a seat code and a spectator code) at
/// `rendezvous` on `socket`, drawing new ones if another match holds one,
/// and gives the invites registered: the codes a joiner finds the match
/// by are the ones it proves to the host.
pub(super) async fn register(
    socket: &mut Socket,
    rendezvous: &str,
    relayed: bool,
    mut invites: Invites,
    printer: &mut Printer<'_>,
) -> Result<Invites, CliError> {
    let addr = super::resolve(rendezvous)?;
    for _ in 0..4 {
        let (Invite::Code(seat), Invite::Code(spectate)) = (invites.seat, invites.spectate) else {
            return Err(CliError::new(
                "a match found through a rendezvous is entered with its codes: no --open, no --public-spectating",
            ));
        };
        let codes = [seat, spectate];
        match reach::register(socket, addr, &codes, timing(relayed), |e| printer.reach(e)).await {
            Ok(met) => {
                printer.registered(&codes, rendezvous, met.observed);
                return Ok(invites);
            }
            Err(ReachFailure::Refused(Refusal::Taken(_))) => {
                invites = entropy::invites().map_err(|e| CliError::new(e.to_string()))?;
            }
            Err(e) => return Err(failure(rendezvous, e)),
        }
    }
    Err(CliError::new(format!(
        "the rendezvous {rendezvous} holds every code drawn"
    )))
}

/// Looks `code` up at `rendezvous` on `socket`: the address to join.
pub(super) async fn find(
    socket: &mut Socket,
    code: &MatchCode,
    rendezvous: &str,
    relayed: bool,
    printer: &mut Printer<'_>,
) -> Result<SocketAddr, CliError> {
    let addr = super::resolve(rendezvous)?;
    let met = reach::find(socket, addr, code, timing(relayed), |e| printer.reach(e))
        .await
        .map_err(|e| failure(rendezvous, e))?;
    Ok(met.host)
}

/// The code a person typed, or one line saying why it is none.
pub(super) fn parse_code(text: &str) -> Result<MatchCode, CliError> {
    MatchCode::parse(text).map_err(|e| CliError::new(format!("`{text}` is not a match code: {e}")))
}

/// Prints what the socket's reach layer reported since the last call.
pub(super) fn report_paths(socket: &mut Socket, printer: &mut Printer<'_>) {
    if let Some(reach) = socket.reach_mut() {
        while let Some(e) = reach.poll_event() {
            printer.reach(&e);
        }
    }
}
