//! The snapshot stream's payload as a test vector
//! (`protocol/vectors/snapshot_payload.hex`, `protocol/SPEC.md` §4.8):
//! a receiver holding the same acked snapshots decodes it to what the
//! sender kept, and the sender codes those bodies to the same bytes.
//! After a deliberate change of the payload, regenerate it with
//! `UPDATE_VECTORS=1 cargo test -p lockstep-snapshot --test vector`.

use std::path::PathBuf;

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::stream::{SnapshotReceiver, SnapshotSender};
use lockstep_snapshot::{Bounds, Level, QuantBody};

/// Four cubes: one at rest, one sliding along x, one falling and turning,
/// one that wakes up at frame 5.
fn scene(frame: i64) -> Vec<QuantBody> {
    let bounds = Bounds::cubes().positional();
    let at = |x: i64, y: i64, z: i64| {
        Vec3::new(
            Fx::from_ratio(x, 1000),
            Fx::from_ratio(y, 1000),
            Fx::from_ratio(z, 1000),
        )
    };
    let turn = |milli: i64| {
        Quat::from_axis_angle(
            Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO),
            Fx::from_ratio(milli, 1000),
        )
    };
    let moving = |mut b: QuantBody| {
        b.at_rest = false;
        b
    };
    vec![
        QuantBody::at(at(-2000, 250, 0), Quat::IDENTITY, &bounds),
        moving(QuantBody::at(
            at(100 * frame, 250, 1000),
            Quat::IDENTITY,
            &bounds,
        )),
        moving(QuantBody::at(
            at(3000, 4000 - 3 * frame * frame, -1000),
            turn(80 * frame),
            &bounds,
        )),
        if frame < 5 {
            QuantBody::at(at(0, 250, 2000), Quat::IDENTITY, &bounds)
        } else {
            moving(QuantBody::at(at(40, 260, 2000), turn(30), &bounds))
        },
    ]
}

fn hex(bytes: &[u8]) -> String {
    let words: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    words.join(" ")
}

fn unhex(text: &str) -> Vec<u8> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .map(|w| u8::from_str_radix(w, 16).expect("hex byte"))
        .collect()
}

#[test]
fn the_payload_vector_decodes_and_codes_byte_exactly() {
    let bounds = Bounds::cubes().positional();
    let mut tx = SnapshotSender::new(scene(0), bounds, Level::Scaled);
    let mut rx = SnapshotReceiver::new(scene(0), bounds);
    for f in 1..=2 {
        let (payload, _) = tx.encode(f, scene(i64::from(f)));
        rx.decode(f, &payload).unwrap();
        tx.on_ack(f);
    }
    // Frame 5 against frame 2 (3 frames back), predicted from frame 1,
    // from frame 2's models.
    let (bytes, _) = tx.encode(5, scene(5));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../protocol/vectors/snapshot_payload.hex");
    if std::env::var_os("UPDATE_VECTORS").is_some() {
        let text = format!(
            "# snapshot_payload: frame 5 of a stream of four cubes at level 5 (Scaled), against frame 2, predicted from frame 1, from frame 2's models\n# {} bytes\n{}\n",
            bytes.len(),
            hex(&bytes)
        );
        std::fs::write(&path, text).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = unhex(&text);
    assert_eq!(file, bytes, "the sender codes other bytes");
    let got = rx.decode(5, &file).unwrap();
    assert_eq!(got, tx.snapshot(5).unwrap());
    // The moving cubes are where they were sent (within the steps), the
    // woken one exactly.
    assert_eq!(got[0], scene(5)[0]);
    assert_eq!(got[3], scene(5)[3]);
}
