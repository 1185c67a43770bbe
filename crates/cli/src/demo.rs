//! `lockstep demo`: a networked match on this machine. It starts one
//! process of this very program per seat (`std::env::current_exe()`: a
//! studio's own tools binary runs itself, `host`, then `join`),
//! all on loopback behind the link conditioner (75 ms plus up to 10 ms of
//! jitter one way, 2% loss by default), shows one live line per seat, then a
//! summary, and verifies every seat's replay log with `lockstep verify`'s
//! code. It exits 0 only if every process finished, nobody desynced without
//! healing, and every log verifies and agrees with the others.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use lockstep_protocol::packet::IPV4_UDP_HEADER_BYTES;

use crate::error::CliError;
use crate::net::LinkArgs;
use crate::threads::FrameThreads;

/// Arguments of `lockstep demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The game (default: the first registered).
    #[arg(long)]
    pub game: Option<String>,
    /// Seats, one process each (default: the game's).
    #[arg(long, alias = "players")]
    pub seats: Option<u8>,
    /// Frames to play (1200: 20 s at 60 Hz).
    #[arg(long, default_value_t = 1200)]
    pub frames: u32,
    /// The game's settings file (TOML; default: the embedded settings).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Where the seats write their replay logs.
    #[arg(long, default_value = "target/demo")]
    pub dir: PathBuf,
    /// One-way delay in ms.
    #[arg(long, default_value_t = 75)]
    pub delay: u64,
    /// Jitter in ms.
    #[arg(long, default_value_t = 10)]
    pub jitter: u64,
    /// Loss in percent.
    #[arg(long, default_value = "2")]
    pub loss: String,
    /// Frames per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub tick_rate: u16,
    /// The host's UDP port, and each joiner's the next ones (default: any
    /// free ports): for a firewall that opens only some.
    #[arg(long)]
    pub port_base: Option<u16>,
    #[command(flatten)]
    pub mode: crate::net::ModeArgs,
}

/// The numbers of one `key=value` line.
#[derive(Debug, Clone, Default)]
struct Row {
    fields: Vec<(String, String)>,
}

impl Row {
    fn parse(line: &str) -> Row {
        Row {
            fields: line
                .split_whitespace()
                .skip(1)
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn get(&self, key: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map_or("-", |(_, v)| v.as_str())
    }

    fn num(&self, key: &str) -> u64 {
        self.get(key).parse().unwrap_or(0)
    }
}

/// A child process and what it said last.
struct Seat {
    name: String,
    child: Child,
    log: PathBuf,
    status: Row,
    done: Option<Row>,
}

fn spawn(args: &[String]) -> Result<Child, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot find this program: {e}")))?;
    Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| CliError::new(format!("cannot start a peer process: {e}")))
}

/// Reads `child`'s stdout lines into `tx`, tagged with `index`.
fn forward(index: usize, child: &mut Child, tx: mpsc::Sender<(usize, String)>) {
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send((index, line)).is_err() {
                    break;
                }
            }
        });
    }
}

/// Runs `lockstep demo`.
///
/// `game` gives the game `--game` names (the program's first when it names
/// none) as its id and default seats; `verify` gives a game's `verify`
/// operation, for the logs at the end.
pub fn run(
    args: &DemoArgs,
    game: impl Fn(Option<&str>) -> Result<(&'static str, u8), CliError>,
    verify: &dyn Fn(&str) -> Result<crate::verify::VerifyOp, CliError>,
) -> Result<ExitCode, CliError> {
    let (game_id, default_seats) = game(args.game.as_deref())?;
    let seat_count = args.seats.unwrap_or(default_seats);
    if !(2..=8).contains(&seat_count) {
        return Err(CliError::new(format!(
            "--seats {seat_count}: a match has 2 to 8 seats"
        )));
    }
    if let Some(base) = args.port_base {
        if base == 0 || u32::from(base) + u32::from(seat_count) - 1 > u32::from(u16::MAX) {
            return Err(CliError::new(format!(
                "--port-base {base}: the {seat_count} seats need ports {base} to {} (1 to 65535)",
                u32::from(base) + u32::from(seat_count) - 1
            )));
        }
    }
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| CliError::new(format!("{}: {e}", args.dir.display())))?;
    let link = LinkArgs {
        delay: args.delay,
        jitter: args.jitter,
        loss: crate::net::parse_percent_arg(&args.loss)?,
        burst: 1,
        duplicate: 0,
        reorder: 0,
        link_seed: 1,
    };
    let link_args = |seed: u64| {
        vec![
            "--delay".to_string(),
            link.delay.to_string(),
            "--jitter".into(),
            link.jitter.to_string(),
            "--loss".into(),
            args.loss.clone(),
            "--link-seed".into(),
            seed.to_string(),
            "--machine".into(),
        ]
    };
    outln!(
        "demo: {seat_count} processes play {} frames of {} ({}) over loopback UDP, {} ms ± {} ms one way, {}% loss",
        args.frames,
        game_id,
        if args.mode.rollback {
            "rollback"
        } else {
            "lockstep"
        },
        args.delay,
        args.jitter,
        args.loss
    );
    // Every seat's process runs on this machine: they share its cores.
    let cores = FrameThreads::default().count();
    let threads = (cores / usize::from(seat_count)).max(1).to_string();
    let (tx, rx) = mpsc::channel();
    let mut seats: Vec<Seat> = Vec::new();
    let host_log = args.dir.join("seat-0.log");
    let mut host_args = vec![
        "host".to_string(),
        game_id.to_string(),
        "--seats".into(),
        seat_count.to_string(),
        "--port".into(),
        args.port_base.unwrap_or(0).to_string(),
        "--bind".into(),
        "127.0.0.1".into(),
        "--frames".into(),
        args.frames.to_string(),
        "--tick-rate".into(),
        args.tick_rate.to_string(),
        "--log".into(),
        host_log.display().to_string(),
        "--threads".into(),
        threads.clone(),
    ];
    if let Some(s) = &args.settings {
        host_args.extend(["--settings".into(), s.display().to_string()]);
    }
    host_args.extend(args.mode.to_args());
    host_args.extend(link_args(1));
    let mut host = spawn(&host_args)?;
    forward(0, &mut host, tx.clone());
    seats.push(Seat {
        name: "host".into(),
        child: host,
        log: host_log,
        status: Row::default(),
        done: None,
    });
    // The host prints its seat code, then its address; the joiners are
    // given both, as a person would be.
    let mut code = None;
    let addr = loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok((0, line)) if line.starts_with("listening ") => {
                break line["listening ".len()..].trim().to_string();
            }
            Ok((0, line)) if line.starts_with("invite ") => {
                code = line
                    .split_whitespace()
                    .find_map(|kv| kv.strip_prefix("seat="))
                    .filter(|c| *c != "open")
                    .map(str::to_string);
            }
            Ok(_) => {}
            Err(_) => {
                kill_all(&mut seats);
                return Err(CliError::new("the host process did not start"));
            }
        }
    };
    for i in 1..usize::from(seat_count) {
        let log = args.dir.join(format!("join-{i}.log"));
        let mut a = vec![
            "join".to_string(),
            addr.clone(),
            "--log".into(),
            log.display().to_string(),
            "--threads".into(),
            threads.clone(),
        ];
        if let Some(c) = &code {
            a.extend(["--code".into(), c.clone()]);
        }
        if let Some(base) = args.port_base {
            a.extend(["--port".into(), base.saturating_add(i as u16).to_string()]);
        }
        a.extend(link_args(1 + i as u64));
        let mut child = match spawn(&a) {
            Ok(c) => c,
            Err(e) => {
                kill_all(&mut seats);
                return Err(e);
            }
        };
        forward(i, &mut child, tx.clone());
        seats.push(Seat {
            name: format!("joiner {i}"),
            child,
            log,
            status: Row::default(),
            done: None,
        });
    }
    drop(tx);
    let tty = std::io::stdout().is_terminal();
    let limit = Duration::from_secs(u64::from(args.frames) / u64::from(args.tick_rate) * 3 + 60);
    let started = Instant::now();
    let mut printed_rows = 0;
    let mut next_print = Instant::now() + Duration::from_secs(1);
    while seats.iter().any(|s| s.done.is_none()) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok((i, line)) => {
                if let Some(rest) = line.strip_prefix("note ") {
                    if tty && printed_rows > 0 {
                        print!("\x1b[{printed_rows}A\x1b[J");
                        printed_rows = 0;
                    }
                    outln!("  {}: {rest}", seats[i].name);
                } else if line.starts_with("status ") {
                    seats[i].status = Row::parse(&line);
                } else if line.starts_with("done ") {
                    seats[i].done = Some(Row::parse(&line));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if Instant::now() >= next_print {
            next_print += Duration::from_secs(1);
            if tty && printed_rows > 0 {
                print!("\x1b[{printed_rows}A\x1b[J");
            }
            for s in &seats {
                outln!("{}", live_line(s));
            }
            printed_rows = if tty { seats.len() } else { 0 };
            let _ = std::io::stdout().flush();
        }
        if started.elapsed() > limit {
            kill_all(&mut seats);
            return Err(CliError::new(format!(
                "the match did not finish within {} s",
                limit.as_secs()
            )));
        }
    }
    let mut ok = true;
    for s in &mut seats {
        let status = s
            .child
            .wait()
            .map_err(|e| CliError::new(format!("{}: {e}", s.name)))?;
        if !status.success() || s.done.is_none() {
            outln!("{} failed ({status})", s.name);
            ok = false;
        }
    }
    outln!("");
    outln!(
        "{:<10} {:>5} {:>7} {:>10} {:>12} {:>20} {:>12} {:>7} {:>8} {:>14} {:>16}",
        "seat",
        "",
        "frames",
        "rtt ms",
        "up kbit/s",
        "up with IP/UDP",
        "down kbit/s",
        "stalls",
        "desyncs",
        "join→frame ms",
        "loop µs/frame"
    );
    for s in &seats {
        let Some(d) = &s.done else { continue };
        let secs = d.num("seconds").max(1);
        outln!(
            "{:<10} {:>5} {:>7} {:>10} {:>12} {:>20} {:>12} {:>7} {:>8} {:>14} {:>16}",
            s.name,
            d.get("seat"),
            d.get("frame"),
            s.status.get("rtt_ms"),
            d.num("sent_bytes") * 8 / 1000 / secs,
            (d.num("sent_bytes") + IPV4_UDP_HEADER_BYTES * d.num("sent_datagrams")) * 8
                / 1000
                / secs,
            d.num("received_bytes") * 8 / 1000 / secs,
            d.get("stalls"),
            d.get("desyncs"),
            d.get("first_frame_ms"),
            d.get("loop_us_per_frame"),
        );
        if d.num("desyncs") > d.num("healed") {
            ok = false;
        }
    }
    outln!("");
    let logs: Vec<PathBuf> = seats.iter().map(|s| s.log.clone()).collect();
    outln!("verifying the {} replay logs:", logs.len());
    let verified = crate::verify::run(
        &crate::verify::VerifyArgs {
            logs,
            threads: FrameThreads::default(),
        },
        verify,
    )?;
    ok &= verified == ExitCode::SUCCESS;
    if ok {
        outln!("demo: every seat agreed on every checksum, and every log verifies");
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("demo: FAILED");
        Ok(ExitCode::FAILURE)
    }
}

fn live_line(s: &Seat) -> String {
    let r = &s.status;
    let kbit = |k: &str| r.num(k) / 1000;
    format!(
        "  {:<9} seat {:>2} frame {:>6} | rtt {:>4} ms | lost {:>3}‰ (injected {:>3}‰) | delay {:>3} fr | up {:>4} down {:>4} kbit/s | stalls {:>4} | desyncs {} | checksum {}",
        s.name,
        r.get("seat"),
        r.get("frame"),
        r.get("rtt_ms"),
        r.get("lost_pm"),
        r.get("loss_pm"),
        r.get("delay"),
        kbit("up_bps"),
        kbit("down_bps"),
        r.get("stalls"),
        r.get("desyncs"),
        &r.get("checksum")[..r.get("checksum").len().min(8)],
    )
}

fn kill_all(seats: &mut [Seat]) {
    for s in seats {
        let _ = s.child.kill();
        let _ = s.child.wait();
    }
}
