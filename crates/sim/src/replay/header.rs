//! The log header ([`Header`]): everything needed to rebuild the match before
//! frame 0 — which game (id, version, input schema hash), its config stored
//! canonically with its BLAKE3 hash, the [`Match`] setup — and how the frames
//! that follow are laid out (full-checksum and keyframe intervals).
//!
//! Layout (little-endian, `fixtures/replays/SPEC.md` §2): magic `LSREPLAY`, format version
//! `u16`, body length `u32`, the body, then a `u64` check: the first 8 bytes
//! of BLAKE3 of every header byte before it. The header of every format
//! version this build reads (1 and 2) has this layout; the version says
//! which records may follow (version 1 has no notes).
//!
//! Invariants: a header that reads is exactly what [`Header::to_bytes`]
//! writes back (every field has one encoding, the body has no trailing
//! bytes, and the format version read is the one written); the config hash is BLAKE3 of the config bytes; the game id is 1 to
//! 32 ASCII bytes, seats and tick rate are non-zero. Reading checks the
//! magic, then the version (so a log of a future layout says so rather than
//! failing its check), then that the body length agrees with the game id and
//! config lengths inside the body (so a corrupted length is not mistaken for
//! a truncated log), then the length and the check, then the fields; it
//! never panics and allocates no more than the bytes it was given.

use lockstep_codec::Input;
use lockstep_fx::{Canonical, Checksum, DecodeError, HashSink, StateReader, StateWriter};

use super::{FORMAT_VERSION, MAGIC, OLDEST_FORMAT_VERSION};
use crate::game::{Game, Match};

/// Bytes before the header body: magic, format version, body length.
const PREFIX: usize = 8 + 2 + 4;

/// Bytes of the header check.
const CHECK: usize = 8;

/// The longest game id, in bytes.
pub const MAX_GAME_ID: usize = 32;

/// Why bytes are not a replay log this build can read: the header is bad, so
/// nothing after it can be trusted either.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// Not a replay log at all.
    #[error("not a lockstep replay log (bad magic at byte 0)")]
    Magic,
    /// A layout this build does not read.
    #[error(
        "replay log format version {found} (byte 8); this build reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}"
    )]
    Version {
        /// The version found.
        found: u16,
    },
    /// The bytes end inside the header.
    #[error("replay log ends inside its header at byte {len}: {needed} more byte(s) needed")]
    Truncated {
        /// Bytes given.
        len: u64,
        /// Bytes the header still needs.
        needed: u64,
    },
    /// The body length field disagrees with the lengths the body's own
    /// fields give (game id and config lengths): a header field is corrupted.
    #[error(
        "replay log header is corrupted: its body length (byte 10) says {found} bytes, its fields take {fields}"
    )]
    Length {
        /// The body length field.
        found: u32,
        /// The body length the fields give.
        fields: u64,
    },
    /// The header's bytes do not match its check.
    #[error("replay log header is corrupted: check mismatch at byte {offset}")]
    Check {
        /// Byte offset of the check.
        offset: u64,
    },
    /// A header whose check is right but whose fields are not (a writer bug).
    #[error("malformed replay log header: {0}")]
    Malformed(#[from] DecodeError),
    /// The log's inputs are encoded with another schema than the one it is
    /// read as.
    #[error(
        "replay log inputs have schema hash {found:016x}, the reader's input type has {expected:016x}"
    )]
    Schema {
        /// The log's schema hash.
        found: u64,
        /// The input type's.
        expected: u64,
    },
    /// The config bytes do not match the config hash.
    #[error("replay log config does not match its hash (the scene/config is corrupted)")]
    ConfigHash,
}

/// What a replay log says about its match, before the first frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The log's format version: [`FORMAT_VERSION`] for a log this build
    /// writes, or an older version it still reads and writes back as it was
    /// (version 1 holds no notes).
    pub format_version: u16,
    /// The game's [`Game::ID`].
    pub game: String,
    /// The game's [`Game::VERSION`].
    pub game_version: u32,
    /// The input encoding's [`Input::schema_hash`].
    pub schema_hash: u64,
    /// Seats, seed and tick rate.
    pub setup: Match,
    /// A full checksum is logged after frame `f` when
    /// `(f + 1) % full_checksum_interval == 0` (`0`: never).
    pub full_checksum_interval: u32,
    /// Keyframes were asked for before every frame that is a multiple of this
    /// (`0`: none). Informational: the records say where keyframes are.
    pub keyframe_interval: u32,
    /// The game's config, canonically encoded ([`Canonical::to_canonical`]).
    pub config: Vec<u8>,
    /// BLAKE3 of `config`: the scene/config hash.
    pub config_hash: Checksum,
}

impl Header {
    /// The header of a match of `G` with `config` and `setup`.
    pub fn new<G: Game>(
        config: &G::Config,
        setup: Match,
        full_checksum_interval: u32,
        keyframe_interval: u32,
    ) -> Header {
        let config = config.to_canonical();
        Header {
            format_version: FORMAT_VERSION,
            game: G::ID.to_string(),
            game_version: G::VERSION,
            schema_hash: <G::Input as Input>::schema_hash(),
            setup,
            full_checksum_interval,
            keyframe_interval,
            config_hash: Checksum::of(&config),
            config,
        }
    }

    /// Reads the header at the start of `bytes` (the rest is ignored): a
    /// cheap way to learn which game a log is of before reading its frames.
    pub fn read(bytes: &[u8]) -> Result<Header, LogError> {
        Header::parse(bytes).map(|(header, _, _)| header)
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = StateWriter::buffer();
        let game = self.game.as_bytes();
        body.write_u8(u8::try_from(game.len()).unwrap_or(u8::MAX));
        body.write_raw(game);
        body.write_u32(self.game_version);
        body.write_u64(self.schema_hash);
        body.write_u8(self.setup.seats);
        body.write_u64(self.setup.seed);
        body.write_u16(self.setup.tick_rate);
        body.write_u32(self.full_checksum_interval);
        body.write_u32(self.keyframe_interval);
        body.write_raw(self.config_hash.as_bytes());
        body.write_bytes(&self.config);
        let body = body.into_inner();

        let mut w = StateWriter::buffer();
        w.write_raw(&MAGIC);
        w.write_u16(self.format_version);
        w.write_len(body.len());
        w.write_raw(&body);
        let check = check_of(w.bytes());
        w.write_u64(check);
        w.into_inner()
    }

    /// The header's check: the first 8 bytes of BLAKE3 of the header bytes
    /// before it. Every record check starts from it, binding the records to
    /// their header.
    pub fn check(&self) -> u64 {
        let bytes = self.to_bytes();
        let mut b = [0u8; CHECK];
        b.copy_from_slice(&bytes[bytes.len() - CHECK..]);
        u64::from_le_bytes(b)
    }

    /// Why this header cannot be written or replayed as it is, if it cannot.
    pub fn invalid(&self) -> Option<&'static str> {
        if !readable(self.format_version) {
            return Some("format version (not one this build writes)");
        }
        if self.game.is_empty() || self.game.len() > MAX_GAME_ID || !self.game.is_ascii() {
            return Some("game id (1 to 32 ASCII bytes)");
        }
        if self.setup.seats == 0 {
            return Some("seats (at least 1)");
        }
        if self.setup.tick_rate == 0 {
            return Some("tick rate (at least 1 Hz)");
        }
        if u32::try_from(self.config.len()).is_err() {
            return Some("config (longer than 4 GiB)");
        }
        if Checksum::of(&self.config) != self.config_hash {
            return Some("config hash (not BLAKE3 of the config)");
        }
        None
    }

    /// Reads the header at the start of `bytes`: the header, its length in
    /// bytes and its check.
    pub(crate) fn parse(bytes: &[u8]) -> Result<(Header, usize, u64), LogError> {
        let len = bytes.len() as u64;
        let truncated = |need: usize| LogError::Truncated {
            len,
            needed: (need as u64).saturating_sub(len),
        };
        let magic_len = bytes.len().min(MAGIC.len());
        if bytes[..magic_len] != MAGIC[..magic_len] {
            return Err(LogError::Magic);
        }
        if bytes.len() < PREFIX {
            // Report a wrong version even if the length field is cut off.
            if bytes.len() >= 10 {
                let found = u16::from_le_bytes([bytes[8], bytes[9]]);
                if !readable(found) {
                    return Err(LogError::Version { found });
                }
            }
            return Err(truncated(PREFIX));
        }
        let format_version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if !readable(format_version) {
            return Err(LogError::Version {
                found: format_version,
            });
        }
        let body_len = u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]);
        // A corrupted length would otherwise read as a truncated log (or a
        // failed check): compare it with what the fields before it say.
        if let Some(fields) = body_len_of_fields(&bytes[PREFIX..]) {
            if fields != u64::from(body_len) {
                return Err(LogError::Length {
                    found: body_len,
                    fields,
                });
            }
        }
        // PREFIX + body + CHECK, in u64 so that no length can overflow.
        let total = PREFIX as u64 + u64::from(body_len) + CHECK as u64;
        if total > len {
            return Err(LogError::Truncated {
                len,
                needed: total - len,
            });
        }
        // `total <= len`, so these fit in `usize`.
        let body_end = PREFIX + body_len as usize;
        let total = body_end + CHECK;
        let mut b = [0u8; CHECK];
        b.copy_from_slice(&bytes[body_end..total]);
        let check = u64::from_le_bytes(b);
        if check != check_of(&bytes[..body_end]) {
            return Err(LogError::Check {
                offset: body_end as u64,
            });
        }

        let mut r = StateReader::new(&bytes[..body_end]);
        r.read_raw(PREFIX)?;
        let at = r.offset();
        let game_len = r.read_u8()?;
        let game = r.read_raw(usize::from(game_len))?;
        if game.is_empty() || game.len() > MAX_GAME_ID || !game.is_ascii() {
            return Err(invalid(at, "game id (1 to 32 ASCII bytes)"));
        }
        let game = String::from_utf8_lossy(game).into_owned();
        let game_version = r.read_u32()?;
        let schema_hash = r.read_u64()?;
        let at = r.offset();
        let seats = r.read_u8()?;
        if seats == 0 {
            return Err(invalid(at, "seats (at least 1)"));
        }
        let seed = r.read_u64()?;
        let at = r.offset();
        let tick_rate = r.read_u16()?;
        if tick_rate == 0 {
            return Err(invalid(at, "tick rate (at least 1 Hz)"));
        }
        let full_checksum_interval = r.read_u32()?;
        let keyframe_interval = r.read_u32()?;
        let config_hash = Checksum::decode(&mut r)?;
        let config = r.read_bytes()?.to_vec();
        r.finish()?;
        if Checksum::of(&config) != config_hash {
            return Err(LogError::ConfigHash);
        }
        let header = Header {
            format_version,
            game,
            game_version,
            schema_hash,
            setup: Match {
                seats,
                seed,
                tick_rate,
            },
            full_checksum_interval,
            keyframe_interval,
            config,
            config_hash,
        };
        Ok((header, total, check))
    }

    /// The fields that say which match a log records, where `other`
    /// differs from `self`: `(field, self's value, other's value)`. Empty
    /// for two logs of one match (the checksum and keyframe intervals are
    /// how it was logged, not what was played, and are not compared).
    pub fn match_differences(&self, other: &Header) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        let mut field = |name, a: String, b: String| {
            if a != b {
                out.push((name, a, b));
            }
        };
        field("game", self.game.clone(), other.game.clone());
        field(
            "game version",
            self.game_version.to_string(),
            other.game_version.to_string(),
        );
        field(
            "input schema hash",
            format!("{:016x}", self.schema_hash),
            format!("{:016x}", other.schema_hash),
        );
        field(
            "config hash",
            self.config_hash.to_string(),
            other.config_hash.to_string(),
        );
        field(
            "seats",
            self.setup.seats.to_string(),
            other.setup.seats.to_string(),
        );
        field(
            "seed",
            self.setup.seed.to_string(),
            other.setup.seed.to_string(),
        );
        field(
            "tick rate",
            self.setup.tick_rate.to_string(),
            other.setup.tick_rate.to_string(),
        );
        out
    }

    /// Whether the log's records may include notes (format version 2 on).
    pub fn allows_notes(&self) -> bool {
        self.format_version >= 2
    }

    /// Whether frame `frame` carries a full checksum.
    pub fn has_full_checksum(&self, frame: u32) -> bool {
        let interval = self.full_checksum_interval;
        interval != 0 && (u64::from(frame) + 1) % u64::from(interval) == 0
    }
}

/// Bytes of the body's fixed fields between the game id and the config
/// length: game version, schema hash, seats, seed, tick rate, the two
/// intervals and the config hash.
const FIXED_FIELDS: u64 = 4 + 8 + 1 + 8 + 2 + 4 + 4 + 32;

/// The body length that the game id length and the config length in `body`
/// (the bytes after the prefix) add up to, if `body` reaches the config
/// length field.
fn body_len_of_fields(body: &[u8]) -> Option<u64> {
    let game_len = u64::from(*body.first()?);
    let at = usize::try_from(1 + game_len + FIXED_FIELDS).ok()?;
    let config_len = body.get(at..at.checked_add(4)?)?;
    let config_len =
        u32::from_le_bytes([config_len[0], config_len[1], config_len[2], config_len[3]]);
    Some(1 + game_len + FIXED_FIELDS + 4 + u64::from(config_len))
}

/// Whether this build reads (and writes) logs of format `version`.
fn readable(version: u16) -> bool {
    (OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version)
}

fn invalid(offset: u64, what: &'static str) -> LogError {
    LogError::Malformed(DecodeError::Invalid { offset, what })
}

/// The first 8 bytes, little-endian, of BLAKE3 of `parts` concatenated.
pub(crate) fn check_of_parts(parts: &[&[u8]]) -> u64 {
    let mut w = StateWriter::<HashSink>::hasher();
    for part in parts {
        w.write_raw(part);
    }
    w.checksum().short().0
}

fn check_of(bytes: &[u8]) -> u64 {
    check_of_parts(&[bytes])
}
