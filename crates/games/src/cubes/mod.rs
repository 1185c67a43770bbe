//! The cube demo (being written).
