//! Feeds arbitrary datagrams, decoded as packets, to a snapshot part
//! reassembly (`lockstep_protocol::snapshot_parts::Reassembly`): nothing may
//! panic, and a payload it completes is no larger than the parts allow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{Message, Packet};
use lockstep_protocol::snapshot_parts::{MAX_PAYLOAD, Reassembly};

fuzz_target!(|data: &[u8]| {
    let mut r = Reassembly::new(0);
    // The input as a run of datagrams, each prefixed by its length.
    let mut rest = data;
    while let [len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (datagram, next) = tail.split_at(n);
        rest = next;
        if let Ok(Packet::Routed(p)) = Packet::<Buttons>::decode(datagram) {
            if let Message::SnapshotPart(part) = p.message {
                if let Ok(Some((_, payload))) = r.on_part(part, 100) {
                    assert!(payload.len() <= MAX_PAYLOAD);
                }
            }
        }
    }
});
