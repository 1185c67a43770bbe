//! Test vectors of the reach messages (`protocol/SPEC.md` §8): each hex
//! file `protocol/vectors/reach_*.hex` decodes to the message below and
//! re-encodes byte for byte; the ticket's MAC and the probes' tags are the
//! ones the keys below make.
//!
//! To regenerate them after a deliberate change of the format:
//! `UPDATE_VECTORS=1 cargo test -p lockstep-rendezvous --test vectors`.

use std::net::SocketAddr;
use std::path::PathBuf;

use lockstep_rendezvous::message::{COOKIE_BYTES, Lookup};
use lockstep_rendezvous::{
    Answer, CodeId, Entry, MatchId, MatchKey, MemberId, Message, Owner, Probe, Refusal, Register,
    RelayRefusal, Role, Ticket, TicketKey,
};

fn a(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

/// The ticket every vector carries: member 1 of match 0x0123456789abcdef
/// at the relay 203.0.113.7:7701, good until 1 800 000 600 s, made with the
/// key derived from 32 bytes of 0x5a.
fn ticket() -> Ticket {
    TicketKey::new(&[0x5a; 32]).mint(
        MatchId(0x0123_4567_89ab_cdef),
        MemberId(1),
        a("203.0.113.7:7701"),
        1_800_000_600,
    )
}

fn key() -> MatchKey {
    MatchKey([0x33; 16])
}

fn code(text: &str) -> CodeId {
    lockstep_rendezvous::MatchCode::parse(&format!("{text}-000000"))
        .unwrap()
        .id()
}

fn vectors() -> Vec<(&'static str, &'static str, Message<'static>)> {
    let host_entry = Entry {
        member: MemberId::HOST,
        role: Role::Host,
        seq: 1,
        candidates: vec![a("198.51.100.4:7777"), a("192.168.1.2:7777")],
    };
    vec![
        (
            "reach_register",
            "a host files its match under seat code 4K7Q and spectator code 9PZM, with one local address (padded to 512 bytes)",
            Message::Register(Register {
                owner: Owner([0x11; 16]),
                codes: vec![code("4K7Q"), code("9PZM")],
                locals: vec![a("192.168.1.2:7777")],
                after: 0,
            }),
        ),
        (
            "reach_lookup",
            "a joiner looks up code 4K7Q, with one local address (padded to 512 bytes)",
            Message::Lookup(Lookup {
                code: code("4K7Q"),
                locals: vec![a("192.168.2.9:40000")],
            }),
        ),
        (
            "reach_poll",
            "member 1 asks for the changes after change 2 (padded to 512 bytes)",
            Message::Poll {
                ticket: ticket(),
                after: 2,
            },
        ),
        (
            "reach_answer",
            "the rendezvous answers member 1 (a seat): its ticket, the match's key, where it was seen, the host's entry",
            Message::Answer(Answer {
                ticket: ticket(),
                role: Role::Seat,
                key: key(),
                observed: a("203.0.113.50:40001"),
                ttl_secs: 30,
                next: 2,
                more: false,
                entries: vec![host_entry.clone()],
            }),
        ),
        (
            "reach_introduce",
            "the host is told of member 1",
            Message::Introduce {
                match_id: MatchId(0x0123_4567_89ab_cdef),
                next: 2,
                entries: vec![Entry {
                    member: MemberId(1),
                    role: Role::Seat,
                    seq: 2,
                    candidates: vec![a("203.0.113.50:40001")],
                }],
            },
        ),
        (
            "reach_refused",
            "no match is filed under code 4K7Q",
            Message::RendezvousRefused(Refusal::Unknown(code("4K7Q"))),
        ),
        (
            "reach_allocate",
            "member 1 asks the relay for its place, with the relay's cookie",
            Message::Allocate {
                ticket: ticket(),
                cookie: Some([0xc0; COOKIE_BYTES]),
            },
        ),
        (
            "reach_relay_challenge",
            "the relay's cookie for an address it has not proven",
            Message::RelayChallenge {
                cookie: [0xc0; COOKIE_BYTES],
            },
        ),
        (
            "reach_allocated",
            "the relay holds the place, sees the member at 203.0.113.50:40002, keeps it 30 s idle",
            Message::Allocated {
                observed: a("203.0.113.50:40002"),
                idle_secs: 30,
            },
        ),
        (
            "reach_send",
            "member 1 hands the relay 4 bytes for the host",
            Message::Send {
                to: MemberId::HOST,
                payload: &[0xde, 0xad, 0xbe, 0xef],
            },
        ),
        (
            "reach_deliver",
            "the relay hands the host those 4 bytes from member 1",
            Message::Deliver {
                from: MemberId(1),
                payload: &[0xde, 0xad, 0xbe, 0xef],
            },
        ),
        (
            "reach_relay_refused",
            "the relay holds no place for the sender",
            Message::RelayRefused(RelayRefusal::NoAllocation),
        ),
        (
            "reach_probe",
            "the host probes member 1 at 203.0.113.50:40001, under the match's key (16 bytes of 0x33)",
            Message::Probe(Probe::tagged(
                &key(),
                false,
                MemberId::HOST,
                MemberId(1),
                7,
                a("203.0.113.50:40001"),
            )),
        ),
        (
            "reach_probe_ack",
            "member 1 answers it: it saw the probe come from 198.51.100.4:7777",
            Message::ProbeAck(Probe::tagged(
                &key(),
                true,
                MemberId(1),
                MemberId::HOST,
                7,
                a("198.51.100.4:7777"),
            )),
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
fn reach_vectors_decode_and_reencode_byte_exactly() {
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

#[test]
fn the_vectors_ticket_and_tags_verify_under_their_keys() {
    let t = ticket();
    let k = TicketKey::new(&[0x5a; 32]);
    assert_eq!(k.verify(&t, a("203.0.113.7:7701"), 1_800_000_000), Ok(()));
    for (_, _, m) in vectors() {
        match m {
            Message::Probe(p) => assert!(key().verifies(false, &p)),
            Message::ProbeAck(p) => assert!(key().verifies(true, &p)),
            _ => {}
        }
    }
}
