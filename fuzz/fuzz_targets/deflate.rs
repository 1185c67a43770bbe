//! Feeds arbitrary payloads, announced lengths and limits to
//! `lockstep_codec::deflate::unpack_with` and `unpack` (the inflater under
//! resync transfers and replay-log keyframes): nothing may panic; no more
//! than the announced length is ever handed on, in pieces of at most
//! `PIECE_BYTES`; a length past the limit hands on nothing; and both
//! functions agree on what they accept and give.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_codec::deflate::{self, DeflateError, MAX_STATE_BYTES, PIECE_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&[flags, a, b, c, d, e, f, g], payload)) = data.split_first_chunk::<8>() else {
        return;
    };
    let compressed = flags & 1 == 1;
    // Lengths near the payload's and far from it, limits small and large.
    let len = u32::from_le_bytes([a, b, c, d]) >> (flags >> 3);
    let limit = u32::from_le_bytes([e, f, g, 0x7f]) >> (flags >> 4 & 0x1f);
    let mut given = Vec::new();
    let result = deflate::unpack_with(compressed, payload, len, limit, |piece| {
        assert!(!piece.is_empty() && piece.len() <= PIECE_BYTES);
        given.extend_from_slice(piece);
    });
    assert!(given.len() as u64 <= u64::from(len));
    match result {
        Ok(()) => {
            assert_eq!(given.len() as u64, u64::from(len));
            assert!(len <= limit);
            assert_eq!(deflate::unpack(compressed, payload, len), Ok(given));
        }
        Err(DeflateError::TooLong { .. }) => {
            assert!(len > limit.min(MAX_STATE_BYTES));
            assert!(given.is_empty());
        }
        Err(_) => {
            if len <= limit {
                assert!(deflate::unpack(compressed, payload, len).is_err());
            }
        }
    }
    if !compressed && len as usize == payload.len() && len <= limit {
        assert!(result.is_ok());
    }
});
