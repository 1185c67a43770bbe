//! Canonical encoding case: every fixed-width writer method, with values whose
//! bytes differ under a byte swap, so an endianness slip shows up here first.

use lockstep_fx::Fx;

use super::Writer;

/// One value of each width through each writer method.
pub fn widths(w: &mut Writer) {
    w.write_u8(0x01);
    w.write_u16(0x0102);
    w.write_u32(0x0102_0304);
    w.write_u64(0x0102_0304_0506_0708);
    w.write_i32(-0x0102_0304);
    w.write_i64(-0x0102_0304_0506_0708);
    w.write_fx(Fx::from_bits(0x0102_0304_0506_0708));
    w.write_bytes(b"lockstep");
    w.write_bytes(&[]);
}
