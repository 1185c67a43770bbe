//! The RTS demo (being written).
