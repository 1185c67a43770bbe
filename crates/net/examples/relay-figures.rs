//! What a relay costs: datagrams forwarded per second on one core (a
//! `Relay` on its own thread and socket, fed by a load generator on
//! loopback), the round trip through it beside the direct one, and the
//! memory each match's allocation takes (counted by this program's
//! resident memory's growth), from which the most matches one relay holds
//! in 24 GiB.
//!
//! ```sh
//! cargo run --release -p lockstep-net --example relay-figures
//! cargo run --release -p lockstep-net --example relay-figures -- --seconds 10 --matches 64 --payload 100
//! ```
//!
//! The figures are wall-clock measurements on whatever else the machine
//! runs: take the medians of a few runs on a quiet machine.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lockstep_net::Socket;
use lockstep_net::conditioner::LinkShape;
use lockstep_net::service::{Services, wall_micros};
use lockstep_rendezvous::{
    MatchId, MemberId, MemoryStore, Message, Relay, RelayConfig, Ticket, TicketKey,
};

const SECRET: [u8; 32] = [7; 32];

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ticket(relay: SocketAddr, m: u64, member: u16) -> Ticket {
    TicketKey::new(&SECRET).mint(
        MatchId(m),
        MemberId(member),
        relay,
        wall_micros() / 1_000_000 + 3600,
    )
}

/// Takes `member`'s place in match `m` from `socket` (the challenge, then
/// the cookie).
fn place(socket: &UdpSocket, relay: SocketAddr, m: u64, member: u16) {
    let t = ticket(relay, m, member);
    let mut buf = [0u8; 2048];
    let mut cookie = None;
    for _ in 0..50 {
        let ask = Message::Allocate { ticket: t, cookie }.encode();
        socket.send_to(&ask, relay).unwrap();
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            match Message::decode(&buf[..n]) {
                Ok(Message::RelayChallenge { cookie: c }) => cookie = Some(c),
                Ok(Message::Allocated { .. }) => return,
                _ => {}
            }
        }
    }
    panic!("no place for member {member} of match {m}");
}

/// The CPU time this thread has used, in milliseconds (Linux: user and
/// system ticks of 10 ms), if it can be read.
fn thread_cpu_ms() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // After the command's closing parenthesis: state is field 3, utime 14,
    // stime 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10)
}

/// This process's resident memory in bytes (Linux), if it can be read.
fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Allocates `member`'s place of match `m` in `relay` the way a member
/// does (a ticket, the relay's challenge, the ticket again with its
/// cookie); gives the member's address.
fn allocate(
    relay: &mut Relay,
    relay_addr: SocketAddr,
    now: u64,
    m: u64,
    member: u16,
) -> SocketAddr {
    let from = SocketAddr::from((
        [10, (m >> 16) as u8, (m >> 8) as u8, m as u8],
        1000 + member,
    ));
    let t = ticket(relay_addr, m, member);
    relay.handle_datagram(
        now,
        from,
        &Message::Allocate {
            ticket: t,
            cookie: None,
        }
        .encode(),
    );
    let Ok(Message::RelayChallenge { cookie }) =
        Message::decode(&relay.poll_transmit().unwrap().bytes)
    else {
        panic!("a challenge");
    };
    relay.handle_datagram(
        now,
        from,
        &Message::Allocate {
            ticket: t,
            cookie: Some(cookie),
        }
        .encode(),
    );
    while relay.poll_transmit().is_some() {}
    from
}

/// The memory of `matches` allocations of two places each, in a relay of
/// this process (no socket): the resident memory's growth per allocation.
fn memory(matches: u64) -> u64 {
    let relay_addr: SocketAddr = "10.0.0.1:7701".parse().unwrap();
    let now = wall_micros();
    let before = resident().unwrap_or(0);
    let mut relay = Relay::new(RelayConfig::new(relay_addr), &SECRET, [1; 32]);
    for m in 0..matches {
        for member in 0..2u16 {
            allocate(&mut relay, relay_addr, now, m, member);
        }
    }
    assert_eq!(relay.allocations() as u64, matches);
    let held = resident().unwrap_or(0).saturating_sub(before);
    drop(relay);
    held / matches
}

/// Datagrams the relay's state machine alone forwards per second on this
/// thread (no socket): `matches` matches of two places, `payload`-byte
/// datagrams from each member to the other in turn.
fn core_rate(matches: u64, payload: usize) -> u64 {
    let relay_addr: SocketAddr = "10.0.0.1:7701".parse().unwrap();
    let now = wall_micros();
    let mut config = RelayConfig::new(relay_addr);
    config.packets.per_second = u64::MAX / 4_000_000;
    config.packets.burst = u64::MAX / 4_000_000;
    config.bytes = config.packets;
    let mut relay = Relay::new(config, &SECRET, [1; 32]);
    let mut members = Vec::new();
    for m in 0..matches {
        for member in 0..2u16 {
            members.push((allocate(&mut relay, relay_addr, now, m, member), member));
        }
    }
    let body = vec![0u8; payload];
    let frames: Vec<Vec<u8>> = (0..2u16)
        .map(|to| {
            Message::Send {
                to: MemberId(to),
                payload: &body,
            }
            .encode()
        })
        .collect();
    let total = 2_000_000u64;
    let start = Instant::now();
    let mut forwarded = 0u64;
    for i in 0..total {
        let (from, member) = members[(i % members.len() as u64) as usize];
        relay.handle_datagram(now + i / 100, from, &frames[usize::from(1 - member)]);
        while relay.poll_transmit().is_some() {
            forwarded += 1;
        }
    }
    assert_eq!(forwarded, total);
    total * 1_000_000 / start.elapsed().as_micros().max(1) as u64
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn main() {
    let seconds = arg("--seconds", 5);
    let matches = arg("--matches", 32);
    let payload = arg("--payload", 100) as usize;

    // The relay on a thread of its own: one core.
    let relay_socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay_socket.local_addr().unwrap();
    drop(relay_socket);
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let relay_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let socket = Socket::open(relay_addr, LinkShape::PERFECT, 1).unwrap();
            let mut config = RelayConfig::new(relay_addr);
            // The generator sends far past a seat's budget: measure the
            // relay, not its throttle.
            config.packets.per_second = u64::MAX / 4_000_000;
            config.packets.burst = u64::MAX / 4_000_000;
            config.bytes = config.packets;
            let relay = Relay::new(config, &SECRET, [2; 32]);
            let mut services: Services<MemoryStore> = Services {
                rendezvous: None,
                relay: Some((socket, relay)),
            };
            let cpu_before = thread_cpu_ms().unwrap_or(0);
            while !stopped.load(Ordering::Relaxed) {
                services.run_for(Duration::from_millis(100)).await;
            }
            let cpu = thread_cpu_ms().unwrap_or(0).saturating_sub(cpu_before);
            let (_, relay) = services.relay.take().unwrap();
            (relay.stats().forwarded, cpu)
        })
    });
    std::thread::sleep(Duration::from_millis(200));

    // Two members a match, each on its own socket.
    let mut pairs = Vec::new();
    for m in 0..matches {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
        }
        place(&a, relay_addr, m, 0);
        place(&b, relay_addr, m, 1);
        pairs.push((a, b));
    }

    // The round trip: a datagram from a through the relay to b and back,
    // beside the same between two sockets directly.
    let mut buf = [0u8; 2048];
    let (a, b) = &pairs[0];
    let body = vec![0u8; payload];
    let to_b = Message::Send {
        to: MemberId(1),
        payload: &body,
    }
    .encode();
    let to_a = Message::Send {
        to: MemberId(0),
        payload: &body,
    }
    .encode();
    let mut relayed = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        a.send_to(&to_b, relay_addr).unwrap();
        b.recv_from(&mut buf).unwrap();
        b.send_to(&to_a, relay_addr).unwrap();
        a.recv_from(&mut buf).unwrap();
        relayed.push(t.elapsed().as_micros() as u64);
    }
    let x = UdpSocket::bind("127.0.0.1:0").unwrap();
    let y = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (xa, ya) = (x.local_addr().unwrap(), y.local_addr().unwrap());
    let mut direct = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        x.send_to(&body, ya).unwrap();
        y.recv_from(&mut buf).unwrap();
        y.send_to(&body, xa).unwrap();
        x.recv_from(&mut buf).unwrap();
        direct.push(t.elapsed().as_micros() as u64);
    }

    // The load: every member sends to its partner as fast as one thread
    // can; the relay forwards what it can.
    for (a, b) in &pairs {
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
    }
    let start = Instant::now();
    let mut sent = 0u64;
    let mut received = 0u64;
    while start.elapsed() < Duration::from_secs(seconds) {
        for (a, b) in &pairs {
            if a.send_to(&to_b, relay_addr).is_ok() {
                sent += 1;
            }
            if b.send_to(&to_a, relay_addr).is_ok() {
                sent += 1;
            }
            while a.recv_from(&mut buf).is_ok() {
                received += 1;
            }
            while b.recv_from(&mut buf).is_ok() {
                received += 1;
            }
        }
    }
    let elapsed = start.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    for (a, b) in &pairs {
        while a.recv_from(&mut buf).is_ok() {
            received += 1;
        }
        while b.recv_from(&mut buf).is_ok() {
            received += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (forwarded, relay_cpu_ms) = relay_thread.join().unwrap();
    let per_second = |n: u64| n * 1000 / elapsed.as_millis().max(1) as u64;

    let core = core_rate(matches, payload);
    let memory_matches = arg("--memory-matches", 200_000);
    let bytes = memory(memory_matches);
    let gib24: u64 = 24 << 30;
    println!(
        "## The relay's cost ({matches} matches of 2 members, {payload}-byte payloads, loopback, {seconds} s)"
    );
    println!();
    println!("| figure | value |");
    println!("|---|---|");
    println!(
        "| datagrams sent by the load generator | {sent} ({}/s) |",
        per_second(sent)
    );
    println!(
        "| datagrams forwarded by the relay (one thread; 4 000 of them the round trips') | {} ({}/s, {} MB/s) |",
        forwarded.datagrams,
        per_second(forwarded.datagrams),
        per_second(forwarded.bytes) / 1_000_000
    );
    println!(
        "| datagrams delivered | {received} ({}/s) |",
        per_second(received)
    );
    println!(
        "| the relay thread's CPU time | {relay_cpu_ms} ms: {} datagrams forwarded per CPU-second |",
        forwarded.datagrams * 1000 / relay_cpu_ms.max(1)
    );
    println!("| the relay's state machine alone, no socket (one thread) | {core}/s |");
    println!(
        "| round trip through the relay (median of 2 000) | {} µs |",
        median(relayed)
    );
    println!(
        "| round trip direct, same sockets' path (median of 2 000) | {} µs |",
        median(direct)
    );
    println!(
        "| memory per match (2 places), resident growth over {memory_matches} matches | {bytes} bytes |"
    );
    println!(
        "| matches one relay holds in 24 GiB (memory alone) | {} |",
        gib24 / bytes.max(1)
    );
    println!(
        "| 2-seat matches at 60 frames/s one core forwards (120 datagrams/s each) | {} |",
        forwarded.datagrams * 1000 / relay_cpu_ms.max(1) / 120
    );
}
