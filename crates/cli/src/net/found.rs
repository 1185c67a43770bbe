//! The networked commands with `--rendezvous`: a match found by its code
//! instead of an address. `host` draws its codes (a seat code and a
//! spectator code) and registers their public parts; `join`, `spectate`
//! and `arbiter` look their code up and join the host's mapped address;
//! every command prints how it reaches each member as that changes
//! (direct, or through the relay). The reach layer in the socket does the
//! rest (`lockstep_net::reach`).

use std::net::SocketAddr;

use lockstep_net::Socket;
use lockstep_net::entropy;
use lockstep_net::reach::{self, ReachFailure};
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

/// Draws a seat code and a spectator code, registers them at
/// `rendezvous` on `socket` (drawing again if another match holds one)
/// and gives them.
pub(super) async fn register(
    socket: &mut Socket,
    rendezvous: &str,
    relayed: bool,
    printer: &mut Printer<'_>,
) -> Result<[MatchCode; 2], CliError> {
    let addr = super::resolve(rendezvous)?;
    for _ in 0..4 {
        let draw = || -> Result<MatchCode, CliError> {
            let bytes = entropy::secret().map_err(|e| CliError::new(e.to_string()))?;
            let mut eight = [0u8; 8];
            eight.copy_from_slice(&bytes[..8]);
            Ok(MatchCode::from_random(eight))
        };
        let codes = [draw()?, draw()?];
        match reach::register(socket, addr, &codes, timing(relayed), |e| printer.reach(e)).await {
            Ok(met) => {
                printer.registered(&codes, rendezvous, met.observed);
                return Ok(codes);
            }
            Err(ReachFailure::Refused(Refusal::Taken(_))) => continue,
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
