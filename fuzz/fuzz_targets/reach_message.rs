//! The reach messages' decoder (`lockstep_rendezvous::Message`: the
//! rendezvous's, the relay's and the probes) and a rendezvous store's
//! record decoder (`MatchRecord`, what Redis hands back) on arbitrary
//! bytes. Nothing may panic; what decodes encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_rendezvous::{MatchRecord, Message};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::decode(data) {
        assert_eq!(m.encode(), data);
    }
    if let Ok(r) = MatchRecord::decode(data) {
        assert_eq!(MatchRecord::decode(&r.encode()), Ok(r));
    }
});
