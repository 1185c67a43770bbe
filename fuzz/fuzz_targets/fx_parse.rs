//! Parses arbitrary text as an `Fx` decimal: never panics, and a parsed value
//! printed with 19 digits parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::Fx;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = core::str::from_utf8(data) {
        if let Ok(v) = text.parse::<Fx>() {
            assert_eq!(format!("{v:.19}").parse::<Fx>(), Ok(v));
        }
    }
});
