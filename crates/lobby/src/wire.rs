//! The building blocks of the setup messages' encoding, shared by
//! [`Message`](crate::Message), the [`Roster`](crate::Roster) and the
//! [`MatchSettings`](crate::MatchSettings) it carries: the format's magic
//! and version, [`MessageError`], and readers of fixed arrays, keys and
//! bounded text.
//!
//! Invariants: every reader takes untrusted bytes and fails with a typed
//! error, never a panic; text is at most [`MAX_DETAIL_BYTES`] on the wire
//! both ways (cut on write, refused on read).

use lockstep_fx::{DecodeError, Sink, StateReader, StateWriter};
use lockstep_protocol::seal::PublicKey;

/// The first bytes of every setup message ("LKSJ").
pub const MAGIC: [u8; 4] = *b"LKSJ";
/// The setup format's version.
pub const VERSION: u8 = 6;
/// Longest text a refusal or abort carries (longer text is cut).
pub const MAX_DETAIL_BYTES: usize = 200;

/// Why bytes are not a setup message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Not a setup message at all.
    #[error("not a match-setup message")]
    NotSetup,
    /// Another version of the setup format.
    #[error("match-setup version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// A field is missing, out of range or not canonical.
    #[error("malformed match-setup message: {0}")]
    Malformed(String),
}

impl From<DecodeError> for MessageError {
    fn from(e: DecodeError) -> MessageError {
        MessageError::Malformed(e.to_string())
    }
}

pub(crate) fn bad(what: &str) -> MessageError {
    MessageError::Malformed(what.to_string())
}

pub(crate) fn read_array<const N: usize>(r: &mut StateReader<'_>) -> Result<[u8; N], MessageError> {
    r.read_raw(N)?.try_into().map_err(|_| bad("array"))
}

pub(crate) fn read_key(r: &mut StateReader<'_>) -> Result<PublicKey, MessageError> {
    Ok(PublicKey(read_array(r)?))
}

/// Text cut to [`MAX_DETAIL_BYTES`] at a character boundary.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(MAX_DETAIL_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

pub(crate) fn write_text<S: Sink>(w: &mut StateWriter<S>, text: &str) {
    w.write_bytes(cut(text).as_bytes());
}

pub(crate) fn read_text(r: &mut StateReader<'_>) -> Result<String, MessageError> {
    let bytes = r.read_bytes()?;
    if bytes.len() > MAX_DETAIL_BYTES {
        return Err(bad("text too long"));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| bad("text"))
}
