//! Test vectors of the match-setup messages (`protocol/SPEC.md` §7): each
//! hex file in `protocol/vectors/setup_*.hex` decodes to the message below
//! and re-encodes byte for byte.
//!
//! To regenerate them after a deliberate change of the setup format:
//! `UPDATE_VECTORS=1 cargo test -p lockstep-lobby --test vectors`.

use std::path::PathBuf;

use lockstep_lobby::invite::{JoinerExchange, host_answer};
use lockstep_lobby::message::{
    COOKIE_BYTES, Cookie, InviteProof, Join, Message, Refusal, Roster, Want,
};
use lockstep_lobby::{MatchCode, MatchSettings};
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_sim::Match;

/// The exchange the invitation vectors hold: the seat code `4K7Q-M2XHP9`,
/// the joiner's key pair from the secret `0x11…`, the host's from `0x22…`,
/// the joiner's random bytes `0x33…` (attempt 0), the host's secret
/// `0x44…`, the cookie of the challenge vector.
struct Exchange {
    cookie: Cookie,
    joiner: PublicKey,
    asked: [u8; 33],
    answer: [u8; 33],
    host_confirm: [u8; 32],
    joiner_confirm: [u8; 32],
    roster_tag: [u8; 32],
}

fn cookie() -> Cookie {
    let mut c = [0xab; COOKIE_BYTES];
    c[..4].copy_from_slice(&7u32.to_le_bytes());
    Cookie(c)
}

fn roster() -> Roster {
    let setup = Match {
        seats: 2,
        seed: 7,
        tick_rate: 60,
    };
    Roster {
        game: "cubes".into(),
        game_version: 1,
        config: vec![1, 2, 3],
        config_hash: lockstep_fx::Checksum::of(&[1, 2, 3]),
        setup,
        seat: Some(lockstep_protocol::SeatId(1)),
        rejoin: false,
        addresses: vec![None, Some("10.0.0.2:5000".parse().unwrap())],
        keys: vec![
            Identity::from_secret([0x22; 32]).public(),
            Identity::from_secret([0x11; 32]).public(),
        ],
        settings: MatchSettings::new(&setup).frames(600),
    }
}

fn exchange() -> Exchange {
    let code = MatchCode::parse("4K7Q-M2XHP9").unwrap();
    let joiner = Identity::from_secret([0x11; 32]).public();
    let host = Identity::from_secret([0x22; 32]).public();
    let cookie = cookie();
    let mut j = JoinerExchange::start(&code, &[0x33; 32], 0, &joiner, &host);
    let (answer, key) = host_answer(&code, &[0x44; 32], &host, &joiner, Want::Seat, j.message())
        .expect("the joiner's message is a point");
    let host_confirm = key.host_confirms(&host, &joiner, &cookie, Want::Seat);
    assert_eq!(
        j.finish(&joiner, Want::Seat, &answer, &cookie, &host_confirm),
        Ok(true)
    );
    Exchange {
        cookie,
        joiner,
        asked: *j.message(),
        answer,
        host_confirm,
        joiner_confirm: key.joiner_confirms(&host, &joiner, &cookie, Want::Seat),
        roster_tag: key.roster_tag(&roster().to_bytes()),
    }
}

fn vectors() -> Vec<(&'static str, &'static str, Message)> {
    let x = exchange();
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
                invite: None,
            }),
        ),
        (
            "setup_challenge",
            "the host's challenge: a cookie for slot 7 and the host's key",
            Message::Challenge {
                cookie: cookie(),
                host_key: PublicKey([0x22; 32]),
            },
        ),
        (
            "setup_join_invite",
            "a seat Join with the cookie and the joiner's SPAKE2 message for the seat code 4K7Q-M2XHP9 (see vectors.rs for every input)",
            Message::Join(Join {
                want: Want::Seat,
                protocol: lockstep_protocol::packet::VERSION,
                key: x.joiner,
                cookie: Some(x.cookie),
                claim: None,
                invite: Some(InviteProof {
                    msg: x.asked,
                    confirm: None,
                }),
            }),
        ),
        (
            "setup_code_proof",
            "the host's SPAKE2 message and its confirmation of the code, for that cookie",
            Message::CodeProof {
                cookie: x.cookie,
                answer: x.answer,
                confirm: x.host_confirm,
            },
        ),
        (
            "setup_join_confirmed",
            "the same Join with the joiner's confirmation of the code",
            Message::Join(Join {
                want: Want::Seat,
                protocol: lockstep_protocol::packet::VERSION,
                key: x.joiner,
                cookie: Some(x.cookie),
                claim: None,
                invite: Some(InviteProof {
                    msg: x.asked,
                    confirm: Some(x.joiner_confirm),
                }),
            }),
        ),
        (
            "setup_roster_tagged",
            "seat 1's roster of a 2-seat match, tagged under the exchange's key",
            Message::Roster {
                roster: Box::new(roster()),
                tag: Some(x.roster_tag),
            },
        ),
        (
            "setup_refused",
            "a rejoin refused: seat 3 is still in the match (ask again)",
            Message::Refused(Refusal::NotDropped {
                seat: lockstep_protocol::SeatId(3),
            }),
        ),
        (
            "setup_refused_invite",
            "a request without the code its door takes, refused",
            Message::Refused(Refusal::InviteNeeded),
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
