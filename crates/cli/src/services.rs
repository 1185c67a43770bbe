//! `lockstep rendezvous` and `lockstep relay`: the services a match between
//! homes behind NATs is found and carried through, run anywhere every
//! player can reach (a small server with a public address). Both are
//! `lockstep_net::service::Services` over the state machines of
//! `lockstep-rendezvous`; they run until interrupted (Ctrl-C, SIGTERM),
//! printing a status line every `--status-every` seconds.
//!
//! A rendezvous hands out one relay in its tickets, and signs them with a
//! secret it shares with that relay: `--relay-port` runs the relay in the
//! same process (the secret is drawn at start unless `--secret` names a
//! file), `--relay ADDR` names one that runs elsewhere with the same
//! `--secret` file.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use lockstep_net::Socket;
use lockstep_net::conditioner::LinkShape;
use lockstep_net::entropy;
use lockstep_net::service::Services;
use lockstep_rendezvous::{
    MemoryStore, RedisStore, Relay, RelayConfig, Rendezvous, RendezvousConfig, Store,
};

use crate::error::CliError;

/// Arguments of `lockstep rendezvous`.
#[derive(Debug, Args)]
pub struct RendezvousArgs {
    /// The UDP port to listen on.
    #[arg(long, default_value_t = 7700)]
    pub port: u16,
    /// The address to listen on (default: every IPv6 and IPv4 address).
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// Run a relay in this process too, on this UDP port.
    #[arg(long)]
    pub relay_port: Option<u16>,
    /// The address players reach this machine at (needed with
    /// --relay-port unless --bind is a specific address: it names this
    /// process's relay in the tickets).
    #[arg(long)]
    pub public: Option<IpAddr>,
    /// A relay running elsewhere (`lockstep relay`, with the same
    /// --secret), as players reach it: handed out in the tickets.
    #[arg(long, conflicts_with = "relay_port")]
    pub relay: Option<String>,
    /// The secret shared with the relay: a file of 64 hex digits, created
    /// (readable by this user alone) if it does not exist.
    #[arg(long, value_name = "FILE")]
    pub secret: Option<PathBuf>,
    /// Where matches are kept: `memory` (this process's) or
    /// `redis://HOST[:PORT][/DB]` (shared by every rendezvous using it: a
    /// code registered at one is found at any).
    #[arg(long, default_value = "memory")]
    pub store: String,
    /// Matches kept at most (memory store).
    #[arg(long, default_value_t = 100_000)]
    pub max_matches: usize,
    /// Seconds a registration lives after its host's last refresh.
    #[arg(long, default_value_t = 30)]
    pub ttl: u16,
    #[command(flatten)]
    pub output: ServiceOutput,
}

/// Arguments of `lockstep relay`.
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// The UDP port to listen on.
    #[arg(long, default_value_t = 7701)]
    pub port: u16,
    /// The address to listen on (default: every IPv6 and IPv4 address).
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// The address players reach this relay at (its tickets name it;
    /// default: --bind's address, if specific).
    #[arg(long)]
    pub public: Option<IpAddr>,
    /// The secret shared with the rendezvous (its --secret file).
    #[arg(long, value_name = "FILE")]
    pub secret: PathBuf,
    /// Matches (allocations) held at most.
    #[arg(long, default_value_t = 1_000_000)]
    pub max_allocations: usize,
    #[command(flatten)]
    pub output: ServiceOutput,
}

/// How a service prints.
#[derive(Debug, Clone, Args)]
pub struct ServiceOutput {
    /// One `key=value` line per status, for programs.
    #[arg(long)]
    pub machine: bool,
    /// Seconds between status lines.
    #[arg(long, default_value_t = 10)]
    pub status_every: u64,
}

/// Reads a secret file (64 hex digits), or with `create`, makes one if it
/// does not exist.
fn secret(path: &Path, create: bool) -> Result<[u8; 32], CliError> {
    let bad = |why: &str| CliError::new(format!("{}: {why}", path.display()));
    if create && !path.exists() {
        let secret = entropy::secret().map_err(|e| CliError::new(e.to_string()))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| bad(&e.to_string()))?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let mut f = options.open(path).map_err(|e| bad(&e.to_string()))?;
        writeln!(f, "{hex}").map_err(|e| bad(&e.to_string()))?;
        return Ok(secret);
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(&e.to_string()))?;
    let text = text.trim();
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("not a secret (64 hex digits)"));
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad("not hex"))?;
    }
    Ok(out)
}

/// A socket on `port` of `bind` (default: dual-stack, else IPv4).
fn open(bind: Option<IpAddr>, port: u16) -> Result<Socket, CliError> {
    let at = |ip: IpAddr| {
        Socket::open(SocketAddr::new(ip, port), LinkShape::PERFECT, 1).map_err(|e| {
            CliError::new(match e.kind() {
                std::io::ErrorKind::AddrInUse => format!("port {port} is in use"),
                _ => format!("cannot open a UDP socket on {ip} port {port}: {e}"),
            })
        })
    };
    match bind {
        Some(ip) => at(ip),
        None => at(Ipv6Addr::UNSPECIFIED.into()).or_else(|_| at(Ipv4Addr::UNSPECIFIED.into())),
    }
}

/// The address players reach a service at: `public`, or `bind` if it is a
/// specific address.
fn public_address(
    public: Option<IpAddr>,
    bind: Option<IpAddr>,
    port: u16,
    what: &str,
) -> Result<SocketAddr, CliError> {
    match public.or(bind.filter(|b| !b.is_unspecified())) {
        Some(ip) => Ok(SocketAddr::new(ip, port)),
        None => Err(CliError::new(format!(
            "{what}: say the address players reach it at with --public IP (or --bind a specific address)"
        ))),
    }
}

/// Stops the services on Ctrl-C or SIGTERM.
fn interrupted() -> Result<Arc<AtomicBool>, CliError> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    ctrlc::set_handler(move || set.store(true, Ordering::SeqCst))
        .map_err(|e| CliError::new(format!("cannot catch interrupts: {e}")))?;
    Ok(flag)
}

/// Runs `lockstep rendezvous`.
pub fn rendezvous(args: &RendezvousArgs) -> Result<ExitCode, CliError> {
    let rt = crate::net::runtime()?;
    let local_relay = match args.relay_port {
        Some(port) => Some(public_address(
            args.public,
            args.bind,
            port,
            "--relay-port",
        )?),
        None => None,
    };
    let relay = match (&args.relay, local_relay) {
        (Some(text), _) => Some(crate::net::resolve(text)?),
        (None, local) => local,
    };
    let secret = match &args.secret {
        Some(path) => secret(path, true)?,
        None if args.relay.is_some() => {
            return Err(CliError::new(
                "--relay: give --secret FILE, the secret that relay was started with",
            ));
        }
        None => entropy::secret().map_err(|e| CliError::new(e.to_string()))?,
    };
    let seed = entropy::secret().map_err(|e| CliError::new(e.to_string()))?;
    let config = RendezvousConfig {
        relay,
        ttl_secs: args.ttl.max(1),
        ..RendezvousConfig::default()
    };
    let store = store(&args.store, args.max_matches)?;
    let stop = interrupted()?;
    rt.block_on(async {
        let socket = open(args.bind, args.port)?;
        let addr = socket
            .local_addr()
            .map_err(|e| CliError::new(e.to_string()))?;
        let mut relay = relay;
        let relay_part = match (args.relay_port, local_relay) {
            (Some(port), Some(public)) => {
                let s = open(args.bind, port)?;
                // Port 0: the one the system gave is the one tickets name.
                let bound = s.local_addr().map_err(|e| CliError::new(e.to_string()))?;
                let public = SocketAddr::new(public.ip(), bound.port());
                relay = Some(public);
                let relay_seed = entropy::secret().map_err(|e| CliError::new(e.to_string()))?;
                Some((s, Relay::new(RelayConfig::new(public), &secret, relay_seed)))
            }
            _ => None,
        };
        let config = RendezvousConfig { relay, ..config };
        if args.output.machine {
            outln!(
                "listening rendezvous={addr} relay={}",
                relay.map_or("-".into(), |r| r.to_string())
            );
        } else {
            outln!(
                "rendezvous listening on {addr}; tickets name the relay {}",
                relay.map_or("(none: no relay)".into(), |r| r.to_string())
            );
        }
        match store {
            AnyStore::Memory(m) => {
                let r = Rendezvous::new(config, &secret, seed, m);
                let services = Services {
                    rendezvous: Some((socket, r)),
                    relay: relay_part,
                };
                serve(services, &args.output, &stop).await
            }
            AnyStore::Redis(m) => {
                let r = Rendezvous::new(config, &secret, seed, *m);
                let services = Services {
                    rendezvous: Some((socket, r)),
                    relay: relay_part,
                };
                serve(services, &args.output, &stop).await
            }
        }
    })
}

/// The store `--store` names.
enum AnyStore {
    Memory(MemoryStore),
    Redis(Box<RedisStore>),
}

fn store(text: &str, max_matches: usize) -> Result<AnyStore, CliError> {
    match text {
        "memory" => Ok(AnyStore::Memory(MemoryStore::new(max_matches.max(1)))),
        url if url.starts_with("redis://") || url.starts_with("rediss://") => {
            RedisStore::open(url, "lockstep")
                .map(|s| AnyStore::Redis(Box::new(s)))
                .map_err(|e| CliError::new(format!("--store {url}: {e}")))
        }
        other => Err(CliError::new(format!(
            "--store {other}: give `memory` or redis://HOST[:PORT][/DB]"
        ))),
    }
}

/// Runs `lockstep relay`.
pub fn relay(args: &RelayArgs) -> Result<ExitCode, CliError> {
    let rt = crate::net::runtime()?;
    let public = public_address(args.public, args.bind, args.port, "relay")?;
    let secret = secret(&args.secret, false)?;
    let seed = entropy::secret().map_err(|e| CliError::new(e.to_string()))?;
    let mut config = RelayConfig::new(public);
    config.max_allocations = args.max_allocations.max(1);
    let stop = interrupted()?;
    rt.block_on(async {
        let socket = open(args.bind, args.port)?;
        let addr = socket
            .local_addr()
            .map_err(|e| CliError::new(e.to_string()))?;
        // Port 0: the one the system gave is the one tickets name.
        let public = SocketAddr::new(public.ip(), addr.port());
        let mut config = config;
        config.public = public;
        if args.output.machine {
            outln!("listening relay={addr} public={public}");
        } else {
            outln!("relay listening on {addr}, reached at {public}");
        }
        let services: Services<MemoryStore> = Services {
            rendezvous: None,
            relay: Some((socket, Relay::new(config, &secret, seed))),
        };
        serve(services, &args.output, &stop).await
    })
}

/// Runs `services` until `stop`, a status line every `--status-every`.
async fn serve<S: Store>(
    mut services: Services<S>,
    output: &ServiceOutput,
    stop: &AtomicBool,
) -> Result<ExitCode, CliError> {
    let every = output.status_every.max(1);
    let mut waited = 0;
    while !stop.load(Ordering::SeqCst) {
        services.run_for(Duration::from_millis(100)).await;
        waited += 100;
        if waited >= every * 1000 {
            waited = 0;
            outln!("{}", status(&services, output.machine));
        }
    }
    outln!("{}", status(&services, output.machine));
    Ok(ExitCode::SUCCESS)
}

/// One status line of `services`.
fn status<S: Store>(services: &Services<S>, machine: bool) -> String {
    let mut parts = Vec::new();
    if let Some((_, r)) = &services.rendezvous {
        let s = r.stats();
        let requests: u64 = s.traffic.received.iter().map(|c| c.datagrams).sum();
        let refused: u64 = s.refused.iter().sum();
        parts.push(if machine {
            format!(
                "registered={} enrolled={} requests={requests} refused={refused}",
                s.registered, s.enrolled
            )
        } else {
            format!(
                "rendezvous: {} matches registered, {} members enrolled, {requests} requests, {refused} refused",
                s.registered, s.enrolled
            )
        });
    }
    if let Some((_, y)) = &services.relay {
        let s = y.stats();
        parts.push(if machine {
            format!(
                "allocations={} places={} forwarded={} forwarded_bytes={} throttled={}",
                y.allocations(),
                y.places(),
                s.forwarded.datagrams,
                s.forwarded.bytes,
                s.throttled
            )
        } else {
            format!(
                "relay: {} matches, {} places, {} datagrams forwarded ({} bytes), {} throttled",
                y.allocations(),
                y.places(),
                s.forwarded.datagrams,
                s.forwarded.bytes,
                s.throttled
            )
        });
    }
    if machine {
        format!("status {}", parts.join(" "))
    } else {
        parts.join("; ")
    }
}
