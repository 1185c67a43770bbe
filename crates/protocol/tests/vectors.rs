//! Test vectors: one canonical packet per kind (and a few inputs variants).
//! Each is pinned twice: as a hex file in `protocol/vectors/` that is decoded
//! and re-encoded byte for byte, and as an `insta` snapshot, so any change to
//! the wire shows up in review.
//!
//! To regenerate the hex files after a deliberate wire change:
//! `UPDATE_VECTORS=1 cargo test -p lockstep-protocol --test vectors`.

use lockstep_fx::Checksum;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::MAX_DATAGRAM;
use lockstep_protocol::packet::{
    ArbiterAnswer, Cause, ChecksumMsg, DelayPlan, Disconnect, Echo, Evidence, Feed, FeedAck,
    Finding, Hello, InputsMsg, Invalid, Message, PacePlan, Packet, Purpose, ResyncAck, ResyncChunk,
    ResyncRequest, Routed, SeatDrop, SeatReturn, ShortChecksums, SnapshotAck, SnapshotPart,
    SpectateHello, TickStamp, Timing,
};
use lockstep_protocol::seal::{Identity, Link, PairKeys};
use lockstep_protocol::{Input, SeatId, SeatSet};
use std::path::PathBuf;

fn routed(message: Message<Buttons>) -> Packet<Buttons> {
    Packet::Routed(Routed {
        sender: SeatId(1),
        token: 0x1234_5678,
        seq: 0xfffe,
        message,
    })
}

fn sample_checksum() -> Checksum {
    Checksum::of(b"lockstep test vector")
}

/// `(file stem, what it shows, packet)`.
fn vectors() -> Vec<(&'static str, &'static str, Packet<Buttons>)> {
    let window: Vec<Buttons> = [5u8, 5, 5, 9, 9, 0, 0, 0]
        .into_iter()
        .map(Buttons)
        .collect();
    let long: Vec<Buttons> = (0..120u32)
        .map(|i| Buttons(if i < 60 { 7 } else { 12 }))
        .collect();
    let state: Vec<u8> = (0..100u8).collect();
    let mut healed = state.clone();
    healed.extend_from_slice(sample_checksum().as_bytes());
    healed.extend_from_slice(Checksum::of(&state).as_bytes());
    vec![
        (
            "hello",
            "handshake from seat 2 of 4, 60 Hz, token 0xcafef00d, peer's token 0x1234_5678 echoed, not ready",
            Packet::Hello(Hello {
                seq: 7,
                sender: SeatId(2),
                schema_hash: Buttons::schema_hash(),
                seats: 4,
                tick_micros: 16_667,
                token: 0xcafe_f00d,
                echo: 0x1234_5678,
                ready: false,
            }),
        ),
        (
            "inputs_empty",
            "no inputs, no ack, no checksums (the first packet after the handshake)",
            routed(Message::Inputs(InputsMsg {
                ack: None,
                first_frame: 0,
                inputs: vec![],
                checksums: None,
            })),
        ),
        (
            "inputs",
            "ack of frame 65 535, 8 inputs from frame 65 533 (5 5 5 9 9 0 0 0), 2 short checksums ending at frame 65 530",
            routed(Message::Inputs(InputsMsg {
                ack: Some(65_535),
                first_frame: 65_533,
                inputs: window,
                checksums: Some(ShortChecksums {
                    epoch: 1,
                    newest: 65_530,
                    shorts: vec![0x0102_0304_0506_0708, sample_checksum().short().0],
                }),
            })),
        ),
        (
            "inputs_120",
            "120 unacked inputs with one change: 6 bits + 119 flags + 6 bits",
            routed(Message::Inputs(InputsMsg {
                ack: Some(1000),
                first_frame: 1001,
                inputs: long,
                checksums: None,
            })),
        ),
        (
            "checksum",
            "full checksum of frame 600, epoch 0",
            routed(Message::Checksum(ChecksumMsg {
                epoch: 0,
                frame: 600,
                checksum: sample_checksum(),
            })),
        ),
        (
            "resync_request",
            "attempt 3 asks to be healed; first differing frame 1234; the authority's checksums wanted from frame 1180",
            routed(Message::ResyncRequest(ResyncRequest {
                id: 3,
                desync_frame: 1234,
                purpose: Purpose::Heal { checks_from: 1180 },
            })),
        ),
        (
            "resync_request_load",
            "a returning seat's request 1 for the state after frame 899 or later",
            routed(Message::ResyncRequest(ResyncRequest {
                id: 1,
                desync_frame: 899,
                purpose: Purpose::Load,
            })),
        ),
        (
            "resync_request_compare",
            "request 4 for the state after exactly frame 1234, to compare, not to load",
            routed(Message::ResyncRequest(ResyncRequest {
                id: 4,
                desync_frame: 1234,
                purpose: Purpose::Compare,
            })),
        ),
        (
            "resync_chunk",
            "chunk 0 of a 100-byte uncompressed state of frame 1240, with its checksum",
            routed(Message::ResyncChunk(ResyncChunk {
                id: 3,
                frame: 1240,
                compressed: false,
                state_len: 100,
                payload_len: 100,
                index: 0,
                checksum: Some(Checksum::of(&state)),
                checks: 0,
                data: state.clone(),
            })),
        ),
        (
            "resync_chunk_checks",
            "chunk 0 (the only one) of a heal: the 100-byte state of frame 1240 uncompressed, then the authority's checksums of frames 1239 and 1240",
            routed(Message::ResyncChunk(ResyncChunk {
                id: 3,
                frame: 1240,
                compressed: false,
                state_len: 164,
                payload_len: 164,
                index: 0,
                checksum: Some(Checksum::of(&state)),
                checks: 2,
                data: healed,
            })),
        ),
        (
            "resync_chunk_tail",
            "chunk 2 (the last, 452 bytes) of a 2 500-byte compressed payload of a 9 000-byte state",
            routed(Message::ResyncChunk(ResyncChunk {
                id: 3,
                frame: 1240,
                compressed: true,
                state_len: 9000,
                payload_len: 2500,
                index: 2,
                checksum: None,
                checks: 0,
                data: vec![0xa5; 452],
            })),
        ),
        (
            "resync_ack",
            "chunks 0–4 received, 5 missing, 6 and 8 received",
            routed(Message::ResyncAck(ResyncAck {
                id: 3,
                next_missing: 5,
                received: 0b101,
            })),
        ),
        (
            "disconnect",
            "the player quit",
            routed(Message::Disconnect(Disconnect { reason: 0 })),
        ),
        (
            "seat_drop",
            "seat 3 (its process's token 0xbeef) dropped: the sender heard seats 0 and 1, holds its inputs 3 3 5 through frame 601",
            routed(Message::SeatDrop(SeatDrop {
                seat: SeatId(3),
                token: 0xbeef,
                heard: SeatSet(0b0011),
                first_frame: 599,
                inputs: vec![Buttons(3), Buttons(3), Buttons(5)],
            })),
        ),
        (
            "seat_drop_notice",
            "a notice: the sender (seat 1) dropped the receiver, seat 0 (token 0x1234_5678)",
            routed(Message::SeatDrop(SeatDrop {
                seat: SeatId(0),
                token: 0x1234_5678,
                heard: SeatSet::EMPTY,
                first_frame: 0,
                inputs: Vec::new(),
            })),
        ),
        (
            "seat_return",
            "seat 3 returns at frame 900 with its new process's token 0xbeef; seat 2 is absent then",
            routed(Message::SeatReturn(SeatReturn {
                seat: SeatId(3),
                frame: 900,
                token: 0xbeef,
                absent: SeatSet(0b0100),
                key: None,
            })),
        ),
        (
            "seat_return_sealed",
            "in a sealed session: seat 3 returns at frame 900, token 0xbeef, with the public key of secret [0x33; 32]",
            routed(Message::SeatReturn(SeatReturn {
                seat: SeatId(3),
                frame: 900,
                token: 0xbeef,
                absent: SeatSet::EMPTY,
                key: Some(Identity::from_secret([0x33; 32]).public()),
            })),
        ),
        (
            "spectate_hello",
            "a spectator's handshake to a 4-player 60 Hz match, token 0x5eed_0001, relay's token not known yet",
            Packet::SpectateHello(SpectateHello {
                seq: 7,
                schema_hash: Buttons::schema_hash(),
                seats: 4,
                tick_micros: 16_667,
                token: 0x5eed_0001,
                echo: 0,
                frame: 0,
            }),
        ),
        (
            "feed",
            "frames 1200-1202 of a 2-player match (seat 0: 3 3 3, seat 1: 0 8 8), settled checksums of frames 1190-1191",
            routed(Message::Feed(Feed {
                seats: 2,
                first_frame: 1200,
                inputs: vec![
                    vec![Buttons(3), Buttons(3), Buttons(3)],
                    vec![Buttons(0), Buttons(8), Buttons(8)],
                ],
                checksums: Some(ShortChecksums {
                    epoch: 0,
                    newest: 1191,
                    shorts: vec![0x0102_0304_0506_0708, 0x1112_1314_1516_1718],
                }),
                ask: None,
            })),
        ),
        (
            "feed_ask",
            "frame 1200 of a 2-player match (seat 0: 3, seat 1: 0), no settled checksums; to the arbiter: your checksum of frame 1188?",
            routed(Message::Feed(Feed {
                seats: 2,
                first_frame: 1200,
                inputs: vec![vec![Buttons(3)], vec![Buttons(0)]],
                checksums: None,
                ask: Some(1188),
            })),
        ),
        (
            "feed_ack",
            "the spectator holds every frame before 1203",
            routed(Message::FeedAck(FeedAck {
                next_frame: 1203,
                want_state: false,
                answer: None,
            })),
        ),
        (
            "feed_ack_answer",
            "the arbiter holds every frame before 1203; its checksum of frame 1188 starts 0102030405060708",
            routed(Message::FeedAck(FeedAck {
                next_frame: 1203,
                want_state: false,
                answer: Some(ArbiterAnswer {
                    frame: 1188,
                    short: Some(0x0102_0304_0506_0708),
                }),
            })),
        ),
        (
            "snapshot_part",
            "stream 2, the last (third) part of frame 4660's snapshot payload: 5 bytes",
            routed(Message::SnapshotPart(SnapshotPart {
                stream: 2,
                frame: 4660,
                index: 2,
                parts: 3,
                data: vec![0xde, 0xad, 0xbe, 0xef, 0x01],
            })),
        ),
        (
            "snapshot_ack",
            "stream 2: the receiver decoded frame 4660's snapshot",
            routed(Message::SnapshotAck(SnapshotAck {
                stream: 2,
                newest: Some(4660),
                done: false,
            })),
        ),
        (
            "timing",
            "clock 1 234 567 890 µs, echoing 987 654 321 held 2 500 µs, tick of frame 4 660 at 1 234 560 000 µs, wants a delay of 3, the host's plan: delay 2 from frame 4 700, steps cost 80 000 µs, the host's pace: 20 steps (a tick twice the nominal) from frame 4 720",
            routed(Message::Timing(Timing {
                time: 1_234_567_890,
                echo: Some(Echo {
                    time: 987_654_321,
                    held: 2_500,
                }),
                tick: Some(TickStamp {
                    frame: 4660,
                    time: 1_234_560_000,
                }),
                wanted_delay: 3,
                delay: Some(DelayPlan {
                    frame: 4700,
                    delay: 2,
                }),
                step_cost: 80_000,
                pace: Some(PacePlan {
                    frame: 4720,
                    steps: 20,
                }),
            })),
        ),
        (
            "timing_first",
            "the first Timing: clock 5 000 µs, nothing to echo, no tick yet, no plan, no step measured",
            routed(Message::Timing(Timing {
                time: 5_000,
                echo: None,
                tick: None,
                wanted_delay: 0,
                delay: None,
                step_cost: 0,
                pace: None,
            })),
        ),
        (
            "evidence",
            "in the dispute of frame 1234, the sender's second run of frame 1230 disagreed with its first; it holds the findings of seats 0 and 1",
            routed(Message::Evidence(Evidence {
                frame: 1234,
                finding: Finding::Inconsistent { frame: 1230 },
                heard: SeatSet(0b11),
                arbiter: None,
            })),
        ),
        (
            "evidence_consistent",
            "in the dispute of frame 1234, the sender's second run agreed with its first; it holds only its own finding",
            routed(Message::Evidence(Evidence {
                frame: 1234,
                finding: Finding::Consistent,
                heard: SeatSet(0b10),
                arbiter: None,
            })),
        ),
        (
            "evidence_arbiter",
            "in the dispute of frame 1234, the sender's second run agreed with its first; it holds the findings of seats 0 and 1, and the arbiter's word: its checksum is seat 1's",
            routed(Message::Evidence(Evidence {
                frame: 1234,
                finding: Finding::Consistent,
                heard: SeatSet(0b11),
                arbiter: Some(SeatSet(0b10)),
            })),
        ),
        (
            "invalid",
            "the match is invalid from frame 1234: seat 2 is not deterministic; every seat stops",
            routed(Message::Invalid(Invalid {
                first_frame: 1234,
                cause: Cause::Nondeterministic,
                seat: Some(SeatId(2)),
                play_on: false,
            })),
        ),
        (
            "invalid_play_on",
            "from frame 1234 nobody could be blamed for the desync; the match plays on unchecked",
            routed(Message::Invalid(Invalid {
                first_frame: 1234,
                cause: Cause::Unattributed,
                seat: None,
                play_on: true,
            })),
        ),
        (
            "snapshot_request",
            "stream 3 asked for: nothing decoded yet",
            routed(Message::SnapshotAck(SnapshotAck {
                stream: 3,
                newest: None,
                done: false,
            })),
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

fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../protocol/vectors")
}

#[test]
fn vectors_decode_and_reencode_byte_exactly() {
    let update = std::env::var_os("UPDATE_VECTORS").is_some();
    for (name, what, packet) in vectors() {
        let bytes = packet.encode();
        let path = vector_dir().join(format!("{name}.hex"));
        if update {
            std::fs::create_dir_all(vector_dir()).unwrap();
            let text = format!(
                "# {name}: {what}\n# {} bytes ({} bits before padding); bytes in wire order, bits LSB first\n{}\n",
                bytes.len(),
                packet.measure_bits(),
                hex(&bytes)
            );
            std::fs::write(&path, text).unwrap();
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = unhex(&text);
        let decoded = Packet::<Buttons>::decode(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded, packet, "{name}: decodes to another packet");
        assert_eq!(decoded.encode(), file, "{name}: re-encoding differs");
        insta::assert_snapshot!(name, format!("{what}\n{}", hex(&bytes)));
    }
}

/// The `inputs` vector sealed by seat 1 (secret `[0x11; 32]`) for seat 0
/// (secret `[0x22; 32]`) as its packet number 0xfffe: the clear 7-byte
/// header, the encrypted body, the 16-byte tag.
#[test]
fn the_sealed_vector_opens_to_its_packet() {
    let (seat1, seat0) = (
        Identity::from_secret([0x11; 32]),
        Identity::from_secret([0x22; 32]),
    );
    let packet = vectors()
        .into_iter()
        .find(|(name, _, _)| *name == "inputs")
        .map(|(_, _, p)| p)
        .unwrap();
    let plain = packet.encode();
    let sender = Link::new(PairKeys::agree(&seat1, &seat0.public()).unwrap(), 0);
    let mut sealed = plain.clone();
    sender.seal(0xfffe, &mut sealed).unwrap();
    let path = vector_dir().join("sealed_inputs.hex");
    if std::env::var_os("UPDATE_VECTORS").is_some() {
        let text = format!(
            "# sealed_inputs: the inputs vector sealed by seat 1 (secret 11 × 32) for seat 0 (secret 22 × 32), packet number 0xfffe\n# {} bytes: 7 clear header, {} encrypted, 16 tag\n{}\n",
            sealed.len(),
            plain.len() - 7,
            hex(&sealed)
        );
        std::fs::write(&path, text).unwrap();
    }
    let file = unhex(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(
        file, sealed,
        "sealing is deterministic given keys and number"
    );
    let mut receiver = Link::new(PairKeys::agree(&seat0, &seat1.public()).unwrap(), 0xfff0);
    let mut out = [0u8; MAX_DATAGRAM];
    let opened = receiver.open(&file, &mut out).unwrap();
    assert_eq!(opened.packet, &plain[..]);
    assert_eq!(opened.seq, 0xfffe);
    assert_eq!(Packet::<Buttons>::decode(opened.packet).unwrap(), packet);
    insta::assert_snapshot!("sealed_inputs", hex(&sealed));
}

#[test]
fn flag_overhead_of_120_inputs_is_15_bytes() {
    // 119 "changed" flags for 120 inputs: 15 bytes, the literature's bound.
    let long: Vec<Buttons> = (0..120u32).map(|_| Buttons(7)).collect();
    let m = InputsMsg::<Buttons> {
        ack: None,
        first_frame: 0,
        inputs: long,
        checksums: None,
    };
    let bits = Packet::Routed(Routed {
        sender: SeatId(0),
        token: 1,
        seq: 0,
        message: Message::Inputs(m),
    })
    .measure_bits();
    // Header 56 (55 bits and one zero bit to the byte boundary), ack flag
    // 1, count 8, first frame 16, one full input 6, 119 flags, checksum
    // flag 1.
    assert_eq!(bits, 56 + 1 + 8 + 16 + 6 + 119 + 1);
    assert!(119u64.div_ceil(8) <= 15);
}

/// Every strict prefix of every vector is refused with an error (no
/// packet is a prefix of another), and so is every vector with one more
/// byte; every one-bit corruption is refused or decodes to a packet that
/// re-encodes to exactly the corrupted bytes (the decoder never panics and
/// never accepts a non-canonical encoding).
#[test]
fn every_truncation_extension_or_bit_flip_of_a_vector_is_handled() {
    for (name, _, packet) in vectors() {
        let bytes = packet.encode();
        for cut in 0..bytes.len() {
            assert!(
                Packet::<Buttons>::decode(&bytes[..cut]).is_err(),
                "{name} cut to {cut} bytes decodes"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            Packet::<Buttons>::decode(&longer).is_err(),
            "{name} with a byte more decodes"
        );
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            if let Ok(p) = Packet::<Buttons>::decode(&b) {
                assert_eq!(p.encode(), b, "{name}: bit {bit}");
            }
        }
    }
}

/// A snapshot part's bytes before its data are the constant a stream's
/// budget counts for every part.
#[test]
fn a_snapshot_part_header_is_its_constant() {
    use lockstep_protocol::packet::SNAPSHOT_PART_HEADER_BYTES;
    for len in [1usize, 5, 1100] {
        let bytes = routed(Message::SnapshotPart(SnapshotPart {
            stream: 2,
            frame: 4660,
            index: 0,
            parts: 1,
            data: vec![7; len],
        }))
        .encode();
        assert_eq!(bytes.len() as u64, SNAPSHOT_PART_HEADER_BYTES + len as u64);
    }
}
