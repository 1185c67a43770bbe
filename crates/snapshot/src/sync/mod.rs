//! State synchronization: both sides simulate; the authority sends the
//! state of the bodies that matter most under a bit budget, and the
//! receiver writes them into its own simulation, drawing the corrections
//! smoothly.
//!
//! - `priority.rs`: [`PriorityAccumulator`] (players and the bodies they
//!   act on first, bodies at rest last, a body's priority reset only when
//!   it is sent);
//! - `packet.rs`: [`SyncSender`] and [`SyncReceiver`], each body coded
//!   against its own acked baseline, and the [`SyncAck`];
//! - `jitter.rs`: [`JitterBuffer`], which applies packets a few frames
//!   behind their best-case arrival, one frame per tick.
//!
//! Quantization is applied on both sides: the sender quantizes its own
//! simulation every frame ([`quantize_awake`]) so that what it sends is
//! exactly what it simulates with, and the receiver sets the received
//! states as they are (4 096 steps per metre and 15-bit orientation
//! components, [`Bounds::synced`](crate::Bounds::synced)). The visual
//! smoothing of corrections is [`crate::smoothing`].
//! `cargo run --release -p lockstep-snapshot --example state_sync`
//! measures the whole on the recorded cube match.

mod jitter;
mod packet;
mod priority;

pub use jitter::JitterBuffer;
pub use packet::{SyncAck, SyncReceiver, SyncSender, SyncSettings, WINDOW};
pub use priority::{PriorityAccumulator, Weights};

use crate::bodies::BodiesMut;
use crate::quantize::{Bounds, QuantBody};

/// Quantizes every awake body of `game` in place with `bounds` (a body at
/// rest is left alone, so it does not wake), and gives every slot's
/// quantized state and role (`None` for removed bodies).
pub fn quantize_awake<G: BodiesMut + ?Sized>(
    game: &mut G,
    bounds: &Bounds,
) -> Vec<Option<(QuantBody, crate::bodies::Role)>> {
    (0..game.body_slots())
        .map(|slot| {
            let (state, role) = game.body(slot)?;
            let q = QuantBody::new(&state, bounds);
            if !state.at_rest {
                game.set_body(slot, &q.state(bounds));
            }
            Some((q, role))
        })
        .collect()
}
