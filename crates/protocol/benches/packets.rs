//! Encode and decode cost per packet (criterion): the steady-state inputs
//! packet, a 120-input window, a handshake and a 1 KiB resync chunk, each
//! in clear and sealed (encode + seal, open + decode), plus the key
//! agreement a sealed session does once per peer.
//!
//! `cargo bench -p lockstep-protocol --bench packets`

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep_fx::Checksum;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{
    Hello, InputsMsg, MAX_DATAGRAM, Message, Packet, ResyncChunk, Routed, ShortChecksums,
};
use lockstep_protocol::seal::{Identity, Link, PairKeys};
use lockstep_protocol::{Input, SeatId};
use std::hint::black_box;

fn routed(message: Message<Buttons>) -> Packet<Buttons> {
    Packet::Routed(Routed {
        sender: SeatId(1),
        token: 0xdead_beef,
        seq: 4242,
        message,
    })
}

fn inputs(n: u32) -> Packet<Buttons> {
    routed(Message::Inputs(InputsMsg {
        ack: Some(1000),
        first_frame: 1001,
        inputs: (1001..1001 + n).map(|f| Buttons::scripted(1, f)).collect(),
        checksums: Some(ShortChecksums {
            epoch: 0,
            newest: 998,
            shorts: vec![0x1111_2222_3333_4444, 0x5555_6666_7777_8888],
        }),
    }))
}

fn packets() -> Vec<(&'static str, Packet<Buttons>)> {
    vec![
        ("inputs_8", inputs(8)),
        ("inputs_120", inputs(120)),
        (
            "hello",
            Packet::Hello(Hello {
                seq: 7,
                sender: SeatId(0),
                schema_hash: Buttons::schema_hash(),
                seats: 4,
                tick_micros: 16_667,
                token: 7,
                echo: 9,
                ready: true,
            }),
        ),
        (
            "resync_chunk_1k",
            routed(Message::ResyncChunk(ResyncChunk {
                id: 1,
                frame: 77,
                compressed: true,
                state_len: 8000,
                payload_len: 3000,
                index: 0,
                checksum: Some(Checksum::of(b"x")),
                checks: 0,
                data: vec![0x5a; 1024],
            })),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, p) in packets() {
        let bytes = p.encode();
        c.bench_function(&format!("encode/{name} ({} B)", bytes.len()), |b| {
            b.iter(|| black_box(&p).encode())
        });
        c.bench_function(&format!("decode/{name} ({} B)", bytes.len()), |b| {
            b.iter(|| Packet::<Buttons>::decode(black_box(&bytes)).is_ok())
        });
    }
    let (a, z) = (
        Identity::from_secret([0x11; 32]),
        Identity::from_secret([0x22; 32]),
    );
    let sender = Link::new(PairKeys::agree(&a, &z.public()).unwrap(), 0);
    for (name, p) in packets() {
        let mut sealed = p.encode();
        sender.seal(4242, &mut sealed).unwrap();
        c.bench_function(&format!("seal/{name} ({} B)", sealed.len()), |b| {
            b.iter(|| {
                let mut bytes = black_box(&p).encode();
                sender.seal(4242, &mut bytes).unwrap();
                bytes
            })
        });
        c.bench_function(&format!("open/{name} ({} B)", sealed.len()), |b| {
            let mut receiver = Link::new(PairKeys::agree(&z, &a.public()).unwrap(), 4242);
            let mut out = [0u8; MAX_DATAGRAM];
            b.iter(|| {
                let opened = receiver.open(black_box(&sealed), &mut out).unwrap();
                Packet::<Buttons>::decode(opened.packet).is_ok()
            })
        });
    }
    c.bench_function("agree (X25519 + 2 BLAKE3 key derivations)", |b| {
        b.iter(|| PairKeys::agree(black_box(&a), black_box(&z.public())).is_ok())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
