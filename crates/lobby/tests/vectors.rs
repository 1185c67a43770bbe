//! Test vectors of the match-setup messages (`protocol/SPEC.md` §7): each
//! hex file in `protocol/vectors/setup_*.hex` decodes to the message below
//! and re-encodes byte for byte.
//!
//! To regenerate them after a deliberate change of the setup format:
//! `UPDATE_VECTORS=1 cargo test -p lockstep-lobby --test vectors`.

use std::path::PathBuf;

use lockstep_lobby::message::{COOKIE_BYTES, Cookie, Join, Message, Refusal, Want};
use lockstep_protocol::seal::PublicKey;

fn vectors() -> Vec<(&'static str, &'static str, Message)> {
    vec![
        (
            "setup_join",
            "a seat Join without a cookie (the first request), padded to 1 200 bytes",
            Message::Join(Join {
                want: Want::Seat,
                protocol: lockstep_protocol::packet::VERSION,
                key: PublicKey([0x11; 32]),
                cookie: None,
                claim: None,
            }),
        ),
        (
            "setup_challenge",
            "the host's challenge: a cookie for slot 7 and the host's key",
            Message::Challenge {
                cookie: Cookie({
                    let mut c = [0xab; COOKIE_BYTES];
                    c[..4].copy_from_slice(&7u32.to_le_bytes());
                    c
                }),
                host_key: PublicKey([0x22; 32]),
            },
        ),
        (
            "setup_refused",
            "a rejoin refused: seat 3 is still in the match (ask again)",
            Message::Refused(Refusal::NotDropped {
                seat: lockstep_protocol::SeatId(3),
            }),
        ),
    ]
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, line) in bytes.chunks(16).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let words: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&words.join(" "));
    }
    out
}

fn unhex(text: &str) -> Vec<u8> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .map(|w| u8::from_str_radix(w, 16).expect("hex byte"))
        .collect()
}

#[test]
fn setup_vectors_decode_and_reencode_byte_exactly() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../protocol/vectors");
    let update = std::env::var_os("UPDATE_VECTORS").is_some();
    for (name, what, message) in vectors() {
        let bytes = message.encode();
        let path = dir.join(format!("{name}.hex"));
        if update {
            let text = format!(
                "# {name}: {what}\n# {} bytes\n{}\n",
                bytes.len(),
                hex(&bytes)
            );
            std::fs::write(&path, text).unwrap();
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = unhex(&text);
        assert_eq!(file, bytes, "{name}: the encoding changed");
        let decoded = Message::decode(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded, message, "{name}");
        assert_eq!(decoded.encode(), file, "{name}: re-encoding differs");
    }
}
