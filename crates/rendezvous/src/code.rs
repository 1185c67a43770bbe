//! [`MatchCode`]: the short code a person reads aloud to invite another
//! into a match, and [`CodeId`], the part of it a rendezvous may see.
//!
//! A code is ten symbols of Crockford's base32 alphabet
//! (`0123456789ABCDEFGHJKMNPQRSTVWXYZ`: no `I`, `L`, `O` or `U`), 50 bits,
//! printed as two groups, `4K7Q-M2XHP9`:
//! - the first four symbols (20 bits) are the [`CodeId`]: the name a
//!   rendezvous files the match under, public;
//! - the last six (30 bits) are the secret: they never leave the processes
//!   that were given the code. Whoever proves knowledge of the whole code
//!   to the host is invited; the host proves the same back, so a party that
//!   answers in the host's place without the code is caught.
//!
//! Thirty bits are enough only because nothing a process sends lets anyone
//! test a guess of the secret offline: the proof is a password-authenticated
//! key exchange (each attempt tests one guess, online, against the host),
//! never a bare MAC an eavesdropper could grind.
//!
//! Reading is forgiving the way Crockford's alphabet intends: case does not
//! matter, `I` and `L` read as `1`, `O` as `0`, and hyphens and spaces are
//! ignored. Anything else is a typed [`CodeError`].
//!
//! Invariants: a code holds exactly 50 bits; `parse(display(c)) == c`;
//! parsing untrusted text never panics and never allocates more than the
//! text's length.

use core::fmt;

/// The symbols of a code, each worth its index.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Symbols in a code.
pub const CODE_SYMBOLS: usize = 10;
/// Symbols of its [`CodeId`].
pub const ID_SYMBOLS: usize = 4;

/// The public part of a [`MatchCode`]: 20 bits a rendezvous files the
/// match under. It proves nothing; knowing it invites nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CodeId(u32);

impl CodeId {
    /// The largest id plus one (2²⁰).
    pub const LIMIT: u32 = 1 << 20;

    /// The id whose value is `value`, if it is below [`CodeId::LIMIT`].
    pub fn new(value: u32) -> Option<CodeId> {
        (value < Self::LIMIT).then_some(CodeId(value))
    }

    /// Its 20 bits.
    pub fn value(self) -> u32 {
        self.0
    }
}

impl fmt::Display for CodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in (0..ID_SYMBOLS).rev() {
            let symbol = (self.0 >> (5 * i)) & 31;
            write!(f, "{}", char::from(ALPHABET[symbol as usize]))?;
        }
        Ok(())
    }
}

/// A match's invitation as a person passes it on: see the module doc.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MatchCode {
    /// The ten symbols' values (0..32), in reading order.
    symbols: [u8; CODE_SYMBOLS],
}

/// Why a text is not a match code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    /// A character outside the alphabet (and not a hyphen or a space).
    #[error("'{character}' (at character {at}) is not part of a match code")]
    Symbol {
        /// The character.
        character: char,
        /// Its position in the text, from 1.
        at: usize,
    },
    /// Too few or too many symbols.
    #[error("a match code has {CODE_SYMBOLS} symbols, this text has {found}")]
    Length {
        /// Symbols found (counting no further than one past the limit).
        found: usize,
    },
}

impl MatchCode {
    /// The code whose 50 bits are the low 50 bits of `random` read as a
    /// little-endian number: the caller draws the bytes (the sans-IO crates
    /// take randomness as an argument).
    pub fn from_random(random: [u8; 8]) -> MatchCode {
        let bits = u64::from_le_bytes(random);
        let mut symbols = [0u8; CODE_SYMBOLS];
        for (i, s) in symbols.iter_mut().enumerate() {
            *s = ((bits >> (5 * (CODE_SYMBOLS - 1 - i))) & 31) as u8;
        }
        MatchCode { symbols }
    }

    /// Reads a code as a person typed it (see the module doc).
    pub fn parse(text: &str) -> Result<MatchCode, CodeError> {
        let mut symbols = [0u8; CODE_SYMBOLS];
        let mut found = 0usize;
        for (at, character) in text.chars().enumerate() {
            if character == '-' || character == ' ' {
                continue;
            }
            let value = symbol_value(character).ok_or(CodeError::Symbol {
                character,
                at: at + 1,
            })?;
            if found == CODE_SYMBOLS {
                return Err(CodeError::Length {
                    found: CODE_SYMBOLS + 1,
                });
            }
            symbols[found] = value;
            found += 1;
        }
        if found != CODE_SYMBOLS {
            return Err(CodeError::Length { found });
        }
        Ok(MatchCode { symbols })
    }

    /// The public part: what a rendezvous files the match under.
    pub fn id(&self) -> CodeId {
        let value = self.symbols[..ID_SYMBOLS]
            .iter()
            .fold(0u32, |acc, &s| (acc << 5) | u32::from(s));
        CodeId(value)
    }

    /// The whole code in its one written form (ten upper-case symbols, no
    /// hyphen): the password a proof of the invitation is made with.
    pub fn password(&self) -> [u8; CODE_SYMBOLS] {
        self.symbols.map(|s| ALPHABET[usize::from(s)])
    }
}

impl fmt::Display for MatchCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &s) in self.symbols.iter().enumerate() {
            if i == ID_SYMBOLS {
                f.write_str("-")?;
            }
            write!(f, "{}", char::from(ALPHABET[usize::from(s)]))?;
        }
        Ok(())
    }
}

impl fmt::Debug for MatchCode {
    /// Shows the public part only, so a log of debug output leaks no secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MatchCode({}-******)", self.id())
    }
}

impl core::str::FromStr for MatchCode {
    type Err = CodeError;
    fn from_str(text: &str) -> Result<MatchCode, CodeError> {
        MatchCode::parse(text)
    }
}

/// A character's value in the alphabet, with Crockford's readings of the
/// letters it leaves out.
fn symbol_value(character: char) -> Option<u8> {
    let upper = match character.to_ascii_uppercase() {
        'I' | 'L' => '1',
        'O' => '0',
        c => c,
    };
    ALPHABET
        .iter()
        .position(|&a| char::from(a) == upper)
        .map(|i| i as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_code_reads_back_from_its_display() {
        let code = MatchCode::from_random(0x0003_1234_5678_9abc_u64.to_le_bytes());
        let text = code.to_string();
        assert_eq!(text.len(), CODE_SYMBOLS + 1);
        assert_eq!(&text[4..5], "-");
        assert_eq!(MatchCode::parse(&text), Ok(code));
        assert_eq!(code.id().to_string(), &text[..4]);
    }

    #[test]
    fn reading_forgives_case_spaces_and_lookalikes() {
        let code = MatchCode::parse("4K7Q-M2XHP9").unwrap();
        assert_eq!(MatchCode::parse("4k7q m2xhp9"), Ok(code));
        let with_one = MatchCode::parse("1K0Q-M2XHP9").unwrap();
        assert_eq!(MatchCode::parse("lKoQ-M2XHP9"), Ok(with_one));
        assert_eq!(MatchCode::parse("iKOQM2XHP9"), Ok(with_one));
    }

    #[test]
    fn a_text_that_is_not_a_code_is_refused_by_name() {
        assert_eq!(
            MatchCode::parse("4K7Q-M2XHPU"),
            Err(CodeError::Symbol {
                character: 'U',
                at: 11
            })
        );
        assert_eq!(
            MatchCode::parse("4K7Q-M2X"),
            Err(CodeError::Length { found: 7 })
        );
        assert_eq!(
            MatchCode::parse("4K7Q-M2XHP9Z"),
            Err(CodeError::Length { found: 11 })
        );
        assert_eq!(MatchCode::parse(""), Err(CodeError::Length { found: 0 }));
    }

    #[test]
    fn the_id_is_the_first_twenty_bits() {
        let code = MatchCode::from_random(((1u64 << 50) - 1).to_le_bytes());
        assert_eq!(code.id(), CodeId::new(CodeId::LIMIT - 1).unwrap());
        assert_eq!(code.to_string(), "ZZZZ-ZZZZZZ");
        assert_eq!(CodeId::new(CodeId::LIMIT), None);
        let zero = MatchCode::from_random([0; 8]);
        assert_eq!(zero.to_string(), "0000-000000");
        assert_eq!(&zero.password(), b"0000000000");
    }

    #[test]
    fn debug_output_hides_the_secret() {
        let code = MatchCode::parse("4K7Q-M2XHP9").unwrap();
        assert_eq!(format!("{code:?}"), "MatchCode(4K7Q-******)");
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_a_panic(text in ".{0,40}") {
            if let Ok(code) = MatchCode::parse(&text) {
                prop_assert_eq!(MatchCode::parse(&code.to_string()), Ok(code));
            }
        }

        #[test]
        fn every_random_code_round_trips(random in any::<[u8; 8]>()) {
            let code = MatchCode::from_random(random);
            prop_assert_eq!(MatchCode::parse(&code.to_string()), Ok(code));
            prop_assert_eq!(MatchCode::from_random(random).password(), code.password());
        }
    }
}
